//! List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LRANGE LINDEX
//! LSET LINSERT LREM LTRIM LPOS, with Redis 7.0's argument order, error
//! texts and null forms. The moving and blocking commands live in
//! `list_block.rs`; both share the helpers here.
use crate::config::{NOTIFY_GENERIC, NOTIFY_LIST};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::list::{Elem, End, Fill, List, Needle};
use crate::engine::numeric::parse_i64;
use crate::engine::EngineError;
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 14] = [
    spec!("lpush", -3, WRITE | DENYOOM | FAST, K1, lpush, "list", "1.0.0", "Prepend one or multiple elements to a list", ["write", "list", "fast"]),
    spec!("rpush", -3, WRITE | DENYOOM | FAST, K1, rpush, "list", "1.0.0", "Append one or multiple elements to a list", ["write", "list", "fast"]),
    spec!("lpushx", -3, WRITE | DENYOOM | FAST, K1, lpushx, "list", "2.2.0", "Prepend an element to a list, only if the list exists", ["write", "list", "fast"]),
    spec!("rpushx", -3, WRITE | DENYOOM | FAST, K1, rpushx, "list", "2.2.0", "Append an element to a list, only if the list exists", ["write", "list", "fast"]),
    spec!("lpop", -2, WRITE | FAST, K1, lpop, "list", "1.0.0", "Remove and get the first elements in a list", ["write", "list", "fast"]),
    spec!("rpop", -2, WRITE | FAST, K1, rpop, "list", "1.0.0", "Remove and get the last elements in a list", ["write", "list", "fast"]),
    spec!("llen", 2, READONLY | FAST, K1, llen, "list", "1.0.0", "Get the length of a list", ["read", "list", "fast"]),
    spec!("lrange", 4, READONLY, K1, lrange, "list", "1.0.0", "Get a range of elements from a list", ["read", "list", "slow"]),
    spec!("lindex", 3, READONLY, K1, lindex, "list", "1.0.0", "Get an element from a list by its index", ["read", "list", "slow"]),
    spec!("lset", 4, WRITE | DENYOOM, K1, lset, "list", "1.0.0", "Set the value of an element in a list by its index", ["write", "list", "slow"]),
    spec!("linsert", 5, WRITE | DENYOOM, K1, linsert, "list", "2.2.0", "Insert an element before or after another element in a list", ["write", "list", "slow"]),
    spec!("lrem", 4, WRITE, K1, lrem, "list", "1.0.0", "Remove elements from a list", ["write", "list", "slow"]),
    spec!("ltrim", 4, WRITE, K1, ltrim, "list", "1.0.0", "Trim a list to the specified range", ["write", "list", "slow"]),
    spec!("lpos", -3, READONLY, K1, lpos, "list", "6.0.6", "Return the index of matching elements on a list", ["read", "list", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

// ------------------------------------------------------------ shared helpers

/// The node size rule currently configured.
pub(crate) fn fill(ctx: &Ctx) -> Fill {
    Fill(ctx.srv.config.list_max_listpack_size)
}

/// Reply one stored element as a bulk string.
pub(crate) fn reply_elem(r: &mut Reply, e: Elem) {
    match e {
        Elem::Int(i) => r.bulk_int(i),
        Elem::Bytes(b) => r.bulk(b),
    }
}

/// Read lookup (counts a keyspace hit or miss, like `lookupKeyRead`); the
/// list comes with the reply writer so handlers can stream elements.
pub(crate) fn read_list<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> Result<Option<(&'c mut List, &'c mut Reply<'a>)>, EngineError> {
    let Ctx { srv, r, db, now, .. } = ctx;
    let found = srv.keyspace.dbs[*db].get_list(key, *now);
    match found {
        Ok(None) => srv.stats.key_miss(*db, key),
        _ => srv.stats.keyspace_hits += 1,
    }
    found.map(|o| o.map(|l| (l, r)))
}

/// Write lookup; replies WRONGTYPE and yields Err(()) for other types.
pub(crate) fn write_list<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> Result<Option<(&'c mut List, &'c mut Reply<'a>)>, ()> {
    let now = ctx.now;
    let (db, r) = ctx.db_reply();
    match db.get_list(key, now) {
        Err(e) => {
            r.error(e.message());
            Err(())
        }
        Ok(l) => Ok(l.map(|l| (l, r))),
    }
}

/// The event Redis names a push or pop at `end`.
pub(crate) fn push_event(end: End) -> &'static str {
    match end {
        End::Head => "lpush",
        End::Tail => "rpush",
    }
}
pub(crate) fn pop_event(end: End) -> &'static str {
    match end {
        End::Head => "lpop",
        End::Tail => "rpop",
    }
}

/// Finish an edit of the list at `key` that may have emptied it: delete it
/// then, and send `event` followed by `del` (Redis's order, whatever the
/// order of the work behind them).
pub(crate) fn edited(ctx: &mut Ctx, key: &[u8], event: &str) {
    let now = ctx.now;
    let db = ctx.dbm();
    db.drop_if_empty_list(key, now);
    let deleted = db.find(key).is_none();
    ctx.notify(NOTIFY_LIST, event, key);
    if deleted {
        ctx.notify(NOTIFY_GENERIC, "del", key);
    }
}

/// Pop up to `count` elements from `end` of the list at `key` (which must
/// exist), reply them as an array, delete the key if emptied (with the
/// events of that). Returns the number popped.
pub(crate) fn pop_into_reply(ctx: &mut Ctx, key: &[u8], end: End, count: usize) -> usize {
    let now = ctx.now;
    let (db, r) = ctx.db_reply();
    let Ok(Some(list)) = db.get_list(key, now) else { return 0 };
    let n = count.min(list.len());
    r.array(n);
    for _ in 0..n {
        if let Some(e) = list.peek(end) {
            reply_elem(r, e);
        }
        list.discard(end);
    }
    edited(ctx, key, pop_event(end));
    n
}

fn parse_long(ctx: &mut Ctx, arg: &[u8]) -> Option<i64> {
    let v = parse_i64(arg);
    if v.is_none() {
        ctx.not_integer();
    }
    v
}

/// Redis's `getPositiveLongFromObjectOrReply`: `msg` for non-integers too.
fn parse_non_negative(ctx: &mut Ctx, arg: &[u8], msg: &str) -> Option<i64> {
    match parse_i64(arg) {
        Some(v) if v >= 0 => Some(v),
        _ => {
            ctx.r.error(msg);
            None
        }
    }
}

/// LRANGE/LTRIM index normalization: the kept range `start..=end`, or None.
fn clamp_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 { (start + len).max(0) } else { start };
    let end = if end < 0 { end + len } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

// ------------------------------------------------------------ push / pop

fn push_generic(ctx: &mut Ctx, argv: &Argv, end: End, only_existing: bool) {
    let key = argv.get(1);
    let (fill, now) = (fill(ctx), ctx.now);
    let (db, r) = ctx.db_reply();
    let list = match db.get_list(key, now) {
        Err(e) => return r.error(e.message()),
        Ok(None) if only_existing => return r.int(0),
        Ok(Some(l)) => l,
        Ok(None) => db.list_or_create(key, now).expect("checked type"),
    };
    for v in argv.iter_from(2) {
        list.push(end, v, fill);
    }
    r.int(list.len() as i64);
    ctx.dirty(argv.len() as u64 - 2);
    ctx.notify(NOTIFY_LIST, push_event(end), key);
}

fn lpush(ctx: &mut Ctx, argv: &Argv) {
    push_generic(ctx, argv, End::Head, false)
}
fn rpush(ctx: &mut Ctx, argv: &Argv) {
    push_generic(ctx, argv, End::Tail, false)
}
fn lpushx(ctx: &mut Ctx, argv: &Argv) {
    push_generic(ctx, argv, End::Head, true)
}
fn rpushx(ctx: &mut Ctx, argv: &Argv) {
    push_generic(ctx, argv, End::Tail, true)
}

fn pop_generic(ctx: &mut Ctx, argv: &Argv, end: End) {
    if argv.len() > 3 {
        let name = String::from_utf8_lossy(argv.get(0)).to_ascii_lowercase();
        return ctx.r.error(&format!("ERR wrong number of arguments for '{name}' command"));
    }
    let count = if argv.len() == 3 {
        match parse_non_negative(ctx, argv.get(2), "ERR value is out of range, must be positive") {
            Some(c) => Some(c as usize),
            None => return,
        }
    } else {
        None
    };
    let key = argv.get(1);
    let (list, r) = match write_list(ctx, key) {
        Err(()) => return,
        Ok(None) if count.is_some() => return ctx.r.null_array(),
        Ok(None) => return ctx.r.null(),
        Ok(Some(found)) => found,
    };
    match count {
        None => {
            if let Some(e) = list.peek(end) {
                reply_elem(r, e);
            }
            list.discard(end);
            edited(ctx, key, pop_event(end));
            ctx.dirty(1);
        }
        Some(0) => r.array(0),
        Some(c) => {
            let n = pop_into_reply(ctx, key, end, c);
            ctx.dirty(n as u64);
        }
    }
}

fn lpop(ctx: &mut Ctx, argv: &Argv) {
    pop_generic(ctx, argv, End::Head)
}
fn rpop(ctx: &mut Ctx, argv: &Argv) {
    pop_generic(ctx, argv, End::Tail)
}

// ------------------------------------------------------------ reads

fn llen(ctx: &mut Ctx, argv: &Argv) {
    match read_list(ctx, argv.get(1)) {
        Err(e) => ctx.r.error(e.message()),
        Ok(None) => ctx.r.int(0),
        Ok(Some((l, r))) => r.int(l.len() as i64),
    }
}

fn lrange(ctx: &mut Ctx, argv: &Argv) {
    let Some(start) = parse_long(ctx, argv.get(2)) else { return };
    let Some(end) = parse_long(ctx, argv.get(3)) else { return };
    let (list, r) = match read_list(ctx, argv.get(1)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => return ctx.r.array(0),
        Ok(Some(found)) => found,
    };
    match clamp_range(start, end, list.len()) {
        None => r.array(0),
        Some((s, e)) => {
            r.array(e - s + 1);
            for el in list.iter_from(s).take(e - s + 1) {
                reply_elem(r, el);
            }
        }
    }
}

fn lindex(ctx: &mut Ctx, argv: &Argv) {
    let (list, r) = match read_list(ctx, argv.get(1)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => return ctx.r.null(),
        Ok(Some(found)) => found,
    };
    let Some(index) = parse_i64(argv.get(2)) else {
        return r.error("ERR value is not an integer or out of range");
    };
    let len = list.len() as i64;
    let i = if index < 0 { index + len } else { index };
    match (0..len).contains(&i).then(|| list.get(i as usize)).flatten() {
        Some(e) => reply_elem(r, e),
        None => r.null(),
    }
}

fn lpos(ctx: &mut Ctx, argv: &Argv) {
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0i64);
    let mut i = 3;
    while i < argv.len() {
        let more = i + 1 < argv.len();
        if argv.is(i, "rank") && more {
            let Some(r) = parse_long(ctx, argv.get(i + 1)) else { return };
            if r == 0 {
                return ctx.r.error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list");
            }
            rank = r;
        } else if argv.is(i, "count") && more {
            let Some(c) = parse_non_negative(ctx, argv.get(i + 1), "ERR COUNT can't be negative") else { return };
            count = Some(c);
        } else if argv.is(i, "maxlen") && more {
            let Some(m) = parse_non_negative(ctx, argv.get(i + 1), "ERR MAXLEN can't be negative") else { return };
            maxlen = m;
        } else {
            return ctx.syntax_error();
        }
        i += 2;
    }
    let (list, r) = match read_list(ctx, argv.get(1)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) if count.is_some() => return ctx.r.array(0),
        Ok(None) => return ctx.r.null(),
        Ok(Some(found)) => found,
    };
    let found = find_positions(list, Needle::new(argv.get(2)), rank, count, maxlen);
    match count {
        None => match found.first() {
            Some(&p) => r.int(p as i64),
            None => r.null(),
        },
        Some(_) => {
            r.array(found.len());
            for p in found {
                r.int(p as i64);
            }
        }
    }
}

