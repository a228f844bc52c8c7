//! Integration tests for volley-bench: the delay proxy's timing and byte
//! order, the seeds runner and the sweep against a real redis-server started
//! on a free loopback port. A missing redis-server is a failure, not a skip
//! (the repo's install script installs it).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::{start_redis, Server};
use volley_bench::seeds::{format_table, run_seeds, SeedOpts};
use volley_bench::spawn_proxy;
use volley_bench::sweep::{run_sweep, SweepOpts};

/// An echo server on a free port, one thread per connection.
fn echo_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || s.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn proxy_adds_the_rtt_once_per_round_trip() {
    let echo = echo_server();
    let (addr, _proxy) = spawn_proxy(echo, Duration::from_millis(20)).unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for _ in 0..5 {
        let t = Instant::now();
        s.write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        s.read_exact(&mut got).unwrap();
        let el = t.elapsed();
        assert_eq!(&got, b"ping");
        assert!(el >= Duration::from_millis(20), "round trip took {el:?} < 20 ms");
        assert!(el < Duration::from_millis(40), "round trip took {el:?} >= 40 ms");
    }
}

#[test]
fn proxy_preserves_bytes_in_order_and_does_not_serialize_delays() {
    let echo = echo_server();
    let (addr, _proxy) = spawn_proxy(echo, Duration::from_millis(20)).unwrap();
    let s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let data: Vec<u8> = (0..2_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let mut w = s.try_clone().unwrap();
    let sent = data.clone();
    let start = Instant::now();
    // 200 chunks of varying size, 1 ms apart: if each chunk waited for the
    // previous one's delay this would take 200 × 10 ms per direction.
    let writer = thread::spawn(move || {
        let mut off = 0;
        let mut k = 0;
        while off < sent.len() {
            let len = (1 + k * 7919 % 20_000).min(sent.len() - off);
            w.write_all(&sent[off..off + len]).unwrap();
            off += len;
            k += 1;
            if k < 200 {
                thread::sleep(Duration::from_millis(1));
            }
        }
        k
    });
    let mut got = vec![0u8; data.len()];
    (&s).read_exact(&mut got).unwrap();
    let chunks = writer.join().unwrap();
    let el = start.elapsed();
    assert!(chunks >= 150, "only {chunks} chunks");
    assert!(got == data, "bytes differ after the proxy");
    assert!(el < Duration::from_millis(1500), "took {el:?}: chunks were serialized behind each other's delays");
}

#[test]
fn dropping_the_proxy_closes_its_connections() {
    let echo = echo_server();
    let (addr, proxy) = spawn_proxy(echo, Duration::from_millis(2)).unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"x").unwrap();
    let mut b = [0u8; 1];
    s.read_exact(&mut b).unwrap();
    drop(proxy);
    let n = s.read(&mut b).unwrap_or(0);
    assert_eq!(n, 0, "connection still open after the proxy stopped");
}

#[test]
fn cli_seeds_prints_the_table_and_exits_zero() {
    let server = start_redis();
    let port = server.addr.port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_volley-bench"))
        .args(["seeds", "-h", "127.0.0.1", "-p", &port, "--scale", "0.005", "--rtt", "0.5ms", "--max-serial", "10"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "exit {:?}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.lines().filter(|l| l.contains("| ok: ")).count(), 9, "{stdout}");
    assert!(stdout.contains("extrapolated from 10"), "{stdout}");
}

fn seed_opts(server: &Server, rtt: Duration, max_serial: usize) -> SeedOpts {
    SeedOpts { addr: server.addr, password: None, rtt, scale: 0.01, max_serial, progress: false, only: vec![] }
}

#[test]
fn seeds_run_against_redis_with_all_checks_passing() {
    let server = start_redis();
    let mut seen = 0;
    let rows = run_seeds(&seed_opts(&server, Duration::ZERO, 10_000), &mut |_| seen += 1).unwrap().rows;
    let table = format_table(&rows, "test");
    println!("{table}");
    assert_eq!(rows.len(), 9, "{table}");
    assert_eq!(seen, 9);
    for r in &rows {
        assert!(r.check.is_ok(), "{}: {:?}", r.label, r.check);
        assert!(r.extrapolated_from.is_none(), "{} should not be extrapolated", r.label);
    }
    assert!(table.contains("5,844 ms") && table.contains("32.16 s") && table.contains("208 s"));
}

#[test]
fn seeds_only_sets_reports_client_rss_and_cpu_per_row() {
    let server = start_redis();
    let mut opts = seed_opts(&server, Duration::from_millis(1), 100);
    opts.only = vec!["sets".into()];
    let rows = run_seeds(&opts, &mut |_| {}).unwrap().rows;
    let table = format_table(&rows, "test");
    println!("{table}");
    let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels.len(), 3, "only the 1M-SET seed: {labels:?}");
    assert!(labels.iter().all(|l| l.contains("SET")), "{labels:?}");
    for r in &rows {
        assert!(r.check.is_ok(), "{}: {:?}", r.label, r.check);
        let cost = r.cost.expect("every row is metered");
        let rss = cost.peak_rss_kib.expect("peak RSS reset per row");
        assert!(rss > 1024 && rss < 1024 * 1024, "{}: {rss} KiB", r.label);
        assert!(r.cpu_per_op().unwrap() > Duration::ZERO, "{}", r.label);
    }
    assert!(table.contains("client peak RSS") && table.contains("client CPU/op"), "{table}");
}

#[test]
fn seeds_through_the_proxy_extrapolate_capped_rows() {
    let server = start_redis();
    let report = run_seeds(&seed_opts(&server, Duration::from_millis(2), 20), &mut |_| {}).unwrap();
    assert!(report.ping_rtt >= Duration::from_millis(2), "PING through a 2 ms proxy took {:?}", report.ping_rtt);
    let rows = report.rows;
    let table = format_table(&rows, "test");
    println!("{table}");
    assert_eq!(rows.len(), 9);
    for r in &rows {
        assert!(r.check.is_ok(), "{}: {:?}", r.label, r.check);
    }
    let serial_set = rows.iter().find(|r| r.label.contains("SET, one by one")).unwrap();
    assert_eq!(serial_set.extrapolated_from, Some(20));
    // 10k SETs one by one at 2 ms RTT: at least 20 s once extrapolated.
    assert!(serial_set.measured >= Duration::from_secs(20), "{:?}", serial_set.measured);
    assert!(table.contains("extrapolated from 20"), "{table}");
}

#[test]
fn sweep_writes_csv_and_png() {
    let server = start_redis();
    let out = std::env::temp_dir().join(format!("volley-bench-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let opts = SweepOpts {
        servers: vec![("redis".into(), server.addr), ("again".into(), server.addr)],
        password: None,
        depths: vec![1, 10, 100],
        rtts_ms: vec![0.0, 1.0],
        repeat: 2,
        budget: Duration::from_millis(20),
        warmup: Duration::from_millis(5),
        out: out.clone(),
        progress: false,
    };
    let points = run_sweep(&opts).unwrap();
    assert_eq!(points.len(), 2 * 2 * 3 * 2);
    assert!(points.iter().all(|p| p.ops_per_sec > 0.0 && p.runs.len() == 2));
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + points.len());
    assert!(csv.starts_with("server,rtt_ms,depth,op,"));
    for png in ["throughput_vs_depth.png", "throughput_vs_rtt.png"] {
        let bytes = std::fs::read(out.join(png)).unwrap();
        assert!(bytes.len() > 1000, "{png} is only {} bytes", bytes.len());
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{png} is not a PNG");
    }
    let _ = std::fs::remove_dir_all(&out);
}
