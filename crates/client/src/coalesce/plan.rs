//! The coalescing buffer: how submitted writes merge into batches, how a
//! batch is encoded, and how its replies are split back to the callers.
//!
//! Merge rule (keeps per-key order): an op joins the most recent batch of its
//! class (all SETs; all DELs; all UNLINKs; HSET/SADD/RPUSH/INCRBY *of the same
//! key*) only if no later batch touches the op's key; otherwise it starts a new
//! batch. Batches run in order, ops within a batch in submission order, so for
//! every key the ops run in the order they were submitted. (Order between
//! different keys is not kept.) "Touches" is tracked by a 64-bit hash of the
//! key: a collision can only start an extra batch, never reorder. While the
//! buffer holds a single batch (e.g. only SETs) nothing is tracked at all.
//!
//! Encoding: each op's arguments are RESP-encoded straight into its batch's
//! body when submitted (no per-op allocation); the command header is added
//! when the batch is written.
//!
//! What the callers get:
//! - SET (merged into MSET), HSET, SADD: the merged command's reply. For
//!   HSET/SADD that is the count for the whole merge, not "was *my* field
//!   new": the per-op flag cannot be recovered from a merged reply.
//! - DEL / UNLINK: `DEL k1 k2` returns only a total, so the batch is sent as
//!   one single-key command per op, all in the same write: each caller learns
//!   whether *its* key existed, and duplicates resolve in order.
//! - RPUSH: the list length right after this op (merged length minus the
//!   elements pushed after it); INCR/INCRBY: the value right after this op
//!   (merged result minus the increments after it).
//! - Errors: see `flusher.rs` (a failed merged INCRBY is re-issued op by op).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::ticket::{Outcome, Resolver, Ticket};
use crate::value::Value;

/// The command family of an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Set,
    Del,
    Unlink,
    HSet,
    SAdd,
    RPush,
    IncrBy,
}

impl Kind {
    /// Merged by key (one batch per key) rather than across keys.
    fn per_key(self) -> bool {
        matches!(self, Kind::HSet | Kind::SAdd | Kind::RPush | Kind::IncrBy)
    }

    /// Index into the open-batch tables (plain kinds and per-key kinds apart).
    fn slot(self) -> usize {
        match self {
            Kind::Set | Kind::HSet => 0,
            Kind::Del | Kind::SAdd => 1,
            Kind::Unlink | Kind::RPush => 2,
            Kind::IncrBy => 3,
        }
    }

    fn name(self) -> &'static [u8] {
        match self {
            Kind::Set => b"SET",
            Kind::Del => b"DEL",
            Kind::Unlink => b"UNLINK",
            Kind::HSet => b"HSET",
            Kind::SAdd => b"SADD",
            Kind::RPush => b"RPUSH",
            Kind::IncrBy => b"INCRBY",
        }
    }
}

