//! String commands: GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX MGET MSET
//! MSETNX INCR DECR INCRBY DECRBY INCRBYFLOAT APPEND STRLEN GETRANGE SUBSTR
//! SETRANGE, with Redis 7.0's option rules, error texts and encodings.
//!
//! Lookups follow Redis: "read" lookups (GET, MGET, STRLEN, ...) count
//! keyspace hits and misses, "write" lookups (INCR, APPEND, ...) do not.
use crate::config::{NOTIFY_GENERIC, NOTIFY_STRING};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::db::Db;
use crate::engine::numeric::{self, parse_i64, FloatIncrError};
use crate::engine::{EngineError, Str, Value};
use crate::server::Server;
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 21] = [
    spec!("get", 2, READONLY | FAST, K1, get, "string", "1.0.0", "Get the value of a key", ["read", "string", "fast"]),
    spec!("set", -3, WRITE | DENYOOM, K1, set, "string", "1.0.0", "Set the string value of a key", ["write", "string", "slow"]),
    spec!("setnx", 3, WRITE | DENYOOM | FAST, K1, setnx, "string", "1.0.0", "Set the value of a key, only if the key does not exist", ["write", "string", "fast"]),
    spec!("setex", 4, WRITE | DENYOOM, K1, setex, "string", "2.0.0", "Set the value and expiration of a key", ["write", "string", "slow"]),
    spec!("psetex", 4, WRITE | DENYOOM, K1, psetex, "string", "2.6.0", "Set the value and expiration in milliseconds of a key", ["write", "string", "slow"]),
    spec!("getset", 3, WRITE | DENYOOM | FAST, K1, getset, "string", "1.0.0", "Set the string value of a key and return its old value", ["write", "string", "fast"]),
    spec!("getdel", 2, WRITE | FAST, K1, getdel, "string", "6.2.0", "Get the value of a key and delete the key", ["write", "string", "fast"]),
    spec!("getex", -2, WRITE | FAST, K1, getex, "string", "6.2.0", "Get the value of a key and optionally set its expiration", ["write", "string", "fast"]),
    spec!("mget", -2, READONLY | FAST, (1, -1, 1), mget, "string", "1.0.0", "Get the values of all the given keys", ["read", "string", "fast"]),
    spec!("mset", -3, WRITE | DENYOOM, (1, -1, 2), mset, "string", "1.0.1", "Set multiple keys to multiple values", ["write", "string", "slow"]),
    spec!("msetnx", -3, WRITE | DENYOOM, (1, -1, 2), msetnx, "string", "1.0.1", "Set multiple keys to multiple values, only if none of the keys exist", ["write", "string", "slow"]),
    spec!("incr", 2, WRITE | DENYOOM | FAST, K1, incr, "string", "1.0.0", "Increment the integer value of a key by one", ["write", "string", "fast"]),
    spec!("decr", 2, WRITE | DENYOOM | FAST, K1, decr, "string", "1.0.0", "Decrement the integer value of a key by one", ["write", "string", "fast"]),
    spec!("incrby", 3, WRITE | DENYOOM | FAST, K1, incrby, "string", "1.0.0", "Increment the integer value of a key by the given amount", ["write", "string", "fast"]),
    spec!("decrby", 3, WRITE | DENYOOM | FAST, K1, decrby, "string", "1.0.0", "Decrement the integer value of a key by the given number", ["write", "string", "fast"]),
    spec!("incrbyfloat", 3, WRITE | DENYOOM | FAST, K1, incrbyfloat, "string", "2.6.0", "Increment the float value of a key by the given amount", ["write", "string", "fast"]),
    spec!("append", 3, WRITE | DENYOOM | FAST, K1, append, "string", "2.0.0", "Append a value to a key", ["write", "string", "fast"]),
    spec!("strlen", 2, READONLY | FAST, K1, strlen, "string", "2.2.0", "Get the length of the value stored in a key", ["read", "string", "fast"]),
    spec!("getrange", 4, READONLY, K1, getrange, "string", "2.4.0", "Get a substring of the string stored at a key", ["read", "string", "slow"]),
    spec!("setrange", 4, WRITE | DENYOOM, K1, setrange, "string", "2.2.0", "Overwrite part of a string at key starting at the specified offset", ["write", "string", "slow"]),
    spec!("substr", 4, READONLY, K1, getrange, "string", "1.0.0", "Get a substring of the string stored at a key", ["read", "string", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

// ------------------------------------------------------------ shared helpers

/// Read lookup of a string value, counting a keyspace hit (the key exists,
/// whatever its type) or miss, as Redis's `lookupKeyRead` does.
pub(crate) fn read_str<'s>(
    srv: &'s mut Server,
    db: usize,
    key: &[u8],
    now: i64,
) -> Result<Option<&'s mut Str>, EngineError> {
    let found = srv.keyspace.dbs[db].get_str(key, now);
    match found {
        Ok(None) => srv.stats.key_miss(db, key),
        _ => srv.stats.keyspace_hits += 1,
    }
    found
}

/// Expire `key` now if its time has come, before a write replaces it
/// without looking at it: Redis's `setKey` looks the key up first, so a
/// stale key is reported `expired` (and the new one `new`), not overwritten.
pub(crate) fn expire_stale(db: &mut Db, key: &[u8], now: i64) {
    if db.is_stale(key, now) {
        db.peek(key, now);
    }
}

/// Reply a string value as a bulk string.
pub(crate) fn reply_str(r: &mut Reply, s: &Str) {
    match s {
        Str::Int(i) => r.bulk_int(*i),
        other => r.bulk(other.as_slice().unwrap_or_default()),
    }
}

/// A string built whole from bytes that are never int-encoded (INCRBYFLOAT's
/// result, like Redis's `createStringObject`): embstr up to 44 bytes, else raw.
fn plain_str(v: Vec<u8>) -> Str {
    Str::embstr(&v).unwrap_or_else(|| Str::raw(v))
}

/// `ERR string exceeds maximum allowed size` unless `len` fits the
/// configured `proto-max-bulk-len`.
fn check_len(ctx: &mut Ctx, len: u128) -> bool {
    if len > ctx.srv.config.proto_max_bulk_len as u128 {
        ctx.r.error(EngineError::StringTooLong.message());
        return false;
    }
    true
}

/// GET's reply for `key` (bulk or null); false after a WRONGTYPE error.
fn reply_get(ctx: &mut Ctx, key: &[u8]) -> bool {
    match read_str(ctx.srv, ctx.db, key, ctx.now) {
        Ok(Some(s)) => reply_str(&mut ctx.r, s),
        Ok(None) => ctx.r.null(),
        Err(e) => {
            ctx.r.error(e.message());
            return false;
        }
    }
    true
}

// ------------------------------------------------------------ expiry options

/// The expiry option of SET / GETEX.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ExpiryKind {
    Ex,
    Px,
    ExAt,
    PxAt,
}

