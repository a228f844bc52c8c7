//! One node of a stream: a run of consecutive entries packed in a single
//! buffer, delta-encoded against the node's first ID (its key in the tree)
//! and against the field names of its first entry (the "master" fields),
//! as Redis's listpack nodes are. The encoding is Volley's own and smaller
//! than a listpack (no back-lengths or per-entry element counts; integers
//! and lengths as varints); reverse walks decode a node forwards once.
//!
//! Layout: master fields (`varint n`, then `n` strings), then entries:
//! a `flags` byte, the ID relative to the previous entry's (the node's
//! master ID for the first), then either the values alone (flag
//! SAMEFIELDS) or `varint n` and `n` field/value pairs. A string is
//! `varint (len << 1)` and its bytes, or, when it is an integer in
//! canonical form, `varint (zigzag(i) << 1 | 1)`.
//!
//! The ID costs nothing when it is the previous one's sequence plus one
//! (flag NEXTSEQ: what a burst of `XADD *` within a millisecond gives),
//! `varint seq-delta` within the same millisecond (SAMEMS), or else the
//! millisecond step (in the flags' high nibble when 1..=15, else a
//! varint after it) and `varint seq`. Relative IDs are why nodes are only
//! walked forwards. Those two bytes an entry saves keep a full node of
//! small entries within an allocator size class smaller than Redis's
//! listpack of the same entries.
//!
//! Each node also tracks the size the same node has as a Redis listpack, so
//! that `stream-node-max-bytes` splits nodes where Redis does (approximate
//! trimming removes whole nodes: where they split is observable).
use super::id::StreamId;
use crate::engine::numeric::{format_i64, parse_i64};

pub const FLAG_DELETED: u8 = 1;
pub const FLAG_SAMEFIELDS: u8 = 2;
/// The flags Redis has (the rest of the byte is Volley's ID encoding).
const REDIS_FLAGS: u8 = FLAG_DELETED | FLAG_SAMEFIELDS;
const ID_NEXTSEQ: u8 = 4;
const ID_SAMEMS: u8 = 8;
/// High nibble: a millisecond step of 1..=15 (0: a varint follows).
const MS_STEP_SHIFT: u8 = 4;

/// A field or value as stored: bytes, or an integer kept as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Val<'a> {
    Bytes(&'a [u8]),
    Int(i64),
}

impl Val<'_> {
    pub fn to_vec(self) -> Vec<u8> {
        match self {
            Val::Bytes(b) => b.to_vec(),
            Val::Int(i) => {
                let mut v = Vec::with_capacity(20);
                format_i64(&mut v, i);
                v
            }
        }
    }

    /// Whether the value spells `b`.
    pub fn equals(self, b: &[u8]) -> bool {
        match self {
            Val::Bytes(x) => x == b,
            Val::Int(i) => parse_i64(b) == Some(i),
        }
    }
}

// ------------------------------------------------------------ varints

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Decode a varint at `*at`, advancing it. Nodes are only ever built by
/// this module, so the bytes are well formed.
#[inline]
fn get_varint(buf: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = buf[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn zigzag(i: i64) -> u64 {
    ((i << 1) ^ (i >> 63)) as u64
}

fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

fn put_val(buf: &mut Vec<u8>, b: &[u8]) {
    match parse_i64(b) {
        Some(i) if zigzag(i) < 1 << 62 => put_varint(buf, zigzag(i) << 1 | 1),
        _ => {
            put_varint(buf, (b.len() as u64) << 1);
            buf.extend_from_slice(b);
        }
    }
}

#[inline]
fn get_val<'a>(buf: &'a [u8], at: &mut usize) -> Val<'a> {
    let h = get_varint(buf, at);
    if h & 1 == 1 {
        Val::Int(unzigzag(h >> 1))
    } else {
        let len = (h >> 1) as usize;
        let s = &buf[*at..*at + len];
        *at += len;
        Val::Bytes(s)
    }
}

fn skip_val(buf: &[u8], at: &mut usize) {
    let h = get_varint(buf, at);
    if h & 1 == 0 {
        *at += (h >> 1) as usize;
    }
}

// ------------------------------------------------------------ listpack sizes

