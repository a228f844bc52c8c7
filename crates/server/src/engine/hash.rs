//! Hash values with Redis 7.0's two encodings, as `OBJECT ENCODING` shows them:
//!
//! * `listpack`: one exact-size heap buffer of field/value pairs, each string
//!   prefixed by its LEB128 length, in insertion order (new fields go to the
//!   tail, an updated field keeps its place), like Redis's listpack;
//! * `hashtable`: a [`Dict`] from field to value, once the hash outgrows
//!   `hash-max-listpack-entries` or a string exceeds `hash-max-listpack-value`.
//!
//! Conversion is one way, as in Redis.
use super::db::{Db, Entry};
use super::dict::{next_random, Dict};
use super::value::Value;
use super::EngineError;

/// The configured listpack limits (`hash-max-listpack-*`).
#[derive(Debug, Clone, Copy)]
pub struct HashLimits {
    pub entries: u64,
    pub value: u64,
}

/// A hash value.
#[derive(Debug)]
pub enum Hash {
    Listpack(Box<[u8]>),
    Table(Box<Dict<Box<[u8]>>>),
}

impl Clone for Hash {
    fn clone(&self) -> Self {
        match self {
            Hash::Listpack(b) => Hash::Listpack(b.clone()),
            Hash::Table(t) => {
                let mut d = Dict::new();
                for (k, v) in t.iter() {
                    d.insert(k, v.clone());
                }
                Hash::Table(Box::new(d))
            }
        }
    }
}

impl PartialEq for Hash {
    fn eq(&self, other: &Hash) -> bool {
        self.len() == other.len() && self.iter().all(|(f, v)| other.get(f) == Some(v))
    }
}

// ------------------------------------------------------------ packed strings

/// Append `s` with its LEB128 length prefix.
pub(crate) fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    let mut n = s.len();
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(s);
}

/// Read the length-prefixed string at `pos`: (string, position after it).
pub(crate) fn get_str(buf: &[u8], mut pos: usize) -> (&[u8], usize) {
    let (mut n, mut shift) = (0usize, 0);
    loop {
        let b = buf[pos];
        pos += 1;
        n |= ((b & 0x7f) as usize) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    (&buf[pos..pos + n], pos + n)
}

/// Iterator over the pairs of a listpack buffer.
struct Pairs<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a [u8], &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let (f, p) = get_str(self.buf, self.pos);
        let (v, p) = get_str(self.buf, p);
        self.pos = p;
        Some((f, v))
    }
}

/// Byte ranges of the pair holding `field`: (pair start, value start, pair end).
fn lp_find(buf: &[u8], field: &[u8]) -> Option<(usize, usize, usize)> {
    let mut pos = 0;
    while pos < buf.len() {
        let (f, vpos) = get_str(buf, pos);
        let (_, end) = get_str(buf, vpos);
        if f == field {
            return Some((pos, vpos, end));
        }
        pos = end;
    }
    None
}

/// Longest LEB128 length prefix of a string that fits in memory.
const VARINT_MAX: usize = 10;

/// Set `field` to `value` in a listpack buffer; true if the field is new.
fn lp_set(buf: &mut Vec<u8>, field: &[u8], value: &[u8]) -> bool {
    match lp_find(buf, field) {
        Some((_, vpos, end)) => {
            let mut enc = Vec::with_capacity(value.len() + VARINT_MAX);
            put_str(&mut enc, value);
            buf.splice(vpos..end, enc);
            false
        }
        None => {
            put_str(buf, field);
            put_str(buf, value);
            true
        }
    }
}

/// `buf` with `range` replaced by `with`, as an exact-size buffer.
fn splice(buf: &[u8], range: std::ops::Range<usize>, with: &[u8]) -> Box<[u8]> {
    let mut v = Vec::with_capacity(buf.len() - range.len() + with.len());
    v.extend_from_slice(&buf[..range.start]);
    v.extend_from_slice(with);
    v.extend_from_slice(&buf[range.end..]);
    v.into_boxed_slice()
}

// ------------------------------------------------------------ the hash

impl Default for Hash {
    fn default() -> Self {
        Hash::Listpack(Box::default())
    }
}

