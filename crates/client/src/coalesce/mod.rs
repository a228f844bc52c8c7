//! [`Coalescer`]: a Bufferedis-style write buffer done right. Writes from any
//! number of tasks are merged into multi-argument commands (see `plan.rs` for
//! the merge rule and what each caller receives), flushed by a background
//! task when the buffer holds `max_args` arguments, when its oldest op is
//! `max_age` old, or on [`Coalescer::flush`]. Each flush is one write per
//! segment, and the flusher waits for its replies before the next flush, so
//! a failed merge can be re-issued op by op without breaking per-key order.
//! Memory is bounded: submitting waits while `max_ops` ops are unresolved.

mod plan;

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::{oneshot, Notify, Semaphore};
use tokio::time::Instant;

use crate::aio::Connection;
use crate::error::{Error, Result};
use crate::value::{FromValue, Value, ValueExt};
use plan::{segments, Buffer, CBatch, Op, Pending};

/// Flush thresholds and the memory bound of a [`Coalescer`].
#[derive(Debug, Clone)]
pub struct CoalescerConfig {
    /// Flush once this many arguments are buffered (default 10,000).
    pub max_args: usize,
    /// Flush once the oldest buffered op is this old (default 1 ms).
    pub max_age: Duration,
    /// Submitters wait while this many ops are unresolved (default 100,000).
    pub max_ops: usize,
}

impl Default for CoalescerConfig {
    fn default() -> Self {
        CoalescerConfig { max_args: 10_000, max_age: Duration::from_millis(1), max_ops: 100_000 }
    }
}

/// The outcome of one submitted op; await it (or drop it if you don't care).
pub struct Ticket<T> {
    rx: oneshot::Receiver<Result<Value>>,
    _t: PhantomData<fn() -> T>,
}

impl<T: FromValue> Future for Ticket<T> {
    type Output = Result<T>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        match Pin::new(&mut self.rx).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(_)) => Poll::Ready(Err(Error::Closed)),
            Poll::Ready(Ok(r)) => Poll::Ready(r.and_then(|v| T::from_value(&v))),
        }
    }
}

struct State {
    buffer: Buffer,
    oldest: Option<Instant>,
    flush_waiters: Vec<oneshot::Sender<()>>,
}

struct Shared {
    state: Mutex<State>,
    wake: Notify,
    space: Semaphore,
    closed: AtomicBool,
    cfg: CoalescerConfig,
}

/// Merges compatible writes from many tasks into few commands.
///
/// - Merging: consecutive SETs become one MSET; HSET / SADD / RPUSH / INCRBY
///   on one key become one command; an op joins the latest batch of its kind
///   only if no later batch touches its key, so **per-key order is kept**
///   (SET k 1, DEL k, SET k 2 leaves k = 2). Order between different keys is
///   not kept.
/// - Outcomes, one [`Ticket`] per op: SET/HSET/SADD → success (HSET/SADD
///   cannot say whether *this* field/member was new once merged); DEL/UNLINK →
///   whether *this* key existed: since `DEL k1 k2` only returns a total, a DEL
///   batch goes out as single-key DELs in the same write (one round trip, not
///   one command); RPUSH → the length right after this push; INCR/INCRBY →
///   the value right after this increment (merged result minus later
///   increments).
/// - Errors reach only their cause: a merged command that fails is re-issued
///   op by op (a failed command changes nothing), e.g. an INCRBY merge that
///   overflows; a SADD to a string key fails only that SADD's callers.
/// - Flushing: by size (`max_args`), age (`max_age`) or [`flush`](Self::flush);
///   one write per flush (split only where a re-issue could overtake a later
///   op on the same key); the next flush waits for the replies.
/// - Memory: submitting waits while `max_ops` ops are unresolved.
pub struct Coalescer {
    shared: Arc<Shared>,
}

impl Coalescer {
    /// Wrap `conn` (used only by the flusher task, spawned on the current runtime).
    pub fn new(conn: Connection, cfg: CoalescerConfig) -> Coalescer {
        let shared = Arc::new(Shared {
            state: Mutex::new(State { buffer: Buffer::default(), oldest: None, flush_waiters: Vec::new() }),
            wake: Notify::new(),
            space: Semaphore::new(cfg.max_ops.max(1)),
            closed: AtomicBool::new(false),
            cfg,
        });
        tokio::spawn(flusher(conn, shared.clone()));
        Coalescer { shared }
    }

