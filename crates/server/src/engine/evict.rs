//! What eviction needs from the keyspace, as pure data operations (Redis's
//! `evict.c` minus the deleting): the maxmemory policies, the LFU counter
//! math kept in a key's metadata word, the eviction pool of the best
//! candidates seen so far, and the sampling that fills it.
//!
//! Sampling a db into the pool is `sampling`'s; deleting the chosen keys,
//! with their statistics, notifications and propagation, is the server's
//! (`server::evict`).
use super::dict::next_random;

/// Redis's `LFU_INIT_VAL`: the counter a fresh key starts with, so new keys
/// are not evicted before they had a chance to be accessed.
pub const LFU_INIT_VAL: u8 = 5;
/// Redis's `EVPOOL_SIZE`.
pub const POOL_SIZE: usize = 16;

/// A `maxmemory-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    NoEviction,
    AllkeysLru,
    VolatileLru,
    AllkeysLfu,
    VolatileLfu,
    AllkeysRandom,
    VolatileRandom,
    VolatileTtl,
}

impl Policy {
    /// The policy named `name` (any case); unknown names are `noeviction`
    /// (the configuration only accepts the eight names).
    pub fn parse(name: &str) -> Policy {
        match name.to_ascii_lowercase().as_str() {
            "allkeys-lru" => Policy::AllkeysLru,
            "volatile-lru" => Policy::VolatileLru,
            "allkeys-lfu" => Policy::AllkeysLfu,
            "volatile-lfu" => Policy::VolatileLfu,
            "allkeys-random" => Policy::AllkeysRandom,
            "volatile-random" => Policy::VolatileRandom,
            "volatile-ttl" => Policy::VolatileTtl,
            _ => Policy::NoEviction,
        }
    }
    /// Keys carry LFU data instead of an access clock.
    pub fn lfu(self) -> bool {
        matches!(self, Policy::AllkeysLfu | Policy::VolatileLfu)
    }
    pub fn lru(self) -> bool {
        matches!(self, Policy::AllkeysLru | Policy::VolatileLru)
    }
    /// Candidates come from the keys with a TTL only.
    pub fn volatile(self) -> bool {
        matches!(self, Policy::VolatileLru | Policy::VolatileLfu | Policy::VolatileRandom | Policy::VolatileTtl)
    }
    pub fn random(self) -> bool {
        matches!(self, Policy::AllkeysRandom | Policy::VolatileRandom)
    }
}

/// The LFU settings of a db whose policy is an LFU one (`lfu-log-factor`,
/// `lfu-decay-time`), with the random state the counter's increments draw.
#[derive(Debug, Clone)]
pub struct Lfu {
    pub log_factor: u32,
    pub decay_time: u32,
    rng: u64,
}

impl Lfu {
    pub fn new(log_factor: u32, decay_time: u32, seed: u64) -> Lfu {
        Lfu { log_factor, decay_time, rng: seed | 1 }
    }

