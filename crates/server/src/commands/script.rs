//! Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT
//! LOAD|EXISTS|FLUSH|KILL|HELP. Argument checks live here; running a script
//! is `crate::scripting`'s job.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::parse_i64;
use crate::scripting::{self, ldb_session, KillOutcome, Scripting, Source};
use crate::server::LuaDebug;
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);
const EVAL_FLAGS: u32 = NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS;

#[rustfmt::skip]
static SCRIPT_SUBS: [CommandSpec; 6] = [
    spec!("exists", -3, NOSCRIPT, NONE, script_exists, "scripting", "2.6.0", "Determines whether server-side Lua scripts exist in the script cache.", ["slow", "scripting"]),
    spec!("flush", -2, NOSCRIPT, NONE, script_flush, "scripting", "2.6.0", "Removes all server-side Lua scripts from the script cache.", ["slow", "scripting"]),
    spec!("help", 2, LOADING | STALE, NONE, script_help, "scripting", "5.0.0", "Returns helpful text about the different subcommands.", ["slow", "scripting"]),
    spec!("kill", 2, NOSCRIPT | ALLOW_BUSY, NONE, script_kill, "scripting", "2.6.0", "Terminates a server-side Lua script during execution.", ["slow", "scripting"]),
    spec!("load", 3, NOSCRIPT | STALE, NONE, script_load, "scripting", "2.6.0", "Loads a server-side Lua script to the script cache.", ["slow", "scripting"]),
    spec!("debug", 3, NOSCRIPT, NONE, script_debug, "scripting", "3.2.0", "Sets the debug mode of server-side Lua scripts.", ["slow", "scripting"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 5] = [
    spec!("eval", -3, EVAL_FLAGS | MAY_REPLICATE, NONE, eval, "scripting", "2.6.0", "Executes a server-side Lua script.", ["slow", "scripting"]),
    spec!("evalsha", -3, EVAL_FLAGS | MAY_REPLICATE, NONE, evalsha, "scripting", "2.6.0", "Executes a server-side Lua script by SHA1 digest.", ["slow", "scripting"]),
    spec!("eval_ro", -3, READONLY | EVAL_FLAGS, NONE, eval_ro, "scripting", "7.0.0", "Executes a read-only server-side Lua script.", ["slow", "scripting"]),
    spec!("evalsha_ro", -3, READONLY | EVAL_FLAGS, NONE, evalsha_ro, "scripting", "7.0.0", "Executes a read-only server-side Lua script by SHA1 digest.", ["slow", "scripting"]),
    CommandSpec { subcommands: &SCRIPT_SUBS, ..spec!("script", -2, 0, NONE, script_container, "scripting", "2.6.0", "A container for Lua scripts management commands.", ["slow"]) },
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn eval(ctx: &mut Ctx, argv: &Argv) {
    eval_generic(ctx, argv, false, false);
}
fn evalsha(ctx: &mut Ctx, argv: &Argv) {
    eval_generic(ctx, argv, true, false);
}
fn eval_ro(ctx: &mut Ctx, argv: &Argv) {
    eval_generic(ctx, argv, false, true);
}
fn evalsha_ro(ctx: &mut Ctx, argv: &Argv) {
    eval_generic(ctx, argv, true, true);
}

/// `EVAL script numkeys key... arg...`: check numkeys, then run.
fn eval_generic(ctx: &mut Ctx, argv: &Argv, by_sha: bool, readonly: bool) {
    // Flagged skip_monitor: shown here, so the script's commands come after it.
    if !ctx.srv.pubsub.monitors.is_empty() {
        crate::dispatch::feed_monitors(ctx, argv);
    }
    let debug = ctx.client().lua_debug;
    if debug != LuaDebug::Off {
        return eval_debugging(ctx, argv, by_sha, readonly, debug);
    }
    let Some((keys, args)) = keys_and_args(ctx, argv, "ERR value is not an integer or out of range") else { return };
    let src = if by_sha { Source::Sha(argv.get(1)) } else { Source::Body(argv.get(1)) };
    scripting::eval(ctx, src, &keys, &args, readonly);
}

/// EVAL under SCRIPT DEBUG: the session wraps the whole command, argument
/// checks included, as in Redis.
fn eval_debugging(ctx: &mut Ctx, argv: &Argv, by_sha: bool, readonly: bool, mode: LuaDebug) {
    if by_sha {
        let msg = if argv.get(1).len() != 40 {
            "NOSCRIPT No matching script. Please use EVAL."
        } else {
            "ERR Please use EVAL instead of EVALSHA for debugging"
        };
        return ctx.r.error(msg);
    }
    let body = argv.get(1);
    if let ldb_session::Started::Done = ldb_session::start(ctx, body, mode) {
        return;
    }
    if let Some((keys, args)) = keys_and_args(ctx, argv, "ERR value is not an integer or out of range") {
        scripting::eval(ctx, Source::Body(body), &keys, &args, readonly);
    }
    ldb_session::end(ctx, mode);
}

/// The keys and then the other arguments of a script or function call.
pub(super) type KeysAndArgs<'a> = (Vec<&'a [u8]>, Vec<&'a [u8]>);

/// The keys and the other arguments of a command shaped like EVAL and
/// FCALL (`numkeys` at position 2), or None after the error reply;
/// `bad_count` answers a numkeys that is not an integer.
pub(super) fn keys_and_args<'a>(ctx: &mut Ctx, argv: &Argv<'a>, bad_count: &str) -> Option<KeysAndArgs<'a>> {
    let Some(numkeys) = parse_i64(argv.get(2)) else {
        ctx.r.error(bad_count);
        return None;
    };
    if numkeys > (argv.len() - 3) as i64 {
        ctx.r.error("ERR Number of keys can't be greater than number of args");
        return None;
    }
    if numkeys < 0 {
        ctx.r.error("ERR Number of keys can't be negative");
        return None;
    }
    let split = 3 + numkeys as usize;
    Some(((3..split).map(|i| argv.get(i)).collect(), argv.iter_from(split).collect()))
}

fn script_container(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.error("ERR unknown subcommand. Try SCRIPT HELP.");
}

fn script_load(ctx: &mut Ctx, argv: &Argv) {
    match ctx.srv.scripting.get_mut::<Scripting>().load(argv.get(2)) {
        Ok(sha) => ctx.r.bulk(&sha),
        Err(msg) => ctx.r.error(&msg),
    }
}

fn script_exists(ctx: &mut Ctx, argv: &Argv) {
    ctx.r.array(argv.len() - 2);
    for sha in argv.iter_from(2) {
        let found = ctx.srv.scripting.get::<Scripting>().exists(sha);
        ctx.r.int(found as i64);
    }
}

fn script_flush(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 3 || (argv.len() == 3 && !argv.is(2, "sync") && !argv.is(2, "async")) {
        return ctx.r.error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    let lazy = if argv.len() == 3 { argv.is(2, "async") } else { ctx.srv.config.lazyfree_lazy_user_flush };
    let (old, n) = ctx.srv.scripting.get_mut::<Scripting>().flush();
    // Redis's freeLuaScriptsAsync: over 64 scripts go to the thread.
    if lazy {
        ctx.srv.lazyfree.free_many(old, n);
    }
    ctx.r.ok();
}

fn script_kill(ctx: &mut Ctx, _argv: &Argv) {
    kill(ctx, false);
}

/// SCRIPT KILL (`function` false) and FUNCTION KILL.
pub(super) fn kill(ctx: &mut Ctx, function: bool) {
    match ctx.srv.scripting.get_mut::<Scripting>().kill(function) {
        KillOutcome::NotBusy => ctx.r.error("NOTBUSY No scripts in execution right now."),
        KillOutcome::Unkillable => ctx.r.error("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."),
        KillOutcome::OtherKind => {
            let killer = if function { "SCRIPT KILL" } else { "FUNCTION KILL" };
            ctx.r.error(&format!("BUSY Redis is busy running a script. You can only call {killer} or SHUTDOWN NOSAVE."))
        }
        KillOutcome::Killed => ctx.r.ok(),
    }
}

/// SCRIPT DEBUG YES|SYNC|NO: how this client's next EVALs are debugged.
fn script_debug(ctx: &mut Ctx, argv: &Argv) {
    // Redis refuses while replies are waiting to be written: a session
    // writes to the connection directly and would overtake them.
    if !ctx.r.is_empty() {
        return ctx.r.error("ERR SCRIPT DEBUG must be called outside a pipeline");
    }
    let mode = match argv.get(2).to_ascii_lowercase().as_slice() {
        b"no" => LuaDebug::Off,
        b"yes" => LuaDebug::Forked,
        b"sync" => LuaDebug::Sync,
        _ => return ctx.r.error("ERR Use SCRIPT DEBUG YES/SYNC/NO"),
    };
    ldb_session::set_mode(ctx, mode);
    ctx.r.ok();
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];

fn script_help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.array(HELP.len());
    for line in HELP {
        ctx.r.simple(line.as_bytes());
    }
}