    async fn submit<T>(&self, op: Op) -> Result<Ticket<T>> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        self.shared.space.acquire().await.map_err(|_| Error::Closed)?.forget();
        let (tx, rx) = oneshot::channel();
        let wake = {
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            let first = st.buffer.is_empty();
            if first {
                st.oldest = Some(Instant::now());
            }
            st.buffer.add(Pending { op, tx });
            first || st.buffer.args >= self.shared.cfg.max_args
        };
        if wake {
            self.shared.wake.notify_one();
        }
        Ok(Ticket { rx, _t: PhantomData })
    }

    /// `SET key value` (merged into MSET).
    pub async fn set(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<Ticket<()>> {
        self.submit(Op::Set(key.as_ref().to_vec(), value.as_ref().to_vec())).await
    }

    /// `DEL key`: the ticket says whether this key existed.
    pub async fn del(&self, key: impl AsRef<[u8]>) -> Result<Ticket<bool>> {
        self.submit(Op::Del(key.as_ref().to_vec())).await
    }

    /// `UNLINK key`: the ticket says whether this key existed.
    pub async fn unlink(&self, key: impl AsRef<[u8]>) -> Result<Ticket<bool>> {
        self.submit(Op::Unlink(key.as_ref().to_vec())).await
    }

    /// `HSET key field value` (merged per key; the ticket reports success only).
    pub async fn hset(
        &self,
        key: impl AsRef<[u8]>,
        field: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<Ticket<()>> {
        self.submit(Op::HSet(key.as_ref().to_vec(), field.as_ref().to_vec(), value.as_ref().to_vec())).await
    }

    /// `SADD key member` (merged per key; the ticket reports success only).
    pub async fn sadd(&self, key: impl AsRef<[u8]>, member: impl AsRef<[u8]>) -> Result<Ticket<()>> {
        self.submit(Op::SAdd(key.as_ref().to_vec(), member.as_ref().to_vec())).await
    }

    /// `RPUSH key value`: the ticket gets the list length right after this push.
    pub async fn rpush(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<Ticket<i64>> {
        self.submit(Op::RPush(key.as_ref().to_vec(), value.as_ref().to_vec())).await
    }

    /// `INCRBY key by`: the ticket gets the value right after this increment.
    pub async fn incrby(&self, key: impl AsRef<[u8]>, by: i64) -> Result<Ticket<i64>> {
        self.submit(Op::IncrBy(key.as_ref().to_vec(), by)).await
    }

    /// `INCR key`: as `incrby(key, 1)`.
    pub async fn incr(&self, key: impl AsRef<[u8]>) -> Result<Ticket<i64>> {
        self.incrby(key, 1).await
    }

    /// Flush now and wait until every op submitted before this call is resolved.
    pub async fn flush(&self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner()).flush_waiters.push(tx);
        self.shared.wake.notify_one();
        rx.await.map_err(|_| Error::Closed)
    }
}

impl Drop for Coalescer {
    /// The flusher sends what is buffered, then stops.
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.wake.notify_one();
    }
}

/// Take the buffer when a flush is due; otherwise how long to wait.
fn due(shared: &Shared) -> std::result::Result<(Buffer, Vec<oneshot::Sender<()>>), Option<Instant>> {
    let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    let deadline = st.oldest.map(|t| t + shared.cfg.max_age);
    let full = st.buffer.args >= shared.cfg.max_args;
    let closing = shared.closed.load(Ordering::Acquire);
    let expired = deadline.is_some_and(|d| d <= Instant::now());
    if full || expired || closing || !st.flush_waiters.is_empty() {
        st.oldest = None;
        return Ok((std::mem::take(&mut st.buffer), std::mem::take(&mut st.flush_waiters)));
    }
    Err(deadline)
}

async fn flusher(mut conn: Connection, shared: Arc<Shared>) {
    loop {
        match due(&shared) {
            Ok((buffer, waiters)) => {
                let ops = buffer.ops;
                for seg in segments(buffer.batches) {
                    run_segment(&mut conn, seg).await;
                }
                shared.space.add_permits(ops);
                for w in waiters {
                    let _ = w.send(());
                }
                if shared.closed.load(Ordering::Acquire) && shared.state.lock().map_or(true, |s| s.buffer.is_empty()) {
                    return;
                }
            }
            Err(Some(deadline)) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => {}
                    _ = shared.wake.notified() => {}
                }
            }
            Err(None) => shared.wake.notified().await,
        }
    }
}

/// Send a segment's commands in one write; split replies back to callers;
/// re-issue failed merges op by op.
async fn run_segment(conn: &mut Connection, seg: Vec<CBatch>) {
    let cmds: Vec<Vec<Vec<u8>>> = seg.iter().flat_map(CBatch::commands).collect();
    let replies = match conn.round(&cmds).await {
        Ok(r) => r,
        Err(e) => return fail_all(seg.into_iter().flat_map(|b| b.ops), &e),
    };
    let mut replies = replies.into_iter();
    let mut retry: Vec<Pending> = Vec::new();
    for batch in seg {
        if !batch.is_merged() {
            for (p, r) in batch.ops.into_iter().zip(replies.by_ref()) {
                let _ = p.tx.send(r.into_result());
            }
            continue;
        }
        let Some(reply) = replies.next() else { break };
        if matches!(reply, Value::Error(_)) {
            retry.extend(batch.ops);
            continue;
        }
        for (p, v) in batch.split_reply(&reply).into_iter().zip(batch.ops) {
            let _ = v.tx.send(Ok(p));
        }
    }
    if retry.is_empty() {
        return;
    }
    let cmds: Vec<Vec<Vec<u8>>> = retry.iter().map(|p| p.op.single()).collect();
    match conn.round(&cmds).await {
        Ok(replies) => {
            for (p, r) in retry.into_iter().zip(replies) {
                let _ = p.tx.send(r.into_result());
            }
        }
        Err(e) => fail_all(retry.into_iter(), &e),
    }
}

fn fail_all(ops: impl Iterator<Item = Pending>, e: &Error) {
    for p in ops {
        let _ = p.tx.send(Err(e.duplicate()));
    }
}
