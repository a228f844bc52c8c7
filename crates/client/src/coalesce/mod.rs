//! [`Coalescer`]: a Bufferedis-style write buffer done right. Writes from any
//! number of tasks are merged into multi-argument commands (see `plan.rs` for
//! the merge rule and what each caller receives), encoded straight into the
//! batch's wire buffer, and handed to a writer task when the buffer holds
//! `max_args` arguments, when its oldest op is `max_age` old, or on
//! [`Coalescer::flush`]. The writer keeps writing while earlier batches'
//! replies are outstanding (a FIFO of in-flight batches read by a reader
//! task, see `flusher.rs`), so the pipe stays full across the round trip.
//! Tickets are an index into their batch's shared outcome (`ticket.rs`).
//! Memory is bounded: submitting waits while `max_ops` ops are unresolved.

mod flusher;
mod plan;
mod ticket;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{oneshot, Notify, Semaphore, TryAcquireError};
use tokio::time::Instant;

use crate::aio::Connection;
use crate::error::{Error, Result};
use plan::{Buffer, Op};
pub use ticket::Ticket;

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

/// The submit side: the open buffer, buffers sealed by size, flush requests.
#[derive(Default)]
struct State {
    buffer: Buffer,
    sealed: VecDeque<Buffer>,
    oldest: Option<Instant>,
    flush_waiters: Vec<oneshot::Sender<()>>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer (new work, age deadline, reader progress).
    wake: Notify,
    /// One permit per op that may be unresolved.
    space: Semaphore,
    closed: AtomicBool,
    cfg: CoalescerConfig,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
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
/// - Errors reach only their cause: a merged INCRBY that fails (e.g. the sum
///   overflows) is re-issued op by op, and later batches touching its key
///   wait for that. A merged MSET/HSET/SADD/RPUSH is atomic and its possible
///   errors (WRONGTYPE on its one key, OOM, READONLY, NOAUTH) would hit each
///   of its ops alone too, so its callers get the merged command's error.
///   A SADD to a string key fails only that SADD's callers.
/// - Flushing: by size (`max_args`), age (`max_age`) or [`flush`](Self::flush).
///   Several merged commands are in flight at once: the writer does not wait
///   for replies before writing the next batch.
/// - Memory: submitting waits while `max_ops` ops are unresolved; a ticket is
///   16 bytes and successes of a merged command share one stored reply.
pub struct Coalescer {
    shared: Arc<Shared>,
}

impl Coalescer {
    /// Wrap `conn` (used only by the flusher tasks, spawned on the current runtime).
    pub fn new(conn: Connection, cfg: CoalescerConfig) -> Coalescer {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Notify::new(),
            space: Semaphore::new(cfg.max_ops.clamp(1, Semaphore::MAX_PERMITS)),
            closed: AtomicBool::new(false),
            cfg,
        });
        tokio::spawn(flusher::run(conn, shared.clone()));
        Coalescer { shared }
    }

    async fn submit<T>(&self, op: Op<'_>) -> Result<Ticket<T>> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        match self.shared.space.try_acquire() {
            Ok(p) => p.forget(),
            Err(TryAcquireError::NoPermits) => self.shared.space.acquire().await.map_err(|_| Error::Closed)?.forget(),
            Err(TryAcquireError::Closed) => return Err(Error::Closed),
        }
        let (ticket, first, sealed) = {
            let mut st = self.shared.state();
            let first = st.buffer.is_empty();
            let ticket = st.buffer.add(&op);
            let sealed = st.buffer.args >= self.shared.cfg.max_args;
            if sealed {
                let full = std::mem::take(&mut st.buffer);
                st.sealed.push_back(full);
                st.oldest = None;
            } else if first {
                st.oldest = Some(Instant::now());
            }
            (ticket, first, sealed)
        };
        if first || sealed {
            self.shared.wake.notify_one();
        }
        if sealed {
            // Let the writer put the sealed batch on the wire now, even on a
            // current-thread runtime where this submitter would otherwise
            // run on until it runs out of permits.
            tokio::task::yield_now().await;
        }
        Ok(ticket)
    }

    /// `SET key value` (merged into MSET).
    pub async fn set(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<Ticket<()>> {
        self.submit(Op::Set(key.as_ref(), value.as_ref())).await
    }

    /// `DEL key`: the ticket says whether this key existed.
    pub async fn del(&self, key: impl AsRef<[u8]>) -> Result<Ticket<bool>> {
        self.submit(Op::Del(key.as_ref())).await
    }

    /// `UNLINK key`: the ticket says whether this key existed.
    pub async fn unlink(&self, key: impl AsRef<[u8]>) -> Result<Ticket<bool>> {
        self.submit(Op::Unlink(key.as_ref())).await
    }

    /// `HSET key field value` (merged per key; the ticket reports success only).
    pub async fn hset(
        &self,
        key: impl AsRef<[u8]>,
        field: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<Ticket<()>> {
        self.submit(Op::HSet(key.as_ref(), field.as_ref(), value.as_ref())).await
    }

    /// `SADD key member` (merged per key; the ticket reports success only).
    pub async fn sadd(&self, key: impl AsRef<[u8]>, member: impl AsRef<[u8]>) -> Result<Ticket<()>> {
        self.submit(Op::SAdd(key.as_ref(), member.as_ref())).await
    }

    /// `RPUSH key value`: the ticket gets the list length right after this push.
    pub async fn rpush(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<Ticket<i64>> {
        self.submit(Op::RPush(key.as_ref(), value.as_ref())).await
    }

    /// `INCRBY key by`: the ticket gets the value right after this increment.
    pub async fn incrby(&self, key: impl AsRef<[u8]>, by: i64) -> Result<Ticket<i64>> {
        self.submit(Op::IncrBy(key.as_ref(), by)).await
    }

    /// `INCR key`: as `incrby(key, 1)`.
    pub async fn incr(&self, key: impl AsRef<[u8]>) -> Result<Ticket<i64>> {
        self.incrby(key, 1).await
    }

    /// Flush now and wait until every op submitted before this call is resolved.
    pub async fn flush(&self) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.shared.state().flush_waiters.push(tx);
        self.shared.wake.notify_one();
        rx.await.map_err(|_| Error::Closed)
    }
}

impl Drop for Coalescer {
    /// The flusher sends what is buffered, waits for the replies, then stops.
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.wake.notify_one();
    }
}
