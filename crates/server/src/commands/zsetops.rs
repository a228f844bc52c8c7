//! Sorted-set algebra and pops: ZUNION ZINTER ZDIFF (and their STORE forms,
//! with WEIGHTS and AGGREGATE SUM|MIN|MAX), ZINTERCARD, ZPOPMIN ZPOPMAX ZMPOP
//! and the blocking BZPOPMIN BZPOPMAX BZMPOP.
//!
//! Redis also accepts plain sets as ZUNIONSTORE/ZINTER... inputs (score 1).
//! This branch has no set type, so any non-zset input is WRONGTYPE.
use std::collections::HashMap;

use crate::commands::zset::{limits, removed, reply_items, store_result, write_zset};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::numeric::{parse_f64, parse_i64};
use crate::engine::EngineError;
use crate::server::blocking::{parse_timeout, TimeoutReply};
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);
const NUMKEYS: (i32, i32, i32) = (0, 0, 0);

#[rustfmt::skip]
static SPECS: [CommandSpec; 13] = [
    spec!("zunion", -3, READONLY | MOVABLEKEYS, NUMKEYS, zunion, "sorted-set", "6.2.0", "Add multiple sorted sets", ["read", "sortedset", "slow"]),
    spec!("zinter", -3, READONLY | MOVABLEKEYS, NUMKEYS, zinter, "sorted-set", "6.2.0", "Intersect multiple sorted sets", ["read", "sortedset", "slow"]),
    spec!("zdiff", -3, READONLY | MOVABLEKEYS, NUMKEYS, zdiff, "sorted-set", "6.2.0", "Subtract multiple sorted sets", ["read", "sortedset", "slow"]),
    spec!("zunionstore", -4, WRITE | DENYOOM | MOVABLEKEYS, K1, zunionstore, "sorted-set", "2.0.0", "Add multiple sorted sets and store the resulting sorted set in a new key", ["write", "sortedset", "slow"]),
    spec!("zinterstore", -4, WRITE | DENYOOM | MOVABLEKEYS, K1, zinterstore, "sorted-set", "2.0.0", "Intersect multiple sorted sets and store the resulting sorted set in a new key", ["write", "sortedset", "slow"]),
    spec!("zdiffstore", -4, WRITE | DENYOOM | MOVABLEKEYS, K1, zdiffstore, "sorted-set", "6.2.0", "Subtract multiple sorted sets and store the resulting sorted set in a new key", ["write", "sortedset", "slow"]),
    spec!("zintercard", -3, READONLY | MOVABLEKEYS, NUMKEYS, zintercard, "sorted-set", "7.0.0", "Intersect multiple sorted sets and return the cardinality of the result", ["read", "sortedset", "slow"]),
    spec!("zpopmin", -2, WRITE | FAST, K1, zpopmin, "sorted-set", "5.0.0", "Remove and return members with the lowest scores in a sorted set", ["write", "sortedset", "fast"]),
    spec!("zpopmax", -2, WRITE | FAST, K1, zpopmax, "sorted-set", "5.0.0", "Remove and return members with the highest scores in a sorted set", ["write", "sortedset", "fast"]),
    spec!("zmpop", -4, WRITE | MOVABLEKEYS, NUMKEYS, zmpop, "sorted-set", "7.0.0", "Remove and return members with scores in a sorted set", ["write", "sortedset", "slow"]),
    spec!("bzpopmin", -3, WRITE | NOSCRIPT | BLOCKING | FAST, (1, -2, 1), bzpopmin, "sorted-set", "5.0.0", "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", ["write", "sortedset", "fast", "blocking"]),
    spec!("bzpopmax", -3, WRITE | NOSCRIPT | BLOCKING | FAST, (1, -2, 1), bzpopmax, "sorted-set", "5.0.0", "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", ["write", "sortedset", "fast", "blocking"]),
    spec!("bzmpop", -5, WRITE | BLOCKING | MOVABLEKEYS, NUMKEYS, bzmpop, "sorted-set", "7.0.0", "Remove and return members with scores in a sorted set or block until one is available", ["write", "sortedset", "slow", "blocking"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy)]
enum Agg {
    Sum,
    Min,
    Max,
}

fn aggregate(acc: &mut f64, v: f64, agg: Agg) {
    match agg {
        Agg::Sum => {
            *acc += v;
            if acc.is_nan() {
                *acc = 0.0;
            }
        }
        Agg::Min => *acc = acc.min(v),
        Agg::Max => *acc = acc.max(v),
    }
}

/// One input: its items (empty if missing) and weight.
struct Src {
    items: Vec<(f64, Vec<u8>)>,
    weight: f64,
}

/// Options after the keys.
struct SetOpts {
    agg: Agg,
    withscores: bool,
    limit: usize,
}

fn cmd_name(argv: &Argv) -> String {
    String::from_utf8_lossy(argv.get(0)).to_ascii_lowercase()
}

/// Parse `numkeys` at `nk`; Err is the reply line.
fn parse_numkeys(argv: &Argv, nk: usize) -> Result<usize, String> {
    let Some(n) = parse_i64(argv.get(nk)) else { return Err("ERR value is not an integer or out of range".into()) };
    if n < 1 {
        return Err(format!("ERR at least 1 input key is needed for '{}' command", cmd_name(argv)));
    }
    if n as u64 > (argv.len() - nk - 1) as u64 {
        return Err("ERR syntax error".into());
    }
    Ok(n as usize)
}

/// Look the input keys up (WRONGTYPE stops), copying their items. Plain
/// sets count as sorted sets whose scores are all 1, as in Redis. Every
/// form, STORE included, reads them with Redis's read lookup (counted, and
/// a `keymiss` event for an absent one).
fn load_sources(ctx: &mut Ctx, argv: &Argv, first: usize, n: usize) -> Result<Vec<Src>, EngineError> {
    (first..first + n)
        .map(|i| {
            let (now, key) = (ctx.now, argv.get(i));
            let srv = &mut *ctx.srv;
            let found = srv.keyspace.dbs[ctx.db].get(key, now);
            if found.is_some() {
                srv.stats.keyspace_hits += 1;
            } else {
                srv.stats.key_miss(ctx.db, key);
            }
            let items = match found.map(|e| &e.value) {
                None => Vec::new(),
                Some(crate::engine::Value::ZSet(z)) => z.items(),
                Some(crate::engine::Value::Set(set)) => set.members().into_iter().map(|m| (1.0, m)).collect(),
                Some(_) => return Err(EngineError::WrongType),
            };
            Ok(Src { items, weight: 1.0 })
        })
        .collect()
}

fn parse_set_opts(
    argv: &Argv,
    mut j: usize,
    srcs: &mut [Src],
    op: Op,
    store: bool,
    card: bool,
) -> Result<SetOpts, &'static str> {
    let mut o = SetOpts { agg: Agg::Sum, withscores: false, limit: 0 };
    while j < argv.len() {
        let left = argv.len() - j;
        if op != Op::Diff && !card && left > srcs.len() && argv.is(j, "weights") {
            for (k, s) in srcs.iter_mut().enumerate() {
                s.weight = parse_f64(argv.get(j + 1 + k)).ok_or("ERR weight value is not a float")?;
            }
            j += 1 + srcs.len();
        } else if op != Op::Diff && !card && left >= 2 && argv.is(j, "aggregate") {
            let w = argv.get(j + 1).to_ascii_lowercase();
            o.agg = match &w[..] {
                b"sum" => Agg::Sum,
                b"min" => Agg::Min,
                b"max" => Agg::Max,
                _ => return Err("ERR syntax error"),
            };
            j += 2;
        } else if !store && !card && argv.is(j, "withscores") {
            o.withscores = true;
            j += 1;
        } else if card && left >= 2 && argv.is(j, "limit") {
            // Redis gives the one message for a negative count and for a
            // word that is no integer at all.
            match parse_i64(argv.get(j + 1)) {
                Some(l) if l >= 0 => o.limit = l as usize,
                _ => return Err("ERR LIMIT can't be negative"),
            }
            j += 2;
        } else {
            return Err("ERR syntax error");
        }
    }
    Ok(o)
}

