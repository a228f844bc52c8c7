//! Server configuration: the redis.conf format, the `--name value` command
//! line, CONFIG GET and CONFIG SET.
//!
//! Everything is driven by the option table in [`table`]: each row names the
//! option (and its aliases), how its value is parsed and printed, its default,
//! whether CONFIG SET may change it, and where the value is stored. Error
//! texts mirror redis-server 7.0.15 so scripts that grep them keep working.
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::PathBuf;

use resp::splitargs::split_args;

mod access;
pub mod rewrite;
#[cfg(test)]
mod rewrite_tests;
mod table;
#[cfg(test)]
mod tests;
mod value;

pub use access::{allows, is_local_addr};
use access::{default_args, parse_value, split_spaces, store};
use table::{Kind, ACCUMULATE};
use value::Value;

/// Client output buffer limit of one client class: (hard bytes, soft bytes,
/// soft seconds); zero disables a limit.
pub type BufferLimit = (u64, u64, u64);

/// `maxmemory-clients`: a byte count, or a percentage of `maxmemory`
/// (`percent` set); 0 turns client eviction off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemOrPercent {
    pub value: u64,
    pub percent: bool,
}

/// Keyspace notifications: `K` (`__keyspace@<db>__` channel).
pub const NOTIFY_KEYSPACE: u32 = 1 << 0;
/// Keyspace notifications: `E` (`__keyevent@<db>__` channel).
pub const NOTIFY_KEYEVENT: u32 = 1 << 1;
/// Keyspace notifications: `g` (generic commands).
pub const NOTIFY_GENERIC: u32 = 1 << 2;
/// Keyspace notifications: `$` (string commands).
pub const NOTIFY_STRING: u32 = 1 << 3;
/// Keyspace notifications: `l` (list commands).
pub const NOTIFY_LIST: u32 = 1 << 4;
/// Keyspace notifications: `s` (set commands).
pub const NOTIFY_SET: u32 = 1 << 5;
/// Keyspace notifications: `h` (hash commands).
pub const NOTIFY_HASH: u32 = 1 << 6;
/// Keyspace notifications: `z` (sorted set commands).
pub const NOTIFY_ZSET: u32 = 1 << 7;
/// Keyspace notifications: `x` (expired events).
pub const NOTIFY_EXPIRED: u32 = 1 << 8;
/// Keyspace notifications: `e` (evicted events).
pub const NOTIFY_EVICTED: u32 = 1 << 9;
/// Keyspace notifications: `t` (stream commands).
pub const NOTIFY_STREAM: u32 = 1 << 10;
/// Keyspace notifications: `m` (key misses; not part of `A`).
pub const NOTIFY_KEY_MISS: u32 = 1 << 11;
/// Keyspace notifications: `d` (module events).
pub const NOTIFY_MODULE: u32 = 1 << 12;
/// Keyspace notifications: `n` (new keys; not part of `A`).
pub const NOTIFY_NEW: u32 = 1 << 13;
/// Keyspace notifications: `A`, the alias for `g$lshzxetd`.
pub const NOTIFY_ALL: u32 = NOTIFY_GENERIC
    | NOTIFY_STRING
    | NOTIFY_LIST
    | NOTIFY_SET
    | NOTIFY_HASH
    | NOTIFY_ZSET
    | NOTIFY_EXPIRED
    | NOTIFY_EVICTED
    | NOTIFY_STREAM
    | NOTIFY_MODULE;

/// `loglevel`: which messages are written to the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Everything.
    Debug,
    /// Many rarely useful messages.
    Verbose,
    /// Moderately verbose (the default).
    Notice,
    /// Only important messages.
    Warning,
    /// Nothing at all.
    Nothing,
}

impl LogLevel {
    /// Config names, in declaration order.
    pub const NAMES: &'static [&'static str] = &["debug", "verbose", "notice", "warning", "nothing"];
    const ALL: [LogLevel; 5] = [Self::Debug, Self::Verbose, Self::Notice, Self::Warning, Self::Nothing];
}

