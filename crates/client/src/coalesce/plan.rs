//! The coalescing buffer: how submitted writes merge into batches, what each
//! batch sends, and how replies are split back to the callers.
//!
//! Merge rule (keeps per-key order): an op joins the most recent batch of its
//! class (all SETs; all DELs; all UNLINKs; HSET/SADD/RPUSH/INCRBY *of the same
//! key*) only if no later batch touches the op's key; otherwise it starts a new
//! batch. Batches run in order, ops within a batch in submission order, so for
//! every key the ops run in the order they were submitted. (Order between
//! different keys is not kept.)
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
//! - Errors: a single-op command's error goes to its caller. A merged command
//!   that fails is re-issued op by op (failed commands have no effect), so
//!   each error reaches only the ops that cause it.

use std::collections::HashMap;

use tokio::sync::oneshot;

use crate::error::Result;
use crate::value::Value;

/// One submitted write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Set(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
    Unlink(Vec<u8>),
    HSet(Vec<u8>, Vec<u8>, Vec<u8>),
    SAdd(Vec<u8>, Vec<u8>),
    RPush(Vec<u8>, Vec<u8>),
    IncrBy(Vec<u8>, i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Set,
    Del,
    Unlink,
    HSet,
    SAdd,
    RPush,
    IncrBy,
}

