//! Long-running scripts. Every few thousand Lua instructions the hook checks
//! the run: once it has lasted `busy-reply-threshold` ms the server is
//! "busy" and the hook lets the network layer serve other clients through a
//! `server::BusyHook` (about every 10 ms): they get -BUSY for everything except
//! allow-busy commands (the dispatch guard), SCRIPT KILL sets the run's kill
//! flag, SHUTDOWN NOSAVE sets the server's shutdown flag. The hook then stops
//! the script by raising an error. A killed script could catch that error
//! with pcall and loop on, so from then on the hook fires on every line and
//! backward jump too, raising each time, until the run ends
//! ([`restore`] puts the sparse hook back).
//!
//! The hook is a plain C hook, not mlua's: coroutines inherit it from the
//! thread that creates them (mlua's hooks are per thread and drop out in a
//! coroutine, which would make a script looping there unkillable). It finds
//! the state's [`Shared`] through the registry.
use std::ffi::{c_void, CStr};
use std::time::{Duration, Instant};

use mlua::ffi::{self, lua_State};

use super::{Scripting, Shared};
use crate::server::BusyScript;

/// How often (in VM instructions) the hook checks the clock and kill flag.
const HOOK_EVERY: i32 = 10_000;

/// How often other clients are served while a script is busy.
const POLL_EVERY: Duration = Duration::from_millis(10);

/// Its address is the registry key of the state's `Shared`.
static SHARED_KEY: u8 = 0;

/// Install the hook on a new state's main thread.
///
/// # Safety
/// `l` is a state's main thread with room for two pushes; `shared` outlives
/// the state.
pub(super) unsafe fn install(l: *mut lua_State, shared: *const Shared) {
    // SAFETY: per the contract.
    unsafe {
        ffi::lua_pushlightuserdata(l, &SHARED_KEY as *const u8 as *mut c_void);
        ffi::lua_pushlightuserdata(l, shared as *mut c_void);
        ffi::lua_rawset(l, ffi::LUA_REGISTRYINDEX);
        ffi::lua_sethook(l, Some(hook), ffi::LUA_MASKCOUNT, HOOK_EVERY);
    }
}

/// After a killed run: back to the sparse instruction-count hook.
///
/// # Safety
/// `raw` is the main thread of an idle state (no Lua runs).
pub(super) unsafe fn restore(raw: *mut lua_State) {
    // SAFETY: per the contract.
    unsafe { ffi::lua_sethook(raw, Some(hook), ffi::LUA_MASKCOUNT, HOOK_EVERY) };
}

/// From now on, fire on every line (and backward jump) of thread `l`.
///
/// # Safety
/// `l` is a live thread of a state using this hook.
unsafe fn every_line(l: *mut lua_State) {
    // SAFETY: per the contract.
    unsafe { ffi::lua_sethook(l, Some(hook), ffi::LUA_MASKLINE | ffi::LUA_MASKCOUNT, HOOK_EVERY) };
}

/// The `Shared` that `install` put in the registry of `l`'s state (null
/// if none).
///
/// # Safety
/// `l` is a live thread with room for one push.
pub(super) unsafe fn shared_of(l: *mut lua_State) -> *const Shared {
    // SAFETY: per the contract; the push is popped again.
    unsafe {
        ffi::lua_pushlightuserdata(l, &SHARED_KEY as *const u8 as *mut c_void);
        ffi::lua_rawget(l, ffi::LUA_REGISTRYINDEX);
        let shared = ffi::lua_touserdata(l, -1) as *const Shared;
        ffi::lua_settop(l, -2);
        shared
    }
}

unsafe extern "C-unwind" fn hook(l: *mut lua_State, _ar: *mut ffi::lua_Debug) {
    // SAFETY: a hook call on a thread of a state set up by `install`: the
    // registry holds its `Shared`. Nothing with a destructor is alive when
    // `lua_error` unwinds out of this frame.
    unsafe {
        let Some(shared) = shared_of(l).as_ref() else { return };
        if let Err(msg) = check(shared, l) {
            ffi::lua_pushstring(l, msg.as_ptr());
            ffi::lua_error(l);
        }
    }
}

/// What the hook does on thread `l`: Err(message) stops the script.
fn check(shared: &Shared, l: *mut lua_State) -> Result<(), &'static CStr> {
    if let Some(deadline) = shared.load_deadline.get() {
        if Instant::now() > deadline {
            return Err(c"FUNCTION LOAD timeout");
        }
        return Ok(());
    }
    // SAFETY: the hook runs inside a script run, see `Shared::server`.
    let Some(srv) = (unsafe { shared.server() }) else { return Ok(()) };
    let threshold = srv.config.busy_reply_threshold as u128;
    let Some(run) = srv.scripting.get_mut::<Scripting>().running.as_mut() else { return Ok(()) };
    if run.kill {
        return Err(killed(srv, l));
    }
    let elapsed = run.started.elapsed().as_millis();
    if elapsed < threshold || run.last_poll.is_some_and(|t| t.elapsed() < POLL_EVERY) {
        return Ok(());
    }
    run.last_poll = Some(Instant::now());
    if srv.script_busy.is_none() {
        srv.script_busy = Some(if run.function.is_some() { BusyScript::Function } else { BusyScript::Eval });
        crate::log_at!(
            Warning,
            "Slow script detected: still in execution after {elapsed} milliseconds. You can try killing the script using the SCRIPT KILL command."
        );
    }
    if let Some(mut hook) = srv.busy_hook.take() {
        hook.serve(srv);
        srv.busy_hook = Some(hook);
    }
    if srv.shutdown.is_some() {
        return Err(c"Script aborted: the server is shutting down");
    }
    if srv.scripting.get::<Scripting>().running.as_ref().is_some_and(|r| r.kill) {
        return Err(killed(srv, l));
    }
    Ok(())
}

/// The kill error; first makes the hook fire on every line of the thread
/// it fired on and of the state's main thread, so a pcall that catches the
/// error (in a coroutine or not) gets it again on its next line.
fn killed(srv: &mut crate::server::Server, l: *mut lua_State) -> &'static CStr {
    if let Some(state) = srv.scripting.get::<Scripting>().running_state() {
        // SAFETY: both threads belong to the running state (we are in its
        // hook); only their hook masks change.
        unsafe {
            every_line(l);
            every_line(state.raw);
        }
    }
    c"Script killed by user with SCRIPT KILL..."
}
