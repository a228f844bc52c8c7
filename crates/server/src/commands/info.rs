//! INFO: Redis 7.0's sections, field names and layout (`# Section` headers,
//! `name:value` lines ending in `\r\n`, a blank line between sections).
//! Persistence and replication fields are static defaults until those
//! subsystems exist.
use std::fmt::Write;

use crate::dispatch::{Argv, Ctx, Registry};
use crate::scripting::Scripting;
use crate::server::memstats::MemoryFigures;
use crate::server::Server;

use super::conn::REDIS_VERSION;

/// Every section, in output order.
const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
];
/// Sections of plain `INFO` / `INFO default`.
const DEFAULT: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];

pub fn info(ctx: &mut Ctx, argv: &Argv) {
    let mut wanted: Vec<&str> = Vec::new();
    if argv.len() == 1 {
        wanted.extend(DEFAULT);
    }
    for arg in argv.iter_from(1) {
        let arg = String::from_utf8_lossy(arg).to_ascii_lowercase();
        match arg.as_str() {
            "default" => wanted.extend(DEFAULT),
            "all" | "everything" => wanted.extend(SECTIONS),
            other => wanted.extend(SECTIONS.iter().filter(|s| **s == other)),
        }
    }
    let text = render(ctx.srv, ctx.reg, &wanted);
    ctx.r.verbatim(text.as_bytes());
}

/// The INFO text for the given section names (order and repeats ignored).
pub fn render(srv: &Server, reg: &Registry, wanted: &[&str]) -> String {
    let mut out = String::new();
    for name in SECTIONS.iter().filter(|s| wanted.contains(s)) {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        let mut title = name.to_string();
        title[..1].make_ascii_uppercase();
        if *name == "cpu" {
            title = "CPU".into();
        }
        out.push_str(&format!("# {title}\r\n"));
        let mut s = Section(&mut out);
        match *name {
            "server" => server(srv, &mut s),
            "clients" => clients(srv, &mut s),
            "memory" => memory(srv, &mut s),
            "persistence" => persistence(srv, &mut s),
            "stats" => stats(srv, &mut s),
            "replication" => replication(srv, &mut s),
            "cpu" => cpu(&mut s),
            "commandstats" => commandstats(srv, reg, &mut s),
            "latencystats" => latencystats(srv, reg, &mut s),
            "errorstats" => {
                for (code, n) in &srv.stats.errors_by_code {
                    s.field(&format!("errorstat_{code}"), format!("count={n}"));
                }
            }
            "cluster" => s.field("cluster_enabled", 0),
            "keyspace" => keyspace(srv, &mut s),
            _ => {}
        }
    }
    out
}

/// Appends `name:value\r\n` lines.
struct Section<'a>(&'a mut String);

impl Section<'_> {
    fn field(&mut self, name: &str, value: impl std::fmt::Display) {
        let _ = write!(self.0, "{name}:{value}\r\n");
    }
    /// Several fields that are always zero here.
    fn zeros(&mut self, names: &[&str]) {
        for n in names {
            self.field(n, 0);
        }
    }
}

fn server(srv: &Server, s: &mut Section) {
    let uptime = srv.started.elapsed().as_secs();
    let now_us = crate::server::unix_ms() * 1000;
    s.field("redis_version", REDIS_VERSION);
    s.field("redis_git_sha1", "00000000");
    s.field("redis_git_dirty", 0);
    s.field("redis_build_id", "0");
    s.field("volley_version", env!("CARGO_PKG_VERSION"));
    s.field("redis_mode", "standalone");
    s.field("os", os_name());
    s.field("arch_bits", usize::BITS);
    s.field("monotonic_clock", "POSIX clock_gettime");
    s.field("multiplexing_api", "epoll");
    s.field("atomicvar_api", "c11-builtin");
    s.field("gcc_version", "0.0.0");
    s.field("process_id", std::process::id());
    s.field("process_supervised", "no");
    s.field("run_id", &srv.run_id);
    s.field("tcp_port", srv.port);
    s.field("server_time_usec", now_us);
    s.field("uptime_in_seconds", uptime);
    s.field("uptime_in_days", uptime / 86400);
    s.field("hz", srv.config.hz);
    s.field("configured_hz", srv.config.hz);
    s.field("lru_clock", (now_us / 1_000_000) & ((1 << 24) - 1));
    s.field("executable", &srv.executable);
    s.field("config_file", &srv.config_file);
    s.field("io_threads_active", 0);
}

