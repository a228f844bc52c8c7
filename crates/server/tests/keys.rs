//! Black-box tests of the generic keyspace commands over real TCP: DEL and
//! friends, the expiry family (incl. lazy and active expiry), KEYS, SCAN,
//! RENAME, COPY, MOVE, FLUSHDB/FLUSHALL and OBJECT. Keys are created with
//! SET (the strings group).
mod common;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

use common::*;

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

fn as_int(f: Frame) -> i64 {
    match f {
        Frame::Integer(i) => i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

/// The keys of an array reply, as strings.
fn key_set(f: Frame) -> HashSet<String> {
    match f {
        Frame::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Frame::Bulk(b) => String::from_utf8(b).unwrap(),
                other => panic!("expected bulk, got {other:?}"),
            })
            .collect(),
        other => panic!("expected array, got {other:?}"),
    }
}

/// One SCAN call: (next cursor, keys).
fn scan_once(c: &mut Client, args: &[&str]) -> (String, Vec<String>) {
    match c.cmd(args) {
        Frame::Array(mut parts) if parts.len() == 2 => {
            let keys = match parts.pop().unwrap() {
                Frame::Array(ks) => ks
                    .into_iter()
                    .map(|k| match k {
                        Frame::Bulk(b) => String::from_utf8(b).unwrap(),
                        other => panic!("{other:?}"),
                    })
                    .collect(),
                other => panic!("{other:?}"),
            };
            let Frame::Bulk(cur) = parts.pop().unwrap() else { panic!("cursor is a bulk string") };
            (String::from_utf8(cur).unwrap(), keys)
        }
        other => panic!("SCAN reply: {other:?}"),
    }
}

/// Write many SETs in one pipeline and check every reply is +OK.
fn pipeline_set(c: &mut Client, keys: impl Iterator<Item = String>, extra: &[&str]) {
    let mut out = Vec::new();
    let mut n = 0;
    for k in keys {
        let mut args = vec!["SET", k.as_str(), "v"];
        args.extend_from_slice(extra);
        resp::encode_command(&mut out, &args);
        n += 1;
    }
    c.send(&out);
    for _ in 0..n {
        assert_eq!(c.read_frame(), ok());
    }
}

#[test]
fn del_unlink_exists_type_touch() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for k in ["a", "b", "c"] {
        assert_eq!(c.cmd(&["SET", k, "1"]), ok());
    }
    assert_eq!(c.cmd(&["EXISTS", "a", "a", "x"]), int(2));
    assert_eq!(c.cmd(&["TOUCH", "a", "x", "b"]), int(2));
    assert_eq!(c.cmd(&["TYPE", "a"]), simple("string"));
    assert_eq!(c.cmd(&["TYPE", "x"]), simple("none"));
    assert_eq!(c.cmd(&["DEL", "a", "x", "a"]), int(1));
    assert_eq!(c.cmd(&["UNLINK", "b", "c"]), int(2));
    assert_eq!(c.cmd(&["EXISTS", "a", "b", "c"]), int(0));
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    for (cmd, name) in
        [(&["DEL"][..], "del"), (&["EXISTS"], "exists"), (&["TYPE", "a", "b"], "type"), (&["TOUCH"], "touch")]
    {
        assert_eq!(c.cmd(cmd), err(&format!("ERR wrong number of arguments for '{name}' command")));
    }
}

