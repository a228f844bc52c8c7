//! Sorted sets. Small sets are one sorted vector of items (Redis's
//! "listpack" encoding: linear member lookup, cheap for ≤ 128 short members);
//! large ones ("skiplist") pair the order-statistic [`ZTree`] with a
//! member→element hash set (SipHash with a random key, as for user keys).
//! Both share one interface ordered by (score, member), ranks 0-based.
use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use super::db::{Db, Entry};
use super::siphash::KeyedSip;
use super::value::Value;
use super::ztree::{key_cmp, Elem, Item, ZTree};
use super::EngineError;

/// A map key aliasing an [`Elem`] owned by the tree, hashed by member.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key(Elem);

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.member().hash(state)
    }
}
impl Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        self.0.member()
    }
}

/// The large encoding.
#[derive(Default)]
pub struct Big {
    tree: ZTree,
    map: HashSet<Key, KeyedSip>,
}

/// A sorted set value.
pub enum ZSet {
    Small(Vec<Item>),
    Big(Big),
}

/// The listpack limits (`zset-max-listpack-entries` / `-value`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub entries: usize,
    pub value: usize,
}

/// What an insert-or-update did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Updated,
    Same,
}

impl Default for ZSet {
    fn default() -> Self {
        ZSet::Small(Vec::new())
    }
}

impl Drop for ZSet {
    fn drop(&mut self) {
        match self {
            ZSet::Small(v) => v.drain(..).for_each(|it| it.elem.free()),
            ZSet::Big(b) => {
                b.map.clear();
                b.tree.for_each(&mut |it| it.elem.free());
            }
        }
    }
}

impl Clone for ZSet {
    fn clone(&self) -> Self {
        let mut out = match self {
            ZSet::Small(v) => ZSet::Small(Vec::with_capacity(v.len())),
            ZSet::Big(_) => ZSet::Big(Big::default()),
        };
        self.for_range(0, self.len(), false, &mut |it| {
            out.push_sorted(it.score, it.member());
            true
        });
        out
    }
}

impl PartialEq for ZSet {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.items() == other.items()
    }
}

impl std::fmt::Debug for ZSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZSet({} items, {})", self.len(), self.encoding())
    }
}

fn pos_small(v: &[Item], member: &[u8]) -> Option<usize> {
    v.iter().position(|it| it.member() == member)
}

impl ZSet {
    /// An empty set in the encoding Redis would pick for `len` members of
    /// which the longest has `maxlen` bytes.
    pub fn for_size(len: usize, maxlen: usize, lim: Limits) -> ZSet {
        if len > lim.entries || maxlen > lim.value {
            ZSet::Big(Big::default())
        } else {
            ZSet::Small(Vec::with_capacity(len))
        }
    }

    /// The large encoding's tree and the slot capacity of its member map
    /// (memory accounting); None for the small encoding.
    pub(crate) fn big_parts(&self) -> Option<(&ZTree, usize)> {
        match self {
            ZSet::Small(_) => None,
            ZSet::Big(b) => Some((&b.tree, b.map.capacity())),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            ZSet::Small(v) => v.len(),
            ZSet::Big(b) => b.tree.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding(&self) -> &'static str {
        match self {
            ZSet::Small(_) => "listpack",
            ZSet::Big(_) => "skiplist",
        }
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            ZSet::Small(v) => pos_small(v, member).map(|i| v[i].score),
            ZSet::Big(b) => b.map.get(member).map(|k| k.0.score()),
        }
    }

    /// Convert to the large encoding.
    fn upgrade(&mut self) {
        if let ZSet::Small(v) = self {
            let items = std::mem::take(v);
            let mut big = Big::default();
            big.map.reserve(items.len());
            for it in items {
                big.map.insert(Key(it.elem));
                big.tree.insert(it);
            }
            *self = ZSet::Big(big);
        }
    }

