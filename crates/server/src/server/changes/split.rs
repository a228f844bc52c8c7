//! Replay meant for one consumer only. Redis 7.0 propagates PUBLISH and
//! SPUBLISH (outside cluster mode) to replicas but not to the AOF
//! (`forceCommandPropagation(c, PROPAGATE_REPL)`), so subscribers of a
//! replica hear what the primary's hear; and a script's `redis.set_repl`
//! sends the commands it runs next to the AOF only, the replicas only, or
//! neither (the propagation targets of Redis's `call()`).
//!
//! The stream's bytes stay one buffer; the rare parts one consumer must
//! not see are listed here, and a hand-off that has any gives each
//! consumer its own copy. Each consumer keeps its own idea of the selected
//! database, as Redis's `aof_selected_db` and `slaveseldb` are separate:
//! a one-consumer `SELECT` does not move the other's, and the next command
//! both take selects again for whichever of them is elsewhere. MULTI and
//! EXEC of a block go to both, as Redis's `propagatePendingCommands`
//! sends them with `PROPAGATE_AOF|PROPAGATE_REPL`, in the db of the
//! block's first and last command.
use super::{Changes, Request, Translation};

/// The one consumer a part of the stream is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Only {
    Aof,
    Replicas,
}

/// Replay consumers as bits (Redis's `PROPAGATE_AOF`, `PROPAGATE_REPL`):
/// what `redis.set_repl` withholds a script's commands from.
pub const TO_AOF: u8 = 1;
pub const TO_REPLICAS: u8 = 2;

/// Parts of `Changes::out` only one consumer takes, and the AOF's
/// database while it differs from the replicas'.
#[derive(Default)]
pub(super) struct Split {
    parts: Vec<(std::ops::Range<usize>, Only)>,
    /// `Some(db)`: the AOF's selected database, which differs from
    /// `Changes::selected_db` (the replicas'). `None`: they agree.
    aof_db: Option<Option<usize>>,
    /// The database of the last one-consumer command: while the two
    /// differ, the block's last (or, at MULTI, first) command was one.
    last_db: usize,
}

impl Split {
    /// Whether the AOF's database differs from the replicas'.
    #[inline]
    pub(super) fn diverged(&self) -> bool {
        self.aof_db.is_some()
    }

    /// Both consumers start from no selected database.
    pub(super) fn reselect(&mut self) {
        self.aof_db = None;
    }

    /// MULTI of `len` bytes went in at `at`: later parts move along.
    pub(super) fn shift(&mut self, at: usize, len: usize) {
        for (r, _) in &mut self.parts {
            if r.start >= at {
                *r = r.start + len..r.end + len;
            }
        }
    }

    /// The stream as (what the AOF takes, what the replicas take), or
    /// None when both take all of it.
    pub(super) fn apart(&mut self, out: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
        if self.parts.is_empty() {
            return None;
        }
        let (mut aof, mut replicas) = (Vec::with_capacity(out.len()), Vec::with_capacity(out.len()));
        let mut at = 0;
        self.parts.sort_by_key(|(r, _)| r.start);
        for (r, only) in self.parts.drain(..) {
            aof.extend_from_slice(&out[at..r.start]);
            replicas.extend_from_slice(&out[at..r.start]);
            match only {
                Only::Aof => aof.extend_from_slice(&out[r.clone()]),
                Only::Replicas => replicas.extend_from_slice(&out[r.clone()]),
            }
            at = r.end;
        }
        aof.extend_from_slice(&out[at..]);
        replicas.extend_from_slice(&out[at..]);
        Some((aof, replicas))
    }
}

impl Changes {
    /// The database `to` has selected.
    fn db_of(&self, to: Only) -> Option<usize> {
        match to {
            Only::Replicas => self.selected_db,
            Only::Aof => self.split.aof_db.unwrap_or(self.selected_db),
        }
    }

