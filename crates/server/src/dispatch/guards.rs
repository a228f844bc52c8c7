//! Checks that run before every command, in order. Each is a small named
//! function; the first that objects rejects the command with its reply text.
use super::{flags, Argv, CommandSpec, Ctx};

/// A guard returns `Err(reply text)` to reject the command.
pub type Guard = fn(&mut Ctx, &CommandSpec, &Argv) -> Result<(), String>;

/// The guards, in the order Redis's `processCommand` applies them.
pub const GUARDS: &[Guard] = &[require_auth];

/// Unauthenticated clients may only run commands flagged `no_auth`.
fn require_auth(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    if spec.flags & flags::NO_AUTH != 0 || ctx.client().authenticated {
        return Ok(());
    }
    Err("NOAUTH Authentication required.".to_string())
}
