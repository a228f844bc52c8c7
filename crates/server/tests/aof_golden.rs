//! Golden test of what reaches the append-only file: a fixed mixed workload
//! (every data type, generic key commands, MULTI/EXEC, Lua scripts,
//! expiries, blocking pops served later) must write incr-file bytes that are
//! identical to `tests/fixtures/aof_mixed.incr.aof`, which was recorded from
//! the server before the AOF propagation refactor. Equal bytes mean the
//! refactor changed neither which commands are propagated, nor their
//! translations (relative expiries made absolute, blocking and random
//! commands made deterministic), nor the SELECT / MULTI / EXEC framing.
//!
//! Only absolute times differ between runs: every bulk argument that is a
//! decimal integer inside the test's wall-clock window (ms) is replaced by
//! as many `T`s before comparing; nothing else is normalised.
//!
//! Re-record (only when a change to the file is intended):
//! `VOLLEY_RECORD_AOF_GOLDEN=1 cargo test --release -p volley-server --test aof_golden`
mod common;

use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::*;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/aof_mixed.incr.aof");
const RECORD_ENV: &str = "VOLLEY_RECORD_AOF_GOLDEN";
/// Absolute expiry times reach this far past the test's end: the longest
/// relative TTL in the workload is 2 hours (`PX 7200000`).
const TTL_SLACK_MS: i64 = 4 * 3600 * 1000;
/// A fixed absolute time (2100-01-01) outside the window: it must reach the
/// file unnormalised, proving the normalisation is narrow.
const YEAR_2100_SECS: &str = "4102444800";

#[test]
fn mixed_workload_writes_the_recorded_aof() {
    let start_ms = unix_ms();
    // No automatic rewrite: the workload must land in one incr file.
    let srv =
        TestServer::start(&["--appendonly", "yes", "--appendfsync", "always", "--auto-aof-rewrite-percentage", "0"]);
    run_workload(&srv);
    let raw = read_incr_files(&srv.dir);
    drop(srv);
    let window = start_ms - 1000..=unix_ms() + TTL_SLACK_MS;
    let actual = normalise(&raw, &window);
    if std::env::var(RECORD_ENV).is_ok_and(|v| v == "1") {
        assert_substantial(&actual);
        std::fs::create_dir_all(Path::new(FIXTURE).parent().unwrap()).unwrap();
        std::fs::write(FIXTURE, &actual).unwrap();
        let n = parse(&actual).unwrap().len();
        println!("{RECORD_ENV}=1: recorded {FIXTURE} ({} bytes, {n} commands)", actual.len());
        return;
    }
    let expected = std::fs::read(FIXTURE).unwrap_or_else(|e| panic!("{FIXTURE}: {e}; record it with {RECORD_ENV}=1"));
    assert_substantial(&expected);
    if actual != expected {
        report_mismatch(&expected, &actual);
    }
}

fn unix_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Every section starts and ends with both clients in db 0, and each waits
/// for its replies, so the order of writes in the file is fixed.
fn run_workload(srv: &TestServer) {
    let mut c = srv.client();
    let mut w = srv.client();
    strings(&mut c);
    bitmaps(&mut c);
    lists(&mut c);
    hashes(&mut c);
    sets(&mut c);
    sorted_sets(&mut c);
    hyperloglogs(&mut c);
    generic_keys(&mut c);
    expiries(&mut c);
    transactions(&mut c, &mut w);
    scripts(&mut c);
    blocking_pops(&mut c, &mut w);
    expect(&mut c, &["SET", "end", "1"], ok());
}

// ------------------------------------------------------------ workload

/// Send `args` and insist on the reply: a workload that silently diverged
/// (a typo, a changed reply) would record a different file.
fn expect(c: &mut Client, args: &[&str], want: Frame) {
    assert_eq!(c.cmd(args), want, "reply to {args:?}");
}

/// Send `args` and insist on an error reply starting with `prefix`.
fn expect_err(c: &mut Client, args: &[&str], prefix: &str) {
    match c.cmd(args) {
        Frame::Error(e) if e.starts_with(prefix.as_bytes()) => {}
        other => panic!("reply to {args:?}: wanted an error {prefix}..., got {other:?}"),
    }
}

