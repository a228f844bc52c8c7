//! One script run. [`run_script`] begins the run (`Scripting::running`),
//! enters Lua once, and ends it; everything the script does happens in
//! between, so that is where a lead wanting script effects to be one atomic
//! unit (MULTI/EXEC-style propagation) hooks in.
//!
//! Entering Lua goes through one pre-made C function (`run_job`) called
//! with `lua_pcall`: it sets KEYS and ARGV, calls the script through the
//! runner (`xpcall` with the error handler) and writes the reply straight
//! from the Lua stack. No mlua wrappers on this path: each of those costs a
//! protected call with a freshly allocated closure.
use std::ffi::c_int;
use std::time::Instant;

use mlua::ffi::{self, lua_State};

use super::{convert, Run, Scripting, Shared, GC_AFTER_RUN_ABOVE};
use crate::dispatch::{Ctx, Reply};
use crate::server::Server;

/// Which Lua state a run enters.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Engine {
    /// EVAL's state: KEYS and ARGV are globals.
    Eval,
    /// The function libraries' state: KEYS and ARGV are the callback's
    /// two arguments.
    Function,
}

/// What `run_job` needs, passed as light userdata.
struct Job<'a, 'r> {
    keys: &'a [&'a [u8]],
    args: &'a [&'a [u8]],
    engine: Engine,
    globals_ref: c_int,
    runner_ref: c_int,
    func_ref: c_int,
    shared: &'a Shared,
    reply: &'a mut Reply<'r>,
    sha: &'a str,
}

/// The script or function to run: its engine, its registry reference, the
/// name errors cite (an EVAL's SHA, a function's name), and for FCALL the
/// caller's command (FUNCTION STATS shows it).
pub(super) struct Target<'a> {
    pub engine: Engine,
    pub func_ref: c_int,
    pub name: &'a str,
    pub caller: Option<Vec<Vec<u8>>>,
}

/// Run `target` and write its reply.
pub(super) fn run_script(ctx: &mut Ctx, target: Target, readonly: bool, keys: &[&[u8]], args: &[&[u8]]) {
    let sc = ctx.srv.scripting.get_mut::<Scripting>();
    let state = sc.state_of(target.engine);
    let (l, globals_ref, runner_ref, job_ref) = (state.raw, state.globals_ref, state.runner_ref, state.job_ref);
    let (func_ref, engine, sha) = (target.func_ref, target.engine, target.name);
    let shared = sc.shared.clone();
    sc.running = Some(Run {
        reg: ctx.reg,
        cid: ctx.cid,
        db: ctx.db,
        now: ctx.now,
        readonly,
        wrote: false,
        resp: 2,
        started: Instant::now(),
        kill: false,
        last_poll: None,
        function: target.caller.map(|argv| (sha.as_bytes().to_vec(), argv)),
    });
    // The script's writes reach the AOF as one MULTI/EXEC block (each inner
    // command propagates itself through `dispatch::call`), never the EVAL.
    ctx.srv.changes.begin_atomic();
    shared.srv.set(&mut *ctx.srv as *mut Server);
    let debugging = shared.ldb.active();
    if debugging {
        // SAFETY: `l` is idle and its registry holds `shared`.
        unsafe { super::ldb_hook::install_hook(l) };
    }
    let mut job =
        Job { keys, args, engine, globals_ref, runner_ref, func_ref, shared: &shared, reply: &mut ctx.r, sha };
    // SAFETY: `l` is the state's main thread, idle (no Lua runs outside
    // scripts); two pushes fit in its free stack; the job outlives the call.
    let failure = unsafe {
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, job_ref as ffi::lua_Integer);
        ffi::lua_pushlightuserdata(l, &mut job as *mut Job as *mut std::ffi::c_void);
        match ffi::lua_pcall(l, 1, 0, 0) {
            0 => None,
            _ => {
                let mut len = 0usize;
                let p = ffi::lua_tolstring(l, -1, &mut len) as *const u8;
                let text = if p.is_null() { Vec::new() } else { std::slice::from_raw_parts(p, len).to_vec() };
                ffi::lua_settop(l, -2);
                Some(text)
            }
        }
    };
    shared.srv.set(std::ptr::null_mut());
    let run = ctx.srv.scripting.get_mut::<Scripting>().running.take().expect("run state set above");
    ctx.srv.script_busy = None;
    ctx.srv.changes.end_atomic();
    // `redis.set_repl` lasts for the run only.
    ctx.srv.changes.set_withheld(0);
    ctx.replicate_nothing();
    if run.kill || debugging {
        // SAFETY: the run is over; `l` is idle.
        unsafe { super::busy::restore(l) };
    }
    if let Some(text) = failure {
        let mut msg = b"ERR Error running script: ".to_vec();
        msg.extend_from_slice(&text);
        if run.kill {
            let source = if engine == Engine::Eval { "@user_script" } else { "@user_function" };
            msg = format!("ERR Script killed by user with SCRIPT KILL... script: {sha}, on {source}:1.").into_bytes();
        }
        ctx.r.error_bytes(&msg);
    }
    let lua = &ctx.srv.scripting.get_mut::<Scripting>().state_of(engine).lua;
    if lua.used_memory() > GC_AFTER_RUN_ABOVE {
        // A big (often failed) run leaves garbage the incremental GC would
        // keep for a long while; give it back now.
        let _ = lua.gc_collect();
    }
    // SELECT inside the script does not change the caller's database.
    let db = ctx.db;
    ctx.client().db = db;
}

