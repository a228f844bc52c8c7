//! Command dispatch: the spec table every command registers into, the
//! argument view handlers read, the guards that run before every command,
//! and the call path that ties them together.
pub mod guards;
pub mod keys;
pub mod keyspecs;
pub mod permissions;
pub mod registry;
pub mod reply;

pub use registry::{CommandSpec, Registry};
pub use reply::Reply;

use crate::engine::Db;
use crate::server::blocking::{Blocked, TimeoutReply};
use crate::server::changes;
use crate::server::slowlog::SlowCall;
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
    /// May not be queued inside MULTI (SAVE, SHUTDOWN, ...).
    pub const NO_MULTI: u32 = 1 << 18;
    /// Cluster: runs on an importing slot after ASKING (RESTORE-ASKING).
    pub const ASKING: u32 = 1 << 19;
    /// Refused while a replica loads its snapshot in the background.
    pub const NO_ASYNC_LOADING: u32 = 1 << 20;
    /// DEBUG and MODULE: allowed only as `enable-debug-command` /
    /// `enable-module-command` say (hidden from COMMAND INFO, as in Redis).
    pub const PROTECTED: u32 = 1 << 21;

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
        (ASKING, "asking"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        // MAY_REPLICATE is not listed: Redis 7.0 hides it from COMMAND INFO.
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (MOVABLEKEYS, "movablekeys"),
        (ALLOW_BUSY, "allow_busy"),
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
    /// The arguments' total size: CLIENT LIST's `argv-mem` of the client
    /// running this command.
    pub fn mem(&self) -> usize {
        self.iter_from(0).map(<[u8]>::len).sum()
    }
    /// Arguments `from..` as slices.
    pub fn iter_from(&self, from: usize) -> impl ExactSizeIterator<Item = &'a [u8]> + '_ {
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
    /// The command table (fixed once the server starts).
    pub reg: &'static Registry,
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
    /// Run by a script (`redis.call`): MONITOR shows it as `lua`.
    pub from_script: bool,
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
            postponed: false,
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
        let wanted = self.srv.wants_keys();
        self.srv.changes.modified(db, key, wanted, self.cid);
    }

    /// The command changed the dataset but no key as Redis signals one
    /// (XACK, XCLAIM, XGROUP bookkeeping): WATCH, tracking and blocked
    /// clients hear nothing, where a handler that names no key would
    /// otherwise have every key argument touched.
    pub fn no_key_modified(&mut self) {
        self.srv.changes.no_key_modified();
    }

    /// A keyspace event (`notify-keyspace-events`): `class` is one of
    /// `config::NOTIFY_*`, `event` Redis's name for it ("set", "lpush", ...).
    #[inline]
    pub fn notify(&mut self, class: u32, event: &str, key: &[u8]) {
        self.srv.notify(class, event, self.db, key);
    }

    pub fn syntax_error(&mut self) {
        self.r.error("ERR syntax error");
    }
    pub fn not_integer(&mut self) {
        self.r.error("ERR value is not an integer or out of range");
    }

    /// Whether the command's effects are replayed anywhere (AOF, replicas):
    /// handlers skip building translations (the calls below) when not.
    #[inline]
    pub fn replicating(&self) -> bool {
        self.srv.changes.replaying()
    }
    /// The command's effect replays as `args` instead of its argv (relative
    /// times made absolute, random choices made explicit...).
    pub fn replicate_as(&mut self, args: &[&[u8]]) {
        self.srv.changes.replicate_as(args);
    }
    /// The command's effect also replays as `args`, after what it replays
    /// itself (several commands replay as one MULTI/EXEC).
    pub fn also_replicate(&mut self, args: &[&[u8]]) {
        self.srv.changes.also_replicate(args);
    }
    /// Nothing replays for this command, although it changed the dataset
    /// (its effects were replayed some other way).
    pub fn replicate_nothing(&mut self) {
        self.srv.changes.replicate_nothing();
    }
    /// This command replays to the replicas only, although it changed
    /// nothing (PUBLISH: a replica's subscribers hear it too).
    pub fn replicate_to_replicas_only(&mut self) {
        self.srv.changes.replicate_to_replicas_only();
    }
}

