//! Black-box tests of the Unix socket listener (`unixsocket`,
//! `unixsocketperm`), `port 0`, several `bind` addresses, and protected
//! mode as seen from a loopback address other than 127.0.0.1.
mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::transport::*;

/// A server with TCP on a free port and the Unix socket `s.sock` in its dir.
fn start_unix(extra: &[&str]) -> (Spawned, String, u16) {
    for _ in 0..5 {
        let dir = temp_dir("unix");
        let path = dir.join("s.sock").display().to_string();
        let port = free_port();
        let mut args: Vec<String> = ["--port", &port.to_string(), "--bind", "127.0.0.1", "--unixsocket", &path]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        if let Some(s) = Spawned::start(&dir, &args, "ready to accept connections at") {
            return (s, path, port);
        }
    }
    panic!("could not start a server with a Unix socket");
}

fn unix(path: &str) -> Client<UnixStream> {
    let s = UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    Client::new(s)
}

#[test]
fn socket_file_gets_the_permissions_replaces_a_stale_file_and_is_removed_at_shutdown() {
    let dir = temp_dir("perm");
    let path = dir.join("p.sock");
    std::fs::write(&path, b"stale").unwrap();
    let args: Vec<String> = ["--port", "0", "--unixsocket", &path.display().to_string(), "--unixsocketperm", "700"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut srv = Spawned::start(&dir, &args, "ready to accept connections at").expect("starts");
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    let mut c = unix(&path.display().to_string());
    assert_eq!(c.cmd(&["PING"]), Frame::Simple(b"PONG".to_vec()));
    assert_eq!(c.cmd(&["CONFIG", "GET", "unixsocketperm"]), Frame::Array(vec![bulk("unixsocketperm"), bulk("700")]));
    c.send_cmd(&["SHUTDOWN", "NOSAVE"]);
    assert!(srv.wait_exit(Duration::from_secs(10)).is_some(), "server exits");
    assert!(!path.exists(), "the socket file is removed at shutdown");
    assert!(srv.log().contains("Removing the unix socket file."));
}

#[test]
fn client_list_shows_the_socket_path_and_flag_u() {
    let (_srv, path, _) = start_unix(&[]);
    let mut c = unix(&path);
    let list = text(&c.cmd(&["CLIENT", "LIST"]));
    assert!(list.contains(&format!("addr={path}:0 laddr={path}:0 ")), "{list}");
    assert!(list.contains(" flags=U "), "{list}");
    let info = text(&c.cmd(&["CLIENT", "INFO"]));
    assert!(info.contains(&format!("addr={path}:0")), "{info}");
}

#[test]
fn pipelining_transactions_scripts_and_blocking_work_over_the_socket() {
    let (_srv, path, _) = start_unix(&[]);
    let mut c = unix(&path);
    let mut batch = Vec::new();
    for i in 0..2000 {
        resp::encode_command(&mut batch, &["SET", &format!("k{i}"), &i.to_string()]);
        resp::encode_command(&mut batch, &["INCR", &format!("k{i}")]);
    }
    c.send(&batch);
    for i in 0..2000 {
        assert_eq!(c.read_frame(), ok());
        assert_eq!(c.read_frame(), Frame::Integer(i + 1));
    }
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["INCR", "k1"]), Frame::Simple(b"QUEUED".to_vec()));
    assert_eq!(c.cmd(&["EXEC"]), Frame::Array(vec![Frame::Integer(3)]));
    assert_eq!(c.cmd(&["EVAL", "return redis.call('GET', KEYS[1])", "1", "k1"]), bulk("3"));

    let mut blocked = unix(&path);
    blocked.send_cmd(&["BLPOP", "q", "10"]);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(c.cmd(&["RPUSH", "q", "x"]), Frame::Integer(1));
    assert_eq!(blocked.read_frame(), Frame::Array(vec![bulk("q"), bulk("x")]));
}

