//! Consumer groups: XGROUP (CREATE SETID DESTROY CREATECONSUMER
//! DELCONSUMER HELP), XACK, XPENDING, XCLAIM and XAUTOCLAIM, with Redis
//! 7.0.15's argument order, errors and replication.
//!
//! XCLAIM and XAUTOCLAIM never replay themselves (their idle arithmetic
//! depends on the clock): each entry they claim, or drop from the PEL
//! because it was deleted from the stream, replays as the idempotent
//! XCLAIM ... FORCE JUSTID that XREADGROUP uses too. Group bookkeeping
//! signals no key to WATCH or tracking, as in Redis; destroying a group
//! wakes the XREADGROUP readers blocked on it (they fail with NOGROUP).
use std::sync::Arc;

use super::stream::{
    bound_arg, c_str, id_arg, int_arg, no_such_group, read_stream, reply_entry, reply_id, write_stream,
};
use super::stream_read::xclaim_replay;
use crate::config::NOTIFY_STREAM;
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::numeric::parse_i64;
use crate::engine::stream::group::ENTRIES_READ_UNKNOWN;
use crate::engine::stream::{Group, Stream, StreamId};
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);
const K2: (i32, i32, i32) = (2, 2, 1);
const NONE: (i32, i32, i32) = (0, 0, 0);