/// `appendfsync`: when the append-only file is fsynced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Appendfsync {
    /// Once per second (the default).
    Everysec,
    /// After every write.
    Always,
    /// Left to the operating system.
    No,
}

impl Appendfsync {
    /// Config names, in declaration order (Redis's order in error messages).
    pub const NAMES: &'static [&'static str] = &["everysec", "always", "no"];
    const ALL: [Appendfsync; 3] = [Self::Everysec, Self::Always, Self::No];
}

/// The server configuration. Fields are the options the server acts on;
/// other accepted Redis options are kept as text in `other`.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// TCP port; 0 disables TCP.
    pub port: u16,
    /// Addresses to listen on; a leading `-` marks an address that is skipped
    /// when unavailable.
    pub bind: Vec<String>,
    /// Unix socket path ("" = none).
    pub unixsocket: String,
    /// Unix socket permissions.
    pub unixsocketperm: u32,
    /// Refuse non-loopback clients when no password and no bind are set.
    pub protected_mode: bool,
    /// listen(2) backlog.
    pub tcp_backlog: u32,
    /// SO_KEEPALIVE interval in seconds (0 = off).
    pub tcp_keepalive: u32,
    /// Idle client timeout in seconds (0 = never).
    pub timeout: u64,
    /// Maximum simultaneous clients.
    pub maxclients: u32,
    /// Detach from the terminal.
    pub daemonize: bool,
    /// `upstart`, `systemd`, `auto` or `no`.
    pub supervised: String,
    /// PID file path ("" = none).
    pub pidfile: String,
    /// Log verbosity.
    pub loglevel: LogLevel,
    /// Log file path ("" = standard output).
    pub logfile: String,
    /// Number of databases.
    pub databases: usize,
    /// Working directory for RDB/AOF files.
    pub dir: PathBuf,
    /// Password of the default user.
    pub requirepass: Option<Vec<u8>>,
    /// Background task frequency, clamped to 1..=500.
    pub hz: u32,
    /// Raise hz with the number of clients.
    pub dynamic_hz: bool,
    /// I/O threads (Redis option; accepted).
    pub io_threads: u32,
    /// Largest accepted bulk string.
    pub proto_max_bulk_len: u64,
    /// Largest query buffer of one client.
    pub client_query_buffer_limit: u64,
    /// Output buffer limits of normal clients.
    pub client_output_buffer_limit_normal: BufferLimit,
    /// Output buffer limits of replicas.
    pub client_output_buffer_limit_replica: BufferLimit,
    /// Output buffer limits of pub/sub clients.
    pub client_output_buffer_limit_pubsub: BufferLimit,
    /// Memory limit in bytes (0 = none).
    pub maxmemory: u64,
    /// Eviction policy name (`noeviction`, `allkeys-lru`, ...).
    pub maxmemory_policy: String,
    /// Keys sampled per eviction.
    pub maxmemory_samples: u32,
    /// Memory all normal and pub/sub clients may use together before the
    /// largest are disconnected (client eviction).
    pub maxmemory_clients: MemOrPercent,
    /// How long one round of eviction may run (0..100; Redis's tenacity).
    pub maxmemory_eviction_tenacity: u32,
    /// LFU counter growth: higher is slower (`lfu-log-factor`).
    pub lfu_log_factor: u32,
    /// Minutes per decrement of an idle key's LFU counter (`lfu-decay-time`).
    pub lfu_decay_time: u32,
    /// Milliseconds before a long script or function gets BUSY replies.
    pub busy_reply_threshold: u64,
    /// Active expiry effort, 1..=10.
    pub active_expire_effort: u32,
    /// Pending reply bytes at which a connection's commands stop executing
    /// until the client reads (Volley).
    pub pipeline_output_pause: u64,
    /// Unexecuted request bytes kept in memory per connection; beyond that,
    /// input spills to a temporary file (Volley).
    pub pipeline_input_spill: u64,
    /// RDB save points: (seconds, changes).
    pub save: Vec<(u64, u64)>,
    /// RDB file name.
    pub dbfilename: String,
    /// Compress strings in RDB files.
    pub rdbcompression: bool,
    /// Checksum RDB files.
    pub rdbchecksum: bool,
    /// Refuse writes after a failed background save.
    pub stop_writes_on_bgsave_error: bool,
    /// Append-only file enabled.
    pub appendonly: bool,
    /// Base name of the append-only files.
    pub appendfilename: String,
    /// Directory of the append-only files (inside `dir`).
    pub appenddirname: String,
    /// AOF fsync policy.
    pub appendfsync: Appendfsync,
    /// Growth (percent) that triggers an AOF rewrite (0 = off).
    pub auto_aof_rewrite_percentage: u32,
    /// Minimum AOF size for automatic rewrites.
    pub auto_aof_rewrite_min_size: u64,
    /// Load a truncated AOF instead of refusing to start.
    pub aof_load_truncated: bool,
    /// Start rewritten AOFs with an RDB preamble.
    pub aof_use_rdb_preamble: bool,
    /// Annotate the AOF with `#TS:<unix seconds>` lines.
    pub aof_timestamp_enabled: bool,
    /// Free evicted values in the background.
    pub lazyfree_lazy_eviction: bool,
    /// Free expired values in the background.
    pub lazyfree_lazy_expire: bool,
    /// Free values deleted by the server (e.g. RENAME) in the background.
    pub lazyfree_lazy_server_del: bool,
    /// DEL behaves like UNLINK.
    pub lazyfree_lazy_user_del: bool,
    /// FLUSHALL/FLUSHDB default to ASYNC.
    pub lazyfree_lazy_user_flush: bool,
    /// List node size (negative: size class in KB, positive: entries).
    pub list_max_listpack_size: i64,
    /// Hash listpack encoding limit (entries).
    pub hash_max_listpack_entries: u64,
    /// Stream node size limit in (listpack) bytes; 0 = none.
    pub stream_node_max_bytes: u64,
    /// Stream node size limit in entries; 0 = none.
    pub stream_node_max_entries: u64,
    /// Hash listpack encoding limit (value bytes).
    pub hash_max_listpack_value: u64,
    /// Set intset encoding limit (entries).
    pub set_max_intset_entries: u64,
    /// Set listpack encoding limit (entries).
    pub set_max_listpack_entries: u64,
    /// Set listpack encoding limit (value bytes).
    pub set_max_listpack_value: u64,
    /// Sorted set listpack encoding limit (entries).
    pub zset_max_listpack_entries: u64,
    /// Sorted set listpack encoding limit (value bytes).
    pub zset_max_listpack_value: u64,
    /// Incremental rehashing of the main dictionary.
    pub activerehashing: bool,
    /// Microseconds above which a command is logged (-1 = never).
    pub slowlog_log_slower_than: i64,
    /// Slow log length.
    pub slowlog_max_len: u64,
    /// Per-command latency histograms.
    pub latency_tracking: bool,
    /// Milliseconds from which a command is a latency monitor event (0 = off).
    pub latency_monitor_threshold: i64,
    /// Not an option: the clock ticks below which a command can be neither
    /// slow-logged nor a latency event, derived from the two thresholds by
    /// the server. Every CONFIG SET zeroes it so the next command rederives it.
    pub slow_ticks: u64,
    /// Keyspace notification classes (`NOTIFY_*` bits).
    pub notify_keyspace_events: u32,
    /// Replicas refuse writes (Redis option; accepted).
    pub replica_read_only: bool,
    /// Diskless replication (Redis option; accepted).
    pub repl_diskless_sync: bool,
    /// Cluster mode (accepted; must stay `no`).
    pub cluster_enabled: bool,
    /// Show the ASCII logo at startup.
    pub always_show_logo: bool,
    /// Change the process title.
    pub set_proc_title: bool,
    /// DEBUG command: `no`, `yes` or `local`.
    pub enable_debug_command: String,
    /// CONFIG SET of protected options (dir, dbfilename): `no`, `yes`, `local`.
    pub enable_protected_configs: String,
    /// MODULE command: `no`, `yes` or `local`.
    pub enable_module_command: String,
    /// `rename-command <name> <new-name>` lines, in order (config file only).
    pub rename_commands: Vec<RenameCommand>,
    /// `user ...` ACL lines, as their arguments (config file only).
    pub users: Vec<Vec<String>>,
    /// Accepted options without a field: name → CONFIG GET text.
    pub other: BTreeMap<&'static str, String>,
}

