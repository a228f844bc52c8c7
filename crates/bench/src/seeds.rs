//! The seed experiments: each published pipelining measurement, re-run against
//! a live server (optionally through the delay proxy), with a check that the
//! data really arrived and the published figure printed alongside.
//!
//! Counts scale with `scale` (batch sizes too, so the number of round trips
//! per pipelined row stays as published). One-by-one rows run at most
//! `max_serial` commands and are extrapolated linearly to the full count.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use resp::{encode_command, Frame};

use crate::conn::{ok_reply, proto_err, Conn};
use crate::meter::{Cost, Meter};
use crate::proxy::{spawn_proxy, ProxyHandle};
use crate::sets::Tickets;
use crate::sets::{
    check, coalesced_sets, dbsize, delete_set_keys, pipelined_sets, set_key, set_val, verify_sets, PREFIX,
};

/// What to run and where.
#[derive(Debug, Clone)]
pub struct SeedOpts {
    /// The server (the proxy is put in front of it when `rtt` > 0).
    pub addr: SocketAddr,
    /// AUTH password, if any.
    pub password: Option<String>,
    /// Injected round-trip time.
    pub rtt: Duration,
    /// Multiplier for every count and batch size (1.0 = as published).
    pub scale: f64,
    /// Cap on one-by-one commands per row; the rest is extrapolated.
    pub max_serial: usize,
    /// Show progress bars on stderr.
    pub progress: bool,
    /// Seed groups to run (`ping`, `incr`, `get`, `sets`); empty = all.
    pub only: Vec<String>,
}

/// The seed groups, in run order, as named by [`SeedOpts::only`].
pub const GROUPS: [&str; 4] = ["ping", "incr", "get", "sets"];

/// One measured row.
#[derive(Debug, Clone)]
pub struct Row {
    /// Which publication the row reproduces.
    pub seed: &'static str,
    /// What was run, e.g. "10k PING, no pipelining".
    pub label: String,
    /// Commands the row stands for (after scaling).
    pub ops: usize,
    /// Wall time (extrapolated when `extrapolated_from` is set).
    pub measured: Duration,
    /// Commands actually run when the row was capped.
    pub extrapolated_from: Option<usize>,
    /// The published figure for the unscaled experiment.
    pub published: &'static str,
    /// `Ok` when the data check passed, else what went wrong.
    pub check: Result<String, String>,
    /// Client peak RSS and CPU while the row ran (CPU covers the commands
    /// actually run, see `extrapolated_from`).
    pub cost: Option<Cost>,
}

impl Row {
    /// Client CPU per command actually run.
    pub fn cpu_per_op(&self) -> Option<Duration> {
        let ran = self.extrapolated_from.unwrap_or(self.ops).max(1);
        self.cost.map(|c| c.cpu / ran as u32)
    }
}

struct Ctx {
    conn: Conn,
    /// Where `conn` points (the proxy when one is used).
    target: SocketAddr,
    opts: SeedOpts,
    _proxy: Option<ProxyHandle>,
}

impl Ctx {
    fn n(&self, published: usize) -> usize {
        ((published as f64 * self.opts.scale).round() as usize).max(1)
    }

    fn bar(&self, len: usize, msg: String) -> ProgressBar {
        if !self.opts.progress || len < 1000 {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len as u64).with_message(msg);
        pb.set_style(ProgressStyle::with_template("{msg:40} {bar:30} {pos}/{len} eta {eta}").unwrap());
        pb
    }

    /// Run `total` commands one by one (capped), returning (time for total, ran).
    fn serial(
        &mut self,
        total: usize,
        label: &str,
        mut f: impl FnMut(&mut Conn, usize) -> io::Result<()>,
    ) -> io::Result<(Duration, usize)> {
        let ran = total.min(self.opts.max_serial.max(1));
        let pb = self.bar(ran, label.to_string());
        let t = Instant::now();
        for i in 0..ran {
            f(&mut self.conn, i)?;
            if i % 256 == 0 {
                pb.set_position(i as u64);
            }
        }
        let el = t.elapsed();
        pb.finish_and_clear();
        Ok((el.mul_f64(total as f64 / ran as f64), ran))
    }
}

