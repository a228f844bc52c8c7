//! Support for the transport tests (Unix socket, TLS, protected mode): a
//! server started with any listeners (also none on TCP), and test
//! certificates made with the openssl CLI. Clients are [`super::Client`]
//! over the stream at hand.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

// What the transport tests' `use common::transport::*` needs; each other
// test binary compiles this module without using them.
#[allow(unused_imports)]
pub use super::{bulk, free_port, ok, Client, Frame};

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
        super::wait_child(&mut self.child, timeout)
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
    /// self-signed `other` (X.509 v3 all; see [`Certs::make_v1`] for v1).
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

    /// X.509 v1 certificates (no extensions, as `openssl x509 -req` makes
    /// them and Redis's suite uses them): `v1client` signed by the CA,
    /// `v1foreign` by another CA, `v1expired` by the CA but valid for no
    /// time at all (its end date is its start date).
    pub fn make_v1(&self) {
        const SCRIPT: &str = r#"
set -e
openssl req -x509 -newkey rsa:2048 -nodes -keyout otherca.key -out otherca.crt -days 2 -subj '/CN=Volley Test CA'
for n in v1client v1foreign v1expired; do
  openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr -subj "/CN=$n"
done
openssl x509 -req -in v1client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out v1client.crt -days 2
openssl x509 -req -in v1foreign.csr -CA otherca.crt -CAkey otherca.key -CAcreateserial -out v1foreign.crt -days 2
openssl x509 -req -in v1expired.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out v1expired.crt -days 0
"#;
        let st = Command::new("sh")
            .args(["-c", SCRIPT])
            .current_dir(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "openssl failed to make v1 certificates");
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