/// Compute the result as member → score.
fn compute(mut srcs: Vec<Src>, op: Op, agg: Agg) -> HashMap<Vec<u8>, f64> {
    let mut out: HashMap<Vec<u8>, f64> = HashMap::new();
    if op != Op::Diff {
        srcs.sort_by_key(|s| s.items.len());
    }
    match op {
        Op::Union => {
            for s in &srcs {
                for (sc, m) in &s.items {
                    let v = weighted(*sc, s.weight);
                    match out.get_mut(m) {
                        Some(acc) => aggregate(acc, v, agg),
                        None => {
                            out.insert(m.clone(), v);
                        }
                    }
                }
            }
        }
        Op::Inter => {
            let maps: Vec<HashMap<&[u8], f64>> =
                srcs[1..].iter().map(|s| s.items.iter().map(|(sc, m)| (&m[..], *sc)).collect()).collect();
            'items: for (sc, m) in &srcs[0].items {
                let mut acc = weighted(*sc, srcs[0].weight);
                for (k, map) in maps.iter().enumerate() {
                    let Some(&o) = map.get(&m[..]) else { continue 'items };
                    // Only the first input's product is NaN-checked, as in Redis.
                    aggregate(&mut acc, o * srcs[k + 1].weight, agg);
                }
                out.insert(m.clone(), acc);
            }
        }
        Op::Diff => {
            out = srcs[0].items.iter().map(|(s, m)| (m.clone(), *s)).collect();
            for s in &srcs[1..] {
                for (_, m) in &s.items {
                    out.remove(m);
                }
            }
        }
    }
    out
}

