//! Black-box tests of the set commands over real TCP; expected replies were
//! checked against Redis 7.0.15, including RESP3 shapes and the intset →
//! hashtable conversions (Redis 7.0 has no listpack sets).
mod common;
use common::*;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn enc(c: &mut Client, key: &str) -> Frame {
    c.cmd(&["OBJECT", "ENCODING", key])
}

fn bulks(items: &[&str]) -> Frame {
    arr(items.iter().map(|s| bulk(s)).collect())
}

/// The members of an array reply, sorted.
fn sorted(f: Frame) -> Vec<String> {
    let Frame::Array(v) = f else { panic!("not an array: {f:?}") };
    let mut out: Vec<String> = v
        .into_iter()
        .map(|x| match x {
            Frame::Bulk(b) => String::from_utf8(b).unwrap(),
            other => panic!("not a bulk: {other:?}"),
        })
        .collect();
    out.sort();
    out
}

#[test]
fn add_remove_and_membership() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SADD", "s", "3", "1", "2", "1"]), int(3));
    assert_eq!(c.cmd(&["SADD", "s", "2", "4"]), int(1));
    // Intsets iterate in ascending order.
    assert_eq!(c.cmd(&["SMEMBERS", "s"]), bulks(&["1", "2", "3", "4"]));
    assert_eq!(c.cmd(&["SCARD", "s"]), int(4));
    assert_eq!(c.cmd(&["SCARD", "nokey"]), int(0));
    assert_eq!(c.cmd(&["SISMEMBER", "s", "2"]), int(1));
    assert_eq!(c.cmd(&["SISMEMBER", "s", "02"]), int(0));
    assert_eq!(c.cmd(&["SISMEMBER", "nokey", "2"]), int(0));
    assert_eq!(c.cmd(&["SMISMEMBER", "s", "1", "x", "4"]), arr(vec![int(1), int(0), int(1)]));
    assert_eq!(c.cmd(&["SMISMEMBER", "nokey", "1"]), arr(vec![int(0)]));
    assert_eq!(c.cmd(&["SREM", "s", "1", "1", "x"]), int(1));
    assert_eq!(c.cmd(&["SREM", "nokey", "1"]), int(0));
    assert_eq!(c.cmd(&["SREM", "s", "2", "3", "4"]), int(3));
    assert_eq!(c.cmd(&["EXISTS", "s"]), int(0), "an emptied set is deleted");
    assert_eq!(c.cmd(&["SMEMBERS", "nokey"]), arr(vec![]));
    c.cmd(&["SADD", "s", "x"]);
    assert_eq!(c.cmd(&["TYPE", "s"]), simple("set"));
}

