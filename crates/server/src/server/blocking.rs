//! Clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, ...). A blocked client's
//! command is kept and re-run when one of its keys may have data: any write
//! command that changed the dataset signals its key arguments, so data-type
//! handlers need no explicit wake-up calls. Waiters on a key are served in
//! the order they blocked; deadlines are kept sorted so the event loop can
//! sleep exactly until the next one. Clients held by CLIENT PAUSE and
//! WAIT wait here too, on no keys; CLIENT UNBLOCK and the end of a pause
//! queue clients to resume, which the event loop serves like ready keys.
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// CLIENT UNBLOCK ... ERROR's reply.
pub const UNBLOCKED: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

/// What a blocked command replies when its timeout passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutReply {
    /// `*-1` (RESP2) / `_`: BLPOP, BRPOP, BLMPOP, BZPOP*, BZMPOP.
    NullArray,
    /// `$-1` (RESP2) / `_`: BLMOVE, BRPOPLPUSH.
    Null,
    /// `:0`: WAIT (no replica acknowledged).
    Zero,
}

/// How a client taken out of the blocked set resumes (event loop).
#[derive(Debug)]
pub enum Resume {
    /// Run this command again (the pause that postponed it ended).
    Rerun(resp::Args),
    /// CLIENT UNBLOCK ... TIMEOUT: the reply its timeout would give; the
    /// name of the command, which counts as called.
    TimedOut(TimeoutReply, Vec<u8>),
    /// CLIENT UNBLOCK ... ERROR, or a role change; the name of the
    /// command it fails, and the error text.
    Error(Vec<u8>, &'static str),
}

/// One blocked client.
#[derive(Debug)]
pub struct Blocked {
    pub db: usize,
    pub keys: Vec<Vec<u8>>,
    /// Unix ms, or None to wait forever.
    pub deadline: Option<i64>,
    pub on_timeout: TimeoutReply,
    /// The command to re-run when a key is ready.
    pub argv: resp::Args,
    /// Held by CLIENT PAUSE (re-run when it ends) rather than waiting.
    pub postponed: bool,
}

type DbKey = (usize, Vec<u8>);

/// All blocked clients, indexed by key and by deadline.
#[derive(Default)]
pub struct Blocking {
    blocked: HashMap<usize, Blocked>,
    waiters: HashMap<DbKey, VecDeque<usize>>,
    deadlines: BTreeSet<(i64, usize)>,
    ready: Vec<DbKey>,
    ready_set: HashSet<DbKey>,
    /// The client whose blocked command is being re-run, and whether it
    /// asked to block again (then it keeps its place in every queue).
    pub rerun: Option<(usize, bool)>,
    /// The key whose change woke the client being re-run (stream reads
    /// serve from that key alone, as Redis does).
    pub rerun_key: Vec<u8>,
    /// Clients postponed by a pause, in arrival order.
    postponed: Vec<usize>,
    /// Clients taken out of the blocked set, waiting to resume.
    resume: Vec<(usize, Resume)>,
}

impl Blocking {
    pub fn is_blocked(&self, cid: usize) -> bool {
        // Asked for every command: skip hashing when nobody is blocked.
        !self.blocked.is_empty() && self.blocked.contains_key(&cid)
    }

    pub fn count(&self) -> usize {
        self.blocked.len()
    }

    pub fn get(&self, cid: usize) -> Option<&Blocked> {
        self.blocked.get(&cid)
    }

    /// Register `cid` as waiting on `b.keys`.
    pub fn block(&mut self, cid: usize, b: Blocked) {
        for k in &b.keys {
            self.waiters.entry((b.db, k.clone())).or_default().push_back(cid);
        }
        if let Some(d) = b.deadline {
            self.deadlines.insert((d, cid));
        }
        if b.postponed {
            self.postponed.push(cid);
        }
        self.blocked.insert(cid, b);
    }

    /// Forget `cid` everywhere (served, timed out, or disconnected).
    pub fn unblock(&mut self, cid: usize) -> Option<Blocked> {
        let b = self.blocked.remove(&cid)?;
        for k in &b.keys {
            let key = (b.db, k.clone());
            if let Some(q) = self.waiters.get_mut(&key) {
                q.retain(|&c| c != cid);
                if q.is_empty() {
                    self.waiters.remove(&key);
                }
            }
        }
        if let Some(d) = b.deadline {
            self.deadlines.remove(&(d, cid));
        }
        if b.postponed {
            self.postponed.retain(|&c| c != cid);
        }
        Some(b)
    }

