//! Databases and the keyspace: key lookup with lazy expiry, the per-db expire
//! bookkeeping, and the active expiry cycle that reclaims memory of keys
//! nobody reads again.
use super::dict::{next_random, Dict};
use super::value::Value;
use super::EngineError;

/// Sentinel for "no expiry"; keeps expiry inline without an allocation.
pub const NO_EXPIRE: i64 = i64::MIN;

/// A key's value plus its metadata.
#[derive(Debug, Clone)]
pub struct Entry {
    pub value: Value,
    /// Absolute unix time in ms, or [`NO_EXPIRE`]. Only [`Db`] changes it, so
    /// the volatile-key count stays exact.
    expire_at: i64,
    /// Last access, in seconds of the server clock (OBJECT IDLETIME).
    pub access: u32,
}

impl Entry {
    pub fn expire_at(&self) -> Option<i64> {
        (self.expire_at != NO_EXPIRE).then_some(self.expire_at)
    }

    /// A copy of this entry (same value and expiry) that counts as freshly
    /// created at `now_ms` (COPY).
    pub fn fresh_copy(&self, now_ms: i64) -> Entry {
        Entry { value: self.value.clone(), expire_at: self.expire_at, access: clock_secs(now_ms) }
    }
}

/// One numbered database.
#[derive(Default)]
pub struct Db {
    dict: Dict<Entry>,
    volatile: usize,
    expire_cursor: u64,
    /// Keys removed by expiry (INFO `expired_keys`).
    pub expired: u64,
}

fn clock_secs(now_ms: i64) -> u32 {
    (now_ms / 1000) as u32
}

