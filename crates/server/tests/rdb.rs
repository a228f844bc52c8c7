//! Black-box tests of RDB persistence: SAVE/BGSAVE/SHUTDOWN write a file a
//! restarted server loads identically; save points fire; a failed
//! background save turns on MISCONF until a save succeeds; damaged files
//! stop the server from starting; a failing save never harms the old dump.
mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A directory for dumps that outlives the servers started on it.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("volley-rdb-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
    fn s(&self) -> String {
        self.0.display().to_string()
    }
    fn dump(&self) -> PathBuf {
        self.0.join("dump.rdb")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(dir: &Dir, extra: &[&str]) -> TestServer {
    let d = dir.s();
    let mut args = vec!["--dir", d.as_str()];
    args.extend_from_slice(extra);
    TestServer::start(&args)
}

fn info_field(c: &mut Client, name: &str) -> String {
    let Frame::Bulk(b) = c.cmd(&["INFO", "persistence"]) else { panic!("INFO") };
    let text = String::from_utf8(b).unwrap();
    let prefix = format!("{name}:");
    let line = text.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no {name} in {text}"));
    line[prefix.len()..].to_string()
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_bgsave(c: &mut Client) {
    wait_for("the BGSAVE to end", Duration::from_secs(20), || info_field(c, "rdb_bgsave_in_progress") == "0");
}

fn cmd_args(c: &mut Client, args: Vec<String>) -> Frame {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    c.cmd(&refs)
}

/// Every type, small and large encodings, expiries, in dbs 0 and 5.
fn populate(c: &mut Client) {
    assert_eq!(c.cmd(&["SET", "str", "hello"]), ok());
    assert_eq!(c.cmd(&["SET", "int", "-12345"]), ok());
    assert_eq!(c.cmd(&["SET", "long", &"abc".repeat(200)]), ok());
    assert_eq!(c.cmd(&["SET", "ttl", "v", "EX", "1000"]), ok());
    assert_eq!(c.cmd(&["APPEND", "raw", "12"]), int(2));
    let mut push = vec!["RPUSH".to_string(), "biglist".into()];
    push.extend((0..3000).map(|i| format!("element-{i}")));
    assert_eq!(cmd_args(c, push), int(3000));
    c.cmd(&["RPUSH", "list", "a", "1", "-99999999999", ""]);
    c.cmd(&["SADD", "intset", "1", "2", "-3", "9223372036854775807"]);
    c.cmd(&["SADD", "strset", "a", "b", "c"]);
    let mut sadd = vec!["SADD".to_string(), "bigset".into()];
    sadd.extend((0..1000).map(|i| i.to_string()));
    cmd_args(c, sadd);
    c.cmd(&["ZADD", "zset", "1.5", "a", "-inf", "b", "inf", "c"]);
    let mut zadd = vec!["ZADD".to_string(), "bigzset".into()];
    for i in 0..400 {
        zadd.push(format!("{}", i as f64 / 7.0));
        zadd.push(format!("m{i}"));
    }
    cmd_args(c, zadd);
    c.cmd(&["HSET", "hash", "f", "v", "n", "1"]);
    let mut hset = vec!["HSET".to_string(), "bighash".into()];
    for i in 0..300 {
        hset.push(format!("field{i}"));
        hset.push("x".repeat(i % 100));
    }
    cmd_args(c, hset);
    c.cmd(&["EXPIRE", "bighash", "5000"]);
    c.cmd(&["SELECT", "5"]);
    c.cmd(&["SET", "in-db-5", "five"]);
    c.cmd(&["ZADD", "z5", "1", "one"]);
    c.cmd(&["SELECT", "0"]);
}

fn sorted_frame(f: Frame) -> Frame {
    let Frame::Array(mut v) = f else { return f };
    v.sort_by_key(|x| format!("{x:?}"));
    Frame::Array(v)
}

/// (db, key, type, value, ttl ms) of every key in the given dbs.
fn snapshot(c: &mut Client, dbs: &[usize]) -> Vec<(usize, String, Frame, Frame, i64)> {
    let mut out = Vec::new();
    for &db in dbs {
        c.cmd(&["SELECT", &db.to_string()]);
        let Frame::Array(keys) = sorted_frame(c.cmd(&["KEYS", "*"])) else { panic!("KEYS") };
        for k in keys {
            let Frame::Bulk(k) = k else { panic!() };
            let k = String::from_utf8(k).unwrap();
            let t = c.cmd(&["TYPE", &k]);
            let value = match &t {
                Frame::Simple(s) if s == b"string" => c.cmd(&["GET", &k]),
                Frame::Simple(s) if s == b"list" => c.cmd(&["LRANGE", &k, "0", "-1"]),
                Frame::Simple(s) if s == b"set" => sorted_frame(c.cmd(&["SMEMBERS", &k])),
                Frame::Simple(s) if s == b"zset" => c.cmd(&["ZRANGE", &k, "0", "-1", "WITHSCORES"]),
                Frame::Simple(s) if s == b"hash" => sorted_frame(c.cmd(&["HGETALL", &k])),
                other => panic!("type {other:?}"),
            };
            let Frame::Integer(ttl) = c.cmd(&["PTTL", &k]) else { panic!("PTTL") };
            out.push((db, k, t, value, ttl));
        }
    }
    c.cmd(&["SELECT", "0"]);
    out
}

fn assert_same(a: &[(usize, String, Frame, Frame, i64)], b: &[(usize, String, Frame, Frame, i64)]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!((x.0, &x.1, &x.2, &x.3), (y.0, &y.1, &y.2, &y.3));
        assert_eq!(x.4 < 0, y.4 < 0, "{} ttl", x.1);
        assert!((x.4 - y.4).abs() < 5_000, "{} ttl {} vs {}", x.1, x.4, y.4);
    }
}

#[test]
fn save_and_restart_restores_every_type() {
    let dir = Dir::new("restart");
    let before;
    {
        let srv = start(&dir, &[]);
        let mut c = srv.client();
        populate(&mut c);
        before = snapshot(&mut c, &[0, 5]);
        assert_eq!(c.cmd(&["SAVE"]), ok());
        assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), "0");
    }
    let srv = start(&dir, &[]);
    let mut c = srv.client();
    assert_same(&before, &snapshot(&mut c, &[0, 5]));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "intset"]), bulk("intset"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "bighash"]), bulk("hashtable"));
    assert_eq!(info_field(&mut c, "rdb_last_load_keys_loaded"), "16");
    assert!(srv.log().contains("DB loaded from disk"), "{}", srv.log());
    let check = Command::new("redis-check-rdb").arg(dir.dump()).output();
    if let Ok(out) = check {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("RDB looks OK"), "{text}");
    }
}

