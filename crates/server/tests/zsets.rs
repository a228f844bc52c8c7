//! Black-box tests of the sorted-set commands over real TCP. Expected replies
//! were checked against redis-server 7.0.15 (RESP2 and RESP3 byte shapes),
//! plus encodings at the listpack limits and rank operations at 200k members
//! against an in-test model.
mod common;
use common::*;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const SYNTAX: &str = "ERR syntax error";

fn strs(items: &[&str]) -> Frame {
    arr(items.iter().map(|s| bulk(s)).collect())
}

#[test]
fn zadd_options_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["ZADD", "z", "1", "a", "2", "b"]), int(2));
    assert_eq!(c.cmd(&["ZADD", "z", "NX", "5", "a", "3", "c"]), int(1));
    assert_eq!(c.cmd(&["ZADD", "z", "XX", "CH", "5", "a", "9", "new"]), int(1));
    assert_eq!(c.cmd(&["ZSCORE", "z", "new"]), Frame::Null);
    assert_eq!(c.cmd(&["ZADD", "z", "GT", "CH", "1", "a", "6", "b"]), int(1));
    assert_eq!(c.cmd(&["ZADD", "z", "LT", "CH", "7", "a"]), int(0));
    assert_eq!(c.cmd(&["ZADD", "z", "INCR", "1.5", "a"]), bulk("6.5"));
    assert_eq!(c.cmd(&["ZADD", "z", "NX", "INCR", "1", "a"]), Frame::Null);
    assert_eq!(c.cmd(&["ZADD", "nokey", "XX", "1", "a"]), int(0));
    assert_eq!(c.cmd(&["ZADD", "nokey", "XX", "INCR", "1", "a"]), Frame::Null);
    assert_eq!(c.cmd(&["EXISTS", "nokey"]), int(0));
    let cases: &[(&[&str], &str)] = &[
        (&["ZADD", "z", "NX", "XX", "1", "a"], "ERR XX and NX options at the same time are not compatible"),
        (&["ZADD", "z", "GT", "LT", "1", "a"], "ERR GT, LT, and/or NX options at the same time are not compatible"),
        (&["ZADD", "z", "GT", "NX", "1", "a"], "ERR GT, LT, and/or NX options at the same time are not compatible"),
        (&["ZADD", "z", "INCR", "1", "a", "2", "b"], "ERR INCR option supports a single increment-element pair"),
        (&["ZADD", "z", "nan", "a"], "ERR value is not a valid float"),
        (&["ZADD", "z", "1", "a", "2"], SYNTAX),
        (&["ZADD", "z", "xx", "ch"], SYNTAX),
        (&["ZADD", "z", "xx"], "ERR wrong number of arguments for 'zadd' command"),
        (&["ZINCRBY", "z", "abc", "a"], "ERR value is not a valid float"),
    ];
    for (cmd, e) in cases {
        assert_eq!(c.cmd(cmd), err(e), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["ZADD", "inf", "INCR", "inf", "a"]), bulk("inf"));
    assert_eq!(c.cmd(&["ZADD", "inf", "INCR", "-inf", "a"]), err("ERR resulting score is not a number (NaN)"));
    assert_eq!(c.cmd(&["ZINCRBY", "inf", "-inf", "a"]), err("ERR resulting score is not a number (NaN)"));
    assert_eq!(c.cmd(&["SET", "s", "x"]), ok());
    assert_eq!(c.cmd(&["ZADD", "s", "1", "a"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["ZINCRBY", "z", "0.1", "c"]), bulk("3.1000000000000001"));
    assert_eq!(c.cmd(&["TYPE", "z"]), simple("zset"));
}

