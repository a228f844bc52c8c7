//! The keyspace hash table: a chained hash table keyed by byte strings, in the
//! spirit of Redis's `dict.c`.
//!
//! This module owns the bucket arrays, the entries (key bytes plus value) and
//! the policy for growing and shrinking them. Three properties matter:
//!
//! * **No stalls.** Resizing is incremental: two bucket arrays coexist while
//!   entries migrate one bucket at a time, driven by writes and by a cron
//!   calling [`Dict::rehash_step`]. No single call does work proportional to
//!   `len` (a table that resized at once stalled 2.6 s at 7.3M keys). Nor
//!   does the kernel: the new array is written front to back as migration
//!   advances (see [`Dict::table_for`]), on small pages, and the old one is
//!   given back as it drains (see `buckets`), so page faults and unmapping
//!   come a few pages at a time instead of tens of MB in one turn.
//! * **Keyed hashing.** The default hasher is std's SipHash-1-3 with a random
//!   key ([`KeyedSip`], SipHash-1-2 as Redis), so clients cannot pick keys that all collide.
//! * **Stateless iteration.** [`Dict::scan`] uses Redis's reverse-binary
//!   cursor, whose guarantee survives resizes between calls.

mod buckets;

use super::bytes;
use super::keybuf::KeyBuf;
use super::siphash::KeyedSip;
use buckets::Buckets;
use std::fmt;
use std::hash::BuildHasher;
use std::mem;

mod prefetch;
mod sample;
pub use buckets::mapped_bytes;
pub use sample::set_expand_guard;

/// Bucket count of a table's first allocation, and the floor for shrinking.
const INITIAL_BUCKETS: usize = 4;
/// Empty buckets a rehash step may skip per bucket requested, so a step over
/// a sparse table stays bounded (the figure Redis uses).
const EMPTY_VISITS_PER_STEP: usize = 10;
/// Keys [`Dict::fair_random_key`] samples to pick one (Redis's figure).
const FAIR_SAMPLE: usize = 15;
/// `try_shrink` acts when fewer than one bucket in this many is used.
const SHRINK_RATIO: usize = 8;

struct Entry<V> {
    key: KeyBuf,
    value: V,
    next: Bucket<V>,
}

type Bucket<V> = Option<Box<Entry<V>>>;

/// Frees a chain one entry at a time; the derived drop would recurse once
/// per entry and overflow the stack on a long chain.
fn drop_chain<V>(mut chain: Bucket<V>) {
    while let Some(mut entry) = chain {
        chain = entry.next.take();
    }
}

fn bucket_index(hash: u64, n_buckets: usize) -> usize {
    (hash as usize) & (n_buckets - 1)
}

fn chain_iter<V>(bucket: &Bucket<V>) -> impl Iterator<Item = &Entry<V>> {
    std::iter::successors(bucket.as_deref(), |e| e.next.as_deref())
}

fn chain_find_mut<'a, V>(bucket: &'a mut Bucket<V>, key: &[u8]) -> Option<&'a mut Entry<V>> {
    let mut cur = bucket.as_deref_mut();
    while let Some(entry) = cur {
        if bytes::eq(&entry.key, key) {
            return Some(entry);
        }
        cur = entry.next.as_deref_mut();
    }
    None
}

/// Unlinks and returns the entry for `key` from a chain.
fn chain_unlink<V>(mut link: &mut Bucket<V>, key: &[u8]) -> Option<Box<Entry<V>>> {
    while link.as_ref().is_some_and(|e| !bytes::eq(&e.key, key)) {
        link = &mut link.as_mut()?.next;
    }
    let mut entry = link.take()?;
    *link = entry.next.take();
    Some(entry)
}

/// Advances a SCAN cursor: increments it as if its bits were reversed,
/// considering only the bits under `mask`. Setting the bits above the mask
/// first makes the carry skip straight over them.
fn next_cursor(cursor: u64, mask: u64) -> u64 {
    (cursor | !mask).reverse_bits().wrapping_add(1).reverse_bits()
}

