//! Tests for the configuration: defaults, loading, CONFIG GET and CONFIG SET.
use super::*;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn load_err(list: &[&str]) -> String {
    Config::from_args(&args(list)).unwrap_err().to_string()
}

fn fatal(line: usize, text: &str, msg: &str) -> String {
    format!(
        "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n\
         Reading the configuration file, at line {line}\n>>> '{text}'\n{msg}"
    )
}

fn get1(c: &Config, name: &str) -> String {
    let got = c.get(&[name.as_bytes()]);
    assert_eq!(got.len(), 1, "{name}: {got:?}");
    got[0].1.clone()
}

fn set(c: &mut Config, pairs: &[(&str, &str)]) -> Result<(), String> {
    let pairs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes())).collect();
    c.set(&pairs)
}

/// A copy of the directives Debian's /etc/redis/redis.conf (7.0.15) sets.
const DEBIAN_CONF: &str = r#"
# Redis configuration file example.
bind 127.0.0.1 -::1
protected-mode yes
port 6379
tcp-backlog 511
timeout 0
tcp-keepalive 300
daemonize yes
pidfile /run/redis/redis-server.pid
loglevel notice
logfile /var/log/redis/redis-server.log
databases 16
always-show-logo no
set-proc-title yes
proc-title-template "{title} {listen-addr} {server-mode}"
stop-writes-on-bgsave-error yes
rdbcompression yes
rdbchecksum yes
dbfilename dump.rdb
rdb-del-sync-files no
dir /var/lib/redis
replica-serve-stale-data yes
replica-read-only yes
repl-diskless-sync yes
repl-diskless-sync-delay 5
repl-diskless-sync-max-replicas 0
repl-diskless-load disabled
repl-disable-tcp-nodelay no
replica-priority 100
acllog-max-len 128
lazyfree-lazy-eviction no
lazyfree-lazy-expire no
lazyfree-lazy-server-del no
replica-lazy-flush no
lazyfree-lazy-user-del no
lazyfree-lazy-user-flush no
oom-score-adj no
oom-score-adj-values 0 200 800
disable-thp yes
appendonly no
appendfilename "appendonly.aof"
appenddirname "appendonlydir"
appendfsync everysec
no-appendfsync-on-rewrite no
auto-aof-rewrite-percentage 100
auto-aof-rewrite-min-size 64mb
aof-load-truncated yes
aof-use-rdb-preamble yes
aof-timestamp-enabled no
 
slowlog-log-slower-than 10000
slowlog-max-len 128
latency-monitor-threshold 0
notify-keyspace-events ""
hash-max-listpack-entries 512
hash-max-listpack-value 64
list-max-listpack-size -2
list-compress-depth 0
set-max-intset-entries 512
zset-max-listpack-entries 128
zset-max-listpack-value 64
hll-sparse-max-bytes 3000
stream-node-max-bytes 4096
stream-node-max-entries 100
activerehashing yes
client-output-buffer-limit normal 0 0 0
client-output-buffer-limit replica 256mb 64mb 60
client-output-buffer-limit pubsub 32mb 8mb 60
hz 10
dynamic-hz yes
aof-rewrite-incremental-fsync yes
rdb-save-incremental-fsync yes
jemalloc-bg-thread yes
"#;

#[test]
fn defaults() {
    let c = Config::default();
    assert_eq!(c.port, 6379);
    assert_eq!(c.bind, ["*", "-::*"]);
    assert_eq!(c.dir, PathBuf::from("."));
    assert_eq!(c.requirepass, None);
    assert_eq!(c.databases, 16);
    assert_eq!(c.maxclients, 10000);
    assert_eq!(c.loglevel, LogLevel::Notice);
    assert_eq!(c.logfile, "");
    assert!(!c.daemonize);
    assert_eq!((c.timeout, c.tcp_backlog, c.tcp_keepalive, c.hz), (0, 511, 300, 10));
    assert_eq!(c.proto_max_bulk_len, 512 << 20);
    assert_eq!(c.client_query_buffer_limit, 1 << 30);
    assert_eq!(c.client_output_buffer_limit_normal, (0, 0, 0));
    assert_eq!(c.client_output_buffer_limit_replica, (256 << 20, 64 << 20, 60));
    assert_eq!(c.client_output_buffer_limit_pubsub, (32 << 20, 8 << 20, 60));
    assert_eq!(c.save, [(3600, 1), (300, 100), (60, 10000)]);
    assert_eq!(c.appendfsync, Appendfsync::Everysec);
    assert_eq!(c.dbfilename, "dump.rdb");
    assert_eq!(c.busy_reply_threshold, 5000);
    assert_eq!(c.maxmemory_policy, "noeviction");
    assert_eq!(c.pipeline_output_pause, 1 << 20);
    assert_eq!(c.pipeline_input_spill, 16 << 20);
    assert_eq!(c.list_max_listpack_size, -2);
    assert_eq!(c.notify_keyspace_events, 0);
    assert_eq!(c.lfu_log_factor, 10);
    assert_eq!(Config::from_args(&[]).unwrap(), c);
}

