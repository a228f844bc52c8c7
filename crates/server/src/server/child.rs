//! The one background child process at a time (BGSAVE or an AOF rewrite), as
//! in Redis: `fork` hands the child a copy-on-write image of the keyspace, so
//! the event loop keeps serving while the child writes; the parent reaps it
//! from cron and never waits for it.
use std::io;
use std::time::{Duration, Instant};

/// What a child is writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    Rdb,
    AofRewrite,
    /// A full synchronization for replicas (`replication`): an RDB written
    /// to their sockets or to the RDB file they are then sent.
    ReplSync,
}

/// How a child ended.
#[derive(Debug, Clone)]
pub struct ChildExit {
    pub kind: ChildKind,
    pub pid: i32,
    /// Exited with status 0.
    pub ok: bool,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    pub elapsed: Duration,
}

struct Running {
    kind: ChildKind,
    pid: i32,
    started: Instant,
}

/// The running child, if any.
#[derive(Default)]
pub struct Children {
    running: Option<Running>,
    /// Forks since start or CONFIG RESETSTAT (INFO `total_forks`).
    pub total_forks: u64,
    /// How long the parent spent in the last `fork` (INFO `latest_fork_usec`).
    pub latest_fork_usec: u64,
    /// Children that run on their own (forked Lua debugging sessions): no
    /// one waits for their result, but they must be reaped, not left as
    /// zombies.
    detached: Vec<i32>,
}

impl Children {
    /// The kind of the running child, if one runs.
    pub fn running(&self) -> Option<ChildKind> {
        self.running.as_ref().map(|r| r.kind)
    }

    pub fn pid(&self) -> Option<i32> {
        self.running.as_ref().map(|r| r.pid)
    }

    /// Fork; the child runs `work` and exits 0 if it returns true, 1
    /// otherwise, without running destructors or atexit handlers (they
    /// belong to the parent). Fails if a child already runs.
    pub fn spawn(&mut self, kind: ChildKind, work: impl FnOnce() -> bool) -> io::Result<i32> {
        if self.running.is_some() {
            return Err(io::Error::other("a background child is already running"));
        }
        let forking = Instant::now();
        // SAFETY: the server is single-threaded where it matters: the child
        // only reads the keyspace image and writes files, then `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: restoring default dispositions in the child only, so
            // the parent's SIGTERM (kill on shutdown) ends it at once.
            unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                libc::signal(libc::SIGINT, libc::SIG_DFL);
            }
            let ok = work();
            // SAFETY: leaving the child without unwinding the parent's state.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        self.total_forks += 1;
        self.latest_fork_usec = forking.elapsed().as_micros() as u64;
        self.running = Some(Running { kind, pid, started: Instant::now() });
        Ok(pid)
    }

    /// Take charge of a detached child, forked elsewhere, to reap it.
    pub fn adopt_detached(&mut self, pid: i32) {
        self.total_forks += 1;
        self.detached.push(pid);
    }

    /// Reap the detached children that have exited (never blocks).
    pub fn reap_detached(&mut self) {
        self.detached.retain(|&pid| {
            let mut status = 0;
            // SAFETY: waiting without blocking for our own child.
            let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            got == 0
        });
    }

    /// A finished child, if the running one has exited (never blocks).
    pub fn reap(&mut self) -> Option<ChildExit> {
        self.wait(libc::WNOHANG)
    }

    /// Stop the running child (if any) and wait for it.
    pub fn kill(&mut self) -> Option<ChildExit> {
        let pid = self.pid()?;
        // SAFETY: pid is our own child, not yet reaped.
        unsafe { libc::kill(pid, libc::SIGUSR1) };
        self.wait(0)
    }

    fn wait(&mut self, flags: i32) -> Option<ChildExit> {
        let r = self.running.as_ref()?;
        let mut status = 0;
        // SAFETY: waiting for our own child; status is a valid out pointer.
        let got = unsafe { libc::waitpid(r.pid, &mut status, flags) };
        if got != r.pid {
            return None;
        }
        let r = self.running.take()?;
        let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
        let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        Some(ChildExit { kind: r.kind, pid: r.pid, ok, signal, elapsed: r.started.elapsed() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait_reap(c: &mut Children) -> ChildExit {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(e) = c.reap() {
                return e;
            }
            assert!(Instant::now() < deadline, "child never exited");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn child_status_and_one_at_a_time() {
        let mut c = Children::default();
        c.spawn(ChildKind::Rdb, || true).unwrap();
        assert_eq!(c.running(), Some(ChildKind::Rdb));
        assert!(c.spawn(ChildKind::AofRewrite, || true).is_err());
        let e = wait_reap(&mut c);
        assert!(e.ok && e.signal.is_none() && e.kind == ChildKind::Rdb);
        assert_eq!(c.running(), None);
        c.spawn(ChildKind::AofRewrite, || false).unwrap();
        let e = wait_reap(&mut c);
        assert!(!e.ok && e.kind == ChildKind::AofRewrite);
    }

    #[test]
    fn kill_stops_a_long_child() {
        let mut c = Children::default();
        c.spawn(ChildKind::Rdb, || {
            std::thread::sleep(Duration::from_secs(30));
            true
        })
        .unwrap();
        let e = c.kill().expect("child was running");
        assert_eq!(e.signal, Some(libc::SIGUSR1));
        assert!(!e.ok && e.elapsed < Duration::from_secs(10));
    }
}
