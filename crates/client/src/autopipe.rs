//! [`AutoPipelined`]: one connection shared by many tasks. Callers encode
//! their command and queue it; a writer task drains everything queued into one
//! buffer and one write, pushing each caller's reply slot onto a FIFO that a
//! reader task pops as replies arrive (the order of replies is the order of
//! requests). The reader yields after every [`ANSWER_CHUNK`] replies taken
//! from one read, so commands go out in overlapping batches (backing off when
//! the batches merge again anyway, see [`Splitter`]). Blocking commands (BLPOP, SUBSCRIBE, WAIT...) and commands that
//! change connection state (MULTI, SELECT...) are refused with
//! [`Error::BlockingCommand`]: open a [`dedicated`](AutoPipelined::dedicated)
//! connection for them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot};

use crate::aio::{read_reply_from, Connection};
use crate::conn::ReplyBuf;
use crate::error::{Error, Result};
use crate::options::ConnectOptions;
use crate::value::{Value, ValueExt};

type ReplyTx = oneshot::Sender<Result<Value>>;

struct Request {
    wire: Vec<u8>,
    reply: ReplyTx,
}

/// Counters of an [`AutoPipelined`] connection.
#[derive(Default, Debug)]
pub struct Stats {
    /// Commands written.
    pub commands: AtomicU64,
    /// `write` calls made (each carries one or more commands).
    pub writes: AtomicU64,
}

/// A connection multiplexed between tasks with automatic pipelining: a
/// writer task drains every queued request into one write and a reader task
/// answers reply slots in FIFO order. Cloning is cheap and shares the
/// connection. Blocking commands (BLPOP, BRPOP, BLMOVE, BZPOPMIN, XREAD
/// BLOCK, WAIT, SUBSCRIBE, MONITOR...) and connection-state commands (MULTI,
/// WATCH, SELECT, AUTH, HELLO, CLIENT...) are refused with
/// [`Error::BlockingCommand`]; use [`dedicated`](Self::dedicated) for them.
#[derive(Clone)]
pub struct AutoPipelined {
    tx: mpsc::Sender<Request>,
    stats: Arc<Stats>,
    opts: ConnectOptions,
}

/// Most bytes the writer packs into one write.
const MAX_WRITE: usize = 1 << 20;

/// Replies the reader hands out from one read before yielding, so that the
/// commands those callers send next go out while the rest are still being
/// answered: with two batches in flight the server works while we do, where
/// answering a whole read at once makes client and server take turns (64 tasks
/// on redis-server: ~1.1x redis-rs unchunked, ~1.7x with chunks of 32; 16
/// measured slightly below 32, as each write then carries fewer commands).
pub const ANSWER_CHUNK: usize = 32;

impl AutoPipelined {
    /// Connect (with handshake) and start the writer and reader tasks on the
    /// current tokio runtime. At most `max_queued` requests wait to be written.
    pub async fn connect(opts: &ConnectOptions, max_queued: usize) -> Result<AutoPipelined> {
        let conn = Connection::connect(opts).await?;
        let (rd, wr) = conn.stream.into_split();
        let (tx, rx) = mpsc::channel(max_queued.max(1));
        let (slots_tx, slots_rx) = mpsc::unbounded_channel();
        let stats = Arc::new(Stats::default());
        tokio::spawn(writer(wr, rx, slots_tx, stats.clone()));
        tokio::spawn(reader(rd, conn.replies, slots_rx));
        Ok(AutoPipelined { tx, stats, opts: opts.clone() })
    }

    /// Send a command and await its reply; error replies become `Err(Server)`.
    pub async fn cmd<A: AsRef<[u8]>>(&self, args: &[A]) -> Result<Value> {
        if crate::cmd::is_blocking(args) {
            let name = String::from_utf8_lossy(args[0].as_ref()).to_uppercase();
            return Err(Error::BlockingCommand(name));
        }
        let mut wire = Vec::new();
        resp::encode_command(&mut wire, args);
        let (reply, rx) = oneshot::channel();
        self.tx.send(Request { wire, reply }).await.map_err(|_| Error::Closed)?;
        rx.await.map_err(|_| Error::Closed)?
    }

    /// `GET key`.
    pub async fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        match self.cmd(&[b"GET".as_slice(), key.as_ref()]).await? {
            Value::Null => Ok(None),
            v => Ok(v.as_bytes().map(<[u8]>::to_vec)),
        }
    }

    /// `SET key value`.
    pub async fn set(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.cmd(&[b"SET".as_slice(), key.as_ref(), value.as_ref()]).await.map(drop)
    }

    /// `INCR key`.
    pub async fn incr(&self, key: impl AsRef<[u8]>) -> Result<i64> {
        let v = self.cmd(&[b"INCR".as_slice(), key.as_ref()]).await?;
        v.as_i64().ok_or_else(|| Error::Protocol(format!("INCR replied {v:?}")))
    }

    /// A fresh, unshared connection with the same options, for blocking commands.
    pub async fn dedicated(&self) -> Result<Connection> {
        Connection::connect(&self.opts).await
    }

    /// Write and command counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// `(commands, writes)` so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.stats.commands.load(Ordering::Relaxed), self.stats.writes.load(Ordering::Relaxed))
    }
}