impl ExpiryKind {
    fn parse(word: &[u8]) -> Option<ExpiryKind> {
        [
            (&b"ex"[..], ExpiryKind::Ex),
            (b"px", ExpiryKind::Px),
            (b"exat", ExpiryKind::ExAt),
            (b"pxat", ExpiryKind::PxAt),
        ]
        .into_iter()
        .find(|(name, _)| word.eq_ignore_ascii_case(name))
        .map(|(_, k)| k)
    }
    fn in_seconds(self) -> bool {
        matches!(self, ExpiryKind::Ex | ExpiryKind::ExAt)
    }
    fn absolute(self) -> bool {
        matches!(self, ExpiryKind::ExAt | ExpiryKind::PxAt)
    }
}

/// Options of SET (`NX XX GET KEEPTTL` + expiry) or GETEX (`PERSIST` + expiry).
#[derive(Default)]
struct StrOpts<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    persist: bool,
    expire: Option<(ExpiryKind, &'a [u8])>,
}

/// Parse SET (`for_set`) or GETEX options from `argv[from..]` with Redis's
/// exclusion rules: NX/XX exclude each other, KEEPTTL/PERSIST exclude any
/// expiry, two different expiry kinds conflict (repeating one is fine, the
/// last value wins). `None` means `ERR syntax error`.
fn parse_opts<'a>(argv: &Argv<'a>, from: usize, for_set: bool) -> Option<StrOpts<'a>> {
    let mut o = StrOpts::default();
    let mut i = from;
    while i < argv.len() {
        let w = argv.get(i);
        let is = |name: &str| w.eq_ignore_ascii_case(name.as_bytes());
        let has_next = i + 1 < argv.len();
        if for_set && is("nx") && !o.xx {
            o.nx = true;
        } else if for_set && is("xx") && !o.nx {
            o.xx = true;
        } else if for_set && is("get") {
            o.get = true;
        } else if for_set && is("keepttl") && o.expire.is_none() {
            o.keepttl = true;
        } else if !for_set && is("persist") && o.expire.is_none() {
            o.persist = true;
        } else if let Some(kind) = ExpiryKind::parse(w) {
            let clash = o.keepttl || o.persist || o.expire.is_some_and(|(k, _)| k != kind);
            if clash || !has_next {
                return None;
            }
            o.expire = Some((kind, argv.get(i + 1)));
            i += 1;
        } else {
            return None;
        }
        i += 1;
    }
    Some(o)
}

