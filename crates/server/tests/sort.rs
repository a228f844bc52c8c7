//! Black-box tests of SORT and SORT_RO over real TCP: every check of Redis
//! 7.0.15's `unit/sort.tcl`, plus the rules found by running redis-server
//! 7.0.15 side by side (weights read by strtod, ALPHA as C strings except
//! with STORE, ties, repeated options, WATCH, the reply bytes in RESP2 and
//! RESP3).
mod common;
use common::*;

const NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";
const SYNTAX: &str = "ERR syntax error";

fn strs(items: &[&str]) -> Frame {
    arr(items.iter().map(|s| bulk(s)).collect())
}

fn lcg(s: &mut u64) -> u64 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *s >> 33
}

/// Fill `tosort` with 0..num through `cmd` (LPUSH or SADD), each with a
/// distinct weight in `weight_<i>` and `wobj_<i>`'s `weight` field (half
/// integers, half fractions); returns the elements in weight order.
fn random_dataset(c: &mut Client, num: usize, cmd: &str, seed: u64) -> Vec<String> {
    let mut rng = seed;
    c.cmd(&["DEL", "tosort"]);
    let mut seen = std::collections::HashSet::new();
    let mut rows: Vec<(usize, f64, String)> = Vec::new();
    for i in 0..num {
        let text = loop {
            let t = if lcg(&mut rng).is_multiple_of(2) {
                (lcg(&mut rng) % 1_000_000).to_string()
            } else {
                format!("0.{:09}", lcg(&mut rng) % 1_000_000_000)
            };
            if seen.insert(t.clone()) {
                break t;
            }
        };
        let i_s = i.to_string();
        c.cmd(&[cmd, "tosort", &i_s]);
        c.cmd(&["SET", &format!("weight_{i}"), &text]);
        c.cmd(&["HSET", &format!("wobj_{i}"), "weight", &text]);
        rows.push((i, text.parse().unwrap(), text));
    }
    rows.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap());
    rows.into_iter().map(|r| r.0.to_string()).collect()
}

fn strings(f: Frame) -> Vec<String> {
    match f {
        Frame::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Frame::Bulk(b) => String::from_utf8(b).unwrap(),
                other => panic!("not a bulk string: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

#[test]
fn by_key_and_hash_field_over_every_encoding() {
    let srv = TestServer::start(&["--list-max-listpack-size", "32", "--set-max-intset-entries", "32"]);
    let mut c = srv.client();
    let cases =
        [(16, "LPUSH", "quicklist"), (1000, "LPUSH", "quicklist"), (16, "SADD", "intset"), (1000, "SADD", "hashtable")];
    for (n, (num, cmd, enc)) in cases.into_iter().enumerate() {
        let want = random_dataset(&mut c, num, cmd, n as u64 + 1);
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "tosort"]), bulk(enc));
        assert_eq!(strings(c.cmd(&["SORT", "tosort", "BY", "weight_*"])), want, "{cmd} {num}");
        assert_eq!(strings(c.cmd(&["SORT", "tosort", "BY", "weight_*", "LIMIT", "5", "5"])), want[5..10]);
        assert_eq!(strings(c.cmd(&["SORT", "tosort", "BY", "wobj_*->weight"])), want);
        let mut rev = want.clone();
        rev.reverse();
        assert_eq!(strings(c.cmd(&["SORT_RO", "tosort", "BY", "wobj_*->weight", "DESC"])), rev);
    }
}

