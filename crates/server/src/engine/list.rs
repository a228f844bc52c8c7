//! Lists, stored like Redis 7.0's quicklist: a deque of compact nodes, each
//! one contiguous buffer of self-delimiting entries. Node size follows
//! `list-max-listpack-size` (negative: a byte limit of 4..64 KiB, positive:
//! entries per node, capped at 8 KiB). `OBJECT ENCODING` is always
//! "quicklist", as in Redis 7.0.
//!
//! Entry format (first byte decides; no back-length, so entries cost one
//! byte less than listpack's, and integers are packed tighter):
//! * `0xxxxxxx`: integer 0..=127
//! * `10llllll`: string of 0..=63 bytes follows
//! * `110xxxxx` + 1 byte / `1110xxxx` + 2 / `11110xxx` + 3: signed integer
//!   of 13 / 20 / 27 bits (high bits in the header, rest little-endian)
//! * `0xFC` + 8 bytes: i64; `0xFD` + u32 length: longer string
//!
//! Strings are stored as integers only when they are canonical decimal
//! text, so replies give back exactly the bytes pushed. Popping from the
//! head only advances a start offset (the dead space is reclaimed when the
//! node would have to grow), so both ends are O(1) amortized; popping from
//! the tail rescans one node (bounded by the node size) to find the new
//! last entry.
use std::collections::VecDeque;

use super::db::{Db, Entry};
use super::numeric;
use super::value::Value;
use super::EngineError;

/// Byte cap of a node when `list-max-listpack-size` counts entries.
const SIZE_SAFETY_LIMIT: usize = 8192;

/// One element as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl Elem<'_> {
    pub fn to_vec(self) -> Vec<u8> {
        match self {
            Elem::Int(i) => {
                let mut v = Vec::with_capacity(20);
                numeric::format_i64(&mut v, i);
                v
            }
            Elem::Bytes(b) => b.to_vec(),
        }
    }

    /// Whether this element equals the value `n` was made from.
    pub fn matches(self, n: &Needle) -> bool {
        match (self, n) {
            (Elem::Int(a), Needle::Int(b)) => a == *b,
            (Elem::Bytes(a), Needle::Bytes(b)) => a == *b,
            _ => false,
        }
    }
}

/// A value classified once for storing or comparing: canonical integers
/// are kept as integers, everything else as bytes.
#[derive(Debug, Clone, Copy)]
pub enum Needle<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl<'a> Needle<'a> {
    pub fn new(b: &'a [u8]) -> Needle<'a> {
        if b.len() <= 20 {
            if let Some(i) = numeric::parse_i64(b) {
                return Needle::Int(i);
            }
        }
        Needle::Bytes(b)
    }

    /// Writes the entry encoding to the front of `out` (at least
    /// [`ENC_EXTRA`] bytes longer than the value); returns its length.
    fn encode_to(&self, out: &mut [u8]) -> usize {
        match *self {
            Needle::Int(v) => encode_int(out, v),
            Needle::Bytes(b) if b.len() <= 63 => {
                out[0] = 0x80 | b.len() as u8;
                out[1..1 + b.len()].copy_from_slice(b);
                1 + b.len()
            }
            Needle::Bytes(b) => {
                out[0] = 0xFD;
                out[1..5].copy_from_slice(&(b.len() as u32).to_le_bytes());
                out[5..5 + b.len()].copy_from_slice(b);
                5 + b.len()
            }
        }
    }
}

/// Most an entry's encoding adds to its value's length (an integer: a tag
/// and 8 bytes).
const ENC_EXTRA: usize = 9;

/// An element's entry encoding: on the stack for short values, so a push
/// allocates nothing but the node's growth.
enum Encoded {
    Short([u8; 64 + ENC_EXTRA], usize),
    Long(Vec<u8>),
}

impl Encoded {
    fn of(value: &[u8]) -> Encoded {
        let needle = Needle::new(value);
        if value.len() <= 64 {
            let mut buf = [0; 64 + ENC_EXTRA];
            let n = needle.encode_to(&mut buf);
            Encoded::Short(buf, n)
        } else {
            let mut buf = vec![0; value.len() + ENC_EXTRA];
            let n = needle.encode_to(&mut buf);
            buf.truncate(n);
            Encoded::Long(buf)
        }
    }
}

impl std::ops::Deref for Encoded {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Encoded::Short(buf, n) => &buf[..*n],
            Encoded::Long(v) => v,
        }
    }
}