#[test]
fn reads_ranks_and_removal() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "d"]);
    assert_eq!(c.cmd(&["ZCARD", "z"]), int(4));
    assert_eq!(c.cmd(&["ZCARD", "none"]), int(0));
    assert_eq!(c.cmd(&["ZMSCORE", "z", "a", "x", "d"]), arr(vec![bulk("1"), Frame::Null, bulk("3")]));
    assert_eq!(c.cmd(&["ZMSCORE", "none", "a"]), arr(vec![Frame::Null]));
    assert_eq!(c.cmd(&["ZRANK", "z", "c"]), int(2));
    assert_eq!(c.cmd(&["ZREVRANK", "z", "c"]), int(1));
    assert_eq!(c.cmd(&["ZRANK", "z", "x"]), Frame::Null);
    assert_eq!(c.cmd(&["ZCOUNT", "z", "(1", "3"]), int(3));
    assert_eq!(c.cmd(&["ZCOUNT", "z", "-inf", "+inf"]), int(4));
    assert_eq!(c.cmd(&["ZCOUNT", "z", " 1", "2"]), int(2));
    assert_eq!(c.cmd(&["ZCOUNT", "z", "x", "2"]), err("ERR min or max is not a float"));
    assert_eq!(c.cmd(&["ZREM", "z", "a", "x", "b"]), int(2));
    assert_eq!(c.cmd(&["ZREMRANGEBYRANK", "z", "0", "0"]), int(1));
    assert_eq!(c.cmd(&["ZREMRANGEBYSCORE", "z", "3", "3"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "z"]), int(0));
    c.cmd(&["ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d"]);
    assert_eq!(c.cmd(&["ZLEXCOUNT", "l", "[b", "+"]), int(3));
    assert_eq!(c.cmd(&["ZLEXCOUNT", "l", "b", "+"]), err("ERR min or max not valid string range item"));
    assert_eq!(c.cmd(&["ZRANGEBYLEX", "l", "(a", "[c"]), strs(&["b", "c"]));
    assert_eq!(c.cmd(&["ZREVRANGEBYLEX", "l", "+", "-", "LIMIT", "1", "2"]), strs(&["c", "b"]));
    assert_eq!(c.cmd(&["ZREMRANGEBYLEX", "l", "-", "(c"]), int(2));
    assert_eq!(c.cmd(&["ZRANGE", "l", "0", "-1"]), strs(&["c", "d"]));
}

#[test]
fn zrange_forms_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"]);
    assert_eq!(c.cmd(&["ZRANGE", "z", "1", "2"]), strs(&["b", "c"]));
    assert_eq!(c.cmd(&["ZRANGE", "z", "0", "1", "REV", "WITHSCORES"]), strs(&["d", "4", "c", "3"]));
    assert_eq!(c.cmd(&["ZRANGE", "z", "(1", "3", "BYSCORE", "LIMIT", "1", "5"]), strs(&["c"]));
    assert_eq!(c.cmd(&["ZRANGE", "z", "+inf", "(1", "BYSCORE", "REV", "LIMIT", "0", "2"]), strs(&["d", "c"]));
    assert_eq!(c.cmd(&["ZRANGE", "z", "-", "+", "BYLEX", "LIMIT", "0", "-1"]), strs(&["a", "b", "c", "d"]));
    assert_eq!(c.cmd(&["ZREVRANGE", "z", "0", "0", "WITHSCORES"]), strs(&["d", "4"]));
    assert_eq!(c.cmd(&["ZRANGEBYSCORE", "z", "2", "3", "WITHSCORES"]), strs(&["b", "2", "c", "3"]));
    assert_eq!(c.cmd(&["ZREVRANGEBYSCORE", "z", "3", "-inf", "LIMIT", "1", "1"]), strs(&["b"]));
    assert_eq!(c.cmd(&["ZRANGEBYSCORE", "z", "2", "3", "LIMIT", "-1", "1"]), strs(&[]));
    assert_eq!(c.cmd(&["ZRANGE", "none", "0", "-1"]), strs(&[]));
    let cases: &[(&[&str], &str)] = &[
        (
            &["ZRANGE", "z", "0", "1", "LIMIT", "0", "1"],
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ),
        (
            &["ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"],
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ),
        (&["ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES"], SYNTAX),
        (&["ZREVRANGE", "z", "0", "-1", "REV"], SYNTAX),
        (&["ZRANGE", "z", "x", "1"], "ERR value is not an integer or out of range"),
        (&["ZRANGE", "z", "a", "1", "BYSCORE"], "ERR min or max is not a float"),
    ];
    for (cmd, e) in cases {
        assert_eq!(c.cmd(cmd), err(e), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["ZRANGESTORE", "d", "z", "1", "-1"]), int(3));
    assert_eq!(c.cmd(&["ZRANGE", "d", "0", "-1", "WITHSCORES"]), strs(&["b", "2", "c", "3", "d", "4"]));
    assert_eq!(c.cmd(&["ZRANGESTORE", "d", "z", "5", "9"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "d"]), int(0));
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.raw_cmd(&["ZRANGE", "z", "0", "0", "WITHSCORES"]), b"*1\r\n*2\r\n$1\r\na\r\n,1\r\n".to_vec());
    assert_eq!(c.raw_cmd(&["ZSCORE", "z", "b"]), b",2\r\n".to_vec());
}

