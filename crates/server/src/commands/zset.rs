//! Sorted-set commands, part 1: ZADD ZINCRBY ZREM ZCARD ZSCORE ZMSCORE ZRANK
//! ZREVRANK ZRANDMEMBER ZSCAN, plus the helpers the other sorted-set files
//! share (lookups, the listpack limits, reply shapes, storing results).
//! Ranges live in `zrange.rs`; set algebra and pops in `zsetops.rs`.
use crate::commands::keys::{parse_scan_cursor, parse_scan_opts};
use crate::config::{NOTIFY_GENERIC, NOTIFY_ZSET};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::glob::glob_match;
use crate::engine::numeric::{self, parse_f64, parse_i64};
use crate::engine::zset::{Change, Limits, ZSet};
use crate::engine::{EngineError, Value};
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 10] = [
    spec!("zadd", -4, WRITE | DENYOOM | FAST, K1, zadd, "sorted-set", "1.2.0", "Add one or more members to a sorted set, or update its score if it already exists", ["write", "sortedset", "fast"]),
    spec!("zincrby", 4, WRITE | DENYOOM | FAST, K1, zincrby, "sorted-set", "1.2.0", "Increment the score of a member in a sorted set", ["write", "sortedset", "fast"]),
    spec!("zrem", -3, WRITE | FAST, K1, zrem, "sorted-set", "1.2.0", "Remove one or more members from a sorted set", ["write", "sortedset", "fast"]),
    spec!("zcard", 2, READONLY | FAST, K1, zcard, "sorted-set", "1.2.0", "Get the number of members in a sorted set", ["read", "sortedset", "fast"]),
    spec!("zscore", 3, READONLY | FAST, K1, zscore, "sorted-set", "1.2.0", "Get the score associated with the given member in a sorted set", ["read", "sortedset", "fast"]),
    spec!("zmscore", -3, READONLY | FAST, K1, zmscore, "sorted-set", "6.2.0", "Get the score associated with the given members in a sorted set", ["read", "sortedset", "fast"]),
    spec!("zrank", 3, READONLY | FAST, K1, zrank, "sorted-set", "2.0.0", "Determine the index of a member in a sorted set", ["read", "sortedset", "fast"]),
    spec!("zrevrank", 3, READONLY | FAST, K1, zrevrank, "sorted-set", "2.0.0", "Determine the index of a member in a sorted set, with scores ordered from high to low", ["read", "sortedset", "fast"]),
    spec!("zrandmember", -2, READONLY, K1, zrandmember, "sorted-set", "6.2.0", "Get one or multiple random elements from a sorted set", ["read", "sortedset", "slow"]),
    spec!("zscan", -3, READONLY, K1, zscan, "sorted-set", "2.8.0", "Incrementally iterate sorted sets elements and associated scores", ["read", "sortedset", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

// ------------------------------------------------------------ shared helpers

pub(crate) const NOT_FLOAT: &str = "ERR value is not a valid float";

/// The configured listpack limits.
pub(crate) fn limits(ctx: &Ctx) -> Limits {
    let c = &ctx.srv.config;
    Limits { entries: c.zset_max_listpack_entries as usize, value: c.zset_max_listpack_value as usize }
}

/// Read lookup (counts a keyspace hit or miss like `lookupKeyRead`).
pub(crate) fn read_zset<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c mut ZSet>, EngineError> {
    let now = ctx.now;
    let found = ctx.srv.keyspace.dbs[ctx.db].get_zset(key, now);
    match found {
        Ok(None) => ctx.srv.stats.key_miss(ctx.db, key),
        _ => ctx.srv.stats.keyspace_hits += 1,
    }
    found
}

/// Write lookup (no hit/miss counting).
pub(crate) fn write_zset<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Result<Option<&'c mut ZSet>, EngineError> {
    let now = ctx.now;
    ctx.srv.keyspace.dbs[ctx.db].get_zset(key, now)
}

/// Remove `key` if its sorted set became empty; true if it did.
pub(crate) fn drop_if_empty(ctx: &mut Ctx, key: &[u8]) -> bool {
    let now = ctx.now;
    if matches!(ctx.dbm().get_zset(key, now), Ok(Some(z)) if z.is_empty()) {
        ctx.dbm().remove(key);
        return true;
    }
    false
}

/// After removing members of the set at `key`: delete it if emptied, and
/// send `event` then `del` (Redis's order).
pub(crate) fn removed(ctx: &mut Ctx, key: &[u8], event: &str) {
    let deleted = drop_if_empty(ctx, key);
    ctx.notify(NOTIFY_ZSET, event, key);
    if deleted {
        ctx.notify(NOTIFY_GENERIC, "del", key);
    }
}

/// Items with optional scores: flat in RESP2, `[member, score]` pairs in RESP3.
pub(crate) fn reply_items(r: &mut Reply, items: &[(f64, Vec<u8>)], withscores: bool) {
    let pairs = withscores && r.resp3();
    r.array(if withscores && !pairs { items.len() * 2 } else { items.len() });
    for (s, m) in items {
        if pairs {
            r.array(2);
        }
        r.bulk(m);
        if withscores {
            r.double(*s);
        }
    }
}

/// Store a result set at `dst` (deleting `dst` when it is empty) and reply
/// its length, re-picking the encoding as Redis does for new results.
/// `event` is the storing command's.
pub(crate) fn store_result(ctx: &mut Ctx, dst: &[u8], mut z: ZSet, event: &str) {
    let n = z.len();
    if n == 0 {
        if ctx.dbm().delete(dst) {
            ctx.dirty(1);
            ctx.notify(NOTIFY_GENERIC, "del", dst);
        }
    } else {
        z.shrink_if_fits(limits(ctx));
        let now = ctx.now;
        ctx.dbm().set(dst, Value::ZSet(Box::new(z)), None, false, now);
        ctx.dirty(1);
        ctx.notify(NOTIFY_ZSET, event, dst);
    }
    ctx.r.int(n as i64);
}

/// Build a set from ascending items in the encoding their size calls for.
pub(crate) fn zset_from_sorted(items: &[(f64, Vec<u8>)], lim: Limits) -> ZSet {
    let maxlen = items.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    let mut z = ZSet::for_size(items.len(), maxlen, lim);
    for (s, m) in items {
        z.push_sorted(*s, m);
    }
    z
}

// ------------------------------------------------------------ ZADD / ZINCRBY

#[derive(Default, Clone, Copy)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// Parse ZADD's flags; returns them and the index of the first score.
fn parse_add_flags(argv: &Argv) -> (AddFlags, usize) {
    let mut f = AddFlags::default();
    let mut i = 2;
    while i < argv.len() {
        let w = argv.get(i).to_ascii_lowercase();
        match &w[..] {
            b"nx" => f.nx = true,
            b"xx" => f.xx = true,
            b"gt" => f.gt = true,
            b"lt" => f.lt = true,
            b"ch" => f.ch = true,
            b"incr" => f.incr = true,
            _ => break,
        }
        i += 1;
    }
    (f, i)
}

/// Validate flags and parse the scores; Err is the reply line.
fn check_add<'a>(argv: &Argv<'a>, f: AddFlags, at: usize) -> Result<Vec<(f64, &'a [u8])>, &'static str> {
    let n = argv.len() - at;
    if n == 0 || !n.is_multiple_of(2) {
        return Err("ERR syntax error");
    }
    if f.nx && f.xx {
        return Err("ERR XX and NX options at the same time are not compatible");
    }
    if [f.gt, f.lt, f.nx].iter().filter(|&&x| x).count() > 1 {
        return Err("ERR GT, LT, and/or NX options at the same time are not compatible");
    }
    if f.incr && n > 2 {
        return Err("ERR INCR option supports a single increment-element pair");
    }
    (at..argv.len()).step_by(2).map(|i| parse_f64(argv.get(i)).map(|s| (s, argv.get(i + 1))).ok_or(NOT_FLOAT)).collect()
}

/// What one ZADD element did: (added, updated, new score if processed).
fn add_one(z: &mut ZSet, f: AddFlags, score: f64, m: &[u8], lim: Limits) -> Result<(bool, bool, Option<f64>), ()> {
    match z.score(m) {
        Some(cur) => {
            if f.nx {
                return Ok((false, false, None));
            }
            let new = if f.incr { score + cur } else { score };
            if new.is_nan() {
                return Err(());
            }
            if (f.lt && new >= cur) || (f.gt && new <= cur) {
                return Ok((false, false, None));
            }
            let ch = z.set(m, new, lim) == Change::Updated;
            Ok((false, ch, Some(new)))
        }
        None if f.xx => Ok((false, false, None)),
        None => {
            z.set(m, score, lim);
            Ok((true, false, Some(score)))
        }
    }
}

fn zadd_generic(ctx: &mut Ctx, argv: &Argv, f: AddFlags, at: usize) {
    let pairs = match check_add(argv, f, at) {
        Ok(p) => p,
        Err(e) => return ctx.r.error(e),
    };
    let key = argv.get(1);
    let lim = limits(ctx);
    match write_zset(ctx, key) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) if f.xx => return if f.incr { ctx.r.null() } else { ctx.r.int(0) },
        Ok(None) => {
            let now = ctx.now;
            ctx.dbm().set(key, Value::ZSet(Box::default()), None, false, now);
        }
        Ok(Some(_)) => {}
    }
    let z = write_zset(ctx, key).ok().flatten().expect("just ensured");
    let (mut added, mut updated, mut last) = (0, 0, None);
    let mut nan = false;
    for (s, m) in pairs {
        match add_one(z, f, s, m, lim) {
            Ok((a, u, n)) => {
                added += a as i64;
                updated += u as i64;
                last = n;
            }
            Err(()) => {
                nan = true;
                break;
            }
        }
    }
    drop_if_empty(ctx, key);
    if added + updated > 0 {
        ctx.dirty((added + updated) as u64);
        ctx.notify(NOTIFY_ZSET, if f.incr { "zincr" } else { "zadd" }, key);
    }
    if nan {
        return ctx.r.error("ERR resulting score is not a number (NaN)");
    }
    match (f.incr, last) {
        (true, Some(s)) => ctx.r.double(s),
        (true, None) => ctx.r.null(),
        _ => ctx.r.int(if f.ch { added + updated } else { added }),
    }
}