fn encode_int(out: &mut [u8], v: i64) -> usize {
    let fits = |bits: u32| v >= -(1i64 << (bits - 1)) && v < (1i64 << (bits - 1));
    let enc: &[u8] = if (0..128).contains(&v) {
        &[v as u8]
    } else if fits(13) {
        &[0xC0 | ((v >> 8) as u8 & 0x1F), v as u8]
    } else if fits(20) {
        &[0xE0 | ((v >> 16) as u8 & 0x0F), v as u8, (v >> 8) as u8]
    } else if fits(27) {
        &[0xF0 | ((v >> 24) as u8 & 0x07), v as u8, (v >> 8) as u8, (v >> 16) as u8]
    } else {
        let b = v.to_le_bytes();
        &[0xFC, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]
    };
    out[..enc.len()].copy_from_slice(enc);
    enc.len()
}

fn sign_extend(x: u64, bits: u32) -> i64 {
    ((x << (64 - bits)) as i64) >> (64 - bits)
}

/// The entry at `off` and the offset just past it.
fn decode(buf: &[u8], off: usize) -> (Elem<'_>, usize) {
    let h = buf[off];
    let b = |i: usize| buf[off + i] as u64;
    match h {
        0x00..=0x7F => (Elem::Int(h as i64), off + 1),
        0x80..=0xBF => {
            let end = off + 1 + (h & 0x3F) as usize;
            (Elem::Bytes(&buf[off + 1..end]), end)
        }
        0xC0..=0xDF => (Elem::Int(sign_extend(((h as u64 & 0x1F) << 8) | b(1), 13)), off + 2),
        0xE0..=0xEF => (Elem::Int(sign_extend(((h as u64 & 0x0F) << 16) | b(1) | b(2) << 8, 20)), off + 3),
        0xF0..=0xF7 => {
            let x = ((h as u64 & 0x07) << 24) | b(1) | b(2) << 8 | b(3) << 16;
            (Elem::Int(sign_extend(x, 27)), off + 4)
        }
        0xFC => {
            let v = i64::from_le_bytes(buf[off + 1..off + 9].try_into().expect("8 bytes"));
            (Elem::Int(v), off + 9)
        }
        _ => {
            let len = u32::from_le_bytes(buf[off + 1..off + 5].try_into().expect("4 bytes")) as usize;
            (Elem::Bytes(&buf[off + 5..off + 5 + len]), off + 5 + len)
        }
    }
}

fn next_off(buf: &[u8], off: usize) -> usize {
    decode(buf, off).1
}

/// Node size rule from `list-max-listpack-size`.
#[derive(Debug, Clone, Copy)]
pub struct Fill(pub i64);

impl Fill {
    fn max_bytes(self) -> usize {
        if self.0 < 0 {
            4096 << (-self.0 - 1).min(4)
        } else {
            SIZE_SAFETY_LIMIT
        }
    }
    fn max_count(self) -> u32 {
        if self.0 < 0 {
            u32::MAX
        } else {
            self.0.clamp(1, u32::MAX as i64) as u32
        }
    }
}

/// One node: live entries are `buf[start..]`.
#[derive(Debug, Clone, Default)]
struct Node {
    buf: Vec<u8>,
    start: usize,
    /// Offset of the last entry (meaningful when `count > 0`).
    last: usize,
    count: u32,
    /// Offsets of every entry, built by the first tail pop and kept while
    /// only the tail changes, so repeated tail pops are O(1) without a
    /// per-entry back-length. Any other edit drops it.
    tail_offs: Option<Vec<usize>>,
}

