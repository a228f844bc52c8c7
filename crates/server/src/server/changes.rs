//! The change stream: what the running command did to the dataset, and its
//! hand-off to everyone who must hear of it.
//!
//! While a command runs, its handler says what happened through `Ctx`
//! (`modified`, `replicate_as`, `also_replicate`, `replicate_nothing`);
//! `dispatch::call` closes each command with [`end_command`], which turns
//! that into the commands that replay it (its argv, or the translation the
//! handler asked for; lazily expired keys as `DEL` first) and the keys it
//! changed. EXEC and scripts bracket their inner commands with
//! [`Changes::begin_atomic`] / [`Changes::end_atomic`] so they replay as one
//! MULTI/EXEC block. Replay commands are encoded once, as RESP with a
//! `SELECT` whenever the database changes: the bytes every replay consumer
//! receives.
//!
//! [`publish`] hands the stream on when the outermost command (or block)
//! has finished, to its consumers in this fixed order:
//! 1. the AOF (`persistence` installs [`Consumers::aof`]);
//! 2. the replication backlog and replicas (`replication` installs
//!    [`Consumers::replicas`]; the same bytes);
//! 3. tracking invalidations (`tracking`; keyspace notifications are sent
//!    by the handlers themselves, see `notify`);
//! 4. WATCH and clients blocked on keys (here, in the server layer).
//!
//! PUBLISH goes to the replicas only, as in Redis 7.0, and a script's
//! `redis.set_repl` may send its commands to one consumer or none (see
//! [`split`]).
//!
//! A consumer that is off costs one branch: nothing is encoded unless a
//! replay consumer is installed, and no key is copied unless someone
//! watches or waits for keys.
use super::Server;

mod split;

pub use split::{TO_AOF, TO_REPLICAS};

/// A replay consumer: receives the encoded commands of one hand-off.
pub type ReplayConsumer = fn(&mut Server, &[u8]);

/// The consumers the layers above install; `None` is off.
#[derive(Default)]
pub struct Consumers {
    /// The append-only file (set while appending, by `persistence`).
    pub aof: Option<ReplayConsumer>,
    /// The replication backlog and replicas (set by `replication` once a
    /// backlog exists).
    pub replicas: Option<ReplayConsumer>,
}

/// What a handler asked to replay instead of, or besides, its argv.
#[derive(Debug, Default)]
struct Translation {
    /// The argv itself is not replayed.
    replace: bool,
    /// Commands to replay (after the argv unless `replace`).
    cmds: Vec<Vec<Vec<u8>>>,
    /// The argv goes to the replicas only (PUBLISH), changed dataset or not.
    replicas_only: bool,
}

/// A key a command changed (`expired`: it was found expired and deleted).
#[derive(Debug)]
struct Touched {
    db: usize,
    key: Vec<u8>,
    expired: bool,
    /// The client whose command changed it (None: expiry).
    by: Option<usize>,
}

/// The stream's state between hand-offs.
#[derive(Default)]
pub struct Changes {
    pub consumers: Consumers,
    /// The running handler's translation, if it asked for one.
    translation: Option<Translation>,
    /// Replay commands not yet handed on.
    out: Vec<u8>,
    /// Database of the last `SELECT` in the replay stream.
    selected_db: Option<usize>,
    /// Nesting of atomic blocks (EXEC, scripts) and whether MULTI went out.
    atomic_depth: u32,
    multi_fed: bool,
    /// Where the block's first command starts in `out` (after its SELECT):
    /// MULTI goes there once a second command comes, as Redis 7.0 wraps
    /// only what propagates more than one command.
    block_first: Option<usize>,
    /// Parts of `out` for one consumer only (empty but after a PUBLISH).
    split: split::Split,
    /// Keys changed since the last hand-off (only while someone wants them).
    touched: Vec<Touched>,
    /// The running handler named the keys it changed (`Ctx::modified`).
    said: bool,
    /// Consumers (`TO_*` bits) the running script's `redis.set_repl`
    /// withholds its commands from; 0 outside scripts.
    withheld: u8,
    /// The client whose command is being handed off (none for expiries
    /// from the cron), so the replication consumer can note the offset its
    /// WAIT must reach.
    pub origin: Option<usize>,
}

impl Changes {
    /// Whether a replay consumer is on: handlers skip building translations
    /// when not.
    #[inline]
    pub fn replaying(&self) -> bool {
        self.consumers.aof.is_some() || self.consumers.replicas.is_some()
    }

