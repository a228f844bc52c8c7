//! `watchdog-period`: Redis's software watchdog. Redis arms a SIGALRM
//! timer that its cron re-arms; if the main thread stays in one piece of
//! work past the period (its cron cannot run), the signal lands there and
//! the handler logs `--- WATCHDOG TIMER EXPIRED ---` with that thread's
//! stack. Volley's equivalent watches the pieces of work the server waits
//! on: each event-loop turn, and a replica's load of its primary's
//! snapshot straight off the socket (the work Redis does in its main
//! thread, done here on the link's thread, and like Redis's one piece of
//! work from start to end). A watcher thread signals the thread whose
//! piece of work has lasted the period, once per stall; the
//! handler, on that thread, writes the report with its stack, and a
//! blocking read there returns EINTR, as in Redis.
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

/// The period in milliseconds; 0 = off.
static PERIOD_MS: AtomicU64 = AtomicU64::new(0);
static WATCHED: Mutex<Vec<Watched>> = Mutex::new(Vec::new());
static START: Once = Once::new();

struct Watched {
    thread: libc::pthread_t,
    beat: Arc<Beat>,
}

/// When the watched work last moved (unix ms; 0 = idle), and whether the
/// current stall was reported.
#[derive(Default)]
struct Beat {
    since_ms: AtomicI64,
    reported: AtomicBool,
}

/// A piece of work on the calling thread, watched until dropped.
pub struct Work {
    beat: Arc<Beat>,
}

impl Work {
    /// Start watching the calling thread's work (idle until [`Work::busy`]).
    pub fn on_this_thread() -> Work {
        let beat = Arc::new(Beat::default());
        // SAFETY: pthread_self has no preconditions.
        let thread = unsafe { libc::pthread_self() };
        lock().push(Watched { thread, beat: beat.clone() });
        Work { beat }
    }

    /// The work moved (or a new piece started): the stall clock restarts.
    #[inline]
    pub fn busy(&self, now_ms: i64) {
        self.beat.since_ms.store(now_ms.max(1), Ordering::Relaxed);
        self.beat.reported.store(false, Ordering::Relaxed);
    }

    /// Waiting for work (the event loop in epoll): not stuck, however long.
    #[inline]
    pub fn idle(&self) {
        self.beat.since_ms.store(0, Ordering::Relaxed);
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        lock().retain(|w| !Arc::ptr_eq(&w.beat, &self.beat));
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<Watched>> {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Apply `watchdog-period` (ms; 0 stops watching). The handler and the
/// watcher thread are set up on first use, as Redis installs its handler
/// only when the watchdog is enabled.
pub fn set_period(ms: u64) {
    PERIOD_MS.store(ms, Ordering::Relaxed);
    if ms > 0 {
        START.call_once(|| {
            install_handler();
            let _ = std::thread::Builder::new().name("watchdog".into()).spawn(watch);
        });
    }
}

pub fn period() -> u64 {
    PERIOD_MS.load(Ordering::Relaxed)
}

fn watch() {
    loop {
        let period = period();
        // Redis's timer resolution is its cron's; a tenth of the period
        // (bounded) keeps a report close to the period without spinning.
        let step = if period == 0 { 100 } else { (period / 10).clamp(5, 100) };
        std::thread::sleep(Duration::from_millis(step));
        if period == 0 {
            continue;
        }
        let now = unix_ms();
        for w in lock().iter() {
            let since = w.beat.since_ms.load(Ordering::Relaxed);
            if since > 0 && now - since >= period as i64 && !w.beat.reported.swap(true, Ordering::Relaxed) {
                // SAFETY: the thread is registered, so alive (a Work
                // deregisters before its thread can end).
                unsafe { libc::pthread_kill(w.thread, libc::SIGALRM) };
            }
        }
    }
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

fn install_handler() {
    // backtrace() may load its unwinder on first use, which allocates:
    // do it here, not in the handler.
    let mut frames = [std::ptr::null_mut(); 4];
    // SAFETY: the buffer holds the 4 frames asked for.
    unsafe { libc::backtrace(frames.as_mut_ptr(), 4) };
    // SAFETY: a zeroed sigaction with our handler; no SA_RESTART, so a
    // blocking read on the stalled thread returns EINTR, as in Redis.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_alarm as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGALRM, &sa, std::ptr::null_mut());
    }
}

/// The report, from the stalled thread: only async-signal-safe calls (raw
/// writes to the log's descriptor, backtrace_symbols_fd).
extern "C" fn on_alarm(_sig: libc::c_int, _info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    let fd = crate::log::raw_fd();
    crate::log::from_handler(fd, b"\n--- WATCHDOG TIMER EXPIRED ---");
    let mut frames = [std::ptr::null_mut(); 64];
    // SAFETY: the buffer holds the 64 frames asked for; the unwinder was
    // loaded by install_handler.
    unsafe {
        let n = libc::backtrace(frames.as_mut_ptr(), 64);
        libc::backtrace_symbols_fd(frames.as_ptr(), n, fd);
    }
    crate::log::from_handler(fd, b"--------\n");
}

/// Apply `watchdog-period` from the configuration, raised (and stored so)
/// to twice the cron period as Redis does: a shorter one could not tell
/// a stuck server from a busy cron tick.
pub fn configure(cfg: &mut crate::config::Config) {
    let Some(ms) = cfg.other.get("watchdog-period").and_then(|v| v.parse::<u64>().ok()) else { return };
    if ms == 0 {
        return set_period(0);
    }
    let min = 2 * (1000 / u64::from(cfg.hz.max(1)));
    let ms = ms.max(min);
    cfg.other.insert("watchdog-period", ms.to_string());
    set_period(ms);
}
