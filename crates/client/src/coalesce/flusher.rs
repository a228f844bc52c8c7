//! The coalescer's two background tasks over one split connection.
//!
//! - The writer takes sealed (full) buffers, and the open buffer once it is
//!   due, encodes their batches into one output buffer, pushes one entry per
//!   batch onto the in-flight FIFO and writes — without waiting for earlier
//!   replies, so many merged commands are in flight across the round trip.
//! - The reader pops FIFO entries in order, reads each one's replies and
//!   resolves its ticket slot, returning the ops' permits.
//!
//! Re-issues: a merged INCRBY that fails (typically the sum overflowing while
//! some increments alone would not) is re-issued op by op. Until its replies
//! are in, the key is "risky": the writer holds back any batch touching it,
//! so the re-issue cannot be overtaken by a later op on the same key. Other
//! merged commands are atomic with errors that would hit each op alone too,
//! so they are never re-issued (and need no such tracking).
//!
//! A `flush()` is a marker entry after everything submitted before it; the
//! reader answers it when it gets there and no re-issue is outstanding.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;

use super::plan::{encode_incr_singles, CBatch, Kind};
use super::ticket::{Outcome, Resolver};
use super::Shared;
use crate::aio::{read_reply_from, Connection};
use crate::conn::ReplyBuf;
use crate::error::Error;
use crate::value::Value;

/// Stop adding batches to one write beyond this many bytes.
const MAX_WRITE: usize = 1 << 20;

/// A merged INCRBY to re-issue op by op.
struct Retry {
    key: Vec<u8>,
    incrs: Vec<i64>,
    slot: Resolver,
}

/// What the reader expects next on the wire.
enum Entry {
    Batch(CBatch, bool),
    Retry(Retry),
    Marker(oneshot::Sender<()>),
}

/// Writer work not yet written, in submission order.
enum Item {
    Batch(CBatch),
    Marker(oneshot::Sender<()>),
}

#[derive(Default)]
struct PipeState {
    fifo: VecDeque<Entry>,
    /// Re-issues the reader asks the writer to send.
    retries: VecDeque<Retry>,
    /// Re-issues requested but not yet answered.
    outstanding: usize,
    /// Flush markers reached while re-issues were outstanding.
    deferred: Vec<oneshot::Sender<()>>,
    /// Keys of merged INCRBYs in flight or being re-issued (with counts).
    risky: HashMap<Vec<u8>, usize>,
    failed: Option<Error>,
    writer_done: bool,
}

#[derive(Default)]
struct Pipe {
    state: Mutex<PipeState>,
    /// Wakes the reader (new entries, writer gone).
    fed: Notify,
}

impl Pipe {
    fn lock(&self) -> MutexGuard<'_, PipeState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl PipeState {
    fn release_risky(&mut self, key: &[u8]) {
        if let Some(n) = self.risky.get_mut(key) {
            *n -= 1;
            if *n == 0 {
                self.risky.remove(key);
            }
        }
    }
}

/// Run the writer here and the reader as its own task until the coalescer
/// is dropped and everything is answered.
pub(super) async fn run(conn: Connection, shared: Arc<Shared>) {
    let Connection { stream, replies, .. } = conn;
    let (rd, wr) = stream.into_split();
    let pipe = Arc::new(Pipe::default());
    let reader = tokio::spawn(read_loop(rd, replies, shared.clone(), pipe.clone()));
    write_loop(wr, &shared, &pipe).await;
    pipe.lock().writer_done = true;
    pipe.fed.notify_one();
    let _ = reader.await;
}

enum Step {
    Write,
    Wait(Option<Instant>),
    Exit,
}

async fn write_loop(mut wr: OwnedWriteHalf, shared: &Shared, pipe: &Pipe) {
    let mut queue: VecDeque<Item> = VecDeque::new();
    let mut out: Vec<u8> = Vec::new();
    loop {
        match plan_step(shared, pipe, &mut queue, &mut out) {
            Step::Write => {
                pipe.fed.notify_one();
                if let Err(e) = wr.write_all(&out).await {
                    fail(shared, &mut pipe.lock(), &Error::Io(e));
                    pipe.fed.notify_one();
                }
                out.clear();
                if out.capacity() > 4 * MAX_WRITE {
                    out = Vec::new();
                }
            }
            Step::Wait(Some(deadline)) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => {}
                    _ = shared.wake.notified() => {}
                }
            }
            Step::Wait(None) => shared.wake.notified().await,
            Step::Exit => return,
        }
    }
}

/// Decide the writer's next step; fills `out` and the FIFO when writing.
fn plan_step(shared: &Shared, pipe: &Pipe, queue: &mut VecDeque<Item>, out: &mut Vec<u8>) -> Step {
    let mut p = pipe.lock();
    let deadline = take_due(shared, queue);
    if let Some(e) = p.failed.as_ref().map(Error::duplicate) {
        fail_items(shared, queue.drain(..), &e);
        return if shared.closed.load(Ordering::Acquire) { Step::Exit } else { Step::Wait(deadline) };
    }
    while let Some(r) = p.retries.pop_front() {
        encode_incr_singles(out, &r.key, &r.incrs);
        p.fifo.push_back(Entry::Retry(r));
    }
    while out.len() < MAX_WRITE {
        let blocked = match queue.front() {
            None => break,
            Some(Item::Batch(b)) => !p.risky.is_empty() && b.any_key(|k| p.risky.contains_key(k)),
            Some(Item::Marker(_)) => false,
        };
        if blocked {
            break; // the reader wakes us when the risky key is settled
        }
        match queue.pop_front() {
            Some(Item::Marker(tx)) => p.fifo.push_back(Entry::Marker(tx)),
            Some(Item::Batch(mut b)) => {
                b.encode(out);
                let risky = b.kind == Kind::IncrBy && b.is_merged();
                if risky {
                    *p.risky.entry(b.key.clone()).or_default() += 1;
                }
                p.fifo.push_back(Entry::Batch(b, risky));
            }
            None => break,
        }
    }
    if !out.is_empty() {
        return Step::Write;
    }
    pipe.fed.notify_one(); // markers may have been queued without bytes
    let idle = queue.is_empty() && p.fifo.is_empty() && p.outstanding == 0;
    if idle && shared.closed.load(Ordering::Acquire) {
        let st = shared.state();
        if st.sealed.is_empty() && st.buffer.is_empty() && st.flush_waiters.is_empty() {
            return Step::Exit;
        }
    }
    Step::Wait(deadline)
}

