//! Client-side caching (CLIENT TRACKING): which client may hold which key,
//! and the invalidation messages sent when a key changes.
//!
//! Default mode remembers, per key name (across databases, as Redis does),
//! the ids of the tracking clients that read it; the key's first change
//! invalidates it for each of them and forgets it. BCAST mode remembers
//! nothing per key: every changed key that starts with a registered prefix
//! is collected and sent, per prefix, at the end of the event-loop turn.
//! Invalidations go through the Pub/Sub outbox: a RESP3 client gets a
//! `>2 invalidate [keys]` push, a redirect target in RESP2 a message on
//! `__redis__:invalidate`; a flush sends a null key list. The changes reach
//! this module as change-stream consumer 3 (see `changes`), so a command
//! that changes nothing invalidates nothing.
use std::collections::{BTreeMap, HashMap, HashSet};

use super::Server;

/// One tracking client's options.
#[derive(Debug, Default, Clone)]
pub struct TrackingClient {
    /// Client id invalidations go to instead (0: itself).
    pub redirect: u64,
    /// That client's slot when tracking was turned on (its id is checked
    /// again at each send: the slot may have been reused).
    pub redirect_slot: usize,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    /// CLIENT CACHING YES (optin) / NO (optout) for the next command.
    pub caching: bool,
    /// The redirect target has gone (reported once, then flagged).
    pub broken_redirect: bool,
    /// BCAST prefixes, sorted (BCAST without PREFIX registers the empty
    /// prefix, as Redis does).
    pub prefixes: Vec<Vec<u8>>,
}

/// A changed key and the client whose command changed it (None: expiry).
type ChangedKey = (Vec<u8>, Option<usize>);

/// Keys changed under one BCAST prefix this turn, with who changed them.
#[derive(Default)]
struct Prefix {
    clients: Vec<usize>,
    keys: Vec<ChangedKey>,
}

/// All tracking state.
#[derive(Default)]
pub struct Tracking {
    clients: HashMap<usize, TrackingClient>,
    /// Key name → (slot, id) of the clients that may cache it; the id
    /// tells a client from a later one in the same slot.
    table: HashMap<Vec<u8>, HashSet<(usize, u64)>>,
    prefixes: BTreeMap<Vec<u8>, Prefix>,
    /// A command run by the running script read something.
    pub script_read: bool,
    /// The client whose own FLUSHDB/FLUSHALL owes it a null invalidation,
    /// sent once its reply is written (see `tracking_flush`).
    deferred_flush: Option<usize>,
}

impl Tracking {
    /// Whether anyone tracks (checked per command and per change).
    #[inline]
    pub fn active(&self) -> bool {
        !self.clients.is_empty()
    }

    pub fn client_count(&self) -> usize {
        self.clients.len()
    }

    pub fn client(&self, cid: usize) -> Option<&TrackingClient> {
        self.clients.get(&cid)
    }

    pub fn client_mut(&mut self, cid: usize) -> Option<&mut TrackingClient> {
        self.clients.get_mut(&cid)
    }

    /// Keys remembered in the default-mode table (INFO tracking_total_keys).
    pub fn total_keys(&self) -> usize {
        self.table.len()
    }

    pub fn total_items(&self) -> usize {
        self.table.values().map(HashSet::len).sum()
    }

    pub fn total_prefixes(&self) -> usize {
        self.prefixes.len()
    }

    /// Turn tracking on for `cid` with `opts` (BCAST prefixes included).
    pub fn enable(&mut self, cid: usize, mut opts: TrackingClient) {
        if opts.bcast && opts.prefixes.is_empty() {
            opts.prefixes.push(Vec::new());
        }
        opts.prefixes.sort();
        // Only prefixes that come or go are (un)registered: a client adding
        // BCAST prefixes one CLIENT TRACKING ON at a time would otherwise
        // register all it has again each time (quadratic).
        let mut old = match self.clients.get_mut(&cid) {
            Some(c) if c.bcast => std::mem::take(&mut c.prefixes),
            _ => Vec::new(),
        };
        old.sort();
        let new: &[Vec<u8>] = if opts.bcast { &opts.prefixes } else { &[] };
        for p in old.iter().filter(|p| new.binary_search(p).is_err()) {
            self.unregister_prefix(cid, p);
        }
        for p in new.iter().filter(|p| old.binary_search(p).is_err()) {
            self.prefixes.entry(p.clone()).or_default().clients.push(cid);
        }
        self.clients.insert(cid, opts);
    }

