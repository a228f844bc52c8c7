//! Key specs, tips and documentation of the keyspace (generic) and transaction commands (Redis 7.0.15's).
use super::key_flags::{ACCESS, DELETE, INCOMPLETE, INSERT, OW, RM, RO, RW, UPDATE};
use super::ArgType::{Int, Key, Pat, Str, Time};
use super::Begin::{Index, Keyword};
use super::Find::Range;
use super::{a, block, ks, m, oneof, t, Begin, Find, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("copy", m("Copy a key", "6.2.0", "generic").cx("O(N) worst case for collections, where N is the number of nested items. O(1) for string values.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0)), ks(OW | UPDATE, Index(2), Range(0, 1, 0))])
        .args(&[
            a("source", Key).ks(0),
            a("destination", Key).ks(1),
            a("destination-db", Int).tok("DB").opt(),
            t("replace", "REPLACE").opt(),
        ])),
    ("del", m("Delete a key", "1.0.0", "generic").cx("O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).").tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .keys(&[ks(RM | DELETE, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("dump", m("Return a serialized version of the value stored at the specified key.", "2.6.0", "generic").cx("O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("exists", m("Determine if a key exists", "1.0.0", "generic").cx("O(N) where N is the number of keys to check.").tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .keys(&[ks(RO, Index(1), Range(-1, 1, 0))])
        .hist(&[("3.0.3", "Accepts multiple `key` arguments.")])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("expire", m("Set a key's time to live in seconds", "1.0.0", "generic").cx("O(1)")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(&[
            a("key", Key).ks(0),
            a("seconds", Int),
            oneof("condition", &[t("nx", "NX"), t("xx", "XX"), t("gt", "GT"), t("lt", "LT")]).since("7.0.0").opt(),
        ])),
    ("expireat", m("Set the expiration for a key as a UNIX timestamp", "1.2.0", "generic").cx("O(1)")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(&[
            a("key", Key).ks(0),
            a("unix-time-seconds", Time),
            oneof("condition", &[t("nx", "NX"), t("xx", "XX"), t("gt", "GT"), t("lt", "LT")]).since("7.0.0").opt(),
        ])),
    ("expiretime", m("Get the expiration Unix timestamp for a key", "7.0.0", "generic").cx("O(1)")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("keys", m("Find all keys matching the given pattern", "1.0.0", "generic").cx("O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.").tips(&["request_policy:all_shards", "nondeterministic_output_order"])
        .args(&[
            a("pattern", Pat),
        ])),
    ("migrate", m("Atomically transfer a key from a Redis instance to another one.", "2.6.0", "generic").cx("This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.").tips(&["nondeterministic_output"])
        .keys(&[ks(RW | ACCESS | DELETE, Index(3), Range(0, 1, 0)), ks(RW | ACCESS | DELETE | INCOMPLETE, Keyword("KEYS", -2), Range(-1, 1, 0))])
        .hist(&[("3.0.0", "Added the `COPY` and `REPLACE` options."), ("3.0.6", "Added the `KEYS` option."), ("4.0.7", "Added the `AUTH` option."), ("6.0.0", "Added the `AUTH2` option.")])
        .args(&[
            a("host", Str),
            a("port", Int),
            oneof("key_or_empty_string", &[a("key", Key).ks(0), t("empty_string", "")]),
            a("destination-db", Int),
            a("timeout", Int),
            t("copy", "COPY").since("3.0.0").opt(),
            t("replace", "REPLACE").since("3.0.0").opt(),
            oneof("authentication", &[a("password", Str).tok("AUTH").since("4.0.7").opt(), block("username_password", &[a("username", Str), a("password", Str)]).tok("AUTH2").since("6.0.0").opt()]).opt(),
            a("key", Key).tok("KEYS").ks(1).since("3.0.6").opt().multi(),
        ])),
    ("move", m("Move a key to another database", "1.0.0", "generic").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("db", Int),
        ])),
    ("object", m("A container for object introspection commands", "2.2.3", "generic").cx("Depends on subcommand.")),
    ("object|encoding", m("Inspect the internal encoding of a Redis object", "2.2.3", "generic").cx("O(1)").tips(&["nondeterministic_output"])
        .keys(&[ks(RO, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("object|freq", m("Get the logarithmic access frequency counter of a Redis object", "4.0.0", "generic").cx("O(1)").tips(&["nondeterministic_output"])
        .keys(&[ks(RO, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("object|help", m("Show helpful text about the different subcommands", "6.2.0", "generic").cx("O(1)")),
    ("object|idletime", m("Get the time since a Redis object was last accessed", "2.2.3", "generic").cx("O(1)").tips(&["nondeterministic_output"])
        .keys(&[ks(RO, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("object|refcount", m("Get the number of references to the value of the key", "2.2.3", "generic").cx("O(1)").tips(&["nondeterministic_output"])
        .keys(&[ks(RO, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("persist", m("Remove the expiration from a key", "2.2.0", "generic").cx("O(1)")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("pexpire", m("Set a key's time to live in milliseconds", "2.6.0", "generic").cx("O(1)")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(&[
            a("key", Key).ks(0),
            a("milliseconds", Int),
            oneof("condition", &[t("nx", "NX"), t("xx", "XX"), t("gt", "GT"), t("lt", "LT")]).since("7.0.0").opt(),
        ])),
    ("pexpireat", m("Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0", "generic").cx("O(1)")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(&[
            a("key", Key).ks(0),
            a("unix-time-milliseconds", Time),
            oneof("condition", &[t("nx", "NX"), t("xx", "XX"), t("gt", "GT"), t("lt", "LT")]).since("7.0.0").opt(),
        ])),
    ("pexpiretime", m("Get the expiration Unix timestamp for a key in milliseconds", "7.0.0", "generic").cx("O(1)")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("pttl", m("Get the time to live for a key in milliseconds", "2.6.0", "generic").cx("O(1)").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("2.8.0", "Added the -2 reply.")])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("randomkey", m("Return a random key from the keyspace", "1.0.0", "generic").cx("O(1)").tips(&["request_policy:all_shards", "nondeterministic_output"])),
    ("rename", m("Rename a key", "1.0.0", "generic").cx("O(1)")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0)), ks(OW | UPDATE, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("newkey", Key).ks(1),
        ])),
    ("renamenx", m("Rename a key, only if the new key does not exist", "1.0.0", "generic").cx("O(1)")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0)), ks(OW | INSERT, Index(2), Range(0, 1, 0))])
        .hist(&[("3.2.0", "The command no longer returns an error when source and destination names are the same.")])
        .args(&[
            a("key", Key).ks(0),
            a("newkey", Key).ks(1),
        ])),
    ("restore", m("Create a key using the provided serialized value, previously obtained using DUMP.", "2.6.0", "generic").cx("O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).")
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
    ("scan", m("Incrementally iterate the keys space", "2.8.0", "generic").cx("O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.").tips(&["nondeterministic_output", "request_policy:special"])
        .hist(&[("6.0.0", "Added the `TYPE` subcommand.")])
        .args(&[
            a("cursor", Int),
            a("pattern", Pat).tok("MATCH").opt(),
            a("count", Int).tok("COUNT").opt(),
            a("type", Str).tok("TYPE").since("6.0.0").opt(),
        ])),
    ("sort", m("Sort the elements in a list, set or sorted set", "1.0.0", "generic").cx("O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Begin::Unknown, Find::Unknown).notes("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"), ks(OW | UPDATE, Begin::Unknown, Find::Unknown).notes("For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array")])
        .args(&[
            a("key", Key).ks(0),
            a("pattern", Pat).tok("BY").ks(1).opt(),
            block("offset_count", &[a("offset", Int), a("count", Int)]).tok("LIMIT").opt(),
            a("pattern", Pat).tok("GET").ks(1).opt().multi().mtok(),
            oneof("order", &[t("asc", "ASC"), t("desc", "DESC")]).opt(),
            t("sorting", "ALPHA").opt(),
            a("destination", Key).tok("STORE").ks(2).opt(),
        ])),
    ("sort_ro", m("Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0", "generic").cx("O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Begin::Unknown, Find::Unknown).notes("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort")])
        .args(&[
            a("key", Key).ks(0),
            a("pattern", Pat).tok("BY").ks(1).opt(),
            block("offset_count", &[a("offset", Int), a("count", Int)]).tok("LIMIT").opt(),
            a("pattern", Pat).tok("GET").ks(1).opt().multi().mtok(),
            oneof("order", &[t("asc", "ASC"), t("desc", "DESC")]).opt(),
            t("sorting", "ALPHA").opt(),
        ])),
    ("touch", m("Alters the last access time of a key(s). Returns the number of existing keys specified.", "3.2.1", "generic").cx("O(N) where N is the number of keys that will be touched.").tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .keys(&[ks(RO, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("ttl", m("Get the time to live for a key in seconds", "1.0.0", "generic").cx("O(1)").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("2.8.0", "Added the -2 reply.")])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("type", m("Determine the type stored at key", "1.0.0", "generic").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("unlink", m("Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", "4.0.0", "generic").cx("O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.").tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .keys(&[ks(RM | DELETE, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("wait", m("Wait for the synchronous replication of all the write commands sent in the context of the current connection", "3.0.0", "generic").cx("O(1)").tips(&["request_policy:all_shards", "response_policy:agg_min"])
        .args(&[
            a("numreplicas", Int),
            a("timeout", Int),
        ])),
    ("discard", m("Discard all commands issued after MULTI", "2.0.0", "transactions").cx("O(N), when N is the number of queued commands")),
    ("exec", m("Execute all commands issued after MULTI", "1.2.0", "transactions").cx("Depends on commands in the transaction")),
    ("multi", m("Mark the start of a transaction block", "1.2.0", "transactions").cx("O(1)")),
    ("unwatch", m("Forget about all watched keys", "2.2.0", "transactions").cx("O(1)")),
    ("watch", m("Watch the given keys to determine execution of the MULTI/EXEC block", "2.2.0", "transactions").cx("O(1) for every key.")
        .keys(&[ks(RO, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
];
