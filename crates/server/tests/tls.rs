//! Black-box tests of TLS: `tls-port` beside or instead of TCP, client
//! certificate modes, protocol choice, session resumption, CONFIG SET
//! reloading certificates and moving the port, and the batch property (a
//! pipeline's replies leave in one write) holding through TLS.
mod common;

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use common::transport::*;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, StreamOwned, SupportedProtocolVersion};

type Tls = Client<StreamOwned<ClientConnection, TcpStream>>;

struct TlsServer {
    srv: Spawned,
    tcp: u16,
    tls: u16,
    certs: Certs,
}

/// A server with TCP (unless `tcp` is false) and TLS on free ports; the
/// certificates live in the server's directory.
fn start(tcp: bool, extra: &[&str]) -> TlsServer {
    for _ in 0..5 {
        let dir = temp_dir("tls");
        let certs = Certs::make(&dir);
        let (tcp_port, tls_port) = (if tcp { free_port() } else { 0 }, free_port());
        let mut args: Vec<String> =
            ["--port", &tcp_port.to_string(), "--bind", "127.0.0.1"].iter().map(|s| s.to_string()).collect();
        args.extend(certs.server_args(tls_port));
        args.extend(extra.iter().map(|s| s.to_string()));
        if let Some(srv) = Spawned::start(&dir, &args, "Ready to accept connections") {
            return TlsServer { srv, tcp: tcp_port, tls: tls_port, certs };
        }
    }
    panic!("could not start a TLS server");
}

fn client_config(certs: &Certs, cert: Option<&str>, versions: &[&'static SupportedProtocolVersion]) -> ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(certs.path("ca.crt")).unwrap()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let b = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
    match cert {
        None => b.with_no_client_auth(),
        Some(name) => {
            let chain = vec![CertificateDer::from_pem_file(certs.path(&format!("{name}.crt"))).unwrap()];
            let key = PrivateKeyDer::from_pem_file(certs.path(&format!("{name}.key"))).unwrap();
            // Not with_client_auth_cert: its key check parses the
            // certificate with webpki, which refuses X.509 v1.
            let signer = rustls::crypto::ring::default_provider().key_provider.load_private_key(key).unwrap();
            let ck = rustls::sign::CertifiedKey::new(chain, signer);
            b.with_client_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(ck)))
        }
    }
}

fn all_versions() -> Vec<&'static SupportedProtocolVersion> {
    vec![&rustls::version::TLS13, &rustls::version::TLS12]
}

/// Connect and finish the handshake; Err when it fails.
fn connect_with(port: u16, cfg: Arc<ClientConfig>) -> std::io::Result<Tls> {
    let sock = TcpStream::connect(("127.0.0.1", port))?;
    sock.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut conn = ClientConnection::new(cfg, ServerName::try_from("localhost").unwrap()).unwrap();
    let mut sock = sock;
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)?;
    }
    Ok(Client::new(StreamOwned::new(conn, sock)))
}

fn connect(s: &TlsServer) -> Tls {
    connect_with(s.tls, Arc::new(client_config(&s.certs, Some("client"), &all_versions()))).unwrap()
}

