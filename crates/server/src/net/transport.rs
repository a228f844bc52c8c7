//! The byte streams a client connection runs over: TCP, a Unix socket, or
//! TLS over TCP. `Conn` reads and writes through [`Stream`] without knowing
//! which; the TCP arm is a direct call, so plain TCP costs what it did
//! before the other transports existed.
//!
//! TLS keeps the batch property of the request path: a read decrypts every
//! record the socket holds before the parser runs, and a batch of replies
//! becomes full-size records written with one `writev` (rustls queues the
//! records and writes them vectored).
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};

use crate::server::ClientLink;

/// Ciphertext read from the socket in one `read()`: several full records.
const TLS_READ: usize = 64 << 10;
/// Plaintext rustls accepts for encryption before a write stops: a deep
/// pipeline's replies go out in few large writes.
const TLS_SEND_LIMIT: usize = 256 << 10;

/// A connected client (or outgoing) stream.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
}

/// TLS over a TCP socket: the rustls state and the ciphertext read ahead.
pub struct TlsStream {
    pub sock: TcpStream,
    pub tls: rustls::Connection,
    /// Ciphertext read and not yet handed to rustls: `rbuf[rpos..rend]`.
    rbuf: Box<[u8]>,
    rpos: usize,
    rend: usize,
    /// The last socket read came back short: the socket is drained.
    drained: bool,
    /// The peer closed the TCP connection.
    eof: bool,
}

impl TlsStream {
    pub fn new(sock: TcpStream, mut tls: rustls::Connection) -> TlsStream {
        tls.set_buffer_limit(Some(TLS_SEND_LIMIT));
        TlsStream { sock, tls, rbuf: Box::default(), rpos: 0, rend: 0, drained: false, eof: false }
    }