impl Db {
    pub fn len(&self) -> usize {
        self.dict.len()
    }
    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }
    /// Keys with a TTL (INFO keyspace `expires=`).
    pub fn volatile_count(&self) -> usize {
        self.volatile
    }

    /// Remove `key` if its time has come; true if it was removed.
    fn expire_if_due(&mut self, key: &[u8], now_ms: i64) -> bool {
        let due = matches!(self.dict.get(key), Some(e) if e.expire_at != NO_EXPIRE && e.expire_at <= now_ms);
        if due {
            self.remove(key);
            self.expired += 1;
        }
        due
    }

    /// Look a key up for reading or writing, expiring it first if due.
    pub fn get(&mut self, key: &[u8], now_ms: i64) -> Option<&mut Entry> {
        if self.expire_if_due(key, now_ms) {
            return None;
        }
        let e = self.dict.get_mut(key)?;
        e.access = clock_secs(now_ms);
        Some(e)
    }

    /// Look up without touching the access time (OBJECT IDLETIME, TYPE is not
    /// special in Redis, but OBJECT must not reset what it reports).
    pub fn peek(&mut self, key: &[u8], now_ms: i64) -> Option<&Entry> {
        if self.expire_if_due(key, now_ms) {
            return None;
        }
        self.dict.get(key)
    }

    pub fn contains(&mut self, key: &[u8], now_ms: i64) -> bool {
        self.peek(key, now_ms).is_some()
    }

    /// Store a value, replacing any previous one. `keep_ttl` keeps the old
    /// expiry (SET KEEPTTL, SETRANGE, APPEND ...); otherwise `expire_at` applies.
    pub fn set(&mut self, key: &[u8], value: Value, expire_at: Option<i64>, keep_ttl: bool, now_ms: i64) {
        let access = clock_secs(now_ms);
        let new_exp = expire_at.unwrap_or(NO_EXPIRE);
        match self.dict.get_mut(key) {
            Some(e) => {
                e.value = value;
                e.access = access;
                if !keep_ttl {
                    let was = e.expire_at != NO_EXPIRE;
                    e.expire_at = new_exp;
                    self.volatile = self.volatile + (new_exp != NO_EXPIRE) as usize - was as usize;
                }
            }
            None => {
                self.volatile += (new_exp != NO_EXPIRE) as usize;
                self.dict.insert(key, Entry { value, expire_at: new_exp, access });
            }
        }
    }

    /// Remove a key, returning its entry.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let e = self.dict.remove(key)?;
        self.volatile -= (e.expire_at != NO_EXPIRE) as usize;
        Some(e)
    }

    /// Insert an entry whole (RENAME, MOVE, COPY keep the TTL).
    pub fn insert_entry(&mut self, key: &[u8], e: Entry) {
        self.remove(key);
        self.volatile += (e.expire_at != NO_EXPIRE) as usize;
        self.dict.insert(key, e);
    }

    /// Move the entry at `src` to `dst` with its expiry, replacing whatever
    /// `dst` held (RENAME). False if `src` is missing. No expiry check: the
    /// caller has looked both keys up already.
    pub fn rename(&mut self, src: &[u8], dst: &[u8]) -> bool {
        if src == dst {
            return self.dict.contains_key(src);
        }
        let Some(e) = self.remove(src) else { return false };
        self.insert_entry(dst, e);
        true
    }

    /// Set or clear the expiry of an existing key; false if it is missing.
    pub fn set_expire(&mut self, key: &[u8], at: Option<i64>) -> bool {
        let Some(e) = self.dict.get_mut(key) else {
            return false;
        };
        let was = e.expire_at != NO_EXPIRE;
        e.expire_at = at.unwrap_or(NO_EXPIRE);
        self.volatile = self.volatile + at.is_some() as usize - was as usize;
        true
    }

    pub fn clear(&mut self) -> Dict<Entry> {
        self.volatile = 0;
        self.expire_cursor = 0;
        self.dict.take_all()
    }

    /// The string value of `key`: `Ok(None)` if missing, WRONGTYPE otherwise.
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

    /// A random live key (RANDOMKEY): expired picks are reclaimed and retried.
    pub fn random_key(&mut self, rng: &mut u64, now_ms: i64) -> Option<Vec<u8>> {
        for _ in 0..100 {
            let key = self.dict.random_key(rng)?.to_vec();
            if !self.expire_if_due(&key, now_ms) {
                return Some(key);
            }
        }
        // Nearly everything is expired: fall back to a full pass.
        let live = self.iter().find(|(_, e)| e.expire_at == NO_EXPIRE || e.expire_at > now_ms);
        live.map(|(k, _)| k.to_vec())
    }

    /// One slice of the active expiry cycle: visit up to `buckets` buckets from
    /// the saved cursor and remove what is due. Returns keys removed.
    pub fn active_expire(&mut self, buckets: usize, now_ms: i64) -> usize {
        if self.volatile == 0 {
            return 0;
        }
        let mut due = Vec::new();
        let mut cursor = self.expire_cursor;
        for _ in 0..buckets {
            cursor = self.dict.scan(cursor, |k, e| {
                if e.expire_at != NO_EXPIRE && e.expire_at <= now_ms {
                    due.push(k.to_vec());
                }
            });
            if cursor == 0 {
                break;
            }
        }
        self.expire_cursor = cursor;
        for k in &due {
            self.remove(k);
        }
        self.expired += due.len() as u64;
        due.len()
    }

    /// Background upkeep: incremental rehash and shrinking.
    pub fn maintain(&mut self, rehash_buckets: usize) {
        self.dict.try_shrink();
        self.dict.rehash_step(rehash_buckets);
    }
}

/// All databases.
pub struct Keyspace {
    pub dbs: Vec<Db>,
    rng: u64,
}

impl Keyspace {
    pub fn new(databases: usize) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        Keyspace { dbs: (0..databases).map(|_| Db::default()).collect(), rng: seed | 1 }
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
        assert_eq!(db.peek(b"b", 0).and_then(Entry::expire_at), Some(10_000));
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
    fn fresh_copy_keeps_value_and_expiry() {
        let mut db = Db::default();
        db.set(b"a", v("hello"), Some(5_000), false, 1_000);
        let e = db.peek(b"a", 1_000).unwrap().fresh_copy(9_000);
        assert_eq!(e.expire_at(), Some(5_000));
        assert_eq!(e.access, 9);
        assert_eq!(e.value, v("hello"));
        db.insert_entry(b"b", e);
        assert_eq!(db.volatile_count(), 2);
        db.clear();
        assert_eq!(db.volatile_count(), 0);
    }
}