#[test]
fn get_patterns_and_store() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let want = random_dataset(&mut c, 16, "LPUSH", 99);
    let mut numeric: Vec<String> = want.clone();
    numeric.sort_by_key(|s| s.parse::<u32>().unwrap());
    assert_eq!(strings(c.cmd(&["SORT", "tosort", "GET", "#"])), numeric);
    numeric.reverse();
    assert_eq!(strings(c.cmd(&["SORT", "tosort", "DESC"])), numeric);

    // A pattern without `*` names nothing.
    c.cmd(&["DEL", "foo"]);
    assert_eq!(c.cmd(&["SORT", "tosort", "GET", "foo"]), arr(vec![Frame::Null; 16]));

    let l1 = strings(c.cmd(&["SORT", "tosort", "GET", "#", "GET", "weight_*"]));
    let l2 = strings(c.cmd(&["SORT", "tosort", "GET", "#", "GET", "wobj_*->weight"]));
    assert_eq!(l1.len(), 32);
    assert_eq!(l1, l2);
    for pair in l1.chunks(2) {
        assert_eq!(c.cmd(&["GET", &format!("weight_{}", pair[0])]), bulk(&pair[1]));
    }

    for by in ["weight_*", "wobj_*->weight"] {
        assert_eq!(c.cmd(&["SORT", "tosort", "BY", by, "STORE", "sort-res"]), int(16));
        assert_eq!(strings(c.cmd(&["LRANGE", "sort-res", "0", "-1"])), want);
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "sort-res"]), bulk("quicklist"));
    }
}

#[test]
fn get_values_missing_and_of_other_types() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "l", "1", "2", "3"]);
    c.cmd(&["MSET", "s_1", "one", "s_2", "two"]);
    c.cmd(&["HSET", "h_1", "f", "x"]);
    c.cmd(&["HSET", "s_3", "f", "hash, not a string"]);
    c.cmd(&["SET", "h_2", "a string, not a hash"]);
    let got = c.raw_cmd(&["SORT", "l", "GET", "s_*", "GET", "h_*->f", "GET", "#"]);
    assert_eq!(
        got,
        b"*9\r\n$3\r\none\r\n$1\r\nx\r\n$1\r\n1\r\n$3\r\ntwo\r\n$-1\r\n$1\r\n2\r\n$-1\r\n$-1\r\n$1\r\n3\r\n"
    );
    assert_eq!(c.cmd(&["SORT", "l", "GET", "h_*->f", "STORE", "dst"]), int(3));
    assert_eq!(c.cmd(&["LRANGE", "dst", "0", "-1"]), strs(&["x", "", ""]));
    // A pattern ending in "->" is a key name, not a field.
    c.cmd(&["DEL", "mylist"]);
    c.cmd(&["LPUSH", "mylist", "a"]);
    c.cmd(&["SET", "x:a->", "100"]);
    assert_eq!(c.cmd(&["SORT", "mylist", "BY", "num", "GET", "x:*->"]), strs(&["100"]));
    assert_eq!(c.cmd(&["SORT_RO", "mylist", "BY", "nosort", "GET", "x:*->"]), strs(&["100"]));
    // Only the first `*` is replaced; later ones are literal.
    c.cmd(&["SET", "a-*", "star"]);
    assert_eq!(c.cmd(&["SORT", "mylist", "GET", "*-*", "ALPHA"]), strs(&["star"]));

    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.raw_cmd(&["SORT", "l", "GET", "s_*", "LIMIT", "1", "2"]), b"*2\r\n$3\r\ntwo\r\n_\r\n");
}

#[test]
fn key_positions() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "SORT", "abc", "STORE", "def"]), strs(&["abc", "def"]));
    assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "SORT_RO", "abc"]), strs(&["abc"]));
    let multi = ["COMMAND", "GETKEYS", "SORT", "abc", "store", "invalid", "store", "stillbad", "store", "def"];
    assert_eq!(c.cmd(&multi), strs(&["abc", "def"]));
    // Option arguments are skipped, so these STOREs are not seen.
    assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "SORT", "abc", "LIMIT", "1", "STORE", "def"]), strs(&["abc"]));
    assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "SORT", "abc", "GET", "STORE", "x"]), strs(&["abc"]));
    assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "SORT", "abc", "STORE"]), strs(&["abc"]));
    let info = c.raw_cmd(&["COMMAND", "INFO", "sort", "sort_ro"]);
    let text = String::from_utf8(info).unwrap();
    assert!(text.contains("$4\r\nsort\r\n:-2\r\n*3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n:1\r\n:1\r\n:1\r\n"));
    assert!(text.contains("$7\r\nsort_ro\r\n:-2\r\n*2\r\n+readonly\r\n+movablekeys\r\n:1\r\n:1\r\n:1\r\n"));
    assert!(text.contains("*6\r\n+@read\r\n+@set\r\n+@sortedset\r\n+@list\r\n+@slow\r\n+@dangerous\r\n"));
}

