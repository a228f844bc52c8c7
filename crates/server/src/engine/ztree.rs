//! The ordered structure behind large sorted sets: a B+tree ordered by
//! (score, member) whose inner nodes keep each child's element count and
//! largest item, so rank, select-by-index and range counting are O(log n).
//!
//! Members live in [`Elem`]s: one thin-pointer allocation holding the score
//! and the member bytes. Leaves hold `(score, Elem)` items (the score inline
//! so most comparisons never touch the allocation); the member→score map of
//! [`super::zset`] holds aliases of the same `Elem`s, so every member is
//! stored exactly once. The tree owns the allocations; whoever removes an
//! item from it frees the `Elem` (or hands it on).
use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cmp::Ordering;
use std::ptr::NonNull;

/// Most items in a leaf / children of an inner node.
const MAX: usize = 64;
/// Below this a node tries to merge with a neighbour.
const MIN: usize = MAX / 4;

/// One member with its score: `[f64 score][len: 1 byte, or 0xFF + u64][bytes]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Elem(NonNull<u8>);

// SAFETY: an Elem is uniquely owned data (like a Box); aliases only exist
// inside the one ZSet that owns it and are never used across threads apart
// from moving the whole set (FLUSHALL ASYNC).
unsafe impl Send for Elem {}
unsafe impl Sync for Elem {}

impl Elem {
    fn layout(len: usize) -> (Layout, usize) {
        let hdr = if len < 255 { 9 } else { 17 };
        (Layout::from_size_align(hdr + len, 8).expect("member size"), hdr)
    }

    /// Allocate a member with its score.
    pub fn new(score: f64, member: &[u8]) -> Elem {
        let (layout, hdr) = Elem::layout(member.len());
        // SAFETY: layout has non-zero size; all writes stay inside it.
        unsafe {
            let p = alloc(layout);
            let Some(p) = NonNull::new(p) else { handle_alloc_error(layout) };
            p.as_ptr().cast::<f64>().write(score);
            if hdr == 9 {
                *p.as_ptr().add(8) = member.len() as u8;
            } else {
                *p.as_ptr().add(8) = 0xFF;
                p.as_ptr().add(9).cast::<u64>().write_unaligned(member.len() as u64);
            }
            std::ptr::copy_nonoverlapping(member.as_ptr(), p.as_ptr().add(hdr), member.len());
            Elem(p)
        }
    }

    fn len_hdr(&self) -> (usize, usize) {
        // SAFETY: the header was written by `new` and the Elem is live.
        unsafe {
            let b = *self.0.as_ptr().add(8);
            if b != 0xFF {
                (b as usize, 9)
            } else {
                (self.0.as_ptr().add(9).cast::<u64>().read_unaligned() as usize, 17)
            }
        }
    }

    pub fn score(&self) -> f64 {
        // SAFETY: offset 0 holds the f64, aligned to 8.
        unsafe { self.0.as_ptr().cast::<f64>().read() }
    }

    pub fn set_score(&self, s: f64) {
        // SAFETY: as in `score`; callers hold the owning set mutably.
        unsafe { self.0.as_ptr().cast::<f64>().write(s) }
    }

    pub fn member<'a>(&self) -> &'a [u8] {
        let (len, hdr) = self.len_hdr();
        // SAFETY: `len` bytes follow the header. The lifetime is the owning
        // set's borrow in every caller (items are only read through `&ZSet`).
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().add(hdr), len) }
    }

    /// Release the allocation. The Elem and all its aliases are dead after.
    pub fn free(self) {
        let (len, _) = self.len_hdr();
        // SAFETY: allocated by `new` with the same layout.
        unsafe { dealloc(self.0.as_ptr(), Elem::layout(len).0) }
    }
}

/// A leaf item: the score inline plus the member allocation.
#[derive(Clone, Copy)]
pub struct Item {
    pub score: f64,
    pub elem: Elem,
}

