//! Pub/Sub state: who listens to which channel, pattern and shard channel,
//! and the pushes (messages, MONITOR lines) waiting to be appended to
//! other clients' output.
//!
//! A command cannot reach another connection's buffers (they live in
//! `net`), so deliveries go to a per-client outbox; the event loop moves
//! each outbox into its connection before that connection runs its next
//! batch and at the end of the turn, so a subscriber sees messages in
//! publish order, before the replies of commands it sends later, and gets
//! every message of a turn in one write.
//!
//! Patterns are indexed by their literal prefix (the bytes before the first
//! `*`, `?`, `[` or `\`): a publish only tries the patterns whose prefix
//! starts its channel, so ten thousand `user:<n>:*` patterns cost a few
//! hash lookups per message instead of ten thousand matches.
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::engine::glob::glob_match;

/// A client's subscriptions.
#[derive(Debug, Default)]
pub struct ClientSubs {
    pub channels: HashSet<Vec<u8>>,
    /// In subscription order (PUNSUBSCRIBE without arguments follows it).
    pub patterns: Vec<Vec<u8>>,
    pub shard: HashSet<Vec<u8>>,
}

impl ClientSubs {
    /// Channels plus patterns: the count (UN)SUBSCRIBE replies carry.
    pub fn count(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }
    pub fn total(&self) -> usize {
        self.count() + self.shard.len()
    }
}

/// Subscribed patterns, indexed by literal prefix.
#[derive(Default)]
struct Patterns {
    /// Pattern → subscribers, in subscription order.
    subscribers: HashMap<Vec<u8>, Vec<usize>>,
    /// Literal prefix → patterns having it.
    by_prefix: HashMap<Vec<u8>, Vec<Vec<u8>>>,
    /// Distinct prefix lengths in use, with how many prefixes have each.
    lengths: BTreeMap<usize, usize>,
}

fn literal_prefix(pattern: &[u8]) -> &[u8] {
    let end = pattern.iter().position(|b| matches!(b, b'*' | b'?' | b'[' | b'\\')).unwrap_or(pattern.len());
    &pattern[..end]
}

impl Patterns {
    fn add(&mut self, pattern: &[u8], cid: usize) {
        let subs = self.subscribers.entry(pattern.to_vec()).or_default();
        if subs.is_empty() {
            let prefix = literal_prefix(pattern);
            let list = self.by_prefix.entry(prefix.to_vec()).or_default();
            if list.is_empty() {
                *self.lengths.entry(prefix.len()).or_default() += 1;
            }
            list.push(pattern.to_vec());
        }
        subs.push(cid);
    }

    fn remove(&mut self, pattern: &[u8], cid: usize) {
        let Some(subs) = self.subscribers.get_mut(pattern) else { return };
        subs.retain(|&c| c != cid);
        if !subs.is_empty() {
            return;
        }
        self.subscribers.remove(pattern);
        let prefix = literal_prefix(pattern);
        let Some(list) = self.by_prefix.get_mut(prefix) else { return };
        list.retain(|p| p != pattern);
        if list.is_empty() {
            self.by_prefix.remove(prefix);
            if let Some(n) = self.lengths.get_mut(&prefix.len()) {
                *n -= 1;
                if *n == 0 {
                    self.lengths.remove(&prefix.len());
                }
            }
        }
    }

    /// Every (pattern, subscriber) whose pattern matches `channel`.
    fn matching(&self, channel: &[u8], out: &mut Vec<(Vec<u8>, usize)>) {
        for &len in self.lengths.keys() {
            if len > channel.len() {
                break;
            }
            let Some(patterns) = self.by_prefix.get(&channel[..len]) else { continue };
            for p in patterns {
                if glob_match(p, channel, false) {
                    out.extend(self.subscribers[p].iter().map(|&c| (p.clone(), c)));
                }
            }
        }
    }
}