#[test]
fn alpha_numbers_and_sorted_sets() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for v in ["2", "1", "3", "10"] {
        c.cmd(&["LPUSH", "mylist", v]);
    }
    assert_eq!(c.cmd(&["SORT", "mylist", "ALPHA"]), strs(&["1", "10", "2", "3"]));

    for (s, m) in [("1", "a"), ("5", "b"), ("2", "c"), ("10", "d"), ("3", "e")] {
        c.cmd(&["ZADD", "zset", s, m]);
    }
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "zset"]), bulk("listpack"));
    assert_eq!(c.cmd(&["SORT", "zset", "ALPHA", "DESC"]), strs(&["e", "d", "c", "b", "a"]));
    // SORT converts a small sorted set to its skiplist form, as Redis does.
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "zset"]), bulk("skiplist"));
    assert_eq!(c.cmd(&["MULTI"]), ok());
    c.cmd(&["SORT", "zset", "BY", "nosort", "ASC"]);
    c.cmd(&["SORT", "zset", "BY", "nosort", "DESC"]);
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![strs(&["a", "c", "e", "b", "d"]), strs(&["d", "b", "e", "c", "a"])]));
    let limits: &[(&[&str], &[&str])] = &[
        (&["asc", "limit", "0", "1"], &["a"]),
        (&["desc", "limit", "0", "1"], &["d"]),
        (&["asc", "limit", "0", "2"], &["a", "c"]),
        (&["desc", "limit", "0", "2"], &["d", "b"]),
        (&["desc", "limit", "1", "2"], &["b", "e"]),
        (&["limit", "5", "10"], &[]),
        (&["limit", "-10", "100"], &["a", "c", "e", "b", "d"]),
    ];
    for (opts, want) in limits {
        let mut cmd = vec!["SORT", "zset", "by", "nosort"];
        cmd.extend_from_slice(opts);
        assert_eq!(c.cmd(&cmd), strs(want), "{opts:?}");
    }
    let script =
        "return {redis.call('sort',KEYS[1],'by','nosort','asc'), redis.call('sort',KEYS[1],'by','nosort','desc')}";
    assert_eq!(
        c.cmd(&["EVAL", script, "1", "zset"]),
        arr(vec![strs(&["a", "c", "e", "b", "d"]), strs(&["d", "b", "e", "c", "a"])])
    );

    c.cmd(&["FLUSHDB"]);
    let floats = ["1.1", "5.10", "3.10", "7.44", "2.1", "5.75", "6.12", "0.25", "1.15"];
    for f in floats {
        c.cmd(&["LPUSH", "mylist", f]);
    }
    let mut sorted = floats.to_vec();
    sorted.sort_by(|a, b| a.parse::<f64>().unwrap().partial_cmp(&b.parse::<f64>().unwrap()).unwrap());
    assert_eq!(c.cmd(&["SORT", "mylist"]), strs(&sorted));
}

