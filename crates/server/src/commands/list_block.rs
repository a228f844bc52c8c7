//! Moving and multi-key list commands, blocking or not: LMOVE RPOPLPUSH
//! LMPOP BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP.
//!
//! Blocking forms reply at once when data is there; otherwise they call
//! `Ctx::block_on` and write nothing (the command is re-run when a write
//! touches one of its keys). Where blocking is not allowed (MULTI) they
//! reply as on timeout. On a re-run, keys of another type are skipped as if
//! empty: Redis 7.0 only wakes list waiters for list keys.
use super::list::{edited, fill, pop_event, pop_into_reply, push_event, reply_elem};
use crate::config::NOTIFY_LIST;
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::list::End;
use crate::engine::numeric::parse_i64;
use crate::server::blocking::{parse_timeout, TimeoutReply};
use crate::spec;

const SRC_DST: (i32, i32, i32) = (1, 2, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 8] = [
    spec!("lmove", 5, WRITE | DENYOOM, SRC_DST, lmove, "list", "6.2.0", "Pop an element from a list, push it to another list and return it", ["write", "list", "slow"]),
    spec!("rpoplpush", 3, WRITE | DENYOOM, SRC_DST, rpoplpush, "list", "1.2.0", "Remove the last element in a list, prepend it to another list and return it", ["write", "list", "slow"]),
    spec!("lmpop", -4, WRITE | MOVABLEKEYS, (0, 0, 0), lmpop, "list", "7.0.0", "Pop elements from a list", ["write", "list", "slow"]),
    spec!("blpop", -3, WRITE | NOSCRIPT | BLOCKING, (1, -2, 1), blpop, "list", "2.0.0", "Remove and get the first element in a list, or block until one is available", ["write", "list", "slow", "blocking"]),
    spec!("brpop", -3, WRITE | NOSCRIPT | BLOCKING, (1, -2, 1), brpop, "list", "2.0.0", "Remove and get the last element in a list, or block until one is available", ["write", "list", "slow", "blocking"]),
    spec!("blmove", 6, WRITE | DENYOOM | NOSCRIPT | BLOCKING, SRC_DST, blmove, "list", "6.2.0", "Pop an element from a list, push it to another list and return it; or block until one is available", ["write", "list", "slow", "blocking"]),
    spec!("brpoplpush", 4, WRITE | DENYOOM | NOSCRIPT | BLOCKING, SRC_DST, brpoplpush, "list", "2.2.0", "Pop an element from a list, push it to another list and return it; or block until one is available", ["write", "list", "slow", "blocking"]),
    spec!("blmpop", -5, WRITE | BLOCKING | MOVABLEKEYS, (0, 0, 0), blmpop, "list", "7.0.0", "Pop elements from a list, or block until one is available", ["write", "list", "slow", "blocking"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

/// True while the event loop re-runs this client's blocked command.
fn is_rerun(ctx: &Ctx) -> bool {
    matches!(ctx.srv.blocking.rerun, Some((cid, _)) if cid == ctx.cid)
}

/// LEFT / RIGHT, case-insensitively.
fn parse_end(arg: &[u8]) -> Option<End> {
    if arg.eq_ignore_ascii_case(b"left") {
        Some(End::Head)
    } else if arg.eq_ignore_ascii_case(b"right") {
        Some(End::Tail)
    } else {
        None
    }
}

/// Index of the first key holding a non-empty list. Err(()) after a
/// WRONGTYPE reply (not on re-runs, which skip other types).
fn first_ready(ctx: &mut Ctx, keys: &[&[u8]]) -> Result<Option<usize>, ()> {
    let (rerun, now) = (is_rerun(ctx), ctx.now);
    let (db, r) = ctx.db_reply();
    for (i, k) in keys.iter().enumerate() {
        match db.get_list(k, now) {
            Err(_) if rerun => {}
            Err(e) => {
                r.error(e.message());
                return Err(());
            }
            Ok(Some(l)) if !l.is_empty() => return Ok(Some(i)),
            Ok(_) => {}
        }
    }
    Ok(None)
}

/// Block on `keys`, or reply `kind` at once where blocking is not allowed.
/// Redis 7.0 times every list waiter out with a null array (even BLMOVE,
/// whose immediate no-data reply is a null bulk).
fn block_or_timeout(ctx: &mut Ctx, keys: &[&[u8]], deadline: Option<i64>, kind: TimeoutReply, argv: &Argv) {
    if !ctx.block_on(keys, deadline, TimeoutReply::NullArray, argv) {
        match kind {
            TimeoutReply::NullArray => ctx.r.null_array(),
            TimeoutReply::Null => ctx.r.null(),
            TimeoutReply::Zero => ctx.r.int(0),
        }
    }
}

// ------------------------------------------------------------ LMOVE family

/// Move one element from `src` to `dst` and reply it. Ok(false) (nothing
/// written) if `src` has no list; Err(()) after an error reply.
fn move_one(ctx: &mut Ctx, argv: &Argv, from: End, to: End) -> Result<bool, ()> {
    let (src, dst) = (argv.get(1), argv.get(2));
    let (fill, now, rerun) = (fill(ctx), ctx.now, is_rerun(ctx));
    let (db, r) = ctx.db_reply();
    // Stored lists are never empty.
    match db.get_list(src, now) {
        Err(_) if rerun => return Ok(false),
        Ok(None) => return Ok(false),
        Err(e) => {
            r.error(e.message());
            return Err(());
        }
        Ok(Some(_)) => {}
    }
    if let Err(e) = db.get_list(dst, now) {
        r.error(e.message());
        return Err(());
    }
    let v = db.get_list(src, now).ok().flatten().and_then(|l| l.pop(from)).expect("checked non-empty");
    db.list_or_create(dst, now).expect("checked type").push(to, &v, fill);
    r.bulk(&v);
    ctx.dirty(2);
    // Redis reports the push before the pop.
    ctx.notify(NOTIFY_LIST, push_event(to), dst);
    edited(ctx, src, pop_event(from));
    // BLMOVE / BRPOPLPUSH replay as their non-blocking form, as in Redis
    // 7.0 (the RPOPLPUSH spelling kept).
    let name = argv.get(0);
    if name.eq_ignore_ascii_case(b"rpoplpush") || name.eq_ignore_ascii_case(b"brpoplpush") {
        ctx.replicate_as(&[b"RPOPLPUSH", src, dst]);
    } else {
        ctx.replicate_as(&[b"LMOVE", src, dst, end_word(from), end_word(to)]);
    }
    Ok(true)
}

/// LEFT / RIGHT, as LMOVE spells them.
fn end_word(end: End) -> &'static [u8] {
    match end {
        End::Head => b"LEFT",
        End::Tail => b"RIGHT",
    }
}

/// LPOP / RPOP, the non-blocking pop a served blocking pop replays as.
fn pop_word(end: End) -> &'static [u8] {
    match end {
        End::Head => b"LPOP",
        End::Tail => b"RPOP",
    }
}

fn lmove_generic(ctx: &mut Ctx, argv: &Argv, from: End, to: End) {
    if let Ok(false) = move_one(ctx, argv, from, to) {
        ctx.r.null();
    }
}

fn lmove(ctx: &mut Ctx, argv: &Argv) {
    match (parse_end(argv.get(3)), parse_end(argv.get(4))) {
        (Some(from), Some(to)) => lmove_generic(ctx, argv, from, to),
        _ => ctx.syntax_error(),
    }
}

fn rpoplpush(ctx: &mut Ctx, argv: &Argv) {
    lmove_generic(ctx, argv, End::Tail, End::Head)
}

fn blmove_generic(ctx: &mut Ctx, argv: &Argv, from: End, to: End) {
    let deadline = match parse_timeout(argv.get(argv.len() - 1), ctx.now) {
        Ok(d) => d,
        Err(msg) => return ctx.r.error(msg),
    };
    let src = argv.get(1);
    if let Ok(false) = move_one(ctx, argv, from, to) {
        block_or_timeout(ctx, &[src], deadline, TimeoutReply::Null, argv);
    }
}

fn blmove(ctx: &mut Ctx, argv: &Argv) {
    match (parse_end(argv.get(3)), parse_end(argv.get(4))) {
        (Some(from), Some(to)) => blmove_generic(ctx, argv, from, to),
        _ => ctx.syntax_error(),
    }
}

fn brpoplpush(ctx: &mut Ctx, argv: &Argv) {
    blmove_generic(ctx, argv, End::Tail, End::Head)
}

// ------------------------------------------------------------ BLPOP / BRPOP

fn bpop(ctx: &mut Ctx, argv: &Argv, end: End) {
    let deadline = match parse_timeout(argv.get(argv.len() - 1), ctx.now) {
        Ok(d) => d,
        Err(msg) => return ctx.r.error(msg),
    };
    let keys: Vec<&[u8]> = (1..argv.len() - 1).map(|i| argv.get(i)).collect();
    match first_ready(ctx, &keys) {
        Err(()) => {}
        Ok(Some(i)) => {
            let (key, now) = (keys[i], ctx.now);
            let (db, r) = ctx.db_reply();
            let list = db.get_list(key, now).ok().flatten().expect("ready list");
            r.array(2);
            r.bulk(key);
            reply_elem(r, list.peek(end).expect("non-empty"));
            list.discard(end);
            edited(ctx, key, pop_event(end));
            ctx.dirty(1);
            ctx.modified(key);
            ctx.replicate_as(&[pop_word(end), key]);
        }
        Ok(None) => block_or_timeout(ctx, &keys, deadline, TimeoutReply::NullArray, argv),
    }
}

fn blpop(ctx: &mut Ctx, argv: &Argv) {
    bpop(ctx, argv, End::Head)
}
fn brpop(ctx: &mut Ctx, argv: &Argv) {
    bpop(ctx, argv, End::Tail)
}

// ------------------------------------------------------------ LMPOP / BLMPOP

struct Mpop<'a> {
    keys: Vec<&'a [u8]>,
    end: End,
    count: usize,
}

