//! Databases and the keyspace: key lookup with lazy expiry, the per-db expire
//! bookkeeping, and the active expiry cycle that reclaims memory of keys
//! nobody reads again.
//!
//! Expiry times live in a side table holding only keys that have one (as in
//! Redis), flagged in the key's metadata word, so a persistent key pays
//! nothing for TTL support. That word (see [`KeyBuf::meta`]) also holds the
//! access clock, so the table's value is just the [`Value`] and a whole key
//! fits one 56-byte dict node.
//!
//! [`KeyBuf::meta`]: super::keybuf::KeyBuf::meta
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::dict::{next_random, Dict};
use super::evict::{lfu_word, Lfu, LFU_INIT_VAL};
use super::siphash::KeyedSip;
use super::value::Value;
use super::EngineError;

/// A key argument whose keyspace hash is already known (computed when its
/// bucket was prefetched), identified by where its bytes lie: the input
/// buffer slice the command will look up. Lookups of exactly that slice
/// skip hashing while [`with_known_hash`] runs the command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KnownHash {
    addr: usize,
    len: usize,
    hash: u64,
}

impl KnownHash {
    /// `hash` must be the keyspace hash of `key`'s bytes, and those bytes
    /// must not change until the command that uses it has run.
    pub fn new(key: &[u8], hash: u64) -> Self {
        KnownHash { addr: key.as_ptr() as usize, len: key.len(), hash }
    }
    pub fn hash(&self) -> u64 {
        self.hash
    }
}

thread_local! {
    static KNOWN: std::cell::Cell<KnownHash> = const { std::cell::Cell::new(KnownHash { addr: 0, len: 0, hash: 0 }) };
}

/// Runs `f` (one command) with `known` offered to its keyspace lookups,
/// and forgets it afterwards, however `f` ends.
pub fn with_known_hash<R>(known: Option<KnownHash>, f: impl FnOnce() -> R) -> R {
    struct Forget;
    impl Drop for Forget {
        fn drop(&mut self) {
            KNOWN.set(KnownHash::default());
        }
    }
    let Some(known) = known else { return f() };
    KNOWN.set(known);
    let _forget = Forget;
    f()
}

/// What a key holds in the table. Its access time and TTL flag live in the
/// key's metadata word ([`Meta`]), where they cost no space.
#[derive(Debug, Clone)]
pub struct Entry {
    pub value: Value,
}

// With the key (24 bytes, metadata included) and the chain link, a dict
// node of 56 bytes: keep the entry itself to the bare value.
const _: () = assert!(std::mem::size_of::<Entry>() == 24);

/// The keyspace's use of a key's metadata word: the top bit says the key
/// has an expiry in the side table; the other 31 bits are the last access
/// in seconds of the server clock (OBJECT IDLETIME), wrapping like Redis's
/// (shorter) LRU clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Meta(u32);

const VOLATILE: u32 = 1 << 31;
const CLOCK_MASK: u32 = VOLATILE - 1;

impl Meta {
    fn new(access: u32) -> Meta {
        Meta(access & CLOCK_MASK)
    }
    fn volatile(self) -> bool {
        self.0 & VOLATILE != 0
    }
    fn access(self) -> u32 {
        self.0 & CLOCK_MASK
    }
    /// `word` with its access clock set to `access` (the flag kept).
    fn touch(word: &mut u32, access: u32) {
        *word = (*word & VOLATILE) | (access & CLOCK_MASK);
    }
}

/// A key's value with its expiry, detached from any db (RENAME, MOVE, COPY).
#[derive(Debug, Clone)]
pub struct Record {
    pub value: Value,
    pub expire_at: Option<i64>,
    pub access: u32,
}

