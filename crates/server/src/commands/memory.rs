//! MEMORY USAGE|STATS|DOCTOR|MALLOC-STATS|PURGE|HELP.
//!
//! USAGE is exact to Volley's layout (see `engine::memsize`). STATS and
//! DOCTOR read `server::memstats`: the bytes the allocator counts, their
//! peak, the empty server's footprint and the overheads. mimalloc has no
//! cheap page-level "active" figure (its committed bytes run ahead of use,
//! above the resident set on a fresh server), so the counted bytes stand
//! for "active" too and the resident set for "resident".
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::memsize::{self, DEFAULT_SAMPLES};
use crate::engine::numeric::parse_i64;
use crate::scripting::Scripting;
use crate::server::memstats::MemoryFigures;
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

pub fn register(r: &mut Registry) {
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
    fn mi_stats_print_out(out: Option<extern "C" fn(*const libc::c_char, *mut libc::c_void)>, arg: *mut libc::c_void);
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

fn ratio(a: u64, b: u64) -> f64 {
    // Redis computes these in single precision; the digits show it.
    (a as f32 / b.max(1) as f32) as f64
}

fn memory_stats(ctx: &mut Ctx, _argv: &Argv) {
    let m = super::info::memory_figures(ctx.srv);
    let r = &mut ctx.r;
    r.map(27 + m.dbs.len());
    let head: [(&str, u64); 10] = [
        ("peak.allocated", m.peak),
        ("total.allocated", m.used),
        ("startup.allocated", m.startup),
        ("replication.backlog", m.repl_backlog),
        ("clients.slaves", m.clients_replicas),
        ("clients.normal", m.clients_normal),
        ("cluster.links", 0),
        ("aof.buffer", m.aof_buffer),
        ("lua.caches", m.lua_caches),
        ("functions.caches", m.functions_caches),
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
    let tail_ints: [(&str, u64); 3] =
        [("overhead.total", m.overhead()), ("keys.count", m.keys), ("keys.bytes-per-key", per_key)];
    for (name, v) in tail_ints {
        r.bulk(name.as_bytes());
        r.int(v as i64);
    }
    r.bulk(b"dataset.bytes");
    r.int(m.dataset() as i64);
    r.bulk(b"dataset.percentage");
    r.double(m.dataset_perc());
    r.bulk(b"peak.percentage");
    r.double(m.peak_perc());
    // mimalloc has no cheap page-level "active" figure: the counted bytes
    // stand for it (see INFO's allocator_* fields).
    let (allocated, active, resident) = (m.used, m.used, m.rss);
    let alloc = [("allocator.allocated", allocated), ("allocator.active", active), ("allocator.resident", resident)];
    for (name, v) in alloc {
        r.bulk(name.as_bytes());
        r.int(v as i64);
    }
    let pairs = [
        ("allocator-fragmentation", active, allocated),
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
    r.double(ratio(m.rss, m.used));
    r.bulk(b"fragmentation.bytes");
    r.int(m.rss as i64 - m.used as i64);
}

fn memory_doctor(ctx: &mut Ctx, _argv: &Argv) {
    let m = super::info::memory_figures(ctx.srv);
    let report = doctor_report(&m, ctx.srv.clients.len() as u64, ctx.srv.scripting.get::<Scripting>().cached_scripts());
    ctx.r.verbatim(report.as_bytes());
}

const DOCTOR_EMPTY: &str = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n";
const DOCTOR_FINE: &str =
    "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n";
const DOCTOR_HEAD: &str = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
const DOCTOR_TAIL: &str = "I'm here to keep you safe, Sam. I want to help you.\n";
const PEAK: &str = " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n";
const HIGH_ALLOC_RSS: &str = " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n";
const CLIENT_BUF: &str = " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n";
const SCRIPTS: &str = " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n";

/// Redis's report. With mimalloc the counted bytes stand for both
/// "allocated" and "active" (see MEMORY STATS), so the external
/// fragmentation check never fires and the process-RSS one compares the
/// resident set with itself; the others are Redis's.
fn doctor_report(m: &MemoryFigures, clients: u64, scripts: usize) -> String {
    if m.used < 5 << 20 {
        return DOCTOR_EMPTY.to_owned();
    }
    let big_peak = m.peak as f32 / m.used as f32 > 1.5;
    let frag = m.rss as f32 / m.used.max(1) as f32;
    let frag_bytes = m.rss.saturating_sub(m.used);
    let high_frag = frag > 1.4 && frag_bytes > 10 << 20;
    let high_alloc_rss = frag > 1.1 && frag_bytes > 10 << 20;
    let client_buf = m.clients_normal / clients.max(1) > 200 << 10;
    let many_scripts = scripts > 1000;
    let high_frag_text = format!(" * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"{}\".\n\n", crate::allocator::name());
    let found = [
        (big_peak, PEAK),
        (high_frag, high_frag_text.as_str()),
        (high_alloc_rss, HIGH_ALLOC_RSS),
        (client_buf, CLIENT_BUF),
        (many_scripts, SCRIPTS),
    ];
    if !found.iter().any(|(hit, _)| *hit) {
        return DOCTOR_FINE.to_owned();
    }
    let mut s = DOCTOR_HEAD.to_owned();
    found.iter().filter(|(hit, _)| *hit).for_each(|(_, text)| s.push_str(text));
    s.push_str(DOCTOR_TAIL);
    s
}
