//! The process allocator. Like Redis's jemalloc, mimalloc keeps no
//! per-allocation header (glibc adds 8-16 bytes to every key and value), and
//! it is told to return freed pages to the OS at once, so RSS follows the
//! data instead of keeping old hash tables and pipeline buffers resident.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v2 and v3 alike).
const MI_OPTION_PURGE_DELAY: libc::c_int = 15;

/// Apply the allocator settings; call once at startup.
pub fn configure() {
    // SAFETY: sets a process-wide mimalloc option; valid before or after
    // allocation has started.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
}