    /// The next replay command starts with a `SELECT` (a consumer started
    /// a new file or stream and must not assume the previous database).
    pub fn reselect(&mut self) {
        self.selected_db = None;
        self.split.reselect();
    }

    /// Open an atomic block: what is replayed until the matching
    /// [`Changes::end_atomic`] goes out as one MULTI/EXEC. Blocks nest.
    pub fn begin_atomic(&mut self) {
        self.atomic_depth += 1;
    }

    /// Inside EXEC or a script: Redis's `in_exec` for the commands a
    /// script may not call (BGREWRITEAOF, CONFIG SET appendonly), which
    /// schedule their fork instead of forking mid-transaction.
    pub fn in_atomic(&self) -> bool {
        self.atomic_depth > 0
    }

    /// Close an atomic block; the outermost one writes EXEC if MULTI went out
    /// (a block that replayed nothing leaves no trace).
    pub fn end_atomic(&mut self) {
        self.atomic_depth = self.atomic_depth.saturating_sub(1);
        if self.atomic_depth > 0 {
            return;
        }
        self.block_first = None;
        if self.multi_fed {
            self.multi_fed = false;
            if self.split.diverged() {
                self.select_for_exec();
            }
            resp::encode_command(&mut self.out, &[b"EXEC"]);
        }
    }

    /// Replay `args` instead of the running command's argv.
    pub fn replicate_as(&mut self, args: &[&[u8]]) {
        if self.replaying() {
            self.translation = Some(Translation { replace: true, cmds: vec![owned(args)], replicas_only: false });
        }
    }

    /// Replay `args` after what the running command replays (several
    /// commands go out as one MULTI/EXEC).
    pub fn also_replicate(&mut self, args: &[&[u8]]) {
        if self.replaying() {
            self.translation.get_or_insert_with(Default::default).cmds.push(owned(args));
        }
    }

    /// Replay nothing for the running command although it changed the
    /// dataset (its effects went out some other way).
    pub fn replicate_nothing(&mut self) {
        if self.replaying() {
            self.translation = Some(Translation { replace: true, cmds: Vec::new(), replicas_only: false });
        }
    }

    /// Replay the running command's argv to the replicas only, although
    /// it changed nothing (Redis's `forceCommandPropagation(c,
    /// PROPAGATE_REPL)`: PUBLISH, so a replica's subscribers hear it).
    pub fn replicate_to_replicas_only(&mut self) {
        if self.consumers.replicas.is_some() {
            self.translation = Some(Translation { replace: true, cmds: Vec::new(), replicas_only: true });
        }
    }

    /// The running handler changed `key` of `db`; `wanted` says whether
    /// anyone listens for keys (see [`Server::wants_keys`]).
    #[inline]
    pub fn modified(&mut self, db: usize, key: &[u8], wanted: bool, by: usize) {
        self.said = true;
        if wanted {
            self.touch(db, key, by);
        }
    }

    /// The running handler changed the dataset without modifying any key
    /// as Redis signals it (consumer-group bookkeeping): nothing is touched.
    pub fn no_key_modified(&mut self) {
        self.said = true;
    }

    /// A key argument of a write whose handler did not name the keys it
    /// changed: assumed changed (see `dispatch::call`).
    pub fn touch(&mut self, db: usize, key: &[u8], by: usize) {
        self.touched.push(Touched { db, key: key.to_vec(), expired: false, by: Some(by) });
    }

    /// Start a command: the translation of an enclosing command (EXEC) is
    /// kept aside until [`end_command`] restores it.
    #[inline]
    pub fn begin_command(&mut self) -> Option<OuterTranslation> {
        if self.replaying() {
            self.translation.take().map(OuterTranslation)
        } else {
            None
        }
    }

    /// Replay one command run against database `db`.
    pub fn replay(&mut self, db: usize, args: &[&[u8]]) {
        self.prelude(db);
        resp::encode_command(&mut self.out, args);
    }

    /// SELECT when the db changes; inside an atomic block, MULTI before
    /// its first command once a second one comes (after the first's
    /// SELECT, so a block in one db holds only its commands).
    fn prelude(&mut self, db: usize) {
        self.open_multi();
        if self.selected_db != Some(db) || self.split.diverged() {
            self.select(db);
        }
        self.mark_block_first();
    }

    /// Inside an atomic block whose first command went out: MULTI before it.
    #[inline]
    fn open_multi(&mut self) {
        if self.atomic_depth > 0 && !self.multi_fed {
            if let Some(at) = self.block_first {
                self.multi_fed = true;
                let mut multi = Vec::with_capacity(15);
                resp::encode_command(&mut multi, &[b"MULTI"]);
                let len = multi.len();
                self.out.splice(at..at, multi);
                self.split.shift(at, len);
                if self.split.diverged() {
                    self.select_other_at(at);
                }
            }
        }
    }

