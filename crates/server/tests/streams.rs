//! Streams over real TCP: XADD's ID rules and trims, blocking XREAD and
//! XREADGROUP (arrival order, `$`, timeouts, a stream deleted or flushed
//! under a waiting group reader, a blocked read pipelined behind other
//! commands), and what the AOF receives and replays (generated IDs and
//! approximate trims written exactly; deliveries as XCLAIMs).
mod aof_support;
mod common;

use std::time::Duration;

use aof_support::*;
use common::*;

fn wait_blocked(c: &mut Client, n: usize) {
    let ok = wait_for(Duration::from_secs(5), || info_field(c, "clients", "blocked_clients") == n.to_string());
    assert!(ok, "expected {n} blocked clients");
}

fn wire(args: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    resp::encode_command(&mut out, args);
    out
}

fn entry(id: &str, fields: &[&str]) -> Frame {
    arr(vec![bulk(id), arr(fields.iter().map(|f| bulk(f)).collect())])
}

#[test]
fn xadd_ids_errors_and_trims() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["XADD", "s", "5-1", "a", "1"]), bulk("5-1"));
    assert_eq!(c.cmd(&["XADD", "s", "5-*", "a", "2"]), bulk("5-2"));
    assert_eq!(
        c.cmd(&["XADD", "s", "5-2", "a", "3"]),
        err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
    );
    assert_eq!(c.cmd(&["XADD", "s", "0-0", "a", "3"]), err("ERR The ID specified in XADD must be greater than 0-0"));
    assert_eq!(c.cmd(&["XADD", "s", "5-3", "a"]), err("ERR wrong number of arguments for 'xadd' command"));
    assert_eq!(
        c.cmd(&["XADD", "s", "LIMIT", "5", "*", "a", "1"]),
        err("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
    );
    assert_eq!(
        c.cmd(&["XADD", "s", "MAXLEN", "1", "LIMIT", "5", "*", "a", "1"]),
        err("ERR syntax error, LIMIT cannot be used without the special ~ option")
    );
    assert_eq!(c.cmd(&["XADD", "nope", "NOMKSTREAM", "*", "a", "1"]), Frame::Null);
    assert_eq!(c.cmd(&["EXISTS", "nope"]), int(0));
    assert_eq!(c.cmd(&["XRANGE", "s", "(5-1", "+"]), arr(vec![entry("5-2", &["a", "2"])]));
    assert_eq!(c.cmd(&["XREVRANGE", "s", "+", "-", "COUNT", "1"]), arr(vec![entry("5-2", &["a", "2"])]));
    assert_eq!(c.raw_cmd(&["XRANGE", "s", "-", "+", "COUNT", "0"]), b"*-1\r\n".to_vec());
    assert_eq!(c.cmd(&["XRANGE", "s", "(-", "+"]), err("ERR Invalid stream ID specified as stream command argument"));
    // Exact MAXLEN trims to the entry; `~` only drops whole nodes.
    c.cmd(&["CONFIG", "SET", "stream-node-max-entries", "10"]);
    for i in 0..100 {
        c.cmd(&["XADD", "t", "*", "i", &i.to_string()]);
    }
    assert_eq!(c.cmd(&["XTRIM", "t", "MAXLEN", "~", "55"]), int(40));
    assert_eq!(c.cmd(&["XLEN", "t"]), int(60));
    assert_eq!(c.cmd(&["XTRIM", "t", "MAXLEN", "55"]), int(5));
    assert_eq!(c.cmd(&["TYPE", "t"]), simple("stream"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "t"]), bulk("stream"));
    assert_eq!(c.cmd(&["COPY", "t", "t2"]), int(1));
    assert_eq!(c.cmd(&["XLEN", "t2"]), int(55));
}