/// Bytes Redis's listpack spends on an integer element (back-length
/// included).
pub fn lp_int_size(i: i64) -> usize {
    match i {
        0..=127 => 2,
        -4096..=4095 => 3,
        -32768..=32767 => 4,
        -8_388_608..=8_388_607 => 5,
        -2_147_483_648..=2_147_483_647 => 6,
        _ => 10,
    }
}

/// Bytes Redis's listpack spends on a string element: strings that are
/// canonical integers are stored as integers.
pub fn lp_str_size(b: &[u8]) -> usize {
    if b.len() <= 20 {
        if let Some(i) = parse_i64(b) {
            return lp_int_size(i);
        }
    }
    let enc = match b.len() {
        0..=63 => 1 + b.len(),
        64..=4095 => 2 + b.len(),
        _ => 5 + b.len(),
    };
    enc + lp_backlen_size(enc)
}

fn lp_backlen_size(n: usize) -> usize {
    match n {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// Header and terminator of an empty listpack.
const LP_OVERHEAD: usize = 7;

// ------------------------------------------------------------ nodes

/// One decoded entry position inside a node.
#[derive(Debug, Clone, Copy)]
pub struct EntryPos {
    pub id: StreamId,
    pub flags: u8,
    /// Offset of the flags byte.
    pub at: usize,
    /// Offset of the entry's fields (after the ID, and after the field
    /// count for entries with their own fields).
    fields_at: usize,
    nfields: usize,
    /// Offset just past the entry.
    pub end: usize,
}

impl EntryPos {
    pub fn deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }
    pub fn nfields(&self) -> usize {
        self.nfields
    }
}

/// A node: its entries' bytes and counters. Its master ID is its key in
/// the stream's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    buf: Vec<u8>,
    /// Live entries.
    count: u32,
    /// Entries marked deleted (kept, as Redis keeps them, until the whole
    /// node goes).
    deleted: u32,
    /// Offset of the first entry (past the master fields).
    first_at: u32,
    /// Listpack bytes of this node in Redis, minus its two counters.
    lp_base: u32,
}

impl Node {
    /// A node whose master fields are the field names of `pairs`
    /// (alternating field, value).
    pub fn new(pairs: &[&[u8]]) -> Node {
        let mut buf = Vec::with_capacity(64);
        let n = pairs.len() / 2;
        put_varint(&mut buf, n as u64);
        let mut lp = LP_OVERHEAD + lp_int_size(n as i64) + lp_int_size(0);
        for f in pairs.iter().step_by(2) {
            put_varint(&mut buf, (f.len() as u64) << 1);
            buf.extend_from_slice(f);
            lp += lp_str_size(f);
        }
        let first_at = buf.len() as u32;
        Node { buf, count: 0, deleted: 0, first_at, lp_base: lp as u32 }
    }

    pub fn count(&self) -> u64 {
        u64::from(self.count)
    }
    pub fn deleted(&self) -> u64 {
        u64::from(self.deleted)
    }
    /// Live and deleted entries together (what `stream-node-max-entries`
    /// counts).
    pub fn total(&self) -> u64 {
        u64::from(self.count) + u64::from(self.deleted)
    }

    /// The size this node has as a Redis listpack.
    pub fn lp_bytes(&self) -> usize {
        self.lp_base as usize + lp_int_size(i64::from(self.count)) + lp_int_size(i64::from(self.deleted))
    }

    /// Heap bytes this node holds.
    pub fn heap_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Give back spare capacity (the node is full: nothing more is added).
    /// A copy, not `shrink_to_fit`: mimalloc keeps a block in place when
    /// the new size is at least half of it, which frees nothing here.
    pub fn shrink(&mut self) {
        if self.buf.capacity() > self.buf.len() {
            self.buf = self.buf.as_slice().to_vec();
        }
    }

    /// The master field names.
    pub fn master_fields(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut at = 0;
        let n = get_varint(&self.buf, &mut at);
        (0..n).map(move |_| match get_val(&self.buf, &mut at) {
            Val::Bytes(b) => b,
            Val::Int(_) => unreachable!("master fields are stored as bytes"),
        })
    }

    fn master_len(&self) -> usize {
        let mut at = 0;
        get_varint(&self.buf, &mut at) as usize
    }

