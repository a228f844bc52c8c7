//! DEBUG: the introspection and test hooks that Redis's test suite and
//! client libraries' fixtures rely on (SLEEP, RELOAD, OBJECT, DIGEST,
//! DIGEST-VALUE, PROTOCOL, SET-ACTIVE-EXPIRE, POPULATE, ...). Refused unless
//! `enable-debug-command` allows it, as in Redis 7.0.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::{parse_f64, parse_i64};
use crate::engine::{digest, Str, Value};
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    spec!("debug", -2, ADMIN | NOSCRIPT | LOADING | STALE | PROTECTED, (0, 0, 0), debug, "server", "1.0.0", "A container for debugging commands.", ["admin", "slow", "dangerous"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

const NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", \
                           you can run it from a local connection, otherwise you need to set this option in the \
                           configuration file, and then restart the server.";

/// `enable-debug-command`: `yes`, or `local` for loopback clients only.
/// The dispatch guard checks it first; this covers any other way in.
fn allowed(ctx: &mut Ctx) -> bool {
    let local = crate::config::is_local_addr(&ctx.client().addr);
    crate::config::allows(&ctx.srv.config.enable_debug_command, local)
}

fn debug(ctx: &mut Ctx, argv: &Argv) {
    if !allowed(ctx) {
        return ctx.r.error(NOT_ALLOWED);
    }
    let sub = String::from_utf8_lossy(argv.get(1)).to_ascii_lowercase();
    match (sub.as_str(), argv.len()) {
        ("help", 2) => help(ctx),
        ("sleep", 3) => sleep(ctx, argv.get(2)),
        ("log", 3) => {
            crate::log_at!(Warning, "DEBUG LOG: {}", String::from_utf8_lossy(argv.get(2)));
            ctx.r.ok();
        }
        ("reload", 2) => match crate::persistence::debug_reload(ctx.srv) {
            Ok(()) => ctx.r.ok(),
            Err(e) => ctx.r.error(&e),
        },
        ("loadaof", 2) => match crate::persistence::debug_loadaof(ctx.srv, ctx.reg) {
            Ok(()) => ctx.r.ok(),
            Err(e) => {
                // Redis exits when the reload fails: the dataset is gone.
                crate::log_at!(Warning, "DEBUG LOADAOF failed: {e}");
                std::process::exit(1);
            }
        },
        ("object", 3) => object(ctx, argv.get(2)),
        ("listpack", 3) => listpack(ctx, argv.get(2)),
        ("digest", 2) => {
            let d = digest::dataset(&ctx.srv.keyspace);
            ctx.r.simple(digest::hex(&d).as_bytes());
        }
        ("digest-value", _) => digest_value(ctx, argv),
        ("protocol", 3) => protocol(ctx, argv.get(2)),
        ("set-active-expire", 3) => {
            // Redis reads the flag with atoi: anything not a number is 0.
            ctx.srv.active_expire_off = atoi(argv.get(2)) == 0;
            ctx.r.ok();
        }
        ("aof-flush-sleep", 3) => {
            crate::persistence::set_aof_flush_sleep(atoi(argv.get(2)).max(0) as u64);
            ctx.r.ok();
        }
        ("set-disable-deny-scripts", 3) => {
            ctx.srv.scripts_deny_off = atoi(argv.get(2)) != 0;
            ctx.r.ok();
        }
        ("quicklist-packed-threshold", 3) => packed_threshold(ctx, argv.get(2)),
        ("pause-cron", 3) => {
            ctx.srv.cron_paused = atoi(argv.get(2)) != 0;
            ctx.r.ok();
        }
        ("replybuffer", 4) => replybuffer(ctx, argv),
        ("populate", 3..=5) => populate(ctx, argv),
        ("stringmatch-test", 2) => stringmatch_test(ctx),
        ("config-rewrite-force-all", 2) => match super::server::rewrite_config(ctx.srv, true) {
            Ok(()) => ctx.r.ok(),
            Err(e) => {
                let text = e.to_string();
                let text = text.split(" (os error").next().unwrap_or_default().to_string();
                ctx.r.error(&format!("ERR CONFIG-REWRITE-FORCE-ALL failed: {text}"))
            }
        },
        ("replicate", 3..) => {
            // A command for the replication stream only (tests of replicas
            // that fail to apply what their primary sends).
            let args: Vec<&[u8]> = argv.iter_from(2).collect();
            ctx.replicate_as(&args);
            ctx.r.ok();
        }
        ("change-repl-id", 2) => {
            crate::log_at!(Warning, "Changing replication IDs after receiving DEBUG change-repl-id");
            ctx.srv.change_replid();
            ctx.r.ok();
        }
        _ => {
            let name = String::from_utf8_lossy(argv.get(1)).into_owned();
            ctx.r.error(&format!("ERR unknown subcommand or wrong number of arguments for '{name}'. Try DEBUG HELP."));
        }
    }
}

const HELP: &[&str] = &[
    "AOF-FLUSH-SLEEP <microsec>",
    "    Sleep before each write of the AOF buffer (for tests).",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD",
    "    Save the RDB on disk and reload it back to memory.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>",
    "    Enable or disable the reply buffer resize cron job",
    "STRINGMATCH-TEST",
    "    Run a fuzz tester against the stringmatchlen() function.",
    "LISTPACK <key>",
    "    Show low level info about the listpack encoding of <key>.",
];

/// DEBUG REPLYBUFFER PEAK-RESET-TIME|RESIZING: Volley never shrinks a
/// reply buffer by its recent peak (an emptied buffer over 64 KiB is
/// released at once), so there is nothing to tune; the arguments are
/// checked as Redis checks them.
fn replybuffer(ctx: &mut Ctx, argv: &Argv) {
    let value = argv.get(3);
    if argv.is(2, "peak-reset-time") {
        let named = value.eq_ignore_ascii_case(b"never") || value.eq_ignore_ascii_case(b"reset");
        if !named && parse_i64(value).is_none() {
            return ctx.r.error("ERR value is not an integer or out of range");
        }
    } else if !argv.is(2, "resizing") {
        let name = String::from_utf8_lossy(argv.get(1)).into_owned();
        let msg = format!("ERR unknown subcommand or wrong number of arguments for '{name}'. Try DEBUG HELP.");
        return ctx.r.error(&msg);
    }
    ctx.r.ok();
}

fn help(ctx: &mut Ctx) {
    ctx.r.help("DEBUG", HELP);
}

/// C `atoi`: optional blanks and sign, then digits up to the first other
/// byte; 0 when there are none.
fn atoi(arg: &[u8]) -> i64 {
    let s = String::from_utf8_lossy(arg);
    let t = s.trim_start();
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).take(18).collect();
    let v = digits.parse::<i64>().unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

fn sleep(ctx: &mut Ctx, arg: &[u8]) {
    // Redis reads the time with strtod and no error check: junk is 0.
    let secs = parse_f64(arg).unwrap_or(0.0);
    if secs > 0.0 && secs.is_finite() {
        std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(1e9)));
    }
    ctx.r.ok();
}

