//! The coalescer as a pipe: several merged commands in flight before any
//! reply, submitters waiting while `max_ops` ops are unresolved, per-key order
//! and per-caller outcomes (WRONGTYPE and re-issues included) while many
//! small batches are in flight.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use common::{runtime, Server};
use volley_client::{aio, Coalescer, CoalescerConfig, ConnectOptions, Error, Value, ValueExt};

/// A scripted server for one connection: counts the commands it receives and
/// answers each with `+OK`, but only once `release` is set or `hold`
/// commands have arrived.
struct FakeServer {
    port: u16,
    seen: Arc<AtomicUsize>,
    release: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    fn start(hold: usize) -> FakeServer {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (seen, release) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let (s2, r2) = (seen.clone(), release.clone());
        let thread = std::thread::spawn(move || {
            let (mut sock, _) = l.accept().unwrap();
            sock.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
            let (mut buf, mut chunk, mut answered) = (Vec::new(), [0u8; 65536], 0);
            loop {
                match sock.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                    Err(_) => return,
                }
                while let Some((_, n)) = resp::decode_frame(&buf).unwrap() {
                    buf.drain(..n);
                    s2.fetch_add(1, Ordering::SeqCst);
                }
                let seen = s2.load(Ordering::SeqCst);
                if (r2.load(Ordering::SeqCst) || seen >= hold) && answered < seen {
                    sock.write_all(&b"+OK\r\n".repeat(seen - answered)).unwrap();
                    answered = seen;
                }
            }
        });
        FakeServer { port, seen, release, thread: Some(thread) }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.release.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn several_merged_batches_are_in_flight_before_any_reply() {
    let fake = FakeServer::start(5);
    runtime().block_on(async {
        let conn = aio::Connection::connect(&ConnectOptions::new("127.0.0.1", fake.port)).await.unwrap();
        let cfg = CoalescerConfig { max_args: 10, max_age: Duration::from_secs(600), ..Default::default() };
        let c = Coalescer::new(conn, cfg);
        let mut tickets = Vec::new();
        for i in 0..25 {
            tickets.push(c.set(format!("k{i}"), "v").await.unwrap());
        }
        // The fake answers nothing until 5 commands have arrived: a writer
        // waiting for each reply before the next write would hang here.
        tokio::time::timeout(Duration::from_secs(10), c.flush()).await.expect("5 MSETs in flight").unwrap();
        for t in tickets {
            t.await.unwrap();
        }
        drop(c);
    });
    assert_eq!(fake.seen.load(Ordering::SeqCst), 5, "25 SETs, 5 per MSET");
}

#[test]
fn submitters_wait_while_max_ops_are_unresolved() {
    let fake = FakeServer::start(usize::MAX);
    runtime().block_on(async {
        let conn = aio::Connection::connect(&ConnectOptions::new("127.0.0.1", fake.port)).await.unwrap();
        let cfg = CoalescerConfig { max_args: 2, max_ops: 8, ..Default::default() };
        let c = Coalescer::new(conn, cfg);
        let mut tickets = Vec::new();
        for i in 0..8 {
            tickets.push(c.set(format!("k{i}"), "v").await.unwrap());
        }
        let ninth = tokio::time::timeout(Duration::from_millis(300), c.set("k8", "v")).await;
        assert!(ninth.is_err(), "9th submit must wait while 8 ops are unanswered");
        assert!(!tickets[0].is_ready());
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while fake.seen.load(Ordering::SeqCst) < 8 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(fake.seen.load(Ordering::SeqCst), 8, "all 8 written without waiting for replies");
        fake.release.store(true, Ordering::SeqCst);
        let t9 = tokio::time::timeout(Duration::from_secs(5), c.set("k8", "v")).await.expect("space after replies");
        tickets.push(t9.unwrap());
        c.flush().await.unwrap();
        for t in tickets {
            t.await.unwrap();
        }
    });
}

fn small_batches() -> CoalescerConfig {
    // Every few ops seal a batch: many small merged commands in flight.
    CoalescerConfig { max_args: 3, max_age: Duration::from_millis(200), ..Default::default() }
}

async fn pair(s: &Server, cfg: CoalescerConfig) -> (Coalescer, aio::Connection) {
    let conn = aio::Connection::connect(&s.opts()).await.unwrap();
    (Coalescer::new(conn, cfg), aio::Connection::connect(&s.opts()).await.unwrap())
}

#[test]
fn wrongtype_inside_merged_batches_reaches_only_their_callers() {
    for s in Server::both() {
        runtime().block_on(async {
            let (c, mut check) =
                pair(&s, CoalescerConfig { max_age: Duration::from_secs(600), ..Default::default() }).await;
            check.cmd(&["SET", "str", "text"]).await.unwrap();
            let h1 = c.hset("str", "f1", "v1").await.unwrap();
            let set_a = c.set("a", "1").await.unwrap();
            let h2 = c.hset("str", "f2", "v2").await.unwrap();
            let p1 = c.rpush("str", "x").await.unwrap();
            let l1 = c.rpush("l", "x").await.unwrap();
            let p2 = c.rpush("str", "y").await.unwrap();
            let l2 = c.rpush("l", "y").await.unwrap();
            let set_b = c.set("b", "2").await.unwrap();
            let i1 = c.incr("str").await.unwrap();
            let i2 = c.incrby("str", 2).await.unwrap();
            c.flush().await.unwrap();
            for (what, r) in [("hset", h1.await), ("hset", h2.await), ("rpush", p1.await.map(drop))] {
                assert_eq!(r.unwrap_err().code(), Some("WRONGTYPE"), "{}: {what}", s.name);
            }
            assert_eq!(p2.await.unwrap_err().code(), Some("WRONGTYPE"), "{}", s.name);
            for r in [i1.await, i2.await] {
                assert!(
                    matches!(&r, Err(Error::Server(e)) if e.message.contains("not an integer")),
                    "{}: {r:?}",
                    s.name
                );
            }
            set_a.await.unwrap();
            set_b.await.unwrap();
            assert_eq!((l1.await.unwrap(), l2.await.unwrap()), (1, 2), "{}", s.name);
            let got = check.cmd(&["MGET", "a", "b", "str"]).await.unwrap();
            let want: Vec<Value> = ["1", "2", "text"].iter().map(|v| Value::Bulk(v.as_bytes().to_vec())).collect();
            assert_eq!(got, Value::Array(want), "{}", s.name);
        });
    }
}

#[test]
fn reissued_incrby_is_not_overtaken_by_later_batches() {
    for s in Server::both() {
        runtime().block_on(async {
            // One flush, one write: INCRBY o 106, SET o 0, INCRBY o 2. The
            // first overflows and is re-issued op by op; the batches after it
            // touch "o" and must wait for that instead of going out with it.
            let cfg = CoalescerConfig { max_age: Duration::from_secs(600), ..Default::default() };
            let (c, mut check) = pair(&s, cfg).await;
            let top = i64::MAX;
            check.cmd(&["SET", "o", &(top - 10).to_string()]).await.unwrap();
            let ok = c.incrby("o", 5).await.unwrap();
            let overflow = c.incrby("o", 100).await.unwrap();
            let ok2 = c.incrby("o", 1).await.unwrap();
            let reset = c.set("o", "0").await.unwrap();
            let after = c.incr("o").await.unwrap();
            let after2 = c.incr("o").await.unwrap();
            c.flush().await.unwrap();
            assert_eq!(ok.await.unwrap(), top - 5, "{}", s.name);
            assert!(matches!(overflow.await, Err(Error::Server(_))), "{}", s.name);
            assert_eq!(ok2.await.unwrap(), top - 4, "{}", s.name);
            reset.await.unwrap();
            assert_eq!((after.await.unwrap(), after2.await.unwrap()), (1, 2), "{}", s.name);
            assert_eq!(check.cmd(&["GET", "o"]).await.unwrap().as_i64(), Some(2), "{}", s.name);
        });
    }
}

enum Expect {
    Set(volley_client::Ticket<()>),
    Del(volley_client::Ticket<bool>, bool),
    Incr(volley_client::Ticket<i64>, i64),
}

#[test]
fn per_key_order_with_many_batches_in_flight() {
    for s in Server::both() {
        runtime().block_on(async {
            let (c, mut check) = pair(&s, small_batches()).await;
            let keys = ["p", "q", "r", "s", "t"];
            let mut model: std::collections::HashMap<&str, i64> = Default::default();
            let mut expects = Vec::new();
            let mut x: u32 = 777;
            for i in 0..3000i64 {
                x = x.wrapping_mul(1103515245).wrapping_add(12345);
                let k = keys[(x >> 16) as usize % keys.len()];
                match (x >> 8) % 5 {
                    0 => expects.push(Expect::Del(c.del(k).await.unwrap(), model.remove(k).is_some())),
                    1 | 2 => {
                        let v = model.get(k).copied().unwrap_or(0) + 1;
                        model.insert(k, v);
                        expects.push(Expect::Incr(c.incr(k).await.unwrap(), v));
                    }
                    _ => {
                        model.insert(k, i);
                        expects.push(Expect::Set(c.set(k, i.to_string()).await.unwrap()));
                    }
                }
            }
            c.flush().await.unwrap();
            for (n, e) in expects.into_iter().enumerate() {
                match e {
                    Expect::Set(t) => t.await.unwrap(),
                    Expect::Del(t, existed) => assert_eq!(t.await.unwrap(), existed, "{}: op {n}", s.name),
                    Expect::Incr(t, v) => assert_eq!(t.await.unwrap(), v, "{}: op {n}", s.name),
                }
            }
            for k in keys {
                let got = check.cmd(&["GET", k]).await.unwrap().as_i64();
                assert_eq!(got, model.get(k).copied(), "{}: key {k}", s.name);
            }
        });
    }
}

#[test]
fn a_dropped_connection_fails_every_ticket_instead_of_hanging() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut sock, _) = l.accept().unwrap();
        let mut buf = [0u8; 1024];
        let _ = sock.read(&mut buf); // take the first write, answer nothing, hang up
    });
    runtime().block_on(async {
        let conn = aio::Connection::connect(&ConnectOptions::new("127.0.0.1", port)).await.unwrap();
        let cfg = CoalescerConfig { max_args: 4, ..Default::default() };
        let c = Coalescer::new(conn, cfg);
        let mut tickets = Vec::new();
        for i in 0..20 {
            tickets.push(c.set(format!("k{i}"), "v").await.unwrap());
        }
        tokio::time::timeout(Duration::from_secs(10), c.flush()).await.expect("flush returns").unwrap();
        for t in tickets {
            let r = tokio::time::timeout(Duration::from_secs(5), t).await.expect("resolved");
            assert!(matches!(r, Err(Error::Io(_) | Error::Closed)), "{r:?}");
        }
        let late = c.set("late", "v").await.unwrap();
        c.flush().await.unwrap();
        assert!(late.await.is_err(), "ops after the failure fail too");
    });
    server.join().unwrap();
}

#[test]
fn dropping_the_coalescer_still_delivers_what_was_buffered() {
    let s = Server::volley();
    runtime().block_on(async {
        let cfg = CoalescerConfig { max_age: Duration::from_secs(600), ..Default::default() };
        let (c, mut check) = pair(&s, cfg).await;
        let tickets = [c.set("d1", "x").await.unwrap(), c.set("d2", "y").await.unwrap()];
        let n = c.incr("dn").await.unwrap();
        drop(c);
        for t in tickets {
            tokio::time::timeout(Duration::from_secs(5), t).await.expect("resolved after drop").unwrap();
        }
        assert_eq!(n.await.unwrap(), 1);
        assert_eq!(check.cmd(&["EXISTS", "d1", "d2"]).await.unwrap().as_i64(), Some(2));
    });
}
