//! CLIENT: connection introspection and control (ID, SETNAME, GETNAME, LIST,
//! INFO, KILL, SETINFO, REPLY, NO-EVICT, PAUSE, UNPAUSE, UNBLOCK, HELP).
//! Every client here is of the `normal` or `pubsub` type: there are no
//! replicas yet.
use std::fmt::Write;

use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::parse_i64;
use crate::server::client_evict;
use crate::server::pause::PauseKind;
use crate::server::tracking::TrackingClient;
use crate::server::{ClientInfo, ReplyMode, Server};
use crate::spec;

use super::conn::valid_client_name;
use super::tracking;

const NONE: (i32, i32, i32) = (0, 0, 0);
const PLAIN: u32 = NOSCRIPT | LOADING | STALE;
const ADMIN_FLAGS: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

#[rustfmt::skip]
static SUBS: [CommandSpec; 17] = [
    spec!("id", 2, PLAIN, NONE, id, "connection", "5.0.0", "Returns the unique client ID of the connection.", ["slow", "connection"]),
    spec!("setname", 3, PLAIN, NONE, setname, "connection", "2.6.9", "Sets the connection name.", ["slow", "connection"]),
    spec!("getname", 2, PLAIN, NONE, getname, "connection", "2.6.9", "Returns the name of the connection.", ["slow", "connection"]),
    spec!("list", -2, ADMIN_FLAGS, NONE, list, "connection", "2.4.0", "Lists open connections.", ["admin", "slow", "dangerous", "connection"]),
    spec!("info", 2, PLAIN, NONE, info, "connection", "6.2.0", "Returns information about the connection.", ["slow", "connection"]),
    spec!("kill", -3, ADMIN_FLAGS, NONE, kill, "connection", "2.4.0", "Terminates open connections.", ["admin", "slow", "dangerous", "connection"]),
    spec!("setinfo", 4, PLAIN, NONE, setinfo, "connection", "7.2.0", "Sets information specific to the client or connection.", ["slow", "connection"]),
    spec!("reply", 3, PLAIN, NONE, reply, "connection", "3.2.0", "Instructs the server whether to reply to commands.", ["slow", "connection"]),
    spec!("no-evict", 3, ADMIN_FLAGS, NONE, no_evict, "connection", "7.0.0", "Sets the client eviction mode of the connection.", ["admin", "slow", "dangerous", "connection"]),
    spec!("pause", -3, ADMIN_FLAGS, NONE, pause, "connection", "2.9.50", "Stop processing commands from clients for some time", ["admin", "slow", "dangerous", "connection"]),
    spec!("unpause", 2, ADMIN_FLAGS, NONE, unpause, "connection", "6.2.0", "Resume processing of clients that were paused", ["admin", "slow", "dangerous", "connection"]),
    spec!("unblock", -3, ADMIN_FLAGS, NONE, unblock, "connection", "5.0.0", "Unblock a client blocked in a blocking command from a different connection", ["admin", "slow", "dangerous", "connection"]),
    spec!("tracking", -3, PLAIN, NONE, tracking::tracking, "connection", "6.0.0", "Enable or disable server assisted client side caching support", ["slow", "connection"]),
    spec!("caching", 3, PLAIN, NONE, tracking::caching, "connection", "6.0.0", "Instruct the server about tracking or not keys in the next request", ["slow", "connection"]),
    spec!("getredir", 2, PLAIN, NONE, tracking::getredir, "connection", "6.0.0", "Get tracking notifications redirection client ID if any", ["slow", "connection"]),
    spec!("trackinginfo", 2, PLAIN, NONE, tracking::trackinginfo, "connection", "6.2.0", "Return information about server assisted client side caching for the current connection", ["slow", "connection"]),
    spec!("help", 2, LOADING | STALE, NONE, help, "connection", "5.0.0", "Returns helpful text about the different subcommands.", ["slow", "connection"]),
];

static SPECS: [CommandSpec; 1] = [CommandSpec {
    name: "client",
    arity: -2,
    flags: SENTINEL,
    keys: NONE,
    handler: help,
    group: "connection",
    since: "2.4.0",
    summary: "A container for client connection commands.",
    acl: &["slow"],
    subcommands: &SUBS,
}];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn id(ctx: &mut Ctx, _argv: &Argv) {
    let id = ctx.client().id;
    ctx.r.int(id as i64);
}