#[test]
fn errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "str", "v"]);
    c.cmd(&["SADD", "s", "a", "b"]);
    for cmd in [
        &["SADD", "str", "a"][..],
        &["SREM", "str", "a"],
        &["SMEMBERS", "str"],
        &["SISMEMBER", "str", "a"],
        &["SMISMEMBER", "str", "a"],
        &["SCARD", "str"],
        &["SPOP", "str"],
        &["SPOP", "str", "2"],
        &["SRANDMEMBER", "str"],
        &["SRANDMEMBER", "str", "2"],
        &["SMOVE", "str", "s", "a"],
        &["SMOVE", "s", "str", "a"],
        &["SINTER", "nokey", "str"],
        &["SINTERCARD", "2", "s", "str"],
        &["SINTERSTORE", "d", "s", "str"],
        &["SUNION", "s", "str"],
        &["SUNIONSTORE", "d", "s", "str"],
        &["SDIFF", "s", "str"],
        &["SDIFFSTORE", "d", "s", "str"],
        &["SSCAN", "str", "0"],
    ] {
        assert_eq!(c.cmd(cmd), err(WRONGTYPE), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["SMOVE", "nokey", "str", "a"]), int(0), "a missing source wins over WRONGTYPE");
    assert_eq!(c.cmd(&["SADD", "s"]), err("ERR wrong number of arguments for 'sadd' command"));
    assert_eq!(c.cmd(&["SPOP", "s", "-1"]), err("ERR value is out of range, must be positive"));
    assert_eq!(c.cmd(&["SPOP", "s", "x"]), err("ERR value is out of range, must be positive"));
    assert_eq!(c.cmd(&["SPOP", "s", "1", "2"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SRANDMEMBER", "s", "1", "2"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SRANDMEMBER", "s", "x"]), err("ERR value is not an integer or out of range"));
    assert_eq!(c.cmd(&["SINTERCARD", "0", "s"]), err("ERR numkeys should be greater than 0"));
    assert_eq!(c.cmd(&["SINTERCARD", "x", "s"]), err("ERR numkeys should be greater than 0"));
    assert_eq!(c.cmd(&["SINTERCARD", "3", "s"]), err("ERR Number of keys can't be greater than number of args"));
    assert_eq!(c.cmd(&["SINTERCARD", "1", "s", "LIMIT", "-1"]), err("ERR LIMIT can't be negative"));
    assert_eq!(c.cmd(&["SINTERCARD", "1", "s", "LIMIT", "x"]), err("ERR LIMIT can't be negative"));
    assert_eq!(c.cmd(&["SINTERCARD", "1", "s", "FOO"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SSCAN", "s", "x"]), err("ERR invalid cursor"));
    assert_eq!(c.cmd(&["SSCAN", "s", "0", "COUNT", "0"]), err("ERR syntax error"));
}

#[test]
fn pop_randmember_move() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SPOP", "nokey"]), Frame::Null);
    assert_eq!(c.cmd(&["SPOP", "nokey", "2"]), arr(vec![]));
    assert_eq!(c.cmd(&["SRANDMEMBER", "nokey"]), Frame::Null);
    assert_eq!(c.cmd(&["SRANDMEMBER", "nokey", "2"]), arr(vec![]));
    c.cmd(&["SADD", "s", "a", "b", "c"]);
    assert_eq!(sorted(c.cmd(&["SRANDMEMBER", "s", "10"])), ["a", "b", "c"]);
    assert_eq!(c.cmd(&["SRANDMEMBER", "s", "0"]), arr(vec![]));
    let picked = sorted(c.cmd(&["SRANDMEMBER", "s", "2"]));
    assert_eq!(picked.len(), 2);
    assert_ne!(picked[0], picked[1]);
    let Frame::Array(rep) = c.cmd(&["SRANDMEMBER", "s", "-7"]) else { panic!() };
    assert_eq!(rep.len(), 7);
    assert_eq!(c.cmd(&["SPOP", "s", "0"]), arr(vec![]));
    let popped = sorted(c.cmd(&["SPOP", "s", "2"]));
    assert_eq!(popped.len(), 2);
    assert_eq!(c.cmd(&["SCARD", "s"]), int(1));
    let Frame::Bulk(_) = c.cmd(&["SPOP", "s"]) else { panic!() };
    assert_eq!(c.cmd(&["EXISTS", "s"]), int(0));
    c.cmd(&["SADD", "s", "1", "2"]);
    assert_eq!(c.cmd(&["SPOP", "s", "5"]), bulks(&["1", "2"]));
    assert_eq!(c.cmd(&["EXISTS", "s"]), int(0));
    // SMOVE
    c.cmd(&["SADD", "src", "1", "x"]);
    assert_eq!(c.cmd(&["SMOVE", "src", "src", "x"]), int(1));
    assert_eq!(c.cmd(&["SMOVE", "src", "src", "zz"]), int(0));
    assert_eq!(c.cmd(&["SMOVE", "src", "dst", "zz"]), int(0));
    assert_eq!(c.cmd(&["SMOVE", "src", "dst", "1"]), int(1));
    assert_eq!(enc(&mut c, "dst"), bulk("intset"), "created for its first member");
    assert_eq!(c.cmd(&["SMOVE", "src", "dst", "x"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "src"]), int(0));
    assert_eq!(sorted(c.cmd(&["SMEMBERS", "dst"])), ["1", "x"]);
    // RESP3: SMEMBERS and SPOP with a count are sets, SRANDMEMBER an array.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.raw_cmd(&["SMEMBERS", "nokey"]), b"~0\r\n");
    assert_eq!(c.raw_cmd(&["SPOP", "nokey", "1"]), b"~0\r\n");
    assert_eq!(c.raw_cmd(&["SRANDMEMBER", "nokey", "1"]), b"*0\r\n");
    c.cmd(&["SADD", "i", "5"]);
    assert_eq!(c.raw_cmd(&["SRANDMEMBER", "i", "3"]), b"*1\r\n$1\r\n5\r\n");
    assert_eq!(c.raw_cmd(&["SINTER", "i"]), b"~1\r\n$1\r\n5\r\n");
}

#[test]
fn algebra() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SADD", "a", "1", "2", "3", "4"]);
    c.cmd(&["SADD", "b", "3", "4", "5"]);
    c.cmd(&["SADD", "c", "4", "x"]);
    assert_eq!(c.cmd(&["SINTER", "a", "b"]), bulks(&["3", "4"]));
    assert_eq!(sorted(c.cmd(&["SINTER", "a", "b", "c"])), ["4"]);
    assert_eq!(c.cmd(&["SINTER", "a", "nokey"]), arr(vec![]));
    assert_eq!(c.cmd(&["SINTERCARD", "2", "a", "b"]), int(2));
    assert_eq!(c.cmd(&["SINTERCARD", "2", "a", "b", "LIMIT", "1"]), int(1));
    assert_eq!(c.cmd(&["SINTERCARD", "2", "a", "b", "LIMIT", "0"]), int(2));
    assert_eq!(c.cmd(&["SINTERCARD", "1", "nokey"]), int(0));
    assert_eq!(c.cmd(&["SUNION", "a", "b", "nokey"]), bulks(&["1", "2", "3", "4", "5"]));
    assert_eq!(sorted(c.cmd(&["SUNION", "a", "c"])), ["1", "2", "3", "4", "x"]);
    assert_eq!(c.cmd(&["SDIFF", "a", "b"]), bulks(&["1", "2"]));
    assert_eq!(c.cmd(&["SDIFF", "a", "a"]), arr(vec![]));
    assert_eq!(c.cmd(&["SDIFF", "nokey", "a"]), arr(vec![]));
    assert_eq!(c.cmd(&["SINTERSTORE", "d", "a", "b"]), int(2));
    assert_eq!(enc(&mut c, "d"), bulk("intset"));
    assert_eq!(c.cmd(&["SINTERSTORE", "d", "a", "c"]), int(1));
    assert_eq!(c.cmd(&["SMEMBERS", "d"]), bulks(&["4"]));
    assert_eq!(c.cmd(&["SINTERSTORE", "d", "a", "nokey"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "d"]), int(0));
    assert_eq!(c.cmd(&["SUNIONSTORE", "d", "a", "c"]), int(5));
    assert_eq!(enc(&mut c, "d"), bulk("hashtable"));
    assert_eq!(c.cmd(&["SDIFFSTORE", "d", "c", "a"]), int(1));
    assert_eq!(c.cmd(&["SMEMBERS", "d"]), bulks(&["x"]));
    assert_eq!(c.cmd(&["SDIFFSTORE", "d", "a", "a"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "d"]), int(0));
    // The destination may be a source, and may hold another type.
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(c.cmd(&["SUNIONSTORE", "str", "a"]), int(4));
    assert_eq!(c.cmd(&["TYPE", "str"]), simple("set"));
    assert_eq!(c.cmd(&["SDIFFSTORE", "a", "a", "b"]), int(2));
    assert_eq!(c.cmd(&["SMEMBERS", "a"]), bulks(&["1", "2"]));
}

