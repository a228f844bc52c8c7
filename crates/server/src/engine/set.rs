//! Set values with Redis 7.0's two encodings, as `OBJECT ENCODING` shows them:
//!
//! * `intset`: sorted integers packed at the narrowest whole number of bytes
//!   that holds them all (1 to 8), in one exact-size buffer whose first byte
//!   is the width. Redis's intset uses only 2, 4 or 8 bytes; any byte width
//!   keeps the same sorted, uniform-width layout and binary search, and ten
//!   ids under 8 million take a 32-byte block instead of 48;
//! * `hashtable`: a [`Dict`] of members, once a member is not a canonical
//!   integer or the set outgrows `set-max-intset-entries`.
//!
//! Redis 7.0 has no listpack sets (7.2 added them). Conversion is one way.
use super::db::{Db, Entry};
use super::dict::{next_random, Dict};
use super::numeric::{format_i64, parse_i64};
use super::value::Value;
use super::EngineError;

/// Sorted distinct integers: `[width, v0, v1, ...]` little-endian; empty when
/// the set is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IntSet(Box<[u8]>);

/// Bytes needed to hold `v` in two's complement (1 to 8).
fn width_for(v: i64) -> u8 {
    // Significant bits, plus one for the sign.
    let magnitude = if v < 0 { !v } else { v };
    let bits = 65 - magnitude.leading_zeros();
    bits.div_ceil(8) as u8
}

impl IntSet {
    fn width(&self) -> usize {
        self.0.first().map_or(1, |&w| w as usize)
    }

    pub fn len(&self) -> usize {
        self.0.len().saturating_sub(1) / self.width()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Size of its one buffer (memory accounting).
    pub(crate) fn byte_len(&self) -> usize {
        self.0.len()
    }

    pub fn get(&self, i: usize) -> i64 {
        let w = self.width();
        let b = &self.0[1 + i * w..1 + (i + 1) * w];
        match w {
            1 => b[0] as i8 as i64,
            2 => i16::from_le_bytes([b[0], b[1]]) as i64,
            4 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
            8 => i64::from_le_bytes(b.try_into().expect("8 bytes")),
            _ => {
                // Sign-extend the w low bytes.
                let mut full = [0u8; 8];
                full[..w].copy_from_slice(b);
                let shift = 64 - 8 * w as u32;
                (i64::from_le_bytes(full) << shift) >> shift
            }
        }
    }

    /// Binary search, like `slice::binary_search`.
    fn search(&self, v: i64) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(&v) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    pub fn contains(&self, v: i64) -> bool {
        self.search(v).is_ok()
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    fn rebuild(values: impl ExactSizeIterator<Item = i64>, width: u8) -> IntSet {
        let mut buf = Vec::with_capacity(1 + values.len() * width as usize);
        buf.push(width);
        for v in values {
            buf.extend_from_slice(&v.to_le_bytes()[..width as usize]);
        }
        IntSet(buf.into_boxed_slice())
    }

    /// Insert `v`; false if already present.
    pub fn insert(&mut self, v: i64) -> bool {
        let Err(at) = self.search(v) else { return false };
        let width = (self.width() as u8).max(width_for(v));
        let n = self.len();
        let vals = (0..=n).map(|i| match i.cmp(&at) {
            std::cmp::Ordering::Less => self.get(i),
            std::cmp::Ordering::Equal => v,
            std::cmp::Ordering::Greater => self.get(i - 1),
        });
        *self = IntSet::rebuild(vals.collect::<Vec<_>>().into_iter(), width);
        true
    }

    /// Remove `v`; false if absent. The width never shrinks (as in Redis).
    pub fn remove(&mut self, v: i64) -> bool {
        let Ok(at) = self.search(v) else { return false };
        if self.len() == 1 {
            self.0 = Box::default();
            return true;
        }
        let w = self.width();
        let mut buf = self.0.to_vec();
        buf.drain(1 + at * w..1 + (at + 1) * w);
        self.0 = buf.into_boxed_slice();
        true
    }
}

/// A set value.
#[derive(Debug)]
pub enum Set {
    Ints(IntSet),
    Table(Box<Dict<()>>),
}

impl Clone for Set {
    fn clone(&self) -> Self {
        match self {
            Set::Ints(i) => Set::Ints(i.clone()),
            Set::Table(t) => Set::Table(Box::new(table_of(t.iter().map(|(k, _)| k.to_vec())))),
        }
    }
}

impl PartialEq for Set {
    fn eq(&self, other: &Set) -> bool {
        self.len() == other.len() && self.members().iter().all(|m| other.contains(m))
    }
}

fn table_of(members: impl Iterator<Item = Vec<u8>>) -> Dict<()> {
    let mut d = Dict::new();
    for m in members {
        d.insert_owned(m.into_boxed_slice(), ());
    }
    d
}

fn int_bytes(v: i64) -> Vec<u8> {
    let mut s = Vec::with_capacity(20);
    format_i64(&mut s, v);
    s
}

impl Set {
    /// An empty set of the encoding Redis's `setTypeCreate` picks for a first
    /// member `m`.
    pub fn for_member(m: &[u8]) -> Set {
        match parse_i64(m) {
            Some(_) => Set::Ints(IntSet::default()),
            None => Set::Table(Box::default()),
        }
    }

    /// An empty intset (the start of SUNIONSTORE & co. results).
    pub fn new_intset() -> Set {
        Set::Ints(IntSet::default())
    }

    pub fn encoding(&self) -> &'static str {
        match self {
            Set::Ints(_) => "intset",
            Set::Table(_) => "hashtable",
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Set::Ints(i) => i.len(),
            Set::Table(d) => d.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, m: &[u8]) -> bool {
        match self {
            Set::Ints(i) => parse_i64(m).is_some_and(|v| i.contains(v)),
            Set::Table(d) => d.contains_key(m),
        }
    }

    fn convert(&mut self) {
        if let Set::Ints(i) = self {
            let d = table_of(i.iter().map(int_bytes));
            *self = Set::Table(Box::new(d));
        }
    }

    /// Add `m`; true if new. Converts like Redis's `setTypeAdd`.
    pub fn insert(&mut self, m: &[u8], max_intset: u64) -> bool {
        if let Set::Ints(i) = self {
            match parse_i64(m) {
                Some(v) => {
                    if !i.insert(v) {
                        return false;
                    }
                    if i.len() as u64 > max_intset {
                        self.convert();
                    }
                    return true;
                }
                None => self.convert(),
            }
        }
        match self {
            Set::Table(d) => d.insert(m, ()).is_none(),
            Set::Ints(_) => unreachable!("converted above"),
        }
    }

    /// Add every member (SADD); returns how many were new. An all-integer
    /// batch that stays within `max_intset` rebuilds the intset once.
    pub fn insert_many(&mut self, ms: &[&[u8]], max_intset: u64) -> usize {
        if let Set::Ints(i) = self {
            if let Some(mut all) = ms.iter().map(|m| parse_i64(m)).collect::<Option<Vec<i64>>>() {
                let before = i.len();
                all.extend(i.iter());
                all.sort_unstable();
                all.dedup();
                if all.len() as u64 <= max_intset {
                    let width = all.iter().map(|&v| width_for(v)).max().unwrap_or(1).max(i.width() as u8);
                    let added = all.len() - before;
                    if added > 0 {
                        *i = IntSet::rebuild(all.into_iter(), width);
                    }
                    return added;
                }
            }
        }
        ms.iter().filter(|m| self.insert(m, max_intset)).count()
    }

    /// Remove `m`; true if it was a member.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match self {
            Set::Ints(i) => parse_i64(m).is_some_and(|v| i.remove(v)),
            Set::Table(d) => {
                let hit = d.remove(m).is_some();
                d.try_shrink();
                hit
            }
        }
    }