#[test]
fn pubsub_over_the_socket() {
    let (_srv, path, _) = start_unix(&[]);
    let mut sub = unix(&path);
    assert_eq!(sub.cmd(&["SUBSCRIBE", "ch"]), Frame::Array(vec![bulk("subscribe"), bulk("ch"), Frame::Integer(1)]));
    let mut publisher = unix(&path);
    assert_eq!(publisher.cmd(&["PUBLISH", "ch", "hello"]), Frame::Integer(1));
    assert_eq!(sub.read_frame(), Frame::Array(vec![bulk("message"), bulk("ch"), bulk("hello")]));
}

#[test]
fn a_client_writing_its_whole_pipeline_before_reading_gets_every_reply() {
    let (_srv, path, _) = start_unix(&[]);
    let mut c = unix(&path);
    let value = "v".repeat(10_000);
    assert_eq!(c.cmd(&["SET", "big", &value]), ok());
    // 40 MB of replies: far past the output pause, while we are still writing.
    let n = 4000;
    let mut batch = Vec::new();
    for _ in 0..n {
        resp::encode_command(&mut batch, &["GET", "big"]);
    }
    let writer = c.stream.try_clone().unwrap();
    let t = std::thread::spawn(move || {
        let mut w = writer;
        std::io::Write::write_all(&mut w, &batch).unwrap();
    });
    for _ in 0..n {
        assert_eq!(c.read_frame(), bulk(&value));
    }
    t.join().unwrap();
    assert_eq!(c.cmd(&["PING"]), Frame::Simple(b"PONG".to_vec()));
}

/// Listening TCP sockets the process holds (from /proc).
fn tcp_listeners_of(pid: u32) -> usize {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| l.to_str()?.strip_prefix("socket:[")?.strip_suffix(']').map(String::from))
        .collect();
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|t| t.lines().skip(1).map(String::from).collect::<Vec<_>>())
        .filter(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.get(3) == Some(&"0A") && cols.get(9).is_some_and(|i| inodes.iter().any(|x| x == i))
        })
        .count()
}

#[test]
fn port_zero_means_no_tcp_listener() {
    let dir = temp_dir("p0");
    let path = dir.join("s.sock").display().to_string();
    let args: Vec<String> = ["--port", "0", "--unixsocket", &path].iter().map(|s| s.to_string()).collect();
    let srv = Spawned::start(&dir, &args, "ready to accept connections at").expect("starts");
    assert_eq!(tcp_listeners_of(srv.pid()), 0);
    let mut c = unix(&path);
    let info = text(&c.cmd(&["INFO", "server"]));
    assert!(info.contains("tcp_port:0\r\n"), "{info}");

    let (with_tcp, _, _) = start_unix(&[]);
    assert_eq!(tcp_listeners_of(with_tcp.pid()), 1, "the check sees a listener when there is one");
}

#[test]
fn nothing_to_listen_on_stops_the_server() {
    let dir = temp_dir("none");
    let args: Vec<String> = ["--port", "0"].iter().map(|s| s.to_string()).collect();
    let mut srv = match Spawned::start(&dir, &args, "never logged") {
        None => return assert_nothing_to_listen(&dir),
        Some(s) => s,
    };
    assert!(srv.wait_exit(Duration::from_secs(10)).is_some());
}

fn assert_nothing_to_listen(dir: &std::path::Path) {
    let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    assert!(log.contains("Configured to not listen anywhere, exiting."), "{log}");
}

