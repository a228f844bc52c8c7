//! LCS (Redis 7.0; the older STRALGO LCS is gone in 7.0): the longest
//! common subsequence of two string keys, its length (LEN), or its
//! matching runs (IDX, with MINMATCHLEN and WITHMATCHLEN).
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::lcs::{self, LcsError};
use crate::engine::numeric::parse_i64;
use crate::engine::Value;
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    spec!("lcs", -3, READONLY, (1, 2, 1), lcs_cmd, "string", "7.0.0", "Find longest common substring", ["read", "string", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

#[derive(Default)]
struct Opts {
    len: bool,
    idx: bool,
    with_len: bool,
    min: u64,
}

/// Parse the options after the keys; on error the reply is written.
fn parse(ctx: &mut Ctx, argv: &Argv) -> Option<Opts> {
    let mut o = Opts::default();
    let mut j = 3;
    while j < argv.len() {
        if argv.is(j, "idx") {
            o.idx = true;
        } else if argv.is(j, "len") {
            o.len = true;
        } else if argv.is(j, "withmatchlen") {
            o.with_len = true;
        } else if argv.is(j, "minmatchlen") && j + 1 < argv.len() {
            let Some(n) = parse_i64(argv.get(j + 1)) else {
                ctx.not_integer();
                return None;
            };
            o.min = n.max(0) as u64;
            j += 1;
        } else {
            ctx.syntax_error();
            return None;
        }
        j += 1;
    }
    if o.len && o.idx {
        ctx.r.error("ERR If you want both the length and indexes, please just use IDX.");
        return None;
    }
    Some(o)
}

/// A key's string for LCS (empty when missing); None if it holds another type.
fn read_string(ctx: &mut Ctx, key: &[u8]) -> Option<Vec<u8>> {
    let now = ctx.now;
    let found = ctx.srv.keyspace.dbs[ctx.db].get(key, now).map(|e| match &e.value {
        Value::Str(s) => Some(s.bytes(&mut Vec::new()).to_vec()),
        _ => None,
    });
    let stats = &mut ctx.srv.stats;
    match found {
        None => {
            stats.key_miss(ctx.db, key);
            Some(Vec::new())
        }
        Some(s) => {
            stats.keyspace_hits += 1;
            s
        }
    }
}

fn lcs_cmd(ctx: &mut Ctx, argv: &Argv) {
    // Both keys are looked up (and counted) before either is checked.
    let a = read_string(ctx, argv.get(1));
    let b = read_string(ctx, argv.get(2));
    let (Some(a), Some(b)) = (a, b) else {
        return ctx.r.error("ERR The specified keys must contain string values");
    };
    let Some(o) = parse(ctx, argv) else { return };
    let limit = ctx.srv.config.proto_max_bulk_len;
    let found = if o.len {
        lcs::lcs_len(&a, &b, limit).map(|n| lcs::Lcs { len: n, ..Default::default() })
    } else {
        lcs::lcs(&a, &b, o.min, limit)
    };
    let found = match found {
        Ok(f) => f,
        Err(LcsError::TooLong) => return ctx.r.error("ERR String too long for LCS"),
        Err(LcsError::OverLimit) => {
            return ctx.r.error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
        }
        Err(LcsError::NoMemory) => {
            return ctx.r.error("ERR Insufficient memory, failed allocating transient memory for LCS")
        }
    };
    if o.idx {
        ctx.r.map(2);
        ctx.r.bulk(b"matches");
        ctx.r.array(found.runs.len());
        for run in &found.runs {
            ctx.r.array(2 + o.with_len as usize);
            for (start, end) in [run.a, run.b] {
                ctx.r.array(2);
                ctx.r.int(start as i64);
                ctx.r.int(end as i64);
            }
            if o.with_len {
                ctx.r.int(run.match_len() as i64);
            }
        }
        ctx.r.bulk(b"len");
        ctx.r.int(found.len as i64);
    } else if o.len {
        ctx.r.int(found.len as i64);
    } else {
        ctx.r.bulk(&found.text);
    }
}