impl Node {
    fn from_raw(raw: &[u8]) -> Node {
        let mut n = Node { buf: raw.to_vec(), ..Node::default() };
        n.rescan();
        n
    }

    fn live(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Recount entries and find the last one.
    fn rescan(&mut self) {
        self.tail_offs = None;
        let (mut off, mut count, mut last) = (self.start, 0, self.start);
        while off < self.buf.len() {
            last = off;
            off = next_off(&self.buf, off);
            count += 1;
        }
        self.count = count;
        self.last = last;
    }

    fn allows(&self, add: usize, fill: Fill) -> bool {
        self.count == 0 || (self.live() + add <= fill.max_bytes() && self.count < fill.max_count())
    }

    fn exceeds(&self, fill: Fill) -> bool {
        self.count > 1 && (self.live() > fill.max_bytes() || self.count > fill.max_count())
    }

    fn compact(&mut self) {
        if self.start > 0 {
            self.tail_offs = None;
            self.buf.drain(..self.start);
            self.last -= self.start.min(self.last);
            self.start = 0;
        }
    }

    fn push_back(&mut self, enc: &[u8]) {
        if self.start > 0 && self.buf.len() + enc.len() > self.buf.capacity() {
            self.compact();
        }
        self.last = self.buf.len();
        if let Some(offs) = &mut self.tail_offs {
            offs.push(self.last);
        }
        self.buf.extend_from_slice(enc);
        self.count += 1;
    }

    /// Prepend, keeping room in front so repeated prepends are O(1) amortized.
    fn push_front(&mut self, enc: &[u8], room_hint: usize) {
        self.tail_offs = None;
        if self.start < enc.len() {
            let live = self.live();
            let head = enc.len() + live.min(room_hint.saturating_sub(live + enc.len()));
            let mut buf = Vec::with_capacity(head + live);
            buf.resize(head, 0);
            buf.extend_from_slice(&self.buf[self.start..]);
            self.last = self.last + head - self.start;
            self.buf = buf;
            self.start = head;
        }
        self.start -= enc.len();
        self.buf[self.start..self.start + enc.len()].copy_from_slice(enc);
        if self.count == 0 {
            self.last = self.start;
        }
        self.count += 1;
    }

    fn first(&self) -> Elem<'_> {
        decode(&self.buf, self.start).0
    }

    fn last_elem(&self) -> Elem<'_> {
        decode(&self.buf, self.last).0
    }

    fn pop_front(&mut self) {
        self.tail_offs = None;
        self.start = next_off(&self.buf, self.start);
        self.count -= 1;
    }

    fn pop_back(&mut self) {
        let mut offs = self.tail_offs.take().unwrap_or_else(|| self.offsets());
        offs.pop();
        self.buf.truncate(self.last);
        self.count -= 1;
        self.last = offs.last().copied().unwrap_or(self.start);
        self.tail_offs = Some(offs);
    }

    /// Offset of entry `i` (0-based within the node).
    fn offset_of(&self, i: u32) -> usize {
        if i + 1 == self.count {
            return self.last;
        }
        (0..i).fold(self.start, |off, _| next_off(&self.buf, off))
    }

    /// Offsets of all entries, in order.
    fn offsets(&self) -> Vec<usize> {
        let mut v = Vec::with_capacity(self.count as usize);
        let mut off = self.start;
        while off < self.buf.len() {
            v.push(off);
            off = next_off(&self.buf, off);
        }
        v
    }

    /// Replace bytes `from..to` with `enc` and recount.
    fn splice(&mut self, from: usize, to: usize, enc: &[u8]) {
        self.buf.splice(from..to, enc.iter().copied());
        self.rescan();
    }

    /// Drop the entries at `offs` (sorted) and recount.
    fn remove_offsets(&mut self, offs: &[usize]) {
        let mut out = Vec::with_capacity(self.live());
        let mut from = self.start;
        for &o in offs {
            out.extend_from_slice(&self.buf[from..o]);
            from = next_off(&self.buf, o);
        }
        out.extend_from_slice(&self.buf[from..]);
        self.buf = out;
        self.start = 0;
        self.rescan();
    }
}

