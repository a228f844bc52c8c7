//! Consumer groups: the last ID delivered to the group, its read counter
//! (for lag), the pending entries list (PEL: delivered, not yet
//! acknowledged, each owned by one consumer) and the consumers with their
//! own view of the PEL. Consumer names are shared between a consumer and
//! the PEL entries it owns (reference counted, not copied per delivery).
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::id::StreamId;

/// A pending (delivered, unacknowledged) entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nack {
    /// Unix ms of the last delivery.
    pub delivery_time: i64,
    pub delivery_count: u64,
    /// The consumer that has it.
    pub consumer: Arc<[u8]>,
}

/// One consumer of a group.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Consumer {
    /// Unix ms the consumer was last seen (read or claimed).
    pub seen_time: i64,
    /// IDs it owns in the group's PEL.
    pub pel: BTreeSet<StreamId>,
}

/// A consumer group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Entries above this ID are new to the group.
    pub last_id: StreamId,
    /// Entries read by the group since the stream began; -1 when unknown.
    pub entries_read: i64,
    pub pel: BTreeMap<StreamId, Nack>,
    pub consumers: BTreeMap<Arc<[u8]>, Consumer>,
}

/// `entries_read` when it cannot be known.
pub const ENTRIES_READ_UNKNOWN: i64 = -1;

impl Group {
    pub fn new(last_id: StreamId, entries_read: i64) -> Group {
        Group { last_id, entries_read, pel: BTreeMap::new(), consumers: BTreeMap::new() }
    }

    /// The consumer's shared name, if it exists; `seen` (unix ms) refreshes
    /// its seen time when given.
    pub fn consumer(&mut self, name: &[u8], seen: Option<i64>) -> Option<Arc<[u8]>> {
        let k = self.consumers.get_key_value(name)?.0.clone();
        if let (Some(now), Some(c)) = (seen, self.consumers.get_mut(name)) {
            c.seen_time = now;
        }
        Some(k)
    }

    /// Create the consumer if missing; returns its name and whether it
    /// was created. An existing consumer's seen time is refreshed.
    pub fn consumer_or_create(&mut self, name: &[u8], now: i64) -> (Arc<[u8]>, bool) {
        if let Some(k) = self.consumer(name, Some(now)) {
            return (k, false);
        }
        let k: Arc<[u8]> = Arc::from(name);
        self.consumers.insert(k.clone(), Consumer { seen_time: now, pel: BTreeSet::new() });
        (k, true)
    }

    /// Record that `id` was delivered to `consumer` now: a new PEL entry,
    /// or one taken over from whoever had it (count reset to 1, as Redis
    /// does for entries re-read with `>` after XGROUP SETID).
    pub fn deliver(&mut self, id: StreamId, consumer: &Arc<[u8]>, now: i64) {
        let nack = Nack { delivery_time: now, delivery_count: 1, consumer: consumer.clone() };
        if let Some(old) = self.pel.insert(id, nack) {
            if let Some(c) = self.consumers.get_mut(&old.consumer) {
                c.pel.remove(&id);
            }
        }
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.pel.insert(id);
        }
    }

    /// Give the PEL entry `id` to `consumer` (XCLAIM): its delivery time
    /// and count are the caller's to set.
    pub fn reassign(&mut self, id: StreamId, consumer: &Arc<[u8]>) -> Option<&mut Nack> {
        let nack = self.pel.get_mut(&id)?;
        if !Arc::ptr_eq(&nack.consumer, consumer) {
            if let Some(c) = self.consumers.get_mut(&nack.consumer) {
                c.pel.remove(&id);
            }
            nack.consumer = consumer.clone();
            if let Some(c) = self.consumers.get_mut(consumer) {
                c.pel.insert(id);
            }
        }
        self.pel.get_mut(&id)
    }

    /// Claim `id` for `consumer` (XCLAIM, XAUTOCLAIM): the PEL entry moves
    /// to it (created first when `force` and missing, as XCLAIM FORCE does,
    /// with Redis's initial count of 1), gets `delivery_time`, and its
    /// count becomes `retry` if given, else grows by one unless `justid`.
    /// Returns the entry, or None when `id` is not pending and not forced.
    pub fn claim(
        &mut self,
        id: StreamId,
        consumer: &Arc<[u8]>,
        delivery_time: i64,
        retry: Option<u64>,
        justid: bool,
    ) -> Option<&Nack> {
        if let std::collections::btree_map::Entry::Vacant(slot) = self.pel.entry(id) {
            slot.insert(Nack { delivery_time, delivery_count: 1, consumer: consumer.clone() });
            if let Some(c) = self.consumers.get_mut(consumer) {
                c.pel.insert(id);
            }
        }
        let nack = self.reassign(id, consumer)?;
        nack.delivery_time = delivery_time;
        match retry {
            Some(n) => nack.delivery_count = n,
            None if !justid => nack.delivery_count += 1,
            None => {}
        }
        Some(nack)
    }

    /// XACK one ID: true if it was pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(nack) = self.pel.remove(&id) else { return false };
        if let Some(c) = self.consumers.get_mut(&nack.consumer) {
            c.pel.remove(&id);
        }
        true
    }

    /// Delete a consumer and its pending entries; returns how many it had.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let c = self.consumers.remove(name)?;
        for id in &c.pel {
            self.pel.remove(id);
        }
        Some(c.pel.len())
    }

    /// Heap bytes (MEMORY USAGE): PEL entries and consumers.
    pub fn heap_bytes(&self) -> usize {
        const PEL_SLOT: usize = std::mem::size_of::<(StreamId, Nack)>() * 3 / 2;
        const ID_SLOT: usize = std::mem::size_of::<StreamId>() * 3 / 2;
        let consumers: usize = self
            .consumers
            .iter()
            .map(|(k, c)| k.len() + 16 + std::mem::size_of::<Consumer>() + c.pel.len() * ID_SLOT)
            .sum();
        std::mem::size_of::<Group>() + self.pel.len() * PEL_SLOT + consumers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivery_ack_and_takeover_keep_both_pels_in_step() {
        let mut g = Group::new(StreamId::MIN, 0);
        let (alice, created) = g.consumer_or_create(b"alice", 10);
        assert!(created);
        let (bob, _) = g.consumer_or_create(b"bob", 11);
        let id = StreamId::new(5, 0);
        g.deliver(id, &alice, 20);
        assert!(g.consumers[&b"alice"[..]].pel.contains(&id));
        g.deliver(id, &bob, 30);
        assert!(!g.consumers[&b"alice"[..]].pel.contains(&id));
        assert_eq!(g.pel[&id].consumer.as_ref(), b"bob");
        g.reassign(id, &alice).unwrap().delivery_count += 1;
        assert!(g.consumers[&b"alice"[..]].pel.contains(&id));
        assert!(g.consumers[&b"bob"[..]].pel.is_empty());
        assert!(g.ack(id));
        assert!(!g.ack(id));
        assert!(g.consumers[&b"alice"[..]].pel.is_empty());
        g.deliver(StreamId::new(6, 0), &bob, 40);
        assert_eq!(g.delete_consumer(b"bob"), Some(1));
        assert!(g.pel.is_empty());
        assert_eq!(g.consumer(b"alice", Some(99)).as_deref(), Some(&b"alice"[..]));
        assert_eq!(g.consumers[&b"alice"[..]].seen_time, 99);
    }
}
