//! Key specs, tips and documentation of the sorted set and geo commands (Redis 7.0.15's).
use super::doc_flags::DEPRECATED;
use super::key_flags::{ACCESS, DELETE, OW, RO, RW, UPDATE};
use super::ArgType::{Dbl, Int, Key, Pat, Str};
use super::Begin::{Index, Keyword};
use super::Find::{Keynum, Range};
use super::{a, block, ks, m, oneof, t, Table};

#[rustfmt::skip]
pub(super) const TABLE: Table = &[
    ("bzmpop", m("Remove and return members with scores in a sorted set or block until one is available", "7.0.0", "sorted-set").cx("O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(2), Keynum(0, 1, 1))])
        .args(&[
            a("timeout", Dbl),
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            oneof("where", &[t("min", "MIN"), t("max", "MAX")]),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("bzpopmax", m("Remove and return the member with the highest score from one or more sorted sets, or block until one is available", "5.0.0", "sorted-set").cx("O(log(N)) with N being the number of elements in the sorted set.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(-2, 1, 0))])
        .hist(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[
            a("key", Key).ks(0).multi(),
            a("timeout", Dbl),
        ])),
    ("bzpopmin", m("Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", "5.0.0", "sorted-set").cx("O(log(N)) with N being the number of elements in the sorted set.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(-2, 1, 0))])
        .hist(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[
            a("key", Key).ks(0).multi(),
            a("timeout", Dbl),
        ])),
    ("zadd", m("Add one or more members to a sorted set, or update its score if it already exists", "1.2.0", "sorted-set").cx("O(log(N)) for each item added, where N is the number of elements in the sorted set.")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("2.4.0", "Accepts multiple elements."), ("3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."), ("6.2.0", "Added the `GT` and `LT` options.")])
        .args(&[
            a("key", Key).ks(0),
            oneof("condition", &[t("nx", "NX"), t("xx", "XX")]).since("3.0.2").opt(),
            oneof("comparison", &[t("gt", "GT"), t("lt", "LT")]).since("6.2.0").opt(),
            t("change", "CH").since("3.0.2").opt(),
            t("increment", "INCR").since("3.0.2").opt(),
            block("score_member", &[a("score", Dbl), a("member", Str)]).multi(),
        ])),
    ("zcard", m("Get the number of members in a sorted set", "1.2.0", "sorted-set").cx("O(1)")
        .keys(&[ks(RO, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
        ])),
    ("zcount", m("Count the members in a sorted set with scores within the given values", "2.0.0", "sorted-set").cx("O(log(N)) with N being the number of elements in the sorted set.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("min", Dbl),
            a("max", Dbl),
        ])),
    ("zdiff", m("Subtract multiple sorted sets", "6.2.0", "sorted-set").cx("O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.")
        .keys(&[ks(RO | ACCESS, Index(1), Keynum(0, 1, 1))])
        .args(&[
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            t("withscores", "WITHSCORES").opt(),
        ])),
    ("zdiffstore", m("Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0", "sorted-set").cx("O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Keynum(0, 1, 1))])
        .args(&[
            a("destination", Key).ks(0),
            a("numkeys", Int),
            a("key", Key).ks(1).multi(),
        ])),
    ("zincrby", m("Increment the score of a member in a sorted set", "1.2.0", "sorted-set").cx("O(log(N)) where N is the number of elements in the sorted set.")
        .keys(&[ks(RW | ACCESS | UPDATE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("increment", Int),
            a("member", Str),
        ])),
    ("zinter", m("Intersect multiple sorted sets", "6.2.0", "sorted-set").cx("O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.")
        .keys(&[ks(RO | ACCESS, Index(1), Keynum(0, 1, 1))])
        .args(&[
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            a("weight", Int).tok("WEIGHTS").opt().multi(),
            oneof("aggregate", &[t("sum", "SUM"), t("min", "MIN"), t("max", "MAX")]).tok("AGGREGATE").opt(),
            t("withscores", "WITHSCORES").opt(),
        ])),
    ("zintercard", m("Intersect multiple sorted sets and return the cardinality of the result", "7.0.0", "sorted-set").cx("O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.")
        .keys(&[ks(RO | ACCESS, Index(1), Keynum(0, 1, 1))])
        .args(&[
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            a("limit", Int).tok("LIMIT").opt(),
        ])),
    ("zinterstore", m("Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", "sorted-set").cx("O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Keynum(0, 1, 1))])
        .args(&[
            a("destination", Key).ks(0),
            a("numkeys", Int),
            a("key", Key).ks(1).multi(),
            a("weight", Int).tok("WEIGHTS").opt().multi(),
            oneof("aggregate", &[t("sum", "SUM"), t("min", "MIN"), t("max", "MAX")]).tok("AGGREGATE").opt(),
        ])),
    ("zlexcount", m("Count the number of members in a sorted set between a given lexicographical range", "2.8.9", "sorted-set").cx("O(log(N)) with N being the number of elements in the sorted set.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("min", Str),
            a("max", Str),
        ])),
    ("zmpop", m("Remove and return members with scores in a sorted set", "7.0.0", "sorted-set").cx("O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Keynum(0, 1, 1))])
        .args(&[
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            oneof("where", &[t("min", "MIN"), t("max", "MAX")]),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("zmscore", m("Get the score associated with the given members in a sorted set", "6.2.0", "sorted-set").cx("O(N) where N is the number of members being requested.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str).multi(),
        ])),
    ("zpopmax", m("Remove and return members with the highest scores in a sorted set", "5.0.0", "sorted-set").cx("O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("count", Int).opt(),
        ])),
    ("zpopmin", m("Remove and return members with the lowest scores in a sorted set", "5.0.0", "sorted-set").cx("O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
        .keys(&[ks(RW | ACCESS | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("count", Int).opt(),
        ])),
    ("zrandmember", m("Get one or multiple random elements from a sorted set", "6.2.0", "sorted-set").cx("O(N) where N is the number of elements returned").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            block("options", &[a("count", Int), t("withscores", "WITHSCORES").opt()]).opt(),
        ])),
    ("zrange", m("Return a range of members in a sorted set", "1.2.0", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options.")])
        .args(&[
            a("key", Key).ks(0),
            a("start", Str),
            a("stop", Str),
            oneof("sortby", &[t("byscore", "BYSCORE"), t("bylex", "BYLEX")]).since("6.2.0").opt(),
            t("rev", "REV").since("6.2.0").opt(),
            block("offset_count", &[a("offset", Int), a("count", Int)]).tok("LIMIT").since("6.2.0").opt(),
            t("withscores", "WITHSCORES").opt(),
        ])),
    ("zrangebylex", m("Return a range of members in a sorted set, by lexicographical range", "2.8.9", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`ZRANGE` with the `BYLEX` argument")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("min", Str),
            a("max", Str),
            block("offset_count", &[a("offset", Int), a("count", Int)]).tok("LIMIT").opt(),
        ])),
    ("zrangebyscore", m("Return a range of members in a sorted set, by score", "1.0.5", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`ZRANGE` with the `BYSCORE` argument")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("2.0.0", "Added the `WITHSCORES` modifier.")])
        .args(&[
            a("key", Key).ks(0),
            a("min", Dbl),
            a("max", Dbl),
            t("withscores", "WITHSCORES").since("2.0.0").opt(),
            block("offset_count", &[a("offset", Int), a("count", Int)]).tok("LIMIT").opt(),
        ])),
    ("zrangestore", m("Store a range of members from sorted set into another key", "6.2.0", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Range(0, 1, 0))])
        .args(&[
            a("dst", Key).ks(0),
            a("src", Key).ks(1),
            a("min", Str),
            a("max", Str),
            oneof("sortby", &[t("byscore", "BYSCORE"), t("bylex", "BYLEX")]).opt(),
            t("rev", "REV").opt(),
            block("offset_count", &[a("offset", Int), a("count", Int)]).tok("LIMIT").opt(),
        ])),
    ("zrank", m("Determine the index of a member in a sorted set", "2.0.0", "sorted-set").cx("O(log(N))")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str),
        ])),
    ("zrem", m("Remove one or more members from a sorted set", "1.2.0", "sorted-set").cx("O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .hist(&[("2.4.0", "Accepts multiple elements.")])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str).multi(),
        ])),
    ("zremrangebylex", m("Remove all members in a sorted set between the given lexicographical range", "2.8.9", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("min", Str),
            a("max", Str),
        ])),
    ("zremrangebyrank", m("Remove all members in a sorted set within the given indexes", "2.0.0", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("start", Int),
            a("stop", Int),
        ])),
    ("zremrangebyscore", m("Remove all members in a sorted set within the given scores", "1.2.0", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .keys(&[ks(RW | DELETE, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("min", Dbl),
            a("max", Dbl),
        ])),
    ("zrevrange", m("Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`ZRANGE` with the `REV` argument")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("start", Int),
            a("stop", Int),
            t("withscores", "WITHSCORES").opt(),
        ])),
    ("zrevrangebylex", m("Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "2.8.9", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`ZRANGE` with the `REV` and `BYLEX` arguments")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("max", Str),
            a("min", Str),
            block("offset_count", &[a("offset", Int), a("count", Int)]).tok("LIMIT").opt(),
        ])),
    ("zrevrangebyscore", m("Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0", "sorted-set").cx("O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`ZRANGE` with the `REV` and `BYSCORE` arguments")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("2.1.6", "`min` and `max` can be exclusive.")])
        .args(&[
            a("key", Key).ks(0),
            a("max", Dbl),
            a("min", Dbl),
            t("withscores", "WITHSCORES").opt(),
            block("offset_count", &[a("offset", Int), a("count", Int)]).tok("LIMIT").opt(),
        ])),
    ("zrevrank", m("Determine the index of a member in a sorted set, with scores ordered from high to low", "2.0.0", "sorted-set").cx("O(log(N))")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str),
        ])),
    ("zscan", m("Incrementally iterate sorted sets elements and associated scores", "2.8.0", "sorted-set").cx("O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..").tips(&["nondeterministic_output"])
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("cursor", Int),
            a("pattern", Pat).tok("MATCH").opt(),
            a("count", Int).tok("COUNT").opt(),
        ])),
    ("zscore", m("Get the score associated with the given member in a sorted set", "1.2.0", "sorted-set").cx("O(1)")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str),
        ])),
    ("zunion", m("Add multiple sorted sets", "6.2.0", "sorted-set").cx("O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.")
        .keys(&[ks(RO | ACCESS, Index(1), Keynum(0, 1, 1))])
        .args(&[
            a("numkeys", Int),
            a("key", Key).ks(0).multi(),
            a("weight", Int).tok("WEIGHTS").opt().multi(),
            oneof("aggregate", &[t("sum", "SUM"), t("min", "MIN"), t("max", "MAX")]).tok("AGGREGATE").opt(),
            t("withscores", "WITHSCORES").opt(),
        ])),
    ("zunionstore", m("Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", "sorted-set").cx("O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Keynum(0, 1, 1))])
        .args(&[
            a("destination", Key).ks(0),
            a("numkeys", Int),
            a("key", Key).ks(1).multi(),
            a("weight", Int).tok("WEIGHTS").opt().multi(),
            oneof("aggregate", &[t("sum", "SUM"), t("min", "MIN"), t("max", "MAX")]).tok("AGGREGATE").opt(),
        ])),
    ("geoadd", m("Add one or more geospatial items in the geospatial index represented using a sorted set", "3.2.0", "geo").cx("O(log(N)) for each item added, where N is the number of elements in the sorted set.")
        .keys(&[ks(RW | UPDATE, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added the `CH`, `NX` and `XX` options.")])
        .args(&[
            a("key", Key).ks(0),
            oneof("condition", &[t("nx", "NX"), t("xx", "XX")]).since("6.2.0").opt(),
            t("change", "CH").since("6.2.0").opt(),
            block("longitude_latitude_member", &[a("longitude", Dbl), a("latitude", Dbl), a("member", Str)]).multi(),
        ])),
    ("geodist", m("Returns the distance between two members of a geospatial index", "3.2.0", "geo").cx("O(log(N))")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member1", Str),
            a("member2", Str),
            oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")]).opt(),
        ])),
    ("geohash", m("Returns members of a geospatial index as standard geohash strings", "3.2.0", "geo").cx("O(log(N)) for each member requested, where N is the number of elements in the sorted set.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str).multi(),
        ])),
    ("geopos", m("Returns longitude and latitude of members of a geospatial index", "3.2.0", "geo").cx("O(N) where N is the number of members requested.")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str).multi(),
        ])),
    ("georadius", m("Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", "3.2.0", "geo").cx("O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0)), ks(OW | UPDATE, Keyword("STORE", 6), Range(0, 1, 0)), ks(OW | UPDATE, Keyword("STOREDIST", 6), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added the `ANY` option for `COUNT`."), ("7.0.0", "Added support for uppercase unit names.")])
        .args(&[
            a("key", Key).ks(0),
            a("longitude", Dbl),
            a("latitude", Dbl),
            a("radius", Dbl),
            oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")]),
            t("withcoord", "WITHCOORD").opt(),
            t("withdist", "WITHDIST").opt(),
            t("withhash", "WITHHASH").opt(),
            block("count", &[a("count", Int).tok("COUNT"), t("any", "ANY").since("6.2.0").opt()]).opt(),
            oneof("order", &[t("asc", "ASC"), t("desc", "DESC")]).opt(),
            a("key", Key).tok("STORE").ks(1).opt(),
            a("key", Key).tok("STOREDIST").ks(2).opt(),
        ])),
    ("georadius_ro", m("A read-only variant for GEORADIUS", "3.2.10", "geo").cx("O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`GEOSEARCH` with the `BYRADIUS` argument")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("6.2.0", "Added the `ANY` option for `COUNT`.")])
        .args(&[
            a("key", Key).ks(0),
            a("longitude", Dbl),
            a("latitude", Dbl),
            a("radius", Dbl),
            oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")]),
            t("withcoord", "WITHCOORD").opt(),
            t("withdist", "WITHDIST").opt(),
            t("withhash", "WITHHASH").opt(),
            block("count", &[a("count", Int).tok("COUNT"), t("any", "ANY").since("6.2.0").opt()]).opt(),
            oneof("order", &[t("asc", "ASC"), t("desc", "DESC")]).opt(),
        ])),
    ("georadiusbymember", m("Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", "3.2.0", "geo").cx("O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0)), ks(OW | UPDATE, Keyword("STORE", 5), Range(0, 1, 0)), ks(OW | UPDATE, Keyword("STOREDIST", 5), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added support for uppercase unit names.")])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str),
            a("radius", Dbl),
            oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")]),
            t("withcoord", "WITHCOORD").opt(),
            t("withdist", "WITHDIST").opt(),
            t("withhash", "WITHHASH").opt(),
            block("count", &[a("count", Int).tok("COUNT"), t("any", "ANY").opt()]).opt(),
            oneof("order", &[t("asc", "ASC"), t("desc", "DESC")]).opt(),
            a("key", Key).tok("STORE").ks(1).opt(),
            a("key", Key).tok("STOREDIST").ks(2).opt(),
        ])),
    ("georadiusbymember_ro", m("A read-only variant for GEORADIUSBYMEMBER", "3.2.10", "geo").cx("O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.").doc_flags(DEPRECATED).deprecated("6.2.0").replaced_by("`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .args(&[
            a("key", Key).ks(0),
            a("member", Str),
            a("radius", Dbl),
            oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")]),
            t("withcoord", "WITHCOORD").opt(),
            t("withdist", "WITHDIST").opt(),
            t("withhash", "WITHHASH").opt(),
            block("count", &[a("count", Int).tok("COUNT"), t("any", "ANY").opt()]).opt(),
            oneof("order", &[t("asc", "ASC"), t("desc", "DESC")]).opt(),
        ])),
    ("geosearch", m("Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", "6.2.0", "geo").cx("O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape")
        .keys(&[ks(RO | ACCESS, Index(1), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added support for uppercase unit names.")])
        .args(&[
            a("key", Key).ks(0),
            oneof("from", &[a("member", Str).tok("FROMMEMBER"), block("longitude_latitude", &[a("longitude", Dbl), a("latitude", Dbl)]).tok("FROMLONLAT")]),
            oneof("by", &[block("circle", &[a("radius", Dbl).tok("BYRADIUS"), oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")])]), block("box", &[a("width", Dbl).tok("BYBOX"), a("height", Dbl), oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")])])]),
            oneof("order", &[t("asc", "ASC"), t("desc", "DESC")]).opt(),
            block("count", &[a("count", Int).tok("COUNT"), t("any", "ANY").opt()]).opt(),
            t("withcoord", "WITHCOORD").opt(),
            t("withdist", "WITHDIST").opt(),
            t("withhash", "WITHHASH").opt(),
        ])),
    ("geosearchstore", m("Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", "6.2.0", "geo").cx("O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape")
        .keys(&[ks(OW | UPDATE, Index(1), Range(0, 1, 0)), ks(RO | ACCESS, Index(2), Range(0, 1, 0))])
        .hist(&[("7.0.0", "Added support for uppercase unit names.")])
        .args(&[
            a("destination", Key).ks(0),
            a("source", Key).ks(1),
            oneof("from", &[a("member", Str).tok("FROMMEMBER"), block("longitude_latitude", &[a("longitude", Dbl), a("latitude", Dbl)]).tok("FROMLONLAT")]),
            oneof("by", &[block("circle", &[a("radius", Dbl).tok("BYRADIUS"), oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")])]), block("box", &[a("width", Dbl).tok("BYBOX"), a("height", Dbl), oneof("unit", &[t("m", "M"), t("km", "KM"), t("ft", "FT"), t("mi", "MI")])])]),
            oneof("order", &[t("asc", "ASC"), t("desc", "DESC")]).opt(),
            block("count", &[a("count", Int).tok("COUNT"), t("any", "ANY").opt()]).opt(),
            t("storedist", "STOREDIST").opt(),
        ])),
];
