//! BGREWRITEAOF (the AOF itself lives in `persistence::aof`).
use crate::dispatch::flags::*;
use crate::dispatch::{CommandSpec, Registry};
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    spec!("bgrewriteaof", 1, ADMIN | NOSCRIPT, (0, 0, 0), crate::persistence::aof::bgrewriteaof, "server", "1.0.0", "Asynchronously rewrites the append-only file to disk.", ["admin", "slow", "dangerous"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}