#[test]
fn store_results_and_empty_results() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SORT", "foo{t}", "STORE", "bar{t}"]), int(0));
    c.cmd(&["LPUSH", "foo{t}", "bar"]);
    assert_eq!(c.cmd(&["SORT", "foo{t}", "ALPHA", "LIMIT", "10", "10", "STORE", "zap{t}"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "zap{t}"]), int(0));
    assert_eq!(c.cmd(&["SORT", "emptylist{t}", "STORE", "foo{t}"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "foo{t}"]), int(0));

    // STORE replaces a key of any type and drops its TTL.
    c.cmd(&["RPUSH", "src", "3", "1", "2"]);
    c.cmd(&["SET", "dst", "x", "EX", "1000"]);
    assert_eq!(c.cmd(&["SORT", "src", "STORE", "dst"]), int(3));
    assert_eq!(c.cmd(&["TTL", "dst"]), int(-1));
    assert_eq!(c.cmd(&["LRANGE", "dst", "0", "-1"]), strs(&["1", "2", "3"]));
    // The last STORE wins.
    assert_eq!(c.cmd(&["SORT", "src", "STORE", "a", "STORE", "b", "DESC"]), int(3));
    assert_eq!(c.cmd(&["EXISTS", "a"]), int(0));
    assert_eq!(c.cmd(&["LRANGE", "b", "0", "-1"]), strs(&["3", "2", "1"]));
    // With GET, the count is elements times patterns.
    assert_eq!(c.cmd(&["SORT", "src", "GET", "#", "GET", "nothing", "STORE", "b"]), int(6));
    assert_eq!(c.cmd(&["LRANGE", "b", "0", "-1"]), strs(&["1", "", "2", "", "3", ""]));

    c.cmd(&["SADD", "myset", "a", "b", "c", "d", "e", "f", "g", "h", "i", "l", "m", "n", "o", "p", "q", "r"]);
    c.cmd(&["SADD", "myset", "s", "t", "u", "v", "z", "aa", "aaa", "azz"]);
    assert_eq!(c.cmd(&["SORT", "myset", "alpha", "by", "_", "store", "mylist"]), int(24));
    let want = "a aa aaa azz b c d e f g h i l m n o p q r s t u v z";
    assert_eq!(c.cmd(&["LRANGE", "mylist", "0", "-1"]), strs(&want.split(' ').collect::<Vec<_>>()));
    // Without STORE (and outside scripts) a set keeps its stored order;
    // inside a script it is sorted like with STORE.
    let script = "return redis.call('sort', KEYS[1], 'by', 'nosort')";
    assert_eq!(c.cmd(&["EVAL", script, "1", "myset"]), strs(&want.split(' ').collect::<Vec<_>>()));
    assert_eq!(c.cmd(&["SADD", "ints", "5", "3", "9", "1"]), int(4));
    assert_eq!(c.cmd(&["SORT", "ints", "BY", "nosort", "DESC", "LIMIT", "1", "2"]), strs(&["3", "5"]));
}

#[test]
fn lists_by_constant_keep_their_order() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["LPUSH", "testa", "2", "1", "4", "3", "5"]);
    assert_eq!(c.cmd(&["SORT", "testa", "by", "nosort"]), strs(&["5", "3", "4", "1", "2"]));
    assert_eq!(c.cmd(&["SORT", "testa", "by", "nosort", "DESC"]), strs(&["2", "1", "4", "3", "5"]));
    assert_eq!(c.cmd(&["SORT", "testa", "by", "nosort", "DESC", "LIMIT", "1", "3"]), strs(&["1", "4", "3"]));
    assert_eq!(c.cmd(&["SORT", "testa", "by", "nosort", "store", "testb"]), int(5));
    assert_eq!(c.cmd(&["LRANGE", "testb", "0", "-1"]), strs(&["5", "3", "4", "1", "2"]));
    assert_eq!(c.cmd(&["SORT", "testa", "by", "nosort", "limit", "0", "3", "store", "testb"]), int(3));
    assert_eq!(c.cmd(&["LRANGE", "testb", "0", "-1"]), strs(&["5", "3", "4"]));
    // A constant BY anywhere turns sorting off, even before a real pattern.
    c.cmd(&["MSET", "w_5", "1", "w_1", "2"]);
    assert_eq!(c.cmd(&["SORT", "testa", "BY", "nosort", "BY", "w_*"]), strs(&["5", "3", "4", "1", "2"]));
    // A huge count is clamped, not overflowed.
    c.cmd(&["LPUSH", "L", "2", "1", "0"]);
    for count in ["9223372036854775807", "2147483647"] {
        assert_eq!(c.cmd(&["SORT_RO", "L", "by", "a", "limit", "2", count]), strs(&["2"]));
    }
    assert_eq!(c.cmd(&["SORT", "L", "LIMIT", "-9223372036854775808", "-9223372036854775808"]), strs(&["0", "1", "2"]));
    assert_eq!(c.cmd(&["SORT", "L", "LIMIT", "1", "0"]), arr(vec![]));
}