/// Run one command line for client `cid`, appending its reply to `out`,
/// then hand what it changed to the change stream's consumers.
pub fn execute(srv: &mut Server, reg: &'static Registry, cid: usize, out: &mut Vec<u8>, argv: &Argv, now: i64) {
    use crate::server::ReplyMode;
    let Some(client) = srv.clients.get_mut(cid) else {
        return;
    };
    let resp3 = client.resp == 3;
    let db = client.db;
    // Judged before the command: SYNC/PSYNC turn the caller into one.
    let replica_link = client.role == crate::server::ClientRole::Replica;
    if client.reply_mode == ReplyMode::SkipNext {
        client.reply_mode = ReplyMode::Skipping;
    }
    let reply_start = out.len();
    let mut ctx = Ctx { srv, reg, r: Reply::new(out, resp3), cid, db, now, may_block: true, from_script: false };
    let cmd_id = match reg.lookup(argv) {
        registry::Lookup::Rejected(msg, id) => {
            if let Some(id) = id {
                ctx.srv.stats.commands[id].rejected += 1;
            }
            reject(&mut ctx, &msg, argv);
            id
        }
        registry::Lookup::Found(id, spec) => {
            run_command(&mut ctx, id, spec, argv);
            Some(id)
        }
    };
    // Messages for this client produced up to now (its own keyspace
    // notifications included) precede the reply, as Redis writes them into
    // the client's buffer as they happen. Invalidations of keys this command
    // wrote, queued next, follow it, as Redis defers them.
    let before_reply = ctx.srv.pubsub.pending_len(cid);
    ctx.srv.changes.origin = Some(cid);
    crate::server::changes::publish(ctx.srv);
    ctx.srv.changes.origin = None;
    if ctx.srv.tracking.active() {
        ctx.srv.tracking_after_reply();
        end_caching_window(&mut ctx, argv);
    }
    count_errors(ctx.srv, &ctx.r);
    ctx.srv.stats.commands_processed += u64::from(!blocked_now(&ctx));
    let Some(client) = ctx.srv.clients.get_mut(cid) else {
        return;
    };
    match client.reply_mode {
        ReplyMode::On => {}
        ReplyMode::Off => {
            if client.role == crate::server::ClientRole::Master {
                log_unexpected_errors(&ctx.r, ("replica", "master"), reg, cmd_id);
            }
            ctx.r.truncate_replies(reply_start)
        }
        ReplyMode::Skipping => {
            ctx.r.truncate_replies(reply_start);
            client.reply_mode = ReplyMode::On;
        }
        ReplyMode::SkipNext => {
            // Set by this very command (CLIENT REPLY SKIP): its own reply is dropped too.
            ctx.r.truncate_replies(reply_start);
        }
    }
    if before_reply > 0 {
        put_pushes_before_reply(&mut ctx, reply_start, before_reply);
    }
    if replica_link && ctx.r.len() > reply_start {
        drop_replying_replica(&mut ctx, reply_start, cmd_id, argv.mem());
    }
}

/// A replica's link carries our stream and nothing else: a command of its
/// that produced a reply would interleave that reply with the stream, so,
/// as Redis 7.0 does, the reply is dropped and the link closed.
#[cold]
fn drop_replying_replica(ctx: &mut Ctx, reply_start: usize, cmd_id: Option<registry::CommandId>, argv_mem: usize) {
    let name = cmd_id.map_or("<unknown>", |id| ctx.reg.full_name(id));
    let who = ctx.srv.client_info_line.map(|f| f(ctx.srv, ctx.cid, argv_mem)).unwrap_or_default();
    crate::log_at!(Warning, "Replica generated a reply to command '{name}', disconnecting it: {who}");
    log_unexpected_errors(&ctx.r, ("master", "replica"), ctx.reg, cmd_id);
    ctx.r.truncate_replies(reply_start);
    // Closed before anything more of its is run or written, as Redis's
    // asynchronous free.
    if let Some(c) = ctx.srv.clients.get_mut(ctx.cid) {
        c.close_after_reply = true;
    }
    if !ctx.srv.pending_kills.contains(&ctx.cid) {
        ctx.srv.pending_kills.push(ctx.cid);
    }
}

