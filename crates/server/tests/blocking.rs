//! Black-box tests of blocking list commands: FIFO service, wake-ups by
//! pushes and moves, timeouts (fractional, RESP3, without busy-waiting),
//! disconnects while blocked, and pipelines behind a blocked command.
mod common;
use common::*;
use std::time::{Duration, Instant};

fn info_field(c: &mut Client, name: &str) -> i64 {
    let Frame::Bulk(text) = c.cmd(&["INFO", "clients"]) else { panic!("INFO reply") };
    let text = String::from_utf8(text).unwrap();
    let line = text.lines().find_map(|l| l.strip_prefix(&format!("{name}:"))).expect("field");
    line.trim().parse().unwrap()
}

/// Wait until INFO shows `n` blocked clients.
fn wait_blocked(c: &mut Client, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while info_field(c, "blocked_clients") != n {
        assert!(Instant::now() < deadline, "never reached {n} blocked clients");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn send(c: &mut Client, args: &[&str]) {
    let mut out = Vec::new();
    resp::encode_command(&mut out, args);
    c.send(&out);
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_comm.split(' ').collect();
    // utime and stime are fields 14 and 15 of the full line (11, 12 here).
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn blpop_serves_clients_in_the_order_they_blocked() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let mut waiters: Vec<Client> = (0..3).map(|_| srv.client()).collect();
    for (i, w) in waiters.iter_mut().enumerate() {
        send(w, &["BLPOP", "q", "0"]);
        wait_blocked(&mut admin, i as i64 + 1);
    }
    assert_eq!(admin.cmd(&["RPUSH", "q", "a", "b", "c"]), int(3));
    for (w, v) in waiters.iter_mut().zip(["a", "b", "c"]) {
        assert_eq!(w.read_frame(), arr(vec![bulk("q"), bulk(v)]));
    }
    assert_eq!(admin.cmd(&["EXISTS", "q"]), int(0));
    wait_blocked(&mut admin, 0);
}

#[test]
fn one_pipeline_makes_several_keys_ready() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let (mut w1, mut w2, mut w3) = (srv.client(), srv.client(), srv.client());
    send(&mut w1, &["BLPOP", "k1", "0"]);
    send(&mut w2, &["BRPOP", "k2", "k1", "0"]);
    send(&mut w3, &["BLMPOP", "0", "1", "k3", "LEFT", "COUNT", "5"]);
    wait_blocked(&mut admin, 3);
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["RPUSH", "k1", "a"]);
    resp::encode_command(&mut out, &["RPUSH", "k2", "b", "c"]);
    resp::encode_command(&mut out, &["RPUSH", "k3", "d", "e"]);
    admin.send(&out);
    for n in [1, 2, 2] {
        assert_eq!(admin.read_frame(), int(n));
    }
    assert_eq!(w1.read_frame(), arr(vec![bulk("k1"), bulk("a")]));
    assert_eq!(w2.read_frame(), arr(vec![bulk("k2"), bulk("c")]));
    assert_eq!(w3.read_frame(), arr(vec![bulk("k3"), arr(vec![bulk("d"), bulk("e")])]));
    assert_eq!(admin.cmd(&["LRANGE", "k2", "0", "-1"]), arr(vec![bulk("b")]));
}

#[test]
fn blmove_chain_wakes_the_next_waiter() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let (mut mover1, mut mover2, mut popper) = (srv.client(), srv.client(), srv.client());
    send(&mut mover1, &["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"]);
    wait_blocked(&mut admin, 1);
    send(&mut mover2, &["BRPOPLPUSH", "b", "c", "0"]);
    wait_blocked(&mut admin, 2);
    send(&mut popper, &["BLPOP", "c", "0"]);
    wait_blocked(&mut admin, 3);
    assert_eq!(admin.cmd(&["LPUSH", "a", "v"]), int(1));
    assert_eq!(mover1.read_frame(), bulk("v"));
    assert_eq!(mover2.read_frame(), bulk("v"));
    assert_eq!(popper.read_frame(), arr(vec![bulk("c"), bulk("v")]));
    assert_eq!(admin.cmd(&["DBSIZE"]), int(0));
    wait_blocked(&mut admin, 0);
}

