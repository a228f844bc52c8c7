//! Blocking explicit pipelines: queue commands (getting
//! [`Handle`](crate::Handle)s), then `sync()` sends them in chunks from a writer thread while this thread reads
//! and routes replies, with unanswered request bytes bounded.

use std::collections::VecDeque;
use std::io::Write;
use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::batch::Batch;
use crate::conn::Connection;
use crate::error::Result;
use crate::router::{finish_retries, retry_round, route, Retry};
use crate::value::{Value, ValueExt};

/// An explicit pipeline on a blocking [`Connection`]; derefs to [`Batch`] for
/// queueing (`p.incr("k")`, `p.cmd(&["GET", "k"])`...).
pub struct Pipeline<'a> {
    conn: &'a mut Connection,
    batch: Batch,
}

crate::batch::deref_to_batch!(Pipeline);

impl Connection {
    /// Start an explicit pipeline on this connection.
    pub fn pipeline(&mut self) -> Pipeline<'_> {
        Pipeline { conn: self, batch: Batch::default() }
    }
}

impl Pipeline<'_> {
    /// Send everything queued and fill the handles. Replies nobody holds a
    /// handle for are dropped as they arrive. Errors here are I/O or protocol
    /// errors; server errors reach the individual handles.
    pub fn sync(&mut self) -> Result<()> {
        self.sync_streaming(|_, _| {})
    }

    /// Send everything queued and return every reply in order (the Jedis
    /// `syncAndReturnAll`); handles are filled too.
    pub fn sync_and_return_all(&mut self) -> Result<Vec<Result<Value>>> {
        let mut all = Vec::with_capacity(self.batch.len());
        let mut late = Vec::new();
        self.run(|_, v| all.push(v), |i, v| late.push((i, v)))?;
        for (i, v) in late {
            all[i] = v;
        }
        Ok(all)
    }

    /// Send everything queued and hand each reply to `f(index, reply)` as it
    /// arrives, keeping none. An EVALSHA retried after NOSCRIPT is reported
    /// twice: first with NOSCRIPT, then, after the others, with its final reply.
    pub fn sync_streaming<F: FnMut(usize, Result<Value>)>(&mut self, mut f: F) -> Result<()> {
        let f = std::cell::RefCell::new(&mut f);
        self.run(|i, v| (f.borrow_mut())(i, v), |i, v| (f.borrow_mut())(i, v))
    }

    fn run(
        &mut self,
        mut on_reply: impl FnMut(usize, Result<Value>),
        mut on_retry: impl FnMut(usize, Result<Value>),
    ) -> Result<()> {
        let batch = self.batch.take()?;
        let n = batch.len();
        if n == 0 {
            return Ok(());
        }
        let chunk = self.conn.opts.chunk_size.max(1);
        let mut cuts: Vec<usize> = (chunk..n).step_by(chunk).map(|i| batch.offset(i)).collect();
        cuts.push(batch.buf.len());
        let Batch { buf, entries, .. } = batch;
        let mut entries = entries.into_iter();
        let mut retries: Vec<Retry> = Vec::new();
        send_and_receive(self.conn, &buf, &cuts, chunk, n, |i, v| {
            if let Some(entry) = entries.next() {
                retries.extend(route(i, entry, &v));
            }
            on_reply(i, v.into_result());
        })?;
        drop(buf);
        if retries.is_empty() {
            return Ok(());
        }
        let plan = retry_round(&retries);
        let mut out = Vec::new();
        plan.iter().for_each(|(cmd, _)| resp::encode_command(&mut out, cmd));
        self.conn.stream.write_all(&out)?;
        let replies = (0..plan.len()).map(|_| self.conn.read_reply()).collect::<Result<Vec<_>>>()?;
        finish_retries(&retries, &plan, replies);
        for r in &retries {
            let v = r.slot.get().map_or(Err(crate::Error::Closed), |v| v.as_ref().map_err(|e| e.duplicate()).cloned());
            on_retry(r.index, v);
        }
        Ok(())
    }
}