/// `Value at:... refcount:... encoding:... serializedlength:... lru:...
/// lru_seconds_idle:...`, plus the quicklist's shape for lists.
fn object(ctx: &mut Ctx, key: &[u8]) {
    let (now, compress) = (ctx.now, ctx.srv.config.rdbcompression);
    let shared = super::keys::shares_integers(&ctx.srv.config);
    let fill = ctx.srv.config.list_max_listpack_size;
    let db = &ctx.srv.keyspace.dbs[ctx.db];
    let Some(e) = db.find(key) else { return ctx.r.error("ERR no such key") };
    let idle = db.idle_secs(key, now).unwrap_or(0);
    // The dump payload is the RDB object plus a type byte, 2 bytes of
    // version and 8 of CRC; serializedlength is the object alone.
    let serialized = crate::persistence::dump_value(&e.value, compress).len() - 11;
    // Redis's LRU clock: seconds, 24 bits.
    let lru = ((now / 1000) - idle) & 0xFF_FFFF;
    let mut text = format!(
        "Value at:{:p} refcount:{} encoding:{} serializedlength:{serialized} lru:{lru} lru_seconds_idle:{idle}",
        &e.value as *const Value,
        super::keys::refcount_of(&e.value, shared),
        e.value.encoding(),
    );
    if let Value::List(l) = &e.value {
        let (nodes, bytes) = l.node_stats();
        let avg = if nodes == 0 { 0.0 } else { l.len() as f64 / nodes as f64 };
        text.push_str(&format!(
            // Volley never compresses list nodes.
            " ql_nodes:{nodes} ql_avg_node:{avg:.2} ql_listpack_max:{fill} ql_compressed:0 ql_uncompressed_size:{bytes}"
        ));
    }
    ctx.r.simple(text.as_bytes());
}