/// `Linux 6.1.0 x86_64`, from uname(2).
fn os_name() -> String {
    // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return std::env::consts::OS.to_string();
    }
    let text = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!("{} {} {}", text(&u.sysname), text(&u.release), text(&u.machine))
}

fn clients(srv: &Server, s: &mut Section) {
    let max_in = srv.clients.iter().map(|(_, c)| c.bufs.qbuf + c.bufs.qbuf_free).max().unwrap_or(0);
    let max_out = srv.clients.iter().map(|(_, c)| c.bufs.pending_out).max().unwrap_or(0);
    s.field("connected_clients", srv.clients.len());
    s.field("cluster_connections", 0);
    s.field("maxclients", srv.config.maxclients);
    s.field("client_recent_max_input_buffer", max_in);
    s.field("client_recent_max_output_buffer", max_out);
    s.field("blocked_clients", srv.blocking.count());
    s.field("tracking_clients", srv.tracking.client_count());
    s.field("clients_in_timeout_table", 0);
}

/// Bytes as Redis prints them for humans: `512B`, `894.95K`, `1.50M`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return format!("{n}B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2}{}", UNITS[unit])
}

/// Memory figures as the allocator counts them (see `crate::allocator`
/// and `server::memstats`).
pub(super) fn memory_figures(srv: &Server) -> MemoryFigures {
    let aof = crate::persistence::aof_buffer_bytes(srv);
    let scripting = srv.scripting.get::<Scripting>();
    let (lua_caches, functions_caches) = (scripting.scripts_memory() as u64, scripting.functions.code_bytes() as u64);
    let mut m = srv.memory_figures(aof, lua_caches, functions_caches);
    // The replicas' output is their share of the replication buffer.
    let [total, backlog, replicas, not_counted] = crate::replication::buffer_memory(srv);
    m.repl_buffers = total as u64;
    m.repl_backlog = backlog as u64;
    m.clients_replicas = replicas as u64;
    m.repl_not_counted = not_counted as u64;
    m
}

fn memory(srv: &Server, s: &mut Section) {
    let m = memory_figures(srv);
    s.field("used_memory", m.used);
    s.field("used_memory_human", human_bytes(m.used));
    s.field("used_memory_rss", m.rss);
    s.field("used_memory_rss_human", human_bytes(m.rss));
    s.field("used_memory_peak", m.peak);
    s.field("used_memory_peak_human", human_bytes(m.peak));
    s.field("used_memory_peak_perc", format!("{:.2}%", m.peak_perc()));
    s.field("used_memory_overhead", m.overhead());
    s.field("used_memory_startup", m.startup);
    s.field("used_memory_dataset", m.dataset());
    s.field("used_memory_dataset_perc", format!("{:.2}%", m.dataset_perc()));
    // mimalloc reports no page-level "active" figure cheaply: the counted
    // bytes stand for it, and the resident set for "resident".
    s.field("allocator_allocated", m.used);
    s.field("allocator_active", m.used);
    s.field("allocator_resident", m.rss);
    let system = crate::allocator::total_system_memory();
    s.field("total_system_memory", system);
    s.field("total_system_memory_human", human_bytes(system));
    let scripting = srv.scripting.get::<Scripting>();
    let (lua, fn_vm) = (scripting.lua_memory() as u64, scripting.functions.lua_memory() as u64);
    s.field("used_memory_lua", lua);
    s.field("used_memory_vm_eval", lua);
    s.field("used_memory_lua_human", human_bytes(lua));
    s.field("used_memory_scripts_eval", m.lua_caches);
    s.field("number_of_cached_scripts", scripting.cached_scripts());
    s.field("number_of_functions", scripting.functions.function_count());
    s.field("number_of_libraries", scripting.functions.libraries().len());
    s.field("used_memory_vm_functions", fn_vm);
    s.field("used_memory_vm_total", lua + fn_vm);
    s.field("used_memory_vm_total_human", human_bytes(lua + fn_vm));
    s.field("used_memory_functions", m.functions_caches);
    s.field("used_memory_scripts", m.lua_caches + m.functions_caches);
    s.field("used_memory_scripts_human", human_bytes(m.lua_caches + m.functions_caches));
    s.field("maxmemory", srv.config.maxmemory);
    s.field("maxmemory_human", human_bytes(srv.config.maxmemory));
    s.field("maxmemory_policy", &srv.config.maxmemory_policy);
    let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
    s.field("allocator_frag_ratio", "1.00");
    s.field("allocator_frag_bytes", 0);
    s.field("allocator_rss_ratio", format!("{:.2}", ratio(m.rss, m.used)));
    s.field("allocator_rss_bytes", m.rss as i64 - m.used as i64);
    s.field("rss_overhead_ratio", "1.00");
    s.field("rss_overhead_bytes", 0);
    s.field("mem_fragmentation_ratio", format!("{:.2}", ratio(m.rss, m.used)));
    s.field("mem_fragmentation_bytes", m.rss as i64 - m.used as i64);
    s.field("mem_not_counted_for_evict", m.not_counted_for_evict());
    s.field("mem_replication_backlog", m.repl_backlog);
    s.field("mem_total_replication_buffers", m.repl_buffers);
    s.field("mem_clients_slaves", m.clients_replicas);
    s.field("mem_clients_normal", m.clients_normal);
    s.field("mem_cluster_links", 0);
    s.field("mem_aof_buffer", m.aof_buffer);
    s.field("mem_allocator", crate::allocator::name());
    s.zeros(&["active_defrag_running"]);
    s.field("lazyfree_pending_objects", srv.lazyfree.pending());
    s.field("lazyfreed_objects", srv.lazyfree.freed());
}

