//! Generic keyspace commands: DEL UNLINK EXISTS TYPE TOUCH, the expiry family
//! (EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL EXPIRETIME PEXPIRETIME PERSIST),
//! KEYS SCAN RANDOMKEY DBSIZE, RENAME RENAMENX COPY MOVE, FLUSHDB FLUSHALL and
//! OBJECT. None of them looks inside a value, so none replies WRONGTYPE.
//!
//! The argument helpers here (`parse_db_index`, `parse_scan_cursor`,
//! [`ScanOpts`]) are shared with the typed SCAN variants and other groups.
use crate::config::NOTIFY_GENERIC;
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::db::Entry;
use crate::engine::glob::glob_match;
use crate::engine::numeric::parse_i64;
use crate::engine::{Str, Value};
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);
const KEY1: (i32, i32, i32) = (1, 1, 1);
const KEY2: (i32, i32, i32) = (1, 2, 1);
const ALL: (i32, i32, i32) = (1, -1, 1);
const OBJ_KEY: (i32, i32, i32) = (2, 2, 1);

/// Redis's `OBJ_SHARED_REFCOUNT`: what OBJECT REFCOUNT says for shared integers.
const SHARED_REFCOUNT: i64 = i32::MAX as i64;
/// Integers below this are shared objects in Redis (`OBJ_SHARED_INTEGERS`).
const SHARED_INTEGERS: i64 = 10_000;

