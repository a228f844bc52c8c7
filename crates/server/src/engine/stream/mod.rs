//! The stream type: entries in ID order, packed into nodes (see `node`)
//! kept in a B-tree keyed by each node's first ID, so a range read seeks
//! to its first node and touches only the nodes it returns, and trimming
//! drops whole nodes from the front. Deleted entries stay in their node,
//! flagged, until the node empties, as in Redis. Consumer groups live in
//! `group`.
pub mod group;
pub mod id;
mod info;
pub mod node;

use std::collections::{btree_map, BTreeMap};

pub use group::{Consumer, Group, Nack};
pub use id::{IdSpec, StreamId};
pub use node::{Node, Pairs, Val};

use node::EntryPos;

/// Largest total of field and value bytes one entry may have (a listpack
/// in Redis holds at most 1 GiB).
pub const MAX_ENTRY_BYTES: usize = 1 << 30;

/// `stream-node-max-bytes` and `stream-node-max-entries` (0 = no limit).
#[derive(Debug, Clone, Copy)]
pub struct NodeLimits {
    pub max_bytes: usize,
    pub max_entries: usize,
}

/// Why XADD could not add an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddError {
    /// The ID is not above the stream's last ID.
    NotGreater,
    /// The entry's fields and values are too large.
    TooLarge,
}

/// A trimming strategy (XADD/XTRIM MAXLEN or MINID).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    MaxLen(u64),
    MinId(StreamId),
}

/// One stream value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stream {
    nodes: BTreeMap<StreamId, Node>,
    length: u64,
    /// The largest ID ever added (or set by XSETID); 0-0 when none.
    pub last_id: StreamId,
    /// The first live entry's ID; 0-0 when empty.
    pub first_id: StreamId,
    /// The largest ID ever deleted by XDEL.
    pub max_deleted: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
    /// Consumer groups by name.
    pub groups: BTreeMap<Box<[u8]>, Group>,
    /// The tail node's last entry, which the next entry is stored
    /// relative to (see `node`).
    tail: TailCache,
}

/// (master ID of the tail node, ID of its last entry), when known. A
/// cache, not state: a stream loaded, or whose tail node went, finds its
/// tail's last entry by walking the node once. Ignored by equality.
#[derive(Debug, Clone, Copy, Default)]
struct TailCache(Option<(StreamId, StreamId)>);

impl PartialEq for TailCache {
    fn eq(&self, _: &TailCache) -> bool {
        true
    }
}

/// A live entry met by a range walk.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    pub id: StreamId,
    node: &'a Node,
    pos: EntryPos,
}

impl<'a> Entry<'a> {
    /// Its field/value pairs.
    pub fn pairs(&self) -> Pairs<'a> {
        self.node.pairs(&self.pos)
    }
    pub fn nfields(&self) -> usize {
        self.pos.nfields()
    }
}