fn weighted(score: f64, w: f64) -> f64 {
    let v = score * w;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

fn sorted(map: HashMap<Vec<u8>, f64>) -> Vec<(f64, Vec<u8>)> {
    let mut v: Vec<(f64, Vec<u8>)> = map.into_iter().map(|(m, s)| (s, m)).collect();
    v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal).then_with(|| a.1.cmp(&b.1)));
    v
}

fn setop_generic(ctx: &mut Ctx, argv: &Argv, op: Op, store: bool) {
    let nk = if store { 2 } else { 1 };
    let n = match parse_numkeys(argv, nk) {
        Ok(n) => n,
        Err(e) => return ctx.r.error(&e),
    };
    let mut srcs = match load_sources(ctx, argv, nk + 1, n) {
        Ok(s) => s,
        Err(e) => return ctx.r.error(e.message()),
    };
    let o = match parse_set_opts(argv, nk + 1 + n, &mut srcs, op, store, false) {
        Ok(o) => o,
        Err(e) => return ctx.r.error(e),
    };
    let items = sorted(compute(srcs, op, o.agg));
    if store {
        let z = crate::commands::zset::zset_from_sorted(&items, limits(ctx));
        let event = match op {
            Op::Union => "zunionstore",
            Op::Inter => "zinterstore",
            Op::Diff => "zdiffstore",
        };
        store_result(ctx, argv.get(1), z, event);
    } else {
        reply_items(&mut ctx.r, &items, o.withscores);
    }
}

fn zunion(ctx: &mut Ctx, argv: &Argv) {
    setop_generic(ctx, argv, Op::Union, false);
}
fn zinter(ctx: &mut Ctx, argv: &Argv) {
    setop_generic(ctx, argv, Op::Inter, false);
}
fn zdiff(ctx: &mut Ctx, argv: &Argv) {
    setop_generic(ctx, argv, Op::Diff, false);
}
fn zunionstore(ctx: &mut Ctx, argv: &Argv) {
    setop_generic(ctx, argv, Op::Union, true);
}
fn zinterstore(ctx: &mut Ctx, argv: &Argv) {
    setop_generic(ctx, argv, Op::Inter, true);
}
fn zdiffstore(ctx: &mut Ctx, argv: &Argv) {
    setop_generic(ctx, argv, Op::Diff, true);
}

