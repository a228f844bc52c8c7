//! Documentation of ACL and of the cluster connection commands (READONLY,
//! READWRITE, ASKING), as Redis 7.0.15's COMMAND DOCS gives it.
use super::ArgType::{Int, Str};
use super::{a, m, oneof, t, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("acl", m("A container for Access List Control commands ", "6.0.0", "server").cx("Depends on subcommand.")),
    ("acl|cat", m("List the ACL categories or the commands inside a category", "6.0.0", "server").cx("O(1) since the categories and commands are a fixed set.")
        .args(&[
            a("categoryname", Str).opt(),
        ])),
    ("acl|deluser", m("Remove the specified ACL users and the associated rules", "6.0.0", "server").cx("O(1) amortized time considering the typical user.")
        .args(&[
            a("username", Str).multi(),
        ])),
    ("acl|dryrun", m("Returns whether the user can execute the given command without executing the command.", "7.0.0", "server").cx("O(1).")
        .args(&[
            a("username", Str),
            a("command", Str),
            a("arg", Str).opt().multi(),
        ])),
    ("acl|genpass", m("Generate a pseudorandom secure password to use for ACL users", "6.0.0", "server").cx("O(1)")
        .args(&[
            a("bits", Int).opt(),
        ])),
    ("acl|getuser", m("Get the rules for a specific ACL user", "6.0.0", "server").cx("O(N). Where N is the number of password, command and pattern rules that the user has.")
        .hist(&[("6.2.0", "Added Pub/Sub channel patterns."), ("7.0.0", "Added selectors and changed the format of key and channel patterns from a list to their rule representation.")])
        .args(&[
            a("username", Str),
        ])),
    ("acl|help", m("Show helpful text about the different subcommands", "6.0.0", "server").cx("O(1)")),
    ("acl|list", m("List the current ACL rules in ACL config file format", "6.0.0", "server").cx("O(N). Where N is the number of configured users.")),
    ("acl|load", m("Reload the ACLs from the configured ACL file", "6.0.0", "server").cx("O(N). Where N is the number of configured users.")),
    ("acl|log", m("List latest events denied because of ACLs in place", "6.0.0", "server").cx("O(N) with N being the number of entries shown.")
        .args(&[
            oneof("operation", &[a("count", Int), t("reset", "RESET")]).opt(),
        ])),
    ("acl|save", m("Save the current ACL rules in the configured ACL file", "6.0.0", "server").cx("O(N). Where N is the number of configured users.")),
    ("acl|setuser", m("Modify or create the rules for a specific ACL user", "6.0.0", "server").cx("O(N). Where N is the number of rules provided.")
        .hist(&[("6.2.0", "Added Pub/Sub channel patterns."), ("7.0.0", "Added selectors and key based permissions.")])
        .args(&[
            a("username", Str),
            a("rule", Str).opt().multi(),
        ])),
    ("acl|users", m("List the username of all the configured ACL rules", "6.0.0", "server").cx("O(N). Where N is the number of configured users.")),
    ("acl|whoami", m("Return the name of the user associated to the current connection", "6.0.0", "server").cx("O(1)")),
    ("readonly", m("Enables read queries for a connection to a cluster replica node", "3.0.0", "cluster").cx("O(1)")),
    ("readwrite", m("Disables read queries for a connection to a cluster replica node", "3.0.0", "cluster").cx("O(1)")),
    ("asking", m("Sent by cluster clients after an -ASK redirect", "3.0.0", "cluster").cx("O(1)")),
];
