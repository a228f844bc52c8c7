//! Durability proof: a client pipelines `RPUSH log i` + `SET k<i> i` while
//! the server is SIGKILLed at a random moment; after a restart on the same
//! directory the dataset must be a prefix of what was sent (no holes) that
//! holds every acknowledged write (`always`), or all but about the last
//! two seconds of them (`everysec`). A full disk turns writes into MISCONF
//! while reads keep working.
mod aof_support;
mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aof_support::*;
use common::*;

/// Acknowledged pairs so far, with when each batch was acknowledged.
#[derive(Default)]
struct Progress {
    acked: usize,
    sent: usize,
    history: Vec<(Instant, usize)>,
}

/// Pipeline batches until the connection dies; progress is shared.
fn write_until_killed(port: u16, progress: Arc<Mutex<Progress>>, pause: Duration) {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = Vec::new();
    let mut i = 0usize;
    loop {
        let mut batch = Vec::new();
        for j in i..i + 25 {
            resp::encode_command(&mut batch, &["RPUSH", "log", &j.to_string()]);
            resp::encode_command(&mut batch, &["SET", &format!("k{j}"), &j.to_string()]);
        }
        progress.lock().unwrap().sent = i + 25;
        if s.write_all(&batch).is_err() {
            return;
        }
        let mut replies = 0;
        while replies < 50 {
            match resp::decode_frame(&buf) {
                Ok(Some((f, n))) => {
                    buf.drain(..n);
                    if replies % 2 == 0 {
                        assert_eq!(f, int((i + replies / 2 + 1) as i64), "RPUSH reply");
                    }
                    replies += 1;
                    // A pair is acknowledged once both replies arrived.
                    if replies % 2 == 0 {
                        progress.lock().unwrap().acked = i + replies / 2;
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => panic!("bad reply: {e:?}"),
            }
            let mut chunk = [0u8; 65536];
            match s.read(&mut chunk) {
                Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        }
        i += 25;
        let mut p = progress.lock().unwrap();
        p.history.push((Instant::now(), i));
        drop(p);
        std::thread::sleep(pause);
    }
}

/// Check the restarted dataset is a prefix of the sent pairs; its length.
fn recovered_prefix(c: &mut Client, sent: usize) -> usize {
    let Frame::Array(items) = c.cmd(&["LRANGE", "log", "0", "-1"]) else { panic!("LRANGE") };
    let len = items.len();
    for (j, item) in items.iter().enumerate() {
        assert_eq!(*item, bulk(&j.to_string()), "hole in the list at {j}");
    }
    assert!(len <= sent, "{len} pushes recovered but only {sent} sent");
    // SET k<j> follows RPUSH j: all before the last push exist, none after.
    for j in 0..len.saturating_sub(1) {
        assert_eq!(c.cmd(&["GET", &format!("k{j}")]), bulk(&j.to_string()), "k{j} missing");
    }
    assert_eq!(c.cmd(&["EXISTS", &format!("k{len}")]), int(0), "k{len} exists without its push");
    let Frame::Integer(keys) = c.cmd(&["DBSIZE"]) else { panic!("DBSIZE") };
    let keys = keys as usize;
    assert!(len == 0 || keys == len || keys == len + 1, "{keys} keys for {len} pushes");
    len
}

/// A tiny deterministic-per-run random source (no extra dependency).
fn random_ms(state: &mut u64, lo: u64, hi: u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    lo + *state % (hi - lo)
}

/// One crash: write, SIGKILL after `delay`, restart, check.
fn crash_once(policy: &str, delay: Duration, pause: Duration) -> (Progress, usize, Instant) {
    let dir = DataDir::new(policy);
    let mut srv = start_aof(&dir, &["--appendfsync", policy]);
    let progress = Arc::new(Mutex::new(Progress::default()));
    let p2 = progress.clone();
    let port = srv.port;
    let writer = std::thread::spawn(move || write_until_killed(port, p2, pause));
    std::thread::sleep(delay);
    let killed_at = Instant::now();
    kill9(&mut srv);
    writer.join().unwrap();
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    let progress = std::mem::take(&mut *progress.lock().unwrap());
    let got = recovered_prefix(&mut c, progress.sent);
    (progress, got, killed_at)
}

#[test]
fn always_never_loses_an_acknowledged_write() {
    let mut seed = 0x9E37_79B9_7F4A_7C15 ^ std::process::id() as u64;
    let started = Instant::now();
    for round in 0..20 {
        let delay = Duration::from_millis(random_ms(&mut seed, 20, 300));
        let (p, got, _) = crash_once("always", delay, Duration::ZERO);
        assert!(got >= p.acked, "round {round}: {} acknowledged, {got} recovered", p.acked);
        assert!(started.elapsed() < Duration::from_secs(50), "too slow");
    }
}

#[test]
fn everysec_loses_at_most_about_two_seconds() {
    let mut seed = 0x2545_F491_4F6C_DD1D ^ std::process::id() as u64;
    for round in 0..3 {
        let delay = Duration::from_millis(random_ms(&mut seed, 2500, 3500));
        let (p, got, killed_at) = crash_once("everysec", delay, Duration::from_millis(2));
        let safe = p.history.iter().filter(|(t, _)| *t + Duration::from_millis(2200) <= killed_at).map(|&(_, n)| n);
        let must_have = safe.max().unwrap_or(0);
        assert!(must_have > 0, "round {round}: nothing acknowledged 2 s before the kill");
        assert!(got >= must_have, "round {round}: lost writes older than 2 s: {got} < {must_have}");
    }
}

#[test]
fn appendfsync_no_restarts_cleanly_after_a_crash() {
    for round in 0..3 {
        let (p, got, _) = crash_once("no", Duration::from_millis(150 + round * 100), Duration::ZERO);
        assert!(got <= p.sent);
    }
}

/// Limit the server's file size (RLIMIT_FSIZE) to simulate a full disk.
fn limit_file_size(pid: u32, bytes: u64) {
    let lim = libc::rlimit { rlim_cur: bytes, rlim_max: libc::RLIM_INFINITY };
    // SAFETY: valid rlimit pointer; pid is our own child.
    let r = unsafe { libc::prlimit(pid as i32, libc::RLIMIT_FSIZE, &lim, std::ptr::null_mut()) };
    assert_eq!(r, 0, "prlimit: {}", std::io::Error::last_os_error());
}

/// Twenty 1 KB values on disk with `policy`, then a file-size limit just
/// above the incr file: the next write fails as on a full disk.
fn fill_then_fill_the_disk(dir: &DataDir, policy: &str) -> (TestServer, Client, String) {
    let srv = start_aof(dir, &["--appendfsync", policy]);
    let mut c = srv.client();
    let value = "x".repeat(1000);
    for i in 0..20 {
        assert_eq!(c.cmd(&["SET", &format!("old{i}"), &value]), ok());
    }
    let size = std::fs::metadata(dir.last_incr()).unwrap().len();
    limit_file_size(srv.pid(), size + 10);
    (srv, c, value)
}

#[test]
fn full_disk_gives_misconf_keeps_reads_and_recovers() {
    let dir = DataDir::new("full");
    let (mut srv, mut c, value) = fill_then_fill_the_disk(&dir, "everysec");
    // The write that hits the limit is acknowledged (everysec acks before
    // fsync anyway) and stays buffered; once the write failed (at once, or
    // after a running fsync) the next ones are refused.
    assert_eq!(c.cmd(&["SET", "pending", &value]), ok());
    let failed =
        wait_for(Duration::from_secs(5), || info_field(&mut c, "persistence", "aof_last_write_status") == "err");
    assert!(failed, "the AOF write never failed");
    let misconf = err("MISCONF Errors writing to the AOF file: File too large");
    assert_eq!(c.cmd(&["SET", "refused", "v"]), misconf);
    assert_eq!(c.cmd(&["RPUSH", "refused", "v"]), misconf);
    assert_eq!(c.cmd(&["GET", "old3"]), bulk(&value));
    assert_eq!(info_field(&mut c, "persistence", "aof_last_write_status"), "err");
    assert!(srv.log().contains("Error writing to the AOF file: File too large"), "{}", srv.log());
    // Space again: cron retries the buffered write and writes are accepted.
    limit_file_size(srv.pid(), libc::RLIM_INFINITY);
    assert!(wait_for(Duration::from_secs(5), || c.cmd(&["SET", "after", "v"]) == ok()));
    assert!(srv.log().contains("AOF write error looks solved"));
    std::thread::sleep(Duration::from_millis(1200)); // everysec fsync
    kill9(&mut srv);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["GET", "old19"]), bulk(&value));
    assert_eq!(c.cmd(&["GET", "pending"]), bulk(&value));
    assert_eq!(c.cmd(&["GET", "after"]), bulk("v"));
    assert_eq!(c.cmd(&["EXISTS", "refused"]), int(0));
}

#[test]
fn full_disk_with_always_exits_without_acknowledging() {
    let dir = DataDir::new("full-always");
    let (mut srv, mut c, value) = fill_then_fill_the_disk(&dir, "always");
    let mut req = Vec::new();
    resp::encode_command(&mut req, &["SET", "lost", &value]);
    c.send(&req);
    assert!(c.is_closed(), "a reply was sent for a write that is not on disk");
    let status = srv.wait_exit(Duration::from_secs(10)).expect("server exits");
    assert!(!status.success());
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["GET", "old19"]), bulk(&value));
    assert_eq!(c.cmd(&["EXISTS", "lost"]), int(0));
}
