//! SAVE, BGSAVE and BGREWRITEAOF: argument parsing and Redis 7.0's replies
//! (LASTSAVE stays with the server commands). The work is `persistence`'s.
use crate::dispatch::flags::{ADMIN, NOSCRIPT, NO_ASYNC_LOADING, NO_MULTI};
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::persistence::{self, Started};
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);

#[rustfmt::skip]
static SPECS: [CommandSpec; 3] = [
    spec!("save", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI, NONE, save, "server", "1.0.0", "Synchronously saves the database(s) to disk.", ["admin", "slow", "dangerous"]),
    spec!("bgsave", -1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, NONE, bgsave, "server", "1.0.0", "Asynchronously saves the database(s) to disk.", ["admin", "slow", "dangerous"]),
    spec!("bgrewriteaof", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, NONE, bgrewriteaof, "server", "1.0.0", "Asynchronously rewrites the append-only file to disk.", ["admin", "slow", "dangerous"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn save(ctx: &mut Ctx, _argv: &Argv) {
    match persistence::save(ctx.srv) {
        Started::Now => ctx.r.ok(),
        Started::AlreadyRunning => ctx.r.error("ERR Background save already in progress"),
        _ => ctx.r.error("ERR"),
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
    match persistence::bgsave(ctx.srv, schedule || in_exec, in_exec) {
        Started::Now => ctx.r.simple(b"Background saving started"),
        Started::Scheduled => ctx.r.simple(b"Background saving scheduled"),
        Started::AlreadyRunning => ctx.r.error("ERR Background save already in progress"),
        Started::OtherChild => ctx.r.error(
            "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to \
             schedule a BGSAVE whenever possible.",
        ),
        Started::Failed => ctx.r.error("ERR"),
    }
}

fn bgrewriteaof(ctx: &mut Ctx, _argv: &Argv) {
    match persistence::bgrewriteaof(ctx.srv) {
        Started::Now => ctx.r.simple(b"Background append only file rewriting started"),
        Started::Scheduled | Started::OtherChild => ctx.r.simple(b"Background append only file rewriting scheduled"),
        Started::AlreadyRunning => ctx.r.error("ERR Background append only file rewriting already in progress"),
        Started::Failed => ctx
            .r
            .error("ERR Can't execute an AOF background rewriting. Please check the server logs for more information."),
    }
}
