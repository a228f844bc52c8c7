//! Key specs, tips and documentation of the stream commands (Redis 7.0.15's).
use super::key_flags::{ACCESS, DELETE, INSERT, RO, RW, UPDATE};
use super::ArgType::{Int, Key, Str, Time};
use super::Begin::{Index, Keyword};
use super::Find::Range;
use super::{a, block, ks, m, oneof, t, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("xack", m("Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", "5.0.0", "stream").cx("O(1) for each message ID processed.")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("group", Str),
            a("id", Str).multi(),
        ])),
    ("xadd", m("Appends a new entry to a stream", "5.0.0", "stream").cx("O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.").tips(&["nondeterministic_output"])
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0)).notes("UPDATE instead of INSERT because of the optional trimming feature")])
        .hist(&[("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."), ("7.0.0", "Added support for the `<ms>-*` explicit ID form.")])
        .args(&[
            a("key", Key).ks(0),
            t("nomkstream", "NOMKSTREAM").since("6.2.0").opt(),
            block("trim", &[oneof("strategy", &[t("maxlen", "MAXLEN"), t("minid", "MINID").since("6.2.0")]), oneof("operator", &[t("equal", "="), t("approximately", "~")]).opt(), a("threshold", Str), a("count", Int).tok("LIMIT").since("6.2.0").opt()]).opt(),
            oneof("id_or_auto", &[t("auto_id", "*"), a("id", Str)]),
            block("field_value", &[a("field", Str), a("value", Str)]).multi(),
        ])),
    ("xautoclaim", m("Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", "6.2.0", "stream").cx("O(1) if COUNT is small.").tips(&["nondeterministic_output"])
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added an element to the reply array, containing deleted entries the command cleared from the PEL")])
        .args(&[
            a("key", Key).ks(0),
            a("group", Str),
            a("consumer", Str),
            a("min-idle-time", Str),
            a("start", Str),
            a("count", Int).tok("COUNT").opt(),
            t("justid", "JUSTID").opt(),
        ])),
    ("xclaim", m("Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", "5.0.0", "stream").cx("O(log N) with N being the number of messages in the PEL of the consumer group.").tips(&["nondeterministic_output"])
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("group", Str),
            a("consumer", Str),
            a("min-idle-time", Str),
            a("id", Str).multi(),
            a("ms", Int).tok("IDLE").opt(),
            a("unix-time-milliseconds", Time).tok("TIME").opt(),
            a("count", Int).tok("RETRYCOUNT").opt(),
            t("force", "FORCE").opt(),
            t("justid", "JUSTID").opt(),
            a("id", Str).tok("LASTID").opt(),
        ])),
    ("xdel", m("Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "5.0.0", "stream").cx("O(1) for each single item to delete in the stream, regardless of the stream size.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("id", Str).multi(),
        ])),
    ("xgroup", m("A container for consumer groups commands", "5.0.0", "stream").cx("Depends on subcommand.")),
    ("xgroup|create", m("Create a consumer group.", "5.0.0", "stream").cx("O(1)")
        .keys(&[ks(RW | INSERT, Index(2), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added the `entries_read` named argument.")])
        .args(&[
            a("key", Key).ks(0),
            a("groupname", Str),
            oneof("id", &[a("id", Str), t("new_id", "$")]),
            t("mkstream", "MKSTREAM").opt(),
            a("entries_read", Int).tok("ENTRIESREAD").opt(),
        ])),
    ("xgroup|createconsumer", m("Create a consumer in a consumer group.", "6.2.0", "stream").cx("O(1)")
        .keys(&[ks(RW | INSERT, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("groupname", Str),
            a("consumername", Str),
        ])),
    ("xgroup|delconsumer", m("Delete a consumer from a consumer group.", "5.0.0", "stream").cx("O(1)")
        .keys(&[ks(RW | DELETE, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("groupname", Str),
            a("consumername", Str),
        ])),
    ("xgroup|destroy", m("Destroy a consumer group.", "5.0.0", "stream").cx("O(N) where N is the number of entries in the group's pending entries list (PEL).")
        .keys(&[ks(RW | DELETE, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("groupname", Str),
        ])),
    ("xgroup|help", m("Show helpful text about the different subcommands", "5.0.0", "stream").cx("O(1)")),
    ("xgroup|setid", m("Set a consumer group to an arbitrary last delivered ID value.", "5.0.0", "stream").cx("O(1)")
        .keys(&[ks(RW | UPDATE, Index(2), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added the optional `entries_read` argument.")])
        .args(&[
            a("key", Key).ks(0),
            a("groupname", Str),
            oneof("id", &[a("id", Str), t("new_id", "$")]),
            a("entries_read", Int).tok("ENTRIESREAD").opt(),
        ])),
    ("xinfo", m("A container for stream introspection commands", "5.0.0", "stream").cx("Depends on subcommand.")),
    ("xinfo|consumers", m("List the consumers in a consumer group", "5.0.0", "stream").cx("O(1)").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(2), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("groupname", Str),
        ])),
    ("xinfo|groups", m("List the consumer groups of a stream", "5.0.0", "stream").cx("O(1)")
        .keys(&[ks(RO | ACCESS, Index(2), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added the `entries-read` and `lag` fields")])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("xinfo|help", m("Show helpful text about the different subcommands", "5.0.0", "stream").cx("O(1)")),
    ("xinfo|stream", m("Get information about a stream", "5.0.0", "stream").cx("O(1)")
        .keys(&[ks(RO | ACCESS, Index(2), Range(0, 1, 0))])
        .hist(&[("6.0.0", "Added the `FULL` modifier."), ("7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields")])
        .args(&[
            a("key", Key).ks(0),
            block("full", &[a("count", Int).tok("COUNT").opt()]).tok("FULL").opt(),
        ])),
    ("xlen", m("Return the number of entries in a stream", "5.0.0", "stream").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("xpending", m("Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", "5.0.0", "stream").cx("O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added the `IDLE` option and exclusive range intervals.")])
        .args(&[
            a("key", Key).ks(0),
            a("group", Str),
            block("filters", &[a("min-idle-time", Int).tok("IDLE").since("6.2.0").opt(), a("start", Str), a("end", Str), a("count", Int), a("consumer", Str).opt()]).opt(),
        ])),
    ("xrange", m("Return a range of elements in a stream, with IDs matching the specified IDs interval", "5.0.0", "stream").cx("O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added exclusive ranges.")])
        .args(&[
            a("key", Key).ks(0),
            a("start", Str),
            a("end", Str),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("xread", m("Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", "5.0.0", "stream").cx("For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.")
        .keys(&[ks(RO | ACCESS, Keyword("STREAMS", 1), Range(-1, 1, 2))])
        .args(&[
            a("count", Int).tok("COUNT").opt(),
            a("milliseconds", Int).tok("BLOCK").opt(),
            block("streams", &[a("key", Key).ks(0).multi(), a("id", Str).multi()]).tok("STREAMS"),
        ])),
    ("xreadgroup", m("Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", "5.0.0", "stream").cx("For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.")
        .keys(&[ks(RO | ACCESS, Keyword("STREAMS", 4), Range(-1, 1, 2))])
        .args(&[
            block("group_consumer", &[a("group", Str), a("consumer", Str)]).tok("GROUP"),
            a("count", Int).tok("COUNT").opt(),
            a("milliseconds", Int).tok("BLOCK").opt(),
            t("noack", "NOACK").opt(),
            block("streams", &[a("key", Key).ks(0).multi(), a("id", Str).multi()]).tok("STREAMS"),
        ])),
    ("xrevrange", m("Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "5.0.0", "stream").cx("O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added exclusive ranges.")])
        .args(&[
            a("key", Key).ks(0),
            a("end", Str),
            a("start", Str),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("xsetid", m("An internal command for replicating stream values", "5.0.0", "stream").cx("O(1)")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            a("last-id", Str),
            a("entries_added", Int).tok("ENTRIESADDED").since("7.0.0").opt(),
            a("max_deleted_entry_id", Str).tok("MAXDELETEDID").since("7.0.0").opt(),
        ])),
    ("xtrim", m("Trims the stream to (approximately if '~' is passed) a certain size", "5.0.0", "stream").cx("O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.").tips(&["nondeterministic_output"])
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option.")])
        .args(&[
            a("key", Key).ks(0),
            block("trim", &[oneof("strategy", &[t("maxlen", "MAXLEN"), t("minid", "MINID").since("6.2.0")]), oneof("operator", &[t("equal", "="), t("approximately", "~")]).opt(), a("threshold", Str), a("count", Int).tok("LIMIT").since("6.2.0").opt()]),
        ])),
];
