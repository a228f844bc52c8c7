//! Blocking connection over `std::net::TcpStream`.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};

use crate::error::{Error, Result};
use crate::options::ConnectOptions;
use crate::pipeline::Pipeline;
use crate::value::{Value, ValueExt};

/// Buffered RESP reply decoder over any byte source.
#[derive(Default)]
pub(crate) struct ReplyBuf {
    buf: Vec<u8>,
    pos: usize,
    /// Length of valid data when `spare()` was handed out.
    mark: usize,
}

impl ReplyBuf {
    /// Decode the next complete reply already buffered, if any.
    pub fn try_next(&mut self) -> Result<Option<Value>> {
        loop {
            match resp::decode_frame(&self.buf[self.pos..])? {
                Some((Value::Push(_), n)) => self.pos += n, // RESP3 out-of-band: not a reply
                Some((f, n)) => {
                    self.pos += n;
                    return Ok(Some(f));
                }
                None => return Ok(None),
            }
        }
    }

    /// Whether undecoded bytes remain (part or all of a further reply).
    pub fn has_buffered(&self) -> bool {
        self.pos < self.buf.len()
    }

    /// Spare space to read into (compacting consumed bytes first).
    pub fn spare(&mut self) -> &mut [u8] {
        if self.pos > 0 && (self.pos == self.buf.len() || self.pos > 64 * 1024) {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let len = self.buf.len();
        // Room for at least as much as is pending (up to 16 MiB): a large
        // reply is then re-decoded O(log n) times, not once per 64 KiB.
        let want = (len - self.pos).clamp(64 * 1024, 16 << 20);
        if self.buf.capacity() - len < want / 4 {
            self.buf.reserve(want);
        }
        let cap = self.buf.capacity().min(len + want);
        self.mark = len;
        self.buf.resize(cap, 0);
        &mut self.buf[len..]
    }

    /// Keep the first `n` bytes read into the last `spare()`.
    pub fn commit(&mut self, n: usize) {
        self.buf.truncate(self.mark + n);
    }

    /// Read replies from `r` until one is complete.
    pub fn read_reply<R: Read>(&mut self, r: &mut R) -> Result<Value> {
        loop {
            if let Some(v) = self.try_next()? {
                return Ok(v);
            }
            let res = r.read(self.spare());
            self.commit(*res.as_ref().unwrap_or(&0));
            match res {
                Ok(0) => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// A blocking connection to a Redis-protocol server.
pub struct Connection {
    pub(crate) stream: TcpStream,
    pub(crate) replies: ReplyBuf,
    pub(crate) opts: ConnectOptions,
}

impl Connection {
    /// Connect and run the handshake (HELLO / AUTH / SELECT) from `opts`.
    pub fn connect(opts: &ConnectOptions) -> Result<Connection> {
        let addr = opts
            .addr()
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| Error::Io(std::io::Error::other("address did not resolve")))?;
        let stream = TcpStream::connect_timeout(&addr, opts.connect_timeout)?;
        stream.set_nodelay(true)?;
        let mut conn = Connection { stream, replies: ReplyBuf::default(), opts: opts.clone() };
        for cmd in opts.handshake() {
            conn.cmd(&cmd)?;
        }
        Ok(conn)
    }

    /// Send one command and wait for its reply; error replies become `Err(Server)`.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<Value> {
        let mut out = Vec::new();
        resp::encode_command(&mut out, args);
        self.stream.write_all(&out)?;
        self.read_reply()?.into_result()
    }

    /// Read the next reply (error replies are returned as `Value::Error`).
    pub fn read_reply(&mut self) -> Result<Value> {
        self.replies.read_reply(&mut self.stream)
    }

    /// Start an explicit pipeline on this connection.
    pub fn pipeline(&mut self) -> Pipeline<'_> {
        Pipeline::new(self)
    }

    /// The options this connection was made with.
    pub fn options(&self) -> &ConnectOptions {
        &self.opts
    }

    /// Change the chunk size used by pipelines (commands per chunk, at least 1).
    pub fn set_chunk_size(&mut self, n: usize) {
        self.opts.chunk_size = n.max(1);
    }

    /// Change the bound on unanswered request bytes for pipelines.
    pub fn set_max_inflight_bytes(&mut self, n: usize) {
        self.opts.max_inflight_bytes = n.max(1);
    }
}
