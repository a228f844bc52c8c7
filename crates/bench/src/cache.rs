//! The cache benchmark's load generator (`volley-bench cache`, issue #16):
//! cache-aside traffic against one server, and the report of what the
//! server did with it.
//!
//! Each of `conns` connections draws keys `key:<rank-1>` from a Zipf
//! distribution ([`crate::zipf`]) with its own deterministically seeded
//! stream, so every server sees the same per-connection sequences. A
//! connection sends `depth` GETs in one write; each nil reply (a miss) is
//! followed by `SET key <value>`. A miss's SET depends on its GET's reply,
//! so the SETs of one batch travel in the same write as the next batch's
//! GETs (ahead of them, so a key missed twice in a row is already set when
//! read again): one round trip per batch, never a SET before its GET's
//! reply. The SETs still owed when a phase ends are sent alone, so every
//! SET is counted in the phase whose GET missed.
//!
//! An *operation* is one GET, i.e. one cache request: the warm-up and
//! measured counts are GETs, and throughput is GETs per second. SETs are
//! counted separately, and CPU is reported per GET and per command
//! (GET + SET) so a server is not flattered by missing less.
//!
//! All connections are driven by one thread with `poll(2)`: the load
//! generator shares one core, and eight blocking threads would spend it on
//! context switches.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use resp::Frame;

use crate::cache_probe::{Info, PingPhase, PingProbe, ProcStat, RssSampler};
use crate::conn::{proto_err, Conn};
use crate::zipf::{Rng, Zipf};

/// What to run.
#[derive(Clone, Debug)]
pub struct CacheOpts {
    pub addr: SocketAddr,
    pub password: Option<String>,
    /// Distinct keys (Zipf ranks).
    pub keys: u64,
    /// Zipf exponent.
    pub exponent: f64,
    /// GETs of the warm-up phase (all connections together).
    pub warmup: u64,
    /// GETs of the measured phase.
    pub ops: u64,
    pub conns: usize,
    /// GETs per batch per connection.
    pub depth: usize,
    pub value_size: usize,
    pub seed: u64,
    /// The server's pid, for CPU and RSS from /proc (same machine only).
    pub pid: Option<u32>,
    /// Pause between PINGs of the stall probe.
    pub ping_gap: Duration,
    /// VmRSS sampling interval.
    pub rss_every: Duration,
}

/// Client-side counts of one phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub gets: u64,
    pub hits: u64,
    pub sets: u64,
    pub set_errors: u64,
    pub get_errors: u64,
    pub round_trips: u64,
    /// GETs of a key no earlier GET (on any connection, in any phase) asked
    /// for: a miss on every server, whatever it holds, so the hit ratio can
    /// be at most `1 - cold / gets`.
    pub cold: u64,
}

/// Which keys any connection has asked for so far (one bit per rank).
pub struct Seen {
    bits: Vec<u64>,
}

impl Seen {
    pub fn new(keys: u64) -> Seen {
        Seen { bits: vec![0; (keys / 64 + 1) as usize] }
    }

    /// Record a request for `k`; true if it is the first.
    fn first(&mut self, k: u64) -> bool {
        let (w, b) = ((k / 64) as usize, 1u64 << (k % 64));
        let fresh = self.bits[w] & b == 0;
        self.bits[w] |= b;
        fresh
    }
}

/// One phase as the client and the server saw it.
#[derive(Clone, Debug, Default)]
pub struct Phase {
    pub counts: Counts,
    pub wall: Duration,
    /// Server utime+stime over the phase, seconds.
    pub server_cpu: Option<f64>,
    pub info_hits: u64,
    pub info_misses: u64,
    pub evicted: u64,
    pub ping: PingPhase,
}

/// Everything `volley-bench cache` reports for one server.
#[derive(Clone, Debug, Default)]
pub struct CacheReport {
    pub warmup: Phase,
    pub measured: Phase,
    pub dbsize: u64,
    pub evicted_total: u64,
    pub used_memory: u64,
    pub used_memory_peak: u64,
    pub used_memory_rss: u64,
    pub maxmemory: u64,
    pub policy: String,
    /// VmRSS before the load, after the end, and the highest sampled.
    pub rss_start: u64,
    pub rss_end: u64,
    pub rss_peak_sampled: u64,
    pub vm_hwm: u64,
    /// The first error reply seen (e.g. `-OOM ...`), if any.
    pub first_error: Option<String>,
}

/// One reply of the cache traffic.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Hit,
    Miss,
    Ok,
    Error(String),
}