    /// Plaintext into `buf`: decrypts what was read ahead, reads the socket
    /// when that runs out. WouldBlock when nothing is available yet.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut got = 0;
        loop {
            match self.tls.reader().read(&mut buf[got..]) {
                Ok(0) if got == 0 && !buf.is_empty() => return Ok(0),
                Ok(n) => {
                    got += n;
                    if got == buf.len() || n == 0 {
                        return Ok(got);
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if got > 0 => {
                    // Reported on the next call, after this data is used.
                    let _ = e;
                    return Ok(got);
                }
                Err(e) => return Err(e),
            }
            if self.rpos < self.rend {
                let mut pending = &self.rbuf[self.rpos..self.rend];
                let n = self.tls.read_tls(&mut pending)?;
                self.rpos += n;
                self.process()?;
                continue;
            }
            // A short read drained the socket: the next data raises a new
            // edge, so skip the read that would only say EAGAIN.
            if self.eof || self.drained {
                self.drained = false;
                return if got > 0 { Ok(got) } else { Err(io::ErrorKind::WouldBlock.into()) };
            }
            if self.rbuf.is_empty() {
                self.rbuf = vec![0; TLS_READ].into_boxed_slice();
            }
            match self.sock.read(&mut self.rbuf) {
                Ok(0) => {
                    self.eof = true;
                    // Tells rustls the transport ended (clean or not).
                    self.tls.read_tls(&mut &[][..])?;
                    self.process()?;
                }
                Ok(n) => {
                    self.rpos = 0;
                    self.rend = n;
                    self.drained = n < self.rbuf.len();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && got > 0 => return Ok(got),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Handle the records handed over; handshake replies and alerts they
    /// produce go out at once.
    fn process(&mut self) -> io::Result<()> {
        let handshaking = self.tls.is_handshaking();
        let res = self.tls.process_new_packets();
        if let (Err(rustls::Error::InvalidMessage(_)), true) = (&res, handshaking) {
            // Not TLS at all (a plain client on the TLS port): no alert,
            // and the close resets the connection, as a Redis client sees
            // from OpenSSL (which leaves the rest of the request unread).
            reset_on_close(&self.sock);
        } else {
            // An alert explaining a failure is worth sending before closing.
            let _ = self.send_queued();
        }
        res.map(|_| ()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Write queued ciphertext. Ok(true) once none is left.
    pub fn send_queued(&mut self) -> io::Result<bool> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Replies wait for the handshake (a DENIED text is written after it,
        // as Redis writes it once the connection is established).
        if self.tls.is_handshaking() || !self.send_queued()? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = self.tls.writer().write(buf)?;
        self.send_queued()?;
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }
}

/// SO_LINGER with a zero timeout: closing sends RST, not FIN.
fn reset_on_close(sock: &TcpStream) {
    let lg = libc::linger { l_onoff: 1, l_linger: 0 };
    let len = std::mem::size_of::<libc::linger>() as libc::socklen_t;
    // SAFETY: setsockopt reads `len` bytes from the valid `lg`; the fd is
    // the open socket `sock` owns.
    unsafe {
        libc::setsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_LINGER, (&lg as *const libc::linger).cast(), len)
    };
}

impl Stream {
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }

    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    /// TLS records (handshake, or replies) still waiting for the socket.
    #[inline]
    pub fn has_queued(&self) -> bool {
        match self {
            Stream::Tls(s) => s.tls.wants_write(),
            _ => false,
        }
    }

    /// Write what [`Stream::has_queued`] reports. Ok(true) when done.
    pub fn send_queued(&mut self) -> io::Result<bool> {
        match self {
            Stream::Tls(s) => s.send_queued(),
            _ => Ok(true),
        }
    }

    /// Bytes the kernel holds for reading (plus TLS read ahead); 0 if unknown.
    pub fn queued_input(&self) -> usize {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int through the valid pointer given.
        let ok = unsafe { libc::ioctl(self.as_raw_fd(), libc::FIONREAD, &mut n) } == 0;
        let kernel = if ok { n.max(0) as usize } else { 0 };
        match self {
            Stream::Tls(s) => kernel + (s.rend - s.rpos),
            _ => kernel,
        }
    }

    /// TLS: send close_notify, without waiting (the socket closes next).
    pub fn close_notify(&mut self) {
        if let Stream::Tls(s) = self {
            if !s.tls.is_handshaking() {
                s.tls.send_close_notify();
                let _ = s.send_queued();
            }
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// The TLS session, for INFO-style reporting.
    pub fn tls(&self) -> Option<&rustls::Connection> {
        match self {
            Stream::Tls(s) => Some(&s.tls),
            _ => None,
        }
    }
}

/// How long a debugging session's write waits for the peer (Redis sets a
/// 5 s send timeout on the debugged connection).
const LINK_SEND_TIMEOUT: Duration = Duration::from_secs(5);

impl Stream {
    /// Wait until the socket is readable (`POLLIN`) or writable, up to
    /// `deadline`; Err(TimedOut) past it.
    fn wait_for(&self, events: libc::c_short, deadline: Option<Instant>) -> io::Result<()> {
        loop {
            let ms = match deadline {
                None => -1,
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) => left.as_millis().min(i32::MAX as u128) as i32,
                    None => return Err(io::ErrorKind::TimedOut.into()),
                },
            };
            let mut pfd = libc::pollfd { fd: self.as_raw_fd(), events, revents: 0 };
            // SAFETY: one valid pollfd for the stream's open socket.
            let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
            match rc {
                1.. => return Ok(()),
                0 => return Err(io::ErrorKind::TimedOut.into()),
                _ => {
                    // A shutdown signal ends the wait (and so a debugging
                    // session, as a blocked read in Redis's does), so the
                    // event loop gets to act on it.
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted || super::signals::pending() {
                        return Err(e);
                    }
                }
            }
        }
    }
}

impl ClientLink for Stream {
    fn read_blocking(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_for(libc::POLLIN, None)?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn write_all_blocking(&mut self, mut data: &[u8]) -> io::Result<()> {
        let deadline = Some(Instant::now() + LINK_SEND_TIMEOUT);
        while !data.is_empty() {
            match self.write(data) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_for(libc::POLLOUT, deadline)?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        while !self.send_queued()? {
            self.wait_for(libc::POLLOUT, deadline)?;
        }
        Ok(())
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.sock.as_raw_fd(),
        }
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, t, i),
            Stream::Unix(s) => s.register(r, t, i),
            Stream::Tls(s) => s.sock.register(r, t, i),
        }
    }

    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, t, i),
            Stream::Unix(s) => s.reregister(r, t, i),
            Stream::Tls(s) => s.sock.reregister(r, t, i),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
            Stream::Tls(s) => s.sock.deregister(r),
        }
    }
}