fn persistence(srv: &Server, s: &mut Section) {
    // What commands are refused by now (replication updates it each tick).
    let loading = srv.denials.loading;
    s.field("loading", u8::from(loading == crate::server::Loading::Blocking));
    s.field("async_loading", u8::from(loading == crate::server::Loading::Async));
    s.zeros(&["current_cow_peak", "current_cow_size", "current_cow_size_age"]);
    s.field("current_fork_perc", "0.00");
    s.zeros(&["current_save_keys_processed", "current_save_keys_total"]);
    for (name, value) in crate::persistence::info_fields(srv) {
        s.field(name, value);
    }
}

fn stats(srv: &Server, s: &mut Section) {
    let st = &srv.stats;
    s.field("total_connections_received", st.connections_received);
    s.field("total_commands_processed", st.commands_processed);
    s.field("instantaneous_ops_per_sec", 0);
    s.field("total_net_input_bytes", st.net_input_bytes);
    s.field("total_net_output_bytes", st.net_output_bytes);
    s.zeros(&["total_net_repl_input_bytes"]);
    s.field("total_net_repl_output_bytes", st.net_repl_output_bytes);
    for f in ["input_kbps", "output_kbps", "input_repl_kbps", "output_repl_kbps"] {
        s.field(&format!("instantaneous_{f}"), "0.00");
    }
    s.field("rejected_connections", st.rejected_connections);
    for (name, n) in crate::replication::sync_stats(srv) {
        s.field(name, n);
    }
    s.field("expired_keys", srv.keyspace.dbs.iter().map(|db| db.expired).sum::<u64>());
    s.field("expired_stale_perc", "0.00");
    s.zeros(&["expired_time_cap_reached_count", "expire_cycle_cpu_milliseconds"]);
    s.field("evicted_keys", srv.evict.evicted_keys);
    s.field("evicted_clients", st.evicted_clients);
    let (total_exceeded, current_exceeded) = srv.evict.exceeded_ms();
    s.field("total_eviction_exceeded_time", total_exceeded);
    s.field("current_eviction_exceeded_time", current_exceeded);
    s.field("keyspace_hits", st.keyspace_hits);
    s.field("keyspace_misses", st.keyspace_misses);
    use crate::server::pubsub::Kind;
    s.field("pubsub_channels", srv.pubsub.channel_count(Kind::Channel));
    s.field("pubsub_patterns", srv.pubsub.pattern_count());
    s.field("pubsubshard_channels", srv.pubsub.channel_count(Kind::Shard));
    s.field("latest_fork_usec", srv.children.latest_fork_usec);
    s.field("total_forks", srv.children.total_forks);
    s.zeros(&["migrate_cached_sockets", "slave_expires_tracked_keys", "active_defrag_hits", "active_defrag_misses"]);
    s.zeros(&["active_defrag_key_hits", "active_defrag_key_misses", "total_active_defrag_time"]);
    s.field("current_active_defrag_time", 0);
    s.field("tracking_total_keys", srv.tracking.total_keys());
    s.field("tracking_total_items", srv.tracking.total_items());
    s.field("tracking_total_prefixes", srv.tracking.total_prefixes());
    let denied = srv.acl.denied;
    s.field("acl_access_denied_auth", denied[0]);
    s.field("acl_access_denied_cmd", denied[1]);
    s.field("acl_access_denied_key", denied[2]);
    s.field("acl_access_denied_channel", denied[3]);
    s.field("unexpected_error_replies", 0);
    s.field("total_error_replies", st.error_replies);
    s.field("dump_payload_sanitizations", 0);
    s.field("total_reads_processed", st.io_reads);
    s.field("total_writes_processed", st.io_writes);
    s.zeros(&["io_threaded_reads_processed", "io_threaded_writes_processed"]);
    s.zeros(&["reply_buffer_shrinks", "reply_buffer_expands"]);
}

