//! Sorted-set range commands: ZRANGE (BYSCORE BYLEX REV LIMIT WITHSCORES)
//! and its older forms ZREVRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX
//! ZREVRANGEBYLEX, ZRANGESTORE, ZCOUNT ZLEXCOUNT and ZREMRANGEBYRANK /
//! BYSCORE / BYLEX. Every range becomes a half-open rank interval found by
//! binary search over the order, so counting is O(log n).
//!
//! Lex ranges assume all members share one score (as Redis documents); with
//! mixed scores the answer is defined by our search, not Redis's scan.
use crate::commands::zset::{limits, read_zset, removed, reply_items, store_result, write_zset, zset_from_sorted};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::numeric::parse_i64;
use crate::engine::zset::ZSet;
use crate::engine::ztree::Item;
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 12] = [
    spec!("zrange", -4, READONLY, K1, zrange, "sorted-set", "1.2.0", "Return a range of members in a sorted set", ["read", "sortedset", "slow"]),
    spec!("zrangestore", -5, WRITE | DENYOOM, (1, 2, 1), zrangestore, "sorted-set", "6.2.0", "Store a range of members from sorted set into another key", ["write", "sortedset", "slow"]),
    spec!("zrevrange", -4, READONLY, K1, zrevrange, "sorted-set", "1.2.0", "Return a range of members in a sorted set, by index, with scores ordered from high to low", ["read", "sortedset", "slow"]),
    spec!("zrangebyscore", -4, READONLY, K1, zrangebyscore, "sorted-set", "1.0.5", "Return a range of members in a sorted set, by score", ["read", "sortedset", "slow"]),
    spec!("zrevrangebyscore", -4, READONLY, K1, zrevrangebyscore, "sorted-set", "2.2.0", "Return a range of members in a sorted set, by score, with scores ordered from high to low", ["read", "sortedset", "slow"]),
    spec!("zrangebylex", -4, READONLY, K1, zrangebylex, "sorted-set", "2.8.9", "Return a range of members in a sorted set, by lexicographical range", ["read", "sortedset", "slow"]),
    spec!("zrevrangebylex", -4, READONLY, K1, zrevrangebylex, "sorted-set", "2.8.9", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", ["read", "sortedset", "slow"]),
    spec!("zcount", 4, READONLY | FAST, K1, zcount, "sorted-set", "2.0.0", "Count the members in a sorted set with scores within the given values", ["read", "sortedset", "fast"]),
    spec!("zlexcount", 4, READONLY | FAST, K1, zlexcount, "sorted-set", "2.8.9", "Count the number of members in a sorted set between a given lexicographical range", ["read", "sortedset", "fast"]),
    spec!("zremrangebyrank", 4, WRITE, K1, zremrangebyrank, "sorted-set", "2.0.0", "Remove all members in a sorted set within the given indexes", ["write", "sortedset", "slow"]),
    spec!("zremrangebyscore", 4, WRITE, K1, zremrangebyscore, "sorted-set", "1.2.0", "Remove all members in a sorted set within the given scores", ["write", "sortedset", "slow"]),
    spec!("zremrangebylex", 4, WRITE, K1, zremrangebylex, "sorted-set", "2.8.9", "Remove all members in a sorted set between the given lexicographical range", ["write", "sortedset", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

const NOT_FLOAT_RANGE: &str = "ERR min or max is not a float";
const NOT_LEX_RANGE: &str = "ERR min or max not valid string range item";

// ------------------------------------------------------------ range parsing

/// One end of a score range: value and exclusivity.
#[derive(Clone, Copy, Debug)]
struct ScoreEnd(f64, bool);

/// Parse like Redis's `zslParseRange`: a leading `(` makes it exclusive,
/// the rest goes through C `strtod` (so ` 1`, `` and `1e400` are accepted).
fn parse_score_end(arg: &[u8]) -> Option<ScoreEnd> {
    let (excl, text) = match arg.first() {
        Some(b'(') => (true, &arg[1..]),
        _ => (false, arg),
    };
    let mut buf = Vec::with_capacity(text.len() + 1);
    buf.extend_from_slice(text);
    buf.push(0);
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: buf is NUL-terminated; strtod only reads it and sets `end`.
    let v = unsafe { libc::strtod(buf.as_ptr().cast(), &mut end) };
    // SAFETY: `end` points into buf (at most at its terminator).
    let rest = unsafe { *end };
    (rest == 0 && !v.is_nan()).then_some(ScoreEnd(v, excl))
}

/// One end of a lex range.
#[derive(Clone, Debug)]
enum LexEnd {
    Min,
    Max,
    Incl(Vec<u8>),
    Excl(Vec<u8>),
}

fn parse_lex_end(arg: &[u8]) -> Option<LexEnd> {
    match arg {
        [b'+'] => Some(LexEnd::Max),
        [b'-'] => Some(LexEnd::Min),
        [b'(', rest @ ..] => Some(LexEnd::Excl(rest.to_vec())),
        [b'[', rest @ ..] => Some(LexEnd::Incl(rest.to_vec())),
        _ => None,
    }
}

/// A parsed score or lex range.
enum Range {
    Score(ScoreEnd, ScoreEnd),
    Lex(LexEnd, LexEnd),
}

/// Whether `it` sorts entirely below the range's lower end.
fn below_min(r: &Range, it: &Item) -> bool {
    match r {
        Range::Score(ScoreEnd(v, ex), _) => it.score < *v || (*ex && it.score == *v),
        Range::Lex(lo, _) => match lo {
            LexEnd::Min => false,
            LexEnd::Max => true,
            LexEnd::Incl(m) => it.member() < &m[..],
            LexEnd::Excl(m) => it.member() <= &m[..],
        },
    }
}

/// Whether `it` is not above the range's upper end.
fn within_max(r: &Range, it: &Item) -> bool {
    match r {
        Range::Score(_, ScoreEnd(v, ex)) => it.score < *v || (!*ex && it.score == *v),
        Range::Lex(_, hi) => match hi {
            LexEnd::Min => false,
            LexEnd::Max => true,
            LexEnd::Incl(m) => it.member() <= &m[..],
            LexEnd::Excl(m) => it.member() < &m[..],
        },
    }
}

/// The rank interval a range covers.
fn rank_span(z: &ZSet, r: &Range) -> (usize, usize) {
    let lo = z.count_before(|it| below_min(r, it));
    let hi = z.count_before(|it| within_max(r, it));
    (lo, hi.max(lo))
}

/// Clamp Redis-style (possibly negative) start/stop ranks to a half-open interval.
fn rank_window(start: i64, stop: i64, len: usize) -> (usize, usize) {
    let len = len as i64;
    let mut s = if start < 0 { len + start } else { start };
    let e = if stop < 0 { len + stop } else { stop };
    s = s.max(0);
    if s > e || s >= len {
        return (0, 0);
    }
    (s as usize, (e.min(len - 1) + 1) as usize)
}

// ------------------------------------------------------------ ZRANGE family

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Auto,
    Rank,
    Score,
    Lex,
}

/// A parsed ZRANGE-family request.
struct Req {
    kind: Kind,
    rev: bool,
    withscores: bool,
    offset: i64,
    limit: i64,
}

/// Parse options from `argv[at + 3..]` (`at` = index of the source key)
/// with Redis's checks and messages.
fn parse_req(argv: &Argv, at: usize, kind: Kind, rev: Option<bool>, store: bool) -> Result<Req, &'static str> {
    let mut q = Req { kind, rev: rev.unwrap_or(false), withscores: false, offset: 0, limit: -1 };
    let mut rev_seen = rev.is_some();
    let mut j = at + 3;
    while j < argv.len() {
        let left = argv.len() - j - 1;
        if !store && argv.is(j, "withscores") {
            q.withscores = true;
        } else if argv.is(j, "limit") && left >= 2 {
            let (Some(o), Some(l)) = (parse_i64(argv.get(j + 1)), parse_i64(argv.get(j + 2))) else {
                return Err("ERR value is not an integer or out of range");
            };
            (q.offset, q.limit) = (o, l);
            j += 2;
        } else if !rev_seen && argv.is(j, "rev") {
            q.rev = true;
            rev_seen = true;
        } else if q.kind == Kind::Auto && argv.is(j, "bylex") {
            q.kind = Kind::Lex;
        } else if q.kind == Kind::Auto && argv.is(j, "byscore") {
            q.kind = Kind::Score;
        } else {
            return Err("ERR syntax error");
        }
        j += 1;
    }
    if q.kind == Kind::Auto {
        q.kind = Kind::Rank;
    }
    if q.limit != -1 && q.kind == Kind::Rank {
        return Err("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    }
    if q.withscores && q.kind == Kind::Lex {
        return Err("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    }
    Ok(q)
}

/// What to read: a rank window or a score/lex range.
enum Sel {
    Ranks(i64, i64),
    By(Range),
}

fn parse_sel(argv: &Argv, at: usize, q: &Req) -> Result<Sel, &'static str> {
    let (a, b) = (argv.get(at + 1), argv.get(at + 2));
    let (min, max) = if q.rev && q.kind != Kind::Rank { (b, a) } else { (a, b) };
    match q.kind {
        Kind::Score => match (parse_score_end(min), parse_score_end(max)) {
            (Some(lo), Some(hi)) => Ok(Sel::By(Range::Score(lo, hi))),
            _ => Err(NOT_FLOAT_RANGE),
        },
        Kind::Lex => match (parse_lex_end(min), parse_lex_end(max)) {
            (Some(lo), Some(hi)) => Ok(Sel::By(Range::Lex(lo, hi))),
            _ => Err(NOT_LEX_RANGE),
        },
        _ => match (parse_i64(min), parse_i64(max)) {
            (Some(s), Some(e)) => Ok(Sel::Ranks(s, e)),
            _ => Err("ERR value is not an integer or out of range"),
        },
    }
}

/// The selected items, in reply order.
fn select(z: &ZSet, q: &Req, sel: &Sel) -> Vec<(f64, Vec<u8>)> {
    let n = z.len();
    match sel {
        Sel::Ranks(s, e) => {
            let (lo, hi) = rank_window(*s, *e, n);
            if q.rev {
                z.range(n - hi, n - lo, true)
            } else {
                z.range(lo, hi, false)
            }
        }
        Sel::By(r) => {
            let (lo, hi) = rank_span(z, r);
            if q.offset < 0 || lo >= hi {
                return Vec::new();
            }
            let avail = hi - lo;
            let skip = (q.offset as u64).min(avail as u64) as usize;
            let take = if q.limit < 0 { avail - skip } else { (q.limit as u64).min((avail - skip) as u64) as usize };
            if q.rev {
                z.range(hi - skip - take, hi - skip, true)
            } else {
                z.range(lo + skip, lo + skip + take, false)
            }
        }
    }
}

/// ZRANGE and friends; `at` is the source key's index, `dst` set for ZRANGESTORE.
fn range_generic(ctx: &mut Ctx, argv: &Argv, at: usize, kind: Kind, rev: Option<bool>, dst: Option<&[u8]>) {
    let parsed = parse_req(argv, at, kind, rev, dst.is_some()).and_then(|q| parse_sel(argv, at, &q).map(|s| (q, s)));
    let (q, sel) = match parsed {
        Ok(p) => p,
        Err(e) => return ctx.r.error(e),
    };
    let items = match read_zset(ctx, argv.get(at)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => Vec::new(),
        Ok(Some(z)) => select(z, &q, &sel),
    };
    match dst {
        Some(dst) => {
            let mut sorted = items;
            if q.rev {
                sorted.reverse();
            }
            let z = zset_from_sorted(&sorted, limits(ctx));
            store_result(ctx, dst, z, "zrangestore");
        }
        None => reply_items(&mut ctx.r, &items, q.withscores),
    }
}

fn zrange(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, 1, Kind::Auto, None, None);
}
fn zrangestore(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, 2, Kind::Auto, None, Some(argv.get(1)));
}
fn zrevrange(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, 1, Kind::Rank, Some(true), None);
}
fn zrangebyscore(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, 1, Kind::Score, Some(false), None);
}
fn zrevrangebyscore(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, 1, Kind::Score, Some(true), None);
}
fn zrangebylex(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, 1, Kind::Lex, Some(false), None);
}
fn zrevrangebylex(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, 1, Kind::Lex, Some(true), None);
}

