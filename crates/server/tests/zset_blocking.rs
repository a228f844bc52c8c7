//! BZPOPMIN / BZPOPMAX / BZMPOP over real TCP: immediate replies when data
//! exists, FIFO service of blocked clients, timeouts,
//! and cleanup when a blocked client disconnects.
mod common;
use common::*;
use std::time::{Duration, Instant};

fn blocked_clients(c: &mut Client) -> i64 {
    let Frame::Bulk(info) = c.cmd(&["INFO", "clients"]) else { panic!("bulk INFO") };
    let text = String::from_utf8(info).unwrap();
    let line = text.lines().find(|l| l.starts_with("blocked_clients:")).expect("blocked_clients field");
    line["blocked_clients:".len()..].trim().parse().unwrap()
}

fn wait_blocked(c: &mut Client, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while blocked_clients(c) != n {
        assert!(Instant::now() < deadline, "expected {n} blocked clients");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn immediate_reply_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["ZADD", "z", "1", "a", "2", "b"]);
    assert_eq!(c.cmd(&["BZPOPMIN", "none", "z", "0"]), arr(vec![bulk("z"), bulk("a"), bulk("1")]));
    assert_eq!(c.cmd(&["BZPOPMAX", "z", "0"]), arr(vec![bulk("z"), bulk("b"), bulk("2")]));
    assert_eq!(c.cmd(&["BZPOPMIN", "z", "x"]), err("ERR timeout is not a float or out of range"));
    assert_eq!(c.cmd(&["BZPOPMIN", "z", "-1"]), err("ERR timeout is negative"));
    assert_eq!(c.cmd(&["BZMPOP", "0", "0", "z", "MIN"]), err("ERR numkeys should be greater than 0"));
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(
        c.cmd(&["BZPOPMIN", "s", "0"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    c.cmd(&["ZADD", "z", "5", "e", "6", "f"]);
    let pair = |m: &str, s: &str| arr(vec![bulk(m), bulk(s)]);
    assert_eq!(
        c.cmd(&["BZMPOP", "1", "1", "z", "MAX", "COUNT", "5"]),
        arr(vec![bulk("z"), arr(vec![pair("f", "6"), pair("e", "5")])])
    );
}

#[test]
fn timeout_replies_null_array() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let t = Instant::now();
    assert_eq!(c.raw_cmd(&["BZPOPMIN", "z", "0.2"]), b"*-1\r\n".to_vec());
    assert!(t.elapsed() >= Duration::from_millis(190));
    assert_eq!(c.raw_cmd(&["BZMPOP", "0.1", "1", "z", "MIN"]), b"*-1\r\n".to_vec());
}

#[test]
fn waiters_are_served_first_come_first_served() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let mut w1 = srv.client();
    let mut w2 = srv.client();
    let mut w3 = srv.client();
    w1.send(b"*3\r\n$8\r\nBZPOPMIN\r\n$1\r\nz\r\n$1\r\n0\r\n");
    wait_blocked(&mut admin, 1);
    w2.send(b"*4\r\n$8\r\nBZPOPMIN\r\n$5\r\nother\r\n$1\r\nz\r\n$1\r\n0\r\n");
    wait_blocked(&mut admin, 2);
    w3.send(b"*3\r\n$8\r\nBZPOPMAX\r\n$1\r\nz\r\n$1\r\n0\r\n");
    wait_blocked(&mut admin, 3);
    // Two members: the first two waiters get them in order, the third waits on.
    assert_eq!(admin.cmd(&["ZADD", "z", "1", "a", "2", "b"]), int(2));
    assert_eq!(w1.read_frame(), arr(vec![bulk("z"), bulk("a"), bulk("1")]));
    assert_eq!(w2.read_frame(), arr(vec![bulk("z"), bulk("b"), bulk("2")]));
    wait_blocked(&mut admin, 1);
    admin.cmd(&["ZADD", "z", "7", "c"]);
    assert_eq!(w3.read_frame(), arr(vec![bulk("z"), bulk("c"), bulk("7")]));
    assert_eq!(admin.cmd(&["EXISTS", "z"]), int(0));
}

#[test]
fn disconnect_cleans_up_and_bzmpop_wakes() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    {
        let mut gone = srv.client();
        gone.send(b"*3\r\n$8\r\nBZPOPMIN\r\n$1\r\nz\r\n$1\r\n0\r\n");
        wait_blocked(&mut admin, 1);
    }
    wait_blocked(&mut admin, 0);
    let mut w = srv.client();
    w.send(b"*7\r\n$6\r\nBZMPOP\r\n$1\r\n0\r\n$1\r\n1\r\n$1\r\nz\r\n$3\r\nMIN\r\n$5\r\nCOUNT\r\n");
    // Incomplete command: nothing blocks yet. Finish it.
    w.send(b"$1\r\n2\r\n");
    wait_blocked(&mut admin, 1);
    admin.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]);
    let pair = |m: &str, s: &str| arr(vec![bulk(m), bulk(s)]);
    assert_eq!(w.read_frame(), arr(vec![bulk("z"), arr(vec![pair("a", "1"), pair("b", "2")])]));
    assert_eq!(admin.cmd(&["ZCARD", "z"]), int(1));
}

#[test]
fn wrong_type_write_leaves_the_client_blocked() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let mut w = srv.client();
    w.send(b"*4\r\n$8\r\nBZPOPMIN\r\n$1\r\ns\r\n$1\r\nz\r\n$1\r\n0\r\n");
    wait_blocked(&mut admin, 1);
    admin.cmd(&["SET", "s", "string now"]);
    admin.cmd(&["PING"]);
    assert_eq!(blocked_clients(&mut admin), 1);
    admin.cmd(&["ZADD", "z", "3", "m"]);
    assert_eq!(w.read_frame(), arr(vec![bulk("z"), bulk("m"), bulk("3")]));
}
