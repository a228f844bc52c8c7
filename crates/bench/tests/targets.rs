//! End-to-end test of `volley-bench targets` at tiny scale: a volley-server
//! and a redis-server are started on free loopback ports, the subcommand
//! runs against both and must print every target row with PASS or FAIL
//! (the verdicts themselves are not asserted: at this scale they are noise).
//! The volley-server binary comes from `VOLLEY_SERVER` or the workspace's
//! `target/{release,debug}`; a missing server is a failure, not a skip.

use std::process::Command;
use std::time::{Duration, Instant};

mod common;

use common::{start, volley_server_bin};

#[test]
fn targets_subcommand_prints_every_row_for_both_servers() {
    let volley = start(&volley_server_bin(), &[]);
    let redis = common::start_redis();
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_volley-bench"))
        .args(["targets", "-h", "127.0.0.1", "-p", &volley.port().to_string()])
        .args(["--redis-port", &redis.port().to_string()])
        .args(["--scale", "0.001", "--rtt", "1ms", "--set-rtt", "1ms", "--mux-rounds", "1", "--set-rounds", "2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(t.elapsed() < Duration::from_secs(60), "took {:?}", t.elapsed());
    assert!(stderr.is_empty() || !stderr.contains("volley-bench:"), "error: {stderr}");
    for section in ["targets: volley-server", "targets: redis-server (reference)"] {
        assert!(stdout.contains(section), "no {section:?} in\n{stdout}");
    }
    let rows = [
        "10 GET unpipelined @ 1 ms",
        "10 pipelines of 1 GET @ 1 ms",
        "1k SET @ 1 ms: pipelined 10 chunks / coalesced",
        "1k SET pipelined: client peak RSS",
        "1k SET coalesced: client peak RSS",
        "1k SET coalesced-streamed: client peak RSS",
        "1k SET: client CPU/op, coalesced / pipelined",
        "1k SET @ 1 ms: pipelined / coalesced-streamed",
        "64 tasks x 10 GET, one conn: ops/s",
        "64 tasks x 10 GET, one conn: client CPU/op",
    ];
    for row in rows {
        let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with(row)).collect();
        assert_eq!(lines.len(), 2, "row {row:?} once per server in\n{stdout}");
        for l in lines {
            assert!(l.ends_with("PASS") || l.ends_with("FAIL") || l.ends_with("info"), "no verdict: {l}");
        }
    }
    // Exit status: 0 when every target passed, 1 otherwise; never a crash.
    assert!(matches!(out.status.code(), Some(0 | 1)), "status {:?}: {stderr}", out.status);
}
