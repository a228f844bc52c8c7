//! Black-box tests of lazy freeing: UNLINK, FLUSHDB/FLUSHALL ASYNC and the
//! `lazyfree-lazy-*` options send big values to the background thread
//! (seen in INFO's `lazyfreed_objects`), small ones are freed inline, and
//! the memory comes back.
mod common;
use common::*;
use std::time::{Duration, Instant};

fn info_field(c: &mut Client, name: &str) -> i64 {
    let Frame::Bulk(text) = c.cmd(&["INFO", "memory"]) else { panic!("INFO reply") };
    let text = String::from_utf8(text).unwrap();
    let line = text.lines().find_map(|l| l.strip_prefix(&format!("{name}:"))).expect("field");
    line.trim().parse().unwrap()
}

/// Wait until nothing is pending and `lazyfreed_objects` is `n`.
fn wait_freed(c: &mut Client, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (pending, freed) = (info_field(c, "lazyfree_pending_objects"), info_field(c, "lazyfreed_objects"));
        if pending == 0 && freed == n {
            return;
        }
        assert!(Instant::now() < deadline, "lazyfreed_objects stayed {freed} (pending {pending}), want {n}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A hashtable-encoded set of `n` members (effort `n`).
fn make_set(c: &mut Client, key: &str, n: usize) {
    let mut args = vec!["SADD".to_string(), key.to_string()];
    args.extend((0..n).map(|i| format!("member:{i}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&args), int(n as i64));
}

#[test]
fn unlink_frees_big_values_on_the_thread_and_small_ones_inline() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    make_set(&mut c, "big", 1000);
    make_set(&mut c, "small", 10);
    c.cmd(&["SET", "str", "value"]);
    c.cmd(&["RPUSH", "list", "a", "b", "c"]);
    assert_eq!(c.cmd(&["UNLINK", "big", "small", "str", "missing"]), int(3));
    assert_eq!(c.cmd(&["UNLINK", "list"]), int(1));
    assert_eq!(c.cmd(&["UNLINK", "big", "missing"]), int(0));
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    // Only the 1000-member set was worth the thread (effort > 64).
    wait_freed(&mut c, 1);
    assert_eq!(c.cmd(&["CONFIG", "RESETSTAT"]), ok());
    assert_eq!(info_field(&mut c, "lazyfreed_objects"), 0);
}

#[test]
fn flushall_async_empties_at_once_and_memory_goes_down() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let before = info_field(&mut c, "used_memory");
    make_set(&mut c, "s1", 100_000);
    for i in 0..100 {
        c.cmd(&["SET", &format!("k{i}"), "v"]);
    }
    let peak = info_field(&mut c, "used_memory");
    assert!(peak > before + 1_000_000, "a 100k-member set costs memory: {before} -> {peak}");
    assert_eq!(c.cmd(&["FLUSHALL", "ASYNC"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    // A flushed db counts as its keys, whatever their size (emptyDbAsync).
    wait_freed(&mut c, 101);
    let deadline = Instant::now() + Duration::from_secs(5);
    while info_field(&mut c, "used_memory") > before + (peak - before) / 4 {
        assert!(Instant::now() < deadline, "memory not reclaimed by FLUSHALL ASYNC");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn flushdb_follows_sync_async_and_lazyfree_lazy_user_flush() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "a", "1"]);
    assert_eq!(c.cmd(&["FLUSHDB", "SYNC"]), ok());
    assert_eq!(c.cmd(&["FLUSHDB"]), ok());
    wait_freed(&mut c, 0);
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["SET", "b", "1"]);
    assert_eq!(c.cmd(&["FLUSHDB", "ASYNC"]), ok());
    wait_freed(&mut c, 2);
    assert_eq!(c.cmd(&["CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"]), ok());
    c.cmd(&["SET", "a", "1"]);
    assert_eq!(c.cmd(&["FLUSHDB"]), ok());
    wait_freed(&mut c, 3);
    assert_eq!(c.cmd(&["FLUSHDB", "BOGUS"]), err("ERR syntax error"));
}

#[test]
fn del_is_unlink_under_lazyfree_lazy_user_del() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    make_set(&mut c, "big", 500);
    assert_eq!(c.cmd(&["DEL", "big"]), int(1));
    wait_freed(&mut c, 0);
    assert_eq!(c.cmd(&["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"]), ok());
    make_set(&mut c, "big", 500);
    c.cmd(&["SET", "small", "x"]);
    assert_eq!(c.cmd(&["DEL", "big", "small", "nope"]), int(2));
    wait_freed(&mut c, 1);
}

#[test]
fn expired_big_keys_are_freed_lazily_under_lazyfree_lazy_expire() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["CONFIG", "SET", "lazyfree-lazy-expire", "yes"]), ok());
    // Lazy expiry: the lookup finds it due.
    assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    make_set(&mut c, "big", 1000);
    assert_eq!(c.cmd(&["PEXPIRE", "big", "20"]), int(1));
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!(c.cmd(&["EXISTS", "big"]), int(0));
    wait_freed(&mut c, 1);
    // Active expiry: nobody looks the key up again.
    assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]), ok());
    make_set(&mut c, "big2", 1000);
    c.cmd(&["SET", "small", "x", "PX", "20"]);
    assert_eq!(c.cmd(&["PEXPIRE", "big2", "20"]), int(1));
    wait_freed(&mut c, 2);
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    // EXPIRE with a time in the past deletes at once, lazily too.
    make_set(&mut c, "big3", 1000);
    assert_eq!(c.cmd(&["EXPIRE", "big3", "-1"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "big3"]), int(0));
    wait_freed(&mut c, 3);
}