/// Advances a xorshift64* generator and returns its next output. The caller
/// owns the state; a zero state is replaced by a fixed seed, since xorshift
/// would otherwise stay at zero forever.
pub fn next_random(state: &mut u64) -> u64 {
    let mut x = if *state == 0 { 0x9E37_79B9_7F4A_7C15 } else { *state };
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// A hash table from byte-string keys to `V` that resizes incrementally.
///
/// `S` builds the hasher; the default is SipHash-1-3 with a random key.
pub struct Dict<V, S = KeyedSip> {
    /// `tables[0]` is the live table; `tables[1]` is non-empty only while
    /// rehashing, and is where entries go (see [`Dict::table_for`]).
    tables: [Buckets<V>; 2],
    /// Entries in each table.
    used: [usize; 2],
    /// Next bucket of `tables[0]` to migrate; every bucket below it is empty.
    /// Zero when not rehashing.
    rehash_idx: usize,
    hasher: S,
    /// Entries migrated so far, so tests can bound the work of one call.
    #[cfg(test)]
    moved: usize,
}

impl<V> Dict<V> {
    /// Creates an empty table with a randomly keyed SipHash hasher. Does not
    /// allocate until the first insert.
    pub fn new() -> Self {
        Self::with_hasher(KeyedSip::random())
    }
}

impl<V> Default for Dict<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V, S> Dict<V, S> {
    /// Bytes of one entry's node (key, value and chain link), before the
    /// allocator rounds it (memory accounting).
    pub(crate) const NODE_BYTES: usize = mem::size_of::<Entry<V>>();

    /// Creates an empty table that hashes keys with `hasher`.
    pub fn with_hasher(hasher: S) -> Self {
        Dict {
            tables: [Buckets::default(), Buckets::default()],
            used: [0, 0],
            rehash_idx: 0,
            hasher,
            #[cfg(test)]
            moved: 0,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.used[0] + self.used[1]
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True while entries are migrating between two bucket arrays.
    pub fn is_rehashing(&self) -> bool {
        !self.tables[1].is_empty()
    }

    /// Buckets allocated across both arrays (for INFO / DEBUG).
    pub fn bucket_count(&self) -> usize {
        self.tables[0].len() + self.tables[1].len()
    }

    /// Iterates over all entries in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> {
        self.tables.iter().flat_map(|t| t.iter()).flat_map(|bucket| chain_iter(bucket)).map(|e| (&*e.key, &e.value))
    }

    /// Removes every entry. O(len); see [`Dict::take_all`] to free the
    /// entries elsewhere instead.
    pub fn clear(&mut self) {
        for mut table in mem::take(&mut self.tables) {
            table.iter_mut().for_each(|bucket| drop_chain(bucket.take()));
        }
        self.used = [0, 0];
        self.rehash_idx = 0;
    }

    /// One step of SCAN: calls `f` on every entry of the bucket `cursor`
    /// names (in both tables while rehashing) and returns the next cursor,
    /// 0 when the scan is complete.
    ///
    /// Every key present for the whole scan is reported at least once, even
    /// if the table grows, shrinks or rehashes between calls; keys may repeat.
    pub fn scan(&self, cursor: u64, mut f: impl FnMut(&[u8], &V)) -> u64 {
        let mut emit = |bucket: &Bucket<V>| chain_iter(bucket).for_each(|e| f(&e.key, &e.value));
        let mask = |table: &Buckets<V>| table.len() as u64 - 1;
        let [t0, t1] = &self.tables;
        if t0.is_empty() {
            return 0;
        }
        if !self.is_rehashing() {
            emit(&t0[(cursor & mask(t0)) as usize]);
            return next_cursor(cursor, mask(t0));
        }
        let (small, big) = if t0.len() <= t1.len() { (t0, t1) } else { (t1, t0) };
        let (m_small, m_big) = (mask(small), mask(big));
        emit(&small[(cursor & m_small) as usize]);
        // The big table's buckets that share the small bucket's low bits are
        // exactly the ones its keys spread to (or came from): visit them all
        // now, since the cursor will not come back to this small bucket.
        let mut v = cursor;
        loop {
            emit(&big[(v & m_big) as usize]);
            v = next_cursor(v, m_big);
            if v & (m_small ^ m_big) == 0 {
                return v;
            }
        }
    }

    /// Returns a random key, or `None` when empty: picks random buckets
    /// until one is non-empty, then a random entry of its chain. `rng` is a
    /// xorshift64* state owned by the caller (see [`next_random`]).
    ///
    /// Expected cost grows with buckets / len, which `try_shrink` bounds.
    pub fn random_key(&self, rng: &mut u64) -> Option<&[u8]> {
        if self.is_empty() {
            return None;
        }
        let [t0, t1] = &self.tables;
        // Buckets of t0 below rehash_idx are already drained: skip them.
        let first = self.rehash_idx;
        let span = (t0.len() + t1.len() - first) as u64;
        let bucket = loop {
            let i = first + (next_random(rng) % span) as usize;
            let bucket = if i < t0.len() { &t0[i] } else { &t1[i - t0.len()] };
            if bucket.is_some() {
                break bucket;
            }
        };
        let nth = next_random(rng) % chain_iter(bucket).count() as u64;
        chain_iter(bucket).nth(nth as usize).map(|e| &*e.key)
    }

    /// A random key drawn more evenly than [`Dict::random_key`] (Redis's
    /// `dictGetFairRandomKey`, behind SRANDMEMBER and SPOP): a key in a
    /// long chain is not less likely than one alone in its bucket. Collects
    /// up to [`FAIR_SAMPLE`] keys from the buckets following a random one
    /// and picks among them, so a small set is drawn exactly uniformly.
    pub fn fair_random_key(&self, rng: &mut u64) -> Option<&[u8]> {
        let want = FAIR_SAMPLE.min(self.len());
        let mut sample: [&[u8]; FAIR_SAMPLE] = [&[]; FAIR_SAMPLE];
        let mut got = 0;
        let mask = self.tables.iter().map(|t| t.len()).max().unwrap_or(0).saturating_sub(1);
        // High bits throughout: the low bits of consecutive xorshift64*
        // outputs are weak, and the start bucket and the final pick must
        // not be related.
        let mut i = (next_random(rng) >> 32) as usize & mask;
        let mut empty_run = 0;
        // Buckets walked since the first key was sampled: never a full lap,
        // so no key is sampled twice (which would favour it).
        let mut walked = 0;
        // Room for a full lap after the sparse search: `try_shrink` keeps
        // tables dense enough that a lap stays short.
        for _ in 0..want * 10 + mask + 1 {
            if got > 0 {
                walked += 1;
                if walked > mask {
                    break;
                }
            }
            for bucket in self.tables.iter().filter_map(|t| t.get(i)) {
                if bucket.is_none() {
                    empty_run += 1;
                    continue;
                }
                empty_run = 0;
                for e in chain_iter(bucket) {
                    sample[got] = &e.key;
                    got += 1;
                    if got == want {
                        return Some(sample[((next_random(rng) >> 32) % want as u64) as usize]);
                    }
                }
            }
            // A sparse stretch before anything was found: look elsewhere
            // rather than crawl.
            if got == 0 && empty_run >= 5 && empty_run > want {
                i = (next_random(rng) >> 32) as usize & mask;
                empty_run = 0;
            } else {
                i = (i + 1) & mask;
            }
        }
        if got == 0 {
            return self.random_key(rng);
        }
        Some(sample[((next_random(rng) >> 32) % got as u64) as usize])
    }
}

impl<V, S: BuildHasher> Dict<V, S> {
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The table that holds (or would receive) a key with this hash: while
    /// rehashing, a key whose bucket in the old table has not been migrated
    /// yet lives in the old table, every other key in the new one. Inserts
    /// follow the same rule (see [`Dict::add_new`]), so a lookup probes one
    /// table, never both.
    fn table_for(&self, hash: u64) -> usize {
        let t0 = self.tables[0].len();
        usize::from(self.is_rehashing() && bucket_index(hash, t0) < self.rehash_idx)
    }

    fn find(&self, hash: u64, key: &[u8]) -> Option<&Entry<V>> {
        let table = &self.tables[self.table_for(hash)];
        if table.is_empty() {
            return None;
        }
        chain_iter(&table[bucket_index(hash, table.len())]).find(|e| bytes::eq(&e.key, key))
    }

    fn find_mut(&mut self, hash: u64, key: &[u8]) -> Option<&mut Entry<V>> {
        let table = &mut self.tables[self.table_for(hash)];
        if table.is_empty() {
            return None;
        }
        let i = bucket_index(hash, table.len());
        chain_find_mut(&mut table[i], key)
    }

    /// Returns the value stored for `key`.
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        self.get_key_value(key).map(|(_, v)| v)
    }

    /// Returns the stored key and value for `key`.
    pub fn get_key_value(&self, key: &[u8]) -> Option<(&[u8], &V)> {
        if self.is_empty() {
            return None;
        }
        self.find(self.hash(key), key).map(|e| (&*e.key, &e.value))
    }

    /// Returns the value for `key` mutably. Performs one rehash step.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        let hash = self.hash(key);
        self.get_mut_hashed(hash, key)
    }

    /// The hash of `key`, for the `*_hashed` calls: a caller doing several
    /// operations on one key (check expiry, then update) hashes it once.
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        self.hash(key)
    }

    /// [`Dict::get`] with a hash from [`Dict::hash_key`].
    pub fn get_hashed(&self, hash: u64, key: &[u8]) -> Option<&V> {
        if self.is_empty() {
            return None;
        }
        self.find(hash, key).map(|e| &e.value)
    }

    /// [`Dict::get_mut`] with a hash from [`Dict::hash_key`].
    pub fn get_mut_hashed(&mut self, hash: u64, key: &[u8]) -> Option<&mut V> {
        if self.is_empty() {
            return None;
        }
        self.step_if_rehashing();
        self.find_mut(hash, key).map(|e| &mut e.value)
    }

    /// Insert a key the caller just found absent (same hash), without
    /// searching again. Performs one rehash step.
    pub fn insert_new_hashed(&mut self, hash: u64, key: &[u8], value: V) -> &mut V {
        self.step_if_rehashing();
        debug_assert!(self.find(hash, key).is_none(), "insert_new_hashed on a present key");
        self.add_new(hash, KeyBuf::new(key), value)
    }

    /// True if `key` is present.
    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.get_key_value(key).is_some()
    }

    /// Sets `key` to `value`, returning the previous value. The key bytes
    /// are copied only when the key is new. Performs one rehash step.
    pub fn insert(&mut self, key: &[u8], value: V) -> Option<V> {
        self.step_if_rehashing();
        let hash = self.hash(key);
        if let Some(entry) = self.find_mut(hash, key) {
            return Some(mem::replace(&mut entry.value, value));
        }
        self.add_new(hash, KeyBuf::new(key), value);
        None
    }

    /// Like [`Dict::insert`] for a key the caller already owns; if the key
    /// exists, the stored key is kept and `key` is dropped.
    pub fn insert_owned(&mut self, key: Box<[u8]>, value: V) -> Option<V> {
        self.step_if_rehashing();
        let hash = self.hash(&key);
        if let Some(entry) = self.find_mut(hash, &key) {
            return Some(mem::replace(&mut entry.value, value));
        }
        self.add_new(hash, KeyBuf::from(key), value);
        None
    }

    /// Returns the value for `key`, inserting `f()` first if it is absent.
    /// Performs one rehash step.
    pub fn get_or_insert_with(&mut self, key: &[u8], f: impl FnOnce() -> V) -> &mut V {
        self.step_if_rehashing();
        let hash = self.hash(key);
        // Two lookups on a hit: returning the first borrow conditionally and
        // then inserting is rejected by the current borrow checker.
        if self.find(hash, key).is_none() {
            return self.add_new(hash, KeyBuf::new(key), f());
        }
        let entry = self.find_mut(hash, key).expect("key was found a moment ago");
        &mut entry.value
    }

    /// Removes `key`, returning its value. Performs one rehash step.
    pub fn remove(&mut self, key: &[u8]) -> Option<V> {
        self.remove_entry(key).map(|(_, v)| v)
    }

    /// Removes `key`, returning the stored key and value. Performs one
    /// rehash step. Never shrinks; that is [`Dict::try_shrink`]'s job.
    pub fn remove_entry(&mut self, key: &[u8]) -> Option<(Box<[u8]>, V)> {
        let hash = self.hash(key);
        self.remove_entry_hashed(hash, key)
    }

    /// [`Dict::remove`] with a hash from [`Dict::hash_key`].
    pub fn remove_hashed(&mut self, hash: u64, key: &[u8]) -> Option<V> {
        self.remove_entry_hashed(hash, key).map(|(_, v)| v)
    }

    fn remove_entry_hashed(&mut self, hash: u64, key: &[u8]) -> Option<(Box<[u8]>, V)> {
        let Entry { key, value, .. } = *self.unlink_hashed(hash, key)?;
        Some((key.into_boxed(), value))
    }

    /// Unlinks the entry for `key` and returns it. Performs one rehash step.
    fn unlink_hashed(&mut self, hash: u64, key: &[u8]) -> Option<Box<Entry<V>>> {
        if self.is_empty() {
            return None;
        }
        self.step_if_rehashing();
        let t = self.table_for(hash);
        let table = &mut self.tables[t];
        let i = bucket_index(hash, table.len());
        let entry = chain_unlink(&mut table[i], key)?;
        self.used[t] -= 1;
        Some(entry)
    }

    /// Links a new entry for a key known to be absent and returns its value.
    fn add_new(&mut self, hash: u64, key: KeyBuf, value: V) -> &mut V {
        &mut self.add_new_entry(hash, key, value).value
    }

    /// [`Dict::add_new`] returning the whole entry.
    fn add_new_entry(&mut self, hash: u64, key: KeyBuf, value: V) -> &mut Entry<V> {
        self.grow_if_needed();
        // While rehashing, a key whose old bucket is not migrated yet joins
        // that bucket, to move with it later. The new table is then written
        // only where migration has reached, front to back: writing it at
        // random would fault in all of its pages (hundreds of MB for a big
        // keyspace) within the first few inserts, one long stall. The rehash
        // still finishes: every insert advances it by at least one bucket.
        let t = self.table_for(hash);
        let table = &mut self.tables[t];
        let i = bucket_index(hash, table.len());
        let slot = &mut table[i];
        let next = slot.take();
        self.used[t] += 1;
        slot.insert(Box::new(Entry { key, value, next }))
    }

    fn grow_if_needed(&mut self) {
        if self.is_rehashing() {
            return;
        }
        if self.tables[0].is_empty() {
            self.tables[0] = Buckets::new(INITIAL_BUCKETS);
        } else if self.used[0] >= self.tables[0].len() {
            let n = (self.used[0] * 2).next_power_of_two();
            if !sample::expand_allowed(n * mem::size_of::<Bucket<V>>(), self.used[0], self.tables[0].len()) {
                return;
            }
            self.start_rehash(n);
        }
    }

    /// Starts shrinking if the table is sparse (under 1/8 full) and not
    /// already rehashing. Meant for a cron: removes never shrink by
    /// themselves, so a burst of deletes followed by inserts does not
    /// thrash between sizes.
    pub fn try_shrink(&mut self) {
        let buckets = self.tables[0].len();
        if self.is_rehashing() || buckets <= INITIAL_BUCKETS || self.used[0] * SHRINK_RATIO >= buckets {
            return;
        }
        self.start_rehash((self.used[0] * 2).next_power_of_two().max(INITIAL_BUCKETS));
    }

    /// Size an empty table for `n` entries at once (Redis's `dictExpand`
    /// on an RDB's RESIZEDB hint): a load then inserts without a single
    /// rehash, and its duplicate checks walk short chains in one table.
    /// A table that holds entries is left alone (its growth stays
    /// incremental).
    pub fn reserve(&mut self, n: usize) {
        if !self.is_empty() || self.is_rehashing() || n <= self.tables[0].len() {
            return;
        }
        let buckets = n.next_power_of_two().max(INITIAL_BUCKETS);
        if sample::expand_allowed(buckets * mem::size_of::<Bucket<V>>(), 0, self.tables[0].len().max(1)) {
            self.tables[0] = Buckets::new(buckets);
            self.rehash_idx = 0;
        }
    }

    fn start_rehash(&mut self, n_buckets: usize) {
        self.tables[1] = Buckets::new(n_buckets);
        self.rehash_idx = 0;
    }

    fn step_if_rehashing(&mut self) {
        if self.is_rehashing() {
            self.rehash_step(1);
        }
    }

    /// Migrates up to `n` non-empty buckets to the new table, skipping at
    /// most `10 * n` empty ones. Returns true while still rehashing.
    pub fn rehash_step(&mut self, n: usize) -> bool {
        if !self.is_rehashing() {
            return false;
        }
        let mut empty_visits_left = n.saturating_mul(EMPTY_VISITS_PER_STEP);
        for _ in 0..n {
            if self.used[0] == 0 {
                break;
            }
            // Some bucket at or past rehash_idx is occupied while used[0] > 0,
            // so this cannot run off the end.
            while self.tables[0][self.rehash_idx].is_none() {
                self.rehash_idx += 1;
                empty_visits_left -= 1;
                if empty_visits_left == 0 {
                    return true;
                }
            }
            self.move_bucket(self.rehash_idx);
            self.rehash_idx += 1;
        }
        if self.used[0] > 0 {
            self.tables[0].release_below(self.rehash_idx);
            return true;
        }
        let new = mem::take(&mut self.tables[1]);
        drop(mem::replace(&mut self.tables[0], new));
        self.used = [self.used[1], 0];
        self.rehash_idx = 0;
        false
    }

    fn move_bucket(&mut self, i: usize) {
        let mut chain = self.tables[0][i].take();
        let new = &mut self.tables[1];
        while let Some(mut entry) = chain {
            chain = entry.next.take();
            let j = bucket_index(self.hasher.hash_one(&*entry.key), new.len());
            entry.next = new[j].take();
            new[j] = Some(entry);
            self.used[0] -= 1;
            self.used[1] += 1;
            #[cfg(test)]
            {
                self.moved += 1;
            }
        }
    }
}

impl<V, S: BuildHasher + Clone> Dict<V, S> {
    /// Moves every entry into a new `Dict` in O(1), leaving `self` empty.
    /// Lets FLUSHALL ASYNC drop the old contents on another thread.
    pub fn take_all(&mut self) -> Self {
        let mut taken = Dict::with_hasher(self.hasher.clone());
        taken.tables = mem::take(&mut self.tables);
        taken.used = mem::take(&mut self.used);
        taken.rehash_idx = mem::take(&mut self.rehash_idx);
        taken
    }
}

impl<V, S> Drop for Dict<V, S> {
    fn drop(&mut self) {
        self.clear();
    }
}

impl<V: fmt::Debug, S> fmt::Debug for Dict<V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = self.iter().map(|(k, v)| (String::from_utf8_lossy(k), v));
        f.debug_map().entries(entries).finish()
    }
}

impl<V, S> Dict<V, S> {
    /// Longest bucket chain (a measure of how well keys spread; tests).
    pub fn longest_chain(&self) -> usize {
        self.tables.iter().flat_map(|t| t.iter()).map(|b| chain_iter(b).count()).max().unwrap_or(0)
    }
}

mod meta;
#[cfg(test)]
mod tests;
