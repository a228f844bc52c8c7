//! The process allocator. Like Redis's jemalloc, mimalloc keeps no
//! per-allocation header (glibc adds 8-16 bytes to every key and value), and
//! it is told to return freed pages to the OS at once, so RSS follows the
//! data instead of keeping old hash tables and pipeline buffers resident.
//!
//! Transparent huge pages are off by default (`disable-thp yes`, as in
//! Redis): mimalloc asks the kernel for 2 MiB pages on its arenas, so every
//! freshly touched stretch of heap cost a whole 2 MiB of RSS and a freed
//! buffer was only returned in 2 MiB units. Measured with
//! `bench/types_memory.py --keys 100000`: 10 MiB more RSS at startup and
//! 4.5 MiB more after loading 100k small keys (124 vs 78 bytes/key).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v2 and v3 alike).
const MI_OPTION_PURGE_DELAY: libc::c_int = 15;
/// `mi_option_allow_thp` in mimalloc v3's `mi_option_e`.
const MI_OPTION_ALLOW_THP: libc::c_int = 43;

/// Apply the allocator settings; call once at startup. `disable_thp` is the
/// `disable-thp` option.
pub fn configure(disable_thp: bool) {
    // SAFETY: sets a process-wide mimalloc option; valid before or after
    // allocation has started.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    set_thp_disabled(disable_thp);
}

/// Turns transparent huge pages off (or back on) for this process and the
/// children it forks for snapshots, where a huge page also multiplies
/// copy-on-write. Pages already faulted in stay as they are; new faults get
/// 4 KiB pages even in the ranges mimalloc marked `MADV_HUGEPAGE`. (The
/// runtime's first allocations, before `main`, already faulted two huge
/// pages: about 4 MiB of startup RSS that only an environment setting,
/// `MIMALLOC_ALLOW_THP=0`, avoids.)
fn set_thp_disabled(disable: bool) {
    // SAFETY: mimalloc reads this option when it maps new memory and when
    // it sizes purges (2 MiB units only while THP is allowed).
    unsafe { mi_option_set(MI_OPTION_ALLOW_THP, libc::c_long::from(!disable)) };
    // SAFETY: PR_SET_THP_DISABLE takes an integer flag and no pointers.
    let rc = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, libc::c_ulong::from(disable), 0, 0, 0) };
    if rc != 0 {
        crate::log_at!(Verbose, "Could not change transparent huge pages: {}", std::io::Error::last_os_error());
    }
}
