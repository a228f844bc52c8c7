//! Servers for the bench tests: redis-server or volley-server started on a
//! free loopback port, ready once it answers PING, killed on drop. A missing
//! binary is a failure, not a skip (the repo's install script provides
//! redis-server; `cargo build --release` provides volley-server).
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use volley_bench::conn::Conn;

/// A server child process, killed on drop.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
}

impl Server {
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Start `bin` with Redis's command line plus `extra`, and wait until it
/// answers. Another test's server can hold the same port for a moment, so
/// ready means the server answering reports this child's pid; a child that
/// exits (port taken) is retried on a new port.
pub fn start(bin: &str, extra: &[&str]) -> Server {
    for _ in 0..5 {
        let port = free_port();
        let mut args = vec!["--port".to_string(), port.to_string(), "--bind".into(), "127.0.0.1".into()];
        args.extend(["--save", "", "--appendonly", "no"].iter().map(|s| s.to_string()));
        args.extend(extra.iter().map(|s| s.to_string()));
        let child = Command::new(bin)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut server = Server { child, addr };
        let want = format!("process_id:{}\r\n", server.child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && matches!(server.child.try_wait(), Ok(None)) {
            let info = Conn::connect(addr, None).and_then(|mut c| c.cmd(&["INFO", "server"]));
            if let Ok(resp::Frame::Bulk(b)) = info {
                if String::from_utf8_lossy(&b).contains(&want) {
                    return server;
                }
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
    panic!("{bin} did not come up on a free port in 5 attempts");
}

/// redis-server from `REDIS_SERVER` or the PATH.
pub fn start_redis() -> Server {
    start(&std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into()), &[])
}

/// The volley-server binary: `VOLLEY_SERVER`, else the workspace's target dir.
pub fn volley_server_bin() -> String {
    if let Ok(b) = std::env::var("VOLLEY_SERVER") {
        return b;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target");
    for profile in ["release", "debug"] {
        let p = root.join(profile).join("volley-server");
        if p.exists() {
            return p.to_string_lossy().into_owned();
        }
    }
    panic!("volley-server not built: cargo build --release -p volley-server (or set VOLLEY_SERVER)")
}
