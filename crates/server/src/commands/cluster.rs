//! CLUSTER. Volley runs standalone for now (cluster mode is to come), so
//! every subcommand answers as a Redis 7.0 with `cluster-enabled no` does;
//! registering them keeps their flags (CLUSTER RESET is refused to
//! scripts), key specs and docs where clients and ACLs look for them.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::spec;

#[rustfmt::skip]
static SUBS: [CommandSpec; 27] = [
    spec!("addslots", -3, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Assign new hash slots to receiving node", ["admin", "slow", "dangerous"]),
    spec!("addslotsrange", -4, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "7.0.0", "Assign new hash slots to receiving node", ["admin", "slow", "dangerous"]),
    spec!("bumpepoch", 2, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Advance the cluster config epoch", ["admin", "slow", "dangerous"]),
    spec!("count-failure-reports", 3, ADMIN | STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Return the number of failure reports active for a given node", ["admin", "slow", "dangerous"]),
    spec!("countkeysinslot", 3, STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Return the number of local keys in the specified hash slot", ["slow"]),
    spec!("delslots", -3, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Set hash slots as unbound in receiving node", ["admin", "slow", "dangerous"]),
    spec!("delslotsrange", -4, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "7.0.0", "Set hash slots as unbound in receiving node", ["admin", "slow", "dangerous"]),
    spec!("failover", -2, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Forces a replica to perform a manual failover of its master.", ["admin", "slow", "dangerous"]),
    spec!("flushslots", 2, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Delete a node's own slots information", ["admin", "slow", "dangerous"]),
    spec!("forget", 3, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Remove a node from the nodes table", ["admin", "slow", "dangerous"]),
    spec!("getkeysinslot", 4, STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Return local key names in the specified hash slot", ["slow"]),
    spec!("help", 2, LOADING | STALE, (0, 0, 0), disabled, "cluster", "5.0.0", "Show helpful text about the different subcommands", ["slow"]),
    spec!("info", 2, STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Provides info about Redis Cluster node state", ["slow"]),
    spec!("keyslot", 3, STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Returns the hash slot of the specified key", ["slow"]),
    spec!("links", 2, STALE, (0, 0, 0), disabled, "cluster", "7.0.0", "Returns a list of all TCP links to and from peer nodes in cluster", ["slow"]),
    spec!("meet", -4, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Force a node cluster to handshake with another node", ["admin", "slow", "dangerous"]),
    spec!("myid", 2, STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Return the node id", ["slow"]),
    spec!("nodes", 2, STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Get Cluster config for the node", ["slow"]),
    spec!("replicas", 3, ADMIN | STALE, (0, 0, 0), disabled, "cluster", "5.0.0", "List replica nodes of the specified master node", ["admin", "slow", "dangerous"]),
    spec!("replicate", 3, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Reconfigure a node as a replica of the specified master node", ["admin", "slow", "dangerous"]),
    spec!("reset", -2, ADMIN | NOSCRIPT | STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Reset a Redis Cluster node", ["admin", "slow", "dangerous"]),
    spec!("saveconfig", 2, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Forces the node to save cluster state on disk", ["admin", "slow", "dangerous"]),
    spec!("set-config-epoch", 3, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Set the configuration epoch in a new node", ["admin", "slow", "dangerous"]),
    spec!("setslot", -4, ADMIN | STALE | NO_ASYNC_LOADING, (0, 0, 0), disabled, "cluster", "3.0.0", "Bind a hash slot to a specific node", ["admin", "slow", "dangerous"]),
    spec!("shards", 2, STALE, (0, 0, 0), disabled, "cluster", "7.0.0", "Get array of cluster slots to node mappings", ["slow"]),
    spec!("slaves", 3, ADMIN | STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "List replica nodes of the specified master node", ["admin", "slow", "dangerous"]),
    spec!("slots", 2, STALE, (0, 0, 0), disabled, "cluster", "3.0.0", "Get array of Cluster slot to node mappings", ["slow"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 4] = [CommandSpec {
    name: "cluster",
    arity: -2,
    flags: 0,
    keys: (0, 0, 0),
    handler: disabled,
    group: "cluster",
    since: "3.0.0",
    summary: "A container for cluster commands",
    acl: &["slow"],
    subcommands: &SUBS,
},
    // Cluster connection commands: answered as a standalone Redis does, and
    // known by name so ACL rules such as `+readonly` resolve.
    spec!("readonly", 1, LOADING | STALE | FAST, (0, 0, 0), disabled, "cluster", "3.0.0", "Enables read-only queries for a connection to a Redis Cluster replica node.", ["fast", "connection"]),
    spec!("readwrite", 1, LOADING | STALE | FAST, (0, 0, 0), disabled, "cluster", "3.0.0", "Enables read-write queries for a connection to a Redis Cluster replica node.", ["fast", "connection"]),
    spec!("asking", 1, FAST, (0, 0, 0), disabled, "cluster", "3.0.0", "Signals that a cluster client is following an -ASK redirect.", ["fast", "connection"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn disabled(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.error("ERR This instance has cluster support disabled");
}