fn bulks(items: &[&str]) -> Frame {
    arr(items.iter().map(|s| bulk(s)).collect())
}

fn strings(c: &mut Client) {
    expect(c, &["SET", "s:plain", "hello"], ok());
    expect(c, &["APPEND", "s:plain", " world"], int(11));
    expect(c, &["SETRANGE", "s:plain", "6", "WORLD"], int(11));
    expect(c, &["SETRANGE", "s:pad", "3", "xyz"], int(6));
    expect(c, &["SET", "s:n", "10"], ok());
    expect(c, &["INCR", "s:n"], int(11));
    expect(c, &["INCRBY", "s:n", "5"], int(16));
    expect(c, &["DECR", "s:n"], int(15));
    expect(c, &["DECRBY", "s:n", "20"], int(-5));
    // Replayed as SET ... KEEPTTL: float formatting must not drift.
    expect(c, &["INCRBYFLOAT", "s:f", "1.5"], bulk("1.5"));
    expect(c, &["INCRBYFLOAT", "s:f", "2.25"], bulk("3.75"));
    expect(c, &["SET", "s:ex", "v1", "EX", "3600"], ok());
    expect(c, &["SET", "s:ex", "v2", "KEEPTTL"], ok());
    expect(c, &["SET", "s:ex", "v3", "KEEPTTL", "GET"], bulk("v2"));
    expect(c, &["SET", "s:px", "v", "PX", "7200000"], ok());
    expect(c, &["SET", "s:get", "new", "GET"], Frame::Null);
    expect(c, &["SET", "s:get", "newer", "GET"], bulk("new"));
    expect(c, &["SET", "s:nx", "x", "NX"], ok());
    expect(c, &["SET", "s:nx", "y", "NX"], Frame::Null);
    expect(c, &["SET", "s:xx", "y", "XX"], Frame::Null);
    expect(c, &["SET", "s:nx", "z", "XX"], ok());
    expect(c, &["SETNX", "s:setnx", "1"], int(1));
    expect(c, &["SETNX", "s:setnx", "2"], int(0));
    expect(c, &["SETEX", "s:setex", "100", "v"], ok());
    expect(c, &["PSETEX", "s:psetex", "100000", "v"], ok());
    expect(c, &["MSET", "m:1", "a", "m:2", "b"], ok());
    expect(c, &["MSETNX", "m:2", "x", "m:3", "y"], int(0));
    expect(c, &["MSETNX", "m:3", "y", "m:4", "z"], int(1));
    expect(c, &["GETSET", "m:1", "a2"], bulk("a"));
    expect(c, &["GETEX", "s:plain", "EX", "1000"], bulk("hello WORLD"));
    expect(c, &["GETEX", "s:plain", "PERSIST"], bulk("hello WORLD"));
    expect(c, &["GETEX", "s:plain"], bulk("hello WORLD"));
    // An absolute time in the past deletes the key.
    expect(c, &["GETEX", "m:4", "EXAT", "1"], bulk("z"));
    expect(c, &["GETDEL", "m:3"], bulk("y"));
    expect(c, &["GETDEL", "m:none"], Frame::Null);
    expect(c, &["SET", "s:abs", "v", "PXAT", &format!("{YEAR_2100_SECS}000")], ok());
}

fn bitmaps(c: &mut Client) {
    expect(c, &["SETBIT", "b:1", "7", "1"], int(0));
    expect(c, &["SETBIT", "b:1", "100", "1"], int(0));
    expect(c, &["SETBIT", "b:1", "7", "0"], int(1));
    expect(c, &["SET", "b:2", "ab"], ok());
    expect(c, &["BITOP", "AND", "b:and", "b:1", "b:2"], int(13));
    expect(c, &["BITOP", "OR", "b:or", "b:1", "b:2"], int(13));
    expect(c, &["BITOP", "NOT", "b:not", "b:2"], int(2));
    let bf = ["BITFIELD", "b:bf", "SET", "u8", "0", "200", "INCRBY", "u8", "0", "100"];
    let sat = ["OVERFLOW", "SAT", "INCRBY", "i8", "8", "200"];
    expect(c, &[&bf[..], &sat[..]].concat(), arr(vec![int(0), int(44), int(127)]));
    // A BITFIELD that only reads changes nothing and must not be written.
    expect(c, &["BITFIELD", "b:bf", "GET", "u8", "0"], arr(vec![int(44)]));
    expect(c, &["BITFIELD_RO", "b:bf", "GET", "u8", "0"], arr(vec![int(44)]));
    expect(c, &["BITCOUNT", "b:1"], int(1));
}