    /// Inside an atomic block, the next command is its first: where MULTI
    /// goes if a second comes.
    #[inline]
    fn mark_block_first(&mut self) {
        if self.atomic_depth > 0 && self.block_first.is_none() {
            self.block_first = Some(self.out.len());
        }
    }

    /// `redis.set_repl`: withhold the running script's next commands from
    /// the consumers `withheld` names (`TO_*` bits; 0 when the run ends).
    pub fn set_withheld(&mut self, withheld: u8) {
        self.withheld = withheld;
    }

    /// Replay the command's own argv and/or its translation.
    fn replay_command(&mut self, db: usize, argv: Request, dirty_moved: bool, mine: Option<Translation>) {
        if self.withheld != 0 {
            return self.replay_withheld(db, argv, dirty_moved, mine);
        }
        let Some(t) = mine else {
            if dirty_moved {
                self.prelude(db);
                argv.push_to(&mut self.out);
            }
            return;
        };
        if t.replicas_only {
            return self.replay_to(split::Only::Replicas, db, |out| argv.push_to(out));
        }
        let with_argv = !t.replace && dirty_moved;
        let wrap = t.cmds.len() + usize::from(with_argv) > 1;
        if wrap {
            self.begin_atomic();
        }
        if with_argv {
            self.prelude(db);
            argv.push_to(&mut self.out);
        }
        for c in &t.cmds {
            self.prelude(db);
            resp::encode_command(&mut self.out, c);
        }
        if wrap {
            self.end_atomic();
        }
    }
}

/// The running command's arguments as the request parser left them: the
/// frame they were parsed from (empty for owned arguments) and their table.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub frame: &'a [u8],
    pub args: &'a resp::Args,
}

impl Request<'_> {
    /// Append the command in the replay stream's encoding: the client's
    /// own bytes when they already are exactly that (SET k v, INCR k: most
    /// writes), which costs one copy instead of encoding every argument.
    #[inline]
    fn push_to(self, out: &mut Vec<u8>) {
        match self.args.canonical_frame(self.frame) {
            Some(raw) => out.extend_from_slice(raw),
            None => resp::encode_command_parts(out, (0..self.args.len()).map(|i| self.args.get(self.frame, i))),
        }
    }
}

/// An enclosing command's translation, kept aside while an inner command
/// runs (opaque outside this module).
pub struct OuterTranslation(Translation);

fn owned(args: &[&[u8]]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.to_vec()).collect()
}

impl Server {
    /// Whether anyone listens for the keys commands change (WATCH, clients
    /// blocked on keys): otherwise keys are not even copied.
    #[inline]
    pub fn wants_keys(&self) -> bool {
        self.blocking.any_waiters() || !self.watches.is_empty() || self.tracking.active()
    }

    /// Whether deleted expired keys must be collected (`Db::track_expired`).
    #[inline]
    pub fn wants_expired(&self) -> bool {
        !self.watches.is_empty()
            || self.tracking.active()
            || self.changes.replaying()
            || self.config.notify_keyspace_events & crate::config::NOTIFY_EXPIRED != 0
    }

    /// Turn collection of expired keys on or off as [`Server::wants_expired`] says.
    pub fn update_expired_tracking(&mut self) {
        let track = self.wants_expired();
        self.collecting_expired = track;
        let flag = track.then(|| self.keyspace.expired_logged.clone());
        for db in &mut self.keyspace.dbs {
            db.track_expired = flag.clone();
        }
    }

    /// A key changed: fail the next EXEC of every client watching it.
    /// A key stale at WATCH time that is now deleted did not logically
    /// change: that watcher only forgets it was stale.
    pub fn touch_watched(&mut self, db: usize, key: &[u8]) {
        let gone = self.keyspace.dbs[db].find(key).is_none();
        for &cid in self.watches.watchers(db, key) {
            if let Some(c) = self.clients.get_mut(cid) {
                match c.watched_stale.iter().position(|(d, k)| *d == db && k == key) {
                    Some(i) if gone => drop(c.watched_stale.swap_remove(i)),
                    _ => c.watch_touched = true,
                }
            }
        }
    }
}

