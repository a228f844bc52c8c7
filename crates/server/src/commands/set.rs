//! Set commands: SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP
//! SRANDMEMBER SMOVE SINTER SINTERCARD SINTERSTORE SUNION SUNIONSTORE SDIFF
//! SDIFFSTORE SSCAN, with Redis 7.0's replies, error texts and intset →
//! hashtable conversions (results of the algebra commands start as intsets
//! and convert as members are added, as in Redis).
use crate::commands::hash::{parse_rand_count, EMPTY_SCAN};
use crate::commands::keys::{parse_scan_cursor, parse_scan_opts};
use crate::config::{NOTIFY_GENERIC, NOTIFY_SET};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::glob::glob_match;
use crate::engine::numeric::parse_i64;
use crate::engine::{Set, Value};
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);
const ALL: (i32, i32, i32) = (1, -1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 17] = [
    spec!("sadd", -3, WRITE | DENYOOM | FAST, K1, sadd, "set", "1.0.0", "Add one or more members to a set", ["write", "set", "fast"]),
    spec!("srem", -3, WRITE | FAST, K1, srem, "set", "1.0.0", "Remove one or more members from a set", ["write", "set", "fast"]),
    spec!("smembers", 2, READONLY, K1, sinter, "set", "1.0.0", "Get all the members in a set", ["read", "set", "slow"]),
    spec!("sismember", 3, READONLY | FAST, K1, sismember, "set", "1.0.0", "Determine if a given value is a member of a set", ["read", "set", "fast"]),
    spec!("smismember", -3, READONLY | FAST, K1, smismember, "set", "6.2.0", "Returns the membership associated with the given elements for a set", ["read", "set", "fast"]),
    spec!("scard", 2, READONLY | FAST, K1, scard, "set", "1.0.0", "Get the number of members in a set", ["read", "set", "fast"]),
    spec!("spop", -2, WRITE | FAST, K1, spop, "set", "1.0.0", "Remove and return one or multiple random members from a set", ["write", "set", "fast"]),
    spec!("srandmember", -2, READONLY, K1, srandmember, "set", "1.0.0", "Get one or multiple random members from a set", ["read", "set", "slow"]),
    spec!("smove", 4, WRITE | FAST, (1, 2, 1), smove, "set", "1.0.0", "Move a member from one set to another", ["write", "set", "fast"]),
    spec!("sinter", -2, READONLY, ALL, sinter, "set", "1.0.0", "Intersect multiple sets", ["read", "set", "slow"]),
    spec!("sintercard", -3, READONLY | MOVABLEKEYS, (0, 0, 0), sintercard, "set", "7.0.0", "Intersect multiple sets and return the cardinality of the result", ["read", "set", "slow"]),
    spec!("sinterstore", -3, WRITE | DENYOOM, ALL, sinterstore, "set", "1.0.0", "Intersect multiple sets and store the resulting set in a key", ["write", "set", "slow"]),
    spec!("sunion", -2, READONLY, ALL, sunion, "set", "1.0.0", "Add multiple sets", ["read", "set", "slow"]),
    spec!("sunionstore", -3, WRITE | DENYOOM, ALL, sunionstore, "set", "1.0.0", "Add multiple sets and store the resulting set in a key", ["write", "set", "slow"]),
    spec!("sdiff", -2, READONLY, ALL, sdiff, "set", "1.0.0", "Subtract multiple sets", ["read", "set", "slow"]),
    spec!("sdiffstore", -3, WRITE | DENYOOM, ALL, sdiffstore, "set", "1.0.0", "Subtract multiple sets and store the resulting set in a key", ["write", "set", "slow"]),
    spec!("sscan", -3, READONLY, K1, sscan, "set", "2.8.0", "Incrementally iterate Set elements", ["read", "set", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

fn max_intset(ctx: &Ctx) -> u64 {
    ctx.srv.config.set_max_intset_entries
}

/// Look up the set at `key` (counting a keyspace hit/miss when `read`);
/// replies WRONGTYPE itself and returns `Err(())` then.
fn lookup<'c>(ctx: &'c mut Ctx, key: &[u8], read: bool) -> Result<Option<&'c mut Set>, ()> {
    let srv = &mut *ctx.srv;
    let found = srv.keyspace.dbs[ctx.db].get_set(key, ctx.now);
    if read {
        match found {
            Ok(None) => srv.stats.key_miss(ctx.db, key),
            _ => srv.stats.keyspace_hits += 1,
        }
    }
    found.map_err(|e| ctx.r.error(e.message()))
}

/// Send `event` for `key`, then `del` if the edit emptied it: Redis's
/// order, whichever happened first here.
fn notify_removal(ctx: &mut Ctx, event: &str, key: &[u8], deleted: bool) {
    ctx.notify(NOTIFY_SET, event, key);
    if deleted {
        ctx.notify(NOTIFY_GENERIC, "del", key);
    }
}

fn reply_members(ctx: &mut Ctx, members: &[Vec<u8>], as_set: bool) {
    if as_set {
        ctx.r.set(members.len());
    } else {
        ctx.r.array(members.len());
    }
    for m in members {
        ctx.r.bulk(m);
    }
}

// ------------------------------------------------------------ single set

fn sadd(ctx: &mut Ctx, argv: &Argv) {
    let (key, now, max) = (argv.get(1), ctx.now, max_intset(ctx));
    let (db, r) = ctx.db_reply();
    match db.get_set(key, now) {
        Err(e) => return r.error(e.message()),
        Ok(None) => db.set(key, Value::Set(Set::for_member(argv.get(2))), None, false, now),
        Ok(Some(_)) => {}
    }
    let Ok(Some(s)) = db.get_set(key, now) else { unreachable!("set exists") };
    let members: Vec<&[u8]> = argv.iter_from(2).collect();
    let added = s.insert_many(&members, max);
    r.int(added as i64);
    ctx.dirty(added as u64);
    if added > 0 {
        ctx.notify(NOTIFY_SET, "sadd", key);
    }
}

fn srem(ctx: &mut Ctx, argv: &Argv) {
    let (key, now) = (argv.get(1), ctx.now);
    let Ok(found) = lookup(ctx, key, false) else { return };
    let Some(s) = found else { return ctx.r.int(0) };
    let mut removed = 0;
    for m in argv.iter_from(2) {
        removed += s.remove(m) as i64;
        if s.is_empty() {
            break;
        }
    }
    let deleted = ctx.dbm().remove_if_empty(key, now);
    ctx.r.int(removed);
    ctx.dirty(removed as u64);
    if removed > 0 {
        notify_removal(ctx, "srem", key, deleted);
    }
}

fn sismember(ctx: &mut Ctx, argv: &Argv) {
    let m = argv.get(2);
    if let Ok(s) = lookup(ctx, argv.get(1), true) {
        let hit = s.is_some_and(|s| s.contains(m));
        ctx.r.int(hit as i64);
    }
}

fn smismember(ctx: &mut Ctx, argv: &Argv) {
    let Ok(s) = lookup(ctx, argv.get(1), true) else { return };
    let hits: Vec<bool> = argv.iter_from(2).map(|m| s.as_ref().is_some_and(|s| s.contains(m))).collect();
    ctx.r.array(hits.len());
    for h in hits {
        ctx.r.int(h as i64);
    }
}

fn scard(ctx: &mut Ctx, argv: &Argv) {
    if let Ok(s) = lookup(ctx, argv.get(1), true) {
        let n = s.map_or(0, |s| s.len());
        ctx.r.int(n as i64);
    }
}

fn spop(ctx: &mut Ctx, argv: &Argv) {
    match argv.len() {
        2 => {}
        3 => return spop_count(ctx, argv),
        _ => return ctx.syntax_error(),
    }
    let (key, now) = (argv.get(1), ctx.now);
    let mut rng = ctx.srv.keyspace.next_random();
    let Ok(found) = lookup(ctx, key, false) else { return };
    let Some(m) = found.and_then(|s| s.pop(&mut rng)) else { return ctx.r.null() };
    let deleted = ctx.dbm().remove_if_empty(key, now);
    ctx.r.bulk(&m);
    ctx.dirty(1);
    notify_removal(ctx, "spop", key, deleted);
    // The member was chosen at random: replay removes that very one.
    ctx.replicate_as(&[b"SREM", key, &m]);
}

fn spop_count(ctx: &mut Ctx, argv: &Argv) {
    let count = match parse_i64(argv.get(2)) {
        Some(n) if n >= 0 => n as u64,
        _ => return ctx.r.error("ERR value is out of range, must be positive"),
    };
    let (key, now, max) = (argv.get(1), ctx.now, max_intset(ctx));
    let mut rng = ctx.srv.keyspace.next_random();
    let Ok(found) = lookup(ctx, key, false) else { return };
    let Some(s) = found.filter(|_| count > 0) else { return ctx.r.set(0) };
    let whole = count >= s.len() as u64;
    let popped = if whole {
        // Redis replies SUNION of the set: a rebuilt copy.
        let mut copy = Set::new_intset();
        for m in s.members() {
            copy.insert(&m, max);
        }
        ctx.dbm().remove(key);
        copy.members()
    } else {
        let v = (0..count).filter_map(|_| s.pop(&mut rng)).collect();
        ctx.dbm().remove_if_empty(key, now);
        v
    };
    reply_members(ctx, &popped, true);
    ctx.dirty(1);
    notify_removal(ctx, "spop", key, whole);
    if whole {
        ctx.replicate_as(&[b"DEL", key]);
    } else if ctx.replicating() {
        // The members were chosen at random: replay removes those very ones.
        let mut args: Vec<&[u8]> = vec![b"SREM", key];
        args.extend(popped.iter().map(|m| m.as_slice()));
        ctx.replicate_as(&args);
    }
}

fn srandmember(ctx: &mut Ctx, argv: &Argv) {
    let mut rng = ctx.srv.keyspace.next_random();
    match argv.len() {
        2 => {
            if let Ok(s) = lookup(ctx, argv.get(1), true) {
                match s.and_then(|s| s.random(&mut rng)) {
                    Some(m) => ctx.r.bulk(&m),
                    None => ctx.r.null(),
                }
            }
            return;
        }
        3 => {}
        _ => return ctx.syntax_error(),
    }
    let Some(count) = parse_rand_count(ctx, argv.get(2)) else { return };
    let Ok(found) = lookup(ctx, argv.get(1), true) else { return };
    let Some(s) = found.filter(|_| count != 0) else { return ctx.r.array(0) };
    let picked: Vec<Vec<u8>> = if count < 0 {
        (0..count.unsigned_abs()).filter_map(|_| s.random(&mut rng)).collect()
    } else if count as u64 >= s.len() as u64 {
        s.members()
    } else {
        s.random_distinct(count as usize, &mut rng)
    };
    reply_members(ctx, &picked, false);
}

fn smove(ctx: &mut Ctx, argv: &Argv) {
    let (src, dst, m, now, max) = (argv.get(1), argv.get(2), argv.get(3), ctx.now, max_intset(ctx));
    let (db, r) = ctx.db_reply();
    let src_found = db.get_set(src, now).map(|s| s.is_some());
    let dst_found = db.get_set(dst, now).map(|s| s.is_some());
    let dst_found = match (src_found, dst_found) {
        (Ok(false), _) => return r.int(0),
        (Err(e), _) | (_, Err(e)) => return r.error(e.message()),
        (Ok(true), Ok(d)) => d,
    };
    let Ok(Some(s)) = db.get_set(src, now) else { unreachable!("src exists") };
    if src == dst {
        return r.int(s.contains(m) as i64);
    }
    if !s.remove(m) {
        return r.int(0);
    }
    let src_deleted = db.remove_if_empty(src, now);
    r.int(1);
    // Before creating `dst`, whose `new` event comes after these in Redis.
    notify_removal(ctx, "srem", src, src_deleted);
    let db = ctx.dbm();
    if !dst_found {
        db.set(dst, Value::Set(Set::for_member(m)), None, false, now);
    }
    let added = match db.get_set(dst, now) {
        Ok(Some(d)) => d.insert(m, max),
        _ => false,
    };
    // As Redis: the destination counts as changed (for WATCH and
    // notifications too) only if the member was new there.
    ctx.modified(src);
    ctx.dirty(1);
    if added {
        ctx.modified(dst);
        ctx.dirty(1);
        ctx.notify(NOTIFY_SET, "sadd", dst);
    }
}

fn sscan(ctx: &mut Ctx, argv: &Argv) {
    let Some(cursor) = parse_scan_cursor(argv.get(2)) else { return ctx.r.error("ERR invalid cursor") };
    let Ok(found) = lookup(ctx, argv.get(1), true) else { return };
    let Some(s) = found else { return ctx.r.raw(EMPTY_SCAN) };
    let opts = match parse_scan_opts(argv, 3, false) {
        Ok(o) => o,
        Err(msg) => return ctx.r.error(msg),
    };
    let mut found: Vec<Vec<u8>> = Vec::new();
    let next = s.scan(cursor, opts.count, |m| {
        if opts.pattern.is_none_or(|p| glob_match(p, m, false)) {
            found.push(m.to_vec());
        }
    });
    ctx.r.array(2);
    ctx.r.bulk(next.to_string().as_bytes());
    reply_members(ctx, &found, false);
}

// ------------------------------------------------------------ algebra

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Diff,
}