#[rustfmt::skip]
static OBJECT_SUBS: [CommandSpec; 5] = [
    spec!("encoding", 3, READONLY, OBJ_KEY, object_encoding, "keyspace", "2.2.3", "Returns the internal encoding of a Redis object.", ["keyspace", "read", "slow"]),
    spec!("freq", 3, READONLY, OBJ_KEY, object_freq, "keyspace", "4.0.0", "Returns the logarithmic access frequency counter of a Redis object.", ["keyspace", "read", "slow"]),
    spec!("help", 2, LOADING | STALE, NONE, object_help, "keyspace", "6.2.0", "Returns helpful text about the different subcommands.", ["keyspace", "slow"]),
    spec!("idletime", 3, READONLY, OBJ_KEY, object_idletime, "keyspace", "2.2.3", "Returns the time since the last access to a Redis object.", ["keyspace", "read", "slow"]),
    spec!("refcount", 3, READONLY, OBJ_KEY, object_refcount, "keyspace", "2.2.3", "Returns the reference count of a value of a key.", ["keyspace", "read", "slow"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 25] = [
    spec!("del", -2, WRITE, ALL, del, "keyspace", "1.0.0", "Deletes one or more keys.", ["keyspace", "write", "slow"]),
    spec!("unlink", -2, WRITE | FAST, ALL, unlink, "keyspace", "4.0.0", "Asynchronously deletes one or more keys.", ["keyspace", "write", "fast"]),
    spec!("exists", -2, READONLY | FAST, ALL, exists, "keyspace", "1.0.0", "Determines whether one or more keys exist.", ["keyspace", "read", "fast"]),
    spec!("type", 2, READONLY | FAST, KEY1, type_cmd, "keyspace", "1.0.0", "Determines the type of value stored at a key.", ["keyspace", "read", "fast"]),
    spec!("touch", -2, READONLY | FAST, ALL, touch, "keyspace", "3.2.1", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", ["keyspace", "read", "fast"]),
    spec!("expire", -3, WRITE | FAST, KEY1, expire, "keyspace", "1.0.0", "Sets the expiration time of a key in seconds.", ["keyspace", "write", "fast"]),
    spec!("pexpire", -3, WRITE | FAST, KEY1, pexpire, "keyspace", "2.6.0", "Sets the expiration time of a key in milliseconds.", ["keyspace", "write", "fast"]),
    spec!("expireat", -3, WRITE | FAST, KEY1, expireat, "keyspace", "1.2.0", "Sets the expiration time of a key to a Unix timestamp.", ["keyspace", "write", "fast"]),
    spec!("pexpireat", -3, WRITE | FAST, KEY1, pexpireat, "keyspace", "2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp.", ["keyspace", "write", "fast"]),
    spec!("ttl", 2, READONLY | FAST, KEY1, ttl, "keyspace", "1.0.0", "Returns the expiration time in seconds of a key.", ["keyspace", "read", "fast"]),
    spec!("pttl", 2, READONLY | FAST, KEY1, pttl, "keyspace", "2.6.0", "Returns the expiration time in milliseconds of a key.", ["keyspace", "read", "fast"]),
    spec!("expiretime", 2, READONLY | FAST, KEY1, expiretime, "keyspace", "7.0.0", "Returns the expiration time of a key as a Unix timestamp.", ["keyspace", "read", "fast"]),
    spec!("pexpiretime", 2, READONLY | FAST, KEY1, pexpiretime, "keyspace", "7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp.", ["keyspace", "read", "fast"]),
    spec!("persist", 2, WRITE | FAST, KEY1, persist, "keyspace", "2.2.0", "Removes the expiration time of a key.", ["keyspace", "write", "fast"]),
    spec!("keys", 2, READONLY, NONE, keys, "keyspace", "1.0.0", "Returns all key names that match a pattern.", ["keyspace", "read", "slow", "dangerous"]),
    spec!("scan", -2, READONLY, NONE, scan, "keyspace", "2.8.0", "Iterates over the key names in the database.", ["keyspace", "read", "slow"]),
    spec!("randomkey", 1, READONLY, NONE, randomkey, "keyspace", "1.0.0", "Returns a random key name from the database.", ["keyspace", "read", "slow"]),
    spec!("dbsize", 1, READONLY | FAST, NONE, dbsize, "server", "1.0.0", "Returns the number of keys in the database.", ["keyspace", "read", "fast"]),
    spec!("rename", 3, WRITE, KEY2, rename, "keyspace", "1.0.0", "Renames a key and overwrites the destination.", ["keyspace", "write", "slow"]),
    spec!("renamenx", 3, WRITE | FAST, KEY2, renamenx, "keyspace", "1.0.0", "Renames a key only when the target key name doesn't exist.", ["keyspace", "write", "fast"]),
    spec!("copy", -3, WRITE | DENYOOM, KEY2, copy, "keyspace", "6.2.0", "Copies the value of a key to a new key.", ["keyspace", "write", "slow"]),
    spec!("move", 3, WRITE | FAST, KEY1, move_cmd, "keyspace", "1.0.0", "Moves a key to another database.", ["keyspace", "write", "fast"]),
    spec!("flushdb", -1, WRITE, NONE, flushdb, "server", "1.0.0", "Remove all keys from the current database.", ["keyspace", "write", "slow", "dangerous"]),
    spec!("flushall", -1, WRITE, NONE, flushall, "server", "1.0.0", "Removes all keys from all databases.", ["keyspace", "write", "slow", "dangerous"]),
    CommandSpec { subcommands: &OBJECT_SUBS, ..spec!("object", -2, 0, NONE, object_container, "keyspace", "2.2.3", "A container for object introspection commands.", ["slow"]) },
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

// ------------------------------------------------------------ shared helpers

/// Look `key` up for a read that must not count as an access (Redis's
/// `LOOKUP_NOTOUCH`): lazy expiry applies and keyspace hits/misses count.
fn read_peek<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Option<&'c Entry> {
    let now = ctx.now;
    let srv = &mut *ctx.srv;
    let e = srv.keyspace.dbs[ctx.db].peek(key, now);
    count_lookup(&mut srv.stats, e.is_some(), ctx.db, key);
    e
}

/// [`read_peek`] for OBJECT's subcommands: a miss is counted but sends no
/// `keymiss` event (Redis's `LOOKUP_NONOTIFY`).
fn object_peek<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Option<&'c Entry> {
    let now = ctx.now;
    let srv = &mut *ctx.srv;
    let e = srv.keyspace.dbs[ctx.db].peek(key, now);
    match e {
        Some(_) => srv.stats.keyspace_hits += 1,
        None => srv.stats.keyspace_misses += 1,
    }
    e
}

fn count_lookup(stats: &mut crate::server::Stats, hit: bool, db: usize, key: &[u8]) {
    if hit {
        stats.keyspace_hits += 1;
    } else {
        stats.key_miss(db, key);
    }
}

/// Parse a database index the way Redis's `getIntFromObjectOrReply` plus
/// `selectDb` do, with their error texts.
pub fn parse_db_index(arg: &[u8], databases: usize) -> Result<usize, &'static str> {
    let Some(i) = parse_i64(arg) else { return Err("ERR value is not an integer or out of range") };
    if i32::try_from(i).is_err() {
        return Err("ERR value is out of range, value must between -2147483648 and 2147483647");
    }
    if i < 0 || i as usize >= databases {
        return Err("ERR DB index is out of range");
    }
    Ok(i as usize)
}

/// Parse a SCAN cursor like Redis's `strtoul` check: optional sign (a
/// negative value wraps), no leading space, no trailing bytes, no overflow.
/// The empty string is cursor 0, as in Redis.
pub fn parse_scan_cursor(arg: &[u8]) -> Option<u64> {
    let (neg, digits) = match arg.first() {
        None => return Some(0),
        Some(b'-') => (true, &arg[1..]),
        Some(b'+') => (false, &arg[1..]),
        Some(_) => (false, arg),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add((d - b'0') as u64)?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// The options of SCAN, HSCAN, SSCAN and ZSCAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOpts<'a> {
    pub count: usize,
    /// `None` when absent or exactly `*` (Redis skips matching then).
    pub pattern: Option<&'a [u8]>,
    /// SCAN TYPE (only SCAN itself accepts it).
    pub type_name: Option<&'a [u8]>,
}

/// Parse `[MATCH pattern] [COUNT n] [TYPE t]` from argument `from` on.
pub fn parse_scan_opts<'a>(argv: &Argv<'a>, from: usize, allow_type: bool) -> Result<ScanOpts<'a>, &'static str> {
    let mut opts = ScanOpts { count: 10, pattern: None, type_name: None };
    let mut i = from;
    while i < argv.len() {
        let has_value = i + 1 < argv.len();
        if argv.is(i, "count") && has_value {
            match parse_i64(argv.get(i + 1)) {
                None => return Err("ERR value is not an integer or out of range"),
                Some(n) if n < 1 => return Err("ERR syntax error"),
                Some(n) => opts.count = usize::try_from(n).unwrap_or(usize::MAX),
            }
        } else if argv.is(i, "match") && has_value {
            let p = argv.get(i + 1);
            opts.pattern = (p != b"*").then_some(p);
        } else if allow_type && argv.is(i, "type") && has_value {
            opts.type_name = Some(argv.get(i + 1));
        } else {
            return Err("ERR syntax error");
        }
        i += 2;
    }
    Ok(opts)
}

/// FLUSHDB/FLUSHALL `[ASYNC|SYNC]`: `Ok(true)` to free in the background.
fn parse_flush_mode(ctx: &Ctx, argv: &Argv) -> Result<bool, ()> {
    match argv.len() {
        1 => Ok(ctx.srv.config.lazyfree_lazy_user_flush),
        2 if argv.is(1, "async") => Ok(true),
        2 if argv.is(1, "sync") => Ok(false),
        _ => Err(()),
    }
}

/// Free detached tables of `keys` keys: on the lazy-free thread if asked
/// (whatever their size, as Redis's `emptyDbAsync`), here otherwise.
fn dispose<T: Send + 'static>(ctx: &mut Ctx, tables: T, keys: usize, lazy: bool) {
    if lazy {
        ctx.srv.lazyfree.free_tables(tables, keys);
    }
}

