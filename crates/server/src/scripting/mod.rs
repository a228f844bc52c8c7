//! Lua scripting (EVAL and friends): the Lua state, the script cache keyed by
//! SHA1, and one script run from start to end.
//!
//! A run is the unit the rest of the server sees: `run::run_script` begins
//! it (sets `Scripting::running`) and ends it (clears it) around one call
//! into Lua; every command the script issues goes through `dispatch::call`
//! in between (see `call.rs`), so stats, WATCH and blocked-client wake-ups
//! (and any propagation added to `call`) see script writes too. To wrap a
//! script's effects as one atomic unit, hook the start and end of that run
//! (marked `script run begins` / `ends` in `run.rs`).
//!
//! Files: `sandbox` builds the Lua state (with `readonly` tables and the
//! text-only `loaders`), `run` enters it, `stack` is
//! `redis.call` on the raw C API, `call` applies the script rules and runs
//! the command, `convert` turns the result into a reply, `busy` is the
//! instruction hook (busy scripts, SCRIPT KILL), `rand` is `math.random`.
//!
//! Lua callbacks need the server while Lua runs, but the server is already
//! mutably borrowed by the EVAL handler that called into Lua. The handler
//! parks a raw pointer to it in [`Shared`] for exactly the duration of the
//! call; the callbacks (and the instruction hook) reborrow it while the Lua
//! code that invoked them is suspended, so there is never a second live path
//! to the server.
mod busy;
mod call;
mod convert;
pub mod function;
mod ldb;
mod ldb_hook;
mod ldb_lua;
pub mod ldb_session;
mod ldb_text;
pub mod libs;
mod loaders;
mod rand;
mod readonly;
mod run;
mod sandbox;
mod stack;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::rc::Rc;
use std::time::Instant;

use mlua::Lua;

use crate::dispatch::registry::NameHasher;
use crate::dispatch::Ctx;
use crate::server::Server;

/// Lua heap cap: a runaway script gets an error reply instead of taking the
/// server's memory (Redis has no cap; this is a safety net, not a feature).
pub const LUA_MEMORY_LIMIT: usize = 512 << 20;

/// Lua heap size above which a full collection runs after a script.
const GC_AFTER_RUN_ABOVE: usize = 64 << 20;

/// State the Lua callbacks share with the server; outlives Lua states
/// (SCRIPT FLUSH makes a new state but keeps the random generator going,
/// as Redis does).
pub(crate) struct Shared {
    /// The server, valid only while a script runs (null otherwise).
    srv: Cell<*mut Server>,
    /// Reusable buffer for the replies of commands scripts call.
    reply_buf: RefCell<Vec<u8>>,
    /// Reusable command line for the commands scripts call, and scratch
    /// space for formatting numeric arguments.
    args: RefCell<resp::Args>,
    arg_buf: RefCell<Vec<u8>>,
    /// `redisLrand48` state behind `math.random`.
    rand: Cell<u64>,
    /// Functions a loading library registered (None: no library loads).
    registering: RefCell<Option<Vec<function::FunctionInfo>>>,
    /// When a loading library's top level runs out of time.
    load_deadline: Cell<Option<Instant>>,
    /// The Lua debugger's session (SCRIPT DEBUG).
    ldb: ldb::Ldb,
}

impl Shared {
    /// The running script's server, or None outside a run.
    ///
    /// # Safety
    /// Callers are Lua callbacks: the pointer is set only while the EVAL
    /// handler that owns the `&mut Server` is suspended inside Lua.
    #[allow(clippy::mut_from_ref)]
    unsafe fn server(&self) -> Option<&mut Server> {
        // SAFETY: see above; null when no script runs.
        unsafe { self.srv.get().as_mut() }
    }
}

/// Flags from a `#!lua flags=...` shebang line.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScriptFlags {
    /// The script has a shebang, so its flags count. Without one (Redis's
    /// compatibility mode) writes are checked command by command only.
    pub declared: bool,
    /// [`function::FLAG_NAMES`] bits.
    pub bits: u8,
}

impl ScriptFlags {
    /// The script declared that it does not write.
    pub fn no_writes(&self) -> bool {
        self.declared && self.bits & function::NO_WRITES != 0
    }
}

struct Script {
    /// Registry reference of the compiled function.
    func_ref: std::ffi::c_int,
    flags: ScriptFlags,
}

