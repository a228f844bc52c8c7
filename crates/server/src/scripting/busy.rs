//! Long-running scripts. Every few thousand Lua instructions the hook checks
//! the run: once it has lasted `busy-reply-threshold` ms the server is
//! "busy" and the hook lets the network layer serve other clients through a
//! `server::BusyHook` (about every 10 ms): they get -BUSY for everything except
//! allow-busy commands (the dispatch guard), SCRIPT KILL sets the run's kill
//! flag, SHUTDOWN NOSAVE sets the server's shutdown flag. The hook then stops
//! the script by raising an error, and keeps raising it so the script cannot
//! catch it with pcall and carry on.
use std::time::{Duration, Instant};

use mlua::VmState;

use super::{Scripting, Shared};
use crate::server::BusyScript;

/// How often other clients are served while a script is busy.
const POLL_EVERY: Duration = Duration::from_millis(10);

/// The instruction hook of every Lua state.
pub(super) fn on_hook(shared: &Shared) -> mlua::Result<VmState> {
    if let Some(deadline) = shared.load_deadline.get() {
        if Instant::now() > deadline {
            return Err(mlua::Error::runtime("FUNCTION LOAD timeout"));
        }
        return Ok(VmState::Continue);
    }
    // SAFETY: the hook runs inside a script run, see `Shared::server`.
    let Some(srv) = (unsafe { shared.server() }) else { return Ok(VmState::Continue) };
    let threshold = srv.config.busy_reply_threshold as u128;
    let Some(run) = srv.scripting.get_mut::<Scripting>().running.as_mut() else { return Ok(VmState::Continue) };
    if run.kill {
        return Err(mlua::Error::runtime("Script killed by user with SCRIPT KILL..."));
    }
    let elapsed = run.started.elapsed().as_millis();
    if elapsed < threshold || run.last_poll.is_some_and(|t| t.elapsed() < POLL_EVERY) {
        return Ok(VmState::Continue);
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
        return Err(mlua::Error::runtime("Script aborted: the server is shutting down"));
    }
    if srv.scripting.get::<Scripting>().running.as_ref().is_some_and(|r| r.kill) {
        return Err(mlua::Error::runtime("Script killed by user with SCRIPT KILL..."));
    }
    Ok(VmState::Continue)
}
