//! What the dict does for maxmemory: sampling a few entries at once for
//! eviction (Redis's `dictGetSomeKeys`: walk consecutive buckets from a
//! random one, in both tables while rehashing, collecting chain entries
//! until enough are found; cheaper than that many random lookups, and good
//! enough for approximated LRU/LFU/TTL), and the guard that keeps a table
//! from growing past `maxmemory` (Redis's `dictExpandAllowed`).
use std::sync::OnceLock;

use super::{chain_iter, next_random, Dict};

/// Whether `bytes` more may be allocated without going over `maxmemory`;
/// installed once by the server (the engine cannot see the allocator).
static EXPAND_GUARD: OnceLock<fn(usize) -> bool> = OnceLock::new();

/// Redis's `HASHTABLE_MAX_LOAD_FACTOR`: past this load a table grows
/// whatever the memory, as chains would get too long.
const MAX_LOAD_FACTOR: f64 = 1.618;

/// Install the guard consulted before a table grows (once per process).
pub fn set_expand_guard(guard: fn(usize) -> bool) {
    let _ = EXPAND_GUARD.set(guard);
}

/// Whether a table of `len` buckets holding `used` entries may grow by
/// `more` bytes of buckets: always past [`MAX_LOAD_FACTOR`], else only if
/// that stays under `maxmemory`, so a rehash does not itself cause evictions.
pub(super) fn expand_allowed(more: usize, used: usize, len: usize) -> bool {
    match EXPAND_GUARD.get() {
        Some(guard) if used as f64 / len as f64 <= MAX_LOAD_FACTOR => guard(more),
        _ => true,
    }
}

impl<V, S> Dict<V, S> {
    /// Calls `f` on up to `count` entries (key, metadata, value) near a
    /// random bucket. Entries may repeat across calls, never within one.
    pub fn sample<'a>(&'a self, rng: &mut u64, count: usize, mut f: impl FnMut(&'a [u8], u32, &'a V)) {
        let count = count.min(self.len());
        if count == 0 {
            return;
        }
        let [t0, t1] = &self.tables;
        let mask = t0.len().max(t1.len()) - 1;
        let mut i = (next_random(rng) >> 32) as usize & mask;
        let (mut got, mut empty_run) = (0, 0);
        // Runs of buckets already walked, so a jump never revisits one and
        // an entry is never handed out twice in one call.
        let mut runs = Runs::new(i);
        // Bounded as Redis: at most 10 buckets visited per key wanted.
        for _ in 0..count * 10 {
            for (t, table) in [t0, t1].into_iter().enumerate() {
                // Buckets of the old table below the rehash index are empty.
                if t == 0 && !t1.is_empty() && i < self.rehash_idx {
                    continue;
                }
                let Some(bucket) = table.get(i) else { continue };
                if bucket.is_none() {
                    empty_run += 1;
                    continue;
                }
                empty_run = 0;
                for e in chain_iter(bucket) {
                    f(&e.key, e.key.meta, &e.value);
                    got += 1;
                    if got == count {
                        return;
                    }
                }
            }
            runs.extend();
            let next = (i + 1) & mask;
            // A sparse stretch, or a walked run ahead: jump elsewhere.
            let ahead = runs.visited(next, mask);
            if ahead || (empty_run >= 5 && empty_run > count) {
                let jump = (next_random(rng) >> 32) as usize & mask;
                if runs.start_at(jump, mask) {
                    i = jump;
                    empty_run = 0;
                    continue;
                }
                if ahead {
                    return;
                }
            }
            i = next;
        }
    }
}

/// The contiguous runs of buckets one [`Dict::sample`] call has walked
/// (indices wrap at the table mask). A handful is plenty: past that the
/// sampler stops jumping and crawls on.
struct Runs {
    runs: [(usize, usize); 8],
    n: usize,
}

impl Runs {
    fn new(start: usize) -> Self {
        Runs { runs: [(start, 0); 8], n: 1 }
    }

    /// The bucket at the current run's end has been walked.
    fn extend(&mut self) {
        self.runs[self.n - 1].1 += 1;
    }

    fn visited(&self, i: usize, mask: usize) -> bool {
        self.runs[..self.n].iter().any(|&(start, len)| (i.wrapping_sub(start) & mask) < len)
    }

    /// Starts a new run at `i` if there is room and `i` is unwalked.
    fn start_at(&mut self, i: usize, mask: usize) -> bool {
        if self.n == self.runs.len() || self.visited(i, mask) {
            return false;
        }
        self.runs[self.n] = (i, 0);
        self.n += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_distinct_entries_and_covers_the_table() {
        let mut d: Dict<u32> = Dict::new();
        let mut rng = 7u64;
        d.sample(&mut rng, 5, |_, _, _| panic!("empty dict"));
        for i in 0..1000u32 {
            d.insert(format!("k{i}").as_bytes(), i);
        }
        let mut seen = std::collections::HashSet::new();
        for _ in 0..2000 {
            let mut one = Vec::new();
            d.sample(&mut rng, 5, |_, _, &v| one.push(v));
            assert!(!one.is_empty() && one.len() <= 5);
            let distinct: std::collections::HashSet<_> = one.iter().collect();
            assert_eq!(distinct.len(), one.len());
            seen.extend(one);
        }
        assert!(seen.len() > 900, "sampling reached {} of 1000 keys", seen.len());
        // A sparse table makes the sampler jump: still no entry twice,
        // whatever the seed (the keyed hash differs per process too).
        for i in 40..1000u32 {
            d.remove(format!("k{i}").as_bytes());
        }
        for seed in 0..5000u64 {
            let mut rng = seed;
            let mut one = Vec::new();
            d.sample(&mut rng, 16, |_, _, &v| one.push(v));
            let distinct: std::collections::HashSet<_> = one.iter().collect();
            assert_eq!(distinct.len(), one.len(), "seed {seed}: {one:?}");
        }
        // Fewer keys than asked: all of them.
        let mut small: Dict<u32> = Dict::new();
        small.insert(b"a", 1);
        small.insert(b"b", 2);
        let mut n = 0;
        small.sample(&mut rng, 5, |_, _, _| n += 1);
        assert!((1..=2).contains(&n));
    }
}