/// One script run in progress.
pub struct Run {
    /// Caller's client slot.
    pub cid: usize,
    /// Database the script's commands use (SELECT inside a script changes it
    /// for the rest of the script only).
    pub db: usize,
    pub now: i64,
    /// The command table the script's commands are looked up in.
    pub reg: &'static crate::dispatch::Registry,
    /// EVAL_RO / EVALSHA_RO or `no-writes`: write commands are refused.
    pub readonly: bool,
    /// A write command ran: SCRIPT KILL must refuse (UNKILLABLE).
    pub wrote: bool,
    /// Protocol of the replies commands give the script (`redis.setresp`).
    pub resp: u8,
    pub started: Instant,
    /// SCRIPT KILL asked this run to stop.
    pub kill: bool,
    /// When the busy poller last ran.
    pub last_poll: Option<Instant>,
    /// FCALL: the function's name and the caller's command (FUNCTION STATS).
    pub function: Option<(Vec<u8>, Vec<Vec<u8>>)>,
}

/// A Lua state with its sandbox, and registry references to what a run
/// needs (see `run.rs`).
struct State {
    /// The main thread, for the raw C API.
    raw: *mut mlua::ffi::lua_State,
    /// The real global table (behind the read-only proxy scripts see).
    globals_ref: std::ffi::c_int,
    /// `function(f) return xpcall(f, handler) end`.
    runner_ref: std::ffi::c_int,
    /// The C function `run::run_job`.
    job_ref: std::ffi::c_int,
    lua: Lua,
}

/// Everything scripting keeps in the server.
pub struct Scripting {
    /// Declared before `state`: function handles drop before their Lua state.
    scripts: HashMap<[u8; 40], Script, BuildHasherDefault<NameHasher>>,
    state: State,
    shared: Rc<Shared>,
    pub running: Option<Run>,
    bodies_bytes: usize,
    /// FUNCTION libraries, in a Lua state of their own.
    pub functions: function::Functions,
}

impl Default for Scripting {
    fn default() -> Self {
        Self::new()
    }
}

impl Scripting {
    pub fn new() -> Self {
        let shared = Rc::new(Shared {
            srv: Cell::new(std::ptr::null_mut()),
            reply_buf: RefCell::new(Vec::new()),
            args: RefCell::new(resp::Args::default()),
            arg_buf: RefCell::new(Vec::new()),
            rand: Cell::new(rand::INITIAL_STATE),
            registering: RefCell::new(None),
            load_deadline: Cell::new(None),
            ldb: ldb::Ldb::default(),
        });
        let state = sandbox::new_state(&shared).expect("building the Lua sandbox");
        let functions = function::Functions::new(&shared);
        Scripting { scripts: HashMap::default(), state, shared, running: None, bodies_bytes: 0, functions }
    }

    fn state_of(&self, engine: run::Engine) -> &State {
        match engine {
            run::Engine::Eval => &self.state,
            run::Engine::Function => &self.functions.state.base,
        }
    }

    /// The Lua state the running script (if any) runs in.
    fn running_state(&self) -> Option<&State> {
        let function = self.running.as_ref()?.function.is_some();
        Some(self.state_of(if function { run::Engine::Function } else { run::Engine::Eval }))
    }

    /// SCRIPT FLUSH: forget every script and start from a fresh Lua state.
    /// Hands back the old script table and its size, for SCRIPT FLUSH ASYNC
    /// to free on the lazy-free thread (the Lua state itself is closed here,
    /// as Redis closes it on the main thread too).
    pub fn flush(&mut self) -> (Box<dyn Send>, usize) {
        let old = std::mem::take(&mut self.scripts);
        self.bodies_bytes = 0;
        self.state = sandbox::new_state(&self.shared).expect("building the Lua sandbox");
        let n = old.len();
        (Box::new(old), n)
    }

    pub fn cached_scripts(&self) -> usize {
        self.scripts.len()
    }
    /// Bytes the Lua heap uses (INFO `used_memory_lua`).
    pub fn lua_memory(&self) -> usize {
        self.state.lua.used_memory()
    }
    /// Bytes of cached script bodies (INFO `used_memory_scripts`).
    pub fn scripts_memory(&self) -> usize {
        self.bodies_bytes
    }
    pub fn exists(&self, sha: &[u8]) -> bool {
        normalize_sha(sha).is_some_and(|k| self.scripts.contains_key(&k))
    }

