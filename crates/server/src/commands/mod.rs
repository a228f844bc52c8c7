//! Command groups, one file each; every group exports `register`.
//! Handlers parse arguments, call the engine, and write one reply.
pub mod acl;
pub mod bitmap;
pub mod client;
pub mod cluster;
pub mod command_cmd;
pub mod conn;
pub mod debug;
pub mod dump;
pub mod function;
pub mod geo;
pub mod hash;
pub mod hll;
pub mod info;
pub mod keys;
pub mod latency;
pub mod lcs;
pub mod list;
mod list_block;
pub mod memory;
pub mod migrate;
pub mod persistence;
pub mod pubsub;
pub mod replication;
pub mod script;
pub mod server;
pub mod set;
pub mod slowlog;
pub mod sort;
pub mod stream;
mod stream_group;
mod stream_info;
mod stream_read;
pub mod string;
pub mod swapdb;
mod tracking;
pub mod tx;
pub mod zrange;
pub mod zset;
pub mod zsetops;

use crate::dispatch::Registry;

/// Register every command group.
pub fn register_all(r: &mut Registry) {
    conn::register(r);
    acl::register(r);
    client::register(r);
    server::register(r);
    debug::register(r);
    keys::register(r);
    swapdb::register(r);
    sort::register(r);
    lcs::register(r);
    string::register(r);
    bitmap::register(r);
    tx::register(r);
    hash::register(r);
    set::register(r);
    zset::register(r);
    zrange::register(r);
    zsetops::register(r);
    geo::register(r);
    hll::register(r);
    list::register(r);
    list_block::register(r);
    stream::register(r);
    stream_read::register(r);
    stream_group::register(r);
    stream_info::register(r);
    persistence::register(r);
    replication::register(r);
    cluster::register(r);
    pubsub::register(r);
    script::register(r);
    function::register(r);
    dump::register(r);
    migrate::register(r);
    slowlog::register(r);
    latency::register(r);
    memory::register(r);
}

/// Shorthand for the static spec tables: `spec!(name, arity, flags, keys, handler, group, since, summary, acl)`.
#[macro_export]
macro_rules! spec {
    ($name:literal, $arity:expr, $flags:expr, $keys:expr, $handler:expr, $group:literal, $since:literal, $summary:literal, [$($acl:literal),*]) => {
        $crate::dispatch::CommandSpec {
            name: $name,
            arity: $arity,
            flags: $flags,
            keys: $keys,
            handler: $handler,
            group: $group,
            since: $since,
            summary: $summary,
            acl: &[$($acl),*],
            subcommands: &[],
        }
    };
}
