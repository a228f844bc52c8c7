//! XREAD and XREADGROUP, blocking or not.
//!
//! A read that finds nothing and has BLOCK waits on its keys (`$` already
//! resolved to the stream's last ID, so the wait means what it meant when
//! it began) and is re-run when one of them changes. A re-run serves the
//! key that woke it, as Redis serves a woken reader: only if the stream's
//! last ID passed the one the reader waits after (for a group, the group's
//! last delivered ID), and then with a one-key reply. An XREADGROUP whose
//! stream disappeared or whose group was destroyed fails instead.
//!
//! XREADGROUP is never replayed itself: what it changed replays as one
//! XCLAIM per delivered entry (and XGROUP SETID for NOACK reads,
//! XGROUP CREATECONSUMER for consumers NOACK reads create).
use std::sync::Arc;

use super::stream::{c_str, id_arg, int_arg, reply_entry, reply_id, reply_range};
use crate::config::NOTIFY_STREAM;
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::stream::{Group, Stream, StreamId};
use crate::server::blocking::TimeoutReply;
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 2] = [
    spec!("xread", -4, READONLY | BLOCKING | MOVABLEKEYS, (0, 0, 0), xread, "stream", "5.0.0", "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", ["read", "stream", "slow", "blocking"]),
    spec!("xreadgroup", -7, WRITE | BLOCKING | MOVABLEKEYS, (0, 0, 0), xreadgroup, "stream", "5.0.0", "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", ["write", "stream", "slow", "blocking"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

/// How many entries a woken reader gets when it gave no COUNT.
const BLOCKED_DEFAULT_COUNT: usize = 1000;

/// The parsed options of one read.
struct ReadArgs<'a> {
    /// None: no BLOCK; Some(None): wait forever; Some(Some(ms)): deadline.
    block: Option<Option<i64>>,
    count: usize,
    /// Index of the first key; `n` keys then `n` IDs follow.
    keys_at: usize,
    n: usize,
    group: Option<(&'a [u8], &'a [u8])>,
    noack: bool,
}

impl<'a> ReadArgs<'a> {
    fn key(&self, argv: &Argv<'a>, i: usize) -> &'a [u8] {
        argv.get(self.keys_at + i)
    }
    fn id(&self, argv: &Argv<'a>, i: usize) -> &'a [u8] {
        argv.get(self.keys_at + self.n + i)
    }
}

/// What a reader wants from one stream.
#[derive(Clone, Copy)]
enum Want {
    /// Entries after this ID (XREAD), or this consumer's pending entries
    /// after it (XREADGROUP with an ID).
    After(StreamId),
    /// XREADGROUP `>`: entries never delivered to the group.
    New,
}

fn is_rerun(ctx: &Ctx) -> bool {
    matches!(ctx.srv.blocking.rerun, Some((cid, _)) if cid == ctx.cid)
}

fn parse_args<'a>(ctx: &mut Ctx, argv: &Argv<'a>, grouped: bool) -> Option<ReadArgs<'a>> {
    let mut a = ReadArgs { block: None, count: 0, keys_at: 0, n: 0, group: None, noack: false };
    let mut i = 1;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        if argv.is(i, "block") && more > 0 {
            if ctx.from_script {
                let name = String::from_utf8_lossy(argv.get(0)).into_owned();
                ctx.r.error(&format!("ERR {name} command is not allowed with BLOCK option from scripts"));
                return None;
            }
            i += 1;
            a.block = Some(block_deadline(ctx, argv.get(i))?);
        } else if argv.is(i, "count") && more > 0 {
            i += 1;
            a.count = int_arg(ctx, argv.get(i))?.max(0) as usize;
        } else if argv.is(i, "streams") && more > 0 {
            a.keys_at = i + 1;
            let rest = argv.len() - a.keys_at;
            if !rest.is_multiple_of(2) {
                ctx.r
                    .error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.");
                return None;
            }
            a.n = rest / 2;
            break;
        } else if argv.is(i, "group") && more >= 2 {
            if !grouped {
                ctx.r.error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return None;
            }
            a.group = Some((argv.get(i + 1), argv.get(i + 2)));
            i += 2;
        } else if argv.is(i, "noack") {
            if !grouped {
                ctx.r.error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return None;
            }
            a.noack = true;
        } else {
            ctx.syntax_error();
            return None;
        }
        i += 1;
    }
    if a.keys_at == 0 {
        ctx.syntax_error();
        return None;
    }
    if grouped && a.group.is_none() {
        ctx.r.error("ERR Missing GROUP option for XREADGROUP");
        return None;
    }
    Some(a)
}

/// BLOCK's milliseconds as a deadline (None: forever).
fn block_deadline(ctx: &mut Ctx, arg: &[u8]) -> Option<Option<i64>> {
    let Some(ms) = crate::engine::numeric::parse_i64(arg) else {
        ctx.r.error("ERR timeout is not an integer or out of range");
        return None;
    };
    if ms < 0 {
        ctx.r.error("ERR timeout is negative");
        return None;
    }
    Some((ms > 0).then(|| ctx.now.saturating_add(ms)))
}

fn nogroup(ctx: &mut Ctx, key: &[u8], group: &[u8]) {
    let msg = [
        b"NOGROUP No such key '",
        c_str(key),
        b"' or consumer group '",
        c_str(group),
        b"' in XREADGROUP with GROUP option",
    ];
    ctx.r.error_bytes(&msg.concat());
}

/// Resolve every ID argument (`$`, `>` or an ID), checking the keys' types
/// and groups on the way, as Redis does before serving anything.
fn resolve(ctx: &mut Ctx, argv: &Argv, a: &ReadArgs) -> Option<Vec<Want>> {
    let mut wants = Vec::with_capacity(a.n);
    for i in 0..a.n {
        let (key, arg) = (a.key(argv, i), a.id(argv, i));
        let found = super::stream::read_stream(ctx, key).ok()?;
        let last = found.as_ref().map(|(s, _)| s.last_id);
        if let Some((group, _)) = a.group {
            let has_group = found.is_some_and(|(s, _)| s.groups.contains_key(group));
            if !has_group {
                nogroup(ctx, key, group);
                return None;
            }
        }
        let want = match arg {
            b"$" if a.group.is_some() => {
                ctx.r.error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.");
                return None;
            }
            b"$" => Want::After(last.unwrap_or_default()),
            b">" if a.group.is_none() => {
                ctx.r.error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
                return None;
            }
            b">" => Want::New,
            // Redis keeps `>` as the largest ID: given explicitly, it means `>`.
            _ => match id_arg(ctx, arg, 0, true)? {
                id if a.group.is_some() && id == StreamId::MAX => Want::New,
                id => Want::After(id),
            },
        };
        wants.push(want);
    }
    Some(wants)
}

/// Where a synchronous read of `s` starts, if it has anything to serve
/// (and whether it reads the consumer's history).
fn sync_start(s: &Stream, want: Want, group: Option<&[u8]>) -> Option<(StreamId, bool)> {
    // last_id bounds every live ID: the walk to the last live entry is
    // needed only when it does not settle the question.
    let newer = |after: StreamId| !s.is_empty() && s.last_id > after && s.last_live().is_some_and(|m| m > after);
    match (want, group) {
        (Want::After(id), Some(_)) => Some((id.next().unwrap_or_default(), true)),
        (Want::New, Some(g)) => {
            let after = s.groups.get(g)?.last_id;
            newer(after).then(|| (after.next().unwrap_or_default(), false))
        }
        (Want::After(id), None) => newer(id).then(|| (id.next().unwrap_or_default(), false)),
        (Want::New, None) => None,
    }
}

/// Side effects of serving a group read, applied once the stream is no
/// longer borrowed.
#[derive(Default)]
struct Effects {
    /// Whether replays are wanted (built only then: one XCLAIM per
    /// delivered entry is most of a group read's cost).
    replicating: bool,
    created_consumer: bool,
    replays: Vec<Vec<Vec<u8>>>,
}

/// Serve one stream into `out` (its key, then its entries).
#[allow(clippy::too_many_arguments)]
fn serve(
    out: &mut Reply,
    s: &mut Stream,
    key: &[u8],
    start: StreamId,
    history: bool,
    a: &ReadArgs,
    count: usize,
    now: i64,
    fx: &mut Effects,
) {
    if !out.resp3() {
        out.array(2);
    }
    out.bulk(key);
    let Some((gname, cname)) = a.group else {
        reply_range(out, s, start, StreamId::MAX, count, false);
        return;
    };
    let Some((gkey, mut g)) = s.groups.remove_entry(gname) else { return };
    let (consumer, created) = g.consumer_or_create(cname, now);
    fx.created_consumer = created;
    if created && a.noack {
        fx.replays.push(vec![
            b"XGROUP".to_vec(),
            b"CREATECONSUMER".to_vec(),
            key.to_vec(),
            gname.to_vec(),
            cname.to_vec(),
        ]);
    }
    if history {
        serve_history(out, s, &mut g, &consumer, start, count, now);
    } else {
        serve_new(out, s, &mut g, &consumer, (key, gname), start, count, a.noack, now, fx);
    }
    s.groups.insert(gkey, g);
}

/// The consumer's pending entries from `start`: each delivered again (a
/// deleted entry shows as its ID with a null body).
fn serve_history(
    out: &mut Reply,
    s: &Stream,
    g: &mut Group,
    consumer: &Arc<[u8]>,
    start: StreamId,
    count: usize,
    now: i64,
) {
    let ids: Vec<StreamId> = g.consumers.get(consumer).map_or_else(Vec::new, |c| {
        let it = c.pel.range(start..).copied();
        if count > 0 {
            it.take(count).collect()
        } else {
            it.collect()
        }
    });
    out.array(ids.len());
    for id in ids {
        match s.get(id) {
            Some(e) => {
                reply_entry(out, &e);
                if let Some(nack) = g.pel.get_mut(&id) {
                    nack.delivery_time = now;
                    nack.delivery_count += 1;
                }
            }
            None => {
                out.array(2);
                reply_id(out, id);
                out.null_array();
            }
        }
    }
}

/// Entries new to the group from `start`: the group's last ID and read
/// counter advance; each goes to the consumer's PEL unless NOACK.
#[allow(clippy::too_many_arguments)]
fn serve_new(
    out: &mut Reply,
    s: &Stream,
    g: &mut Group,
    consumer: &Arc<[u8]>,
    names: (&[u8], &[u8]),
    start: StreamId,
    count: usize,
    noack: bool,
    now: i64,
    fx: &mut Effects,
) {
    let mut body = Vec::new();
    let mut inner = Reply::new(&mut body, out.resp3());
    let mut n = 0;
    let mut moved = false;
    for e in s.range(start, StreamId::MAX, false) {
        if e.id > g.last_id {
            g.entries_read = if g.entries_read != -1 && !s.range_has_tombstones(Some(e.id), None) {
                g.entries_read + 1
            } else if s.entries_added > 0 {
                s.entries_up_to(e.id).unwrap_or(-1)
            } else {
                g.entries_read
            };
            g.last_id = e.id;
            moved |= noack;
        }
        reply_entry(&mut inner, &e);
        if !noack {
            g.deliver(e.id, consumer, now);
            if fx.replicating {
                fx.replays.push(xclaim_replay(names, consumer, e.id, g, now));
            }
        }
        n += 1;
        if n == count {
            break;
        }
    }
    if moved {
        let (key, group) = names;
        let mut args = vec![b"XGROUP".to_vec(), b"SETID".to_vec(), key.to_vec(), group.to_vec()];
        args.extend([g.last_id.to_bytes(), b"ENTRIESREAD".to_vec(), g.entries_read.to_string().into_bytes()]);
        fx.replays.push(args);
    }
    out.array(n);
    out.raw(&body);
}

/// The XCLAIM a delivery replays as (Redis's `streamPropagateXCLAIM`).
pub(crate) fn xclaim_replay(names: (&[u8], &[u8]), consumer: &[u8], id: StreamId, g: &Group, now: i64) -> Vec<Vec<u8>> {
    let (key, group) = names;
    let count = g.pel.get(&id).map_or(1, |n| n.delivery_count);
    let time = g.pel.get(&id).map_or(now, |n| n.delivery_time);
    [
        b"XCLAIM".to_vec(),
        key.to_vec(),
        group.to_vec(),
        consumer.to_vec(),
        b"0".to_vec(),
        id.to_bytes(),
        b"TIME".to_vec(),
        time.to_string().into_bytes(),
        b"RETRYCOUNT".to_vec(),
        count.to_string().into_bytes(),
        b"FORCE".to_vec(),
        b"JUSTID".to_vec(),
        b"LASTID".to_vec(),
        g.last_id.to_bytes(),
    ]
    .to_vec()
}

/// Apply what serving a group read did: dirty counts, events, replays.
fn apply(ctx: &mut Ctx, key: &[u8], grouped: bool, fx: Effects) {
    if !grouped {
        return;
    }
    if fx.created_consumer {
        ctx.dirty(1);
        ctx.notify(NOTIFY_STREAM, "xgroup-createconsumer", key);
    }
    ctx.dirty(1);
    if ctx.replicating() {
        for args in &fx.replays {
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            ctx.also_replicate(&refs);
        }
    }
}

fn xread(ctx: &mut Ctx, argv: &Argv) {
    read_generic(ctx, argv, false);
}

fn xreadgroup(ctx: &mut Ctx, argv: &Argv) {
    read_generic(ctx, argv, true);
}

fn read_generic(ctx: &mut Ctx, argv: &Argv, grouped: bool) {
    if grouped {
        // Only what it changed replays (see the module header).
        ctx.replicate_nothing();
    }
    let Some(a) = parse_args(ctx, argv, grouped) else { return };
    if is_rerun(ctx) {
        return serve_woken(ctx, argv, &a);
    }
    let Some(wants) = resolve(ctx, argv, &a) else { return };
    let (now, resp3, replicating) = (ctx.now, ctx.r.resp3(), ctx.replicating());
    let mut body = Vec::new();
    let mut served = 0;
    for (i, want) in wants.iter().enumerate() {
        let key = a.key(argv, i);
        let Ok(Some((s, _))) = super::stream::read_stream(ctx, key) else { continue };
        let Some((start, history)) = sync_start(s, *want, a.group.map(|g| g.0)) else { continue };
        let mut fx = Effects { replicating, ..Effects::default() };
        serve(&mut Reply::new(&mut body, resp3), s, key, start, history, &a, a.count, now, &mut fx);
        served += 1;
        apply(ctx, key, grouped, fx);
    }
    if served > 0 {
        if resp3 {
            ctx.r.map(served);
        } else {
            ctx.r.array(served);
        }
        return ctx.r.raw(&body);
    }
    match a.block {
        Some(deadline) => block(ctx, argv, &a, &wants, deadline),
        None => ctx.r.null_array(),
    }
}

/// Wait for the keys, with `$` replaced by what it meant now.
fn block(ctx: &mut Ctx, argv: &Argv, a: &ReadArgs, wants: &[Want], deadline: Option<i64>) {
    let keys: Vec<&[u8]> = (0..a.n).map(|i| a.key(argv, i)).collect();
    let mut parts: Vec<Vec<u8>> = argv.iter_from(0).map(<[u8]>::to_vec).collect();
    for (i, want) in wants.iter().enumerate() {
        if let Want::After(id) = want {
            parts[a.keys_at + a.n + i] = id.to_bytes();
        }
    }
    let args = resp::Args::from_parts(parts.iter().map(Vec::as_slice));
    let stored = Argv::new(&[], &args);
    if !ctx.block_on(&keys, deadline, TimeoutReply::NullArray, &stored) {
        ctx.r.null_array();
    }
}

/// A re-run after the key `Blocking::rerun_key` changed (see the module
/// header); blocks again when there is nothing for this reader.
fn serve_woken(ctx: &mut Ctx, argv: &Argv, a: &ReadArgs) {
    let ready = std::mem::take(&mut ctx.srv.blocking.rerun_key);
    let found = (0..a.n).find(|&i| a.key(argv, i) == ready.as_slice());
    ctx.srv.blocking.rerun_key = ready;
    let Some(i) = found else { return block_again(ctx, argv, a) };
    let key = a.key(argv, i);
    let (now, db, replicating) = (ctx.now, ctx.db, ctx.replicating());
    let s = match ctx.srv.keyspace.dbs[db].get_stream(key, now) {
        Ok(Some(s)) => s,
        _ if a.group.is_some() => return ctx.r.error("UNBLOCKED the stream key no longer exists"),
        _ => return block_again(ctx, argv, a),
    };
    let after = match a.group {
        Some((g, _)) => match s.groups.get(g) {
            Some(g) => g.last_id,
            None => return ctx.r.error("NOGROUP the consumer group this client was blocked on no longer exists"),
        },
        None => StreamId::parse(a.id(argv, i), 0, true).unwrap_or_default(),
    };
    if s.last_id <= after {
        return block_again(ctx, argv, a);
    }
    let count = if a.count > 0 { a.count } else { BLOCKED_DEFAULT_COUNT };
    let mut body = Vec::new();
    let mut fx = Effects { replicating, ..Effects::default() };
    let resp3 = ctx.r.resp3();
    serve(&mut Reply::new(&mut body, resp3), s, key, after.next().unwrap_or_default(), false, a, count, now, &mut fx);
    apply(ctx, key, a.group.is_some(), fx);
    if resp3 {
        ctx.r.map(1);
    } else {
        ctx.r.array(1);
    }
    ctx.r.raw(&body);
}

fn block_again(ctx: &mut Ctx, argv: &Argv, a: &ReadArgs) {
    let keys: Vec<&[u8]> = (0..a.n).map(|i| a.key(argv, i)).collect();
    ctx.block_on(&keys, None, TimeoutReply::NullArray, argv);
}