#[test]
fn expire_options_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["EXPIRE", "nokey", "100"]), int(0));
    assert_eq!(c.cmd(&["SET", "k", "v"]), ok());
    let both = "ERR NX and XX, GT or LT options at the same time are not compatible";
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "NX", "XX"]), err(both));
    assert_eq!(c.cmd(&["PEXPIRE", "k", "100", "gt", "nx"]), err(both));
    assert_eq!(
        c.cmd(&["EXPIRE", "k", "100", "GT", "LT"]),
        err("ERR GT and LT options at the same time are not compatible")
    );
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "foo"]), err("ERR Unsupported option foo"));
    assert_eq!(c.cmd(&["EXPIRE", "k", "abc"]), err("ERR value is not an integer or out of range"));
    assert_eq!(c.cmd(&["EXPIRE", "k", "9223372036854775"]), err("ERR invalid expire time in 'expire' command"));
    assert_eq!(c.cmd(&["PEXPIRE", "k", "9223372036854775000"]), err("ERR invalid expire time in 'pexpire' command"));
    assert_eq!(c.cmd(&["EXPIREAT", "k", "9223372036854775807"]), err("ERR invalid expire time in 'expireat' command"));
    // No TTL yet: XX and GT refuse, LT and NX accept.
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "XX"]), int(0));
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "GT"]), int(0));
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "LT"]), int(1));
    assert_eq!(c.cmd(&["EXPIRE", "k", "50", "NX"]), int(0));
    assert_eq!(c.cmd(&["EXPIRE", "k", "200", "GT"]), int(1));
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "XX", "GT"]), int(0));
    assert_eq!(c.cmd(&["EXPIRE", "k", "100", "xx", "lt"]), int(1));
    assert_eq!(c.cmd(&["TTL", "k"]), int(100));
    assert_eq!(c.cmd(&["EXPIRE"]), err("ERR wrong number of arguments for 'expire' command"));
}

#[test]
fn ttl_family_and_persist() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(c.cmd(&[cmd, "nokey"]), int(-2));
    }
    assert_eq!(c.cmd(&["SET", "k", "v"]), ok());
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(c.cmd(&[cmd, "k"]), int(-1));
    }
    let at = now_ms() + 100_000;
    assert_eq!(c.cmd(&["PEXPIREAT", "k", &at.to_string()]), int(1));
    assert_eq!(c.cmd(&["PEXPIRETIME", "k"]), int(at));
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]), int((at + 500) / 1000));
    let pttl = as_int(c.cmd(&["PTTL", "k"]));
    assert!((98_000..=100_000).contains(&pttl), "{pttl}");
    assert_eq!(c.cmd(&["TTL", "k"]), int(100));
    assert_eq!(c.cmd(&["EXPIREAT", "k", "99999999999"]), int(1));
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]), int(99_999_999_999));
    assert_eq!(c.cmd(&["PERSIST", "k"]), int(1));
    assert_eq!(c.cmd(&["PERSIST", "k"]), int(0));
    assert_eq!(c.cmd(&["PERSIST", "nokey"]), int(0));
    assert_eq!(c.cmd(&["TTL", "k"]), int(-1));
}

#[test]
fn past_or_zero_deadline_deletes() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for (cmd, t) in
        [("EXPIRE", "0"), ("PEXPIRE", "-5"), ("EXPIREAT", "1"), ("PEXPIREAT", "0"), ("EXPIRE", "-9223372036854775")]
    {
        assert_eq!(c.cmd(&["SET", "k", "v"]), ok());
        assert_eq!(c.cmd(&[cmd, "k", t]), int(1), "{cmd} {t}");
        assert_eq!(c.cmd(&["EXISTS", "k"]), int(0), "{cmd} {t}");
    }
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
}