// ------------------------------------------------------------ existence

fn del(ctx: &mut Ctx, argv: &Argv) {
    let lazy = ctx.srv.config.lazyfree_lazy_user_del;
    delete_keys(ctx, argv, lazy);
}

/// UNLINK: DEL whose big values are freed on the lazy-free thread.
fn unlink(ctx: &mut Ctx, argv: &Argv) {
    delete_keys(ctx, argv, true);
}

/// Redis's `delGenericCommand`: remove the named keys that exist, freeing
/// their values lazily if `lazy`.
fn delete_keys(ctx: &mut Ctx, argv: &Argv, lazy: bool) {
    let now = ctx.now;
    let mut n = 0;
    for key in argv.iter_from(1) {
        let db = ctx.dbm();
        // `take`, not `remove`: a user delete follows `lazyfree-lazy-user-del`
        // alone, not the server-delete option `remove` honours.
        let gone = if db.contains(key, now) { db.take(key) } else { None };
        if let Some(rec) = gone {
            ctx.srv.lazyfree.free(rec.value, lazy);
            n += 1;
            // Only the keys DEL found count as modified, as in Redis.
            ctx.modified(key);
            ctx.notify(NOTIFY_GENERIC, "del", key);
        }
    }
    ctx.dirty(n);
    ctx.r.int(n as i64);
}

