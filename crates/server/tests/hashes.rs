//! Black-box tests of the hash commands over real TCP; expected replies were
//! checked against Redis 7.0.15, including RESP3 shapes and the listpack →
//! hashtable conversions at the configured thresholds.
mod common;
use common::*;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn enc(c: &mut Client, key: &str) -> Frame {
    c.cmd(&["OBJECT", "ENCODING", key])
}

fn sorted(f: Frame) -> Vec<Frame> {
    let Frame::Array(mut v) = f else { panic!("not an array: {f:?}") };
    v.sort_by_key(|x| format!("{x:?}"));
    v
}

#[test]
fn set_get_delete_and_lengths() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["HSET", "h", "a", "1", "b", "2"]), int(2));
    assert_eq!(c.cmd(&["HSET", "h", "a", "10", "c", "3"]), int(1));
    assert_eq!(c.cmd(&["HMSET", "h", "d", "4"]), ok());
    assert_eq!(c.cmd(&["HSETNX", "h", "a", "x"]), int(0));
    assert_eq!(c.cmd(&["HSETNX", "h", "e", "5"]), int(1));
    assert_eq!(c.cmd(&["HGET", "h", "a"]), bulk("10"));
    assert_eq!(c.cmd(&["HGET", "h", "zz"]), Frame::Null);
    assert_eq!(c.cmd(&["HGET", "nokey", "a"]), Frame::Null);
    assert_eq!(c.cmd(&["HMGET", "h", "a", "zz", "b"]), arr(vec![bulk("10"), Frame::Null, bulk("2")]));
    assert_eq!(c.cmd(&["HMGET", "nokey", "a"]), arr(vec![Frame::Null]));
    assert_eq!(c.cmd(&["HLEN", "h"]), int(5));
    assert_eq!(c.cmd(&["HLEN", "nokey"]), int(0));
    assert_eq!(c.cmd(&["HEXISTS", "h", "a"]), int(1));
    assert_eq!(c.cmd(&["HEXISTS", "h", "zz"]), int(0));
    assert_eq!(c.cmd(&["HSTRLEN", "h", "a"]), int(2));
    assert_eq!(c.cmd(&["HSTRLEN", "h", "zz"]), int(0));
    // Listpack keeps insertion order; updates keep their place.
    let all = ["a", "10", "b", "2", "c", "3", "d", "4", "e", "5"];
    assert_eq!(c.cmd(&["HGETALL", "h"]), arr(all.iter().map(|s| bulk(s)).collect()));
    assert_eq!(c.cmd(&["HKEYS", "h"]), arr(["a", "b", "c", "d", "e"].iter().map(|s| bulk(s)).collect()));
    assert_eq!(c.cmd(&["HVALS", "h"]), arr(["10", "2", "3", "4", "5"].iter().map(|s| bulk(s)).collect()));
    assert_eq!(c.cmd(&["HGETALL", "nokey"]), arr(vec![]));
    assert_eq!(c.cmd(&["HDEL", "h", "a", "a", "zz", "b"]), int(2));
    assert_eq!(c.cmd(&["HDEL", "nokey", "a"]), int(0));
    assert_eq!(c.cmd(&["HDEL", "h", "c", "d", "e"]), int(3));
    assert_eq!(c.cmd(&["EXISTS", "h"]), int(0), "an emptied hash is deleted");
    assert_eq!(c.cmd(&["TYPE", "h"]), simple("none"));
    c.cmd(&["HSET", "h", "a", "1"]);
    assert_eq!(c.cmd(&["TYPE", "h"]), simple("hash"));
}

#[test]
fn arity_and_wrongtype_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["HSET", "h", "a"]), err("ERR wrong number of arguments for 'hset' command"));
    assert_eq!(c.cmd(&["HSET", "h", "a", "1", "b"]), err("ERR wrong number of arguments for 'hset' command"));
    assert_eq!(c.cmd(&["HMSET", "h", "a", "1", "b"]), err("ERR wrong number of arguments for 'hmset' command"));
    assert_eq!(c.cmd(&["EXISTS", "h"]), int(0));
    c.cmd(&["SET", "s", "v"]);
    for cmd in [
        &["HSET", "s", "a", "1"][..],
        &["HSETNX", "s", "a", "1"],
        &["HGET", "s", "a"],
        &["HMGET", "s", "a"],
        &["HDEL", "s", "a"],
        &["HLEN", "s"],
        &["HEXISTS", "s", "a"],
        &["HGETALL", "s"],
        &["HKEYS", "s"],
        &["HVALS", "s"],
        &["HINCRBY", "s", "a", "1"],
        &["HINCRBYFLOAT", "s", "a", "1"],
        &["HSTRLEN", "s", "a"],
        &["HRANDFIELD", "s"],
        &["HRANDFIELD", "s", "2"],
        &["HSCAN", "s", "0"],
    ] {
        assert_eq!(c.cmd(cmd), err(WRONGTYPE), "{cmd:?}");
    }
    c.cmd(&["HSET", "h", "a", "1"]);
    assert_eq!(c.cmd(&["GET", "h"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["SADD", "h", "x"]), err(WRONGTYPE));
}

