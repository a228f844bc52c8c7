//! SIGTERM/SIGINT handling: the handler only records the signal; the event
//! loop notices it (poll wakes with EINTR, or at the next cron tick) and shuts
//! down gracefully.
use std::sync::atomic::{AtomicI32, Ordering};

static PENDING: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    PENDING.store(sig, Ordering::SeqCst);
}

pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only performs an atomic store, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, handler);
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// A signal waits for the event loop (left for [`take`]).
pub fn pending() -> bool {
    PENDING.load(Ordering::SeqCst) != 0
}

/// The signal received since the last call, by name.
pub fn take() -> Option<&'static str> {
    match PENDING.swap(0, Ordering::SeqCst) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        _ => Some("SIGTERM"),
    }
}
