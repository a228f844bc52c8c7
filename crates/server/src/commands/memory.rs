//! MEMORY USAGE|STATS|DOCTOR|MALLOC-STATS|PURGE|HELP.
//!
//! USAGE is exact to Volley's layout (see `engine::memsize`). The process
//! figures of STATS and DOCTOR are estimates until the memory-accounting
//! work lands: mimalloc keeps no running count of live bytes in a release
//! build, so "allocated", "active" and "resident" are all the resident set
//! (as INFO's `used_memory`; their ratios read 1), "peak" the resident
//! set's high-water mark, and "startup" the resident set
//! when the command table was built. The keyspace overheads are exact.
//! mimalloc's committed bytes are no substitute for "active": it commits
//! ahead of use, so they exceed the resident set on a fresh server.
use std::sync::OnceLock;

use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::memsize::{self, DEFAULT_SAMPLES};
use crate::engine::numeric::parse_i64;
use crate::engine::Db;
use crate::scripting::Scripting;
use crate::server::Server;
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);

// In the order Redis 7.0.15 lists them (COMMAND INFO, COMMAND DOCS).
#[rustfmt::skip]
static SUBS: [CommandSpec; 6] = [
    spec!("malloc-stats", 2, 0, NONE, memory_malloc_stats, "server", "4.0.0", "Show allocator internal stats", ["slow"]),
    spec!("purge", 2, 0, NONE, memory_purge, "server", "4.0.0", "Ask the allocator to release memory", ["slow"]),
    spec!("stats", 2, 0, NONE, memory_stats, "server", "4.0.0", "Show memory usage details", ["slow"]),
    spec!("usage", -3, READONLY, (2, 2, 1), memory_usage, "server", "4.0.0", "Estimate the memory usage of a key", ["read", "slow"]),
    spec!("help", 2, LOADING | STALE, NONE, memory_help, "server", "4.0.0", "Show helpful text about the different subcommands", ["slow"]),
    spec!("doctor", 2, 0, NONE, memory_doctor, "server", "4.0.0", "Outputs memory problems report", ["slow"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 1] = [
    CommandSpec { subcommands: &SUBS, ..spec!("memory", -2, 0, NONE, container, "server", "4.0.0", "A container for memory diagnostics commands", ["slow"]) },
];

/// Resident set when the command table was built, before any data.
static STARTUP_RSS: OnceLock<u64> = OnceLock::new();

pub fn register(r: &mut Registry) {
    STARTUP_RSS.get_or_init(crate::allocator::rss_bytes);
    r.add(&SPECS);
}

fn container(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.error("ERR unknown subcommand. Try MEMORY HELP.");
}

const HELP: &[&str] = &[
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
];

fn memory_help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help("MEMORY", HELP);
}

fn memory_usage(ctx: &mut Ctx, argv: &Argv) {
    let mut samples = DEFAULT_SAMPLES;
    let mut i = 3;
    // Options are checked before the key is looked up, as in Redis.
    while i < argv.len() {
        if !(argv.is(i, "samples") && i + 1 < argv.len()) {
            return ctx.syntax_error();
        }
        match parse_i64(argv.get(i + 1)) {
            None => return ctx.not_integer(),
            Some(n) if n < 0 => return ctx.syntax_error(),
            Some(0) => samples = usize::MAX,
            Some(n) => samples = n as usize,
        }
        i += 2;
    }
    match memsize::key_usage(&ctx.srv.keyspace.dbs[ctx.db], argv.get(2), samples) {
        Some(n) => ctx.r.int(n as i64),
        None => ctx.r.null(),
    }
}

extern "C" {
    fn mi_collect(force: bool);
    fn mi_process_info(
        elapsed_msecs: *mut usize,
        user_msecs: *mut usize,
        system_msecs: *mut usize,
        current_rss: *mut usize,
        peak_rss: *mut usize,
        current_commit: *mut usize,
        peak_commit: *mut usize,
        page_faults: *mut usize,
    );
    fn mi_stats_print_out(out: Option<extern "C" fn(*const libc::c_char, *mut libc::c_void)>, arg: *mut libc::c_void);
}

/// The process's peak resident set, as mimalloc tracks it.
fn peak_rss() -> u64 {
    let mut v = [0usize; 8];
    let [a, b, c, d, e, f, g, h] = &mut v;
    // SAFETY: mimalloc writes one usize through each pointer, all valid.
    unsafe { mi_process_info(a, b, c, d, e, f, g, h) };
    v[4] as u64
}

fn memory_purge(ctx: &mut Ctx, _argv: &Argv) {
    // SAFETY: no preconditions. Frees what this (the only data) thread's
    // heap caches and gives unused pages back to the OS.
    unsafe { mi_collect(true) };
    ctx.r.ok();
}

extern "C" fn append_text(msg: *const libc::c_char, arg: *mut libc::c_void) {
    // SAFETY: `arg` is the String passed by `memory_malloc_stats`, alive for
    // the call; `msg` is a NUL-terminated string from mimalloc.
    let (out, msg) = unsafe { (&mut *(arg as *mut String), std::ffi::CStr::from_ptr(msg)) };
    out.push_str(&msg.to_string_lossy());
}

fn memory_malloc_stats(ctx: &mut Ctx, _argv: &Argv) {
    let mut text = String::new();
    // SAFETY: `append_text` only appends to `text`, which outlives the call.
    unsafe { mi_stats_print_out(Some(append_text), &mut text as *mut String as *mut libc::c_void) };
    ctx.r.verbatim(text.as_bytes());
}

/// The figures MEMORY STATS and MEMORY DOCTOR are built from.
struct Overhead {
    peak: u64,
    total: u64,
    startup: u64,
    clients: u64,
    lua: u64,
    /// Per non-empty db: (index, main table bytes, expiry table bytes).
    dbs: Vec<(usize, u64, u64)>,
    keys: u64,
    rss: u64,
}

impl Overhead {
    fn measure(srv: &Server) -> Overhead {
        let rss = crate::allocator::rss_bytes();

        let clients = srv.clients.iter().map(|(_, c)| c.bufs.total as u64).sum();
        let lua = srv.scripting.get::<Scripting>().scripts_memory() as u64;
        let dbs = srv.keyspace.dbs.iter().enumerate().filter(|(_, db)| !db.is_empty()).map(table_bytes).collect();
        Overhead {
            peak: peak_rss().max(rss),
            total: rss,
            startup: *STARTUP_RSS.get_or_init(|| rss),
            clients,
            lua,
            dbs,
            keys: srv.keyspace.total_keys() as u64,
            rss,
        }
    }

    fn overhead_total(&self) -> u64 {
        self.startup + self.clients + self.lua + self.dbs.iter().map(|&(_, m, e)| m + e).sum::<u64>()
    }

    /// Bytes above the startup footprint (at least 1, a divisor).
    fn net(&self) -> u64 {
        self.total.saturating_sub(self.startup).max(1)
    }
}

/// A db's table overheads as MEMORY STATS lists them.
fn table_bytes((i, db): (usize, &Db)) -> (usize, u64, u64) {
    let [main, expires] = memsize::table_overhead(db);
    (i, main as u64, expires as u64)
}

fn ratio(a: u64, b: u64) -> f64 {
    // Redis computes these in single precision; the digits show it.
    (a as f32 / b.max(1) as f32) as f64
}

fn memory_stats(ctx: &mut Ctx, _argv: &Argv) {
    let m = Overhead::measure(ctx.srv);
    let overhead = m.overhead_total();
    let dataset = m.total.saturating_sub(overhead);
    let r = &mut ctx.r;
    r.map(27 + m.dbs.len());
    let head: [(&str, u64); 10] = [
        ("peak.allocated", m.peak),
        ("total.allocated", m.total),
        ("startup.allocated", m.startup),
        ("replication.backlog", 0),
        ("clients.slaves", 0),
        ("clients.normal", m.clients),
        ("cluster.links", 0),
        ("aof.buffer", 0),
        ("lua.caches", m.lua),
        ("functions.caches", 0),
    ];
    for (name, v) in head {
        r.bulk(name.as_bytes());
        r.int(v as i64);
    }
    for &(i, main, expires) in &m.dbs {
        r.bulk(format!("db.{i}").as_bytes());
        r.map(3);
        for (name, v) in [("overhead.hashtable.main", main), ("overhead.hashtable.expires", expires)] {
            r.bulk(name.as_bytes());
            r.int(v as i64);
        }
        r.bulk(b"overhead.hashtable.slot-to-keys");
        r.int(0);
    }
    let per_key = m.net().checked_div(m.keys).unwrap_or(0);
    let (active, resident) = (m.total, m.rss);
    let tail_ints: [(&str, u64); 3] =
        [("overhead.total", overhead), ("keys.count", m.keys), ("keys.bytes-per-key", per_key)];
    for (name, v) in tail_ints {
        r.bulk(name.as_bytes());
        r.int(v as i64);
    }
    r.bulk(b"dataset.bytes");
    r.int(dataset as i64);
    r.bulk(b"dataset.percentage");
    r.double((dataset as f32 * 100.0 / m.net() as f32) as f64);
    r.bulk(b"peak.percentage");
    r.double((m.total as f32 * 100.0 / m.peak.max(1) as f32) as f64);
    let alloc = [("allocator.allocated", m.total), ("allocator.active", active), ("allocator.resident", resident)];
    for (name, v) in alloc {
        r.bulk(name.as_bytes());
        r.int(v as i64);
    }
    let pairs = [
        ("allocator-fragmentation", active, m.total),
        ("allocator-rss", resident, active),
        ("rss-overhead", m.rss, resident),
    ];
    for (name, a, b) in pairs {
        r.bulk(format!("{name}.ratio").as_bytes());
        r.double(ratio(a, b));
        r.bulk(format!("{name}.bytes").as_bytes());
        r.int(a as i64 - b as i64);
    }
    r.bulk(b"fragmentation");
    r.double(ratio(m.rss, m.total));
    r.bulk(b"fragmentation.bytes");
    r.int(m.rss as i64 - m.total as i64);
}

fn memory_doctor(ctx: &mut Ctx, _argv: &Argv) {
    let m = Overhead::measure(ctx.srv);
    let report = doctor_report(&m, ctx.srv.clients.len() as u64, ctx.srv.scripting.get::<Scripting>().cached_scripts());
    ctx.r.verbatim(report.as_bytes());
}

const DOCTOR_EMPTY: &str = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n";
const DOCTOR_FINE: &str =
    "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n";
const DOCTOR_HEAD: &str = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
const DOCTOR_TAIL: &str = "I'm here to keep you safe, Sam. I want to help you.\n";
const PEAK: &str = " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n";
const CLIENT_BUF: &str = " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n";
const SCRIPTS: &str = " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n";

/// Redis's report, with the checks Volley's figures support: the ones
/// comparing allocated, active and resident bytes are left out while all
/// three are the resident set.
fn doctor_report(m: &Overhead, clients: u64, scripts: usize) -> String {
    if m.total < 5 << 20 {
        return DOCTOR_EMPTY.to_owned();
    }
    let big_peak = m.peak as f32 / m.total as f32 > 1.5;
    let client_buf = m.clients / clients.max(1) > 200 << 10;
    let many_scripts = scripts > 1000;
    let found = [(big_peak, PEAK), (client_buf, CLIENT_BUF), (many_scripts, SCRIPTS)];
    if !found.iter().any(|(hit, _)| *hit) {
        return DOCTOR_FINE.to_owned();
    }
    let mut s = DOCTOR_HEAD.to_owned();
    found.iter().filter(|(hit, _)| *hit).for_each(|(_, text)| s.push_str(text));
    s.push_str(DOCTOR_TAIL);
    s
}
