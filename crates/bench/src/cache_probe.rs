//! What the cache benchmark watches on the server while the load runs: its
//! CPU time and memory from `/proc/<pid>` ([`ProcStat`], [`RssSampler`]),
//! its `INFO` counters ([`Info`]), and the longest `PING` round trip on a
//! connection of its own ([`PingProbe`]).
//!
//! The PING round trip ends at the kernel's receive timestamp of the reply
//! (`SO_TIMESTAMPNS`), not when this process gets to read it: the probe
//! shares a core with the load generator, and its own scheduling delay is
//! not the server's stall. Since this machine is a shared VM (builds, other
//! benchmarks, and a hypervisor that steals ~100 ms slices), the probe also
//! reports each round trip less what kept the server from running
//! meanwhile: its main thread's run-queue wait (`/proc/<pid>/schedstat`) and
//! the time the hypervisor stole from the CPU it runs on (`/proc/stat`,
//! 10 ms ticks). What is left is a stall of the server's own making.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use resp::Frame;

use crate::conn::{proto_err, Conn};

/// Reads of one process's `/proc/<pid>` files.
#[derive(Clone, Copy, Debug)]
pub struct ProcStat {
    pub pid: u32,
}

impl ProcStat {
    /// utime + stime of every thread, in seconds (resolution 1/CLK_TCK).
    pub fn cpu_seconds(&self) -> io::Result<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid))?;
        // comm (field 2) may hold spaces: fields after the last ')' start at 3.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).ok_or_else(|| proto_err("bad /proc stat"))?;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| proto_err("bad stat"));
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        Ok((ticks(11)? + ticks(12)?) as f64 / hz)
    }

    /// A `/proc/<pid>/status` field in bytes (VmRSS, VmHWM); 0 if absent.
    pub fn status_bytes(&self, field: &str) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    }
}

/// Samples VmRSS every `every` on a thread and keeps the maximum: VmHWM
/// would do for one process, but sampling also shows when the peak came.
pub struct RssSampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl RssSampler {
    pub fn start(proc: ProcStat, every: Duration) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(proc.status_bytes("VmRSS")));
        let (s, p) = (stop.clone(), peak.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(proc.status_bytes("VmRSS"), Ordering::Relaxed);
                std::thread::sleep(every);
            }
        });
        RssSampler { stop, peak, thread: Some(thread) }
    }

    /// The highest VmRSS seen so far, bytes.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    pub fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak()
    }
}

/// `INFO` fields as text.
pub struct Info(pub HashMap<String, String>);

impl Info {
    /// `INFO <section>...` over `conn`.
    pub fn read(conn: &mut Conn, sections: &[&str]) -> io::Result<Info> {
        let mut args = vec!["INFO"];
        args.extend_from_slice(sections);
        let text = match conn.cmd(&args)? {
            Frame::Bulk(b) | Frame::Verbatim(_, b) => String::from_utf8_lossy(&b).into_owned(),
            other => return Err(proto_err(format!("INFO replied {other:?}"))),
        };
        let fields = text
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect();
        Ok(Info(fields))
    }

    /// A numeric field; 0 when the server does not report it.
    pub fn num(&self, field: &str) -> u64 {
        self.0.get(field).and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    pub fn text(&self, field: &str) -> &str {
        self.0.get(field).map_or("", String::as_str)
    }
}

/// Longest PING round trip per phase, from a thread with its own connection.
pub struct PingProbe {
    /// The phase counted into; `PHASES` means "stop".
    phase: Arc<AtomicUsize>,
    stats: Arc<PingStats>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

/// Per phase: longest round trip, longest less the server's lost time (ns),
/// count, round trips over [`SLOW_NS`] (raw and less lost time).
#[derive(Default)]
struct PingStats {
    max_ns: [AtomicU64; PHASES],
    max_own_ns: [AtomicU64; PHASES],
    count: [AtomicU64; PHASES],
    slow: [AtomicU64; PHASES],
    slow_own: [AtomicU64; PHASES],
}

/// The stall limit: round trips longer than this are counted.
pub const SLOW_NS: u64 = 5_000_000;

/// What the probe saw in one phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct PingPhase {
    pub max_ns: u64,
    /// The longest round trip less the server's run-queue wait and steal
    /// during it (equal to `max_ns` without a pid).
    pub max_own_ns: u64,
    pub count: u64,
    /// Round trips longer than [`SLOW_NS`].
    pub slow: u64,
    /// Round trips longer than [`SLOW_NS`] less the server's lost time.
    pub slow_own: u64,
}

/// Warm-up and measured.
const PHASES: usize = 2;

impl PingProbe {
    /// Ping `addr` every `gap` (a gap keeps the probe's own load negligible;
    /// a stall longer than the gap is still caught, since the PING sent into
    /// it waits for it to end). `pid`: the server's, for its run-queue wait.
    pub fn start(addr: SocketAddr, password: Option<&str>, gap: Duration, pid: Option<u32>) -> io::Result<PingProbe> {
        let stream = probe_stream(addr, password)?;
        let phase = Arc::new(AtomicUsize::new(0));
        let stats = Arc::new(PingStats::default());
        let (ph, st) = (phase.clone(), stats.clone());
        let thread = std::thread::spawn(move || ping_loop(stream, &ph, &st, gap, pid));
        Ok(PingProbe { phase, stats, thread: Some(thread) })
    }

    /// Start counting into the measured phase.
    pub fn next_phase(&self) {
        self.phase.store(1, Ordering::Relaxed);
    }

