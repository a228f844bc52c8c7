//! Where an EVAL's debugging session begins and ends, for the EVAL
//! handler: SYNC sessions run in the server itself (blocking it), YES
//! sessions in a forked child, as in Redis: the parent drops the client
//! and goes on, the child debugs the script on the client's connection,
//! writes its reply and exits, so whatever the script changed is gone.
//!
//! The child is a copy of the event-loop thread only. It runs the script
//! through the ordinary command path, whose effects on the AOF,
//! replication and other clients stay in in-memory buffers that only the
//! event loop would write: the child never returns to it, it `_exit`s
//! without running the parent's destructors.
use super::{Scripting, Shared};
use crate::dispatch::Ctx;
use crate::server::LuaDebug;

/// SCRIPT DEBUG YES/SYNC/NO for the calling client.
pub fn set_mode(ctx: &mut Ctx, mode: LuaDebug) {
    if mode != LuaDebug::Off {
        ctx.srv.scripting.get::<Scripting>().shared.ldb.enable();
    }
    ctx.client().lua_debug = mode;
}

/// What the EVAL handler does after [`start`].
pub enum Started {
    /// Run the script (the session is open if the link allowed one).
    Run,
    /// Nothing more here: a forked child has the session (or the fork
    /// failed and the error reply is written).
    Done,
}

/// Begin a debugging session for the EVAL of `body`, in the mode the
/// client chose.
pub fn start(ctx: &mut Ctx, body: &[u8], mode: LuaDebug) -> Started {
    let Some(link) = ctx.srv.client_link else { return Started::Run };
    if mode == LuaDebug::Forked {
        match start_forked(ctx) {
            Ok(true) => {}
            Ok(false) => return Started::Done,
            Err(e) => {
                ctx.r.error(&format!("ERR Fork() failed: can't run EVAL in debugging mode: {e}"));
                ctx.client().lua_debug = LuaDebug::Off;
                return Started::Done;
            }
        }
    } else {
        crate::log_at!(Warning, "Redis synchronous debugging eval session started");
    }
    shared(ctx).ldb.start(link, body);
    Started::Run
}

/// Fork: Ok(true) in the child, which goes on with the session; Ok(false)
/// in the parent, which closes the client (its socket stays open in the
/// child, so closing it here sends nothing).
fn start_forked(ctx: &mut Ctx) -> std::io::Result<bool> {
    // SAFETY: the child runs only this thread's code, touching no state
    // shared with other threads (see the module comment).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid > 0 {
        // Cron reaps it; it dies with the server (see below).
        ctx.srv.children.adopt_detached(pid);
        // The client stays marked forked: its connection is closed without
        // ending the TLS session the child goes on with.
        ctx.client().close_after_reply = true;
        return Ok(false);
    }
    // SAFETY: the child's own signal settings: it dies with the server
    // and is not stopped by signals meant for the server.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    crate::log_at!(Warning, "Redis forked for debugging eval");
    Ok(true)
}

/// End the session after the EVAL ran: the last log lines and
/// `<endsession>`, then the script's reply; the client is closed after it.
/// A forked child writes the reply itself and exits here.
pub fn end(ctx: &mut Ctx, mode: LuaDebug) {
    let ldb = &shared(ctx).ldb;
    if !ldb.active() {
        return;
    }
    let link = ldb.link();
    ldb.end();
    if mode == LuaDebug::Forked {
        if let Some(link) = link {
            // SAFETY: the link is valid while this EVAL runs.
            let _ = unsafe { (*link).write_all_blocking(ctx.r.bytes()) };
        }
        crate::log_at!(Warning, "Lua debugging session child exiting");
        // SAFETY: leaving the child without unwinding the parent's state.
        unsafe { libc::_exit(0) };
    }
    crate::log_at!(Warning, "Redis synchronous debugging eval session ended");
    let client = ctx.client();
    client.lua_debug = LuaDebug::Off;
    client.close_after_reply = true;
}

fn shared(ctx: &Ctx) -> std::rc::Rc<Shared> {
    ctx.srv.scripting.get::<Scripting>().shared.clone()
}