#[test]
fn bgsave_while_writes_continue() {
    let dir = Dir::new("bgsave");
    let srv = start(&dir, &[]);
    let mut c = srv.client();
    for chunk in 0..20 {
        let mut mset = vec!["MSET".to_string()];
        for i in 0..2000 {
            mset.push(format!("key:{chunk}:{i}"));
            mset.push(format!("value-{i}-{}", "p".repeat(30)));
        }
        cmd_args(&mut c, mset);
    }
    let t0 = c.cmd(&["LASTSAVE"]);
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(c.cmd(&["BGSAVE"]), simple("Background saving started"));
    // Writes keep being served while the child works.
    for i in 0..200 {
        assert_eq!(c.cmd(&["SET", &format!("late:{i}"), "x"]), ok());
    }
    let again = c.cmd(&["BGSAVE"]);
    assert!(again == err("ERR Background save already in progress") || again == simple("Background saving started"));
    wait_bgsave(&mut c);
    assert_eq!(info_field(&mut c, "rdb_last_bgsave_status"), "ok");
    // The child reports what it copied on write (at least its own buffers).
    let cow: u64 = info_field(&mut c, "rdb_last_cow_size").parse().unwrap();
    assert!(cow > 0 && cow < 1 << 30, "{cow}");
    assert_ne!(c.cmd(&["LASTSAVE"]), t0);
    let Frame::Integer(n) = c.cmd(&["DBSIZE"]) else { panic!() };
    drop(c);
    drop(srv);
    let srv = start(&dir, &[]);
    let mut c = srv.client();
    let Frame::Integer(loaded) = c.cmd(&["DBSIZE"]) else { panic!() };
    assert!((40_000..=n).contains(&loaded), "{loaded} of {n}");
    assert_eq!(c.cmd(&["GET", "key:19:1999"]), bulk(&format!("value-1999-{}", "p".repeat(30))));
}

