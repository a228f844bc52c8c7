//! DUMP, RESTORE and RESTORE-ASKING: a key's value as Redis's serialized
//! payload and back. The payload format is persistence's (`dump_value`,
//! `restore_value`); this file owns the options, the checks in Redis's order,
//! the key's expiry and access time, and what the AOF replays.
use crate::config::NOTIFY_GENERIC;
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::db::Record;
use crate::engine::numeric::parse_i64;
use crate::persistence::{dump_value, restore_value, DumpError};
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 3] = [
    spec!("dump", 2, READONLY, K1, dump, "generic", "2.6.0", "Return a serialized version of the value stored at the specified key.", ["keyspace", "read", "slow"]),
    spec!("restore", -4, WRITE | DENYOOM, K1, restore, "generic", "2.6.0", "Create a key using the provided serialized value, previously obtained using DUMP.", ["keyspace", "write", "slow", "dangerous"]),
    spec!("restore-asking", -4, WRITE | DENYOOM | ASKING, K1, restore, "server", "3.0.0", "An internal command for migrating keys in a cluster", ["keyspace", "write", "slow", "dangerous"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

fn dump(ctx: &mut Ctx, argv: &Argv) {
    let (key, now, compress) = (argv.get(1), ctx.now, ctx.srv.config.rdbcompression);
    let payload = ctx.dbm().get(key, now).map(|e| dump_value(&e.value, compress));
    let stats = &mut ctx.srv.stats;
    match payload {
        Some(p) => {
            stats.keyspace_hits += 1;
            ctx.r.bulk(&p);
        }
        None => {
            stats.key_miss(ctx.db, key);
            ctx.r.null();
        }
    }
}

/// RESTORE's options after the payload.
#[derive(Default)]
struct Options {
    replace: bool,
    absttl: bool,
    idle_secs: Option<i64>,
    freq: Option<i64>,
}

/// Parse the options as Redis does: IDLETIME and FREQ exclude each other
/// (the second one is a syntax error), each needs its value.
fn parse_options(argv: &Argv) -> Result<Options, &'static str> {
    let mut o = Options::default();
    let mut j = 4;
    while j < argv.len() {
        let has_value = j + 1 < argv.len();
        if argv.is(j, "replace") {
            o.replace = true;
        } else if argv.is(j, "absttl") {
            o.absttl = true;
        } else if argv.is(j, "idletime") && has_value && o.freq.is_none() {
            let idle = parse_i64(argv.get(j + 1)).ok_or("ERR value is not an integer or out of range")?;
            if idle < 0 {
                return Err("ERR Invalid IDLETIME value, must be >= 0");
            }
            o.idle_secs = Some(idle);
            j += 1;
        } else if argv.is(j, "freq") && has_value && o.idle_secs.is_none() {
            let freq = parse_i64(argv.get(j + 1)).ok_or("ERR value is not an integer or out of range")?;
            if !(0..=255).contains(&freq) {
                return Err("ERR Invalid FREQ value, must be >= 0 and <= 255");
            }
            o.freq = Some(freq);
            j += 1;
        } else {
            return Err("ERR syntax error");
        }
        j += 1;
    }
    Ok(o)
}

/// The key's access data: under an LFU policy its LFU word with FREQ as
/// the counter (IDLETIME ignored, as Redis), else its access clock
/// (seconds) back-dated by IDLETIME. An idle time beyond what the 31-bit
/// clock can express is capped rather than wrapped into the future.
fn access_clock(now_ms: i64, opts: &Options, lfu: bool) -> u32 {
    use crate::engine::evict::{lfu_word, LFU_INIT_VAL};
    const MAX_IDLE: i64 = 1 << 30;
    if lfu {
        let freq = opts.freq.map_or(LFU_INIT_VAL, |f| f.clamp(0, 255) as u8);
        return lfu_word(now_ms, freq);
    }
    let now = (now_ms / 1000) as u32;
    match opts.idle_secs {
        Some(idle) => now.wrapping_sub(idle.min(MAX_IDLE) as u32),
        None => now,
    }
}

fn restore(ctx: &mut Ctx, argv: &Argv) {
    let opts = match parse_options(argv) {
        Ok(o) => o,
        Err(msg) => return ctx.r.error(msg),
    };
    let (key, now) = (argv.get(1), ctx.now);
    if !opts.replace && ctx.dbm().get(key, now).is_some() {
        return ctx.r.error("BUSYKEY Target key name already exists.");
    }
    let Some(ttl) = parse_i64(argv.get(2)) else { return ctx.not_integer() };
    if ttl < 0 {
        return ctx.r.error("ERR Invalid TTL value, must be >= 0");
    }
    let value = match restore_value(argv.get(3), &ctx.srv.config) {
        Ok(v) => v,
        Err(DumpError::Footer) => return ctx.r.error("ERR DUMP payload version or checksum are wrong"),
        Err(DumpError::Format) => return ctx.r.error("ERR Bad data format"),
    };
    let deleted = opts.replace && ctx.dbm().delete(key);
    let expire_at = match ttl {
        0 => None,
        _ if opts.absttl => Some(ttl),
        _ => Some(ttl.saturating_add(now)),
    };
    // Kept as it is while expiry is off (AOF replay, our primary's stream).
    if expire_at.is_some_and(|at| at <= now) && !ctx.dbm().expiry_off {
        // Born expired: the key is gone, and only a deletion happened.
        if deleted {
            ctx.replicate_as(&[b"DEL", key]);
            ctx.modified(key);
            ctx.dirty(1);
            ctx.notify(NOTIFY_GENERIC, "del", key);
        }
        return ctx.r.ok();
    }
    let lfu = ctx.srv.config.maxmemory_policy.to_ascii_lowercase().contains("lfu");
    let access = access_clock(now, &opts, lfu);
    ctx.dbm().put(key, Record { value, expire_at, access });
    if let (Some(at), false) = (expire_at, opts.absttl) {
        replicate_absolute(ctx, argv, at);
    }
    ctx.modified(key);
    ctx.notify(NOTIFY_GENERIC, "restore", key);
    ctx.dirty(1);
    ctx.r.ok();
}

/// A relative TTL replays as the absolute time it produced (argv with the
/// TTL replaced and ABSTTL appended), so a later replay yields the same
/// expiry.
fn replicate_absolute(ctx: &mut Ctx, argv: &Argv, at: i64) {
    if !ctx.replicating() {
        return;
    }
    let at = at.to_string();
    let mut args: Vec<&[u8]> = argv.iter_from(0).collect();
    args[2] = at.as_bytes();
    args.push(b"ABSTTL");
    ctx.replicate_as(&args);
}
