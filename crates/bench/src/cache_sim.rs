//! `volley-bench cache-sim`: the cache benchmark's key sequence replayed
//! against a model cache that holds a fixed number of keys, to tell what
//! hit ratio a server holding that many keys can reach.
//!
//! The benchmark's hit ratio depends on the policy and on how many keys fit
//! in `maxmemory`; bytes per key is all a server's memory layout changes.
//! The model separates the two: it evicts as Redis's approximate LRU and LFU
//! do (`maxmemory-samples` random keys offered to a pool of the 16 best
//! candidates, Redis's logarithmic LFU counter) and counts hits, so a
//! server's measured ratio can be checked against its `DBSIZE`, and the key
//! count a target needs can be read off. Every connection draws the same
//! seeded sequence as `volley-bench cache` ([`crate::cache`]) and the
//! connections take turns a batch at a time; a miss's SET lands before that
//! connection's next batch, as on the wire. LFU decay is left out: the
//! benchmark runs for about a minute, one `lfu-decay-time` period.

use crate::zipf::{Rng, Zipf};

/// Candidates kept between evictions (Redis's `EVPOOL_SIZE`).
const POOL_SIZE: usize = 16;
/// A new key's LFU counter (Redis's `LFU_INIT_VAL`).
const LFU_INIT: u8 = 5;

/// Eviction rule of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimPolicy {
    Lru,
    Lfu,
}

/// What to replay.
#[derive(Clone, Debug)]
pub struct SimOpts {
    pub keys: u64,
    pub exponent: f64,
    pub warmup: u64,
    pub ops: u64,
    pub conns: usize,
    pub depth: usize,
    pub seed: u64,
    /// Keys the cache holds before it evicts.
    pub capacity: usize,
    pub policy: SimPolicy,
    /// `maxmemory-samples`.
    pub samples: usize,
    /// `lfu-log-factor`.
    pub log_factor: u32,
}

/// Hits of the measured phase, and the GETs of it that were a key's first
/// request (which no cache can hit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SimResult {
    pub gets: u64,
    pub hits: u64,
    pub cold: u64,
}

impl SimResult {
    pub fn hit_ratio(&self) -> f64 {
        self.hits as f64 / self.gets.max(1) as f64
    }
    pub fn ceiling(&self) -> f64 {
        1.0 - self.cold as f64 / self.gets.max(1) as f64
    }
}

#[derive(Clone, Copy)]
struct Slot {
    key: u32,
    last: u64,
    counter: u8,
}

/// The model cache: keys in a dense array (so a random key is one draw),
/// and each rank's index in it.
struct Model {
    index: Vec<u32>,
    slots: Vec<Slot>,
    pool: Vec<(u64, u32)>,
    rng: Rng,
    clock: u64,
    opts: SimOpts,
}

const ABSENT: u32 = u32::MAX;

impl Model {
    fn new(opts: &SimOpts) -> Model {
        Model {
            index: vec![ABSENT; opts.keys as usize],
            slots: Vec::with_capacity(opts.capacity.min(opts.keys as usize)),
            pool: Vec::with_capacity(POOL_SIZE),
            rng: Rng::new(opts.seed.wrapping_mul(31) ^ 0x5EED),
            clock: 0,
            opts: opts.clone(),
        }
    }

    /// A GET: true on a hit, which refreshes the key's recency and counter.
    fn get(&mut self, k: u64) -> bool {
        self.clock += 1;
        let i = self.index[k as usize];
        if i == ABSENT {
            return false;
        }
        let r = self.rng.next_f64();
        let slot = &mut self.slots[i as usize];
        slot.last = self.clock;
        slot.counter = log_incr(slot.counter, self.opts.log_factor, r);
        true
    }

    /// A SET after a miss; evicts first when full.
    fn set(&mut self, k: u64) {
        self.clock += 1;
        if self.index[k as usize] != ABSENT {
            return;
        }
        if self.opts.capacity == 0 {
            return;
        }
        while self.slots.len() >= self.opts.capacity {
            self.evict_one();
        }
        self.index[k as usize] = self.slots.len() as u32;
        self.slots.push(Slot { key: k as u32, last: self.clock, counter: LFU_INIT });
    }

    /// The bigger, the better to evict: idle time, or a low counter first
    /// and the longer idle among equal counters.
    fn score(&self, s: &Slot) -> u64 {
        let idle = self.clock - s.last;
        match self.opts.policy {
            SimPolicy::Lru => idle,
            SimPolicy::Lfu => (u64::from(255 - s.counter) << 40) | idle.min((1 << 40) - 1),
        }
    }

    /// Offer `samples` random keys to the pool, then evict its best one that
    /// still exists (a pooled key may have gone since it was offered).
    fn evict_one(&mut self) {
        loop {
            for _ in 0..self.opts.samples.max(1) {
                let i = (self.rng.next_u64() % self.slots.len() as u64) as usize;
                let s = self.slots[i];
                self.offer(self.score(&s), s.key);
            }
            while let Some((_, key)) = self.pool.pop() {
                if self.index[key as usize] != ABSENT {
                    self.remove(key);
                    return;
                }
            }
        }
    }