#[test]
fn set_algebra() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["ZADD", "a", "1", "x", "2", "y", "3", "z"]);
    c.cmd(&["ZADD", "b", "10", "y", "20", "z", "30", "w"]);
    assert_eq!(c.cmd(&["ZUNION", "2", "a", "b", "WITHSCORES"]), strs(&["x", "1", "y", "12", "z", "23", "w", "30"]));
    assert_eq!(c.cmd(&["ZINTER", "2", "a", "b", "AGGREGATE", "MAX", "WITHSCORES"]), strs(&["y", "10", "z", "20"]));
    assert_eq!(c.cmd(&["ZINTER", "2", "a", "b", "WEIGHTS", "2", "0.5", "WITHSCORES"]), strs(&["y", "9", "z", "16"]));
    assert_eq!(c.cmd(&["ZDIFF", "2", "a", "b", "WITHSCORES"]), strs(&["x", "1"]));
    assert_eq!(c.cmd(&["ZUNIONSTORE", "d", "2", "a", "b", "AGGREGATE", "MIN"]), int(4));
    assert_eq!(c.cmd(&["ZRANGE", "d", "0", "-1", "WITHSCORES"]), strs(&["x", "1", "y", "2", "z", "3", "w", "30"]));
    assert_eq!(c.cmd(&["ZINTERSTORE", "d", "2", "a", "missing"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "d"]), int(0));
    assert_eq!(c.cmd(&["ZDIFFSTORE", "d", "1", "b"]), int(3));
    assert_eq!(c.cmd(&["ZINTERCARD", "2", "a", "b"]), int(2));
    assert_eq!(c.cmd(&["ZINTERCARD", "2", "a", "b", "LIMIT", "1"]), int(1));
    c.cmd(&["ZADD", "i", "inf", "x"]);
    c.cmd(&["ZADD", "j", "-inf", "x"]);
    assert_eq!(c.cmd(&["ZUNION", "2", "i", "j", "WITHSCORES"]), strs(&["x", "0"]));
    assert_eq!(c.cmd(&["ZUNION", "1", "i", "WEIGHTS", "0", "WITHSCORES"]), strs(&["x", "0"]));
    let cases: &[(&[&str], &str)] = &[
        (&["ZUNION", "0", "a"], "ERR at least 1 input key is needed for 'zunion' command"),
        (&["ZINTERCARD", "0", "a"], "ERR at least 1 input key is needed for 'zintercard' command"),
        (&["ZUNION", "2", "a"], SYNTAX),
        (&["ZUNION", "1", "a", "WEIGHTS", "x"], "ERR weight value is not a float"),
        (&["ZUNION", "1", "a", "AGGREGATE", "AVG"], SYNTAX),
        (&["ZDIFF", "1", "a", "WEIGHTS", "1"], SYNTAX),
        (&["ZUNIONSTORE", "d", "1", "a", "WITHSCORES"], SYNTAX),
        (&["ZINTERCARD", "1", "a", "LIMIT", "-1"], "ERR LIMIT can't be negative"),
        // Redis gives the same text for a count that is not an integer.
        (&["ZINTERCARD", "1", "a", "LIMIT", "a"], "ERR LIMIT can't be negative"),
        (&["ZINTERCARD", "1", "a", "LIMIT", "99999999999999999999"], "ERR LIMIT can't be negative"),
    ];
    for (cmd, e) in cases {
        assert_eq!(c.cmd(cmd), err(e), "{cmd:?}");
    }
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["ZUNION", "2", "a", "s"]), err(WRONGTYPE));
}

