//! MULTI/EXEC/DISCARD/WATCH over real TCP, checked against Redis 7.0.15's
//! replies: queueing, EXECABORT, runtime errors in place, WATCH races from
//! another connection, expiry and flushes as modifications, no interleaving.
mod common;
use std::io::Write;
use std::time::Duration;

use common::*;

#[test]
fn queue_and_exec() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "s", "x"]), ok());
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["INCR", "s"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["SET", "t", "1"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["GET", "t"]), simple("QUEUED"));
    // Runtime errors come back in place; the rest still runs (no rollback).
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![err("ERR value is not an integer or out of range"), ok(), bulk("1")]));
}

#[test]
fn control_errors_match_redis() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["EXEC"]), err("ERR EXEC without MULTI"));
    assert_eq!(c.cmd(&["DISCARD"]), err("ERR DISCARD without MULTI"));
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["MULTI"]), err("ERR MULTI calls can not be nested"));
    assert_eq!(c.cmd(&["WATCH", "a"]), err("ERR WATCH inside MULTI is not allowed"));
    // Neither error aborts the transaction.
    assert_eq!(c.cmd(&["SET", "a", "1"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![ok()]));
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["SET", "a", "2"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["DISCARD"]), ok());
    assert_eq!(c.cmd(&["GET", "a"]), bulk("1"));
}

#[test]
fn queueing_errors_abort_exec() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for bad in [&["NOPE"][..], &["GET"][..]] {
        assert_eq!(c.cmd(&["MULTI"]), ok());
        assert_eq!(c.cmd(&["SET", "k", "v"]), simple("QUEUED"));
        assert!(matches!(c.cmd(bad), Frame::Error(_)));
        assert_eq!(c.cmd(&["EXEC"]), err("EXECABORT Transaction discarded because of previous errors."));
    }
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
}

#[test]
fn watch_sees_another_clients_write() {
    let srv = TestServer::start(&[]);
    let (mut a, mut b) = (srv.client(), srv.client());
    assert_eq!(a.cmd(&["SET", "k", "1"]), ok());
    assert_eq!(a.cmd(&["WATCH", "k"]), ok());
    assert_eq!(b.cmd(&["SET", "k", "2"]), ok());
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["SET", "k", "mine"]), simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]), Frame::Null);
    assert_eq!(a.cmd(&["GET", "k"]), bulk("2"));
    // The failed EXEC unwatched: the next transaction goes through.
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["SET", "k", "mine"]), simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]), arr(vec![ok()]));
}

#[test]
fn watch_ignores_writes_that_change_nothing_and_unwatch_forgets() {
    let srv = TestServer::start(&[]);
    let (mut a, mut b) = (srv.client(), srv.client());
    assert_eq!(a.cmd(&["SET", "k", "1"]), ok());
    assert_eq!(a.cmd(&["WATCH", "k", "other"]), ok());
    assert_eq!(b.cmd(&["SETNX", "k", "2"]), int(0));
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["INCR", "k"]), simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]), arr(vec![int(2)]));
    assert_eq!(a.cmd(&["WATCH", "k"]), ok());
    assert_eq!(a.cmd(&["UNWATCH"]), ok());
    assert_eq!(b.cmd(&["SET", "k", "9"]), ok());
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["GET", "k"]), simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]), arr(vec![bulk("9")]));
}

#[test]
fn expiry_and_flush_count_as_changes() {
    let srv = TestServer::start(&[]);
    let (mut a, mut b) = (srv.client(), srv.client());
    assert_eq!(a.cmd(&["SET", "k", "1", "PX", "50"]), ok());
    assert_eq!(a.cmd(&["WATCH", "k"]), ok());
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["PING"]), simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]), Frame::Null);
    assert_eq!(a.cmd(&["SET", "f", "1"]), ok());
    assert_eq!(a.cmd(&["WATCH", "f"]), ok());
    assert_eq!(b.cmd(&["FLUSHALL"]), ok());
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["PING"]), simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]), Frame::Null);
}

#[test]
fn resp3_aborted_exec_is_null_and_blocking_commands_do_not_block() {
    let srv = TestServer::start(&[]);
    let (mut a, mut b) = (srv.client(), srv.client());
    assert!(matches!(a.cmd(&["HELLO", "3"]), Frame::Map(_)));
    assert_eq!(a.cmd(&["WATCH", "w"]), ok());
    assert_eq!(b.cmd(&["SET", "w", "1"]), ok());
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["PING"]), simple("QUEUED"));
    assert_eq!(a.raw_cmd(&["EXEC"]), b"_\r\n");
    // Inside MULTI a blocking pop answers at once, like its non-blocking form.
    let mut c = srv.client();
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["BZPOPMIN", "nothing", "0"]), simple("QUEUED"));
    assert_eq!(c.raw_cmd(&["EXEC"]), b"*1\r\n*-1\r\n");
}

