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

use super::outbox::Outbox;
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

    /// Call `each(pattern, subscriber)` for every subscriber of a pattern
    /// matching `channel`.
    fn for_each_match<'p>(&'p self, channel: &[u8], mut each: impl FnMut(&'p [u8], usize)) {
        for &len in self.lengths.keys() {
            if len > channel.len() {
                break;
            }
            let Some(patterns) = self.by_prefix.get(&channel[..len]) else { continue };
            for p in patterns {
                if glob_match(p, channel, false) {
                    for &c in &self.subscribers[p] {
                        each(p, c);
                    }
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
    /// Pushes waiting for delivery (see module header and outbox.rs).
    outbox: Outbox,
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
        self.outbox.drop_client(cid);
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

    /// Queue bytes for client `cid`'s output.
    pub fn push(&mut self, cid: usize, bytes: &[u8]) {
        self.outbox.push(cid, bytes);
    }

    /// Queue the same bytes for several clients, stored once (the
    /// replication stream going to every replica).
    pub fn push_each(&mut self, cids: impl Iterator<Item = usize>, bytes: &[u8]) {
        let r = self.outbox.encode(|log| log.extend_from_slice(bytes));
        for cid in cids {
            self.outbox.add(cid, r.clone());
        }
    }

    /// Queue `message` on `channel` for every receiver: the channel's
    /// subscribers in subscription order, then the subscribers of each
    /// matching pattern. Each frame is encoded once (once per framing in
    /// use) and shared by its receivers. `resp3(cid)` says which framing a
    /// client reads. Returns how many receivers there were.
    pub fn publish(&mut self, channel: &[u8], message: &[u8], kind: Kind, resp3: impl Fn(usize) -> bool) -> usize {
        let PubSub { channels, shard_channels, patterns, outbox, .. } = self;
        let map = if kind == Kind::Channel { channels } else { shard_channels };
        let mut receivers = 0;
        if let Some(subs) = map.get(channel) {
            let word: &[u8] = if kind == Kind::Shard { b"smessage" } else { b"message" };
            let mut frames = Frames::default();
            for &cid in subs {
                let r = frames.get(outbox, resp3(cid), &[word, channel, message]);
                outbox.add(cid, r);
            }
            receivers += subs.len();
        }
        if kind == Kind::Channel && !patterns.lengths.is_empty() {
            let mut last: Option<(&[u8], Frames)> = None;
            patterns.for_each_match(channel, |pattern, cid| {
                if last.as_ref().is_none_or(|(p, _)| *p != pattern) {
                    last = Some((pattern, Frames::default()));
                }
                let (pattern, frames) = last.as_mut().expect("set above");
                let r = frames.get(outbox, resp3(cid), &[b"pmessage", pattern, channel, message]);
                outbox.add(cid, r);
                receivers += 1;
            });
        }
        receivers
    }

    /// Whether pushes wait for anyone (checked once per batch and turn).
    #[inline]
    pub fn has_pushes(&self) -> bool {
        self.outbox.has_pushes()
    }

    /// Append the pushes waiting for `cid` to `out`; false if there were none.
    pub fn move_pushes(&mut self, cid: usize, out: &mut Vec<u8>) -> bool {
        self.outbox.move_to(cid, out)
    }

    /// Bytes waiting for `cid` (one branch when nobody has any).
    #[inline]
    pub fn pending_len(&self, cid: usize) -> usize {
        self.outbox.pending_len(cid)
    }

    /// The first `len` bytes waiting for `cid`, taken out.
    pub fn take_front(&mut self, cid: usize, len: usize) -> Vec<u8> {
        self.outbox.take_front(cid, len)
    }

    /// Drop what waits for `cid`.
    pub fn discard_pushes(&mut self, cid: usize) {
        self.outbox.drop_client(cid);
    }

    /// Every client with pushes waiting, in the order they got their first.
    pub fn take_dirty(&mut self) -> Vec<usize> {
        self.outbox.take_dirty()
    }
}

/// One message's RESP2 and RESP3 frames in the outbox log, each encoded the
/// first time a receiver needs it.
#[derive(Default)]
struct Frames {
    resp2: Option<std::ops::Range<usize>>,
    resp3: Option<std::ops::Range<usize>>,
}

impl Frames {
    #[inline]
    fn get(&mut self, outbox: &mut Outbox, resp3: bool, parts: &[&[u8]]) -> std::ops::Range<usize> {
        let slot = if resp3 { &mut self.resp3 } else { &mut self.resp2 };
        match slot {
            Some(r) => r.clone(),
            None => slot.insert(outbox.encode(|log| push_frame(log, resp3, parts))).clone(),
        }
    }
}

/// Append a push: `*n` in RESP2, `>n` in RESP3, then the bulk parts.
fn push_frame(out: &mut Vec<u8>, resp3: bool, parts: &[&[u8]]) {
    resp::decimal::push_int_line(out, Some(if resp3 { b'>' } else { b'*' }), parts.len() as i64, true);
    for p in parts {
        resp::decimal::push_int_line(out, Some(b'$'), p.len() as i64, true);
        out.extend_from_slice(p);
        out.extend_from_slice(b"\r\n");
    }
}

/// A push frame (see [`push_frame`]) in a buffer of its own.
pub fn encode_push(resp3: bool, parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + parts.iter().map(|p| p.len() + 16).sum::<usize>());
    push_frame(&mut out, resp3, parts);
    out
}

impl super::Server {
    /// PUBLISH / SPUBLISH (and keyspace notifications): queue the message
    /// for every receiver and return how many there were.
    pub fn publish(&mut self, channel: &[u8], message: &[u8], kind: Kind) -> usize {
        let clients = &self.clients;
        self.pubsub.publish(channel, message, kind, |cid| clients.get(cid).is_some_and(|c| c.resp == 3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (pattern, subscriber) pairs a publish to `channel` reaches.
    fn hits(ps: &PubSub, channel: &[u8]) -> Vec<(Vec<u8>, usize)> {
        let mut out = Vec::new();
        ps.patterns.for_each_match(channel, |p, c| out.push((p.to_vec(), c)));
        out
    }

    /// What each client's outbox holds after a publish, by client.
    fn delivered(ps: &mut PubSub, channel: &[u8], kind: Kind) -> (usize, Vec<(usize, Vec<u8>)>) {
        let n = ps.publish(channel, b"m", kind, |cid| cid == 3);
        let mut out = Vec::new();
        for cid in ps.take_dirty() {
            let mut buf = Vec::new();
            ps.move_pushes(cid, &mut buf);
            out.push((cid, buf));
        }
        (n, out)
    }

    #[test]
    fn patterns_are_found_through_their_prefix() {
        let mut ps = PubSub::default();
        assert!(ps.psubscribe(1, b"news.*"));
        assert!(!ps.psubscribe(1, b"news.*"));
        ps.psubscribe(2, b"news.*");
        ps.psubscribe(2, b"*");
        ps.psubscribe(3, b"user:4[0-9]:*");
        let mut who: Vec<_> =
            hits(&ps, b"news.today").iter().map(|(p, c)| (String::from_utf8_lossy(p).into_owned(), *c)).collect();
        who.sort();
        assert_eq!(who, [("*".to_string(), 2), ("news.*".to_string(), 1), ("news.*".to_string(), 2)]);
        assert_eq!(hits(&ps, b"user:42:x").len(), 2);
        ps.drop_client(2);
        assert_eq!(hits(&ps, b"news.today"), vec![(b"news.*".to_vec(), 1)]);
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
        ps.psubscribe(5, b"c*");
        // Channel subscribers in subscription order (RESP3 for client 3),
        // then pattern subscribers; shard channels have no patterns.
        let (n, got) = delivered(&mut ps, b"c", Kind::Channel);
        assert_eq!(n, 3);
        let msg = |first: &[u8]| [first, &b"3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n"[..]].concat();
        let pmsg = b"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$1\r\nc\r\n$1\r\nm\r\n";
        assert_eq!(got, vec![(5, [msg(b"*"), pmsg.to_vec()].concat()), (3, msg(b">"))]);
        assert_eq!(delivered(&mut ps, b"c", Kind::Shard), (0, vec![]));
        assert_eq!(delivered(&mut ps, b"s", Kind::Shard).1[0].1[..15], b">3\r\n$8\r\nsmessag"[..]);
        ps.punsubscribe(5, b"c*");
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
