//! MIGRATE: move (or COPY) keys to another Redis-protocol server. As in
//! Redis, the handler itself connects, sends `[AUTH] SELECT` and one
//! `RESTORE key ttl payload [REPLACE]` per key, and reads the replies, every
//! step bounded by the command's timeout; keys the target acknowledged are
//! deleted here unless COPY, and replay in the AOF as one DEL of exactly
//! those keys.
//!
//! Unlike Redis, connections are not cached between calls: each MIGRATE
//! opens and closes its own (INFO's `migrate_cached_sockets` stays 0). A
//! cache would need the server's cron to close idle sockets, which lives
//! outside the command layer.
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::config::NOTIFY_GENERIC;
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::numeric::parse_i64;
use crate::persistence::dump_value;
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    spec!("migrate", -6, WRITE | MOVABLEKEYS, (3, 3, 1), migrate, "generic", "2.6.0", "Atomically transfer a key from a Redis instance to another one.", ["keyspace", "write", "slow", "dangerous"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

/// Writes go out in pieces of this size, each with the full timeout.
const WRITE_CHUNK: usize = 64 * 1024;
/// Longest reply line kept (Redis reads replies into 1 KB buffers).
const LINE_MAX: usize = 1023;

/// Everything after the fixed arguments.
struct Options<'a> {
    copy: bool,
    replace: bool,
    /// AUTH password, or AUTH2 username and password.
    auth: Option<(Option<&'a [u8]>, &'a [u8])>,
    /// Argument index of the first key, and how many keys.
    first_key: usize,
    num_keys: usize,
}

fn parse_options<'a>(argv: &Argv<'a>) -> Result<Options<'a>, &'static str> {
    let mut o = Options { copy: false, replace: false, auth: None, first_key: 3, num_keys: 1 };
    let mut j = 6;
    while j < argv.len() {
        let more = argv.len() - 1 - j;
        if argv.is(j, "copy") {
            o.copy = true;
        } else if argv.is(j, "replace") {
            o.replace = true;
        } else if argv.is(j, "auth") && more >= 1 {
            o.auth = Some((None, argv.get(j + 1)));
            j += 1;
        } else if argv.is(j, "auth2") && more >= 2 {
            o.auth = Some((Some(argv.get(j + 1)), argv.get(j + 2)));
            j += 2;
        } else if argv.is(j, "keys") {
            if !argv.get(3).is_empty() {
                return Err("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
            }
            o.first_key = j + 1;
            o.num_keys = argv.len() - j - 1;
            break;
        } else {
            return Err("ERR syntax error");
        }
        j += 1;
    }
    Ok(o)
}

/// How an exchange with the target failed.
#[derive(Debug)]
enum Failure {
    /// The host name does not resolve.
    Connect,
    /// A write or read failed; `timed_out` forbids the retry.
    Io { writing: bool, timed_out: bool },
}

impl Failure {
    fn io(writing: bool, e: &io::Error) -> Failure {
        let timed_out = matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut);
        Failure::Io { writing, timed_out }
    }

    fn reply(&self) -> &'static str {
        match self {
            Failure::Connect => "IOERR error or timeout connecting to the client",
            Failure::Io { writing: true, .. } => "IOERR error or timeout writing to target instance",
            Failure::Io { writing: false, .. } => "IOERR error or timeout reading to target instance",
        }
    }
}

/// A connection to the target with blocking, timeout-bounded I/O.
struct Target {
    stream: TcpStream,
    timeout: Duration,
    buf: Vec<u8>,
}