#[test]
fn encoding_conversions() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SADD", "i", "1", "-70000", "9223372036854775807"]);
    assert_eq!(enc(&mut c, "i"), bulk("intset"));
    assert_eq!(c.cmd(&["SMEMBERS", "i"]), bulks(&["-70000", "1", "9223372036854775807"]));
    // Non-canonical integers are strings.
    for m in ["-0", "007", "+1", " 1", "1.0", "a"] {
        c.cmd(&["DEL", "t"]);
        c.cmd(&["SADD", "t", m]);
        assert_eq!(enc(&mut c, "t"), bulk("hashtable"), "{m}");
    }
    c.cmd(&["SADD", "i", "x"]);
    assert_eq!(enc(&mut c, "i"), bulk("hashtable"));
    c.cmd(&["SREM", "i", "x"]);
    assert_eq!(enc(&mut c, "i"), bulk("hashtable"), "never converts back");
    // 512 integers stay an intset, the 513th converts.
    let args: Vec<String> = (0..512).map(|i| i.to_string()).collect();
    let mut cmd = vec!["SADD", "big"];
    cmd.extend(args.iter().map(String::as_str));
    assert_eq!(c.cmd(&cmd), int(512));
    assert_eq!(enc(&mut c, "big"), bulk("intset"));
    c.cmd(&["SADD", "big", "512"]);
    assert_eq!(enc(&mut c, "big"), bulk("hashtable"));
    assert_eq!(c.cmd(&["SCARD", "big"]), int(513));
    // Via CONFIG SET, also for algebra results built from scratch.
    assert_eq!(c.cmd(&["CONFIG", "SET", "set-max-intset-entries", "2"]), ok());
    c.cmd(&["SADD", "s", "1", "2"]);
    assert_eq!(enc(&mut c, "s"), bulk("intset"));
    c.cmd(&["SADD", "s", "3"]);
    assert_eq!(enc(&mut c, "s"), bulk("hashtable"));
    c.cmd(&["SADD", "one", "5"]);
    c.cmd(&["SUNIONSTORE", "u", "one", "s"]);
    assert_eq!(enc(&mut c, "u"), bulk("hashtable"));
    c.cmd(&["SINTERSTORE", "n", "s", "s"]);
    assert_eq!(enc(&mut c, "n"), bulk("hashtable"));
    c.cmd(&["SDIFFSTORE", "df", "s", "one"]);
    assert_eq!(enc(&mut c, "df"), bulk("hashtable"));
    assert_eq!(c.cmd(&["CONFIG", "SET", "set-max-intset-entries", "0"]), ok());
    c.cmd(&["SADD", "z", "1"]);
    assert_eq!(enc(&mut c, "z"), bulk("hashtable"));
    // SSCAN: intsets reply whole with cursor 0; hashtables page by cursor.
    c.cmd(&["SADD", "j", "3", "-1", "12"]);
    assert_eq!(enc(&mut c, "j"), bulk("hashtable"), "max-intset-entries 0");
    assert_eq!(c.cmd(&["CONFIG", "SET", "set-max-intset-entries", "512"]), ok());
    c.cmd(&["SADD", "k", "3", "-1", "12"]);
    assert_eq!(c.cmd(&["SSCAN", "k", "0", "COUNT", "1"]), arr(vec![bulk("0"), bulks(&["-1", "3", "12"])]));
    assert_eq!(c.cmd(&["SSCAN", "k", "0", "MATCH", "1*"]), arr(vec![bulk("0"), bulks(&["12"])]));
    assert_eq!(c.cmd(&["SSCAN", "nokey", "0"]), arr(vec![bulk("0"), arr(vec![])]));
    let (mut cursor, mut seen) = ("0".to_string(), Vec::new());
    loop {
        let Frame::Array(r) = c.cmd(&["SSCAN", "big", &cursor, "COUNT", "20"]) else { panic!() };
        seen.extend(sorted(r[1].clone()));
        let Frame::Bulk(cur) = &r[0] else { panic!() };
        cursor = String::from_utf8(cur.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 513);
    // Small samples of a big set are distinct members.
    for count in ["5", "200"] {
        let mut got = sorted(c.cmd(&["SRANDMEMBER", "big", count]));
        got.dedup();
        assert_eq!(got.len().to_string(), count);
        assert!(got.iter().all(|m| m.parse::<u32>().is_ok_and(|v| v <= 512)));
    }
    assert_eq!(sorted(c.cmd(&["SMEMBERS", "big"])), sorted(c.cmd(&["SUNION", "big"])));
}