fn setname(ctx: &mut Ctx, argv: &Argv) {
    let name = argv.get(2);
    if !valid_client_name(name) {
        return ctx.r.error("ERR Client names cannot contain spaces, newlines or special characters.");
    }
    ctx.client().name = (!name.is_empty()).then(|| name.to_vec());
    ctx.r.ok();
}

fn getname(ctx: &mut Ctx, _argv: &Argv) {
    match ctx.client().name.clone() {
        Some(n) => ctx.r.bulk(&n),
        None => ctx.r.null(),
    }
}

/// One CLIENT LIST line in Redis 7.0's field order, without the newline.
/// `cmd` is the full name of the client's last command; `argv_mem` the
/// size of the arguments of the command it is running (only the caller
/// runs one).
fn client_line(c: &ClientInfo, state: &LineState, cmd: &str, argv_mem: usize, now_ms: i64) -> String {
    let (blocked, subs, trk) = (state.blocked, state.subs, state.tracking.as_ref());
    // Redis's flag letters, in its order: O monitor, P subscribed, x MULTI,
    // b blocked, t tracking (R its redirect is gone, B broadcast),
    // d WATCH touched, c closing, e no-evict.
    let mut flags = String::new();
    for (on, letter) in [
        (c.monitor, 'O'),
        (c.role == crate::server::ClientRole::Replica, 'S'),
        (c.role == crate::server::ClientRole::Master, 'M'),
        (c.pubsub, 'P'),
        (c.tx.is_some(), 'x'),
        (blocked, 'b'),
        (trk.is_some(), 't'),
        (trk.is_some_and(|t| t.broken_redirect), 'R'),
        (trk.is_some_and(|t| t.bcast), 'B'),
        (c.watch_touched, 'd'),
        (c.close_after_reply, 'c'),
        (c.unix, 'U'),
        (c.no_evict, 'e'),
    ] {
        if on {
            flags.push(letter);
        }
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let name = c.name.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    let b = &c.bufs;
    // Redis fills a 16 KiB buffer first (obl), then a list of 16 KiB
    // blocks (oll nodes, omem bytes): the same split of the pending bytes.
    let obl = b.pending_out.min(REPLY_CHUNK);
    let omem = b.pending_out - obl;
    let oll = omem.div_ceil(REPLY_CHUNK);
    let events = if b.writing { "rw" } else { "r" };
    let mut s = String::with_capacity(320);
    let _ = write!(
        s,
        "id={} addr={} laddr={} fd={} name={name} age={} idle={} flags={flags} db={} sub={} psub={} ssub={} multi={} \
         qbuf={} qbuf-free={} argv-mem={argv_mem} multi-mem={} rbs={} rbp={} obl={obl} oll={oll} omem={omem} \
         tot-mem={} events={events} cmd={cmd} user={} redir={} resp={}",
        c.id,
        c.addr,
        c.laddr,
        c.fd,
        (now_ms - c.created_ms).max(0) / 1000,
        (now_ms - c.last_interaction_ms).max(0) / 1000,
        c.db,
        subs.0,
        subs.1,
        subs.2,
        c.tx.as_ref().map_or(-1, |t| t.queued.len() as i64),
        b.qbuf,
        b.qbuf_free,
        client_evict::multi_mem(c),
        b.out_cap,
        b.out_cap,
        b.total + state.state_mem + argv_mem,
        state.user,
        trk.map_or(-1, |t| t.redirect as i64),
        c.resp,
    );
    s
}

/// What a CLIENT LIST line shows beyond the client record.
struct LineState {
    blocked: bool,
    /// Memory held in server state (queued commands, watches, subscriptions).
    state_mem: usize,
    /// Channel, pattern and shard subscriptions.
    subs: (usize, usize, usize),
    tracking: Option<TrackingClient>,
    /// The ACL user's name.
    user: String,
}

/// Redis's reply chunk size, by which CLIENT LIST splits pending output.
const REPLY_CHUNK: usize = 16 << 10;

/// The line for client `slot`; the caller's own line names the running
/// command and counts its arguments.
fn line_for(ctx: &Ctx, slot: usize, c: &ClientInfo, current: &str, argv: &Argv) -> String {
    let subs = ctx.srv.pubsub.subs(slot).map_or((0, 0, 0), |s| (s.channels.len(), s.patterns.len(), s.shard.len()));
    let tracking = ctx.srv.tracking.client(slot).cloned();
    let state_mem = client_evict::state_memory(ctx.srv, slot);
    let user = String::from_utf8_lossy(&ctx.srv.acl.user(c.user).name).into_owned();
    if slot == ctx.cid {
        let argv_mem = argv.mem();
        let state = LineState { blocked: false, state_mem, subs, tracking, user };
        return client_line(c, &state, current, argv_mem, ctx.now);
    }
    let cmd = c.last_cmd.map_or("NULL", |id| ctx.reg.full_name(id));
    let blocked = ctx.srv.blocking.is_blocked(slot);
    client_line(c, &LineState { blocked, state_mem, subs, tracking, user }, cmd, 0, ctx.now)
}

/// A client type name, as CLIENT LIST TYPE and CLIENT KILL TYPE take it
/// (see [`type_of`]), `None` for an unknown name.
fn parse_type(name: &[u8]) -> Option<u8> {
    match name.to_ascii_lowercase().as_slice() {
        b"normal" => Some(0),
        b"pubsub" => Some(1),
        b"slave" | b"replica" => Some(2),
        b"master" => Some(3),
        _ => None,
    }
}

/// A client's type as Redis's getClientType sees it: 0 normal, 1 pubsub,
/// 2 replica (a MONITOR client is not one), 3 our primary.
fn type_of(c: &ClientInfo) -> u8 {
    match c.role {
        crate::server::ClientRole::Master => 3,
        crate::server::ClientRole::Replica if !c.monitor => 2,
        _ if c.pubsub => 1,
        _ => 0,
    }
}

fn unknown_type(ctx: &mut Ctx, name: &[u8]) {
    ctx.r.error(&format!("ERR Unknown client type '{}'", String::from_utf8_lossy(name)));
}

fn list(ctx: &mut Ctx, argv: &Argv) {
    let mut ids: Option<Vec<u64>> = None;
    let mut kind = 0;
    let mut any_type = true;
    if argv.len() == 4 && argv.is(2, "type") {
        any_type = false;
        match parse_type(argv.get(3)) {
            Some(k) => kind = k,
            None => return unknown_type(ctx, argv.get(3)),
        }
    } else if argv.len() > 3 && argv.is(2, "id") {
        let mut v = Vec::new();
        for a in argv.iter_from(3) {
            match parse_i64(a) {
                Some(n) if n > 0 => v.push(n as u64),
                _ => return ctx.r.error("ERR Invalid client ID"),
            }
        }
        ids = Some(v);
    } else if argv.len() != 2 {
        return ctx.syntax_error();
    }
    let mut text = String::new();
    for (slot, c) in ctx.srv.clients.iter() {
        let type_ok = any_type || kind == type_of(c);
        if type_ok && ids.as_ref().is_none_or(|v| v.contains(&c.id)) {
            text.push_str(&line_for(ctx, slot, c, "client|list", argv));
            text.push('\n');
        }
    }
    ctx.r.verbatim(text.as_bytes());
}

fn info(ctx: &mut Ctx, argv: &Argv) {
    let c = ctx.srv.clients.get(ctx.cid).expect("calling client is registered");
    let mut text = line_for(ctx, ctx.cid, c, "client|info", argv);
    text.push('\n');
    ctx.r.verbatim(text.as_bytes());
}

/// CLIENT KILL filters (new form); `None` fields match everything.
#[derive(Default)]
struct KillFilter {
    id: Option<u64>,
    addr: Option<Vec<u8>>,
    laddr: Option<Vec<u8>>,
    /// TYPE (see [`type_of`]).
    kind: Option<u8>,
    /// USER: the ACL user's slot.
    user: Option<usize>,
    skipme: bool,
}

impl KillFilter {
    fn matches(&self, c: &ClientInfo) -> bool {
        self.id.is_none_or(|id| id == c.id)
            && self.addr.as_ref().is_none_or(|a| a == c.addr.as_bytes())
            && self.laddr.as_ref().is_none_or(|a| a == c.laddr.as_bytes())
            && self.kind.is_none_or(|k| k == type_of(c))
            && self.user.is_none_or(|u| u == c.user)
    }
}

/// Parse `<option> <value>` pairs; `Err` has been replied already.
fn parse_kill_filter(ctx: &mut Ctx, argv: &Argv) -> Result<KillFilter, ()> {
    let mut f = KillFilter { skipme: true, ..KillFilter::default() };
    let mut i = 2;
    while i < argv.len() {
        if i + 1 >= argv.len() {
            ctx.syntax_error();
            return Err(());
        }
        let v = argv.get(i + 1);
        if argv.is(i, "id") {
            match parse_i64(v) {
                Some(n) if n > 0 => f.id = Some(n as u64),
                _ => {
                    ctx.r.error("ERR client-id should be greater than 0");
                    return Err(());
                }
            }
        } else if argv.is(i, "type") {
            match parse_type(v) {
                Some(k) => f.kind = Some(k),
                None => {
                    unknown_type(ctx, v);
                    return Err(());
                }
            }
        } else if argv.is(i, "addr") {
            f.addr = Some(v.to_vec());
        } else if argv.is(i, "laddr") {
            f.laddr = Some(v.to_vec());
        } else if argv.is(i, "user") {
            match ctx.srv.acl.find(v) {
                Some(slot) => f.user = Some(slot),
                None => {
                    let user = String::from_utf8_lossy(v);
                    ctx.r.error(&format!("ERR No such user '{user}'"));
                    return Err(());
                }
            }
        } else if argv.is(i, "skipme") && (v.eq_ignore_ascii_case(b"yes") || v.eq_ignore_ascii_case(b"no")) {
            f.skipme = v.eq_ignore_ascii_case(b"yes");
        } else {
            ctx.syntax_error();
            return Err(());
        }
        i += 2;
    }
    Ok(f)
}

fn kill(ctx: &mut Ctx, argv: &Argv) {
    let old_form = argv.len() == 3;
    let filter = if old_form {
        KillFilter { addr: Some(argv.get(2).to_vec()), ..KillFilter::default() }
    } else {
        match parse_kill_filter(ctx, argv) {
            Ok(f) => f,
            Err(()) => return,
        }
    };
    let victims: Vec<usize> = ctx
        .srv
        .clients
        .iter()
        .filter(|(slot, c)| filter.matches(c) && !(filter.skipme && *slot == ctx.cid))
        .map(|(slot, _)| slot)
        .collect();
    for &slot in &victims {
        if slot == ctx.cid {
            // Killing yourself: the reply is still written, then the connection closes.
            ctx.client().close_after_reply = true;
        } else {
            ctx.srv.pending_kills.push(slot);
        }
    }
    match (old_form, victims.len()) {
        (true, 0) => ctx.r.error("ERR No such client"),
        (true, _) => ctx.r.ok(),
        (false, n) => ctx.r.int(n as i64),
    }
}

fn setinfo(ctx: &mut Ctx, argv: &Argv) {
    let attr = String::from_utf8_lossy(argv.get(2)).into_owned();
    let value = argv.get(3);
    let lib_name = attr.eq_ignore_ascii_case("lib-name");
    if !lib_name && !attr.eq_ignore_ascii_case("lib-ver") {
        return ctx.r.error(&format!("ERR Unrecognized option '{attr}'"));
    }
    if !valid_client_name(value) {
        return ctx.r.error(&format!("ERR {attr} cannot contain spaces, newlines or special characters."));
    }
    let v = (!value.is_empty()).then(|| value.to_vec());
    let c = ctx.client();
    if lib_name {
        c.lib_name = v;
    } else {
        c.lib_ver = v;
    }
    ctx.r.ok();
}

/// ON replies +OK; OFF and SKIP reply nothing (dispatch drops the reply
/// according to the new mode, and SKIP also drops the next command's).
fn reply(ctx: &mut Ctx, argv: &Argv) {
    let mode = if argv.is(2, "on") {
        ReplyMode::On
    } else if argv.is(2, "off") {
        ReplyMode::Off
    } else if argv.is(2, "skip") {
        ReplyMode::SkipNext
    } else {
        return ctx.syntax_error();
    };
    ctx.client().reply_mode = mode;
    ctx.r.ok();
}

fn no_evict(ctx: &mut Ctx, argv: &Argv) {
    let on = if argv.is(2, "on") {
        true
    } else if argv.is(2, "off") {
        false
    } else {
        return ctx.syntax_error();
    };
    ctx.client().no_evict = on;
    ctx.r.ok();
}

/// CLIENT PAUSE <ms> [WRITE|ALL]: the mode is checked before the timeout,
/// as Redis does.
fn pause(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 4 {
        return ctx.syntax_error();
    }
    let kind = if argv.len() < 4 || argv.is(3, "all") {
        PauseKind::All
    } else if argv.is(3, "write") {
        PauseKind::Write
    } else {
        return ctx.r.error("ERR CLIENT PAUSE mode must be WRITE or ALL");
    };
    let ms = match parse_i64(argv.get(2)) {
        Some(ms) if ms < 0 => return ctx.r.error("ERR timeout is negative"),
        Some(ms) => ms,
        None => return ctx.r.error("ERR timeout is not an integer or out of range"),
    };
    // A zero timeout ends at once in Redis: nothing changes.
    if ms > 0 {
        ctx.srv.pause_clients(kind, ctx.now.saturating_add(ms));
    }
    ctx.r.ok();
}

fn unpause(ctx: &mut Ctx, _argv: &Argv) {
    ctx.srv.unpause_clients();
    ctx.r.ok();
}

/// CLIENT UNBLOCK <id> [TIMEOUT|ERROR]: a client blocked on keys or WAIT
/// gets its timeout reply (or an -UNBLOCKED error) and carries on.
fn unblock(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 4 {
        return ctx.syntax_error();
    }
    let error = if argv.len() < 4 || argv.is(3, "timeout") {
        false
    } else if argv.is(3, "error") {
        true
    } else {
        return ctx.r.error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    };
    let Some(id) = parse_i64(argv.get(2)) else { return ctx.not_integer() };
    let slot = ctx.srv.clients.iter().find(|(_, c)| c.id as i64 == id).map(|(slot, _)| slot);
    let done = slot.is_some_and(|slot| ctx.srv.blocking.force_unblock(slot, error));
    ctx.r.int(i64::from(done));
}

fn help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help(
        "CLIENT",
        // Redis 7.0.15's text, tracking lines included (SETINFO is a 7.2
        // addition Volley accepts for client libraries; 7.0 lists no such line).
        &[
            "CACHING (YES|NO)",
            "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR",
            "    Return the client ID we are redirecting to when tracking is enabled.",
            "GETNAME",
            "    Return the name of the current connection.",
            "ID",
            "    Return the ID of the current connection.",
            "INFO",
            "    Return information about the current client connection.",
            "KILL <ip:port>",
            "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are:",
            "    * ADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made from the specified address",
            "    * LADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made to specified local address",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Kill connections by type.",
            "    * USER <username>",
            "      Kill connections authenticated by <username>.",
            "    * SKIPME (YES|NO)",
            "      Skip killing current connection (default: yes).",
            "LIST [options ...]",
            "    Return information about client connections. Options:",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Return clients of specified type.",
            "UNPAUSE",
            "    Stop the current client pause, resuming traffic.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "REPLY (ON|OFF|SKIP)",
            "    Control the replies sent to the current connection.",
            "SETNAME <name>",
            "    Assign the name <name> to the current connection.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock the specified blocked client.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
            "         [OPTIN] [OPTOUT] [NOLOOP]",
            "    Control server assisted client side caching.",
            "TRACKINGINFO",
            "    Report tracking status for the current connection.",
            "NO-EVICT (ON|OFF)",
            "    Protect current client connection from eviction.",
        ],
    );
}

/// The CLIENT INFO line of client `slot` outside a command of its own
/// (ACL LOG's `client-info`); the command shown is its last one.
pub fn info_line(srv: &Server, slot: usize, argv_mem: usize) -> String {
    let Some(c) = srv.clients.get(slot) else { return String::new() };
    let subs = srv.pubsub.subs(slot).map_or((0, 0, 0), |s| (s.channels.len(), s.patterns.len(), s.shard.len()));
    let tracking = srv.tracking.client(slot).cloned();
    let state_mem = client_evict::state_memory(srv, slot);
    let user = String::from_utf8_lossy(&srv.acl.user(c.user).name).into_owned();
    let cmd = c.last_cmd.and_then(|id| srv.acl.catalog.cmds.get(id)).map_or("NULL", |e| e.name.as_str());
    let blocked = srv.blocking.is_blocked(slot);
    client_line(c, &LineState { blocked, state_mem, subs, tracking, user }, cmd, argv_mem, crate::server::unix_ms())
}