#[test]
fn lazy_expiry_on_access() {
    let srv = TestServer::start(&["--hz", "1"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(c.cmd(&["PEXPIRE", "k", "50"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(1));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(c.cmd(&["TTL", "k"]), int(-2));
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
}

#[test]
fn active_expiry_reclaims_without_access() {
    let srv = TestServer::start(&["--hz", "10"]);
    let mut c = srv.client();
    pipeline_set(&mut c, (0..2000).map(|i| format!("vol:{i}")), &["PX", "50"]);
    pipeline_set(&mut c, (0..10).map(|i| format!("keep:{i}")), &[]);
    assert!(as_int(c.cmd(&["DBSIZE"])) > 10);
    // DBSIZE counts keys without looking at (or expiring) any of them.
    let mut size = 0;
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(100));
        size = as_int(c.cmd(&["DBSIZE"]));
        if size == 10 {
            break;
        }
    }
    assert_eq!(size, 10, "the expiry cycle should have reclaimed every volatile key");
}

#[test]
fn keys_patterns() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for k in ["k1", "k2", "k3", "key", "other", "", "h?llo", "hello"] {
        assert_eq!(c.cmd(&["SET", k, "v"]), ok());
    }
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
    assert_eq!(key_set(c.cmd(&["KEYS", "*"])), set(&["k1", "k2", "k3", "key", "other", "", "h?llo", "hello"]));
    assert_eq!(key_set(c.cmd(&["KEYS", "k*"])), set(&["k1", "k2", "k3", "key"]));
    assert_eq!(key_set(c.cmd(&["KEYS", "k[1-2]"])), set(&["k1", "k2"]));
    assert_eq!(key_set(c.cmd(&["KEYS", "k[^1]"])), set(&["k2", "k3"]));
    assert_eq!(key_set(c.cmd(&["KEYS", "?"])), set(&[]));
    assert_eq!(key_set(c.cmd(&["KEYS", "??"])), set(&["k1", "k2", "k3"]));
    assert_eq!(key_set(c.cmd(&["KEYS", "h\\?llo"])), set(&["h?llo"]));
    assert_eq!(key_set(c.cmd(&["KEYS", "*e*"])), set(&["key", "other", "hello"]));
    // `**` is a real pattern: the empty key only matches the exact `*` shortcut.
    assert_eq!(key_set(c.cmd(&["KEYS", "**"])).len(), 7);
    assert_eq!(c.cmd(&["PEXPIRE", "k1", "1"]), int(1));
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(key_set(c.cmd(&["KEYS", "k?"])), set(&["k2", "k3"]));
}

#[test]
fn scan_full_iteration_sees_each_key_once() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    pipeline_set(&mut c, (0..5000).map(|i| format!("key:{i}")), &[]);
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let (next, keys) = scan_once(&mut c, &["SCAN", &cursor, "COUNT", "100"]);
        calls += 1;
        assert!(keys.len() <= 1000, "COUNT bounds each reply loosely");
        for k in keys {
            *seen.entry(k).or_default() += 1;
        }
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 5000);
    assert!(seen.values().all(|&n| n == 1), "no key repeats without writes");
    assert!((10..500).contains(&calls), "{calls} calls");
}

#[test]
fn scan_while_adding_keys_sees_every_original_key() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    pipeline_set(&mut c, (0..5000).map(|i| format!("key:{i}")), &[]);
    let mut seen = HashSet::new();
    let mut cursor = "0".to_string();
    let mut added = 0;
    loop {
        let (next, keys) = scan_once(&mut c, &["SCAN", &cursor, "COUNT", "50"]);
        seen.extend(keys);
        // Grow the table while the scan is running (forces resizes mid-scan).
        pipeline_set(&mut c, (added..added + 40).map(|i| format!("new:{i}")), &[]);
        added += 40;
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    let missing: Vec<_> = (0..5000).map(|i| format!("key:{i}")).filter(|k| !seen.contains(k)).collect();
    assert!(
        missing.is_empty(),
        "{} original keys never returned, e.g. {:?}",
        missing.len(),
        &missing[..3.min(missing.len())]
    );
}

