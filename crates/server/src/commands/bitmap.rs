//! Bitmap commands: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO.
//! Thin wrappers: key lookup, argument order and replies live here; the bit
//! semantics live in `engine::bitmap` and `engine::bitfield`.
use super::string::{expire_stale, read_str};
use crate::config::{NOTIFY_GENERIC, NOTIFY_STRING};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::bitfield::{self, BitfieldOp};
use crate::engine::bitmap::{self, BitError, BitOp, Unit, ERR_BIT_OFFSET, ERR_SYNTAX};
use crate::engine::numeric::parse_i64;
use crate::engine::{Str, Value};
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 7] = [
    spec!("setbit", 4, WRITE | DENYOOM, K1, setbit, "bitmap", "2.2.0", "Sets or clears the bit at offset in the string value stored at key", ["write", "bitmap", "slow"]),
    spec!("getbit", 3, READONLY | FAST, K1, getbit, "bitmap", "2.2.0", "Returns the bit value at offset in the string value stored at key", ["read", "bitmap", "fast"]),
    spec!("bitcount", -2, READONLY, K1, bitcount, "bitmap", "2.6.0", "Count set bits in a string", ["read", "bitmap", "slow"]),
    spec!("bitpos", -3, READONLY, K1, bitpos, "bitmap", "2.8.7", "Find first bit set or clear in a string", ["read", "bitmap", "slow"]),
    spec!("bitop", -4, WRITE | DENYOOM, (2, -1, 1), bitop, "bitmap", "2.6.0", "Perform bitwise operations between strings", ["write", "bitmap", "slow"]),
    spec!("bitfield", -2, WRITE | DENYOOM, K1, bitfield, "bitmap", "3.2.0", "Perform arbitrary bitfield integer operations on strings", ["write", "bitmap", "slow"]),
    spec!("bitfield_ro", -2, READONLY | FAST, K1, bitfield_ro, "bitmap", "6.0.0", "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", ["read", "bitmap", "fast"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

/// A SETBIT/GETBIT offset, also bounded by the configured
/// `proto-max-bulk-len` as Redis does (the engine bounds it by 512 MB).
fn bit_offset(ctx: &Ctx, arg: &[u8]) -> Result<u64, BitError> {
    let off = bitmap::parse_bit_offset(arg)?;
    if (off >> 3) >= ctx.srv.config.proto_max_bulk_len {
        return Err(ERR_BIT_OFFSET);
    }
    Ok(off)
}

fn setbit(ctx: &mut Ctx, argv: &Argv) {
    let parsed = bit_offset(ctx, argv.get(2)).and_then(|o| Ok((o, bitmap::parse_setbit_value(argv.get(3))?)));
    let (offset, on) = match parsed {
        Ok(v) => v,
        Err(e) => return ctx.r.error(e.0),
    };
    let (key, now) = (argv.get(1), ctx.now);
    let (db, r) = ctx.db_reply();
    let (old, changed) = match db.get_str(key, now) {
        Err(e) => return r.error(e.message()),
        Ok(Some(s)) => {
            let buf = s.make_raw();
            let len = buf.len();
            let old = bitmap::setbit(buf, offset, on);
            (old, buf.len() != len || (old != 0) != on)
        }
        Ok(None) => {
            let mut buf = Vec::new();
            let old = bitmap::setbit(&mut buf, offset, on);
            db.set(key, Value::Str(Str::raw(buf)), None, false, now);
            (old, true)
        }
    };
    r.int(i64::from(old));
    // As Redis 7.0: setting a bit to the value it has, within the string,
    // is no change (WATCH stays valid, nothing is propagated).
    if changed {
        ctx.dirty(1);
        ctx.notify(NOTIFY_STRING, "setbit", key);
    }
}

fn getbit(ctx: &mut Ctx, argv: &Argv) {
    let offset = match bit_offset(ctx, argv.get(2)) {
        Ok(o) => o,
        Err(e) => return ctx.r.error(e.0),
    };
    match read_str(ctx.srv, ctx.db, argv.get(1), ctx.now) {
        Ok(Some(s)) => ctx.r.int(i64::from(bitmap::getbit(s.bytes(&mut Vec::new()), offset))),
        Ok(None) => ctx.r.int(0),
        Err(e) => ctx.r.error(e.message()),
    }
}

/// An integer range argument, or `ERR value is not an integer or out of range`.
fn int_arg(arg: &[u8]) -> Result<i64, BitError> {
    parse_i64(arg).ok_or(BitError("ERR value is not an integer or out of range"))
}

/// BITCOUNT's optional `start end [BYTE|BIT]`; an inverted negative range
/// becomes an empty one, whatever the unit word says.
fn bitcount_range(argv: &Argv) -> Result<Option<(i64, i64, Unit)>, BitError> {
    match argv.len() {
        2 => Ok(None),
        4 | 5 => {
            let (start, end) = (int_arg(argv.get(2))?, int_arg(argv.get(3))?);
            if start < 0 && end < 0 && start > end {
                // Redis 7.0 replies 0 here before it looks at the unit.
                return Ok(Some((1, 0, Unit::Byte)));
            }
            let unit = if argv.len() == 5 { Unit::parse(argv.get(4))? } else { Unit::Byte };
            Ok(Some((start, end, unit)))
        }
        _ => Err(ERR_SYNTAX),
    }
}

fn bitcount(ctx: &mut Ctx, argv: &Argv) {
    // Redis 7.0 looks the key up before parsing the range: a missing key
    // replies 0 whatever the other arguments are.
    let s = match read_str(ctx.srv, ctx.db, argv.get(1), ctx.now) {
        Ok(Some(s)) => s,
        Ok(None) => return ctx.r.int(0),
        Err(e) => return ctx.r.error(e.message()),
    };
    match bitcount_range(argv) {
        Ok(range) => ctx.r.int(bitmap::bitcount(s.bytes(&mut Vec::new()), range) as i64),
        Err(e) => ctx.r.error(e.0),
    }
}

/// BITPOS's optional `start [end [BYTE|BIT]]` (the unit is parsed before
/// the end, as Redis does, so its syntax error comes first).
fn bitpos_range(argv: &Argv) -> Result<Option<(i64, Option<i64>, Unit)>, BitError> {
    match argv.len() {
        3 => Ok(None),
        4..=6 => {
            let start = int_arg(argv.get(3))?;
            let unit = if argv.len() == 6 { Unit::parse(argv.get(5))? } else { Unit::Byte };
            let end = if argv.len() >= 5 { Some(int_arg(argv.get(4))?) } else { None };
            Ok(Some((start, end, unit)))
        }
        _ => Err(ERR_SYNTAX),
    }
}

fn bitpos(ctx: &mut Ctx, argv: &Argv) {
    let bit = match int_arg(argv.get(2)).and_then(bitmap::check_bitpos_bit) {
        Ok(b) => b,
        Err(e) => return ctx.r.error(e.0),
    };
    let s = match read_str(ctx.srv, ctx.db, argv.get(1), ctx.now) {
        Ok(Some(s)) => s,
        Ok(None) => return ctx.r.int(bitmap::bitpos_missing(bit)),
        Err(e) => return ctx.r.error(e.message()),
    };
    match bitpos_range(argv) {
        Ok(range) => ctx.r.int(bitmap::bitpos(s.bytes(&mut Vec::new()), bit, range)),
        Err(e) => ctx.r.error(e.0),
    }
}

fn bitop(ctx: &mut Ctx, argv: &Argv) {
    let op = match BitOp::parse(argv.get(1)).and_then(|op| op.check_sources(argv.len() - 3).map(|_| op)) {
        Ok(op) => op,
        Err(e) => return ctx.r.error(e.0),
    };
    let mut srcs: Vec<Vec<u8>> = Vec::with_capacity(argv.len() - 3);
    for key in argv.iter_from(3) {
        match read_str(ctx.srv, ctx.db, key, ctx.now) {
            Ok(Some(s)) => srcs.push(s.bytes(&mut Vec::new()).to_vec()),
            Ok(None) => srcs.push(Vec::new()),
            Err(e) => return ctx.r.error(e.message()),
        }
    }
    let refs: Vec<&[u8]> = srcs.iter().map(Vec::as_slice).collect();
    let out = bitmap::bitop(op, &refs);
    let (dest, now, len) = (argv.get(2), ctx.now, out.len());
    let db = ctx.dbm();
    // An empty result deletes whatever `dest` holds, stale or not, as
    // Redis's `dbDelete` does.
    let event = if out.is_empty() {
        db.delete(dest).then_some((NOTIFY_GENERIC, "del"))
    } else {
        expire_stale(db, dest, now);
        db.set(dest, Value::Str(Str::raw(out)), None, false, now);
        Some((NOTIFY_STRING, "set"))
    };
    if let Some((class, name)) = event {
        ctx.dirty(1);
        ctx.notify(class, name, dest);
    }
    ctx.r.int(len as i64);
}

/// Run parsed BITFIELD ops: read-only ops use a read lookup and never
/// create the key; any SET/INCRBY creates and grows it first, like Redis.
fn run_bitfield(ctx: &mut Ctx, key: &[u8], ops: &[BitfieldOp]) -> Result<Vec<Option<i64>>, &'static str> {
    let now = ctx.now;
    if !bitfield::bitfield_writes(ops) {
        return match read_str(ctx.srv, ctx.db, key, now) {
            Ok(Some(Str::Raw(v))) => Ok(bitfield::exec_bitfield(v, ops)),
            Ok(Some(s)) => Ok(bitfield::exec_bitfield(&mut s.bytes(&mut Vec::new()).to_vec(), ops)),
            Ok(None) => Ok(bitfield::exec_bitfield(&mut Vec::new(), ops)),
            Err(e) => Err(e.message()),
        };
    }
    let db = ctx.dbm();
    let (res, changes) = match db.get_str(key, now) {
        Err(e) => return Err(e.message()),
        Ok(Some(s)) => bitfield::exec_bitfield_counted(s.make_raw(), ops),
        Ok(None) => {
            let mut buf = Vec::new();
            let done = bitfield::exec_bitfield_counted(&mut buf, ops);
            db.set(key, Value::Str(Str::raw(buf)), None, false, now);
            done
        }
    };
    // As Redis 7.0: only writes that changed a value (or created or grew
    // the string) count; none at all leaves WATCH valid and replays nothing.
    ctx.dirty(changes);
    if changes > 0 {
        ctx.notify(NOTIFY_STRING, "setbit", key);
    }
    Ok(res)
}

fn bitfield_generic(ctx: &mut Ctx, argv: &Argv, readonly: bool) {
    let args: Vec<&[u8]> = argv.iter_from(2).collect();
    let ops = match bitfield::parse_bitfield(&args, readonly) {
        Ok(ops) => ops,
        Err(e) => return ctx.r.error(e.0),
    };
    match run_bitfield(ctx, argv.get(1), &ops) {
        Ok(res) => {
            ctx.r.array(res.len());
            for v in res {
                match v {
                    Some(i) => ctx.r.int(i),
                    None => ctx.r.null(),
                }
            }
        }
        Err(msg) => ctx.r.error(msg),
    }
}

fn bitfield(ctx: &mut Ctx, argv: &Argv) {
    bitfield_generic(ctx, argv, false);
}

fn bitfield_ro(ctx: &mut Ctx, argv: &Argv) {
    bitfield_generic(ctx, argv, true);
}