#[test]
fn blocked_readers_are_served_in_arrival_order_from_the_key_that_changed() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    admin.cmd(&["XADD", "a", "1-0", "old", "x"]);
    let mut r1 = srv.client();
    let mut r2 = srv.client();
    r1.send(&wire(&["XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$"]));
    wait_blocked(&mut admin, 1);
    r2.send(&wire(&["XREAD", "BLOCK", "0", "STREAMS", "b", "0"]));
    wait_blocked(&mut admin, 2);
    admin.cmd(&["XADD", "b", "7-0", "new", "y"]);
    let got = arr(vec![arr(vec![bulk("b"), arr(vec![entry("7-0", &["new", "y"])])])]);
    assert_eq!(r1.read_frame(), got);
    assert_eq!(r2.read_frame(), got);
    // A timeout is a null array; an entry not above `$` does not wake.
    assert_eq!(admin.raw_cmd(&["XREAD", "BLOCK", "50", "STREAMS", "a", "$"]), b"*-1\r\n".to_vec());
}

#[test]
fn group_readers_fail_when_their_stream_or_group_goes() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let mut r = srv.client();
    let read = |r: &mut Client| {
        r.send(&wire(&["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"]));
    };
    for kill in [&["DEL", "s"][..], &["SET", "s", "x"][..], &["FLUSHALL"][..]] {
        admin.cmd(&["DEL", "s"]);
        admin.cmd(&["XADD", "s", "1-0", "f", "v"]);
        assert_eq!(admin.cmd(&["XGROUP", "CREATE", "s", "g", "$"]), ok());
        read(&mut r);
        wait_blocked(&mut admin, 1);
        admin.cmd(kill);
        assert_eq!(r.read_frame(), err("UNBLOCKED the stream key no longer exists"), "after {kill:?}");
    }
    admin.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    read(&mut r);
    wait_blocked(&mut admin, 1);
    admin.cmd(&["XGROUP", "DESTROY", "s", "g"]);
    assert_eq!(r.read_frame(), err("NOGROUP the consumer group this client was blocked on no longer exists"));
}

#[test]
fn a_blocked_group_read_pipelined_between_commands_keeps_reply_order() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    admin.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    let mut r = srv.client();
    let mut batch = wire(&["PING", "one"]);
    batch.extend(wire(&["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"]));
    batch.extend(wire(&["PING", "two"]));
    r.send(&batch);
    assert_eq!(r.read_frame(), bulk("one"));
    wait_blocked(&mut admin, 1);
    admin.cmd(&["XADD", "s", "3-0", "k", "v"]);
    assert_eq!(r.read_frame(), arr(vec![arr(vec![bulk("s"), arr(vec![entry("3-0", &["k", "v"])])])]));
    assert_eq!(r.read_frame(), bulk("two"));
}

#[test]
fn the_aof_gets_exact_ids_and_trims_and_replays_deliveries() {
    let dir = DataDir::new("streams");
    let mut srv = start_aof(&dir, &["--appendfsync", "always", "--stream-node-max-entries", "4"]);
    let mut c = srv.client();
    for _ in 0..10 {
        c.cmd(&["XADD", "s", "MAXLEN", "~", "5", "*", "f", "v"]);
    }
    c.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    let Frame::Array(read) = c.cmd(&["XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"]) else {
        panic!("XREADGROUP replied no array")
    };
    let before = c.cmd(&["XRANGE", "s", "-", "+"]);
    let history = c.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"]);
    assert_eq!(read.len(), 1);
    let aof = std::fs::read_to_string(dir.last_incr()).unwrap();
    assert!(!aof.contains("\r\n*\r\n"), "generated IDs are written explicitly: {aof}");
    assert!(aof.contains("$1\r\n=\r\n") && !aof.contains("$1\r\n~\r\n"), "approximate trims are written exact: {aof}");
    assert!(aof.contains("XCLAIM") && !aof.contains("XREADGROUP"), "deliveries replay as XCLAIM: {aof}");
    kill9(&mut srv);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["XRANGE", "s", "-", "+"]), before);
    assert_eq!(c.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"]), history);
}