#[test]
fn incr_commands() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["HINCRBY", "h", "n", "5"]), int(5));
    assert_eq!(c.cmd(&["HINCRBY", "h", "n", "-7"]), int(-2));
    assert_eq!(c.cmd(&["HINCRBY", "h", "n", "x"]), err("ERR value is not an integer or out of range"));
    c.cmd(&["HSET", "h", "s", "abc", "big", "9223372036854775807"]);
    assert_eq!(c.cmd(&["HINCRBY", "h", "s", "1"]), err("ERR hash value is not an integer"));
    assert_eq!(c.cmd(&["HINCRBY", "h", "big", "1"]), err("ERR increment or decrement would overflow"));
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "h", "f", "1.5"]), bulk("1.5"));
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "h", "f", "0.1"]), bulk("1.6"));
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "h", "n", "1e3"]), bulk("998"));
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "h", "f", "x"]), err("ERR value is not a valid float"));
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "h", "f", "inf"]), err("ERR value is NaN or Infinity"));
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "h", "s", "1"]), err("ERR hash value is not a float"));
    c.cmd(&["HSET", "h", "i", "inf"]);
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "h", "i", "1"]), err("ERR increment would produce NaN or Infinity"));
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "nokey", "f", "x"]), err("ERR value is not a valid float"));
    assert_eq!(c.cmd(&["EXISTS", "nokey"]), int(0));
}

#[test]
fn encoding_conversions() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["HSET", "h", "a", "1"]);
    assert_eq!(enc(&mut c, "h"), bulk("listpack"));
    // Values up to hash-max-listpack-value (64) bytes stay listpack.
    let v64 = "x".repeat(64);
    c.cmd(&["HSET", "h", "b", &v64]);
    assert_eq!(enc(&mut c, "h"), bulk("listpack"));
    c.cmd(&["HSET", "h", &"f".repeat(65), "1"]);
    assert_eq!(enc(&mut c, "h"), bulk("hashtable"));
    assert_eq!(c.cmd(&["HGET", "h", "b"]), bulk(&v64));
    // 512 entries stay listpack, the 513th converts.
    for i in 0..512 {
        c.cmd(&["HSET", "big", &format!("f{i}"), "v"]);
    }
    assert_eq!(enc(&mut c, "big"), bulk("listpack"));
    c.cmd(&["HSET", "big", "one-more", "v"]);
    assert_eq!(enc(&mut c, "big"), bulk("hashtable"));
    assert_eq!(c.cmd(&["HLEN", "big"]), int(513));
    // Lowered thresholds apply to the next write, even an update.
    assert_eq!(c.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "2"]), ok());
    c.cmd(&["HSET", "small", "a", "1", "b", "2"]);
    assert_eq!(enc(&mut c, "small"), bulk("listpack"));
    c.cmd(&["HSET", "small", "c", "3"]);
    assert_eq!(enc(&mut c, "small"), bulk("hashtable"));
    c.cmd(&["HSET", "upd", "a", "1", "b", "2", "c", "3"]);
    assert_eq!(enc(&mut c, "upd"), bulk("hashtable"));
    assert_eq!(c.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "512"]), ok());
    assert_eq!(c.cmd(&["CONFIG", "SET", "hash-max-listpack-value", "3"]), ok());
    c.cmd(&["HSET", "v", "abc", "xyz"]);
    assert_eq!(enc(&mut c, "v"), bulk("listpack"));
    // HSETNX on an existing field converts nothing; HINCRBYFLOAT's long result does.
    assert_eq!(c.cmd(&["HSETNX", "v", "abc", "long value"]), int(0));
    assert_eq!(enc(&mut c, "v"), bulk("listpack"));
    c.cmd(&["HINCRBYFLOAT", "v", "n", "0.125"]);
    assert_eq!(enc(&mut c, "v"), bulk("hashtable"));
    // Hashtable replies hold the same pairs.
    assert_eq!(sorted(c.cmd(&["HKEYS", "v"])), sorted(arr(vec![bulk("abc"), bulk("n")])));
}