/// Sizes of the sets at `keys` (None: missing), after checking every key's
/// type like Redis does before computing anything. Read lookups (counted,
/// `keymiss` when absent) for the STORE forms too, as Redis 7.0's.
fn sizes(ctx: &mut Ctx, keys: &[&[u8]]) -> Result<Vec<Option<usize>>, ()> {
    keys.iter().map(|k| lookup(ctx, k, true).map(|s| s.map(|s| s.len()))).collect()
}

fn members_of(ctx: &mut Ctx, key: &[u8]) -> Vec<Vec<u8>> {
    let now = ctx.now;
    match ctx.dbm().get_set(key, now) {
        Ok(Some(s)) => s.members(),
        _ => Vec::new(),
    }
}

fn contained(ctx: &mut Ctx, key: &[u8], m: &[u8]) -> bool {
    let now = ctx.now;
    matches!(ctx.dbm().get_set(key, now), Ok(Some(s)) if s.contains(m))
}

/// Intersection in the iteration order of the smallest set, at most
/// `limit` members (0: no limit); None if some key is missing.
fn intersect(ctx: &mut Ctx, keys: &[&[u8]], limit: usize) -> Result<Option<Vec<Vec<u8>>>, ()> {
    let sz = sizes(ctx, keys)?;
    if sz.iter().any(Option::is_none) {
        return Ok(None);
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| sz[i]);
    let mut out = Vec::new();
    for m in members_of(ctx, keys[order[0]]) {
        if order[1..].iter().all(|&i| contained(ctx, keys[i], &m)) {
            out.push(m);
            if out.len() == limit {
                break;
            }
        }
    }
    Ok(Some(out))
}