#[rustfmt::skip]
static XGROUP_SUBS: [CommandSpec; 6] = [
    spec!("createconsumer", 5, WRITE | DENYOOM, K2, xgroup, "stream", "6.2.0", "Create a consumer in a consumer group.", ["write", "stream", "slow"]),
    spec!("delconsumer", 5, WRITE, K2, xgroup, "stream", "5.0.0", "Delete a consumer from a consumer group.", ["write", "stream", "slow"]),
    spec!("help", 2, LOADING | STALE, NONE, xgroup_help, "stream", "5.0.0", "Show helpful text about the different subcommands", ["stream", "slow"]),
    spec!("setid", -5, WRITE, K2, xgroup, "stream", "5.0.0", "Set a consumer group to an arbitrary last delivered ID value.", ["write", "stream", "slow"]),
    spec!("create", -5, WRITE | DENYOOM, K2, xgroup, "stream", "5.0.0", "Create a consumer group.", ["write", "stream", "slow"]),
    spec!("destroy", 4, WRITE, K2, xgroup, "stream", "5.0.0", "Destroy a consumer group.", ["write", "stream", "slow"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 5] = [
    CommandSpec { subcommands: &XGROUP_SUBS, ..spec!("xgroup", -2, 0, NONE, container, "stream", "5.0.0", "A container for consumer groups commands", ["slow"]) },
    spec!("xack", -4, WRITE | FAST, K1, xack, "stream", "5.0.0", "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", ["write", "stream", "fast"]),
    spec!("xpending", -3, READONLY, K1, xpending, "stream", "5.0.0", "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", ["read", "stream", "slow"]),
    spec!("xclaim", -6, WRITE | FAST, K1, xclaim, "stream", "5.0.0", "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", ["write", "stream", "fast"]),
    spec!("xautoclaim", -6, WRITE | FAST, K1, xautoclaim, "stream", "6.2.0", "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", ["write", "stream", "fast"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

fn container(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.error("ERR unknown subcommand. Try XGROUP HELP.");
}

// ------------------------------------------------------------ XGROUP

const XGROUP_HELP: &[&str] = &[
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

fn xgroup_help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help("XGROUP", XGROUP_HELP);
}

fn subcommand_syntax_error(ctx: &mut Ctx, argv: &Argv) {
    super::stream::subcommand_syntax_error(&mut ctx.r, "XGROUP", argv);
}

/// XGROUP's subcommands, after the shared option and key checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sub {
    Create,
    SetId,
    Destroy,
    CreateConsumer,
    DelConsumer,
}

/// MKSTREAM and ENTRIESREAD, parsed before anything is looked up (as
/// Redis reports their errors first).
fn xgroup_options(ctx: &mut Ctx, argv: &Argv, sub: Sub) -> Option<(bool, i64)> {
    let (mut mkstream, mut entries_read) = (false, ENTRIES_READ_UNKNOWN);
    let mut i = 5;
    while i < argv.len() {
        if sub == Sub::Create && argv.is(i, "mkstream") {
            mkstream = true;
            i += 1;
        } else if matches!(sub, Sub::Create | Sub::SetId) && argv.is(i, "entriesread") && i + 1 < argv.len() {
            entries_read = int_arg(ctx, argv.get(i + 1))?;
            if entries_read < 0 && entries_read != ENTRIES_READ_UNKNOWN {
                ctx.r.error("ERR value for ENTRIESREAD must be positive or -1");
                return None;
            }
            i += 2;
        } else {
            subcommand_syntax_error(ctx, argv);
            return None;
        }
    }
    Some((mkstream, entries_read))
}

fn xgroup(ctx: &mut Ctx, argv: &Argv) {
    let sub = match argv.get(1).to_ascii_lowercase().as_slice() {
        b"create" => Sub::Create,
        b"setid" => Sub::SetId,
        b"destroy" => Sub::Destroy,
        b"createconsumer" => Sub::CreateConsumer,
        _ => Sub::DelConsumer,
    };
    let Some((mkstream, entries_read)) = xgroup_options(ctx, argv, sub) else { return };
    let (key, gname) = (argv.get(2), argv.get(3));
    let exists = match write_stream(ctx, key) {
        Err(()) => return,
        Ok(found) => found.map(|(s, _)| s.groups.contains_key(gname)),
    };
    match exists {
        None if !mkstream => {
            return ctx.r.error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.");
        }
        Some(false) if !matches!(sub, Sub::Create | Sub::Destroy) => {
            return no_such_group(&mut ctx.r, key, gname);
        }
        _ => {}
    }
    let n = argv.len();
    match sub {
        Sub::Create if n <= 8 => xgroup_create(ctx, argv, entries_read),
        Sub::SetId if n == 5 || n == 7 => xgroup_setid(ctx, argv, entries_read),
        Sub::Destroy => xgroup_destroy(ctx, key, gname),
        Sub::CreateConsumer => xgroup_createconsumer(ctx, key, gname, argv.get(4)),
        Sub::DelConsumer => xgroup_delconsumer(ctx, key, gname, argv.get(4)),
        _ => subcommand_syntax_error(ctx, argv),
    }
}

fn xgroup_create(ctx: &mut Ctx, argv: &Argv, entries_read: i64) {
    let (key, gname, idarg) = (argv.get(2), argv.get(3), argv.get(4));
    let id = if idarg == b"$" {
        match write_stream(ctx, key) {
            Ok(Some((s, _))) => s.last_id,
            _ => StreamId::MIN,
        }
    } else {
        let Some(id) = id_arg(ctx, idarg, 0, true) else { return };
        id
    };
    let now = ctx.now;
    let created_stream = !matches!(write_stream(ctx, key), Ok(Some(_)));
    let s = ctx.dbm().stream_or_create(key, now).expect("type checked");
    if s.groups.contains_key(gname) {
        return ctx.r.error("BUSYGROUP Consumer Group name already exists");
    }
    s.groups.insert(gname.into(), Group::new(id, entries_read));
    ctx.r.ok();
    if created_stream {
        ctx.modified(key);
    } else {
        ctx.no_key_modified();
    }
    ctx.dirty(1);
    ctx.notify(NOTIFY_STREAM, "xgroup-create", key);
}

fn xgroup_setid(ctx: &mut Ctx, argv: &Argv, entries_read: i64) {
    let (key, gname, idarg) = (argv.get(2), argv.get(3), argv.get(4));
    let last = match write_stream(ctx, key) {
        Ok(Some((s, _))) => s.last_id,
        _ => return,
    };
    let id = if idarg == b"$" {
        last
    } else {
        let Some(id) = id_arg(ctx, idarg, 0, false) else { return };
        id
    };
    let Ok(Some((s, r))) = write_stream(ctx, key) else { return };
    let Some(g) = s.groups.get_mut(gname) else { return };
    g.last_id = id;
    g.entries_read = entries_read;
    r.ok();
    ctx.no_key_modified();
    ctx.dirty(1);
    ctx.notify(NOTIFY_STREAM, "xgroup-setid", key);
}

fn xgroup_destroy(ctx: &mut Ctx, key: &[u8], gname: &[u8]) {
    let Ok(Some((s, r))) = write_stream(ctx, key) else { return };
    if s.groups.remove(gname).is_none() {
        return r.int(0);
    }
    r.int(1);
    ctx.no_key_modified();
    ctx.dirty(1);
    ctx.notify(NOTIFY_STREAM, "xgroup-destroy", key);
    let db = ctx.db;
    ctx.srv.blocking.signal(db, key);
}

fn xgroup_createconsumer(ctx: &mut Ctx, key: &[u8], gname: &[u8], cname: &[u8]) {
    let now = ctx.now;
    let Ok(Some((s, r))) = write_stream(ctx, key) else { return };
    let Some(g) = s.groups.get_mut(gname) else { return };
    if g.consumers.contains_key(cname) {
        return r.int(0);
    }
    g.consumer_or_create(cname, now);
    r.int(1);
    ctx.no_key_modified();
    ctx.dirty(1);
    ctx.notify(NOTIFY_STREAM, "xgroup-createconsumer", key);
}

fn xgroup_delconsumer(ctx: &mut Ctx, key: &[u8], gname: &[u8], cname: &[u8]) {
    let Ok(Some((s, r))) = write_stream(ctx, key) else { return };
    let Some(g) = s.groups.get_mut(gname) else { return };
    let Some(pending) = g.delete_consumer(cname) else { return r.int(0) };
    r.int(pending as i64);
    ctx.no_key_modified();
    ctx.dirty(1);
    ctx.notify(NOTIFY_STREAM, "xgroup-delconsumer", key);
}

// ------------------------------------------------------------ XACK

fn xack(ctx: &mut Ctx, argv: &Argv) {
    let (key, gname) = (argv.get(1), argv.get(2));
    match read_stream(ctx, key) {
        Err(()) => return,
        Ok(Some((s, _))) if s.groups.contains_key(gname) => {}
        Ok(_) => return ctx.r.int(0),
    }
    // All IDs are checked before any is acknowledged: an error must mean
    // nothing happened.
    let mut ids = Vec::with_capacity(argv.len() - 3);
    for arg in argv.iter_from(3) {
        let Some(id) = id_arg(ctx, arg, 0, true) else { return };
        ids.push(id);
    }
    let Ok(Some((s, r))) = write_stream(ctx, key) else { return };
    let Some(g) = s.groups.get_mut(gname) else { return };
    let acked = ids.iter().filter(|&&id| g.ack(id)).count() as u64;
    r.int(acked as i64);
    if acked > 0 {
        ctx.no_key_modified();
        ctx.dirty(acked);
    }
}

// ------------------------------------------------------------ XPENDING

fn nogroup(ctx: &mut Ctx, key: &[u8], gname: &[u8]) {
    let msg = [b"NOGROUP No such key '", c_str(key), b"' or consumer group '", c_str(gname), b"'"];
    ctx.r.error_bytes(&msg.concat());
}

/// XPENDING's extended form: `[IDLE ms] start end count [consumer]`.
struct PendingRange<'a> {
    min_idle: i64,
    start: StreamId,
    end: StreamId,
    count: usize,
    consumer: Option<&'a [u8]>,
}

fn pending_range<'a>(ctx: &mut Ctx, argv: &Argv<'a>) -> Option<PendingRange<'a>> {
    let mut at = 3;
    let mut min_idle = 0;
    if argv.is(3, "idle") {
        min_idle = int_arg(ctx, argv.get(4))?;
        if argv.len() < 8 {
            ctx.syntax_error();
            return None;
        }
        at += 2;
    }
    let count = int_arg(ctx, argv.get(at + 2))?.max(0) as usize;
    let (start, end) = super::stream::interval(ctx, argv.get(at), argv.get(at + 1))?;
    let consumer = (at + 3 < argv.len()).then(|| argv.get(at + 3));
    Some(PendingRange { min_idle, start, end, count, consumer })
}

fn xpending(ctx: &mut Ctx, argv: &Argv) {
    let n = argv.len();
    if n != 3 && !(6..=9).contains(&n) {
        return ctx.syntax_error();
    }
    let range = if n >= 6 {
        let Some(range) = pending_range(ctx, argv) else { return };
        Some(range)
    } else {
        None
    };
    let (key, gname) = (argv.get(1), argv.get(2));
    let now = ctx.now;
    let Ok(found) = read_stream(ctx, key) else { return };
    let Some((g, r)) = found.and_then(|(s, r)| s.groups.get(gname).map(|g| (g, r))) else {
        return nogroup(ctx, key, gname);
    };
    match range {
        None => pending_summary(r, g),
        Some(range) => pending_entries(r, g, &range, now),
    }
}

fn pending_summary(r: &mut Reply, g: &Group) {
    r.array(4);
    r.int(g.pel.len() as i64);
    let (Some((first, _)), Some((last, _))) = (g.pel.first_key_value(), g.pel.last_key_value()) else {
        r.null();
        r.null();
        return r.null_array();
    };
    reply_id(r, *first);
    reply_id(r, *last);
    let owners: Vec<_> = g.consumers.iter().filter(|(_, c)| !c.pel.is_empty()).collect();
    r.array(owners.len());
    for (name, c) in owners {
        r.array(2);
        r.bulk(name);
        r.bulk(c.pel.len().to_string().as_bytes());
    }
}

fn pending_entries(r: &mut Reply, g: &Group, range: &PendingRange, now: i64) {
    let ids: Box<dyn Iterator<Item = StreamId>> = match range.consumer {
        None => Box::new(g.pel.range(range.start..=range.end.max(range.start)).map(|(id, _)| *id)),
        Some(name) => match g.consumers.get(name) {
            Some(c) => Box::new(c.pel.range(range.start..=range.end.max(range.start)).copied()),
            None => return r.array(0),
        },
    };
    let mut body = Vec::new();
    let mut inner = Reply::new(&mut body, r.resp3());
    let mut n = 0;
    for id in ids.take_while(|id| *id <= range.end) {
        if n == range.count {
            break;
        }
        let Some(nack) = g.pel.get(&id) else { continue };
        if range.min_idle != 0 && now - nack.delivery_time < range.min_idle {
            continue;
        }
        inner.array(4);
        reply_id(&mut inner, id);
        inner.bulk(&nack.consumer);
        inner.int((now - nack.delivery_time).max(0));
        inner.int(nack.delivery_count as i64);
        n += 1;
    }
    r.array(n);
    r.raw(&body);
}

// ------------------------------------------------------------ XCLAIM / XAUTOCLAIM

/// What claiming did, applied once the stream is no longer borrowed.
#[derive(Default)]
struct Claimed {
    created_consumer: bool,
    /// PEL entries claimed or dropped (each one dirty change).
    changes: u64,
    replays: Vec<Vec<Vec<u8>>>,
}

fn apply_claims(ctx: &mut Ctx, key: &[u8], fx: Claimed) {
    ctx.replicate_nothing();
    if fx.created_consumer {
        ctx.dirty(1);
        ctx.notify(NOTIFY_STREAM, "xgroup-createconsumer", key);
    }
    if fx.changes > 0 || fx.created_consumer {
        ctx.no_key_modified();
        ctx.dirty(fx.changes);
    }
    if ctx.replicating() {
        for args in &fx.replays {
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            ctx.also_replicate(&refs);
        }
    }
}

/// The claiming consumer, created on first use (as Redis does, only once
/// something is claimed).
fn claimer(g: &mut Group, name: &[u8], now: i64, who: &mut Option<Arc<[u8]>>, fx: &mut Claimed) -> Arc<[u8]> {
    if let Some(c) = who {
        return c.clone();
    }
    let (c, created) = g.consumer_or_create(name, now);
    fx.created_consumer |= created;
    *who = Some(c.clone());
    c
}

/// XCLAIM's options after its IDs.
#[derive(Default)]
struct ClaimOptions {
    delivery_time: Option<i64>,
    retry: Option<u64>,
    force: bool,
    justid: bool,
    last_id: StreamId,
}

fn claim_options(ctx: &mut Ctx, argv: &Argv, from: usize, now: i64) -> Option<ClaimOptions> {
    let mut o = ClaimOptions::default();
    let mut j = from;
    while j < argv.len() {
        let more = j + 1 < argv.len();
        let opt = argv.get(j);
        let int = |ctx: &mut Ctx, what: &str| {
            let v = parse_i64(argv.get(j + 1));
            if v.is_none() {
                ctx.r.error(&format!("ERR Invalid {what} option argument for XCLAIM"));
            }
            v
        };
        if argv.is(j, "force") {
            o.force = true;
        } else if argv.is(j, "justid") {
            o.justid = true;
        } else if argv.is(j, "idle") && more {
            o.delivery_time = Some(now - int(ctx, "IDLE")?);
            j += 1;
        } else if argv.is(j, "time") && more {
            o.delivery_time = Some(int(ctx, "TIME")?);
            j += 1;
        } else if argv.is(j, "retrycount") && more {
            // A negative count means "not given", as in Redis.
            o.retry = u64::try_from(int(ctx, "RETRYCOUNT")?).ok();
            j += 1;
        } else if argv.is(j, "lastid") && more {
            o.last_id = id_arg(ctx, argv.get(j + 1), 0, true)?;
            j += 1;
        } else {
            ctx.r.error_bytes(&[b"ERR Unrecognized XCLAIM option '", c_str(opt), b"'"].concat());
            return None;
        }
        j += 1;
    }
    Some(o)
}

fn xclaim(ctx: &mut Ctx, argv: &Argv) {
    let (key, gname) = (argv.get(1), argv.get(2));
    let Ok(found) = read_stream(ctx, key) else { return };
    if !found.is_some_and(|(s, _)| s.groups.contains_key(gname)) {
        return nogroup(ctx, key, gname);
    }
    let Some(min_idle) = parse_i64(argv.get(4)) else {
        return ctx.r.error("ERR Invalid min-idle-time argument for XCLAIM");
    };
    let ids: Vec<StreamId> = argv.iter_from(5).map_while(|a| StreamId::parse(a, 0, true).ok()).collect();
    let now = ctx.now;
    let Some(o) = claim_options(ctx, argv, 5 + ids.len(), now) else { return };
    let delivery_time = o.delivery_time.map_or(now, |t| if t < 0 || t > now { now } else { t });
    let Ok(Some((s, r))) = write_stream(ctx, key) else { return };
    let Some((gkey, mut g)) = s.groups.remove_entry(gname) else { return };
    let mut fx = Claimed::default();
    let mut setid = o.last_id > g.last_id;
    if setid {
        g.last_id = o.last_id;
    }
    let names = (key, gname);
    let mut who = None;
    let mut body = Vec::new();
    let mut inner = Reply::new(&mut body, r.resp3());
    let mut n = 0;
    for id in ids {
        let pending = g.pel.get(&id).map(|nack| nack.delivery_time);
        let Some(entry) = s.get(id) else {
            if pending.is_some() {
                fx.replays.push(xclaim_replay(names, &g.pel[&id].consumer, id, &g, now));
                g.ack(id);
                fx.changes += 1;
                setid = false;
            }
            continue;
        };
        match pending {
            None if !o.force => continue,
            Some(t) if min_idle > 0 && now - t < min_idle => continue,
            _ => {}
        }
        let c = claimer(&mut g, argv.get(3), now, &mut who, &mut fx);
        g.claim(id, &c, delivery_time, o.retry, o.justid);
        if o.justid {
            reply_id(&mut inner, id);
        } else {
            reply_entry(&mut inner, &entry);
        }
        n += 1;
        fx.replays.push(xclaim_replay(names, &c, id, &g, now));
        fx.changes += 1;
        setid = false;
    }
    r.array(n);
    r.raw(&body);
    if setid {
        fx.replays.push(setid_replay(names, &g));
        fx.changes += 1;
    }
    s.groups.insert(gkey, g);
    apply_claims(ctx, key, fx);
}

/// The XGROUP SETID a claim that only moved the group's last ID replays as.
fn setid_replay(names: (&[u8], &[u8]), g: &Group) -> Vec<Vec<u8>> {
    let (key, group) = names;
    let mut args = vec![b"XGROUP".to_vec(), b"SETID".to_vec(), key.to_vec(), group.to_vec(), g.last_id.to_bytes()];
    args.extend([b"ENTRIESREAD".to_vec(), g.entries_read.to_string().into_bytes()]);
    args
}

/// XAUTOCLAIM's arguments: min idle, start, COUNT, JUSTID.
fn autoclaim_args(ctx: &mut Ctx, argv: &Argv) -> Option<(i64, StreamId, usize, bool)> {
    let Some(min_idle) = parse_i64(argv.get(4)) else {
        ctx.r.error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
        return None;
    };
    let (mut start, ex) = bound_arg(ctx, argv.get(5), 0)?;
    if ex {
        let Some(n) = start.next() else {
            ctx.r.error("ERR invalid start ID for the interval");
            return None;
        };
        start = n;
    }
    let (mut count, mut justid) = (100usize, false);
    let mut j = 6;
    while j < argv.len() {
        if argv.is(j, "count") && j + 1 < argv.len() {
            const MAX_COUNT: i64 = i64::MAX / 16;
            match parse_i64(argv.get(j + 1)) {
                Some(c) if (1..=MAX_COUNT).contains(&c) => count = c as usize,
                _ => {
                    ctx.r.error("ERR COUNT must be > 0");
                    return None;
                }
            }
            j += 1;
        } else if argv.is(j, "justid") {
            justid = true;
        } else {
            ctx.syntax_error();
            return None;
        }
        j += 1;
    }
    Some((min_idle.max(0), start, count, justid))
}

fn xautoclaim(ctx: &mut Ctx, argv: &Argv) {
    let Some((min_idle, start, count, justid)) = autoclaim_args(ctx, argv) else { return };
    let (key, gname) = (argv.get(1), argv.get(2));
    let Ok(found) = read_stream(ctx, key) else { return };
    if !found.is_some_and(|(s, _)| s.groups.contains_key(gname)) {
        return nogroup(ctx, key, gname);
    }
    let now = ctx.now;
    let Ok(Some((s, r))) = write_stream(ctx, key) else { return };
    let Some((gkey, mut g)) = s.groups.remove_entry(gname) else { return };
    let mut fx = Claimed::default();
    let mut body = Vec::new();
    let mut inner = Reply::new(&mut body, r.resp3());
    let (claimed, deleted, cursor) = autoclaim_walk(
        s,
        &mut g,
        (key, gname, argv.get(3)),
        (min_idle, start, count, justid),
        now,
        &mut inner,
        &mut fx,
    );
    r.array(3);
    reply_id(r, cursor);
    r.array(claimed);
    r.raw(&body);
    r.array(deleted.len());
    for id in deleted {
        reply_id(r, id);
    }
    s.groups.insert(gkey, g);
    apply_claims(ctx, key, fx);
}

/// Walk the group's PEL from `start` as XAUTOCLAIM does: at most `count`
/// entries claimed or dropped, at most ten times `count` looked at.
/// Returns the number claimed (their replies in `out`), the IDs dropped
/// because the stream no longer has them, and the next cursor (0-0 at the
/// end of the PEL).
fn autoclaim_walk(
    s: &Stream,
    g: &mut Group,
    names: (&[u8], &[u8], &[u8]),
    (min_idle, start, mut count, justid): (i64, StreamId, usize, bool),
    now: i64,
    out: &mut Reply,
    fx: &mut Claimed,
) -> (usize, Vec<StreamId>, StreamId) {
    let (key, gname, cname) = names;
    let mut attempts = count.saturating_mul(10);
    let (mut claimed, mut deleted) = (0, Vec::new());
    let mut who = None;
    let mut from = Some(start);
    while attempts > 0 && count > 0 {
        let Some(at) = from else { break };
        let Some((&id, nack)) = g.pel.range(at..).next() else {
            from = None;
            break;
        };
        let (owner, delivered) = (nack.consumer.clone(), nack.delivery_time);
        attempts -= 1;
        from = id.next();
        let Some(entry) = s.get(id) else {
            fx.replays.push(xclaim_replay((key, gname), &owner, id, g, now));
            g.ack(id);
            fx.changes += 1;
            deleted.push(id);
            count -= 1;
            continue;
        };
        if min_idle > 0 && now - delivered < min_idle {
            continue;
        }
        let c = claimer(g, cname, now, &mut who, fx);
        g.claim(id, &c, now, None, justid);
        if justid {
            reply_id(out, id);
        } else {
            reply_entry(out, &entry);
        }
        claimed += 1;
        count -= 1;
        fx.replays.push(xclaim_replay((key, gname), &c, id, g, now));
        fx.changes += 1;
    }
    let cursor = from.and_then(|at| g.pel.range(at..).next().map(|(id, _)| *id)).unwrap_or(StreamId::MIN);
    (claimed, deleted, cursor)
}
