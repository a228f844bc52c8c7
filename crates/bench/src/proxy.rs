//! A TCP delay proxy: every chunk read from one side is released to the other
//! side at `read_time + rtt/2`, in order, like toxiproxy's latency toxic.
//!
//! Each direction of each connection has a reader thread (stamps chunks with
//! their deadline) and a writer thread (sleeps until the deadline, writes).
//! Chunks never wait for each other beyond their own deadlines, so a pipeline
//! pays the delay once, not once per chunk.
//!
//! Why threads and not tokio: tokio's timer wheel rounds every deadline up to
//! the next millisecond (`deadline_to_tick` in tokio 1.54) and mio's epoll
//! timeout is in whole milliseconds, so a 1.65 ms half-RTT would become 2–3 ms.
//! `std::thread::sleep` (nanosleep) is accurate to ~0.1 ms here.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Read size per chunk.
const CHUNK: usize = 64 * 1024;
/// Chunks queued per direction before the reader stops reading (backpressure).
const QUEUE: usize = 4096;

/// One proxied connection: both sockets (to close them on stop) and how many
/// of its two writer threads have finished (2 = gone, prune it).
struct Link {
    sockets: [TcpStream; 2],
    finished: Arc<AtomicUsize>,
}

type Links = Arc<Mutex<Vec<Link>>>;

/// A running proxy. Dropping it (or calling [`ProxyHandle::stop`]) closes the
/// listener and every proxied connection.
pub struct ProxyHandle {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    conns: Links,
    accept: Option<JoinHandle<()>>,
}

impl ProxyHandle {
    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop accepting, close all connections and wait for the accept loop.
    pub fn stop(&mut self) {
        if self.stop.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake the blocking accept() with a throwaway connection.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        for link in self.conns.lock().unwrap().drain(..) {
            for s in &link.sockets {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }

    /// Block until the proxy is stopped from elsewhere (used by the CLI).
    pub fn wait(mut self) {
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Start a delay proxy on a free loopback port in front of `upstream`, adding
/// `rtt / 2` in each direction. Returns the listening address and its handle.
pub fn spawn_proxy(upstream: SocketAddr, rtt: Duration) -> io::Result<(SocketAddr, ProxyHandle)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let handle = serve(listener, upstream, rtt)?;
    Ok((handle.addr(), handle))
}

/// Run a delay proxy on an already-bound listener.
pub fn serve(listener: TcpListener, upstream: SocketAddr, rtt: Duration) -> io::Result<ProxyHandle> {
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let conns = Arc::new(Mutex::new(Vec::new()));
    let (stop2, conns2) = (stop.clone(), conns.clone());
    let accept = thread::Builder::new()
        .name("proxy-accept".into())
        .spawn(move || accept_loop(listener, upstream, rtt / 2, stop2, conns2))?;
    Ok(ProxyHandle { addr, stop, conns, accept: Some(accept) })
}

fn accept_loop(listener: TcpListener, upstream: SocketAddr, delay: Duration, stop: Arc<AtomicBool>, conns: Links) {
    for client in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let server = match TcpStream::connect(upstream) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("proxy: cannot connect to upstream {upstream}: {e}");
                continue;
            }
        };
        if let Err(e) = link(client, server, delay, &conns) {
            eprintln!("proxy: connection setup failed: {e}");
        }
    }
}

/// Wire both directions of one proxied connection.
fn link(client: TcpStream, server: TcpStream, delay: Duration, conns: &Mutex<Vec<Link>>) -> io::Result<()> {
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let finished = Arc::new(AtomicUsize::new(0));
    {
        let mut list = conns.lock().unwrap();
        list.retain(|l| l.finished.load(Ordering::SeqCst) < 2);
        list.push(Link { sockets: [client.try_clone()?, server.try_clone()?], finished: finished.clone() });
    }
    pipe(client.try_clone()?, server.try_clone()?, delay, finished.clone())?;
    pipe(server, client, delay, finished)?;
    Ok(())
}

/// One direction: `src` → `dst`, each chunk delayed by `delay`.
fn pipe(src: TcpStream, dst: TcpStream, delay: Duration, finished: Arc<AtomicUsize>) -> io::Result<()> {
    let (tx, rx) = mpsc::sync_channel::<(Instant, Option<Vec<u8>>)>(QUEUE);
    let src_for_writer = src.try_clone()?;
    thread::Builder::new().name("proxy-read".into()).spawn(move || read_side(src, delay, tx))?;
    thread::Builder::new().name("proxy-write".into()).spawn(move || {
        write_side(dst, src_for_writer, rx);
        finished.fetch_add(1, Ordering::SeqCst);
    })?;
    Ok(())
}

fn read_side(mut src: TcpStream, delay: Duration, tx: mpsc::SyncSender<(Instant, Option<Vec<u8>>)>) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match src.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = tx.send((Instant::now() + delay, None));
                return;
            }
            Ok(n) => {
                if tx.send((Instant::now() + delay, Some(buf[..n].to_vec()))).is_err() {
                    return;
                }
            }
        }
    }
}

/// Ask the kernel to wake this thread's sleeps on time: the default 50 µs
/// timer slack would add up to 0.1 ms per round trip.
fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and only affects the
    // calling thread; failure is harmless (the default slack stays).
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

fn write_side(mut dst: TcpStream, src: TcpStream, rx: mpsc::Receiver<(Instant, Option<Vec<u8>>)>) {
    tighten_timer_slack();
    while let Ok((deadline, chunk)) = rx.recv() {
        let now = Instant::now();
        if deadline > now {
            thread::sleep(deadline - now);
        }
        match chunk {
            Some(bytes) => {
                if dst.write_all(&bytes).is_err() {
                    break;
                }
            }
            None => {
                // Pass the half-close on, after the same delay as data.
                let _ = dst.shutdown(Shutdown::Write);
                return;
            }
        }
    }
    // The destination failed: stop the source too, so its reader ends.
    let _ = src.shutdown(Shutdown::Both);
    let _ = dst.shutdown(Shutdown::Both);
}

/// Parse a duration like `3.3ms`, `200us`, `1s` or a bare number of
/// milliseconds (`3.3`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, scale) = if let Some(v) = s.strip_suffix("ms") {
        (v, 1e-3)
    } else if let Some(v) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
        (v, 1e-6)
    } else if let Some(v) = s.strip_suffix("ns") {
        (v, 1e-9)
    } else if let Some(v) = s.strip_suffix('s') {
        (v, 1.0)
    } else {
        (s, 1e-3)
    };
    let x: f64 = num.trim().parse().map_err(|_| format!("bad duration {s:?} (try 3.3ms)"))?;
    if !x.is_finite() || x < 0.0 {
        return Err(format!("bad duration {s:?}"));
    }
    Ok(Duration::from_secs_f64(x * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("3.3ms").unwrap(), Duration::from_micros(3300));
        assert_eq!(parse_duration("3.3").unwrap(), Duration::from_micros(3300));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("200us").unwrap(), Duration::from_micros(200));
        assert_eq!(parse_duration("1s").unwrap(), Duration::from_secs(1));
        assert!(parse_duration("-1ms").is_err());
        assert!(parse_duration("fast").is_err());
    }
}