    /// `to` is now in `db`; the other consumer stays where it is.
    fn set_db(&mut self, to: Only, db: Option<usize>) {
        match to {
            Only::Replicas => {
                let aof = self.db_of(Only::Aof);
                self.selected_db = db;
                self.split.aof_db = (aof != db).then_some(aof);
            }
            Only::Aof => self.split.aof_db = (db != self.selected_db).then_some(db),
        }
    }

    /// SELECT `db` for whichever consumer is elsewhere (the shared path
    /// when both are, the common case), after which both are in `db`.
    #[cold]
    pub(super) fn select(&mut self, db: usize) {
        let replicas = self.selected_db != Some(db);
        let aof = self.db_of(Only::Aof) != Some(db);
        let start = self.out.len();
        encode_select(&mut self.out, db);
        if aof != replicas {
            let only = if aof { Only::Aof } else { Only::Replicas };
            self.split.parts.push((start..self.out.len(), only));
        }
        self.selected_db = Some(db);
        self.split.aof_db = None;
    }

    /// MULTI went in at `at`, before a block's first command, which went
    /// to one consumer only: Redis sends MULTI in that command's db, so
    /// the other consumer, elsewhere, selects that db first.
    #[cold]
    pub(super) fn select_other_at(&mut self, at: usize) {
        let db = self.split.last_db;
        let other = if self.selected_db == Some(db) { Only::Aof } else { Only::Replicas };
        let mut select = Vec::new();
        encode_select(&mut select, db);
        let len = select.len();
        self.out.splice(at..at, select);
        self.split.shift(at, len);
        self.split.parts.push((at..at + len, other));
        self.selected_db = Some(db);
        self.split.aof_db = None;
    }

    /// EXEC of a block whose last command went to one consumer only: the
    /// other selects that command's db first, as Redis sends EXEC there.
    #[cold]
    pub(super) fn select_for_exec(&mut self) {
        self.select(self.split.last_db);
    }

    /// Replay one command (`push` writes it), run against `db`, to `to`
    /// only. With no such consumer it is dropped; with no other consumer
    /// it is an ordinary replay.
    pub(super) fn replay_to(&mut self, to: Only, db: usize, push: impl FnOnce(&mut Vec<u8>)) {
        let (mine, other) = match to {
            Only::Aof => (self.consumers.aof, self.consumers.replicas),
            Only::Replicas => (self.consumers.replicas, self.consumers.aof),
        };
        if mine.is_none() {
            return;
        }
        if other.is_none() {
            self.prelude(db);
            return push(&mut self.out);
        }
        self.open_multi();
        if self.db_of(to) != Some(db) {
            let start = self.out.len();
            encode_select(&mut self.out, db);
            self.split.parts.push((start..self.out.len(), to));
            self.set_db(to, Some(db));
        }
        self.split.last_db = db;
        self.mark_block_first();
        let start = self.out.len();
        push(&mut self.out);
        self.split.parts.push((start..self.out.len(), to));
    }

    /// Replay the running command to the consumers `redis.set_repl` left
    /// it (its PUBLISH to the replicas only, as ever). A command no
    /// consumer that is on may have is not replayed at all, so it does not
    /// count towards wrapping the script in MULTI/EXEC (Redis never
    /// queues it: `alsoPropagate` checks `shouldPropagate`).
    #[cold]
    pub(super) fn replay_withheld(&mut self, db: usize, argv: Request, dirty_moved: bool, mine: Option<Translation>) {
        let forced = mine.as_ref().is_some_and(|t| t.replicas_only);
        let (replace, cmds) = mine.map_or((false, Vec::new()), |t| (t.replace, t.cmds));
        let targets = if forced { TO_REPLICAS } else { TO_AOF | TO_REPLICAS } & !self.withheld;
        if targets & self.installed() == 0 {
            return;
        }
        let with_argv = forced || (!replace && dirty_moved);
        let wrap = cmds.len() + usize::from(with_argv) > 1;
        if wrap {
            self.begin_atomic();
        }
        let to = match targets {
            TO_AOF => Some(Only::Aof),
            TO_REPLICAS => Some(Only::Replicas),
            _ => None,
        };
        if with_argv {
            self.replay_one(to, db, |out| argv.push_to(out));
        }
        for c in &cmds {
            self.replay_one(to, db, |out| resp::encode_command(out, c));
        }
        if wrap {
            self.end_atomic();
        }
    }

