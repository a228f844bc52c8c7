//! `volley-bench targets`: the acceptance targets, each printed as a
//! measured/expected ratio with PASS or FAIL.
//!
//! - RTT arithmetic (at `rtt`, default 3.3 ms, through the delay proxy):
//!   unpipelined GETs take count × RTT within 10 %; 10 pipelines finish
//!   within 1.5× of (10 × RTT + the same pipelines measured without proxy).
//! - 1M SETs at `set_rtt` (10 ms): `volley_client::Coalescer` at least 2×
//!   faster than pipelining in 10k chunks; each mode runs in a child process
//!   (`volley-bench set-child`) whose VmHWM must stay under 100 MiB; the
//!   modes alternate for `set_rounds` rounds and medians are compared. The
//!   coalesced mode holds all tickets until the end, as specified; a
//!   "coalesced-streamed" variant (tickets awaited as they resolve) is shown
//!   as information.
//! - Auto-pipelining: 64 tasks of GETs on one connection,
//!   `AutoPipelined` vs redis-rs `MultiplexedConnection`: ops/s ratio ≥ 1.2
//!   and client CPU per op no higher (medians over alternating rounds).

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use resp::{encode_command, Frame};

use crate::conn::{ok_reply, proto_err, Conn};
use crate::meter::proc_status_kib;
use crate::multiplex::{process_cpu, run_mux, Lib, MuxRun};
use crate::proxy::spawn_proxy;
use crate::seeds::fmt_dur;
use crate::sets::{coalesced_sets, dbsize, delete_set_keys, pipelined_sets, verify_sets, Tickets};
use crate::sweep::median;

/// What to check and where.
#[derive(Debug, Clone)]
pub struct TargetOpts {
    /// Server under test.
    pub addr: SocketAddr,
    /// AUTH password, if any.
    pub password: Option<String>,
    /// RTT for the GET targets.
    pub rtt: Duration,
    /// RTT for the 1M-SET target.
    pub set_rtt: Duration,
    /// Multiplier for every count and batch size (1.0 = as specified).
    pub scale: f64,
    /// Alternating rounds of the auto-pipelining comparison.
    pub mux_rounds: usize,
    /// The `volley-bench` binary, run as `set-child` for the SET modes.
    pub exe: PathBuf,
    /// Alternating rounds of the SET modes (medians are compared).
    pub set_rounds: usize,
    /// Target groups to check (`rtt`, `sets`, `mux`); empty = all.
    pub only: Vec<String>,
}

/// The target groups, in run order, as named by [`TargetOpts::only`].
pub const GROUPS: [&str; 3] = ["rtt", "sets", "mux"];

/// One checked target.
#[derive(Debug, Clone)]
pub struct Target {
    /// What was measured.
    pub name: String,
    /// The measurement (human readable).
    pub measured: String,
    /// What it is compared with.
    pub expected: String,
    /// measured / expected (or the ratio the target is about).
    pub ratio: f64,
    /// The rule, e.g. "0.90 ≤ ratio ≤ 1.10".
    pub rule: String,
    /// Whether the rule holds.
    pub pass: bool,
    /// Not a target, shown for context (never fails the run).
    pub info: bool,
}

impl TargetOpts {
    fn n(&self, base: usize) -> usize {
        ((base as f64 * self.scale).round() as usize).max(1)
    }
}