impl Stream {
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Live entries.
    pub fn len(&self) -> u64 {
        self.length
    }
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// The nodes, each with its master ID, in order.
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = (&StreamId, &Node)> + '_ {
        self.nodes.iter()
    }
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Put a node back as it was (RDB load, copies): the caller keeps
    /// `length` and the IDs consistent through [`Stream::set_meta`].
    pub fn insert_node(&mut self, master: StreamId, mut node: Node) {
        node.shrink();
        self.nodes.insert(master, node);
    }

    /// Set the counters a loaded stream carries.
    pub fn set_meta(&mut self, length: u64, last_id: StreamId, first_id: StreamId, max_deleted: StreamId, added: u64) {
        self.length = length;
        self.last_id = last_id;
        self.first_id = first_id;
        self.max_deleted = max_deleted;
        self.entries_added = added;
    }

    /// The ID XADD would give `spec` now, or None if it cannot be above
    /// the last ID.
    pub fn next_id(&self, spec: IdSpec, now_ms: i64) -> Option<StreamId> {
        let last = self.last_id;
        let id = match spec {
            IdSpec::Exact(id) => id,
            IdSpec::AutoSeq(ms) if ms == last.ms => last.next().filter(|n| n.ms == ms)?,
            IdSpec::AutoSeq(ms) => StreamId::new(ms, 0),
            IdSpec::Auto => {
                let now = now_ms.max(0) as u64;
                if now > last.ms {
                    StreamId::new(now, 0)
                } else {
                    last.next()?
                }
            }
        };
        (id > last).then_some(id)
    }

    /// Append an entry of `pairs` (alternating field, value) under the ID
    /// `spec` asks for; returns the ID given.
    pub fn add(
        &mut self,
        spec: IdSpec,
        pairs: &[&[u8]],
        now_ms: i64,
        limits: NodeLimits,
    ) -> Result<StreamId, AddError> {
        let id = self.next_id(spec, now_ms).ok_or(AddError::NotGreater)?;
        let total: usize = pairs.iter().map(|p| p.len()).sum();
        if total > MAX_ENTRY_BYTES {
            return Err(AddError::TooLarge);
        }
        let max_bytes = match limits.max_bytes {
            0 => MAX_ENTRY_BYTES,
            b => b.min(MAX_ENTRY_BYTES),
        };
        let full = match self.nodes.last_key_value() {
            None => true,
            Some((_, n)) => {
                n.lp_bytes() + total >= max_bytes || (limits.max_entries > 0 && n.total() >= limits.max_entries as u64)
            }
        };
        if full {
            if let Some(mut last) = self.nodes.last_entry() {
                last.get_mut().shrink();
            }
            self.nodes.insert(id, Node::new(pairs));
        }
        let mut tail = self.nodes.last_entry().expect("a tail node exists");
        let master = *tail.key();
        let prev = match self.tail.0 {
            _ if tail.get().total() == 0 => master,
            Some((m, last)) if m == master => last,
            _ => tail.get().last_entry(master).map_or(master, |e| e.id),
        };
        tail.get_mut().push(master, prev, id, pairs);
        self.tail = TailCache(Some((master, id)));
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
        Ok(id)
    }

    /// Live entries with IDs in `start..=end`, ascending or (`rev`)
    /// descending.
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool) -> Range<'_> {
        let empty = start > end;
        let first = if empty { None } else { self.nodes.range(..=start).next_back().map(|(k, _)| *k) };
        let nodes = match first {
            _ if empty => self.nodes.range(..),
            Some(k) => self.nodes.range(k..=end),
            None => self.nodes.range(..=end),
        };
        Range { nodes, cur: None, at: 0, prev: StreamId::MIN, rev_pos: Vec::new(), start, end, rev, done: empty }
    }

    /// The live entry `id`, if there is one.
    pub fn get(&self, id: StreamId) -> Option<Entry<'_>> {
        self.range(id, id, false).next()
    }

    /// The first (or last) live entry's ID.
    pub fn first_live(&self) -> Option<StreamId> {
        self.range(StreamId::MIN, StreamId::MAX, false).next().map(|e| e.id)
    }
    /// The first entry's ID, deleted or not (Redis replays an approximate
    /// MINID trim as exact with this).
    pub fn first_id_with_tombstones(&self) -> Option<StreamId> {
        let (&master, node) = self.nodes.first_key_value()?;
        node.positions(master).next().map(|e| e.id)
    }
    pub fn last_live(&self) -> Option<StreamId> {
        self.range(StreamId::MIN, StreamId::MAX, true).next().map(|e| e.id)
    }

    /// Delete one live entry; false if there is none with that ID. A node
    /// left with no live entries goes.
    fn delete_one(&mut self, id: StreamId) -> bool {
        let Some((&master, node)) = self.nodes.range_mut(..=id).next_back() else { return false };
        let found = node.positions(master).take_while(|e| e.id <= id).find(|e| e.id == id && !e.deleted());
        let Some(pos) = found else { return false };
        node.mark_deleted(&pos);
        if node.count() == 0 {
            self.nodes.remove(&master);
        }
        self.length -= 1;
        true
    }

    /// XDEL: delete the entries with these IDs; returns how many existed.
    pub fn delete(&mut self, ids: &[StreamId]) -> u64 {
        let mut deleted = 0;
        let mut first_gone = false;
        for &id in ids {
            if self.delete_one(id) {
                first_gone |= id == self.first_id;
                self.max_deleted = self.max_deleted.max(id);
                deleted += 1;
            }
        }
        if deleted > 0 {
            if self.length == 0 {
                self.first_id = StreamId::MIN;
            } else if first_gone {
                self.first_id = self.first_live().unwrap_or_default();
            }
        }
        deleted
    }

    /// Trim from the front by `how`. `approx` removes whole nodes only;
    /// `limit` (0 = none) caps the entries removed. Returns how many went.
    pub fn trim(&mut self, how: Trim, approx: bool, limit: u64) -> u64 {
        let mut deleted = 0;
        while let Some(mut first) = self.nodes.first_entry() {
            if matches!(how, Trim::MaxLen(max) if self.length <= max) {
                break;
            }
            let master = *first.key();
            let entries = first.get().count();
            if limit > 0 && deleted + entries > limit {
                break;
            }
            let whole = match how {
                Trim::MaxLen(max) => self.length - entries >= max,
                Trim::MinId(min) => first.get().last_entry(master).is_some_and(|e| e.id < min),
            };
            if whole {
                first.remove();
                self.length -= entries;
                deleted += entries;
                continue;
            }
            if approx {
                break;
            }
            let node = first.get_mut();
            let mut to_go = match how {
                Trim::MaxLen(max) => self.length - max,
                Trim::MinId(_) => u64::MAX,
            };
            let mut doomed = Vec::new();
            for e in node.positions(master) {
                let stop = match how {
                    Trim::MaxLen(_) => to_go == 0,
                    Trim::MinId(min) => e.id >= min,
                };
                if stop {
                    break;
                }
                if !e.deleted() {
                    doomed.push(e);
                    to_go -= 1;
                }
            }
            for e in &doomed {
                node.mark_deleted(e);
            }
            self.length -= doomed.len() as u64;
            deleted += doomed.len() as u64;
            break;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.first_live().unwrap_or_default();
        }
        deleted
    }

    /// Whether an XDEL tombstone may lie in `start..=end` (Redis's
    /// `streamRangeHasTombstones`, which only knows the largest deleted ID).
    pub fn range_has_tombstones(&self, start: Option<StreamId>, end: Option<StreamId>) -> bool {
        if self.length == 0 || self.max_deleted.is_zero() || self.first_id > self.max_deleted {
            return false;
        }
        let start = start.unwrap_or(StreamId::MIN);
        let end = end.unwrap_or(StreamId::MAX);
        start <= self.max_deleted && self.max_deleted <= end
    }

    /// How many entries precede and include `id` since the stream began,
    /// when that can be known (Redis's
    /// `streamEstimateDistanceFromFirstEverEntry`); None when it cannot.
    pub fn entries_up_to(&self, id: StreamId) -> Option<i64> {
        let added = self.entries_added as i64;
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.length == 0 && id <= self.last_id {
            return Some(added);
        }
        if id == self.last_id {
            return Some(added);
        }
        if id > self.last_id {
            return None;
        }
        if self.max_deleted.is_zero() || self.max_deleted < self.first_id {
            if id < self.first_id {
                return Some(added - self.length as i64);
            }
            if id == self.first_id {
                return Some(added - self.length as i64 + 1);
            }
        }
        None
    }

    /// Bytes of heap this stream holds (MEMORY USAGE), counting each tree
    /// slot at the size a B-tree leaf gives it.
    pub fn heap_bytes(&self) -> usize {
        const TREE_SLOT: usize = std::mem::size_of::<(StreamId, Node)>() * 3 / 2;
        let nodes: usize = self.nodes.values().map(|n| n.heap_bytes() + TREE_SLOT).sum();
        let groups: usize = self.groups.iter().map(|(name, g)| name.len() + g.heap_bytes()).sum();
        std::mem::size_of::<Stream>() + nodes + groups
    }
}