    /// Members in iteration order (ascending for intsets).
    pub fn members(&self) -> Vec<Vec<u8>> {
        match self {
            Set::Ints(i) => i.iter().map(int_bytes).collect(),
            Set::Table(d) => d.iter().map(|(k, _)| k.to_vec()).collect(),
        }
    }

    /// One uniformly random member, if any.
    pub fn random(&self, rng: &mut u64) -> Option<Vec<u8>> {
        match self {
            Set::Ints(i) if i.is_empty() => None,
            Set::Ints(i) => Some(int_bytes(i.get((next_random(rng) % i.len() as u64) as usize))),
            Set::Table(d) => d.fair_random_key(rng).map(<[u8]>::to_vec),
        }
    }

    /// `count` distinct random members (all of them if `count >= len`).
    /// Small samples of big sets draw and reject duplicates instead of
    /// copying the whole set, like Redis's SRANDMEMBER case 4.
    pub fn random_distinct(&self, count: usize, rng: &mut u64) -> Vec<Vec<u8>> {
        let n = self.len();
        if count.saturating_mul(3) >= n {
            let mut all = self.members();
            for i in 0..count.min(n) {
                let j = i + (next_random(rng) % (n - i) as u64) as usize;
                all.swap(i, j);
            }
            all.truncate(count);
            return all;
        }
        let mut seen = std::collections::HashSet::with_capacity(count);
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            let m = self.random(rng).expect("count < len, so the set is not empty");
            if seen.insert(m.clone()) {
                out.push(m);
            }
        }
        out
    }

    /// Call `f` on every member in iteration order, without copying the set.
    pub fn for_each(&self, mut f: impl FnMut(&[u8])) {
        match self {
            Set::Ints(i) => i.iter().for_each(|v| f(&int_bytes(v))),
            Set::Table(d) => d.iter().for_each(|(k, _)| f(k)),
        }
    }

    /// Remove and return a random member.
    pub fn pop(&mut self, rng: &mut u64) -> Option<Vec<u8>> {
        let m = self.random(rng)?;
        self.remove(&m);
        Some(m)
    }

    /// One SSCAN step: intsets reply everything with cursor 0.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8])) -> u64 {
        match self {
            Set::Ints(i) => {
                i.iter().for_each(|v| f(&int_bytes(v)));
                0
            }
            Set::Table(d) => super::hash::scan_dict(d, cursor, count, |k, _| f(k)),
        }
    }
}