#[test]
fn scan_options_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    pipeline_set(&mut c, (0..30).map(|i| format!("user:{i}")), &[]);
    pipeline_set(&mut c, (0..20).map(|i| format!("item:{i}")), &[]);
    let full = |c: &mut Client, extra: &[&str]| {
        let mut all = HashSet::new();
        let mut cursor = "0".to_string();
        loop {
            let mut args = vec!["SCAN", cursor.as_str()];
            args.extend_from_slice(extra);
            let (next, keys) = scan_once(c, &args);
            all.extend(keys);
            cursor = next;
            if cursor == "0" {
                return all;
            }
        }
    };
    assert_eq!(full(&mut c, &["MATCH", "user:*"]).len(), 30);
    assert_eq!(full(&mut c, &["MATCH", "item:1*", "COUNT", "3"]).len(), 11);
    assert_eq!(full(&mut c, &["TYPE", "string"]).len(), 50);
    assert_eq!(full(&mut c, &["TYPE", "STRING", "MATCH", "*:2"]).len(), 2);
    assert_eq!(full(&mut c, &["TYPE", "hash"]).len(), 0);
    assert_eq!(c.cmd(&["SCAN", "x"]), err("ERR invalid cursor"));
    assert_eq!(c.cmd(&["SCAN", " 1"]), err("ERR invalid cursor"));
    assert_eq!(c.cmd(&["SCAN", "18446744073709551616"]), err("ERR invalid cursor"));
    assert_eq!(c.cmd(&["SCAN", "0", "COUNT", "0"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SCAN", "0", "COUNT", "x"]), err("ERR value is not an integer or out of range"));
    assert_eq!(c.cmd(&["SCAN", "0", "MATCH"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SCAN", "0", "FOO", "bar"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SCAN"]), err("ERR wrong number of arguments for 'scan' command"));
}

#[test]
fn rename_and_renamenx() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["RENAME", "nokey", "b"]), err("ERR no such key"));
    assert_eq!(c.cmd(&["RENAMENX", "nokey", "b"]), err("ERR no such key"));
    assert_eq!(c.cmd(&["SET", "a", "1"]), ok());
    assert_eq!(c.cmd(&["RENAME", "a", "a"]), ok());
    assert_eq!(c.cmd(&["RENAMENX", "a", "a"]), int(0));
    assert_eq!(c.cmd(&["PEXPIRE", "a", "100000"]), int(1));
    assert_eq!(c.cmd(&["SET", "b", "2"]), ok());
    assert_eq!(c.cmd(&["RENAMENX", "a", "b"]), int(0));
    assert_eq!(c.cmd(&["RENAME", "a", "b"]), ok());
    assert_eq!(c.cmd(&["GET", "b"]), bulk("1"));
    assert_eq!(c.cmd(&["EXISTS", "a"]), int(0));
    assert!(as_int(c.cmd(&["PTTL", "b"])) > 90_000, "RENAME keeps the TTL");
    assert_eq!(c.cmd(&["RENAMENX", "b", "c"]), int(1));
    assert_eq!(c.cmd(&["DBSIZE"]), int(1));
}

#[test]
fn copy_and_move() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["COPY", "nokey", "b"]), int(0));
    assert_eq!(c.cmd(&["SET", "a", "hello"]), ok());
    assert_eq!(c.cmd(&["PEXPIRE", "a", "100000"]), int(1));
    assert_eq!(c.cmd(&["COPY", "a", "a"]), err("ERR source and destination objects are the same"));
    assert_eq!(c.cmd(&["COPY", "a", "b"]), int(1));
    assert!(as_int(c.cmd(&["PTTL", "b"])) > 90_000, "COPY keeps the TTL");
    assert_eq!(c.cmd(&["COPY", "a", "b"]), int(0));
    assert_eq!(c.cmd(&["SET", "b", "x"]), ok());
    assert_eq!(c.cmd(&["COPY", "a", "b", "REPLACE"]), int(1));
    assert_eq!(c.cmd(&["GET", "b"]), bulk("hello"));
    assert_eq!(c.cmd(&["COPY", "a", "a", "DB", "1"]), int(1));
    assert_eq!(c.cmd(&["COPY", "a", "a", "DB", "16"]), err("ERR DB index is out of range"));
    assert_eq!(c.cmd(&["COPY", "a", "a", "DB", "x"]), err("ERR value is not an integer or out of range"));
    assert_eq!(
        c.cmd(&["COPY", "a", "a", "DB", "3000000000"]),
        err("ERR value is out of range, value must between -2147483648 and 2147483647")
    );
    assert_eq!(c.cmd(&["COPY", "a", "a", "DB"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["COPY", "a", "z", "FOO"]), err("ERR syntax error"));
    // MOVE
    assert_eq!(c.cmd(&["MOVE", "a", "0"]), err("ERR source and destination objects are the same"));
    assert_eq!(c.cmd(&["MOVE", "a", "16"]), err("ERR DB index is out of range"));
    assert_eq!(c.cmd(&["MOVE", "a", "1"]), int(0), "target exists");
    assert_eq!(c.cmd(&["MOVE", "nokey", "1"]), int(0));
    assert_eq!(c.cmd(&["MOVE", "b", "2"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "b"]), int(0));
    assert_eq!(c.cmd(&["SELECT", "2"]), ok());
    assert_eq!(c.cmd(&["GET", "b"]), bulk("hello"));
    assert!(as_int(c.cmd(&["PTTL", "b"])) > 90_000, "MOVE keeps the TTL");
    assert_eq!(c.cmd(&["SELECT", "1"]), ok());
    assert_eq!(c.cmd(&["GET", "a"]), bulk("hello"));
}