impl Hash {
    pub fn encoding(&self) -> &'static str {
        match self {
            Hash::Listpack(_) => "listpack",
            Hash::Table(_) => "hashtable",
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Hash::Listpack(b) => Pairs { buf: b, pos: 0 }.count(),
            Hash::Table(d) => d.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Hash::Listpack(b) => b.is_empty(),
            Hash::Table(d) => d.is_empty(),
        }
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match self {
            Hash::Listpack(b) => lp_find(b, field).map(|(_, v, _)| get_str(b, v).0),
            Hash::Table(d) => d.get(field).map(|v| &v[..]),
        }
    }

    /// Field/value pairs: insertion order for listpack, table order otherwise.
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&[u8], &[u8])> + '_> {
        match self {
            Hash::Listpack(b) => Box::new(Pairs { buf: b, pos: 0 }),
            Hash::Table(d) => Box::new(d.iter().map(|(k, v)| (k, &v[..]))),
        }
    }

    /// Convert to the hashtable encoding (no-op if already there).
    pub fn convert(&mut self) {
        if let Hash::Listpack(b) = self {
            let mut d = Dict::new();
            for (f, v) in (Pairs { buf: b, pos: 0 }) {
                d.insert(f, Box::from(v));
            }
            *self = Hash::Table(Box::new(d));
        }
    }

    /// Redis's `hashTypeTryConversion`: go to a table before inserting any
    /// string longer than `hash-max-listpack-value`.
    pub fn convert_for<'a>(&mut self, strs: impl IntoIterator<Item = &'a [u8]>, lim: HashLimits) {
        if matches!(self, Hash::Listpack(_)) && strs.into_iter().any(|s| s.len() as u64 > lim.value) {
            self.convert();
        }
    }

    /// Set `field` to `value`; true if the field is new. Converts like
    /// Redis's `hashTypeSet` (long strings first, entry count after).
    pub fn insert(&mut self, field: &[u8], value: &[u8], lim: HashLimits) -> bool {
        self.insert_many(&[(field, value)], lim) == 1
    }

    /// Set every pair in order; returns how many fields were new. A listpack
    /// is rebuilt once for the whole batch. The result equals pair-by-pair
    /// insertion: the entry count never drops during a batch, so "over the
    /// limit after some pair" is "over the limit at the end".
    pub fn insert_many(&mut self, pairs: &[(&[u8], &[u8])], lim: HashLimits) -> usize {
        self.convert_for(pairs.iter().flat_map(|&(f, v)| [f, v]), lim);
        let created = match self {
            Hash::Listpack(b) => {
                let extra: usize = pairs.iter().map(|(f, v)| f.len() + v.len() + 2 * VARINT_MAX).sum();
                let mut buf = Vec::with_capacity(b.len() + extra);
                buf.extend_from_slice(b);
                let created = pairs.iter().filter(|&&(f, v)| lp_set(&mut buf, f, v)).count();
                *b = buf.into_boxed_slice();
                created
            }
            Hash::Table(d) => pairs.iter().filter(|&&(f, v)| d.insert(f, Box::from(v)).is_none()).count(),
        };
        // Like Redis, checked after updates too (the limit may have been lowered).
        if matches!(self, Hash::Listpack(_)) && self.len() as u64 > lim.entries {
            self.convert();
        }
        created
    }

    /// Remove `field`; true if it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self {
            Hash::Listpack(b) => match lp_find(b, field) {
                Some((start, _, end)) => {
                    *b = splice(b, start..end, b"");
                    true
                }
                None => false,
            },
            Hash::Table(d) => d.remove(field).is_some(),
        }
    }

    /// The pair at position `i` of iteration order (random picks).
    pub fn nth(&self, i: usize) -> Option<(&[u8], &[u8])> {
        self.iter().nth(i)
    }

    /// One uniformly random pair.
    pub fn random_pair(&self, rng: &mut u64) -> Option<(&[u8], &[u8])> {
        match self {
            Hash::Listpack(_) => {
                let n = self.len();
                (n > 0).then(|| self.nth((next_random(rng) % n as u64) as usize)).flatten()
            }
            Hash::Table(d) => {
                let k = d.fair_random_key(rng)?;
                d.get_key_value(k).map(|(k, v)| (k, &v[..]))
            }
        }
    }

    /// One HSCAN step: listpack replies everything with cursor 0.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], &[u8])) -> u64 {
        match self {
            Hash::Listpack(_) => {
                self.iter().for_each(|(k, v)| f(k, v));
                0
            }
            Hash::Table(d) => scan_dict(d, cursor, count, |k, v| f(k, v)),
        }
    }
}