    /// CLIENT UNBLOCK: take `cid` out if it waits on keys or a deadline
    /// (a client postponed by a pause is not unblockable), and queue its
    /// reply; false if there was nothing to unblock.
    pub fn force_unblock(&mut self, cid: usize, error: bool) -> bool {
        match self.blocked.get(&cid) {
            Some(b) if !b.postponed => {
                let name = b.argv.get(&[], 0).to_vec();
                let how = if error { Resume::Error(name, UNBLOCKED) } else { Resume::TimedOut(b.on_timeout, name) };
                self.unblock(cid);
                self.resume.push((cid, how));
                true
            }
            _ => false,
        }
    }

    /// Fail every client blocked on keys with `text` (a primary turned
    /// replica: what they wait for will now come from elsewhere).
    pub fn fail_all(&mut self, text: &'static str) {
        let ids: Vec<usize> = self.blocked.iter().filter(|(_, b)| !b.postponed).map(|(&c, _)| c).collect();
        for cid in ids {
            if let Some(b) = self.unblock(cid) {
                self.resume.push((cid, Resume::Error(b.argv.get(&[], 0).to_vec(), text)));
            }
        }
    }

    /// Run `cid`'s blocked command again now (WAIT: enough replicas
    /// acknowledged, or its time ran out); false if it was not blocked.
    pub fn resume_rerun(&mut self, cid: usize) -> bool {
        match self.unblock(cid) {
            Some(b) => {
                self.resume.push((cid, Resume::Rerun(b.argv)));
                true
            }
            None => false,
        }
    }

    /// The pause ended: every postponed client runs its command again.
    pub fn release_postponed(&mut self) {
        for cid in std::mem::take(&mut self.postponed) {
            if let Some(b) = self.blocked.remove(&cid) {
                self.resume.push((cid, Resume::Rerun(b.argv)));
            }
        }
    }

    /// Clients to resume, in the order they were released.
    pub fn take_resumed(&mut self) -> Vec<(usize, Resume)> {
        std::mem::take(&mut self.resume)
    }

    /// A write touched `key`: if anyone waits on it, queue it for serving.
    pub fn signal(&mut self, db: usize, key: &[u8]) {
        if self.waiters.is_empty() {
            return;
        }
        let k = (db, key.to_vec());
        if self.waiters.contains_key(&k) && self.ready_set.insert(k.clone()) {
            self.ready.push(k);
        }
    }

    /// Every key of database `db` someone waits on may have changed
    /// (FLUSHDB, FLUSHALL, SWAPDB): queue them all; waiters that still
    /// find nothing block again.
    pub fn signal_db(&mut self, db: usize) {
        let keys: Vec<DbKey> = self.waiters.keys().filter(|k| k.0 == db).cloned().collect();
        for k in keys {
            if self.ready_set.insert(k.clone()) {
                self.ready.push(k);
            }
        }
    }

    /// Whether anyone waits at all (checked before signalling, which is
    /// then free for the common no-waiter case).
    pub fn any_waiters(&self) -> bool {
        !self.waiters.is_empty()
    }

    /// Take the stored command of a blocked client to re-run it.
    pub fn take_argv(&mut self, cid: usize) -> Option<resp::Args> {
        self.blocked.get_mut(&cid).map(|b| std::mem::take(&mut b.argv))
    }

    /// Put back the command of a client that blocked again.
    pub fn restore_argv(&mut self, cid: usize, argv: resp::Args) {
        if let Some(b) = self.blocked.get_mut(&cid) {
            b.argv = argv;
        }
    }

    /// Whether keys are ready or clients wait to resume (asked after
    /// every command: two length checks).
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty() || !self.resume.is_empty()
    }

    /// Keys signalled since the last call, in signal order.
    pub fn take_ready(&mut self) -> Vec<DbKey> {
        self.ready_set.clear();
        std::mem::take(&mut self.ready)
    }

    /// Clients waiting on `key`, first blocked first.
    pub fn waiters_of(&self, key: &DbKey) -> Vec<usize> {
        self.waiters.get(key).map(|q| q.iter().copied().collect()).unwrap_or_default()
    }

    pub fn next_deadline(&self) -> Option<i64> {
        self.deadlines.first().map(|&(d, _)| d)
    }

    /// Clients whose deadline has passed, removed from the deadline index.
    /// Strictly passed: deadlines are whole milliseconds after a clock that
    /// was floored, so firing at `now == deadline` could answer up to 1 ms
    /// before the requested timeout.
    pub fn expired(&mut self, now_ms: i64) -> Vec<usize> {
        let mut out = Vec::new();
        while let Some(&(d, cid)) = self.deadlines.first() {
            if d >= now_ms {
                break;
            }
            self.deadlines.pop_first();
            out.push(cid);
        }
        out
    }
}

