//! SWAPDB: exchange the contents of two databases in O(1). Clients, their
//! WATCHes and their blocked commands stay with the database index, so the
//! swap must tell them their keys may have changed underneath them.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::parse_i64;
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    spec!("swapdb", 3, WRITE | FAST, (0, 0, 0), swapdb, "server", "4.0.0", "Swaps two Redis databases", ["keyspace", "write", "fast", "dangerous"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

/// An index argument as Redis's `getIntFromObjectOrReply` reads it: not an
/// integer and outside the C `int` range share one message (`which` names
/// the argument); the range against `databases` is checked later.
fn parse_index(arg: &[u8], which: &str) -> Result<i64, String> {
    match parse_i64(arg) {
        Some(i) if i32::try_from(i).is_ok() => Ok(i),
        _ => Err(format!("ERR invalid {which} DB index")),
    }
}

fn swapdb(ctx: &mut Ctx, argv: &Argv) {
    if ctx.srv.config.cluster_enabled {
        return ctx.r.error("ERR SWAPDB is not allowed in cluster mode");
    }
    let (a, b) = match (parse_index(argv.get(1), "first"), parse_index(argv.get(2), "second")) {
        (Err(e), _) | (Ok(_), Err(e)) => return ctx.r.error(&e),
        (Ok(a), Ok(b)) => (a, b),
    };
    let n = ctx.srv.keyspace.dbs.len() as i64;
    if !(0..n).contains(&a) || !(0..n).contains(&b) {
        return ctx.r.error("ERR DB index is out of range");
    }
    let (a, b) = (a as usize, b as usize);
    if a != b {
        touch_watched_across(ctx, a, b);
        touch_watched_across(ctx, b, a);
        ctx.srv.keyspace.swap(a, b);
        signal_blocked(ctx, a, b);
    }
    // Counted even for a db swapped with itself, as Redis does: the command
    // is replayed either way.
    ctx.dirty(1);
    ctx.r.ok();
}

/// Fail the next EXEC of clients watching a key of `db` that exists before
/// the swap (in `db`) or after it (the same key in `other`), as Redis's
/// `touchAllWatchedKeysInDb`, with its rules for stale keys: one stale at
/// WATCH that is now gone, or still stale, did not logically change, and a
/// missing key replaced by a stale one becomes a watched stale key.
fn touch_watched_across(ctx: &mut Ctx, db: usize, other: usize) {
    if ctx.srv.watches.is_empty() {
        return;
    }
    let now = ctx.now;
    for key in ctx.srv.watches.keys_in_db(db) {
        let dbs = &ctx.srv.keyspace.dbs;
        let (was, comes) = (dbs[db].find(&key).is_some(), dbs[other].find(&key).is_some());
        if !was && !comes {
            continue;
        }
        let comes_stale = comes && dbs[other].is_stale(&key, now);
        let watchers = ctx.srv.watches.watchers(db, &key).to_vec();
        for cid in watchers {
            let Some(c) = ctx.srv.clients.get_mut(cid) else { continue };
            let stale_at = c.watched_stale.iter().position(|(d, k)| *d == db && *k == key);
            match stale_at {
                Some(i) if !comes => drop(c.watched_stale.swap_remove(i)),
                Some(_) if comes_stale => {}
                None if !was && comes_stale => c.watched_stale.push((db, key.clone())),
                _ => c.watch_touched = true,
            }
        }
    }
}

/// A client blocked on a key of `a` or `b` may now find data there, or
/// (XREADGROUP) find its stream gone: re-run every waiter of both.
fn signal_blocked(ctx: &mut Ctx, a: usize, b: usize) {
    ctx.srv.blocking.signal_db(a);
    ctx.srv.blocking.signal_db(b);
}