#[test]
fn pipelined_transaction_does_not_interleave() {
    let srv = TestServer::start(&[]);
    let mut a = srv.client();
    let mut b = srv.client();
    assert_eq!(a.cmd(&["SET", "c", "0"]), ok());
    let n = 2000;
    let mut req = Vec::new();
    resp::encode_command(&mut req, &["MULTI"]);
    for _ in 0..n {
        resp::encode_command(&mut req, &["INCR", "c"]);
    }
    resp::encode_command(&mut req, &["EXEC"]);
    // Another client hammers the same key meanwhile.
    let port = srv.port;
    let hammer = std::thread::spawn(move || {
        let mut h = Client::connect(port);
        for _ in 0..300 {
            h.cmd(&["INCRBY", "c", "1000000"]);
        }
    });
    a.stream.write_all(&req).unwrap();
    assert_eq!(a.read_frame(), ok());
    for _ in 0..n {
        assert_eq!(a.read_frame(), simple("QUEUED"));
    }
    let Frame::Array(results) = a.read_frame() else { panic!("EXEC must return an array") };
    hammer.join().unwrap();
    let values: Vec<i64> =
        results.iter().map(|f| if let Frame::Integer(i) = f { *i } else { panic!("{f:?}") }).collect();
    assert!(values.windows(2).all(|w| w[1] == w[0] + 1), "another client's write ran inside EXEC");
    assert_eq!(b.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn client_list_shows_multi_and_blocked_clients() {
    let srv = TestServer::start(&[]);
    let mut tx = srv.client();
    let mut waiter = srv.client();
    let mut admin = srv.client();
    assert_eq!(tx.cmd(&["MULTI"]), ok());
    assert_eq!(tx.cmd(&["PING"]), simple("QUEUED"));
    waiter.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n");
    std::thread::sleep(Duration::from_millis(50));
    let Frame::Bulk(list) = admin.cmd(&["CLIENT", "LIST"]) else { panic!("CLIENT LIST reply") };
    let list = String::from_utf8(list).unwrap();
    assert!(list.lines().any(|l| l.contains(" flags=x ") && l.contains(" multi=1 ")), "{list}");
    assert!(list.lines().any(|l| l.contains(" flags=b ") && l.contains(" cmd=blpop ")), "{list}");
}

#[test]
fn watch_sees_pops_by_numkeys_commands() {
    let srv = TestServer::start(&[]);
    let (mut a, mut b) = (srv.client(), srv.client());
    assert_eq!(a.cmd(&["RPUSH", "l", "x", "y"]), int(2));
    assert_eq!(a.cmd(&["ZADD", "z", "1", "m", "2", "n"]), int(2));
    for (watched, pop) in [("l", vec!["LMPOP", "2", "other", "l", "LEFT"]), ("z", vec!["ZMPOP", "1", "z", "MIN"])] {
        assert_eq!(a.cmd(&["WATCH", watched]), ok());
        assert!(matches!(b.cmd(&pop), Frame::Array(_)));
        assert_eq!(a.cmd(&["MULTI"]), ok());
        assert_eq!(a.cmd(&["PING"]), simple("QUEUED"));
        assert_eq!(a.cmd(&["EXEC"]), Frame::Null, "{pop:?} must touch the watched {watched}");
    }
}

#[test]
fn del_touches_only_the_keys_it_deleted() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "other", "1"]), ok());
    assert_eq!(c.cmd(&["WATCH", "absent"]), ok());
    // Deletes `other` but finds `absent` missing: the watched key is unchanged.
    assert_eq!(c.cmd(&["DEL", "absent", "other"]), int(1));
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["PING"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![simple("PONG")]));
    for del in ["DEL", "UNLINK"] {
        assert_eq!(c.cmd(&["SET", "watched", "1"]), ok());
        assert_eq!(c.cmd(&["WATCH", "watched"]), ok());
        assert_eq!(c.cmd(&[del, "watched", "absent"]), int(1));
        assert_eq!(c.cmd(&["MULTI"]), ok());
        assert_eq!(c.cmd(&["PING"]), simple("QUEUED"));
        assert_eq!(c.cmd(&["EXEC"]), Frame::Null, "{del} of a watched key aborts");
    }
}

/// WATCH `watched`, run `cmd`, then a one-command transaction: its EXEC
/// reply tells whether `cmd` counted as modifying `watched`.
fn aborts_watch(c: &mut Client, watched: &str, cmd: &[&str]) -> bool {
    assert_eq!(c.cmd(&["WATCH", watched]), ok());
    c.cmd(cmd);
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["PING"]), simple("QUEUED"));
    match c.cmd(&["EXEC"]) {
        Frame::Null => true,
        other => {
            assert_eq!(other, arr(vec![simple("PONG")]));
            false
        }
    }
}