impl Item {
    pub fn member<'a>(&self) -> &'a [u8] {
        self.elem.member()
    }
}

/// Compare the key (score, member) with an item. Scores are never NaN.
pub fn key_cmp(score: f64, member: &[u8], it: &Item) -> Ordering {
    match score.partial_cmp(&it.score) {
        Some(Ordering::Equal) | None => member.cmp(it.member()),
        Some(o) => o,
    }
}

enum Node {
    Leaf(Vec<Item>),
    Inner(Inner),
}

struct Inner {
    kids: Vec<Node>,
    counts: Vec<usize>,
    maxes: Vec<Item>,
}

impl Node {
    fn width(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(i) => i.kids.len(),
        }
    }
    fn count(&self) -> usize {
        match self {
            Node::Leaf(v) => v.len(),
            Node::Inner(i) => i.counts.iter().sum(),
        }
    }
    fn max(&self) -> Item {
        match self {
            Node::Leaf(v) => *v.last().expect("non-empty leaf"),
            Node::Inner(i) => *i.maxes.last().expect("non-empty inner"),
        }
    }
}

impl Inner {
    /// The child whose range holds `key` (the last child for keys past the end).
    fn route(&self, score: f64, member: &[u8]) -> usize {
        let i = self.maxes.partition_point(|m| key_cmp(score, member, m) == Ordering::Greater);
        i.min(self.kids.len() - 1)
    }

    fn refresh(&mut self, i: usize) {
        self.counts[i] = self.kids[i].count();
        self.maxes[i] = self.kids[i].max();
    }

    /// Merge child `i` with a neighbour when it has become small.
    fn rebalance(&mut self, i: usize) {
        if self.kids[i].width() >= MIN || self.kids.len() < 2 {
            return;
        }
        let (l, r) = if i + 1 < self.kids.len() { (i, i + 1) } else { (i - 1, i) };
        if self.kids[l].width() + self.kids[r].width() > MAX {
            return;
        }
        let right = self.kids.remove(r);
        self.counts.remove(r);
        self.maxes.remove(r);
        match (&mut self.kids[l], right) {
            (Node::Leaf(a), Node::Leaf(mut b)) => a.append(&mut b),
            (Node::Inner(a), Node::Inner(mut b)) => {
                a.kids.append(&mut b.kids);
                a.counts.append(&mut b.counts);
                a.maxes.append(&mut b.maxes);
            }
            _ => unreachable!("siblings have the same height"),
        }
        self.refresh(l);
    }
}

/// The tree. Empty trees are a single empty leaf.
pub struct ZTree {
    root: Node,
    len: usize,
}

impl Default for ZTree {
    fn default() -> Self {
        ZTree { root: Node::Leaf(Vec::new()), len: 0 }
    }
}

fn insert_rec(node: &mut Node, it: Item) -> Option<Node> {
    match node {
        Node::Leaf(v) => {
            let pos = v.partition_point(|x| key_cmp(it.score, it.member(), x) == Ordering::Greater);
            v.insert(pos, it);
            (v.len() > MAX).then(|| Node::Leaf(v.split_off(v.len() / 2)))
        }
        Node::Inner(inn) => {
            let i = inn.route(it.score, it.member());
            let split = insert_rec(&mut inn.kids[i], it);
            if let Some(right) = split {
                inn.refresh(i);
                inn.counts.insert(i + 1, right.count());
                inn.maxes.insert(i + 1, right.max());
                inn.kids.insert(i + 1, right);
            } else {
                inn.counts[i] += 1;
                if key_cmp(it.score, it.member(), &inn.maxes[i]) == Ordering::Greater {
                    inn.maxes[i] = it;
                }
            }
            if inn.kids.len() <= MAX {
                return None;
            }
            let h = inn.kids.len() / 2;
            let kids = inn.kids.split_off(h);
            let counts = inn.counts.split_off(h);
            let maxes = inn.maxes.split_off(h);
            Some(Node::Inner(Inner { kids, counts, maxes }))
        }
    }
}

