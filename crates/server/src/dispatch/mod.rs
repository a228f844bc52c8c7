//! Command dispatch: the spec table every command registers into, the
//! argument view handlers read, the guards that run before every command,
//! and the call path that ties them together.
pub mod guards;
pub mod keys;
pub mod registry;
pub mod reply;

pub use registry::{CommandSpec, Registry};
pub use reply::Reply;

use crate::engine::Db;
use crate::server::blocking::{Blocked, TimeoutReply};
use crate::server::{ClientInfo, Server};

/// Command flags, named after Redis's.
pub mod flags {
    pub const WRITE: u32 = 1;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const PUBSUB: u32 = 1 << 4;
    pub const NOSCRIPT: u32 = 1 << 5;
    pub const BLOCKING: u32 = 1 << 6;
    pub const LOADING: u32 = 1 << 7;
    pub const STALE: u32 = 1 << 8;
    pub const SKIP_MONITOR: u32 = 1 << 9;
    pub const SKIP_SLOWLOG: u32 = 1 << 10;
    pub const FAST: u32 = 1 << 11;
    pub const NO_AUTH: u32 = 1 << 12;
    pub const MAY_REPLICATE: u32 = 1 << 13;
    pub const SENTINEL: u32 = 1 << 14;
    pub const NO_MANDATORY_KEYS: u32 = 1 << 15;
    pub const ALLOW_BUSY: u32 = 1 << 16;
    /// Key positions depend on the arguments (COMMAND INFO lists it last).
    pub const MOVABLEKEYS: u32 = 1 << 17;

    /// Redis's names, in the order COMMAND INFO lists them.
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (MAY_REPLICATE, "may_replicate"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (ALLOW_BUSY, "allow_busy"),
        (MOVABLEKEYS, "movablekeys"),
    ];
}

/// The arguments of the command being executed (name included at 0).
#[derive(Clone, Copy)]
pub struct Argv<'a> {
    frame: &'a [u8],
    args: &'a resp::Args,
}

impl<'a> Argv<'a> {
    pub fn new(frame: &'a [u8], args: &'a resp::Args) -> Self {
        Argv { frame, args }
    }
    pub fn len(&self) -> usize {
        self.args.len()
    }
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }
    pub fn get(&self, i: usize) -> &'a [u8] {
        self.args.get(self.frame, i)
    }
    /// Arguments `from..` as slices.
    pub fn iter_from(&self, from: usize) -> impl Iterator<Item = &'a [u8]> + '_ {
        (from..self.len()).map(move |i| self.get(i))
    }
    /// True if argument `i` equals `word`, ignoring ASCII case.
    pub fn is(&self, i: usize, word: &str) -> bool {
        self.get(i).eq_ignore_ascii_case(word.as_bytes())
    }
}

/// Everything a handler may touch while running one command.
pub struct Ctx<'a> {
    pub srv: &'a mut Server,
    pub r: Reply<'a>,
    /// Slot of the calling client in `srv.clients`.
    pub cid: usize,
    /// The client's selected database (kept in sync by SELECT).
    pub db: usize,
    /// Command time in unix ms (one clock read per batch).
    pub now: i64,
    /// False inside MULTI/EXEC and scripts, where blocking commands behave
    /// as their non-blocking forms.
    pub may_block: bool,
}

impl<'a> Ctx<'a> {
    /// The selected database and the reply writer, borrowed together.
    pub fn db_reply(&mut self) -> (&mut Db, &mut Reply<'a>) {
        (&mut self.srv.keyspace.dbs[self.db], &mut self.r)
    }
    pub fn dbm(&mut self) -> &mut Db {
        &mut self.srv.keyspace.dbs[self.db]
    }
    pub fn client(&mut self) -> &mut ClientInfo {
        self.srv.clients.get_mut(self.cid).expect("calling client is registered")
    }
    /// Record a change to the dataset (INFO `rdb_changes_since_last_save`).
    pub fn dirty(&mut self, n: u64) {
        self.srv.dirty += n;
    }
    /// Block the caller until one of `keys` may have data or `deadline`
    /// (unix ms) passes; the command is re-run then. Returns false where
    /// blocking is not allowed: the handler then replies as on timeout.
    pub fn block_on(&mut self, keys: &[&[u8]], deadline: Option<i64>, on_timeout: TimeoutReply, argv: &Argv) -> bool {
        if !self.may_block {
            return false;
        }
        let b = &mut self.srv.blocking;
        if let Some((cid, again)) = &mut b.rerun {
            if *cid == self.cid {
                // Re-run found nothing yet: keep the place in every queue.
                *again = true;
                return true;
            }
        }
        let blocked = Blocked {
            db: self.db,
            keys: keys.iter().map(|k| k.to_vec()).collect(),
            deadline,
            on_timeout,
            argv: resp::Args::from_parts(argv.iter_from(0)),
        };
        b.block(self.cid, blocked);
        true
    }

