//! Checks that run before every command, in order. Each is a small named
//! function; the first that objects rejects the command with its reply text.
use super::{flags, Argv, CommandSpec, Ctx};

/// A guard returns `Err(reply text)` to reject the command.
pub type Guard = fn(&mut Ctx, &CommandSpec, &Argv) -> Result<(), String>;

/// The guards, in the order Redis's `processCommand` applies them.
pub const GUARDS: &[Guard] = &[require_auth, reject_while_busy, refuse_writes_on_aof_error];

/// Unauthenticated clients may only run commands flagged `no_auth`.
fn require_auth(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    if spec.flags & flags::NO_AUTH != 0 || ctx.client().authenticated {
        return Ok(());
    }
    Err("NOAUTH Authentication required.".to_string())
}

/// The AOF can't be written: refuse writes (and PING, as Redis does) with
/// MISCONF until a write succeeds again; reads keep working.
fn refuse_writes_on_aof_error(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    if ctx.srv.aof.write_error.is_none() || (spec.flags & flags::WRITE == 0 && spec.name != "ping") {
        return Ok(());
    }
    crate::persistence::aof::misconf(ctx.srv).map_or(Ok(()), Err)
}

/// While a script runs past `busy-reply-threshold`, only allow-busy commands
/// run (and SHUTDOWN only with NOSAVE); everything else gets -BUSY.
fn reject_while_busy(ctx: &mut Ctx, spec: &CommandSpec, argv: &Argv) -> Result<(), String> {
    if !ctx.srv.scripting.busy {
        return Ok(());
    }
    let nosave = (1..argv.len()).any(|i| argv.is(i, "nosave"));
    if spec.flags & flags::ALLOW_BUSY != 0 && (spec.name != "shutdown" || nosave) {
        return Ok(());
    }
    Err("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.".to_string())
}