impl Default for Config {
    /// Every option at its table default.
    fn default() -> Self {
        let mut c = Config::blank();
        for opt in table::TABLE {
            let v =
                parse_value(opt, &default_args(opt)).unwrap_or_else(|e| panic!("bad default for {}: {e}", opt.name));
            store(&mut c, opt, v);
        }
        c
    }
}

/// A fatal configuration error, displayed as redis-server prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A directive could not be applied.
    Directive {
        /// 1-based line number in the configuration text.
        line: usize,
        /// The offending line, trimmed.
        text: String,
        /// What is wrong, e.g. "Bad directive or wrong number of arguments".
        msg: String,
    },
    /// A configuration file could not be read.
    Open {
        /// The path as given.
        path: String,
        /// The OS error text.
        err: String,
    },
}

impl fmt::Display for ConfigError {
    /// Redis's text, without the blank line Redis prints before it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Directive { line, text, msg } => write!(
                f,
                "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n\
                 Reading the configuration file, at line {line}\n>>> '{text}'\n{msg}"
            ),
            ConfigError::Open { path, err } => {
                write!(f, "Fatal error, can't open config file '{path}': {err}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// State of one configuration load (across included files).
#[derive(Default)]
struct Loader {
    /// Options already set by this load (for `save` lines that accumulate).
    seen: HashSet<&'static str>,
    /// Include nesting depth.
    depth: usize,
}

impl Config {
    fn blank() -> Config {
        Config {
            port: 0,
            bind: Vec::new(),
            unixsocket: String::new(),
            unixsocketperm: 0,
            protected_mode: false,
            tcp_backlog: 0,
            tcp_keepalive: 0,
            timeout: 0,
            maxclients: 0,
            daemonize: false,
            supervised: String::new(),
            pidfile: String::new(),
            loglevel: LogLevel::Notice,
            logfile: String::new(),
            databases: 0,
            dir: PathBuf::new(),
            requirepass: None,
            hz: 0,
            dynamic_hz: false,
            io_threads: 0,
            proto_max_bulk_len: 0,
            client_query_buffer_limit: 0,
            client_output_buffer_limit_normal: (0, 0, 0),
            client_output_buffer_limit_replica: (0, 0, 0),
            client_output_buffer_limit_pubsub: (0, 0, 0),
            maxmemory: 0,
            maxmemory_policy: String::new(),
            maxmemory_samples: 0,
            maxmemory_clients: MemOrPercent::default(),
            maxmemory_eviction_tenacity: 0,
            lfu_log_factor: 0,
            lfu_decay_time: 0,
            busy_reply_threshold: 0,
            active_expire_effort: 0,
            pipeline_output_pause: 0,
            pipeline_input_spill: 0,
            save: Vec::new(),
            dbfilename: String::new(),
            rdbcompression: false,
            rdbchecksum: false,
            stop_writes_on_bgsave_error: false,
            appendonly: false,
            appendfilename: String::new(),
            appenddirname: String::new(),
            appendfsync: Appendfsync::Everysec,
            auto_aof_rewrite_percentage: 0,
            auto_aof_rewrite_min_size: 0,
            aof_load_truncated: false,
            aof_use_rdb_preamble: false,
            aof_timestamp_enabled: false,
            lazyfree_lazy_eviction: false,
            lazyfree_lazy_expire: false,
            lazyfree_lazy_server_del: false,
            lazyfree_lazy_user_del: false,
            lazyfree_lazy_user_flush: false,
            list_max_listpack_size: 0,
            hash_max_listpack_entries: 0,
            stream_node_max_bytes: 0,
            stream_node_max_entries: 0,
            hash_max_listpack_value: 0,
            set_max_intset_entries: 0,
            set_max_listpack_entries: 0,
            set_max_listpack_value: 0,
            zset_max_listpack_entries: 0,
            zset_max_listpack_value: 0,
            activerehashing: false,
            slowlog_log_slower_than: 0,
            slowlog_max_len: 0,
            latency_tracking: false,
            latency_monitor_threshold: 0,
            slow_ticks: 0,
            notify_keyspace_events: 0,
            replica_read_only: false,
            repl_diskless_sync: false,
            cluster_enabled: false,
            always_show_logo: false,
            set_proc_title: false,
            enable_debug_command: String::new(),
            enable_protected_configs: String::new(),
            enable_module_command: String::new(),
            rename_commands: Vec::new(),
            users: Vec::new(),
            other: BTreeMap::new(),
        }
    }

    /// Builds the configuration from the server's command line (without the
    /// program name): an optional config file path first (any argument not
    /// starting with `--`), then `--name value...` options. As in Redis, the
    /// options are turned into config lines appended after the file's text,
    /// so errors report line numbers in that combined text.
    pub fn from_args(args: &[String]) -> Result<Config, ConfigError> {
        let (file, rest) = match args.first() {
            Some(first) if !first.starts_with("--") => (Some(first.as_str()), &args[1..]),
            _ => (None, args),
        };
        let mut text = match file {
            Some(path) => read_file(path)?,
            None => Vec::new(),
        };
        let options = options_text(rest);
        if !options.is_empty() {
            text.push(b'\n');
            text.extend_from_slice(options.as_bytes());
        }
        let mut config = Config::default();
        config.load_text(&text, &mut Loader::default())?;
        Ok(config)
    }

    /// Applies configuration text (redis.conf syntax) on top of `self`.
    pub fn load_str(&mut self, text: &str) -> Result<(), ConfigError> {
        self.load_text(text.as_bytes(), &mut Loader::default())
    }

    fn load_text(&mut self, text: &[u8], loader: &mut Loader) -> Result<(), ConfigError> {
        for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
            let line = raw.trim_ascii();
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            let fail = |msg: &str| ConfigError::Directive {
                line: i + 1,
                text: String::from_utf8_lossy(line).into_owned(),
                msg: msg.to_string(),
            };
            let Some(args) = split_args(line) else {
                return Err(fail("Unbalanced quotes in configuration line"));
            };
            if args.is_empty() {
                continue;
            }
            match self.directive(&args, loader, (i + 1, line)) {
                Ok(()) => {}
                Err(Fatal::Msg(msg)) => return Err(fail(&msg)),
                Err(Fatal::Nested(e)) => return Err(e),
            }
        }
        Ok(())
    }

    /// Applies one config-file directive, found at `at` (line number, text).
    fn directive(&mut self, args: &[Vec<u8>], loader: &mut Loader, at: (usize, &[u8])) -> Result<(), Fatal> {
        const BAD: &str = "Bad directive or wrong number of arguments";
        let name = args[0].to_ascii_lowercase();
        let words = || -> Vec<String> { args[1..].iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect() };
        match (name.as_slice(), args.len()) {
            (b"include", 2) => return self.include(&args[1], loader),
            (b"rename-command", 3) => {
                let [from, to] = <[String; 2]>::try_from(words()).expect("two words");
                let (line, text) = (at.0, String::from_utf8_lossy(at.1).into_owned());
                self.rename_commands.push(RenameCommand { from, to, line, text });
                return Ok(());
            }
            (b"user", n) if n >= 2 => {
                self.users.push(words());
                return Ok(());
            }
            _ => {}
        }
        let opt = table::lookup(&name).ok_or_else(|| Fatal::Msg(BAD.into()))?;
        let mut values = args[1..].to_vec();
        if matches!(opt.kind, Kind::Multi(_)) {
            if values.len() == 1 && !values[0].is_empty() {
                values = split_spaces(&values[0]);
            }
        } else if values.len() != 1 {
            return Err(Fatal::Msg("wrong number of arguments".into()));
        }
        let mut v = parse_value(opt, &values).map_err(Fatal::Msg)?;
        if opt.flags & ACCUMULATE != 0 && !loader.seen.insert(opt.name) {
            if let Value::Save(more) = &mut v {
                if !more.is_empty() {
                    let mut all = self.save.clone();
                    all.append(more);
                    v = Value::Save(all);
                }
            }
        }
        store(self, opt, v);
        Ok(())
    }

    fn include(&mut self, path: &[u8], loader: &mut Loader) -> Result<(), Fatal> {
        if loader.depth >= 16 {
            return Err(Fatal::Msg("include nesting too deep".into()));
        }
        let path = String::from_utf8_lossy(path).into_owned();
        let text = read_file(&path).map_err(Fatal::Nested)?;
        loader.depth += 1;
        let r = self.load_text(&text, loader).map_err(Fatal::Nested);
        loader.depth -= 1;
        r
    }
}

/// Why a directive failed: a message for the current line, or an error
/// already located in an included file.
/// A `rename-command` line, applied once the command table exists; where it
/// was is kept for the error that names its line, as Redis's does.
#[derive(Clone, Debug, PartialEq)]
pub struct RenameCommand {
    pub from: String,
    pub to: String,
    pub line: usize,
    pub text: String,
}

enum Fatal {
    Msg(String),
    Nested(ConfigError),
}

fn read_file(path: &str) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|e| ConfigError::Open { path: path.to_string(), err: e.to_string() })
}