#[test]
fn other_types_do_not_wake_list_waiters() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let mut w = srv.client();
    send(&mut w, &["BLPOP", "k", "other", "0"]);
    wait_blocked(&mut admin, 1);
    assert_eq!(admin.cmd(&["SET", "k", "string"]), ok());
    assert_eq!(admin.cmd(&["RPUSH", "other", "x"]), int(1));
    assert_eq!(w.read_frame(), arr(vec![bulk("other"), bulk("x")]));
}

#[test]
fn fractional_timeout_without_busy_waiting() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let t = Instant::now();
    assert_eq!(c.raw_cmd(&["BLPOP", "nokey", "0.1"]), b"*-1\r\n");
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(100) && took < Duration::from_secs(1), "{took:?}");
    assert_eq!(c.raw_cmd(&["BLMOVE", "nokey", "x", "LEFT", "LEFT", "0.05"]), b"*-1\r\n");

    let before = cpu_ticks(srv.pid());
    let t = Instant::now();
    assert_eq!(c.raw_cmd(&["BRPOP", "nokey", "1"]), b"*-1\r\n");
    assert!(t.elapsed() >= Duration::from_secs(1));
    let used = cpu_ticks(srv.pid()) - before;
    assert!(used <= 3, "server used {used} clock ticks of CPU during a 1 s block");
}

#[test]
fn resp3_timeout_is_null() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.raw_cmd(&["BLPOP", "nokey", "0.02"]), b"_\r\n");
    assert_eq!(c.raw_cmd(&["BLMPOP", "0.02", "1", "nokey", "LEFT"]), b"_\r\n");
    assert_eq!(c.raw_cmd(&["BRPOPLPUSH", "nokey", "x", "0.02"]), b"_\r\n");
}

#[test]
fn disconnected_waiter_leaves_nothing_behind() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    {
        let mut w = srv.client();
        send(&mut w, &["BLPOP", "k", "0"]);
        wait_blocked(&mut admin, 1);
    }
    wait_blocked(&mut admin, 0);
    assert_eq!(admin.cmd(&["RPUSH", "k", "v"]), int(1));
    assert_eq!(admin.cmd(&["LRANGE", "k", "0", "-1"]), arr(vec![bulk("v")]), "the push was not lost");
}

#[test]
fn pipeline_behind_a_blocked_command_waits() {
    let srv = TestServer::start(&[]);
    let mut blocked = srv.client();
    let mut other = srv.client();
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["BLPOP", "k", "0"]);
    resp::encode_command(&mut out, &["PING"]);
    blocked.send(&out);
    wait_blocked(&mut other, 1);
    blocked.stream.set_read_timeout(Some(Duration::from_millis(150))).unwrap();
    let mut buf = [0u8; 64];
    let early = std::io::Read::read(&mut blocked.stream, &mut buf);
    assert!(early.is_err(), "no reply may arrive before BLPOP is served: {early:?}");
    blocked.stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    assert_eq!(other.cmd(&["PING"]), simple("PONG"));
    assert_eq!(other.cmd(&["SET", "x", "1"]), ok());
    assert_eq!(other.cmd(&["RPUSH", "k", "v"]), int(1));
    assert_eq!(blocked.read_frame(), arr(vec![bulk("k"), bulk("v")]));
    assert_eq!(blocked.read_frame(), simple("PONG"));
}

