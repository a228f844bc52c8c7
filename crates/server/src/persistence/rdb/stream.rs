//! Streams in RDB files and DUMP payloads, as Redis 7.0 writes them (type
//! STREAM_LISTPACKS_2) and reads them (also 7.0's predecessor type
//! STREAM_LISTPACKS and 7.2's STREAM_LISTPACKS_3).
//!
//! Body: the node count, then per node its master ID as a 16-byte
//! big-endian string and the node as a listpack string in Redis's stream
//! layout; then length, last ID, first ID, max deleted ID, entries added
//! (lengths), and the consumer groups: name, last ID, entries read, the
//! group PEL (raw 16-byte ID, delivery time as 8-byte LE ms, delivery
//! count) and the consumers (name, seen time, their PEL's raw IDs).
//!
//! A node's listpack: live count, deleted count, master field count, the
//! master fields, a 0 terminator; then per entry: flags, ms delta, seq
//! delta (against the master ID), the field count and fields unless
//! flagged SAMEFIELDS, the values, and the entry's element count
//! ("lp-count"). Volley keeps nodes in its own packed format
//! (`engine::stream::node`), so both directions convert, entry by entry;
//! the nodes split where Redis's do, so the bytes written are Redis's.
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::Arc;

use super::format::{Writer, TYPE_STREAM_LISTPACKS};
use super::packed::{self, LpBuilder};
use super::reader::{LoadError, Reader};
use crate::engine::numeric::parse_i64;
use crate::engine::stream::group::ENTRIES_READ_UNKNOWN;
use crate::engine::stream::node::{FLAG_DELETED, FLAG_SAMEFIELDS};
use crate::engine::stream::{Consumer, Group, Nack, Node, Stream, StreamId, Val};

/// Redis 7.2's stream type: consumers also carry an active time.
pub const TYPE_STREAM_LISTPACKS_3: u8 = 21;

type LResult<T> = Result<T, LoadError>;

// ------------------------------------------------------------ writing

fn push_val(lp: &mut LpBuilder, v: Val<'_>) {
    match v {
        Val::Int(i) => lp.push_int(i),
        Val::Bytes(b) => lp.push_str(b),
    }
}

/// One node as the listpack Redis keeps for it.
pub(super) fn node_listpack(master: StreamId, node: &Node) -> Vec<u8> {
    let mut lp = LpBuilder::default();
    lp.push_int(node.count() as i64);
    lp.push_int(node.deleted() as i64);
    let fields: Vec<&[u8]> = node.master_fields().collect();
    lp.push_int(fields.len() as i64);
    for f in &fields {
        lp.push_str(f);
    }
    lp.push_int(0);
    for e in node.positions(master) {
        lp.push_int(i64::from(e.flags));
        // Deltas are the unsigned differences seen as signed, as Redis's.
        lp.push_int(e.id.ms.wrapping_sub(master.ms) as i64);
        lp.push_int(e.id.seq.wrapping_sub(master.seq) as i64);
        let n = e.nfields();
        let same = e.flags & FLAG_SAMEFIELDS != 0;
        if same {
            for (_, v) in node.pairs(&e) {
                push_val(&mut lp, v);
            }
        } else {
            lp.push_int(n as i64);
            for (f, v) in node.pairs(&e) {
                push_val(&mut lp, f);
                push_val(&mut lp, v);
            }
        }
        // The entry's element count, so Redis can walk it backwards.
        lp.push_int(if same { n + 3 } else { 2 * n + 4 } as i64);
    }
    lp.finish()
}

pub(super) fn write_id<W: Write>(w: &mut Writer<W>, id: StreamId) -> io::Result<()> {
    w.length(id.ms)?;
    w.length(id.seq)
}

fn write_group<W: Write>(w: &mut Writer<W>, name: &[u8], g: &Group) -> io::Result<()> {
    w.string(name)?;
    write_id(w, g.last_id)?;
    // -1 (unknown) is written as the unsigned length it casts to.
    w.length(g.entries_read as u64)?;
    write_pels(w, g)
}

/// A group's PEL, then its consumers with their own PELs.
pub(super) fn write_pels<W: Write>(w: &mut Writer<W>, g: &Group) -> io::Result<()> {
    w.length(g.pel.len() as u64)?;
    for (id, nack) in &g.pel {
        w.raw(&id.to_be_bytes())?;
        w.raw(&nack.delivery_time.to_le_bytes())?;
        w.length(nack.delivery_count)?;
    }
    w.length(g.consumers.len() as u64)?;
    for (cname, c) in &g.consumers {
        w.string(cname)?;
        w.raw(&c.seen_time.to_le_bytes())?;
        w.length(c.pel.len() as u64)?;
        for id in &c.pel {
            w.raw(&id.to_be_bytes())?;
        }
    }
    Ok(())
}