fn exists(ctx: &mut Ctx, argv: &Argv) {
    let n = argv.iter_from(1).filter(|k| read_peek(ctx, k).is_some()).count();
    ctx.r.int(n as i64);
}

fn type_cmd(ctx: &mut Ctx, argv: &Argv) {
    let name = read_peek(ctx, argv.get(1)).map_or("none", |e| e.value.type_name());
    ctx.r.simple(name.as_bytes());
}

fn touch(ctx: &mut Ctx, argv: &Argv) {
    let now = ctx.now;
    let mut n = 0;
    for key in argv.iter_from(1) {
        let srv = &mut *ctx.srv;
        let hit = srv.keyspace.dbs[ctx.db].get(key, now).is_some();
        count_lookup(&mut srv.stats, hit, ctx.db, key);
        n += hit as i64;
    }
    ctx.r.int(n);
}

// ------------------------------------------------------------ expiry

/// EXPIRE's NX/XX/GT/LT options.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct ExpireFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn parse_expire_flags(argv: &Argv) -> Result<ExpireFlags, String> {
    let mut f = ExpireFlags::default();
    for (i, opt) in argv.iter_from(3).enumerate() {
        let slot = match opt.to_ascii_lowercase().as_slice() {
            b"nx" => &mut f.nx,
            b"xx" => &mut f.xx,
            b"gt" => &mut f.gt,
            b"lt" => &mut f.lt,
            _ => return Err(format!("ERR Unsupported option {}", String::from_utf8_lossy(argv.get(3 + i)))),
        };
        *slot = true;
    }
    if f.nx && (f.xx || f.gt || f.lt) {
        return Err("ERR NX and XX, GT or LT options at the same time are not compatible".into());
    }
    if f.gt && f.lt {
        return Err("ERR GT and LT options at the same time are not compatible".into());
    }
    Ok(f)
}

impl ExpireFlags {
    /// Whether the new deadline `when` may replace `current` (None: no TTL).
    fn allows(self, current: Option<i64>, when: i64) -> bool {
        match current {
            None => !self.xx && !self.gt,
            Some(_) if self.nx => false,
            Some(cur) if self.gt => when > cur,
            Some(cur) if self.lt => when < cur,
            Some(_) => true,
        }
    }
}

/// The absolute deadline in ms for `arg` in `unit_ms` units after `base`,
/// or None on overflow (Redis: "invalid expire time").
fn deadline(arg: i64, unit_ms: i64, base: i64) -> Option<i64> {
    arg.checked_mul(unit_ms)?.checked_add(base)
}

fn expire_generic(ctx: &mut Ctx, argv: &Argv, unit_ms: i64, relative: bool) {
    let flags = match parse_expire_flags(argv) {
        Ok(f) => f,
        Err(msg) => return ctx.r.error(&msg),
    };
    let Some(arg) = parse_i64(argv.get(2)) else { return ctx.not_integer() };
    let now = ctx.now;
    let Some(when) = deadline(arg, unit_ms, if relative { now } else { 0 }) else {
        let name = String::from_utf8_lossy(argv.get(0)).to_ascii_lowercase();
        return ctx.r.error(&format!("ERR invalid expire time in '{name}' command"));
    };
    let key = argv.get(1);
    // A deadline in the past replayed from the AOF or sent by our primary
    // is kept as it is (Redis's checkAlreadyExpired): expiry is off then,
    // and what comes next in that stream may still use the key. A replica
    // keeps its own client's too: it expires its keys in its cron.
    let keep_past = crate::replication::is_replica(ctx.srv);
    let db = ctx.dbm();
    if db.get(key, now).is_none() {
        return ctx.r.int(0);
    }
    if !flags.allows(db.expire_of(key), when) {
        return ctx.r.int(0);
    }
    let event = if when <= now && !db.expiry_off && !keep_past {
        // Redis's expireGenericCommand: deleted at once, freed and
        // replicated (UNLINK) lazily under lazyfree-lazy-expire.
        let lazy = ctx.srv.config.lazyfree_lazy_expire;
        if let Some(rec) = ctx.dbm().take(key) {
            ctx.srv.lazyfree.free(rec.value, lazy);
        }
        ctx.replicate_as(&[if lazy { b"UNLINK" } else { b"DEL" }, key]);
        "del"
    } else {
        db.set_expire(key, Some(when));
        if ctx.replicating() {
            // Absolute, so the TTL doesn't restart when the file is replayed.
            ctx.replicate_as(&[b"PEXPIREAT", key, when.to_string().as_bytes()]);
        }
        "expire"
    };
    ctx.dirty(1);
    ctx.notify(NOTIFY_GENERIC, event, key);
    ctx.r.int(1);
}