/// LPOS's scan: matches from the `rank`-th on (negative: from the tail),
/// at most `count` of them (0 = all; None = just one), looking at no more
/// than `maxlen` elements (0 = all). Like Redis, a rank of i64::MIN stays
/// negative when flipped, so every match qualifies (and COUNT never stops
/// the scan).
fn find_positions(list: &List, needle: Needle, rank: i64, count: Option<i64>, maxlen: i64) -> Vec<usize> {
    let limit = if maxlen == 0 { usize::MAX } else { maxlen as usize };
    let from_tail = rank < 0;
    let rank = if from_tail { rank.wrapping_neg() } else { rank };
    let (mut out, mut matches, mut seen) = (Vec::new(), 0i64, 0usize);
    let mut visit = |index: usize, e: Elem| {
        if seen >= limit {
            return false;
        }
        seen += 1;
        if e.matches(&needle) {
            matches += 1;
            if matches >= rank {
                out.push(index);
                // Redis stops once `matches - rank + 1` reaches COUNT; that
                // wraps for a rank of i64::MIN, which then returns all.
                return match count {
                    None => false,
                    Some(0) => true,
                    Some(c) => matches.wrapping_sub(rank).wrapping_add(1) < c,
                };
            }
        }
        true
    };
    if from_tail {
        list.for_each_rev(&mut visit);
    } else {
        for (index, e) in list.iter().enumerate() {
            if !visit(index, e) {
                break;
            }
        }
    }
    out
}

