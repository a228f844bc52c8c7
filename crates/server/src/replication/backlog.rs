//! The replication buffer, shared as Redis 7 shares it: the stream's
//! bytes are stored once, in blocks, and the backlog and every replica
//! read the same blocks. The backlog is the oldest block on; a replica is
//! a cursor (the offset of the last byte its connection took). So N
//! replicas cost one copy of the stream, and a slow replica keeps the
//! blocks it has not taken alive: the backlog then holds more than
//! `repl-backlog-size` (a reconnecting replica may continue from any of
//! it), and shrinks back once no replica needs the surplus.
//!
//! Offsets are Redis's: the stream's first byte has offset 1, and
//! `master_repl_offset` is the offset of the last byte fed.
use std::collections::VecDeque;

/// Smallest block: Redis's reply chunk, so small writes share a block.
const MIN_BLOCK: usize = 16 << 10;
/// Bookkeeping counted per block beside its bytes in a replica's output
/// (Redis counts its block header and list node the same way).
pub const BLOCK_OVERHEAD: usize = std::mem::size_of::<Block>() + 16;

struct Block {
    /// Offset of the block's first byte.
    start: i64,
    /// Bytes every earlier block took (so what a reader keeps from here
    /// on is one subtraction).
    mem_before: u64,
    /// Its bytes; the capacity is fixed when the block is made.
    buf: Vec<u8>,
}

impl Block {
    fn room(&self) -> usize {
        self.buf.capacity() - self.buf.len()
    }
}

/// The blocks from the oldest byte anyone (backlog or replica) needs.
pub struct Backlog {
    blocks: VecDeque<Block>,
    /// `repl-backlog-size`: what the backlog keeps when no replica holds
    /// more.
    size: usize,
    /// Offset of the last byte fed (`master_repl_offset`).
    end: i64,
    /// Bytes the blocks take (their capacity).
    mem: usize,
    /// Bytes every block ever made took.
    made: u64,
}

