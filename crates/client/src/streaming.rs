//! [`StreamingPipeline`]: a pipeline of unbounded length in flat memory.
//! Queued commands go out a chunk at a time as soon as `chunk_size` are
//! queued, and replies are read and handed to a callback while writing
//! (non-blocking socket, `poll(2)` on read/write readiness), so neither
//! queued commands nor replies accumulate, and at most `max_inflight_bytes`
//! of requests are unanswered: a server without backpressure is not flooded,
//! and one with backpressure cannot deadlock us.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;

use crate::batch::{Batch, Entry, Sink};
use crate::conn::Connection;
use crate::error::{Error, Result};
use crate::router::{finish_retries, retry_round, route, Retry};
use crate::value::{Value, ValueExt};

/// A pipeline of any length in flat memory: a chunk goes out as soon as
/// `chunk_size` commands are queued, replies are read while writing
/// (non-blocking socket driven by `poll(2)`) and handed to a callback, and at
/// most `max_inflight_bytes` of requests are unanswered. Queue with the
/// [`Batch`] methods (handles work too), call
/// [`stream_into`](Self::stream_into) after queueing (cheap unless a chunk is
/// due) and [`finish`](Self::finish) at the end. Reply indices count from 0
/// over the pipeline's whole life.
pub struct StreamingPipeline<'a> {
    conn: &'a mut Connection,
    batch: Batch,
    out: Vec<u8>,
    out_pos: usize,
    /// Unanswered commands whose replies go somewhere (index, entry);
    /// commands queued without a handle cost nothing here.
    pending: VecDeque<(usize, Entry)>,
    next: usize,
    queued_total: usize,
    chunks: VecDeque<(usize, usize)>,
    inflight_bytes: usize,
    retries: Vec<Retry>,
    nonblocking: bool,
}

crate::batch::deref_to_batch!(StreamingPipeline);

impl Connection {
    /// Start a [`StreamingPipeline`] on this connection.
    pub fn streaming_pipeline(&mut self) -> StreamingPipeline<'_> {
        StreamingPipeline {
            conn: self,
            batch: Batch::default(),
            out: Vec::new(),
            out_pos: 0,
            pending: VecDeque::new(),
            next: 0,
            queued_total: 0,
            chunks: VecDeque::new(),
            inflight_bytes: 0,
            retries: Vec::new(),
            nonblocking: false,
        }
    }
}

