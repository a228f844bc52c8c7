//! Support for the AOF tests: a data directory that outlives server
//! restarts, starting a server on it, SIGKILL, and a deterministic dump of
//! the dataset to compare before and after a restart.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;

/// A temporary data directory, removed on drop.
pub struct DataDir(pub PathBuf);

impl DataDir {
    pub fn new(tag: &str) -> DataDir {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("volley-aof-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        DataDir(dir)
    }
    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
    /// The AOF directory inside.
    pub fn aof_dir(&self) -> PathBuf {
        self.0.join("appendonlydir")
    }
    pub fn manifest(&self) -> String {
        std::fs::read_to_string(self.aof_dir().join("appendonly.aof.manifest")).unwrap_or_default()
    }
    /// The last incr file named by the manifest.
    pub fn last_incr(&self) -> PathBuf {
        let m = self.manifest();
        let name = m.lines().rfind(|l| l.ends_with("type i")).expect("an incr file").split(' ').nth(1);
        self.aof_dir().join(name.unwrap())
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Start a server with `appendonly yes` on `dir`, plus `extra` options.
pub fn start_aof(dir: &DataDir, extra: &[&str]) -> TestServer {
    let mut args = vec!["--dir", dir.path(), "--appendonly", "yes"];
    args.extend_from_slice(extra);
    TestServer::start(&args)
}

/// SIGKILL the server and wait until it is gone.
pub fn kill9(srv: &mut TestServer) {
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(srv.pid() as i32, libc::SIGKILL) };
    srv.wait_exit(Duration::from_secs(10)).expect("server exits on SIGKILL");
}

/// A field of INFO's text.
pub fn info_field(c: &mut Client, section: &str, name: &str) -> String {
    let text = match c.cmd(&["INFO", section]) {
        Frame::Bulk(b) | Frame::Verbatim(_, b) => String::from_utf8(b).unwrap(),
        other => panic!("INFO replied {other:?}"),
    };
    let prefix = format!("{name}:");
    text.lines().find_map(|l| l.strip_prefix(&prefix)).map(str::to_string).unwrap_or_default()
}

/// Poll `f` until it holds or `timeout` passes.
pub fn wait_for(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Wait until no AOF rewrite runs and `aof_rewrites` reached `n`.
pub fn wait_rewrites(c: &mut Client, n: u64) {
    let ok = wait_for(Duration::from_secs(20), || {
        info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
            && info_field(c, "persistence", "aof_rewrites").parse::<u64>().unwrap_or(0) >= n
    });
    assert!(ok, "AOF rewrite {n} did not finish");
}

fn text(f: &Frame) -> String {
    match f {
        Frame::Bulk(b) | Frame::Simple(b) => String::from_utf8_lossy(b).into_owned(),
        Frame::Integer(i) => i.to_string(),
        Frame::Null => "(nil)".into(),
        Frame::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(","),
        other => format!("{other:?}"),
    }
}

/// Every key of databases 0..`dbs` with its type, value and whether it has
/// a TTL, sorted: equal dumps mean equal datasets.
pub fn dump(c: &mut Client, dbs: usize) -> Vec<String> {
    let mut out = Vec::new();
    for db in 0..dbs {
        assert_eq!(c.cmd(&["SELECT", &db.to_string()]), ok());
        let Frame::Array(keys) = c.cmd(&["KEYS", "*"]) else { panic!("KEYS") };
        let mut keys: Vec<String> = keys.iter().map(text).collect();
        keys.sort();
        for k in keys {
            let ty = text(&c.cmd(&["TYPE", &k]));
            let value = match ty.as_str() {
                "string" => text(&c.cmd(&["GET", &k])),
                "list" => text(&c.cmd(&["LRANGE", &k, "0", "-1"])),
                "zset" => text(&c.cmd(&["ZRANGE", &k, "0", "-1", "WITHSCORES"])),
                "set" | "hash" => {
                    let cmd = if ty == "set" { "SMEMBERS" } else { "HGETALL" };
                    let Frame::Array(items) = c.cmd(&[cmd, &k]) else { panic!("{cmd}") };
                    let mut items: Vec<String> = if ty == "hash" {
                        items.chunks(2).map(|p| format!("{}={}", text(&p[0]), text(&p[1]))).collect()
                    } else {
                        items.iter().map(text).collect()
                    };
                    items.sort();
                    items.join(",")
                }
                other => panic!("unexpected type {other}"),
            };
            let volatile = text(&c.cmd(&["PTTL", &k])) != "-1";
            out.push(format!("{db} {k} {ty} {value} ttl={volatile}"));
        }
    }
    assert_eq!(c.cmd(&["SELECT", "0"]), ok());
    out
}

/// Start the binary on `dir` expecting it to refuse to start: its exit
/// status and everything it logged.
pub fn start_expecting_failure(dir: &Path, extra: &[&str]) -> (std::process::ExitStatus, String) {
    let log = dir.join("fail.log");
    // A real port: the server listens before it loads, as Redis does, and
    // one configured to listen nowhere would stop before reading the file.
    let port = free_port().to_string();
    let mut args: Vec<String> = ["--port", &port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--dir"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(dir.display().to_string());
    args.push("--logfile".into());
    args.push(log.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_volley-server"))
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return (st, std::fs::read_to_string(&log).unwrap_or_default());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("server kept running on a corrupt AOF; log:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