/// Turns `--name value...` arguments into config lines the way redis-server
/// does: a new line per `--name`, each value quoted; an argument right after
/// a bare `--name` is a value even if it starts with `--`; a bare `--save`
/// means `save ""`.
fn options_text(args: &[String]) -> String {
    let mut out = String::new();
    let mut expect_name = true;
    for (j, arg) in args.iter().enumerate() {
        if expect_name && arg.starts_with("--") {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&arg[2..]);
            out.push(' ');
            let words = split_args(arg.as_bytes()).map_or(0, |w| w.len());
            expect_name = words != 1;
            let next_is_name = args.get(j + 1).is_none_or(|n| n.starts_with("--"));
            if words == 1 && arg.eq_ignore_ascii_case("--save") && next_is_name {
                out.push_str("\"\"");
                expect_name = true;
            }
        } else {
            out.push_str(&repr(arg.as_bytes()));
            out.push(' ');
            expect_name = true;
        }
    }
    out
}

/// Quotes bytes like Redis's `sdscatrepr`.
pub(crate) fn repr(s: &[u8]) -> String {
    let mut out = String::from("\"");
    for &c in s {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push('"');
    out
}

impl Config {
    /// `replicaof`: the primary's host and port, None for a primary.
    pub fn replicaof(&self) -> Option<(String, u16)> {
        let v = self.other.get("replicaof")?;
        let (host, port) = v.rsplit_once(' ')?;
        Some((host.to_string(), port.parse().ok()?))
    }

    /// Records the primary (REPLICAOF host port / NO ONE), so CONFIG GET
    /// and CONFIG REWRITE report what the server replicates from.
    pub fn set_replicaof(&mut self, primary: Option<(&str, u16)>) {
        let text = primary.map(|(h, p)| format!("{h} {p}")).unwrap_or_default();
        self.other.insert("replicaof", text);
    }
}

/// Canonical option names (aliases left out), in table order.
pub fn option_names() -> impl Iterator<Item = &'static str> {
    table::TABLE.iter().map(|o| o.name)
}