/// Union or difference built into a fresh intset-first set, as Redis's
/// `sunionDiffGenericCommand` does (including its choice of diff algorithm,
/// which decides the result's encoding).
fn union_diff(ctx: &mut Ctx, keys: &[&[u8]], op: Op) -> Result<Set, ()> {
    let sz = sizes(ctx, keys)?;
    let max = max_intset(ctx);
    let mut dst = Set::new_intset();
    let present: Vec<usize> = (0..keys.len()).filter(|&i| sz[i].is_some()).collect();
    if op == Op::Union {
        for &i in &present {
            members_of(ctx, keys[i]).iter().for_each(|m| {
                dst.insert(m, max);
            });
        }
        return Ok(dst);
    }
    let Some(first) = sz[0] else { return Ok(dst) };
    let one: usize = present.len() * first / 2;
    let two: usize = present.iter().map(|&i| sz[i].unwrap_or(0)).sum();
    let mut others: Vec<usize> = present.into_iter().filter(|&i| i != 0).collect();
    if one <= two {
        others.sort_by_key(|&i| std::cmp::Reverse(sz[i]));
        for m in members_of(ctx, keys[0]) {
            if !others.iter().any(|&i| keys[i] == keys[0] || contained(ctx, keys[i], &m)) {
                dst.insert(&m, max);
            }
        }
    } else {
        members_of(ctx, keys[0]).iter().for_each(|m| {
            dst.insert(m, max);
        });
        for &i in &others {
            members_of(ctx, keys[i]).iter().for_each(|m| {
                dst.remove(m);
            });
            if dst.is_empty() {
                break;
            }
        }
    }
    Ok(dst)
}

