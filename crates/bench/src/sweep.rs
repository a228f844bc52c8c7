//! Throughput against pipeline depth and injected RTT, for one or more
//! servers: GET and SET, warm-up, the median of `repeat` timed runs, and
//! per-batch latency percentiles (hdrhistogram). Results go to a CSV and two
//! PNG charts (see [`crate::plot`]). The result types ([`Point`], [`Op`])
//! live in [`crate::point`], which both this file and `plot` read.

use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use resp::{encode_command, Frame};

use crate::conn::{ok_reply, proto_err, Conn};
use crate::point::{Op, Point};
use crate::proxy::spawn_proxy;

/// What to sweep.
#[derive(Debug, Clone)]
pub struct SweepOpts {
    /// `(name, address)` of each server.
    pub servers: Vec<(String, SocketAddr)>,
    /// AUTH password, if any (same for all servers).
    pub password: Option<String>,
    /// Pipeline depths (commands per batch).
    pub depths: Vec<usize>,
    /// Injected RTTs in milliseconds (0 = direct connection).
    pub rtts_ms: Vec<f64>,
    /// Timed runs per point; the median throughput is reported.
    pub repeat: usize,
    /// Minimum duration of one timed run (at least two batches are sent).
    pub budget: Duration,
    /// Warm-up duration before the timed runs of each point.
    pub warmup: Duration,
    /// Output directory for `sweep.csv` and the PNGs.
    pub out: PathBuf,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

const VALUE: &str = "0123456789abcdef";
const KEYS: usize = 10_000;

fn key(j: usize) -> String {
    format!("volley-bench:sweep:{}", j % KEYS)
}

fn batch(op: Op, depth: usize) -> Vec<u8> {
    let mut req = Vec::new();
    for j in 0..depth {
        match op {
            Op::Get => encode_command(&mut req, &["GET", &key(j)]),
            Op::Set => encode_command(&mut req, &["SET", &key(j), VALUE]),
        }
    }
    req
}

/// Send one batch, check every reply, return its round-trip time.
fn run_batch(c: &mut Conn, op: Op, req: &[u8], depth: usize) -> io::Result<Duration> {
    let t = Instant::now();
    let mut bad = 0usize;
    let want_get = Frame::Bulk(VALUE.as_bytes().to_vec());
    c.pipeline_each(req, depth, |f| {
        let ok = match op {
            Op::Get => f == want_get,
            Op::Set => f == Frame::Simple(b"OK".to_vec()),
        };
        bad += usize::from(!ok);
    })?;
    if bad > 0 {
        return Err(proto_err(format!("{bad} of {depth} {} replies were wrong", op.name())));
    }
    Ok(t.elapsed())
}

/// Measure one point on an open connection.
pub fn measure(c: &mut Conn, op: Op, depth: usize, opts: &SweepOpts) -> io::Result<(Vec<f64>, Histogram<u64>, u64)> {
    let req = batch(op, depth);
    let mut hist = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).map_err(|e| proto_err(e.to_string()))?;
    let w = Instant::now();
    while w.elapsed() < opts.warmup {
        run_batch(c, op, &req, depth)?;
    }
    let mut runs = Vec::with_capacity(opts.repeat);
    let mut total = 0u64;
    for _ in 0..opts.repeat.max(1) {
        let (start, mut batches) = (Instant::now(), 0u64);
        while batches < 2 || start.elapsed() < opts.budget {
            let rt = run_batch(c, op, &req, depth)?;
            hist.saturating_record(rt.as_micros() as u64);
            batches += 1;
        }
        let ops = batches * depth as u64;
        total += ops;
        runs.push(ops as f64 / start.elapsed().as_secs_f64());
    }
    Ok((runs, hist, total))
}

/// Median of a non-empty slice.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn progress(opts: &SweepOpts) -> ProgressBar {
    let total = opts.servers.len() * opts.rtts_ms.len() * opts.depths.len() * 2;
    if !opts.progress {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total as u64);
    pb.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} points, eta {eta} {msg}").unwrap());
    pb
}