/// One numbered database.
pub struct Db {
    pub(super) dict: Dict<Entry>,
    /// Expiry (unix ms) of every volatile key; same hash key as `dict`, so
    /// one hash of a key serves both tables.
    pub(super) expires: Dict<i64>,
    expire_cursor: u64,
    /// Under an LFU maxmemory policy, the LFU settings: key metadata then
    /// holds LFU data (see `evict`) instead of the access clock. Checked on
    /// every access: the one branch eviction adds to the hot path.
    pub lfu: Option<Lfu>,
    /// Keys removed by expiry (INFO `expired_keys`).
    pub expired: u64,
    /// While clients WATCH keys (or expiries are replayed), expired keys
    /// are logged here so WATCH can see them as modified, and the
    /// keyspace's flag given here is raised: one load per command then
    /// says whether any db logged one (a scan of every db's log was ~6% of
    /// a primary's instructions per SET).
    pub track_expired: Option<Arc<AtomicBool>>,
    pub expired_log: Vec<Vec<u8>>,
    /// Keys past their expiry read as absent but are not deleted (clients
    /// are paused: the dataset must not change under them).
    pub keep_expired: bool,
    /// Keys past their expiry still read as present: a replica applying
    /// its primary's commands, which decide alone what has expired.
    pub expiry_off: bool,
    /// While `new` keyspace events are on, created keys are logged here.
    pub track_new: bool,
    pub new_log: Vec<Vec<u8>>,
    /// Removals by expiry (`lazy_expire`) or by [`Db::delete`] and
    /// overwrites (`lazy_server_del`) leave the old value in `lazy_drops`
    /// for the server's lazy-free thread, which the engine cannot reach.
    pub lazy_expire: bool,
    pub lazy_server_del: bool,
    pub lazy_drops: Vec<Value>,
}

impl Default for Db {
    fn default() -> Self {
        let hasher = KeyedSip::keyspace();
        Db {
            dict: Dict::with_hasher(hasher.clone()),
            expires: Dict::with_hasher(hasher),
            expire_cursor: 0,
            lfu: None,
            expired: 0,
            track_expired: None,
            expired_log: Vec::new(),
            keep_expired: false,
            expiry_off: false,
            track_new: false,
            new_log: Vec::new(),
            lazy_expire: false,
            lazy_server_del: false,
            lazy_drops: Vec::new(),
        }
    }
}

fn clock_secs(now_ms: i64) -> u32 {
    (now_ms / 1000) as u32
}

/// A key was accessed: its clock set to now, or its LFU data updated.
#[inline]
fn touch(lfu: &mut Option<Lfu>, word: &mut u32, now_ms: i64) {
    match lfu {
        None => Meta::touch(word, clock_secs(now_ms)),
        Some(l) => touch_lfu(l, word, now_ms),
    }
}

/// The LFU arm of [`touch`], out of line: its float math would otherwise
/// swell every lookup's code for a policy most servers don't use.
#[cold]
#[inline(never)]
fn touch_lfu(lfu: &mut Lfu, word: &mut u32, now_ms: i64) {
    Meta::touch(word, lfu.touch(Meta(*word).access(), now_ms));
}

/// Bring a key's side-table expiry to `at` (None = persistent); `word` is
/// the key's metadata. Inlined for the common case of a key without a TTL
/// that stays without one (every plain SET).
#[inline]
fn apply_expire(word: &mut u32, expires: &mut Dict<i64>, hash: u64, key: &[u8], at: Option<i64>) {
    if at.is_some() || Meta(*word).volatile() {
        update_expire(word, expires, hash, key, at);
    }
}

fn update_expire(word: &mut u32, expires: &mut Dict<i64>, hash: u64, key: &[u8], at: Option<i64>) {
    match (Meta(*word).volatile(), at) {
        (false, None) => {}
        (true, None) => {
            expires.remove_hashed(hash, key);
        }
        (true, Some(at)) => {
            if let Some(slot) = expires.get_mut_hashed(hash, key) {
                *slot = at;
            }
        }
        (false, Some(at)) => {
            expires.insert_new_hashed(hash, key, at);
        }
    }
    if at.is_some() {
        *word |= VOLATILE;
    } else {
        *word &= !VOLATILE;
    }
}