    /// One command to `to`, or to both consumers.
    fn replay_one(&mut self, to: Option<Only>, db: usize, push: impl FnOnce(&mut Vec<u8>)) {
        match to {
            Some(to) => self.replay_to(to, db, push),
            None => {
                self.prelude(db);
                push(&mut self.out);
            }
        }
    }

    /// The consumers that are on, as `TO_*` bits.
    fn installed(&self) -> u8 {
        (u8::from(self.consumers.aof.is_some()) * TO_AOF) | (u8::from(self.consumers.replicas.is_some()) * TO_REPLICAS)
    }
}

fn encode_select(out: &mut Vec<u8>, db: usize) {
    resp::encode_command(out, &[b"SELECT", db.to_string().as_bytes()]);
}

#[cfg(test)]
mod tests {
    use super::super::{Changes, Request};
    use super::*;

    fn both() -> Changes {
        let mut c = Changes::default();
        c.consumers.aof = Some(|_, _| {});
        c.consumers.replicas = Some(|_, _| {});
        c
    }

    fn apart(c: &mut Changes) -> (String, String) {
        let out = std::mem::take(&mut c.out);
        let (a, r) = c.split.apart(&out).unwrap_or_else(|| (out.clone(), out.clone()));
        (String::from_utf8_lossy(&a).into_owned(), String::from_utf8_lossy(&r).into_owned())
    }

    const SEL0: &str = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n";
    const SEL5: &str = "*2\r\n$6\r\nSELECT\r\n$1\r\n5\r\n";
    const PUB: &str = "*3\r\n$7\r\nPUBLISH\r\n$1\r\nc\r\n$1\r\nm\r\n";
    const INCR: &str = "*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n";
    const MULTI: &str = "*1\r\n$5\r\nMULTI\r\n";
    const EXEC: &str = "*1\r\n$4\r\nEXEC\r\n";

    fn publish(c: &mut Changes, db: usize) {
        let args = resp::Args::from_parts([&b"PUBLISH"[..], b"c", b"m"]);
        c.replay_to(Only::Replicas, db, |out| Request { frame: &[], args: &args }.push_to(out));
    }

    #[test]
    fn the_aof_gets_nothing_of_a_publish_nor_its_select() {
        let mut c = both();
        c.replay(0, &[b"INCR", b"x"]);
        publish(&mut c, 5);
        let (aof, replicas) = apart(&mut c);
        assert_eq!(aof, format!("{SEL0}{INCR}"));
        assert_eq!(replicas, format!("{SEL0}{INCR}{SEL5}{PUB}"));
        // The AOF is still in db 0, the replicas in db 5.
        c.replay(5, &[b"INCR", b"x"]);
        c.replay(0, &[b"INCR", b"x"]);
        let (aof, replicas) = apart(&mut c);
        assert_eq!(aof, format!("{SEL5}{INCR}{SEL0}{INCR}"));
        assert_eq!(replicas, format!("{INCR}{SEL0}{INCR}"));
    }

    #[test]
    fn a_block_wraps_for_both_and_a_lone_publish_is_not_wrapped() {
        let mut c = both();
        c.begin_atomic();
        publish(&mut c, 0);
        c.end_atomic();
        assert_eq!(apart(&mut c), (String::new(), format!("{SEL0}{PUB}")));
        c.begin_atomic();
        publish(&mut c, 0);
        c.replay(0, &[b"INCR", b"x"]);
        c.end_atomic();
        let (aof, replicas) = apart(&mut c);
        assert_eq!(aof, format!("{SEL0}{MULTI}{INCR}{EXEC}"));
        assert_eq!(replicas, format!("{MULTI}{PUB}{INCR}{EXEC}"));
    }