/// Fill the GET keys on a server.
fn prepare(addr: SocketAddr, password: Option<&str>, depth_max: usize) -> io::Result<()> {
    let mut c = Conn::connect(addr, password)?;
    let n = depth_max.min(KEYS);
    let cmds: Vec<Vec<String>> = (0..n).map(|j| vec!["SET".into(), key(j), VALUE.into()]).collect();
    for f in c.pipeline(&cmds)? {
        ok_reply(f)?;
    }
    Ok(())
}

/// Delete the keys [`prepare`] and the SET points wrote.
fn cleanup(addr: SocketAddr, password: Option<&str>) -> io::Result<()> {
    let mut c = Conn::connect(addr, password)?;
    let mut args = vec!["DEL".to_string()];
    args.extend((0..KEYS).map(key));
    ok_reply(c.cmd(&args)?).map(|_| ())
}

/// Run the whole sweep: returns the points (also written to `opts.out`).
pub fn run_sweep(opts: &SweepOpts) -> io::Result<Vec<Point>> {
    let pb = progress(opts);
    let mut points = Vec::new();
    let depth_max = opts.depths.iter().copied().max().unwrap_or(1);
    for (name, addr) in &opts.servers {
        prepare(*addr, opts.password.as_deref(), depth_max)?;
        for &rtt_ms in &opts.rtts_ms {
            let rtt = Duration::from_secs_f64(rtt_ms / 1e3);
            let (target, _proxy) = if rtt > Duration::ZERO {
                let (a, h) = spawn_proxy(*addr, rtt)?;
                (a, Some(h))
            } else {
                (*addr, None)
            };
            let mut c = Conn::connect(target, opts.password.as_deref())?;
            for &depth in &opts.depths {
                for op in [Op::Get, Op::Set] {
                    pb.set_message(format!("{name} rtt={rtt_ms}ms depth={depth} {}", op.name()));
                    let (runs, hist, ops) = measure(&mut c, op, depth, opts)?;
                    let batch_us = [hist.value_at_quantile(0.5), hist.value_at_quantile(0.99), hist.max()];
                    let ops_per_sec = median(&runs);
                    points.push(Point { server: name.clone(), rtt_ms, depth, op, ops_per_sec, runs, batch_us, ops });
                    pb.inc(1);
                }
            }
        }
        cleanup(*addr, opts.password.as_deref())?;
    }
    pb.finish_and_clear();
    std::fs::create_dir_all(&opts.out)?;
    write_csv(&points, &opts.out.join("sweep.csv"))?;
    crate::plot::plot_depth(&points, &opts.out.join("throughput_vs_depth.png"))?;
    crate::plot::plot_rtt(&points, &opts.out.join("throughput_vs_rtt.png"))?;
    Ok(points)
}

/// Write the points as CSV (one row per point).
pub fn write_csv(points: &[Point], path: &Path) -> io::Result<()> {
    let mut s =
        String::from("server,rtt_ms,depth,op,ops_per_sec_median,runs,batch_p50_us,batch_p99_us,batch_max_us,ops\n");
    for p in points {
        let runs: Vec<String> = p.runs.iter().map(|r| format!("{r:.0}")).collect();
        let [p50, p99, max] = p.batch_us;
        let _ = writeln!(
            s,
            "{},{},{},{},{:.0},{},{p50},{p99},{max},{}",
            p.server,
            p.rtt_ms,
            p.depth,
            p.op.name(),
            p.ops_per_sec,
            runs.join(";"),
            p.ops
        );
    }
    std::fs::write(path, s)
}

/// A short text summary of the points (printed by the CLI).
pub fn format_points(points: &[Point]) -> String {
    let mut s = format!(
        "{:<10} {:>7} {:>6} {:>4} {:>12} {:>11} {:>11}\n",
        "server", "rtt_ms", "depth", "op", "ops/s", "batch p50", "batch p99"
    );
    for p in points {
        let _ = writeln!(
            s,
            "{:<10} {:>7} {:>6} {:>4} {:>12.0} {:>9}us {:>9}us",
            p.server,
            p.rtt_ms,
            p.depth,
            p.op.name(),
            p.ops_per_sec,
            p.batch_us[0],
            p.batch_us[1]
        );
    }
    s
}