#[test]
fn numeric_weights_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SADD", "myset", "1", "2", "3", "4", "not-a-double"]);
    assert_eq!(c.cmd(&["SORT", "myset"]), err(NOT_DOUBLE));
    c.cmd(&["DEL", "myset"]);
    c.cmd(&["SADD", "myset", "1", "2", "3", "4"]);
    c.cmd(&["MSET", "score:1", "10", "score:2", "20", "score:3", "30", "score:4", "not-a-double"]);
    assert_eq!(c.cmd(&["SORT", "myset", "by", "score:*"]), err(NOT_DOUBLE));
    assert_eq!(c.cmd(&["SORT", "myset", "by", "score:*", "STORE", "dst"]), err(NOT_DOUBLE));
    assert_eq!(c.cmd(&["EXISTS", "dst"]), int(0));

    // Equal weights fall back to comparing the elements' bytes.
    let members = "a b c d e f g h i l m n o p q r s t u v z aa aaa azz";
    let mut sadd = vec!["SADD", "letters"];
    sadd.extend(members.split(' '));
    c.cmd(&sadd);
    let mut sorted: Vec<&str> = members.split(' ').collect();
    sorted.sort();
    assert_eq!(c.cmd(&["SORT", "letters", "by", "score:*"]), strs(&sorted));

    // Weights are read by strtod up to the first NUL: leading spaces, hex,
    // infinities and empty text (0) are numbers; trailing text, NaN,
    // overflow and inexact underflow are not.
    c.cmd(&["RPUSH", "l", "a", "b", "c"]);
    c.cmd(&["MSET", "w_b", "2", "w_c", "1"]);
    for (w, want) in [(" 5", "cba"), ("", "acb"), ("0x10", "cba"), ("-inf", "acb"), ("+3", "cba"), ("0x1p-1074", "acb")]
    {
        c.cmd(&["SET", "w_a", w]);
        let got: String = strings(c.cmd(&["SORT", "l", "BY", "w_*"])).concat();
        assert_eq!(got, want, "weight {w:?}");
    }
    c.raw_cmd(&[&b"SET"[..], b"w_a", b"7\x00junk"]);
    assert_eq!(c.cmd(&["SORT", "l", "BY", "w_*"]), strs(&["c", "b", "a"]));
    for w in ["5 ", "   ", "nan", "1e400", "1e-400", "1e-310", "abc"] {
        c.cmd(&["SET", "w_a", w]);
        assert_eq!(c.cmd(&["SORT", "l", "BY", "w_*"]), err(NOT_DOUBLE), "weight {w:?}");
    }
    // ALPHA BY: missing values first, then byte order.
    c.cmd(&["MSET", "t_a", "x", "t_b", "B"]);
    assert_eq!(c.cmd(&["SORT", "l", "BY", "t_*", "ALPHA"]), strs(&["c", "b", "a"]));
    assert_eq!(c.cmd(&["SORT", "l", "BY", "t_*", "ALPHA", "DESC"]), strs(&["a", "b", "c"]));
}