/// A command's outcome on a connection the server may have refused: its
/// reply, or why there was none.
fn try_ping(c: std::io::Result<Tls>) -> Result<Frame, String> {
    use std::io::Read;
    let mut c = c.map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["PING"]);
    c.stream.write_all(&out).map_err(|e| e.to_string())?;
    c.stream.flush().map_err(|e| e.to_string())?;
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some((f, _)) = resp::decode_frame(&got).map_err(|e| format!("{e:?}"))? {
            return Ok(f);
        }
        match c.stream.read(&mut chunk) {
            Ok(0) => return Err("closed without a reply".into()),
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn pong() -> Frame {
    Frame::Simple(b"PONG".to_vec())
}

#[test]
fn tcp_and_tls_ports_serve_at_once() {
    let s = start(true, &[]);
    let mut t = connect(&s);
    assert_eq!(t.cmd(&["SET", "k", "over-tls"]), ok());
    let mut plain = Client::new(TcpStream::connect(("127.0.0.1", s.tcp)).unwrap());
    assert_eq!(plain.cmd(&["GET", "k"]), bulk("over-tls"));
    let me = text(&t.cmd(&["CLIENT", "INFO"]));
    assert!(me.contains(&format!("laddr=127.0.0.1:{} ", s.tls)), "{me}");
    assert!(me.contains(" flags=N "), "{me}");
    assert_eq!(t.cmd(&["CONFIG", "GET", "tls-port"]), Frame::Array(vec![bulk("tls-port"), bulk(&s.tls.to_string())]));
    let info = text(&plain.cmd(&["INFO", "server"]));
    assert!(info.contains(&format!("tcp_port:{}\r\n", s.tcp)), "{info}");
}

#[test]
fn port_zero_serves_tls_only_and_info_reports_the_tls_port() {
    let s = start(false, &[]);
    let mut t = connect(&s);
    let info = text(&t.cmd(&["INFO", "server"]));
    assert!(info.contains(&format!("tcp_port:{}\r\n", s.tls)), "{info}");
    assert!(s.srv.log().contains("Ready to accept connections"));
}

#[test]
fn client_certificates_required_optional_or_not_asked() {
    let s = start(true, &[]);
    let no_cert = || Arc::new(client_config(&s.certs, None, &all_versions()));
    let stranger = || Arc::new(client_config(&s.certs, Some("other"), &all_versions()));
    assert!(try_ping(connect_with(s.tls, no_cert())).is_err(), "tls-auth-clients yes wants a certificate");
    assert!(try_ping(connect_with(s.tls, stranger())).is_err(), "a certificate of another CA is refused");
    assert_eq!(try_ping(Ok(connect(&s))), Ok(pong()));

    let mut admin = connect(&s);
    assert_eq!(admin.cmd(&["CONFIG", "SET", "tls-auth-clients", "optional"]), ok());
    assert_eq!(try_ping(connect_with(s.tls, no_cert())), Ok(pong()));
    assert!(try_ping(connect_with(s.tls, stranger())).is_err(), "optional still checks a certificate given");
    assert_eq!(admin.cmd(&["CONFIG", "SET", "tls-auth-clients", "no"]), ok());
    assert_eq!(try_ping(connect_with(s.tls, no_cert())), Ok(pong()));
}

/// OpenSSL accepts X.509 v1 client certificates, so Redis does: one the
/// CA signed passes; another CA's, or an expired one, is refused.
#[test]
fn v1_client_certificates_are_checked_as_openssl_does() {
    let s = start(true, &[]);
    s.certs.make_v1();
    // The expired certificate's end date is its start: a second on, it is past.
    std::thread::sleep(Duration::from_millis(1100));
    let with = |name: &str, v: &'static SupportedProtocolVersion| {
        connect_with(s.tls, Arc::new(client_config(&s.certs, Some(name), &[v])))
    };
    for v in [&rustls::version::TLS13, &rustls::version::TLS12] {
        assert_eq!(try_ping(with("v1client", v)), Ok(pong()), "{v:?}");
        assert!(try_ping(with("v1foreign", v)).is_err(), "another CA's v1 certificate is refused ({v:?})");
        assert!(try_ping(with("v1expired", v)).is_err(), "an expired v1 certificate is refused ({v:?})");
    }
    let log = s.srv.log();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn pipelines_through_tls_come_back_whole_and_in_order() {
    let s = start(true, &[]);
    let mut t = connect(&s);
    let mut batch = Vec::new();
    for i in 0..5000 {
        resp::encode_command(&mut batch, &["SET", &format!("k{i}"), &i.to_string()]);
        resp::encode_command(&mut batch, &["INCR", &format!("k{i}")]);
    }
    t.send(&batch);
    for i in 0..5000 {
        assert_eq!(t.read_frame(), ok());
        assert_eq!(t.read_frame(), Frame::Integer(i + 1));
    }
    // Far more reply bytes than the output pause, all written before reading.
    let value = "v".repeat(20_000);
    assert_eq!(t.cmd(&["SET", "big", &value]), ok());
    let mut batch = Vec::new();
    for _ in 0..1500 {
        resp::encode_command(&mut batch, &["GET", "big"]);
    }
    t.send(&batch);
    for _ in 0..1500 {
        assert_eq!(t.read_frame(), bulk(&value));
    }
    assert_eq!(t.cmd(&["PING"]), pong());
}

/// System calls the server makes while `f` runs (strace -c summary lines).
fn traced_syscalls(pid: u32, f: impl FnOnce()) -> String {
    let out = std::env::temp_dir().join(format!("vt-strace-{pid}"));
    let mut tracer = std::process::Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&out)
        .args(["-p", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("strace");
    std::thread::sleep(Duration::from_millis(500));
    f();
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: signalling the tracer we spawned (SIGINT: it prints its summary).
    unsafe { libc::kill(tracer.id() as i32, libc::SIGINT) };
    let _ = tracer.wait();
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    text
}

fn calls(summary: &str, name: &str) -> u64 {
    summary
        .lines()
        .find(|l| l.split_whitespace().last() == Some(name))
        // Columns: % time, seconds, usecs/call, calls, [errors,] syscall.
        .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_batch_of_replies_leaves_in_one_write() {
    let s = start(true, &[]);
    let mut t = connect(&s);
    assert_eq!(t.cmd(&["SET", "k", "v"]), ok());
    let rounds = 20;
    let summary = traced_syscalls(s.srv.pid(), || {
        for _ in 0..rounds {
            let mut batch = Vec::new();
            for _ in 0..100 {
                resp::encode_command(&mut batch, &["GET", "k"]);
            }
            t.send(&batch);
            for _ in 0..100 {
                assert_eq!(t.read_frame(), bulk("v"));
            }
        }
    });
    let writes = calls(&summary, "write") + calls(&summary, "writev") + calls(&summary, "sendmsg");
    assert!(writes > 0, "strace saw the writes: {summary}");
    // One write per batch of 100 replies (a batch may arrive in two reads).
    assert!(writes <= 2 * rounds, "{writes} writes for {rounds} batches:\n{summary}");
}

#[test]
fn protocols_can_be_narrowed() {
    let s = start(true, &["--tls-protocols", "TLSv1.2"]);
    let only13 = Arc::new(client_config(&s.certs, Some("client"), &[&rustls::version::TLS13]));
    assert!(try_ping(connect_with(s.tls, only13)).is_err());
    let only12 = Arc::new(client_config(&s.certs, Some("client"), &[&rustls::version::TLS12]));
    assert_eq!(try_ping(connect_with(s.tls, only12)), Ok(pong()));
    let mut admin = Client::new(TcpStream::connect(("127.0.0.1", s.tcp)).unwrap());
    let bad = text(&admin.cmd(&["CONFIG", "SET", "tls-protocols", "SSLv3"]));
    assert!(bad.contains("Unable to update TLS configuration"), "{bad}");
}

#[test]
fn sessions_resume_unless_caching_is_off() {
    for (caching, resumed) in [("yes", true), ("no", false)] {
        let s = start(true, &["--tls-session-caching", caching]);
        let cfg = Arc::new(client_config(&s.certs, Some("client"), &all_versions()));
        let mut first = connect_with(s.tls, cfg.clone()).unwrap();
        // A TLS 1.3 ticket arrives after the handshake: read a reply first.
        assert_eq!(first.cmd(&["PING"]), pong());
        let second = connect_with(s.tls, cfg).unwrap();
        let kind = second.stream.conn.handshake_kind();
        assert_eq!(kind == Some(rustls::HandshakeKind::Resumed), resumed, "caching {caching}: {kind:?}");
    }
}

#[test]
fn config_set_reloads_certificates_and_moves_the_port() {
    let s = start(true, &[]);
    let mut admin = Client::new(TcpStream::connect(("127.0.0.1", s.tcp)).unwrap());
    let served_cn = |port: u16| {
        let c = connect_with(port, Arc::new(client_config(&s.certs, Some("client"), &all_versions()))).unwrap();
        let der = c.stream.conn.peer_certificates().unwrap()[0].to_vec();
        String::from_utf8_lossy(&der).contains("server2")
    };
    assert!(!served_cn(s.tls));
    // New files at the same paths, then CONFIG SET of the same value: reloaded.
    std::fs::copy(s.certs.path("server2.crt"), s.certs.path("server.crt")).unwrap();
    std::fs::copy(s.certs.path("server2.key"), s.certs.path("server.key")).unwrap();
    let cert = s.certs.path("server.crt");
    assert_eq!(admin.cmd(&["CONFIG", "SET", "tls-cert-file", &cert]), ok());
    assert!(served_cn(s.tls), "the new certificate is served without a restart");
    // A broken file is refused and the working context stays.
    std::fs::write(s.certs.dir.join("broken.crt"), b"not a certificate").unwrap();
    let broken = s.certs.path("broken.crt");
    let err = text(&admin.cmd(&["CONFIG", "SET", "tls-cert-file", &broken]));
    assert_eq!(
        err,
        "ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. \
         Check server logs."
    );
    assert!(served_cn(s.tls));
    assert_eq!(admin.cmd(&["CONFIG", "GET", "tls-cert-file"]), Frame::Array(vec![bulk("tls-cert-file"), bulk(&cert)]));
    // A new port: the old one closes, the new one serves.
    let moved = free_port();
    assert_eq!(admin.cmd(&["CONFIG", "SET", "tls-port", &moved.to_string()]), ok());
    std::thread::sleep(Duration::from_millis(100));
    assert!(served_cn(moved));
    assert!(TcpStream::connect(("127.0.0.1", s.tls)).is_err(), "old TLS port closed");
}

#[test]
fn tls_settings_are_checked_at_start() {
    let dir = temp_dir("tlsbad");
    let certs = Certs::make(&dir);
    let port = free_port();
    let args: Vec<String> = ["--port", &port.to_string(), "--tls-port", &free_port().to_string()]
        .iter()
        .map(|s| s.to_string())
        .chain(["--tls-cert-file".to_string(), certs.path("server.crt")])
        .collect();
    assert!(Spawned::start(&dir, &args, "Ready to accept connections").is_none());
    let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    assert!(log.contains("No tls-key-file configured!"), "{log}");
    assert!(log.contains("Failed to configure TLS. Check logs for more info."), "{log}");
}
