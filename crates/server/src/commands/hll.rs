//! HyperLogLog commands: PFADD PFCOUNT PFMERGE over string values in
//! Redis's HLL layout (see `engine/hll.rs`). PFCOUNT of one key caches the
//! estimate in the header, which counts as a write, as in Redis.
use crate::config::NOTIFY_STRING;
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::hll::{self, HllError};
use crate::engine::hll_sparse;
use crate::engine::{Str, Value};
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 3] = [
    spec!("pfadd", -2, WRITE | DENYOOM | FAST, (1, 1, 1), pfadd, "hyperloglog", "2.8.9", "Adds the specified elements to the specified HyperLogLog.", ["write", "hyperloglog", "fast"]),
    spec!("pfcount", -2, READONLY | MAY_REPLICATE, (1, -1, 1), pfcount, "hyperloglog", "2.8.9", "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", ["read", "hyperloglog", "slow"]),
    spec!("pfmerge", -2, WRITE | DENYOOM, (1, -1, 1), pfmerge, "hyperloglog", "2.8.9", "Merge N different HyperLogLogs into a single one.", ["write", "hyperloglog", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

/// `hll-sparse-max-bytes`.
fn sparse_max(ctx: &Ctx) -> usize {
    ctx.srv.config.other.get("hll-sparse-max-bytes").and_then(|v| v.parse().ok()).unwrap_or(3000)
}

const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";

fn hll_error(e: HllError) -> &'static str {
    match e {
        HllError::NotHll => NOT_HLL,
        HllError::Corrupt => CORRUPT,
    }
}

/// The registers of `key` and whether it is dense: Ok(None) if missing.
fn load(ctx: &mut Ctx, key: &[u8]) -> Result<Option<(hll::Regs, bool)>, &'static str> {
    // A read lookup (counted, `keymiss` when absent), as Redis's.
    match super::string::read_str(ctx.srv, ctx.db, key, ctx.now) {
        Err(e) => Err(e.message()),
        Ok(None) => Ok(None),
        Ok(Some(s)) => {
            let mut scratch = Vec::new();
            let b = s.bytes(&mut scratch);
            hll::registers(b).map(|r| Some((r, hll::is_dense(b)))).map_err(hll_error)
        }
    }
}

fn pfadd(ctx: &mut Ctx, argv: &Argv) {
    let key = argv.get(1);
    let now = ctx.now;
    let created = match ctx.dbm().get_str(key, now) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => {
            ctx.dbm().set(key, Value::Str(Str::raw(hll_sparse::new_sparse())), None, false, now);
            true
        }
        Ok(Some(_)) => false,
    };
    let max = sparse_max(ctx);
    let Ok(Some(s)) = ctx.dbm().get_str(key, now) else { unreachable!("present") };
    let buf = s.make_raw();
    let changed = match hll::add(buf, &mut argv.iter_from(2), max) {
        Ok(c) => c,
        Err(e) => return ctx.r.error(hll_error(e)),
    };
    if created {
        // Redis marks the cache stale on every update, creation included.
        hll::invalidate(buf);
    }
    if changed || created {
        ctx.dirty(1);
        ctx.notify(NOTIFY_STRING, "pfadd", key);
    }
    ctx.r.int((changed || created) as i64);
}

fn pfcount(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 2 {
        let mut acc = vec![0u8; hll::REGISTERS];
        for k in argv.iter_from(1) {
            match load(ctx, k) {
                Err(e) => return ctx.r.error(e),
                Ok(None) => {}
                Ok(Some((regs, _))) => acc.iter_mut().zip(regs).for_each(|(a, r)| *a = (*a).max(r)),
            }
        }
        return ctx.r.int(hll::count(&acc) as i64);
    }
    let key = argv.get(1);
    let s = match super::string::read_str(ctx.srv, ctx.db, key, ctx.now) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => return ctx.r.int(0),
        Ok(Some(s)) => s,
    };
    let mut scratch = Vec::new();
    let bytes = s.bytes(&mut scratch);
    let regs = match hll::registers(bytes) {
        Ok(r) => r,
        Err(e) => return ctx.r.error(hll_error(e)),
    };
    if let Some(n) = hll::cached(bytes) {
        return ctx.r.int(n as i64);
    }
    let n = hll::count(&regs);
    hll::set_cache(s.make_raw(), n);
    ctx.dirty(1);
    ctx.r.int(n as i64);
}

fn pfmerge(ctx: &mut Ctx, argv: &Argv) {
    let mut acc = vec![0u8; hll::REGISTERS];
    let mut dense = false;
    for k in argv.iter_from(1) {
        match load(ctx, k) {
            Err(e) => return ctx.r.error(e),
            Ok(None) => {}
            Ok(Some((regs, d))) => {
                dense |= d;
                acc.iter_mut().zip(regs).for_each(|(a, r)| *a = (*a).max(r));
            }
        }
    }
    let dst = argv.get(1);
    let now = ctx.now;
    let max = sparse_max(ctx);
    if !matches!(ctx.dbm().get_str(dst, now), Ok(Some(_))) {
        ctx.dbm().set(dst, Value::Str(Str::raw(hll_sparse::new_sparse())), None, false, now);
    }
    let Ok(Some(s)) = ctx.dbm().get_str(dst, now) else { unreachable!("present") };
    if let Err(e) = hll::merge_into(s.make_raw(), &acc, dense, max) {
        return ctx.r.error(hll_error(e));
    }
    ctx.dirty(1);
    // A merge is a mass add: Redis names it "pfadd" too.
    ctx.notify(NOTIFY_STRING, "pfadd", dst);
    ctx.r.ok();
}