    /// Whether `pairs` has exactly the master field names, in order.
    fn same_fields(&self, pairs: &[&[u8]]) -> bool {
        let n = pairs.len() / 2;
        n == self.master_len() && self.master_fields().zip(pairs.iter().step_by(2)).all(|(m, f)| m == *f)
    }

    /// Append an entry after the one with ID `prev` (the master ID for a
    /// node's first entry). IDs only grow: the caller checked. The node
    /// does not keep `prev` itself: 16 more bytes per node cost a small
    /// stream's tree a larger allocation.
    pub fn push(&mut self, master: StreamId, prev: StreamId, id: StreamId, pairs: &[&[u8]]) {
        let same = self.same_fields(pairs);
        let n = pairs.len() / 2;
        let ms_delta = id.ms - master.ms;
        let seq_delta = id.seq.wrapping_sub(master.seq) as i64;
        let flags = if same { FLAG_SAMEFIELDS } else { 0 };
        self.put_id(flags, prev, id);
        let mut lp = lp_int_size(i64::from(flags)) + lp_int_size(ms_delta as i64) + lp_int_size(seq_delta);
        let mut parts = 3 + n;
        if same {
            for v in pairs.iter().skip(1).step_by(2) {
                put_val(&mut self.buf, v);
                lp += lp_str_size(v);
            }
        } else {
            put_varint(&mut self.buf, n as u64);
            lp += lp_int_size(n as i64);
            parts += n + 1;
            for p in pairs {
                put_val(&mut self.buf, p);
                lp += lp_str_size(p);
            }
        }
        lp += lp_int_size(parts as i64);
        self.lp_base += lp as u32;
        self.count += 1;
    }

    /// The flags byte and the ID of an entry whose previous one is `prev`.
    fn put_id(&mut self, flags: u8, prev: StreamId, id: StreamId) {
        let buf = &mut self.buf;
        if id.ms == prev.ms && prev.seq.checked_add(1) == Some(id.seq) {
            buf.push(flags | ID_NEXTSEQ);
        } else if id.ms == prev.ms {
            buf.push(flags | ID_SAMEMS);
            put_varint(buf, id.seq - prev.seq);
        } else {
            let step = id.ms - prev.ms;
            if step < 16 {
                buf.push(flags | (step as u8) << MS_STEP_SHIFT);
            } else {
                buf.push(flags);
                put_varint(buf, step);
            }
            put_varint(buf, id.seq);
        }
    }

    /// Decode the entry at `at`, whose previous entry's ID is `prev` (the
    /// node's master ID for the first entry).
    #[inline]
    pub fn entry_at(&self, prev: StreamId, at: usize) -> EntryPos {
        let buf = &self.buf;
        let raw = buf[at];
        let flags = raw & REDIS_FLAGS;
        let mut p = at + 1;
        let (ms, seq) = if raw & ID_NEXTSEQ != 0 {
            (prev.ms, prev.seq.wrapping_add(1))
        } else if raw & ID_SAMEMS != 0 {
            (prev.ms, prev.seq.wrapping_add(get_varint(buf, &mut p)))
        } else {
            let step = match raw >> MS_STEP_SHIFT {
                0 => get_varint(buf, &mut p),
                n => u64::from(n),
            };
            (prev.ms.wrapping_add(step), get_varint(buf, &mut p))
        };
        let nfields = if flags & FLAG_SAMEFIELDS != 0 { self.master_len() } else { get_varint(buf, &mut p) as usize };
        let fields_at = p;
        let per = if flags & FLAG_SAMEFIELDS != 0 { 1 } else { 2 };
        for _ in 0..nfields * per {
            skip_val(buf, &mut p);
        }
        EntryPos { id: StreamId::new(ms, seq), flags, at, fields_at, nfields, end: p }
    }

    /// Offset of the first entry (end of buffer when empty).
    pub fn first_at(&self) -> usize {
        self.first_at as usize
    }

    /// Whether `at` is past the last entry.
    pub fn is_end(&self, at: usize) -> bool {
        at >= self.buf.len()
    }

