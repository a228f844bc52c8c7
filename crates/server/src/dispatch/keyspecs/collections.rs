//! Key specs, tips and documentation of the list, set and hash commands (Redis 7.0.15's).
use super::doc_flags::DEPRECATED;
use super::key_flags::{ACCESS, DELETE, INSERT, OW, RO, RW, UPDATE};
use super::ArgType::{Dbl, Int, Key, Pat, Str};
use super::Begin::Index;
use super::Find::{Keynum, Range};
use super::{a, block, ks, m, oneof, t, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("blmove", m("Pop an element from a list, push it to another list and return it; or block until one is available", "6.2.0", "list").cx("O(1)")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0)), ks(RW | INSERT, Index(2), Range(0, 1, 0))])
        .args(&[
            a("source", Key).ks(0),
            a("destination", Key).ks(1),
            oneof("wherefrom", &[t("left", "LEFT"), t("right", "RIGHT")]),
            oneof("whereto", &[t("left", "LEFT"), t("right", "RIGHT")]),
            a("timeout", Dbl),
        ])),
    ("blmpop", m("Pop elements from a list, or block until one is available", "7.0.0", "list").cx("O(N+M) where N is the number of provided keys and M is the number of elements returned.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(2), Keynum(0, 1, 1))])
        .args(&[
            a("timeout", Dbl),
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            oneof("where", &[t("left", "LEFT"), t("right", "RIGHT")]),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("blpop", m("Remove and get the first element in a list, or block until one is available", "2.0.0", "list").cx("O(N) where N is the number of provided keys.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(-2, 1, 0))])
        .hist(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[
            a("key", Key).ks(0).multi(),
            a("timeout", Dbl),
        ])),
    ("brpop", m("Remove and get the last element in a list, or block until one is available", "2.0.0", "list").cx("O(N) where N is the number of provided keys.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(-2, 1, 0))])
        .hist(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[
            a("key", Key).ks(0).multi(),
            a("timeout", Dbl),
        ])),
    ("brpoplpush", m("Pop an element from a list, push it to another list and return it; or block until one is available", "2.2.0", "list").cx("O(1)").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`BLMOVE` with the `RIGHT` and `LEFT` arguments")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0)), ks(RW | INSERT, Index(2), Range(0, 1, 0))])
        .hist(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[
            a("source", Key).ks(0),
            a("destination", Key).ks(1),
            a("timeout", Dbl),
        ])),
    ("lindex", m("Get an element from a list by its index", "1.0.0", "list").cx("O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("index", Int),
        ])),
    ("linsert", m("Insert an element before or after another element in a list", "2.2.0", "list").cx("O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            oneof("where", &[t("before", "BEFORE"), t("after", "AFTER")]),
            a("pivot", Str),
            a("element", Str),
        ])),
    ("llen", m("Get the length of a list", "1.0.0", "list").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("lmove", m("Pop an element from a list, push it to another list and return it", "6.2.0", "list").cx("O(1)")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0)), ks(RW | INSERT, Index(2), Range(0, 1, 0))])
        .args(&[
            a("source", Key).ks(0),
            a("destination", Key).ks(1),
            oneof("wherefrom", &[t("left", "LEFT"), t("right", "RIGHT")]),
            oneof("whereto", &[t("left", "LEFT"), t("right", "RIGHT")]),
        ])),
    ("lmpop", m("Pop elements from a list", "7.0.0", "list").cx("O(N+M) where N is the number of provided keys and M is the number of elements returned.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Keynum(0, 1, 1))])
        .args(&[
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            oneof("where", &[t("left", "LEFT"), t("right", "RIGHT")]),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("lpop", m("Remove and get the first elements in a list", "1.0.0", "list").cx("O(N) where N is the number of elements returned")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added the `count` argument.")])
        .args(&[
            a("key", Key).ks(0),
            a("count", Int).since("6.2.0").opt(),
        ])),
    ("lpos", m("Return the index of matching elements on a list", "6.0.6", "list").cx("O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("element", Str),
            a("rank", Int).tok("RANK").opt(),
            a("num-matches", Int).tok("COUNT").opt(),
            a("len", Int).tok("MAXLEN").opt(),
        ])),
    ("lpush", m("Prepend one or multiple elements to a list", "1.0.0", "list").cx("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .hist(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            a("element", Str).multi(),
        ])),
    ("lpushx", m("Prepend an element to a list, only if the list exists", "2.2.0", "list").cx("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .hist(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            a("element", Str).multi(),
        ])),
    ("lrange", m("Get a range of elements from a list", "1.0.0", "list").cx("O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("start", Int),
            a("stop", Int),
        ])),
    ("lrem", m("Remove elements from a list", "1.0.0", "list").cx("O(N+M) where N is the length of the list and M is the number of elements removed.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("count", Int),
            a("element", Str),
        ])),
    ("lset", m("Set the value of an element in a list by its index", "1.0.0", "list").cx("O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("index", Int),
            a("element", Str),
        ])),
    ("ltrim", m("Trim a list to the specified range", "1.0.0", "list").cx("O(N) where N is the number of elements to be removed by the operation.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("start", Int),
            a("stop", Int),
        ])),
    ("rpop", m("Remove and get the last elements in a list", "1.0.0", "list").cx("O(N) where N is the number of elements returned")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added the `count` argument.")])
        .args(&[
            a("key", Key).ks(0),
            a("count", Int).since("6.2.0").opt(),
        ])),
    ("rpoplpush", m("Remove the last element in a list, prepend it to another list and return it", "1.2.0", "list").cx("O(1)").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`LMOVE` with the `RIGHT` and `LEFT` arguments")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0)), ks(RW | INSERT, Index(2), Range(0, 1, 0))])
        .args(&[
            a("source", Key).ks(0),
            a("destination", Key).ks(1),
        ])),
    ("rpush", m("Append one or multiple elements to a list", "1.0.0", "list").cx("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .hist(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            a("element", Str).multi(),
        ])),
    ("rpushx", m("Append an element to a list, only if the list exists", "2.2.0", "list").cx("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .hist(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            a("element", Str).multi(),
        ])),
    ("sadd", m("Add one or more members to a set", "1.0.0", "set").cx("O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .hist(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str).multi(),
        ])),
    ("scard", m("Get the number of members in a set", "1.0.0", "set").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("sdiff", m("Subtract multiple sets", "1.0.0", "set").cx("O(N) where N is the total number of elements in all given sets.").tips(&["nondeterministic_output_order"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("sdiffstore", m("Subtract multiple sets and store the resulting set in a key", "1.0.0", "set").cx("O(N) where N is the total number of elements in all given sets.")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Range(-1, 1, 0))])
        .args(&[
            a("destination", Key).ks(0),
            a("key", Key).ks(1).multi(),
        ])),
    ("sinter", m("Intersect multiple sets", "1.0.0", "set").cx("O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.").tips(&["nondeterministic_output_order"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("sintercard", m("Intersect multiple sets and return the cardinality of the result", "7.0.0", "set").cx("O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        .keys(&[ks(RO | ACCESS, Index(1), Keynum(0, 1, 1))])
        .args(&[
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            a("limit", Int).tok("LIMIT").opt(),
        ])),
    ("sinterstore", m("Intersect multiple sets and store the resulting set in a key", "1.0.0", "set").cx("O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Range(-1, 1, 0))])
        .args(&[
            a("destination", Key).ks(0),
            a("key", Key).ks(1).multi(),
        ])),
    ("sismember", m("Determine if a given value is a member of a set", "1.0.0", "set").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str),
        ])),
    ("smembers", m("Get all the members in a set", "1.0.0", "set").cx("O(N) where N is the set cardinality.").tips(&["nondeterministic_output_order"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("smismember", m("Returns the membership associated with the given elements for a set", "6.2.0", "set").cx("O(N) where N is the number of elements being checked for membership")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str).multi(),
        ])),
    ("smove", m("Move a member from one set to another", "1.0.0", "set").cx("O(1)")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0)), ks(RW | INSERT, Index(2), Range(0, 1, 0))])
        .args(&[
            a("source", Key).ks(0),
            a("destination", Key).ks(1),
            a("member", Str),
        ])),
    ("spop", m("Remove and return one or multiple random members from a set", "1.0.0", "set").cx("Without the count argument O(1), otherwise O(N) where N is the value of the passed count.").tips(&["nondeterministic_output"])
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0))])
        .hist(&[("3.2.0", "Added the `count` argument.")])
        .args(&[
            a("key", Key).ks(0),
            a("count", Int).since("3.2.0").opt(),
        ])),
    ("srandmember", m("Get one or multiple random members from a set", "1.0.0", "set").cx("Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("2.6.0", "Added the optional `count` argument.")])
        .args(&[
            a("key", Key).ks(0),
            a("count", Int).since("2.6.0").opt(),
        ])),
    ("srem", m("Remove one or more members from a set", "1.0.0", "set").cx("O(N) where N is the number of members to be removed.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .hist(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str).multi(),
        ])),
    ("sscan", m("Incrementally iterate Set elements", "2.8.0", "set").cx("O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("cursor", Int),
            a("pattern", Pat).tok("MATCH").opt(),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("sunion", m("Add multiple sets", "1.0.0", "set").cx("O(N) where N is the total number of elements in all given sets.").tips(&["nondeterministic_output_order"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(-1, 1, 0))])
        .args(&[
            a("key", Key).ks(0).multi(),
        ])),
    ("sunionstore", m("Add multiple sets and store the resulting set in a key", "1.0.0", "set").cx("O(N) where N is the total number of elements in all given sets.")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Range(-1, 1, 0))])
        .args(&[
            a("destination", Key).ks(0),
            a("key", Key).ks(1).multi(),
        ])),
    ("hdel", m("Delete one or more hash fields", "2.0.0", "hash").cx("O(N) where N is the number of fields to be removed.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .hist(&[("2.4.0", "Accepts multiple `field` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            a("field", Str).multi(),
        ])),
    ("hexists", m("Determine if a hash field exists", "2.0.0", "hash").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("field", Str),
        ])),
    ("hget", m("Get the value of a hash field", "2.0.0", "hash").cx("O(1)")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("field", Str),
        ])),
    ("hgetall", m("Get all the fields and values in a hash", "2.0.0", "hash").cx("O(N) where N is the size of the hash.").tips(&["nondeterministic_output_order"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("hincrby", m("Increment the integer value of a hash field by the given number", "2.0.0", "hash").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("field", Str),
            a("increment", Int),
        ])),
    ("hincrbyfloat", m("Increment the float value of a hash field by the given amount", "2.6.0", "hash").cx("O(1)")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("field", Str),
            a("increment", Dbl),
        ])),
    ("hkeys", m("Get all the fields in a hash", "2.0.0", "hash").cx("O(N) where N is the size of the hash.").tips(&["nondeterministic_output_order"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("hlen", m("Get the number of fields in a hash", "2.0.0", "hash").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("hmget", m("Get the values of all the given hash fields", "2.0.0", "hash").cx("O(N) where N is the number of fields being requested.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("field", Str).multi(),
        ])),
    ("hmset", m("Set multiple hash fields to multiple values", "2.0.0", "hash").cx("O(N) where N is the number of fields being set.").doc_flags(DEPRECATED).deprecated("4.0.0").replaced_by("`HSET` with multiple field-value pairs")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            block("field_value", &[a("field", Str), a("value", Str)]).multi(),
        ])),
    ("hrandfield", m("Get one or multiple random fields from a hash", "6.2.0", "hash").cx("O(N) where N is the number of fields returned").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            block("options", &[a("count", Int), t("withvalues", "WITHVALUES").opt()]).opt(),
        ])),
    ("hscan", m("Incrementally iterate hash fields and associated values", "2.8.0", "hash").cx("O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("cursor", Int),
            a("pattern", Pat).tok("MATCH").opt(),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("hset", m("Set the string value of a hash field", "2.0.0", "hash").cx("O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("4.0.0", "Accepts multiple `field` and `value` arguments.")])
        .args(&[
            a("key", Key).ks(0),
            block("field_value", &[a("field", Str), a("value", Str)]).multi(),
        ])),
    ("hsetnx", m("Set the value of a hash field, only if the field does not exist", "2.0.0", "hash").cx("O(1)")
        .keys(&[ks(RW | INSERT, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("field", Str),
            a("value", Str),
        ])),
    ("hstrlen", m("Get the length of the value of a hash field", "3.2.0", "hash").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("field", Str),
        ])),
    ("hvals", m("Get all the values in a hash", "2.0.0", "hash").cx("O(N) where N is the size of the hash.").tips(&["nondeterministic_output_order"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
];
