//! Listening sockets: TCP on `bind` × `port`, TLS on `bind` × `tls-port`,
//! and the Unix socket `unixsocket` (created with `unixsocketperm`, a stale
//! file replaced, removed at shutdown), as Redis opens them. Accepting
//! turns a socket into a [`Stream`] and the addresses CLIENT LIST shows.
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use mio::event::Source;
use mio::net::{TcpListener, TcpStream, UnixListener};

use super::transport::{Stream, TlsStream};
use crate::config::Config;

pub enum Listener {
    Tcp(TcpListener),
    Tls(TcpListener),
    Unix(UnixListener, String),
}

/// A connection just accepted, before it has a client record.
pub struct Accepted {
    pub stream: Stream,
    pub addr: String,
    pub laddr: String,
    pub unix: bool,
    /// The peer is on the loopback interface or the Unix socket (protected mode).
    pub local: bool,
}

impl Listener {
    /// One pending connection; WouldBlock when none is left. A TLS
    /// listener without a TLS context (never configured) is an error.
    pub fn accept(&self, tls: Option<&Arc<rustls::ServerConfig>>) -> io::Result<Accepted> {
        match self {
            Listener::Tcp(l) => {
                let (s, peer) = l.accept()?;
                let (addr, laddr, local) = tcp_accepted(&s, peer)?;
                Ok(Accepted { stream: Stream::Tcp(s), addr, laddr, unix: false, local })
            }
            Listener::Tls(l) => {
                let (s, peer) = l.accept()?;
                let Some(cfg) = tls else {
                    return Err(io::Error::other("TLS connection accepted without a TLS configuration"));
                };
                let conn = rustls::ServerConnection::new(cfg.clone()).map_err(io::Error::other)?;
                let (addr, laddr, local) = tcp_accepted(&s, peer)?;
                let stream = Stream::Tls(Box::new(TlsStream::new(s, conn.into())));
                Ok(Accepted { stream, addr, laddr, unix: false, local })
            }
            Listener::Unix(l, path) => {
                let (s, _) = l.accept()?;
                let addr = format!("{path}:0");
                Ok(Accepted { stream: Stream::Unix(s), laddr: addr.clone(), addr, unix: true, local: true })
            }
        }
    }

    pub fn source(&mut self) -> &mut dyn Source {
        match self {
            Listener::Tcp(l) | Listener::Tls(l) => l,
            Listener::Unix(l, _) => l,
        }
    }

    pub fn tcp_port(&self) -> Option<u16> {
        match self {
            Listener::Tcp(l) => l.local_addr().ok().map(|a| a.port()),
            _ => None,
        }
    }

    pub fn tls_port(&self) -> Option<u16> {
        match self {
            Listener::Tls(l) => l.local_addr().ok().map(|a| a.port()),
            _ => None,
        }
    }
}

/// A TCP connection's addresses (peer, local) and whether the peer is on
/// the loopback interface (Redis compares the text with 127.0.0.1 and ::1).
fn tcp_accepted(s: &TcpStream, peer: SocketAddr) -> io::Result<(String, String, bool)> {
    s.set_nodelay(true)?;
    let laddr = s.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let ip = peer.ip();
    let local = ip == std::net::Ipv4Addr::LOCALHOST || ip == std::net::Ipv6Addr::LOCALHOST;
    Ok((peer.to_string(), laddr, local))
}

/// Listen on every `bind` address at `port`. Addresses prefixed with `-`
/// are optional, as in redis.conf (skipped if unavailable, e.g. no IPv6).
pub fn bind_all(binds: &[String], port: u16, backlog: u32) -> io::Result<Vec<TcpListener>> {
    let mut listeners = Vec::new();
    for spec in binds {
        let (optional, host) = match spec.strip_prefix('-') {
            Some(h) => (true, h),
            None => (false, spec.as_str()),
        };
        // Redis's wildcards: `*` is every IPv4 address, `::*` every IPv6 one.
        let host = match host {
            "*" => "0.0.0.0",
            "::*" => "::",
            h => h,
        };
        let addr: SocketAddr = match format!("{host}:{port}").parse() {
            Ok(a) => a,
            Err(_) => format!("[{host}]:{port}")
                .parse()
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("bad bind address {spec}")))?,
        };
        match listen(addr, backlog) {
            Ok(l) => listeners.push(l),
            Err(e) if optional => crate::log_at!(Verbose, "Skipping optional bind {addr}: {e}"),
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("Could not create server TCP listening socket {addr}: {e}"),
                ))
            }
        }
    }
    Ok(listeners)
}

/// An IPv6 socket is IPv6-only, as Redis makes it, so `*` and `::*` can
/// share a port; the backlog is `tcp-backlog`.
fn listen(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(backlog.min(i32::MAX as u32) as i32)?;
    socket.set_nonblocking(true)?;
    Ok(TcpListener::from_std(socket.into()))
}

/// The Unix socket: a stale file at `path` is removed first, and the new
/// one gets `perm` when set (Redis chmods it the same way).
fn bind_unix(path: &str, perm: u32, backlog: u32) -> io::Result<UnixListener> {
    let _ = std::fs::remove_file(path);
    let l = std::os::unix::net::UnixListener::bind(path)?;
    if perm != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(perm))?;
    }
    let fd = std::os::fd::AsRawFd::as_raw_fd(&l);
    // SAFETY: fd is a valid listening socket owned by `l`.
    unsafe { libc::listen(fd, backlog as i32) };
    l.set_nonblocking(true)?;
    Ok(UnixListener::from_std(l))
}

/// Every listener the configuration asks for, with Redis's start-up
/// errors: a port that cannot be bound, or nothing to listen on at all.
pub fn open_all(cfg: &Config, tls_port: u16) -> io::Result<Vec<Listener>> {
    let mut out = Vec::new();
    if cfg.port != 0 {
        let tcp = bind_all(&cfg.bind, cfg.port, cfg.tcp_backlog).map_err(|e| {
            crate::log_at!(Warning, "{e}");
            crate::log_at!(Warning, "Failed listening on port {} (TCP), aborting.", cfg.port);
            e
        })?;
        out.extend(tcp.into_iter().map(Listener::Tcp));
    }
    if tls_port != 0 {
        let tls = bind_all(&cfg.bind, tls_port, cfg.tcp_backlog).map_err(|e| {
            crate::log_at!(Warning, "{e}");
            crate::log_at!(Warning, "Failed listening on port {tls_port} (TLS), aborting.");
            e
        })?;
        out.extend(tls.into_iter().map(Listener::Tls));
    }
    if !cfg.unixsocket.is_empty() {
        let l = bind_unix(&cfg.unixsocket, cfg.unixsocketperm, cfg.tcp_backlog).map_err(|e| {
            crate::log_at!(Warning, "Failed opening Unix socket: {e}");
            e
        })?;
        out.push(Listener::Unix(l, cfg.unixsocket.clone()));
    }
    if out.is_empty() {
        crate::log_at!(Warning, "Configured to not listen anywhere, exiting.");
        return Err(io::Error::new(io::ErrorKind::AddrNotAvailable, "Configured to not listen anywhere, exiting."));
    }
    Ok(out)
}

/// At shutdown, as Redis does: the socket file goes with the server.
pub fn remove_unix_socket(cfg: &Config) {
    if cfg.unixsocket.is_empty() {
        return;
    }
    crate::log_at!(Notice, "Removing the unix socket file.");
    if let Err(e) = std::fs::remove_file(&cfg.unixsocket) {
        crate::log_at!(Warning, "Error removing the unix socket file: {e}");
    }
}
