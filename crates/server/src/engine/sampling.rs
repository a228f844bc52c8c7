//! Eviction candidates from a db (the keyspace side of Redis's
//! `evictionPoolPopulate` and random picks): sampling the key or expiry
//! table into the eviction pool, scored as the policy says, and giving the
//! dbs the access tracking a policy needs. Kept apart from `db` and `evict`
//! so neither imports the other.
use super::db::{Db, Keyspace};
use super::evict::{lfu_score, Lfu, Policy, Pool, Sampling};

impl Db {
    /// Offer up to `how.samples` keys of this db (db number `index`) to
    /// `pool`, scored by the policy: idle seconds (LRU), the decayed
    /// counter then the idle seconds (LFU: [`lfu_score`]), or the nearest expiry (TTL). Volatile
    /// policies sample the expiry table. Returns whether the db had keys to
    /// sample.
    pub fn sample_into(&self, pool: &mut Pool, index: usize, how: Sampling, rng: &mut u64) -> bool {
        let Sampling { policy, samples, now_ms, decay_time } = how;
        let mut keys: Vec<(&[u8], u64)> = Vec::with_capacity(samples);
        if policy.volatile() {
            self.expires.sample(rng, samples, |k, _, &at| keys.push((k, at as u64)));
        } else {
            self.dict.sample(rng, samples, |k, meta, _| keys.push((k, u64::from(meta))));
        }
        for &(key, data) in &keys {
            let idle = match policy {
                Policy::VolatileTtl => u64::MAX - data,
                _ => {
                    // From the expiry table the metadata is the key's own.
                    let meta = if policy.volatile() { self.meta_of(key) } else { Some(data as u32) };
                    let Some(meta) = meta else { continue };
                    if policy.lfu() {
                        lfu_score(meta, now_ms, decay_time)
                    } else {
                        u64::from(self.idle_of_word(meta, now_ms))
                    }
                }
            };
            pool.offer(idle, index, key);
        }
        !keys.is_empty()
    }

    /// A random key for the random policies, from the expiry table for
    /// `volatile-random`.
    pub fn random_victim(&self, volatile: bool, rng: &mut u64) -> Option<Vec<u8>> {
        let key = if volatile { self.expires.random_key(rng) } else { self.dict.random_key(rng) };
        key.map(<[u8]>::to_vec)
    }

    /// Keys the policy could evict here.
    pub fn evictable(&self, policy: Policy) -> usize {
        if policy.volatile() {
            self.volatile_count()
        } else {
            self.len()
        }
    }
}

impl Keyspace {
    /// Give every db the access tracking `policy` needs: LFU data with these
    /// settings for an LFU policy, the access clock otherwise.
    pub fn set_access_tracking(&mut self, policy: Policy, log_factor: u32, decay_time: u32) {
        for (i, db) in self.dbs.iter_mut().enumerate() {
            db.lfu = policy.lfu().then(|| Lfu::new(log_factor, decay_time, 0x9E37_79B9 ^ i as u64));
        }
    }
}