    /// The command changed `key` of the selected database. A handler that
    /// says so names exactly the keys it changed (a pop from the first
    /// non-empty of several keys, the keys DEL found, LTRIM even when it
    /// kept every element): only those are signalled to WATCH and to
    /// blocked clients, as in Redis, instead of every key argument.
    pub fn modified(&mut self, key: &[u8]) {
        self.modified_in(self.db, key);
    }
    /// [`Ctx::modified`] for a key of database `db` (COPY ... DB n, MOVE).
    pub fn modified_in(&mut self, db: usize, key: &[u8]) {
        self.srv.modified_said = true;
        if self.srv.blocking.any_waiters() || !self.srv.watches.is_empty() {
            self.srv.modified_keys.push((db, key.to_vec()));
        }
    }

    pub fn syntax_error(&mut self) {
        self.r.error("ERR syntax error");
    }
    pub fn not_integer(&mut self) {
        self.r.error("ERR value is not an integer or out of range");
    }

    /// Whether changes go to the AOF: handlers skip building translations
    /// (the `propagate_*` calls below) when not.
    #[inline]
    pub fn propagating(&self) -> bool {
        self.srv.aof.on
    }
    /// Write `args` to the AOF instead of this command's argv (relative
    /// times made absolute, random choices made explicit...).
    pub fn propagate_as(&mut self, args: &[&[u8]]) {
        if self.srv.aof.on {
            let cmds = vec![crate::persistence::aof::propagate::owned(args)];
            self.srv.aof.pending = Some(crate::persistence::aof::Pending::replace_with(cmds));
        }
    }
    /// Write `args` to the AOF after what this command propagates (several
    /// commands are wrapped in MULTI/EXEC).
    pub fn also_propagate(&mut self, args: &[&[u8]]) {
        if self.srv.aof.on {
            let p = self.srv.aof.pending.get_or_insert_with(Default::default);
            p.cmds.push(crate::persistence::aof::propagate::owned(args));
        }
    }
    /// Write nothing to the AOF for this command, even though it changed
    /// the dataset (its effects were propagated some other way).
    pub fn propagate_nothing(&mut self) {
        if self.srv.aof.on {
            self.srv.aof.pending = Some(crate::persistence::aof::Pending::replace_with(Vec::new()));
        }
    }
}

/// Run one command line for client `cid`, appending its reply to `out`.
pub fn execute(srv: &mut Server, cid: usize, out: &mut Vec<u8>, argv: &Argv, now: i64) {
    use crate::server::ReplyMode;
    let Some(client) = srv.clients.get_mut(cid) else {
        return;
    };
    let resp3 = client.resp == 3;
    let db = client.db;
    if client.reply_mode == ReplyMode::SkipNext {
        client.reply_mode = ReplyMode::Skipping;
    }
    let reply_start = out.len();
    let mut ctx = Ctx { srv, r: Reply::new(out, resp3), cid, db, now, may_block: true };
    match ctx.srv.registry.lookup(argv) {
        registry::Lookup::Rejected(msg) => {
            ctx.r.error_bytes(&msg);
            abort_transaction(&mut ctx);
        }
        registry::Lookup::Found(id, spec) => run_command(&mut ctx, id, spec, argv),
    }
    let errors = ctx.r.errors as u64;
    ctx.srv.stats.error_replies += errors;
    ctx.srv.stats.commands_processed += u64::from(!blocked_now(&ctx));
    let Some(client) = ctx.srv.clients.get_mut(cid) else {
        return;
    };
    match client.reply_mode {
        ReplyMode::On => {}
        ReplyMode::Off => ctx.r.truncate(reply_start),
        ReplyMode::Skipping => {
            ctx.r.truncate(reply_start);
            client.reply_mode = ReplyMode::On;
        }
        ReplyMode::SkipNext => {
            // Set by this very command (CLIENT REPLY SKIP): its own reply is dropped too.
            ctx.r.truncate(reply_start);
        }
    }
}

fn run_command(ctx: &mut Ctx, id: registry::CommandId, spec: &'static CommandSpec, argv: &Argv) {
    if let Err(msg) = guards::check(ctx, spec, argv) {
        ctx.r.error(&msg);
        ctx.srv.stats.commands[id].rejected += 1;
        abort_transaction(ctx);
        return;
    }
    // Recorded at lookup, as Redis does, so CLIENT LIST names queued and
    // blocked commands too.
    if let Some(c) = ctx.srv.clients.get_mut(ctx.cid) {
        c.last_cmd = Some(id);
    }
    if queue_in_transaction(ctx, id, spec, argv) {
        return;
    }
    call(ctx, id, spec, argv);
}

/// Commands that act on the MULTI block itself instead of being queued.
const TRANSACTION_CONTROL: &[&str] = &["exec", "discard", "multi", "watch", "quit", "reset"];