fn remove_rec(node: &mut Node, score: f64, member: &[u8]) -> Option<Item> {
    match node {
        Node::Leaf(v) => {
            let pos = v.partition_point(|x| key_cmp(score, member, x) == Ordering::Greater);
            (pos < v.len() && key_cmp(score, member, &v[pos]) == Ordering::Equal).then(|| v.remove(pos))
        }
        Node::Inner(inn) => {
            let i = inn.route(score, member);
            let got = remove_rec(&mut inn.kids[i], score, member)?;
            if inn.kids[i].width() == 0 {
                inn.kids.remove(i);
                inn.counts.remove(i);
                inn.maxes.remove(i);
            } else {
                inn.counts[i] -= 1;
                if inn.maxes[i].elem == got.elem {
                    inn.maxes[i] = inn.kids[i].max();
                }
                inn.rebalance(i);
            }
            Some(got)
        }
    }
}

impl ZTree {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Insert an item whose member is not in the tree.
    pub fn insert(&mut self, it: Item) {
        self.len += 1;
        if let Some(right) = insert_rec(&mut self.root, it) {
            let left = std::mem::replace(&mut self.root, Node::Leaf(Vec::new()));
            let (counts, maxes) = (vec![left.count(), right.count()], vec![left.max(), right.max()]);
            self.root = Node::Inner(Inner { kids: vec![left, right], counts, maxes });
        }
    }

    /// Remove the item with this key, returning it (its Elem is not freed).
    pub fn remove(&mut self, score: f64, member: &[u8]) -> Option<Item> {
        let got = remove_rec(&mut self.root, score, member)?;
        self.len -= 1;
        loop {
            match &mut self.root {
                Node::Inner(inn) if inn.kids.len() == 1 => self.root = inn.kids.pop().expect("one child"),
                Node::Inner(inn) if inn.kids.is_empty() => self.root = Node::Leaf(Vec::new()),
                _ => break,
            }
        }
        Some(got)
    }

    /// Number of leading items for which `before` holds (`before` must be
    /// true on a prefix of the order and false after it).
    pub fn count_before(&self, before: impl Fn(&Item) -> bool) -> usize {
        let mut node = &self.root;
        let mut acc = 0;
        loop {
            match node {
                Node::Leaf(v) => return acc + v.partition_point(&before),
                Node::Inner(inn) => {
                    let i = inn.maxes.partition_point(&before);
                    if i == inn.kids.len() {
                        return acc + inn.counts.iter().sum::<usize>();
                    }
                    acc += inn.counts[..i].iter().sum::<usize>();
                    node = &inn.kids[i];
                }
            }
        }
    }

    /// 0-based rank of the item with this key, if present.
    pub fn rank(&self, score: f64, member: &[u8]) -> Option<usize> {
        let r = self.count_before(|x| key_cmp(score, member, x) == Ordering::Greater);
        (r < self.len && key_cmp(score, member, &self.get(r)) == Ordering::Equal).then_some(r)
    }

    /// The item at 0-based rank `i` (< len).
    pub fn get(&self, mut i: usize) -> Item {
        let mut node = &self.root;
        loop {
            match node {
                Node::Leaf(v) => return v[i],
                Node::Inner(inn) => {
                    let mut k = 0;
                    while i >= inn.counts[k] {
                        i -= inn.counts[k];
                        k += 1;
                    }
                    node = &inn.kids[k];
                }
            }
        }
    }

    /// Visit items with ranks in `start..end`, in order or reversed; stop
    /// early when `f` returns false.
    pub fn for_range(&self, start: usize, end: usize, rev: bool, f: &mut dyn FnMut(&Item) -> bool) {
        if start < end {
            visit(&self.root, start, end, rev, f);
        }
    }

