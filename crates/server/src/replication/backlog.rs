//! The replication backlog: the last `repl-backlog-size` bytes of the
//! replication stream, kept so a replica that lost its link (or a sibling
//! of a promoted replica) can continue from its offset instead of
//! transferring the whole dataset again (PSYNC's `+CONTINUE`).
//!
//! Offsets are Redis's: the stream's first byte has offset 1, and
//! `master_repl_offset` is the offset of the last byte fed.

/// A ring of the most recent stream bytes.
pub struct Backlog {
    ring: Vec<u8>,
    /// Next write position in `ring`.
    head: usize,
    /// Bytes held (at most `ring.len()`).
    histlen: usize,
    /// Offset of the last byte fed (`master_repl_offset`).
    end: i64,
}

impl Backlog {
    /// An empty backlog of `size` bytes whose next byte will have offset
    /// `end + 1`.
    pub fn new(size: usize, end: i64) -> Self {
        Backlog { ring: vec![0; size.max(16)], head: 0, histlen: 0, end }
    }

    pub fn size(&self) -> usize {
        self.ring.len()
    }

    pub fn histlen(&self) -> usize {
        self.histlen
    }

    /// Offset of the oldest byte held (`repl_backlog_first_byte_offset`).
    pub fn first_offset(&self) -> i64 {
        self.end - self.histlen as i64 + 1
    }

    #[cfg(test)]
    pub fn end(&self) -> i64 {
        self.end
    }

    /// Append stream bytes, dropping the oldest past the size.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.end += bytes.len() as i64;
        let size = self.ring.len();
        if bytes.len() > size {
            bytes = &bytes[bytes.len() - size..];
        }
        let first = bytes.len().min(size - self.head);
        self.ring[self.head..self.head + first].copy_from_slice(&bytes[..first]);
        self.ring[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        self.head = (self.head + bytes.len()) % size;
        self.histlen = (self.histlen + bytes.len()).min(size);
    }

    /// Resize keeping the most recent bytes that still fit (CONFIG SET
    /// repl-backlog-size).
    pub fn resize(&mut self, size: usize) {
        let size = size.max(16);
        if size == self.ring.len() {
            return;
        }
        let keep = self.histlen.min(size);
        let tail = self.copy_from(self.end - keep as i64 + 1).unwrap_or_default();
        self.ring = vec![0; size];
        self.head = 0;
        self.histlen = 0;
        self.end -= tail.len() as i64;
        self.feed(&tail);
    }

    /// Whether a replica may continue from `offset` (the first byte it
    /// lacks): the backlog holds everything from there on.
    pub fn covers(&self, offset: i64) -> bool {
        self.histlen > 0 && offset >= self.first_offset() && offset <= self.end + 1
            || self.histlen == 0 && offset == self.end + 1
    }

    /// The bytes from `offset` (inclusive) to the end, if held.
    pub fn copy_from(&self, offset: i64) -> Option<Vec<u8>> {
        if !self.covers(offset) {
            return None;
        }
        let len = (self.end - offset + 1) as usize;
        let size = self.ring.len();
        let start = (self.head + size - len) % size;
        let mut out = Vec::with_capacity(len);
        let first = len.min(size - start);
        out.extend_from_slice(&self.ring[start..start + first]);
        out.extend_from_slice(&self.ring[..len - first]);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_keeps_the_newest_bytes() {
        let mut b = Backlog::new(16, 0);
        b.feed(b"0123456789");
        assert_eq!(b.first_offset(), 1);
        assert_eq!(b.copy_from(1).unwrap(), b"0123456789");
        b.feed(b"abcdefghij");
        assert_eq!(b.end(), 20);
        assert_eq!(b.histlen(), 16);
        assert_eq!(b.first_offset(), 5);
        assert_eq!(b.copy_from(5).unwrap(), b"456789abcdefghij");
        assert_eq!(b.copy_from(18).unwrap(), b"hij");
        assert_eq!(b.copy_from(21).unwrap(), b"");
        assert!(b.copy_from(4).is_none());
        assert!(b.copy_from(22).is_none());
    }

    #[test]
    fn a_feed_larger_than_the_ring_keeps_its_tail() {
        let mut b = Backlog::new(16, 100);
        b.feed(&[7u8; 40]);
        b.feed(b"xy");
        assert_eq!(b.end(), 142);
        assert_eq!(b.copy_from(141).unwrap(), b"xy");
        assert_eq!(b.copy_from(127).unwrap().len(), 16);
    }

    #[test]
    fn resize_keeps_the_newest() {
        let mut b = Backlog::new(16, 0);
        b.feed(b"0123456789abcdef");
        b.resize(20);
        assert_eq!(b.copy_from(1).unwrap(), b"0123456789abcdef");
        b.resize(16);
        b.feed(b"XY");
        assert_eq!(b.copy_from(3).unwrap(), b"23456789abcdefXY");
        assert_eq!(b.end(), 18);
    }

    #[test]
    fn an_empty_backlog_covers_only_its_next_byte() {
        let b = Backlog::new(16, 41);
        assert!(b.covers(42));
        assert!(!b.covers(41));
        assert_eq!(b.copy_from(42).unwrap(), b"");
    }
}
