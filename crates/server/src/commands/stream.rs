//! Stream commands that add, read by range, delete and trim: XADD XRANGE
//! XREVRANGE XLEN XDEL XTRIM XSETID, with Redis 7.0's argument rules, errors
//! and replication rewrites (generated IDs made explicit, `~` trims replayed
//! as exact ones). Also the helpers every stream file shares: ID arguments,
//! entry replies, lookups. XREAD/XREADGROUP are in `stream_read.rs`,
//! consumer groups in `stream_group.rs`, XINFO in `stream_info.rs`.
use crate::config::NOTIFY_STREAM;
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::numeric::parse_i64;
use crate::engine::stream::{AddError, Entry, IdSpec, NodeLimits, Stream, StreamId, Trim, Val};
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 7] = [
    spec!("xadd", -5, WRITE | DENYOOM | FAST, K1, xadd, "stream", "5.0.0", "Appends a new entry to a stream", ["write", "stream", "fast"]),
    spec!("xrange", -4, READONLY, K1, xrange, "stream", "5.0.0", "Return a range of elements in a stream, with IDs matching the specified IDs interval", ["read", "stream", "slow"]),
    spec!("xrevrange", -4, READONLY, K1, xrevrange, "stream", "5.0.0", "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", ["read", "stream", "slow"]),
    spec!("xlen", 2, READONLY | FAST, K1, xlen, "stream", "5.0.0", "Return the number of entries in a stream", ["read", "stream", "fast"]),
    spec!("xdel", -3, WRITE | FAST, K1, xdel, "stream", "5.0.0", "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", ["write", "stream", "fast"]),
    spec!("xtrim", -4, WRITE, K1, xtrim, "stream", "5.0.0", "Trims the stream to (approximately if '~' is passed) a certain size", ["write", "stream", "slow"]),
    spec!("xsetid", -3, WRITE | DENYOOM | FAST, K1, xsetid, "stream", "5.0.0", "An internal command for replicating stream values", ["write", "stream", "fast"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

// ------------------------------------------------------------ shared helpers

/// The AOF loader's client id: like a master, it is obeyed (trims are not
/// limited, as their arguments were made exact when written).
const AOF_CLIENT_ID: u64 = u64::MAX;

/// Redis's `mustObeyClient`: the AOF loader (and, later, a master).
pub(crate) fn must_obey(ctx: &Ctx) -> bool {
    ctx.srv.clients.get(ctx.cid).is_some_and(|c| c.id == AOF_CLIENT_ID)
}

pub(crate) fn limits(ctx: &Ctx) -> NodeLimits {
    let c = &ctx.srv.config;
    NodeLimits { max_bytes: c.stream_node_max_bytes as usize, max_entries: c.stream_node_max_entries as usize }
}

/// An ID as a bulk string.
pub(crate) fn reply_id(r: &mut Reply, id: StreamId) {
    let mut buf = [0u8; 41];
    r.bulk(id_text(id, &mut buf));
}

/// `<ms>-<seq>` written into `buf` (no allocation on the reply path).
pub(crate) fn id_text(id: StreamId, buf: &mut [u8; 41]) -> &[u8] {
    fn put(mut v: u64, buf: &mut [u8; 41], at: &mut usize) {
        loop {
            *at -= 1;
            buf[*at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
    }
    let mut at = buf.len();
    put(id.seq, buf, &mut at);
    at -= 1;
    buf[at] = b'-';
    put(id.ms, buf, &mut at);
    &buf[at..]
}

pub(crate) fn reply_val(r: &mut Reply, v: Val) {
    match v {
        Val::Bytes(b) => r.bulk(b),
        Val::Int(i) => r.bulk_int(i),
    }
}

/// One entry: `[id, [field, value, ...]]`.
pub(crate) fn reply_entry(r: &mut Reply, e: &Entry) {
    r.array(2);
    reply_id(r, e.id);
    r.array(e.nfields() * 2);
    for (f, v) in e.pairs() {
        reply_val(r, f);
        reply_val(r, v);
    }
}

/// Reply up to `count` (0 = all) entries of a range as an array.
pub(crate) fn reply_range(r: &mut Reply, s: &Stream, start: StreamId, end: StreamId, count: usize, rev: bool) -> usize {
    let mut body = Vec::new();
    let mut inner = Reply::new(&mut body, r.resp3());
    let mut n = 0;
    for e in s.range(start, end, rev) {
        reply_entry(&mut inner, &e);
        n += 1;
        if n == count {
            break;
        }
    }
    r.array(n);
    r.raw(&body);
    n
}

/// A name as Redis's `%s` prints it in an error: up to its first NUL.
pub(crate) fn c_str(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |nul| &b[..nul])
}

/// Redis's `addReplySubcommandSyntaxError` for XGROUP and XINFO, naming
/// the subcommand as typed (as `%.128s` prints it).
pub(crate) fn subcommand_syntax_error(r: &mut Reply, container: &str, argv: &Argv) {
    let sub = c_str(argv.get(1));
    let sub = &sub[..sub.len().min(128)];
    let msg = [b"ERR unknown subcommand or wrong number of arguments for '", sub, b"'. Try "].concat();
    r.error_bytes(&[msg.as_slice(), container.as_bytes(), b" HELP."].concat());
}

/// Redis's NOGROUP for XGROUP and XINFO CONSUMERS.
pub(crate) fn no_such_group(r: &mut Reply, key: &[u8], group: &[u8]) {
    let msg = [b"NOGROUP No such consumer group '", c_str(group), b"' for key name '", c_str(key), b"'"];
    r.error_bytes(&msg.concat());
}

/// Parse an ID argument, replying the error on failure.
pub(crate) fn id_arg(ctx: &mut Ctx, arg: &[u8], missing_seq: u64, strict: bool) -> Option<StreamId> {
    match StreamId::parse(arg, missing_seq, strict) {
        Ok(id) => Some(id),
        Err(e) => {
            ctx.r.error(e);
            None
        }
    }
}

/// Parse an integer argument, replying Redis's error on failure.
pub(crate) fn int_arg(ctx: &mut Ctx, arg: &[u8]) -> Option<i64> {
    let v = parse_i64(arg);
    if v.is_none() {
        ctx.not_integer();
    }
    v
}

/// Read lookup (counts a keyspace hit or miss); Err(()) after WRONGTYPE.
pub(crate) fn read_stream<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> Result<Option<(&'c mut Stream, &'c mut Reply<'a>)>, ()> {
    let Ctx { srv, r, db, now, .. } = ctx;
    let found = srv.keyspace.dbs[*db].get_stream(key, *now);
    match found {
        Ok(None) => srv.stats.key_miss(*db, key),
        _ => srv.stats.keyspace_hits += 1,
    }
    match found {
        Err(e) => {
            r.error(e.message());
            Err(())
        }
        Ok(s) => Ok(s.map(|s| (s, r))),
    }
}

/// Write lookup; Err(()) after WRONGTYPE.
pub(crate) fn write_stream<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
) -> Result<Option<(&'c mut Stream, &'c mut Reply<'a>)>, ()> {
    let now = ctx.now;
    let (db, r) = ctx.db_reply();
    match db.get_stream(key, now) {
        Err(e) => {
            r.error(e.message());
            Err(())
        }
        Ok(s) => Ok(s.map(|s| (s, r))),
    }
}

// ------------------------------------------------------------ XADD / XTRIM arguments

/// The options XADD and XTRIM share, and XADD's ID.
#[derive(Default)]
struct AddTrim {
    trim: Option<Trim>,
    approx: bool,
    limit: u64,
    /// Index of the MAXLEN/MINID threshold (rewritten for replication).
    threshold_at: usize,
    nomkstream: bool,
    /// XADD: the ID argument and its index.
    id: Option<IdSpec>,
    id_at: usize,
}

/// MAXLEN/MINID's optional `~` or `=` then threshold, from `i` (the
/// option's index); returns the threshold's index and whether `~` was given.
fn threshold_at(argv: &Argv, i: usize) -> (usize, bool) {
    let more = argv.len() - 1 - i;
    match argv.get(i + 1) {
        b"~" if more >= 2 => (i + 2, true),
        b"=" if more >= 2 => (i + 2, false),
        _ => (i + 1, false),
    }
}

/// Parse XADD's (`xadd`) or XTRIM's options, replying on error.
fn parse_add_trim(ctx: &mut Ctx, argv: &Argv, xadd: bool) -> Option<AddTrim> {
    const BOTH: &str = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
    let mut a = AddTrim::default();
    let mut limit_given = false;
    let mut i = 2;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        let opt = argv.get(i);
        if xadd && opt == b"*" {
            a.id = Some(IdSpec::Auto);
            a.id_at = i;
            break;
        } else if (opt.eq_ignore_ascii_case(b"maxlen") || opt.eq_ignore_ascii_case(b"minid")) && more > 0 {
            if a.trim.is_some() {
                ctx.r.error(BOTH);
                return None;
            }
            let (at, approx) = threshold_at(argv, i);
            a.approx = approx;
            a.trim = Some(if opt.eq_ignore_ascii_case(b"maxlen") {
                let n = int_arg(ctx, argv.get(at))?;
                if n < 0 {
                    ctx.r.error("ERR The MAXLEN argument must be >= 0.");
                    return None;
                }
                Trim::MaxLen(n as u64)
            } else {
                Trim::MinId(id_arg(ctx, argv.get(at), 0, true)?)
            });
            a.threshold_at = at;
            i = at;
        } else if opt.eq_ignore_ascii_case(b"limit") && more > 0 {
            let n = int_arg(ctx, argv.get(i + 1))?;
            if n < 0 {
                ctx.r.error("ERR The LIMIT argument must be >= 0.");
                return None;
            }
            a.limit = n as u64;
            limit_given = true;
            i += 1;
        } else if xadd && opt.eq_ignore_ascii_case(b"nomkstream") {
            a.nomkstream = true;
        } else if xadd {
            match StreamId::parse_spec(opt, 0, true, true) {
                Ok(spec) => a.id = Some(spec),
                Err(e) => {
                    ctx.r.error(e);
                    return None;
                }
            }
            a.id_at = i;
            break;
        } else {
            ctx.syntax_error();
            return None;
        }
        i += 1;
    }
    if xadd && a.id.is_none() {
        a.id_at = i;
    }
    finish_limit(ctx, a, limit_given, xadd)
}

/// The LIMIT rules, checked once every option is known.
fn finish_limit(ctx: &mut Ctx, mut a: AddTrim, limit_given: bool, xadd: bool) -> Option<AddTrim> {
    if a.limit > 0 && a.trim.is_none() {
        ctx.r.error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return None;
    }
    if !xadd && a.trim.is_none() {
        ctx.r.error("ERR syntax error, XTRIM must be called with a trimming strategy");
        return None;
    }
    if must_obey(ctx) {
        a.limit = 0;
    } else if limit_given {
        if !a.approx {
            ctx.r.error("ERR syntax error, LIMIT cannot be used without the special ~ option");
            return None;
        }
    } else if a.approx {
        // Redis caps an approximate trim's work at 100 nodes' worth.
        let per_node = ctx.srv.config.stream_node_max_entries;
        a.limit = match per_node.saturating_mul(100) {
            0 => 10_000,
            n => n.min(1_000_000),
        };
    } else {
        a.limit = 0;
    }
    Some(a)
}

/// Replay an approximate trim as the exact one it turned out to be: `=`
/// and the length (MAXLEN) or first ID (MINID) now in the stream.
fn exact_trim_args(s: &Stream, a: &AddTrim, args: &mut [Vec<u8>]) {
    args[a.threshold_at - 1] = b"=".to_vec();
    args[a.threshold_at] = match a.trim {
        Some(Trim::MaxLen(_)) => s.len().to_string().into_bytes(),
        _ => s.first_id_with_tombstones().unwrap_or(StreamId::MAX).to_bytes(),
    };
}

// ------------------------------------------------------------ XADD

fn xadd(ctx: &mut Ctx, argv: &Argv) {
    let Some(a) = parse_add_trim(ctx, argv, true) else { return };
    let fields_at = a.id_at + 1;
    if argv.len() < fields_at + 2 || (argv.len() - fields_at) % 2 == 1 {
        return ctx.r.error("ERR wrong number of arguments for 'xadd' command");
    }
    let spec = a.id.expect("an ID was parsed");
    if spec == IdSpec::Exact(StreamId::MIN) {
        return ctx.r.error("ERR The ID specified in XADD must be greater than 0-0");
    }
    let key = argv.get(1);
    let (now, lim, replicating) = (ctx.now, limits(ctx), ctx.replicating());
    let (db, r) = ctx.db_reply();
    let s = match db.get_stream(key, now) {
        Err(e) => return r.error(e.message()),
        Ok(None) if a.nomkstream => return r.null(),
        Ok(_) => db.stream_or_create(key, now).expect("type checked"),
    };
    if s.last_id == StreamId::MAX {
        return r.error("ERR The stream has exhausted the last possible ID, unable to add more items");
    }
    let pairs: Vec<&[u8]> = argv.iter_from(fields_at).collect();
    let id = match s.add(spec, &pairs, now, lim) {
        Ok(id) => id,
        Err(AddError::NotGreater) => {
            return r.error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
        }
        Err(AddError::TooLarge) => return r.error("ERR Elements are too large to be stored"),
    };
    reply_id(r, id);
    let trimmed = a.trim.map_or(0, |t| s.trim(t, a.approx, a.limit));
    let rewrite = replicating && (a.approx || !matches!(spec, IdSpec::Exact(_)));
    let args = rewrite.then(|| {
        let mut args: Vec<Vec<u8>> = argv.iter_from(0).map(<[u8]>::to_vec).collect();
        if a.approx {
            exact_trim_args(s, &a, &mut args);
        }
        args[a.id_at] = id.to_bytes();
        args
    });
    ctx.modified(key);
    ctx.notify(NOTIFY_STREAM, "xadd", key);
    ctx.dirty(1);
    if trimmed > 0 {
        ctx.notify(NOTIFY_STREAM, "xtrim", key);
    }
    if let Some(args) = args {
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        ctx.replicate_as(&refs);
    }
}

// ------------------------------------------------------------ XTRIM XDEL XLEN

fn xtrim(ctx: &mut Ctx, argv: &Argv) {
    let Some(a) = parse_add_trim(ctx, argv, false) else { return };
    let key = argv.get(1);
    let replicating = ctx.replicating();
    let Ok(found) = write_stream(ctx, key) else { return };
    let Some((s, r)) = found else { return ctx.r.int(0) };
    let deleted = s.trim(a.trim.expect("XTRIM has a strategy"), a.approx, a.limit);
    r.int(deleted as i64);
    if deleted == 0 {
        return;
    }
    let args = (replicating && a.approx).then(|| {
        let mut args: Vec<Vec<u8>> = argv.iter_from(0).map(<[u8]>::to_vec).collect();
        exact_trim_args(s, &a, &mut args);
        args
    });
    ctx.notify(NOTIFY_STREAM, "xtrim", key);
    ctx.modified(key);
    ctx.dirty(deleted);
    if let Some(args) = args {
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        ctx.replicate_as(&refs);
    }
}

fn xdel(ctx: &mut Ctx, argv: &Argv) {
    let key = argv.get(1);
    // Redis looks the key up before it parses the IDs.
    match write_stream(ctx, key) {
        Err(()) => return,
        Ok(None) => return ctx.r.int(0),
        Ok(Some(_)) => {}
    }
    let mut ids = Vec::with_capacity(argv.len() - 2);
    for arg in argv.iter_from(2) {
        let Some(id) = id_arg(ctx, arg, 0, true) else { return };
        ids.push(id);
    }
    let Ok(Some((s, r))) = write_stream(ctx, key) else { return };
    let deleted = s.delete(&ids);
    r.int(deleted as i64);
    if deleted > 0 {
        ctx.modified(key);
        ctx.notify(NOTIFY_STREAM, "xdel", key);
        ctx.dirty(deleted);
    }
}

fn xlen(ctx: &mut Ctx, argv: &Argv) {
    match read_stream(ctx, argv.get(1)) {
        Ok(Some((s, r))) => r.int(s.len() as i64),
        Ok(None) => ctx.r.int(0),
        Err(()) => {}
    }
}

// ------------------------------------------------------------ XRANGE

/// A range bound: `(` makes it exclusive (then `-`/`+` are refused).
pub(crate) fn bound_arg(ctx: &mut Ctx, arg: &[u8], missing_seq: u64) -> Option<(StreamId, bool)> {
    if arg.len() > 1 && arg[0] == b'(' {
        return id_arg(ctx, &arg[1..], missing_seq, true).map(|id| (id, true));
    }
    id_arg(ctx, arg, missing_seq, false).map(|id| (id, false))
}

/// XRANGE/XREVRANGE's interval, made inclusive; replies on error.
pub(crate) fn interval(ctx: &mut Ctx, start: &[u8], end: &[u8]) -> Option<(StreamId, StreamId)> {
    let (mut lo, ex) = bound_arg(ctx, start, 0)?;
    if ex {
        match lo.next() {
            Some(n) => lo = n,
            None => {
                ctx.r.error("ERR invalid start ID for the interval");
                return None;
            }
        }
    }
    let (mut hi, ex) = bound_arg(ctx, end, u64::MAX)?;
    if ex {
        match hi.prev() {
            Some(p) => hi = p,
            None => {
                ctx.r.error("ERR invalid end ID for the interval");
                return None;
            }
        }
    }
    Some((lo, hi))
}

fn range_generic(ctx: &mut Ctx, argv: &Argv, rev: bool) {
    let (a, b) = if rev { (argv.get(3), argv.get(2)) } else { (argv.get(2), argv.get(3)) };
    let Some((start, end)) = interval(ctx, a, b) else { return };
    let mut count: Option<i64> = None;
    let mut j = 4;
    while j < argv.len() {
        if argv.is(j, "count") && j + 1 < argv.len() {
            let Some(n) = int_arg(ctx, argv.get(j + 1)) else { return };
            count = Some(n.max(0));
            j += 2;
        } else {
            return ctx.syntax_error();
        }
    }
    match read_stream(ctx, argv.get(1)) {
        Err(()) => {}
        Ok(None) => ctx.r.array(0),
        Ok(Some((_, r))) if count == Some(0) => r.null_array(),
        Ok(Some((s, r))) => {
            reply_range(r, s, start, end, count.unwrap_or(0) as usize, rev);
        }
    }
}

fn xrange(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, false);
}

fn xrevrange(ctx: &mut Ctx, argv: &Argv) {
    range_generic(ctx, argv, true);
}

// ------------------------------------------------------------ XSETID

/// XSETID's optional ENTRIESADDED and MAXDELETEDID (which may not exceed
/// the new last ID).
fn setid_options(ctx: &mut Ctx, argv: &Argv, id: StreamId) -> Option<(Option<u64>, StreamId)> {
    let (mut added, mut max_del) = (None, StreamId::MIN);
    let mut i = 3;
    while i < argv.len() {
        let more = i + 1 < argv.len();
        if argv.is(i, "entriesadded") && more {
            let n = int_arg(ctx, argv.get(i + 1))?;
            if n < 0 {
                ctx.r.error("ERR entries_added must be positive");
                return None;
            }
            added = Some(n as u64);
        } else if argv.is(i, "maxdeletedid") && more {
            max_del = id_arg(ctx, argv.get(i + 1), 0, true)?;
            if id < max_del {
                ctx.r.error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return None;
            }
        } else {
            ctx.syntax_error();
            return None;
        }
        i += 2;
    }
    Some((added, max_del))
}

fn xsetid(ctx: &mut Ctx, argv: &Argv) {
    let key = argv.get(1);
    let Some(id) = id_arg(ctx, argv.get(2), 0, true) else { return };
    let Some((added, max_del)) = setid_options(ctx, argv, id) else { return };
    let s = match write_stream(ctx, key) {
        Err(()) => return,
        Ok(None) => return ctx.r.error("ERR no such key"),
        Ok(Some((s, _))) => s,
    };
    if !s.is_empty() {
        if s.last_live().is_some_and(|last| id < last) {
            return ctx.r.error("ERR The ID specified in XSETID is smaller than the target stream top item");
        }
        if added.is_some_and(|n| n < s.len()) {
            return ctx.r.error("ERR The entries_added specified in XSETID is smaller than the target stream length");
        }
    }
    s.last_id = id;
    if let Some(n) = added {
        s.entries_added = n;
    }
    if !max_del.is_zero() {
        s.max_deleted = max_del;
    }
    ctx.r.ok();
    ctx.modified(key);
    ctx.notify(NOTIFY_STREAM, "xsetid", key);
    ctx.dirty(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_text_formats_both_halves() {
        let mut buf = [0u8; 41];
        assert_eq!(id_text(StreamId::new(0, 0), &mut buf), b"0-0");
        assert_eq!(id_text(StreamId::new(1526919030474, 55), &mut buf), b"1526919030474-55");
        assert_eq!(id_text(StreamId::MAX, &mut buf), b"18446744073709551615-18446744073709551615");
    }
}