/// Inside MULTI, queue the command and reply `+QUEUED`; true if queued.
fn queue_in_transaction(ctx: &mut Ctx, id: registry::CommandId, spec: &CommandSpec, argv: &Argv) -> bool {
    let Some(tx) = ctx.srv.clients.get_mut(ctx.cid).and_then(|c| c.tx.as_mut()) else { return false };
    if TRANSACTION_CONTROL.contains(&spec.name) {
        return false;
    }
    tx.queued.push((id, resp::Args::from_parts(argv.iter_from(0))));
    ctx.r.raw(b"+QUEUED\r\n");
    true
}

/// A command was rejected while queueing: the transaction's EXEC will fail.
fn abort_transaction(ctx: &mut Ctx) {
    if let Some(tx) = ctx.srv.clients.get_mut(ctx.cid).and_then(|c| c.tx.as_mut()) {
        tx.aborted = true;
    }
}

/// Commands that only write one destination key and read the others (Redis
/// marks their sources read-only in its key specs): (name, destination).
const DESTINATION_ONLY: &[(&str, usize)] = &[
    ("sinterstore", 1),
    ("sunionstore", 1),
    ("sdiffstore", 1),
    ("zrangestore", 1),
    ("zunionstore", 1),
    ("zinterstore", 1),
    ("zdiffstore", 1),
    ("pfmerge", 1),
    ("bitop", 2),
    ("copy", 2),
];

/// Commands that signal the keys they really changed themselves: the writes
/// of EXEC and scripts are their inner commands' (which signal their own
/// keys when they run), and DEL/UNLINK touch only the keys that existed (a
/// WATCHed key that DEL found absent is not modified, as in Redis).
const WRITES_VIA_INNER: &[&str] = &["exec", "eval", "evalsha", "eval_ro", "evalsha_ro"];

/// Positions of the keys a write command may have changed.
fn written_keys(spec: &CommandSpec, argv: &Argv) -> Vec<usize> {
    if WRITES_VIA_INNER.contains(&spec.name) {
        return Vec::new();
    }
    match DESTINATION_ONLY.iter().find(|(name, _)| *name == spec.name) {
        Some(&(_, dst)) if dst < argv.len() => vec![dst],
        _ => keys::key_positions(spec, argv.len(), |i| argv.get(i)),
    }
}

/// Run a resolved command (no guards): the handler, its statistics, and the
/// notifications a change to the dataset owes blocked clients and WATCHers.
pub(crate) fn call(ctx: &mut Ctx, id: registry::CommandId, spec: &'static CommandSpec, argv: &Argv) {
    let errors_before = ctx.r.errors;
    let dirty_before = ctx.srv.dirty;
    let (db, aof_on) = (ctx.db, ctx.srv.aof.on);
    let outer_propagation = if aof_on { ctx.srv.aof.pending.take() } else { None };
    let started = ctx.srv.call_clock.begin();
    (spec.handler)(ctx, argv);
    let spent = ctx.srv.call_clock.end(started);
    if aof_on || ctx.srv.aof.on {
        // Lazily expired keys are deleted in the file before the command.
        ctx.srv.touch_expired_watched();
        let moved = ctx.srv.dirty != dirty_before;
        crate::persistence::aof::propagate::after_call(ctx.srv, db, argv, moved, outer_propagation);
    }
    if std::mem::take(&mut ctx.srv.modified_said) {
        for (db, key) in std::mem::take(&mut ctx.srv.modified_keys) {
            ctx.srv.blocking.signal(db, &key);
            ctx.srv.touch_watched(db, &key);
        }
    } else if ctx.srv.dirty != dirty_before && (ctx.srv.blocking.any_waiters() || !ctx.srv.watches.is_empty()) {
        for pos in written_keys(spec, argv) {
            ctx.srv.blocking.signal(ctx.db, argv.get(pos));
            ctx.srv.touch_watched(ctx.db, argv.get(pos));
        }
    }
    ctx.srv.touch_expired_watched();
    if blocked_now(ctx) {
        // Counted once, by the run that serves it (as Redis does).
        return;
    }
    let stats = &mut ctx.srv.stats.commands[id];
    stats.calls += 1;
    stats.ticks += spent;
    if ctx.r.errors > errors_before {
        stats.failed += 1;
    }
}

/// Whether the command just run left its client blocked (a first block, or
/// a re-run that found nothing yet).
fn blocked_now(ctx: &Ctx) -> bool {
    match ctx.srv.blocking.rerun {
        Some((cid, again)) if cid == ctx.cid => again,
        _ => ctx.srv.blocking.is_blocked(ctx.cid),
    }
}

/// Write the reply a blocked command gives when its timeout passes.
pub fn write_timeout_reply(out: &mut Vec<u8>, resp3: bool, kind: TimeoutReply) {
    let mut r = Reply::new(out, resp3);
    match kind {
        TimeoutReply::NullArray => r.null_array(),
        TimeoutReply::Null => r.null(),
    }
}