#[test]
fn watch_sees_exactly_the_keys_a_command_changed() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    // A pop from the first non-empty of several keys changes only that one.
    c.cmd(&["RPUSH", "full", "a", "b", "c"]);
    c.cmd(&["ZADD", "zfull", "1", "m", "2", "n"]);
    assert!(!aborts_watch(&mut c, "empty", &["BLPOP", "empty", "full", "0"]));
    assert!(aborts_watch(&mut c, "full", &["BLPOP", "empty", "full", "0"]));
    assert!(!aborts_watch(&mut c, "empty", &["LMPOP", "2", "empty", "full", "LEFT"]));
    assert!(!aborts_watch(&mut c, "empty", &["BZPOPMAX", "empty", "zfull", "0"]));
    assert!(!aborts_watch(&mut c, "empty", &["ZMPOP", "2", "empty", "zfull", "MIN"]));
    // LTRIM that keeps every element still counts as a change (as in Redis).
    c.cmd(&["RPUSH", "l", "1", "2"]);
    assert!(aborts_watch(&mut c, "l", &["LTRIM", "l", "0", "-1"]));
    // COPY to another db changes the key there, not the same name here.
    c.cmd(&["SET", "src", "v"]);
    c.cmd(&["SET", "dst", "here"]);
    assert!(!aborts_watch(&mut c, "dst", &["COPY", "src", "dst", "DB", "2"]));
    assert!(aborts_watch(&mut c, "dst", &["COPY", "src", "dst", "REPLACE"]));
}

#[test]
fn move_signals_the_key_in_the_target_db() {
    let srv = TestServer::start(&[]);
    let (mut a, mut b) = (srv.client(), srv.client());
    assert_eq!(b.cmd(&["SELECT", "1"]), ok());
    assert_eq!(b.cmd(&["WATCH", "k"]), ok());
    a.cmd(&["SET", "k", "v"]);
    assert_eq!(a.cmd(&["MOVE", "k", "1"]), int(1));
    assert_eq!(b.cmd(&["MULTI"]), ok());
    assert_eq!(b.cmd(&["GET", "k"]), simple("QUEUED"));
    assert_eq!(b.cmd(&["EXEC"]), Frame::Null, "the key appeared in db 1");
}

const BUSY: &str = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

/// Start an endless script on `runner` and wait until `probe` sees -BUSY.
fn start_busy_script(runner: &mut Client, probe: &mut Client) {
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["EVAL", "while true do end", "0"]);
    runner.send(&out);
    // Let the script start before probing: a command the loop has already
    // read when the script starts waits for the script to end.
    std::thread::sleep(Duration::from_millis(100));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while probe.cmd(&["PING"]) != err(BUSY) {
        assert!(std::time::Instant::now() < deadline, "the script never got busy");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn exec_during_busy_script_discards_the_transaction() {
    let srv = TestServer::start(&["--busy-reply-threshold", "50"]);
    let (mut runner, mut a, mut b) = (srv.client(), srv.client(), srv.client());
    assert_eq!(a.cmd(&["SET", "xx", "1"]), ok());
    assert_eq!(a.cmd(&["WATCH", "w"]), ok());
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["INCR", "xx"]), simple("QUEUED"));
    // While the script runs, MULTI is allowed (so pipelined transactions
    // stay whole) but a queued command is refused and flags the block.
    assert_eq!(b.cmd(&["MULTI"]), ok());
    start_busy_script(&mut runner, &mut b);
    assert_eq!(b.cmd(&["INCR", "xx"]), err(BUSY));
    // EXEC is refused too, and that discards the transaction and its
    // WATCHes, whether or not MULTI was called.
    let abort = format!("-EXECABORT Transaction discarded because of: {BUSY}\r\n");
    assert_eq!(a.raw_cmd(&["EXEC"]), abort.as_bytes());
    assert_eq!(srv.client().raw_cmd(&["EXEC"]), abort.as_bytes());
    assert_eq!(a.raw_cmd(&["SCRIPT", "KILL"]), b"+OK\r\n");
    assert!(runner.raw_cmd(&["PING"]).starts_with(b"-ERR Script killed by user with SCRIPT KILL..."));
    assert_eq!(runner.read_raw(), b"+PONG\r\n");
    assert_eq!(a.raw_cmd(&["PING", "out of multi"]), b"$12\r\nout of multi\r\n");
    assert_eq!(a.cmd(&["EXEC"]), err("ERR EXEC without MULTI"));
    assert_eq!(b.cmd(&["EXEC"]), err("EXECABORT Transaction discarded because of previous errors."));
    assert_eq!(a.cmd(&["GET", "xx"]), bulk("1"));
    // The WATCH went with the transaction: a write to w fails nothing.
    assert_eq!(b.cmd(&["SET", "w", "1"]), ok());
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["GET", "w"]), simple("QUEUED"));
    assert_eq!(a.raw_cmd(&["EXEC"]), b"*1\r\n$1\r\n1\r\n");
}

#[test]
fn save_and_shutdown_cannot_be_queued() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for cmd in [&["SAVE"][..], &["SHUTDOWN"], &["SHUTDOWN", "NOSAVE"]] {
        assert_eq!(c.cmd(&["MULTI"]), ok());
        assert_eq!(c.cmd(&["SET", "foo", "bar"]), simple("QUEUED"));
        assert_eq!(c.raw_cmd(cmd), b"-ERR Command not allowed inside a transaction\r\n", "{cmd:?}");
        assert_eq!(c.cmd(&["EXEC"]), err("EXECABORT Transaction discarded because of previous errors."));
    }
    assert_eq!(c.raw_cmd(&["GET", "foo"]), b"$-1\r\n");
}