    /// Stop; what each phase saw.
    pub fn finish(mut self) -> io::Result<[PingPhase; PHASES]> {
        self.phase.store(PHASES, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().map_err(|_| proto_err("ping thread panicked"))??;
        }
        let st = &self.stats;
        Ok(std::array::from_fn(|i| PingPhase {
            max_ns: st.max_ns[i].load(Ordering::Relaxed),
            max_own_ns: st.max_own_ns[i].load(Ordering::Relaxed),
            count: st.count[i].load(Ordering::Relaxed),
            slow: st.slow[i].load(Ordering::Relaxed),
            slow_own: st.slow_own[i].load(Ordering::Relaxed),
        }))
    }
}

/// A socket with receive timestamps on, authenticated when `password` is
/// given.
fn probe_stream(addr: SocketAddr, password: Option<&str>) -> io::Result<TcpStream> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_nodelay(true)?;
    if let Some(pw) = password {
        let mut out = Vec::new();
        resp::encode_command(&mut out, &["AUTH", pw]);
        s.write_all(&out)?;
        let mut reply = [0u8; 256];
        let n = s.read(&mut reply)?;
        if !reply[..n].starts_with(b"+OK") {
            return Err(proto_err(format!("AUTH: {}", String::from_utf8_lossy(&reply[..n]))));
        }
    }
    let on: libc::c_int = 1;
    // SAFETY: a valid socket and a c_int option value of the given size.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(s)
}

fn ping_loop(mut s: TcpStream, phase: &AtomicUsize, st: &PingStats, gap: Duration, pid: Option<u32>) -> io::Result<()> {
    let lost = pid.and_then(LostTime::open);
    let lost_ns = || lost.as_ref().map_or(0, LostTime::ns);
    loop {
        let p = phase.load(Ordering::Relaxed);
        if p >= PHASES {
            return Ok(());
        }
        let l0 = lost_ns();
        s.write_all(b"*1\r\n$4\r\nPING\r\n")?;
        // Timed from after the write: the PING is in the kernel by then, and
        // a preemption of this thread before the write (it shares a core
        // with the load) is not counted as the server's.
        let sent = realtime_ns();
        let rtt = recv_pong(&s)?.saturating_sub(sent);
        let own = rtt.saturating_sub(lost_ns().saturating_sub(l0));
        st.max_ns[p].fetch_max(rtt, Ordering::Relaxed);
        st.max_own_ns[p].fetch_max(own, Ordering::Relaxed);
        st.count[p].fetch_add(1, Ordering::Relaxed);
        st.slow[p].fetch_add(u64::from(rtt > SLOW_NS), Ordering::Relaxed);
        st.slow_own[p].fetch_add(u64::from(own > SLOW_NS), Ordering::Relaxed);
        std::thread::sleep(gap);
    }
}

/// Time the server's main thread could not run, so far: its run-queue wait
/// plus the hypervisor's steal on the CPU it last ran on.
struct LostTime {
    schedstat: std::fs::File,
    stat: std::fs::File,
    system: std::fs::File,
    ns_per_tick: u64,
}

impl LostTime {
    fn open(pid: u32) -> Option<LostTime> {
        let open = |p: String| std::fs::File::open(p).ok();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        Some(LostTime {
            schedstat: open(format!("/proc/{pid}/schedstat"))?,
            stat: open(format!("/proc/{pid}/stat"))?,
            system: open("/proc/stat".to_string())?,
            ns_per_tick: 1_000_000_000 / hz,
        })
    }

    fn ns(&self) -> u64 {
        // schedstat field 2: ns waited on a run queue.
        let wait = read_fields(&self.schedstat, 256).get(1).and_then(|v| v.parse().ok()).unwrap_or(0u64);
        // stat field 39 (the 37th after the ')' that ends comm): last CPU.
        let stat = read_text(&self.stat, 1024);
        let cpu = stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(36)?.parse::<usize>().ok());
        let steal = cpu.map_or(0, |c| {
            let text = read_text(&self.system, 8192);
            let tag = format!("cpu{c} ");
            let line = text.lines().find(|l| l.starts_with(&tag));
            line.and_then(|l| l.split_whitespace().nth(8)?.parse::<u64>().ok()).unwrap_or(0)
        });
        wait + steal * self.ns_per_tick
    }
}

fn read_text(f: &std::fs::File, max: usize) -> String {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; max];
    let n = f.read_at(&mut buf, 0).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn read_fields(f: &std::fs::File, max: usize) -> Vec<String> {
    read_text(f, max).split_whitespace().map(str::to_string).collect()
}

fn realtime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Read `+PONG\r\n`; the kernel's receive time of its last segment (ns).
fn recv_pong(s: &TcpStream) -> io::Result<u64> {
    let mut got = 0;
    let mut stamp = 0;
    let mut buf = [0u8; 64];
    while got < 7 {
        let mut iov = libc::iovec { iov_base: buf[got..].as_mut_ptr().cast(), iov_len: buf.len() - got };
        let mut cmsg = [0u64; 16];
        // SAFETY: msghdr is plain data; every pointer set below outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cmsg) as _;
        // SAFETY: the message points at buffers we own.
        let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the PING connection"));
        }
        got += n as usize;
        stamp = cmsg_timestamp(&msg).unwrap_or_else(realtime_ns);
    }
    if &buf[..7] != b"+PONG\r\n" {
        return Err(proto_err(format!("PING replied {:?}", String::from_utf8_lossy(&buf[..got]))));
    }
    Ok(stamp)
}

/// The SCM_TIMESTAMPNS control message of a received message, ns.
fn cmsg_timestamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: walking the control buffer the kernel filled, with libc's macros.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}
