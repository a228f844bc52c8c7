//! Blocking connection over `std::net::TcpStream`, and the `ReplyBuf`
//! decoder every connection reads replies through. The pipeline
//! constructors (`Connection::pipeline`, `Connection::streaming_pipeline`)
//! live beside the pipelines they build, so this file depends on neither.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};

use crate::error::{Error, Result};
use crate::options::ConnectOptions;
use crate::value::{Value, ValueExt};

/// Buffered RESP reply decoder over any byte source.
#[derive(Default)]
pub(crate) struct ReplyBuf {
    /// Storage, zero-filled once when it grows (not on every read): bytes
    /// `pos..end` are received and not yet decoded, `end..` is free space.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
}

impl ReplyBuf {
    /// Decode the next complete reply already buffered, if any.
    pub fn try_next(&mut self) -> Result<Option<Value>> {
        loop {
            match resp::decode_frame(&self.buf[self.pos..self.end])? {
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
        self.pos < self.end
    }

    /// Spare space to read into (compacting consumed bytes first).
    pub fn spare(&mut self) -> &mut [u8] {
        // Room for at least as much as is pending (up to 16 MiB): a large
        // reply is then re-decoded O(log n) times, not once per 64 KiB.
        let want = (self.end - self.pos).clamp(64 * 1024, 16 << 20);
        let short = self.buf.len() - self.end < want / 4;
        if self.pos > 0 && (self.pos == self.end || self.pos > 64 * 1024 || short) {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() - self.end < want / 4 {
            self.buf.resize(self.end + want, 0);
        }
        &mut self.buf[self.end..]
    }

    /// Keep the first `n` bytes read into the last `spare()`.
    pub fn commit(&mut self, n: usize) {
        self.end += n;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `data` into `rb` through `spare`/`commit`, at most `step` bytes
    /// per "read", decoding every complete reply as it becomes available.
    fn feed(rb: &mut ReplyBuf, data: &[u8], step: usize) -> Vec<Value> {
        let mut out = Vec::new();
        for piece in data.chunks(step) {
            let mut rest = piece;
            while !rest.is_empty() {
                let spare = rb.spare();
                let n = spare.len().min(rest.len());
                spare[..n].copy_from_slice(&rest[..n]);
                rb.commit(n);
                rest = &rest[n..];
                while let Some(v) = rb.try_next().unwrap() {
                    out.push(v);
                }
            }
        }
        out
    }

    #[test]
    fn replies_split_across_reads_decode_in_order_without_growing_storage() {
        let mut data = Vec::new();
        for i in 0..20_000 {
            data.extend_from_slice(format!("$10\r\nvalue{i:05}\r\n:{i}\r\n").as_bytes());
        }
        for step in [1, 7, 1000, 4096] {
            let mut rb = ReplyBuf::default();
            let got = feed(&mut rb, &data, step);
            assert_eq!(got.len(), 40_000, "step {step}");
            for (i, pair) in got.chunks(2).enumerate() {
                assert_eq!(pair[0], Value::Bulk(format!("value{i:05}").into_bytes()), "step {step}");
                assert_eq!(pair[1], Value::Integer(i as i64), "step {step}");
            }
            assert!(!rb.has_buffered());
            // Small replies never need more than the initial 64 KiB (the
            // storage is reused, not re-zeroed and regrown per read).
            assert_eq!(rb.buf.len(), 64 * 1024, "step {step}");
        }
    }

    #[test]
    fn a_reply_larger_than_the_buffer_grows_it_and_decodes_whole() {
        let big = vec![b'x'; 3 << 20];
        let mut data = format!("${}\r\n", big.len()).into_bytes();
        data.extend_from_slice(&big);
        data.extend_from_slice(b"\r\n+OK\r\n");
        let mut rb = ReplyBuf::default();
        let got = feed(&mut rb, &data[..data.len() - 3], 64 * 1024);
        assert_eq!(got, vec![Value::Bulk(big)]);
        assert!(rb.has_buffered(), "the start of +OK is still pending");
        assert_eq!(feed(&mut rb, b"K\r\n", 1), vec![Value::Simple(b"OK".to_vec())]);
        assert!(rb.buf.len() >= 3 << 20);
    }
}