impl Db {
    pub fn len(&self) -> usize {
        self.dict.len()
    }
    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }
    /// False while the table is small enough to stay in the CPU caches:
    /// callers then skip even finding the keys to prefetch.
    pub fn worth_prefetching(&self) -> bool {
        self.dict.worth_prefetching()
    }

    /// The keyspace hash of `key`: the one already known for this very
    /// slice (see [`KnownHash`]), or computed.
    #[inline]
    fn key_hash(&self, key: &[u8]) -> u64 {
        let known = KNOWN.get();
        if known.addr == key.as_ptr() as usize && known.len == key.len() && known.len != 0 {
            debug_assert_eq!(known.hash, self.dict.hash_key(key), "a known hash that is not the key's");
            return known.hash;
        }
        self.dict.hash_key(key)
    }

    /// Warms the cache for a key a pipelined batch is about to look up
    /// (see `dict::prefetch`): stage one hashes it and loads its bucket,
    /// returning the hash; None (nothing done) while the table fits the
    /// caches...
    pub fn prefetch_bucket(&self, key: &[u8]) -> Option<u64> {
        self.dict.worth_prefetching().then(|| self.dict.prefetch_bucket_of(key))
    }

    /// ... and stage two, once the buckets had time to arrive, loads the
    /// entries they point to.
    pub fn prefetch_entries(&self, hashes: impl IntoIterator<Item = u64> + Clone) {
        if self.dict.worth_prefetching() {
            self.dict.prefetch_entries(hashes);
        }
    }

    /// Stages three and four for collection commands, once the keys'
    /// entries are loaded: for each `(key, member)` whose key holds a big
    /// set or hash, warm the member's bucket, then its entry. Read-only: no
    /// expiry check, no rehash step.
    pub fn prefetch_members(&self, items: &[(&[u8], &[u8])]) {
        enum Table<'a> {
            Set(&'a Dict<()>),
            Hash(&'a Dict<Box<[u8]>>),
        }
        let mut staged: [Option<(Table, u64)>; 16] = Default::default();
        for (slot, &(key, member)) in staged.iter_mut().zip(items) {
            *slot = match self.dict.get(key).map(|e| &e.value) {
                Some(Value::Set(super::set::Set::Table(t))) if t.worth_prefetching() => {
                    Some((Table::Set(t), t.prefetch_bucket_of(member)))
                }
                Some(Value::Hash(super::hash::Hash::Table(t))) if t.worth_prefetching() => {
                    Some((Table::Hash(t), t.prefetch_bucket_of(member)))
                }
                _ => None,
            };
        }
        for (table, hash) in staged.iter().flatten() {
            match table {
                Table::Set(t) => t.prefetch_entries([*hash]),
                Table::Hash(t) => t.prefetch_entries([*hash]),
            }
        }
    }

    /// Entries and buckets of the key table, then of the expiry table
    /// (memory accounting).
    pub(crate) fn table_shape(&self) -> [(usize, usize); 2] {
        [(self.dict.len(), self.dict.bucket_count()), (self.expires.len(), self.expires.bucket_count())]
    }

    /// Keys with a TTL (INFO keyspace `expires=`).
    pub fn volatile_count(&self) -> usize {
        self.expires.len()
    }

    /// The expiry of `key` (unix ms), if it has one. No expiry check.
    pub fn expire_of(&self, key: &[u8]) -> Option<i64> {
        let hash = self.key_hash(key);
        self.expire_of_hashed(hash, key)
    }

    fn expire_of_hashed(&self, hash: u64, key: &[u8]) -> Option<i64> {
        if self.expires.is_empty() {
            // No key has a TTL: spare the lookup of the key's flag.
            return None;
        }
        let (meta, _) = self.dict.get_meta_hashed(hash, key)?;
        if Meta(meta).volatile() {
            self.expires.get_hashed(hash, key).copied()
        } else {
            None
        }
    }

    /// True if `key` exists but its time has come (waiting to be reclaimed).
    pub fn is_stale(&self, key: &[u8], now_ms: i64) -> bool {
        self.expire_of(key).is_some_and(|at| at <= now_ms)
    }

    /// Remove `key` if its time has come; true if it was removed.
    fn expire_if_due(&mut self, key: &[u8], now_ms: i64) -> bool {
        let hash = self.key_hash(key);
        self.expire_if_due_hashed(hash, key, now_ms)
    }

    fn expire_if_due_hashed(&mut self, hash: u64, key: &[u8], now_ms: i64) -> bool {
        let due = self.expire_of_hashed(hash, key).is_some_and(|at| at <= now_ms);
        if due && self.expiry_off {
            return false;
        }
        if due && !self.keep_expired {
            let gone = self.dict.remove_hashed(hash, key);
            if self.lazy_expire {
                self.lazy_drops.extend(gone.map(|e| e.value));
            }
            self.expires.remove_hashed(hash, key);
            self.expired += 1;
            if let Some(flag) = &self.track_expired {
                self.expired_log.push(key.to_vec());
                flag.store(true, Ordering::Relaxed);
            }
        }
        due
    }

    /// Look a key up for reading or writing, expiring it first if due.
    pub fn get(&mut self, key: &[u8], now_ms: i64) -> Option<&mut Entry> {
        // One hash for the expiry check and the lookup (the hot path).
        let hash = self.key_hash(key);
        if self.expire_if_due_hashed(hash, key, now_ms) {
            return None;
        }
        let (meta, e) = self.dict.get_meta_mut_hashed(hash, key)?;
        touch(&mut self.lfu, meta, now_ms);
        Some(e)
    }

    /// The metadata word a key created now starts with: the access clock,
    /// or under LFU the minute clock with a counter of `LFU_INIT_VAL`.
    #[inline]
    pub fn fresh_access(&self, now_ms: i64) -> u32 {
        match self.lfu {
            None => clock_secs(now_ms),
            Some(_) => lfu_word(now_ms, LFU_INIT_VAL),
        }
    }

    /// The access data of `key` (clock or LFU word, without the TTL flag);
    /// no expiry check and no access.
    pub fn meta_of(&self, key: &[u8]) -> Option<u32> {
        self.dict.get_meta_hashed(self.key_hash(key), key).map(|(m, _)| Meta(m).access())
    }

    /// Seconds since the access recorded in `word` (an access clock).
    pub fn idle_of_word(&self, word: u32, now_ms: i64) -> u32 {
        // Across a wrap of the 31-bit clock the difference still holds, as
        // with Redis's LRU clock.
        clock_secs(now_ms).wrapping_sub(Meta(word).access()) & CLOCK_MASK
    }

    /// Seconds since `key` was last accessed (OBJECT IDLETIME); no expiry
    /// check and no access.
    pub fn idle_secs(&self, key: &[u8], now_ms: i64) -> Option<i64> {
        let (meta, _) = self.dict.get_meta_hashed(self.key_hash(key), key)?;
        Some(i64::from(self.idle_of_word(meta, now_ms)))
    }

    /// Look up without touching the access time (OBJECT must not reset
    /// the idle time it reports).
    pub fn peek(&mut self, key: &[u8], now_ms: i64) -> Option<&Entry> {
        let hash = self.key_hash(key);
        if self.expire_if_due_hashed(hash, key, now_ms) {
            return None;
        }
        self.dict.get_hashed(hash, key)
    }

    pub fn contains(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.peek(key, now_ms).is_some()
    }

    /// The entry of `key` as stored: no expiry check and no access (DEBUG
    /// inspects logically expired keys too, as Redis's does).
    pub fn find(&self, key: &[u8]) -> Option<&Entry> {
        self.dict.get_hashed(self.key_hash(key), key)
    }

    /// Whether `key` holds a value that has not expired, without expiring
    /// it or touching its access time (SWAPDB inspects both databases
    /// around the swap and must leave them as they were).
    pub fn holds_live(&self, key: &[u8], now_ms: i64) -> bool {
        let hash = self.key_hash(key);
        self.dict.get_hashed(hash, key).is_some() && self.expires.get_hashed(hash, key).is_none_or(|&at| at > now_ms)
    }

    /// Store a value, replacing any previous one. `keep_ttl` keeps the old
    /// expiry (SET KEEPTTL, SETRANGE, APPEND ...); otherwise `expire_at` applies.
    pub fn set(&mut self, key: &[u8], value: Value, expire_at: Option<i64>, keep_ttl: bool, now_ms: i64) {
        let access = self.fresh_access(now_ms);
        let hash = self.key_hash(key);
        match self.dict.get_meta_mut_hashed(hash, key) {
            Some((meta, e)) => {
                // A stale entry's TTL is not kept: the key was logically gone.
                let stale =
                    Meta(*meta).volatile() && self.expires.get_hashed(hash, key).is_some_and(|&at| at <= now_ms);
                let old = std::mem::replace(&mut e.value, value);
                if self.lazy_server_del {
                    self.lazy_drops.push(old);
                }
                // An overwrite is an access of the key (LFU: its counter
                // grows, as Redis's lookupKeyWrite before dbOverwrite).
                touch(&mut self.lfu, meta, now_ms);
                if !keep_ttl || stale {
                    apply_expire(meta, &mut self.expires, hash, key, expire_at);
                }
            }
            None => {
                let (meta, _) = self.dict.insert_new_meta_hashed(hash, key, Meta::new(access).0, Entry { value });
                apply_expire(meta, &mut self.expires, hash, key, expire_at);
                if self.track_new {
                    self.new_log.push(key.to_vec());
                }
            }
        }
    }

    /// Add a key known to be absent (loading a snapshot): one lookup instead
    /// of `set`'s several. False, changing nothing, if the key exists.
    pub fn insert_new(&mut self, key: &[u8], value: Value, expire_at: Option<i64>, now_ms: i64) -> bool {
        let hash = self.key_hash(key);
        if self.dict.get_hashed(hash, key).is_some() {
            return false;
        }
        let access = self.fresh_access(now_ms);
        let (meta, _) = self.dict.insert_new_meta_hashed(hash, key, Meta::new(access).0, Entry { value });
        apply_expire(meta, &mut self.expires, hash, key, expire_at);
        true
    }

    /// Remove a key, returning its entry (its expiry is dropped).
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        self.take(key).map(|rec| Entry { value: rec.value })
    }

    /// Remove a key the server deletes implicitly (Redis's `dbDelete`: a
    /// STORE's empty result, RESTORE REPLACE); true if it existed. Its value
    /// goes to `lazy_drops` under `lazy_server_del`.
    pub fn delete(&mut self, key: &[u8]) -> bool {
        let Some(rec) = self.take(key) else { return false };
        if self.lazy_server_del {
            self.lazy_drops.push(rec.value);
        }
        true
    }

    /// Remove a key with its expiry (RENAME, MOVE).
    pub fn take(&mut self, key: &[u8]) -> Option<Record> {
        let hash = self.key_hash(key);
        let (meta, e) = self.dict.remove_meta_hashed(hash, key)?;
        let expire_at = if Meta(meta).volatile() { self.expires.remove_hashed(hash, key) } else { None };
        Some(Record { value: e.value, expire_at, access: Meta(meta).access() })
    }

    /// A copy of a key's value and expiry, fresh as of `now_ms` (COPY).
    pub fn copy_record(&mut self, key: &[u8], now_ms: i64) -> Option<Record> {
        let value = self.get(key, now_ms)?.value.clone();
        Some(Record { value, expire_at: self.expire_of(key), access: self.fresh_access(now_ms) })
    }

    /// Store a detached record, replacing whatever `key` held.
    pub fn put(&mut self, key: &[u8], rec: Record) {
        self.delete(key);
        let hash = self.key_hash(key);
        let (meta, _) =
            self.dict.insert_new_meta_hashed(hash, key, Meta::new(rec.access).0, Entry { value: rec.value });
        apply_expire(meta, &mut self.expires, hash, key, rec.expire_at);
        if self.track_new {
            self.new_log.push(key.to_vec());
        }
    }

    /// Move the entry at `src` to `dst` with its expiry, replacing whatever
    /// `dst` held (RENAME). False if `src` is missing. No expiry check: the
    /// caller has looked both keys up already.
    pub fn rename(&mut self, src: &[u8], dst: &[u8]) -> bool {
        if src == dst {
            return self.dict.contains_key(src);
        }
        let Some(rec) = self.take(src) else { return false };
        self.put(dst, rec);
        true
    }

    /// Set or clear the expiry of an existing key; false if it is missing.
    pub fn set_expire(&mut self, key: &[u8], at: Option<i64>) -> bool {
        let hash = self.key_hash(key);
        let Some((meta, _)) = self.dict.get_meta_mut_hashed(hash, key) else { return false };
        apply_expire(meta, &mut self.expires, hash, key, at);
        true
    }

    /// Size an empty db for `keys` keys, `expires` of them with a TTL
    /// (an RDB's RESIZEDB hint).
    pub fn reserve(&mut self, keys: usize, expires: usize) {
        self.dict.reserve(keys);
        self.expires.reserve(expires);
    }

    /// Empty the db, handing back the old tables (FLUSHALL ASYNC drops them
    /// on another thread).
    pub fn clear(&mut self) -> (Dict<Entry>, Dict<i64>) {
        self.expire_cursor = 0;
        (self.dict.take_all(), self.expires.take_all())
    }

    /// The string value of `key`: `Ok(None)` if missing, WRONGTYPE otherwise.
    #[inline]
    pub fn get_str(&mut self, key: &[u8], now_ms: i64) -> Result<Option<&mut super::Str>, EngineError> {
        match self.get(key, now_ms) {
            None => Ok(None),
            Some(Entry { value: Value::Str(s), .. }) => Ok(Some(s)),
            Some(_) => Err(EngineError::WrongType),
        }
    }

    pub fn scan(&self, cursor: u64, f: impl FnMut(&[u8], &Entry)) -> u64 {
        self.dict.scan(cursor, f)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Entry)> {
        self.dict.iter()
    }

    /// Every key with its entry and expiry (unix ms), for snapshots; the
    /// side table is consulted only for keys flagged as having one.
    pub fn iter_with_expiry(&self) -> impl Iterator<Item = (&[u8], &Entry, Option<i64>)> {
        self.dict.iter_meta().map(|(k, meta, e)| {
            let at = if Meta(meta).volatile() { self.expires.get(k).copied() } else { None };
            (k, e, at)
        })
    }

    /// A random live key (RANDOMKEY): expired picks are reclaimed and retried.
    pub fn random_key(&mut self, rng: &mut u64, now_ms: i64) -> Option<Vec<u8>> {
        for _ in 0..100 {
            let key = self.dict.random_key(rng)?.to_vec();
            if !self.expire_if_due(&key, now_ms) {
                return Some(key);
            }
        }
        // Nearly everything is expired: fall back to a full pass.
        let live = self.iter().find(|(k, _)| !self.is_stale(k, now_ms));
        live.map(|(k, _)| k.to_vec())
    }

    /// One slice of the active expiry cycle: visit up to `buckets` buckets from
    /// the saved cursor and remove what is due. Returns keys removed.
    pub fn active_expire(&mut self, buckets: usize, now_ms: i64) -> usize {
        if self.expires.is_empty() {
            return 0;
        }
        let mut due = Vec::new();
        let mut cursor = self.expire_cursor;
        for _ in 0..buckets {
            cursor = self.expires.scan(cursor, |k, &at| {
                if at <= now_ms {
                    due.push(k.to_vec());
                }
            });
            if cursor == 0 {
                break;
            }
        }
        self.expire_cursor = cursor;
        let n = due.len();
        for k in due {
            self.drop_expired(k);
        }
        n
    }

    /// Remove `key` if its time has come, even while expired keys are
    /// otherwise kept (a writable replica's own keys: see
    /// `server::replica_keys`). True if it was removed.
    pub fn expire_now(&mut self, key: &[u8], now_ms: i64) -> bool {
        let due = self.is_stale(key, now_ms);
        if due {
            self.drop_expired(key.to_vec());
        }
        due
    }

    /// Remove a key found past its expiry, counted and logged as expired.
    fn drop_expired(&mut self, key: Vec<u8>) {
        let gone = self.take(&key);
        if self.lazy_expire {
            self.lazy_drops.extend(gone.map(|r| r.value));
        }
        if let Some(flag) = &self.track_expired {
            self.expired_log.push(key);
            flag.store(true, Ordering::Relaxed);
        }
        self.expired += 1;
    }

    /// Background upkeep: incremental rehash and shrinking.
    pub fn maintain(&mut self, rehash_buckets: usize) {
        self.dict.try_shrink();
        self.dict.rehash_step(rehash_buckets);
        self.expires.try_shrink();
        self.expires.rehash_step(rehash_buckets);
    }
}

