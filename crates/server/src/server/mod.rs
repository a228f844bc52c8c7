//! The server's state as commands see it: configuration, keyspace, the
//! client registry (metadata only; sockets live in `net`), statistics, the
//! change stream (`changes`), the states that refuse writes, the background
//! child, and the opaque parts the layers above keep here (`parts`).
pub mod acl;
pub mod blocking;
pub mod changes;
pub mod child;
pub mod client_evict;
pub mod clock;
pub mod cron;
pub mod evict;
pub mod latency;
pub mod lazyfree;
pub mod memstats;
pub mod monitor;
pub mod notify;
pub mod outbox;
pub mod parts;
pub mod pause;
pub mod pubsub;
pub mod replica_keys;
pub mod slowlog;
pub mod tracking;
pub mod watch;

use std::time::Instant;

use crate::config::Config;
use crate::engine::Keyspace;
pub use parts::Part;

/// CLIENT REPLY modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Drop the reply of the next command only.
    SkipNext,
    /// Set while the skipped command runs.
    Skipping,
}

/// What the server knows about one connected client.
#[derive(Debug, Clone)]
pub struct ClientInfo {
    pub id: u64,
    pub fd: i32,
    pub addr: String,
    pub laddr: String,
    pub name: Option<Vec<u8>>,
    pub lib_name: Option<Vec<u8>>,
    pub lib_ver: Option<Vec<u8>>,
    pub db: usize,
    pub resp: u8,
    pub authenticated: bool,
    /// Slot of the ACL user the client runs as (`acl::DEFAULT_USER` until AUTH).
    pub user: usize,
    pub created_ms: i64,
    pub last_interaction_ms: i64,
    pub reply_mode: ReplyMode,
    pub no_evict: bool,
    /// Close once pending replies are written (QUIT, protocol error, KILL).
    pub close_after_reply: bool,
    /// Id of the last command run (CLIENT LIST `cmd=`).
    pub last_cmd: Option<usize>,
    /// The open MULTI block, if any.
    pub tx: Option<Transaction>,
    /// Keys this client WATCHes, and whether one was touched since.
    pub watched: Vec<(usize, Vec<u8>)>,
    pub watch_touched: bool,
    /// Watched keys that were already expired (not yet deleted) at WATCH:
    /// their deletion is no change, and their staleness does not fail
    /// EXEC (Redis 7.0's `watchedKey.expired`).
    pub watched_stale: Vec<(usize, Vec<u8>)>,
    /// Buffer sizes, as the connection last reported them.
    pub bufs: Buffers,
    /// Subscribed to something (Redis's CLIENT_PUBSUB): a RESP2 client
    /// may then only (un)subscribe, PING, QUIT and RESET.
    pub pubsub: bool,
    /// In MONITOR mode.
    pub monitor: bool,
    /// Whether this connection is our primary's link or one of our replicas.
    pub role: ClientRole,
    /// The replication offset right after this client's last command that
    /// fed the stream (Redis's `woff`): what its WAIT waits for.
    pub woff: i64,
    /// Output waits (a replica's stream while its snapshot is sent by
    /// someone else): the event loop does not write it yet.
    pub out_held: bool,
    /// Connected over the Unix socket (CLIENT LIST flag `U`).
    pub unix: bool,
    /// SCRIPT DEBUG: how this client's next EVAL is debugged.
    pub lua_debug: LuaDebug,
}

/// SCRIPT DEBUG's mode for a client (Redis's CLIENT_LUA_DEBUG flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LuaDebug {
    #[default]
    Off,
    /// YES: the session runs in a forked child; its changes are dropped.
    Forked,
    /// SYNC: the session blocks the server; its changes stay.
    Sync,
}

/// The id of the client that replays the AOF (Redis's `CLIENT_ID_AOF`).
pub const AOF_CLIENT_ID: u64 = u64::MAX;

/// What a connection is to replication (CLIENT LIST flags `M` and `S`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientRole {
    #[default]
    Normal,
    /// The link to our primary: its commands are applied, never refused,
    /// and get no replies.
    Master,
    /// A replica being synchronized or fed the replication stream.
    Replica,
}

/// A connection's buffers as CLIENT LIST and INFO report them; the event
/// loop refreshes them when a batch starts and on every cron tick.
#[derive(Debug, Clone, Copy, Default)]
pub struct Buffers {
    /// Request bytes read and not yet consumed (`qbuf`); for the client
    /// running a command, the whole batch it came in, as in Redis.
    pub qbuf: usize,
    /// Allocated and unused room after them (`qbuf-free`).
    pub qbuf_free: usize,
    /// Reply bytes not yet written.
    pub pending_out: usize,
    /// Capacity of the reply buffer (`rbs`).
    pub out_cap: usize,
    /// Everything the connection holds (`tot-mem`).
    pub total: usize,
    /// Waiting for the socket to take more output (`events=rw`).
    pub writing: bool,
}

