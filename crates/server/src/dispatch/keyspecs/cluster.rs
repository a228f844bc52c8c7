//! Key specs, tips and documentation of the CLUSTER command family (Redis 7.0.15's).
use super::doc_flags::DEPRECATED;
use super::ArgType::{Int, Str};
use super::{a, block, m, oneof, t, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("cluster", m("A container for cluster commands", "3.0.0", "cluster").cx("Depends on subcommand.")),
    ("cluster|addslots", m("Assign new hash slots to receiving node", "3.0.0", "cluster").cx("O(N) where N is the total number of hash slot arguments")
        .args(&[
            a("slot", Int).multi(),
        ])),
    ("cluster|addslotsrange", m("Assign new hash slots to receiving node", "7.0.0", "cluster").cx("O(N) where N is the total number of the slots between the start slot and end slot arguments.")
        .args(&[
            block("start-slot_end-slot", &[a("start-slot", Int), a("end-slot", Int)]).multi(),
        ])),
    ("cluster|bumpepoch", m("Advance the cluster config epoch", "3.0.0", "cluster").cx("O(1)").tips(&["nondeterministic_output"])),
    ("cluster|count-failure-reports", m("Return the number of failure reports active for a given node", "3.0.0", "cluster").cx("O(N) where N is the number of failure reports").tips(&["nondeterministic_output"])
        .args(&[
            a("node-id", Str),
        ])),
    ("cluster|countkeysinslot", m("Return the number of local keys in the specified hash slot", "3.0.0", "cluster").cx("O(1)")
        .args(&[
            a("slot", Int),
        ])),
    ("cluster|delslots", m("Set hash slots as unbound in receiving node", "3.0.0", "cluster").cx("O(N) where N is the total number of hash slot arguments")
        .args(&[
            a("slot", Int).multi(),
        ])),
    ("cluster|delslotsrange", m("Set hash slots as unbound in receiving node", "7.0.0", "cluster").cx("O(N) where N is the total number of the slots between the start slot and end slot arguments.")
        .args(&[
            block("start-slot_end-slot", &[a("start-slot", Int), a("end-slot", Int)]).multi(),
        ])),
    ("cluster|failover", m("Forces a replica to perform a manual failover of its master.", "3.0.0", "cluster").cx("O(1)")
        .args(&[
            oneof("options", &[t("force", "FORCE"), t("takeover", "TAKEOVER")]).opt(),
        ])),
    ("cluster|flushslots", m("Delete a node's own slots information", "3.0.0", "cluster").cx("O(1)")),
    ("cluster|forget", m("Remove a node from the nodes table", "3.0.0", "cluster").cx("O(1)")
        .args(&[
            a("node-id", Str),
        ])),
    ("cluster|getkeysinslot", m("Return local key names in the specified hash slot", "3.0.0", "cluster").cx("O(log(N)) where N is the number of requested keys").tips(&["nondeterministic_output"])
        .args(&[
            a("slot", Int),
            a("count", Int),
        ])),
    ("cluster|help", m("Show helpful text about the different subcommands", "5.0.0", "cluster").cx("O(1)")),
    ("cluster|info", m("Provides info about Redis Cluster node state", "3.0.0", "cluster").cx("O(1)").tips(&["nondeterministic_output"])),
    ("cluster|keyslot", m("Returns the hash slot of the specified key", "3.0.0", "cluster").cx("O(N) where N is the number of bytes in the key")
        .args(&[
            a("key", Str),
        ])),
    ("cluster|links", m("Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0", "cluster").cx("O(N) where N is the total number of Cluster nodes").tips(&["nondeterministic_output"])),
    ("cluster|meet", m("Force a node cluster to handshake with another node", "3.0.0", "cluster").cx("O(1)")
        .hist(&[("4.0.0", "Added the optional `cluster_bus_port` argument.")])
        .args(&[
            a("ip", Str),
            a("port", Int),
            a("cluster_bus_port", Int).since("4.0.0").opt(),
        ])),
    ("cluster|myid", m("Return the node id", "3.0.0", "cluster").cx("O(1)")),
    ("cluster|nodes", m("Get Cluster config for the node", "3.0.0", "cluster").cx("O(N) where N is the total number of Cluster nodes").tips(&["nondeterministic_output"])),
    ("cluster|replicas", m("List replica nodes of the specified master node", "5.0.0", "cluster").cx("O(1)").tips(&["nondeterministic_output"])
        .args(&[
            a("node-id", Str),
        ])),
    ("cluster|replicate", m("Reconfigure a node as a replica of the specified master node", "3.0.0", "cluster").cx("O(1)")
        .args(&[
            a("node-id", Str),
        ])),
    ("cluster|reset", m("Reset a Redis Cluster node", "3.0.0", "cluster").cx("O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.")
        .args(&[
            oneof("hard_soft", &[t("hard", "HARD"), t("soft", "SOFT")]).opt(),
        ])),
    ("cluster|saveconfig", m("Forces the node to save cluster state on disk", "3.0.0", "cluster").cx("O(1)")),
    ("cluster|set-config-epoch", m("Set the configuration epoch in a new node", "3.0.0", "cluster").cx("O(1)")
        .args(&[
            a("config-epoch", Int),
        ])),
    ("cluster|setslot", m("Bind a hash slot to a specific node", "3.0.0", "cluster").cx("O(1)")
        .args(&[
            a("slot", Int),
            oneof("subcommand", &[a("node-id", Str).tok("IMPORTING"), a("node-id", Str).tok("MIGRATING"), a("node-id", Str).tok("NODE"), t("stable", "STABLE")]),
        ])),
    ("cluster|shards", m("Get array of cluster slots to node mappings", "7.0.0", "cluster").cx("O(N) where N is the total number of cluster nodes").tips(&["nondeterministic_output"])),
    ("cluster|slaves", m("List replica nodes of the specified master node", "3.0.0", "cluster").cx("O(1)").doc_flags(DEPRECATED).deprecated("5.0.0").replaced_by("`CLUSTER REPLICAS`").tips(&["nondeterministic_output"])
        .args(&[
            a("node-id", Str),
        ])),
    ("cluster|slots", m("Get array of Cluster slot to node mappings", "3.0.0", "cluster").cx("O(N) where N is the total number of Cluster nodes").doc_flags(DEPRECATED).deprecated("7.0.0").replaced_by("`CLUSTER SHARDS`").tips(&["nondeterministic_output"])
        .hist(&[("4.0.0", "Added node IDs."), ("7.0.0", "Added additional networking metadata field.")])),
];