/// Absolute expiry in unix ms for an expiry option, or the error reply
/// (`not an integer`, or `invalid expire time in '<cmd>' command` for
/// non-positive values and overflow), checked in Redis's order.
fn expire_at(now: i64, cmd: &str, kind: ExpiryKind, arg: &[u8]) -> Result<i64, String> {
    let invalid = || format!("ERR invalid expire time in '{cmd}' command");
    let Some(mut t) = parse_i64(arg) else { return Err(EngineError::NotInteger.message().to_string()) };
    if t <= 0 || (kind.in_seconds() && t > i64::MAX / 1000) {
        return Err(invalid());
    }
    if kind.in_seconds() {
        t *= 1000;
    }
    if !kind.absolute() {
        // Redis adds in C and catches the wrap as a non-positive result.
        t = t.wrapping_add(now);
    }
    if t <= 0 {
        return Err(invalid());
    }
    Ok(t)
}

// ------------------------------------------------------------ SET family

/// What SET-like commands reply on success / when NX or XX refuses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SetReply {
    /// `+OK` / null (SET, SETEX, PSETEX).
    Ok,
    /// `:1` / `:0` (SETNX).
    Int,
}

/// Redis's `setGenericCommand`: validate the expiry, reply the old value for
/// GET, honour NX/XX, store, and reply.
fn set_generic(ctx: &mut Ctx, cmd: &str, key: &[u8], val: &[u8], o: &StrOpts, how: SetReply) {
    let at = match o.expire {
        Some((kind, arg)) => match expire_at(ctx.now, cmd, kind, arg) {
            Ok(t) => Some(t),
            Err(e) => return ctx.r.error(&e),
        },
        None => None,
    };
    if o.get && !reply_get(ctx, key) {
        return;
    }
    let now = ctx.now;
    let found = ctx.dbm().contains(key, now);
    if (o.nx && found) || (o.xx && !found) {
        if !o.get {
            match how {
                SetReply::Ok => ctx.r.null(),
                SetReply::Int => ctx.r.int(0),
            }
        }
        return;
    }
    ctx.dbm().set(key, Value::Str(Str::from_bytes(val)), at, o.keepttl, now);
    ctx.dirty(1);
    ctx.notify(NOTIFY_STRING, "set", key);
    if at.is_some() {
        ctx.notify(NOTIFY_GENERIC, "expire", key);
    }
    if let (Some(at), true) = (at, ctx.replicating()) {
        // A relative expiry would restart at replay: make it absolute.
        ctx.replicate_as(&[b"SET", key, val, b"PXAT", at.to_string().as_bytes()]);
    }
    if !o.get {
        match how {
            SetReply::Ok => ctx.r.ok(),
            SetReply::Int => ctx.r.int(1),
        }
    }
}