/// Parse one reply at the start of `buf`: `Ok(None)` while incomplete. Only
/// the shapes GET and SET answer with (bulk, nil in RESP2 or RESP3, simple
/// string, error) are accepted; anything else is a protocol error.
fn next_reply(buf: &[u8]) -> io::Result<Option<(Reply, usize)>> {
    let Some(cr) = buf.iter().position(|&b| b == b'\r') else { return Ok(None) };
    if buf.len() < cr + 2 {
        return Ok(None);
    }
    let line = &buf[1..cr];
    let head = cr + 2;
    match buf[0] {
        b'$' if line == b"-1" => Ok(Some((Reply::Miss, head))),
        b'_' => Ok(Some((Reply::Miss, head))),
        b'$' => {
            let len: usize = std::str::from_utf8(line)
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| proto_err(format!("bad bulk length {:?}", String::from_utf8_lossy(line))))?;
            let end = head + len + 2;
            Ok((buf.len() >= end).then_some((Reply::Hit, end)))
        }
        b'+' => Ok(Some((Reply::Ok, head))),
        b'-' => Ok(Some((Reply::Error(String::from_utf8_lossy(line).into_owned()), head))),
        other => Err(proto_err(format!("unexpected reply type byte {:?}", other as char))),
    }
}

/// The request bytes of the traffic: `GET key:<n>` and `SET key:<n> <value>`.
struct Requests {
    value: Vec<u8>,
}

impl Requests {
    fn new(value_size: usize, seed: u64) -> Requests {
        // Printable bytes that do not repeat in a short period, so no server
        // gets to store the value in fewer bytes than a real payload needs.
        let mut rng = Rng::new(seed ^ 0x5eed);
        let value = (0..value_size).map(|_| b'!' + (rng.next_u64() % 94) as u8).collect();
        Requests { value }
    }

    /// `$<len>\r\nkey:<n>\r\n`, without allocating.
    fn key_arg(out: &mut Vec<u8>, mut n: u64) {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let _ = write!(out, "${}\r\nkey:", 4 + d.len() - i);
        out.extend_from_slice(&d[i..]);
        out.extend_from_slice(b"\r\n");
    }

    fn get(&self, out: &mut Vec<u8>, n: u64) {
        out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
        Self::key_arg(out, n);
    }

    fn set(&self, out: &mut Vec<u8>, n: u64) {
        out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
        Self::key_arg(out, n);
        let _ = write!(out, "${}\r\n", self.value.len());
        out.extend_from_slice(&self.value);
        out.extend_from_slice(b"\r\n");
    }
}

/// One connection of the load and its in-flight batch.
struct Lane {
    stream: TcpStream,
    rng: Rng,
    input: Vec<u8>,
    start: usize,
    end: usize,
    out: Vec<u8>,
    /// Keys of the GETs in flight, in request order.
    gets: Vec<u64>,
    /// SET replies still expected ahead of the GET replies.
    sets_due: usize,
    /// Index into `gets` of the next GET reply.
    next_get: usize,
    /// Keys that missed and still need their SET.
    to_set: Vec<u64>,
    /// GETs sent in the current phase.
    issued: u64,
    quota: u64,
}