/// All databases.
pub struct Keyspace {
    pub dbs: Vec<Db>,
    rng: u64,
    /// Raised when a db logs an expired key (see `Db::track_expired`).
    pub expired_logged: Arc<AtomicBool>,
}

impl Keyspace {
    pub fn new(databases: usize) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        Keyspace { dbs: (0..databases).map(|_| Db::default()).collect(), rng: seed | 1, expired_logged: Arc::default() }
    }

    /// A random key of db `i`.
    pub fn random_key(&mut self, i: usize, now_ms: i64) -> Option<Vec<u8>> {
        let mut rng = self.rng;
        let k = self.dbs[i].random_key(&mut rng, now_ms);
        self.rng = rng;
        k
    }

    /// A pseudo-random number (tests of randomness don't need crypto quality).
    pub fn next_random(&mut self) -> u64 {
        next_random(&mut self.rng)
    }

    /// Exchange the data of databases `a` and `b` in O(1) (SWAPDB): the
    /// tables and the expiry cursor move; the expiry statistics and the
    /// expired-key log stay with the index, like the clients using it.
    pub fn swap(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        let (lo, hi) = (a.min(b), a.max(b));
        let (left, right) = self.dbs.split_at_mut(hi);
        let (x, y) = (&mut left[lo], &mut right[0]);
        std::mem::swap(&mut x.dict, &mut y.dict);
        std::mem::swap(&mut x.expires, &mut y.expires);
        std::mem::swap(&mut x.expire_cursor, &mut y.expire_cursor);
    }

    /// Exchange every db's data with `other`'s (a snapshot loaded aside
    /// replaces ours in O(1)); like [`Keyspace::swap`], each db's settings
    /// and statistics stay where they are.
    pub fn swap_data(&mut self, other: &mut Keyspace) {
        for (x, y) in self.dbs.iter_mut().zip(other.dbs.iter_mut()) {
            std::mem::swap(&mut x.dict, &mut y.dict);
            std::mem::swap(&mut x.expires, &mut y.expires);
            std::mem::swap(&mut x.expire_cursor, &mut y.expire_cursor);
        }
    }

    pub fn total_keys(&self) -> usize {
        self.dbs.iter().map(Db::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Str;

    fn v(s: &str) -> Value {
        Value::Str(Str::from_bytes(s.as_bytes()))
    }

    #[test]
    fn rename_keeps_ttl_and_volatile_count() {
        let mut db = Db::default();
        db.set(b"a", v("1"), Some(10_000), false, 0);
        db.set(b"b", v("2"), Some(20_000), false, 0);
        db.set(b"c", v("3"), None, false, 0);
        assert_eq!(db.volatile_count(), 2);
        // Onto a volatile key: one volatile key disappears.
        assert!(db.rename(b"a", b"b"));
        assert_eq!(db.volatile_count(), 1);
        assert_eq!(db.expire_of(b"b"), Some(10_000));
        assert!(db.peek(b"a", 0).is_none());
        // A persistent key onto a fresh name, and a volatile one onto a persistent one.
        assert!(db.rename(b"c", b"d"));
        assert!(db.rename(b"b", b"d"));
        assert_eq!(db.volatile_count(), 1);
        assert_eq!(db.len(), 1);
        assert!(db.rename(b"d", b"d"));
        assert!(!db.rename(b"zz", b"d"));
        assert_eq!(db.volatile_count(), 1);
    }

    #[test]
    fn copy_record_keeps_value_and_expiry() {
        let mut db = Db::default();
        db.set(b"a", v("hello"), Some(5_000), false, 1_000);
        let rec = db.copy_record(b"a", 1_000).unwrap();
        assert_eq!(rec.expire_at, Some(5_000));
        assert_eq!(rec.value, v("hello"));
        db.put(b"b", rec);
        assert_eq!(db.volatile_count(), 2);
        assert_eq!(db.expire_of(b"b"), Some(5_000));
        db.set(b"b", v("x"), None, true, 1_000);
        assert_eq!(db.expire_of(b"b"), Some(5_000), "KEEPTTL keeps it");
        db.set(b"b", v("x"), None, false, 1_000);
        assert_eq!((db.expire_of(b"b"), db.volatile_count()), (None, 1));
        let _ = db.clear();
        assert_eq!(db.volatile_count(), 0);
    }

    #[test]
    fn access_clock_and_ttl_flag_share_the_key_word() {
        let mut db = Db::default();
        db.set(b"k", v("1"), Some(1_000_000), false, 5_000);
        assert_eq!(db.idle_secs(b"k", 65_000), Some(60));
        // A read touches the clock and keeps the TTL; a write with KEEPTTL too.
        db.get(b"k", 30_000);
        assert_eq!((db.idle_secs(b"k", 65_000), db.expire_of(b"k")), (Some(35), Some(1_000_000)));
        db.set(b"k", v("2"), None, true, 40_000);
        assert_eq!((db.idle_secs(b"k", 65_000), db.expire_of(b"k")), (Some(25), Some(1_000_000)));
        assert!(db.set_expire(b"k", None));
        assert_eq!((db.idle_secs(b"k", 65_000), db.volatile_count()), (Some(25), 0));
        // The clock is 31 bits wide and wraps like Redis's LRU clock.
        let wrap_ms = i64::from(CLOCK_MASK) * 1000;
        db.set(b"w", v("1"), Some(i64::MAX), false, wrap_ms);
        assert_eq!(db.idle_secs(b"w", wrap_ms + 3_000), Some(3));
        assert_eq!(db.expire_of(b"w"), Some(i64::MAX));
        let rec = db.take(b"w").unwrap();
        assert_eq!((rec.access, rec.expire_at), (CLOCK_MASK, Some(i64::MAX)));
        assert_eq!(db.idle_secs(b"missing", 0), None);
    }

    #[test]
    fn lazy_expiry_removes_from_both_tables() {
        let mut db = Db::default();
        db.set(b"k", v("1"), Some(100), false, 0);
        assert!(db.get(b"k", 99).is_some());
        assert!(db.get(b"k", 100).is_none());
        assert_eq!((db.len(), db.volatile_count(), db.expired), (0, 0, 1));
    }
}