fn set(ctx: &mut Ctx, argv: &Argv) {
    let Some(o) = parse_opts(argv, 3, true) else { return ctx.syntax_error() };
    let dirty = ctx.srv.dirty;
    set_generic(ctx, "set", argv.get(1), argv.get(2), &o, SetReply::Ok);
    // As Redis 7.0: SET ... GET replays without GET (an expiry is already
    // replayed as an absolute SET).
    if o.get && o.expire.is_none() && ctx.srv.dirty != dirty && ctx.replicating() {
        let mut args: Vec<&[u8]> = argv.iter_from(0).take(3).collect();
        args.extend(argv.iter_from(3).filter(|a| !a.eq_ignore_ascii_case(b"get")));
        ctx.replicate_as(&args);
    }
}

fn setnx(ctx: &mut Ctx, argv: &Argv) {
    let o = StrOpts { nx: true, ..StrOpts::default() };
    set_generic(ctx, "setnx", argv.get(1), argv.get(2), &o, SetReply::Int);
}

fn setex(ctx: &mut Ctx, argv: &Argv) {
    let o = StrOpts { expire: Some((ExpiryKind::Ex, argv.get(2))), ..StrOpts::default() };
    set_generic(ctx, "setex", argv.get(1), argv.get(3), &o, SetReply::Ok);
}

fn psetex(ctx: &mut Ctx, argv: &Argv) {
    let o = StrOpts { expire: Some((ExpiryKind::Px, argv.get(2))), ..StrOpts::default() };
    set_generic(ctx, "psetex", argv.get(1), argv.get(3), &o, SetReply::Ok);
}

fn get(ctx: &mut Ctx, argv: &Argv) {
    reply_get(ctx, argv.get(1));
}

fn getset(ctx: &mut Ctx, argv: &Argv) {
    let key = argv.get(1);
    if !reply_get(ctx, key) {
        return;
    }
    let now = ctx.now;
    ctx.dbm().set(key, Value::Str(Str::from_bytes(argv.get(2))), None, false, now);
    ctx.dirty(1);
    ctx.notify(NOTIFY_STRING, "set", key);
    // Redis 7.0 replays GETSET as SET.
    if ctx.replicating() {
        ctx.replicate_as(&[b"SET", key, argv.get(2)]);
    }
}

fn getdel(ctx: &mut Ctx, argv: &Argv) {
    let key = argv.get(1);
    let found = match read_str(ctx.srv, ctx.db, key, ctx.now) {
        Ok(Some(s)) => {
            reply_str(&mut ctx.r, s);
            true
        }
        Ok(None) => {
            ctx.r.null();
            false
        }
        Err(e) => return ctx.r.error(e.message()),
    };
    if found {
        // A user delete, as DEL: `lazyfree-lazy-user-del` decides how the
        // value is freed, and Redis 7.0 replays it as the matching DEL or
        // UNLINK.
        let lazy = ctx.srv.config.lazyfree_lazy_user_del;
        if let Some(rec) = ctx.dbm().take(key) {
            ctx.srv.lazyfree.free(rec.value, lazy);
        }
        ctx.dirty(1);
        ctx.notify(NOTIFY_GENERIC, "del", key);
        if ctx.replicating() {
            let verb: &[u8] = if lazy { b"UNLINK" } else { b"DEL" };
            ctx.replicate_as(&[verb, key]);
        }
    }
}