#[derive(Debug, Clone, Default)]
struct Inner {
    nodes: VecDeque<Node>,
    len: usize,
}

/// A list value. Boxed so it keeps `Value` as small as a string.
#[derive(Debug, Clone, Default)]
pub struct List {
    inner: Box<Inner>,
}

/// Which end of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Head,
    Tail,
}

impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl List {
    pub fn new() -> List {
        List::default()
    }

    pub fn len(&self) -> usize {
        self.inner.len
    }

    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    pub fn encoding(&self) -> &'static str {
        "quicklist"
    }

    /// Quicklist nodes (lazy freeing's effort for a list, as Redis's `ql->len`).
    pub fn node_count(&self) -> usize {
        self.inner.nodes.len()
    }

    /// Push `value` at `end`, starting a new node when the end node is full.
    pub fn push(&mut self, end: End, value: &[u8], fill: Fill) {
        let enc = Encoded::of(value);
        let inner = &mut *self.inner;
        let big = !inner.nodes.is_empty();
        let node = match end {
            End::Head => inner.nodes.front(),
            End::Tail => inner.nodes.back(),
        };
        if !node.is_some_and(|n| n.allows(enc.len(), fill)) {
            // Later nodes of a growing list get their full size at once.
            let cap = if big { fill.max_bytes().max(enc.len()) } else { 0 };
            let fresh = Node { buf: Vec::with_capacity(cap), ..Node::default() };
            match end {
                End::Head => inner.nodes.push_front(fresh),
                End::Tail => inner.nodes.push_back(fresh),
            }
        }
        match end {
            End::Head => inner.nodes.front_mut().expect("node").push_front(&enc, fill.max_bytes()),
            End::Tail => inner.nodes.back_mut().expect("node").push_back(&enc),
        }
        inner.len += 1;
    }

    /// The element at `end`, if any.
    pub fn peek(&self, end: End) -> Option<Elem<'_>> {
        match end {
            End::Head => self.inner.nodes.front().map(Node::first),
            End::Tail => self.inner.nodes.back().map(Node::last_elem),
        }
    }

    /// Remove the element at `end` (no-op on an empty list).
    pub fn discard(&mut self, end: End) {
        let inner = &mut *self.inner;
        let node = match end {
            End::Head => inner.nodes.front_mut(),
            End::Tail => inner.nodes.back_mut(),
        };
        let Some(node) = node else { return };
        match end {
            End::Head => node.pop_front(),
            End::Tail => node.pop_back(),
        }
        inner.len -= 1;
        if node.count == 0 {
            match end {
                End::Head => inner.nodes.pop_front(),
                End::Tail => inner.nodes.pop_back(),
            };
        }
    }

    /// Remove and return the element at `end`.
    pub fn pop(&mut self, end: End) -> Option<Vec<u8>> {
        let v = self.peek(end)?.to_vec();
        self.discard(end);
        Some(v)
    }

    /// Node index and entry index within it of element `index` (< len),
    /// walking from the nearer end.
    fn locate(&self, index: usize) -> (usize, u32) {
        let nodes = &self.inner.nodes;
        if index < self.len() / 2 {
            let mut i = index;
            for (ni, n) in nodes.iter().enumerate() {
                if i < n.count as usize {
                    return (ni, i as u32);
                }
                i -= n.count as usize;
            }
        } else {
            let mut from_end = self.len() - 1 - index;
            for (ni, n) in nodes.iter().enumerate().rev() {
                if from_end < n.count as usize {
                    return (ni, n.count - 1 - from_end as u32);
                }
                from_end -= n.count as usize;
            }
        }
        unreachable!("index {index} within a list of {}", self.len())
    }

    /// Element `index` (0-based from the head).
    pub fn get(&self, index: usize) -> Option<Elem<'_>> {
        self.iter_from(index).next()
    }

    /// Elements from `index` on, head to tail.
    pub fn iter_from(&self, index: usize) -> Iter<'_> {
        if index >= self.len() {
            return Iter { nodes: &self.inner.nodes, ni: self.inner.nodes.len(), off: 0 };
        }
        let (ni, i) = self.locate(index);
        Iter { nodes: &self.inner.nodes, ni, off: self.inner.nodes[ni].offset_of(i) }
    }

    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0)
    }

    /// Visit elements tail to head with their indexes until `f` says stop.
    pub fn for_each_rev(&self, mut f: impl FnMut(usize, Elem) -> bool) {
        let mut index = self.len();
        for n in self.inner.nodes.iter().rev() {
            for &off in n.offsets().iter().rev() {
                index -= 1;
                if !f(index, decode(&n.buf, off).0) {
                    return;
                }
            }
        }
    }

    /// Overwrite element `index` (< len).
    pub fn set(&mut self, index: usize, value: &[u8]) {
        let (ni, i) = self.locate(index);
        let node = &mut self.inner.nodes[ni];
        let off = node.offset_of(i);
        let enc = Encoded::of(value);
        node.splice(off, next_off(&node.buf, off), &enc);
    }

    /// LINSERT: put `value` before or after the first element equal to
    /// `pivot`; false if there is none.
    pub fn insert(&mut self, pivot: &[u8], after: bool, value: &[u8], fill: Fill) -> bool {
        let pivot = Needle::new(pivot);
        let found = self.inner.nodes.iter().enumerate().find_map(|(ni, n)| {
            n.offsets().into_iter().find(|&o| decode(&n.buf, o).0.matches(&pivot)).map(|o| (ni, o))
        });
        let Some((ni, off)) = found else { return false };
        let enc = Encoded::of(value);
        let node = &mut self.inner.nodes[ni];
        let at = if after { next_off(&node.buf, off) } else { off };
        node.splice(at, at, &enc);
        self.inner.len += 1;
        if node.exceeds(fill) {
            self.split(ni);
        }
        true
    }

    /// Split node `ni` into two halves by entry count.
    fn split(&mut self, ni: usize) {
        let node = &self.inner.nodes[ni];
        let mid = node.offset_of(node.count / 2);
        let left = Node::from_raw(&node.buf[node.start..mid]);
        let right = Node::from_raw(&node.buf[mid..]);
        self.inner.nodes[ni] = left;
        self.inner.nodes.insert(ni + 1, right);
    }

    /// LREM: remove up to `count` elements equal to `value` (all for 0;
    /// from the tail for negative). Returns how many were removed.
    pub fn remove(&mut self, value: &[u8], count: i64) -> usize {
        let needle = Needle::new(value);
        let mut budget = if count == 0 { usize::MAX } else { count.unsigned_abs() as usize };
        let from_tail = count < 0;
        let mut removed = 0;
        let n_nodes = self.inner.nodes.len();
        for k in 0..n_nodes {
            if budget == 0 {
                break;
            }
            let ni = if from_tail { n_nodes - 1 - k } else { k };
            let node = &mut self.inner.nodes[ni];
            let mut hits: Vec<usize> =
                node.offsets().into_iter().filter(|&o| decode(&node.buf, o).0.matches(&needle)).collect();
            if hits.len() > budget {
                if from_tail {
                    hits.drain(..hits.len() - budget);
                } else {
                    hits.truncate(budget);
                }
            }
            if !hits.is_empty() {
                node.remove_offsets(&hits);
                budget -= hits.len();
                removed += hits.len();
            }
        }
        self.inner.len -= removed;
        self.inner.nodes.retain(|n| n.count > 0);
        removed
    }

    /// LTRIM: keep elements `start..=end` (already clamped, start <= end < len).
    pub fn trim(&mut self, start: usize, end: usize) {
        self.drop_back(self.len() - 1 - end);
        self.drop_front(start);
    }

    /// Remove everything.
    pub fn clear(&mut self) {
        self.inner.nodes.clear();
        self.inner.len = 0;
    }

    fn drop_front(&mut self, mut n: usize) {
        let inner = &mut *self.inner;
        inner.len -= n;
        while let Some(node) = inner.nodes.front_mut() {
            if n == 0 {
                break;
            }
            if node.count as usize <= n {
                n -= node.count as usize;
                inner.nodes.pop_front();
                continue;
            }
            node.start = node.offset_of(n as u32);
            node.compact();
            node.count -= n as u32;
            break;
        }
    }

    fn drop_back(&mut self, mut n: usize) {
        let inner = &mut *self.inner;
        inner.len -= n;
        while let Some(node) = inner.nodes.back_mut() {
            if n == 0 {
                break;
            }
            if node.count as usize <= n {
                n -= node.count as usize;
                inner.nodes.pop_back();
                continue;
            }
            let cut = node.offset_of(node.count - n as u32);
            node.buf.truncate(cut);
            node.rescan();
            break;
        }
    }

    /// Number of nodes and bytes of encoded elements in them (DEBUG OBJECT's
    /// `ql_nodes` and `ql_uncompressed_size`).
    pub fn node_stats(&self) -> (usize, usize) {
        let nodes = &self.inner.nodes;
        (nodes.len(), nodes.iter().map(Node::live).sum())
    }

    /// Requested sizes of the list's heap blocks, for memory accounting:
    /// the boxed header, the node ring, then per node its buffer and its
    /// tail-offset index (0 when it has none).
    pub(crate) fn blocks(&self) -> (usize, usize, impl Iterator<Item = (usize, usize)> + '_) {
        let nodes = &self.inner.nodes;
        let per_node = nodes.iter().map(|n| {
            let offs = n.tail_offs.as_ref().map_or(0, |o| o.capacity() * std::mem::size_of::<usize>());
            (n.buf.capacity(), offs)
        });
        (std::mem::size_of::<Inner>(), nodes.capacity() * std::mem::size_of::<Node>(), per_node)
    }

    /// Approximate heap bytes used (MEMORY USAGE-style estimates).
    pub fn heap_bytes(&self) -> usize {
        let nodes = &self.inner.nodes;
        nodes.iter().map(|n| n.buf.capacity()).sum::<usize>() + nodes.capacity() * std::mem::size_of::<Node>()
    }
}

