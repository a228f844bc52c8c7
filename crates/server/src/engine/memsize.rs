//! What a key costs in memory (MEMORY USAGE and the per-db figures of
//! MEMORY STATS): Volley's own layout, not Redis's.
//!
//! A key costs its keyspace node, its key bytes when too long to sit in the
//! node, its share of the bucket array, the expiry table's node and bucket
//! share when it has a TTL, and its value's heap blocks. Every block is
//! counted at the size the allocator really hands out ([`block_size`]):
//! for small blocks the rounding is a good part of the cost.
//!
//! Aggregates with one block per element (hash and set tables, sorted-set
//! members) are sampled: the first `samples` elements are measured and the
//! average extrapolated to the whole, as Redis does, so a huge value costs
//! O(samples), not O(len). List nodes are sampled the same way (as Redis
//! samples quicklist nodes); sorted-set tree nodes, one per dozens of
//! members, are walked in full.
use std::mem::size_of;

use super::db::{Db, Entry};
use super::dict::Dict;
use super::hash::Hash;
use super::keybuf::fits_inline;
use super::list::List;
use super::set::Set;
use super::value::{Str, Value};
use super::zset::ZSet;
use super::ztree::{Elem, Item, ZTree};

/// Elements sampled when MEMORY USAGE names no SAMPLES (Redis's default).
pub const DEFAULT_SAMPLES: usize = 5;

/// Word size: mimalloc's size classes step by one word up to [`EXACT_MAX`].
const WORD: usize = size_of::<usize>();
/// Largest request served from a class of its own word count.
const EXACT_MAX: usize = 8 * WORD;
/// Largest request served from a size class; bigger ones get whole pages.
const CLASSED_MAX: usize = 512 << 10;
const PAGE: usize = 4096;

/// The block the process allocator (mimalloc, built with 8-byte minimal
/// alignment) hands out for a request of `n` bytes; 0 for no allocation.
/// Above [`EXACT_MAX`] classes come four per power of two (at most 12.5%
/// slack); above [`CLASSED_MAX`] requests are rounded to pages.
pub fn block_size(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let words = n.div_ceil(WORD);
    if n <= EXACT_MAX {
        return words * WORD;
    }
    if n > CLASSED_MAX {
        return n.next_multiple_of(PAGE);
    }
    // The class is picked by the top three bits of `words - 1`; its block
    // is the largest word count sharing them.
    let w = words - 1;
    let top = usize::BITS - 1 - w.leading_zeros();
    let low_mask = (1usize << (top - 2)) - 1;
    ((w | low_mask) + 1) * WORD
}

/// What one key of `db` costs, `samples` elements of an aggregate measured
/// (`usize::MAX`: all). None if the key is absent. No expiry check: a key
/// past its time still holds its memory until it is reclaimed.
pub fn key_usage(db: &Db, key: &[u8], samples: usize) -> Option<usize> {
    let entry = db.find(key)?;
    let [(keys, buckets), (volatile, expiry_buckets)] = db.table_shape();
    let mut total = block_size(Dict::<Entry>::NODE_BYTES) + key_bytes(key);
    total += share(buckets, keys);
    if db.expire_of(key).is_some() {
        total += block_size(Dict::<i64>::NODE_BYTES) + key_bytes(key) + share(expiry_buckets, volatile);
    }
    Some(total + value_usage(&entry.value, samples.max(1)))
}

/// What `db`'s key table and expiry table cost apart from keys too long
/// for their nodes and the values: nodes and bucket arrays (MEMORY STATS).
pub fn table_overhead(db: &Db) -> [usize; 2] {
    let [(keys, buckets), (volatile, expiry_buckets)] = db.table_shape();
    [
        keys * block_size(Dict::<Entry>::NODE_BYTES) + block_size(buckets * WORD),
        volatile * block_size(Dict::<i64>::NODE_BYTES) + block_size(expiry_buckets * WORD),
    ]
}

/// Bytes a table of `buckets` bucket heads holding `entries` spends on the
/// heads, per entry (rounded up, so a lone key pays for its whole array).
fn share(buckets: usize, entries: usize) -> usize {
    (buckets * WORD).div_ceil(entries.max(1))
}