fn zintercard(ctx: &mut Ctx, argv: &Argv) {
    let n = match parse_numkeys(argv, 1) {
        Ok(n) => n,
        Err(e) => return ctx.r.error(&e),
    };
    let mut srcs = match load_sources(ctx, argv, 2, n) {
        Ok(s) => s,
        Err(e) => return ctx.r.error(e.message()),
    };
    let o = match parse_set_opts(argv, 2 + n, &mut srcs, Op::Inter, false, true) {
        Ok(o) => o,
        Err(e) => return ctx.r.error(e),
    };
    let card = compute(srcs, Op::Inter, Agg::Sum).len();
    let card = if o.limit > 0 { card.min(o.limit) } else { card };
    ctx.r.int(card as i64);
}

// ------------------------------------------------------------ pops

/// Pop up to `count` items from the low (or high, `max`) end of `key`.
/// The caller has checked the key holds a non-empty sorted set.
fn pop_items(ctx: &mut Ctx, key: &[u8], count: usize, max: bool) -> Vec<(f64, Vec<u8>)> {
    let z = write_zset(ctx, key).ok().flatten().expect("checked by caller");
    let n = z.len();
    let take = count.min(n);
    let items = if max { z.range(n - take, n, true) } else { z.range(0, take, false) };
    if max {
        z.remove_range(n - take, n);
    } else {
        z.remove_range(0, take);
    }
    removed(ctx, key, if max { "zpopmax" } else { "zpopmin" });
    ctx.dirty(take as u64);
    if ctx.replicating() {
        // One form for ZPOPMIN/ZMPOP/BZPOPMIN/BZMPOP: blocking pops replay
        // as their non-blocking form.
        let cmd: &[u8] = if max { b"ZPOPMAX" } else { b"ZPOPMIN" };
        ctx.replicate_as(&[cmd, key, take.to_string().as_bytes()]);
    }
    items
}

/// ZPOPMIN/ZPOPMAX key [count].
fn zpop_generic(ctx: &mut Ctx, argv: &Argv, max: bool) {
    if argv.len() > 3 {
        return ctx.syntax_error();
    }
    let count = if argv.len() == 3 {
        match parse_i64(argv.get(2)) {
            None => return ctx.not_integer(),
            Some(c) if c < 0 => return ctx.r.error("ERR value is out of range, must be positive"),
            Some(c) => Some(c as usize),
        }
    } else {
        None
    };
    let key = argv.get(1);
    match write_zset(ctx, key) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => return ctx.r.array(0),
        Ok(Some(_)) if count == Some(0) => return ctx.r.array(0),
        Ok(Some(_)) => {}
    }
    let items = pop_items(ctx, key, count.unwrap_or(1), max);
    let nested = count.is_some() && ctx.r.resp3();
    if nested {
        reply_items(&mut ctx.r, &items, true);
    } else {
        ctx.r.array(items.len() * 2);
        for (s, m) in &items {
            ctx.r.bulk(m);
            ctx.r.double(*s);
        }
    }
}

fn zpopmin(ctx: &mut Ctx, argv: &Argv) {
    zpop_generic(ctx, argv, false);
}
fn zpopmax(ctx: &mut Ctx, argv: &Argv) {
    zpop_generic(ctx, argv, true);
}

