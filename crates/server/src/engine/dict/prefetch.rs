//! Cache warming for a batch of upcoming lookups.
//!
//! A pipelined batch names its keys before any of them is executed. Looking
//! them up one by one, each lookup waits for its bucket and then its entry to
//! come from memory (two dependent cache misses once the table outgrows the
//! CPU caches: most of a pipelined SET's time on a 100k-key keyspace).
//! Issuing every bucket load of the batch first, then every entry load, lets
//! those misses overlap instead.
use super::{bucket_index, Dict, Entry};
use std::hash::BuildHasher;

/// Tables smaller than this many buckets are assumed to be cache resident
/// already: prefetching them would only cost the extra hashing.
const MIN_BUCKETS: usize = 1 << 14;
/// Fewest keys whose first entries are read together to reach the second.
const MIN_SHARED_WAIT: usize = 4;

/// Asks the CPU to start loading the cache line at `p`; a hint with no
/// effect on program state (and a no-op off x86-64).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch never faults or reads into program state, whatever
    // address it is given; `p` comes from a live reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Starts loading every cache line of `*p`: an entry is not aligned to a
/// line, and most straddle two (the key in one, the chain link in the next).
#[inline(always)]
fn prefetch_whole<T>(p: &T) {
    let first = (p as *const T).cast::<u8>();
    prefetch(first);
    prefetch(first.wrapping_add(std::mem::size_of::<T>() - 1));
}

impl<V, S: BuildHasher> Dict<V, S> {
    /// True when [`Dict::prefetch_buckets`] is worth calling at all.
    pub fn worth_prefetching(&self) -> bool {
        self.tables[0].len() + self.tables[1].len() >= MIN_BUCKETS
    }

    /// Stage one, per key: its hash, with its bucket on the way
    /// (only in the table that can hold it, see [`Dict::table_for`]).
    pub fn prefetch_bucket_of(&self, key: &[u8]) -> u64 {
        let hash = self.hasher.hash_one(key);
        let t = &self.tables[self.table_for(hash)];
        if !t.is_empty() {
            prefetch(&t[bucket_index(hash, t.len())]);
        }
        hash
    }

    /// Stage two, after stage one had a moment: starts loading the first
    /// entry of each bucket, then, for a batch of keys, the second. At the
    /// usual load factor a third of the lookups find their key second in
    /// its chain, and that entry's miss was most of what a prefetched
    /// lookup still waited for (measured: ~30 ns per GET over 100k keys).
    /// Reaching the second means reading the first; the reads of a batch
    /// are independent of each other and together wait about one miss.
    /// For a key or two that wait is not shared, and it is cheaper to let
    /// the first entry arrive while the command is parsed and dispatched.
    pub fn prefetch_entries(&self, hashes: impl IntoIterator<Item = u64> + Clone) {
        for head in self.heads(hashes.clone()) {
            prefetch_whole(head);
        }
        if hashes.clone().into_iter().nth(MIN_SHARED_WAIT - 1).is_none() {
            return;
        }
        for head in self.heads(hashes) {
            if let Some(second) = head.next.as_deref() {
                prefetch_whole(second);
            }
        }
    }

    /// The first entry of each hash's bucket, in the one table that can
    /// hold it (reading the other would also touch pages of a growing
    /// table that migration has not reached yet).
    fn heads(&self, hashes: impl IntoIterator<Item = u64>) -> impl Iterator<Item = &Entry<V>> {
        hashes.into_iter().filter_map(|hash| {
            let t = &self.tables[self.table_for(hash)];
            if t.is_empty() {
                return None;
            }
            t[bucket_index(hash, t.len())].as_deref()
        })
    }
}
