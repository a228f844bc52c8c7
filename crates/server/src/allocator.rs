//! The process allocator. Like Redis's jemalloc, mimalloc keeps no
//! per-allocation header (glibc adds 8-16 bytes to every key and value), and
//! it is told to return freed pages to the OS at once, so RSS follows the
//! data instead of keeping old hash tables and pipeline buffers resident.
//!
//! Transparent huge pages are off by default (`disable-thp yes`, as in
//! Redis): mimalloc asks the kernel for 2 MiB pages on its arenas, so every
//! freshly touched stretch of heap cost a whole 2 MiB of RSS and a freed
//! buffer was only returned in 2 MiB units. Measured with
//! `bench/types_memory.py --keys 100000`: 4.5 MiB more RSS after loading
//! 100k small keys (124 vs 78 bytes/key). The price is TLB misses on big
//! keyspaces: GET over 1M keys took ~25% more server CPU without huge pages
//! (none measurable over 100k keys); `disable-thp no` restores them.
//!
//! Size classes: mimalloc is built with 8-byte minimal alignment (see
//! `.cargo/config.toml`), so its classes up to 64 bytes step by 8, and
//! word-aligned requests call `mi_malloc` itself: the `mimalloc` crate's
//! allocator always takes the aligned path, which serves a 56-byte keyspace
//! node from the 64-byte class. Together that is 8 bytes less per key.
//!
//! Accounting: every allocation and free adds the size of the block
//! mimalloc serves it from (`mi_good_size`, pure arithmetic on the size) to
//! a counter owned by the calling thread, so INFO's `used_memory` and
//! `maxmemory` read the bytes really handed out, as Redis's zmalloc counts.
//! A thread's counter is written only by that thread with plain loads and
//! stores (no locked instruction on the hot path); readers sum all slots.
//! Memory allocated on one thread and freed on another (lazy freeing) moves
//! between slots, so a slot may go negative; only the sum means anything.
use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed};

use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: Allocator = Allocator;

/// mimalloc, with word-aligned requests sent to its unaligned entry points.
pub struct Allocator;

/// Alignment every mimalloc block has, however it was built.
const WORD: usize = std::mem::size_of::<usize>();

extern "C" {
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
    fn mi_malloc(size: usize) -> *mut u8;
    fn mi_zalloc(size: usize) -> *mut u8;
    fn mi_realloc(p: *mut u8, newsize: usize) -> *mut u8;
    fn mi_good_size(size: usize) -> usize;
}

/// Threads with a counter of their own; later threads share the last slot
/// with atomic adds (Volley runs a handful of threads).
const SLOTS: usize = 16;

/// One counter per cache line, so threads never share a line they write.
#[repr(align(64))]
struct Slot(AtomicIsize);

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: Slot = Slot(AtomicIsize::new(0));
static COUNTERS: [Slot; SLOTS] = [ZERO; SLOTS];
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's slot index plus one (0: not yet assigned).
    static MY_SLOT: Cell<usize> = const { Cell::new(0) };
}

#[inline(always)]
fn count(delta: isize) {
    let mine = MY_SLOT.with(Cell::get);
    if mine != 0 && mine < SLOTS {
        let c = &COUNTERS[mine - 1].0;
        c.store(c.load(Relaxed).wrapping_add(delta), Relaxed);
    } else {
        count_slow(delta, mine);
    }
}

#[cold]
fn count_slow(delta: isize, mine: usize) {
    let mine = if mine == 0 {
        let next = (NEXT_SLOT.fetch_add(1, Relaxed) + 1).min(SLOTS);
        MY_SLOT.with(|s| s.set(next));
        next
    } else {
        mine
    };
    if mine < SLOTS {
        let c = &COUNTERS[mine - 1].0;
        c.store(c.load(Relaxed).wrapping_add(delta), Relaxed);
    } else {
        COUNTERS[SLOTS - 1].0.fetch_add(delta, Relaxed);
    }
}

#[inline(always)]
fn block(size: usize) -> isize {
    // SAFETY: a pure function of its argument.
    unsafe { mi_good_size(size) as isize }
}

/// Bytes currently allocated by the process through the Rust allocator
/// (Lua's heap included), plus the keyspace's big bucket arrays, which are
/// mappings of their own: INFO's `used_memory`, what `maxmemory` limits.
pub fn used_memory() -> u64 {
    let sum: isize = COUNTERS.iter().map(|c| c.0.load(Relaxed)).sum();
    sum.max(0) as u64 + crate::engine::dict::mapped_bytes() as u64
}

// SAFETY: every block mimalloc hands out is at least word-aligned, so
// `mi_malloc` & co. meet any layout with `align <= WORD`; larger alignments
// go to `MiMalloc`'s aligned calls. All blocks are freed by `mi_free`
// (`MiMalloc::dealloc`), which takes blocks from either path.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe {
            if layout.align() <= WORD {
                mi_malloc(layout.size())
            } else {
                MiMalloc.alloc(layout)
            }
        };
        if !p.is_null() {
            count(block(layout.size()));
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe {
            if layout.align() <= WORD {
                mi_zalloc(layout.size())
            } else {
                MiMalloc.alloc_zeroed(layout)
            }
        };
        if !p.is_null() {
            count(block(layout.size()));
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` is a mimalloc block (from either path); mi_free takes both.
        unsafe { MiMalloc.dealloc(ptr, layout) }
        count(-block(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`; a word-aligned block
        // stays word-aligned when mi_realloc moves it.
        let p = unsafe {
            if layout.align() <= WORD {
                mi_realloc(ptr, new_size)
            } else {
                MiMalloc.realloc(ptr, layout, new_size)
            }
        };
        if !p.is_null() {
            count(block(new_size) - block(layout.size()));
        }
        p
    }
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
    if let Err(e) = set_thp_disabled(disable_thp) {
        crate::log_at!(Verbose, "Could not change transparent huge pages: {e}");
    }
}

