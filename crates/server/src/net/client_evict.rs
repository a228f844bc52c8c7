//! Client eviction as the event loop runs it: refreshing a connection's
//! memory figure when its buffers changed, and disconnecting the largest
//! evictable clients while all clients together hold more than
//! `maxmemory-clients` (the accounting and the choice are
//! `server::client_evict`'s). Redis evicts before each command and before
//! sleeping; so does the loop: before each client's batch (a client whose
//! command takes the sum over the limit stops its batch for it), and at the
//! end of every turn, which also covers a lowered limit.
use super::{Close, EventLoop};
use crate::server::client_evict;

impl EventLoop {
    /// Refresh the figure of connection `slot` after its buffers changed
    /// (only with client eviction on; the cron refreshes everyone).
    pub(super) fn note_memory(&mut self, slot: usize) {
        // A replica's pending stream is left out of `maxmemory`: under a
        // limit, its figure must follow each delivery, not the cron.
        let replica_under_limit = self.srv.config.maxmemory != 0
            && self.srv.clients.get(slot).is_some_and(|c| c.role == crate::server::ClientRole::Replica);
        if !(client_evict::enabled(&self.srv.config) || replica_under_limit) {
            return;
        }
        if let Some(conn) = self.conns.get(slot) {
            client_evict::update(&mut self.srv, slot, conn.buffers());
        }
    }

    /// Disconnect clients, largest first, until the sum of client memory
    /// is under `maxmemory-clients`. They are closed at once, so a command
    /// run after this (CLIENT LIST) no longer sees them, as in Redis.
    pub(super) fn evict_clients(&mut self, now: i64) {
        if !client_evict::enabled(&self.srv.config) {
            return;
        }
        let conns = &self.conns;
        let victims = client_evict::victims(&mut self.srv, |slot| conns.get(slot).is_some());
        if victims.is_empty() {
            return;
        }
        for slot in victims {
            crate::log_at!(Notice, "Evicting client: {}", client_evict::describe(&self.srv, slot, now));
            self.srv.stats.evicted_clients += 1;
            self.to_close.push((slot, Close::Gone("evicted (maxmemory-clients)".into())));
        }
        self.close_pending();
    }
}