#[test]
fn save_points_trigger_a_background_save() {
    let dir = Dir::new("savepoint");
    let srv = start(&dir, &["--save", "1 2"]);
    let mut c = srv.client();
    c.cmd(&["SET", "a", "1"]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!dir.dump().exists(), "one change is below the save point");
    c.cmd(&["SET", "b", "2"]);
    wait_for("the save point", Duration::from_secs(10), || dir.dump().exists());
    wait_bgsave(&mut c);
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), "0");
    assert!(srv.log().contains("2 changes in 1 seconds. Saving..."), "{}", srv.log());
}

#[test]
fn shutdown_saves_unless_nosave() {
    let dir = Dir::new("shutdown");
    let mut srv = start(&dir, &["--save", ""]);
    let mut c = srv.client();
    c.cmd(&["SET", "k", "v"]);
    c.send(b"SHUTDOWN NOSAVE\r\n");
    srv.wait_exit(Duration::from_secs(10)).expect("exits");
    assert!(!dir.dump().exists());

    let mut srv = start(&dir, &["--save", ""]);
    let mut c = srv.client();
    c.cmd(&["SET", "k", "v"]);
    c.send(b"SHUTDOWN SAVE\r\n");
    srv.wait_exit(Duration::from_secs(10)).expect("exits");
    assert!(dir.dump().exists());

    // With save points, a plain SHUTDOWN saves too.
    let mut srv = start(&dir, &["--save", "3600 1"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["GET", "k"]), bulk("v"));
    c.cmd(&["SET", "k2", "v2"]);
    c.send(b"SHUTDOWN\r\n");
    srv.wait_exit(Duration::from_secs(10)).expect("exits");
    let srv = start(&dir, &["--save", "3600 1"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["GET", "k2"]), bulk("v2"));
    // SIGTERM saves like a plain SHUTDOWN.
    c.cmd(&["SET", "k3", "v3"]);
    let mut other = start(&dir, &["--save", "3600 1"]);
    drop(c);
    drop(srv);
    other.client().cmd(&["SET", "k3", "by-sigterm"]);
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(other.pid() as i32, libc::SIGTERM) };
    other.wait_exit(Duration::from_secs(10)).expect("exits on SIGTERM");
    let srv = start(&dir, &["--save", "3600 1"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["GET", "k3"]), bulk("by-sigterm"));
    // FLUSHALL with save points writes the empty dataset at once.
    assert_eq!(c.cmd(&["FLUSHALL"]), ok());
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), "1");
    let srv2 = start(&dir, &["--save", ""]);
    assert_eq!(srv2.client().cmd(&["DBSIZE"]), int(0));
}

#[test]
fn lastsave_moves_and_debug_reload_keeps_data() {
    let dir = Dir::new("lastsave");
    let srv = start(&dir, &["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    let Frame::Integer(t0) = c.cmd(&["LASTSAVE"]) else { panic!() };
    std::thread::sleep(Duration::from_millis(1100));
    c.cmd(&["SET", "k", "v"]);
    c.cmd(&["HSET", "h", "a", "1"]);
    assert_eq!(c.cmd(&["SAVE"]), ok());
    let Frame::Integer(t1) = c.cmd(&["LASTSAVE"]) else { panic!() };
    assert!(t1 > t0);
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]), ok());
    assert_eq!(c.cmd(&["HGET", "h", "a"]), bulk("1"));
    assert_eq!(info_field(&mut c, "rdb_last_load_keys_loaded"), "2");
    assert_eq!(c.cmd(&["BGSAVE", "NOW"]), err("ERR syntax error"));
    // Inside EXEC the save is scheduled, then cron starts it.
    let saves: u64 = info_field(&mut c, "rdb_saves").parse().unwrap();
    c.cmd(&["MULTI"]);
    c.cmd(&["BGSAVE"]);
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![simple("Background saving scheduled")]));
    wait_for("the scheduled BGSAVE", Duration::from_secs(10), || {
        info_field(&mut c, "rdb_saves").parse::<u64>().unwrap() > saves
    });
    wait_bgsave(&mut c);
}

const MISCONF: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to \
                       disk. Commands that may modify the data set are disabled, because this instance is configured \
                       to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). \
                       Please check the Redis logs for details about the RDB error.";