fn lists(c: &mut Client) {
    expect(c, &["RPUSH", "l:a", "a", "b", "c", "d", "e"], int(5));
    expect(c, &["LPUSH", "l:a", "z"], int(6));
    expect(c, &["LPUSHX", "l:none", "x"], int(0));
    expect(c, &["RPUSHX", "l:a", "f"], int(7));
    expect(c, &["LINSERT", "l:a", "BEFORE", "c", "bb"], int(8));
    expect(c, &["LINSERT", "l:a", "AFTER", "nothere", "x"], int(-1));
    expect(c, &["LSET", "l:a", "0", "zz"], ok());
    expect(c, &["LREM", "l:a", "0", "bb"], int(1));
    expect(c, &["LTRIM", "l:a", "1", "-2"], ok());
    expect(c, &["LPOS", "l:a", "c"], int(2));
    expect(c, &["LMOVE", "l:a", "l:b", "LEFT", "RIGHT"], bulk("a"));
    expect(c, &["RPOPLPUSH", "l:a", "l:b"], bulk("e"));
    expect(c, &["LPOP", "l:a"], bulk("b"));
    expect(c, &["RPOP", "l:a", "2"], bulks(&["d", "c"]));
    expect(c, &["LMPOP", "2", "l:none", "l:b", "RIGHT", "COUNT", "5"], arr(vec![bulk("l:b"), bulks(&["a", "e"])]));
    expect(c, &["LPOP", "l:none"], Frame::Null);
    expect(c, &["EXISTS", "l:a", "l:b"], int(0));
}

fn hashes(c: &mut Client) {
    expect(c, &["HSET", "h:1", "f1", "v1", "f2", "v2"], int(2));
    expect(c, &["HSETNX", "h:1", "f1", "x"], int(0));
    expect(c, &["HSETNX", "h:1", "f3", "v3"], int(1));
    expect(c, &["HMSET", "h:1", "f4", "v4"], ok());
    expect(c, &["HINCRBY", "h:1", "n", "7"], int(7));
    // Replayed as HSET with the result.
    expect(c, &["HINCRBYFLOAT", "h:1", "fl", "1.5"], bulk("1.5"));
    expect(c, &["HINCRBYFLOAT", "h:1", "fl", "0.25"], bulk("1.75"));
    expect(c, &["HDEL", "h:1", "f2", "nothere"], int(1));
    expect(c, &["HDEL", "h:1", "nothere"], int(0));
    expect(c, &["HSET", "h:2", "only", "x"], int(1));
    expect(c, &["HDEL", "h:2", "only"], int(1));
    expect(c, &["HLEN", "h:1"], int(5));
}

fn sets(c: &mut Client) {
    expect(c, &["SADD", "st:a", "1", "2", "3", "4"], int(4));
    expect(c, &["SADD", "st:a", "3"], int(0));
    expect(c, &["SADD", "st:b", "3", "4", "5"], int(3));
    expect(c, &["SREM", "st:a", "1"], int(1));
    expect(c, &["SMOVE", "st:a", "st:b", "2"], int(1));
    expect(c, &["SMOVE", "st:a", "st:b", "99"], int(0));
    expect(c, &["SINTERSTORE", "st:i", "st:a", "st:b"], int(2));
    expect(c, &["SUNIONSTORE", "st:u", "st:a", "st:b"], int(4));
    expect(c, &["SDIFFSTORE", "st:d", "st:b", "st:a"], int(2));
    // Popping every member is deterministic (replayed as DEL); the reply's
    // order is not, so it is compared sorted.
    let Frame::Array(mut popped) = c.cmd(&["SPOP", "st:d", "10"]) else { panic!("SPOP count") };
    popped.sort_by_key(|f| format!("{f:?}"));
    assert_eq!(popped, vec![bulk("2"), bulk("5")]);
    // A single member: the random pick has one choice (replayed as SREM).
    expect(c, &["SADD", "st:one", "only"], int(1));
    expect(c, &["SPOP", "st:one"], bulk("only"));
    expect(c, &["SPOP", "st:u", "0"], arr(vec![]));
    expect(c, &["SINTERSTORE", "st:i", "st:a", "st:none"], int(0));
}