impl ClientInfo {
    pub fn new(id: u64, fd: i32, addr: String, laddr: String, now_ms: i64, authenticated: bool) -> Self {
        ClientInfo {
            id,
            fd,
            addr,
            laddr,
            name: None,
            lib_name: None,
            lib_ver: None,
            db: 0,
            resp: 2,
            authenticated,
            user: acl::DEFAULT_USER,
            created_ms: now_ms,
            last_interaction_ms: now_ms,
            reply_mode: ReplyMode::On,
            no_evict: false,
            close_after_reply: false,
            last_cmd: None,
            tx: None,
            watched: Vec::new(),
            watch_touched: false,
            watched_stale: Vec::new(),
            bufs: Buffers::default(),
            pubsub: false,
            monitor: false,
            unix: false,
            role: ClientRole::Normal,
            woff: 0,
            out_held: false,
            lua_debug: LuaDebug::Off,
        }
    }
}

/// Commands queued between MULTI and EXEC.
#[derive(Debug, Clone, Default)]
pub struct Transaction {
    pub queued: Vec<(usize, resp::Args)>,
    /// Bytes of the queued commands' arguments (CLIENT LIST `multi-mem`).
    pub argv_mem: usize,
    /// A command was rejected while queueing: EXEC must fail (EXECABORT).
    pub aborted: bool,
}

/// Slot-indexed storage whose indexes are stable (the event loop's tokens).
pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<usize>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { items: Vec::new(), free: Vec::new(), len: 0 }
    }
}

impl<T> Slab<T> {
    pub fn insert(&mut self, v: T) -> usize {
        self.len += 1;
        match self.free.pop() {
            Some(i) => {
                self.items[i] = Some(v);
                i
            }
            None => {
                self.items.push(Some(v));
                self.items.len() - 1
            }
        }
    }
    /// Insert at a slot chosen by another slab (keeps two slabs aligned).
    pub fn insert_at(&mut self, i: usize, v: T) {
        if i >= self.items.len() {
            self.items.resize_with(i + 1, || None);
        }
        self.free.retain(|&f| f != i);
        if self.items[i].replace(v).is_none() {
            self.len += 1;
        }
    }
    pub fn remove(&mut self, i: usize) -> Option<T> {
        let v = self.items.get_mut(i)?.take()?;
        self.len -= 1;
        self.free.push(i);
        Some(v)
    }
    /// Move an item out without freeing its slot (put it back with
    /// [`Slab::put_back`]); the slot is not reused meanwhile.
    pub fn take_out(&mut self, i: usize) -> Option<T> {
        self.items.get_mut(i)?.take()
    }
    /// Return an item moved out with [`Slab::take_out`].
    pub fn put_back(&mut self, i: usize, v: T) {
        self.items[i] = Some(v);
    }
    pub fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i)?.as_ref()
    }
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i)?.as_mut()
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.items.iter().enumerate().filter_map(|(i, v)| v.as_ref().map(|v| (i, v)))
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut T)> {
        self.items.iter_mut().enumerate().filter_map(|(i, v)| v.as_mut().map(|v| (i, v)))
    }
}

/// Per-command counters (INFO commandstats).
#[derive(Debug, Clone, Default)]
pub struct CommandStats {
    pub calls: u64,
    /// Time spent, in [`clock`] ticks (converted to microseconds for INFO).
    pub ticks: u64,
    pub rejected: u64,
    pub failed: u64,
    /// Latencies (`latency-tracking`), allocated at the first call.
    pub histogram: Option<latency::Histogram>,
}

/// Server-wide counters (INFO stats).
#[derive(Debug, Default)]
pub struct Stats {
    pub connections_received: u64,
    pub rejected_connections: u64,
    pub commands_processed: u64,
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
    /// Replication stream written to replicas (not in `net_output_bytes`).
    pub net_repl_output_bytes: u64,
    pub error_replies: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    pub evicted_clients: u64,
    pub io_reads: u64,
    pub io_writes: u64,
    pub commands: Vec<CommandStats>,
    /// Error replies by code (`ERR`, `WRONGTYPE`, ...): INFO errorstats.
    pub errors_by_code: std::collections::BTreeMap<String, u64>,
    /// Whether read misses are logged for `keymiss` notifications (class
    /// `m` on), and the misses logged since notify.rs last sent them.
    pub log_misses: bool,
    pub missed_keys: Vec<(usize, Vec<u8>)>,
}