fn getex(ctx: &mut Ctx, argv: &Argv) {
    let Some(o) = parse_opts(argv, 2, false) else { return ctx.syntax_error() };
    let (key, now) = (argv.get(1), ctx.now);
    match read_str(ctx.srv, ctx.db, key, now) {
        Ok(Some(_)) => {}
        Ok(None) => return ctx.r.null(),
        Err(e) => return ctx.r.error(e.message()),
    }
    let at = match o.expire {
        Some((kind, arg)) => match expire_at(now, "getex", kind, arg) {
            Ok(t) => Some((kind, t)),
            Err(e) => return ctx.r.error(&e),
        },
        None => None,
    };
    let (db, r) = ctx.db_reply();
    if let Ok(Some(s)) = db.get_str(key, now) {
        reply_str(r, s);
    }
    let (changed, deleted) = match at {
        Some((kind, t)) if kind.absolute() && t <= now => (db.remove(key).is_some(), true),
        Some((_, t)) => (db.set_expire(key, Some(t)), false),
        None if o.persist => {
            (db.peek(key, now).is_some() && db.expire_of(key).is_some() && db.set_expire(key, None), false)
        }
        None => (false, false),
    };
    if changed {
        ctx.dirty(1);
        match at {
            // UNLINK under lazyfree-lazy-expire, as Redis's getexCommand.
            _ if deleted && ctx.srv.config.lazyfree_lazy_expire => ctx.replicate_as(&[b"UNLINK", key]),
            _ if deleted => ctx.replicate_as(&[b"DEL", key]),
            Some((_, t)) if ctx.replicating() => ctx.replicate_as(&[b"PEXPIREAT", key, t.to_string().as_bytes()]),
            Some(_) => {}
            None => ctx.replicate_as(&[b"PERSIST", key]),
        }
        let event = match at {
            _ if deleted => "del",
            Some(_) => "expire",
            None => "persist",
        };
        ctx.notify(NOTIFY_GENERIC, event, key);
    }
}

// ------------------------------------------------------------ multi-key

fn mget(ctx: &mut Ctx, argv: &Argv) {
    ctx.r.array(argv.len() - 1);
    for key in argv.iter_from(1) {
        match read_str(ctx.srv, ctx.db, key, ctx.now) {
            Ok(Some(s)) => reply_str(&mut ctx.r, s),
            _ => ctx.r.null(),
        }
    }
}

/// Store every key/value pair of MSET / MSETNX.
fn mset_all(ctx: &mut Ctx, argv: &Argv) {
    let now = ctx.now;
    for i in (1..argv.len()).step_by(2) {
        let (key, db) = (argv.get(i), ctx.dbm());
        expire_stale(db, key, now);
        db.set(key, Value::Str(Str::from_bytes(argv.get(i + 1))), None, false, now);
        ctx.notify(NOTIFY_STRING, "set", key);
    }
    ctx.dirty((argv.len() as u64 - 1) / 2);
}

fn mset_arity_ok(ctx: &mut Ctx, argv: &Argv, name: &str) -> bool {
    if argv.len() % 2 != 1 {
        ctx.r.error(&format!("ERR wrong number of arguments for '{name}' command"));
        return false;
    }
    true
}

fn mset(ctx: &mut Ctx, argv: &Argv) {
    if mset_arity_ok(ctx, argv, "mset") {
        mset_all(ctx, argv);
        ctx.r.ok();
    }
}

fn msetnx(ctx: &mut Ctx, argv: &Argv) {
    if !mset_arity_ok(ctx, argv, "msetnx") {
        return;
    }
    let now = ctx.now;
    let db = ctx.dbm();
    if (1..argv.len()).step_by(2).any(|i| db.contains(argv.get(i), now)) {
        return ctx.r.int(0);
    }
    mset_all(ctx, argv);
    ctx.r.int(1);
}

// ------------------------------------------------------------ counters

/// INCR/DECR/INCRBY/DECRBY: add `by` to the integer at `key` (0 if
/// missing), keeping its TTL; the result is int-encoded.
fn incr_decr(ctx: &mut Ctx, key: &[u8], by: i64) {
    let now = ctx.now;
    let (db, r) = ctx.db_reply();
    let v = match db.get_str(key, now) {
        Err(e) => return r.error(e.message()),
        Ok(None) => {
            db.set(key, Value::Str(Str::Int(by)), None, true, now);
            by
        }
        // Updated where it is: the lookup just made is the only one.
        Ok(Some(s)) => match s.as_i64().map(|old| old.checked_add(by)) {
            Some(Some(v)) => {
                *s = Str::Int(v);
                v
            }
            Some(None) => return r.error(EngineError::Overflow.message()),
            None => return r.error(EngineError::NotInteger.message()),
        },
    };
    r.int(v);
    ctx.dirty(1);
    ctx.notify(NOTIFY_STRING, "incrby", key);
}