    /// Compile `body` into the cache (if new) and return its SHA1.
    pub fn load(&mut self, body: &[u8]) -> Result<[u8; 40], String> {
        let sha = sha1_hex(body);
        if !self.scripts.contains_key(&sha) {
            let flags = parse_shebang(body)?;
            let func_ref = sandbox::compile(&self.state.lua, body).map_err(|e| compile_error(&e))?;
            self.bodies_bytes += body.len();
            self.scripts.insert(sha, Script { func_ref, flags });
        }
        Ok(sha)
    }
}

/// Lowercase hex SHA1 of `body`.
pub fn sha1_hex(body: &[u8]) -> [u8; 40] {
    let hex = sha1_smol::Sha1::from(body).digest().to_string();
    let mut out = [0u8; 40];
    out.copy_from_slice(hex.as_bytes());
    out
}

/// A client-typed SHA (any case) as a cache key; None if it can't be one.
fn normalize_sha(sha: &[u8]) -> Option<[u8; 40]> {
    let mut k: [u8; 40] = sha.try_into().ok()?;
    k.make_ascii_lowercase();
    Some(k)
}

fn compile_error(e: &mlua::Error) -> String {
    let msg = match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        other => other.to_string(),
    };
    format!("ERR Error compiling script (new function): {msg}")
}

/// Redis 7.0's shebang: `#!lua` then optional `flags=a,b` on the first
/// line (split like a command line; `flags=` alone declares no flags).
fn parse_shebang(body: &[u8]) -> Result<ScriptFlags, String> {
    if !body.starts_with(b"#!") {
        return Ok(ScriptFlags::default());
    }
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let line_end = body.iter().position(|&b| b == b'\n').ok_or("ERR Invalid script shebang")?;
    let parts = resp::splitargs::split_args(&body[..line_end]).filter(|p| !p.is_empty());
    let parts = parts.ok_or("ERR Invalid engine in script shebang")?;
    if parts[0] != b"#!lua" {
        return Err(format!("ERR Unexpected engine in script shebang: {}", lossy(&parts[0])));
    }
    let mut flags = ScriptFlags { declared: true, bits: 0 };
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix(b"flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {}", lossy(part)));
        };
        if list.is_empty() {
            continue;
        }
        for name in list.split(|&b| b == b',') {
            let Some(i) = function::FLAG_NAMES.iter().position(|f| f.as_bytes() == name) else {
                return Err(format!("ERR Unexpected flag in script shebang: {}", lossy(name)));
            };
            flags.bits |= 1 << i;
        }
    }
    Ok(flags)
}

/// `server::ScriptMayWrite` for the dispatch layer (`Server::script_may_write`):
/// whether EVAL (`first` the body), EVALSHA (the SHA) or FCALL (the
/// function's name) may write, by the flags the script declared, as
/// Redis's `evalGetCommandFlags` / `fcallGetCommandFlags` decide. A script
/// without a shebang, or one not found, may.
pub fn may_write(srv: &Server, command: &str, first: &[u8]) -> bool {
    let sc = srv.scripting.get::<Scripting>();
    let flags = match command {
        "fcall" => return sc.functions.find(first).is_none_or(|f| f.flags & function::NO_WRITES == 0),
        "evalsha" => normalize_sha(first).and_then(|k| sc.scripts.get(&k)).map(|s| s.flags),
        _ => match sc.scripts.get(&sha1_hex(first)) {
            Some(s) => Some(s.flags),
            None => parse_shebang(first).ok(),
        },
    };
    !flags.is_some_and(|f| f.no_writes())
}

/// The `allow-oom` bit of [`function::FLAG_NAMES`].
const ALLOW_OOM: u8 = 1 << 1;

/// `server::ScriptCmdFlags` for the guards (`Server::script_cmd_flags`):
/// EVAL/EVALSHA/FCALL (or their `_RO` forms) of a script that declared
/// flags (functions always do) lose their own write, denyoom and stale
/// flags and take the script's, as Redis's `scriptFlagsToCmdFlags`:
/// write unless `no-writes`, denyoom unless `no-writes` or `allow-oom`,
/// stale with `allow-stale`. A script without a shebang (whose first
/// refused call fails instead, see `call`), or one not found, keeps the
/// command's flags.
pub fn cmd_flags(srv: &Server, command: &str, own: u32, first: &[u8]) -> u32 {
    use crate::dispatch::flags::{DENYOOM, STALE, WRITE};
    let Some(bits) = declared(srv, command, first) else { return own };
    let mut flags = own & !(STALE | DENYOOM | WRITE);
    if bits & (ALLOW_OOM | function::NO_WRITES) == 0 {
        flags |= DENYOOM;
    }
    if bits & function::NO_WRITES == 0 {
        flags |= WRITE;
    }
    if bits & ALLOW_STALE != 0 {
        flags |= STALE;
    }
    flags
}