fn human(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

const GET_KEY: &str = "volley-bench:targets:get";
const GET_VAL: &str = "redis:pipelining:test value";

/// `batches` pipelines of `batch` GETs; errors if any value is wrong.
fn get_pipelines(c: &mut Conn, batches: usize, batch: usize) -> io::Result<Duration> {
    let mut req = Vec::new();
    for _ in 0..batch {
        encode_command(&mut req, &["GET", GET_KEY]);
    }
    let want = Frame::Bulk(GET_VAL.as_bytes().to_vec());
    let t = Instant::now();
    let mut good = 0;
    for _ in 0..batches {
        c.pipeline_each(&req, batch, |f| good += usize::from(f == want))?;
    }
    let el = t.elapsed();
    if good != batches * batch {
        return Err(proto_err(format!("{good}/{} GETs returned the value", batches * batch)));
    }
    Ok(el)
}

fn median_dur(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The two GET targets at `opts.rtt`.
fn rtt_targets(opts: &TargetOpts) -> io::Result<Vec<Target>> {
    let mut direct = Conn::connect(opts.addr, opts.password.as_deref())?;
    ok_reply(direct.cmd(&["SET", GET_KEY, GET_VAL])?)?;
    let (paddr, _proxy) = spawn_proxy(opts.addr, opts.rtt)?;
    let mut c = Conn::connect(paddr, opts.password.as_deref())?;
    let rtt_ms = opts.rtt.as_secs_f64() * 1e3;

    let n = opts.n(10_000);
    let want = Frame::Bulk(GET_VAL.as_bytes().to_vec());
    let t = Instant::now();
    for _ in 0..n {
        if c.cmd(&["GET", GET_KEY])? != want {
            return Err(proto_err("GET returned a wrong value"));
        }
    }
    let serial = t.elapsed();
    let expect = opts.rtt * n as u32;
    let r1 = serial.as_secs_f64() / expect.as_secs_f64();
    let a = Target {
        name: format!("{} GET unpipelined @ {rtt_ms} ms", human(n)),
        measured: fmt_dur(serial),
        expected: format!("{} ({} x RTT)", fmt_dur(expect), human(n)),
        ratio: r1,
        rule: "0.90 <= ratio <= 1.10".into(),
        pass: (0.9..=1.1).contains(&r1),
        info: false,
    };

    let batch = opts.n(1_000);
    let base = median_dur((0..5).map(|_| get_pipelines(&mut direct, 10, batch)).collect::<io::Result<_>>()?);
    let piped = median_dur((0..3).map(|_| get_pipelines(&mut c, 10, batch)).collect::<io::Result<_>>()?);
    let expect = opts.rtt * 10 + base;
    let r2 = piped.as_secs_f64() / expect.as_secs_f64();
    let b = Target {
        name: format!("10 pipelines of {} GET @ {rtt_ms} ms", human(batch)),
        measured: format!("{} (median of 3)", fmt_dur(piped)),
        expected: format!("{} (10 x RTT + {} at no RTT)", fmt_dur(expect), fmt_dur(base)),
        ratio: r2,
        rule: "ratio <= 1.50".into(),
        pass: r2 <= 1.5,
        info: false,
    };
    ok_reply(direct.cmd(&["DEL", GET_KEY])?)?;
    Ok(vec![a, b])
}

/// What a `set-child` run reports.
#[derive(Debug, Clone, Copy)]
pub struct ChildReport {
    /// Wall time of the SETs.
    pub elapsed: Duration,
    /// The child's peak RSS (VmHWM), KiB.
    pub hwm_kib: u64,
    /// The child's RSS before the SETs, KiB.
    pub start_kib: u64,
    /// The child's CPU (user + system) during the SETs.
    pub cpu: Duration,
}

/// Body of `volley-bench set-child`: SET keys 0..n at `addr` in `mode`
/// ("pipelined" in `chunk`s, or "coalesced"), then print one report line.
pub fn set_child(addr: SocketAddr, password: Option<&str>, mode: &str, n: usize, chunk: usize) -> io::Result<String> {
    let start_kib = proc_status_kib("VmRSS");
    let cpu0 = process_cpu();
    let pb = ProgressBar::hidden();
    let elapsed = match mode {
        "pipelined" => pipelined_sets(&mut Conn::connect(addr, password)?, n, chunk, &pb)?,
        "coalesced" => coalesced_sets(addr, password, n, Tickets::HoldAll, &pb)?,
        "coalesced-streamed" => coalesced_sets(addr, password, n, Tickets::AwaitAsResolved, &pb)?,
        m => return Err(proto_err(format!("unknown mode {m:?}"))),
    };
    let cpu = process_cpu().saturating_sub(cpu0);
    let hwm = proc_status_kib("VmHWM");
    Ok(format!("elapsed_ns={} hwm_kib={hwm} start_kib={start_kib} cpu_ns={}", elapsed.as_nanos(), cpu.as_nanos()))
}

fn run_child(opts: &TargetOpts, addr: SocketAddr, mode: &str, n: usize, chunk: usize) -> io::Result<ChildReport> {
    let mut cmd = Command::new(&opts.exe);
    cmd.args(["set-child", "--addr", &addr.to_string(), "--mode", mode]);
    cmd.args(["--n", &n.to_string(), "--chunk", &chunk.to_string()]);
    if let Some(p) = &opts.password {
        cmd.args(["-a", p]);
    }
    let out = cmd.output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(proto_err(format!("set-child {mode} failed: {}", String::from_utf8_lossy(&out.stderr))));
    }
    let field = |k: &str| -> io::Result<u64> {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(k)?.strip_prefix('=')?.parse().ok())
            .ok_or_else(|| proto_err(format!("set-child printed {text:?}")))
    };
    Ok(ChildReport {
        elapsed: Duration::from_nanos(field("elapsed_ns")?),
        hwm_kib: field("hwm_kib")?,
        start_kib: field("start_kib")?,
        cpu: Duration::from_nanos(field("cpu_ns")?),
    })
}

