//! The Lua debugger's line hook and command loop: before each line of a
//! debugged script the hook decides whether to stop (stepping, a
//! breakpoint, `redis.breakpoint()`, a likely endless loop); at a stop it
//! sends the session's log and reads and runs debugger commands from the
//! client until one resumes the script. Also `redis.debug()` and
//! `redis.breakpoint()`.
use std::ffi::{c_int, CStr};
use std::time::Instant;

use mlua::ffi::{self, lua_State};

use super::ldb::Ldb;
use super::ldb_lua;
use super::ldb_text::{self as text, Parsed};
use super::{Scripting, Shared};

/// Instructions between count events (the infinite-loop check).
const HOOK_COUNT: c_int = 100_000;
/// Most unparsed command bytes buffered before the session is ended.
const MAX_CLIENT_BUFFER: usize = 1 << 20;
/// Stop time after which a running script is stopped as a likely infinite
/// loop, when `busy-reply-threshold` is 0.
const DEFAULT_TIMEOUT_MS: u128 = 5000;

/// What a debugger command asks of the stopped script.
enum Flow {
    /// Keep reading commands.
    Stay,
    /// Run on (step or continue).
    Resume,
    /// Stop the script with an error.
    Abort,
}

const HELP: &[&str] = &[
    "Redis Lua debugger help:",
    "[h]elp               Show this help.",
    "[s]tep               Run current line and stop again.",
    "[n]ext               Alias for step.",
    "[c]ontinue           Run till next breakpoint.",
    "[l]ist               List source code around current line.",
    "[l]ist [line]        List source code around [line].",
    "                     line = 0 means: current position.",
    "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
    "                     to show before/after [line].",
    "[w]hole              List all source code. Alias for 'list 1 1000000'.",
    "[p]rint              Show all the local variables.",
    "[p]rint <var>        Show the value of the specified variable.",
    "                     Can also show global vars KEYS and ARGV.",
    "[b]reak              Show all breakpoints.",
    "[b]reak <line>       Add a breakpoint to the specified line.",
    "[b]reak -<line>      Remove breakpoint from the specified line.",
    "[b]reak 0            Remove all breakpoints.",
    "[t]race              Show a backtrace.",
    "[e]val <code>        Execute some Lua code (in a different callframe).",
    "[r]edis <cmd>        Execute a Redis command.",
    "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
    "                     Specifying zero as <len> means unlimited.",
    "[a]bort              Stop the execution of the script. In sync",
    "                     mode dataset changes will be retained.",
    "",
    "Debugger functions you can call from Lua scripts:",
    "redis.debug()        Produce logs in the debugger console.",
    "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
    "                     next line of code.",
];

/// Run one debugger command at a stop.
///
/// # Safety
/// `l` is the stopped script's thread, inside the line hook.
unsafe fn execute(l: *mut lua_State, ldb: &Ldb, argv: &[Vec<u8>]) -> Flow {
    // Compared as a C string, as Redis does: a NUL ends the name.
    let name = argv[0].split(|&b| b == 0).next().unwrap_or_default().to_ascii_lowercase();
    let is = |short: &str, long: &str| name == short.as_bytes() || name == long.as_bytes();
    if is("s", "step") || is("n", "next") {
        ldb.step.set(true);
        return Flow::Resume;
    } else if is("c", "continue") {
        return Flow::Resume;
    } else if is("a", "abort") {
        return Flow::Abort;
    } else if is("h", "help") {
        HELP.iter().for_each(|line| ldb.log(line.as_bytes().to_vec()));
    } else if is("t", "trace") {
        // SAFETY: per the contract.
        unsafe { ldb_lua::trace(l, ldb) };
    } else if is("m", "maxlen") {
        ldb.maxlen_command(argv);
    } else if is("b", "break") {
        ldb.breakpoint_command(argv);
    } else if is("e", "eval") {
        // SAFETY: per the contract.
        unsafe { ldb_lua::eval(l, ldb, &argv[1..]) };
    } else if argv.len() > 1 && is("r", "redis") {
        // SAFETY: per the contract.
        unsafe { ldb_lua::redis(l, ldb, &argv[1..]) };
    } else if is("p", "print") {
        // SAFETY: per the contract.
        unsafe {
            match argv.get(1).filter(|_| argv.len() == 2) {
                Some(var) => ldb_lua::print_var(l, ldb, var),
                None => ldb_lua::print_all(l, ldb),
            }
        }
    } else if is("l", "list") {
        let mut around = ldb.currentline.get() as i64;
        if let Some(n) = argv.get(1).map(|a| text::atoi(a)).filter(|&n| n > 0) {
            around = n;
        }
        let context = argv.get(2).map_or(5, |a| text::atoi(a));
        ldb.list(around, context);
    } else if is("w", "whole") {
        ldb.list(1, 1_000_000);
    } else {
        ldb.log(b"<error> Unknown Redis Lua debugger command or wrong number of arguments.".to_vec());
    }
    ldb.send_logs();
    Flow::Stay
}