// ------------------------------------------------------------ in-place edits

fn lset(ctx: &mut Ctx, argv: &Argv) {
    let (list, r) = match write_list(ctx, argv.get(1)) {
        Err(()) => return,
        Ok(None) => return ctx.r.error("ERR no such key"),
        Ok(Some(found)) => found,
    };
    let Some(index) = parse_i64(argv.get(2)) else {
        return r.error("ERR value is not an integer or out of range");
    };
    let len = list.len() as i64;
    let i = if index < 0 { index + len } else { index };
    if !(0..len).contains(&i) {
        return r.error("ERR index out of range");
    }
    list.set(i as usize, argv.get(3));
    r.ok();
    ctx.dirty(1);
    ctx.notify(NOTIFY_LIST, "lset", argv.get(1));
}

fn linsert(ctx: &mut Ctx, argv: &Argv) {
    let after = if argv.is(2, "after") {
        true
    } else if argv.is(2, "before") {
        false
    } else {
        return ctx.syntax_error();
    };
    let fill = fill(ctx);
    let (list, r) = match write_list(ctx, argv.get(1)) {
        Err(()) => return,
        Ok(None) => return ctx.r.int(0),
        Ok(Some(found)) => found,
    };
    if !list.insert(argv.get(3), after, argv.get(4), fill) {
        return r.int(-1);
    }
    r.int(list.len() as i64);
    ctx.dirty(1);
    ctx.notify(NOTIFY_LIST, "linsert", argv.get(1));
}

