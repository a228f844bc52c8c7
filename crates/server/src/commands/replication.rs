//! Replication commands. Volley has no replicas yet, so WAIT has nothing to
//! wait for: it answers at once when no acknowledgement is asked for, and
//! otherwise waits out its timeout (forever for 0, as Redis would with no
//! replica connected) and answers 0.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::parse_i64;
use crate::server::blocking::TimeoutReply;
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    spec!("wait", 3, NOSCRIPT, (0, 0, 0), wait, "generic", "3.0.0", "Wait for the synchronous replication of all the write commands sent in the context of the current connection", ["slow", "connection"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

/// WAIT numreplicas timeout(ms).
fn wait(ctx: &mut Ctx, argv: &Argv) {
    let Some(wanted) = parse_i64(argv.get(1)) else { return ctx.not_integer() };
    let deadline = match parse_i64(argv.get(2)) {
        Some(ms) if ms < 0 => return ctx.r.error("ERR timeout is negative"),
        Some(0) => None,
        Some(ms) => Some(ctx.now.saturating_add(ms)),
        None => return ctx.r.error("ERR timeout is not an integer or out of range"),
    };
    let acked = 0;
    // Inside MULTI (and scripts) WAIT never blocks: it reports what it has.
    if acked >= wanted || !ctx.block_on(&[], deadline, TimeoutReply::Zero, argv) {
        ctx.r.int(acked);
    }
}
