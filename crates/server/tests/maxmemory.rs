//! Black-box tests of `maxmemory`: every policy evicts the right kind of
//! keys and keeps `used_memory` near the limit, `noeviction` and the OOM
//! rules (MULTI at queue time and at EXEC, scripts with and without
//! `allow-oom`), OBJECT FREQ / IDLETIME, `evicted` keyspace events, and a
//! lower limit set at run time evicting down to it.
mod common;
use common::*;
use std::time::{Duration, Instant};

const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

fn info_field(c: &mut Client, name: &str) -> i64 {
    let Frame::Bulk(text) = c.cmd(&["INFO"]) else { panic!("INFO reply") };
    let text = String::from_utf8(text).unwrap();
    let line = text.lines().find_map(|l| l.strip_prefix(&format!("{name}:"))).expect("field");
    line.trim().parse().unwrap()
}

fn dbsize(c: &mut Client) -> i64 {
    let Frame::Integer(n) = c.cmd(&["DBSIZE"]) else { panic!("DBSIZE") };
    n
}

/// Set a limit `room` bytes above what is used now, with `policy`.
fn limit_above_used(c: &mut Client, policy: &str, room: i64) -> i64 {
    c.cmd(&["FLUSHALL"]);
    let limit = info_field(c, "used_memory") + room;
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory-policy", policy]), ok());
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()]), ok());
    limit
}

#[test]
fn allkeys_policies_stay_under_the_limit() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let value = "x".repeat(100);
    for policy in ["allkeys-lru", "allkeys-lfu", "allkeys-random"] {
        let limit = limit_above_used(&mut c, policy, 200 << 10);
        for i in 0..6000 {
            assert_eq!(c.cmd(&["SET", &format!("key:{i}"), &value]), ok(), "{policy}");
        }
        let used = info_field(&mut c, "used_memory");
        assert!(used < limit + 4096, "{policy}: used {used} over limit {limit}");
        let evicted = info_field(&mut c, "evicted_keys");
        assert!(evicted > 0 && dbsize(&mut c) < 6000, "{policy}: evicted {evicted}");
        c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
        c.cmd(&["CONFIG", "RESETSTAT"]);
    }
}

#[test]
fn volatile_policies_evict_only_volatile_keys() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let value = "x".repeat(100);
    for policy in ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"] {
        let limit = limit_above_used(&mut c, policy, 200 << 10);
        // Persistent keys take a quarter of the room; volatile ones the rest.
        for i in 0..300 {
            assert_eq!(c.cmd(&["SET", &format!("keep:{i}"), &value]), ok());
        }
        for i in 0..4000 {
            // TTLs rise with i: volatile-ttl must evict the low ones first.
            let ttl = (10_000 + i).to_string();
            assert_eq!(c.cmd(&["SETEX", &format!("vol:{i}"), &ttl, &value]), ok(), "{policy}");
        }
        let used = info_field(&mut c, "used_memory");
        assert!(used < limit + 4096, "{policy}: used {used} over limit {limit}");
        for i in 0..300 {
            assert_eq!(c.cmd(&["EXISTS", &format!("keep:{i}")]), int(1), "{policy}: keep:{i} evicted");
        }
        if policy == "volatile-ttl" {
            // The newest (longest TTL) keys survive.
            assert_eq!(c.cmd(&["EXISTS", "vol:3999"]), int(1));
            assert_eq!(c.cmd(&["EXISTS", "vol:0"]), int(0));
        }
        c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    }
}

#[test]
fn volatile_policy_without_volatile_keys_refuses_writes() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    limit_above_used(&mut c, "volatile-lru", 100 << 10);
    let value = "x".repeat(100);
    let mut refused = None;
    for i in 0..5000 {
        match c.cmd(&["SET", &format!("k{i}"), &value]) {
            Frame::Error(e) => {
                refused = Some(String::from_utf8(e).unwrap());
                break;
            }
            f => assert_eq!(f, ok()),
        }
    }
    assert_eq!(refused.as_deref(), Some(OOM));
    assert_eq!(info_field(&mut c, "evicted_keys"), 0);
}