fn expire(ctx: &mut Ctx, argv: &Argv) {
    expire_generic(ctx, argv, 1000, true);
}
fn pexpire(ctx: &mut Ctx, argv: &Argv) {
    expire_generic(ctx, argv, 1, true);
}
fn expireat(ctx: &mut Ctx, argv: &Argv) {
    expire_generic(ctx, argv, 1000, false);
}
fn pexpireat(ctx: &mut Ctx, argv: &Argv) {
    expire_generic(ctx, argv, 1, false);
}

/// TTL and friends: -2 missing, -1 no expiry, else the (rounded) time.
fn ttl_generic(ctx: &mut Ctx, argv: &Argv, in_ms: bool, absolute: bool) {
    let now = ctx.now;
    let key = argv.get(1);
    let found = read_peek(ctx, key).is_some();
    let v = match found.then(|| ctx.srv.keyspace.dbs[ctx.db].expire_of(key)) {
        None => -2,
        Some(at) => match at {
            None => -1,
            Some(at) => {
                let t = if absolute { at } else { at - now }.max(0);
                if in_ms {
                    t
                } else {
                    // Rounded to seconds without overflow for deadlines near i64::MAX ms.
                    ((t as i128 + 500) / 1000) as i64
                }
            }
        },
    };
    ctx.r.int(v);
}

fn ttl(ctx: &mut Ctx, argv: &Argv) {
    ttl_generic(ctx, argv, false, false);
}
fn pttl(ctx: &mut Ctx, argv: &Argv) {
    ttl_generic(ctx, argv, true, false);
}
fn expiretime(ctx: &mut Ctx, argv: &Argv) {
    ttl_generic(ctx, argv, false, true);
}
fn pexpiretime(ctx: &mut Ctx, argv: &Argv) {
    ttl_generic(ctx, argv, true, true);
}

fn persist(ctx: &mut Ctx, argv: &Argv) {
    let (now, key) = (ctx.now, argv.get(1));
    let db = ctx.dbm();
    let had_ttl = db.get(key, now).is_some() && db.expire_of(key).is_some();
    if had_ttl {
        db.set_expire(key, None);
        ctx.dirty(1);
        ctx.notify(NOTIFY_GENERIC, "persist", key);
    }
    ctx.r.int(had_ttl as i64);
}

// ------------------------------------------------------------ iteration

fn keys(ctx: &mut Ctx, argv: &Argv) {
    let pattern = argv.get(1);
    let all = pattern == b"*";
    let now = ctx.now;
    let db = &ctx.srv.keyspace.dbs[ctx.db];
    let found: Vec<&[u8]> = db
        .iter()
        .filter(|(k, _)| (all || glob_match(pattern, k, false)) && !db.is_stale(k, now))
        .map(|(k, _)| k)
        .collect();
    ctx.r.array(found.len());
    for k in found {
        ctx.r.bulk(k);
    }
}