fn sorted_sets(c: &mut Client) {
    expect(c, &["ZADD", "z:a", "1", "a", "2", "b", "3", "c"], int(3));
    expect(c, &["ZADD", "z:a", "NX", "10", "a", "4", "d"], int(1));
    expect(c, &["ZADD", "z:a", "XX", "CH", "5", "a", "9", "nothere"], int(1));
    expect(c, &["ZADD", "z:a", "GT", "1", "b"], int(0));
    expect(c, &["ZADD", "z:a", "LT", "0.5", "c"], int(0));
    expect(c, &["ZADD", "z:a", "INCR", "2", "b"], bulk("4"));
    expect(c, &["ZINCRBY", "z:a", "1.5", "d"], bulk("5.5"));
    expect(c, &["ZPOPMIN", "z:a"], bulks(&["c", "0.5"]));
    expect(c, &["ZPOPMAX", "z:a", "1"], bulks(&["d", "5.5"]));
    expect(c, &["ZADD", "z:b", "1", "x", "2", "y", "3", "z"], int(3));
    expect(c, &["ZRANGESTORE", "z:r", "z:b", "0", "1"], int(2));
    let union = ["ZUNIONSTORE", "z:u", "2", "z:a", "z:b", "WEIGHTS", "2", "1", "AGGREGATE", "MAX"];
    expect(c, &union, int(5));
    expect(c, &["ZINTERSTORE", "z:i", "2", "z:u", "z:b"], int(3));
    expect(c, &["ZREMRANGEBYSCORE", "z:u", "2", "8"], int(3));
    expect(c, &["ZREMRANGEBYRANK", "z:i", "0", "0"], int(1));
    expect(c, &["ZREM", "z:b", "x"], int(1));
    let popped = arr(vec![bulks(&["y", "2"]), bulks(&["z", "3"])]);
    expect(c, &["ZMPOP", "1", "z:b", "MIN", "COUNT", "5"], arr(vec![bulk("z:b"), popped]));
    expect(c, &["ZRANGE", "z:u", "0", "-1", "WITHSCORES"], bulks(&["x", "1", "a", "10"]));
}

fn hyperloglogs(c: &mut Client) {
    expect(c, &["PFADD", "hll:a", "a", "b", "c"], int(1));
    expect(c, &["PFADD", "hll:a", "a"], int(0));
    expect(c, &["PFADD", "hll:b", "c", "d"], int(1));
    expect(c, &["PFMERGE", "hll:m", "hll:a", "hll:b"], ok());
    expect(c, &["PFCOUNT", "hll:m"], int(4));
}

