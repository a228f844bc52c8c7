//! Outcomes of coalesced ops: one [`Slot`] per batch (not per op) holds the
//! batch's outcome, and a [`Ticket`] is only `(Arc<Slot>, index)`, 16 bytes.
//! A merged MSET's 5,000 callers share one `Outcome::All(+OK)`; per-op values
//! are stored only where they differ (DEL results, RPUSH lengths, INCRBY
//! values, op-by-op re-issues). So holding a million tickets costs 16 MB, not
//! a channel allocation each.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use crate::error::{Error, Result, ServerError};
use crate::value::{FromValue, Value};

/// What a batch's callers get.
pub(crate) enum Outcome {
    /// Every op of the batch gets this reply (MSET, merged HSET/SADD, single ops).
    All(Value),
    /// One reply per op, by ticket index (error replies included).
    Each(Vec<Value>),
    /// The batch never got a reply (connection failed or coalescer gone).
    Failed(Error),
}

impl Outcome {
    fn get<T: FromValue>(&self, idx: u32) -> Result<T> {
        let v = match self {
            Outcome::All(v) => v,
            Outcome::Each(vs) => vs.get(idx as usize).ok_or(Error::Closed)?,
            Outcome::Failed(e) => return Err(e.duplicate()),
        };
        match v {
            Value::Error(e) => Err(Error::Server(ServerError::parse(e))),
            v => T::from_value(v),
        }
    }
}

/// A batch's outcome, once known, and the tasks waiting for it.
#[derive(Default)]
pub(crate) struct Slot {
    outcome: OnceLock<Outcome>,
    wakers: Mutex<Vec<Waker>>,
}

/// The producer side of a [`Slot`]: resolves it once; dropping it unresolved
/// resolves it with [`Error::Closed`], so no ticket waits forever.
pub(crate) struct Resolver(Arc<Slot>);

impl Resolver {
    pub fn new() -> Resolver {
        Resolver(Arc::new(Slot::default()))
    }

    /// A ticket for the op at `idx` of this batch.
    pub fn ticket<T>(&self, idx: u32) -> Ticket<T> {
        Ticket { slot: self.0.clone(), idx, _t: PhantomData }
    }

    /// Publish the outcome and wake every waiting ticket (first call wins).
    pub fn resolve(&self, o: Outcome) {
        if self.0.outcome.set(o).is_err() {
            return;
        }
        // The outcome is set before the lock: a poller that registered its
        // waker under the lock before this point is woken; one after sees it.
        let wakers = std::mem::take(&mut *self.0.wakers.lock().unwrap_or_else(|e| e.into_inner()));
        wakers.into_iter().for_each(Waker::wake);
    }
}

impl Drop for Resolver {
    fn drop(&mut self) {
        if self.0.outcome.get().is_none() {
            self.resolve(Outcome::Failed(Error::Closed));
        }
    }
}

/// The outcome of one submitted op; await it (or drop it if you don't care).
/// Small (a shared pointer and an index), so holding many is cheap.
pub struct Ticket<T> {
    slot: Arc<Slot>,
    idx: u32,
    _t: PhantomData<fn() -> T>,
}

impl<T> Ticket<T> {
    /// True once the outcome is known (awaiting will not wait).
    pub fn is_ready(&self) -> bool {
        self.slot.outcome.get().is_some()
    }
}

impl<T: FromValue> Future for Ticket<T> {
    type Output = Result<T>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let slot = &self.slot;
        if let Some(o) = slot.outcome.get() {
            return Poll::Ready(o.get(self.idx));
        }
        let mut wakers = slot.wakers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(o) = slot.outcome.get() {
            return Poll::Ready(o.get(self.idx));
        }
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticket_is_small_and_outcomes_index_per_op() {
        assert_eq!(std::mem::size_of::<Ticket<()>>(), 16);
        let r = Resolver::new();
        let (a, b) = (r.ticket::<i64>(0), r.ticket::<i64>(1));
        assert!(!a.is_ready());
        r.resolve(Outcome::Each(vec![Value::Integer(7), Value::Error(b"WRONGTYPE no".to_vec())]));
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert_eq!(rt.block_on(a).unwrap(), 7);
        assert_eq!(rt.block_on(b).unwrap_err().code(), Some("WRONGTYPE"));
    }

    #[test]
    fn dropped_resolver_fails_waiting_tickets() {
        let r = Resolver::new();
        let t = r.ticket::<()>(0);
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let waiter = rt.spawn(t);
        rt.block_on(tokio::task::yield_now());
        drop(r);
        assert!(matches!(rt.block_on(waiter).unwrap(), Err(Error::Closed)));
    }
}