/// Why the command loop ended.
enum ReplEnd {
    Resume,
    /// The client closed the connection: run on without stopping.
    ClientGone,
    /// Stop the script with this error.
    Raise(&'static CStr),
}

/// Read and run debugger commands until one resumes the script.
///
/// # Safety
/// `l` is the stopped script's thread, inside the line hook.
unsafe fn repl(l: *mut lua_State, ldb: &Ldb) -> ReplEnd {
    loop {
        let argv = loop {
            let parsed = text::parse_command(&ldb.cbuf.borrow());
            match parsed {
                Parsed::Command(argv) => break argv,
                Parsed::Error => {
                    ldb.cbuf.borrow_mut().clear();
                    return ReplEnd::Raise(c"protocol error");
                }
                Parsed::More => {}
            }
            let mut buf = [0u8; 1024];
            // SAFETY: the link is valid while the EVAL that began the session runs.
            let read = ldb.link.get().map(|link| unsafe { (*link).read_blocking(&mut buf) });
            let n = match read {
                Some(Ok(n)) if n > 0 => n,
                _ => {
                    ldb.step.set(false);
                    ldb.breakpoints.borrow_mut().clear();
                    return ReplEnd::ClientGone;
                }
            };
            let mut cbuf = ldb.cbuf.borrow_mut();
            cbuf.extend_from_slice(&buf[..n]);
            if cbuf.len() > MAX_CLIENT_BUFFER {
                *cbuf = Vec::new();
                return ReplEnd::Raise(c"max client buffer reached");
            }
        };
        ldb.cbuf.borrow_mut().clear();
        // SAFETY: per the contract.
        match unsafe { execute(l, ldb, &argv) } {
            Flow::Stay => {}
            Flow::Resume => return ReplEnd::Resume,
            Flow::Abort => return ReplEnd::Raise(c"script aborted for user request"),
        }
    }
}

/// Debug a run: the line hook replaces the busy-script hook until
/// `busy::restore`.
///
/// # Safety
/// `l` is the main thread of an idle state whose registry holds its
/// `Shared` (`busy::install`).
pub(super) unsafe fn install_hook(l: *mut lua_State) {
    // SAFETY: per the contract.
    unsafe { ffi::lua_sethook(l, Some(line_hook), ffi::LUA_MASKLINE | ffi::LUA_MASKCOUNT, HOOK_COUNT) };
}

/// Called before each line of a debugged script (and every
/// [`HOOK_COUNT`] instructions, to catch infinite loops).
unsafe extern "C-unwind" fn line_hook(l: *mut lua_State, ar: *mut ffi::lua_Debug) {
    // SAFETY: a hook call on a thread of a state set up by `busy::install`;
    // `stop` returns with every Rust value dropped before `lua_error`.
    unsafe {
        let Some(shared) = super::busy::shared_of(l).as_ref() else { return };
        if let Some(msg) = stop(l, ar, shared) {
            ldb_lua::push_error(l, msg);
            ffi::lua_error(l);
        }
    }
}

/// Decide whether to stop at this line, and run the command loop if so.
/// Some(message) when the script must end with that error.
unsafe fn stop(l: *mut lua_State, ar: *mut ffi::lua_Debug, shared: &Shared) -> Option<&'static CStr> {
    let ldb = &shared.ldb;
    // SAFETY: `ar` is the hook's record; level 0 is the running function.
    let (line, event, ours) = unsafe {
        ffi::lua_getstack(l, 0, ar);
        ffi::lua_getinfo(l, c"Sl".as_ptr(), ar);
        let src = CStr::from_ptr((*ar).short_src.as_ptr()).to_bytes();
        ((*ar).currentline, (*ar).event, src.windows(11).any(|w| w == b"user_script"))
    };
    // Lines of debugger `eval` code and of the sandbox's own Lua are not
    // the user's script.
    if !ours || !ldb.active.get() {
        return None;
    }
    ldb.currentline.set(line);
    let bp = ldb.is_breakpoint(line) || ldb.luabp.get();
    let mut timeout = false;
    if event == ffi::LUA_HOOKCOUNT && !ldb.step.get() && !bp {
        if elapsed_ms(shared) < timeout_ms(shared) {
            return None;
        }
        timeout = true;
        ldb.step.set(true);
    }
    if !ldb.step.get() && !bp {
        return None;
    }
    let reason = match (bp, ldb.luabp.get(), timeout) {
        (true, true, _) => "redis.breakpoint() called",
        (true, false, _) => "break point",
        (false, _, true) => "timeout reached, infinite loop?",
        _ => "step over",
    };
    ldb.step.set(false);
    ldb.luabp.set(false);
    ldb.log(format!("* Stopped at {line}, stop reason = {reason}").into_bytes());
    ldb.log_source_line(line);
    ldb.send_logs();
    // SAFETY: inside the hook, per `line_hook`.
    let end = unsafe { repl(l, ldb) };
    restart_clock(shared);
    match end {
        ReplEnd::Resume => None,
        // Nobody can stop an endless loop now: end it.
        ReplEnd::ClientGone if timeout => Some(c"timeout during Lua debugging with client closing connection"),
        ReplEnd::ClientGone => None,
        ReplEnd::Raise(msg) => Some(msg),
    }
}