/// How far the reader got, shared with the writer thread.
struct Progress {
    replied: AtomicUsize,
    abort: AtomicBool,
    lock: Mutex<()>,
    cv: Condvar,
}

/// Aborts the writer thread and shuts the socket down unless disarmed.
struct StopWriter<'a> {
    progress: &'a Progress,
    stream: std::net::TcpStream,
    armed: bool,
}

impl StopWriter<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for StopWriter<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.progress.abort.store(true, Ordering::Release);
            let _ = self.stream.shutdown(Shutdown::Both);
            self.progress.wake();
        }
    }
}

impl Progress {
    fn wake(&self) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.cv.notify_all();
    }
}

/// Write `buf` (chunk ends at `cuts`) from a writer thread while reading `n`
/// replies here, never leaving more than `max_inflight_bytes` unanswered
/// (except a single chunk larger than that).
fn send_and_receive(
    conn: &mut Connection,
    buf: &[u8],
    cuts: &[usize],
    chunk: usize,
    n: usize,
    mut on_each: impl FnMut(usize, Value),
) -> Result<()> {
    let max_inflight = conn.opts.max_inflight_bytes;
    if cuts.len() == 1 && buf.len() <= max_inflight {
        conn.stream.write_all(buf)?;
        for i in 0..n {
            let v = conn.read_reply()?;
            on_each(i, v);
        }
        return Ok(());
    }
    let writer = conn.stream.try_clone()?;
    let writer_handle = conn.stream.try_clone()?;
    let progress = Progress {
        replied: AtomicUsize::new(0),
        abort: AtomicBool::new(false),
        lock: Mutex::new(()),
        cv: Condvar::new(),
    };
    std::thread::scope(|s| {
        let w = s.spawn(|| write_chunks(writer, buf, cuts, chunk, n, max_inflight, &progress));
        let mut read_all = || -> Result<()> {
            for i in 0..n {
                let v = conn.read_reply()?;
                on_each(i, v);
                progress.replied.store(i + 1, Ordering::Release);
                if (i + 1) % chunk == 0 {
                    progress.wake();
                }
            }
            Ok(())
        };
        // If reading fails or the callback panics, stop the writer (and the
        // socket, which is out of step now) so the scope can join it.
        let guard = StopWriter { progress: &progress, stream: writer_handle, armed: true };
        let r = read_all();
        if r.is_ok() {
            guard.disarm();
        } else {
            drop(guard);
        }
        let w = w.join().unwrap_or(Err(crate::Error::Closed));
        r.and(w)
    })
}

fn write_chunks(
    mut stream: std::net::TcpStream,
    buf: &[u8],
    cuts: &[usize],
    chunk: usize,
    n: usize,
    max_inflight: usize,
    progress: &Progress,
) -> Result<()> {
    // (reply count that completes the chunk, its bytes)
    let mut inflight: VecDeque<(usize, usize)> = VecDeque::new();
    let mut inflight_bytes = 0;
    let mut start = 0;
    for (j, &end) in cuts.iter().enumerate() {
        let len = end - start;
        loop {
            let replied = progress.replied.load(Ordering::Acquire);
            while inflight.front().is_some_and(|&(done, _)| done <= replied) {
                inflight_bytes -= inflight.pop_front().map_or(0, |(_, b)| b);
            }
            if inflight.is_empty() || inflight_bytes + len <= max_inflight {
                break;
            }
            if progress.abort.load(Ordering::Acquire) {
                return Ok(());
            }
            let g = progress.lock.lock().unwrap_or_else(|e| e.into_inner());
            if progress.replied.load(Ordering::Acquire) == replied {
                let _ = progress.cv.wait_timeout(g, Duration::from_millis(20));
            }
        }
        if let Err(e) = stream.write_all(&buf[start..end]) {
            let _ = stream.shutdown(Shutdown::Both);
            return Err(e.into());
        }
        inflight.push_back((((j + 1) * chunk).min(n), len));
        inflight_bytes += len;
        start = end;
    }
    Ok(())
}