fn zadd(ctx: &mut Ctx, argv: &Argv) {
    let (f, at) = parse_add_flags(argv);
    zadd_generic(ctx, argv, f, at);
}

fn zincrby(ctx: &mut Ctx, argv: &Argv) {
    zadd_generic(ctx, argv, AddFlags { incr: true, ..Default::default() }, 2);
}

// ------------------------------------------------------------ simple reads

fn zrem(ctx: &mut Ctx, argv: &Argv) {
    let key = argv.get(1);
    let n = match write_zset(ctx, key) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => 0,
        Ok(Some(z)) => argv.iter_from(2).filter(|m| z.remove(m)).count(),
    };
    if n > 0 {
        removed(ctx, key, "zrem");
        ctx.dirty(n as u64);
    }
    ctx.r.int(n as i64);
}

fn zcard(ctx: &mut Ctx, argv: &Argv) {
    match read_zset(ctx, argv.get(1)) {
        Err(e) => ctx.r.error(e.message()),
        Ok(z) => {
            let n = z.map_or(0, |z| z.len());
            ctx.r.int(n as i64)
        }
    }
}

fn zscore(ctx: &mut Ctx, argv: &Argv) {
    match read_zset(ctx, argv.get(1)).map(|z| z.and_then(|z| z.score(argv.get(2)))) {
        Err(e) => ctx.r.error(e.message()),
        Ok(Some(s)) => ctx.r.double(s),
        Ok(None) => ctx.r.null(),
    }
}

