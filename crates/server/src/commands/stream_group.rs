//! (being written)
use crate::dispatch::CommandSpec;

static SPECS: [CommandSpec; 0] = [];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}
