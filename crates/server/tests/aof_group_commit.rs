//! Group commit with `appendfsync always`, seen through strace: a pipelined
//! batch of writes costs one AOF write and one fdatasync, and no reply is
//! written to a socket before the fdatasync that makes its write durable.
mod aof_support;
mod common;

use std::io::Read;

use aof_support::*;
use common::*;

/// `n` pipelined SETs sent with one write; all replies read.
fn pipelined_sets(c: &mut Client, n: usize) {
    let mut req = Vec::new();
    for i in 0..n {
        resp::encode_command(&mut req, &["SET", &format!("key:{i}"), "value"]);
    }
    c.send(&req);
    let mut got = vec![0u8; n * 5];
    c.stream.read_exact(&mut got).unwrap();
    assert!(got.chunks(5).all(|r| r == b"+OK\r\n"));
}

#[test]
fn ten_thousand_pipelined_sets_cost_one_fdatasync() {
    let dir = DataDir::new("group");
    let srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
    let n = 10_000;
    let trace = traced(&srv, &["-e", "trace=fsync,fdatasync"], || pipelined_sets(&mut c, n));
    let syncs = trace.lines().filter(|l| l.contains("fdatasync(") || l.contains("fsync(")).count();
    eprintln!("{n} pipelined SETs: {syncs} fsync/fdatasync calls");
    // One batch is one read and one turn unless TCP splits it; allow for a
    // few splits, never one per command.
    assert!((1..=3).contains(&syncs), "{syncs} fsyncs for {n} pipelined writes:\n{trace}");
    assert_eq!(c.cmd(&["DBSIZE"]), int(n as i64));
}

#[test]
fn no_reply_leaves_before_its_write_is_fsynced() {
    let dir = DataDir::new("order");
    let srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
    let trace = traced(&srv, &["-e", "trace=write,writev,sendto,fdatasync,fsync", "-s", "8"], || {
        for _ in 0..5 {
            pipelined_sets(&mut c, 500);
        }
    });
    // Walk the trace in order: an AOF write makes data unsynced until the
    // next fdatasync *returns* (the commit thread's call may be shown as
    // "<unfinished ...>" then "<... fdatasync resumed>"); a reply ("+OK")
    // must never be written meanwhile.
    let (mut unsynced, mut replies, mut syncs) = (false, 0, 0);
    for line in trace.lines() {
        let sync_call = line.contains("fdatasync(") || line.contains("fsync(");
        if (sync_call && !line.contains("unfinished")) || line.contains("sync resumed>") {
            unsynced = false;
            syncs += 1;
        } else if line.contains("\"*2\\r\\n$6\\r\\nSE") || line.contains("\"*3\\r\\n$3\\r\\nSET") {
            unsynced = true;
        } else if line.contains("\"+OK\\r\\n") {
            assert!(!unsynced, "a reply was written before its write was fsynced:\n{trace}");
            replies += 1;
        }
    }
    assert!(replies >= 5 && syncs >= 5, "replies {replies}, syncs {syncs}:\n{trace}");
}