fn generic_keys(c: &mut Client) {
    expect(c, &["MSET", "k:a", "1", "k:b", "2", "k:c", "3", "k:d", "4"], ok());
    expect(c, &["DEL", "k:a", "nothere"], int(1));
    expect(c, &["DEL", "nothere"], int(0));
    expect(c, &["UNLINK", "k:b"], int(1));
    expect(c, &["RENAME", "k:c", "k:c2"], ok());
    expect(c, &["RENAMENX", "k:c2", "k:d"], int(0));
    expect(c, &["RENAMENX", "k:c2", "k:e"], int(1));
    expect(c, &["COPY", "k:d", "k:dcopy"], int(1));
    expect(c, &["COPY", "k:d", "k:e"], int(0));
    expect(c, &["COPY", "k:d", "k:e", "REPLACE"], int(1));
    expect(c, &["COPY", "k:d", "k:d", "DB", "3"], int(1));
    expect(c, &["MOVE", "k:e", "4"], int(1));
    expect(c, &["MOVE", "nothere", "4"], int(0));
    // Relative expiries are written as PEXPIREAT with an absolute time.
    expect(c, &["EXPIRE", "k:d", "1000"], int(1));
    expect(c, &["PEXPIRE", "k:d", "2000000"], int(1));
    expect(c, &["EXPIRE", "k:d", "10", "NX"], int(0));
    expect(c, &["EXPIRE", "k:d", "5000", "GT"], int(1));
    expect(c, &["PERSIST", "k:d"], int(1));
    expect(c, &["PERSIST", "k:d"], int(0));
    expect(c, &["EXPIREAT", "k:dcopy", YEAR_2100_SECS], int(1));
    expect(c, &["PEXPIREAT", "k:dcopy", &format!("{YEAR_2100_SECS}123")], int(1));
    // An absolute time in the past: the key is deleted (DEL in the file).
    expect(c, &["SET", "k:past", "v"], ok());
    expect(c, &["EXPIREAT", "k:past", "1"], int(1));
    expect(c, &["SELECT", "3"], ok());
    expect(c, &["GET", "k:d"], bulk("4"));
    expect(c, &["SET", "k:three", "x"], ok());
    expect(c, &["FLUSHDB"], ok());
    expect(c, &["DBSIZE"], int(0));
    expect(c, &["SELECT", "4"], ok());
    expect(c, &["GET", "k:e"], bulk("4"));
    expect(c, &["SELECT", "0"], ok());
}

/// Keys removed by expiry are written as DEL. A short TTL could be reaped
/// by either the lazy path (on access) or the active cycle first; the file
/// is the same either way because nothing else is written in between.
fn expiries(c: &mut Client) {
    expect(c, &["SET", "e:lazy", "v", "PX", "20"], ok());
    std::thread::sleep(Duration::from_millis(60));
    expect(c, &["GET", "e:lazy"], Frame::Null);
    expect(c, &["SET", "e:lazy2", "v", "PX", "20"], ok());
    std::thread::sleep(Duration::from_millis(60));
    // A write that finds the key expired: DEL, then the write.
    expect(c, &["SET", "e:lazy2", "w", "NX"], ok());
    // The active cycle: wait without touching the key (DBSIZE does not
    // expire anything) until the server reaps it on its own.
    expect(c, &["SELECT", "9"], ok());
    expect(c, &["SET", "e:active", "v", "PX", "20"], ok());
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.cmd(&["DBSIZE"]) != int(0) {
        assert!(Instant::now() < deadline, "the active expiry cycle never removed e:active");
        std::thread::sleep(Duration::from_millis(20));
    }
    expect(c, &["SELECT", "0"], ok());
}

fn transactions(c: &mut Client, w: &mut Client) {
    // Only reads: no trace in the file.
    expect(c, &["MULTI"], ok());
    expect(c, &["GET", "s:n"], simple("QUEUED"));
    expect(c, &["EXISTS", "k:d"], simple("QUEUED"));
    expect(c, &["EXEC"], arr(vec![bulk("-5"), int(1)]));
    // Errors while queueing: EXECABORT, nothing written.
    expect(c, &["MULTI"], ok());
    expect(c, &["SET", "tx:a", "1"], simple("QUEUED"));
    expect_err(c, &["NOSUCHCMD"], "ERR");
    expect_err(c, &["SET", "tx:a"], "ERR");
    expect_err(c, &["EXEC"], "EXECABORT");
    // A runtime error inside EXEC: the other commands are still written,
    // translations included.
    expect(c, &["MULTI"], ok());
    for args in [&["SET", "tx:b", "1"][..], &["INCR", "tx:b"], &["LPUSH", "tx:b", "x"], &["EXPIRE", "tx:b", "100"]] {
        expect(c, args, simple("QUEUED"));
    }
    expect(c, &["INCRBYFLOAT", "tx:f", "1"], simple("QUEUED"));
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    expect(c, &["EXEC"], arr(vec![ok(), int(2), wrongtype, int(1), bulk("1")]));
    transaction_across_dbs(c);
    // A script inside EXEC: one MULTI/EXEC block in the file, not two.
    expect(c, &["MULTI"], ok());
    expect(c, &["EVAL", "return redis.call('SET', KEYS[1], '1')", "1", "tx:ev"], simple("QUEUED"));
    expect(c, &["INCR", "tx:ev"], simple("QUEUED"));
    expect(c, &["EXEC"], arr(vec![ok(), int(2)]));
    // Aborted by WATCH: only the other client's write reaches the file.
    expect(c, &["WATCH", "tx:w"], ok());
    expect(w, &["SET", "tx:w", "x"], ok());
    expect(c, &["MULTI"], ok());
    expect(c, &["SET", "tx:w", "y"], simple("QUEUED"));
    expect(c, &["EXEC"], Frame::Null);
    expect(c, &["MULTI"], ok());
    expect(c, &["SET", "tx:d", "1"], simple("QUEUED"));
    expect(c, &["DISCARD"], ok());
}