/// One submitted write, borrowing the caller's bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op<'a> {
    Set(&'a [u8], &'a [u8]),
    Del(&'a [u8]),
    Unlink(&'a [u8]),
    HSet(&'a [u8], &'a [u8], &'a [u8]),
    SAdd(&'a [u8], &'a [u8]),
    RPush(&'a [u8], &'a [u8]),
    IncrBy(&'a [u8], i64),
}

impl Op<'_> {
    fn key(&self) -> &[u8] {
        match *self {
            Op::Set(k, _) | Op::Del(k) | Op::Unlink(k) | Op::HSet(k, _, _) => k,
            Op::SAdd(k, _) | Op::RPush(k, _) | Op::IncrBy(k, _) => k,
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Op::Set(..) => Kind::Set,
            Op::Del(..) => Kind::Del,
            Op::Unlink(..) => Kind::Unlink,
            Op::HSet(..) => Kind::HSet,
            Op::SAdd(..) => Kind::SAdd,
            Op::RPush(..) => Kind::RPush,
            Op::IncrBy(..) => Kind::IncrBy,
        }
    }

    /// Append the arguments this op contributes (after the command name and,
    /// for per-key kinds, the key); returns how many.
    fn encode_args(&self, body: &mut Vec<u8>) -> usize {
        match *self {
            Op::Set(k, v) => {
                put_bulk(body, k);
                put_bulk(body, v);
                2
            }
            Op::HSet(_, f, v) => {
                put_bulk(body, f);
                put_bulk(body, v);
                2
            }
            Op::Del(x) | Op::Unlink(x) | Op::SAdd(_, x) | Op::RPush(_, x) => {
                put_bulk(body, x);
                1
            }
            Op::IncrBy(..) => 1,
        }
    }
}

/// Append a RESP bulk string (header built on the stack, one reserve).
fn put_bulk(out: &mut Vec<u8>, b: &[u8]) {
    let mut hdr = [0u8; 24];
    let mut i = hdr.len() - 2;
    hdr[i..].copy_from_slice(b"\r\n");
    let mut n = b.len();
    loop {
        i -= 1;
        hdr[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    i -= 1;
    hdr[i] = b'$';
    out.reserve(hdr.len() - i + b.len() + 2);
    out.extend_from_slice(&hdr[i..]);
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

/// Append a RESP array header.
fn put_array(out: &mut Vec<u8>, n: usize) {
    out.push(b'*');
    resp::push_decimal(out, n);
    out.extend_from_slice(b"\r\n");
}

/// The bulk strings of an encoded body, in order.
fn bulks(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let rest = body.get(pos..).filter(|r| r.first() == Some(&b'$'))?;
        let nl = rest.iter().position(|&c| c == b'\r')?;
        let len: usize = std::str::from_utf8(&rest[1..nl]).ok()?.parse().ok()?;
        let start = nl + 2;
        pos += start + len + 2;
        rest.get(start..start + len)
    })
}

/// `INCRBY key by` for each increment (an op-by-op re-issue).
pub(crate) fn encode_incr_singles(out: &mut Vec<u8>, key: &[u8], incrs: &[i64]) {
    for by in incrs {
        put_array(out, 3);
        put_bulk(out, b"INCRBY");
        put_bulk(out, key);
        put_bulk(out, by.to_string().as_bytes());
    }
}

/// Ops that go out as one merged command (or, for DEL/UNLINK, one per op).
pub(crate) struct CBatch {
    pub kind: Kind,
    /// The key of a per-key batch (empty otherwise).
    pub key: Vec<u8>,
    /// Encoded arguments of every op (freed once written).
    body: Vec<u8>,
    nargs: usize,
    pub nops: usize,
    /// INCRBY: each op's increment (to split the reply or re-issue).
    pub incrs: Vec<i64>,
    incr_sum: i64,
    pub slot: Resolver,
}

impl CBatch {
    fn new(kind: Kind, key: &[u8]) -> CBatch {
        let key = if kind.per_key() { key.to_vec() } else { Vec::new() };
        CBatch { kind, key, body: Vec::new(), nargs: 0, nops: 0, incrs: Vec::new(), incr_sum: 0, slot: Resolver::new() }
    }

    /// True when this batch is one merged command of several ops.
    pub fn is_merged(&self) -> bool {
        self.nops > 1 && !matches!(self.kind, Kind::Del | Kind::Unlink)
    }

    /// Replies this batch's commands produce.
    pub fn replies(&self) -> usize {
        match self.kind {
            Kind::Del | Kind::Unlink => self.nops,
            _ => 1,
        }
    }

    /// Append this batch's commands to `out`, then free the body.
    pub fn encode(&mut self, out: &mut Vec<u8>) {
        let name = self.kind.name();
        match self.kind {
            Kind::Del | Kind::Unlink => {
                for k in bulks(&self.body) {
                    put_array(out, 2);
                    put_bulk(out, name);
                    put_bulk(out, k);
                }
            }
            Kind::Set => {
                put_array(out, 1 + self.nargs);
                put_bulk(out, if self.nops > 1 { b"MSET" } else { name });
                out.extend_from_slice(&self.body);
            }
            Kind::IncrBy => {
                put_array(out, 3);
                put_bulk(out, name);
                put_bulk(out, &self.key);
                put_bulk(out, self.incr_sum.to_string().as_bytes());
            }
            Kind::HSet | Kind::SAdd | Kind::RPush => {
                put_array(out, 2 + self.nargs);
                put_bulk(out, name);
                put_bulk(out, &self.key);
                out.extend_from_slice(&self.body);
            }
        }
        self.body = Vec::new();
    }

    /// Call `f` on every key this batch touches until it returns true
    /// (before [`encode`](Self::encode)); returns whether it did.
    pub fn any_key(&self, mut f: impl FnMut(&[u8]) -> bool) -> bool {
        match self.kind {
            Kind::Set => bulks(&self.body).step_by(2).any(f),
            Kind::Del | Kind::Unlink => bulks(&self.body).any(f),
            _ => f(&self.key),
        }
    }

    /// What the callers get from a successful reply set (one per command).
    pub fn outcome(&self, mut replies: Vec<Value>) -> Outcome {
        if matches!(self.kind, Kind::Del | Kind::Unlink) {
            return Outcome::Each(replies);
        }
        let reply = replies.pop().unwrap_or(Value::Null);
        let n = self.nops;
        match (self.kind, &reply) {
            (Kind::RPush, &Value::Integer(len)) if n > 1 => {
                Outcome::Each((0..n).map(|j| Value::Integer(len - (n - 1 - j) as i64)).collect())
            }
            (Kind::IncrBy, &Value::Integer(total)) if n > 1 => {
                let mut after = 0i64;
                let mut out: Vec<Value> = self
                    .incrs
                    .iter()
                    .rev()
                    .map(|by| {
                        let v = Value::Integer(total.wrapping_sub(after));
                        after = after.wrapping_add(*by);
                        v
                    })
                    .collect();
                out.reverse();
                Outcome::Each(out)
            }
            _ => Outcome::All(reply),
        }
    }
}

/// Identity hasher for keys that already are 64-bit hashes.
#[derive(Default)]
struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A fast 64-bit hash of a key (FxHash-style words, then a final mix).
fn key_hash(k: &[u8]) -> u64 {
    const M: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = k.len() as u64;
    let mut chunks = k.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(5) ^ u64::from_le_bytes(c.try_into().unwrap_or_default())).wrapping_mul(M);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(M);
    }
    h ^ (h >> 29)
}

/// Submitted ops waiting to be written.
#[derive(Default)]
pub(crate) struct Buffer {
    pub batches: Vec<CBatch>,
    /// Open SET / DEL / UNLINK batch.
    open_plain: [Option<usize>; 3],
    /// Open HSET / SADD / RPUSH / INCRBY batch per key.
    open_keyed: HashMap<Vec<u8>, [Option<usize>; 4]>,
    /// Key hash → last batch touching it; kept only while there are ≥ 2 batches.
    last_of_key: HashMap<u64, usize, BuildHasherDefault<PreHashed>>,
    pub args: usize,
    pub ops: usize,
}

impl Buffer {
    /// Add `op`, merging it into an earlier batch when per-key order allows;
    /// returns the op's ticket.
    pub fn add<T>(&mut self, op: &Op<'_>) -> Ticket<T> {
        let (kind, key) = (op.kind(), op.key());
        let open = if kind.per_key() {
            self.open_keyed.get(key).and_then(|a| a[kind.slot()])
        } else {
            self.open_plain[kind.slot()]
        };
        let tracking = self.batches.len() > 1;
        let hash = if tracking { key_hash(key) } else { 0 };
        let target = open.filter(|&c| {
            let order_ok = c + 1 == self.batches.len() || self.last_of_key.get(&hash).is_none_or(|&l| l <= c);
            let sum_ok = match *op {
                Op::IncrBy(_, by) => self.batches[c].incr_sum.checked_add(by).is_some(),
                _ => true,
            };
            order_ok && sum_ok
        });
        let idx = target.unwrap_or_else(|| self.new_batch(kind, key));
        if self.batches.len() > 1 {
            let hash = if tracking { hash } else { key_hash(key) };
            self.last_of_key.insert(hash, idx);
        }
        let b = &mut self.batches[idx];
        if let Op::IncrBy(_, by) = *op {
            b.incr_sum += by;
            b.incrs.push(by);
        }
        let n = op.encode_args(&mut b.body);
        b.nargs += n;
        let ticket = b.slot.ticket(b.nops as u32);
        b.nops += 1;
        self.args += n;
        self.ops += 1;
        ticket
    }

    fn new_batch(&mut self, kind: Kind, key: &[u8]) -> usize {
        if self.batches.len() == 1 {
            // Leaving single-batch mode: record the first batch's keys now.
            let mut hashes = Vec::new();
            self.batches[0].any_key(|k| {
                hashes.push(key_hash(k));
                false
            });
            self.last_of_key.extend(hashes.into_iter().map(|h| (h, 0)));
        }
        let idx = self.batches.len();
        self.batches.push(CBatch::new(kind, key));
        if kind.per_key() {
            self.open_keyed.entry(key.to_vec()).or_default()[kind.slot()] = Some(idx);
        } else {
            self.open_plain[kind.slot()] = Some(idx);
        }
        idx
    }

    pub fn is_empty(&self) -> bool {
        self.ops == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(buf: &mut Buffer) -> Vec<Vec<Vec<u8>>> {
        buf.batches.iter_mut().map(commands).collect()
    }

    /// Decode a batch's encoded commands back into argument lists.
    fn commands(b: &mut CBatch) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        b.encode(&mut out);
        let mut cmds = Vec::new();
        let mut rest = &out[..];
        while let Some((Value::Array(args), n)) = resp::decode_frame(rest).unwrap() {
            let args: Vec<Vec<u8>> =
                args.into_iter().map(|a| if let Value::Bulk(b) = a { b } else { vec![] }).collect();
            cmds.push(args.join(&b' '));
            rest = &rest[n..];
        }
        assert!(rest.is_empty());
        cmds
    }

    fn add(b: &mut Buffer, op: Op<'_>) {
        drop(b.add::<()>(&op));
    }

    #[test]
    fn sets_merge_and_del_keeps_order() {
        let mut b = Buffer::default();
        add(&mut b, Op::Set(b"k", b"1"));
        add(&mut b, Op::Set(b"a", b"x"));
        add(&mut b, Op::Del(b"k"));
        add(&mut b, Op::Set(b"k", b"2"));
        add(&mut b, Op::Set(b"b", b"y"));
        add(&mut b, Op::Del(b"a"));
        assert_eq!((b.ops, b.args), (6, 10));
        let s = wire(&mut b);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0], vec![b"MSET k 1 a x".to_vec()]);
        // DEL k, then DEL a joins it: one command per key.
        assert_eq!(s[1], vec![b"DEL k".to_vec(), b"DEL a".to_vec()]);
        assert_eq!(s[2], vec![b"MSET k 2 b y".to_vec()]);
    }

    #[test]
    fn per_key_merges_and_singles() {
        let mut b = Buffer::default();
        add(&mut b, Op::HSet(b"h", b"f1", b"v1"));
        add(&mut b, Op::SAdd(b"s", b"m"));
        add(&mut b, Op::HSet(b"h", b"f2", b"v2"));
        add(&mut b, Op::Set(b"only", b"one"));
        add(&mut b, Op::RPush(b"l", b""));
        let s = wire(&mut b);
        assert_eq!(s[0], vec![b"HSET h f1 v1 f2 v2".to_vec()]);
        assert_eq!(s[1], vec![b"SADD s m".to_vec()]);
        assert_eq!(s[2], vec![b"SET only one".to_vec()]);
        assert_eq!(s[3], vec![b"RPUSH l ".to_vec()]);
        assert_eq!(b.batches.iter().map(CBatch::replies).sum::<usize>(), 4);
    }

    #[test]
    fn incr_split_and_overflow_starts_a_new_batch() {
        let mut b = Buffer::default();
        for by in [1, 5, 10] {
            add(&mut b, Op::IncrBy(b"n", by));
        }
        assert_eq!(b.batches.len(), 1);
        let Outcome::Each(got) = b.batches[0].outcome(vec![Value::Integer(116)]) else { panic!("not split") };
        assert_eq!(got, vec![Value::Integer(101), Value::Integer(106), Value::Integer(116)]);
        assert_eq!(wire(&mut b)[0], vec![b"INCRBY n 16".to_vec()]);
        add(&mut b, Op::IncrBy(b"n", i64::MAX));
        assert_eq!(b.batches.len(), 2);
    }

    #[test]
    fn rpush_lengths_per_op() {
        let mut b = Buffer::default();
        add(&mut b, Op::RPush(b"l", b"a"));
        add(&mut b, Op::RPush(b"l", b"b"));
        let Outcome::Each(got) = b.batches[0].outcome(vec![Value::Integer(7)]) else { panic!("not split") };
        assert_eq!(got, vec![Value::Integer(6), Value::Integer(7)]);
    }

    #[test]
    fn key_tracking_starts_when_a_second_batch_appears() {
        let mut b = Buffer::default();
        for k in [&b"a"[..], b"b", b"c"] {
            add(&mut b, Op::Set(k, b"v"));
        }
        assert!(b.last_of_key.is_empty(), "one batch: nothing tracked");
        add(&mut b, Op::Del(b"b"));
        add(&mut b, Op::Set(b"b", b"w")); // after DEL b: a new MSET
        add(&mut b, Op::Set(b"z", b"w")); // joins the newest MSET
        let s = wire(&mut b);
        assert_eq!(
            s,
            vec![vec![b"MSET a v b v c v".to_vec()], vec![b"DEL b".to_vec()], vec![b"MSET b w z w".to_vec()]]
        );
    }

    #[test]
    fn bulks_round_trip_binary_keys() {
        let mut body = Vec::new();
        for k in [&b""[..], b"a\r\nb", &[0xff; 300]] {
            put_bulk(&mut body, k);
        }
        let got: Vec<&[u8]> = bulks(&body).collect();
        assert_eq!(got, vec![&b""[..], b"a\r\nb", &[0xff; 300]]);
    }
}