const SET_MODES: [&str; 3] = ["pipelined", "coalesced", "coalesced-streamed"];

/// Each SET mode's median wall time and CPU, and its worst peak RSS, over
/// alternating rounds (A B C A B C ...), each in a fresh child process.
fn set_runs(opts: &TargetOpts, n: usize, chunk: usize) -> io::Result<Vec<ChildReport>> {
    let mut c = Conn::connect(opts.addr, opts.password.as_deref())?;
    delete_set_keys(&mut c, n, chunk)?;
    let base = dbsize(&mut c)?;
    let (paddr, _proxy) = spawn_proxy(opts.addr, opts.set_rtt)?;
    let mut runs: Vec<Vec<ChildReport>> = vec![Vec::new(); SET_MODES.len()];
    for _ in 0..opts.set_rounds.max(1) {
        for (i, mode) in SET_MODES.into_iter().enumerate() {
            let r = run_child(opts, paddr, mode, n, chunk)?;
            if let Err(e) = verify_sets(&mut c, base, n)? {
                return Err(proto_err(format!("{mode} SETs: {e}")));
            }
            delete_set_keys(&mut c, n, chunk)?;
            runs[i].push(r);
        }
    }
    Ok(runs
        .into_iter()
        .map(|rs| ChildReport {
            elapsed: median_dur(rs.iter().map(|r| r.elapsed).collect()),
            hwm_kib: rs.iter().map(|r| r.hwm_kib).max().unwrap_or(0),
            start_kib: rs.iter().map(|r| r.start_kib).max().unwrap_or(0),
            cpu: median_dur(rs.iter().map(|r| r.cpu).collect()),
        })
        .collect())
}

/// The 1M-SET targets at `opts.set_rtt`.
fn set_targets(opts: &TargetOpts) -> io::Result<Vec<Target>> {
    let (n, chunk) = (opts.n(1_000_000), opts.n(10_000));
    let reps = set_runs(opts, n, chunk)?;
    let (p, co, cs) = (reps[0], reps[1], reps[2]);
    let ms = opts.set_rtt.as_secs_f64() * 1e3;
    let rounds = opts.set_rounds.max(1);
    let speed = p.elapsed.as_secs_f64() / co.elapsed.as_secs_f64().max(1e-9);
    let mut out = vec![Target {
        name: format!("{} SET @ {ms} ms: pipelined {} chunks / coalesced", human(n), human(chunk)),
        measured: format!("coalesced {} (median of {rounds})", fmt_dur(co.elapsed)),
        expected: format!("pipelined {}", fmt_dur(p.elapsed)),
        ratio: speed,
        rule: "pipelined/coalesced >= 2.0".into(),
        pass: speed >= 2.0,
        info: false,
    }];
    for (mode, r) in SET_MODES.into_iter().zip([p, co, cs]) {
        let mib = r.hwm_kib as f64 / 1024.0;
        out.push(Target {
            name: format!("{} SET {mode}: client peak RSS", human(n)),
            measured: format!("VmHWM {mib:.1} MiB (start {:.1})", r.start_kib as f64 / 1024.0),
            expected: "100 MiB".into(),
            ratio: mib / 100.0,
            rule: "ratio < 1.00".into(),
            pass: mib < 100.0,
            info: mode == "coalesced-streamed",
        });
    }
    let per_op = |r: &ChildReport| r.cpu.as_secs_f64() * 1e9 / n as f64;
    out.push(Target {
        name: format!("{} SET: client CPU/op, coalesced / pipelined", human(n)),
        measured: format!("coalesced {:.0} ns/op", per_op(&co)),
        expected: format!("pipelined {:.0} ns/op", per_op(&p)),
        ratio: per_op(&co) / per_op(&p).max(1e-9),
        rule: "(info: whole client process, incl. key formatting)".into(),
        pass: true,
        info: true,
    });
    let speed = p.elapsed.as_secs_f64() / cs.elapsed.as_secs_f64().max(1e-9);
    out.push(Target {
        name: format!("{} SET @ {ms} ms: pipelined / coalesced-streamed", human(n)),
        measured: format!("coalesced-streamed {}", fmt_dur(cs.elapsed)),
        expected: format!("pipelined {}", fmt_dur(p.elapsed)),
        ratio: speed,
        rule: "(info: tickets awaited as resolved)".into(),
        pass: speed >= 2.0,
        info: true,
    });
    Ok(out)
}