/// The flags the script declared, if it did (functions always do).
fn declared(srv: &Server, command: &str, first: &[u8]) -> Option<u8> {
    let sc = srv.scripting.get::<Scripting>();
    let flags = match command.trim_end_matches("_ro") {
        "fcall" => return sc.functions.find(first).map(|f| f.flags),
        "evalsha" => normalize_sha(first).and_then(|k| sc.scripts.get(&k)).map(|s| s.flags),
        _ => match sc.scripts.get(&sha1_hex(first)) {
            Some(s) => Some(s.flags),
            None => parse_shebang(first).ok(),
        },
    };
    flags.filter(|f| f.declared).map(|f| f.bits)
}

/// Where a script comes from: its body (EVAL) or its SHA (EVALSHA).
pub enum Source<'a> {
    Body(&'a [u8]),
    Sha(&'a [u8]),
}

/// EVAL / EVALSHA / *_RO after argument checks: find or compile the script,
/// run it with `keys` and `args`, and write its reply.
pub fn eval(ctx: &mut Ctx, src: Source, keys: &[&[u8]], args: &[&[u8]], readonly: bool) {
    let sc = ctx.srv.scripting.get_mut::<Scripting>();
    let sha = match src {
        Source::Body(body) => match sc.load(body) {
            Ok(sha) => sha,
            Err(msg) => return ctx.r.error(&msg),
        },
        Source::Sha(sha) => match normalize_sha(sha).filter(|k| sc.scripts.contains_key(k)) {
            Some(k) => k,
            None => return ctx.r.error("NOSCRIPT No matching script. Please use EVAL."),
        },
    };
    let script = &sc.scripts[&sha];
    let (func_ref, flags) = (script.func_ref, script.flags);
    // Without a shebang (Redis's compatibility mode) only a stale replica
    // refuses the run itself.
    if !flags.declared && ctx.srv.denials.stale_replica {
        return ctx.r.error(MASTERDOWN);
    }
    if flags.declared {
        if let Err(msg) = check_declared(ctx.srv, ctx.cid, flags.bits, readonly) {
            return ctx.r.error(&msg);
        }
        // An allow-oom script's calls ignore the OOM state (Redis's
        // SCRIPT_ALLOW_OOM); the guard sets it again for the next command.
        ctx.srv.evict.pre_command_oom &= flags.bits & ALLOW_OOM == 0;
    }
    let readonly = readonly || flags.no_writes();
    let name = std::str::from_utf8(&sha).unwrap_or_default();
    let target = run::Target { engine: run::Engine::Eval, func_ref, name, caller: None };
    run::run_script(ctx, target, readonly, keys, args);
}

/// What SCRIPT KILL / FUNCTION KILL does to the running script.
pub enum KillOutcome {
    NotBusy,
    Unkillable,
    /// The other kind runs (a function for SCRIPT KILL, an EVAL for
    /// FUNCTION KILL): the reply is that kind's -BUSY.
    OtherKind,
    Killed,
}

impl Scripting {
    /// SCRIPT KILL (`function` false) or FUNCTION KILL: ask the running
    /// script to stop, unless it already wrote or is of the other kind.
    pub fn kill(&mut self, function: bool) -> KillOutcome {
        match self.running.as_mut() {
            None => KillOutcome::NotBusy,
            Some(r) if r.wrote => KillOutcome::Unkillable,
            Some(r) if r.function.is_some() != function => KillOutcome::OtherKind,
            Some(r) => {
                r.kill = true;
                KillOutcome::Killed
            }
        }
    }
}

impl Scripting {
    /// FUNCTION LOAD: returns the library's name.
    pub fn load_library(&mut self, code: &[u8], replace: bool) -> Result<Vec<u8>, String> {
        self.functions.load(&self.shared, code, replace)
    }

    /// FUNCTION RESTORE and loading a dump: every library of `codes`, or none.
    pub fn restore_libraries(&mut self, codes: &[Vec<u8>], policy: function::RestorePolicy) -> Result<(), String> {
        self.functions.restore(&self.shared, codes, policy)
    }
}

/// FCALL / FCALL_RO of function `name` (known to exist) with `keys` and
/// `args`; `caller` is the command, for FUNCTION STATS. A function without
/// `no-writes` is refused where writes would be (MISCONF, `_RO`).
pub fn fcall(ctx: &mut Ctx, name: &[u8], keys: &[&[u8]], args: &[&[u8]], ro: bool, caller: Vec<Vec<u8>>) {
    let sc = ctx.srv.scripting.get::<Scripting>();
    let Some(f) = sc.functions.find(name) else { return ctx.r.error("ERR Function not found") };
    let (func_ref, flags) = (f.func_ref, f.flags);
    if let Err(msg) = check_declared(ctx.srv, ctx.cid, flags, ro) {
        return ctx.r.error(&msg);
    }
    ctx.srv.evict.pre_command_oom &= flags & ALLOW_OOM == 0;
    let name = String::from_utf8_lossy(name).into_owned();
    let target = run::Target { engine: run::Engine::Function, func_ref, name: &name, caller: Some(caller) };
    run::run_script(ctx, target, ro || flags & function::NO_WRITES != 0, keys, args);
}

/// Redis's reply on a stale replica (`shared.masterdownerr`).
const MASTERDOWN: &str = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";

/// The `allow-stale` bit of [`function::FLAG_NAMES`].
const ALLOW_STALE: u8 = 1 << 2;

/// Redis's checks before a script that declared its flags (a function,
/// or an EVAL with a shebang) runs (`scriptPrepareForRun`): one without
/// `allow-stale` is refused on a stale replica; one that may write on a
/// read-only replica (unless our primary runs it), while writes are
/// refused for a disk error, through a `_RO` command, and without enough
/// good replicas; one without `allow-oom` when over `maxmemory`. Most are
/// met only inside MULTI/EXEC: a client's EVAL got the guards' reply
/// already.
fn check_declared(srv: &Server, cid: usize, bits: u8, ro: bool) -> Result<(), String> {
    if srv.denials.stale_replica && bits & ALLOW_STALE == 0 {
        return Err("MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to 'no' and 'allow-stale' \
                    flag is not set on the script."
            .into());
    }
    if bits & function::NO_WRITES != 0 {
        return Ok(());
    }
    if srv.denials.readonly_replica && !obeyed(srv, cid) {
        return Err("READONLY Can not run script with write flag on readonly replica".into());
    }
    let cfg = &srv.config;
    if srv.denials.bgsave_failed && cfg.stop_writes_on_bgsave_error && !cfg.save.is_empty() {
        return Err("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to \
                    disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts."
            .into());
    }
    if let Some(e) = &srv.denials.aof_error {
        return Err(format!(
            "MISCONF Redis is configured to persist data to AOF, but it's currently unable to persist to disk. \
             Writable scripts are blocked. Use 'no-writes' flag for read only scripts. AOF error: {e}"
        ));
    }
    if ro {
        return Err("ERR Can not execute a script with write flag using *_ro command.".into());
    }
    if !enough_good_replicas(srv) {
        return Err(NOREPLICAS.into());
    }
    if srv.evict.pre_command_oom && cfg.maxmemory > 0 && bits & ALLOW_OOM == 0 {
        return Err("OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'".into());
    }
    Ok(())
}

/// Whether client `cid` is our primary, whose scripts run whatever this
/// replica's state (Redis's `mustObeyClient`).
fn obeyed(srv: &Server, cid: usize) -> bool {
    srv.clients.get(cid).is_some_and(|c| c.role == crate::server::ClientRole::Master)
}

/// Why the server refuses a write command right now (a script's first
/// write gets the same replies as a client's), if it does.
fn writes_refused(srv: &Server) -> Result<(), String> {
    let cfg = &srv.config;
    if srv.denials.bgsave_failed && cfg.stop_writes_on_bgsave_error && !cfg.save.is_empty() {
        return Err("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to \
                    disk. Commands that may modify the data set are disabled, because this instance is configured \
                    to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). \
                    Please check the Redis logs for details about the RDB error."
            .into());
    }
    if let Some(e) = &srv.denials.aof_error {
        return Err(format!("MISCONF Errors writing to the AOF file: {e}"));
    }
    if !enough_good_replicas(srv) {
        return Err(NOREPLICAS.into());
    }
    Ok(())
}

/// Redis's reply to a write without enough good replicas.
const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";

/// `min-replicas-to-write` is met.
fn enough_good_replicas(srv: &Server) -> bool {
    // Replication keeps the verdict current (cron, ACKs, CONFIG SET).
    !srv.denials.too_few_replicas
}