/// Head-to-tail iterator over a list's elements.
pub struct Iter<'a> {
    nodes: &'a VecDeque<Node>,
    ni: usize,
    off: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Elem<'a>;
    fn next(&mut self) -> Option<Elem<'a>> {
        loop {
            let node = self.nodes.get(self.ni)?;
            if self.off < node.buf.len() {
                let (e, next) = decode(&node.buf, self.off);
                self.off = next;
                return Some(e);
            }
            self.ni += 1;
            self.off = self.nodes.get(self.ni).map_or(0, |n| n.start);
        }
    }
}

// ------------------------------------------------------------ keyspace access

impl Db {
    /// The list at `key`: `Ok(None)` if missing, WRONGTYPE for other types.
    pub fn get_list(&mut self, key: &[u8], now_ms: i64) -> Result<Option<&mut List>, EngineError> {
        match self.get(key, now_ms) {
            None => Ok(None),
            Some(Entry { value: Value::List(l), .. }) => Ok(Some(l)),
            Some(_) => Err(EngineError::WrongType),
        }
    }

    /// The list at `key`, created empty if missing (the caller pushes at
    /// once, so no empty list stays behind).
    pub fn list_or_create(&mut self, key: &[u8], now_ms: i64) -> Result<&mut List, EngineError> {
        if self.get_list(key, now_ms)?.is_none() {
            self.set(key, Value::List(List::new()), None, false, now_ms);
        }
        Ok(self.get_list(key, now_ms)?.expect("just created"))
    }

    /// Delete `key` if it holds an empty list (Redis never keeps one).
    pub fn drop_if_empty_list(&mut self, key: &[u8], now_ms: i64) {
        if matches!(self.get_list(key, now_ms), Ok(Some(l)) if l.is_empty()) {
            self.remove(key);
        }
    }
}

#[cfg(test)]
#[path = "list_tests.rs"]
mod tests;