/// An error went to (or came from) a replication link: the datasets may
/// have diverged, which Redis logs loudly (the reply itself goes nowhere).
/// `(from, to)` name the sides, this server first. Redis quotes the
/// message as most of its error sites pass it, without the `ERR ` code.
#[cold]
fn log_unexpected_errors(r: &Reply, (from, to): (&str, &str), reg: &Registry, cmd_id: Option<registry::CommandId>) {
    let name = cmd_id.map_or("<unknown>", |id| reg.full_name(id));
    for e in r.error_texts() {
        let e = &e[..e.windows(2).position(|w| w == b"\r\n").unwrap_or(e.len())];
        let e = e.strip_prefix(b"ERR ").unwrap_or(e);
        crate::log_at!(
            Warning,
            "== CRITICAL == This {from} is sending an error to its {to}: '{}' after processing the command '{name}'",
            String::from_utf8_lossy(e)
        );
    }
}

/// Move the first `len` bytes of the client's pushes in front of the reply
/// that starts at `reply_start`.
#[cold]
fn put_pushes_before_reply(ctx: &mut Ctx, reply_start: usize, len: usize) {
    let pushes = ctx.srv.pubsub.take_front(ctx.cid, len);
    ctx.r.insert_push(reply_start, &pushes);
}

fn run_command(ctx: &mut Ctx, id: registry::CommandId, spec: &'static CommandSpec, argv: &Argv) {
    // Recorded at lookup, as Redis does, so CLIENT LIST names queued,
    // postponed, blocked and refused commands too (ACL LOG's client-info
    // names the command it denies).
    if let Some(c) = ctx.srv.clients.get_mut(ctx.cid) {
        c.last_cmd = Some(id);
    }
    if let Err(msg) = guards::check(ctx, id, spec, argv) {
        ctx.r.error(&msg);
        ctx.srv.stats.commands[id].rejected += 1;
        abort_transaction(ctx);
        return;
    }
    if ctx.srv.pause.is_some() && ctx.srv.paused_for(may_write(ctx, spec, argv)) {
        return postpone(ctx, argv);
    }
    if queue_in_transaction(ctx, id, spec, argv) {
        return;
    }
    call(ctx, id, spec, argv);
}

/// Whether a command counts as a writer for CLIENT PAUSE WRITE: flagged
/// write or may-replicate (scripts by their declared flags), or an EXEC
/// whose queue holds one.
#[cold]
fn may_write(ctx: &Ctx, spec: &CommandSpec, argv: &Argv) -> bool {
    const WRITERS: u32 = flags::WRITE | flags::MAY_REPLICATE;
    if spec.name == "exec" {
        let tx = ctx.srv.clients.get(ctx.cid).and_then(|c| c.tx.as_ref());
        return tx.is_some_and(|tx| tx.queued.iter().any(|(id, _)| ctx.reg.spec(*id).flags & WRITERS != 0));
    }
    if spec.flags & WRITERS == 0 {
        return false;
    }
    match (ctx.srv.script_may_write, spec.name) {
        (Some(hook), "eval" | "evalsha" | "fcall") if argv.len() > 1 => hook(ctx.srv, spec.name, argv.get(1)),
        _ => true,
    }
}

/// Hold the client's command until the pause ends; it runs then.
#[cold]
fn postpone(ctx: &mut Ctx, argv: &Argv) {
    let held = Blocked {
        db: ctx.db,
        keys: Vec::new(),
        deadline: None,
        on_timeout: TimeoutReply::Null,
        argv: resp::Args::from_parts(argv.iter_from(0)),
        postponed: true,
    };
    ctx.srv.blocking.block(ctx.cid, held);
}