/// The key's own allocation when it does not fit in its node.
fn key_bytes(key: &[u8]) -> usize {
    if fits_inline(key) {
        0
    } else {
        block_size(key.len())
    }
}

/// Heap bytes a value owns beyond the 24 bytes inside its node.
pub fn value_usage(v: &Value, samples: usize) -> usize {
    match v {
        Value::Str(s) => str_usage(s),
        Value::List(l) => list_usage(l, samples),
        Value::Hash(h) => hash_usage(h, samples),
        Value::Set(s) => set_usage(s, samples),
        Value::ZSet(z) => block_size(size_of::<ZSet>()) + zset_usage(z, samples),
        Value::Stream(s) => s.heap_bytes(),
    }
}

fn str_usage(s: &Str) -> usize {
    match s {
        Str::Int(_) | Str::Small { .. } => 0,
        Str::Emb(b) | Str::Long(b) => block_size(b.len()),
        Str::Raw(v) => block_size(size_of::<Vec<u8>>()) + block_size(v.capacity()),
    }
}

/// Average of `per` over the first `samples` items of `items`, times `len`
/// (Redis's extrapolation).
fn extrapolate<T>(items: impl Iterator<Item = T>, len: usize, samples: usize, per: impl Fn(T) -> usize) -> usize {
    let (mut sum, mut seen) = (0usize, 0usize);
    for it in items.take(samples) {
        sum += per(it);
        seen += 1;
    }
    if seen == 0 {
        return 0;
    }
    (sum as f64 / seen as f64 * len as f64).round() as usize
}

fn list_usage(l: &List, samples: usize) -> usize {
    let (header, ring, nodes) = l.blocks();
    let count = l.node_stats().0;
    let per_node = extrapolate(nodes, count, samples, |(buf, offs)| block_size(buf) + block_size(offs));
    block_size(header) + block_size(ring) + per_node
}

/// A dict's own blocks (the boxed header and its bucket arrays) plus its
/// entries, each entry's node, key and `extra` heap bytes sampled.
fn table_usage<V>(d: &Dict<V>, samples: usize, extra: impl Fn(&V) -> usize) -> usize {
    let node = block_size(Dict::<V>::NODE_BYTES);
    let entries = extrapolate(d.iter(), d.len(), samples, |(k, v)| node + key_bytes(k) + extra(v));
    block_size(size_of::<Dict<V>>()) + block_size(d.bucket_count() * WORD) + entries
}

fn hash_usage(h: &Hash, samples: usize) -> usize {
    match h {
        Hash::Listpack(b) => block_size(b.len()),
        Hash::Table(t) => table_usage(t, samples, |v| block_size(v.len())),
    }
}

fn set_usage(s: &Set, samples: usize) -> usize {
    match s {
        Set::Ints(i) => block_size(i.byte_len()),
        Set::Table(t) => table_usage(t, samples, |_| 0),
    }
}

/// A member's allocation: score, length header, bytes.
fn elem_bytes(it: &Item) -> usize {
    let len = it.member().len();
    block_size(size_of::<f64>() + if len < 255 { 1 } else { 9 } + len)
}

fn zset_usage(z: &ZSet, samples: usize) -> usize {
    let mut members = Vec::with_capacity(samples.min(z.len()));
    z.for_range(0, z.len().min(samples), false, &mut |it| {
        members.push(elem_bytes(it));
        true
    });
    let elems = extrapolate(members.into_iter(), z.len(), samples, |b| b);
    match (z, z.big_parts()) {
        (ZSet::Small(v), _) => block_size(v.capacity() * size_of::<Item>()) + elems,
        (_, Some((tree, slots))) => tree_usage(tree) + map_usage(slots) + elems,
        (ZSet::Big(_), None) => elems,
    }
}

fn tree_usage(tree: &ZTree) -> usize {
    let mut total = 0;
    tree.node_blocks(&mut |n| total += block_size(n));
    total
}