/// SELECT inside MULTI, and blocking pops inside MULTI (they never block:
/// served at once or null).
fn transaction_across_dbs(c: &mut Client) {
    expect(c, &["MULTI"], ok());
    let queued: [&[&str]; 6] = [
        &["SET", "tx:c", "1"],
        &["SELECT", "5"],
        &["SET", "tx:c5", "1"],
        &["LPUSH", "tx:l", "x"],
        &["BLPOP", "tx:l", "0"],
        &["BLPOP", "tx:empty", "0"],
    ];
    for args in queued {
        expect(c, args, simple("QUEUED"));
    }
    let replies = vec![ok(), ok(), ok(), int(1), bulks(&["tx:l", "x"]), Frame::Null];
    expect(c, &["EXEC"], arr(replies));
    // SELECT in a transaction sticks to the connection.
    expect(c, &["GET", "tx:c5"], bulk("1"));
    expect(c, &["SELECT", "0"], ok());
}

fn scripts(c: &mut Client) {
    let two_writes = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])";
    expect(c, &["EVAL", two_writes, "2", "sc:a", "sc:n", "v"], int(1));
    let Frame::Bulk(sha) = c.cmd(&["SCRIPT", "LOAD", "return redis.call('INCRBY', KEYS[1], ARGV[1])"]) else {
        panic!("SCRIPT LOAD")
    };
    expect(c, &["EVALSHA", std::str::from_utf8(&sha).unwrap(), "1", "sc:n", "10"], int(11));
    // Read-only scripts leave no trace.
    expect(c, &["EVAL", "return redis.call('GET', KEYS[1])", "1", "sc:a"], bulk("v"));
    expect(c, &["EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "sc:a"], bulk("v"));
    // Writes in two databases; the caller stays in its own.
    let two_dbs = "redis.call('SET', KEYS[1], 'db0'); redis.call('SELECT', 6); \
                   redis.call('SET', KEYS[1], 'db6'); return 1";
    expect(c, &["EVAL", two_dbs, "1", "sc:x"], int(1));
    expect(c, &["GET", "sc:x"], bulk("db0"));
    // redis.call fails after a write: the write stays and is written.
    let fails = "redis.call('SET', KEYS[1], 'x'); redis.call('LPUSH', KEYS[1], 'y'); return 1";
    expect_err(c, &["EVAL", fails, "1", "sc:err"], "WRONGTYPE");
    // redis.pcall catches the error and the script goes on writing.
    let caught = "local r = redis.pcall('INCR', KEYS[1]); redis.call('SET', KEYS[2], 'after'); return type(r)";
    expect(c, &["EVAL", caught, "2", "sc:a", "sc:after"], bulk("table"));
    // A relative expiry inside a script is made absolute too.
    expect(c, &["EVAL", "return redis.call('SET', KEYS[1], 'v', 'EX', 600)", "1", "sc:ttl"], ok());
    // Fails before writing anything: no trace.
    expect_err(c, &["EVAL", "return redis.call('INCR', KEYS[1])", "1", "sc:a"], "ERR");
}

fn send(c: &mut Client, args: &[&str]) {
    let mut out = Vec::new();
    resp::encode_command(&mut out, args);
    c.send(&out);
}

/// Wait until the server has `w`'s blocking command parked, so the push
/// that serves it cannot overtake it.
fn wait_blocked(c: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let Frame::Bulk(info) = c.cmd(&["INFO", "clients"]) else { panic!("INFO clients") };
        if String::from_utf8_lossy(&info).lines().any(|l| l.trim() == "blocked_clients:1") {
            return;
        }
        assert!(Instant::now() < deadline, "the blocking command never blocked");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `w` blocks on `block`, then `c` runs `push` (wanting `pushed`) and `w`
/// must be served `served`.
fn served_later(c: &mut Client, w: &mut Client, block: &[&str], push: &[&str], pushed: Frame, served: Frame) {
    send(w, block);
    wait_blocked(c);
    expect(c, push, pushed);
    assert_eq!(w.read_frame(), served, "served reply to {block:?}");
}

/// Blocking pops written as the non-blocking pop that served them, after
/// the write that woke them.
fn blocking_pops(c: &mut Client, w: &mut Client) {
    served_later(c, w, &["BLPOP", "bl:a", "0"], &["RPUSH", "bl:a", "x", "y"], int(2), bulks(&["bl:a", "x"]));
    // Data already there: served at once.
    expect(w, &["BRPOP", "bl:b", "bl:a", "0"], bulks(&["bl:a", "y"]));
    let blmove = ["BLMOVE", "bl:src", "bl:dst", "RIGHT", "LEFT", "0"];
    served_later(c, w, &blmove, &["LPUSH", "bl:src", "m", "n"], int(2), bulk("m"));
    let zadd = ["ZADD", "bz:a", "2", "two", "1", "one"];
    served_later(c, w, &["BZPOPMIN", "bz:a", "0"], &zadd, int(2), bulks(&["bz:a", "one", "1"]));
    // Woken by a script writing in another database than the caller's.
    expect(w, &["SELECT", "1"], ok());
    let blmpop = ["BLMPOP", "0", "2", "bl:m1", "bl:m2", "LEFT", "COUNT", "3"];
    let push = ["EVAL", "redis.call('SELECT', 1); return redis.call('RPUSH', KEYS[1], 'p', 'q')", "1", "bl:m2"];
    served_later(c, w, &blmpop, &push, int(2), arr(vec![bulk("bl:m2"), bulks(&["p", "q"])]));
    expect(w, &["SELECT", "0"], ok());
    // Woken by a transaction: served after its EXEC.
    send(w, &["BLPOP", "bl:tx", "0"]);
    wait_blocked(c);
    expect(c, &["MULTI"], ok());
    expect(c, &["RPUSH", "bl:tx", "a"], simple("QUEUED"));
    expect(c, &["RPUSH", "bl:tx", "b"], simple("QUEUED"));
    expect(c, &["EXEC"], arr(vec![int(1), int(2)]));
    assert_eq!(w.read_frame(), bulks(&["bl:tx", "a"]));
    // A timeout writes nothing.
    expect(w, &["BRPOP", "bl:none", "0.05"], Frame::Null);
}

// ------------------------------------------------------------ the file

/// The incr files the manifest names, in its order, concatenated (the base
/// file holds an RDB preamble with timestamps and is left out).
fn read_incr_files(dir: &Path) -> Vec<u8> {
    let aof_dir = dir.join("appendonlydir");
    let manifest = std::fs::read_to_string(aof_dir.join("appendonly.aof.manifest")).expect("AOF manifest");
    let names: Vec<&str> =
        manifest.lines().filter(|l| l.ends_with(" type i")).filter_map(|l| l.split(' ').nth(1)).collect();
    assert!(!names.is_empty(), "no incr file in the manifest:\n{manifest}");
    names.iter().flat_map(|n| std::fs::read(aof_dir.join(n)).unwrap()).collect()
}

/// Byte ranges of every command's arguments in a stream of RESP multibulks.
fn parse(aof: &[u8]) -> Result<Vec<Vec<Range<usize>>>, String> {
    let mut pos = 0;
    let mut cmds = Vec::new();
    while pos < aof.len() {
        let n = header(aof, &mut pos, b'*')?;
        let mut args = Vec::with_capacity(n);
        for _ in 0..n {
            let len = header(aof, &mut pos, b'$')?;
            let end = pos + len;
            if aof.get(end..end + 2) != Some(b"\r\n") {
                return Err(format!("bulk at byte {pos} is not {len} bytes and CRLF"));
            }
            args.push(pos..end);
            pos = end + 2;
        }
        cmds.push(args);
    }
    Ok(cmds)
}

/// Read `<kind><decimal>\r\n` at `pos`.
fn header(aof: &[u8], pos: &mut usize, kind: u8) -> Result<usize, String> {
    let at = *pos;
    let crlf = aof[at..].windows(2).position(|w| w == b"\r\n").ok_or(format!("no CRLF after byte {at}"))?;
    let line = &aof[at..at + crlf];
    let n = (line.first() == Some(&kind)).then(|| std::str::from_utf8(&line[1..]).ok()?.parse().ok()).flatten();
    *pos = at + crlf + 2;
    n.ok_or_else(|| format!("expected {}<n> at byte {at}, found {:?}", kind as char, line.escape_ascii().to_string()))
}

/// Replace every argument that is entirely a decimal integer inside
/// `window` (an absolute Unix time in ms written by this run) by as many
/// `T`s. Lengths and everything else stay as the server wrote them.
fn normalise(aof: &[u8], window: &RangeInclusive<i64>) -> Vec<u8> {
    let mut out = aof.to_vec();
    let cmds = parse(aof).unwrap_or_else(|e| panic!("the AOF is not RESP: {e}"));
    for arg in cmds.into_iter().flatten() {
        let text = &aof[arg.clone()];
        let number = text.iter().all(u8::is_ascii_digit).then(|| std::str::from_utf8(text).ok()?.parse::<i64>().ok());
        if number.flatten().is_some_and(|n| window.contains(&n)) {
            out[arg].fill(b'T');
        }
    }
    out
}

/// Each command as printable words.
fn decode(aof: &[u8]) -> Vec<Vec<String>> {
    let cmds = parse(aof).unwrap_or_else(|e| panic!("not RESP: {e}"));
    cmds.into_iter().map(|c| c.into_iter().map(|r| aof[r].escape_ascii().to_string()).collect()).collect()
}

/// The fixture must hold enough of the workload's kinds of entries that an
/// empty or truncated recording cannot make the test pass.
fn assert_substantial(aof: &[u8]) {
    let cmds = decode(aof);
    assert!(cmds.len() >= 150, "only {} commands in the AOF", cmds.len());
    let names: Vec<&str> = cmds.iter().map(|c| c[0].as_str()).collect();
    for want in ["MULTI", "EXEC", "SELECT", "DEL", "PEXPIREAT", "LPOP", "LMOVE", "ZPOPMIN", "SREM", "HSET", "PFMERGE"] {
        assert!(names.contains(&want), "no {want} in the AOF");
    }
    let args = || cmds.iter().flatten();
    assert!(args().any(|a| a == "PXAT"), "no SET ... PXAT in the AOF");
    assert!(args().any(|a| a.len() == 13 && a.bytes().all(|b| b == b'T')), "no normalised time in the AOF");
    // Blocks that replay a single command go out unwrapped (Redis 7.0).
    let multis = names.iter().filter(|&&n| n == "MULTI").count();
    assert!(multis >= 6, "only {multis} MULTI blocks in the AOF");
}

/// Fail with the first differing commands, keeping the actual file.
fn report_mismatch(expected: &[u8], actual: &[u8]) -> ! {
    let kept: PathBuf = std::env::temp_dir().join("aof_mixed.incr.aof.actual");
    std::fs::write(&kept, actual).unwrap();
    let (want, got) = (decode(expected), decode(actual));
    let first = want.iter().zip(&got).position(|(a, b)| a != b).unwrap_or(want.len().min(got.len()));
    let show = |cmds: &[Vec<String>]| {
        let from = first.saturating_sub(3);
        let lines = cmds.iter().enumerate().skip(from).take(8);
        lines
            .map(|(i, c)| format!("  {}{i}: {}", if i == first { "> " } else { "  " }, c.join(" ")))
            .collect::<Vec<_>>()
    };
    panic!(
        "the AOF differs from {FIXTURE} at command {first} ({} commands expected, {} written)\nexpected:\n{}\nactual:\n{}\n\
         actual file (normalised) kept at {}",
        want.len(),
        got.len(),
        show(&want).join("\n"),
        show(&got).join("\n"),
        kept.display()
    );
}