/// Commands that act on the MULTI block itself instead of being queued.
const TRANSACTION_CONTROL: &[&str] = &["exec", "discard", "multi", "watch", "quit", "reset"];

/// Inside MULTI, queue the command and reply `+QUEUED`; true if queued.
fn queue_in_transaction(ctx: &mut Ctx, id: registry::CommandId, spec: &CommandSpec, argv: &Argv) -> bool {
    let Some(tx) = ctx.srv.clients.get_mut(ctx.cid).and_then(|c| c.tx.as_mut()) else { return false };
    if TRANSACTION_CONTROL.contains(&spec.name) {
        return false;
    }
    tx.argv_mem += argv.iter_from(0).map(<[u8]>::len).sum::<usize>();
    tx.queued.push((id, resp::Args::from_parts(argv.iter_from(0))));
    ctx.r.raw(b"+QUEUED\r\n");
    true
}

/// INFO `total_error_replies` and errorstats: the error replies written
/// to `r`, each under its code (a client's command, or one a script ran).
#[inline]
pub fn count_errors(srv: &mut Server, r: &Reply) {
    let errors = u64::from(r.errors - r.counted_elsewhere);
    srv.stats.error_replies += errors;
    if errors > 0 {
        count_error_codes(srv, r);
    }
}

#[cold]
fn count_error_codes(srv: &mut Server, r: &Reply) {
    for t in r.error_texts() {
        srv.stats.count_error(&t[..t.len().min(32)]);
    }
}

