//! Bucket arrays: fixed-size, zero-initialised arrays of chain heads, and how
//! their memory is obtained and given back without stalling the event loop.
//!
//! A small array comes from the global allocator. A big one (2 MiB and up) is
//! its own anonymous mapping on small pages, because of what the kernel does
//! with it during an incremental rehash:
//!
//! * **Faulting in.** The new array is written front to back as migration
//!   advances. On transparent huge pages each first write to a 2 MiB region
//!   zeroes all of it at once: 1.5-3 ms on a VM whose host backs memory on
//!   first touch. On 4 KiB pages the same cost comes in microsecond pieces.
//!   (The allocator cannot be told this before it hands the block out: it
//!   writes its first page itself, so a huge page was already faulted in.)
//! * **Giving back.** The old array is emptied front to back; once drained,
//!   its pages are released a chunk at a time ([`Buckets::release_below`])
//!   instead of tens of MB being unmapped at the end of the rehash in one go.
//!   Released pages read back as zeroes, that is as empty buckets.
//!
//! Throughput at 10M keys was the same with the arrays on small pages; the
//! entries, most of the memory, stay on whatever the allocator uses.
//!
//! The allocator does not see these mappings, so their bytes are counted
//! here ([`mapped_bytes`]) and added to `used_memory`: a table of 2M buckets
//! is 16 MiB, ~10 bytes per key, that `maxmemory` must see as Redis's does.
use std::alloc::{self, Layout};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use super::Bucket;

/// Arrays at least this big get their own mapping (a huge page's size).
const OWN_MAPPING_FROM: usize = 2 << 20;
/// Drained old-table pages are released in chunks of this many bytes, so a
/// rehash makes one `madvise` per chunk, not one per page.
const RELEASE_CHUNK: usize = 256 << 10;

/// Bytes of bucket arrays on their own mappings, less what was released.
static MAPPED: AtomicUsize = AtomicUsize::new(0);

/// Bytes the bucket arrays hold outside the allocator (whole mappings as
/// made, as Redis's zmalloc counts a table, minus drained chunks given back).
pub fn mapped_bytes() -> usize {
    MAPPED.load(Relaxed)
}

/// An owned array of `len` buckets. Dropping it frees the memory without
/// visiting the buckets: the owner must have emptied them (entries still
/// linked would leak).
pub(super) struct Buckets<V> {
    ptr: NonNull<Bucket<V>>,
    len: usize,
    /// Bytes at the front already handed back to the kernel (own mappings).
    pub(super) released: usize,
    _owns: PhantomData<Bucket<V>>,
}

// SAFETY: a `Buckets` owns its entries exactly as a `Vec<Bucket<V>>` would.
unsafe impl<V: Send> Send for Buckets<V> {}
// SAFETY: shared access only reads, as for `Vec<Bucket<V>>`.
unsafe impl<V: Sync> Sync for Buckets<V> {}

impl<V> Buckets<V> {
    /// `n` empty buckets.
    pub(super) fn new(n: usize) -> Self {
        let layout = Layout::array::<Bucket<V>>(n).expect("bucket array size overflows");
        if layout.size() == 0 {
            return Self::default();
        }
        let ptr = if layout.size() >= OWN_MAPPING_FROM { map_zeroed(layout) } else { heap_zeroed(layout) };
        // An all-zero `Option<Box<_>>` is `None`: the array starts empty.
        Buckets { ptr: ptr.cast(), len: n, released: 0, _owns: PhantomData }
    }

    fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<Bucket<V>>()
    }

    fn own_mapping(&self) -> bool {
        self.bytes() >= OWN_MAPPING_FROM
    }

    /// Gives the pages holding buckets `[0, upto)` back to the kernel, in
    /// whole chunks, for an array of its own mapping. Every bucket below
    /// `upto` must be empty; afterwards they still read as empty.
    pub(super) fn release_below(&mut self, upto: usize) {
        if !self.own_mapping() || !cfg!(target_os = "linux") {
            return;
        }
        let size = std::mem::size_of::<Bucket<V>>();
        let end = (upto.min(self.len) * size) / RELEASE_CHUNK * RELEASE_CHUNK;
        if end <= self.released {
            return;
        }
        debug_assert!(self[self.released / size..end / size].iter().all(Option::is_none));
        // SAFETY: [released, end) is page-aligned (the mapping starts on a
        // page, chunks are whole pages) and inside this array's own mapping;
        // its buckets are all `None`, which is what zero pages read back as.
        unsafe {
            libc::madvise(
                self.ptr.as_ptr().cast::<u8>().add(self.released).cast(),
                end - self.released,
                libc::MADV_DONTNEED,
            )
        };
        MAPPED.fetch_sub(end - self.released, Relaxed);
        self.released = end;
    }
}

fn heap_zeroed(layout: Layout) -> NonNull<u8> {
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { alloc::alloc_zeroed(layout) };
    NonNull::new(p).unwrap_or_else(|| alloc::handle_alloc_error(layout))
}

/// A fresh anonymous mapping (zero-filled by the kernel, page by page on
/// first touch), kept off transparent huge pages.
fn map_zeroed(layout: Layout) -> NonNull<u8> {
    // SAFETY: an anonymous private mapping has no preconditions.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            layout.size(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        alloc::handle_alloc_error(layout);
    }
    MAPPED.fetch_add(layout.size(), Relaxed);
    // SAFETY: advice over the mapping just made; failure only means huge pages.
    unsafe { libc::madvise(p, layout.size(), libc::MADV_NOHUGEPAGE) };
    NonNull::new(p.cast()).expect("mmap returned a null mapping")
}

impl<V> Default for Buckets<V> {
    /// No buckets, no allocation.
    fn default() -> Self {
        Buckets { ptr: NonNull::dangling(), len: 0, released: 0, _owns: PhantomData }
    }
}

impl<V> Drop for Buckets<V> {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        debug_assert!(self.iter().all(Option::is_none), "bucket array dropped with entries linked");
        let bytes = self.bytes();
        if self.own_mapping() {
            // SAFETY: the whole mapping made by `map_zeroed`, unmapped once.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), bytes) };
            MAPPED.fetch_sub(bytes - self.released, Relaxed);
        } else {
            let layout = Layout::array::<Bucket<V>>(self.len).expect("size was valid at allocation");
            // SAFETY: allocated by `heap_zeroed` with this layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr().cast(), layout) };
        }
    }
}

impl<V> Deref for Buckets<V> {
    type Target = [Bucket<V>];

    fn deref(&self) -> &[Bucket<V>] {
        // SAFETY: `len` initialised buckets live at `ptr` (or len is 0 and
        // `ptr` is dangling but aligned, which an empty slice allows).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<V> DerefMut for Buckets<V> {
    fn deref_mut(&mut self) -> &mut [Bucket<V>] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}