#[test]
fn randomkey_dbsize_flush() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["RANDOMKEY"]), Frame::Null);
    pipeline_set(&mut c, (0..100).map(|i| format!("k{i}")), &[]);
    assert!(matches!(c.cmd(&["RANDOMKEY"]), Frame::Bulk(k) if k.starts_with(b"k")));
    assert_eq!(c.cmd(&["DBSIZE"]), int(100));
    assert_eq!(c.cmd(&["SELECT", "1"]), ok());
    assert_eq!(c.cmd(&["SET", "x", "1"]), ok());
    assert_eq!(c.cmd(&["FLUSHDB", "FOO"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["FLUSHDB", "SYNC", "x"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["FLUSHDB"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    assert_eq!(c.cmd(&["SET", "x", "1"]), ok());
    assert_eq!(c.cmd(&["FLUSHALL", "bogus"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["FLUSHALL", "ASYNC"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    assert_eq!(c.cmd(&["SELECT", "0"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    pipeline_set(&mut c, (0..100).map(|i| format!("k{i}")), &[]);
    assert_eq!(c.cmd(&["FLUSHDB", "async"]), ok());
    assert_eq!(c.cmd(&["RANDOMKEY"]), Frame::Null);
    assert_eq!(c.cmd(&["FLUSHALL", "sync"]), ok());
    assert_eq!(c.cmd(&["DBSIZE", "x"]), err("ERR wrong number of arguments for 'dbsize' command"));
}

#[test]
fn object_subcommands() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "i", "100"]), ok());
    assert_eq!(c.cmd(&["SET", "big", "10000"]), ok());
    assert_eq!(c.cmd(&["SET", "s", "hello"]), ok());
    assert_eq!(c.cmd(&["SET", "r", &"x".repeat(45)]), ok());
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "i"]), bulk("int"));
    assert_eq!(c.cmd(&["object", "encoding", "s"]), bulk("embstr"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "r"]), bulk("raw"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "nokey"]), Frame::Null);
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "i"]), int(2147483647));
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "big"]), int(1));
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "s"]), int(1));
    assert_eq!(c.cmd(&["OBJECT", "REFCOUNT", "nokey"]), Frame::Null);
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "s"]), int(0));
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "nokey"]), Frame::Null);
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "nokey"]), Frame::Null);
    assert_eq!(
        c.cmd(&["OBJECT", "FREQ", "s"]),
        err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    );
    match c.cmd(&["OBJECT", "HELP"]) {
        Frame::Array(lines) => {
            assert_eq!(lines.len(), 15);
            assert_eq!(lines[0], simple("OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.cmd(&["OBJECT"]), err("ERR wrong number of arguments for 'object' command"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING"]), err("ERR wrong number of arguments for 'object|encoding' command"));
    assert_eq!(c.cmd(&["OBJECT", "HELP", "x"]), err("ERR wrong number of arguments for 'object|help' command"));
    assert_eq!(c.cmd(&["OBJECT", "Nosuch", "k"]), err("ERR unknown subcommand 'Nosuch'. Try OBJECT HELP."));
}

#[test]
fn object_freq_and_idletime_under_lfu() {
    let srv = TestServer::start(&["--maxmemory-policy", "allkeys-lfu"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "s", "hello"]), ok());
    assert!(as_int(c.cmd(&["OBJECT", "FREQ", "s"])) >= 0);
    assert_eq!(
        c.cmd(&["OBJECT", "IDLETIME", "s"]),
        err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    );
}
