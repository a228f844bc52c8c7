//! Redis-style log lines (`pid:M 22 Nov 2026 03:04:34.123 * message`) to
//! stdout or the configured `logfile`, filtered by `loglevel`.
use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::sync::Mutex;

use crate::config::LogLevel;

static LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Notice as u8);
static FILE: Mutex<Option<std::fs::File>> = Mutex::new(None);
/// The descriptor lines go to, for signal handlers (which may not lock).
static RAW_FD: AtomicI32 = AtomicI32::new(1);

/// Apply `loglevel` and `logfile` (empty = stdout).
pub fn init(level: LogLevel, logfile: &str) -> std::io::Result<()> {
    LEVEL.store(level as u8, Ordering::Relaxed);
    let file = if logfile.is_empty() {
        None
    } else {
        Some(std::fs::OpenOptions::new().create(true).append(true).open(logfile)?)
    };
    let mut guard = FILE.lock().unwrap_or_else(|e| e.into_inner());
    RAW_FD.store(file.as_ref().map_or(1, |f| f.as_raw_fd()), Ordering::Relaxed);
    *guard = file;
    Ok(())
}

/// The log's descriptor (stdout's when there is no `logfile`).
pub fn raw_fd() -> i32 {
    RAW_FD.load(Ordering::Relaxed)
}

/// A line from a signal handler, as Redis's `serverLogFromHandler`:
/// `<pid>:signal-handler (<unix secs>) <msg>`, built without allocating
/// and written with one write(2).
pub fn from_handler(fd: i32, msg: &[u8]) {
    let mut line = [0u8; 256];
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        let k = bytes.len().min(line.len() - n);
        line[n..n + k].copy_from_slice(&bytes[..k]);
        n += k;
    };
    let mut digits = [0u8; 20];
    // SAFETY: getpid and time are async-signal-safe and have no preconditions.
    let (pid, secs) = unsafe { (libc::getpid() as u64, libc::time(std::ptr::null_mut()) as u64) };
    put(decimal(pid, &mut digits));
    put(b":signal-handler (");
    put(decimal(secs, &mut digits));
    put(b") ");
    put(msg);
    put(b"\n");
    // SAFETY: writing our own buffer's first n bytes.
    unsafe { libc::write(fd, line.as_ptr().cast(), n) };
}

fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[i..];
        }
    }
}

pub fn set_level(level: LogLevel) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

pub fn enabled(level: LogLevel) -> bool {
    level as u8 >= LEVEL.load(Ordering::Relaxed) && level != LogLevel::Nothing
}

/// Write one line if `level` passes the filter.
pub fn write(level: LogLevel, msg: std::fmt::Arguments) {
    if !enabled(level) {
        return;
    }
    let mark = match level {
        LogLevel::Debug => '.',
        LogLevel::Verbose => '-',
        LogLevel::Notice => '*',
        _ => '#',
    };
    let line = format!("{}:M {} {} {}\n", std::process::id(), timestamp(), mark, msg);
    let mut guard = FILE.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_mut() {
        Some(f) => {
            let _ = f.write_all(line.as_bytes());
        }
        None => {
            let _ = std::io::stdout().write_all(line.as_bytes());
        }
    }
}

/// `22 Nov 2026 03:04:34.123` in UTC.
fn timestamp() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (y, m, d) = civil_from_days(secs.div_euclid(86400));
    let t = secs.rem_euclid(86400);
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{:02} {} {} {:02}:{:02}:{:02}.{:03}",
        d,
        MONTHS[(m - 1) as usize],
        y,
        t / 3600,
        t / 60 % 60,
        t % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

#[macro_export]
macro_rules! log_at {
    ($lvl:ident, $($arg:tt)*) => {
        $crate::log::write($crate::config::LogLevel::$lvl, format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20_414), (2025, 11, 22));
    }
}