fn zmscore(ctx: &mut Ctx, argv: &Argv) {
    let scores: Vec<Option<f64>> = match read_zset(ctx, argv.get(1)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(z) => argv.iter_from(2).map(|m| z.as_ref().and_then(|z| z.score(m))).collect(),
    };
    ctx.r.array(scores.len());
    for s in scores {
        match s {
            Some(s) => ctx.r.double(s),
            None => ctx.r.null(),
        }
    }
}

fn rank_generic(ctx: &mut Ctx, argv: &Argv, rev: bool) {
    let found = match read_zset(ctx, argv.get(1)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(z) => z.and_then(|z| z.rank(argv.get(2)).map(|(r, _)| if rev { z.len() - 1 - r } else { r })),
    };
    match found {
        Some(r) => ctx.r.int(r as i64),
        None => ctx.r.null(),
    }
}

fn zrank(ctx: &mut Ctx, argv: &Argv) {
    rank_generic(ctx, argv, false);
}
fn zrevrank(ctx: &mut Ctx, argv: &Argv) {
    rank_generic(ctx, argv, true);
}

// ------------------------------------------------------------ ZRANDMEMBER

fn zrandmember(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 4 || (argv.len() == 4 && !argv.is(3, "withscores")) {
        return ctx.syntax_error();
    }
    let withscores = argv.len() == 4;
    let count = if argv.len() >= 3 {
        match parse_i64(argv.get(2)) {
            None => return ctx.not_integer(),
            Some(i64::MIN) => {
                return ctx.r.error(
                    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
                )
            }
            Some(n) if withscores && n < -(i64::MAX / 2) => return ctx.r.error("ERR value is out of range"),
            Some(n) => Some(n),
        }
    } else {
        None
    };
    let n = match read_zset(ctx, argv.get(1)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => return if count.is_some() { ctx.r.array(0) } else { ctx.r.null() },
        Ok(Some(z)) => z.len(),
    };
    let picks = random_picks(ctx, n, count);
    let z = write_zset(ctx, argv.get(1)).ok().flatten().expect("looked up above");
    let chosen: Vec<(f64, Vec<u8>)> = picks
        .iter()
        .map(|&i| {
            let it = z.get(i);
            (it.score, it.member().to_vec())
        })
        .collect();
    match count {
        None => ctx.r.bulk(&chosen[0].1),
        Some(_) => reply_items(&mut ctx.r, &chosen, withscores),
    }
}

