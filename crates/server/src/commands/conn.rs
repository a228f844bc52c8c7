//! Connection commands: PING ECHO QUIT SELECT AUTH HELLO RESET.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::parse_i64;
use crate::server::acl::log::Context;
use crate::server::acl::Denied;
use crate::server::ReplyMode;
use crate::spec;

/// Version string reported to clients; clients gate features on it.
pub const REDIS_VERSION: &str = "7.0.15";

const NONE: (i32, i32, i32) = (0, 0, 0);

static SPECS: [CommandSpec; 7] = [
    spec!(
        "ping",
        -1,
        FAST | SENTINEL,
        NONE,
        ping,
        "connection",
        "1.0.0",
        "Returns the server's liveliness response.",
        ["fast", "connection"]
    ),
    spec!(
        "echo",
        2,
        LOADING | STALE | FAST,
        NONE,
        echo,
        "connection",
        "1.0.0",
        "Returns the given string.",
        ["fast", "connection"]
    ),
    spec!(
        "quit",
        -1,
        NOSCRIPT | ALLOW_BUSY | NO_AUTH | FAST | LOADING | STALE,
        NONE,
        quit,
        "connection",
        "1.0.0",
        "Closes the connection.",
        ["fast", "connection"]
    ),
    spec!(
        "select",
        2,
        LOADING | STALE | FAST,
        NONE,
        select,
        "connection",
        "1.0.0",
        "Changes the selected database.",
        ["fast", "connection"]
    ),
    spec!(
        "auth",
        -2,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY,
        NONE,
        auth,
        "connection",
        "1.0.0",
        "Authenticates the connection.",
        ["fast", "connection"]
    ),
    spec!(
        "hello",
        -1,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY,
        NONE,
        hello,
        "connection",
        "6.0.0",
        "Handshakes with the Redis server.",
        ["fast", "connection"]
    ),
    spec!(
        "reset",
        1,
        NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY,
        NONE,
        reset,
        "connection",
        "6.2.0",
        "Resets the connection.",
        ["fast", "connection"]
    ),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn ping(ctx: &mut Ctx, argv: &Argv) {
    let c = ctx.client();
    if c.pubsub && c.resp == 2 {
        // Subscribed RESP2 connections carry messages: PING answers in
        // their shape, as Redis does.
        if argv.len() > 2 {
            return ctx.r.error("ERR wrong number of arguments for 'ping' command");
        }
        ctx.r.array(2);
        ctx.r.bulk(b"pong");
        return ctx.r.bulk(if argv.len() == 2 { argv.get(1) } else { b"" });
    }
    match argv.len() {
        1 => ctx.r.raw(b"+PONG\r\n"),
        2 => ctx.r.bulk(argv.get(1)),
        _ => ctx.r.error("ERR wrong number of arguments for 'ping' command"),
    }
}

fn echo(ctx: &mut Ctx, argv: &Argv) {
    ctx.r.bulk(argv.get(1));
}

fn quit(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.ok();
    ctx.client().close_after_reply = true;
}

fn select(ctx: &mut Ctx, argv: &Argv) {
    let Some(i) = parse_i64(argv.get(1)) else {
        return ctx.not_integer();
    };
    if i < 0 || i as usize >= ctx.srv.keyspace.dbs.len() {
        return ctx.r.error("ERR DB index is out of range");
    }
    ctx.db = i as usize;
    ctx.client().db = i as usize;
    ctx.r.ok();
}

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// Log the client in as `user` if `pass` opens it; a failure is logged in
/// the ACL log (reason `auth`, object `AUTH`), as Redis does.
fn authenticate(ctx: &mut Ctx, argv: &Argv, user: &[u8], pass: &[u8]) -> bool {
    match ctx.srv.acl.check_credentials(user, pass) {
        Some(slot) => {
            let c = ctx.client();
            c.authenticated = true;
            c.user = slot;
            true
        }
        None => {
            let in_multi = ctx.client().tx.is_some();
            let context = if in_multi { Context::Multi } else { Context::Toplevel };
            let argv_mem = argv.mem();
            ctx.srv.acl_log(ctx.cid, Denied::Auth, (context, argv_mem), b"AUTH", Some(user));
            false
        }
    }
}

fn auth(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 3 {
        return ctx.syntax_error();
    }
    let (user, pass) = if argv.len() == 3 { (argv.get(1), argv.get(2)) } else { (&b"default"[..], argv.get(1)) };
    if argv.len() == 2 && ctx.srv.acl.default_user().nopass {
        return ctx.r.error(
            "ERR AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
        );
    }
    if authenticate(ctx, argv, user, pass) {
        ctx.r.ok();
    } else {
        ctx.r.error(WRONGPASS);
    }
}

/// A client name must be printable ASCII without spaces (Redis's rule).
pub fn valid_client_name(name: &[u8]) -> bool {
    name.iter().all(|&b| (b'!'..=b'~').contains(&b))
}

fn hello(ctx: &mut Ctx, argv: &Argv) {
    let mut proto = None;
    let mut i = 1;
    if argv.len() >= 2 {
        match parse_i64(argv.get(1)) {
            None => return ctx.r.error("ERR Protocol version is not an integer or out of range"),
            Some(v) if !(2..=3).contains(&v) => return ctx.r.error("NOPROTO unsupported protocol version"),
            Some(v) => proto = Some(v as u8),
        }
        i = 2;
    }
    let mut setname = None;
    while i < argv.len() {
        let more = argv.len() - i - 1;
        if argv.is(i, "auth") && more >= 2 {
            if !authenticate(ctx, argv, argv.get(i + 1), argv.get(i + 2)) {
                return ctx.r.error(WRONGPASS);
            }
            i += 3;
        } else if argv.is(i, "setname") && more >= 1 {
            setname = Some(argv.get(i + 1));
            i += 2;
        } else {
            let opt = String::from_utf8_lossy(argv.get(i)).into_owned();
            return ctx.r.error(&format!("ERR Syntax error in HELLO option '{opt}'"));
        }
    }
    let authenticated = ctx.client().authenticated;
    if ctx.srv.acl.auth_required(authenticated) {
        return ctx.r.error(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> \
             AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol \
             version at the same time",
        );
    }
    if let Some(name) = setname {
        if !valid_client_name(name) {
            return ctx.r.error("ERR Client names cannot contain spaces, newlines or special characters.");
        }
        ctx.client().name = (!name.is_empty()).then(|| name.to_vec());
    }
    if let Some(p) = proto {
        ctx.client().resp = p;
        ctx.r.set_resp3(p == 3);
    }
    write_hello_map(ctx);
}

fn write_hello_map(ctx: &mut Ctx) {
    let (id, resp) = {
        let c = ctx.client();
        (c.id, c.resp)
    };
    let r = &mut ctx.r;
    r.map(7);
    r.bulk(b"server");
    r.bulk(b"redis");
    r.bulk(b"version");
    r.bulk(REDIS_VERSION.as_bytes());
    r.bulk(b"proto");
    r.int(resp as i64);
    r.bulk(b"id");
    r.int(id as i64);
    r.bulk(b"mode");
    r.bulk(b"standalone");
    r.bulk(b"role");
    r.bulk(b"master");
    r.bulk(b"modules");
    r.array(0);
}

fn reset(ctx: &mut Ctx, _argv: &Argv) {
    let open = ctx.srv.acl.default_is_open();
    ctx.db = 0;
    let c = ctx.client();
    c.db = 0;
    c.resp = 2;
    c.name = None;
    // As Redis 7.0: CLIENT REPLY OFF and a pending SKIP end, but a SKIP
    // that applies to this very RESET still drops its reply, and the
    // no-evict flag is not connection state that RESET clears.
    if c.reply_mode != ReplyMode::Skipping {
        c.reply_mode = ReplyMode::On;
    }
    // RESET logs the client back in as the default user, authenticated
    // only if that user needs no password (Redis's clearClientConnectionState).
    c.user = crate::server::acl::DEFAULT_USER;
    c.authenticated = open;
    c.tx = None;
    c.pubsub = false;
    c.monitor = false;
    ctx.srv.unwatch_all(ctx.cid);
    ctx.srv.pubsub.drop_client(ctx.cid);
    ctx.srv.tracking_off(ctx.cid);
    ctx.r.set_resp3(false);
    ctx.r.simple(b"RESET");
}