fn lrem(ctx: &mut Ctx, argv: &Argv) {
    let Some(count) = parse_long(ctx, argv.get(2)) else { return };
    let key = argv.get(1);
    let (list, r) = match write_list(ctx, key) {
        Err(()) => return,
        Ok(None) => return ctx.r.int(0),
        Ok(Some(found)) => found,
    };
    let removed = list.remove(argv.get(3), count);
    r.int(removed as i64);
    if removed > 0 {
        edited(ctx, key, "lrem");
        ctx.dirty(removed as u64);
    }
}

fn ltrim(ctx: &mut Ctx, argv: &Argv) {
    let Some(start) = parse_long(ctx, argv.get(2)) else { return };
    let Some(end) = parse_long(ctx, argv.get(3)) else { return };
    let key = argv.get(1);
    let (list, r) = match write_list(ctx, key) {
        Err(()) => return,
        Ok(None) => return ctx.r.ok(),
        Ok(Some(found)) => found,
    };
    let before = list.len();
    match clamp_range(start, end, before) {
        Some((s, e)) => list.trim(s, e),
        None => list.clear(),
    }
    let removed = before - list.len();
    r.ok();
    edited(ctx, key, "ltrim");
    ctx.dirty(removed as u64);
    // Redis signals the key even when LTRIM kept every element: a WATCH on
    // it is broken all the same.
    ctx.modified(key);
}