impl StreamingPipeline<'_> {
    /// If a chunk's worth is queued, send it, delivering replies to `f` while
    /// waiting; returns once the unanswered bytes are within bounds.
    pub fn stream_into<F: FnMut(usize, Result<Value>)>(&mut self, f: &mut F) -> Result<()> {
        if self.batch.len() < self.conn.opts.chunk_size.max(1) {
            return Ok(());
        }
        self.pump(f, false)?;
        self.stage(false)?;
        self.pump(f, false)
    }

    /// Send what is left and deliver every remaining reply to `f` (EVALSHA
    /// retries after NOSCRIPT are delivered again at the end).
    pub fn finish<F: FnMut(usize, Result<Value>)>(&mut self, f: &mut F) -> Result<()> {
        let r = self.finish_inner(f);
        self.set_nonblocking(false)?;
        r
    }

    fn finish_inner<F: FnMut(usize, Result<Value>)>(&mut self, f: &mut F) -> Result<()> {
        self.pump(f, true)?;
        self.stage(true)?;
        self.pump(f, true)?;
        if self.retries.is_empty() {
            return Ok(());
        }
        self.set_nonblocking(false)?;
        let retries = std::mem::take(&mut self.retries);
        let plan = retry_round(&retries);
        let mut out = Vec::new();
        plan.iter().for_each(|(cmd, _)| resp::encode_command(&mut out, cmd));
        self.conn.stream.write_all(&out)?;
        let replies = (0..plan.len()).map(|_| self.conn.read_reply()).collect::<Result<Vec<_>>>()?;
        finish_retries(&retries, &plan, replies);
        for r in &retries {
            f(r.index, r.slot.get().map_or(Err(Error::Closed), |v| v.as_ref().map_err(|e| e.duplicate()).cloned()));
        }
        Ok(())
    }

    /// Move the queued commands to the output buffer (only when it is empty);
    /// `finishing` refuses an open MULTI block.
    fn stage(&mut self, finishing: bool) -> Result<()> {
        let batch = if finishing { self.batch.take()? } else { self.batch.take_keep_multi() };
        if batch.is_empty() {
            return Ok(());
        }
        let base = self.queued_total;
        self.queued_total += batch.len();
        self.chunks.push_back((self.queued_total, batch.buf.len()));
        self.inflight_bytes += batch.buf.len();
        let routed = batch.entries.into_iter().enumerate().filter(|(_, e)| !matches!(e.sink, Sink::Nothing));
        self.pending.extend(routed.map(|(i, e)| (base + i, e)));
        self.out = batch.buf;
        self.out_pos = 0;
        Ok(())
    }

    fn set_nonblocking(&mut self, on: bool) -> Result<()> {
        if self.nonblocking != on {
            self.conn.stream.set_nonblocking(on)?;
            self.nonblocking = on;
        }
        Ok(())
    }

    /// Write and read until the output buffer is empty and the unanswered
    /// bytes are within bounds (`all`: until every reply arrived).
    fn pump<F: FnMut(usize, Result<Value>)>(&mut self, f: &mut F, all: bool) -> Result<()> {
        self.set_nonblocking(true)?;
        loop {
            self.drain_replies(f)?;
            let writing = self.out_pos < self.out.len();
            let answered = if all { self.next == self.queued_total } else { true };
            let within = self.chunks.len() <= 1 || self.inflight_bytes <= self.conn.opts.max_inflight_bytes;
            if !writing && answered && (all || within) {
                return Ok(());
            }
            let (readable, writable) = wait(&self.conn.stream, writing)?;
            if writable {
                match self.conn.stream.write(&self.out[self.out_pos..]) {
                    Ok(n) => self.out_pos += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
                if self.out_pos == self.out.len() {
                    self.out = Vec::new();
                    self.out_pos = 0;
                }
            }
            if readable {
                let res = self.conn.stream.read(self.conn.replies.spare());
                self.conn.replies.commit(*res.as_ref().unwrap_or(&0));
                match res {
                    Ok(0) => return Err(std::io::Error::from(ErrorKind::UnexpectedEof).into()),
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }

    /// Route every complete reply already buffered.
    fn drain_replies<F: FnMut(usize, Result<Value>)>(&mut self, f: &mut F) -> Result<()> {
        while self.next < self.queued_total {
            let Some(v) = self.conn.replies.try_next()? else { break };
            if self.pending.front().is_some_and(|(i, _)| *i == self.next) {
                if let Some((i, entry)) = self.pending.pop_front() {
                    self.retries.extend(route(i, entry, &v));
                }
            }
            f(self.next, v.into_result());
            self.next += 1;
            while self.chunks.front().is_some_and(|&(end, _)| end <= self.next) {
                self.inflight_bytes -= self.chunks.pop_front().map_or(0, |(_, b)| b);
            }
        }
        Ok(())
    }
}

impl Drop for StreamingPipeline<'_> {
    /// Unfinished pipelines are finished with replies discarded, so the
    /// connection stays in step.
    fn drop(&mut self) {
        if self.next < self.queued_total || !self.batch.is_empty() || self.nonblocking {
            let _ = self.finish(&mut |_, _| {});
        }
    }
}

/// Wait until the socket is readable (always of interest) or, when
/// `want_write`, writable.
fn wait(stream: &std::net::TcpStream, want_write: bool) -> Result<(bool, bool)> {
    let mut pfd = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLIN | if want_write { libc::POLLOUT } else { 0 },
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r >= 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e.into());
        }
    }
    let err = pfd.revents & (libc::POLLERR | libc::POLLHUP) != 0;
    Ok((pfd.revents & libc::POLLIN != 0 || err, pfd.revents & libc::POLLOUT != 0 || err))
}
