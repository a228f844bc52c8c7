//! Pushes waiting to be appended to other clients' output: Pub/Sub
//! messages, MONITOR lines, tracking invalidations.
//!
//! Each push is encoded once into the turn's log; a client's outbox is a
//! list of ranges of that log, and consecutive pushes for one client extend
//! its last range. A message published to fifty subscribers is one copy in
//! the log and fifty range updates, and a subscriber's share of a pipelined
//! burst is a single range, copied into its output with one `memcpy` when
//! the event loop delivers (before the client's next batch, or at the end
//! of the turn). The log is emptied once every outbox has been delivered.
use std::ops::Range;

/// Largest log capacity kept for the next turn. Small, as a client's
/// output buffer keeps (see `net::conn`): the room a burst of pushes took
/// is given back once delivered, so it is not still counted against
/// `maxmemory` when the next command checks it (otherwise evicting keys
/// tracking clients cache grows the log, which evicts more keys).
const LOG_KEEP: usize = 16 << 10;

#[derive(Default)]
pub struct Outbox {
    log: Vec<u8>,
    /// Per client slot: its ranges of `log`, in push order.
    ranges: Vec<Vec<Range<usize>>>,
    /// Slots with ranges waiting, in the order they got their first.
    dirty: Vec<usize>,
    /// Slots with ranges waiting, whether or not still in `dirty`.
    waiting: usize,
}

impl Outbox {
    /// Encode one push into the log (`encode` appends to the buffer it is
    /// given) and return its range, to hand to any number of clients.
    pub fn encode(&mut self, encode: impl FnOnce(&mut Vec<u8>)) -> Range<usize> {
        let start = self.log.len();
        encode(&mut self.log);
        start..self.log.len()
    }

    /// Queue the encoded push at `r` for client `cid`. The common case (a
    /// burst to the same receivers) only moves the end of its last range.
    #[inline]
    pub fn add(&mut self, cid: usize, r: Range<usize>) {
        if let Some(last) = self.ranges.get_mut(cid).and_then(|l| l.last_mut()) {
            if last.end == r.start {
                last.end = r.end;
                return;
            }
        }
        self.add_range(cid, r);
    }

    #[inline(never)]
    fn add_range(&mut self, cid: usize, r: Range<usize>) {
        if self.ranges.len() <= cid {
            self.ranges.resize_with(cid + 1, Vec::new);
        }
        let list = &mut self.ranges[cid];
        if list.is_empty() {
            self.dirty.push(cid);
            self.waiting += 1;
        }
        list.push(r);
    }

    /// Queue `bytes` for client `cid` alone.
    pub fn push(&mut self, cid: usize, bytes: &[u8]) {
        let r = self.encode(|log| log.extend_from_slice(bytes));
        self.add(cid, r);
    }

    /// Whether pushes wait for anyone (checked once per batch and turn).
    #[inline]
    pub fn has_pushes(&self) -> bool {
        self.waiting > 0
    }

    /// Bytes waiting for `cid` (one branch when nobody has any: checked
    /// after every command).
    #[inline]
    pub fn pending_len(&self, cid: usize) -> usize {
        if self.waiting == 0 {
            return 0;
        }
        self.ranges.get(cid).map_or(0, |l| l.iter().map(|r| r.len()).sum())
    }

    /// Append the pushes waiting for `cid` to `out`; false if there were none.
    pub fn move_to(&mut self, cid: usize, out: &mut Vec<u8>) -> bool {
        let Some(list) = self.ranges.get_mut(cid).filter(|l| !l.is_empty()) else { return false };
        for r in list.drain(..) {
            out.extend_from_slice(&self.log[r]);
        }
        self.dirty.retain(|&c| c != cid);
        self.delivered_one();
        true
    }