/// The first of `keys` holding a sorted set; Err on WRONGTYPE before one.
/// When a blocked client's command is re-run, keys of another type are
/// skipped instead: Redis leaves such a client blocked.
fn first_nonempty<'k>(ctx: &mut Ctx, keys: &[&'k [u8]]) -> Result<Option<&'k [u8]>, EngineError> {
    let rerun = matches!(ctx.srv.blocking.rerun, Some((c, _)) if c == ctx.cid);
    for k in keys {
        match write_zset(ctx, k) {
            Ok(Some(_)) => return Ok(Some(k)),
            Ok(None) => {}
            Err(_) if rerun => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// Parsed ZMPOP / BZMPOP arguments.
struct MPop<'a> {
    keys: Vec<&'a [u8]>,
    max: bool,
    count: usize,
}

fn parse_mpop<'a>(argv: &Argv<'a>, nk: usize) -> Result<MPop<'a>, &'static str> {
    let n = match parse_i64(argv.get(nk)) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err("ERR numkeys should be greater than 0"),
    };
    let where_idx = (nk as u64).saturating_add(n).saturating_add(1);
    if where_idx >= argv.len() as u64 {
        return Err("ERR syntax error");
    }
    let w = where_idx as usize;
    let max = if argv.is(w, "min") {
        false
    } else if argv.is(w, "max") {
        true
    } else {
        return Err("ERR syntax error");
    };
    let mut count = None;
    let mut j = w + 1;
    while j < argv.len() {
        if count.is_none() && argv.is(j, "count") && j + 1 < argv.len() {
            match parse_i64(argv.get(j + 1)) {
                Some(c) if c >= 1 => count = Some(c as usize),
                _ => return Err("ERR count should be greater than 0"),
            }
            j += 2;
        } else {
            return Err("ERR syntax error");
        }
    }
    Ok(MPop { keys: argv.iter_from(nk + 1).take(n as usize).collect(), max, count: count.unwrap_or(1) })
}

/// Pop from `key` and reply `[key, [[member, score], ...]]`.
fn reply_mpop(ctx: &mut Ctx, key: &[u8], count: usize, max: bool) {
    let items = pop_items(ctx, key, count, max);
    ctx.modified(key);
    ctx.r.array(2);
    ctx.r.bulk(key);
    ctx.r.array(items.len());
    for (s, m) in &items {
        ctx.r.array(2);
        ctx.r.bulk(m);
        ctx.r.double(*s);
    }
}

fn zmpop(ctx: &mut Ctx, argv: &Argv) {
    let p = match parse_mpop(argv, 1) {
        Ok(p) => p,
        Err(e) => return ctx.r.error(e),
    };
    match first_nonempty(ctx, &p.keys) {
        Err(e) => ctx.r.error(e.message()),
        Ok(None) => ctx.r.null_array(),
        Ok(Some(k)) => reply_mpop(ctx, k, p.count, p.max),
    }
}

fn bzpop_generic(ctx: &mut Ctx, argv: &Argv, max: bool) {
    let deadline = match parse_timeout(argv.get(argv.len() - 1), ctx.now) {
        Ok(d) => d,
        Err(e) => return ctx.r.error(e),
    };
    let keys: Vec<&[u8]> = argv.iter_from(1).take(argv.len() - 2).collect();
    match first_nonempty(ctx, &keys) {
        Err(e) => ctx.r.error(e.message()),
        Ok(Some(k)) => {
            let items = pop_items(ctx, k, 1, max);
            ctx.modified(k);
            ctx.r.array(3);
            ctx.r.bulk(k);
            ctx.r.bulk(&items[0].1);
            ctx.r.double(items[0].0);
        }
        Ok(None) => {
            if !ctx.block_on(&keys, deadline, TimeoutReply::NullArray, argv) {
                ctx.r.null_array();
            }
        }
    }
}

fn bzpopmin(ctx: &mut Ctx, argv: &Argv) {
    bzpop_generic(ctx, argv, false);
}
fn bzpopmax(ctx: &mut Ctx, argv: &Argv) {
    bzpop_generic(ctx, argv, true);
}

fn bzmpop(ctx: &mut Ctx, argv: &Argv) {
    let p = match parse_mpop(argv, 2) {
        Ok(p) => p,
        Err(e) => return ctx.r.error(e),
    };
    let deadline = match parse_timeout(argv.get(1), ctx.now) {
        Ok(d) => d,
        Err(e) => return ctx.r.error(e),
    };
    match first_nonempty(ctx, &p.keys) {
        Err(e) => ctx.r.error(e.message()),
        Ok(Some(k)) => reply_mpop(ctx, k, p.count, p.max),
        Ok(None) => {
            if !ctx.block_on(&p.keys, deadline, TimeoutReply::NullArray, argv) {
                ctx.r.null_array();
            }
        }
    }
}
