//! Outgoing connections (replication, cluster, MIGRATE): a TCP connection
//! from `bind-source-addr` when set, optionally wrapped in TLS with the
//! client side of the `tls-*` options, returned ready to use as a
//! non-blocking [`Stream`] the event loop can register.
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use super::transport::{Stream, TlsStream};
use crate::config::Config;

/// Connect to `host:port` within `timeout`, from `bind-source-addr` if
/// configured; with `tls`, the TLS handshake is completed (same timeout)
/// before returning, so the caller only ever sees an established stream.
pub fn connect(cfg: &Config, host: &str, port: u16, tls: bool, timeout: Duration) -> io::Result<Stream> {
    let deadline = Instant::now() + timeout;
    let source = cfg.other.get("bind-source-addr").map(String::as_str).unwrap_or("");
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("can't resolve: {host}"));
    for addr in (host, port).to_socket_addrs()? {
        match connect_one(addr, source, deadline) {
            Ok(s) => return finish(cfg, s, host, tls, deadline),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn finish(cfg: &Config, s: std::net::TcpStream, host: &str, tls: bool, deadline: Instant) -> io::Result<Stream> {
    s.set_nodelay(true)?;
    if !tls {
        s.set_nonblocking(true)?;
        return Ok(Stream::Tcp(mio::net::TcpStream::from_std(s)));
    }
    let config = super::tls::client_config(cfg)?;
    // Redis checks the chain, not the name: an IP or any name will do.
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .unwrap_or_else(|_| rustls::pki_types::ServerName::try_from("localhost").expect("valid name"));
    let mut conn = rustls::ClientConnection::new(config, name).map_err(io::Error::other)?;
    let mut sock = s;
    while conn.is_handshaking() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "TLS handshake timed out"));
        }
        sock.set_read_timeout(Some(left))?;
        sock.set_write_timeout(Some(left))?;
        conn.complete_io(&mut sock)?;
    }
    sock.set_read_timeout(None)?;
    sock.set_write_timeout(None)?;
    sock.set_nonblocking(true)?;
    let stream = TlsStream::new(mio::net::TcpStream::from_std(sock), conn.into());
    Ok(Stream::Tls(Box::new(stream)))
}

/// One address: socket, optional bind to the source address, connect
/// with a deadline.
fn connect_one(addr: SocketAddr, source: &str, deadline: Instant) -> io::Result<std::net::TcpStream> {
    let domain = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh socket nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    if !source.is_empty() {
        let src: std::net::IpAddr =
            source.parse().map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad bind-source-addr"))?;
        let (sa, len) = sockaddr(SocketAddr::new(src, 0));
        // SAFETY: sa is a valid sockaddr of `len` bytes.
        if unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, len) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    let (sa, len) = sockaddr(addr);
    // SAFETY: as above.
    let rc = unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, len) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
        wait_connected(fd, deadline)?;
    }
    let s = std::net::TcpStream::from(owned);
    s.set_nonblocking(false)?;
    debug_assert_eq!(s.as_raw_fd(), fd);
    Ok(s)
}

fn wait_connected(fd: i32, deadline: Instant) -> io::Result<()> {
    let ms = deadline.saturating_duration_since(Instant::now()).as_millis().min(i32::MAX as u128) as i32;
    let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    if n == 0 {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "connection timed out"));
    }
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: SO_ERROR writes one c_int.
    unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut err as *mut _ as *mut _, &mut len) };
    if err != 0 {
        return Err(io::Error::from_raw_os_error(err));
    }
    Ok(())
}

/// A socket address in the C layout, with its length.
fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large enough and aligned for sockaddr_in.
            let sin = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr = libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above, for sockaddr_in6.
            let sin6 = unsafe { &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr = libc::in6_addr { s6_addr: a.ip().octets() };
            sin6.sin6_scope_id = a.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connects_from_the_source_address() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let mut cfg = Config::default();
        cfg.other.insert("bind-source-addr", "127.0.0.1".into());
        let s = connect(&cfg, "127.0.0.1", port, false, Duration::from_secs(5)).unwrap();
        let (_, peer) = l.accept().unwrap();
        assert_eq!(peer.ip().to_string(), "127.0.0.1");
        assert!(!s.is_tls());
        cfg.other.insert("bind-source-addr", "10.255.255.1".into());
        assert!(connect(&cfg, "127.0.0.1", port, false, Duration::from_secs(5)).is_err(), "not an address of ours");
    }
}