/// Write a stream's body (type STREAM_LISTPACKS_2). Nodes, groups and
/// consumers go in key order, which is the byte order of Redis's radix
/// trees.
pub fn write_stream<W: Write>(w: &mut Writer<W>, s: &Stream) -> io::Result<()> {
    w.length(s.node_count() as u64)?;
    for (&master, node) in s.nodes() {
        w.string(&master.to_be_bytes())?;
        w.string(&node_listpack(master, node))?;
    }
    w.length(s.len())?;
    write_id(w, s.last_id)?;
    write_id(w, s.first_id)?;
    write_id(w, s.max_deleted)?;
    w.length(s.entries_added)?;
    w.length(s.groups.len() as u64)?;
    for (name, g) in &s.groups {
        write_group(w, name, g)?;
    }
    Ok(())
}

// ------------------------------------------------------------ reading

/// Walks a node's decoded listpack elements.
struct Elems<'a> {
    items: &'a [Vec<u8>],
    at: usize,
}

impl<'a> Elems<'a> {
    fn next(&mut self) -> Result<&'a [u8], String> {
        let e = self.items.get(self.at).ok_or("stream listpack ends inside an entry")?;
        self.at += 1;
        Ok(e)
    }

    fn int(&mut self, what: &str) -> Result<i64, String> {
        let e = self.next()?;
        parse_i64(e).ok_or_else(|| format!("stream listpack {what} is not an integer"))
    }

    /// A count: an integer from 0 up to what the remaining elements allow.
    fn count(&mut self, what: &str, per: usize) -> Result<usize, String> {
        let n = self.int(what)?;
        let left = (self.items.len() - self.at) as i64;
        if n < 0 || n.saturating_mul(per as i64) > left {
            return Err(format!("stream listpack {what} {n} is out of range"));
        }
        Ok(n as usize)
    }

    fn done(&self) -> bool {
        self.at == self.items.len()
    }
}

/// One entry's ID from its deltas; it must lie above `prev` (or be at
/// least the master ID for the first entry).
fn entry_id(el: &mut Elems<'_>, master: StreamId, prev: Option<StreamId>) -> Result<StreamId, String> {
    let ms = el.int("ms delta")?;
    let seq = el.int("seq delta")?;
    let id = u64::try_from(ms)
        .ok()
        .and_then(|d| master.ms.checked_add(d))
        .map(|ms| StreamId::new(ms, master.seq.wrapping_add(seq as u64)))
        .ok_or("stream entry ID below its node's master ID")?;
    match prev {
        Some(p) if id <= p => Err(format!("stream entry ID {id} not above the previous {p}")),
        None if id < master => Err(format!("stream entry ID {id} below its node's master ID {master}")),
        _ => Ok(id),
    }
}

/// Rebuild a node from its listpack's elements. Returns it with its last
/// entry's ID. Every count and delta is checked: a node that decodes is a
/// node the engine can walk.
fn node_from(master: StreamId, items: &[Vec<u8>]) -> Result<(Node, StreamId), String> {
    let mut el = Elems { items, at: 0 };
    let live = el.int("live count")?;
    let deleted = el.int("deleted count")?;
    let nmaster = el.count("master field count", 1)?;
    let fields: Vec<&[u8]> = (0..nmaster).map(|_| el.next()).collect::<Result<_, _>>()?;
    if el.int("master terminator")? != 0 {
        return Err("stream listpack master entry not terminated by 0".into());
    }
    let mut node = Node::with_master_fields(&fields);
    let mut prev = None;
    let mut pairs: Vec<&[u8]> = Vec::new();
    while !el.done() {
        let flags = el.int("entry flags")?;
        if !(0..=i64::from(FLAG_DELETED | FLAG_SAMEFIELDS)).contains(&flags) {
            return Err(format!("stream entry flags {flags} unknown"));
        }
        let id = entry_id(&mut el, master, prev)?;
        pairs.clear();
        let n = if flags & i64::from(FLAG_SAMEFIELDS) != 0 {
            for f in &fields {
                pairs.push(f);
                pairs.push(el.next()?);
            }
            nmaster
        } else {
            let n = el.count("entry field count", 2)?;
            for _ in 0..2 * n {
                pairs.push(el.next()?);
            }
            n
        };
        let want = if flags & i64::from(FLAG_SAMEFIELDS) != 0 { n + 3 } else { 2 * n + 4 };
        if n == 0 || el.int("entry element count")? != want as i64 {
            return Err(format!("stream entry {id} has a bad field or element count"));
        }
        let after = prev.unwrap_or(master);
        if flags & i64::from(FLAG_DELETED) != 0 {
            node.push_deleted(master, after, id, &pairs);
        } else {
            node.push(master, after, id, &pairs);
        }
        prev = Some(id);
    }
    let last = prev.ok_or("stream node with no entries")?;
    if node.count() as i64 != live || node.deleted() as i64 != deleted {
        return Err("stream node counts do not match its entries".into());
    }
    Ok((node, last))
}

