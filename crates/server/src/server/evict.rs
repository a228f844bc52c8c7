//! `maxmemory` enforcement (Redis's `performEvictions`): while the memory
//! the allocator counts is over the limit, delete the keys the policy picks
//! (see `engine::evict` for the pool and the sampling), each with its
//! statistics, `evicted` notification, replayed `DEL`, WATCH touch and
//! tracking invalidation. Owns the eviction state: the pool, `evicted_keys`,
//! the time spent over the limit, the OOM verdict of the running command,
//! and the "keep evicting next turn" flag.
//!
//! A round stops at the time limit `maxmemory-eviction-tenacity` gives, so
//! one big write cannot stall the loop; the event loop then calls
//! [`timer_turn`] every turn until memory is back under the limit (Redis's
//! `evictionTimeProc`).
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use super::Server;
use crate::allocator::used_memory;
use crate::config::NOTIFY_EVICTED;
use crate::engine::evict::{Policy, Pool, Sampling};

/// What one call to [`perform`] achieved (Redis's `EVICT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Under the limit (or eviction is not safe now).
    Ok,
    /// Still over, the time limit was hit: later turns keep evicting.
    Running,
    /// Over the limit with nothing (left) to evict: denyoom commands fail.
    Fail,
}

/// Keys deleted between checks of the clock (Redis's figure).
const KEYS_PER_CLOCK_CHECK: u64 = 16;
/// Samples that found nothing, in a row, before eviction gives up.
const MAX_EMPTY_DRAWS: usize = 10_000;

/// The eviction state the server keeps.
#[derive(Default)]
pub struct Eviction {
    pool: Pool,
    /// Keys evicted since start or CONFIG RESETSTAT (INFO `evicted_keys`).
    pub evicted_keys: u64,
    /// A round stopped at its time limit: the event loop calls
    /// [`timer_turn`] each turn (and does not sleep) until this clears.
    pub timer: bool,
    /// Since when memory has been over the limit without relief.
    exceeded_since: Option<Instant>,
    /// Microseconds spent over the limit in earlier periods.
    exceeded_total_us: u64,
    /// Eviction failed before the running command (Redis's
    /// `pre_command_oom_state`): scripts read it to refuse their first
    /// denyoom call.
    pub pre_command_oom: bool,
    /// Next db a random policy draws from (round robin, as Redis).
    next_db: usize,
    rng: u64,
    /// Memory `maxmemory` does not count (Redis's
    /// `freeMemoryGetNotCountedMemory`: the AOF buffer, replicas' output
    /// buffers), summed by the layers that own those buffers; installed
    /// by `new_server`.
    pub not_counted: Option<fn(&Server) -> u64>,
}

impl Eviction {
    /// INFO `total_eviction_exceeded_time` and
    /// `current_eviction_exceeded_time`, in milliseconds.
    pub fn exceeded_ms(&self) -> (u64, u64) {
        let current = self.exceeded_since.map_or(0, |t| t.elapsed().as_micros() as u64);
        ((self.exceeded_total_us + current) / 1000, current / 1000)
    }

    /// CONFIG RESETSTAT.
    pub fn reset_stats(&mut self) {
        self.evicted_keys = 0;
        self.exceeded_total_us = 0;
        if self.exceeded_since.is_some() {
            self.exceeded_since = Some(Instant::now());
        }
    }

    /// Forget pooled candidates (their keys may be gone: FLUSHALL...).
    pub fn clear_pool(&mut self) {
        self.pool.clear();
    }
}

/// Redis's `evictionTimeLimitUs`: 0..500 µs linearly up to tenacity 10,
/// then 15% more per step; no limit at 100.
pub fn time_limit_us(tenacity: u32) -> u64 {
    match tenacity {
        0..=10 => 50 * u64::from(tenacity),
        11..=99 => (500.0 * 1.15f64.powi(tenacity as i32 - 10)) as u64,
        _ => u64::MAX,
    }
}

/// `maxmemory` as the dict's growth guard reads it (kept by [`set_limit`]).
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Record a new `maxmemory` for the guard that keeps hash tables from
/// growing past it (at start and after CONFIG SET).
pub fn set_limit(limit: u64) {
    LIMIT.store(limit, Relaxed);
    crate::engine::dict::set_expand_guard(expand_fits);
}

/// Redis's `overMaxmemoryAfterAlloc`, negated: `more` bytes fit.
fn expand_fits(more: usize) -> bool {
    let limit = LIMIT.load(Relaxed);
    limit == 0 || used_memory() + more as u64 <= limit
}

/// Give the keyspace the access tracking the configured policy needs (at
/// start and after CONFIG SET of the policy or the LFU options).
pub fn apply_policy(srv: &mut Server) {
    let cfg = &srv.config;
    let policy = Policy::parse(&cfg.maxmemory_policy);
    srv.keyspace.set_access_tracking(policy, cfg.lfu_log_factor, cfg.lfu_decay_time);
    srv.evict.pool.clear();
}

/// Bytes over `maxmemory` (0 when under it or without a limit), not
/// counting the buffers [`Eviction::not_counted`] names: evicting keys
/// cannot shrink them, and they grow with every write evicting replays.
#[inline]
pub fn over_limit(srv: &Server) -> u64 {
    let limit = srv.config.maxmemory;
    if limit == 0 {
        return 0;
    }
    let used = used_memory();
    if used <= limit {
        return 0;
    }
    // Only once over, as Redis: the sum is not free.
    let not_counted = srv.evict.not_counted.map_or(0, |f| f(srv));
    used.saturating_sub(not_counted).saturating_sub(limit)
}