/// Close a command that ran against database `db`: keys found expired are
/// replayed as `DEL` (before the command, which saw them gone), then the
/// command itself. `outer` is what [`Changes::begin_command`] returned.
/// Returns whether the handler named the keys it changed. Inlined: with
/// every consumer off this is a handful of loads on every command's path.
#[inline]
pub fn end_command(
    srv: &mut Server,
    db: usize,
    argv: Request,
    dirty_moved: bool,
    outer: Option<OuterTranslation>,
) -> bool {
    collect_expired(srv);
    if srv.config.notify_keyspace_events & (crate::config::NOTIFY_NEW | crate::config::NOTIFY_KEY_MISS) != 0 {
        srv.flush_engine_events();
    }
    let ch = &mut srv.changes;
    if ch.replaying() || ch.translation.is_some() || outer.is_some() {
        let mine = std::mem::replace(&mut ch.translation, outer.map(|o| o.0));
        if ch.replaying() {
            ch.replay_command(db, argv, dirty_moved, mine);
        }
    }
    std::mem::take(&mut ch.said)
}

/// Keys deleted because they expired (lazily or by the active cycle) since
/// the last call: `DEL` in the replay stream, touched for WATCH.
#[inline]
pub fn collect_expired(srv: &mut Server) {
    // Kept equal to `wants_expired()` by `update_expired_tracking`: one
    // load on every command's path instead of four.
    if srv.collecting_expired && srv.keyspace.expired_logged.load(std::sync::atomic::Ordering::Relaxed) {
        collect_expired_keys(srv);
    }
    // Values expired or overwritten under a lazy-free option go to the
    // lazy-free thread (the engine left them with the db).
    super::lazyfree::reap(srv);
}

#[cold]
fn collect_expired_keys(srv: &mut Server) {
    srv.keyspace.expired_logged.store(false, std::sync::atomic::Ordering::Relaxed);
    let watching = !srv.watches.is_empty() || srv.tracking.active();
    for i in 0..srv.keyspace.dbs.len() {
        if srv.keyspace.dbs[i].expired_log.is_empty() {
            continue;
        }
        for key in std::mem::take(&mut srv.keyspace.dbs[i].expired_log) {
            srv.notify_expired(i, &key);
            if srv.changes.replaying() {
                // Redis's `propagateDeletion`: UNLINK when freed lazily.
                let cmd: &[u8] = if srv.config.lazyfree_lazy_expire { b"UNLINK" } else { b"DEL" };
                srv.changes.replay(i, &[cmd, &key]);
            }
            if watching {
                srv.changes.touched.push(Touched { db: i, key, expired: true, by: None });
            }
        }
    }
}

/// A key the server deleted on its own (eviction): replayed as `DEL`
/// (`UNLINK` when freed lazily), and touched for WATCH and tracking as an
/// expired key is (no client caused it, no blocked client can gain).
pub fn server_deleted(srv: &mut Server, db: usize, key: &[u8], unlink: bool) {
    if srv.changes.replaying() {
        let cmd: &[u8] = if unlink { b"UNLINK" } else { b"DEL" };
        srv.changes.replay(db, &[cmd, key]);
    }
    if !srv.watches.is_empty() || srv.tracking.active() {
        srv.changes.touched.push(Touched { db, key: key.to_vec(), expired: true, by: None });
    }
}

/// Hand what changed since the last call to the consumers, in the order
/// the module header lists. Inside an atomic block nothing goes out yet: a
/// block reaches every consumer whole.
#[inline]
pub fn publish(srv: &mut Server) {
    let ch = &srv.changes;
    if !ch.out.is_empty() || !ch.touched.is_empty() {
        hand_off(srv);
    }
}

fn hand_off(srv: &mut Server) {
    let ch = &mut srv.changes;
    if ch.atomic_depth > 0 {
        return;
    }
    let out = std::mem::take(&mut ch.out);
    if let Some((aof, replicas)) = ch.split.apart(&out) {
        hand_off_apart(srv, &aof, &replicas);
    } else if !out.is_empty() {
        if let Some(aof) = ch.consumers.aof {
            aof(srv, &out);
        }
        if let Some(replicas) = srv.changes.consumers.replicas {
            replicas(srv, &out);
        }
    }
    let mut out = out;
    out.clear();
    srv.changes.out = out;
    let touched = std::mem::take(&mut srv.changes.touched);
    for t in &touched {
        if !t.expired {
            srv.blocking.signal(t.db, &t.key);
        }
        if srv.tracking.active() {
            srv.tracking_invalidate(&t.key, t.by);
        }
        srv.touch_watched(t.db, &t.key);
    }
}

