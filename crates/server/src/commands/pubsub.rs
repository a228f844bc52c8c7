//! Pub/Sub commands (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UN-forms,
//! PUBLISH, SPUBLISH, PUBSUB) and MONITOR. The state and the delivery of
//! messages to other clients are `server::pubsub`'s; this file parses and
//! replies. Shard channels behave as in a standalone Redis 7.0 (no slots
//! until cluster mode).
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::server::pubsub::Kind;
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);
const SUB: u32 = PUBSUB | NOSCRIPT | LOADING | STALE;
const INTROSPECT: u32 = PUBSUB | LOADING | STALE;

#[rustfmt::skip]
static PUBSUB_SUBS: [CommandSpec; 6] = [
    spec!("channels", -2, INTROSPECT, NONE, channels, "pubsub", "2.8.0", "List active channels", ["pubsub", "slow"]),
    spec!("help", 2, LOADING | STALE, NONE, help, "pubsub", "6.2.0", "Show helpful text about the different subcommands", ["slow"]),
    spec!("numpat", 2, INTROSPECT, NONE, numpat, "pubsub", "2.8.0", "Get the count of unique patterns pattern subscriptions", ["pubsub", "slow"]),
    spec!("numsub", -2, INTROSPECT, NONE, numsub, "pubsub", "2.8.0", "Get the count of subscribers for channels", ["pubsub", "slow"]),
    spec!("shardchannels", -2, INTROSPECT, NONE, shardchannels, "pubsub", "7.0.0", "List active shard channels", ["pubsub", "slow"]),
    spec!("shardnumsub", -2, INTROSPECT, NONE, shardnumsub, "pubsub", "7.0.0", "Get the count of subscribers for shard channels", ["pubsub", "slow"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 10] = [
    spec!("subscribe", -2, SUB, NONE, subscribe, "pubsub", "2.0.0", "Listen for messages published to the given channels", ["pubsub", "slow"]),
    spec!("unsubscribe", -1, SUB, NONE, unsubscribe, "pubsub", "2.0.0", "Stop listening for messages posted to the given channels", ["pubsub", "slow"]),
    spec!("psubscribe", -2, SUB, NONE, psubscribe, "pubsub", "2.0.0", "Listen for messages published to channels matching the given patterns", ["pubsub", "slow"]),
    spec!("punsubscribe", -1, SUB, NONE, punsubscribe, "pubsub", "2.0.0", "Stop listening for messages posted to channels matching the given patterns", ["pubsub", "slow"]),
    spec!("publish", 3, PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE, NONE, publish, "pubsub", "2.0.0", "Post a message to a channel", ["pubsub", "fast"]),
    spec!("ssubscribe", -2, SUB, (1, -1, 1), ssubscribe, "pubsub", "7.0.0", "Listen for messages published to the given shard channels", ["pubsub", "slow"]),
    spec!("sunsubscribe", -1, SUB, (1, -1, 1), sunsubscribe, "pubsub", "7.0.0", "Stop listening for messages posted to the given shard channels", ["pubsub", "slow"]),
    spec!("spublish", 3, PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE, (1, 1, 1), spublish, "pubsub", "7.0.0", "Post a message to a shard channel", ["pubsub", "fast"]),
    CommandSpec {
        name: "pubsub",
        arity: -2,
        flags: 0,
        keys: NONE,
        handler: help,
        group: "pubsub",
        since: "2.8.0",
        summary: "A container for Pub/Sub commands",
        acl: &["slow"],
        subcommands: &PUBSUB_SUBS,
    },
    spec!("monitor", 1, ADMIN | NOSCRIPT | LOADING | STALE, NONE, monitor, "server", "1.0.0", "Listen for all requests received by the server in real time", ["admin", "slow", "dangerous"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

/// One (un)subscribe confirmation: `[kind, name, count]`, a push in RESP3.
/// `name` None is the nil Redis sends when there was nothing to leave.
fn confirm(ctx: &mut Ctx, word: &[u8], name: Option<&[u8]>, count: usize) {
    ctx.r.push(3);
    ctx.r.bulk(word);
    match name {
        Some(n) => ctx.r.bulk(n),
        None => ctx.r.null(),
    }
    ctx.r.int(count as i64);
    ctx.r.end_push();
}

/// The count a confirmation carries: channels plus patterns, or shard
/// channels for the shard family.
fn count_of(ctx: &Ctx, kind: Kind) -> usize {
    ctx.srv.pubsub.subs(ctx.cid).map_or(0, |s| if kind == Kind::Shard { s.shard.len() } else { s.count() })
}

/// Keep the client's "subscribed" flag in step with its subscriptions.
fn update_flag(ctx: &mut Ctx) {
    let on = ctx.srv.pubsub.subs(ctx.cid).is_some_and(|s| s.total() > 0);
    ctx.client().pubsub = on;
}

fn subscribe_to(ctx: &mut Ctx, argv: &Argv, kind: Kind) {
    let word: &[u8] = if kind == Kind::Shard { b"ssubscribe" } else { b"subscribe" };
    for ch in argv.iter_from(1) {
        ctx.srv.pubsub.subscribe(ctx.cid, ch, kind);
        let n = count_of(ctx, kind);
        confirm(ctx, word, Some(ch), n);
    }
    ctx.client().pubsub = true;
}

fn unsubscribe_from(ctx: &mut Ctx, argv: &Argv, kind: Kind) {
    let word: &[u8] = if kind == Kind::Shard { b"sunsubscribe" } else { b"unsubscribe" };
    let names: Vec<Vec<u8>> = if argv.len() > 1 {
        argv.iter_from(1).map(<[u8]>::to_vec).collect()
    } else {
        ctx.srv.pubsub.channels_of(ctx.cid, kind)
    };
    if names.is_empty() {
        let n = count_of(ctx, kind);
        confirm(ctx, word, None, n);
    }
    for ch in &names {
        ctx.srv.pubsub.unsubscribe(ctx.cid, ch, kind);
        let n = count_of(ctx, kind);
        confirm(ctx, word, Some(ch), n);
    }
    update_flag(ctx);
}

fn subscribe(ctx: &mut Ctx, argv: &Argv) {
    subscribe_to(ctx, argv, Kind::Channel);
}

fn unsubscribe(ctx: &mut Ctx, argv: &Argv) {
    unsubscribe_from(ctx, argv, Kind::Channel);
}

/// Inside MULTI/EXEC a shard subscription is refused, as Redis refuses it
/// to clients that cannot block.
fn ssubscribe(ctx: &mut Ctx, argv: &Argv) {
    if !ctx.may_block {
        return ctx.r.error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
    }
    subscribe_to(ctx, argv, Kind::Shard);
}

fn sunsubscribe(ctx: &mut Ctx, argv: &Argv) {
    unsubscribe_from(ctx, argv, Kind::Shard);
}

fn psubscribe(ctx: &mut Ctx, argv: &Argv) {
    for p in argv.iter_from(1) {
        ctx.srv.pubsub.psubscribe(ctx.cid, p);
        let n = count_of(ctx, Kind::Channel);
        confirm(ctx, b"psubscribe", Some(p), n);
    }
    ctx.client().pubsub = true;
}

fn punsubscribe(ctx: &mut Ctx, argv: &Argv) {
    let names: Vec<Vec<u8>> = if argv.len() > 1 {
        argv.iter_from(1).map(<[u8]>::to_vec).collect()
    } else {
        ctx.srv.pubsub.patterns_of(ctx.cid)
    };
    if names.is_empty() {
        let n = count_of(ctx, Kind::Channel);
        confirm(ctx, b"punsubscribe", None, n);
    }
    for p in &names {
        ctx.srv.pubsub.punsubscribe(ctx.cid, p);
        let n = count_of(ctx, Kind::Channel);
        confirm(ctx, b"punsubscribe", Some(p), n);
    }
    update_flag(ctx);
}

fn publish_to(ctx: &mut Ctx, argv: &Argv, kind: Kind) {
    // A publisher subscribed to its own channel gets the message before
    // the reply (dispatch::execute puts it there).
    let receivers = ctx.srv.publish(argv.get(1), argv.get(2), kind);
    // As Redis 7.0: replicas' subscribers hear it (the AOF does not keep
    // it); in cluster mode the cluster bus carries it instead.
    if !ctx.srv.config.cluster_enabled {
        ctx.replicate_to_replicas_only();
    }
    ctx.r.int(receivers as i64);
}

fn publish(ctx: &mut Ctx, argv: &Argv) {
    publish_to(ctx, argv, Kind::Channel);
}

fn spublish(ctx: &mut Ctx, argv: &Argv) {
    publish_to(ctx, argv, Kind::Shard);
}

fn list_channels(ctx: &mut Ctx, argv: &Argv, kind: Kind) {
    if argv.len() > 3 {
        return subcommand_syntax_error(ctx, argv);
    }
    let pattern = (argv.len() == 3).then(|| argv.get(2));
    let names = ctx.srv.pubsub.channel_names(kind, pattern);
    ctx.r.array(names.len());
    for n in &names {
        ctx.r.bulk(n);
    }
}

fn count_subscribers(ctx: &mut Ctx, argv: &Argv, kind: Kind) {
    // A flat array even in RESP3, as Redis replies.
    ctx.r.array((argv.len() - 2) * 2);
    for ch in argv.iter_from(2) {
        let n = ctx.srv.pubsub.subscriber_count(ch, kind);
        ctx.r.bulk(ch);
        ctx.r.int(n as i64);
    }
}

fn channels(ctx: &mut Ctx, argv: &Argv) {
    list_channels(ctx, argv, Kind::Channel);
}

fn shardchannels(ctx: &mut Ctx, argv: &Argv) {
    list_channels(ctx, argv, Kind::Shard);
}

fn numsub(ctx: &mut Ctx, argv: &Argv) {
    count_subscribers(ctx, argv, Kind::Channel);
}

fn shardnumsub(ctx: &mut Ctx, argv: &Argv) {
    count_subscribers(ctx, argv, Kind::Shard);
}

fn numpat(ctx: &mut Ctx, _argv: &Argv) {
    let n = ctx.srv.pubsub.pattern_count();
    ctx.r.int(n as i64);
}

/// Redis's reply to a known subcommand with the wrong arguments.
fn subcommand_syntax_error(ctx: &mut Ctx, argv: &Argv) {
    let sub = String::from_utf8_lossy(argv.get(1)).into_owned();
    ctx.r.error(&format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try PUBSUB HELP."));
}

fn help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help(
        "PUBSUB",
        &[
            "CHANNELS [<pattern>]",
            "    Return the currently active channels matching a <pattern> (default: '*').",
            "NUMPAT",
            "    Return number of subscriptions to patterns.",
            "NUMSUB [<channel> ...]",
            "    Return the number of subscribers for the specified channels, excluding",
            "    pattern subscriptions(default: no channels).",
            "SHARDCHANNELS [<pattern>]",
            "    Return the currently active shard level channels matching a <pattern> (default: '*').",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Return the number of subscribers for the specified shard level channel(s)",
        ],
    );
}

/// MONITOR: from now on the client receives every command the server
/// runs, as Redis prints them (see `server::monitor`).
fn monitor(ctx: &mut Ctx, _argv: &Argv) {
    if ctx.client().monitor {
        return ctx.r.ok();
    }
    ctx.client().monitor = true;
    ctx.srv.pubsub.monitors.push(ctx.cid);
    ctx.r.ok();
}