/// Parse `numkeys key... LEFT|RIGHT [COUNT n]` starting at `at`, with
/// Redis's checks in Redis's order.
fn parse_mpop<'a>(ctx: &mut Ctx, argv: &Argv<'a>, at: usize) -> Option<Mpop<'a>> {
    let Some(numkeys) = parse_i64(argv.get(at)).filter(|&n| n > 0) else {
        ctx.r.error("ERR numkeys should be greater than 0");
        return None;
    };
    let where_idx = (numkeys as usize).saturating_add(at + 1);
    let Some(end) = (where_idx < argv.len()).then(|| parse_end(argv.get(where_idx))).flatten() else {
        ctx.syntax_error();
        return None;
    };
    let mut count = None;
    let mut j = where_idx + 1;
    while j < argv.len() {
        if count.is_none() && argv.is(j, "count") && j + 1 < argv.len() {
            let Some(c) = parse_i64(argv.get(j + 1)).filter(|&c| c > 0) else {
                ctx.r.error("ERR count should be greater than 0");
                return None;
            };
            count = Some(c as usize);
            j += 2;
        } else {
            ctx.syntax_error();
            return None;
        }
    }
    let keys = (at + 1..where_idx).map(|i| argv.get(i)).collect();
    Some(Mpop { keys, end, count: count.unwrap_or(1) })
}

