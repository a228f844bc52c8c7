//! Hash commands: HSET HSETNX HGET HMGET HMSET HDEL HLEN HEXISTS HGETALL
//! HKEYS HVALS HINCRBY HINCRBYFLOAT HSTRLEN HRANDFIELD HSCAN, with Redis
//! 7.0's replies, error texts, and listpack → hashtable conversions.
//!
//! Read commands count keyspace hits and misses like Redis's
//! `lookupKeyRead`; writes delete a hash that became empty.
use crate::commands::keys::{parse_scan_cursor, parse_scan_opts};
use crate::config::{NOTIFY_GENERIC, NOTIFY_HASH};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::glob::glob_match;
use crate::engine::numeric::{self, classify_long_double, parse_i64, FloatIncrError, LongDoubleKind};
use crate::engine::{EngineError, Hash, HashLimits};
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 16] = [
    spec!("hset", -4, WRITE | DENYOOM | FAST, K1, hset, "hash", "2.0.0", "Set the string value of a hash field", ["write", "hash", "fast"]),
    spec!("hsetnx", 4, WRITE | DENYOOM | FAST, K1, hsetnx, "hash", "2.0.0", "Set the value of a hash field, only if the field does not exist", ["write", "hash", "fast"]),
    spec!("hget", 3, READONLY | FAST, K1, hget, "hash", "2.0.0", "Get the value of a hash field", ["read", "hash", "fast"]),
    spec!("hmget", -3, READONLY | FAST, K1, hmget, "hash", "2.0.0", "Get the values of all the given hash fields", ["read", "hash", "fast"]),
    spec!("hmset", -4, WRITE | DENYOOM | FAST, K1, hmset, "hash", "2.0.0", "Set multiple hash fields to multiple values", ["write", "hash", "fast"]),
    spec!("hdel", -3, WRITE | FAST, K1, hdel, "hash", "2.0.0", "Delete one or more hash fields", ["write", "hash", "fast"]),
    spec!("hlen", 2, READONLY | FAST, K1, hlen, "hash", "2.0.0", "Get the number of fields in a hash", ["read", "hash", "fast"]),
    spec!("hexists", 3, READONLY | FAST, K1, hexists, "hash", "2.0.0", "Determine if a hash field exists", ["read", "hash", "fast"]),
    spec!("hgetall", 2, READONLY, K1, hgetall, "hash", "2.0.0", "Get all the fields and values in a hash", ["read", "hash", "slow"]),
    spec!("hkeys", 2, READONLY, K1, hkeys, "hash", "2.0.0", "Get all the fields in a hash", ["read", "hash", "slow"]),
    spec!("hvals", 2, READONLY, K1, hvals, "hash", "2.0.0", "Get all the values in a hash", ["read", "hash", "slow"]),
    spec!("hincrby", 4, WRITE | DENYOOM | FAST, K1, hincrby, "hash", "2.0.0", "Increment the integer value of a hash field by the given number", ["write", "hash", "fast"]),
    spec!("hincrbyfloat", 4, WRITE | DENYOOM | FAST, K1, hincrbyfloat, "hash", "2.6.0", "Increment the float value of a hash field by the given amount", ["write", "hash", "fast"]),
    spec!("hstrlen", 3, READONLY | FAST, K1, hstrlen, "hash", "3.2.0", "Get the length of the value of a hash field", ["read", "hash", "fast"]),
    spec!("hrandfield", -2, READONLY, K1, hrandfield, "hash", "6.2.0", "Get one or multiple random fields from a hash", ["read", "hash", "slow"]),
    spec!("hscan", -3, READONLY, K1, hscan, "hash", "2.8.0", "Incrementally iterate hash fields and associated values", ["read", "hash", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

/// SCAN's reply for a missing key.
pub(crate) const EMPTY_SCAN: &[u8] = b"*2\r\n$1\r\n0\r\n*0\r\n";

fn limits(ctx: &Ctx) -> HashLimits {
    let c = &ctx.srv.config;
    HashLimits { entries: c.hash_max_listpack_entries, value: c.hash_max_listpack_value }
}

/// Read lookup of a hash counting keyspace hits/misses; replies the
/// WRONGTYPE error itself and returns `Err(())` then.
fn read_hash<'c, 'a>(ctx: &'c mut Ctx<'a>, key: &[u8]) -> Result<(Option<&'c Hash>, &'c mut Reply<'a>), ()> {
    let srv = &mut *ctx.srv;
    let found = srv.keyspace.dbs[ctx.db].get_hash(key, ctx.now);
    match found {
        Ok(None) => srv.stats.key_miss(ctx.db, key),
        _ => srv.stats.keyspace_hits += 1,
    }
    match found {
        Ok(h) => Ok((h.map(|h| &*h), &mut ctx.r)),
        Err(e) => {
            ctx.r.error(e.message());
            Err(())
        }
    }
}

// ------------------------------------------------------------ writes

/// HSET / HMSET: set every pair; the number of new fields, or None after an error reply.
fn set_pairs(ctx: &mut Ctx, argv: &Argv, name: &str) -> Option<i64> {
    if argv.len() % 2 == 1 {
        ctx.r.error(&format!("ERR wrong number of arguments for '{name}' command"));
        return None;
    }
    let (lim, now) = (limits(ctx), ctx.now);
    let h = match ctx.dbm().hash_or_create(argv.get(1), now) {
        Ok(h) => h,
        Err(e) => {
            ctx.r.error(e.message());
            return None;
        }
    };
    let pairs: Vec<(&[u8], &[u8])> = (2..argv.len()).step_by(2).map(|i| (argv.get(i), argv.get(i + 1))).collect();
    let created = h.insert_many(&pairs, lim) as i64;
    ctx.dirty((argv.len() as u64 - 2) / 2);
    // Redis reports every HSET, even one that changed no value.
    ctx.notify(NOTIFY_HASH, "hset", argv.get(1));
    Some(created)
}

fn hset(ctx: &mut Ctx, argv: &Argv) {
    if let Some(n) = set_pairs(ctx, argv, "hset") {
        ctx.r.int(n);
    }
}

fn hmset(ctx: &mut Ctx, argv: &Argv) {
    if set_pairs(ctx, argv, "hmset").is_some() {
        ctx.r.ok();
    }
}

fn hsetnx(ctx: &mut Ctx, argv: &Argv) {
    let (lim, now) = (limits(ctx), ctx.now);
    let (field, value) = (argv.get(2), argv.get(3));
    let (db, r) = ctx.db_reply();
    let h = match db.hash_or_create(argv.get(1), now) {
        Ok(h) => h,
        Err(e) => return r.error(e.message()),
    };
    // Redis 7.0 checks the lengths only when it is about to insert.
    if h.get(field).is_some() {
        return r.int(0);
    }
    h.insert(field, value, lim);
    r.int(1);
    ctx.dirty(1);
    ctx.notify(NOTIFY_HASH, "hset", argv.get(1));
}

fn hdel(ctx: &mut Ctx, argv: &Argv) {
    let (key, now) = (argv.get(1), ctx.now);
    let (db, r) = ctx.db_reply();
    let h = match db.get_hash(key, now) {
        Ok(Some(h)) => h,
        Ok(None) => return r.int(0),
        Err(e) => return r.error(e.message()),
    };
    let mut deleted = 0;
    for f in argv.iter_from(2) {
        deleted += h.remove(f) as i64;
        if h.is_empty() {
            break;
        }
    }
    let key_deleted = db.remove_if_empty(key, now);
    r.int(deleted);
    ctx.dirty(deleted as u64);
    if deleted > 0 {
        ctx.notify(NOTIFY_HASH, "hdel", key);
        if key_deleted {
            ctx.notify(NOTIFY_GENERIC, "del", key);
        }
    }
}

/// Look up (creating if missing) the hash for HINCRBY*; the current value
/// of `field` is handed to `f`, whose result is stored and replied.
fn incr_field(ctx: &mut Ctx, argv: &Argv, f: impl FnOnce(Option<&[u8]>) -> Result<Vec<u8>, &'static str>) -> bool {
    let (key, field, now, lim) = (argv.get(1), argv.get(2), ctx.now, limits(ctx));
    let (db, r) = ctx.db_reply();
    let h = match db.hash_or_create(key, now) {
        Ok(h) => h,
        Err(e) => {
            r.error(e.message());
            return false;
        }
    };
    match f(h.get(field)) {
        Ok(new) => {
            h.insert(field, &new, lim);
            ctx.dirty(1);
            true
        }
        Err(msg) => {
            db.remove_if_empty(key, now);
            r.error(msg);
            false
        }
    }
}

fn hincrby(ctx: &mut Ctx, argv: &Argv) {
    let Some(by) = parse_i64(argv.get(3)) else { return ctx.not_integer() };
    let mut result = 0;
    let ok = incr_field(ctx, argv, |cur| {
        let old = match cur {
            None => 0,
            Some(v) => parse_i64(v).ok_or("ERR hash value is not an integer")?,
        };
        result = old.checked_add(by).ok_or("ERR increment or decrement would overflow")?;
        Ok(result.to_string().into_bytes())
    });
    if ok {
        ctx.r.int(result);
        ctx.notify(NOTIFY_HASH, "hincrby", argv.get(1));
    }
}

fn hincrbyfloat(ctx: &mut Ctx, argv: &Argv) {
    let incr = argv.get(3);
    match classify_long_double(incr) {
        LongDoubleKind::Invalid => return ctx.r.error(EngineError::NotFloat.message()),
        LongDoubleKind::Infinite => return ctx.r.error("ERR value is NaN or Infinity"),
        LongDoubleKind::Finite => {}
    }
    let mut result = Vec::new();
    let ok = incr_field(ctx, argv, |cur| {
        let sum = numeric::incr_by_float(cur.unwrap_or(b"0"), incr).map_err(|e| match e {
            FloatIncrError::NotFloat => "ERR hash value is not a float",
            FloatIncrError::NanOrInfinity => EngineError::NanOrInfinity.message(),
        })?;
        result = sum.clone();
        Ok(sum)
    });
    if ok {
        ctx.r.bulk(&result);
        // Replays as the result, not the increment (float rounding may differ).
        ctx.replicate_as(&[b"HSET", argv.get(1), argv.get(2), &result]);
        ctx.notify(NOTIFY_HASH, "hincrbyfloat", argv.get(1));
    }
}

// ------------------------------------------------------------ reads

fn hget(ctx: &mut Ctx, argv: &Argv) {
    let field = argv.get(2);
    if let Ok((h, r)) = read_hash(ctx, argv.get(1)) {
        match h.and_then(|h| h.get(field)) {
            Some(v) => r.bulk(v),
            None => r.null(),
        }
    }
}

fn hmget(ctx: &mut Ctx, argv: &Argv) {
    if let Ok((h, r)) = read_hash(ctx, argv.get(1)) {
        r.array(argv.len() - 2);
        for f in argv.iter_from(2) {
            match h.and_then(|h| h.get(f)) {
                Some(v) => r.bulk(v),
                None => r.null(),
            }
        }
    }
}

fn hlen(ctx: &mut Ctx, argv: &Argv) {
    if let Ok((h, r)) = read_hash(ctx, argv.get(1)) {
        r.int(h.map_or(0, Hash::len) as i64);
    }
}

fn hexists(ctx: &mut Ctx, argv: &Argv) {
    let field = argv.get(2);
    if let Ok((h, r)) = read_hash(ctx, argv.get(1)) {
        r.int(h.is_some_and(|h| h.get(field).is_some()) as i64);
    }
}

fn hstrlen(ctx: &mut Ctx, argv: &Argv) {
    let field = argv.get(2);
    if let Ok((h, r)) = read_hash(ctx, argv.get(1)) {
        r.int(h.and_then(|h| h.get(field)).map_or(0, <[u8]>::len) as i64);
    }
}

/// Which parts of each pair HGETALL / HKEYS / HVALS reply.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parts {
    Both,
    Fields,
    Values,
}

fn reply_all(ctx: &mut Ctx, key: &[u8], parts: Parts) {
    let Ok((h, r)) = read_hash(ctx, key) else { return };
    let n = h.map_or(0, Hash::len);
    if parts == Parts::Both {
        r.map(n);
    } else {
        r.array(n);
    }
    for (f, v) in h.iter().flat_map(|h| h.iter()) {
        if parts != Parts::Values {
            r.bulk(f);
        }
        if parts != Parts::Fields {
            r.bulk(v);
        }
    }
}

fn hgetall(ctx: &mut Ctx, argv: &Argv) {
    reply_all(ctx, argv.get(1), Parts::Both);
}

fn hkeys(ctx: &mut Ctx, argv: &Argv) {
    reply_all(ctx, argv.get(1), Parts::Fields);
}

fn hvals(ctx: &mut Ctx, argv: &Argv) {
    reply_all(ctx, argv.get(1), Parts::Values);
}

// ------------------------------------------------------------ random, scan

/// Parse a random-command count in Redis's `-LONG_MAX..=LONG_MAX` range.
pub(crate) fn parse_rand_count(ctx: &mut Ctx, arg: &[u8]) -> Option<i64> {
    match parse_i64(arg) {
        None => ctx.not_integer(),
        Some(i64::MIN) => {
            ctx.r.error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
        }
        Some(n) => return Some(n),
    }
    None
}

/// `k` distinct positions out of `0..n` (partial Fisher-Yates), in order.
fn distinct_picks(n: usize, k: usize, rng: &mut u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    for i in 0..k.min(n) {
        let j = i + (crate::engine::dict::next_random(rng) % (n - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(k.min(n));
    idx.sort_unstable();
    idx
}

fn reply_pair(r: &mut Reply, (f, v): (&[u8], &[u8]), withvalues: bool) {
    if withvalues && r.resp3() {
        r.array(2);
    }
    r.bulk(f);
    if withvalues {
        r.bulk(v);
    }
}

fn hrandfield(ctx: &mut Ctx, argv: &Argv) {
    let mut rng = ctx.srv.keyspace.next_random();
    if argv.len() == 2 {
        if let Ok((h, r)) = read_hash(ctx, argv.get(1)) {
            match h.and_then(|h| h.random_pair(&mut rng)) {
                Some((f, _)) => r.bulk(f),
                None => r.null(),
            }
        }
        return;
    }
    let Some(count) = parse_rand_count(ctx, argv.get(2)) else { return };
    if argv.len() > 4 || (argv.len() == 4 && !argv.is(3, "withvalues")) {
        return ctx.syntax_error();
    }
    let withvalues = argv.len() == 4;
    if withvalues && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
        return ctx.r.error("ERR value is out of range");
    }
    let Ok((h, r)) = read_hash(ctx, argv.get(1)) else { return };
    let Some(h) = h.filter(|_| count != 0) else { return r.array(0) };
    let n = h.len();
    let width = if withvalues && !r.resp3() { 2 } else { 1 };
    if count < 0 {
        let k = count.unsigned_abs() as usize;
        r.array(k * width);
        for _ in 0..k {
            let pair = h.random_pair(&mut rng).expect("non-empty hash");
            reply_pair(r, pair, withvalues);
        }
        return;
    }
    if (count as u64).saturating_mul(3) < n as u64 {
        // A small sample of a big hash: draw and reject duplicates.
        let count = count as usize;
        let mut seen = std::collections::HashSet::with_capacity(count);
        r.array(count * width);
        while seen.len() < count {
            let pair = h.random_pair(&mut rng).expect("non-empty hash");
            if seen.insert(pair.0.to_vec()) {
                reply_pair(r, pair, withvalues);
            }
        }
        return;
    }
    let picks = if count as u64 >= n as u64 { (0..n).collect() } else { distinct_picks(n, count as usize, &mut rng) };
    r.array(picks.len() * width);
    let mut next = picks.iter().peekable();
    for (i, pair) in h.iter().enumerate() {
        if next.peek() == Some(&&i) {
            next.next();
            reply_pair(r, pair, withvalues);
        }
    }
}

fn hscan(ctx: &mut Ctx, argv: &Argv) {
    let Some(cursor) = parse_scan_cursor(argv.get(2)) else { return ctx.r.error("ERR invalid cursor") };
    let Ok((h, r)) = read_hash(ctx, argv.get(1)) else { return };
    let Some(h) = h else { return r.raw(EMPTY_SCAN) };
    let opts = match parse_scan_opts(argv, 3, false) {
        Ok(o) => o,
        Err(msg) => return r.error(msg),
    };
    let mut found: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let next = h.scan(cursor, opts.count, |f, v| {
        if opts.pattern.is_none_or(|p| glob_match(p, f, false)) {
            found.push((f.to_vec(), v.to_vec()));
        }
    });
    r.array(2);
    r.bulk(next.to_string().as_bytes());
    r.array(found.len() * 2);
    for (f, v) in &found {
        r.bulk(f);
        r.bulk(v);
    }
}