    /// Every entry, deleted ones included, in order.
    pub fn positions(&self, master: StreamId) -> Positions<'_> {
        Positions { node: self, prev: master, at: self.first_at() }
    }

    /// The field/value pairs of an entry.
    pub fn pairs(&self, e: &EntryPos) -> Pairs<'_> {
        let same = e.flags & FLAG_SAMEFIELDS != 0;
        let mut master_at = 0;
        if same {
            get_varint(&self.buf, &mut master_at);
        }
        Pairs { buf: &self.buf, at: e.fields_at, master_at, same, left: e.nfields }
    }

    /// Mark the entry at `e` deleted (it must be live).
    pub fn mark_deleted(&mut self, e: &EntryPos) {
        debug_assert!(!e.deleted());
        self.buf[e.at] |= FLAG_DELETED;
        self.count -= 1;
        self.deleted += 1;
    }

    /// The last entry, deleted or not (Redis's `lpGetEdgeStreamID`).
    pub fn last_entry(&self, master: StreamId) -> Option<EntryPos> {
        self.positions(master).last()
    }

    /// A node with these master field names and no entries yet: a node
    /// rebuilt from a snapshot, whose master fields are given rather than
    /// taken from a first entry.
    pub fn with_master_fields(fields: &[&[u8]]) -> Node {
        let mut buf = Vec::with_capacity(64);
        put_varint(&mut buf, fields.len() as u64);
        let mut lp = LP_OVERHEAD + lp_int_size(fields.len() as i64) + lp_int_size(0);
        for f in fields {
            put_varint(&mut buf, (f.len() as u64) << 1);
            buf.extend_from_slice(f);
            lp += lp_str_size(f);
        }
        let first_at = buf.len() as u32;
        Node { buf, count: 0, deleted: 0, first_at, lp_base: lp as u32 }
    }

    /// Append an entry that is already deleted (a tombstone kept in a
    /// snapshot): it takes its place in the node, as in Redis, but is not
    /// live. IDs only grow: the caller checked.
    pub fn push_deleted(&mut self, master: StreamId, prev: StreamId, id: StreamId, pairs: &[&[u8]]) {
        let at = self.buf.len();
        self.push(master, prev, id, pairs);
        self.buf[at] |= FLAG_DELETED;
        self.count -= 1;
        self.deleted += 1;
    }
}

/// Walks a node's entries in order.
pub struct Positions<'a> {
    node: &'a Node,
    /// The previous entry's ID (the master ID before the first).
    prev: StreamId,
    at: usize,
}

impl Iterator for Positions<'_> {
    type Item = EntryPos;
    #[inline]
    fn next(&mut self) -> Option<EntryPos> {
        if self.node.is_end(self.at) {
            return None;
        }
        let e = self.node.entry_at(self.prev, self.at);
        self.at = e.end;
        self.prev = e.id;
        Some(e)
    }
}

