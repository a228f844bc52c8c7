//! Client-side cost of one measurement: peak RSS of this process while it
//! ran (the kernel's high-water mark, reset first through
//! `/proc/self/clear_refs`) and CPU time of the calling thread (the thread
//! that runs the blocking connection or the current-thread tokio runtime;
//! the in-process delay proxy's threads are not counted). Also owns
//! [`proc_status_kib`], the `/proc/self/status` reader (VmHWM, VmRSS) that
//! `targets`' set-child reports use too.

use std::time::Duration;

/// A field of /proc/self/status in KiB (e.g. "VmHWM").
pub fn proc_status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// CPU time (user + system) of the calling thread so far.
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Reset VmHWM to the current RSS (Linux ≥ 4.0); false if not possible.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// What a [`Meter`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Peak RSS of the process during the measurement, KiB (`None` when the
    /// high-water mark could not be reset, so it would include earlier rows).
    pub peak_rss_kib: Option<u64>,
    /// CPU of the measuring thread.
    pub cpu: Duration,
}

/// Started before a measurement, read after it.
pub struct Meter {
    cpu0: Duration,
    reset: bool,
}

impl Meter {
    /// Reset the RSS high-water mark and note the thread's CPU time.
    pub fn start() -> Meter {
        Meter { reset: reset_peak_rss(), cpu0: thread_cpu() }
    }

    /// The cost since [`start`](Self::start).
    pub fn finish(&self) -> Cost {
        let peak = self.reset.then(|| proc_status_kib("VmHWM"));
        Cost { peak_rss_kib: peak, cpu: thread_cpu().saturating_sub(self.cpu0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_sees_cpu_and_a_fresh_peak() {
        let m = Meter::start();
        let v: Vec<u8> = vec![1; 32 << 20];
        let mut x = 0u64;
        for (i, b) in v.iter().enumerate() {
            x = x.wrapping_add(u64::from(*b) * i as u64);
        }
        assert!(x > 0);
        let c = m.finish();
        assert!(c.cpu > Duration::ZERO);
        let peak = c.peak_rss_kib.expect("clear_refs works on Linux");
        assert!(peak >= 32 * 1024, "peak {peak} KiB after touching 32 MiB");
        drop(v);
        let m2 = Meter::start();
        let peak2 = m2.finish().peak_rss_kib.unwrap();
        assert!(peak2 < peak, "reset: {peak2} KiB, before {peak} KiB");
    }
}
