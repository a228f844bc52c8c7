//! SLOWLOG GET|LEN|RESET|HELP over the log in `server::slowlog` (the call
//! path fills it).
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::parse_i64;
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);
const ADMIN_FLAGS: u32 = ADMIN | LOADING | STALE;

#[rustfmt::skip]
static SUBS: [CommandSpec; 4] = [
    spec!("help", 2, LOADING | STALE, NONE, slowlog_help, "server", "6.2.0", "Show helpful text about the different subcommands", ["slow"]),
    spec!("len", 2, ADMIN_FLAGS, NONE, slowlog_len, "server", "2.2.12", "Get the slow log's length", ["admin", "slow", "dangerous"]),
    spec!("get", -2, ADMIN_FLAGS, NONE, slowlog_get, "server", "2.2.12", "Get the slow log's entries", ["admin", "slow", "dangerous"]),
    spec!("reset", 2, ADMIN_FLAGS, NONE, slowlog_reset, "server", "2.2.12", "Clear all entries from the slow log", ["admin", "slow", "dangerous"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    CommandSpec { subcommands: &SUBS, ..spec!("slowlog", -2, 0, NONE, container, "server", "2.2.12", "A container for slow log commands", ["slow"]) },
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn container(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.error("ERR unknown subcommand. Try SLOWLOG HELP.");
}

const HELP: &[&str] = &[
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
];

fn slowlog_help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help("SLOWLOG", HELP);
}

fn slowlog_len(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.int(ctx.srv.slowlog.len() as i64);
}

fn slowlog_reset(ctx: &mut Ctx, _argv: &Argv) {
    ctx.srv.slowlog.reset();
    ctx.r.ok();
}

fn slowlog_get(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 3 {
        let sub = String::from_utf8_lossy(argv.get(1)).into_owned();
        return ctx
            .r
            .error(&format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try SLOWLOG HELP."));
    }
    let mut count = 10usize;
    if argv.len() == 3 {
        match parse_i64(argv.get(2)) {
            Some(-1) => count = usize::MAX,
            Some(n) if n >= 0 => count = n as usize,
            _ => return ctx.r.error("ERR count should be greater than or equal to -1"),
        }
    }
    let log = &ctx.srv.slowlog;
    ctx.r.array(count.min(log.len()));
    for e in log.iter().take(count) {
        ctx.r.array(6);
        ctx.r.int(e.id as i64);
        ctx.r.int(e.time);
        ctx.r.int(e.duration_us as i64);
        ctx.r.array(e.argv.len());
        for a in &e.argv {
            ctx.r.bulk(a);
        }
        ctx.r.bulk(e.peer.as_bytes());
        ctx.r.bulk(&e.name);
    }
}