/// A walk over live entries in an ID range (see [`Stream::range`]).
pub struct Range<'a> {
    nodes: btree_map::Range<'a, StreamId, Node>,
    cur: Option<(StreamId, &'a Node)>,
    at: usize,
    /// The ID of the entry before `at` (node entries are stored relative
    /// to it).
    prev: StreamId,
    rev_pos: Vec<EntryPos>,
    start: StreamId,
    end: StreamId,
    rev: bool,
    done: bool,
}

impl<'a> Range<'a> {
    fn next_forward(&mut self) -> Option<Entry<'a>> {
        loop {
            if let Some((_, node)) = self.cur {
                if !node.is_end(self.at) {
                    let pos = node.entry_at(self.prev, self.at);
                    self.at = pos.end;
                    self.prev = pos.id;
                    if pos.deleted() || pos.id < self.start {
                        continue;
                    }
                    if pos.id > self.end {
                        self.done = true;
                        return None;
                    }
                    return Some(Entry { id: pos.id, node, pos });
                }
            }
            let (&master, node) = self.nodes.next()?;
            self.cur = Some((master, node));
            self.at = node.first_at();
            self.prev = master;
        }
    }

    fn next_backward(&mut self) -> Option<Entry<'a>> {
        loop {
            if let (Some(pos), Some((_, node))) = (self.rev_pos.pop(), self.cur) {
                if pos.deleted() || pos.id > self.end {
                    continue;
                }
                if pos.id < self.start {
                    self.done = true;
                    return None;
                }
                return Some(Entry { id: pos.id, node, pos });
            }
            let (&master, node) = self.nodes.next_back()?;
            self.cur = Some((master, node));
            self.rev_pos.clear();
            self.rev_pos.extend(node.positions(master));
        }
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = Entry<'a>;
    #[inline]
    fn next(&mut self) -> Option<Entry<'a>> {
        if self.done {
            None
        } else if self.rev {
            self.next_backward()
        } else {
            self.next_forward()
        }
    }
}

// ------------------------------------------------------------ keyspace access

impl crate::engine::Db {
    /// The stream at `key`: `Ok(None)` if missing, WRONGTYPE for other types.
    pub fn get_stream(&mut self, key: &[u8], now_ms: i64) -> Result<Option<&mut Stream>, crate::engine::EngineError> {
        match self.get(key, now_ms) {
            None => Ok(None),
            Some(crate::engine::Entry { value: crate::engine::Value::Stream(s), .. }) => Ok(Some(s)),
            Some(_) => Err(crate::engine::EngineError::WrongType),
        }
    }

    /// The stream at `key`, created empty if missing (Redis keeps empty
    /// streams, so the caller need not add to it).
    pub fn stream_or_create(&mut self, key: &[u8], now_ms: i64) -> Result<&mut Stream, crate::engine::EngineError> {
        if self.get_stream(key, now_ms)?.is_none() {
            let v = crate::engine::Value::Stream(Box::default());
            self.set(key, v, None, false, now_ms);
        }
        Ok(self.get_stream(key, now_ms)?.expect("just created"))
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