    /// Append a member known to sort after every present one and be new
    /// (building results in order).
    pub fn push_sorted(&mut self, score: f64, member: &[u8]) {
        let score = self.stored(score);
        let it = Item { score, elem: Elem::new(score, member) };
        match self {
            ZSet::Small(v) => v.push(it),
            ZSet::Big(b) => {
                b.map.insert(Key(it.elem));
                b.tree.insert(it);
            }
        }
    }

    /// Set `member`'s score, adding it if missing; converts encodings as
    /// Redis does on insert.
    pub fn set(&mut self, member: &[u8], score: f64, lim: Limits) -> Change {
        let old = self.score(member);
        match old {
            Some(s) if s == score => return Change::Same,
            Some(s) => {
                let it = self.take(member, s);
                it.elem.set_score(score);
                self.put(Item { score, elem: it.elem });
                return Change::Updated;
            }
            None => {}
        }
        if matches!(self, ZSet::Small(v) if v.len() + 1 > lim.entries || member.len() > lim.value) {
            self.upgrade();
        }
        self.put(Item { score, elem: Elem::new(score, member) });
        Change::Added
    }

    /// Listpacks keep integral scores as integers, so -0 comes back as 0.
    fn stored(&self, score: f64) -> f64 {
        if matches!(self, ZSet::Small(_)) && score == 0.0 {
            0.0
        } else {
            score
        }
    }

    fn put(&mut self, mut it: Item) {
        it.score = self.stored(it.score);
        it.elem.set_score(it.score);
        match self {
            ZSet::Small(v) => {
                let pos = v.partition_point(|x| key_cmp(it.score, it.member(), x).is_gt());
                v.insert(pos, it);
            }
            ZSet::Big(b) => {
                b.map.insert(Key(it.elem));
                b.tree.insert(it);
            }
        }
    }

    /// Unlink a present member (score `s`), returning its item unfreed.
    fn take(&mut self, member: &[u8], s: f64) -> Item {
        match self {
            ZSet::Small(v) => v.remove(pos_small(v, member).expect("present")),
            ZSet::Big(b) => {
                b.map.remove(member);
                b.tree.remove(s, member).expect("present")
            }
        }
    }