/// All Pub/Sub state of the server.
#[derive(Default)]
pub struct PubSub {
    channels: HashMap<Vec<u8>, Vec<usize>>,
    shard_channels: HashMap<Vec<u8>, Vec<usize>>,
    patterns: Patterns,
    clients: HashMap<usize, ClientSubs>,
    /// Per client slot: bytes to append to its output (see module header).
    outbox: Vec<Vec<u8>>,
    /// Slots with something in `outbox`.
    dirty: Vec<usize>,
    /// Clients in MONITOR mode, in the order they asked.
    pub monitors: Vec<usize>,
}

/// Which family of channels a (un)subscription is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Shard,
}

impl PubSub {
    /// Whether any client is subscribed to anything (checked per command
    /// before looking at the caller's own state).
    #[inline]
    pub fn has_subscribers(&self) -> bool {
        !self.clients.is_empty()
    }

    pub fn subs(&self, cid: usize) -> Option<&ClientSubs> {
        self.clients.get(&cid)
    }

    fn map(&mut self, kind: Kind) -> &mut HashMap<Vec<u8>, Vec<usize>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Shard => &mut self.shard_channels,
        }
    }

    /// Subscribe `cid` to a channel; false if it already was.
    pub fn subscribe(&mut self, cid: usize, channel: &[u8], kind: Kind) -> bool {
        let subs = self.clients.entry(cid).or_default();
        let set = if kind == Kind::Channel { &mut subs.channels } else { &mut subs.shard };
        if !set.insert(channel.to_vec()) {
            return false;
        }
        self.map(kind).entry(channel.to_vec()).or_default().push(cid);
        true
    }

    /// Unsubscribe `cid` from a channel; false if it was not subscribed.
    pub fn unsubscribe(&mut self, cid: usize, channel: &[u8], kind: Kind) -> bool {
        let Some(subs) = self.clients.get_mut(&cid) else { return false };
        let set = if kind == Kind::Channel { &mut subs.channels } else { &mut subs.shard };
        if !set.remove(channel) {
            return false;
        }
        self.forget_if_idle(cid);
        let map = self.map(kind);
        if let Some(list) = map.get_mut(channel) {
            list.retain(|&c| c != cid);
            if list.is_empty() {
                map.remove(channel);
            }
        }
        true
    }

    pub fn psubscribe(&mut self, cid: usize, pattern: &[u8]) -> bool {
        let subs = self.clients.entry(cid).or_default();
        if subs.patterns.iter().any(|p| p == pattern) {
            return false;
        }
        subs.patterns.push(pattern.to_vec());
        self.patterns.add(pattern, cid);
        true
    }

    pub fn punsubscribe(&mut self, cid: usize, pattern: &[u8]) -> bool {
        let Some(subs) = self.clients.get_mut(&cid) else { return false };
        let Some(at) = subs.patterns.iter().position(|p| p == pattern) else { return false };
        subs.patterns.remove(at);
        self.forget_if_idle(cid);
        self.patterns.remove(pattern, cid);
        true
    }

    /// Drop the entry of a client left with no subscription, so
    /// [`PubSub::has_subscribers`] stays exact.
    fn forget_if_idle(&mut self, cid: usize) {
        if self.clients.get(&cid).is_some_and(|s| s.total() == 0) {
            self.clients.remove(&cid);
        }
    }

    /// The channels (or shard channels) `cid` listens to.
    pub fn channels_of(&self, cid: usize, kind: Kind) -> Vec<Vec<u8>> {
        let Some(subs) = self.clients.get(&cid) else { return Vec::new() };
        let set = if kind == Kind::Channel { &subs.channels } else { &subs.shard };
        set.iter().cloned().collect()
    }

    pub fn patterns_of(&self, cid: usize) -> Vec<Vec<u8>> {
        self.clients.get(&cid).map(|s| s.patterns.clone()).unwrap_or_default()
    }

    /// Forget every subscription of a client (disconnect, RESET) and its
    /// undelivered pushes.
    pub fn drop_client(&mut self, cid: usize) {
        for ch in self.channels_of(cid, Kind::Channel) {
            self.unsubscribe(cid, &ch, Kind::Channel);
        }
        for ch in self.channels_of(cid, Kind::Shard) {
            self.unsubscribe(cid, &ch, Kind::Shard);
        }
        for p in self.patterns_of(cid) {
            self.punsubscribe(cid, &p);
        }
        self.clients.remove(&cid);
        self.monitors.retain(|&m| m != cid);
        if let Some(buf) = self.outbox.get_mut(cid) {
            *buf = Vec::new();
        }
    }

    /// Channels with subscribers (PUBSUB CHANNELS, INFO), optionally
    /// those matching a pattern.
    pub fn channel_names(&self, kind: Kind, pattern: Option<&[u8]>) -> Vec<Vec<u8>> {
        let map = if kind == Kind::Channel { &self.channels } else { &self.shard_channels };
        map.keys().filter(|c| pattern.is_none_or(|p| glob_match(p, c, false))).cloned().collect()
    }

    pub fn subscriber_count(&self, channel: &[u8], kind: Kind) -> usize {
        let map = if kind == Kind::Channel { &self.channels } else { &self.shard_channels };
        map.get(channel).map_or(0, Vec::len)
    }

    pub fn channel_count(&self, kind: Kind) -> usize {
        if kind == Kind::Channel {
            self.channels.len()
        } else {
            self.shard_channels.len()
        }
    }

    pub fn pattern_count(&self) -> usize {
        self.patterns.subscribers.len()
    }

    /// Subscribers of `channel` (in subscription order), then every
    /// (pattern, subscriber) pair matching it; shard channels have no
    /// patterns.
    pub fn receivers(&self, channel: &[u8], kind: Kind) -> (Vec<usize>, Vec<(Vec<u8>, usize)>) {
        let map = if kind == Kind::Channel { &self.channels } else { &self.shard_channels };
        let direct = map.get(channel).cloned().unwrap_or_default();
        let mut by_pattern = Vec::new();
        if kind == Kind::Channel && !self.patterns.lengths.is_empty() {
            self.patterns.matching(channel, &mut by_pattern);
        }
        (direct, by_pattern)
    }

    /// Queue bytes for client `cid`'s output.
    pub fn push(&mut self, cid: usize, bytes: &[u8]) {
        if self.outbox.len() <= cid {
            self.outbox.resize_with(cid + 1, Vec::new);
        }
        let buf = &mut self.outbox[cid];
        if buf.is_empty() {
            self.dirty.push(cid);
        }
        buf.extend_from_slice(bytes);
    }

    /// Whether pushes wait for anyone (checked once per batch and turn).
    #[inline]
    pub fn has_pushes(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Append the pushes waiting for `cid` to `out`; false if there were
    /// none. An empty `out` is swapped with the outbox buffer instead of
    /// copied into, so a subscriber's two buffers take turns and neither is
    /// reallocated or freed turn after turn (buffers freed every turn had
    /// the allocator hand pages back to the kernel and fault them in again,
    /// which cost more than the delivery itself).
    pub fn move_pushes(&mut self, cid: usize, out: &mut Vec<u8>) -> bool {
        let Some(buf) = self.outbox.get_mut(cid).filter(|b| !b.is_empty()) else { return false };
        if out.is_empty() {
            std::mem::swap(out, buf);
        } else {
            out.extend_from_slice(buf);
            buf.clear();
        }
        if buf.capacity() > OUTBOX_KEEP {
            *buf = Vec::new();
        }
        self.dirty.retain(|&c| c != cid);
        true
    }

    /// Every client with pushes waiting, in the order they got their first.
    pub fn take_dirty(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.dirty)
    }
}