    /// Turn tracking off for `cid` (CLIENT TRACKING OFF, RESET, close).
    pub fn disable(&mut self, cid: usize) {
        self.disable_prefixes(cid);
        self.clients.remove(&cid);
    }

    fn disable_prefixes(&mut self, cid: usize) {
        let Some(c) = self.clients.get(&cid) else { return };
        if !c.bcast {
            return;
        }
        for p in c.prefixes.clone() {
            self.unregister_prefix(cid, &p);
        }
    }

    fn unregister_prefix(&mut self, cid: usize, p: &[u8]) {
        if let Some(pre) = self.prefixes.get_mut(p) {
            pre.clients.retain(|&x| x != cid);
            if pre.clients.is_empty() {
                self.prefixes.remove(p);
            }
        }
    }

    /// Remember that `id` read `keys` (default mode).
    pub fn remember(&mut self, slot: usize, id: u64, keys: impl Iterator<Item = Vec<u8>>) {
        for k in keys {
            self.table.entry(k).or_default().insert((slot, id));
        }
    }
}

/// An invalidation push: `keys` None is a flush (null list).
fn invalidation(resp3: bool, keys: Option<&[Vec<u8>]>) -> Vec<u8> {
    let mut out = Vec::new();
    let list = |out: &mut Vec<u8>| match keys {
        None => out.extend_from_slice(if resp3 { b"_\r\n" } else { b"*-1\r\n" }),
        Some(keys) => {
            out.extend_from_slice(format!("*{}\r\n", keys.len()).as_bytes());
            for k in keys {
                out.extend_from_slice(format!("${}\r\n", k.len()).as_bytes());
                out.extend_from_slice(k);
                out.extend_from_slice(b"\r\n");
            }
        }
    };
    if resp3 {
        out.extend_from_slice(b">2\r\n$10\r\ninvalidate\r\n");
    } else {
        out.extend_from_slice(b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n");
    }
    list(&mut out);
    out
}

impl Server {
    /// Send one invalidation for tracking client `cid` (to it or to its
    /// redirect target), as Redis's sendTrackingMessage does.
    fn send_invalidation(&mut self, cid: usize, keys: Option<&[Vec<u8>]>) {
        let Some(t) = self.tracking.client(cid) else { return };
        let redirect = t.redirect;
        let mut target = cid;
        if redirect != 0 {
            let slot = t.redirect_slot;
            match self.clients.get(slot).filter(|c| c.id == redirect) {
                Some(_) => target = slot,
                None => {
                    let resp3 = self.clients.get(cid).is_some_and(|c| c.resp == 3);
                    if let Some(t) = self.tracking.client_mut(cid) {
                        t.broken_redirect = true;
                    }
                    if resp3 {
                        let mut msg = b">2\r\n$21\r\ntracking-redir-broken\r\n".to_vec();
                        msg.extend_from_slice(format!(":{redirect}\r\n").as_bytes());
                        self.pubsub.push(cid, &msg);
                    }
                    return;
                }
            }
        }
        let Some(c) = self.clients.get(target) else { return };
        let resp3 = c.resp == 3;
        // RESP2 gets invalidations only through a subscribed redirect target.
        if !(resp3 || redirect != 0 && c.pubsub) {
            return;
        }
        let msg = invalidation(resp3, keys);
        self.pubsub.push(target, &msg);
    }

    /// CLIENT TRACKING ON for `cid`. Expired keys must now be collected:
    /// an expiry invalidates like a write.
    pub fn tracking_on(&mut self, cid: usize, opts: TrackingClient) {
        self.tracking.enable(cid, opts);
        self.update_expired_tracking();
    }

    /// CLIENT TRACKING OFF, RESET or a closed connection.
    pub fn tracking_off(&mut self, cid: usize) {
        self.tracking.disable(cid);
        self.update_expired_tracking();
    }

    /// A key changed (by client `by`, None for expiry): invalidate it for
    /// every client that may cache it, and queue it for BCAST prefixes.
    pub fn tracking_invalidate(&mut self, key: &[u8], by: Option<usize>) {
        for (prefix, pre) in self.tracking.prefixes.range_mut(..=key.to_vec()).rev() {
            if key.starts_with(prefix) {
                pre.keys.push((key.to_vec(), by));
            }
        }
        let Some(ids) = self.tracking.table.remove(key) else { return };
        for (slot, id) in ids {
            if self.clients.get(slot).is_none_or(|c| c.id != id) {
                continue;
            }
            let Some(t) = self.tracking.client(slot) else { continue };
            if t.bcast || (t.noloop && by == Some(slot)) {
                continue;
            }
            self.send_invalidation(slot, Some(&[key.to_vec()]));
        }
    }

    /// FLUSHDB / FLUSHALL by client `by`: every tracking client drops its
    /// whole cache. `by`'s own message follows its reply, as Redis defers
    /// it (so it never lands inside an EXEC reply).
    pub fn tracking_flush(&mut self, by: usize) {
        // Entries of clients that stopped tracking go too.
        self.tracking.table.clear();
        let all: Vec<usize> = self.tracking.clients.keys().copied().collect();
        for cid in all {
            if cid == by {
                self.tracking.deferred_flush = Some(cid);
            } else {
                self.send_invalidation(cid, None);
            }
        }
    }

    /// After a command's reply: what `tracking_flush` deferred.
    pub fn tracking_after_reply(&mut self) {
        if let Some(cid) = self.tracking.deferred_flush.take() {
            self.send_invalidation(cid, None);
        }
    }

    /// End of a turn: BCAST clients get the keys changed under their
    /// prefixes, one message per prefix; the table is kept under
    /// `tracking-table-max-keys`.
    pub fn tracking_end_of_turn(&mut self) {
        if !self.tracking.active() {
            return;
        }
        let pending: Vec<(Vec<usize>, Vec<ChangedKey>)> = self
            .tracking
            .prefixes
            .values_mut()
            .filter(|p| !p.keys.is_empty())
            .map(|p| (p.clients.clone(), std::mem::take(&mut p.keys)))
            .collect();
        for (clients, keys) in pending {
            for cid in clients {
                let noloop = self.tracking.client(cid).is_some_and(|t| t.noloop);
                let list: Vec<Vec<u8>> =
                    keys.iter().filter(|(_, by)| !(noloop && *by == Some(cid))).map(|(k, _)| k.clone()).collect();
                if !list.is_empty() {
                    self.send_invalidation(cid, Some(&list));
                }
            }
        }
        self.tracking_limit_table();
    }

    /// Invalidate (and forget) keys beyond `tracking-table-max-keys`.
    fn tracking_limit_table(&mut self) {
        let max = self.config.other.get("tracking-table-max-keys").and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
        if max == 0 || self.tracking.table.len() <= max {
            return;
        }
        let excess: Vec<Vec<u8>> = self.tracking.table.keys().take(self.tracking.table.len() - max).cloned().collect();
        for k in excess {
            self.tracking_invalidate(&k, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalidation_messages_are_redis_bytes() {
        assert_eq!(invalidation(true, Some(&[b"k".to_vec()])), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
        assert_eq!(invalidation(true, None), b">2\r\n$10\r\ninvalidate\r\n_\r\n");
        assert_eq!(
            invalidation(false, Some(&[b"a".to_vec(), b"bc".to_vec()])),
            b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*2\r\n$1\r\na\r\n$2\r\nbc\r\n"
        );
        assert_eq!(invalidation(false, None), b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*-1\r\n");
    }

    #[test]
    fn bcast_prefixes_come_and_go_with_their_clients() {
        let mut t = Tracking::default();
        t.enable(1, TrackingClient { bcast: true, prefixes: vec![b"a".to_vec(), b"b".to_vec()], ..Default::default() });
        t.enable(2, TrackingClient { bcast: true, ..Default::default() });
        assert_eq!(t.total_prefixes(), 3);
        t.disable(1);
        assert_eq!(t.total_prefixes(), 1);
        t.disable(2);
        assert!(!t.active() && t.total_prefixes() == 0);
    }
}