#[test]
fn smove_signals_destination_only_when_member_is_new() {
    let srv = TestServer::start(&[]);
    let (mut a, mut b) = (srv.client(), srv.client());
    b.cmd(&["SADD", "src", "a", "b"]);
    b.cmd(&["SADD", "dst", "a"]);
    // The member is already in dst: dst is unchanged, so WATCH holds.
    assert_eq!(a.cmd(&["WATCH", "dst"]), ok());
    assert_eq!(b.cmd(&["SMOVE", "src", "dst", "a"]), int(1));
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["SADD", "dst", "c"]), simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]), arr(vec![int(1)]));
    assert_eq!(a.cmd(&["SCARD", "dst"]), int(2));
    // A new member changes dst, and the source changes either way.
    for watched in ["dst", "src"] {
        b.cmd(&["SADD", "src", "x"]);
        b.cmd(&["SREM", "dst", "x"]);
        assert_eq!(a.cmd(&["WATCH", watched]), ok());
        assert_eq!(b.cmd(&["SMOVE", "src", "dst", "x"]), int(1));
        assert_eq!(a.cmd(&["MULTI"]), ok());
        assert_eq!(a.cmd(&["PING"]), simple("QUEUED"));
        assert_eq!(a.raw_cmd(&["EXEC"]), b"*-1\r\n", "{watched}");
    }
}

/// Pearson's chi-square of `counts` against a uniform spread.
fn chi_square(counts: &std::collections::HashMap<String, u32>) -> f64 {
    let total: u32 = counts.values().sum();
    let expected = f64::from(total) / counts.len() as f64;
    counts.values().map(|&n| (f64::from(n) - expected).powi(2) / expected).sum()
}

#[test]
fn srandmember_draws_hashtable_members_evenly() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    // Strings make it a hash table; ten members share few buckets, which
    // skewed a pick of "random bucket, then random chain entry".
    let members = ["1", "5", "10", "50", "125", "MARY", "PATRICIA", "LINDA", "BARBARA", "ELIZABETH"];
    let mut args = vec!["SADD", "s"];
    args.extend(members);
    c.cmd(&args);
    let mut counts = std::collections::HashMap::new();
    for _ in 0..10 {
        let Frame::Array(got) = c.cmd(&["SRANDMEMBER", "s", "-1000"]) else { panic!("array") };
        for m in got {
            let Frame::Bulk(m) = m else { panic!("bulk") };
            *counts.entry(String::from_utf8(m).unwrap()).or_insert(0u32) += 1;
        }
    }
    assert_eq!(counts.len(), members.len());
    // 9 degrees of freedom: 40 is exceeded with probability 1e-5.
    assert!(chi_square(&counts) < 40.0, "{counts:?}");
}
