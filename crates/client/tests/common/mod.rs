//! Test servers: a `redis-server` from PATH and the Volley binary
//! (`VOLLEY_SERVER_BIN`, else `target/release/volley-server`), each started
//! on a free loopback port and killed on drop. A missing binary fails the
//! test with a message; it never skips.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use volley_client::{ConnectOptions, Connection, ValueExt};

/// A server process owned by a test.
pub struct Server {
    child: Child,
    pub port: u16,
    pub name: &'static str,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

fn volley_bin() -> PathBuf {
    if let Ok(p) = std::env::var("VOLLEY_SERVER_BIN") {
        return PathBuf::from(p);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/release/volley-server");
    assert!(
        p.exists(),
        "volley-server not found at {} and VOLLEY_SERVER_BIN unset: run `cargo build --release -p volley-server` first",
        p.display()
    );
    p
}

/// Start on a free port. Another test's server can hold the same port for a
/// moment, so ready means the server answering reports this child's pid; a
/// child that exits (port taken) is retried on a new port.
fn start(name: &'static str, bin: PathBuf, extra: &[&str]) -> Server {
    for _ in 0..5 {
        let port = free_port();
        let mut cmd = Command::new(&bin);
        cmd.args(["--port", &port.to_string(), "--save", ""]).args(extra);
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {name} ({}): {e}", bin.display()));
        let mut server = Server { child, port, name };
        let want = format!("process_id:{}\r\n", server.child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && matches!(server.child.try_wait(), Ok(None)) {
            let info = Connection::connect(&server.opts()).and_then(|mut c| c.cmd(&["INFO", "server"]));
            if info.ok().and_then(|v| v.as_bytes().map(|b| b.to_vec())).is_some_and(|b| contains(&b, &want)) {
                return server;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    panic!("{name} did not come up on a free port in 5 attempts");
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

impl Server {
    /// `redis-server` from PATH.
    pub fn redis() -> Server {
        start("redis", PathBuf::from("redis-server"), &["--bind", "127.0.0.1", "--appendonly", "no"])
    }

    /// The Volley server binary.
    pub fn volley() -> Server {
        start("volley", volley_bin(), &[])
    }

    /// Both servers, for tests that must pass on each.
    pub fn both() -> Vec<Server> {
        vec![Server::redis(), Server::volley()]
    }

    pub fn opts(&self) -> ConnectOptions {
        ConnectOptions::new("127.0.0.1", self.port)
    }

    pub fn connect(&self) -> Connection {
        Connection::connect(&self.opts()).expect("connect")
    }
}

/// A current-thread tokio runtime for async tests.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}