/// The member map's one allocation: a swiss table of `slots` usable slots
/// of one `Elem` alias each, plus a control byte per bucket and one
/// trailing group of 16.
fn map_usage(slots: usize) -> usize {
    if slots == 0 {
        return 0;
    }
    let buckets = if slots < 8 { slots + 1 } else { slots / 7 * 8 };
    let group = 16;
    block_size((buckets * size_of::<Elem>()).next_multiple_of(group) + buckets + group)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::hash::HashLimits;
    use crate::engine::list::{End, Fill};
    use crate::engine::zset::Limits;

    extern "C" {
        fn mi_good_size(size: usize) -> usize;
        fn mi_usable_size(p: *const u8) -> usize;
    }

    #[test]
    fn block_size_is_mimallocs() {
        for n in (1..=4096).chain((4096..(1 << 20)).step_by(97)) {
            // SAFETY: a pure function of its argument.
            let good = unsafe { mi_good_size(n) };
            assert_eq!(block_size(n), good, "request of {n} bytes");
        }
        let v: Vec<u8> = Vec::with_capacity(100);
        // SAFETY: the start of a live heap block.
        assert_eq!(block_size(100), unsafe { mi_usable_size(v.as_ptr()) });
        assert_eq!(block_size(0), 0);
    }

    fn db_with(key: &[u8], v: Value, ttl: Option<i64>) -> Db {
        let mut db = Db::default();
        db.set(key, v, ttl, false, 0);
        db
    }

    #[test]
    fn strings_by_encoding() {
        let small = key_usage(&db_with(b"k", Value::Str(Str::from_bytes(b"12345")), None), b"k", 5).unwrap();
        // Node plus the four-bucket first array.
        assert_eq!(small, 56 + 32);
        let emb = Value::Str(Str::from_bytes(&[b'x'; 40]));
        assert_eq!(key_usage(&db_with(b"k", emb, None), b"k", 5), Some(small + 40));
        let long = Value::Str(Str::from_bytes(&[b'x'; 1000]));
        assert_eq!(key_usage(&db_with(b"k", long, None), b"k", 5), Some(small + block_size(1000)));
        let long_key = [b'k'; 30];
        let with_ttl = key_usage(&db_with(&long_key, Value::Str(Str::Int(1)), Some(10)), &long_key, 5).unwrap();
        assert_eq!(with_ttl, small + 2 * 32 + 40 + 32, "key copy in both tables, expiry node and buckets");
        assert_eq!(key_usage(&Db::default(), b"k", 5), None);
    }

    #[test]
    fn aggregates_grow_with_their_elements_and_samples_extrapolate() {
        let lim = HashLimits { entries: 128, value: 64 };
        let mut h = Hash::Listpack(Box::new([]));
        for i in 0..100 {
            h.insert(format!("field:{i}").as_bytes(), b"value", lim);
        }
        let lp = value_usage(&Value::Hash(h.clone()), 5);
        assert!((1300..1600).contains(&lp), "{lp}");
        h.convert();
        let exact = value_usage(&Value::Hash(h.clone()), usize::MAX);
        let sampled = value_usage(&Value::Hash(h), 5);
        // Each entry: a 48-byte node and an 8-byte value block.
        assert!(exact >= 100 * 56 + 128 * 8, "{exact}");
        assert_eq!(sampled, exact, "uniform entries extrapolate exactly");

        let mut l = List::new();
        for i in 0..10_000 {
            l.push(End::Tail, format!("element:{i}").as_bytes(), Fill(-2));
        }
        let lu = value_usage(&Value::List(l), usize::MAX);
        assert!((130_000..170_000).contains(&lu), "{lu}");

        let mut z = ZSet::default();
        let zl = Limits { entries: 128, value: 64 };
        for i in 0..1000 {
            z.set(format!("m{i:05}").as_bytes(), i as f64, zl);
        }
        assert_eq!(z.encoding(), "skiplist");
        let zu = value_usage(&Value::ZSet(Box::new(z)), usize::MAX);
        // 16-byte members, 16-byte leaf items in leaves up to half empty,
        // 8-byte map slots up to 7/8 empty.
        assert!((50_000..100_000).contains(&zu), "{zu}");
    }
}