    /// A key was accessed (Redis's `updateLFU`): the counter decays by the
    /// periods elapsed, then grows logarithmically; the time is now.
    #[inline]
    pub fn touch(&mut self, word: u32, now_ms: i64) -> u32 {
        let counter = decayed_counter(word, now_ms, self.decay_time);
        // 53 random bits as a uniform double in [0, 1).
        let r = (next_random(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64;
        lfu_word(now_ms, log_incr(counter, self.log_factor, r))
    }
}

/// Redis's `LFUGetTimeInMinutes`: a 16-bit minute clock.
pub fn minutes(now_ms: i64) -> u32 {
    ((now_ms.max(0) / 60_000) & 0xFFFF) as u32
}

/// The LFU data of a key with `counter` accessed at `now_ms`: the counter
/// in the low byte, Redis's minute clock in bits 8..24 and the second
/// within that minute in bits 24..30. The seconds are Volley's: Redis keeps
/// no recency under LFU, so candidates with equal counters tie; here the
/// one accessed longest ago goes first (see [`lfu_score`]).
pub fn lfu_word(now_ms: i64, counter: u8) -> u32 {
    let second = ((now_ms.max(0) / 1000) % 60) as u32;
    (second << 24) | (minutes(now_ms) << 8) | u32::from(counter)
}

/// Seconds since the access recorded in LFU data `word`, on the 16-bit
/// minute clock (wrapping as [`decayed_counter`] does).
pub fn lfu_idle_secs(word: u32, now_ms: i64) -> u32 {
    let then = (word >> 8) & 0xFFFF;
    let then_sec = (word >> 24) & 0x3F;
    let now_sec = ((now_ms.max(0) / 1000) % 60) as u32;
    (elapsed_minutes(then, minutes(now_ms)) * 60 + now_sec).saturating_sub(then_sec)
}

/// An LFU eviction score (bigger goes first): the lower the decayed
/// counter the better, and among equal counters the longer idle.
pub fn lfu_score(word: u32, now_ms: i64, decay_time: u32) -> u64 {
    let counter = decayed_counter(word, now_ms, decay_time);
    ((255 - u64::from(counter)) << 32) | u64::from(lfu_idle_secs(word, now_ms))
}

/// Minutes since `then` on the 16-bit clock (Redis's `LFUTimeElapsed`,
/// wrapping included).
fn elapsed_minutes(then: u32, now: u32) -> u32 {
    if now >= then {
        now - then
    } else {
        65535 - then + now
    }
}

/// The counter of LFU data `word` decayed by one per `decay_time` minutes
/// since its last access (Redis's `LFUDecrAndReturn`; OBJECT FREQ).
pub fn decayed_counter(word: u32, now_ms: i64, decay_time: u32) -> u8 {
    let then = (word >> 8) & 0xFFFF;
    let counter = (word & 0xFF) as u8;
    let periods = elapsed_minutes(then, minutes(now_ms)).checked_div(decay_time).unwrap_or(0);
    counter.saturating_sub(periods.min(255) as u8)
}

/// Redis's `LFULogIncr`: the counter grows with probability
/// 1 / ((counter - LFU_INIT_VAL) * log_factor + 1); `r` is uniform in [0, 1).
pub fn log_incr(counter: u8, log_factor: u32, r: f64) -> u8 {
    if counter == 255 {
        return 255;
    }
    let base = f64::from(counter.saturating_sub(LFU_INIT_VAL));
    let p = 1.0 / (base * f64::from(log_factor) + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

/// How `Db::sample_into` draws and scores candidates.
#[derive(Debug, Clone, Copy)]
pub struct Sampling {
    pub policy: Policy,
    /// Keys per db (`maxmemory-samples`).
    pub samples: usize,
    pub now_ms: i64,
    /// `lfu-decay-time`, for LFU scores.
    pub decay_time: u32,
}

/// One candidate in the pool: the bigger `idle`, the better to evict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub idle: u64,
    pub db: usize,
    pub key: Vec<u8>,
}

/// Redis's eviction pool: the [`POOL_SIZE`] best candidates sampled so far,
/// in ascending `idle`, kept across evictions so each sample refines it.
#[derive(Debug, Default)]
pub struct Pool {
    entries: Vec<Candidate>,
}

impl Pool {
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Offer a candidate: kept if the pool has room or it beats the worst
    /// one, which then leaves (as `evictionPoolPopulate` inserts).
    pub fn offer(&mut self, idle: u64, db: usize, key: &[u8]) {
        let k = self.entries.iter().position(|c| c.idle >= idle).unwrap_or(self.entries.len());
        let c = Candidate { idle, db, key: key.to_vec() };
        if self.entries.len() < POOL_SIZE {
            self.entries.insert(k, c);
        } else if k > 0 {
            self.entries.remove(0);
            self.entries.insert(k - 1, c);
        }
    }

    /// Take the best candidate (the caller checks it still exists).
    pub fn pop_best(&mut self) -> Option<Candidate> {
        self.entries.pop()
    }

    /// Forget every candidate (FLUSHALL, a policy change).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_grows_logarithmically() {
        // Below LFU_INIT_VAL every access counts.
        assert_eq!(log_incr(0, 10, 0.999), 1);
        assert_eq!(log_incr(5, 10, 0.999), 6);
        // At 6 with factor 10: p = 1/11.
        assert_eq!(log_incr(6, 10, 0.08), 7);
        assert_eq!(log_incr(6, 10, 0.1), 6);
        assert_eq!(log_incr(255, 0, 0.0), 255);
        // Factor 0: always grows.
        assert_eq!(log_incr(100, 0, 0.99), 101);
        // Many accesses with factor 10: about Redis's table (100 hits -> ~10).
        let mut lfu = Lfu::new(10, 1, 42);
        let mut w = lfu_word(0, LFU_INIT_VAL);
        for _ in 0..100 {
            w = lfu.touch(w, 0);
        }
        let c = decayed_counter(w, 0, 1);
        assert!((8..=14).contains(&c), "counter {c}");
        for _ in 0..1_000_000 {
            w = lfu.touch(w, 0);
        }
        let c = decayed_counter(w, 0, 1);
        assert!((200..=255).contains(&c), "counter {c}");
    }

    #[test]
    fn counter_decays_per_period_and_wraps() {
        let w = lfu_word(0, 20);
        assert_eq!(decayed_counter(w, 59_999, 1), 20);
        assert_eq!(decayed_counter(w, 60_000 * 3, 1), 17);
        assert_eq!(decayed_counter(w, 60_000 * 3, 2), 19);
        assert_eq!(decayed_counter(w, 60_000 * 3, 0), 20);
        assert_eq!(decayed_counter(w, 60_000 * 300, 1), 0);
        // The minute clock wraps at 16 bits; across the wrap Redis's
        // LFUTimeElapsed counts one minute less (65535 - then + now).
        let late = 65_535 * 60_000;
        let w = lfu_word(late, 10);
        assert_eq!(decayed_counter(w, late + 2 * 60_000, 1), 9);
    }

    #[test]
    fn equal_counters_rank_by_recency() {
        let t0 = 1_000 * 60_000 + 7_000;
        let old = lfu_word(t0, 6);
        let newer = lfu_word(t0 + 45_000, 6);
        let now = t0 + 50_000;
        // The decay fields read as before: the second does not leak in.
        assert_eq!(decayed_counter(newer, now, 1), 6);
        assert_eq!((lfu_idle_secs(old, now), lfu_idle_secs(newer, now)), (50, 5));
        assert!(lfu_score(old, now, 1) > lfu_score(newer, now, 1));
        // A lower counter goes first however recent.
        assert!(lfu_score(lfu_word(now, 5), now, 1) > lfu_score(old, now, 1));
        // Minutes and seconds combine across a minute boundary.
        assert_eq!(lfu_idle_secs(lfu_word(t0 + 50_000, 9), t0 + 130_000), 80);
    }

    #[test]
    fn pool_keeps_the_best_sixteen_in_order() {
        let mut pool = Pool::default();
        for i in 0..40u64 {
            // Scores interleaved so inserts land everywhere.
            let idle = (i * 37) % 40;
            pool.offer(idle, 0, format!("k{idle}").as_bytes());
        }
        assert_eq!(pool.len(), POOL_SIZE);
        let mut got = Vec::new();
        while let Some(c) = pool.pop_best() {
            got.push(c.idle);
        }
        assert_eq!(got, (24..40).rev().collect::<Vec<u64>>());
        // A full pool refuses a candidate worse than its worst.
        for i in 10..26 {
            pool.offer(i, 1, b"x");
        }
        pool.offer(5, 1, b"worse");
        assert!(pool.entries.iter().all(|c| c.key != b"worse"));
        pool.offer(100, 2, b"best");
        assert_eq!(pool.pop_best().map(|c| (c.idle, c.db)), Some((100, 2)));
    }

    #[test]
    fn policies_parse() {
        assert_eq!(Policy::parse("ALLKEYS-LFU"), Policy::AllkeysLfu);
        assert!(Policy::parse("volatile-lfu").lfu() && Policy::parse("volatile-lfu").volatile());
        assert!(Policy::parse("allkeys-random").random() && !Policy::parse("allkeys-random").volatile());
        assert_eq!(Policy::parse("noeviction"), Policy::NoEviction);
    }
}