/// Parse a blocking timeout in seconds into an absolute deadline, exactly
/// as Redis 7.0's `getTimeoutFromObjectOrReply` does: any long double
/// `strtold` takes (hex, exponents, `inf`), times 1000 and rounded *up* to
/// whole milliseconds, then cast the way a C cast does on x86 (out-of-range
/// values, infinities included, become `LLONG_MIN`, hence "negative"); so
/// `0.0001` waits one millisecond. `Ok(None)` means wait forever (exactly 0).
pub fn parse_timeout(arg: &[u8], now_ms: i64) -> Result<Option<i64>, &'static str> {
    use crate::engine::numeric::{classify_long_double, incr_by_float, LongDoubleKind};
    const NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
    const NEGATIVE: &str = "ERR timeout is negative";
    let secs = match classify_long_double(arg) {
        LongDoubleKind::Invalid => return Err(NOT_FLOAT),
        LongDoubleKind::Infinite => return Err(NEGATIVE),
        // Plain decimal text parses directly; other forms (hex) go through
        // the long double helper, which prints them in decimal.
        LongDoubleKind::Finite => match std::str::from_utf8(arg).ok().and_then(|s| s.parse::<f64>().ok()) {
            Some(v) => v,
            None => incr_by_float(b"0", arg)
                .ok()
                .and_then(|t| String::from_utf8(t).ok()?.parse::<f64>().ok())
                .ok_or(NOT_FLOAT)?,
        },
    };
    let ms = secs * 1000.0;
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let tval = if ms > -LIMIT && ms < LIMIT { ms.ceil() as i64 } else { i64::MIN };
    if tval < 0 {
        return Err(NEGATIVE);
    }
    if tval == 0 {
        return Ok(None);
    }
    if tval > i64::MAX - now_ms {
        return Err("ERR timeout is out of range");
    }
    Ok(Some(now_ms + tval))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(keys: &[&str], deadline: Option<i64>) -> Blocked {
        Blocked {
            db: 0,
            keys: keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
            deadline,
            on_timeout: TimeoutReply::NullArray,
            argv: resp::Args::from_parts([&b"BLPOP"[..]]),
            postponed: false,
        }
    }

    #[test]
    fn waiters_are_fifo_and_unblock_cleans_every_index() {
        let mut b = Blocking::default();
        b.block(7, blocked(&["a", "b"], Some(100)));
        b.block(3, blocked(&["a"], None));
        assert_eq!(b.waiters_of(&(0, b"a".to_vec())), vec![7, 3]);
        b.signal(0, b"a");
        b.signal(0, b"a");
        b.signal(0, b"zzz");
        assert_eq!(b.take_ready(), vec![(0, b"a".to_vec())]);
        assert!(b.unblock(7).is_some());
        assert_eq!(b.waiters_of(&(0, b"a".to_vec())), vec![3]);
        assert!(b.waiters_of(&(0, b"b".to_vec())).is_empty());
        assert_eq!(b.next_deadline(), None);
        assert_eq!(b.count(), 1);
    }

    #[test]
    fn deadlines_expire_in_order() {
        let mut b = Blocking::default();
        b.block(1, blocked(&["k"], Some(300)));
        b.block(2, blocked(&["k"], Some(100)));
        assert_eq!(b.next_deadline(), Some(100));
        assert_eq!(b.expired(250), vec![2]);
        assert_eq!(b.expired(250), Vec::<usize>::new());
        assert_eq!(b.expired(300), Vec::<usize>::new());
        assert_eq!(b.expired(301), vec![1]);
    }

    #[test]
    fn timeouts_parse_like_redis() {
        assert_eq!(parse_timeout(b"0", 1000), Ok(None));
        assert_eq!(parse_timeout(b"0.5", 1000), Ok(Some(1500)));
        assert_eq!(parse_timeout(b"2", 1000), Ok(Some(3000)));
        assert_eq!(parse_timeout(b"-1", 0), Err("ERR timeout is negative"));
        assert_eq!(parse_timeout(b"abc", 0), Err("ERR timeout is not a float or out of range"));
        assert_eq!(parse_timeout(b"inf", 0), Err("ERR timeout is negative"));
        assert_eq!(parse_timeout(b"1e400", 0), Err("ERR timeout is negative"));
        assert_eq!(parse_timeout(b"0x1", 1000), Ok(Some(2000)));
        assert_eq!(parse_timeout(b"0.0001", 1000), Ok(Some(1001)));
        assert_eq!(parse_timeout(b"0.0019", 1000), Ok(Some(1002)));
        assert_eq!(parse_timeout(b"-0.0001", 1000), Ok(None));
        assert_eq!(parse_timeout(b" 1", 0), Err("ERR timeout is not a float or out of range"));
    }
}