/// Store `set` at `dst` (deleting `dst` when empty) and reply its size;
/// `event` is the storing command's.
fn store(ctx: &mut Ctx, dst: &[u8], set: Set, event: &str) {
    let n = set.len();
    if n == 0 {
        if ctx.dbm().delete(dst) {
            ctx.dirty(1);
            ctx.notify(NOTIFY_GENERIC, "del", dst);
        }
    } else {
        let now = ctx.now;
        ctx.dbm().set(dst, Value::Set(set), None, false, now);
        ctx.dirty(1);
        ctx.notify(NOTIFY_SET, event, dst);
    }
    ctx.r.int(n as i64);
}

fn sinter_store(ctx: &mut Ctx, dst: &[u8], members: Vec<Vec<u8>>) {
    let max = max_intset(ctx);
    let mut set = Set::new_intset();
    members.iter().for_each(|m| {
        set.insert(m, max);
    });
    store(ctx, dst, set, "sinterstore");
}

fn keys_from<'a>(argv: &Argv<'a>, from: usize) -> Vec<&'a [u8]> {
    argv.iter_from(from).collect()
}

fn sinter(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() == 2 {
        // SMEMBERS, or SINTER of one key: stream the set without copying it.
        let srv = &mut *ctx.srv;
        let found = srv.keyspace.dbs[ctx.db].get_set(argv.get(1), ctx.now);
        match found {
            Ok(None) => srv.stats.key_miss(ctx.db, argv.get(1)),
            _ => srv.stats.keyspace_hits += 1,
        }
        let s = match found {
            Ok(Some(s)) => s,
            Ok(None) => return ctx.r.set(0),
            Err(e) => return ctx.r.error(e.message()),
        };
        ctx.r.set(s.len());
        s.for_each(|m| ctx.r.bulk(m));
        return;
    }
    if let Ok(res) = intersect(ctx, &keys_from(argv, 1), 0) {
        reply_members(ctx, &res.unwrap_or_default(), true);
    }
}