fn scan(ctx: &mut Ctx, argv: &Argv) {
    let Some(mut cursor) = parse_scan_cursor(argv.get(1)) else { return ctx.r.error("ERR invalid cursor") };
    let opts = match parse_scan_opts(argv, 2, true) {
        Ok(o) => o,
        Err(msg) => return ctx.r.error(msg),
    };
    let now = ctx.now;
    let db = ctx.dbm();
    let mut found: Vec<(Vec<u8>, &'static str)> = Vec::new();
    // Like Redis: visit buckets until COUNT keys or 10*COUNT empty-ish steps.
    let mut budget = opts.count.saturating_mul(10);
    loop {
        cursor = db.scan(cursor, |k, e| found.push((k.to_vec(), e.value.type_name())));
        if cursor == 0 || budget == 0 || found.len() >= opts.count {
            break;
        }
        budget -= 1;
    }
    found.retain(|(k, ty)| {
        opts.pattern.is_none_or(|p| glob_match(p, k, false))
            && opts.type_name.is_none_or(|t| t.eq_ignore_ascii_case(ty.as_bytes()))
            && db.peek(k, now).is_some()
    });
    let r = &mut ctx.r;
    r.array(2);
    r.bulk(cursor.to_string().as_bytes());
    r.array(found.len());
    for (k, _) in &found {
        r.bulk(k);
    }
}

fn randomkey(ctx: &mut Ctx, _argv: &Argv) {
    match ctx.srv.keyspace.random_key(ctx.db, ctx.now) {
        Some(k) => ctx.r.bulk(&k),
        None => ctx.r.null(),
    }
}

fn dbsize(ctx: &mut Ctx, _argv: &Argv) {
    let n = ctx.dbm().len();
    ctx.r.int(n as i64);
}

// ------------------------------------------------------------ rename, copy, move

fn rename_generic(ctx: &mut Ctx, argv: &Argv, nx: bool) {
    let (src, dst, now) = (argv.get(1), argv.get(2), ctx.now);
    let db = ctx.dbm();
    if db.get(src, now).is_none() {
        return ctx.r.error("ERR no such key");
    }
    let reply_ok = |ctx: &mut Ctx| if nx { ctx.r.int(1) } else { ctx.r.ok() };
    if src == dst {
        return if nx { ctx.r.int(0) } else { ctx.r.ok() };
    }
    // Looked up even when it will be overwritten: a stale `dst` expires
    // (and says so) first, as in Redis.
    if db.get(dst, now).is_some() && nx {
        return ctx.r.int(0);
    }
    db.rename(src, dst);
    ctx.dirty(1);
    ctx.notify(NOTIFY_GENERIC, "rename_from", src);
    ctx.notify(NOTIFY_GENERIC, "rename_to", dst);
    reply_ok(ctx);
}

fn rename(ctx: &mut Ctx, argv: &Argv) {
    rename_generic(ctx, argv, false);
}
fn renamenx(ctx: &mut Ctx, argv: &Argv) {
    rename_generic(ctx, argv, true);
}

fn copy(ctx: &mut Ctx, argv: &Argv) {
    let (src, dst, now) = (argv.get(1), argv.get(2), ctx.now);
    let (mut replace, mut dst_db) = (false, ctx.db);
    let mut j = 3;
    while j < argv.len() {
        if argv.is(j, "replace") {
            replace = true;
        } else if argv.is(j, "db") && j + 1 < argv.len() {
            match parse_db_index(argv.get(j + 1), ctx.srv.keyspace.dbs.len()) {
                Ok(i) => dst_db = i,
                Err(msg) => return ctx.r.error(msg),
            }
            j += 1;
        } else {
            return ctx.syntax_error();
        }
        j += 1;
    }
    if dst_db == ctx.db && src == dst {
        return ctx.r.error("ERR source and destination objects are the same");
    }
    let srv = &mut *ctx.srv;
    let found = srv.keyspace.dbs[ctx.db].copy_record(src, now);
    count_lookup(&mut srv.stats, found.is_some(), ctx.db, src);
    let Some(record) = found else { return ctx.r.int(0) };
    let target = &mut srv.keyspace.dbs[dst_db];
    // Looked up even with REPLACE, so a stale `dst` expires first, as in Redis.
    if target.get(dst, now).is_some() && !replace {
        return ctx.r.int(0);
    }
    target.put(dst, record);
    ctx.dirty(1);
    ctx.modified_in(dst_db, dst);
    ctx.srv.notify(NOTIFY_GENERIC, "copy_to", dst_db, dst);
    ctx.r.int(1);
}

fn move_cmd(ctx: &mut Ctx, argv: &Argv) {
    let (key, now) = (argv.get(1), ctx.now);
    let dst = match parse_db_index(argv.get(2), ctx.srv.keyspace.dbs.len()) {
        Ok(i) => i,
        Err(msg) => return ctx.r.error(msg),
    };
    if dst == ctx.db {
        return ctx.r.error("ERR source and destination objects are the same");
    }
    let dbs = &mut ctx.srv.keyspace.dbs;
    if dbs[ctx.db].get(key, now).is_none() || dbs[dst].get(key, now).is_some() {
        return ctx.r.int(0);
    }
    let record = dbs[ctx.db].take(key).expect("looked up just above");
    dbs[dst].put(key, record);
    ctx.dirty(1);
    ctx.r.int(1);
    // Both the key here and the one it became in `dst` changed.
    ctx.modified(key);
    ctx.modified_in(dst, key);
    ctx.notify(NOTIFY_GENERIC, "move_from", key);
    ctx.srv.notify(NOTIFY_GENERIC, "move_to", dst, key);
}

// ------------------------------------------------------------ flush

/// A flush changes every watched key of `db` that exists (as Redis's
/// `touchAllWatchedKeysInDb`).
fn touch_watched_in_db(ctx: &mut Ctx, db: usize) {
    let now = ctx.now;
    for key in ctx.srv.watches.keys_in_db(db) {
        if ctx.srv.keyspace.dbs[db].contains(&key, now) {
            ctx.srv.touch_watched(db, &key);
        }
    }
}

fn flushdb(ctx: &mut Ctx, argv: &Argv) {
    let Ok(lazy) = parse_flush_mode(ctx, argv) else { return ctx.syntax_error() };
    touch_watched_in_db(ctx, ctx.db);
    ctx.srv.blocking.signal_db(ctx.db);
    let old = ctx.dbm().clear();
    let n = old.0.len();
    dispose(ctx, old, n, lazy);
    // As Redis: the flush itself counts, so an empty db's flush replays too.
    ctx.dirty(n as u64 + 1);
    ctx.srv.tracking_flush(ctx.cid);
    ctx.r.ok();
}

fn flushall(ctx: &mut Ctx, argv: &Argv) {
    let Ok(lazy) = parse_flush_mode(ctx, argv) else { return ctx.syntax_error() };
    for i in 0..ctx.srv.keyspace.dbs.len() {
        touch_watched_in_db(ctx, i);
        ctx.srv.blocking.signal_db(i);
    }
    let old: Vec<_> = ctx.srv.keyspace.dbs.iter_mut().map(|db| db.clear()).collect();
    let n: usize = old.iter().map(|d| d.0.len()).sum();
    dispose(ctx, old, n, lazy);
    // Redis counts the removed keys plus one for the flush itself.
    ctx.dirty(n as u64 + 1);
    ctx.srv.tracking_flush(ctx.cid);
    crate::replication::after_flushall(ctx.srv);
    crate::persistence::after_flushall(ctx.srv);
    if ctx.replicating() {
        // The save above may leave the change counter where it was: the
        // AOF must still get the flush.
        let args: Vec<&[u8]> = argv.iter_from(0).collect();
        ctx.replicate_as(&args);
    }
    ctx.r.ok();
}

// ------------------------------------------------------------ OBJECT

fn object_container(ctx: &mut Ctx, _argv: &Argv) {
    // The registry resolves `object <sub>`; arity keeps bare OBJECT out.
    ctx.r.error("ERR unknown subcommand. Try OBJECT HELP.");
}

fn lfu_policy(ctx: &Ctx) -> bool {
    ctx.srv.config.maxmemory_policy.to_ascii_lowercase().contains("lfu")
}

/// [`object_peek`] for the key's idle seconds.
fn read_idle(ctx: &mut Ctx, key: &[u8]) -> Option<i64> {
    object_peek(ctx, key)?;
    ctx.srv.keyspace.dbs[ctx.db].idle_secs(key, ctx.now)
}

const POLICY_NOTE: &str =
    "Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";

fn object_encoding(ctx: &mut Ctx, argv: &Argv) {
    match object_peek(ctx, argv.get(2)).map(|e| e.value.encoding()) {
        Some(enc) => ctx.r.bulk(enc.as_bytes()),
        None => ctx.r.null(),
    }
}

fn object_freq(ctx: &mut Ctx, argv: &Argv) {
    let key = argv.get(2);
    if object_peek(ctx, key).is_none() {
        return ctx.r.null();
    }
    if !lfu_policy(ctx) {
        return ctx.r.error(&format!(
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. {POLICY_NOTE}"
        ));
    }
    // The key's LFU data, decayed to now (Redis's LFUDecrAndReturn).
    let word = ctx.srv.keyspace.dbs[ctx.db].meta_of(key).unwrap_or_default();
    let decay = ctx.srv.config.lfu_decay_time;
    ctx.r.int(i64::from(crate::engine::evict::decayed_counter(word, ctx.now, decay)));
}

fn object_idletime(ctx: &mut Ctx, argv: &Argv) {
    let Some(idle) = read_idle(ctx, argv.get(2)) else { return ctx.r.null() };
    if lfu_policy(ctx) {
        return ctx.r.error(&format!("ERR An LFU maxmemory policy is selected, idle time not tracked. {POLICY_NOTE}"));
    }
    ctx.r.int(idle);
}

/// Whether small integers count as shared objects: not under an LRU/LFU
/// maxmemory policy, which needs per-key access data.
pub fn shares_integers(config: &crate::config::Config) -> bool {
    config.maxmemory == 0 || {
        let p = config.maxmemory_policy.to_ascii_lowercase();
        !p.contains("lru") && !p.contains("lfu")
    }
}

/// The reference count Redis would give `value` (`shared`: what
/// [`shares_integers`] says).
pub fn refcount_of(value: &Value, shared: bool) -> i64 {
    let int = matches!(value, Value::Str(Str::Int(i)) if (0..SHARED_INTEGERS).contains(i));
    if int && shared {
        SHARED_REFCOUNT
    } else {
        1
    }
}

fn object_refcount(ctx: &mut Ctx, argv: &Argv) {
    let shared = shares_integers(&ctx.srv.config);
    let Some(e) = object_peek(ctx, argv.get(2)) else { return ctx.r.null() };
    let n = refcount_of(&e.value, shared);
    ctx.r.int(n);
}

const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
];