#[test]
fn blocking_errors_and_immediate_data() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "l", "a", "b"]);
    assert_eq!(c.cmd(&["BLPOP", "nokey", "l", "0"]), arr(vec![bulk("l"), bulk("a")]));
    assert_eq!(c.cmd(&["BRPOP", "l", "0"]), arr(vec![bulk("l"), bulk("b")]));
    assert_eq!(c.cmd(&["BLPOP", "l", "-1"]), err("ERR timeout is negative"));
    assert_eq!(c.cmd(&["BLPOP", "l", "x"]), err("ERR timeout is not a float or out of range"));
    assert_eq!(c.cmd(&["BLMOVE", "l", "m", "UP", "LEFT", "x"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["BLMPOP", "x", "0", "l", "LEFT"]), err("ERR numkeys should be greater than 0"));
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(
        c.cmd(&["BLPOP", "s", "l", "0"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

/// A blocked command counts as one call however often it was re-run.
#[test]
fn a_served_blocking_command_counts_once() {
    let srv = TestServer::start(&[]);
    let mut waiter = srv.client();
    let mut other = srv.client();
    waiter.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n");
    std::thread::sleep(std::time::Duration::from_millis(50));
    // Writes to the key that leave it empty re-run the command without serving it.
    for _ in 0..3 {
        assert_eq!(other.cmd(&["SET", "q", "x"]), ok());
        assert_eq!(other.cmd(&["DEL", "q"]), int(1));
    }
    assert_eq!(other.cmd(&["RPUSH", "q", "v"]), int(1));
    assert_eq!(waiter.read_frame(), arr(vec![bulk("q"), bulk("v")]));
    let Frame::Bulk(info) = other.cmd(&["INFO", "commandstats"]) else { panic!("INFO reply") };
    let info = String::from_utf8(info).unwrap();
    assert!(info.contains("cmdstat_blpop:calls=1,"), "{info}");
}

#[test]
fn served_from_the_key_that_became_ready_first() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let (mut w1, mut w2) = (srv.client(), srv.client());
    send(&mut w1, &["BLPOP", "a", "b", "c", "0"]);
    send(&mut w2, &["BLMPOP", "0", "3", "a", "b", "c", "LEFT"]);
    wait_blocked(&mut admin, 2);
    // One transaction fills c, then a, then b: Redis serves each waiter from c first.
    let mut out = Vec::new();
    for cmd in [&["MULTI"][..], &["RPUSH", "c", "x"], &["RPUSH", "a", "y"], &["RPUSH", "b", "z"], &["RPUSH", "c", "w"]]
    {
        resp::encode_command(&mut out, cmd);
    }
    resp::encode_command(&mut out, &["EXEC"]);
    admin.send(&out);
    for _ in 0..6 {
        admin.read_frame();
    }
    assert_eq!(w1.read_frame(), arr(vec![bulk("c"), bulk("x")]));
    assert_eq!(w2.read_frame(), arr(vec![bulk("c"), arr(vec![bulk("w")])]));
    assert_eq!(admin.cmd(&["LRANGE", "a", "0", "-1"]), arr(vec![bulk("y")]));
}

/// The key an EXEC readies may expire before the waiter is served (its
/// PEXPIRE ran, then DEBUG SLEEP outlasted it): the waiter is served at the
/// time it is served, finds nothing and stays blocked, as in Redis.
#[test]
fn a_key_that_expired_while_exec_ran_keeps_its_waiter_blocked() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut admin = srv.client();
    assert_eq!(admin.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), simple("OK"));
    let mut waiter = srv.client();
    send(&mut waiter, &["BRPOP", "k", "0"]);
    wait_blocked(&mut admin, 1);
    admin.cmd(&["MULTI"]);
    for args in [&["RPUSH", "k", "hello"][..], &["PEXPIRE", "k", "100"], &["DEBUG", "SLEEP", "0.2"]] {
        assert_eq!(admin.cmd(args), simple("QUEUED"));
    }
    assert_eq!(admin.cmd(&["EXEC"]), arr(vec![int(1), int(1), simple("OK")]));
    wait_blocked(&mut admin, 1);
    assert_eq!(admin.cmd(&["EXISTS", "k"]), int(0));
    // Still waiting: a fresh push is what it gets.
    assert_eq!(admin.cmd(&["RPUSH", "k", "later"]), int(1));
    assert_eq!(waiter.read_frame(), arr(vec![bulk("k"), bulk("later")]));
}