async fn writer(
    mut wr: OwnedWriteHalf,
    mut rx: mpsc::Receiver<Request>,
    slots: mpsc::UnboundedSender<ReplyTx>,
    stats: Arc<Stats>,
) {
    let mut buf = Vec::new();
    while let Some(first) = rx.recv().await {
        buf.clear();
        let mut n = 0;
        let mut next = Some(first);
        while let Some(req) = next {
            buf.extend_from_slice(&req.wire);
            if slots.send(req.reply).is_err() {
                return;
            }
            n += 1;
            next = if buf.len() < MAX_WRITE { rx.try_recv().ok() } else { None };
        }
        stats.commands.fetch_add(n, Ordering::Relaxed);
        stats.writes.fetch_add(1, Ordering::Relaxed);
        if wr.write_all(&buf).await.is_err() {
            return; // the reader sees the broken socket and fails the slots
        }
    }
}

async fn reader(mut rd: OwnedReadHalf, mut rb: ReplyBuf, mut slots: mpsc::UnboundedReceiver<ReplyTx>) {
    let mut split = Splitter::default();
    loop {
        let reply = read_reply_from(&mut rb, &mut rd).await;
        let failed = reply.is_err();
        let Some(slot) = slots.recv().await else { return };
        let _ = slot.send(reply.and_then(ValueExt::into_result));
        if failed {
            break;
        }
        if split.answered(rb.has_buffered()) {
            // Let the callers answered so far queue their next commands (and
            // the writer send them) before answering the rest: the server
            // then works on that part while we handle the remainder.
            tokio::task::yield_now().await;
        }
    }
    // Connection is broken: fail everyone still waiting.
    slots.close();
    while let Some(slot) = slots.recv().await {
        let _ = slot.send(Err(Error::Closed));
    }
}

/// Most merged reads [`Splitter`] lets pass between two tries.
const MAX_SPLIT_EVERY: usize = 16;

/// Decides when the reader yields mid-read (see [`ANSWER_CHUNK`]). Splitting
/// pays off when it keeps two batches apart, so later reads bring a chunk or
/// less; when they keep arriving merged anyway (client and server sharing one
/// busy core), each split only costs an extra write, so after a split that
/// did not hold, tries become rarer (every 2nd, 4th... merged read, up to
/// [`MAX_SPLIT_EVERY`]) until a read is small again.
#[derive(Debug)]
pub(crate) struct Splitter {
    /// Replies answered from the current read (since the buffer was empty).
    in_read: usize,
    /// Replies answered since the last yield or read.
    since_yield: usize,
    /// Split in the current / the previous read.
    split_now: bool,
    split_prev: bool,
    /// Merged reads to let pass before the next try, and the current period.
    skip: usize,
    every: usize,
}

impl Default for Splitter {
    fn default() -> Self {
        Splitter { in_read: 0, since_yield: 0, split_now: false, split_prev: false, skip: 0, every: 1 }
    }
}

impl Splitter {
    /// One reply answered; `more` says whether bytes of further replies are
    /// buffered. Returns whether the reader should yield now.
    pub(crate) fn answered(&mut self, more: bool) -> bool {
        self.in_read += 1;
        self.since_yield += 1;
        if more {
            if self.since_yield >= ANSWER_CHUNK && self.skip == 0 {
                self.since_yield = 0;
                self.split_now = true;
                return true;
            }
            return false;
        }
        if self.in_read <= ANSWER_CHUNK {
            (self.every, self.skip) = (1, 0);
        } else {
            if self.split_prev {
                self.every = (self.every * 2).min(MAX_SPLIT_EVERY);
            }
            if self.split_now {
                self.skip = self.every - 1;
            } else {
                self.skip = self.skip.saturating_sub(1);
            }
        }
        (self.split_prev, self.split_now) = (self.split_now, false);
        (self.in_read, self.since_yield) = (0, 0);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed one read of `n` replies; returns how many yields it caused.
    fn read(s: &mut Splitter, n: usize) -> usize {
        (1..=n).filter(|&i| s.answered(i < n)).count()
    }

    #[test]
    fn small_reads_never_yield_and_big_ones_split_into_chunks() {
        let mut s = Splitter::default();
        assert_eq!(read(&mut s, ANSWER_CHUNK), 0);
        assert_eq!(read(&mut s, 1), 0);
        assert_eq!(read(&mut s, 2 * ANSWER_CHUNK), 1);
        // The split held: the next read is one chunk, so splitting stays on.
        assert_eq!(read(&mut s, ANSWER_CHUNK), 0);
        assert_eq!(read(&mut s, 4 * ANSWER_CHUNK), 3);
    }

    #[test]
    fn splits_that_do_not_hold_back_off_and_a_small_read_resets() {
        let mut s = Splitter::default();
        let yields: Vec<usize> = (0..40).map(|_| read(&mut s, 2 * ANSWER_CHUNK)).collect();
        // Tries after 0, 1, 3, 7, 15 merged reads, then every 16th.
        let tries: Vec<usize> = (0..40).filter(|&i| yields[i] > 0).collect();
        assert_eq!(tries, vec![0, 1, 3, 7, 15, 31]);
        assert_eq!(read(&mut s, 3), 0);
        assert_eq!(read(&mut s, 2 * ANSWER_CHUNK), 1, "a small read re-enables splitting at once");
    }
}