/// Largest outbox buffer kept for reuse once delivered.
const OUTBOX_KEEP: usize = 64 << 10;

/// Append a bulk string.
fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(b.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

/// A message push: `*n` in RESP2, `>n` in RESP3, then the bulk parts.
pub fn encode_push(resp3: bool, parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + parts.iter().map(|p| p.len() + 16).sum::<usize>());
    out.push(if resp3 { b'>' } else { b'*' });
    out.extend_from_slice(parts.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    for p in parts {
        bulk(&mut out, p);
    }
    out
}

impl super::Server {
    /// PUBLISH / SPUBLISH: queue the message for every receiver (channel
    /// subscribers first, then pattern subscribers) and return how many
    /// there were. Each encoding is built once, not once per subscriber.
    pub fn publish(&mut self, channel: &[u8], message: &[u8], kind: Kind) -> usize {
        let (direct, by_pattern) = self.pubsub.receivers(channel, kind);
        if direct.is_empty() && by_pattern.is_empty() {
            return 0;
        }
        let word: &[u8] = if kind == Kind::Shard { b"smessage" } else { b"message" };
        let frames = [encode_push(false, &[word, channel, message]), encode_push(true, &[word, channel, message])];
        for &cid in &direct {
            let resp3 = self.clients.get(cid).is_some_and(|c| c.resp == 3);
            self.pubsub.push(cid, &frames[usize::from(resp3)]);
        }
        for (pattern, cid) in &by_pattern {
            let resp3 = self.clients.get(*cid).is_some_and(|c| c.resp == 3);
            let frame = encode_push(resp3, &[b"pmessage", pattern, channel, message]);
            self.pubsub.push(*cid, &frame);
        }
        direct.len() + by_pattern.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_found_through_their_prefix() {
        let mut ps = PubSub::default();
        assert!(ps.psubscribe(1, b"news.*"));
        assert!(!ps.psubscribe(1, b"news.*"));
        ps.psubscribe(2, b"news.*");
        ps.psubscribe(2, b"*");
        ps.psubscribe(3, b"user:4[0-9]:*");
        let (_, hits) = ps.receivers(b"news.today", Kind::Channel);
        let mut who: Vec<_> = hits.iter().map(|(p, c)| (String::from_utf8_lossy(p).into_owned(), *c)).collect();
        who.sort();
        assert_eq!(who, [("*".to_string(), 2), ("news.*".to_string(), 1), ("news.*".to_string(), 2)]);
        let (_, hits) = ps.receivers(b"user:42:x", Kind::Channel);
        assert_eq!(hits.iter().map(|h| h.1).collect::<Vec<_>>().len(), 2);
        ps.drop_client(2);
        let (_, hits) = ps.receivers(b"news.today", Kind::Channel);
        assert_eq!(hits, vec![(b"news.*".to_vec(), 1)]);
        assert_eq!(ps.pattern_count(), 2);
        ps.punsubscribe(1, b"news.*");
        ps.punsubscribe(3, b"user:4[0-9]:*");
        assert_eq!(ps.pattern_count(), 0);
        assert!(ps.patterns.lengths.is_empty() && ps.patterns.by_prefix.is_empty());
    }

    #[test]
    fn channels_keep_subscription_order_and_clean_up() {
        let mut ps = PubSub::default();
        ps.subscribe(5, b"c", Kind::Channel);
        ps.subscribe(3, b"c", Kind::Channel);
        ps.subscribe(3, b"s", Kind::Shard);
        assert_eq!(ps.receivers(b"c", Kind::Channel).0, vec![5, 3]);
        assert_eq!(ps.receivers(b"c", Kind::Shard).0, Vec::<usize>::new());
        assert!(ps.unsubscribe(5, b"c", Kind::Channel));
        assert!(!ps.unsubscribe(5, b"c", Kind::Channel));
        ps.drop_client(3);
        assert_eq!((ps.channel_count(Kind::Channel), ps.channel_count(Kind::Shard)), (0, 0));
    }

    #[test]
    fn outbox_hands_each_client_its_bytes_once() {
        let mut ps = PubSub::default();
        ps.push(4, b"a");
        ps.push(4, b"b");
        ps.push(1, b"c");
        assert!(ps.has_pushes());
        let mut out = Vec::new();
        assert!(ps.move_pushes(4, &mut out));
        assert_eq!(out, b"ab");
        assert!(!ps.move_pushes(4, &mut out));
        assert_eq!(ps.take_dirty(), vec![1]);
        assert!(ps.move_pushes(1, &mut out));
        assert_eq!(out, b"abc");
        assert!(!ps.has_pushes());
    }
}