/// A hand-off where the AOF and the replicas take different bytes.
#[cold]
fn hand_off_apart(srv: &mut Server, aof: &[u8], replicas: &[u8]) {
    if let Some(consume) = srv.changes.consumers.aof.filter(|_| !aof.is_empty()) {
        consume(srv, aof);
    }
    if let Some(consume) = srv.changes.consumers.replicas.filter(|_| !replicas.is_empty()) {
        consume(srv, replicas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaying() -> Changes {
        let mut c = Changes::default();
        c.consumers.aof = Some(|_, _| {});
        c
    }

    fn text(c: &Changes) -> String {
        String::from_utf8_lossy(&c.out).into_owned()
    }

    #[test]
    fn select_only_when_the_db_changes() {
        let mut c = replaying();
        c.replay(0, &[b"SET", b"k", b"v"]);
        c.replay(0, &[b"DEL", b"k"]);
        c.replay(3, &[b"DEL", b"k"]);
        let want =
            "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n\
                    *2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n";
        assert_eq!(text(&c), want);
    }

    #[test]
    fn atomic_blocks_wrap_only_when_something_was_replayed() {
        let mut c = replaying();
        c.selected_db = Some(0);
        c.begin_atomic();
        c.end_atomic();
        assert!(c.out.is_empty());
        c.begin_atomic();
        c.begin_atomic();
        c.replay(0, &[b"INCR", b"x"]);
        c.end_atomic();
        c.replay(0, &[b"INCR", b"y"]);
        c.end_atomic();
        let want =
            "*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n*2\r\n$4\r\nINCR\r\n$1\r\ny\r\n*1\r\n$4\r\nEXEC\r\n";
        assert_eq!(text(&c), want);
    }

    #[test]
    fn a_block_of_one_command_is_not_wrapped() {
        let mut c = replaying();
        c.selected_db = Some(0);
        c.begin_atomic();
        c.replay(0, &[b"INCR", b"x"]);
        c.end_atomic();
        assert_eq!(text(&c), "*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n");
    }

    #[test]
    fn multi_follows_the_first_commands_select() {
        let mut c = replaying();
        c.begin_atomic();
        c.replay(3, &[b"INCR", b"x"]);
        c.replay(4, &[b"INCR", b"y"]);
        c.end_atomic();
        let want = "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n\
                    *2\r\n$6\r\nSELECT\r\n$1\r\n4\r\n*2\r\n$4\r\nINCR\r\n$1\r\ny\r\n*1\r\n$4\r\nEXEC\r\n";
        assert_eq!(text(&c), want);
    }

    #[test]
    fn a_translation_with_the_argv_replays_as_one_block() {
        let mut c = replaying();
        c.selected_db = Some(0);
        c.also_replicate(&[b"PEXPIREAT", b"k", b"1"]);
        let mine = c.translation.take();
        let args = resp::Args::from_parts([&b"SET"[..], b"k", b"v"]);
        c.replay_command(0, Request { frame: &[], args: &args }, true, mine);
        let want = "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n\
                    *3\r\n$9\r\nPEXPIREAT\r\n$1\r\nk\r\n$1\r\n1\r\n*1\r\n$4\r\nEXEC\r\n";
        assert_eq!(text(&c), want);
    }

    #[test]
    fn a_request_is_copied_or_encoded_to_the_same_bytes() {
        let sent = b"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$2\r\nv1\r\n*1\r\n$4\r\nPING\r\n";
        let lenient = b"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$2\r\nv1xy";
        let owned = resp::Args::from_parts([&b"set"[..], b"k", b"v1"]);
        let want = "*3\r\n$3\r\nset\r\n$1\r\nk\r\n$2\r\nv1\r\n";
        for frame in [&sent[..], &lenient[..], b"set k v1\r\n"] {
            let mut args = resp::Args::default();
            resp::RequestParser::new().parse(frame, &mut args, Default::default()).unwrap();
            let mut c = replaying();
            c.selected_db = Some(0);
            c.replay_command(0, Request { frame, args: &args }, true, None);
            assert_eq!(text(&c), want, "{:?}", String::from_utf8_lossy(frame));
        }
        let mut c = replaying();
        c.selected_db = Some(0);
        c.replay_command(0, Request { frame: &[], args: &owned }, true, None);
        assert_eq!(text(&c), want);
    }

    #[test]
    fn off_builds_no_translation() {
        let mut c = Changes::default();
        c.replicate_as(&[b"SET", b"k", b"v"]);
        c.also_replicate(&[b"DEL", b"k"]);
        assert!(c.translation.is_none());
        assert!(c.begin_command().is_none());
    }
}