    /// Remove `member`; true if it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        let Some(s) = self.score(member) else { return false };
        self.take(member, s).elem.free();
        true
    }

    /// 0-based rank (ascending) and score of `member`.
    pub fn rank(&self, member: &[u8]) -> Option<(usize, f64)> {
        match self {
            ZSet::Small(v) => pos_small(v, member).map(|i| (i, v[i].score)),
            ZSet::Big(b) => {
                let s = b.map.get(member)?.0.score();
                b.tree.rank(s, member).map(|r| (r, s))
            }
        }
    }

    /// The item at rank `i` (< len).
    pub fn get(&self, i: usize) -> Item {
        match self {
            ZSet::Small(v) => v[i],
            ZSet::Big(b) => b.tree.get(i),
        }
    }

    /// Items before the first for which `before` is false (a prefix predicate).
    pub fn count_before(&self, before: impl Fn(&Item) -> bool) -> usize {
        match self {
            ZSet::Small(v) => v.partition_point(before),
            ZSet::Big(b) => b.tree.count_before(before),
        }
    }

    /// Visit ranks `start..end` (ascending, or descending with `rev`) until
    /// `f` returns false.
    pub fn for_range(&self, start: usize, end: usize, rev: bool, f: &mut dyn FnMut(&Item) -> bool) {
        let end = end.min(self.len());
        match self {
            ZSet::Small(v) if start < end => {
                let s = &v[start..end];
                if rev {
                    s.iter().rev().all(f);
                } else {
                    s.iter().all(f);
                }
            }
            ZSet::Small(_) => {}
            ZSet::Big(b) => b.tree.for_range(start, end, rev, f),
        }
    }

    /// Copies of the items in ranks `start..end` (descending with `rev`).
    pub fn range(&self, start: usize, end: usize, rev: bool) -> Vec<(f64, Vec<u8>)> {
        let mut out = Vec::with_capacity(end.saturating_sub(start).min(1 << 16));
        self.for_range(start, end, rev, &mut |it| {
            out.push((it.score, it.member().to_vec()));
            true
        });
        out
    }

    /// All items (copies), ascending.
    pub fn items(&self) -> Vec<(f64, Vec<u8>)> {
        self.range(0, self.len(), false)
    }

    /// Remove ranks `start..end`; returns how many went.
    pub fn remove_range(&mut self, start: usize, end: usize) -> usize {
        let end = end.min(self.len());
        if start >= end {
            return 0;
        }
        match self {
            ZSet::Small(v) => v.drain(start..end).for_each(|it| it.elem.free()),
            ZSet::Big(b) => {
                let mut victims = Vec::with_capacity(end - start);
                b.tree.for_range(start, end, false, &mut |it| {
                    victims.push(*it);
                    true
                });
                for it in victims {
                    b.map.remove(it.member());
                    b.tree.remove(it.score, it.member());
                    it.elem.free();
                }
            }
        }
        end - start
    }

    /// Re-pick the encoding for a freshly built result (store commands).
    pub fn shrink_if_fits(&mut self, lim: Limits) {
        if let ZSet::Big(b) = self {
            let maxlen = b.map.iter().map(|k| k.0.member().len()).max().unwrap_or(0);
            if b.tree.len() <= lim.entries && maxlen <= lim.value {
                let mut v = Vec::with_capacity(b.tree.len());
                b.tree.for_each(&mut |it| v.push(*it));
                // The items move into the vector: forget them in the old set.
                let mut old = std::mem::replace(self, ZSet::Small(v));
                if let ZSet::Big(b) = &mut old {
                    b.map.clear();
                    b.tree = ZTree::default();
                }
            }
        }
    }
}

impl Db {
    /// The sorted set at `key`: `Ok(None)` if missing, WRONGTYPE otherwise.
    pub fn get_zset(&mut self, key: &[u8], now_ms: i64) -> Result<Option<&mut ZSet>, EngineError> {
        match self.get(key, now_ms) {
            None => Ok(None),
            Some(Entry { value: Value::ZSet(z), .. }) => Ok(Some(z)),
            Some(_) => Err(EngineError::WrongType),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIM: Limits = Limits { entries: 4, value: 8 };

    #[test]
    fn small_until_limits_then_big_with_the_same_answers() {
        let mut z = ZSet::default();
        for (i, m) in ["d", "c", "b", "a"].iter().enumerate() {
            assert_eq!(z.set(m.as_bytes(), i as f64, LIM), Change::Added);
        }
        assert_eq!(z.encoding(), "listpack");
        assert_eq!(z.set(b"a", 3.0, LIM), Change::Same);
        assert_eq!(z.set(b"a", -1.0, LIM), Change::Updated);
        assert_eq!(z.rank(b"a"), Some((0, -1.0)));
        let small = z.items();
        z.set(b"e", 10.0, LIM);
        assert_eq!(z.encoding(), "skiplist");
        assert_eq!(&z.items()[..4], &small[..]);
        assert_eq!(z.rank(b"e"), Some((4, 10.0)));
        let c = z.clone();
        assert_eq!(c, z);
        assert!(z.remove(b"e"));
        assert!(!z.remove(b"e"));
        assert_eq!(z.remove_range(0, 2), 2);
        assert_eq!(z.len(), 2);
        z.shrink_if_fits(LIM);
        assert_eq!(z.encoding(), "listpack");
        assert_eq!(z.items(), vec![(1.0, b"c".to_vec()), (2.0, b"b".to_vec())]);
        let mut long = ZSet::default();
        long.set(b"123456789", 1.0, LIM);
        assert_eq!(long.encoding(), "skiplist");
    }
}
