//! Serving other clients while a Lua script runs past `busy-reply-threshold`.
//!
//! The script runs inside `EventLoop::execute`, which holds `&mut Server`
//! for the whole call into Lua, so the loop itself cannot turn. Instead the
//! script's instruction hook calls [`BusyPoller::serve`] (via the server's
//! `busy_hook`) every ~10 ms: one zero-timeout poll, accept new clients, read
//! and execute what other clients sent, write their replies. Commands go
//! through the ordinary `Conn::process` → `dispatch::execute` path, where
//! the busy guard answers -BUSY to all but allow-busy commands (SCRIPT KILL,
//! SHUTDOWN NOSAVE, MULTI...), so nothing is queued, lost or reordered.
//! Connections whose input was read before the script began are served
//! too: they raise no new event. Connections that closed or failed are
//! dropped right away, as Redis frees them while a script is busy: a
//! replica gone shows in the INFO the script reads (`connected_slaves`,
//! `min-replicas-to-write`).
//!
//! The poller reaches the loop's parts (poll, listeners, connections and
//! the work lists) through raw pointers taken when `run` starts; the server
//! itself comes from the hook. Both are only used while the loop is parked
//! inside a script, and the running client's connection is moved out of the
//! slab meanwhile (see `EventLoop::execute`), so nothing is aliased.
use std::ptr::addr_of_mut;
use std::time::Duration;

use mio::{Events, Poll};

use super::{accept_from, close_conn, Close, Conn, EventLoop, LISTENER_BASE};
use crate::dispatch::Registry;
use crate::server::{unix_ms, Server, Slab};

/// The parts of the event loop the busy poller drives.
pub(super) struct BusyPoller {
    poll: *mut Poll,
    listeners: *const Vec<super::Listener>,
    conns: *mut Slab<Box<Conn>>,
    again: *mut Vec<usize>,
    to_flush: *mut Vec<usize>,
    to_close: *mut Vec<(usize, Close)>,
    held: *mut Vec<(usize, u64)>,
    scratch: *mut Vec<u8>,
    reg: &'static Registry,
    events: Events,
}

impl BusyPoller {
    /// # Safety
    /// `ev` must outlive the poller and stay in place; the poller must only
    /// be used while `ev` is parked in a script (the server's busy hook).
    pub(super) unsafe fn new(ev: &mut EventLoop) -> Self {
        BusyPoller {
            poll: addr_of_mut!(ev.poll),
            listeners: addr_of_mut!(ev.listeners),
            conns: addr_of_mut!(ev.conns),
            again: addr_of_mut!(ev.again),
            to_flush: addr_of_mut!(ev.to_flush),
            to_close: addr_of_mut!(ev.to_close),
            held: addr_of_mut!(ev.held),
            scratch: addr_of_mut!(ev.scratch),
            reg: ev.reg,
            events: Events::with_capacity(256),
        }
    }
}

impl crate::server::BusyHook for BusyPoller {
    fn serve(&mut self, srv: &mut Server) {
        // SAFETY: see `new`; the loop is parked in the script, so these
        // fields have no other users right now.
        let (poll, listeners, conns, again) =
            unsafe { (&mut *self.poll, &*self.listeners, &mut *self.conns, &mut *self.again) };
        if poll.poll(&mut self.events, Some(Duration::ZERO)).is_err() {
            return;
        }
        let now = unix_ms();
        let mut ready = std::mem::take(again);
        for ev in self.events.iter() {
            let t = ev.token().0;
            if t >= LISTENER_BASE {
                if let Some(l) = listeners.get(t - LISTENER_BASE) {
                    accept_from(l, poll, conns, srv, now, again);
                }
            } else if !ready.contains(&t) {
                ready.push(t);
            }
        }
        // Commands read earlier in the turn the script started in have no
        // new readiness edge to report them: serve them too, so their
        // clients get -BUSY now rather than replies after the script.
        for (slot, conn) in conns.iter() {
            if conn.has_input() && !ready.contains(&slot) {
                ready.push(slot);
            }
        }
        for slot in ready {
            self.serve_one(srv, slot, now);
        }
        self.close_gone(srv);
    }
}

impl BusyPoller {
    /// Read, execute and answer one connection. The running client (moved
    /// out of the slab) and anything left unfinished go back on the loop's
    /// `again` list so no readiness edge is lost.
    fn serve_one(&mut self, srv: &mut Server, slot: usize, now: i64) {
        // SAFETY: see `new`.
        let (conns, again, to_flush, to_close, scratch) = unsafe {
            (&mut *self.conns, &mut *self.again, &mut *self.to_flush, &mut *self.to_close, &mut *self.scratch)
        };
        let Some(conn) = conns.get_mut(slot) else {
            again.push(slot);
            return;
        };
        match conn.fill(srv, scratch) {
            Ok(n) => srv.stats.net_input_bytes += n as u64,
            Err(e) => return to_close.push((slot, Close::Gone(e.to_string()))),
        }
        if let Err(close) = conn.process(srv, self.reg, slot, now) {
            return to_close.push((slot, close));
        }
        match conn.flush(srv) {
            Ok(true) => {}
            Ok(false) if !conn.flush_queued => {
                conn.flush_queued = true;
                to_flush.push(slot);
            }
            Ok(false) => {}
            Err(e) => return to_close.push((slot, Close::Gone(e.to_string()))),
        }
        if conn.input_finished() && conn.pending_out() == 0 {
            return to_close.push((slot, Close::Gone("client closed connection".into())));
        }
        if conn.read_more || conn.eof {
            again.push(slot);
        }
    }

    /// Drop the connections waiting to close; the running client's (out of
    /// the slab) stays on the list for the loop.
    fn close_gone(&mut self, srv: &mut Server) {
        // SAFETY: see `new`.
        let (poll, conns, to_close, held) =
            unsafe { (&*self.poll, &mut *self.conns, &mut *self.to_close, &mut *self.held) };
        for (slot, why) in std::mem::take(to_close) {
            if conns.get(slot).is_some() {
                close_conn(srv, conns, held, poll, slot, why);
            } else {
                to_close.push((slot, why));
            }
        }
    }
}