/// The result of [`run_seeds`].
#[derive(Debug, Clone)]
pub struct SeedReport {
    /// One row per experiment, in seed order.
    pub rows: Vec<Row>,
    /// Median PING round trip measured before the rows (through the proxy
    /// when one is used): the RTT the rows really saw.
    pub ping_rtt: Duration,
}

/// Median round trip of `n` PINGs.
pub fn probe_rtt(c: &mut Conn, n: usize) -> io::Result<Duration> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n.max(1) {
        let t = Instant::now();
        ok_reply(c.cmd(&["PING"])?)?;
        v.push(t.elapsed());
    }
    v.sort();
    Ok(v[v.len() / 2])
}

/// Run every seed experiment; `on_row` sees each row as soon as it is
/// measured.
pub fn run_seeds(opts: &SeedOpts, on_row: &mut dyn FnMut(&Row)) -> io::Result<SeedReport> {
    let (target, proxy) = if opts.rtt > Duration::ZERO {
        let (a, h) = spawn_proxy(opts.addr, opts.rtt)?;
        (a, Some(h))
    } else {
        (opts.addr, None)
    };
    let conn = Conn::connect(target, opts.password.as_deref())?;
    let mut cx = Ctx { conn, target, opts: opts.clone(), _proxy: proxy };
    let ping_rtt = probe_rtt(&mut cx.conn, 21)?;
    let mut rows = Vec::new();
    let mut push = |r: Row, rows: &mut Vec<Row>| {
        on_row(&r);
        rows.push(r);
    };
    type Group = fn(&mut Ctx) -> io::Result<Vec<Row>>;
    let groups: [(&str, Group); 4] = [("ping", ping_rows), ("incr", incr_rows), ("get", get_rows), ("sets", set_rows)];
    for (name, group) in groups {
        if !opts.only.is_empty() && !opts.only.iter().any(|o| o == name) {
            continue;
        }
        for r in group(&mut cx)? {
            push(r, &mut rows);
        }
    }
    Ok(SeedReport { rows, ping_rtt })
}

/// A row whose measurement began when `m` was started.
fn row(seed: &'static str, label: String, ops: usize, t: (Duration, usize), published: &'static str, m: &Meter) -> Row {
    let extrapolated_from = (t.1 < ops).then_some(t.1);
    let cost = Some(m.finish());
    Row { seed, label, ops, measured: t.0, extrapolated_from, published, check: Ok(String::new()), cost }
}

