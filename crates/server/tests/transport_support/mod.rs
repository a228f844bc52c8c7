//! Support for the transport tests (Unix socket, TLS, protected mode): a
//! server started with any listeners (also none on TCP), a RESP client
//! over any byte stream, and test certificates made with the openssl CLI.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use resp::Frame;

/// A volley-server with its own directory; killed on drop.
pub struct Spawned {
    pub dir: PathBuf,
    child: Child,
    /// Remove `dir` on drop (kept when the server failed to start, for its log).
    cleanup: bool,
}

static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A fresh private directory (short: Unix socket paths are limited to 108 bytes).
pub fn temp_dir(tag: &str) -> PathBuf {
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("vt-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Spawned {
    /// Start in `dir` with `args` and wait until the log has `ready`.
    /// None if the process exited first (a port taken meanwhile).
    pub fn start(dir: &Path, args: &[String], ready: &str) -> Option<Spawned> {
        let log = dir.join("server.log");
        let _ = std::fs::remove_file(&log);
        let child = Command::new(env!("CARGO_BIN_EXE_volley-server"))
            .args(["--save", "", "--dir"])
            .arg(dir)
            .arg("--logfile")
            .arg(&log)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn volley-server");
        let mut s = Spawned { dir: dir.to_path_buf(), child, cleanup: true };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if s.log().contains(ready) {
                return Some(s);
            }
            if !s.alive() {
                s.cleanup = false;
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("server not ready within 10s; log:\n{}", s.log());
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait up to `timeout` for the process to exit; its status.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.cleanup {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A blocking RESP client over any stream.
pub struct Conn<S: Read + Write> {
    pub stream: S,
    buf: Vec<u8>,
}

impl<S: Read + Write> Conn<S> {
    pub fn new(stream: S) -> Self {
        Conn { stream, buf: Vec::new() }
    }

    pub fn cmd(&mut self, args: &[&str]) -> Frame {
        self.send_cmd(args);
        self.read_frame()
    }

    pub fn send_cmd(&mut self, args: &[&str]) {
        let mut out = Vec::new();
        resp::encode_command(&mut out, args);
        self.send(&out);
    }

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
            let mut chunk = [0u8; 65536];
            let n = self.stream.read(&mut chunk).expect("read reply");
            assert!(n > 0, "server closed the connection; pending: {:?}", String::from_utf8_lossy(&self.buf));
            self.buf.extend_from_slice(&chunk[..n]);
        }
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
}

pub fn bulk(s: &str) -> Frame {
    Frame::Bulk(s.as_bytes().to_vec())
}

pub fn ok() -> Frame {
    Frame::Simple(b"OK".to_vec())
}

pub fn text(f: &Frame) -> String {
    match f {
        Frame::Bulk(b) | Frame::Simple(b) | Frame::Error(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

/// Test certificates: a CA, a server and a client certificate it signed.
pub struct Certs {
    pub dir: PathBuf,
}

impl Certs {
    /// A CA; `server`, `server2` and `client` certificates it signed; and a
    /// self-signed `other` (X.509 v3 all: rustls takes no v1 certificates).
    pub fn make(dir: &Path) -> Certs {
        const SCRIPT: &str = r#"
set -e
printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' > ext.cnf
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj '/CN=Volley Test CA'
for n in server server2 client other; do
  openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr -subj "/CN=$n"
  if [ $n = other ]; then
    openssl x509 -req -in $n.csr -signkey $n.key -out $n.crt -days 2 -extfile ext.cnf
  else
    openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $n.crt -days 2 -extfile ext.cnf
  fi
done
"#;
        let st = Command::new("sh")
            .args(["-c", SCRIPT])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "openssl failed to make test certificates");
        Certs { dir: dir.to_path_buf() }
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// The server options for these certificates.
    pub fn server_args(&self, tls_port: u16) -> Vec<String> {
        [
            ("--tls-port", tls_port.to_string()),
            ("--tls-cert-file", self.path("server.crt")),
            ("--tls-key-file", self.path("server.key")),
            ("--tls-ca-cert-file", self.path("ca.crt")),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_string(), v])
        .collect()
    }
}