#[test]
fn expired_big_keys_are_freed_inline_by_default() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    make_set(&mut c, "big", 1000);
    assert_eq!(c.cmd(&["PEXPIRE", "big", "10"]), int(1));
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(c.cmd(&["EXISTS", "big"]), int(0));
    wait_freed(&mut c, 0);
}

#[test]
fn overwrites_are_freed_lazily_under_lazyfree_lazy_server_del() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["CONFIG", "SET", "lazyfree-lazy-server-del", "yes"]), ok());
    make_set(&mut c, "big", 1000);
    assert_eq!(c.cmd(&["SET", "big", "now a string"]), ok());
    wait_freed(&mut c, 1);
    c.cmd(&["DEL", "big"]);
    make_set(&mut c, "big", 1000);
    c.cmd(&["SET", "src", "x"]);
    assert_eq!(c.cmd(&["RENAME", "src", "big"]), ok());
    wait_freed(&mut c, 2);
    c.cmd(&["DEL", "big"]);
    make_set(&mut c, "big", 1000);
    assert_eq!(c.cmd(&["SINTERSTORE", "big", "nothing", "big"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "big"]), int(0));
    wait_freed(&mut c, 3);
    // DEL is a user delete: it follows lazyfree-lazy-user-del, still off.
    make_set(&mut c, "big", 1000);
    assert_eq!(c.cmd(&["DEL", "big"]), int(1));
    wait_freed(&mut c, 3);
}

#[test]
fn a_stream_counts_its_nodes_and_groups() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["CONFIG", "SET", "stream-node-max-entries", "5"]), ok());
    for i in 0..1000 {
        c.cmd(&["XADD", "st", "*", "f", &i.to_string()]);
    }
    assert_eq!(c.cmd(&["XGROUP", "CREATE", "st", "g", "0"]), ok());
    assert_eq!(c.cmd(&["UNLINK", "st"]), int(1));
    wait_freed(&mut c, 1);
    c.cmd(&["XADD", "s", "*", "a", "b"]);
    c.cmd(&["XGROUP", "CREATE", "s", "bla", "$"]);
    c.cmd(&["XGROUP", "DESTROY", "s", "bla"]);
    assert_eq!(c.cmd(&["UNLINK", "s"]), int(1));
    wait_freed(&mut c, 1);
}

#[test]
fn script_flush_async_frees_a_big_script_cache_on_the_thread() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for i in 0..10 {
        c.cmd(&["SCRIPT", "LOAD", &format!("return {i}")]);
    }
    // 64 scripts or fewer are freed inline, as Redis's freeLuaScriptsAsync.
    assert_eq!(c.cmd(&["SCRIPT", "FLUSH", "ASYNC"]), ok());
    wait_freed(&mut c, 0);
    for i in 0..100 {
        c.cmd(&["SCRIPT", "LOAD", &format!("return {i}")]);
    }
    assert_eq!(c.cmd(&["SCRIPT", "FLUSH", "SYNC"]), ok());
    wait_freed(&mut c, 0);
    for i in 0..100 {
        c.cmd(&["SCRIPT", "LOAD", &format!("return {i}")]);
    }
    assert_eq!(c.cmd(&["SCRIPT", "FLUSH", "ASYNC"]), ok());
    wait_freed(&mut c, 100);
    assert_eq!(c.cmd(&["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"]), arr(vec![int(0)]));
}