#[test]
fn pops_and_mpop() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"]);
    assert_eq!(c.cmd(&["ZPOPMIN", "z"]), strs(&["a", "1"]));
    assert_eq!(c.cmd(&["ZPOPMAX", "z", "2"]), strs(&["d", "4", "c", "3"]));
    assert_eq!(c.cmd(&["ZPOPMIN", "z", "0"]), strs(&[]));
    assert_eq!(c.cmd(&["ZPOPMIN", "z", "-1"]), err("ERR value is out of range, must be positive"));
    assert_eq!(c.cmd(&["ZPOPMIN", "none"]), strs(&[]));
    let pair = |m: &str, s: &str| arr(vec![bulk(m), bulk(s)]);
    assert_eq!(
        c.cmd(&["ZMPOP", "2", "none", "z", "MIN", "COUNT", "5"]),
        arr(vec![bulk("z"), arr(vec![pair("b", "2")])])
    );
    assert_eq!(c.cmd(&["EXISTS", "z"]), int(0));
    assert_eq!(c.cmd(&["ZMPOP", "1", "z", "MAX"]), Frame::Null);
    assert_eq!(c.cmd(&["ZMPOP", "0", "z", "MAX"]), err("ERR numkeys should be greater than 0"));
    assert_eq!(c.cmd(&["ZMPOP", "1", "z", "MAX", "COUNT", "0"]), err("ERR count should be greater than 0"));
    assert_eq!(c.cmd(&["ZMPOP", "1", "z", "MID"]), err(SYNTAX));
    c.cmd(&["ZADD", "z", "1", "a", "2", "b"]);
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.raw_cmd(&["ZPOPMIN", "z"]), b"*2\r\n$1\r\na\r\n,1\r\n".to_vec());
    assert_eq!(c.raw_cmd(&["ZPOPMIN", "z", "1"]), b"*1\r\n*2\r\n$1\r\nb\r\n,2\r\n".to_vec());
}

#[test]
fn randmember_and_scan() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]);
    let Frame::Bulk(m) = c.cmd(&["ZRANDMEMBER", "z"]) else { panic!("bulk expected") };
    assert!([&b"a"[..], b"b", b"c"].contains(&&m[..]));
    let Frame::Array(v) = c.cmd(&["ZRANDMEMBER", "z", "10"]) else { panic!() };
    assert_eq!(v.len(), 3);
    let Frame::Array(v) = c.cmd(&["ZRANDMEMBER", "z", "-7", "WITHSCORES"]) else { panic!() };
    assert_eq!(v.len(), 14);
    assert_eq!(c.cmd(&["ZRANDMEMBER", "z", "0"]), strs(&[]));
    assert_eq!(c.cmd(&["ZRANDMEMBER", "none"]), Frame::Null);
    assert_eq!(c.cmd(&["ZRANDMEMBER", "z", "1", "foo"]), err(SYNTAX));
    assert_eq!(c.cmd(&["ZSCAN", "z", "0", "MATCH", "[ab]"]), arr(vec![bulk("0"), strs(&["a", "1", "b", "2"])]));
    assert_eq!(c.cmd(&["ZSCAN", "z", "x"]), err("ERR invalid cursor"));
    // Large sets: the cursor walks every member exactly once.
    let mut args = vec!["ZADD".to_string(), "big".into()];
    for i in 0..500 {
        args.push(i.to_string());
        args.push(format!("m{i}"));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.cmd(&refs);
    let (mut cursor, mut seen) = ("0".to_string(), 0);
    loop {
        let Frame::Array(v) = c.cmd(&["ZSCAN", "big", &cursor, "COUNT", "77"]) else { panic!() };
        let (Frame::Bulk(cur), Frame::Array(items)) = (&v[0], &v[1]) else { panic!() };
        seen += items.len() / 2;
        cursor = String::from_utf8(cur.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen, 500);
    // Deleting what each call returned must not make the scan skip members.
    let (mut cursor, mut seen) = ("0".to_string(), std::collections::HashSet::new());
    loop {
        let Frame::Array(v) = c.cmd(&["ZSCAN", "big", &cursor, "COUNT", "50"]) else { panic!() };
        let (Frame::Bulk(cur), Frame::Array(items)) = (&v[0], &v[1]) else { panic!() };
        for pair in items.chunks(2) {
            let Frame::Bulk(m) = &pair[0] else { panic!() };
            c.cmd(&["ZREM", "big", std::str::from_utf8(m).unwrap()]);
            seen.insert(m.clone());
        }
        cursor = String::from_utf8(cur.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 500);
    assert_eq!(c.cmd(&["EXISTS", "big"]), int(0));
}

#[test]
fn encodings_follow_the_listpack_limits() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let mut args = vec!["ZADD".to_string(), "z".into()];
    for i in 0..128 {
        args.push(i.to_string());
        args.push(format!("m{i}"));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.cmd(&refs);
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "z"]), bulk("listpack"));
    c.cmd(&["ZADD", "z", "1", "one-more"]);
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
    c.cmd(&["ZREMRANGEBYRANK", "z", "0", "100"]);
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "z"]), bulk("skiplist"));
    // Store commands re-pick the encoding for their result.
    c.cmd(&["ZUNIONSTORE", "u", "1", "z"]);
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "u"]), bulk("listpack"));
    let long = "x".repeat(65);
    c.cmd(&["ZADD", "l", "1", &long]);
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "l"]), bulk("skiplist"));
    c.cmd(&["ZADD", "s", "1", &long[..64]]);
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "s"]), bulk("listpack"));
    // -0 survives only in the skiplist encoding, as in Redis.
    c.cmd(&["ZADD", "s", "-0", "neg"]);
    assert_eq!(c.cmd(&["ZSCORE", "s", "neg"]), bulk("0"));
    c.cmd(&["ZADD", "l", "-0", "neg"]);
    assert_eq!(c.cmd(&["ZSCORE", "l", "neg"]), bulk("-0"));
    c.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "0"]);
    c.cmd(&["ZADD", "zero", "1", "a"]);
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "zero"]), bulk("skiplist"));
}

