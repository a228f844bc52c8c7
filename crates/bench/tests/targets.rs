//! End-to-end test of `volley-bench targets` at tiny scale: a volley-server
//! and a redis-server are started on free loopback ports, the subcommand
//! runs against both and must print every target row with PASS or FAIL
//! (the verdicts themselves are not asserted: at this scale they are noise).
//! The volley-server binary comes from `VOLLEY_SERVER` or the workspace's
//! `target/{release,debug}`; a missing server is a failure, not a skip.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use volley_bench::conn::Conn;

/// A server child process, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start(bin: &str, extra: &[&str]) -> Server {
    let port = free_port();
    let mut args = vec!["--port".to_string(), port.to_string(), "--save".into(), String::new()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let child = Command::new(bin)
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
    let server = Server { child, port };
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(mut c) = Conn::connect(addr, None) {
            if c.cmd(&["PING"]).is_ok() {
                return server;
            }
        }
        assert!(Instant::now() < deadline, "{bin} did not come up on {addr}");
        thread::sleep(Duration::from_millis(20));
    }
}

fn volley_server_bin() -> String {
    if let Ok(b) = std::env::var("VOLLEY_SERVER") {
        return b;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target");
    for profile in ["release", "debug"] {
        let p = root.join(profile).join("volley-server");
        if p.exists() {
            return p.to_string_lossy().into_owned();
        }
    }
    panic!("volley-server not built: cargo build --release -p volley-server (or set VOLLEY_SERVER)")
}

#[test]
fn targets_subcommand_prints_every_row_for_both_servers() {
    let volley = start(&volley_server_bin(), &[]);
    let redis = start("redis-server", &["--bind", "127.0.0.1", "--appendonly", "no"]);
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_volley-bench"))
        .args(["targets", "-h", "127.0.0.1", "-p", &volley.port.to_string()])
        .args(["--redis-port", &redis.port.to_string()])
        .args(["--scale", "0.001", "--rtt", "1ms", "--set-rtt", "1ms", "--mux-rounds", "1"])
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