/// The C function behind every run (registered once per state).
pub(super) unsafe extern "C-unwind" fn run_job(l: *mut lua_State) -> c_int {
    // SAFETY: called by `run_script` with a live Job as argument 1; raw
    // pushes and reads only, and no Rust value with a destructor is alive
    // across a call that may raise.
    unsafe {
        let job = &mut *(ffi::lua_touserdata(l, 1) as *mut Job);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, job.globals_ref as ffi::lua_Integer);
        if job.engine == Engine::Eval {
            set_list(l, c"KEYS", job.keys);
            set_list(l, c"ARGV", job.args);
        }
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, job.runner_ref as ffi::lua_Integer);
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, job.func_ref as ffi::lua_Integer);
        if job.engine == Engine::Eval {
            ffi::lua_call(l, 1, 2);
        } else {
            push_list(l, job.keys);
            push_list(l, job.args);
            ffi::lua_call(l, 3, 2);
        }
        // Stack: job, globals, ok, value.
        let (resp3, killed) = match job.shared.server().and_then(|s| s.scripting.get::<Scripting>().running.as_ref()) {
            Some(run) => (run.resp == 3, run.kill),
            None => (false, false),
        };
        if ffi::lua_toboolean(l, 3) != 0 {
            convert::write_value(l, 4, job.reply, resp3, 0);
        } else {
            match convert::script_error(l, 4, job.sha, killed) {
                (msg, true) => job.reply.error_counted_elsewhere(&msg),
                (msg, false) => job.reply.error_bytes(&msg),
            }
        }
        0
    }
}

/// Push a new array of `items` (a function's KEYS or ARGV).
unsafe fn push_list(l: *mut lua_State, items: &[&[u8]]) {
    // SAFETY: one table pushed and filled; the caller made stack room.
    unsafe {
        ffi::lua_createtable(l, items.len() as c_int, 0);
        for (i, item) in items.iter().enumerate() {
            ffi::lua_pushlstring(l, item.as_ptr() as *const _, item.len());
            ffi::lua_rawseti(l, -2, i as ffi::lua_Integer + 1);
        }
    }
}

/// Fill `globals[name]` with `items`; the globals table is on top. The
/// table is reused from run to run (scripts cannot keep a reference: the
/// globals are read-only), its old tail cleared.
unsafe fn set_list(l: *mut lua_State, name: &std::ffi::CStr, items: &[&[u8]]) {
    // SAFETY: a few pushes, balanced before returning.
    unsafe {
        ffi::lua_pushstring(l, name.as_ptr());
        ffi::lua_rawget(l, -2);
        if ffi::lua_type(l, -1) != ffi::LUA_TTABLE {
            ffi::lua_settop(l, -2);
            ffi::lua_pushstring(l, name.as_ptr());
            ffi::lua_createtable(l, items.len() as c_int, 0);
            ffi::lua_rawset(l, -3);
            ffi::lua_pushstring(l, name.as_ptr());
            ffi::lua_rawget(l, -2);
        }
        for (i, item) in items.iter().enumerate() {
            ffi::lua_pushlstring(l, item.as_ptr() as *const _, item.len());
            ffi::lua_rawseti(l, -2, i as ffi::lua_Integer + 1);
        }
        let mut i = items.len() as ffi::lua_Integer + 1;
        loop {
            ffi::lua_rawgeti(l, -1, i);
            let nil = ffi::lua_type(l, -1) == ffi::LUA_TNIL;
            ffi::lua_settop(l, -2);
            if nil {
                break;
            }
            ffi::lua_pushnil(l);
            ffi::lua_rawseti(l, -2, i);
            i += 1;
        }
        ffi::lua_settop(l, -2);
    }
}