fn incr(ctx: &mut Ctx, argv: &Argv) {
    incr_decr(ctx, argv.get(1), 1);
}

fn decr(ctx: &mut Ctx, argv: &Argv) {
    incr_decr(ctx, argv.get(1), -1);
}

fn incrby(ctx: &mut Ctx, argv: &Argv) {
    let Some(by) = parse_i64(argv.get(2)) else { return ctx.not_integer() };
    incr_decr(ctx, argv.get(1), by);
}

fn decrby(ctx: &mut Ctx, argv: &Argv) {
    let Some(by) = parse_i64(argv.get(2)) else { return ctx.not_integer() };
    if by == i64::MIN {
        return ctx.r.error("ERR decrement would overflow");
    }
    incr_decr(ctx, argv.get(1), -by);
}

fn incrbyfloat(ctx: &mut Ctx, argv: &Argv) {
    let (key, now) = (argv.get(1), ctx.now);
    let (db, r) = ctx.db_reply();
    let current = match db.get_str(key, now) {
        Err(e) => return r.error(e.message()),
        Ok(None) => b"0".to_vec(),
        // Redis's string2ld refuses 5120+ bytes; skip copying such a value.
        Ok(Some(s)) if s.len() >= 5120 => return r.error(EngineError::NotFloat.message()),
        Ok(Some(s)) => s.bytes(&mut Vec::new()).to_vec(),
    };
    let sum = match numeric::incr_by_float(&current, argv.get(2)) {
        Ok(v) => v,
        Err(FloatIncrError::NotFloat) => return r.error(EngineError::NotFloat.message()),
        Err(FloatIncrError::NanOrInfinity) => return r.error(EngineError::NanOrInfinity.message()),
    };
    r.bulk(&sum);
    // Replays as the result, not the increment (float rounding may differ).
    let prop = ctx.replicating().then(|| sum.clone());
    ctx.dbm().set(key, Value::Str(plain_str(sum)), None, true, now);
    ctx.dirty(1);
    ctx.notify(NOTIFY_STRING, "incrbyfloat", key);
    if let Some(sum) = prop {
        ctx.replicate_as(&[b"SET", key, &sum, b"KEEPTTL"]);
    }
}

// ------------------------------------------------------------ in-place edits

fn append(ctx: &mut Ctx, argv: &Argv) {
    let (key, val, now) = (argv.get(1), argv.get(2), ctx.now);
    let old_len = match ctx.dbm().get_str(key, now) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => None,
        Ok(Some(s)) => Some(s.len()),
    };
    let Some(old_len) = old_len else {
        ctx.dbm().set(key, Value::Str(Str::from_bytes(val)), None, false, now);
        ctx.r.int(val.len() as i64);
        ctx.notify(NOTIFY_STRING, "append", key);
        return ctx.dirty(1);
    };
    if !check_len(ctx, old_len as u128 + val.len() as u128) {
        return;
    }
    if let Ok(Some(s)) = ctx.dbm().get_str(key, now) {
        let buf = s.make_raw();
        buf.extend_from_slice(val);
        let len = buf.len() as i64;
        ctx.r.int(len);
    }
    ctx.dirty(1);
    ctx.notify(NOTIFY_STRING, "append", key);
}

fn strlen(ctx: &mut Ctx, argv: &Argv) {
    match read_str(ctx.srv, ctx.db, argv.get(1), ctx.now) {
        Ok(Some(s)) => ctx.r.int(s.len() as i64),
        Ok(None) => ctx.r.int(0),
        Err(e) => ctx.r.error(e.message()),
    }
}

/// GETRANGE's byte range of a `len`-byte string: negative indexes count
/// from the end, then both ends are clamped; `None` is an empty reply.
fn substr_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let n = len as i128;
    let fix = |i: i64| if i < 0 { (n + i as i128).max(0) } else { i as i128 };
    let (s, e) = (fix(start), fix(end).min(n - 1));
    (len > 0 && s <= e).then_some((s as usize, e as usize))
}