/// An unknown command or a wrong argument count. EXEC refused so (extra
/// arguments) discards the transaction there and then, as Redis does,
/// quoting the reason without its `ERR`.
#[cold]
fn reject(ctx: &mut Ctx, msg: &[u8], argv: &Argv) {
    if !argv.get(0).eq_ignore_ascii_case(b"exec") {
        ctx.r.error_bytes(msg);
        return abort_transaction(ctx);
    }
    let reason = String::from_utf8_lossy(msg.strip_prefix(b"ERR ").unwrap_or(msg)).into_owned();
    let text = guards::abort_exec(ctx, &reason);
    ctx.r.error(&text);
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

/// Run a resolved command (no guards): the handler, its statistics, and
/// its record in the change stream (`server::changes`), which `execute`
/// hands on once the outermost command is done.
pub(crate) fn call(ctx: &mut Ctx, id: registry::CommandId, spec: &'static CommandSpec, argv: &Argv) {
    let (errors_before, charged_before) = (ctx.r.errors, ctx.r.charged);
    let dirty_before = ctx.srv.dirty;
    let db = ctx.db;
    let outer = ctx.srv.changes.begin_command();
    let started = ctx.srv.call_clock.begin();
    (spec.handler)(ctx, argv);
    let spent = ctx.srv.call_clock.end(started);
    if !ctx.srv.pubsub.monitors.is_empty() && spec.flags & (flags::SKIP_MONITOR | flags::ADMIN) == 0 {
        feed_monitors(ctx, argv);
    }
    if ctx.srv.tracking.active() {
        remember_read_keys(ctx, spec, argv);
    }
    // Only a rise counts, as Redis's `call`: SAVE and SHUTDOWN reset the
    // counter, and must not reach the AOF or the replicas for it.
    let moved = ctx.srv.dirty > dirty_before;
    let request = changes::Request { frame: argv.frame, args: argv.args };
    let said = changes::end_command(ctx.srv, db, request, moved, outer);
    if !said && moved && ctx.srv.wants_keys() {
        for pos in written_keys(spec, argv) {
            ctx.srv.changes.touch(ctx.db, argv.get(pos), ctx.cid);
        }
    }
    if moved && ctx.srv.expire_by_primary {
        let keys = written_keys(spec, argv);
        crate::server::replica_keys::remember(ctx.srv, ctx.cid, ctx.db, keys.iter().map(|&p| argv.get(p)));
    }
    if blocked_now(ctx) {
        // Counted once, by the run that serves it (as Redis does).
        return;
    }
    let srv = &mut *ctx.srv;
    let stats = &mut srv.stats.commands[id];
    stats.calls += 1;
    stats.ticks += spent;
    // Errors of commands run inside this one (EXEC) were charged to them.
    let new_errors = ctx.r.errors - errors_before;
    if new_errors > ctx.r.charged - charged_before {
        stats.failed += 1;
    }
    ctx.r.charged = charged_before + new_errors;
    if srv.config.latency_tracking {
        match &mut stats.histogram {
            Some(h) => h.record(spent),
            None => stats.histogram.insert(Default::default()).record(spent),
        }
    }
    // One compare for the slow log and the latency monitor together: the
    // threshold is precomputed in ticks (see `slowlog::threshold_ticks`).
    if spent >= srv.config.slow_ticks {
        let call = SlowCall {
            argv: argv.iter_from(0),
            skip_slowlog: spec.flags & flags::SKIP_SLOWLOG != 0,
            fast: spec.flags & flags::FAST != 0,
            spent,
        };
        srv.command_was_slow(ctx.cid, call);
    }
}

/// Client-side caching: a tracking client (default mode) may now cache
/// the keys this read command read, unless OPTIN/OPTOUT and CLIENT
/// CACHING say otherwise. As in Redis, a script that read anything makes
/// its caller track the keys the script declared (a read-only script
/// command by itself does not).
#[cold]
fn remember_read_keys(ctx: &mut Ctx, spec: &CommandSpec, argv: &Argv) {
    let read = spec.flags & flags::READONLY != 0;
    if ctx.from_script {
        ctx.srv.tracking.script_read |= read;
        return;
    }
    let script_read = std::mem::take(&mut ctx.srv.tracking.script_read);
    if !script_read && (!read || matches!(spec.name, "eval_ro" | "evalsha_ro" | "fcall_ro")) {
        return;
    }
    let Some(t) = ctx.srv.tracking.client(ctx.cid) else { return };
    if t.bcast || (t.optin && !t.caching) || (t.optout && t.caching) || spec.flags & flags::PUBSUB != 0 {
        return;
    }
    let Some(id) = ctx.srv.clients.get(ctx.cid).map(|c| c.id) else { return };
    let keys = keys::key_positions(spec, argv.len(), |i| argv.get(i));
    ctx.srv.tracking.remember(ctx.cid, id, keys.into_iter().map(|p| argv.get(p).to_vec()));
}

/// CLIENT CACHING applies to the one command after it (CLIENT commands
/// and a MULTI block's queueing aside, as in Redis).
#[cold]
fn end_caching_window(ctx: &mut Ctx, argv: &Argv) {
    let in_multi = ctx.srv.clients.get(ctx.cid).is_some_and(|c| c.tx.is_some());
    if in_multi || argv.get(0).eq_ignore_ascii_case(b"client") {
        return;
    }
    if let Some(t) = ctx.srv.tracking.client_mut(ctx.cid) {
        t.caching = false;
    }
}

/// Show a command to MONITOR clients (EVAL and FCALL, flagged
/// skip_monitor, call this themselves before their script's commands).
#[cold]
pub fn feed_monitors(ctx: &mut Ctx, argv: &Argv) {
    use crate::server::monitor::Origin;
    let args: Vec<&[u8]> = argv.iter_from(0).collect();
    let addr = ctx.srv.clients.get(ctx.cid).map(|c| c.addr.clone()).unwrap_or_default();
    let origin = if ctx.from_script { Origin::Script } else { Origin::Client(&addr) };
    ctx.srv.feed_monitors(ctx.db, origin, &args);
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
        TimeoutReply::Zero => r.int(0),
    }
}