fn replication(srv: &Server, s: &mut Section) {
    for (k, v) in crate::replication::info_fields(srv, crate::server::unix_ms()) {
        s.field(&k, v);
    }
}

/// `sec.usec` of a timeval, as Redis prints CPU times.
fn tv(t: libc::timeval) -> String {
    format!("{}.{:06}", t.tv_sec, t.tv_usec)
}

fn usage(who: libc::c_int) -> libc::rusage {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    ru
}

fn cpu(s: &mut Section) {
    let me = usage(libc::RUSAGE_SELF);
    let kids = usage(libc::RUSAGE_CHILDREN);
    let main = usage(libc::RUSAGE_THREAD);
    s.field("used_cpu_sys", tv(me.ru_stime));
    s.field("used_cpu_user", tv(me.ru_utime));
    s.field("used_cpu_sys_children", tv(kids.ru_stime));
    s.field("used_cpu_user_children", tv(kids.ru_utime));
    s.field("used_cpu_sys_main_thread", tv(main.ru_stime));
    s.field("used_cpu_user_main_thread", tv(main.ru_utime));
}

fn commandstats(srv: &Server, reg: &Registry, s: &mut Section) {
    for (id, st) in srv.stats.commands.iter().enumerate() {
        if st.calls == 0 && st.rejected == 0 && st.failed == 0 {
            continue;
        }
        let usec = crate::server::clock::ticks_to_us(st.ticks);
        let per_call = if st.calls > 0 { usec as f64 / st.calls as f64 } else { 0.0 };
        let value = format!(
            "calls={},usec={},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}",
            st.calls, usec, st.rejected, st.failed
        );
        s.field(&format!("cmdstat_{}", reg.full_name(id)), value);
    }
}

/// Per-command latency percentiles (`latency-tracking-info-percentiles`),
/// in microseconds with three decimals, as Redis prints them.
fn latencystats(srv: &Server, reg: &Registry, s: &mut Section) {
    if !srv.config.latency_tracking {
        return;
    }
    let wanted = srv.config.other.get("latency-tracking-info-percentiles").map_or("50 99 99.9", |v| v.as_str());
    let percentiles: Vec<f64> = wanted.split_whitespace().filter_map(|p| p.parse().ok()).collect();
    for (id, st) in srv.stats.commands.iter().enumerate() {
        let Some(h) = &st.histogram else { continue };
        let values: Vec<String> = percentiles.iter().map(|&p| format!("p{p}={:.3}", h.percentile_us(p))).collect();
        s.field(&format!("latency_percentiles_usec_{}", reg.full_name(id)), values.join(","));
    }
}

fn keyspace(srv: &Server, s: &mut Section) {
    for (i, db) in srv.keyspace.dbs.iter().enumerate() {
        if !db.is_empty() {
            s.field(&format!("db{i}"), format!("keys={},expires={},avg_ttl=0", db.len(), db.volatile_count()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(0), "0B");
        assert_eq!(human_bytes(1023), "1023B");
        assert_eq!(human_bytes(916_432), "894.95K");
        assert_eq!(human_bytes(3 << 20), "3.00M");
    }
}