fn object_help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.array(OBJECT_HELP.len());
    for line in OBJECT_HELP {
        ctx.r.simple(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_cursor_parsing_follows_strtoul() {
        assert_eq!(parse_scan_cursor(b""), Some(0));
        assert_eq!(parse_scan_cursor(b"0"), Some(0));
        assert_eq!(parse_scan_cursor(b"+17"), Some(17));
        assert_eq!(parse_scan_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_scan_cursor(b"18446744073709551615"), Some(u64::MAX));
        for bad in [&b"18446744073709551616"[..], b" 1", b"1 ", b"+", b"-", b"x", b"1x"] {
            assert_eq!(parse_scan_cursor(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn db_index_errors() {
        assert_eq!(parse_db_index(b"3", 16), Ok(3));
        assert_eq!(parse_db_index(b"16", 16), Err("ERR DB index is out of range"));
        assert_eq!(parse_db_index(b"-1", 16), Err("ERR DB index is out of range"));
        assert!(parse_db_index(b"3000000000", 16).unwrap_err().contains("must between"));
        assert!(parse_db_index(b"x", 16).unwrap_err().contains("not an integer"));
    }

    #[test]
    fn expire_flag_rules() {
        let f = |nx, xx, gt, lt| ExpireFlags { nx, xx, gt, lt };
        assert!(f(true, false, false, false).allows(None, 5));
        assert!(!f(true, false, false, false).allows(Some(1), 5));
        assert!(!f(false, true, false, false).allows(None, 5));
        assert!(!f(false, false, true, false).allows(None, 5));
        assert!(f(false, false, true, false).allows(Some(4), 5));
        assert!(!f(false, false, true, false).allows(Some(5), 5));
        assert!(f(false, false, false, true).allows(None, 5));
        assert!(!f(false, false, false, true).allows(Some(5), 5));
        assert!(f(false, true, false, true).allows(Some(6), 5));
        assert_eq!(deadline(i64::MAX / 1000 + 1, 1000, 0), None);
        assert_eq!(deadline(i64::MAX - 5, 1, 10), None);
        assert_eq!(deadline(-3, 1000, 10_000), Some(7_000));
    }
}