    fn offer(&mut self, score: u64, key: u32) {
        let at = self.pool.iter().position(|&(s, _)| s >= score).unwrap_or(self.pool.len());
        if self.pool.len() < POOL_SIZE {
            self.pool.insert(at, (score, key));
        } else if at > 0 {
            self.pool.remove(0);
            self.pool.insert(at - 1, (score, key));
        }
    }

    fn remove(&mut self, key: u32) {
        let i = self.index[key as usize] as usize;
        self.index[key as usize] = ABSENT;
        self.slots.swap_remove(i);
        if let Some(moved) = self.slots.get(i) {
            self.index[moved.key as usize] = i as u32;
        }
    }
}

/// Redis's `LFULogIncr`: grows with probability 1 / ((c - 5) * factor + 1).
fn log_incr(counter: u8, factor: u32, r: f64) -> u8 {
    if counter == 255 {
        return counter;
    }
    let base = f64::from(counter.saturating_sub(LFU_INIT));
    if r < 1.0 / (base * f64::from(factor) + 1.0) {
        counter + 1
    } else {
        counter
    }
}

/// One connection's key stream and the SETs it owes.
struct Lane {
    rng: Rng,
    owed: Vec<u64>,
    quota: u64,
}

/// Replay the warm-up and measured phases against the model.
pub fn simulate(opts: &SimOpts) -> SimResult {
    let zipf = Zipf::new(opts.keys, opts.exponent);
    let mut model = Model::new(opts);
    let mut seen = vec![false; opts.keys as usize];
    let conns = opts.conns.max(1);
    // The same per-connection seeds as the load generator's lanes.
    let mut lanes: Vec<Lane> = (0..conns)
        .map(|i| Lane { rng: Rng::new(opts.seed ^ ((i as u64 + 1) << 32)), owed: Vec::new(), quota: 0 })
        .collect();
    let mut result = SimResult::default();
    for (phase, total) in [(0, opts.warmup), (1, opts.ops)] {
        for (i, lane) in lanes.iter_mut().enumerate() {
            lane.quota = total / conns as u64 + u64::from((i as u64) < total % conns as u64);
        }
        let mut busy = true;
        while busy {
            busy = false;
            for lane in lanes.iter_mut() {
                for k in lane.owed.drain(..) {
                    model.set(k);
                }
                let n = lane.quota.min(opts.depth.max(1) as u64);
                lane.quota -= n;
                busy |= n > 0;
                for _ in 0..n {
                    let k = zipf.sample(&mut lane.rng) - 1;
                    let cold = !std::mem::replace(&mut seen[k as usize], true);
                    let hit = model.get(k);
                    if !hit {
                        lane.owed.push(k);
                    }
                    if phase == 1 {
                        result.gets += 1;
                        result.hits += u64::from(hit);
                        result.cold += u64::from(cold);
                    }
                }
            }
        }
        for lane in lanes.iter_mut() {
            for k in lane.owed.drain(..) {
                model.set(k);
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(capacity: usize, policy: SimPolicy) -> SimOpts {
        SimOpts {
            keys: 20_000,
            exponent: 0.99,
            warmup: 20_000,
            ops: 20_000,
            conns: 4,
            depth: 8,
            seed: 1,
            capacity,
            policy,
            samples: 5,
            log_factor: 10,
        }
    }

    #[test]
    fn an_unbounded_cache_misses_only_first_requests() {
        let r = simulate(&opts(20_000, SimPolicy::Lru));
        assert_eq!(r.gets, 20_000);
        assert!(r.cold > 0);
        // Besides first requests, only a repeat before the first's SET
        // landed (same batch, or another connection's) can miss.
        let in_flight = r.gets - r.cold - r.hits;
        assert!(in_flight < r.gets / 100, "{r:?}");
        assert_eq!(r, simulate(&opts(20_000, SimPolicy::Lfu)));
    }

    #[test]
    fn more_room_more_hits_never_past_the_ceiling() {
        for policy in [SimPolicy::Lru, SimPolicy::Lfu] {
            let small = simulate(&opts(500, policy));
            let big = simulate(&opts(4_000, policy));
            assert!(small.hit_ratio() < big.hit_ratio(), "{policy:?} {small:?} {big:?}");
            assert!(big.hit_ratio() < big.ceiling(), "{policy:?} {big:?}");
            assert_eq!(small.cold, big.cold);
        }
        assert_eq!(simulate(&opts(0, SimPolicy::Lru)).hits, 0);
    }

    #[test]
    fn lru_keeps_recent_keys_and_lfu_frequent_ones() {
        let mut m = Model::new(&opts(3, SimPolicy::Lru));
        m.opts.samples = 30;
        for k in [1, 2, 3] {
            m.set(k);
        }
        assert!(m.get(1));
        m.set(4);
        // 2 was the least recently used of the three sampled keys.
        assert_eq!(m.index[2], ABSENT);
        assert!(m.get(1) && m.get(3) && m.get(4));

        let mut m = Model::new(&opts(3, SimPolicy::Lfu));
        m.opts.samples = 30;
        for k in [1, 2, 3] {
            m.set(k);
        }
        for _ in 0..50 {
            m.get(1);
            m.get(2);
        }
        m.set(4);
        assert_eq!(m.index[3], ABSENT);
    }
}