impl Db {
    /// The set at `key`: `Ok(None)` if missing, WRONGTYPE for other types.
    pub fn get_set(&mut self, key: &[u8], now_ms: i64) -> Result<Option<&mut Set>, EngineError> {
        match self.get(key, now_ms) {
            None => Ok(None),
            Some(Entry { value: Value::Set(s), .. }) => Ok(Some(s)),
            Some(_) => Err(EngineError::WrongType),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intset_widths_and_order() {
        let mut i = IntSet::default();
        for v in [5, -3, 100, 5] {
            i.insert(v);
        }
        assert_eq!(i.iter().collect::<Vec<_>>(), vec![-3, 5, 100]);
        assert_eq!(i.0.len(), 1 + 3);
        i.insert(70_000);
        assert_eq!(i.0.len(), 1 + 4 * 3);
        i.insert(i64::MIN);
        i.insert(i64::MAX);
        assert_eq!(i.iter().collect::<Vec<_>>(), vec![i64::MIN, -3, 5, 100, 70_000, i64::MAX]);
        assert!(i.remove(5));
        assert!(!i.remove(5));
        assert!(i.contains(i64::MAX) && !i.contains(6));
        assert_eq!(i.len(), 5);
    }

    #[test]
    fn width_is_the_fewest_bytes_that_hold_the_value() {
        for w in 1..=8u32 {
            let (lo, hi) = (-1i64 << (8 * w - 1), ((1u64 << (8 * w - 1)) - 1) as i64);
            assert_eq!((width_for(lo), width_for(hi)), (w as u8, w as u8), "width {w}");
            if w < 8 {
                assert_eq!((width_for(lo - 1), width_for(hi + 1)), (w as u8 + 1, w as u8 + 1), "width {w}");
            }
        }
        assert_eq!(width_for(0), 1);
    }

    #[test]
    fn intset_matches_a_sorted_set_at_every_width() {
        let mut rng = 12345u64;
        for w in 1..=8u32 {
            let (mut ints, mut model) = (IntSet::default(), std::collections::BTreeSet::new());
            for _ in 0..200 {
                // Values of up to w bytes, both signs, so every width and
                // every widening step is exercised.
                let r = next_random(&mut rng) as i64;
                let v = if w == 8 { r } else { r >> (64 - 8 * w) };
                assert_eq!(ints.insert(v), model.insert(v));
                if next_random(&mut rng).is_multiple_of(4) {
                    let gone = *model.iter().next().expect("just inserted");
                    assert!(ints.remove(gone) && model.remove(&gone));
                }
            }
            assert_eq!(ints.iter().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>(), "width {w}");
            assert!(model.iter().all(|&v| ints.contains(v)));
            assert!(ints.width() <= w as usize);
        }
    }

    #[test]
    fn set_conversions_follow_redis() {
        let mut s = Set::for_member(b"1");
        assert!(s.insert(b"1", 2));
        assert!(s.insert(b"2", 2));
        assert!(!s.insert(b"2", 2));
        assert_eq!(s.encoding(), "intset");
        assert!(!s.contains(b"01"));
        s.insert(b"3", 2);
        assert_eq!(s.encoding(), "hashtable");
        let mut s = Set::for_member(b"1");
        s.insert(b"1", 512);
        s.insert(b"-0", 512);
        assert_eq!(s.encoding(), "hashtable");
        assert!(s.contains(b"1") && s.contains(b"-0"));
        assert_eq!(Set::for_member(b"x").encoding(), "hashtable");
    }

    #[test]
    fn batch_insert_matches_one_by_one() {
        let batches: [&[&[u8]]; 4] = [&[b"3", b"1", b"3"], &[b"70000", b"-2"], &[b"5", b"6", b"7"], &[b"x", b"9"]];
        for max in [0, 2, 5, 6, 512] {
            let (mut a, mut b) = (Set::for_member(b"1"), Set::for_member(b"1"));
            for batch in batches {
                let n = a.insert_many(batch, max);
                assert_eq!(n, batch.iter().filter(|m| b.insert(m, max)).count());
                assert_eq!((a.encoding(), a.members().len()), (b.encoding(), b.members().len()), "max {max}");
                assert!(b.members().iter().all(|m| a.contains(m)));
            }
        }
    }

    #[test]
    fn values_stay_small() {
        // Adding hashes and sets must not grow every keyspace entry.
        assert_eq!(std::mem::size_of::<Set>(), 16);
        assert_eq!(std::mem::size_of::<crate::engine::Hash>(), 16);
        assert_eq!(std::mem::size_of::<Value>(), 24);
    }

    #[test]
    fn pop_drains_set() {
        let mut s = Set::for_member(b"a");
        for m in [&b"a"[..], b"b", b"c"] {
            s.insert(m, 512);
        }
        let mut rng = 7;
        let mut got: Vec<_> = std::iter::from_fn(|| s.pop(&mut rng)).collect();
        got.sort();
        assert_eq!(got, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        assert!(s.is_empty());
    }
}