impl Op {
    pub fn key(&self) -> &[u8] {
        match self {
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

    /// Arguments this op adds to a merged command.
    pub fn arg_count(&self) -> usize {
        match self {
            Op::Set(..) | Op::HSet(..) => 2,
            _ => 1,
        }
    }

    /// The op as its own command.
    pub fn single(&self) -> Vec<Vec<u8>> {
        match self.clone() {
            Op::Set(k, v) => vec![b"SET".to_vec(), k, v],
            Op::Del(k) => vec![b"DEL".to_vec(), k],
            Op::Unlink(k) => vec![b"UNLINK".to_vec(), k],
            Op::HSet(k, f, v) => vec![b"HSET".to_vec(), k, f, v],
            Op::SAdd(k, m) => vec![b"SADD".to_vec(), k, m],
            Op::RPush(k, v) => vec![b"RPUSH".to_vec(), k, v],
            Op::IncrBy(k, n) => vec![b"INCRBY".to_vec(), k, n.to_string().into_bytes()],
        }
    }
}

/// A submitted op and where its outcome goes.
pub(crate) struct Pending {
    pub op: Op,
    pub tx: oneshot::Sender<Result<Value>>,
}

/// Ops that go out as one merged command (or, for DEL/UNLINK, one per op).
pub(crate) struct CBatch {
    kind: Kind,
    pub ops: Vec<Pending>,
    incr_sum: i64,
}

impl CBatch {
    /// True when this batch is one merged command of several ops, which may
    /// need re-issuing op by op.
    pub fn is_merged(&self) -> bool {
        self.ops.len() > 1 && !matches!(self.kind, Kind::Del | Kind::Unlink)
    }

    /// The commands this batch sends.
    pub fn commands(&self) -> Vec<Vec<Vec<u8>>> {
        if !self.is_merged() {
            return self.ops.iter().map(|p| p.op.single()).collect();
        }
        let first = &self.ops[0].op;
        let mut cmd: Vec<Vec<u8>> = match first.kind() {
            Kind::Set => vec![b"MSET".to_vec()],
            Kind::HSet => vec![b"HSET".to_vec(), first.key().to_vec()],
            Kind::SAdd => vec![b"SADD".to_vec(), first.key().to_vec()],
            Kind::RPush => vec![b"RPUSH".to_vec(), first.key().to_vec()],
            Kind::IncrBy => {
                return vec![vec![b"INCRBY".to_vec(), first.key().to_vec(), self.incr_sum.to_string().into_bytes()]]
            }
            Kind::Del | Kind::Unlink => unreachable!("not merged"),
        };
        for p in &self.ops {
            match &p.op {
                Op::Set(k, v) => cmd.extend([k.clone(), v.clone()]),
                Op::HSet(_, f, v) => cmd.extend([f.clone(), v.clone()]),
                Op::SAdd(_, x) | Op::RPush(_, x) => cmd.push(x.clone()),
                _ => {}
            }
        }
        vec![cmd]
    }

    /// Per-op replies for a successful merged reply.
    pub fn split_reply(&self, reply: &Value) -> Vec<Value> {
        let n = self.ops.len();
        match (self.kind, reply) {
            (Kind::RPush, Value::Integer(len)) => (0..n).map(|j| Value::Integer(len - (n - 1 - j) as i64)).collect(),
            (Kind::IncrBy, Value::Integer(total)) => {
                let mut after = 0i64;
                let mut out: Vec<Value> = self
                    .ops
                    .iter()
                    .rev()
                    .map(|p| {
                        let v = Value::Integer(total - after);
                        if let Op::IncrBy(_, by) = p.op {
                            after += by;
                        }
                        v
                    })
                    .collect();
                out.reverse();
                out
            }
            _ => vec![reply.clone(); n],
        }
    }
}

/// Submitted ops waiting for the next flush.
#[derive(Default)]
pub(crate) struct Buffer {
    pub batches: Vec<CBatch>,
    last_of_key: HashMap<Vec<u8>, usize>,
    open: HashMap<(Kind, Option<Vec<u8>>), usize>,
    pub args: usize,
    pub ops: usize,
}

impl Buffer {
    /// Add `p`, merging it into an earlier batch when per-key order allows.
    pub fn add(&mut self, p: Pending) {
        let kind = p.op.kind();
        let class_key = match kind {
            Kind::Set | Kind::Del | Kind::Unlink => None,
            _ => Some(p.op.key().to_vec()),
        };
        let class = (kind, class_key);
        let last = self.last_of_key.get(p.op.key()).copied();
        let target = self.open.get(&class).copied().filter(|&c| {
            let order_ok = last.is_none_or(|l| l <= c);
            let sum_ok = match p.op {
                Op::IncrBy(_, by) => self.batches[c].incr_sum.checked_add(by).is_some(),
                _ => true,
            };
            order_ok && sum_ok
        });
        let idx = target.unwrap_or_else(|| {
            self.batches.push(CBatch { kind, ops: Vec::new(), incr_sum: 0 });
            self.open.insert(class, self.batches.len() - 1);
            self.batches.len() - 1
        });
        if let Op::IncrBy(_, by) = p.op {
            self.batches[idx].incr_sum += by;
        }
        self.args += p.op.arg_count();
        self.ops += 1;
        self.last_of_key.insert(p.op.key().to_vec(), idx);
        self.batches[idx].ops.push(p);
    }

    pub fn is_empty(&self) -> bool {
        self.ops == 0
    }
}

/// Split `batches` into segments that can each go out in one write: a
/// segment ends before a batch touching a key of a merged batch already in
/// it, so re-issuing a failed merge op by op cannot overtake a later op on
/// the same key.
pub(crate) fn segments(batches: Vec<CBatch>) -> Vec<Vec<CBatch>> {
    let mut out: Vec<Vec<CBatch>> = Vec::new();
    let mut current: Vec<CBatch> = Vec::new();
    let mut risky: std::collections::HashSet<Vec<u8>> = Default::default();
    for b in batches {
        if b.ops.iter().any(|p| risky.contains(p.op.key())) {
            out.push(std::mem::take(&mut current));
            risky.clear();
        }
        if b.is_merged() {
            risky.extend(b.ops.iter().map(|p| p.op.key().to_vec()));
        }
        current.push(b);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(buf: &mut Buffer, op: Op) {
        let (tx, _rx) = oneshot::channel();
        buf.add(Pending { op, tx });
    }

    fn shape(buf: &Buffer) -> Vec<Vec<Vec<Vec<u8>>>> {
        buf.batches.iter().map(|b| b.commands()).collect()
    }

    #[test]
    fn sets_merge_and_del_keeps_order() {
        let mut b = Buffer::default();
        add(&mut b, Op::Set(b"k".to_vec(), b"1".to_vec()));
        add(&mut b, Op::Set(b"a".to_vec(), b"x".to_vec()));
        add(&mut b, Op::Del(b"k".to_vec()));
        add(&mut b, Op::Set(b"k".to_vec(), b"2".to_vec()));
        add(&mut b, Op::Set(b"b".to_vec(), b"y".to_vec()));
        add(&mut b, Op::Del(b"a".to_vec()));
        let s = shape(&b);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0][0][0], b"MSET");
        assert_eq!(s[1].len(), 2); // DEL k, then DEL a joins it: one command per key
        assert_eq!(b.batches[1].ops.len(), 2);
        assert_eq!(s[2][0], vec![b"MSET".to_vec(), b"k".to_vec(), b"2".to_vec(), b"b".to_vec(), b"y".to_vec()]);
        assert_eq!(segments(b.batches).len(), 2);
    }

    #[test]
    fn incr_split() {
        let mut b = Buffer::default();
        for by in [1, 5, 10] {
            add(&mut b, Op::IncrBy(b"n".to_vec(), by));
        }
        assert_eq!(b.batches.len(), 1);
        let got = b.batches[0].split_reply(&Value::Integer(116));
        assert_eq!(got, vec![Value::Integer(101), Value::Integer(106), Value::Integer(116)]);
        add(&mut b, Op::IncrBy(b"n".to_vec(), i64::MAX));
        assert_eq!(b.batches.len(), 2);
    }
}
