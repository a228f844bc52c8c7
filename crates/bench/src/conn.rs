//! The small blocking RESP connection the bench needs, on top of the shared
//! `resp` codec: single commands, pipelines (written by a helper thread while
//! replies are read, so servers that stop reading when their reply buffer is
//! full cannot deadlock us) and AUTH.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use resp::{decode_frame, encode_command, Frame};

/// Pipelines with more request bytes than this are written from a helper
/// thread while the replies are read.
const CONCURRENT_WRITE_THRESHOLD: usize = 64 * 1024;
/// Socket read size.
const READ_SIZE: usize = 64 * 1024;

/// A blocking connection to a Redis-protocol server.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// An error from the server or the socket.
pub fn proto_err(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

impl Conn {
    /// Connect (TCP_NODELAY on) and, when `password` is given, AUTH.
    pub fn connect(addr: SocketAddr, password: Option<&str>) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_nodelay(true)?;
        let mut c = Conn { stream, buf: vec![0; READ_SIZE], start: 0, end: 0 };
        if let Some(pw) = password {
            if let Frame::Error(e) = c.cmd(&["AUTH", pw])? {
                return Err(proto_err(format!("AUTH: {}", String::from_utf8_lossy(&e))));
            }
        }
        Ok(c)
    }

    /// Send one command and wait for its reply.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> io::Result<Frame> {
        let mut out = Vec::with_capacity(64);
        encode_command(&mut out, args);
        self.stream.write_all(&out)?;
        self.read_frame()
    }

    /// Send already-encoded requests (`count` commands in `bytes`) and read
    /// `count` replies, in order.
    pub fn pipeline_raw(&mut self, bytes: &[u8], count: usize) -> io::Result<Vec<Frame>> {
        let mut replies = Vec::with_capacity(count);
        self.pipeline_each(bytes, count, |f| replies.push(f))?;
        Ok(replies)
    }

    /// Like [`Conn::pipeline_raw`] but hands each reply to `each` instead of
    /// collecting them (cheaper for big batches).
    pub fn pipeline_each(&mut self, bytes: &[u8], count: usize, mut each: impl FnMut(Frame)) -> io::Result<()> {
        if bytes.len() <= CONCURRENT_WRITE_THRESHOLD {
            self.stream.write_all(bytes)?;
            for _ in 0..count {
                each(self.read_frame()?);
            }
            return Ok(());
        }
        let mut writer = self.stream.try_clone()?;
        std::thread::scope(|s| {
            let w = s.spawn(move || writer.write_all(bytes));
            let mut res = Ok(());
            for _ in 0..count {
                match self.read_frame() {
                    Ok(f) => each(f),
                    Err(e) => {
                        res = Err(e);
                        let _ = self.stream.shutdown(std::net::Shutdown::Both);
                        break;
                    }
                }
            }
            let wres = w.join().unwrap_or_else(|_| Err(proto_err("writer thread panicked")));
            res.and(wres)
        })
    }

    /// Encode and send `cmds` as one pipeline; return the replies.
    pub fn pipeline<A: AsRef<[u8]>>(&mut self, cmds: &[Vec<A>]) -> io::Result<Vec<Frame>> {
        let mut out = Vec::new();
        for c in cmds {
            encode_command(&mut out, c);
        }
        self.pipeline_raw(&out, cmds.len())
    }

    /// Read one reply.
    pub fn read_frame(&mut self) -> io::Result<Frame> {
        loop {
            if self.start < self.end {
                match decode_frame(&self.buf[self.start..self.end]) {
                    Ok(Some((frame, used))) => {
                        self.start += used;
                        if self.start == self.end {
                            self.start = 0;
                            self.end = 0;
                        }
                        return Ok(frame);
                    }
                    Ok(None) => {}
                    Err(e) => return Err(proto_err(e.to_string())),
                }
            }
            self.fill()?;
        }
    }

    /// Read more bytes into `buf[end..]`, compacting or growing first; the
    /// buffer is zeroed only when it grows, not on every read.
    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < READ_SIZE / 2 {
            let len = (self.buf.len() * 2).max(self.end + READ_SIZE);
            self.buf.resize(len, 0);
        }
        let n = self.stream.read(&mut self.buf[self.end..])?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection"));
        }
        self.end += n;
        Ok(())
    }
}

/// Resolve `host:port` to one socket address.
pub fn resolve(host: &str, port: u16) -> io::Result<SocketAddr> {
    (host, port).to_socket_addrs()?.next().ok_or_else(|| proto_err(format!("cannot resolve {host}")))
}

/// Turn an error reply into an `io::Error`; pass other replies through.
pub fn ok_reply(f: Frame) -> io::Result<Frame> {
    match f {
        Frame::Error(e) => Err(proto_err(format!("server error: {}", String::from_utf8_lossy(&e)))),
        f => Ok(f),
    }
}
