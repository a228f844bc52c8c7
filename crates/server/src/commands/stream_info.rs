//! XINFO STREAM [FULL [COUNT n]] | GROUPS | CONSUMERS | HELP: the stream
//! introspection container, with Redis 7.0.15's field names, field order
//! and reply types (maps in RESP3, flat pairs in RESP2). The figures that
//! are computed rather than stored (group lag, radix tree nodes) come from
//! `engine::stream::info`.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::numeric::parse_i64;
use crate::engine::stream::group::ENTRIES_READ_UNKNOWN;
use crate::engine::stream::{Group, Stream, StreamId};
use crate::spec;

use super::stream::{
    no_such_group, read_stream, reply_entry, reply_id, reply_range, subcommand_syntax_error, write_stream,
};

const NONE: (i32, i32, i32) = (0, 0, 0);
const KEY2: (i32, i32, i32) = (2, 2, 1);

/// XINFO STREAM FULL's COUNT when none (or a negative one) is given.
const FULL_DEFAULT_COUNT: i64 = 10;

#[rustfmt::skip]
static SUBS: [CommandSpec; 4] = [
    spec!("consumers", 4, READONLY, KEY2, xinfo_consumers, "stream", "5.0.0", "List the consumers in a consumer group", ["read", "stream", "slow"]),
    spec!("groups", 3, READONLY, KEY2, xinfo_groups, "stream", "5.0.0", "List the consumer groups of a stream", ["read", "stream", "slow"]),
    spec!("help", 2, LOADING | STALE, NONE, xinfo_help, "stream", "5.0.0", "Show helpful text about the different subcommands", ["stream", "slow"]),
    spec!("stream", -3, READONLY, KEY2, xinfo_stream, "stream", "5.0.0", "Get information about a stream", ["read", "stream", "slow"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    CommandSpec { subcommands: &SUBS, ..spec!("xinfo", -2, 0, NONE, container, "stream", "5.0.0", "A container for stream introspection commands", ["slow"]) },
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

fn container(ctx: &mut Ctx, _argv: &Argv) {
    // The registry resolves `xinfo <sub>`; arity keeps bare XINFO out.
    ctx.r.error("ERR unknown subcommand. Try XINFO HELP.");
}

const HELP: &[&str] = &[
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    // Redis's text lacks the closing bracket; clients see it so.
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
];

fn xinfo_help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help("XINFO", HELP);
}

/// The stream at argv[2] (a counted read lookup); replies "no such key" or
/// WRONGTYPE and gives None when there is none. The hit is looked up a
/// second time, uncounted: the borrow checker cannot hand the first
/// lookup's reply writer back on the miss path.
fn stream_arg<'c, 'a>(ctx: &'c mut Ctx<'a>, argv: &Argv) -> Option<(&'c mut Stream, &'c mut Reply<'a>)> {
    let key = argv.get(2);
    match read_stream(ctx, key) {
        Err(()) => return None,
        Ok(None) => {
            ctx.r.error("ERR no such key");
            return None;
        }
        Ok(Some(_)) => {}
    }
    write_stream(ctx, key).ok().flatten()
}

/// A read counter or lag: an integer, or null when unknown.
fn int_or_null(r: &mut Reply, v: Option<i64>) {
    match v {
        Some(n) => r.int(n),
        None => r.null(),
    }
}

fn entries_read(g: &Group) -> Option<i64> {
    (g.entries_read != ENTRIES_READ_UNKNOWN).then_some(g.entries_read)
}

// ------------------------------------------------------------ CONSUMERS / GROUPS

fn xinfo_consumers(ctx: &mut Ctx, argv: &Argv) {
    let now = ctx.now;
    let Some((s, r)) = stream_arg(ctx, argv) else { return };
    let Some(g) = s.groups.get(argv.get(3)) else {
        return no_such_group(r, argv.get(2), argv.get(3));
    };
    r.array(g.consumers.len());
    for (name, c) in &g.consumers {
        r.map(3);
        r.bulk(b"name");
        r.bulk(name);
        r.bulk(b"pending");
        r.int(c.pel.len() as i64);
        r.bulk(b"idle");
        r.int((now - c.seen_time).max(0));
    }
}

fn xinfo_groups(ctx: &mut Ctx, argv: &Argv) {
    let Some((s, r)) = stream_arg(ctx, argv) else { return };
    r.array(s.groups.len());
    for (name, g) in &s.groups {
        r.map(6);
        r.bulk(b"name");
        r.bulk(name);
        r.bulk(b"consumers");
        r.int(g.consumers.len() as i64);
        r.bulk(b"pending");
        r.int(g.pel.len() as i64);
        r.bulk(b"last-delivered-id");
        reply_id(r, g.last_id);
        r.bulk(b"entries-read");
        int_or_null(r, entries_read(g));
        r.bulk(b"lag");
        int_or_null(r, s.group_lag(g));
    }
}

// ------------------------------------------------------------ STREAM

/// STREAM's options: None for the summary, Some(count) for FULL (0 = no
/// limit). Replies the error and gives Err on a bad option.
fn stream_options(r: &mut Reply, argv: &Argv) -> Result<Option<usize>, ()> {
    let opts = argv.len() - 3;
    if opts == 0 {
        return Ok(None);
    }
    if !(opts == 1 || opts == 3) || !argv.is(3, "full") || (opts == 3 && !argv.is(4, "count")) {
        subcommand_syntax_error(r, "XINFO", argv);
        return Err(());
    }
    if opts == 1 {
        return Ok(Some(FULL_DEFAULT_COUNT as usize));
    }
    let Some(count) = parse_i64(argv.get(5)) else {
        r.error("ERR value is not an integer or out of range");
        return Err(());
    };
    Ok(Some(if count < 0 { FULL_DEFAULT_COUNT } else { count } as usize))
}

fn xinfo_stream(ctx: &mut Ctx, argv: &Argv) {
    // Redis looks the key up before it parses the options.
    let Some((s, r)) = stream_arg(ctx, argv) else { return };
    let Ok(full) = stream_options(r, argv) else { return };
    r.map(if full.is_some() { 9 } else { 10 });
    r.bulk(b"length");
    r.int(s.len() as i64);
    r.bulk(b"radix-tree-keys");
    r.int(s.node_count() as i64);
    r.bulk(b"radix-tree-nodes");
    r.int(s.rax_nodes() as i64);
    r.bulk(b"last-generated-id");
    reply_id(r, s.last_id);
    r.bulk(b"max-deleted-entry-id");
    reply_id(r, s.max_deleted);
    r.bulk(b"entries-added");
    r.int(s.entries_added as i64);
    r.bulk(b"recorded-first-entry-id");
    reply_id(r, s.first_id);
    match full {
        None => stream_summary(r, s),
        Some(count) => stream_full(r, s, count),
    }
}

/// The summary's tail: group count, first and last entries (null if none).
fn stream_summary(r: &mut Reply, s: &Stream) {
    r.bulk(b"groups");
    r.int(s.groups.len() as i64);
    for (field, rev) in [(&b"first-entry"[..], false), (&b"last-entry"[..], true)] {
        r.bulk(field);
        match s.range(StreamId::MIN, StreamId::MAX, rev).next() {
            Some(e) => reply_entry(r, &e),
            None => r.null(),
        }
    }
}

/// FULL's tail: up to `count` entries (0 = all), then every group with up
/// to `count` of its pending entries and of each consumer's.
fn stream_full(r: &mut Reply, s: &Stream, count: usize) {
    r.bulk(b"entries");
    reply_range(r, s, StreamId::MIN, StreamId::MAX, count, false);
    r.bulk(b"groups");
    r.array(s.groups.len());
    let limit = if count == 0 { usize::MAX } else { count };
    for (name, g) in &s.groups {
        r.map(7);
        r.bulk(b"name");
        r.bulk(name);
        r.bulk(b"last-delivered-id");
        reply_id(r, g.last_id);
        r.bulk(b"entries-read");
        int_or_null(r, entries_read(g));
        r.bulk(b"lag");
        int_or_null(r, s.group_lag(g));
        r.bulk(b"pel-count");
        r.int(g.pel.len() as i64);
        r.bulk(b"pending");
        r.array(g.pel.len().min(limit));
        for (&id, nack) in g.pel.iter().take(limit) {
            r.array(4);
            reply_id(r, id);
            r.bulk(&nack.consumer);
            r.int(nack.delivery_time);
            r.int(nack.delivery_count as i64);
        }
        full_consumers(r, g, limit);
    }
}

fn full_consumers(r: &mut Reply, g: &Group, limit: usize) {
    r.bulk(b"consumers");
    r.array(g.consumers.len());
    for (name, c) in &g.consumers {
        r.map(4);
        r.bulk(b"name");
        r.bulk(name);
        r.bulk(b"seen-time");
        r.int(c.seen_time);
        r.bulk(b"pel-count");
        r.int(c.pel.len() as i64);
        r.bulk(b"pending");
        r.array(c.pel.len().min(limit));
        for id in c.pel.iter().take(limit) {
            // The group's PEL holds every consumer's IDs (group.rs keeps
            // both in step); a miss would be a bug, not worth a crash.
            let (time, deliveries) = g.pel.get(id).map_or((0, 0), |n| (n.delivery_time, n.delivery_count));
            r.array(3);
            reply_id(r, *id);
            r.int(time);
            r.int(deliveries as i64);
        }
    }
}