/// Distinct error codes INFO errorstats keeps (bounded, as client input
/// can make up codes).
pub const ERROR_CODES_MAX: usize = 128;

impl Stats {
    /// A read lookup found no `key` in `db` (Redis's `lookupKeyRead` miss).
    #[inline]
    pub fn key_miss(&mut self, db: usize, key: &[u8]) {
        self.keyspace_misses += 1;
        if self.log_misses {
            self.log_miss(db, key);
        }
    }

    #[cold]
    fn log_miss(&mut self, db: usize, key: &[u8]) {
        self.missed_keys.push((db, key.to_vec()));
    }

    /// Count an error reply under its code: the text before the first
    /// space within its first 32 bytes, else `ERR`, as Redis does.
    pub fn count_error(&mut self, msg: &[u8]) {
        let code = match msg.iter().take(31).position(|&b| b == b' ') {
            Some(end) if end > 0 => String::from_utf8_lossy(&msg[..end]).into_owned(),
            _ => "ERR".to_string(),
        };
        if let Some(n) = self.errors_by_code.get_mut(&code) {
            *n += 1;
        } else if self.errors_by_code.len() < ERROR_CODES_MAX {
            self.errors_by_code.insert(code, 1);
        }
    }
}

/// How SHUTDOWN asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    Save,
    NoSave,
    Default,
}

/// Why writes are refused right now. The layer that detects a condition
/// sets it; dispatch's guards only read it.
#[derive(Debug, Default)]
pub struct WriteDenials {
    /// The last background save failed (`persistence`); writes get MISCONF
    /// while save points are set and `stop-writes-on-bgsave-error` is on.
    pub bgsave_failed: bool,
    /// The AOF can't be written (`persistence`): the error (strerror text)
    /// MISCONF replies quote.
    pub aof_error: Option<String>,
    /// This server is a read-only replica (`replication`): clients' writes
    /// get READONLY.
    pub readonly_replica: bool,
    /// Fewer good replicas than `min-replicas-to-write` (`replication`):
    /// writes get NOREPLICAS.
    pub too_few_replicas: bool,
    /// A replica whose link to its primary is down, with
    /// `replica-serve-stale-data no` (`replication`): commands without the
    /// STALE flag get MASTERDOWN.
    pub stale_replica: bool,
    /// A replica loads its primary's snapshot (`replication`): commands
    /// without the `loading` flag get LOADING. While it loads
    /// asynchronously (`async_loading`), the old data stays served and
    /// only `no_async_loading` commands are refused.
    pub loading: Loading,
}

/// Redis's `loading` / `async_loading` states of a replica's full sync.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Loading {
    #[default]
    No,
    Blocking,
    Async,
}

/// What kind of script holds the server past `busy-reply-threshold` (the
/// -BUSY reply names the command that can kill it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusyScript {
    Eval,
    Function,
}

/// Where the dataset stands in the replication stream: (offset, db).
pub type ReplPosition = fn(&Server) -> Option<(i64, i64)>;

/// Whether the script a command would run may write: the command's name
/// (`eval`, `evalsha`, `fcall`) and its first argument (body, SHA, name).
pub type ScriptMayWrite = fn(&Server, &str, &[u8]) -> bool;

/// The command flags a script command has as the guards judge it: the
/// command's name and flags, and its first argument (body, SHA, name).
pub type ScriptCmdFlags = fn(&Server, &str, u32, &[u8]) -> u32;

/// Serves other clients while a script runs past `busy-reply-threshold`
/// (the event loop installs it; scripting calls it).
pub trait BusyHook {
    fn serve(&mut self, srv: &mut Server);
}

/// Blocking I/O on the connection of the client whose command runs, for a
/// Lua debugging session: Redis's debugger talks to its client directly,
/// outside the event loop (the connection layer provides it).
pub trait ClientLink {
    /// Some bytes, waiting for them; Ok(0) when the peer closed.
    fn read_blocking(&mut self, buf: &mut [u8]) -> std::io::Result<usize>;
    /// All of `data`, waiting up to a few seconds for the peer to take it.
    fn write_all_blocking(&mut self, data: &[u8]) -> std::io::Result<()>;
}