#[test]
fn failed_bgsave_stops_writes_until_a_save_succeeds() {
    let dir = Dir::new("misconf");
    let srv = start(&dir, &["--save", "3600 1", "--enable-protected-configs", "yes"]);
    let mut c = srv.client();
    c.cmd(&["SET", "k", "v"]);
    // Nothing can be created under /proc, even as root.
    assert_eq!(c.cmd(&["CONFIG", "SET", "dir", "/proc"]), ok());
    assert_eq!(c.cmd(&["BGSAVE"]), simple("Background saving started"));
    wait_bgsave(&mut c);
    assert_eq!(info_field(&mut c, "rdb_last_bgsave_status"), "err");
    assert_eq!(c.cmd(&["SET", "k", "other"]), err(MISCONF));
    assert_eq!(c.cmd(&["PING"]), err(MISCONF));
    assert_eq!(c.cmd(&["GET", "k"]), bulk("v"));
    // The final save cannot be written either: SHUTDOWN refuses to exit.
    assert_eq!(c.cmd(&["SHUTDOWN"]), err("ERR Errors trying to SHUTDOWN. Check logs."));
    assert_eq!(c.cmd(&["SAVE"]), err("ERR"));
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["INCR", "n"]), err(MISCONF));
    assert_eq!(c.cmd(&["EXEC"]), err("EXECABORT Transaction discarded because of previous errors."));
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "dir", "/nonexistent-volley"]),
        err("ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "dbfilename", "a/b.rdb"]),
        err("ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a \
             filename")
    );
    assert_eq!(c.cmd(&["CONFIG", "SET", "dir", &dir.s()]), ok());
    assert_eq!(c.cmd(&["CONFIG", "GET", "dir"]), arr(vec![bulk("dir"), bulk(&dir.s())]));
    assert_eq!(c.cmd(&["BGSAVE"]), simple("Background saving started"));
    wait_bgsave(&mut c);
    assert_eq!(c.cmd(&["SET", "k", "other"]), ok());
    assert_eq!(info_field(&mut c, "rdb_last_bgsave_status"), "ok");
}

#[test]
fn failing_save_keeps_the_previous_dump() {
    let dir = Dir::new("atomic");
    let srv = start(&dir, &[]);
    let mut c = srv.client();
    c.cmd(&["SET", "k", "old"]);
    assert_eq!(c.cmd(&["SAVE"]), ok());
    let old = std::fs::read(dir.dump()).unwrap();
    c.cmd(&["SET", "k", "new"]);
    c.cmd(&["SET", "big", &"z".repeat(100_000)]);
    // The temp file SAVE writes is a full disk: the write fails mid-way.
    let tmp = dir.0.join(format!("temp-{}.rdb", srv.pid()));
    std::os::unix::fs::symlink("/dev/full", &tmp).unwrap();
    assert_eq!(c.cmd(&["SAVE"]), err("ERR"));
    assert_eq!(std::fs::read(dir.dump()).unwrap(), old, "the old dump is untouched");
    assert!(!tmp.exists(), "the temp file is cleaned up");
    assert_eq!(c.cmd(&["GET", "k"]), bulk("new"), "nothing stored is lost");
    assert_eq!(c.cmd(&["SAVE"]), ok());
    assert_ne!(std::fs::read(dir.dump()).unwrap(), old);
}

/// Start on `dir` expecting a refusal; returns the server's stderr.
fn refused_start(dir: &Path) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_volley-server"))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir", &dir.display().to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server started on a damaged file");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success());
    let mut text = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut text).unwrap();
    text
}

#[test]
fn damaged_dumps_refuse_to_start() {
    let dir = Dir::new("corrupt");
    {
        let srv = start(&dir, &[]);
        let mut c = srv.client();
        populate(&mut c);
        assert_eq!(c.cmd(&["SAVE"]), ok());
    }
    let good = std::fs::read(dir.dump()).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    std::fs::write(dir.dump(), &bad).unwrap();
    let msg = refused_start(&dir.0);
    assert!(msg.contains("Bad RDB file") && msg.contains(&dir.dump().display().to_string()), "{msg}");
    assert!(msg.contains("at byte offset"), "{msg}");

    std::fs::write(dir.dump(), &good[..good.len() * 2 / 3]).unwrap();
    let msg = refused_start(&dir.0);
    assert!(msg.contains("truncated") && msg.contains("at byte offset"), "{msg}");
}