/// Evict until memory is under `maxmemory` or the round's time is up.
/// Cheap when under the limit: one read of the allocator's counters.
pub fn perform(srv: &mut Server) -> Outcome {
    // Not while a script holds the loop (its clients wait) nor while
    // clients are paused (the dataset must hold still), as Redis.
    if srv.script_busy.is_some() || srv.pause.is_some() {
        return Outcome::Ok;
    }
    let to_free = over_limit(srv);
    let outcome = if to_free == 0 { Outcome::Ok } else { evict(srv, to_free) };
    let ev = &mut srv.evict;
    ev.timer = outcome == Outcome::Running;
    match (outcome, ev.exceeded_since) {
        (Outcome::Ok, Some(since)) => {
            ev.exceeded_total_us += since.elapsed().as_micros() as u64;
            ev.exceeded_since = None;
        }
        (Outcome::Running | Outcome::Fail, None) => ev.exceeded_since = Some(Instant::now()),
        _ => {}
    }
    outcome
}

/// One event-loop turn of the eviction timer: keep evicting while a round
/// stopped at its time limit.
#[inline]
pub fn timer_turn(srv: &mut Server) {
    if srv.evict.timer {
        perform(srv);
    }
}

/// Delete keys the policy picks until `to_free` bytes are freed; the
/// memory freed is what each deletion gave back, so buffers that grow
/// meanwhile (invalidation messages, the AOF) cause no feedback loop.
fn evict(srv: &mut Server, to_free: u64) -> Outcome {
    let policy = Policy::parse(&srv.config.maxmemory_policy);
    if policy == Policy::NoEviction {
        return Outcome::Fail;
    }
    let limit_us = time_limit_us(srv.config.maxmemory_eviction_tenacity);
    let lazy = srv.config.lazyfree_lazy_eviction;
    let start = Instant::now();
    let (mut freed, mut keys) = (0u64, 0u64);
    let mut outcome = Outcome::Ok;
    while freed < to_free {
        let Some((db, key)) = best_victim(srv, policy) else {
            outcome = Outcome::Fail;
            break;
        };
        freed += delete(srv, db, &key, lazy);
        keys += 1;
        if keys % KEYS_PER_CLOCK_CHECK == 0 {
            // Values freed on another thread show up later: measure.
            if lazy && over_limit(srv) == 0 {
                break;
            }
            if start.elapsed().as_micros() as u64 > limit_us {
                outcome = Outcome::Running;
                break;
            }
        }
    }
    srv.latency_sample("eviction-cycle", start.elapsed());
    super::changes::publish(srv);
    outcome
}

/// Remove `key` from db `db` as an eviction; returns the bytes freed.
fn delete(srv: &mut Server, db: usize, key: &[u8], lazy: bool) -> u64 {
    // Replayed before the deletion, as Redis's propagateDeletion.
    super::changes::server_deleted(srv, db, key, lazy);
    let before = used_memory();
    let started = Instant::now();
    // Big values go to the lazy-free thread under lazyfree-lazy-eviction.
    if let Some(rec) = srv.keyspace.dbs[db].take(key) {
        srv.lazyfree.free(rec.value, lazy);
    }
    srv.latency_sample("eviction-del", started.elapsed());
    let freed = before.saturating_sub(used_memory());
    srv.evict.evicted_keys += 1;
    srv.notify(NOTIFY_EVICTED, "evicted", db, key);
    freed
}

/// The key to evict next and its db, or None when the policy finds none.
fn best_victim(srv: &mut Server, policy: Policy) -> Option<(usize, Vec<u8>)> {
    let ev = &mut srv.evict;
    let dbs = &srv.keyspace.dbs;
    if policy.random() {
        for _ in 0..dbs.len() {
            let i = ev.next_db % dbs.len();
            ev.next_db = ev.next_db.wrapping_add(1);
            if let Some(key) = dbs[i].random_victim(policy.volatile(), &mut ev.rng) {
                return Some((i, key));
            }
        }
        return None;
    }
    let how = Sampling {
        policy,
        samples: srv.config.maxmemory_samples.max(1) as usize,
        now_ms: super::unix_ms(),
        decay_time: srv.config.lfu_decay_time,
    };
    // A sample of a sparse or rehashing table can come back empty while
    // it holds keys: draw again, as Redis's loop does while keys remain
    // (bounded, so a count that disagrees with the table cannot spin).
    let mut empty_draws = 0;
    loop {
        let (mut sampled, mut any) = (false, false);
        for (i, db) in dbs.iter().enumerate() {
            if db.evictable(policy) > 0 {
                any = true;
                sampled |= db.sample_into(&mut ev.pool, i, how, &mut ev.rng);
            }
        }
        if !any || (!sampled && empty_draws == MAX_EMPTY_DRAWS) {
            return None;
        }
        empty_draws += usize::from(!sampled);
        // The best candidate still there (pooled keys may have gone since).
        while let Some(c) = ev.pool.pop_best() {
            let db = &dbs[c.db];
            let present = if policy.volatile() { db.expire_of(&c.key).is_some() } else { db.find(&c.key).is_some() };
            if present {
                return Some((c.db, c.key));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenacity_time_limits_match_redis() {
        assert_eq!(time_limit_us(0), 0);
        assert_eq!(time_limit_us(10), 500);
        assert_eq!(time_limit_us(11), 575);
        assert_eq!(time_limit_us(100), u64::MAX);
        assert!(time_limit_us(99) > 100_000_000);
    }
}
