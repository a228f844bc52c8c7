//! A cheap clock for per-command timing (INFO commandstats). Reading the
//! CPU's timestamp counter costs a few cycles where two `Instant::now()`
//! calls per command cost about a hundred instructions; the counter's rate
//! is calibrated against the monotonic clock at start and by the cron.
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Counter ticks per microsecond, as f64 bits.
static TICKS_PER_US: AtomicU64 = AtomicU64::new(0);

/// The current counter value.
#[inline]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        BASE.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Per-command timing at one counter read per command inside a pipelined
/// batch: the batch loop lets a command start where the one before it
/// ended ([`CallClock::chain`]), so the command's time also covers its own
/// parsing and dispatch (Redis times only the handler). Any other call (the
/// first of a batch, or one inside EXEC or a script) reads the counter.
#[derive(Debug, Default)]
pub struct CallClock {
    start: Option<u64>,
    last_end: Option<u64>,
}

impl CallClock {
    /// The next call starts where the last one ended, if one ended since
    /// the last [`CallClock::chain`] or [`CallClock::reset`].
    pub fn chain(&mut self) {
        self.start = self.last_end.take();
    }

    /// Forget the last end: the next call reads the counter to start.
    pub fn reset(&mut self) {
        self.start = None;
        self.last_end = None;
    }

    /// A call's start: the chained one, else now.
    #[inline]
    pub fn begin(&mut self) -> u64 {
        self.start.take().unwrap_or_else(ticks)
    }

    /// A call's end: the ticks it took since `started`.
    #[inline]
    pub fn end(&mut self, started: u64) -> u64 {
        let now = ticks();
        self.last_end = Some(now);
        now.wrapping_sub(started)
    }
}

/// Measures the counter's rate between two points in time.
pub struct Calibration {
    ticks: u64,
    at: Instant,
}

impl Calibration {
    /// Start a calibration window; a short blocking one sets a first rate.
    pub fn start() -> Calibration {
        let mut c = Calibration { ticks: ticks(), at: Instant::now() };
        std::thread::sleep(std::time::Duration::from_millis(2));
        c.update();
        c
    }

    /// Refresh the rate from the window since the last update.
    pub fn update(&mut self) {
        let (t, now) = (ticks(), Instant::now());
        let us = now.duration_since(self.at).as_secs_f64() * 1e6;
        if us >= 1000.0 && t > self.ticks {
            TICKS_PER_US.store(((t - self.ticks) as f64 / us).to_bits(), Ordering::Relaxed);
            self.ticks = t;
            self.at = now;
        }
    }
}

/// Convert counter ticks to microseconds with the latest calibration.
pub fn ticks_to_us(t: u64) -> u64 {
    let rate = f64::from_bits(TICKS_PER_US.load(Ordering::Relaxed));
    if rate > 0.0 {
        (t as f64 / rate) as u64
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chained_call_starts_where_the_last_one_ended() {
        let mut c = CallClock::default();
        let first = c.begin();
        let took = c.end(first);
        c.chain();
        let second = c.begin();
        assert_eq!(second, first.wrapping_add(took), "the second call starts at the first one's end");
        // Nested: a call inside the chained one reads the counter itself.
        let inner = c.begin();
        assert!(inner >= second);
        c.end(inner);
        c.reset();
        c.chain();
        assert!(c.begin() >= inner, "after a reset the next call reads the counter");
    }

    #[test]
    fn ten_milliseconds_measure_as_about_ten_thousand_us() {
        let _cal = Calibration::start();
        let t0 = ticks();
        std::thread::sleep(std::time::Duration::from_millis(10));
        let us = ticks_to_us(ticks() - t0);
        assert!((9_000..60_000).contains(&us), "measured {us} us");
    }
}