// ------------------------------------------------------------ counts and removal

fn count_generic(ctx: &mut Ctx, argv: &Argv, lex: bool) {
    let range = match parse_by(argv, lex) {
        Ok(r) => r,
        Err(e) => return ctx.r.error(e),
    };
    match read_zset(ctx, argv.get(1)) {
        Err(e) => ctx.r.error(e.message()),
        Ok(None) => ctx.r.int(0),
        Ok(Some(z)) => {
            let (lo, hi) = rank_span(z, &range);
            ctx.r.int((hi - lo) as i64)
        }
    }
}

fn parse_by(argv: &Argv, lex: bool) -> Result<Range, &'static str> {
    let (a, b) = (argv.get(2), argv.get(3));
    if lex {
        match (parse_lex_end(a), parse_lex_end(b)) {
            (Some(lo), Some(hi)) => Ok(Range::Lex(lo, hi)),
            _ => Err(NOT_LEX_RANGE),
        }
    } else {
        match (parse_score_end(a), parse_score_end(b)) {
            (Some(lo), Some(hi)) => Ok(Range::Score(lo, hi)),
            _ => Err(NOT_FLOAT_RANGE),
        }
    }
}

fn zcount(ctx: &mut Ctx, argv: &Argv) {
    count_generic(ctx, argv, false);
}
fn zlexcount(ctx: &mut Ctx, argv: &Argv) {
    count_generic(ctx, argv, true);
}