/// Turns huge pages off before anything runs, constructors and mimalloc's
/// own initialisation included, so the heap touched while starting up is
/// not made of them either (2 huge pages, ~4 MiB of RSS, when this waited
/// for `main`). [`configure`] then applies the configured `disable-thp`.
extern "C" fn thp_off_at_load() {
    // Too early to log a failure; `configure` tries again and logs it.
    let _ = set_thp_disabled(true);
}

/// Entries of `.preinit_array` run before every constructor of a program.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".preinit_array")]
static THP_OFF_AT_LOAD: extern "C" fn() = thp_off_at_load;

/// Turns transparent huge pages off (or back on) for this process and the
/// children it forks for snapshots, where a huge page also multiplies
/// copy-on-write. Pages already faulted in stay as they are; new faults get
/// 4 KiB pages even in the ranges mimalloc marked `MADV_HUGEPAGE`.
fn set_thp_disabled(disable: bool) -> std::io::Result<()> {
    // SAFETY: mimalloc reads this option when it maps new memory and when
    // it sizes purges (2 MiB units only while THP is allowed).
    unsafe { mi_option_set(MI_OPTION_ALLOW_THP, libc::c_long::from(!disable)) };
    // SAFETY: PR_SET_THP_DISABLE takes an integer flag and no pointers.
    let rc = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, libc::c_ulong::from(disable), 0, 0, 0) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Resident set size in bytes, from /proc/self/statm.
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    pages * page
}

/// The machine's physical memory (INFO `total_system_memory`).
pub fn total_system_memory() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let (pages, size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    (pages.max(0) as u64) * (size.max(0) as u64)
}

/// The allocator as INFO's `mem_allocator` names it (`mimalloc-3.3.2`).
pub fn name() -> String {
    extern "C" {
        fn mi_version() -> libc::c_int;
    }
    // SAFETY: returns a constant.
    let v = unsafe { mi_version() };
    format!("mimalloc-{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
}

#[cfg(test)]
mod tests {
    extern "C" {
        fn mi_good_size(size: usize) -> usize;
        fn mi_usable_size(p: *const u8) -> usize;
    }

    fn usable<T>(p: *const T) -> usize {
        // SAFETY: every caller passes the start of a live heap block.
        unsafe { mi_usable_size(p as *const u8) }
    }

    #[test]
    fn small_blocks_use_word_sized_classes() {
        // The keyspace node, an expiry entry, a boxed Vec: 8 bytes saved
        // each over 16-byte steps, whichever allocation path is taken.
        assert_eq!(usable(&*Box::new([0u64; 7])), 56);
        assert_eq!(usable(&*Box::new([0u64; 5])), 40);
        assert_eq!(usable(&*Box::new([0u64; 3])), 24);
        let v: Vec<u64> = Vec::with_capacity(7);
        assert_eq!(usable(v.as_ptr()), 56);
        // SAFETY: pure function of its argument.
        let good: Vec<usize> = [24, 40, 56].iter().map(|&n| unsafe { mi_good_size(n) }).collect();
        assert_eq!(good, vec![24, 40, 56], "mimalloc built without -DMI_MAX_ALIGN_SIZE=8");
    }

    #[test]
    fn option_indexes_are_mimalloc_v3s() {
        extern "C" {
            fn mi_version() -> libc::c_int;
        }
        // SAFETY: returns a constant.
        let v = unsafe { mi_version() };
        assert_eq!(v / 100, 3 * 100 + 3, "MI_OPTION_* above are mimalloc 3.3's indexes; got version {v}");
    }

    #[test]
    fn used_memory_follows_allocations_on_this_thread() {
        // Other tests allocate concurrently: read this thread's own slot.
        fn mine() -> isize {
            let slot = super::MY_SLOT.with(std::cell::Cell::get);
            super::COUNTERS[slot - 1].0.load(std::sync::atomic::Ordering::Relaxed)
        }
        std::thread::spawn(|| {
            let warm = Box::new(1u8);
            let before = mine();
            let mut v: Vec<u8> = Vec::with_capacity(10 << 20);
            assert_eq!(mine() - before, 10 << 20);
            v.extend_from_slice(&[1; 100]);
            v.shrink_to_fit();
            // 100 bytes take mimalloc's 112-byte class.
            assert_eq!(mine() - before, 112);
            let small = vec![0u64; 7];
            assert_eq!(mine() - before, 112 + 56);
            drop((v, small, warm));
            assert_eq!(mine() - before, -8);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn over_aligned_layouts_keep_their_alignment() {
        #[repr(align(64))]
        struct Line([u8; 64]);
        for _ in 0..100 {
            let b = Box::new(Line([7; 64]));
            assert_eq!(&*b as *const Line as usize % 64, 0);
            assert_eq!(b.0[63], 7);
        }
        let mut v: Vec<u128> = Vec::with_capacity(1);
        for i in 0..1000u128 {
            v.push(i);
            assert_eq!(v.as_ptr() as usize % std::mem::align_of::<u128>(), 0);
        }
        assert_eq!(v.iter().sum::<u128>(), 999 * 1000 / 2);
    }
}