impl Backlog {
    /// An empty backlog of `size` bytes whose next byte will have offset
    /// `end + 1`.
    pub fn new(size: usize, end: i64) -> Self {
        Backlog { blocks: VecDeque::new(), size: size.max(16), end, mem: 0, made: 0 }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Bytes held, which a slow replica may keep above the size.
    pub fn histlen(&self) -> usize {
        (self.end + 1 - self.first_offset()) as usize
    }

    /// Offset of the oldest byte held (`repl_backlog_first_byte_offset`).
    pub fn first_offset(&self) -> i64 {
        self.blocks.front().map_or(self.end + 1, |b| b.start)
    }

    pub fn end(&self) -> i64 {
        self.end
    }

    /// Memory of the blocks (`mem_total_replication_buffers`): their
    /// bytes, and the block list's own room, which doubles as it grows.
    pub fn memory(&self) -> usize {
        self.mem + self.blocks.capacity() * std::mem::size_of::<Block>()
    }

    /// Largest block: a sixteenth of the size, as Redis, so a big write
    /// is trimmed in pieces instead of pinning a huge block for its tail.
    fn block_limit(&self) -> usize {
        (self.size / 16).max(MIN_BLOCK)
    }

    /// Append stream bytes. True when a block was added (the moment to
    /// [`Backlog::trim`] and check the replicas' output limits).
    #[inline]
    pub fn feed(&mut self, mut bytes: &[u8]) -> bool {
        self.end += bytes.len() as i64;
        if let Some(tail) = self.blocks.back_mut() {
            let n = bytes.len().min(tail.room());
            tail.buf.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if bytes.is_empty() {
                return false;
            }
        }
        self.add_blocks(bytes);
        true
    }

    #[inline(never)]
    fn add_blocks(&mut self, mut bytes: &[u8]) {
        let limit = self.block_limit();
        while !bytes.is_empty() {
            let cap = bytes.len().clamp(MIN_BLOCK, limit);
            let n = bytes.len().min(cap);
            let mut buf = Vec::with_capacity(cap);
            buf.extend_from_slice(&bytes[..n]);
            let mem = cap + BLOCK_OVERHEAD;
            let start = self.end + 1 - bytes.len() as i64;
            self.blocks.push_back(Block { start, mem_before: self.made, buf });
            self.mem += cap;
            self.made += mem as u64;
            bytes = &bytes[n..];
        }
    }

    /// Drop the oldest blocks while the backlog holds more than its size
    /// without them and nobody needs them: `needed` is the oldest offset
    /// a replica has yet to take (None: no replica streams). The last
    /// block always stays.
    pub fn trim(&mut self, needed: Option<i64>) {
        while self.blocks.len() > 1 {
            let first = &self.blocks[0];
            let after = first.start + first.buf.len() as i64;
            if needed.is_some_and(|n| n < after) || self.histlen() - first.buf.len() <= self.size {
                break;
            }
            self.mem -= first.buf.capacity();
            self.blocks.pop_front();
        }
    }

    /// CONFIG SET repl-backlog-size: the next trims keep this much.
    pub fn resize(&mut self, size: usize, needed: Option<i64>) {
        self.size = size.max(16);
        self.trim(needed);
    }

    /// Whether a replica may continue from `offset` (the first byte it
    /// lacks): the backlog holds everything from there on.
    pub fn covers(&self, offset: i64) -> bool {
        offset >= self.first_offset() && offset <= self.end + 1
    }

    /// The bytes from `offset` to the end of the block holding it (empty
    /// at the end of the stream or outside what is held).
    #[inline]
    pub fn chunk_at(&self, offset: i64) -> &[u8] {
        if offset > self.end || offset < self.first_offset() {
            return &[];
        }
        let i = self.blocks.partition_point(|b| b.start <= offset) - 1;
        let b = &self.blocks[i];
        &b.buf[(offset - b.start) as usize..]
    }

    /// Memory a reader at `offset` keeps alive, as Redis figures a
    /// replica's output: its block and every later one, whole.
    pub fn held_from(&self, offset: i64) -> usize {
        if offset > self.end || self.blocks.is_empty() {
            return 0;
        }
        let i = self.blocks.partition_point(|b| b.start <= offset).max(1) - 1;
        (self.made - self.blocks[i].mem_before) as usize
    }

    /// The bytes from `offset` (inclusive) to the end, if held.
    #[cfg(test)]
    pub fn copy_from(&self, offset: i64) -> Option<Vec<u8>> {
        if !self.covers(offset) {
            return None;
        }
        let mut out = Vec::new();
        let mut at = offset;
        while at <= self.end {
            let c = self.chunk_at(at);
            out.extend_from_slice(c);
            at += c.len() as i64;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeds_fill_a_block_before_the_next() {
        let mut b = Backlog::new(1 << 20, 0);
        assert!(b.feed(b"0123456789"));
        assert!(!b.feed(b"abc"));
        assert_eq!((b.first_offset(), b.end(), b.histlen()), (1, 13, 13));
        assert_eq!(b.copy_from(1).unwrap(), b"0123456789abc");
        assert_eq!(b.chunk_at(11), b"abc");
        assert_eq!(b.chunk_at(14), b"");
        assert!(b.copy_from(15).is_none());
        assert_eq!(b.memory(), MIN_BLOCK + b.blocks.capacity() * std::mem::size_of::<Block>());
    }

    #[test]
    fn a_big_write_is_split_into_blocks_of_a_sixteenth() {
        let mut b = Backlog::new(1 << 20, 100);
        let big = vec![7u8; 200 << 10];
        b.feed(b"x");
        b.feed(&big);
        assert_eq!(b.end(), 100 + 1 + (200 << 10));
        assert_eq!(b.copy_from(101).unwrap().len(), 1 + (200 << 10));
        // 16 KiB, then 64 KiB blocks (1 MiB / 16).
        assert_eq!(b.chunk_at(101).len(), MIN_BLOCK);
        assert_eq!(b.chunk_at(101 + MIN_BLOCK as i64).len(), 64 << 10);
    }

    #[test]
    fn trim_keeps_the_size_and_what_a_replica_still_needs() {
        let mut b = Backlog::new(16 << 10, 0);
        let chunk = vec![1u8; 8 << 10];
        for _ in 0..20 {
            b.feed(&chunk);
        }
        assert_eq!(b.histlen(), 160 << 10);
        // A replica that has taken nothing holds everything.
        b.trim(Some(1));
        assert_eq!(b.histlen(), 160 << 10);
        // Without it, whole blocks go while more than the size remains.
        b.trim(None);
        assert!(b.histlen() > 16 << 10 && b.histlen() <= 32 << 10, "{}", b.histlen());
        assert_eq!(b.mem, b.histlen());
        let first = b.first_offset();
        assert_eq!(b.copy_from(first).unwrap().len(), b.histlen());
        assert!(!b.covers(first - 1));
    }

    #[test]
    fn held_from_counts_whole_blocks_to_the_end() {
        let mut b = Backlog::new(1 << 20, 0);
        b.feed(&vec![0u8; MIN_BLOCK]);
        b.feed(&[0u8; 10]);
        assert_eq!(b.held_from(5), 2 * (MIN_BLOCK + BLOCK_OVERHEAD));
        assert_eq!(b.held_from(MIN_BLOCK as i64 + 3), MIN_BLOCK + BLOCK_OVERHEAD);
        assert_eq!(b.held_from(b.end() + 1), 0);
    }

    #[test]
    fn resize_trims_to_the_new_size() {
        let mut b = Backlog::new(1 << 20, 0);
        for _ in 0..40 {
            b.feed(&[2u8; 4 << 10]);
        }
        b.resize(16 << 10, None);
        assert!(b.histlen() <= 32 << 10);
        assert_eq!(b.copy_from(b.first_offset()).unwrap(), vec![2u8; b.histlen()]);
    }

    #[test]
    fn an_empty_backlog_covers_only_its_next_byte() {
        let b = Backlog::new(16, 41);
        assert!(b.covers(42));
        assert!(!b.covers(41));
        assert_eq!(b.copy_from(42).unwrap(), b"");
        assert_eq!(b.histlen(), 0);
    }
}