#[test]
fn randfield_and_scan() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["HRANDFIELD", "nokey"]), Frame::Null);
    assert_eq!(c.cmd(&["HRANDFIELD", "nokey", "3"]), arr(vec![]));
    c.cmd(&["HSET", "h", "a", "1", "b", "2"]);
    let whole = arr(vec![bulk("a"), bulk("1"), bulk("b"), bulk("2")]);
    assert_eq!(c.cmd(&["HRANDFIELD", "h", "5", "WITHVALUES"]), whole);
    assert_eq!(c.cmd(&["HRANDFIELD", "h", "0"]), arr(vec![]));
    let Frame::Array(v) = c.cmd(&["HRANDFIELD", "h", "-5"]) else { panic!() };
    assert_eq!(v.len(), 5);
    assert!(v.iter().all(|f| *f == bulk("a") || *f == bulk("b")));
    let Frame::Array(v) = c.cmd(&["HRANDFIELD", "h", "1", "withvalues"]) else { panic!() };
    assert!(v == vec![bulk("a"), bulk("1")] || v == vec![bulk("b"), bulk("2")]);
    let one = c.cmd(&["HRANDFIELD", "h"]);
    assert!(one == bulk("a") || one == bulk("b"));
    assert_eq!(c.cmd(&["HRANDFIELD", "h", "1", "foo"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["HRANDFIELD", "h", "1", "withvalues", "x"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["HRANDFIELD", "h", "x"]), err("ERR value is not an integer or out of range"));
    assert_eq!(
        c.cmd(&["HRANDFIELD", "h", "-9223372036854775808"]),
        err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    );
    assert_eq!(c.cmd(&["HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"]), err("ERR value is out of range"));
    // RESP3: HGETALL is a map, HRANDFIELD WITHVALUES an array of pairs.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.raw_cmd(&["HGETALL", "h"]), b"%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
    assert_eq!(
        c.raw_cmd(&["HRANDFIELD", "h", "2", "WITHVALUES"]),
        b"*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"
    );
    assert_eq!(c.raw_cmd(&["HGETALL", "nokey"]), b"%0\r\n");
    c.cmd(&["HELLO", "2"]);
    // HSCAN: listpack replies everything at once; options parse after the lookup.
    assert_eq!(c.cmd(&["HSCAN", "h", "0"]), arr(vec![bulk("0"), whole]));
    assert_eq!(c.cmd(&["HSCAN", "h", "0", "MATCH", "b*"]), arr(vec![bulk("0"), arr(vec![bulk("b"), bulk("2")])]));
    assert_eq!(c.cmd(&["HSCAN", "h", "x"]), err("ERR invalid cursor"));
    assert_eq!(c.cmd(&["HSCAN", "h", "0", "COUNT", "0"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["HSCAN", "nokey", "0", "BAD"]), arr(vec![bulk("0"), arr(vec![])]));
    // A hashtable scan visits every field exactly once across calls.
    for i in 0..1000 {
        c.cmd(&["HSET", "big", &format!("f{i}"), &i.to_string()]);
    }
    let (mut cursor, mut seen) = ("0".to_string(), Vec::new());
    loop {
        let Frame::Array(r) = c.cmd(&["HSCAN", "big", &cursor, "COUNT", "50"]) else { panic!() };
        let (Frame::Bulk(cur), Frame::Array(items)) = (&r[0], &r[1]) else { panic!() };
        seen.extend(items.chunks(2).map(|p| p[0].clone()));
        cursor = String::from_utf8(cur.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    seen.sort_by_key(|x| format!("{x:?}"));
    seen.dedup();
    assert_eq!(seen.len(), 1000);
    for count in ["5", "400"] {
        let Frame::Array(v) = c.cmd(&["HRANDFIELD", "big", count, "WITHVALUES"]) else { panic!() };
        let mut fields: Vec<_> = v.chunks(2).map(|p| format!("{:?}", p[0])).collect();
        fields.sort();
        fields.dedup();
        assert_eq!(fields.len().to_string(), count);
    }
}

#[test]
fn copy_rename_and_command_info() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["HSET", "h", "a", "1"]);
    assert_eq!(c.cmd(&["COPY", "h", "h2"]), int(1));
    c.cmd(&["HSET", "h2", "b", "2"]);
    assert_eq!(c.cmd(&["HLEN", "h"]), int(1));
    assert_eq!(c.cmd(&["HLEN", "h2"]), int(2));
    assert_eq!(c.cmd(&["RENAME", "h2", "h3"]), ok());
    assert_eq!(c.cmd(&["HGET", "h3", "b"]), bulk("2"));
    let Frame::Array(info) = c.cmd(&["COMMAND", "INFO", "hset", "hgetall"]) else { panic!() };
    let Frame::Array(hset) = &info[0] else { panic!() };
    assert_eq!(hset[1], int(-4));
    assert_eq!(hset[2], arr(vec![simple("write"), simple("denyoom"), simple("fast")]));
    assert_eq!(&hset[3..6], &[int(1), int(1), int(1)]);
}
