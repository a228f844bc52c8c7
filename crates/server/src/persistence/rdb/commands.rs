//! SAVE and BGSAVE (LASTSAVE stays with the server commands and reads
//! [`super::RdbState::last_save`]). Replies are Redis 7.0's, byte for byte.
use crate::dispatch::flags::{ADMIN, NOSCRIPT};
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::persistence::child::ChildKind;
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);

#[rustfmt::skip]
static SPECS: [CommandSpec; 2] = [
    spec!("save", 1, ADMIN | NOSCRIPT, NONE, save, "server", "1.0.0", "Synchronously saves the database(s) to disk.", ["admin", "slow", "dangerous"]),
    spec!("bgsave", -1, ADMIN | NOSCRIPT, NONE, bgsave, "server", "1.0.0", "Asynchronously saves the database(s) to disk.", ["admin", "slow", "dangerous"]),
];

/// Add SAVE and BGSAVE to the command table.
pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn save(ctx: &mut Ctx, _argv: &Argv) {
    if ctx.srv.children.running() == Some(ChildKind::Rdb) {
        return ctx.r.error("ERR Background save already in progress");
    }
    ctx.srv.rdb.saves += 1;
    match super::save_sync(ctx.srv) {
        Ok(()) => ctx.r.ok(),
        Err(_) => ctx.r.error("ERR"),
    }
}

fn bgsave(ctx: &mut Ctx, argv: &Argv) {
    let schedule = match argv.len() {
        1 => false,
        2 if argv.is(1, "schedule") => true,
        _ => return ctx.syntax_error(),
    };
    // Inside EXEC (the only place commands may not block) Redis never forks
    // mid-transaction: it schedules the save instead.
    let in_exec = !ctx.may_block;
    let busy = ctx.srv.children.running();
    if busy == Some(ChildKind::Rdb) {
        return ctx.r.error("ERR Background save already in progress");
    }
    if busy.is_some() || in_exec {
        if schedule || in_exec {
            ctx.srv.rdb.scheduled = true;
            return ctx.r.simple(b"Background saving scheduled");
        }
        return ctx.r.error(
            "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to \
             schedule a BGSAVE whenever possible.",
        );
    }
    match super::bgsave(ctx.srv) {
        Ok(_) => ctx.r.simple(b"Background saving started"),
        Err(_) => ctx.r.error("ERR"),
    }
}