/// Scan a table like Redis: whole buckets until `count` items or a bounded
/// number of steps.
pub(crate) fn scan_dict<V>(d: &Dict<V>, mut cursor: u64, count: usize, mut f: impl FnMut(&[u8], &V)) -> u64 {
    let mut seen = 0usize;
    let mut budget = count.saturating_mul(10);
    loop {
        cursor = d.scan(cursor, |k, v| {
            seen += 1;
            f(k, v)
        });
        if cursor == 0 || budget == 0 || seen >= count {
            return cursor;
        }
        budget -= 1;
    }
}

impl Db {
    /// The hash at `key`: `Ok(None)` if missing, WRONGTYPE for other types.
    pub fn get_hash(&mut self, key: &[u8], now_ms: i64) -> Result<Option<&mut Hash>, EngineError> {
        match self.get(key, now_ms) {
            None => Ok(None),
            Some(Entry { value: Value::Hash(h), .. }) => Ok(Some(h)),
            Some(_) => Err(EngineError::WrongType),
        }
    }

    /// The hash at `key`, created empty if missing (the caller must not
    /// leave it empty).
    pub fn hash_or_create(&mut self, key: &[u8], now_ms: i64) -> Result<&mut Hash, EngineError> {
        if self.get_hash(key, now_ms)?.is_none() {
            self.set(key, Value::Hash(Hash::default()), None, false, now_ms);
        }
        Ok(self.get_hash(key, now_ms)?.expect("just created"))
    }

    /// Delete `key` if it holds an empty collection; true if deleted.
    pub fn remove_if_empty(&mut self, key: &[u8], now_ms: i64) -> bool {
        let empty = match self.peek(key, now_ms).map(|e| &e.value) {
            Some(Value::Hash(h)) => h.is_empty(),
            Some(Value::Set(s)) => s.is_empty(),
            _ => false,
        };
        empty && self.remove(key).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIM: HashLimits = HashLimits { entries: 3, value: 8 };

    #[test]
    fn listpack_keeps_insertion_order_and_updates_in_place() {
        let mut h = Hash::default();
        assert!(h.insert(b"a", b"1", LIM));
        assert!(h.insert(b"b", b"2", LIM));
        assert!(!h.insert(b"a", b"111", LIM));
        assert_eq!(h.iter().collect::<Vec<_>>(), vec![(&b"a"[..], &b"111"[..]), (b"b", b"2")]);
        assert!(h.remove(b"a"));
        assert!(!h.remove(b"a"));
        assert_eq!(h.len(), 1);
        assert_eq!(h.get(b"b"), Some(&b"2"[..]));
        assert_eq!(h.encoding(), "listpack");
    }

    #[test]
    fn converts_on_entries_and_value_length() {
        let mut h = Hash::default();
        for f in [b"a", b"b", b"c"] {
            h.insert(f, b"v", LIM);
        }
        assert_eq!(h.encoding(), "listpack");
        h.insert(b"d", b"v", LIM);
        assert_eq!(h.encoding(), "hashtable");
        assert_eq!(h.len(), 4);
        let mut h = Hash::default();
        h.insert(b"a", b"12345678", LIM);
        assert_eq!(h.encoding(), "listpack");
        h.insert(b"a", b"123456789", LIM);
        assert_eq!(h.encoding(), "hashtable");
        assert_eq!(h.get(b"a"), Some(&b"123456789"[..]));
    }

    #[test]
    fn long_lengths_round_trip() {
        let big = vec![b'x'; 300];
        let mut h = Hash::default();
        h.insert(b"f", &big, HashLimits { entries: 10, value: 1000 });
        assert_eq!(h.get(b"f"), Some(&big[..]));
        assert_eq!(h.encoding(), "listpack");
        let copy = h.clone();
        assert_eq!(copy, h);
    }
}