#[test]
fn noeviction_refuses_denyoom_commands_only() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "x", "1"]);
    c.cmd(&["CONFIG", "RESETSTAT"]);
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", "1"]), ok());
    assert_eq!(c.cmd(&["SET", "a", "b"]), err(OOM));
    // Reads and deletes still run.
    assert_eq!(c.cmd(&["GET", "x"]), bulk("1"));
    assert_eq!(c.cmd(&["DEL", "x"]), int(1));
    let Frame::Bulk(stats) = c.cmd(&["INFO", "errorstats"]) else { panic!() };
    assert!(String::from_utf8_lossy(&stats).contains("errorstat_OOM:count=1"));
    let Frame::Bulk(cmds) = c.cmd(&["INFO", "commandstats"]) else { panic!() };
    assert!(String::from_utf8_lossy(&cmds).contains("cmdstat_set:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1"));
}

#[test]
fn oom_inside_multi_at_queue_time_and_at_exec() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
    // Queue time: every command but EXEC/DISCARD/QUIT/RESET is refused.
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["GET", "a"]), err(OOM));
    assert_eq!(c.cmd(&["EXEC"]), err("EXECABORT Transaction discarded because of previous errors."));
    // EXEC time: a queued denyoom command aborts the block.
    c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["SET", "a", "1"]), simple("QUEUED"));
    let mut admin = srv.client();
    admin.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
    assert_eq!(c.cmd(&["EXEC"]), err(&format!("EXECABORT Transaction discarded because of: {OOM}")));
    // A block of reads runs.
    admin.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["GET", "a"]), simple("QUEUED"));
    admin.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![Frame::Null]));
}

#[test]
fn scripts_follow_the_oom_rules() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "x", "123"]);
    c.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
    // A legacy script: its first denyoom call fails; reads work.
    let Frame::Error(e) = c.cmd(&["EVAL", "redis.call('set','x',1) return 1", "1", "x"]) else { panic!() };
    assert!(String::from_utf8_lossy(&e).starts_with(OOM), "{}", String::from_utf8_lossy(&e));
    assert_eq!(c.cmd(&["EVAL", "return redis.call('get','x')", "1", "x"]), bulk("123"));
    let pcall = "local t = redis.pcall('set','x','y') return t['err']";
    assert_eq!(c.cmd(&["EVAL", pcall, "1", "x"]), bulk(OOM));
    // Declared flags without allow-oom: refused before running.
    assert_eq!(c.cmd(&["EVAL", "#!lua\nreturn 1", "0"]), err(OOM));
    assert_eq!(c.cmd(&["EVAL", "#!lua flags=no-writes\nreturn 1", "0"]), int(1));
    let allow = "#!lua flags=allow-oom\nredis.call('set','x',1)\nreturn 1";
    assert_eq!(c.cmd(&["EVAL", allow, "1", "x"]), int(1));
    c.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    assert_eq!(c.cmd(&["GET", "x"]), bulk("1"));
}

