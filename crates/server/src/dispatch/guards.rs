//! Checks that run before every command, in order. Each is a small named
//! function; the first that objects rejects the command with its reply text.
use super::{flags, Argv, CommandSpec, Ctx};

/// A guard returns `Err(reply text)` to reject the command.
pub type Guard = fn(&mut Ctx, &CommandSpec, &Argv) -> Result<(), String>;

/// The guards, in the order Redis's `processCommand` applies them.
pub const GUARDS: &[Guard] = &[require_auth, refuse_writes_on_aof_error];

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