/// All state shared by commands; owned by the event-loop thread.
pub struct Server {
    pub config: Config,
    pub keyspace: Keyspace,
    pub clients: Slab<ClientInfo>,
    pub stats: Stats,
    pub started: Instant,
    pub start_unix_ms: i64,
    pub run_id: String,
    /// The replication id INFO reports (`master_replid`); DEBUG
    /// CHANGE-REPL-ID draws a new one.
    pub replid: String,
    /// Changes since the last save.
    pub dirty: u64,
    /// What the running command changed, on its way to AOF, WATCH, ...
    pub changes: changes::Changes,
    pub denials: WriteDenials,
    /// Start and end stamps for commandstats timing (see [`clock::CallClock`]).
    pub call_clock: clock::CallClock,
    pub next_client_id: u64,
    pub shutdown: Option<Shutdown>,
    /// The first listening port, for the "Ready to accept connections" line.
    pub startup_port: u16,
    /// Client slots to disconnect at the end of this turn (CLIENT KILL of
    /// another client; killing yourself uses `close_after_reply`).
    pub pending_kills: Vec<usize>,
    /// Clients blocked on keys (BLPOP and friends).
    pub blocking: blocking::Blocking,
    /// Clients WATCHing keys.
    pub watches: watch::Watches,
    /// TCP port actually bound (for INFO when `port 0`-style tests use it).
    pub port: u16,
    pub executable: String,
    pub config_file: String,
    /// The background child (BGSAVE, AOF rewrite), if one runs.
    pub children: child::Children,
    /// A script or function has run past `busy-reply-threshold`: only
    /// allow-busy commands run until it ends.
    pub script_busy: Option<BusyScript>,
    /// Set by the event loop: serves other clients while a script is busy.
    pub busy_hook: Option<Box<dyn BusyHook>>,
    /// Set by the connection around a command of a client in SCRIPT DEBUG
    /// mode: its link, valid until that command returns.
    pub client_link: Option<*mut dyn ClientLink>,
    /// RDB and AOF state (`persistence::state`).
    pub persistence: Part,
    /// Lua state and script cache (`scripting::state`).
    pub scripting: Part,
    /// Replication state: backlog, replicas, the link to our primary
    /// (installed by `replication` at start; empty until then).
    pub replication: Part,
    /// SLOWLOG entries.
    pub slowlog: slowlog::SlowLog,
    /// `used_memory`'s peak and the empty server's footprint.
    pub memory: memstats::MemoryMarks,
    /// Latency monitor events (LATENCY LATEST/HISTORY).
    pub latency_events: latency::Events,
    /// Each client's memory and their sum (`maxmemory-clients`).
    pub client_mem: client_evict::ClientMemory,
    /// DEBUG PAUSE-CRON 1: the periodic tasks do not run.
    pub cron_paused: bool,
    /// DEBUG SET-ACTIVE-EXPIRE 0 stopped the active expiry cycle.
    pub active_expire_off: bool,
    /// DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call `noscript` commands.
    pub scripts_deny_off: bool,
    /// A replica leaves expiry to its primary's DELs (`replication`).
    pub expire_by_primary: bool,
    /// A writable replica's own keys with a TTL, which it expires itself.
    pub replica_keys: replica_keys::ReplicaKeys,
    /// `wants_expired()`, cached (see `changes::collect_expired`).
    pub collecting_expired: bool,
    /// Scratch for keyspace notification channel names (notify.rs).
    pub notify_channel: Vec<u8>,
    /// Listening sockets CONFIG SET port/bind opened, for the event loop
    /// to take over at the end of the turn.
    pub rebound: Option<Vec<mio::net::TcpListener>>,
    /// Listeners CONFIG SET tls-port opened, for the event loop to take over.
    pub rebound_tls: Option<Vec<mio::net::TcpListener>>,
    /// The TLS server context (`net::tls`), rebuilt by CONFIG SET tls-*.
    pub tls: Option<std::sync::Arc<rustls::ServerConfig>>,
    /// The TLS client context for outgoing links (`tls-replication`),
    /// built by net beside `tls`.
    pub tls_client: Option<std::sync::Arc<rustls::ClientConfig>>,
    /// Channel, pattern and shard subscriptions, MONITOR clients, and the
    /// pushes waiting for them.
    pub pubsub: pubsub::PubSub,
    /// Client-side caching: who may cache which key.
    pub tracking: tracking::Tracking,
    /// CLIENT PAUSE in force, if any.
    pub pause: Option<pause::Pause>,
    /// Each purpose's pause (CLIENT PAUSE, FAILOVER); `pause` is their union.
    pub pauses: pause::Purposes,
    /// Whether a script command (EVAL, EVALSHA, FCALL with its first
    /// argument) may write, from the script's declared flags; installed by
    /// scripting. Without it every non-read-only script counts as a writer.
    pub script_may_write: Option<ScriptMayWrite>,
    /// The flags (write, denyoom, stale) such a script command has from
    /// the flags its script declared (Redis's `scriptFlagsToCmdFlags`),
    /// for the guards; installed by scripting.
    pub script_cmd_flags: Option<ScriptCmdFlags>,
    /// Where the dataset stands in the replication stream (offset, the
    /// stream's db), for the RDB's `repl-*` aux fields; installed by
    /// replication, None while it has no history.
    pub repl_position: Option<ReplPosition>,
    /// maxmemory: the eviction pool, `evicted_keys`, the OOM verdict.
    pub evict: evict::Eviction,
    /// The lazy-free thread: big values deleted asynchronously go there.
    pub lazyfree: lazyfree::Lazyfree,
    /// ACL users, the ACL log and the command catalog rules resolve against.
    pub acl: acl::Acl,
    /// CLIENT INFO text of a client slot, for ACL LOG entries (installed by
    /// the crate root, as the text is the commands layer's).
    pub client_info_line: Option<fn(&Server, usize, usize) -> String>,
}

