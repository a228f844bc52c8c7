//! Black-box tests of SWAPDB: the contents (and expiries) of two databases
//! change places, clients stay on their index and see the other data, WATCH
//! and blocked clients learn of the swap, and the AOF replays it. Expected
//! replies were checked against redis-server 7.0.15.
mod aof_support;
mod common;

use std::time::Duration;

use aof_support::*;
use common::*;

#[test]
fn argument_errors_match_redis() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let cases: &[(&[&str], &[u8])] = &[
        (&["SWAPDB", "x", "1"], b"-ERR invalid first DB index\r\n"),
        (&["SWAPDB", "1", "x"], b"-ERR invalid second DB index\r\n"),
        (&["SWAPDB", "x", "y"], b"-ERR invalid first DB index\r\n"),
        (&["SWAPDB", "3000000000", "1"], b"-ERR invalid first DB index\r\n"),
        (&["SWAPDB", "1", "99999999999"], b"-ERR invalid second DB index\r\n"),
        (&["SWAPDB", "-1", "1"], b"-ERR DB index is out of range\r\n"),
        (&["SWAPDB", "1", "16"], b"-ERR DB index is out of range\r\n"),
        (&["SWAPDB", "1"], b"-ERR wrong number of arguments for 'swapdb' command\r\n"),
        (&["SWAPDB", "3", "3"], b"+OK\r\n"),
    ];
    for (args, want) in cases {
        assert_eq!(c.raw_cmd(args), *want, "{args:?}");
    }
}

#[test]
fn contents_and_expiries_change_places() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "a", "1", "EX", "100"]), ok());
    assert_eq!(c.cmd(&["SELECT", "1"]), ok());
    assert_eq!(c.cmd(&["SET", "b", "2"]), ok());
    assert_eq!(c.cmd(&["SET", "c", "3"]), ok());
    assert_eq!(c.cmd(&["SWAPDB", "0", "1"]), ok());
    // This client stays on index 1, which now holds db 0's old data.
    assert_eq!(c.cmd(&["DBSIZE"]), int(1));
    assert_eq!(c.cmd(&["GET", "a"]), bulk("1"));
    assert_eq!(c.cmd(&["TTL", "a"]), int(100));
    assert_eq!(c.cmd(&["SELECT", "0"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(2));
    assert_eq!(c.cmd(&["GET", "b"]), bulk("2"));
    assert_eq!(c.cmd(&["TTL", "b"]), int(-1));
}

#[test]
fn watched_keys_existing_on_either_side_fail_exec() {
    let srv = TestServer::start(&[]);
    let (mut w, mut o) = (srv.client(), srv.client());
    assert_eq!(o.cmd(&["SELECT", "1"]), ok());
    assert_eq!(o.cmd(&["SET", "k", "v"]), ok());
    // `k` is absent from db 0 before the swap and present after it.
    assert_eq!(w.cmd(&["WATCH", "k"]), ok());
    assert_eq!(w.cmd(&["MULTI"]), ok());
    assert_eq!(w.cmd(&["PING"]), simple("QUEUED"));
    assert_eq!(o.cmd(&["SWAPDB", "0", "1"]), ok());
    assert_eq!(w.raw_cmd(&["EXEC"]), b"*-1\r\n");
    // Present before, absent after (swapped back): fails too.
    assert_eq!(w.cmd(&["WATCH", "k"]), ok());
    assert_eq!(w.cmd(&["MULTI"]), ok());
    assert_eq!(w.cmd(&["PING"]), simple("QUEUED"));
    assert_eq!(o.cmd(&["SWAPDB", "1", "0"]), ok());
    assert_eq!(w.raw_cmd(&["EXEC"]), b"*-1\r\n");
    // A key on neither side did not change.
    assert_eq!(w.cmd(&["WATCH", "zz"]), ok());
    assert_eq!(w.cmd(&["MULTI"]), ok());
    assert_eq!(w.cmd(&["PING"]), simple("QUEUED"));
    assert_eq!(o.cmd(&["SWAPDB", "0", "1"]), ok());
    assert_eq!(w.raw_cmd(&["EXEC"]), b"*1\r\n+PONG\r\n");
}

#[test]
fn blocked_clients_are_served_from_the_swapped_in_data() {
    let srv = TestServer::start(&[]);
    let (mut b, mut o) = (srv.client(), srv.client());
    assert_eq!(o.cmd(&["SELECT", "2"]), ok());
    assert_eq!(o.cmd(&["RPUSH", "L", "x"]), int(1));
    assert_eq!(o.cmd(&["SET", "S", "str"]), ok());
    b.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nL\r\n$1\r\n0\r\n");
    let mut wrong = srv.client();
    wrong.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nS\r\n$1\r\n1\r\n");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(o.cmd(&["SWAPDB", "0", "2"]), ok());
    assert_eq!(b.read_raw(), b"*2\r\n$1\r\nL\r\n$1\r\nx\r\n");
    // The popped list is gone from db 0 (the blocked client's index).
    assert_eq!(o.cmd(&["SELECT", "0"]), ok());
    assert_eq!(o.cmd(&["EXISTS", "L"]), int(0));
    // A key of the wrong type keeps its waiter blocked until the timeout.
    assert_eq!(wrong.read_raw(), b"*-1\r\n");
}

#[test]
fn aof_replays_the_swap() {
    let dir = DataDir::new("swapdb");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SELECT", "4"]), ok());
    assert_eq!(c.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(c.cmd(&["SWAPDB", "4", "5"]), ok());
    let aof = std::fs::read(dir.last_incr()).unwrap();
    let tail = b"*3\r\n$6\r\nSWAPDB\r\n$1\r\n4\r\n$1\r\n5\r\n";
    assert!(aof.ends_with(tail), "{}", String::from_utf8_lossy(&aof));
    kill9(&mut srv);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SELECT", "5"]), ok());
    assert_eq!(c.cmd(&["GET", "k"]), bulk("v"));
    assert_eq!(c.cmd(&["SELECT", "4"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
}
