//! CLIENT PAUSE: while a pause is on, commands it covers (every command,
//! or those that may write) are postponed instead of run, and keys stay in
//! place past their expiry (reads see them as gone; nothing is deleted, so
//! nothing is replayed), which is what lets a failover or an operator
//! take a consistent look at the data. Postponed clients are held in
//! [`super::blocking`] and re-run, in the order they arrived, when the
//! pause ends (CLIENT UNPAUSE or its deadline).
//!
//! Two purposes may pause at once, as in Redis: CLIENT PAUSE and a
//! FAILOVER (writes, until it ends). `Server::pause` is what is in force,
//! the union of both; CLIENT UNPAUSE lifts only its own.

/// What a pause holds back; `All` is the more restrictive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PauseKind {
    Write,
    All,
}

/// The pause in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    pub kind: PauseKind,
    /// Unix ms after which the pause lifts by itself.
    pub end_ms: i64,
}

/// Each purpose's own pause; `Server::pause` is their union.
#[derive(Debug, Default, Clone, Copy)]
pub struct Purposes {
    client: Option<Pause>,
    failover: bool,
}

impl Purposes {
    fn union(&self) -> Option<Pause> {
        let failover = self.failover.then_some(Pause { kind: PauseKind::Write, end_ms: i64::MAX });
        match (self.client, failover) {
            (Some(a), Some(b)) => Some(Pause { kind: a.kind.max(b.kind), end_ms: a.end_ms.max(b.end_ms) }),
            (a, b) => a.or(b),
        }
    }
}

impl super::Server {
    /// Start a pause or extend the one in force: the longer end and the
    /// more restrictive kind win, as a second CLIENT PAUSE does in Redis.
    pub fn pause_clients(&mut self, kind: PauseKind, end_ms: i64) {
        let p = match self.pauses.client {
            Some(p) => Pause { kind: p.kind.max(kind), end_ms: p.end_ms.max(end_ms) },
            None => Pause { kind, end_ms },
        };
        self.pauses.client = Some(p);
        self.apply_pauses();
    }

    /// Lift CLIENT PAUSE: postponed clients are queued to run again (a
    /// failover's pause, if any, holds back what it covers once more).
    pub fn unpause_clients(&mut self) {
        self.pauses.client = None;
        self.apply_pauses();
    }

    /// A FAILOVER pauses writes until it ends or is aborted.
    pub fn pause_for_failover(&mut self, on: bool) {
        self.pauses.failover = on;
        self.apply_pauses();
    }

    fn apply_pauses(&mut self) {
        let before = self.pause;
        self.pause = self.pauses.union();
        // Keys stay past their expiry while paused; a replica keeps them
        // anyway for its primary's DELs.
        let keep = self.pause.is_some() || self.expire_by_primary;
        self.keyspace.dbs.iter_mut().for_each(|db| db.keep_expired = keep);
        if before.is_some() && before != self.pause {
            self.blocking.release_postponed();
        }
    }

    /// Lift a CLIENT PAUSE whose deadline has passed (cron).
    pub fn end_expired_pause(&mut self, now_ms: i64) {
        if self.pauses.client.is_some_and(|p| p.end_ms < now_ms) {
            self.unpause_clients();
        }
    }

    /// Whether a command is held back by the pause in force; `may_write`
    /// says whether it may write or replicate anything.
    pub fn paused_for(&self, may_write: bool) -> bool {
        match self.pause {
            Some(p) => p.kind == PauseKind::All || may_write,
            None => false,
        }
    }
}

impl super::Server {
    /// A replica leaves expiry to its primary: expired keys read as absent
    /// but stay until the primary's DEL (`replication` sets this).
    pub fn set_expire_by_primary(&mut self, on: bool) {
        self.expire_by_primary = on;
        let keep = on || self.pause.is_some();
        self.keyspace.dbs.iter_mut().for_each(|db| db.keep_expired = keep);
    }
}
