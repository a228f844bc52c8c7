//! Redis-style log lines (`pid:M 22 Nov 2026 03:04:34.123 * message`) to
//! stdout or the configured `logfile`, filtered by `loglevel`.
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

use crate::config::LogLevel;

static LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Notice as u8);
static FILE: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Apply `loglevel` and `logfile` (empty = stdout).
pub fn init(level: LogLevel, logfile: &str) -> std::io::Result<()> {
    LEVEL.store(level as u8, Ordering::Relaxed);
    let file = if logfile.is_empty() {
        None
    } else {
        Some(std::fs::OpenOptions::new().create(true).append(true).open(logfile)?)
    };
    *FILE.lock().unwrap_or_else(|e| e.into_inner()) = file;
    Ok(())
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
