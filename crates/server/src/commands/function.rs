//! FUNCTION LOAD|DELETE|DUMP|RESTORE|FLUSH|KILL|LIST|STATS|HELP, FCALL and
//! FCALL_RO: argument checks and Redis 7.0's replies. Libraries and runs
//! are `crate::scripting`'s; the dump payload format is `persistence`'s.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::glob::glob_match;
use crate::scripting::function::{RestorePolicy, FLAG_NAMES};
use crate::scripting::{self, Scripting};
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);
const FCALL_FLAGS: u32 = NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLEKEYS;

#[rustfmt::skip]
static FUNCTION_SUBS: [CommandSpec; 9] = [
    spec!("delete", 3, WRITE | NOSCRIPT, NONE, delete, "scripting", "7.0.0", "Delete a function by name", ["write", "slow", "scripting"]),
    spec!("dump", 2, NOSCRIPT, NONE, dump, "scripting", "7.0.0", "Dump all functions into a serialized binary payload", ["slow", "scripting"]),
    spec!("flush", -2, WRITE | NOSCRIPT, NONE, flush, "scripting", "7.0.0", "Deleting all functions", ["write", "slow", "scripting"]),
    spec!("help", 2, LOADING | STALE, NONE, help, "scripting", "7.0.0", "Show helpful text about the different subcommands", ["slow", "scripting"]),
    spec!("kill", 2, NOSCRIPT | ALLOW_BUSY, NONE, kill, "scripting", "7.0.0", "Kill the function currently in execution.", ["slow", "scripting"]),
    spec!("list", -2, NOSCRIPT, NONE, list, "scripting", "7.0.0", "List information about all the functions", ["slow", "scripting"]),
    spec!("load", -3, WRITE | DENYOOM | NOSCRIPT, NONE, load, "scripting", "7.0.0", "Create a function with the given arguments (name, code, description)", ["write", "slow", "scripting"]),
    spec!("restore", -3, WRITE | DENYOOM | NOSCRIPT, NONE, restore, "scripting", "7.0.0", "Restore all the functions on the given payload", ["write", "slow", "scripting"]),
    spec!("stats", 2, NOSCRIPT | ALLOW_BUSY, NONE, stats, "scripting", "7.0.0", "Return information about the function currently running (name, description, duration)", ["slow", "scripting"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 3] = [
    spec!("fcall", -3, FCALL_FLAGS | MAY_REPLICATE, NONE, fcall, "scripting", "7.0.0", "Invoke a function", ["slow", "scripting"]),
    spec!("fcall_ro", -3, READONLY | FCALL_FLAGS, NONE, fcall_ro, "scripting", "7.0.0", "Invoke a read-only function", ["slow", "scripting"]),
    CommandSpec { subcommands: &FUNCTION_SUBS, ..spec!("function", -2, 0, NONE, container, "scripting", "7.0.0", "A container for function commands", ["slow"]) },
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn container(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.error("ERR unknown subcommand. Try FUNCTION HELP.");
}

fn scripting<'c>(ctx: &'c mut Ctx) -> &'c mut Scripting {
    ctx.srv.scripting.get_mut::<Scripting>()
}

fn fcall(ctx: &mut Ctx, argv: &Argv) {
    fcall_generic(ctx, argv, false);
}

fn fcall_ro(ctx: &mut Ctx, argv: &Argv) {
    fcall_generic(ctx, argv, true);
}

/// `FCALL name numkeys key... arg...`: the function must exist before the
/// key count is looked at, as in Redis.
fn fcall_generic(ctx: &mut Ctx, argv: &Argv, ro: bool) {
    // Flagged skip_monitor: shown here, so the function's commands come after it.
    if !ctx.srv.pubsub.monitors.is_empty() {
        crate::dispatch::feed_monitors(ctx, argv);
    }
    let name = argv.get(1);
    if scripting(ctx).functions.find(name).is_none() {
        return ctx.r.error("ERR Function not found");
    }
    let Some((keys, args)) = super::script::keys_and_args(ctx, argv, "ERR Bad number of keys provided") else {
        return;
    };
    let caller = argv.iter_from(0).map(|a| a.to_vec()).collect();
    scripting::fcall(ctx, name, &keys, &args, ro, caller);
}

/// `FUNCTION LOAD [REPLACE] code`.
fn load(ctx: &mut Ctx, argv: &Argv) {
    let mut replace = false;
    let mut at = 2;
    while at < argv.len() - 1 {
        if !argv.is(at, "replace") {
            let opt = String::from_utf8_lossy(argv.get(at)).into_owned();
            return ctx.r.error(&format!("ERR Unknown option given: {opt}"));
        }
        replace = true;
        at += 1;
    }
    match scripting(ctx).load_library(argv.get(at), replace) {
        Ok(name) => {
            ctx.dirty(1);
            ctx.r.bulk(&name);
        }
        Err(msg) => ctx.r.error(&msg),
    }
}

fn delete(ctx: &mut Ctx, argv: &Argv) {
    match scripting(ctx).functions.delete(argv.get(2)) {
        Ok(()) => {
            ctx.dirty(1);
            ctx.r.ok();
        }
        Err(msg) => ctx.r.error(msg),
    }
}

/// `FUNCTION FLUSH [ASYNC|SYNC]`: both free at once here (a library is
/// small; Redis's async flush only moves the freeing off the main thread).
fn flush(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 3 {
        return subcommand_syntax_error(ctx, "flush");
    }
    if argv.len() == 3 && !argv.is(2, "sync") && !argv.is(2, "async") {
        return ctx.r.error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    }
    scripting(ctx).functions.flush();
    ctx.dirty(1);
    ctx.r.ok();
}

fn kill(ctx: &mut Ctx, _argv: &Argv) {
    super::script::kill(ctx, true);
}

fn subcommand_syntax_error(ctx: &mut Ctx, sub: &str) {
    ctx.r.error(&format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try FUNCTION HELP."));
}

/// `FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]`.
fn list(ctx: &mut Ctx, argv: &Argv) {
    let (mut with_code, mut pattern) = (false, None);
    let mut i = 2;
    while i < argv.len() {
        if !with_code && argv.is(i, "withcode") {
            with_code = true;
        } else if pattern.is_none() && argv.is(i, "libraryname") {
            if i + 1 >= argv.len() {
                return ctx.r.error("ERR library name argument was not given");
            }
            i += 1;
            pattern = Some(argv.get(i));
        } else {
            let arg = String::from_utf8_lossy(argv.get(i)).into_owned();
            return ctx.r.error(&format!("ERR Unknown argument {arg}"));
        }
        i += 1;
    }
    let functions = &ctx.srv.scripting.get::<Scripting>().functions;
    let libs: Vec<_> =
        functions.libraries().iter().filter(|l| pattern.is_none_or(|p| glob_match(p, &l.name, false))).collect();
    let r = &mut ctx.r;
    r.array(libs.len());
    for lib in libs {
        r.map(if with_code { 4 } else { 3 });
        r.bulk(b"library_name");
        r.bulk(&lib.name);
        r.bulk(b"engine");
        r.bulk(b"LUA");
        r.bulk(b"functions");
        r.array(lib.functions.len());
        for f in &lib.functions {
            r.map(3);
            r.bulk(b"name");
            r.bulk(&f.name);
            r.bulk(b"description");
            match &f.desc {
                Some(d) => r.bulk(d),
                None => r.null(),
            }
            r.bulk(b"flags");
            let names: Vec<&str> =
                FLAG_NAMES.iter().enumerate().filter(|(b, _)| f.flags & (1 << b) != 0).map(|(_, n)| *n).collect();
            r.set(names.len());
            for n in names {
                r.simple(n.as_bytes());
            }
        }
        if with_code {
            r.bulk(b"library_code");
            r.bulk(&lib.code);
        }
    }
}

/// `FUNCTION STATS`: the running function (or nil) and the engine's counts.
/// While an EVAL is busy it is that EVAL's -BUSY, as in Redis.
fn stats(ctx: &mut Ctx, _argv: &Argv) {
    let sc = ctx.srv.scripting.get::<Scripting>();
    if let Some(run) = sc.running.as_ref().filter(|r| r.function.is_none()) {
        let _ = run;
        return ctx.r.error("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
    }
    let running = sc.running.as_ref().and_then(|r| r.function.clone().map(|f| (f, r.started.elapsed())));
    let (libs, funcs) = (sc.functions.libraries().len(), sc.functions.function_count());
    let r = &mut ctx.r;
    r.map(2);
    r.bulk(b"running_script");
    match running {
        None => r.null(),
        Some(((name, command), took)) => {
            r.map(3);
            r.bulk(b"name");
            r.bulk(&name);
            r.bulk(b"command");
            r.array(command.len());
            for a in &command {
                r.bulk(a);
            }
            r.bulk(b"duration_ms");
            r.int(took.as_millis() as i64);
        }
    }
    r.bulk(b"engines");
    r.map(1);
    r.bulk(b"LUA");
    r.map(2);
    r.bulk(b"libraries_count");
    r.int(libs as i64);
    r.bulk(b"functions_count");
    r.int(funcs as i64);
}

/// `FUNCTION DUMP`: every library's code in Redis's payload format.
fn dump(ctx: &mut Ctx, _argv: &Argv) {
    let codes = crate::persistence::function_codes(ctx.srv);
    ctx.r.bulk(&crate::persistence::dump_functions(&codes, ctx.srv.config.rdbcompression));
}

/// `FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]`.
fn restore(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 4 {
        return subcommand_syntax_error(ctx, "restore");
    }
    let policy = match argv.len() {
        3 => RestorePolicy::Append,
        _ if argv.is(3, "append") => RestorePolicy::Append,
        _ if argv.is(3, "replace") => RestorePolicy::Replace,
        _ if argv.is(3, "flush") => RestorePolicy::Flush,
        _ => return ctx.r.error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."),
    };
    let codes = match crate::persistence::parse_function_dump(argv.get(2)) {
        Ok(codes) => codes,
        Err(msg) => return ctx.r.error(&msg),
    };
    match scripting(ctx).restore_libraries(&codes, policy) {
        Ok(()) => {
            ctx.dirty(1);
            ctx.r.ok();
        }
        Err(msg) => ctx.r.error(&msg),
    }
}

fn help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help("FUNCTION", HELP);
}

const HELP: &[&str] = &[
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
];
