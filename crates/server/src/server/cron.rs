//! Periodic upkeep run by the event loop `hz` times a second: active expiry
//! (so keys nobody reads again still give their memory back) and incremental
//! rehashing of the databases' tables.
use std::time::{Duration, Instant};

use super::Server;

/// Share of each tick the expiry cycle may use, like Redis's 25%.
const EXPIRE_TIME_SHARE: u32 = 4;
/// Buckets examined per expiry slice before checking the clock again.
const EXPIRE_SLICE_BUCKETS: usize = 256;

pub fn tick(srv: &mut Server, now_ms: i64) {
    let hz = srv.config.hz.clamp(1, 500);
    let budget = Duration::from_micros(1_000_000 / hz as u64 / EXPIRE_TIME_SHARE as u64);
    let start = Instant::now();
    srv.end_expired_pause(now_ms);
    srv.note_memory_peak();
    srv.children.reap_detached();
    // As Redis does, no rehashing or shrinking while a child holds a
    // copy-on-write image: moving entries would copy their pages.
    if srv.children.running().is_none() {
        for db in &mut srv.keyspace.dbs {
            db.maintain(100);
        }
    }
    // Keep expiring while slices find plenty of expired keys and time
    // remains; DEBUG SET-ACTIVE-EXPIRE 0 leaves expiry to lookups alone,
    // and a client pause stops it (the dataset must hold still).
    let dbs = if srv.active_expire_off || srv.pause.is_some() || srv.expire_by_primary {
        &mut [][..]
    } else {
        &mut srv.keyspace.dbs[..]
    };
    let expire_start = Instant::now();
    for db in dbs {
        while db.volatile_count() > 0 && start.elapsed() < budget {
            let removed = db.active_expire(EXPIRE_SLICE_BUCKETS, now_ms);
            if removed < EXPIRE_SLICE_BUCKETS / 16 {
                break;
            }
        }
    }
    if srv.expire_by_primary {
        super::replica_keys::expire_due(srv, now_ms);
    }
    // As Redis's latency monitor: a slow cycle (one huge key freed, say).
    srv.latency_sample("expire-cycle", expire_start.elapsed());
    super::changes::collect_expired(srv);
    super::changes::publish(srv);
}
