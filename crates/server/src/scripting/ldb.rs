//! Redis's Lua debugger (LDB: `SCRIPT DEBUG YES|SYNC`, `redis-cli --ldb`):
//! the session state, the line hook that stops the script, and the
//! debugger's command loop.
//!
//! As in Redis, a session talks to its client directly, outside the event
//! loop: the hook stops at a line, sends the log lines gathered so far as
//! one array of status replies, and reads the client's next debugger
//! command from the connection (a [`ClientLink`] the connection layer
//! lends for the EVAL), answering each the same way until one resumes the
//! script. Meanwhile nothing else runs: a SYNC session blocks the server.
//! The text formats are in `ldb_text`, the Lua-side commands (`print`,
//! `eval`, `redis`, `trace`, value rendering) in `ldb_lua`.
//!
//! State lives in [`Shared`] (cells, borrowed only between Lua calls), so
//! `redis.call` can log `<redis>`/`<reply>` lines while the user steps.
use std::cell::{Cell, RefCell};
use std::ffi::{c_int, CStr};
use std::time::Instant;

use mlua::ffi::{self, lua_State};

use super::ldb_lua;
use super::ldb_text::{self as text, Parsed};
use super::{Scripting, Shared};
use crate::server::ClientLink;

/// Most breakpoints at a time.
const MAX_BREAKPOINTS: usize = 64;
/// Instructions between count events (the infinite-loop check).
const HOOK_COUNT: c_int = 100_000;
/// Most unparsed command bytes buffered before the session is ended.
const MAX_CLIENT_BUFFER: usize = 1 << 20;
/// Stop time after which a running script is stopped as a likely infinite
/// loop, when `busy-reply-threshold` is 0.
const DEFAULT_TIMEOUT_MS: u128 = 5000;

/// One debugging session's state (Redis's `ldb`), reset by SCRIPT DEBUG.
#[derive(Default)]
pub(crate) struct Ldb {
    /// A session runs.
    active: Cell<bool>,
    /// Stop at the next line, and log what `redis.call` does meanwhile.
    pub(super) step: Cell<bool>,
    /// `redis.breakpoint()` was called: stop at the next line.
    luabp: Cell<bool>,
    pub(super) currentline: Cell<i32>,
    /// Longest log entry for values and replies (0: no limit).
    maxlen: Cell<usize>,
    hint_sent: Cell<bool>,
    breakpoints: RefCell<Vec<i32>>,
    /// The script's source, one entry per line.
    src: RefCell<Vec<Vec<u8>>>,
    /// Bytes read from the client, not yet a whole command.
    cbuf: RefCell<Vec<u8>>,
    logs: RefCell<Vec<Vec<u8>>>,
    link: Cell<Option<*mut dyn ClientLink>>,
}

/// What a debugger command asks of the stopped script.
enum Flow {
    /// Keep reading commands.
    Stay,
    /// Run on (step or continue).
    Resume,
    /// Stop the script with an error.
    Abort,
}

impl Ldb {
    /// SCRIPT DEBUG YES/SYNC: fresh settings for the client's sessions.
    pub(crate) fn enable(&self) {
        self.logs.borrow_mut().clear();
        self.step.set(true);
        self.breakpoints.borrow_mut().clear();
        self.luabp.set(false);
        self.cbuf.borrow_mut().clear();
        self.maxlen.set(text::MAXLEN_DEFAULT);
        self.hint_sent.set(false);
    }

    pub(crate) fn link(&self) -> Option<*mut dyn ClientLink> {
        self.link.get()
    }

    pub(crate) fn active(&self) -> bool {
        self.active.get()
    }

    /// Whether `redis.call` logs its command and reply (stepping).
    #[inline]
    pub(crate) fn logging(&self) -> bool {
        self.active.get() && self.step.get()
    }