fn sinterstore(ctx: &mut Ctx, argv: &Argv) {
    if let Ok(res) = intersect(ctx, &keys_from(argv, 2), 0) {
        sinter_store(ctx, argv.get(1), res.unwrap_or_default());
    }
}

fn sintercard(ctx: &mut Ctx, argv: &Argv) {
    let numkeys = match parse_i64(argv.get(1)) {
        Some(n) if n > 0 => n as usize,
        _ => return ctx.r.error("ERR numkeys should be greater than 0"),
    };
    if numkeys > argv.len() - 2 {
        return ctx.r.error("ERR Number of keys can't be greater than number of args");
    }
    let mut limit = 0usize;
    let mut i = 2 + numkeys;
    while i < argv.len() {
        if argv.is(i, "limit") && i + 1 < argv.len() {
            match parse_i64(argv.get(i + 1)) {
                Some(n) if n >= 0 => limit = n as usize,
                _ => return ctx.r.error("ERR LIMIT can't be negative"),
            }
            i += 2;
        } else {
            return ctx.syntax_error();
        }
    }
    let keys: Vec<&[u8]> = (2..2 + numkeys).map(|i| argv.get(i)).collect();
    if let Ok(res) = intersect(ctx, &keys, limit) {
        ctx.r.int(res.map_or(0, |v| v.len()) as i64);
    }
}

fn sunion(ctx: &mut Ctx, argv: &Argv) {
    if let Ok(set) = union_diff(ctx, &keys_from(argv, 1), Op::Union) {
        reply_members(ctx, &set.members(), true);
    }
}

fn sunionstore(ctx: &mut Ctx, argv: &Argv) {
    if let Ok(set) = union_diff(ctx, &keys_from(argv, 2), Op::Union) {
        store(ctx, argv.get(1), set, "sunionstore");
    }
}

fn sdiff(ctx: &mut Ctx, argv: &Argv) {
    if let Ok(set) = union_diff(ctx, &keys_from(argv, 1), Op::Diff) {
        reply_members(ctx, &set.members(), true);
    }
}

fn sdiffstore(ctx: &mut Ctx, argv: &Argv) {
    if let Ok(set) = union_diff(ctx, &keys_from(argv, 2), Op::Diff) {
        store(ctx, argv.get(1), set, "sdiffstore");
    }
}