fn human(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

/// Redis docs (Ruby client, loopback): 10k PINGs, 1.19 s vs 0.25 s.
fn ping_rows(cx: &mut Ctx) -> io::Result<Vec<Row>> {
    const SEED: &str = "Redis docs (Ruby, loopback)";
    let n = cx.n(10_000);
    let mut bad = 0usize;
    let m = Meter::start();
    let t = cx.serial(n, "PING one by one", |c, _| {
        bad += usize::from(c.cmd(&["PING"])? != Frame::Simple(b"PONG".to_vec()));
        Ok(())
    })?;
    let mut a = row(SEED, format!("{} PING, no pipelining", human(n)), n, t, "1.19 s", &m);
    a.check = check(bad == 0, format!("{} PONG", t.1), format!("{bad} replies were not PONG"));
    let mut req = Vec::new();
    let m = Meter::start();
    let start = Instant::now();
    for _ in 0..n {
        encode_command(&mut req, &["PING"]);
    }
    let mut pongs = 0usize;
    cx.conn.pipeline_each(&req, n, |f| pongs += usize::from(f == Frame::Simple(b"PONG".to_vec())))?;
    let mut b = row(SEED, format!("{} PING, one pipeline", human(n)), n, (start.elapsed(), n), "0.25 s", &m);
    b.check = check(pongs == n, format!("{n} PONG"), format!("{pongs}/{n} PONG"));
    Ok(vec![a, b])
}

fn get_int(c: &mut Conn, key: &str) -> io::Result<i64> {
    match ok_reply(c.cmd(&["GET", key])?)? {
        Frame::Bulk(b) => String::from_utf8_lossy(&b).parse().map_err(|_| proto_err("counter is not an integer")),
        Frame::Null => Ok(0),
        other => Err(proto_err(format!("unexpected GET reply {other:?}"))),
    }
}

/// Alibaba Cloud docs (Jedis): 5,000 INCRs, 5,844 ms ping-pong vs 78 ms.
fn incr_rows(cx: &mut Ctx) -> io::Result<Vec<Row>> {
    const SEED: &str = "Alibaba Cloud (Jedis)";
    let key = format!("{PREFIX}incr");
    let n = cx.n(5_000);
    ok_reply(cx.conn.cmd(&["DEL", &key])?)?;
    let m = Meter::start();
    let t = cx.serial(n, "INCR ping-pong", |c, _| ok_reply(c.cmd(&["INCR", &key])?).map(|_| ()))?;
    let got = get_int(&mut cx.conn, &key)?;
    let mut a = row(SEED, format!("{} INCR, ping-pong", human(n)), n, t, "5,844 ms", &m);
    a.check = check(got == t.1 as i64, format!("counter = {got}"), format!("counter = {got}, want {}", t.1));
    ok_reply(cx.conn.cmd(&["DEL", &key])?)?;
    let m = Meter::start();
    let start = Instant::now();
    let mut req = Vec::new();
    for _ in 0..n {
        encode_command(&mut req, &["INCR", &key]);
    }
    let mut last = Frame::Null;
    cx.conn.pipeline_each(&req, n, |f| last = f)?;
    let el = start.elapsed();
    let got = get_int(&mut cx.conn, &key)?;
    let mut b = row(SEED, format!("{} INCR, one pipeline", human(n)), n, (el, n), "78 ms", &m);
    let ok = got == n as i64 && last == Frame::Integer(n as i64);
    b.check = check(ok, format!("counter = {got}"), format!("counter = {got}, last reply {last:?}, want {n}"));
    ok_reply(cx.conn.cmd(&["DEL", &key])?)?;
    Ok(vec![a, b])
}

/// go-redis article (3.3 ms RTT): 10k GETs, 32.16 s vs 10 pipelines of 1,000 in 54 ms.
fn get_rows(cx: &mut Ctx) -> io::Result<Vec<Row>> {
    const SEED: &str = "go-redis article (3.3 ms RTT)";
    let key = format!("{PREFIX}get");
    let value = "redis:pipelining:test value";
    ok_reply(cx.conn.cmd(&["SET", &key, value])?)?;
    let n = cx.n(10_000);
    let want = Frame::Bulk(value.as_bytes().to_vec());
    let mut bad = 0usize;
    let m = Meter::start();
    let t = cx.serial(n, "GET one by one", |c, _| {
        bad += usize::from(c.cmd(&["GET", &key])? != want);
        Ok(())
    })?;
    let mut a = row(SEED, format!("{} GET, one by one", human(n)), n, t, "32.16 s", &m);
    a.check = check(bad == 0, format!("{} values ok", t.1), format!("{bad} wrong values"));
    let batch = n.div_ceil(10);
    let m = Meter::start();
    let start = Instant::now();
    let (mut good, mut done) = (0usize, 0usize);
    while done < n {
        let k = batch.min(n - done);
        let mut req = Vec::new();
        for _ in 0..k {
            encode_command(&mut req, &["GET", &key]);
        }
        cx.conn.pipeline_each(&req, k, |f| good += usize::from(f == want))?;
        done += k;
    }
    let label = format!("{} GET, {} pipelines of {}", human(n), n.div_ceil(batch), human(batch));
    let mut b = row(SEED, label, n, (start.elapsed(), n), "54 ms", &m);
    b.check = check(good == n, format!("{n} values ok"), format!("{good}/{n} values ok"));
    ok_reply(cx.conn.cmd(&["DEL", &key])?)?;
    Ok(vec![a, b])
}

/// Bufferedis blog (India → US WAN): 1M SETs, 208 s / 94 s pipelined / 38 s as MSETs.
fn set_rows(cx: &mut Ctx) -> io::Result<Vec<Row>> {
    const SEED: &str = "Bufferedis blog (WAN)";
    let n = cx.n(1_000_000);
    let chunk = cx.n(10_000);
    delete_set_keys(&mut cx.conn, n, chunk)?;
    let base = dbsize(&mut cx.conn)?;

    let m = Meter::start();
    let t = cx.serial(n, "SET one by one", |c, i| ok_reply(c.cmd(&["SET", &set_key(i), &set_val(i)])?).map(|_| ()))?;
    let mut a = row(SEED, format!("{} SET, one by one", human(n)), n, t, "208 s", &m);
    a.check = verify_sets(&mut cx.conn, base, t.1)?;
    delete_set_keys(&mut cx.conn, t.1, chunk)?;

    let pb = cx.bar(n, "SET pipelined".into());
    let m = Meter::start();
    let el = pipelined_sets(&mut cx.conn, n, chunk, &pb)?;
    pb.finish_and_clear();
    let label = format!("{} SET, pipelined in {} chunks", human(n), human(chunk));
    let mut b = row(SEED, label, n, (el, n), "94 s", &m);
    b.check = verify_sets(&mut cx.conn, base, n)?;
    delete_set_keys(&mut cx.conn, n, chunk)?;

    let pb = cx.bar(n, "SET coalesced".into());
    let m = Meter::start();
    let el = coalesced_sets(cx.target, cx.opts.password.as_deref(), n, Tickets::HoldAll, &pb)?;
    pb.finish_and_clear();
    let label = format!("{} SET, coalesced (volley_client::Coalescer)", human(n));
    let mut c = row(SEED, label, n, (el, n), "38.0 s (MSETs, 100k buffer)", &m);
    c.check = verify_sets(&mut cx.conn, base, n)?;
    delete_set_keys(&mut cx.conn, n, chunk)?;
    Ok(vec![a, b, c])
}

/// Format a duration the way the seeds do (ms below 10 s).
pub fn fmt_dur(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 10.0 {
        format!("{s:.1} s")
    } else if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

/// Render the rows as a plain-text table, with the speedup of each row over
/// the first row of its seed, and each row's client peak RSS and CPU per
/// command (after the check column, so older parsers keep working).
pub fn format_table(rows: &[Row], title: &str) -> String {
    let mut out = format!("{title}\n");
    let header =
        ["seed", "experiment", "measured", "published", "speedup", "check", "client peak RSS", "client CPU/op"];
    let mut lines: Vec<[String; 8]> = vec![header.map(String::from)];
    let mut first: Option<(&str, Duration)> = None;
    for r in rows {
        if first.is_none_or(|(s, _)| s != r.seed) {
            first = Some((r.seed, r.measured));
        }
        let base = first.unwrap().1;
        let speed = format!("{:.1}x", base.as_secs_f64() / r.measured.as_secs_f64().max(1e-9));
        let mut measured = fmt_dur(r.measured);
        if let Some(k) = r.extrapolated_from {
            measured.push_str(&format!(" (extrapolated from {})", human(k)));
        }
        let check = match &r.check {
            Ok(s) => format!("ok: {s}"),
            Err(s) => format!("FAIL: {s}"),
        };
        let rss = r.cost.and_then(|c| c.peak_rss_kib).map_or("-".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
        let cpu = r.cpu_per_op().map_or("-".into(), |d| format!("{} ns", d.as_nanos()));
        lines.push([r.seed.into(), r.label.clone(), measured, r.published.into(), speed, check, rss, cpu]);
    }
    let mut w = [0usize; 8];
    for l in &lines {
        for (i, c) in l.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    for l in &lines {
        let cells: Vec<String> = l.iter().enumerate().map(|(i, c)| format!("{c:<width$}", width = w[i])).collect();
        out.push_str(cells.join(" | ").trim_end());
        out.push('\n');
    }
    out
}