fn getrange(ctx: &mut Ctx, argv: &Argv) {
    let (Some(start), Some(end)) = (parse_i64(argv.get(2)), parse_i64(argv.get(3))) else {
        return ctx.not_integer();
    };
    let s = match read_str(ctx.srv, ctx.db, argv.get(1), ctx.now) {
        Ok(Some(s)) => s,
        Ok(None) => return ctx.r.bulk(b""),
        Err(e) => return ctx.r.error(e.message()),
    };
    let mut scratch = Vec::new();
    let bytes = s.bytes(&mut scratch);
    match substr_range(start, end, bytes.len()) {
        Some((a, b)) => ctx.r.bulk(&bytes[a..=b]),
        None => ctx.r.bulk(b""),
    }
}

fn setrange(ctx: &mut Ctx, argv: &Argv) {
    let (key, val, now) = (argv.get(1), argv.get(3), ctx.now);
    let Some(offset) = parse_i64(argv.get(2)) else { return ctx.not_integer() };
    if offset < 0 {
        return ctx.r.error("ERR offset is out of range");
    }
    let old_len = match ctx.dbm().get_str(key, now) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(s) => s.map(|s| s.len()),
    };
    if val.is_empty() {
        return ctx.r.int(old_len.unwrap_or(0) as i64);
    }
    if !check_len(ctx, offset as u128 + val.len() as u128) {
        return;
    }
    let (offset, end) = (offset as usize, offset as usize + val.len());
    let db = ctx.dbm();
    let len = match db.get_str(key, now) {
        Ok(Some(s)) => {
            let buf = s.make_raw();
            if buf.len() < end {
                buf.resize(end, 0);
            }
            buf[offset..end].copy_from_slice(val);
            buf.len()
        }
        _ => {
            let mut buf = vec![0; end];
            buf[offset..].copy_from_slice(val);
            db.set(key, Value::Str(Str::raw(buf)), None, false, now);
            end
        }
    };
    ctx.r.int(len as i64);
    ctx.dirty(1);
    ctx.notify(NOTIFY_STRING, "setrange", key);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getrange_indexes_like_redis() {
        assert_eq!(substr_range(0, -1, 5), Some((0, 4)));
        assert_eq!(substr_range(-3, -1, 5), Some((2, 4)));
        assert_eq!(substr_range(-1, -3, 5), None);
        assert_eq!(substr_range(3, 1, 5), None);
        assert_eq!(substr_range(0, 100, 5), Some((0, 4)));
        assert_eq!(substr_range(-100, 0, 5), Some((0, 0)));
        assert_eq!(substr_range(0, -1, 0), None);
        assert_eq!(substr_range(i64::MIN, i64::MAX, 3), Some((0, 2)));
        assert_eq!(substr_range(5, 10, 5), None);
    }

    #[test]
    fn expire_at_rules() {
        let now = 1_000_000;
        assert_eq!(expire_at(now, "set", ExpiryKind::Ex, b"10"), Ok(now + 10_000));
        assert_eq!(expire_at(now, "set", ExpiryKind::PxAt, b"5"), Ok(5));
        assert_eq!(expire_at(now, "set", ExpiryKind::PxAt, b"9223372036854775807"), Ok(i64::MAX));
        let bad = Err("ERR invalid expire time in 'set' command".to_string());
        assert_eq!(expire_at(now, "set", ExpiryKind::Ex, b"0"), bad);
        assert_eq!(expire_at(now, "set", ExpiryKind::Px, b"-5"), bad);
        assert_eq!(expire_at(now, "set", ExpiryKind::Ex, b"9223372036854776"), bad);
        assert_eq!(expire_at(now, "set", ExpiryKind::Px, b"9223372036854775807"), bad);
        assert!(expire_at(now, "set", ExpiryKind::Ex, b"x").unwrap_err().contains("not an integer"));
    }
}