#[test]
fn every_default_is_valid_and_every_name_unique() {
    let mut names = HashSet::new();
    for opt in table::TABLE {
        for n in std::iter::once(&opt.name).chain(opt.aliases) {
            assert!(names.insert(*n), "duplicate option name {n}");
            assert_eq!(*n, n.to_ascii_lowercase());
        }
        parse_value(opt, &default_args(opt)).unwrap();
    }
}

#[test]
fn file_then_args_override() {
    let dir = std::env::temp_dir().join(format!("volley-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.conf");
    std::fs::write(&path, "port 7000\nmaxmemory 1mb\n# comment\n\nloglevel warning\n").unwrap();
    let p = path.to_str().unwrap();
    let c = Config::from_args(&args(&[p, "--port", "7001", "--loglevel", "debug"])).unwrap();
    assert_eq!((c.port, c.maxmemory, c.loglevel), (7001, 1 << 20, LogLevel::Debug));
    let err = load_err(&[p, "--port", "1", "--foo"]);
    assert_eq!(err, fatal(8, "foo", "Bad directive or wrong number of arguments"));
    std::fs::write(dir.join("b.conf"), format!("include {p}\nport 7002\n")).unwrap();
    let c = Config::from_args(&args(&[dir.join("b.conf").to_str().unwrap()])).unwrap();
    assert_eq!((c.port, c.maxmemory), (7002, 1 << 20));
    std::fs::remove_dir_all(&dir).unwrap();
    let missing = load_err(&["/nonexistent/volley.conf"]);
    assert!(missing.starts_with("Fatal error, can't open config file '/nonexistent/volley.conf'"));
}

#[test]
fn save_forms() {
    let c = Config::from_args(&args(&["--save", ""])).unwrap();
    assert!(c.save.is_empty());
    let c = Config::from_args(&args(&["--save"])).unwrap();
    assert!(c.save.is_empty());
    let c = Config::from_args(&args(&["--save", "--port", "1"])).unwrap();
    assert!(c.save.is_empty());
    assert_eq!(c.port, 1);
    let c = Config::from_args(&args(&["--save", "900", "1", "300", "10"])).unwrap();
    assert_eq!(c.save, [(900, 1), (300, 10)]);
    let c = Config::from_args(&args(&["--save", "900 1 300 10"])).unwrap();
    assert_eq!(c.save, [(900, 1), (300, 10)]);
    assert_eq!(get1(&c, "save"), "900 1 300 10");
    let mut c = Config::default();
    c.load_str("save 900 1\nsave 300 10\n").unwrap();
    assert_eq!(c.save, [(900, 1), (300, 10)], "file lines accumulate");
    assert_eq!(load_err(&["--save", "900"]), fatal(2, "save \"900\"", "Invalid save parameters"));
}

#[test]
fn memory_units() {
    for (text, want) in [
        ("100", 100),
        ("5b", 5),
        ("5k", 5000),
        ("5KB", 5120),
        ("2m", 2_000_000),
        ("2mb", 2 << 20),
        ("1g", 1_000_000_000),
        ("1Gb", 1 << 30),
        ("", 0),
    ] {
        assert_eq!(value::parse_mem(text.as_bytes()), Some(want), "{text}");
    }
    for bad in [" 5", "5 ", "-1", "1.5gb", "5x", "5 gb", "99999999999999999999"] {
        assert_eq!(value::parse_mem(bad.as_bytes()), None, "{bad}");
    }
    let mut c = Config::default();
    set(&mut c, &[("maxmemory", "1GB")]).unwrap();
    assert_eq!(get1(&c, "maxmemory"), "1073741824");
}

#[test]
fn command_line_errors_match_redis() {
    let bad = "Bad directive or wrong number of arguments";
    assert_eq!(load_err(&["--foo", "bar"]), fatal(2, "foo \"bar\"", bad));
    let not_int = "argument couldn't be parsed into an integer";
    assert_eq!(load_err(&["--port", "abc"]), fatal(2, "port \"abc\"", not_int));
    let range = "argument must be between 0 and 65535 inclusive";
    assert_eq!(load_err(&["--port", "70000"]), fatal(2, "port \"70000\"", range));
    let nargs = "wrong number of arguments";
    assert_eq!(load_err(&["--port", "7399", "--port"]), fatal(3, "port", nargs));
    assert_eq!(load_err(&["--port", "1", "2"]), fatal(2, "port \"1\" \"2\"", nargs));
    let mem = "argument must be a memory value";
    assert_eq!(load_err(&["--maxmemory", "10x"]), fatal(2, "maxmemory \"10x\"", mem));
    let yn = "argument must be 'yes' or 'no'";
    assert_eq!(load_err(&["--daemonize", "maybe"]), fatal(2, "daemonize \"maybe\"", yn));
    let lv = "argument(s) must be one of the following: debug, verbose, notice, warning";
    assert_eq!(load_err(&["--loglevel", "foo"]), fatal(2, "loglevel \"foo\"", lv));
    let cls = "Invalid client class specified in buffer limit configuration.";
    let text = "client-output-buffer-limit \"foo\" \"1\" \"2\" \"3\"";
    assert_eq!(load_err(&["--client-output-buffer-limit", "foo", "1", "2", "3"]), fatal(2, text, cls));
    let quoted = load_err(&["--requirepass", "a\"b\n", "--x"]);
    assert_eq!(quoted, fatal(3, "x", bad));
}

#[test]
fn file_errors_report_trimmed_line() {
    let mut c = Config::default();
    let err = c.load_str("port 7399\n\n# c\nfoo \"bar\" \n").unwrap_err();
    assert_eq!(err.to_string(), fatal(4, "foo \"bar\"", "Bad directive or wrong number of arguments"));
    let err = c.load_str("port \"7399\n").unwrap_err();
    assert_eq!(err.to_string(), fatal(1, "port \"7399", "Unbalanced quotes in configuration line"));
}

#[test]
fn loglevel_nothing_is_accepted() {
    let c = Config::from_args(&args(&["--loglevel", "nothing"])).unwrap();
    assert_eq!(c.loglevel, LogLevel::Nothing);
}

#[test]
fn config_get_patterns() {
    let c = Config::default();
    let names: Vec<String> = c.get(&[b"*max*"]).into_iter().map(|(n, _)| n).collect();
    for want in ["maxmemory", "maxclients", "hash-max-listpack-entries", "hash-max-ziplist-entries"] {
        assert!(names.contains(&want.to_string()), "{want} in {names:?}");
    }
    assert_eq!(c.get(&[b"port"]), [("port".to_string(), "6379".to_string())]);
    assert_eq!(c.get(&[b"PORT", b"port", b"*ort"]).iter().filter(|(n, _)| n.eq_ignore_ascii_case("port")).count(), 1);
    assert_eq!(c.get(&[b"PORT"])[0].0, "PORT", "exact names are echoed as given");
    assert_eq!(get1(&c, "lua-time-limit"), "5000");
    assert_eq!(c.get(&[b"lua-time-limit", b"busy-reply-threshold"]).len(), 2);
    assert_eq!(
        get1(&c, "client-output-buffer-limit"),
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    );
    assert_eq!(get1(&c, "save"), "3600 1 300 100 60 10000");
    assert_eq!(get1(&c, "bind"), "* -::*");
    assert_eq!(get1(&c, "appendonly"), "no");
    assert_eq!(get1(&c, "proto-max-bulk-len"), "536870912");
    assert!(c.get(&[b"nope"]).is_empty());
    assert!(c.get(&[b"zz*"]).is_empty());
}

#[test]
fn config_set_values() {
    let mut c = Config::default();
    set(&mut c, &[("maxmemory", "10mb"), ("lua-time-limit", "5"), ("appendonly", "YES")]).unwrap();
    assert_eq!((c.maxmemory, c.busy_reply_threshold, c.appendonly), (10 << 20, 5, true));
    set(&mut c, &[("maxmemory-policy", "ALLKEYS-LRU"), ("loglevel", "warning")]).unwrap();
    assert_eq!(get1(&c, "maxmemory-policy"), "allkeys-lru");
    set(&mut c, &[("client-output-buffer-limit", "replica 1mb 2 3")]).unwrap();
    assert_eq!(get1(&c, "client-output-buffer-limit"), "normal 0 0 0 slave 1048576 2 3 pubsub 33554432 8388608 60");
    set(&mut c, &[("save", "")]).unwrap();
    assert!(c.save.is_empty());
    set(&mut c, &[("save", "3600 1 300 100")]).unwrap();
    assert_eq!(get1(&c, "save"), "3600 1 300 100");
    set(&mut c, &[("notify-keyspace-events", "KEA")]).unwrap();
    assert_eq!(get1(&c, "notify-keyspace-events"), "AKE");
    set(&mut c, &[("notify-keyspace-events", "Exg")]).unwrap();
    assert_eq!(get1(&c, "notify-keyspace-events"), "gxE");
    set(&mut c, &[("hz", "0")]).unwrap();
    assert_eq!(c.hz, 1);
    set(&mut c, &[("hz", "1000")]).unwrap();
    assert_eq!(c.hz, 500);
    set(&mut c, &[("requirepass", "s3cret")]).unwrap();
    assert_eq!(c.requirepass.as_deref(), Some(&b"s3cret"[..]));
    set(&mut c, &[("requirepass", "")]).unwrap();
    assert_eq!(c.requirepass, None);
}

#[test]
fn config_set_errors_match_redis() {
    let mut c = Config::default();
    let failed = |arg: &str, msg: &str| format!("ERR CONFIG SET failed (possibly related to argument '{arg}') - {msg}");
    let cases: &[(&[(&str, &str)], String)] = &[
        (&[("foo", "bar")], "ERR Unknown option or number of arguments for CONFIG SET - 'foo'".into()),
        (&[("port", "abc"), ("foo", "1")], "ERR Unknown option or number of arguments for CONFIG SET - 'foo'".into()),
        (&[("port", "abc")], failed("port", "argument couldn't be parsed into an integer")),
        (&[("port", "07399")], failed("port", "argument couldn't be parsed into an integer")),
        (&[("port", "70000")], failed("port", "argument must be between 0 and 65535 inclusive")),
        (&[("DAEMONIZE", "yes")], failed("DAEMONIZE", "can't set immutable config")),
        (&[("port", "abc"), ("daemonize", "yes")], failed("daemonize", "can't set immutable config")),
        (&[("dir", "/tmp")], failed("dir", "can't set protected config")),
        (&[("maxmemory", "10"), ("MAXMEMORY", "20")], failed("MAXMEMORY", "duplicate parameter")),
        (&[("maxmemory", "-1")], failed("maxmemory", "argument must be a memory value")),
        (&[("proto-max-bulk-len", "1")], failed("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive")),
        (&[("maxclients", "0")], failed("maxclients", "argument must be between 1 and 4294967295 inclusive")),
        (&[("save", "1 2 3")], failed("save", "Invalid save parameters")),
        (&[("save", "1  1")], failed("save", "Invalid save parameters")),
        (&[("save", "0 0")], failed("save", "Invalid save parameters")),
        (&[("appendfsync", "foo")], failed("appendfsync", "argument(s) must be one of the following: everysec, always, no")),
        (&[("maxmemory-policy", "foo")], failed("maxmemory-policy", "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")),
        (&[("client-output-buffer-limit", "normal 1 2")], failed("client-output-buffer-limit", "Wrong number of arguments in buffer limit configuration.")),
        (&[("notify-keyspace-events", "Z")], failed("notify-keyspace-events", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")),
    ];
    for (pairs, want) in cases {
        assert_eq!(set(&mut c, pairs).unwrap_err(), *want, "{pairs:?}");
    }
    // lua-time-limit and busy-reply-threshold are distinct names, as in Redis.
    set(&mut c, &[("lua-time-limit", "5"), ("busy-reply-threshold", "6")]).unwrap();
    assert_eq!(c.busy_reply_threshold, 6);
}

#[test]
fn config_set_is_atomic() {
    let mut c = Config::default();
    let before = c.clone();
    let err = set(&mut c, &[("maxmemory", "10mb"), ("timeout", "5"), ("port", "abc")]);
    assert!(err.is_err());
    assert_eq!(c, before);
    let mut c = Config::default();
    c.load_str("enable-protected-configs yes").unwrap();
    set(&mut c, &[("dir", "/tmp"), ("dbfilename", "x.rdb")]).unwrap();
    assert_eq!((c.dir.to_str(), c.dbfilename.as_str()), (Some("/tmp"), "x.rdb"));
}

#[test]
fn debian_redis_conf_directives_parse() {
    let mut c = Config::default();
    c.load_str(DEBIAN_CONF).unwrap();
    assert!(c.daemonize);
    assert_eq!(c.dir, PathBuf::from("/var/lib/redis"));
    assert_eq!(c.pidfile, "/run/redis/redis-server.pid");
    assert_eq!(c.logfile, "/var/log/redis/redis-server.log");
    assert_eq!(c.auto_aof_rewrite_min_size, 64 << 20);
    assert_eq!(c.hash_max_listpack_entries, 512);
    assert_eq!(c.other["proc-title-template"], "{title} {listen-addr} {server-mode}");
    assert_eq!(c.other["oom-score-adj-values"], "0 200 800");
    assert_eq!(
        get1(&c, "client-output-buffer-limit"),
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    );
}

#[test]
fn installed_redis_conf_parses() {
    // The real file when present (it is readable on Debian), else the copy.
    let text = std::fs::read_to_string("/etc/redis/redis.conf").unwrap_or_else(|_| DEBIAN_CONF.into());
    let mut c = Config::default();
    c.load_str(&text).unwrap();
    assert_eq!(c.port, 6379);
}

#[test]
fn config_lines_with_other_directives() {
    let mut c = Config::default();
    c.load_str("rename-command CONFIG \"\"\nuser alice on >pw ~* +@all\nreplicaof no one\n").unwrap();
    let rc = &c.rename_commands[0];
    assert_eq!((rc.from.as_str(), rc.to.as_str(), rc.line), ("CONFIG", "", 1));
    assert_eq!(rc.text, "rename-command CONFIG \"\"");
    assert_eq!(c.users.len(), 1);
    c.load_str("unixsocketperm 700").unwrap();
    assert_eq!((c.unixsocketperm, get1(&c, "unixsocketperm")), (0o700, "700".to_string()));
    c.load_str("replicaof 10.0.0.1 6379").unwrap();
    assert_eq!(c.replicaof(), Some(("10.0.0.1".to_string(), 6379)));
    assert!(c.load_str("replicaof 10.0.0.1 70000").is_err());
    c.set_replicaof(None);
    assert_eq!((c.replicaof(), get1(&c, "replicaof")), (None, String::new()));
}

#[test]
fn percent_values_and_hidden_options() {
    let mut c = Config::default();
    set(&mut c, &[("maxmemory-clients", "10%")]).unwrap();
    assert_eq!(get1(&c, "maxmemory-clients"), "10%");
    set(&mut c, &[("maxmemory-clients", "1mb")]).unwrap();
    assert_eq!(get1(&c, "maxmemory-clients"), "1048576");
    let err = set(&mut c, &[("maxmemory", "5"), ("maxmemory-clients", "200%"), ("timeout", "x")]).unwrap_err();
    assert_eq!(
        err,
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100"
    );
    let err = set(&mut c, &[("maxmemory-clients", "-5%")]).unwrap_err();
    assert!(err.ends_with("argument must be a memory or percent value"), "{err}");
    assert_eq!(get1(&c, "maxmemory-clients"), "1048576");
    // Hidden options answer when named, never to a pattern.
    assert_eq!(get1(&c, "key-load-delay"), "0");
    assert!(c.get(&[b"*"]).iter().all(|(name, _)| name != "key-load-delay"));
    assert!(c.get(&[b"key-load-*"]).is_empty());
}

#[test]
fn shutdown_on_sigint_without_a_value_is_refused() {
    // unit/introspection's "redis-server command line arguments - error cases".
    let mut c = Config::default();
    let e = c.load_str("shutdown-on-sigint\n").unwrap_err().to_string();
    assert!(e.contains("argument(s) must be one of the following: default, save, nosave, now, force"), "{e}");
    assert!(Config::default().load_str("shutdown-on-sigint nosave now\n").is_ok());
    // Bits, shown in Redis's table order, each once; `default` alone.
    let mut c = Config::default();
    c.load_str("shutdown-on-sigint force now nosave now\nshutdown-on-sigterm default\n").unwrap();
    assert_eq!(get1(&c, "shutdown-on-sigint"), "nosave now force");
    assert_eq!(get1(&c, "shutdown-on-sigterm"), "default");
    c.load_str("shutdown-on-sigterm default save\n").unwrap();
    assert_eq!(get1(&c, "shutdown-on-sigterm"), "save");
}