/// Move sealed buffers, the open buffer when due, and flush markers to the
/// writer's queue; returns when the open buffer will be due.
fn take_due(shared: &Shared, queue: &mut VecDeque<Item>) -> Option<Instant> {
    let mut st = shared.state();
    for buf in st.sealed.drain(..) {
        queue.extend(buf.batches.into_iter().map(Item::Batch));
    }
    let deadline = st.oldest.map(|t| t + shared.cfg.max_age);
    let expired = deadline.is_some_and(|d| d <= Instant::now());
    let closing = shared.closed.load(Ordering::Acquire);
    if (expired || closing || !st.flush_waiters.is_empty()) && !st.buffer.is_empty() {
        let buf = std::mem::take(&mut st.buffer);
        st.oldest = None;
        queue.extend(buf.batches.into_iter().map(Item::Batch));
    }
    let waiters = std::mem::take(&mut st.flush_waiters);
    queue.extend(waiters.into_iter().map(Item::Marker));
    st.oldest.map(|t| t + shared.cfg.max_age)
}

/// Resolve everything in flight or queued with `e` (the connection is gone).
fn fail(shared: &Shared, p: &mut PipeState, e: &Error) {
    if p.failed.is_none() {
        p.failed = Some(e.duplicate());
    }
    let entries: Vec<Entry> = p.fifo.drain(..).collect();
    for entry in entries {
        match entry {
            Entry::Batch(b, _) => fail_batch(shared, b, e),
            Entry::Retry(r) => fail_retry(shared, r, e),
            Entry::Marker(tx) => ack(tx),
        }
    }
    for r in std::mem::take(&mut p.retries) {
        fail_retry(shared, r, e);
    }
    p.deferred.drain(..).for_each(ack);
    p.outstanding = 0;
    p.risky.clear();
}

/// Answer a flush marker.
fn ack(tx: oneshot::Sender<()>) {
    let _ = tx.send(());
}

fn fail_items(shared: &Shared, items: impl Iterator<Item = Item>, e: &Error) {
    for item in items {
        match item {
            Item::Batch(b) => fail_batch(shared, b, e),
            Item::Marker(tx) => ack(tx),
        }
    }
}

fn fail_batch(shared: &Shared, b: CBatch, e: &Error) {
    b.slot.resolve(Outcome::Failed(e.duplicate()));
    shared.space.add_permits(b.nops);
}

fn fail_retry(shared: &Shared, r: Retry, e: &Error) {
    r.slot.resolve(Outcome::Failed(e.duplicate()));
    shared.space.add_permits(r.incrs.len());
}

async fn read_loop(mut rd: OwnedReadHalf, mut rb: ReplyBuf, shared: Arc<Shared>, pipe: Arc<Pipe>) {
    loop {
        let entry = {
            let mut p = pipe.lock();
            match p.fifo.pop_front() {
                Some(e) => Some(e),
                None if p.writer_done => return,
                None => None,
            }
        };
        let Some(entry) = entry else {
            pipe.fed.notified().await;
            continue;
        };
        let n = match &entry {
            Entry::Batch(b, _) => b.replies(),
            Entry::Retry(r) => r.incrs.len(),
            Entry::Marker(_) => 0,
        };
        let mut replies = Vec::with_capacity(n);
        for _ in 0..n {
            match read_reply_from(&mut rb, &mut rd).await {
                Ok(v) => replies.push(v),
                Err(e) => {
                    let mut p = pipe.lock();
                    p.fifo.push_front(entry);
                    fail(&shared, &mut p, &e);
                    drop(p);
                    shared.wake.notify_one();
                    return;
                }
            }
        }
        settle(&shared, &mut pipe.lock(), entry, replies);
        shared.wake.notify_one();
    }
}

/// Hand an entry's replies to its callers (or queue its re-issue).
fn settle(shared: &Shared, p: &mut PipeState, entry: Entry, replies: Vec<Value>) {
    match entry {
        Entry::Marker(tx) if p.outstanding > 0 => p.deferred.push(tx),
        Entry::Marker(tx) => ack(tx),
        Entry::Batch(b, true) if matches!(replies.first(), Some(Value::Error(_))) => {
            p.outstanding += 1;
            p.retries.push_back(Retry { key: b.key, incrs: b.incrs, slot: b.slot });
        }
        Entry::Batch(b, risky) => {
            if risky {
                p.release_risky(&b.key);
            }
            b.slot.resolve(b.outcome(replies));
            shared.space.add_permits(b.nops);
        }
        Entry::Retry(r) => {
            r.slot.resolve(Outcome::Each(replies));
            shared.space.add_permits(r.incrs.len());
            p.release_risky(&r.key);
            p.outstanding -= 1;
            if p.outstanding == 0 {
                p.deferred.drain(..).for_each(ack);
            }
        }
    }
}