    #[test]
    fn exec_goes_in_the_last_commands_db_to_the_aof_too() {
        let mut c = both();
        c.begin_atomic();
        c.replay(0, &[b"INCR", b"x"]);
        publish(&mut c, 5);
        c.end_atomic();
        let (aof, replicas) = apart(&mut c);
        assert_eq!(aof, format!("{SEL0}{MULTI}{INCR}{SEL5}{EXEC}"));
        assert_eq!(replicas, format!("{SEL0}{MULTI}{INCR}{SEL5}{PUB}{EXEC}"));
        assert!(!c.split.diverged());
    }

    #[test]
    fn without_an_aof_it_is_an_ordinary_replay_and_without_replicas_nothing() {
        let mut c = Changes::default();
        c.consumers.replicas = Some(|_, _| {});
        publish(&mut c, 0);
        assert!(c.split.parts.is_empty());
        assert_eq!(String::from_utf8_lossy(&c.out), format!("{SEL0}{PUB}"));
        let mut c = Changes::default();
        c.consumers.aof = Some(|_, _| {});
        publish(&mut c, 0);
        assert!(c.out.is_empty());
    }

    /// A script's INCR x in `db` while `redis.set_repl` withholds it from
    /// the consumers `withheld` names.
    fn incr_withheld(c: &mut Changes, db: usize, withheld: u8) {
        let args = resp::Args::from_parts([&b"INCR"[..], b"x"]);
        c.set_withheld(withheld);
        c.replay_command(db, Request { frame: &[], args: &args }, true, None);
        c.set_withheld(0);
    }

    #[test]
    fn an_aof_only_command_moves_only_the_aofs_database() {
        let mut c = both();
        c.replay(0, &[b"INCR", b"x"]);
        incr_withheld(&mut c, 5, TO_REPLICAS);
        c.replay(0, &[b"INCR", b"x"]);
        let (aof, replicas) = apart(&mut c);
        assert_eq!(aof, format!("{SEL0}{INCR}{SEL5}{INCR}{SEL0}{INCR}"));
        assert_eq!(replicas, format!("{SEL0}{INCR}{INCR}"));
    }

    #[test]
    fn multi_and_exec_go_in_the_dbs_of_one_consumer_commands() {
        let mut c = both();
        c.selected_db = Some(0);
        c.begin_atomic();
        incr_withheld(&mut c, 5, TO_REPLICAS);
        c.replay(0, &[b"INCR", b"x"]);
        incr_withheld(&mut c, 5, TO_AOF);
        c.end_atomic();
        let (aof, replicas) = apart(&mut c);
        assert_eq!(aof, format!("{SEL5}{MULTI}{INCR}{SEL0}{INCR}{SEL5}{EXEC}"));
        assert_eq!(replicas, format!("{SEL5}{MULTI}{SEL0}{INCR}{SEL5}{INCR}{EXEC}"));
        assert!(!c.split.diverged());
    }

    #[test]
    fn a_command_withheld_from_both_is_not_replayed_nor_counted_for_multi() {
        let mut c = both();
        c.selected_db = Some(0);
        c.begin_atomic();
        incr_withheld(&mut c, 0, TO_AOF | TO_REPLICAS);
        c.replay(0, &[b"INCR", b"x"]);
        c.end_atomic();
        assert_eq!(apart(&mut c), (INCR.to_string(), INCR.to_string()));
        // Withheld from the only consumer that is on: the same.
        let mut c = Changes::default();
        c.consumers.aof = Some(|_, _| {});
        incr_withheld(&mut c, 0, TO_AOF);
        assert!(c.out.is_empty());
    }
}