impl Target {
    /// Connect to `host:port` within `timeout`, trying each address the
    /// name resolves to. `port` is read like C's atoi (leading digits).
    /// Only a name that does not resolve is a connect failure: Redis's
    /// non-blocking connect reports a refused or slow connection when it
    /// first writes, so those are write failures here too.
    fn connect(host: &[u8], port: &[u8], timeout: Duration) -> Result<Target, Failure> {
        let host = std::str::from_utf8(host).map_err(|_| Failure::Connect)?;
        let digits = port.iter().take_while(|b| b.is_ascii_digit()).count();
        let port = std::str::from_utf8(&port[..digits]).ok().and_then(|p| p.parse::<u16>().ok()).unwrap_or(0);
        let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs().map_err(|_| Failure::Connect)?.collect();
        if addrs.is_empty() {
            return Err(Failure::Connect);
        }
        let deadline = Instant::now() + timeout;
        let mut failure = Failure::Io { writing: true, timed_out: true };
        for addr in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(Target { stream, timeout, buf: Vec::new() });
                }
                Err(e) => failure = Failure::io(true, &e),
            }
        }
        Err(failure)
    }

    /// Send `bytes`, each chunk within the timeout.
    fn send(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        for chunk in bytes.chunks(WRITE_CHUNK) {
            let deadline = Instant::now() + self.timeout;
            let mut at = 0;
            while at < chunk.len() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(Failure::Io { writing: true, timed_out: true });
                }
                let _ = self.stream.set_write_timeout(Some(left));
                match self.stream.write(&chunk[at..]) {
                    Ok(0) => return Err(Failure::Io { writing: true, timed_out: false }),
                    Ok(n) => at += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(Failure::io(true, &e)),
                }
            }
        }
        Ok(())
    }

    /// The next reply line without its CRLF, within the timeout. A line
    /// longer than [`LINE_MAX`] is cut there (the rest is the next line).
    fn line(&mut self) -> Result<Vec<u8>, Failure> {
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some(end) = self.buf.iter().take(LINE_MAX).position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            if self.buf.len() >= LINE_MAX {
                return Ok(self.buf.drain(..LINE_MAX).collect());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Failure::Io { writing: false, timed_out: true });
            }
            let _ = self.stream.set_read_timeout(Some(left));
            let mut chunk = [0u8; 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(Failure::Io { writing: false, timed_out: false }),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Failure::io(false, &e)),
            }
        }
    }
}

/// What one attempt achieved: keys the target acknowledged (by index into
/// the batch), the target's first error line, and a socket failure after
/// `replies` RESTORE replies.
#[derive(Default)]
struct Outcome {
    acked: Vec<usize>,
    target_error: Option<Vec<u8>>,
    failure: Option<Failure>,
    replies: usize,
}

/// The commands of one attempt: optional AUTH, SELECT, then the RESTOREs.
struct Batch {
    bytes: Vec<u8>,
    auth: bool,
    restores: usize,
}

/// Send the batch and read its replies. A failure before any RESTORE reply
/// leaves `replies` at 0, so the caller may retry on a new connection.
fn exchange(host: &[u8], port: &[u8], timeout: Duration, batch: &Batch) -> Outcome {
    let mut out = Outcome::default();
    let mut target = match Target::connect(host, port, timeout) {
        Ok(t) => t,
        Err(f) => {
            out.failure = Some(f);
            return out;
        }
    };
    if let Err(f) = target.send(&batch.bytes) {
        out.failure = Some(f);
        return out;
    }
    let mut prelude_error = None;
    for _ in 0..1 + usize::from(batch.auth) {
        match target.line() {
            Ok(l) if l.first() == Some(&b'-') => prelude_error = prelude_error.or(Some(l)),
            Ok(_) => {}
            Err(f) => {
                out.failure = Some(f);
                return out;
            }
        }
    }
    for i in 0..batch.restores {
        let line = match target.line() {
            Ok(l) => l,
            Err(f) => {
                out.failure = Some(f);
                break;
            }
        };
        out.replies += 1;
        let err = prelude_error.clone().or_else(|| (line.first() == Some(&b'-')).then_some(line));
        match err {
            Some(e) => out.target_error = out.target_error.take().or(Some(e)),
            None => out.acked.push(i),
        }
    }
    out
}

