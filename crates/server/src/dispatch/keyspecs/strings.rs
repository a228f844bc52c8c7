//! Key specs, tips and documentation of the string, bitmap and HyperLogLog commands (Redis 7.0.15's).
use super::doc_flags::DEPRECATED;
use super::key_flags::{ACCESS, DELETE, INSERT, OW, RO, RW, UPDATE, VARIABLE_FLAGS};
use super::ArgType::{Dbl, Int, Key, Str, Time};
use super::Begin::Index;
use super::Find::Range;
use super::{a, block, ks, m, oneof, t, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("append", m("Append a value to a key", "2.0.0", "string").cx("O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("value", Str),
        ])),
    ("decr", m("Decrement the integer value of a key by one", "1.0.0", "string").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("decrby", m("Decrement the integer value of a key by the given number", "1.0.0", "string").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("decrement", Int),
        ])),
    ("get", m("Get the value of a key", "1.0.0", "string").cx("O(1)")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("getdel", m("Get the value of a key and delete the key", "6.2.0", "string").cx("O(1)")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("getex", m("Get the value of a key and optionally set its expiration", "6.2.0", "string").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0)).notes("RW and UPDATE because it changes the TTL")])
        .args(&[
            a("key", Key).ks(0),
            oneof("expiration", &[a("seconds", Int).tok("EX"), a("milliseconds", Int).tok("PX"), a("unix-time-seconds", Time).tok("EXAT"), a("unix-time-milliseconds", Time).tok("PXAT"), t("persist", "PERSIST")]).opt(),
        ])),
    ("getrange", m("Get a substring of the string stored at a key", "2.4.0", "string").cx("O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("start", Int),
            a("end", Int),
        ])),
    ("getset", m("Set the string value of a key and return its old value", "1.0.0", "string").cx("O(1)").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`SET` with the `!GET` argument")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("value", Str),
        ])),
    ("incr", m("Increment the integer value of a key by one", "1.0.0", "string").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("incrby", m("Increment the integer value of a key by the given amount", "1.0.0", "string").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("increment", Int),
        ])),
    ("incrbyfloat", m("Increment the float value of a key by the given amount", "2.6.0", "string").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("increment", Dbl),
        ])),
    ("lcs", m("Find longest common substring", "7.0.0", "string").cx("O(N*M) where N and M are the lengths of s1 and s2, respectively")
        .keys(&[ks(RO | ACCESS, Index(1), Range(1, 1, 0))])
        .args(&[
            a("key1", Key).ks(0),
            a("key2", Key).ks(0),
            t("len", "LEN").opt(),
            t("idx", "IDX").opt(),
            a("len", Int).tok("MINMATCHLEN").opt(),
            t("withmatchlen", "WITHMATCHLEN").opt(),
        ])),
    ("mget", m("Get the values of all the given keys", "1.0.0", "string").cx("O(N) where N is the number of keys to retrieve.").tips(&["request_policy:multi_shard"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("mset", m("Set multiple keys to multiple values", "1.0.1", "string").cx("O(N) where N is the number of keys to set.").tips(&["request_policy:multi_shard", "response_policy:all_succeeded"])
        .keys(&[ks(OW | UPDATE, Index(1), Range(-1, 2, 0))])
        .args(&[
            block("key_value", &[a("key", Key).ks(0), a("value", Str)]).multi(),
        ])),
    ("msetnx", m("Set multiple keys to multiple values, only if none of the keys exist", "1.0.1", "string").cx("O(N) where N is the number of keys to set.").tips(&["request_policy:multi_shard", "response_policy:agg_min"])
        .keys(&[ks(OW | INSERT, Index(1), Range(-1, 2, 0))])
        .args(&[
            block("key_value", &[a("key", Key).ks(0), a("value", Str)]).multi(),
        ])),
    ("psetex", m("Set the value and expiration in milliseconds of a key", "2.6.0", "string").cx("O(1)")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("milliseconds", Int),
            a("value", Str),
        ])),
    ("set", m("Set the string value of a key", "1.0.0", "string").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE | VARIABLE_FLAGS, Index(1), Range(0, 1, 0)).notes("RW and ACCESS due to the optional `GET` argument")])
        .hist(&[("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."), ("6.0.0", "Added the `KEEPTTL` option."), ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."), ("7.0.0", "Allowed the `NX` and `GET` options to be used together.")])
        .args(&[
            a("key", Key).ks(0),
            a("value", Str),
            oneof("condition", &[t("nx", "NX"), t("xx", "XX")]).since("2.6.12").opt(),
            t("get", "GET").since("6.2.0").opt(),
            oneof("expiration", &[a("seconds", Int).tok("EX").since("2.6.12"), a("milliseconds", Int).tok("PX").since("2.6.12"), a("unix-time-seconds", Time).tok("EXAT").since("6.2.0"), a("unix-time-milliseconds", Time).tok("PXAT").since("6.2.0"), t("keepttl", "KEEPTTL").since("6.0.0")]).opt(),
        ])),
    ("setex", m("Set the value and expiration of a key", "2.0.0", "string").cx("O(1)")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("seconds", Int),
            a("value", Str),
        ])),
    ("setnx", m("Set the value of a key, only if the key does not exist", "1.0.0", "string").cx("O(1)")
        .keys(&[ks(OW | INSERT, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("value", Str),
        ])),
    ("setrange", m("Overwrite part of a string at key starting at the specified offset", "2.2.0", "string").cx("O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("offset", Int),
            a("value", Str),
        ])),
    ("strlen", m("Get the length of the value stored in a key", "2.2.0", "string").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("substr", m("Get a substring of the string stored at a key", "1.0.0", "string").cx("O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.").doc_flags(DEPRECATED).deprecated("2.0.0").replaced_by("`GETRANGE`")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("start", Int),
            a("end", Int),
        ])),
    ("bitcount", m("Count set bits in a string", "2.6.0", "bitmap").cx("O(N)")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .args(&[
            a("key", Key).ks(0),
            block("index", &[a("start", Int), a("end", Int), oneof("index_unit", &[t("byte", "BYTE"), t("bit", "BIT")]).since("7.0.0").opt()]).opt(),
        ])),
    ("bitfield", m("Perform arbitrary bitfield integer operations on strings", "3.2.0", "bitmap").cx("O(1) for each subcommand specified")
        .keys(&[ks(RW | UPDATE | ACCESS | VARIABLE_FLAGS, Index(1), Range(0, 1, 0)).notes("This command allows both access and modification of the key")])
        .args(&[
            a("key", Key).ks(0),
            oneof("operation", &[block("encoding_offset", &[a("encoding", Str), a("offset", Int)]).tok("GET"), block("write", &[oneof("wrap_sat_fail", &[t("wrap", "WRAP"), t("sat", "SAT"), t("fail", "FAIL")]).tok("OVERFLOW").opt(), oneof("write_operation", &[block("encoding_offset_value", &[a("encoding", Str), a("offset", Int), a("value", Int)]).tok("SET"), block("encoding_offset_increment", &[a("encoding", Str), a("offset", Int), a("increment", Int)]).tok("INCRBY")])])]).opt().multi(),
        ])),
    ("bitfield_ro", m("Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "6.0.0", "bitmap").cx("O(1) for each subcommand specified")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            block("encoding_offset", &[a("encoding", Str), a("offset", Int)]).tok("GET").opt().multi().mtok(),
        ])),
    ("bitop", m("Perform bitwise operations between strings", "2.6.0", "bitmap").cx("O(N)")
        .keys(&[ks(OW | UPDATE, Index(2), Range(0, 1, 0)), ks(RO | ACCESS, Index(3), Range(-1, 1, 0))])
        .args(&[
            a("operation", Str),
            a("destkey", Key).ks(0),
            a("key", Key).ks(1).multi(),
        ])),
    ("bitpos", m("Find first bit set or clear in a string", "2.8.7", "bitmap").cx("O(N)")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .args(&[
            a("key", Key).ks(0),
            a("bit", Int),
            block("index", &[a("start", Int), block("end_index", &[a("end", Int), oneof("index_unit", &[t("byte", "BYTE"), t("bit", "BIT")]).since("7.0.0").opt()]).opt()]).opt(),
        ])),
    ("getbit", m("Returns the bit value at offset in the string value stored at key", "2.2.0", "bitmap").cx("O(1)")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("offset", Int),
        ])),
    ("setbit", m("Sets or clears the bit at offset in the string value stored at key", "2.2.0", "bitmap").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("offset", Int),
            a("value", Int),
        ])),
    ("pfadd", m("Adds the specified elements to the specified HyperLogLog.", "2.8.9", "hyperloglog").cx("O(1) to add every element.")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("element", Str).opt().multi(),
        ])),
    ("pfcount", m("Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", "2.8.9", "hyperloglog").cx("O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.")
        .keys(&[ks(RW | ACCESS, Index(1), Range(-1, 1, 0)).notes("RW because it may change the internal representation of the key, and propagate to replicas")])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("pfmerge", m("Merge N different HyperLogLogs into a single one.", "2.8.9", "hyperloglog").cx("O(N) to merge N HyperLogLogs, but with high constant times.")
        .keys(&[ks(RW | ACCESS | INSERT, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Range(-1, 1, 0))])
        .args(&[
            a("destkey", Key).ks(0),
            a("sourcekey", Key).ks(1).multi(),
        ])),
];