impl Lane {
    fn connect(addr: SocketAddr, password: Option<&str>, seed: u64) -> io::Result<Lane> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_nodelay(true)?;
        let mut lane = Lane {
            stream,
            rng: Rng::new(seed),
            input: vec![0; 64 << 10],
            start: 0,
            end: 0,
            out: Vec::with_capacity(8 << 10),
            gets: Vec::new(),
            sets_due: 0,
            next_get: 0,
            to_set: Vec::new(),
            issued: 0,
            quota: 0,
        };
        if let Some(pw) = password {
            let mut out = Vec::new();
            resp::encode_command(&mut out, &["AUTH", pw]);
            lane.stream.write_all(&out)?;
            let mut r = [0u8; 256];
            let n = lane.stream.read(&mut r)?;
            if !r[..n].starts_with(b"+OK") {
                return Err(proto_err(format!("AUTH: {}", String::from_utf8_lossy(&r[..n]))));
            }
        }
        lane.stream.set_nonblocking(true)?;
        Ok(lane)
    }

    fn busy(&self) -> bool {
        self.sets_due > 0 || self.next_get < self.gets.len()
    }

    /// Send the owed SETs and the next batch of GETs (if the phase's quota
    /// allows); false when there was nothing to send.
    fn send(&mut self, req: &Requests, zipf: &Zipf, depth: usize, seen: &mut Seen, cold: &mut u64) -> io::Result<bool> {
        let n = depth.min((self.quota - self.issued) as usize);
        if n == 0 && self.to_set.is_empty() {
            return Ok(false);
        }
        self.out.clear();
        for &k in &self.to_set {
            req.set(&mut self.out, k);
        }
        self.sets_due = self.to_set.len();
        self.to_set.clear();
        self.gets.clear();
        self.next_get = 0;
        for _ in 0..n {
            let k = zipf.sample(&mut self.rng) - 1;
            *cold += u64::from(seen.first(k));
            self.gets.push(k);
            req.get(&mut self.out, k);
        }
        self.issued += n as u64;
        write_all_nonblocking(&self.stream, &self.out)?;
        Ok(true)
    }

    /// Read what arrived and account for every complete reply; true when
    /// the batch in flight is complete.
    fn on_readable(&mut self, counts: &mut Counts, first_error: &mut Option<String>) -> io::Result<bool> {
        loop {
            if self.end == self.input.len() {
                self.compact();
            }
            match (&self.stream).read(&mut self.input[self.end..]) {
                Ok(0) => return Err(io::Error::new(ErrorKind::UnexpectedEof, "server closed the connection")),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        while self.busy() {
            let Some((reply, used)) = next_reply(&self.input[self.start..self.end])? else { break };
            self.start += used;
            self.account(reply, counts, first_error);
        }
        self.compact();
        Ok(!self.busy())
    }

    fn account(&mut self, reply: Reply, counts: &mut Counts, first_error: &mut Option<String>) {
        if self.sets_due > 0 {
            self.sets_due -= 1;
            match reply {
                Reply::Error(e) => {
                    counts.set_errors += 1;
                    first_error.get_or_insert(e);
                }
                _ => counts.sets += 1,
            }
            return;
        }
        let key = self.gets[self.next_get];
        self.next_get += 1;
        counts.gets += 1;
        match reply {
            Reply::Hit => counts.hits += 1,
            Reply::Miss => self.to_set.push(key),
            Reply::Ok => counts.get_errors += 1,
            Reply::Error(e) => {
                counts.get_errors += 1;
                first_error.get_or_insert(e);
            }
        }
    }

    /// Move unread bytes to the front; grow when a reply does not fit.
    fn compact(&mut self) {
        self.input.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.end == self.input.len() {
            self.input.resize(self.input.len() * 2, 0);
        }
    }
}

/// Write everything; waits for writability when the socket buffer is full
/// (it never is in practice: a batch is a few KiB and the previous batch's
/// bytes were all consumed before its replies came back).
fn write_all_nonblocking(stream: &TcpStream, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match (&*stream).write(buf) {
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let mut p = libc::pollfd { fd: stream.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut p, 1, 1000) };
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Run one phase of `total` GETs over all lanes to completion.
fn run_phase(
    lanes: &mut [Lane],
    total: u64,
    req: &Requests,
    zipf: &Zipf,
    depth: usize,
    seen: &mut Seen,
    first_error: &mut Option<String>,
) -> io::Result<Counts> {
    let mut counts = Counts::default();
    let per = total / lanes.len() as u64;
    let extra = total % lanes.len() as u64;
    for (i, lane) in lanes.iter_mut().enumerate() {
        lane.issued = 0;
        lane.quota = per + u64::from((i as u64) < extra);
        if lane.send(req, zipf, depth, seen, &mut counts.cold)? {
            counts.round_trips += 1;
        }
    }
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(lanes.len());
    let mut idx: Vec<usize> = Vec::with_capacity(lanes.len());
    loop {
        fds.clear();
        idx.clear();
        for (i, lane) in lanes.iter().enumerate().filter(|(_, l)| l.busy()) {
            fds.push(libc::pollfd { fd: lane.stream.as_raw_fd(), events: libc::POLLIN, revents: 0 });
            idx.push(i);
        }
        if fds.is_empty() {
            return Ok(counts);
        }
        // SAFETY: `fds` holds fds.len() valid pollfds.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 30_000) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if rc == 0 {
            return Err(io::Error::new(ErrorKind::TimedOut, "no reply from the server for 30 s"));
        }
        for (p, &i) in fds.iter().zip(&idx) {
            if p.revents == 0 {
                continue;
            }
            let lane = &mut lanes[i];
            if lane.on_readable(&mut counts, first_error)? && lane.send(req, zipf, depth, seen, &mut counts.cold)? {
                counts.round_trips += 1;
            }
        }
    }
}

/// Server-side counters at a phase boundary.
struct Mark {
    at: Instant,
    cpu: Option<f64>,
    hits: u64,
    misses: u64,
    evicted: u64,
}

fn mark(ctl: &mut Conn, proc: Option<ProcStat>) -> io::Result<Mark> {
    let cpu = proc.map(|p| p.cpu_seconds()).transpose()?;
    let info = Info::read(ctl, &["stats"])?;
    Ok(Mark {
        at: Instant::now(),
        cpu,
        hits: info.num("keyspace_hits"),
        misses: info.num("keyspace_misses"),
        evicted: info.num("evicted_keys"),
    })
}

fn phase_between(a: &Mark, b: &Mark, counts: Counts, ping: PingPhase) -> Phase {
    Phase {
        counts,
        wall: b.at - a.at,
        server_cpu: a.cpu.zip(b.cpu).map(|(x, y)| y - x),
        info_hits: b.hits - a.hits,
        info_misses: b.misses - a.misses,
        evicted: b.evicted - a.evicted,
        ping,
    }
}

/// Run the warm-up and measured phases against `opts.addr`.
pub fn run_cache(opts: &CacheOpts, progress: &mut dyn FnMut(&str)) -> io::Result<CacheReport> {
    let pw = opts.password.as_deref();
    let proc = opts.pid.map(|pid| ProcStat { pid });
    let zipf = Zipf::new(opts.keys, opts.exponent);
    let req = Requests::new(opts.value_size, opts.seed);
    let mut ctl = Conn::connect(opts.addr, pw)?;
    let mut lanes = (0..opts.conns.max(1))
        .map(|i| Lane::connect(opts.addr, pw, opts.seed ^ ((i as u64 + 1) << 32)))
        .collect::<io::Result<Vec<_>>>()?;
    let mut rep = CacheReport { rss_start: proc.map_or(0, |p| p.status_bytes("VmRSS")), ..Default::default() };
    let sampler = proc.map(|p| RssSampler::start(p, opts.rss_every));
    let ping = PingProbe::start(opts.addr, pw, opts.ping_gap, opts.pid)?;
    let depth = opts.depth.max(1);
    let mut seen = Seen::new(opts.keys);

    let m0 = mark(&mut ctl, proc)?;
    let warm = run_phase(&mut lanes, opts.warmup, &req, &zipf, depth, &mut seen, &mut rep.first_error)?;
    ping.next_phase();
    let m1 = mark(&mut ctl, proc)?;
    progress(&format!("warm-up: {} GETs, hit ratio {:.4}", warm.gets, ratio(warm.hits, warm.gets)));
    let meas = run_phase(&mut lanes, opts.ops, &req, &zipf, depth, &mut seen, &mut rep.first_error)?;
    let m2 = mark(&mut ctl, proc)?;
    let pings = ping.finish()?;
    rep.warmup = phase_between(&m0, &m1, warm, pings[0]);
    rep.measured = phase_between(&m1, &m2, meas, pings[1]);

    rep.dbsize = match ctl.cmd(&["DBSIZE"])? {
        Frame::Integer(n) => n.max(0) as u64,
        other => return Err(proto_err(format!("DBSIZE replied {other:?}"))),
    };
    let mem = Info::read(&mut ctl, &["memory"])?;
    rep.used_memory = mem.num("used_memory");
    rep.used_memory_peak = mem.num("used_memory_peak");
    rep.used_memory_rss = mem.num("used_memory_rss");
    rep.maxmemory = mem.num("maxmemory");
    rep.policy = mem.text("maxmemory_policy").to_string();
    rep.evicted_total = m2.evicted;
    if let (Some(p), Some(s)) = (proc, sampler) {
        rep.rss_peak_sampled = s.finish();
        rep.rss_end = p.status_bytes("VmRSS");
        rep.vm_hwm = p.status_bytes("VmHWM");
    }
    Ok(rep)
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl Phase {
    fn json(&self) -> String {
        let c = &self.counts;
        let cpu = self.server_cpu.map_or("null".to_string(), |v| format!("{v:.4}"));
        format!(
            "{{\"gets\": {}, \"hits\": {}, \"sets\": {}, \"set_errors\": {}, \"get_errors\": {}, \
             \"round_trips\": {}, \"cold\": {}, \"wall_s\": {:.4}, \"server_cpu_s\": {cpu}, \"info_hits\": {}, \
             \"info_misses\": {}, \"evicted\": {}, \"ping_max_us\": {:.1}, \"ping_max_own_us\": {:.1}, \"pings\": {}, \"pings_over_5ms\": {}, \"pings_over_5ms_own\": {}}}",
            c.gets,
            c.hits,
            c.sets,
            c.set_errors,
            c.get_errors,
            c.round_trips,
            c.cold,
            self.wall.as_secs_f64(),
            self.info_hits,
            self.info_misses,
            self.evicted,
            self.ping.max_ns as f64 / 1e3,
            self.ping.max_own_ns as f64 / 1e3,
            self.ping.count,
            self.ping.slow,
            self.ping.slow_own
        )
    }
}

impl CacheReport {
    /// The report as one JSON object (what `bench/cache.py` reads).
    pub fn json(&self) -> String {
        let err = self.first_error.as_deref().map_or("null".to_string(), |e| format!("{:?}", e));
        format!(
            "{{\"warmup\": {}, \"measured\": {}, \"dbsize\": {}, \"evicted_total\": {}, \"used_memory\": {}, \
             \"used_memory_peak\": {}, \"used_memory_rss\": {}, \"maxmemory\": {}, \"policy\": {:?}, \
             \"rss_start\": {}, \"rss_end\": {}, \"rss_peak_sampled\": {}, \"vm_hwm\": {}, \"first_error\": {err}}}",
            self.warmup.json(),
            self.measured.json(),
            self.dbsize,
            self.evicted_total,
            self.used_memory,
            self.used_memory_peak,
            self.used_memory_rss,
            self.maxmemory,
            self.policy,
            self.rss_start,
            self.rss_end,
            self.rss_peak_sampled,
            self.vm_hwm
        )
    }

    /// A few human-readable lines.
    pub fn summary(&self) -> String {
        let m = &self.measured;
        let c = &m.counts;
        let secs = m.wall.as_secs_f64().max(1e-9);
        let cpu = m.server_cpu.map_or("-".to_string(), |s| format!("{:.0} ns/GET", s * 1e9 / c.gets.max(1) as f64));
        format!(
            "measured: {} GETs, hit ratio {:.4} (INFO {:.4}; first requests cap it at {:.4}), {:.0} GETs/s, server CPU {cpu}, {} SETs\n\
             DBSIZE {}, evicted {} ({} measured), used_memory {:.1} MiB, peak RSS {:.1} MiB, \
             longest PING {:.2} ms, {:.2} ms less run-queue wait and steal (warm-up {:.2} / {:.2} ms){}",
            c.gets,
            ratio(c.hits, c.gets),
            ratio(m.info_hits, m.info_hits + m.info_misses),
            1.0 - ratio(c.cold, c.gets),
            c.gets as f64 / secs,
            c.sets,
            self.dbsize,
            self.evicted_total,
            m.evicted,
            self.used_memory as f64 / 1048576.0,
            self.rss_peak_sampled.max(self.vm_hwm) as f64 / 1048576.0,
            m.ping.max_ns as f64 / 1e6,
            m.ping.max_own_ns as f64 / 1e6,
            self.warmup.ping.max_ns as f64 / 1e6,
            self.warmup.ping.max_own_ns as f64 / 1e6,
            self.first_error.as_deref().map_or(String::new(), |e| format!("\nfirst error reply: {e}"))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_only_when_complete() {
        assert_eq!(next_reply(b"$-1\r\n").unwrap(), Some((Reply::Miss, 5)));
        assert_eq!(next_reply(b"_\r\n").unwrap(), Some((Reply::Miss, 3)));
        assert_eq!(next_reply(b"$3\r\nabc\r\n").unwrap(), Some((Reply::Hit, 9)));
        assert_eq!(next_reply(b"$3\r\nabc\r").unwrap(), None);
        assert_eq!(next_reply(b"+OK\r\n").unwrap(), Some((Reply::Ok, 5)));
        assert_eq!(next_reply(b"+OK\r").unwrap(), None);
        let (r, n) = next_reply(b"-OOM no\r\n").unwrap().unwrap();
        assert_eq!((r, n), (Reply::Error("OOM no".into()), 9));
        assert!(next_reply(b":1\r\n").is_err());
    }

    #[test]
    fn requests_are_resp_commands() {
        let req = Requests::new(5, 1);
        let mut out = Vec::new();
        req.get(&mut out, 42);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$6\r\nkey:42\r\n");
        out.clear();
        req.set(&mut out, 0);
        let (frame, used) = resp::decode_frame(&out).unwrap().unwrap();
        assert_eq!(used, out.len());
        let Frame::Array(parts) = frame else { panic!("not an array") };
        assert_eq!(parts[1], Frame::Bulk(b"key:0".to_vec()));
        assert_eq!(parts[2], Frame::Bulk(req.value.clone()));
    }
}