/// Deterministic pseudo-random numbers for the scale test.
fn lcg(s: &mut u64) -> u64 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *s >> 33
}

#[test]
fn ranks_at_scale_match_a_model() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let n = 200_000u64;
    let mut seed = 7;
    let mut model: Vec<(u64, String)> = (0..n).map(|i| (lcg(&mut seed) % 50_000, format!("m{i}"))).collect();
    for chunk in model.chunks(5000) {
        let mut args = vec!["ZADD".to_string(), "big".into()];
        for (s, m) in chunk {
            args.push(s.to_string());
            args.push(m.clone());
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&refs), int(chunk.len() as i64));
    }
    model.sort();
    // Remove every third member from the front half.
    let victims: Vec<String> = model.iter().take(n as usize / 2).step_by(3).map(|x| x.1.clone()).collect();
    for chunk in victims.chunks(5000) {
        let mut args = vec!["ZREM", "big"];
        args.extend(chunk.iter().map(String::as_str));
        c.cmd(&args);
    }
    let gone: std::collections::HashSet<&String> = victims.iter().collect();
    model.retain(|x| !gone.contains(&x.1));
    assert_eq!(c.cmd(&["ZCARD", "big"]), int(model.len() as i64));
    for _ in 0..300 {
        let i = (lcg(&mut seed) % model.len() as u64) as usize;
        let (s, m) = &model[i];
        assert_eq!(c.cmd(&["ZRANK", "big", m]), int(i as i64));
        assert_eq!(c.cmd(&["ZREVRANK", "big", m]), int((model.len() - 1 - i) as i64));
        assert_eq!(c.cmd(&["ZRANGE", "big", &i.to_string(), &i.to_string(), "WITHSCORES"]), strs(&[m, &s.to_string()]));
        let below = model.partition_point(|x| x.0 < *s);
        assert_eq!(c.cmd(&["ZCOUNT", "big", "-inf", &format!("({s}")]), int(below as i64));
    }
    let last = model.len() - 1;
    assert_eq!(c.cmd(&["ZRANGE", "big", "-1", "-1"]), strs(&[&model[last].1]));
}