    /// Begin a session on `link` for the script `body`.
    pub(crate) fn start(&self, link: *mut dyn ClientLink, body: &[u8]) {
        let mut end = body.len();
        while end > 0 && matches!(body[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        let lines =
            if end == 0 { Vec::new() } else { body[..end].split(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
        *self.src.borrow_mut() = lines;
        self.link.set(Some(link));
        self.active.set(true);
    }

    /// End the session: the remaining log lines and `<endsession>` go out.
    pub(crate) fn end(&self) {
        self.log(b"<endsession>".to_vec());
        self.send_logs();
        self.src.borrow_mut().clear();
        self.link.set(None);
        self.active.set(false);
    }

    pub(super) fn log(&self, entry: Vec<u8>) {
        self.logs.borrow_mut().push(entry);
    }

    /// Log a value or reply, trimmed to `maxlen`; the first trim adds a hint.
    pub(super) fn log_trimmed(&self, mut entry: Vec<u8>) {
        let trimmed = text::trim_to(&mut entry, self.maxlen.get());
        self.log(entry);
        if trimmed && !self.hint_sent.replace(true) {
            self.log(b"<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.".to_vec());
        }
    }

    /// `<redis> cmd arg ...` (at most ten words shown).
    pub(crate) fn log_command(&self, args: &resp::Args) {
        let mut entry = b"<redis>".to_vec();
        for j in 0..args.len() {
            let arg = args.get(&[], j);
            if j == 10 {
                entry.extend_from_slice(format!(" ... ({} more)", args.len() - j - 1).as_bytes());
                break;
            }
            entry.push(b' ');
            entry.extend_from_slice(arg);
        }
        self.log(entry);
    }

    /// `<error> text` for an error a script's command call met: Redis's
    /// own refusals read without their `ERR ` code, command error replies
    /// with their leading `-`.
    pub(crate) fn log_error(&self, msg: &[u8]) {
        let mut entry = b"<error> ".to_vec();
        match msg.strip_prefix(b"ERR ") {
            Some(rest) => entry.extend_from_slice(rest),
            None => {
                entry.push(b'-');
                entry.extend_from_slice(msg);
            }
        }
        self.log(entry);
    }

    /// `<error> -ERR ...` then `<reply> "..."` for a command's reply.
    pub(crate) fn log_reply(&self, reply: &[u8]) {
        if reply.first() == Some(&b'-') {
            let end = reply.windows(2).position(|w| w == b"\r\n").unwrap_or(reply.len());
            let mut entry = b"<error> ".to_vec();
            entry.extend_from_slice(&reply[..end]);
            self.log(entry);
        }
        let mut entry = b"<reply> ".to_vec();
        text::push_reply_human(&mut entry, reply);
        self.log_trimmed(entry);
    }

    /// Send the gathered log lines as one reply. A failed write is left to
    /// the next read to notice, as in Redis.
    fn send_logs(&self) {
        let logs = std::mem::take(&mut *self.logs.borrow_mut());
        let Some(link) = self.link.get() else { return };
        let bytes = text::encode_logs(&logs);
        // SAFETY: the link is valid while the EVAL that began the session runs.
        let _ = unsafe { (*link).write_all_blocking(&bytes) };
    }

    fn is_breakpoint(&self, line: i32) -> bool {
        self.breakpoints.borrow().contains(&line)
    }

    pub(super) fn log_source_line(&self, lnum: i32) {
        let src = self.src.borrow();
        let code: &[u8] = match usize::try_from(lnum - 1).ok().and_then(|i| src.get(i)) {
            Some(line) => line,
            None => b"<out of range source code line>",
        };
        let entry = text::source_line(lnum, code, self.currentline.get() == lnum, self.is_breakpoint(lnum));
        drop(src);
        self.log(entry);
    }

    /// The lines within `context` of `around` (0: every line).
    fn list(&self, around: i64, context: i64) {
        let lines = self.src.borrow().len() as i64;
        for j in 1..=lines {
            if around != 0 && (around - j).abs() > context {
                continue;
            }
            self.log_source_line(j as i32);
        }
    }

    /// `break`: list, add (`N`), remove (`-N`) or clear (`0`) breakpoints.
    fn breakpoint_command(&self, argv: &[Vec<u8>]) {
        if argv.len() == 1 {
            let bps = self.breakpoints.borrow().clone();
            if bps.is_empty() {
                return self.log(b"No breakpoints set. Use 'b <line>' to add one.".to_vec());
            }
            self.log(format!("{} breakpoints set:", bps.len()).into_bytes());
            return bps.iter().for_each(|&l| self.log_source_line(l));
        }
        for arg in &argv[1..] {
            let Some(line) = crate::engine::numeric::parse_i64(arg) else {
                let shown = String::from_utf8_lossy(arg.split(|&b| b == 0).next().unwrap_or_default()).into_owned();
                self.log(format!("Invalid argument:'{shown}'").into_bytes());
                continue;
            };
            let lines = self.src.borrow().len() as i64;
            let mut bps = self.breakpoints.borrow_mut();
            let msg: &[u8] = if line == 0 {
                bps.clear();
                b"All breakpoints removed."
            } else if line > 0 {
                if bps.len() == MAX_BREAKPOINTS {
                    b"Too many breakpoints set."
                } else if line > lines || bps.contains(&(line as i32)) {
                    b"Wrong line number."
                } else {
                    bps.push(line as i32);
                    drop(bps);
                    self.list(line, 1);
                    continue;
                }
            } else if let Some(i) = bps.iter().position(|&b| b as i64 == -line) {
                bps.remove(i);
                b"Breakpoint removed."
            } else {
                b"No breakpoint in the specified line."
            };
            drop(bps);
            self.log(msg.to_vec());
        }
    }

    /// `maxlen [len]`: show or set the log trim length (0: unlimited).
    fn maxlen_command(&self, argv: &[Vec<u8>]) {
        if argv.len() == 2 {
            let mut n = text::atoi(&argv[1]).clamp(i32::MIN as i64, i32::MAX as i64);
            self.hint_sent.set(true);
            if n != 0 && n <= text::MAXLEN_FLOOR as i64 {
                n = text::MAXLEN_FLOOR as i64;
            }
            self.maxlen.set(n as usize);
        }
        let msg = match self.maxlen.get() {
            0 => "<value> replies are unlimited.".to_string(),
            n => format!("<value> replies are truncated at {n} bytes."),
        };
        self.log(msg.into_bytes());
    }
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