fn read_id<R: Read>(r: &mut Reader<R>) -> LResult<StreamId> {
    Ok(StreamId::new(r.length()?, r.length()?))
}

fn raw_id<R: Read>(r: &mut Reader<R>) -> LResult<StreamId> {
    let b = r.bytes(16)?;
    Ok(StreamId::from_be_bytes(&b).expect("16 bytes"))
}

/// The nodes: returns the live entries they hold and the last entry's ID.
fn read_nodes<R: Read>(r: &mut Reader<R>, s: &mut Stream) -> LResult<(u64, Option<StreamId>)> {
    let (mut live, mut last) = (0u64, None::<StreamId>);
    for _ in 0..r.length()? {
        let key = r.string()?;
        let Some(master) = StreamId::from_be_bytes(&key) else {
            return r.error("stream node key is not the size of a stream ID");
        };
        if last.is_some_and(|l| master <= l) {
            return r.error(format!("stream node {master} out of order"));
        }
        let blob = r.string()?;
        let built = packed::listpack(&blob).and_then(|items| node_from(master, &items));
        let (node, node_last) = built.or_else(|e| r.error(e))?;
        live += node.count();
        last = Some(node_last);
        s.insert_node(master, node);
    }
    Ok((live, last))
}

/// A group PEL entry as read, before a consumer's PEL names its owner.
struct Pending {
    time: i64,
    count: u64,
    owner: Option<Arc<[u8]>>,
}

/// A group's PEL and consumers (the consumers' PELs name the owners).
fn read_group_pels<R: Read>(r: &mut Reader<R>, g: &mut Group, t: u8) -> LResult<()> {
    let mut pel: BTreeMap<StreamId, Pending> = BTreeMap::new();
    for _ in 0..r.length()? {
        let id = raw_id(r)?;
        let time = r.u64_le()? as i64;
        let count = r.length()?;
        if pel.insert(id, Pending { time, count, owner: None }).is_some() {
            return r.error("duplicated global PEL entry in a stream consumer group");
        }
    }
    for _ in 0..r.length()? {
        let name: Arc<[u8]> = Arc::from(r.string()?);
        let seen_time = r.u64_le()? as i64;
        if t == TYPE_STREAM_LISTPACKS_3 {
            r.u64_le()?; // active time: Volley does not keep it
        }
        let mut c = Consumer { seen_time, ..Consumer::default() };
        for _ in 0..r.length()? {
            let id = raw_id(r)?;
            let Some(slot) = pel.get_mut(&id) else {
                return r.error("consumer PEL entry not found in its group's PEL");
            };
            if slot.owner.is_some() {
                return r.error("stream PEL entry owned by two consumers");
            }
            slot.owner = Some(name.clone());
            c.pel.insert(id);
        }
        if g.consumers.insert(name, c).is_some() {
            return r.error("duplicate stream consumer");
        }
    }
    for (id, p) in pel {
        let Some(consumer) = p.owner else { return r.error("stream group PEL entry without a consumer") };
        g.pel.insert(id, Nack { delivery_time: p.time, delivery_count: p.count, consumer });
    }
    Ok(())
}

fn read_groups<R: Read>(r: &mut Reader<R>, s: &mut Stream, t: u8) -> LResult<()> {
    for _ in 0..r.length()? {
        let name = r.string()?;
        let last_id = read_id(r)?;
        let entries_read = if t == TYPE_STREAM_LISTPACKS {
            s.entries_up_to(last_id).unwrap_or(ENTRIES_READ_UNKNOWN)
        } else {
            r.length()? as i64
        };
        if s.groups.contains_key(name.as_slice()) {
            let name = String::from_utf8_lossy(&name);
            return r.error(format!("duplicated consumer group name {name}"));
        }
        let mut g = Group::new(last_id, entries_read);
        read_group_pels(r, &mut g, t)?;
        s.groups.insert(name.into_boxed_slice(), g);
    }
    Ok(())
}

/// Read a stream's body of RDB type `t` (STREAM_LISTPACKS, _2 or _3).
pub fn read_stream<R: Read>(r: &mut Reader<R>, t: u8) -> LResult<Stream> {
    let mut s = Stream::new();
    let (live, last_entry) = read_nodes(r, &mut s)?;
    let length = r.length()?;
    let last_id = read_id(r)?;
    if length != live {
        return r.error(format!("stream length {length} but its nodes hold {live} entries"));
    }
    if last_entry.is_some_and(|e| e > last_id) {
        return r.error("stream last ID below its last entry");
    }
    if t == TYPE_STREAM_LISTPACKS {
        // 7.0's counters did not exist yet: start them as Redis does.
        let first = s.first_live().unwrap_or_default();
        s.set_meta(length, last_id, first, StreamId::MIN, length);
    } else {
        let first = read_id(r)?;
        let max_deleted = read_id(r)?;
        let added = r.length()?;
        s.set_meta(length, last_id, first, max_deleted, added);
    }
    read_groups(r, &mut s, t)?;
    Ok(s)
}