/// Redis prints the listpack to its stdout; so does this, one entry a line.
fn listpack(ctx: &mut Ctx, key: &[u8]) {
    let now = ctx.now;
    let Some(e) = ctx.srv.keyspace.dbs[ctx.db].peek(key, now) else { return ctx.r.error("ERR no such key") };
    if e.value.encoding() != "listpack" {
        return ctx.r.error("ERR Not a listpack encoded object.");
    }
    let mut out = String::new();
    if let Value::Hash(h) = &e.value {
        out.push_str(&format!("{{listpack of {} pairs}}\n", h.len()));
        for (f, v) in h.iter() {
            out.push_str(&format!("{}\n{}\n", String::from_utf8_lossy(f), String::from_utf8_lossy(v)));
        }
    } else if let Value::ZSet(z) = &e.value {
        out.push_str(&format!("{{listpack of {} pairs}}\n", z.len()));
        for (score, m) in z.items() {
            out.push_str(&format!("{}\n{score}\n", String::from_utf8_lossy(&m)));
        }
    }
    print!("{out}");
    ctx.r.simple(b"Listpack structure printed on stdout");
}

fn digest_value(ctx: &mut Ctx, argv: &Argv) {
    ctx.r.array(argv.len() - 2);
    for key in argv.iter_from(2) {
        let d = digest::key_value(&ctx.srv.keyspace.dbs[ctx.db], key);
        ctx.r.simple(digest::hex(&d).as_bytes());
    }
}