/// Ranks to return: one for no count, `|c|` with repeats for c < 0, else
/// `min(c, n)` distinct ones.
fn random_picks(ctx: &mut Ctx, n: usize, count: Option<i64>) -> Vec<usize> {
    let ks = &mut ctx.srv.keyspace;
    let mut rnd = |bound: usize| (ks.next_random() % bound as u64) as usize;
    match count {
        None => vec![rnd(n)],
        Some(c) if c < 0 => (0..c.unsigned_abs()).map(|_| rnd(n)).collect(),
        Some(c) => {
            let want = (c as u64).min(n as u64) as usize;
            if want * 2 < n {
                let mut seen = std::collections::HashSet::with_capacity(want);
                while seen.len() < want {
                    seen.insert(rnd(n));
                }
                return seen.into_iter().collect();
            }
            let mut idx: Vec<usize> = (0..n).collect();
            for i in 0..want {
                let j = i + rnd(n - i);
                idx.swap(i, j);
            }
            idx.truncate(want);
            idx
        }
    }
}

// ------------------------------------------------------------ ZSCAN

/// An order-preserving, never-zero cursor for a score (-0 counts as 0).
fn score_cursor(s: f64) -> u64 {
    let bits = if s == 0.0 { 0 } else { s.to_bits() };
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The score a cursor stands for (may be NaN for foreign cursors).
fn cursor_score(c: u64) -> f64 {
    f64::from_bits(if c >> 63 == 1 { c & !(1 << 63) } else { !c })
}

/// Ranks to return for a large-set ZSCAN call: from the first member with
/// the cursor's score on, `count` members extended to the end of a score.
fn scan_window(z: &ZSet, cursor: u64, count: usize) -> (usize, usize) {
    let n = z.len();
    let start = match cursor {
        0 => 0,
        c if cursor_score(c).is_nan() => {
            if c >> 63 == 1 {
                n
            } else {
                0
            }
        }
        c => {
            let s = cursor_score(c);
            z.count_before(|it| it.score < s)
        }
    };
    let mut end = start.saturating_add(count).min(n);
    if end > start && end < n {
        let last = z.get(end - 1).score;
        end = z.count_before(|it| it.score <= last);
    }
    (start, end)
}

/// ZSCAN. Listpack-encoded sets come back whole with cursor 0, as in Redis.
/// Large sets are walked in score order; the cursor is the next score to
/// visit (order-preserving bits), so removing or adding members between
/// calls never makes the scan skip a member present throughout. All
/// members sharing a score come back in one reply (COUNT is a hint).
fn zscan(ctx: &mut Ctx, argv: &Argv) {
    let Some(cursor) = parse_scan_cursor(argv.get(2)) else { return ctx.r.error("ERR invalid cursor") };
    let opts = parse_scan_opts(argv, 3, false);
    let z = match read_zset(ctx, argv.get(1)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => {
            ctx.r.array(2);
            ctx.r.bulk(b"0");
            return ctx.r.array(0);
        }
        Ok(Some(z)) => z,
    };
    let opts = match opts {
        Ok(o) => o,
        Err(e) => return ctx.r.error(e),
    };
    let (start, end) = match z {
        ZSet::Small(_) => (0, z.len()),
        ZSet::Big(_) => scan_window(z, cursor, opts.count),
    };
    let next = if end >= z.len() { 0 } else { score_cursor(z.get(end).score) };
    let items = z.range(start, end, false);
    let pattern = opts.pattern;
    let kept: Vec<&(f64, Vec<u8>)> =
        items.iter().filter(|(_, m)| pattern.as_ref().is_none_or(|p| glob_match(p, m, false))).collect();
    let r = &mut ctx.r;
    r.array(2);
    r.bulk(next.to_string().as_bytes());
    r.array(kept.len() * 2);
    let mut text = Vec::with_capacity(24);
    for (s, m) in kept {
        r.bulk(m);
        text.clear();
        numeric::format_double(&mut text, *s);
        r.bulk(&text);
    }
}