#[test]
fn object_freq_and_idletime_follow_the_policy() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "k", "v"]);
    let note = "Please note that when switching between policies at runtime LRU and LFU data will take some time to \
                adjust.";
    let not_lfu = format!("ERR An LFU maxmemory policy is not selected, access frequency not tracked. {note}");
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "k"]), err(&not_lfu));
    // RESTORE IDLETIME back-dates the access clock.
    let Frame::Bulk(dump) = c.cmd(&["DUMP", "k"]) else { panic!() };
    let restored = c.raw_cmd(&[&b"RESTORE"[..], b"old", b"0", &dump, b"IDLETIME", b"1000"]);
    assert_eq!(restored, b"+OK\r\n");
    let Frame::Integer(idle) = c.cmd(&["OBJECT", "IDLETIME", "old"]) else { panic!() };
    assert!((1000..1003).contains(&idle), "idle {idle}");
    // Under LFU: a new key starts at 5 and grows with accesses.
    c.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
    let lfu = format!("ERR An LFU maxmemory policy is selected, idle time not tracked. {note}");
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "k"]), err(&lfu));
    c.cmd(&["SET", "new", "v"]);
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "new"]), int(5));
    for _ in 0..200 {
        c.cmd(&["GET", "new"]);
    }
    let Frame::Integer(freq) = c.cmd(&["OBJECT", "FREQ", "new"]) else { panic!() };
    assert!((8..=20).contains(&freq), "freq after 200 hits {freq}");
    // RESTORE FREQ sets it.
    let restored = c.raw_cmd(&[&b"RESTORE"[..], b"hot", b"0", &dump, b"FREQ", b"100"]);
    assert_eq!(restored, b"+OK\r\n");
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "hot"]), int(100));
    // lfu-log-factor 0: every access counts.
    c.cmd(&["CONFIG", "SET", "lfu-log-factor", "0"]);
    c.cmd(&["SET", "lin", "v"]);
    for _ in 0..50 {
        c.cmd(&["GET", "lin"]);
    }
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "lin"]), int(55));
}

#[test]
fn lfu_keeps_the_frequently_used_keys() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let value = "x".repeat(100);
    limit_above_used(&mut c, "allkeys-lfu", 300 << 10);
    for i in 0..20 {
        c.cmd(&["SET", &format!("hot:{i}"), &value]);
        for _ in 0..30 {
            c.cmd(&["GET", &format!("hot:{i}")]);
        }
    }
    for i in 0..8000 {
        c.cmd(&["SET", &format!("cold:{i}"), &value]);
    }
    assert!(info_field(&mut c, "evicted_keys") > 1000);
    let kept = (0..20).filter(|i| c.cmd(&["EXISTS", &format!("hot:{i}")]) == int(1)).count();
    assert!(kept >= 18, "only {kept} of 20 hot keys kept");
}

#[test]
fn evicted_keys_are_notified_and_lowering_the_limit_evicts_down() {
    let srv = TestServer::start(&["--maxmemory-policy", "allkeys-random"]);
    let mut c = srv.client();
    let value = "x".repeat(1000);
    for i in 0..2000 {
        c.cmd(&["SET", &format!("k{i}"), &value]);
    }
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Ee"]);
    let mut sub = srv.client();
    sub.cmd(&["SUBSCRIBE", "__keyevent@0__:evicted"]);
    let used = info_field(&mut c, "used_memory");
    let limit = used - (1 << 20);
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()]), ok());
    let msg = sub.read_message();
    assert_eq!(msg[..2], ["message".to_string(), "__keyevent@0__:evicted".to_string()]);
    assert!(msg[2].starts_with('k'));
    let deadline = Instant::now() + Duration::from_secs(5);
    while info_field(&mut c, "used_memory") > limit {
        assert!(Instant::now() < deadline, "still over the limit");
        std::thread::sleep(Duration::from_millis(10));
    }
    let evicted = info_field(&mut c, "evicted_keys");
    assert!(evicted >= 500 && dbsize(&mut c) == 2000 - evicted, "evicted {evicted}");
}

#[test]
fn a_table_does_not_grow_past_the_limit() {
    let srv = TestServer::start(&["--maxmemory-policy", "allkeys-random", "--latency-tracking", "no"]);
    let mut c = srv.client();
    // 4096 keys fill the table: the next new key would double it (64 KiB).
    let mut pipe = Vec::new();
    for i in 0..4096 {
        resp::encode_command(&mut pipe, &["SET", &i.to_string(), "A"]);
    }
    let mut loader = srv.client();
    loader.send(&pipe);
    for _ in 0..4096 {
        loader.read_frame();
    }
    drop(loader);
    let limit = info_field(&mut c, "used_memory") + 10 * 1024;
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", &limit.to_string()]), ok());
    assert_eq!(c.cmd(&["SET", "k1", "v1"]), ok());
    assert_eq!(c.cmd(&["SET", "k2", "v2"]), ok());
    assert_eq!(dbsize(&mut c), 4098, "keys were evicted");
}