impl Server {
    /// A server with no data; `commands` is the size of the command table
    /// (per-command statistics), `persistence` and `scripting` the parts
    /// those layers own.
    pub fn new(config: Config, commands: usize, persistence: Part, scripting: Part) -> Self {
        let mut keyspace = Keyspace::new(config.databases);
        let policy = crate::engine::evict::Policy::parse(&config.maxmemory_policy);
        keyspace.set_access_tracking(policy, config.lfu_log_factor, config.lfu_decay_time);
        evict::set_limit(config.maxmemory);
        let stats = Stats { commands: vec![CommandStats::default(); commands], ..Stats::default() };
        let now = unix_ms();
        Server {
            port: config.port,
            config,
            keyspace,
            clients: Slab::default(),
            stats,
            started: Instant::now(),
            start_unix_ms: now,
            run_id: make_run_id(now),
            replid: make_run_id(now.wrapping_mul(31).wrapping_add(7)),
            dirty: 0,
            changes: Default::default(),
            denials: Default::default(),
            call_clock: clock::CallClock::default(),
            next_client_id: 1,
            shutdown: None,
            startup_port: 0,
            pending_kills: Vec::new(),
            blocking: blocking::Blocking::default(),
            watches: watch::Watches::default(),
            executable: std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
            config_file: String::new(),
            children: Default::default(),
            script_busy: None,
            busy_hook: None,
            client_link: None,
            persistence,
            scripting,
            replication: Part::new(()),
            slowlog: Default::default(),
            memory: Default::default(),
            latency_events: Default::default(),
            client_mem: Default::default(),
            cron_paused: false,
            active_expire_off: false,
            scripts_deny_off: false,
            expire_by_primary: false,
            replica_keys: Default::default(),
            notify_channel: Vec::new(),
            collecting_expired: false,
            rebound: None,
            rebound_tls: None,
            tls: None,
            tls_client: None,
            pubsub: Default::default(),
            tracking: Default::default(),
            pause: None,
            pauses: Default::default(),
            script_may_write: None,
            script_cmd_flags: None,
            repl_position: None,
            evict: Default::default(),
            lazyfree: Default::default(),
            acl: Default::default(),
            client_info_line: None,
        }
    }
}

/// Current unix time in milliseconds.
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

fn make_run_id(seed: i64) -> String {
    let mut x = (seed as u64) ^ (std::process::id() as u64).rotate_left(32) ^ 0x9E37_79B9_7F4A_7C15;
    (0..40)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from_digit((x % 16) as u32, 16).unwrap_or('0')
        })
        .collect()
}

impl Server {
    /// A fresh replication id (DEBUG CHANGE-REPL-ID).
    pub fn change_replid(&mut self) {
        let seed = unix_ms() ^ (self.replid.len() as i64) ^ (self.stats.commands_processed as i64).rotate_left(17);
        self.replid = make_run_id(seed ^ i64::from_str_radix(&self.replid[..12], 16).unwrap_or(0));
    }

    /// Drop every WATCH of client `cid` (EXEC, DISCARD, UNWATCH, RESET, close).
    pub fn unwatch_all(&mut self, cid: usize) {
        let Some(c) = self.clients.get_mut(cid) else { return };
        let keys = std::mem::take(&mut c.watched);
        c.watch_touched = false;
        c.watched_stale.clear();
        self.watches.unwatch(cid, &keys);
        self.update_expired_tracking();
    }
}
