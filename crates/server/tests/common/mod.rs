//! Black-box test support: start the real `volley-server` binary on a free
//! loopback port, talk RESP to it (over TCP, or any stream), and kill it
//! when the test ends. [`transport`] starts servers with other listeners
//! (Unix socket, TLS, none on TCP) and makes test certificates.
#![allow(dead_code)]

pub mod transport;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use resp::Frame;

/// A running server; killed on drop.
pub struct TestServer {
    pub port: u16,
    pub dir: std::path::PathBuf,
    child: Child,
}

/// Wait up to `timeout` for `child` to exit; its status.
pub fn wait_child(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if let Ok(Some(st)) = child.try_wait() {
            return Some(st);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// A directory of its own for each start attempt: two attempts can draw
/// the same free port, and the one that loses the bind race must not delete
/// the winner's files (its log among them) when it is dropped.
fn attempt_dir(prefix: &str, port: u16) -> std::path::PathBuf {
    static ATTEMPT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = ATTEMPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("{prefix}-{}-{port}-{n}", std::process::id()))
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl TestServer {
    /// Start with default test options plus `extra` (Redis-style `--name value`).
    /// A free port can be taken by a server another test starts at the same
    /// moment; a start that loses that race is retried on a new port.
    pub fn start(extra: &[&str]) -> TestServer {
        Self::start_with_config(None, extra)
    }

    /// Like [`TestServer::start`], with a config file path as the first
    /// argument (the options still follow and override it).
    pub fn start_with_config(conf: Option<&std::path::Path>, extra: &[&str]) -> TestServer {
        for _ in 0..5 {
            let mut srv = Self::spawn(conf, extra);
            if srv.wait_ready() {
                return srv;
            }
        }
        panic!("volley-server could not bind a free port in 5 attempts");
    }

    fn spawn(conf: Option<&std::path::Path>, extra: &[&str]) -> TestServer {
        let port = free_port();
        let dir = attempt_dir("volley-test", port);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args: Vec<String> = conf.map(|c| c.display().to_string()).into_iter().collect();
        args.extend(
            ["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--dir"].iter().map(|s| s.to_string()),
        );
        args.push(dir.display().to_string());
        args.push("--logfile".into());
        args.push(dir.join("server.log").display().to_string());
        args.extend(extra.iter().map(|s| s.to_string()));
        let child = Command::new(env!("CARGO_BIN_EXE_volley-server"))
            .args(&args)
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn volley-server");
        TestServer { port, dir, child }
    }

    /// True once this very process listens (its log says so: a connect alone
    /// could reach another test's server on the same port); false if it
    /// exited because the port was taken.
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if !self.alive() {
                let log = self.log();
                assert!(log.contains("in use"), "volley-server exited at start; log:\n{log}");
                return false;
            }
            if self.log().contains("Ready to accept connections")
                && TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("volley-server did not listen on {} within 10s; log:\n{}", self.port, self.log());
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    pub fn client(&self) -> Client {
        Client::connect(self.port)
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Wait up to `timeout` for the process to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        wait_child(&mut self.child, timeout)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A reference redis-server on a free loopback port, with its own data
/// directory; killed on drop.
pub struct RedisServer {
    pub port: u16,
    pub dir: std::path::PathBuf,
    child: Child,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        for _ in 0..5 {
            let port = free_port();
            let dir = attempt_dir("volley-ref-redis", port);
            std::fs::create_dir_all(&dir).unwrap();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&dir)
                .stdout(Stdio::null())
                .stdin(Stdio::null())
                .spawn()
                .expect("redis-server is installed");
            let mut r = RedisServer { port, dir, child };
            if r.wait_ready() {
                return r;
            }
        }
        panic!("redis-server could not bind a free port in 5 attempts");
    }

    /// True once the server answering on the port is this very process:
    /// another test's server can hold the same port for a moment (and reset
    /// the connection as it stops), so a PONG alone proves nothing.
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        let want = format!("process_id:{}\r\n", self.child.id());
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return false;
            }
            if probe_info(self.port).is_some_and(|info| info.contains(&want)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn client(&self) -> Client {
        Client::connect(self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `INFO server` from whatever answers on `port`, or None on any failure.
fn probe_info(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n").ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Ok(Some((Frame::Bulk(b), _))) = resp::decode_frame(&buf) {
            return Some(String::from_utf8_lossy(&b).into_owned());
        }
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A blocking RESP client for tests, over TCP unless told otherwise (the
/// transport tests use Unix sockets and TLS streams).
pub struct Client<S: Read + Write = TcpStream> {
    pub stream: S,
    buf: Vec<u8>,
}

impl Client {
    pub fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        stream.set_nodelay(true).unwrap();
        Client::new(stream)
    }
}

impl<S: Read + Write> Client<S> {
    pub fn new(stream: S) -> Client<S> {
        Client { stream, buf: Vec::new() }
    }

    /// Send one command and return its decoded reply.
    pub fn cmd(&mut self, args: &[&str]) -> Frame {
        self.send_cmd(args);
        self.read_frame()
    }

    /// Send one command without reading its reply.
    pub fn send_cmd(&mut self, args: &[&str]) {
        let mut out = Vec::new();
        resp::encode_command(&mut out, args);
        self.send(&out);
    }

    /// Send one command (binary-safe arguments) and return the raw reply bytes.
    pub fn raw_cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<u8> {
        let mut out = Vec::new();
        resp::encode_command(&mut out, args);
        self.send(&out);
        self.read_raw()
    }

    /// Send raw bytes (e.g. inline commands or broken protocol); flushed,
    /// as a TLS stream needs.
    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
        self.stream.flush().unwrap();
    }

    pub fn read_frame(&mut self) -> Frame {
        loop {
            if let Some((f, n)) = resp::decode_frame(&self.buf).expect("valid RESP from server") {
                self.buf.drain(..n);
                return f;
            }
            self.fill();
        }
    }

    /// The next reply's exact bytes.
    pub fn read_raw(&mut self) -> Vec<u8> {
        loop {
            if let Some((_, n)) = resp::decode_frame(&self.buf).expect("valid RESP from server") {
                return self.buf.drain(..n).collect();
            }
            self.fill();
        }
    }

    fn fill(&mut self) {
        let mut chunk = [0u8; 65536];
        let n = self.stream.read(&mut chunk).expect("read reply");
        assert!(n > 0, "server closed the connection; pending: {:?}", String::from_utf8_lossy(&self.buf));
        self.buf.extend_from_slice(&chunk[..n]);
    }

    /// The next Pub/Sub message (or any array of bulks), as text parts.
    pub fn read_message(&mut self) -> Vec<String> {
        let Frame::Array(parts) = self.read_frame() else { panic!("not a message") };
        parts
            .iter()
            .map(|p| match p {
                Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// Everything until the server closes the connection.
    pub fn read_to_close(&mut self) -> Vec<u8> {
        let mut all = std::mem::take(&mut self.buf);
        let mut chunk = [0u8; 65536];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return all,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// True if the server closed the connection (after any pending replies).
    pub fn is_closed(&mut self) -> bool {
        let mut chunk = [0u8; 1024];
        matches!(self.stream.read(&mut chunk), Ok(0) | Err(_))
    }
}

/// Shorthands for expected replies.
pub fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}
pub fn simple(s: &str) -> Frame {
    Frame::Simple(s.as_bytes().to_vec())
}
pub fn err(s: &str) -> Frame {
    Frame::Error(s.as_bytes().to_vec())
}
pub fn int(i: i64) -> Frame {
    Frame::Integer(i)
}
pub fn ok() -> Frame {
    simple("OK")
}
pub fn arr(items: Vec<Frame>) -> Frame {
    Frame::Array(items)
}

/// Trace the server's syscalls (threads too) with strace `args` into a
/// file while `f` runs; returns what strace wrote.
pub fn traced(srv: &TestServer, args: &[&str], f: impl FnOnce()) -> String {
    let out = srv.dir.join("strace.txt");
    let mut tracer = Command::new("strace")
        .args(["-f", "-o"])
        .arg(&out)
        .args(args)
        .args(["-p", &srv.pid().to_string()])
        .stderr(Stdio::null())
        .spawn()
        .expect("strace must be installed (tests/compat/install.sh installs it)");
    std::thread::sleep(Duration::from_millis(500)); // let strace attach
    f();
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(tracer.id() as i32, libc::SIGINT) };
    tracer.wait().unwrap();
    std::fs::read_to_string(&out).unwrap()
}

/// Calls of the write family (`write`, `writev`, `sendto`, `sendmsg`) and
/// of the read family in a [`strace_counts`] map.
pub fn io_calls(counts: &std::collections::HashMap<String, u64>) -> (u64, u64) {
    let sum = |names: [&str; 4]| names.iter().filter_map(|s| counts.get(*s)).sum();
    (sum(["write", "writev", "sendto", "sendmsg"]), sum(["read", "readv", "recvfrom", "recvmsg"]))
}

/// strace's `-c` summary: calls per syscall name.
pub fn strace_counts(summary: &str) -> std::collections::HashMap<String, u64> {
    let mut m = std::collections::HashMap::new();
    for line in summary.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        // "% time seconds usecs/call calls [errors] syscall"
        if cols.len() >= 5 && cols[0].parse::<f64>().is_ok() {
            if let (Some(name), Ok(calls)) = (cols.last(), cols[3].parse::<u64>()) {
                m.insert(name.to_string(), calls);
            }
        }
    }
    m
}
