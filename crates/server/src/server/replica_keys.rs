//! Keys a writable replica gave a TTL itself (Redis's `expireSlaveKeys`).
//! A replica otherwise leaves expiry to its primary's DELs, but the
//! primary never heard of these keys: the replica remembers them (per key,
//! a bitmap of the dbs) and expires them on its own, each cron tick.
use std::collections::HashMap;

use super::{ClientRole, Server};

/// Keys written with a TTL by the replica's own clients: key -> db bits.
#[derive(Default)]
pub struct ReplicaKeys {
    keys: HashMap<Vec<u8>, u64>,
}

impl ReplicaKeys {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Forget them all (promotion, a full resync's flush, FLUSHALL).
    pub fn clear(&mut self) {
        self.keys.clear();
    }
}

/// A command of client `cid` changed keys on a replica: remember those
/// that now carry a TTL, unless the primary sent the command.
#[cold]
pub fn remember<'a>(srv: &mut Server, cid: usize, db: usize, keys: impl Iterator<Item = &'a [u8]>) {
    if db >= 64 || srv.clients.get(cid).is_none_or(|c| c.role == ClientRole::Master) {
        return;
    }
    for key in keys {
        if srv.keyspace.dbs[db].expire_of(key).is_some() {
            *srv.replica_keys.keys.entry(key.to_vec()).or_default() |= 1 << db;
        }
    }
}

/// Expire the remembered keys whose time has come; forget those gone or
/// made persistent (every db they were remembered in).
pub fn expire_due(srv: &mut Server, now_ms: i64) {
    if srv.replica_keys.is_empty() || srv.active_expire_off || srv.pause.is_some() {
        return;
    }
    let mut keys = std::mem::take(&mut srv.replica_keys.keys);
    keys.retain(|key, dbs| {
        for db in 0..srv.keyspace.dbs.len().min(64) {
            if *dbs & (1 << db) == 0 {
                continue;
            }
            let d = &mut srv.keyspace.dbs[db];
            if d.expire_now(key, now_ms) || d.expire_of(key).is_none() {
                *dbs &= !(1 << db);
            }
        }
        *dbs != 0
    });
    srv.replica_keys.keys = keys;
}