    /// Every item in order (for dropping and cloning).
    pub fn for_each(&self, f: &mut dyn FnMut(&Item)) {
        self.for_range(0, self.len, false, &mut |it| {
            f(it);
            true
        });
    }

    /// Calls `f` with the requested size of every heap block the tree's
    /// nodes own (not the members' `Elem`s), for memory accounting.
    pub(crate) fn node_blocks(&self, f: &mut dyn FnMut(usize)) {
        fn walk(node: &Node, f: &mut dyn FnMut(usize)) {
            match node {
                Node::Leaf(v) => f(v.capacity() * std::mem::size_of::<Item>()),
                Node::Inner(inn) => {
                    f(inn.kids.capacity() * std::mem::size_of::<Node>());
                    f(inn.counts.capacity() * std::mem::size_of::<usize>());
                    f(inn.maxes.capacity() * std::mem::size_of::<Item>());
                    inn.kids.iter().for_each(|k| walk(k, f));
                }
            }
        }
        walk(&self.root, f);
    }
}

fn visit(node: &Node, start: usize, end: usize, rev: bool, f: &mut dyn FnMut(&Item) -> bool) -> bool {
    match node {
        Node::Leaf(v) => {
            let s = &v[start..end];
            if rev {
                s.iter().rev().all(f)
            } else {
                s.iter().all(f)
            }
        }
        Node::Inner(inn) => {
            let mut spans = Vec::with_capacity(4);
            let mut base = 0;
            for (k, &c) in inn.counts.iter().enumerate() {
                let (lo, hi) = (start.max(base), end.min(base + c));
                if lo < hi {
                    spans.push((k, lo - base, hi - base));
                }
                base += c;
                if base >= end {
                    break;
                }
            }
            if rev {
                spans.reverse();
            }
            spans.into_iter().all(|(k, lo, hi)| visit(&inn.kids[k], lo, hi, rev, f))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_check(t: &ZTree, model: &[(f64, Vec<u8>)]) {
        assert_eq!(t.len(), model.len());
        for (i, (s, m)) in model.iter().enumerate().step_by(97) {
            assert_eq!(t.rank(*s, m), Some(i));
            let it = t.get(i);
            assert_eq!((it.score, it.member()), (*s, &m[..]));
        }
        let mut seen = Vec::new();
        t.for_range(3.min(model.len()), model.len(), true, &mut |it| {
            seen.push(it.member().to_vec());
            true
        });
        let want: Vec<_> = model.iter().skip(3).rev().map(|x| x.1.clone()).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn insert_remove_rank_select_match_a_sorted_model() {
        let mut t = ZTree::default();
        let mut model: Vec<(f64, Vec<u8>)> = Vec::new();
        let mut seed = 12345u64;
        for round in 0..20_000u64 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let score = ((seed >> 33) % 500) as f64;
            let member = format!("m{}", (seed >> 20) % 5000).into_bytes();
            let pos = model.iter().position(|(_, m)| *m == member);
            if let Some(p) = pos {
                let (s, m) = model.remove(p);
                t.remove(s, &m).expect("present").elem.free();
            }
            if round % 3 != 0 || pos.is_none() {
                t.insert(Item { score, elem: Elem::new(score, &member) });
                model.push((score, member));
                model.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
            }
        }
        model_check(&t, &model);
        assert_eq!(t.count_before(|x| x.score < 250.0), model.iter().filter(|x| x.0 < 250.0).count());
        assert!(t.rank(1e9, b"none").is_none());
        // Drain everything from the front.
        while !t.is_empty() {
            let it = t.get(0);
            t.remove(it.score, it.member()).unwrap().elem.free();
        }
    }

    #[test]
    fn long_members_use_the_wide_header() {
        let long = vec![b'x'; 300];
        let e = Elem::new(-2.5, &long);
        assert_eq!(e.member(), &long[..]);
        assert_eq!(e.score(), -2.5);
        e.set_score(7.0);
        assert_eq!(e.score(), 7.0);
        e.free();
    }
}
