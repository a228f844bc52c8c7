//! Key specs, tips and documentation of the MEMORY commands (Redis 7.0.15's).
use super::key_flags::RO;
use super::ArgType::{Int, Key};
use super::Begin::Index;
use super::Find::Range;
use super::{a, ks, m, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("memory", m("A container for memory diagnostics commands", "4.0.0", "server").cx("Depends on subcommand.")),
    ("memory|doctor", m("Outputs memory problems report", "4.0.0", "server").cx("O(1)").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])),
    ("memory|help", m("Show helpful text about the different subcommands", "4.0.0", "server").cx("O(1)")),
    ("memory|malloc-stats", m("Show allocator internal stats", "4.0.0", "server").cx("Depends on how much memory is allocated, could be slow").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])),
    ("memory|purge", m("Ask the allocator to release memory", "4.0.0", "server").cx("Depends on how much memory is allocated, could be slow").tips(&["request_policy:all_shards", "response_policy:all_succeeded"])),
    ("memory|stats", m("Show memory usage details", "4.0.0", "server").cx("O(1)").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])),
    ("memory|usage", m("Estimate the memory usage of a key", "4.0.0", "server").cx("O(N) where N is the number of samples.")
        .keys(&[ks(RO, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("count", Int).tok("SAMPLES").opt(),
        ])),
];
