//! The floor server's transports: TCP, a Unix socket, and TLS over TCP
//! (rustls, as Volley uses). A floor is only a floor over the transport it
//! is compared on, so each transport does the least its protocol needs and
//! no more: TLS reads ciphertext in 64 KiB reads and decrypts every record
//! before the batch is parsed, and a batch of replies becomes one
//! encryption and one write, as Volley's `net/transport.rs` does.
use std::io::{self, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};

/// Ciphertext read from the socket in one `read()`.
const TLS_READ: usize = 64 << 10;

/// The files a TLS listener needs; clients must present a certificate
/// signed by `ca` (Redis's default `tls-auth-clients yes`).
pub struct TlsFiles {
    pub cert: String,
    pub key: String,
    pub ca: String,
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(ErrorKind::InvalidInput, e.to_string())
}

/// The rustls server configuration for `files`.
pub fn tls_config(files: &TlsFiles) -> io::Result<Arc<ServerConfig>> {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(&files.cert).map_err(invalid)?.collect::<Result<_, _>>().map_err(invalid)?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(invalid)?;
    let mut roots = RootCertStore::empty();
    for ca in CertificateDer::pem_file_iter(&files.ca).map_err(invalid)? {
        roots.add(ca.map_err(invalid)?).map_err(invalid)?;
    }
    let verifier = WebPkiClientVerifier::builder(Arc::new(roots)).build().map_err(invalid)?;
    let cfg =
        ServerConfig::builder().with_client_cert_verifier(verifier).with_single_cert(certs, key).map_err(invalid)?;
    Ok(Arc::new(cfg))
}

/// A listening socket; `accept` yields non-blocking streams.
pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
    Tls(TcpListener, Arc<ServerConfig>),
}

impl Listener {
    pub fn fd(&self) -> RawFd {
        match self {
            Listener::Tcp(l) | Listener::Tls(l, _) => l.as_raw_fd(),
            Listener::Unix(l) => l.as_raw_fd(),
        }
    }

    /// The next pending connection, or None when there is none.
    pub fn accept(&self) -> io::Result<Option<Stream>> {
        let res = match self {
            Listener::Tcp(l) => l.accept().map(|(s, _)| tcp(s).map(Stream::Tcp)),
            Listener::Tls(l, cfg) => l.accept().map(|(s, _)| {
                let tls = ServerConnection::new(cfg.clone()).map_err(invalid)?;
                Ok(Stream::Tls(Box::new(TlsStream::new(tcp(s)?, tls))))
            }),
            Listener::Unix(l) => l.accept().map(|(s, _)| s.set_nonblocking(true).map(|_| Stream::Unix(s))),
        };
        match res {
            Ok(s) => s.map(Some),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }
}

fn tcp(s: TcpStream) -> io::Result<TcpStream> {
    s.set_nonblocking(true)?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// A client connection over one of the transports.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
}

impl Stream {
    pub fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(t) => t.sock.as_raw_fd(),
        }
    }

    /// Write ciphertext an earlier write left queued. Ok(true) once none is.
    pub fn send_queued(&mut self) -> io::Result<bool> {
        match self {
            Stream::Tls(t) => t.send_queued(),
            _ => Ok(true),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// TLS over TCP with the ciphertext read ahead in `rbuf[rpos..rend]`.
pub struct TlsStream {
    sock: TcpStream,
    tls: ServerConnection,
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    /// The last socket read came back short: the socket is drained.
    drained: bool,
    eof: bool,
}

impl TlsStream {
    fn new(sock: TcpStream, mut tls: ServerConnection) -> TlsStream {
        // The floor never holds replies back: a batch is one encryption.
        tls.set_buffer_limit(None);
        let rbuf = vec![0; TLS_READ].into_boxed_slice();
        TlsStream { sock, tls, rbuf, rpos: 0, rend: 0, drained: false, eof: false }
    }

    /// Plaintext into `buf`, decrypting all that was read. It returns
    /// short only once the socket is drained (a short socket read), which
    /// the caller's edge-triggered loop relies on; WouldBlock when nothing
    /// is available.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut got = 0;
        loop {
            match self.tls.reader().read(&mut buf[got..]) {
                Ok(0) => return Ok(got),
                Ok(n) => {
                    got += n;
                    if got == buf.len() {
                        return Ok(got);
                    }
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            if self.rpos < self.rend {
                let n = self.tls.read_tls(&mut &self.rbuf[self.rpos..self.rend])?;
                self.rpos += n;
                self.process()?;
                continue;
            }
            if self.drained || self.eof {
                self.drained = false;
                return if got > 0 { Ok(got) } else { Err(ErrorKind::WouldBlock.into()) };
            }
            match self.sock.read(&mut self.rbuf) {
                Ok(0) => {
                    self.eof = true;
                    self.tls.read_tls(&mut &[][..])?;
                    self.process()?;
                }
                Ok(n) => (self.rpos, self.rend, self.drained) = (0, n, n < self.rbuf.len()),
                Err(e) if e.kind() == ErrorKind::WouldBlock && got > 0 => return Ok(got),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Handle the records handed over; handshake replies go out at once.
    fn process(&mut self) -> io::Result<()> {
        let res = self.tls.process_new_packets();
        self.send_queued()?;
        res.map(|_| ()).map_err(invalid)
    }

    fn send_queued(&mut self) -> io::Result<bool> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.sock) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.tls.is_handshaking() || !self.send_queued()? {
            return Err(ErrorKind::WouldBlock.into());
        }
        let n = self.tls.writer().write(buf)?;
        self.send_queued()?;
        Ok(n)
    }
}