fn protocol(ctx: &mut Ctx, kind: &[u8]) {
    let resp3 = ctx.r.resp3();
    let r = &mut ctx.r;
    match String::from_utf8_lossy(kind).to_ascii_lowercase().as_str() {
        "string" => r.bulk(b"Hello World"),
        "integer" => r.int(12345),
        // Written out: 3.141 is the shortest form, as Redis prints it.
        "double" => r.raw(if resp3 { b",3.141\r\n" } else { b"$5\r\n3.141\r\n" }),
        "bignum" => {
            let n = b"1234567999999999999999999999999999999";
            if resp3 {
                r.raw(b"(");
                r.raw(n);
                r.raw(b"\r\n");
            } else {
                r.bulk(n);
            }
        }
        "null" => r.null(),
        "array" | "set" => {
            if kind.eq_ignore_ascii_case(b"set") {
                r.set(3);
            } else {
                r.array(3);
            }
            (0..3).for_each(|i| r.int(i));
        }
        "map" => {
            r.map(3);
            for i in 0..3 {
                r.int(i);
                r.boolean(i == 1);
            }
        }
        "attrib" => {
            if resp3 {
                r.raw(b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n");
            }
            r.bulk(b"Some real reply following the attribute");
        }
        "push" => {
            if !resp3 {
                return r.error("ERR RESP2 is not supported by this command");
            }
            r.push(2);
            r.bulk(b"server-cpu-usage");
            r.int(42);
            r.bulk(b"Some real reply following the push reply");
        }
        "true" => r.boolean(true),
        "false" => r.boolean(false),
        "verbatim" => r.verbatim(b"This is a verbatim\nstring"),
        _ => r.error(
            "ERR Wrong protocol type name. Please use one of the following: \
             string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false",
        ),
    }
}

/// Redis's `memtoull`: digits with an optional unit (b, k, kb, m, mb, g, gb).
fn parse_memory(arg: &[u8]) -> Option<u64> {
    let split = arg.iter().position(|b| !b.is_ascii_digit()).unwrap_or(arg.len());
    let (digits, unit) = arg.split_at(split);
    let mul: u64 = match unit.to_ascii_lowercase().as_slice() {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1024,
        b"m" => 1_000_000,
        b"mb" => 1 << 20,
        b"g" => 1_000_000_000,
        b"gb" => 1 << 30,
        _ => return None,
    };
    let n: u64 = if digits.is_empty() { 0 } else { std::str::from_utf8(digits).ok()?.parse().ok()? };
    n.checked_mul(mul)
}

/// Redis uses the threshold to store big list elements in nodes of their
/// own; Volley's list nodes hold any element size, so only the value's
/// validity matters here (the suite sets it before its big-element tests).
fn packed_threshold(ctx: &mut Ctx, arg: &[u8]) {
    match parse_memory(arg) {
        Some(sz) if sz <= (1u64 << 32) - (1 << 20) => ctx.r.ok(),
        _ => ctx.r.error("ERR argument must be a memory value bigger than 1 and smaller than 4gb"),
    }
}

/// POPULATE count [prefix] [size]: string keys `prefix:N` = `value:N`
/// (padded with zero bytes or cut to `size`), skipping existing keys.
fn populate(ctx: &mut Ctx, argv: &Argv) {
    // Redis's `getPositiveLongFromObjectOrReply` with no message: one
    // error for junk and for negatives.
    const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";
    let Some(count) = parse_i64(argv.get(2)).filter(|n| *n >= 0) else { return ctx.r.error(NOT_POSITIVE) };
    let size = if argv.len() == 5 {
        let Some(n) = parse_i64(argv.get(4)).filter(|n| *n >= 0) else { return ctx.r.error(NOT_POSITIVE) };
        n as usize
    } else {
        0
    };
    let prefix = if argv.len() >= 4 { argv.get(3).to_vec() } else { b"key".to_vec() };
    let now = ctx.now;
    for j in 0..count {
        let mut key = prefix.clone();
        key.extend_from_slice(format!(":{j}").as_bytes());
        if ctx.dbm().contains(&key, now) {
            continue;
        }
        let mut val = format!("value:{j}").into_bytes();
        if size > 0 {
            val.resize(size, 0);
        }
        ctx.dbm().set(&key, Value::Str(Str::from_bytes(&val)), None, false, now);
        ctx.modified(&key);
    }
    // Not propagated: Redis's POPULATE leaves the change counter alone.
    ctx.r.ok();
}

/// Fuzz the glob matcher with random patterns and subjects: passing means
/// it neither panicked nor ran away.
fn stringmatch_test(ctx: &mut Ctx) {
    let mut pat = Vec::new();
    let mut subject = Vec::new();
    for _ in 0..100_000 {
        let r = ctx.srv.keyspace.next_random();
        let alphabet = b"*?[]^-\\ab";
        pat.clear();
        subject.clear();
        for i in 0..(r % 16) {
            pat.push(alphabet[((r >> (i * 3)) % alphabet.len() as u64) as usize]);
        }
        let s = ctx.srv.keyspace.next_random();
        for i in 0..(s % 16) {
            subject.push(alphabet[((s >> (i * 3)) % alphabet.len() as u64) as usize]);
        }
        crate::engine::glob::glob_match(&pat, &subject, false);
    }
    ctx.r.simple(b"Apparently Redis did not crash: test passed");
}