/// How long the run has gone since it started or last stopped.
fn elapsed_ms(shared: &Shared) -> u128 {
    // SAFETY: the hook runs inside a script run, see `Shared::server`.
    let srv = unsafe { shared.server() };
    srv.and_then(|s| s.scripting.get::<Scripting>().running.as_ref()).map_or(0, |r| r.started.elapsed().as_millis())
}

fn timeout_ms(shared: &Shared) -> u128 {
    // SAFETY: as in `elapsed_ms`.
    let threshold = unsafe { shared.server() }.map_or(0, |s| s.config.busy_reply_threshold as u128);
    if threshold == 0 {
        DEFAULT_TIMEOUT_MS
    } else {
        threshold
    }
}

/// Time spent stopped does not count towards the run's time limits.
fn restart_clock(shared: &Shared) {
    // SAFETY: as in `elapsed_ms`.
    if let Some(run) = unsafe { shared.server() }.and_then(|s| s.scripting.get_mut::<Scripting>().running.as_mut()) {
        run.started = Instant::now();
    }
}

/// `redis.breakpoint()`: stop at the next line (true), if a session runs.
pub(super) unsafe extern "C-unwind" fn lua_breakpoint(l: *mut lua_State) -> c_int {
    // SAFETY: a C function with our `Shared` as upvalue 1; one push.
    unsafe {
        let shared = &*(ffi::lua_touserdata(l, ffi::lua_upvalueindex(1)) as *const Shared);
        let active = shared.ldb.active.get();
        if active {
            shared.ldb.luabp.set(true);
        }
        ffi::lua_pushboolean(l, active as c_int);
    }
    1
}

/// `redis.debug(...)`: log the arguments, if a session runs.
pub(super) unsafe extern "C-unwind" fn lua_debug(l: *mut lua_State) -> c_int {
    // SAFETY: a C function with our `Shared` as upvalue 1; values are only
    // read (rendering pushes and pops its own iteration state).
    unsafe {
        let shared = &*(ffi::lua_touserdata(l, ffi::lua_upvalueindex(1)) as *const Shared);
        let ldb = &shared.ldb;
        if !ldb.active.get() {
            return 0;
        }
        let argc = ffi::lua_gettop(l);
        let mut entry = format!("<debug> line {}: ", ldb.currentline.get()).into_bytes();
        for i in 1..=argc {
            ldb_lua::push_value(&mut entry, l, i);
            if i != argc {
                entry.extend_from_slice(b", ");
            }
        }
        ldb.log(entry);
    }
    0
}