/// The field/value pairs of one entry.
pub struct Pairs<'a> {
    buf: &'a [u8],
    at: usize,
    master_at: usize,
    same: bool,
    left: usize,
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (Val<'a>, Val<'a>);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let field = if self.same { get_val(self.buf, &mut self.master_at) } else { get_val(self.buf, &mut self.at) };
        let value = get_val(self.buf, &mut self.at);
        Some((field, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Pairs<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(node: &Node, e: &EntryPos) -> Vec<(Vec<u8>, Vec<u8>)> {
        node.pairs(e).map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
    }

    #[test]
    fn entries_round_trip_with_and_without_master_fields() {
        let m = StreamId::new(1000, 5);
        let mut n = Node::new(&[b"f1", b"a", b"f2", b"b"]);
        n.push(m, m, m, &[b"f1", b"a", b"f2", b"12345"]);
        n.push(m, m, StreamId::new(1000, 9), &[b"other", b"-7"]);
        n.push(m, StreamId::new(1000, 9), StreamId::new(1003, 0), &[b"f1", b"0012", b"f2", b""]);
        let all: Vec<_> = n.positions(m).collect();
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), [m, StreamId::new(1000, 9), StreamId::new(1003, 0)]);
        assert_eq!(owned(&n, &all[0]), [(b"f1".to_vec(), b"a".to_vec()), (b"f2".to_vec(), b"12345".to_vec())]);
        assert_eq!(owned(&n, &all[1]), [(b"other".to_vec(), b"-7".to_vec())]);
        assert_eq!(owned(&n, &all[2]), [(b"f1".to_vec(), b"0012".to_vec()), (b"f2".to_vec(), b"".to_vec())]);
        assert_eq!(all[0].flags, FLAG_SAMEFIELDS);
        assert_eq!(all[1].flags, 0);
        n.mark_deleted(&all[1]);
        assert_eq!((n.count(), n.deleted(), n.total()), (2, 1, 3));
        assert!(n.positions(m).nth(1).unwrap().deleted());
        assert_eq!(n.last_entry(m).unwrap().id, StreamId::new(1003, 0));
    }

    #[test]
    fn ids_relative_to_the_previous_entry_cover_every_step() {
        let ids = [
            StreamId::new(1000, 5),
            StreamId::new(1000, 6),            // next sequence: flags byte only
            StreamId::new(1000, 300),          // same ms, varint step
            StreamId::new(1001, 0),            // ms step in the flags
            StreamId::new(1016, 7),            // ms step 15
            StreamId::new(1032, u64::MAX),     // ms step 16: a varint
            StreamId::new(1033, 0),            // after the largest sequence
            StreamId::new(u64::MAX, u64::MAX), // a huge step
        ];
        let m = ids[0];
        let mut n = Node::new(&[b"f", b"v"]);
        let mut prev = m;
        for id in ids {
            n.push(m, prev, id, &[b"f", b"v"]);
            prev = id;
        }
        let walked: Vec<StreamId> = n.positions(m).map(|e| e.id).collect();
        assert_eq!(walked, ids);
        // A deleted entry still anchors the next one's ID.
        let third = n.positions(m).nth(2).unwrap();
        n.mark_deleted(&third);
        let walked: Vec<StreamId> = n.positions(m).map(|e| e.id).collect();
        assert_eq!(walked, ids);
        assert!(n.positions(m).all(|e| e.flags & !REDIS_FLAGS == 0), "only Redis's flags show");
        // Consecutive sequences in one millisecond cost their values only.
        let mut burst = Node::new(&[b"f", b"v"]);
        let first = StreamId::new(7, 0);
        let base = burst.buf.len();
        for seq in 0..100 {
            let prev = StreamId::new(7, seq.max(1) - 1);
            burst.push(first, prev, StreamId::new(7, seq), &[b"f", b"12345678x"]);
        }
        // (The first entry is its node's master ID: one byte says so.)
        assert_eq!(burst.buf.len() - base, 1 + 100 * (1 + 1 + 9));
    }

    #[test]
    fn listpack_size_follows_redis_encoding() {
        // One entry `f v` under master `f`: header 6 + end 1, master
        // count/deleted/nfields/"f"/0 = 2+2+2+3+2, entry
        // flags/ms/seq/"v"/lp-count = 2+2+2+3+2.
        let mut n = Node::new(&[b"f", b"v"]);
        n.push(StreamId::new(1, 0), StreamId::new(1, 0), StreamId::new(1, 0), &[b"f", b"v"]);
        assert_eq!(n.lp_bytes(), 7 + 11 + 11);
        assert_eq!(lp_str_size(&[b'x'; 63]), 65);
        assert_eq!(lp_str_size(&[b'x'; 64]), 67);
        assert_eq!(lp_str_size(b"-4096"), 3);
        assert_eq!(lp_str_size(b"4096"), 4);
        assert_eq!(lp_int_size(i64::MIN), 10);
    }

    #[test]
    fn varints_and_zigzag_round_trip() {
        for v in [0i64, 1, -1, 63, -64, 1 << 40, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        let mut b = Vec::new();
        put_varint(&mut b, u64::MAX);
        let mut at = 0;
        assert_eq!(get_varint(&b, &mut at), u64::MAX);
        assert_eq!(at, b.len());
        // Integers that do not fit the tagged varint stay strings.
        let mut b = Vec::new();
        put_val(&mut b, b"-9223372036854775808");
        let mut at = 0;
        assert_eq!(get_val(&b, &mut at), Val::Bytes(b"-9223372036854775808"));
    }
}