fn migrate(ctx: &mut Ctx, argv: &Argv) {
    let o = match parse_options(argv) {
        Ok(o) => o,
        Err(msg) => return ctx.r.error(msg),
    };
    let (Some(timeout), Some(dbid)) = (parse_i64(argv.get(5)), parse_i64(argv.get(4))) else {
        return ctx.not_integer();
    };
    let timeout = Duration::from_millis(if timeout <= 0 { 1000 } else { timeout as u64 });
    let keys = found_keys(ctx, argv, &o);
    if keys.is_empty() {
        return ctx.r.simple(b"NOKEY");
    }
    let (batch, sent) = build_batch(ctx, &keys, &o, dbid);
    let (host, port) = (argv.get(1), argv.get(2));
    let mut outcome = exchange(host, port, timeout, &batch);
    // An exchange that failed before any RESTORE reply (and not by timing
    // out) is tried once more on a new connection, as Redis does.
    if matches!(outcome.failure, Some(Failure::Io { timed_out: false, .. })) && outcome.replies == 0 {
        outcome = exchange(host, port, timeout, &batch);
    }
    if !o.copy {
        delete_acked(ctx, &sent, &outcome.acked);
    }
    match (outcome.target_error, outcome.failure) {
        (Some(e), _) => {
            let mut msg = b"ERR Target instance replied with error: ".to_vec();
            msg.extend_from_slice(&e[1..]);
            ctx.r.error_bytes(&msg);
        }
        (None, Some(f)) => ctx.r.error(f.reply()),
        (None, None) => ctx.r.ok(),
    }
}

/// The keys named that exist here (a read lookup each, as Redis counts
/// them); duplicates are kept, as Redis sends them twice.
fn found_keys<'a>(ctx: &mut Ctx, argv: &Argv<'a>, o: &Options) -> Vec<&'a [u8]> {
    let now = ctx.now;
    let mut keys = Vec::new();
    for key in argv.iter_from(o.first_key).take(o.num_keys) {
        if ctx.dbm().get(key, now).is_some() {
            ctx.srv.stats.keyspace_hits += 1;
            keys.push(key);
        } else {
            ctx.srv.stats.key_miss(ctx.db, key);
        }
    }
    keys
}

/// Encode `[AUTH] SELECT RESTORE...` for the keys still alive; returns the
/// batch and the keys it carries, in order.
fn build_batch<'a>(ctx: &mut Ctx, keys: &[&'a [u8]], o: &Options, dbid: i64) -> (Batch, Vec<&'a [u8]>) {
    let mut bytes = Vec::new();
    match o.auth {
        Some((Some(user), pass)) => resp::encode_command(&mut bytes, &[b"AUTH", user, pass]),
        Some((None, pass)) => resp::encode_command(&mut bytes, &[b"AUTH", pass]),
        None => {}
    }
    resp::encode_command(&mut bytes, &[b"SELECT", dbid.to_string().as_bytes()]);
    let restore: &[u8] = if ctx.srv.config.cluster_enabled { b"RESTORE-ASKING" } else { b"RESTORE" };
    let (now, compress) = (ctx.now, ctx.srv.config.rdbcompression);
    let mut sent = Vec::with_capacity(keys.len());
    for &key in keys {
        let db = ctx.dbm();
        let ttl = match db.expire_of(key) {
            Some(at) if at - now < 0 => continue,
            Some(at) => (at - now).max(1),
            None => 0,
        };
        let Some(entry) = db.get(key, now) else { continue };
        let payload = dump_value(&entry.value, compress);
        let ttl = ttl.to_string();
        let mut args: Vec<&[u8]> = vec![restore, key, ttl.as_bytes(), &payload];
        if o.replace {
            args.push(b"REPLACE");
        }
        resp::encode_command(&mut bytes, &args);
        sent.push(key);
    }
    let restores = sent.len();
    (Batch { bytes, auth: o.auth.is_some(), restores }, sent)
}

/// Delete the keys the target acknowledged; they replay as one DEL.
fn delete_acked(ctx: &mut Ctx, sent: &[&[u8]], acked: &[usize]) {
    if acked.is_empty() {
        return;
    }
    let mut del: Vec<&[u8]> = Vec::with_capacity(acked.len() + 1);
    del.push(b"DEL");
    for &i in acked {
        let key = sent[i];
        ctx.dbm().remove(key);
        ctx.modified(key);
        // Even for a key sent twice and gone already, as Redis does.
        ctx.notify(NOTIFY_GENERIC, "del", key);
        ctx.dirty(1);
        del.push(key);
    }
    if ctx.replicating() {
        ctx.replicate_as(&del);
    }
}