#[test]
fn alpha_compares_c_strings_unless_storing() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let elems: [&[u8]; 8] = [b"z", b"E", b"\xc3\xa9", b"a\x00b", b"a\x00a", b"a", b"e", b"B"];
    let mut push: Vec<&[u8]> = vec![b"RPUSH", b"al"];
    push.extend(elems);
    c.raw_cmd(&push);
    // Up to a NUL byte "a\0b", "a\0a" and "a" are equal: they keep their order.
    let want = b"*8\r\n$1\r\nB\r\n$1\r\nE\r\n$3\r\na\x00b\r\n$3\r\na\x00a\r\n$1\r\na\r\n$1\r\ne\r\n$1\r\nz\r\n$2\r\n\xc3\xa9\r\n";
    assert_eq!(c.raw_cmd(&["SORT", "al", "ALPHA"]), want);
    let desc = b"*8\r\n$2\r\n\xc3\xa9\r\n$1\r\nz\r\n$1\r\ne\r\n$3\r\na\x00b\r\n$3\r\na\x00a\r\n$1\r\na\r\n$1\r\nE\r\n$1\r\nB\r\n";
    assert_eq!(c.raw_cmd(&["SORT", "al", "ALPHA", "DESC"]), desc);
    assert_eq!(c.cmd(&["SORT", "al", "ALPHA", "STORE", "dst"]), int(8));
    let stored = b"*8\r\n$1\r\nB\r\n$1\r\nE\r\n$1\r\na\r\n$3\r\na\x00a\r\n$3\r\na\x00b\r\n$1\r\ne\r\n$1\r\nz\r\n$2\r\n\xc3\xa9\r\n";
    assert_eq!(c.raw_cmd(&["LRANGE", "dst", "0", "-1"]), stored);
}

#[test]
fn syntax_and_type_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "l", "1"]);
    c.cmd(&["SET", "str", "x"]);
    let cases: &[(&[&str], &str)] = &[
        (&["SORT_RO", "foolist", "STORE", "bar"], SYNTAX),
        (&["SORT", "l", "LIMIT", "1"], SYNTAX),
        (&["SORT", "l", "BY"], SYNTAX),
        (&["SORT", "l", "GET"], SYNTAX),
        (&["SORT", "l", "STORE"], SYNTAX),
        (&["SORT", "l", "NOPE"], SYNTAX),
        (&["SORT", "l", "LIMIT", "x", "1"], "ERR value is not an integer or out of range"),
        (&["SORT", "l", "LIMIT", "0", "1.5"], "ERR value is not an integer or out of range"),
        (&["SORT", "str"], "WRONGTYPE Operation against a key holding the wrong kind of value"),
        (&["SORT_RO", "str", "BY", "nosort"], "WRONGTYPE Operation against a key holding the wrong kind of value"),
        (&["SORT"], "ERR wrong number of arguments for 'sort' command"),
        (&["SORT_RO"], "ERR wrong number of arguments for 'sort_ro' command"),
    ];
    for (cmd, e) in cases {
        assert_eq!(c.cmd(cmd), err(e), "{cmd:?}");
    }
    // Options are parsed before the key is read.
    assert_eq!(c.cmd(&["SORT", "str", "NOPE"]), err(SYNTAX));
}

#[test]
fn store_signals_only_the_destination() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let mut other = srv.client();
    c.cmd(&["RPUSH", "src", "2", "1"]);
    // The source is only read: a WATCH on it survives SORT ... STORE.
    c.cmd(&["WATCH", "src"]);
    assert_eq!(other.cmd(&["SORT", "src", "STORE", "dst"]), int(2));
    c.cmd(&["MULTI"]);
    c.cmd(&["PING"]);
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![simple("PONG")]));
    // The destination is modified, also when an empty result deletes it.
    for cmd in [&["SORT", "src", "DESC", "STORE", "dst"][..], &["SORT", "nokey", "STORE", "dst"]] {
        c.cmd(&["WATCH", "dst"]);
        other.cmd(cmd);
        c.cmd(&["MULTI"]);
        c.cmd(&["PING"]);
        assert_eq!(c.cmd(&["EXEC"]), Frame::Null, "{cmd:?}");
    }
    // Nothing to delete: nothing modified.
    c.cmd(&["WATCH", "dst"]);
    assert_eq!(other.cmd(&["SORT", "nokey", "STORE", "dst"]), int(0));
    c.cmd(&["MULTI"]);
    c.cmd(&["PING"]);
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![simple("PONG")]));
}