#[test]
fn several_bind_addresses_and_optional_ones() {
    for _ in 0..5 {
        let dir = temp_dir("bind");
        let port = free_port();
        // 192.0.2.1 (TEST-NET) is not ours: optional, so skipped.
        let args: Vec<String> = ["--port", &port.to_string(), "--bind", "127.0.0.1", "127.0.0.2", "-192.0.2.1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let Some(srv) = Spawned::start(&dir, &args, "Ready to accept connections") else { continue };
        for host in ["127.0.0.1", "127.0.0.2"] {
            let mut c = Client::new(std::net::TcpStream::connect((host, port)).unwrap());
            assert_eq!(c.cmd(&["PING"]), Frame::Simple(b"PONG".to_vec()), "{host}");
        }
        drop(srv);
        let dir = temp_dir("bind2");
        let args: Vec<String> =
            ["--port", &port.to_string(), "--bind", "127.0.0.1", "192.0.2.1"].iter().map(|s| s.to_string()).collect();
        assert!(Spawned::start(&dir, &args, "Ready to accept connections").is_none(), "a required bind fails");
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        assert!(log.contains("Failed listening on port"), "{log}");
        return;
    }
    panic!("no free port");
}

/// A server in protected mode's reach: TCP on 127.0.0.1.
fn protected_server(extra: &[&str]) -> (Spawned, u16) {
    for _ in 0..5 {
        let dir = temp_dir("prot");
        let port = free_port();
        let mut args: Vec<String> =
            ["--port", &port.to_string(), "--bind", "127.0.0.1"].iter().map(|s| s.to_string()).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        if let Some(s) = Spawned::start(&dir, &args, "Ready to accept connections") {
            return (s, port);
        }
    }
    panic!("no free port");
}

/// A connection to 127.0.0.1 from source address 127.0.0.2: loopback
/// traffic, but Redis trusts only the peers 127.0.0.1 and ::1. Opened
/// with `net::outgoing::connect` and `bind-source-addr`, so this also
/// shows that helper binding the source address.
fn connect_from_127_0_0_2(port: u16) -> Client<std::net::TcpStream> {
    use std::os::fd::{FromRawFd, IntoRawFd};
    let mut cfg = volley::config::Config::default();
    cfg.other.insert("bind-source-addr", "127.0.0.2".into());
    let s = volley::net::outgoing::connect(&cfg, "127.0.0.1", port, false, Duration::from_secs(5)).unwrap();
    let volley::net::transport::Stream::Tcp(s) = s else { panic!("plain TCP asked") };
    // SAFETY: the descriptor is moved out of the mio stream, owned once.
    let s = unsafe { std::net::TcpStream::from_raw_fd(s.into_raw_fd()) };
    s.set_nonblocking(false).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    assert_eq!(s.local_addr().unwrap().ip().to_string(), "127.0.0.2");
    Client::new(s)
}

#[test]
fn protected_mode_denies_peers_other_than_loopback_without_a_password() {
    let (_srv, port) = protected_server(&["--protected-mode", "yes"]);
    let mut remote = connect_from_127_0_0_2(port);
    let got = String::from_utf8(remote.read_to_close()).unwrap();
    assert!(got.starts_with("-DENIED Redis is running in protected mode because protected mode is enabled"), "{got}");
    assert!(got.ends_with("accepting connections from the outside.\r\n"), "{got}");
    let mut local = Client::new(std::net::TcpStream::connect(("127.0.0.1", port)).unwrap());
    assert_eq!(local.cmd(&["PING"]), Frame::Simple(b"PONG".to_vec()));
    let stats = text(&local.cmd(&["INFO", "stats"]));
    assert!(stats.contains("rejected_connections:1\r\n"), "{stats}");
    // Turning it off at run time lets the next connection in.
    assert_eq!(local.cmd(&["CONFIG", "SET", "protected-mode", "no"]), ok());
    let mut remote = connect_from_127_0_0_2(port);
    assert_eq!(remote.cmd(&["PING"]), Frame::Simple(b"PONG".to_vec()));
}

#[test]
fn protected_mode_lets_anyone_in_when_the_default_user_has_a_password() {
    let (_srv, port) = protected_server(&["--protected-mode", "yes", "--requirepass", "pw"]);
    let mut remote = connect_from_127_0_0_2(port);
    assert_eq!(remote.cmd(&["AUTH", "pw"]), ok());
    assert_eq!(remote.cmd(&["PING"]), Frame::Simple(b"PONG".to_vec()));
}