/// The auto-pipelining targets: alternating rounds, medians.
fn mux_targets(opts: &TargetOpts) -> io::Result<Vec<Target>> {
    let (tasks, per_task) = (64, opts.n(5_000).max(10));
    let mut runs: [Vec<MuxRun>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..opts.mux_rounds.max(1) {
        for (i, lib) in [Lib::Volley, Lib::RedisRs].into_iter().enumerate() {
            runs[i].push(run_mux(lib, opts.addr, opts.password.as_deref(), tasks, per_task)?);
        }
    }
    let ops = |rs: &[MuxRun]| median(&rs.iter().map(MuxRun::ops_per_sec).collect::<Vec<_>>());
    let cpu = |rs: &[MuxRun]| median(&rs.iter().map(|r| r.cpu_per_op().as_secs_f64() * 1e9).collect::<Vec<_>>());
    let (vo, ro) = (ops(&runs[0]), ops(&runs[1]));
    let (vc, rc) = (cpu(&runs[0]), cpu(&runs[1]));
    let what = format!("{tasks} tasks x {} GET, one conn", human(per_task));
    Ok(vec![
        Target {
            name: format!("{what}: ops/s, AutoPipelined / redis-rs"),
            measured: format!("{vo:.0} ops/s"),
            expected: format!("{ro:.0} ops/s"),
            ratio: vo / ro.max(1e-9),
            rule: "ratio >= 1.20".into(),
            pass: vo >= 1.2 * ro,
            info: false,
        },
        Target {
            name: format!("{what}: client CPU/op, AutoPipelined / redis-rs"),
            measured: format!("{vc:.0} ns/op"),
            expected: format!("{rc:.0} ns/op"),
            ratio: vc / rc.max(1e-9),
            rule: "ratio <= 1.00".into(),
            pass: vc <= rc,
            info: false,
        },
    ])
}

/// Run every target against `opts.addr`; `on_target` sees each as it is checked.
pub fn run_targets(opts: &TargetOpts, on_target: &mut dyn FnMut(&Target)) -> io::Result<Vec<Target>> {
    let mut all = Vec::new();
    type Group = fn(&TargetOpts) -> io::Result<Vec<Target>>;
    let groups: [(&str, Group); 3] = [("rtt", rtt_targets), ("sets", set_targets), ("mux", mux_targets)];
    for (name, group) in groups {
        if !opts.only.is_empty() && !opts.only.iter().any(|o| o == name) {
            continue;
        }
        for t in group(opts)? {
            on_target(&t);
            all.push(t);
        }
    }
    Ok(all)
}

/// Render targets as a plain-text table.
pub fn format_targets(targets: &[Target], title: &str) -> String {
    let mut lines: Vec<[String; 6]> =
        vec![["target", "measured", "expected", "ratio", "rule", "result"].map(String::from)];
    for t in targets {
        let res = match (t.info, t.pass) {
            (true, _) => "info",
            (false, true) => "PASS",
            (false, false) => "FAIL",
        };
        let ratio = format!("{:.2}", t.ratio);
        lines.push([t.name.clone(), t.measured.clone(), t.expected.clone(), ratio, t.rule.clone(), res.into()]);
    }
    let mut w = [0usize; 6];
    for l in &lines {
        for (i, c) in l.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = format!("{title}\n");
    for l in &lines {
        let cells: Vec<String> = l.iter().enumerate().map(|(i, c)| format!("{c:<width$}", width = w[i])).collect();
        out.push_str(cells.join(" | ").trim_end());
        out.push('\n');
    }
    out
}