    /// The first `len` bytes waiting for `cid`, taken out.
    pub fn take_front(&mut self, cid: usize, len: usize) -> Vec<u8> {
        let mut front = Vec::with_capacity(len);
        let Some(list) = self.ranges.get_mut(cid).filter(|l| !l.is_empty()) else { return front };
        let mut used = 0;
        while front.len() < len && used < list.len() {
            let r = list[used].clone();
            let take = r.len().min(len - front.len());
            front.extend_from_slice(&self.log[r.start..r.start + take]);
            if take == r.len() {
                used += 1;
            } else {
                list[used].start += take;
            }
        }
        list.drain(..used);
        if list.is_empty() {
            self.dirty.retain(|&c| c != cid);
            self.delivered_one();
        }
        front
    }

    /// Every client with pushes waiting, in the order they got their first.
    pub fn take_dirty(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.dirty)
    }

    /// Drop what waits for a client that is gone or reset.
    pub fn drop_client(&mut self, cid: usize) {
        let Some(list) = self.ranges.get_mut(cid) else { return };
        let had = !list.is_empty();
        *list = Vec::new();
        if had {
            self.dirty.retain(|&c| c != cid);
            self.delivered_one();
        }
    }

    fn delivered_one(&mut self) {
        self.waiting -= 1;
        if self.waiting == 0 {
            self.log.clear();
            if self.log.capacity() > LOG_KEEP {
                self.log = Vec::new();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_encoding_many_receivers_and_ranges_coalesce() {
        let mut o = Outbox::default();
        let a = o.encode(|l| l.extend_from_slice(b"A"));
        o.add(4, a.clone());
        o.add(1, a);
        let b = o.encode(|l| l.extend_from_slice(b"B"));
        o.add(4, b.clone());
        o.add(1, b);
        // Client 4's two pushes are one range; client 1 got "A" then "B" too.
        assert_eq!(o.ranges[4], vec![0..2]);
        o.push(4, b"c");
        assert_eq!(o.pending_len(4), 3);
        assert_eq!(o.take_front(4, 1), b"A");
        let mut out = b">".to_vec();
        assert!(o.move_to(4, &mut out));
        assert_eq!(out, b">Bc");
        assert!(!o.move_to(4, &mut out));
        assert_eq!(o.take_dirty(), vec![1]);
        assert!(o.has_pushes());
        let mut out = Vec::new();
        assert!(o.move_to(1, &mut out));
        assert_eq!(out, b"AB");
        // All delivered: the log starts over.
        assert!(!o.has_pushes() && o.log.is_empty());
    }

    #[test]
    fn matches_one_buffer_per_client_under_random_traffic() {
        // A naive model: each client's bytes appended to its own Vec.
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (mut o, mut model) = (Outbox::default(), vec![Vec::<u8>::new(); 6]);
        for step in 0..5_000u32 {
            let cid = next(6) as usize;
            match next(10) {
                0..=5 => {
                    // One encoding shared by a few receivers.
                    let bytes = step.to_le_bytes();
                    let r = o.encode(|l| l.extend_from_slice(&bytes));
                    for c in [cid, (cid + 1) % 6] {
                        o.add(c, r.clone());
                        model[c].extend_from_slice(&bytes);
                    }
                }
                6 => {
                    let len = o.pending_len(cid);
                    assert_eq!(len, model[cid].len());
                    let k = next(len as u64 + 1) as usize;
                    assert_eq!(o.take_front(cid, k), model[cid].drain(..k).collect::<Vec<_>>());
                }
                7 => {
                    o.drop_client(cid);
                    model[cid].clear();
                }
                _ => {
                    let mut out = Vec::new();
                    assert_eq!(o.move_to(cid, &mut out), !model[cid].is_empty());
                    assert_eq!(out, std::mem::take(&mut model[cid]));
                }
            }
            assert_eq!(o.has_pushes(), model.iter().any(|m| !m.is_empty()));
        }
    }

    #[test]
    fn a_dropped_client_releases_the_log() {
        let mut o = Outbox::default();
        o.push(2, b"x");
        o.drop_client(2);
        assert!(!o.has_pushes() && o.log.is_empty() && o.take_dirty().is_empty());
    }
}