fn remrange_generic(ctx: &mut Ctx, argv: &Argv, sel: Sel, event: &str) {
    let key = argv.get(1);
    let n = match write_zset(ctx, key) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => 0,
        Ok(Some(z)) => {
            let (lo, hi) = match &sel {
                Sel::Ranks(s, e) => rank_window(*s, *e, z.len()),
                Sel::By(r) => rank_span(z, r),
            };
            z.remove_range(lo, hi)
        }
    };
    if n > 0 {
        removed(ctx, key, event);
        ctx.dirty(n as u64);
    }
    ctx.r.int(n as i64);
}

fn zremrangebyrank(ctx: &mut Ctx, argv: &Argv) {
    match (parse_i64(argv.get(2)), parse_i64(argv.get(3))) {
        (Some(s), Some(e)) => remrange_generic(ctx, argv, Sel::Ranks(s, e), "zremrangebyrank"),
        _ => ctx.not_integer(),
    }
}
fn zremrangebyscore(ctx: &mut Ctx, argv: &Argv) {
    match parse_by(argv, false) {
        Ok(r) => remrange_generic(ctx, argv, Sel::By(r), "zremrangebyscore"),
        Err(e) => ctx.r.error(e),
    }
}
fn zremrangebylex(ctx: &mut Ctx, argv: &Argv) {
    match parse_by(argv, true) {
        Ok(r) => remrange_generic(ctx, argv, Sel::By(r), "zremrangebylex"),
        Err(e) => ctx.r.error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_ends_follow_strtod() {
        assert!(matches!(parse_score_end(b"(1.5"), Some(ScoreEnd(v, true)) if v == 1.5));
        assert!(matches!(parse_score_end(b" 1"), Some(ScoreEnd(v, false)) if v == 1.0));
        assert!(matches!(parse_score_end(b""), Some(ScoreEnd(v, false)) if v == 0.0));
        assert!(matches!(parse_score_end(b"1e400"), Some(ScoreEnd(v, false)) if v.is_infinite()));
        assert!(matches!(parse_score_end(b"-inf"), Some(ScoreEnd(v, false)) if v == f64::NEG_INFINITY));
        assert!(parse_score_end(b"nan").is_none());
        assert!(parse_score_end(b"1x").is_none());
    }

    #[test]
    fn rank_windows_clamp_like_redis() {
        assert_eq!(rank_window(0, -1, 5), (0, 5));
        assert_eq!(rank_window(-100, 100, 5), (0, 5));
        assert_eq!(rank_window(3, 1, 5), (0, 0));
        assert_eq!(rank_window(5, 9, 5), (0, 0));
        assert_eq!(rank_window(-2, -1, 5), (3, 5));
    }
}
