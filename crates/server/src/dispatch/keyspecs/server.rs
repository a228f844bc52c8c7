//! Key specs, tips and documentation of the server, connection and scripting commands (Redis 7.0.15's).
use super::doc_flags::{DEPRECATED, SYSCMD};
use super::key_flags::{ACCESS, OW, RO, RW, UPDATE};
use super::ArgType::{Int, Key, Pat, Str};
use super::Begin::Index;
use super::Find::{Keynum, Range};
use super::{a, block, ks, m, oneof, t, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("bgrewriteaof", m("Asynchronously rewrite the append-only file", "1.0.0", "server").cx("O(1)")),
    ("bgsave", m("Asynchronously save the dataset to disk", "1.0.0", "server").cx("O(1)")
        .hist(&[("3.2.2", "Added the `SCHEDULE` option.")])
        .args(&[
            t("schedule", "SCHEDULE").since("3.2.2").opt(),
        ])),
    ("command", m("Get array of Redis command details", "2.8.13", "server").cx("O(N) where N is the total number of Redis commands").tips(&["nondeterministic_output_order"])),
    ("command|count", m("Get total number of Redis commands", "2.8.13", "server").cx("O(1)")),
    ("command|docs", m("Get array of specific Redis command documentation", "7.0.0", "server").cx("O(N) where N is the number of commands to look up").tips(&["nondeterministic_output_order"])
        .args(&[
            a("command-name", Str).opt().multi(),
        ])),
    ("command|getkeys", m("Extract keys given a full Redis command", "2.8.13", "server").cx("O(N) where N is the number of arguments to the command")),
    ("command|getkeysandflags", m("Extract keys and access flags given a full Redis command", "7.0.0", "server").cx("O(N) where N is the number of arguments to the command")),
    ("command|help", m("Show helpful text about the different subcommands", "5.0.0", "server").cx("O(1)")),
    ("command|info", m("Get array of specific Redis command details, or all when no argument is given.", "2.8.13", "server").cx("O(N) where N is the number of commands to look up").tips(&["nondeterministic_output_order"])
        .hist(&[("7.0.0", "Allowed to be called with no argument to get info on all commands.")])
        .args(&[
            a("command-name", Str).opt().multi(),
        ])),
    ("command|list", m("Get an array of Redis command names", "7.0.0", "server").cx("O(N) where N is the total number of Redis commands").tips(&["nondeterministic_output_order"])
        .args(&[
            oneof("filterby", &[a("module-name", Str).tok("MODULE"), a("category", Str).tok("ACLCAT"), a("pattern", Pat).tok("PATTERN")]).tok("FILTERBY").opt(),
        ])),
    ("config", m("A container for server configuration commands", "2.0.0", "server").cx("Depends on subcommand.")),
    ("config|get", m("Get the values of configuration parameters", "2.0.0", "server").cx("O(N) when N is the number of configuration parameters provided")
        .hist(&[("7.0.0", "Added the ability to pass multiple pattern parameters in one call")])
        .args(&[
            block("parameter", &[a("parameter", Str)]).multi(),
        ])),
    ("config|help", m("Show helpful text about the different subcommands", "5.0.0", "server").cx("O(1)")),
    ("config|resetstat", m("Reset the stats returned by INFO", "2.0.0", "server").cx("O(1)")),
    ("config|rewrite", m("Rewrite the configuration file with the in memory configuration", "2.8.0", "server").cx("O(1)")),
    ("config|set", m("Set configuration parameters to the given values", "2.0.0", "server").cx("O(N) when N is the number of configuration parameters provided").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
        .hist(&[("7.0.0", "Added the ability to set multiple parameters in one call.")])
        .args(&[
            block("parameter_value", &[a("parameter", Str), a("value", Str)]).multi(),
        ])),
    ("dbsize", m("Return the number of keys in the selected database", "1.0.0", "server").cx("O(1)").tips(&["request_policy:all_shards", "response_policy:agg_sum"])),
    ("debug", m("A container for debugging commands", "1.0.0", "server").cx("Depends on subcommand.").doc_flags(SYSCMD)),
    ("flushall", m("Remove all keys from all databases", "1.0.0", "server").cx("O(N) where N is the total number of keys in all databases").tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .hist(&[("4.0.0", "Added the `ASYNC` flushing mode modifier."), ("6.2.0", "Added the `SYNC` flushing mode modifier.")])
        .args(&[
            oneof("async", &[t("async", "ASYNC").since("4.0.0"), t("sync", "SYNC").since("6.2.0")]).opt(),
        ])),
    ("flushdb", m("Remove all keys from the current database", "1.0.0", "server").cx("O(N) where N is the number of keys in the selected database").tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .hist(&[("4.0.0", "Added the `ASYNC` flushing mode modifier."), ("6.2.0", "Added the `SYNC` flushing mode modifier.")])
        .args(&[
            oneof("async", &[t("async", "ASYNC").since("4.0.0"), t("sync", "SYNC").since("6.2.0")]).opt(),
        ])),
    ("info", m("Get information and statistics about the server", "1.0.0", "server").cx("O(1)").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
        .hist(&[("7.0.0", "Added support for taking multiple section arguments.")])
        .args(&[
            a("section", Str).opt().multi(),
        ])),
    ("lastsave", m("Get the UNIX time stamp of the last successful save to disk", "1.0.0", "server").cx("O(1)").tips(&["nondeterministic_output"])),
    ("latency", m("A container for latency diagnostics commands", "2.8.13", "server").cx("Depends on subcommand.")),
    ("latency|doctor", m("Return a human readable latency analysis report.", "2.8.13", "server").cx("O(1)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])),
    ("latency|graph", m("Return a latency graph for the event.", "2.8.13", "server").cx("O(1)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
        .args(&[
            a("event", Str),
        ])),
    ("latency|help", m("Show helpful text about the different subcommands.", "2.8.13", "server").cx("O(1)")),
    ("latency|histogram", m("Return the cumulative distribution of latencies of a subset of commands or all.", "7.0.0", "server").cx("O(N) where N is the number of commands with latency information being retrieved.").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
        .args(&[
            a("command", Str).opt().multi(),
        ])),
    ("latency|history", m("Return timestamp-latency samples for the event.", "2.8.13", "server").cx("O(1)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
        .args(&[
            a("event", Str),
        ])),
    ("latency|latest", m("Return the latest latency samples for all events.", "2.8.13", "server").cx("O(1)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])),
    ("latency|reset", m("Reset latency data for one or more events.", "2.8.13", "server").cx("O(1)").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
        .args(&[
            a("event", Str).opt().multi(),
        ])),
    ("replicaof", m("Make the server a replica of another instance, or promote it as master.", "5.0.0", "server").cx("O(1)")
        .args(&[
            oneof("args", &[block("host-port", &[a("host", Str), a("port", Int)]), block("no-one", &[t("no", "NO"), t("one", "ONE")])]),
        ])),
    ("slaveof", m("Make the server a replica of another instance, or promote it as master.", "1.0.0", "server").cx("O(1)").doc_flags(DEPRECATED).deprecated("5.0.0").replaced_by("`REPLICAOF`")
        .args(&[
            oneof("args", &[block("host-port", &[a("host", Str), a("port", Int)]), block("no-one", &[t("no", "NO"), t("one", "ONE")])]),
        ])),
    ("psync", m("Internal command used for replication", "2.8.0", "server")
        .args(&[
            a("replicationid", Str),
            a("offset", Int),
        ])),
    ("sync", m("Internal command used for replication", "1.0.0", "server")),
    ("replconf", m("An internal command for configuring the replication stream", "3.0.0", "server").cx("O(1)").doc_flags(SYSCMD)),
    ("failover", m("Start a coordinated failover between this server and one of its replicas.", "6.2.0", "server").cx("O(1)")
        .args(&[
            block("target", &[a("host", Str), a("port", Int), t("force", "FORCE").opt()]).tok("TO").opt(),
            t("abort", "ABORT").opt(),
            a("milliseconds", Int).tok("TIMEOUT").opt(),
        ])),
    ("role", m("Return the role of the instance in the context of replication", "2.8.12", "server").cx("O(1)")),
    ("restore-asking", m("An internal command for migrating keys in a cluster", "3.0.0", "server").cx("O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).").doc_flags(SYSCMD)
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("3.0.0", "Added the `REPLACE` modifier."), ("5.0.0", "Added the `ABSTTL` modifier."), ("5.0.0", "Added the `IDLETIME` and `FREQ` options.")])
        .args(&[
            a("key", Key).ks(0),
            a("ttl", Int),
            a("serialized-value", Str),
            t("replace", "REPLACE").since("3.0.0").opt(),
            t("absttl", "ABSTTL").since("5.0.0").opt(),
            a("seconds", Int).tok("IDLETIME").since("5.0.0").opt(),
            a("frequency", Int).tok("FREQ").since("5.0.0").opt(),
        ])),
    ("save", m("Synchronously save the dataset to disk", "1.0.0", "server").cx("O(N) where N is the total number of keys in all databases")),
    ("shutdown", m("Synchronously save the dataset to disk and then shut down the server", "1.0.0", "server").cx("O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)")
        .hist(&[("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers.")])
        .args(&[
            oneof("nosave_save", &[t("nosave", "NOSAVE"), t("save", "SAVE")]).opt(),
            t("now", "NOW").since("7.0.0").opt(),
            t("force", "FORCE").since("7.0.0").opt(),
            t("abort", "ABORT").since("7.0.0").opt(),
        ])),
    ("slowlog", m("A container for slow log commands", "2.2.12", "server").cx("Depends on subcommand.")),
    ("slowlog|get", m("Get the slow log's entries", "2.2.12", "server").cx("O(N) where N is the number of entries returned").tips(&["request_policy:all_nodes", "nondeterministic_output"])
        .hist(&[("4.0.0", "Added client IP address, port and name to the reply.")])
        .args(&[
            a("count", Int).opt(),
        ])),
    ("slowlog|help", m("Show helpful text about the different subcommands", "6.2.0", "server").cx("O(1)")),
    ("slowlog|len", m("Get the slow log's length", "2.2.12", "server").cx("O(1)").tips(&["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"])),
    ("slowlog|reset", m("Clear all entries from the slow log", "2.2.12", "server").cx("O(N) where N is the number of entries in the slowlog").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])),
    ("swapdb", m("Swaps two Redis databases", "4.0.0", "server").cx("O(N) where N is the count of clients watching or blocking on keys from both databases.")
        .args(&[
            a("index1", Int),
            a("index2", Int),
        ])),
    ("time", m("Return the current server time", "2.6.0", "server").cx("O(1)").tips(&["nondeterministic_output"])),
    ("auth", m("Authenticate to the server", "1.0.0", "connection").cx("O(N) where N is the number of passwords defined for the user")
        .hist(&[("6.0.0", "Added ACL style (username and password).")])
        .args(&[
            a("username", Str).since("6.0.0").opt(),
            a("password", Str),
        ])),
    ("client", m("A container for client connection commands", "2.4.0", "connection").cx("Depends on subcommand.")),
    ("client|getname", m("Get the current connection name", "2.6.9", "connection").cx("O(1)")),
    ("client|help", m("Show helpful text about the different subcommands", "5.0.0", "connection").cx("O(1)")),
    ("client|id", m("Returns the client ID for the current connection", "5.0.0", "connection").cx("O(1)")),
    ("client|info", m("Returns information about the current client connection.", "6.2.0", "connection").cx("O(1)").tips(&["nondeterministic_output"])),
    ("client|kill", m("Kill the connection of a client", "2.4.0", "connection").cx("O(N) where N is the number of client connections")
        .hist(&[("2.8.12", "Added new filter format."), ("2.8.12", "`ID` option."), ("3.2.0", "Added `master` type in for `TYPE` option."), ("5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."), ("6.2.0", "`LADDR` option.")])
        .args(&[
            oneof("filter", &[a("ip:port", Str).dep("2.8.12"), oneof("new-format", &[a("client-id", Int).tok("ID").since("2.8.12").opt(), oneof("normal_master_slave_pubsub", &[t("normal", "NORMAL"), t("master", "MASTER").since("3.2.0"), t("slave", "SLAVE"), t("replica", "REPLICA").since("5.0.0"), t("pubsub", "PUBSUB")]).tok("TYPE").since("2.8.12").opt(), a("username", Str).tok("USER").opt(), a("ip:port", Str).tok("ADDR").opt(), a("ip:port", Str).tok("LADDR").since("6.2.0").opt(), a("yes/no", Str).tok("SKIPME").opt()]).multi()]),
        ])),
    ("client|list", m("Get the list of client connections", "2.4.0", "connection").cx("O(N) where N is the number of client connections").tips(&["nondeterministic_output"])
        .hist(&[("2.8.12", "Added unique client `id` field."), ("5.0.0", "Added optional `TYPE` filter."), ("6.0.0", "Added `user` field."), ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."), ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."), ("7.0.3", "Added `ssub` field.")])
        .args(&[
            oneof("normal_master_replica_pubsub", &[t("normal", "NORMAL"), t("master", "MASTER"), t("replica", "REPLICA"), t("pubsub", "PUBSUB")]).tok("TYPE").since("5.0.0").opt(),
            block("id", &[a("client-id", Int).multi()]).tok("ID").since("6.2.0").opt(),
        ])),
    ("client|no-evict", m("Set client eviction mode for the current connection", "7.0.0", "connection").cx("O(1)")
        .args(&[
            oneof("enabled", &[t("on", "ON"), t("off", "OFF")]),
        ])),
    ("client|pause", m("Stop processing commands from clients for some time", "2.9.50", "connection").cx("O(1)")
        .hist(&[("6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option.")])
        .args(&[
            a("timeout", Int),
            oneof("mode", &[t("write", "WRITE"), t("all", "ALL")]).since("6.2.0").opt(),
        ])),
    ("client|reply", m("Instruct the server whether to reply to commands", "3.2.0", "connection").cx("O(1)")
        .args(&[
            oneof("on_off_skip", &[t("on", "ON"), t("off", "OFF"), t("skip", "SKIP")]),
        ])),
    ("client|setname", m("Set the current connection name", "2.6.9", "connection").cx("O(1)")
        .args(&[
            a("connection-name", Str),
        ])),
    ("client|unblock", m("Unblock a client blocked in a blocking command from a different connection", "5.0.0", "connection").cx("O(log N) where N is the number of client connections")
        .args(&[
            a("client-id", Int),
            oneof("timeout_error", &[t("timeout", "TIMEOUT"), t("error", "ERROR")]).opt(),
        ])),
    ("client|unpause", m("Resume processing of clients that were paused", "6.2.0", "connection").cx("O(N) Where N is the number of paused clients")),
    ("echo", m("Echo the given string", "1.0.0", "connection").cx("O(1)")
        .args(&[
            a("message", Str),
        ])),
    ("hello", m("Handshake with Redis", "6.0.0", "connection").cx("O(1)")
        .hist(&[("6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context.")])
        .args(&[
            block("arguments", &[a("protover", Int), block("username_password", &[a("username", Str), a("password", Str)]).tok("AUTH").opt(), a("clientname", Str).tok("SETNAME").opt()]).opt(),
        ])),
    ("ping", m("Ping the server", "1.0.0", "connection").cx("O(1)").tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .args(&[
            a("message", Str).opt(),
        ])),
    ("quit", m("Close the connection", "1.0.0", "connection").cx("O(1)")),
    ("reset", m("Reset the connection", "6.2.0", "connection").cx("O(1)")),
    ("select", m("Change the selected database for the current connection", "1.0.0", "connection").cx("O(1)")
        .args(&[
            a("index", Int),
        ])),
    ("eval", m("Execute a Lua script server side", "2.6.0", "scripting").cx("Depends on the script that is executed.")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(2), Keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")])
        .args(&[
            a("script", Str),
            a("numkeys", Int),
            a("key", Key).ks(0).opt().multi(),
            a("arg", Str).opt().multi(),
        ])),
    ("eval_ro", m("Execute a read-only Lua script server side", "7.0.0", "scripting").cx("Depends on the script that is executed.")
        .keys(&[ks(RO | ACCESS, Index(2), Keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")])
        .args(&[
            a("script", Str),
            a("numkeys", Int),
            a("key", Key).ks(0).opt().multi(),
            a("arg", Str).opt().multi(),
        ])),
    ("evalsha", m("Execute a Lua script server side", "2.6.0", "scripting").cx("Depends on the script that is executed.")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(2), Keynum(0, 1, 1))])
        .args(&[
            a("sha1", Str),
            a("numkeys", Int),
            a("key", Key).ks(0).opt().multi(),
            a("arg", Str).opt().multi(),
        ])),
    ("evalsha_ro", m("Execute a read-only Lua script server side", "7.0.0", "scripting").cx("Depends on the script that is executed.")
        .keys(&[ks(RO | ACCESS, Index(2), Keynum(0, 1, 1))])
        .args(&[
            a("sha1", Str),
            a("numkeys", Int),
            a("key", Key).ks(0).opt().multi(),
            a("arg", Str).opt().multi(),
        ])),
    ("fcall", m("Invoke a function", "7.0.0", "scripting").cx("Depends on the function that is executed.")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(2), Keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")])
        .args(&[
            a("function", Str),
            a("numkeys", Int),
            a("key", Key).ks(0).opt().multi(),
            a("arg", Str).opt().multi(),
        ])),
    ("fcall_ro", m("Invoke a read-only function", "7.0.0", "scripting").cx("Depends on the function that is executed.")
        .keys(&[ks(RO | ACCESS, Index(2), Keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")])
        .args(&[
            a("function", Str),
            a("numkeys", Int),
            a("key", Key).ks(0).opt().multi(),
            a("arg", Str).opt().multi(),
        ])),
    ("function", m("A container for function commands", "7.0.0", "scripting").cx("Depends on subcommand.")),
    ("function|delete", m("Delete a function by name", "7.0.0", "scripting").cx("O(1)").tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .args(&[
            a("library-name", Str),
        ])),
    ("function|dump", m("Dump all functions into a serialized binary payload", "7.0.0", "scripting").cx("O(N) where N is the number of functions")),
    ("function|flush", m("Deleting all functions", "7.0.0", "scripting").cx("O(N) where N is the number of functions deleted").tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .args(&[
            oneof("async", &[t("async", "ASYNC"), t("sync", "SYNC")]).opt(),
        ])),
    ("function|help", m("Show helpful text about the different subcommands", "7.0.0", "scripting").cx("O(1)")),
    ("function|kill", m("Kill the function currently in execution.", "7.0.0", "scripting").cx("O(1)").tips(&["request_policy:all_shards", "response_policy:one_succeeded"])),
    ("function|list", m("List information about all the functions", "7.0.0", "scripting").cx("O(N) where N is the number of functions").tips(&["nondeterministic_output_order"])
        .args(&[
            a("library-name-pattern", Str).tok("LIBRARYNAME").opt(),
            t("withcode", "WITHCODE").opt(),
        ])),
    ("function|load", m("Create a function with the given arguments (name, code, description)", "7.0.0", "scripting").cx("O(1) (considering compilation time is redundant)").tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .args(&[
            t("replace", "REPLACE").opt(),
            a("function-code", Str),
        ])),
    ("function|restore", m("Restore all the functions on the given payload", "7.0.0", "scripting").cx("O(N) where N is the number of functions on the payload").tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .args(&[
            a("serialized-value", Str),
            oneof("policy", &[t("flush", "FLUSH"), t("append", "APPEND"), t("replace", "REPLACE")]).opt(),
        ])),
    ("function|stats", m("Return information about the function currently running (name, description, duration)", "7.0.0", "scripting").cx("O(1)").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])),
    ("script", m("A container for Lua scripts management commands", "2.6.0", "scripting").cx("Depends on subcommand.")),
    ("script|debug", m("Set the debug mode for executed scripts.", "3.2.0", "scripting").cx("O(1)")
        .args(&[
            oneof("mode", &[t("yes", "YES"), t("sync", "SYNC"), t("no", "NO")]),
        ])),
    ("script|exists", m("Check existence of scripts in the script cache.", "2.6.0", "scripting").cx("O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).").tips(&["request_policy:all_shards", "response_policy:agg_logical_and"])
        .args(&[
            a("sha1", Str).multi(),
        ])),
    ("script|flush", m("Remove all the scripts from the script cache.", "2.6.0", "scripting").cx("O(N) with N being the number of scripts in cache").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
        .hist(&[("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers.")])
        .args(&[
            oneof("async", &[t("async", "ASYNC"), t("sync", "SYNC")]).since("6.2.0").opt(),
        ])),
    ("script|help", m("Show helpful text about the different subcommands", "5.0.0", "scripting").cx("O(1)")),
    ("script|kill", m("Kill the script currently in execution.", "2.6.0", "scripting").cx("O(1)").tips(&["request_policy:all_shards", "response_policy:one_succeeded"])),
    ("script|load", m("Load the specified Lua script into the script cache.", "2.6.0", "scripting").cx("O(N) with N being the length in bytes of the script body.").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
        .args(&[
            a("script", Str),
        ])),
    ("client|caching", m("Instruct the server about tracking or not keys in the next request", "6.0.0", "connection").cx("O(1)")
        .args(&[
            oneof("mode", &[t("yes", "YES"), t("no", "NO")]),
        ])),
    ("client|getredir", m("Get tracking notifications redirection client ID if any", "6.0.0", "connection").cx("O(1)")),
    ("client|tracking", m("Enable or disable server assisted client side caching support", "6.0.0", "connection").cx("O(1). Some options may introduce additional complexity.")
        .args(&[
            oneof("status", &[t("on", "ON"), t("off", "OFF")]),
            a("client-id", Int).tok("REDIRECT").opt(),
            a("prefix", Str).tok("PREFIX").opt().multi().mtok(),
            t("bcast", "BCAST").opt(),
            t("optin", "OPTIN").opt(),
            t("optout", "OPTOUT").opt(),
            t("noloop", "NOLOOP").opt(),
        ])),
    ("client|trackinginfo", m("Return information about server assisted client side caching for the current connection", "6.2.0", "connection").cx("O(1)")),
];
