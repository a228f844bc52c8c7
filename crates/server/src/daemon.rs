//! Running as a daemon, as `daemonize yes` asks: detach from the terminal
//! and record our pid in `pidfile` (removed again on a clean exit).
use std::io;

/// Fork into the background: the parent exits, the child leads a new session
/// with stdin/stdout/stderr on /dev/null.
pub fn daemonize() -> io::Result<()> {
    // SAFETY: called before any thread is started; the parent exits at once.
    match unsafe { libc::fork() } {
        -1 => return Err(io::Error::last_os_error()),
        0 => {}
        _ => std::process::exit(0),
    }
    // SAFETY: plain syscalls on our own process and freshly opened fds.
    unsafe {
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            if null > 2 {
                libc::close(null);
            }
        }
    }
    Ok(())
}

/// Writes the pidfile on creation and removes it when dropped.
pub struct PidFile(Option<String>);

impl PidFile {
    /// `path` empty means no pidfile. Failure is logged, not fatal (as Redis).
    pub fn create(path: &str) -> PidFile {
        if path.is_empty() {
            return PidFile(None);
        }
        if let Err(e) = std::fs::write(path, format!("{}\n", std::process::id())) {
            crate::log_at!(Warning, "Failed to write PID file {path}: {e}");
            return PidFile(None);
        }
        PidFile(Some(path.to_string()))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}