/// Pop from the first ready key and reply `[key, [elements]]`. Ok(false)
/// if no key is ready (nothing written); Err(()) after an error reply.
fn mpop_ready(ctx: &mut Ctx, m: &Mpop) -> Result<bool, ()> {
    let Some(i) = first_ready(ctx, &m.keys)? else { return Ok(false) };
    ctx.r.array(2);
    ctx.r.bulk(m.keys[i]);
    let n = pop_into_reply(ctx, m.keys[i], m.end, m.count);
    ctx.dirty(n as u64);
    ctx.modified(m.keys[i]);
    if ctx.replicating() {
        ctx.replicate_as(&[pop_word(m.end), m.keys[i], n.to_string().as_bytes()]);
    }
    Ok(true)
}

fn lmpop(ctx: &mut Ctx, argv: &Argv) {
    let Some(m) = parse_mpop(ctx, argv, 1) else { return };
    if let Ok(false) = mpop_ready(ctx, &m) {
        ctx.r.null_array();
    }
}

fn blmpop(ctx: &mut Ctx, argv: &Argv) {
    let Some(m) = parse_mpop(ctx, argv, 2) else { return };
    let deadline = match parse_timeout(argv.get(1), ctx.now) {
        Ok(d) => d,
        Err(msg) => return ctx.r.error(msg),
    };
    if let Ok(false) = mpop_ready(ctx, &m) {
        block_or_timeout(ctx, &m.keys, deadline, TimeoutReply::NullArray, argv);
    }
}
