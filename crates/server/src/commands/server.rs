//! Server administration: INFO, CONFIG, COMMAND, TIME, LASTSAVE, SHUTDOWN.
//! INFO, COMMAND and DEBUG live in their own files.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::server::{CommandStats, Shutdown, Stats};
use crate::spec;

use super::{command_cmd, info};

const NONE: (i32, i32, i32) = (0, 0, 0);
const CONFIG_FLAGS: u32 = ADMIN | NOSCRIPT | LOADING | STALE;
const CMD_FLAGS: u32 = LOADING | STALE | SENTINEL;

#[rustfmt::skip]
static CONFIG_SUBS: [CommandSpec; 5] = [
    spec!("get", -3, CONFIG_FLAGS, NONE, config_get, "server", "2.0.0", "Returns the effective values of configuration parameters.", ["admin", "slow", "dangerous"]),
    spec!("set", -4, CONFIG_FLAGS, NONE, config_set, "server", "2.0.0", "Sets configuration parameters in-flight.", ["admin", "slow", "dangerous"]),
    spec!("resetstat", 2, CONFIG_FLAGS, NONE, config_resetstat, "server", "2.0.0", "Resets the server's statistics.", ["admin", "slow", "dangerous"]),
    spec!("rewrite", 2, CONFIG_FLAGS, NONE, config_rewrite, "server", "2.8.0", "Persists the effective configuration to file.", ["admin", "slow", "dangerous"]),
    spec!("help", 2, LOADING | STALE, NONE, config_help, "server", "5.0.0", "Returns helpful text about the different subcommands.", ["slow"]),
];

#[rustfmt::skip]
static COMMAND_SUBS: [CommandSpec; 7] = [
    spec!("count", 2, CMD_FLAGS, NONE, command_cmd::count, "server", "2.8.13", "Returns a count of commands.", ["slow", "connection"]),
    spec!("docs", -2, CMD_FLAGS, NONE, command_cmd::docs, "server", "7.0.0", "Returns documentary information about a command.", ["slow", "connection"]),
    spec!("getkeys", -4, CMD_FLAGS, NONE, command_cmd::getkeys, "server", "2.8.13", "Extracts the key names from an arbitrary command.", ["slow", "connection"]),
    spec!("getkeysandflags", -4, CMD_FLAGS, NONE, command_cmd::getkeysandflags, "server", "7.0.0", "Extracts the key names and access flags for an arbitrary command.", ["slow", "connection"]),
    spec!("help", 2, CMD_FLAGS, NONE, command_cmd::help, "server", "5.0.0", "Returns helpful text about the different subcommands.", ["slow", "connection"]),
    spec!("info", -2, CMD_FLAGS, NONE, command_cmd::info, "server", "2.8.13", "Returns information about one, multiple or all commands.", ["slow", "connection"]),
    spec!("list", -2, CMD_FLAGS, NONE, command_cmd::list, "server", "7.0.0", "Returns a list of command names.", ["slow", "connection"]),
];

#[rustfmt::skip]
static SPECS: [CommandSpec; 6] = [
    spec!("info", -1, LOADING | STALE | SENTINEL, NONE, info::info, "server", "1.0.0", "Returns information and statistics about the server.", ["slow", "dangerous"]),
    CommandSpec {
        name: "config",
        arity: -2,
        flags: 0,
        keys: NONE,
        handler: config_help,
        group: "server",
        since: "2.0.0",
        summary: "A container for server configuration commands.",
        acl: &["slow"],
        subcommands: &CONFIG_SUBS,
    },
    CommandSpec {
        name: "command",
        arity: -1,
        flags: CMD_FLAGS,
        keys: NONE,
        handler: command_cmd::all,
        group: "server",
        since: "2.8.13",
        summary: "Returns detailed information about all commands.",
        acl: &["slow", "connection"],
        subcommands: &COMMAND_SUBS,
    },
    spec!("time", 1, LOADING | STALE | FAST, NONE, time, "server", "2.6.0", "Returns the server time.", ["fast"]),
    spec!("lastsave", 1, LOADING | STALE | FAST, NONE, lastsave, "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk.", ["admin", "fast", "dangerous"]),
    spec!("shutdown", -1, ADMIN | NOSCRIPT | LOADING | STALE | SENTINEL | NO_MULTI | ALLOW_BUSY, NONE, shutdown, "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server.", ["admin", "slow", "dangerous"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn config_help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help(
        "CONFIG",
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    );
}

fn config_get(ctx: &mut Ctx, argv: &Argv) {
    let patterns: Vec<&[u8]> = argv.iter_from(2).collect();
    let pairs = ctx.srv.config.get(&patterns);
    ctx.r.map(pairs.len());
    for (k, v) in pairs {
        ctx.r.bulk(k.as_bytes());
        ctx.r.bulk(v.as_bytes());
    }
}

fn config_set(ctx: &mut Ctx, argv: &Argv) {
    // Redis 7.0 answers an odd number of name/value arguments with a syntax error.
    if argv.len() % 2 == 1 {
        return ctx.syntax_error();
    }
    let pairs: Vec<(&[u8], &[u8])> = (2..argv.len()).step_by(2).map(|i| (argv.get(i), argv.get(i + 1))).collect();
    // Redis's DENY_LOADING_CONFIG options, refused while a replica loads.
    const DENY_LOADING: [&str; 3] = ["appendonly", "repl-diskless-load", "dir"];
    if ctx.srv.denials.loading != crate::server::Loading::No
        && pairs.iter().any(|(k, _)| DENY_LOADING.iter().any(|d| k.eq_ignore_ascii_case(d.as_bytes())))
    {
        return ctx.r.error(crate::dispatch::guards::LOADING_ERROR);
    }
    let before = ctx.srv.config.clone();
    let local = crate::config::is_local_addr(&ctx.client().addr);
    if let Err(e) = ctx.srv.config.set_from(&pairs, local) {
        return ctx.r.error(&e);
    }
    // TLS files are volatile: setting the same path again reloads them.
    let named: Vec<&[u8]> = pairs.iter().map(|p| p.0).collect();
    if let Err(e) = crate::net::tls::apply(ctx.srv, &before, &named) {
        ctx.srv.config = before;
        return ctx.r.error(&e);
    }
    if let Err(e) = apply_side_effects(ctx, &before) {
        ctx.srv.config = before;
        return ctx.r.error(&e);
    }
    ctx.r.ok();
}

/// Act on changed options that need more than a new stored value; every
/// other option is read live from the configuration.
fn apply_side_effects(ctx: &mut Ctx, before: &crate::config::Config) -> Result<(), String> {
    if ctx.srv.config.appendonly != before.appendonly {
        crate::persistence::set_aof_enabled(ctx.srv, !before.appendonly)
            .map_err(|e| format!("ERR CONFIG SET failed (possibly related to argument 'appendonly') - {e}"))?;
    }
    let gc = "aof-disable-auto-gc";
    if ctx.srv.config.other.get(gc) != before.other.get(gc) {
        crate::persistence::aof_auto_gc_changed(ctx.srv)
            .map_err(|e| format!("ERR CONFIG SET failed (possibly related to argument '{gc}') - {e}"))?;
    }
    let cfg = &ctx.srv.config;
    if cfg.dbfilename != before.dbfilename && cfg.dbfilename.contains('/') {
        return Err("ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, \
                    just a filename"
            .into());
    }
    if cfg.dir != before.dir {
        crate::persistence::change_dir(ctx.srv)
            .map_err(|e| format!("ERR CONFIG SET failed (possibly related to argument 'dir') - {e}"))?;
    }
    if ctx.srv.config.requirepass != before.requirepass {
        // requirepass is the default user's password, as in Redis 6+.
        let pass = ctx.srv.config.requirepass.clone();
        ctx.srv.acl.set_default_password(pass.as_deref());
    }
    if ctx.srv.config.notify_keyspace_events != before.notify_keyspace_events {
        ctx.srv.update_notify_tracking();
    }
    evict_side_effects(ctx, before);
    crate::replication::config_changed(ctx.srv);
    if ctx.srv.config.other.get("watchdog-period") != before.other.get("watchdog-period") {
        crate::watchdog::configure(&mut ctx.srv.config);
    }
    let cfg = &ctx.srv.config;
    if cfg.loglevel != before.loglevel {
        crate::log::set_level(cfg.loglevel);
    }
    if cfg.maxclients != before.maxclients {
        let wanted = cfg.maxclients;
        let got = crate::net::limits::raise_fd_limit(wanted);
        if got < wanted {
            return Err(format!(
                "ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is not able \
                 to handle the specified number of clients, try with {got}"
            ));
        }
    }
    // Last: the new sockets are handed over only if nothing else failed.
    let cfg = &ctx.srv.config;
    if cfg.port != before.port || cfg.bind != before.bind {
        let what = if cfg.port != before.port { "port" } else { "bind" };
        // Port 0 turns TCP off, as in Redis.
        let bound =
            if cfg.port == 0 { Ok(Vec::new()) } else { crate::net::bind_all(&cfg.bind, cfg.port, cfg.tcp_backlog) };
        let listeners = bound.map_err(|e| {
            let why = if what == "port" {
                "Unable to listen on this port. Check server logs."
            } else {
                "Failed to bind to specified addresses."
            };
            crate::log_at!(Warning, "CONFIG SET {what}: {e}");
            format!("ERR CONFIG SET failed (possibly related to argument '{what}') - {why}")
        })?;
        ctx.srv.port = cfg.port;
        ctx.srv.rebound = Some(listeners);
    }
    Ok(())
}

/// A new policy or LFU setting changes what keys track; a lower
/// `maxmemory` evicts before the next command, then on later turns if
/// the round's time runs out (Redis 7.0's `updateMaxmemory`).
fn evict_side_effects(ctx: &mut Ctx, before: &crate::config::Config) {
    let cfg = &ctx.srv.config;
    if cfg.maxmemory_policy != before.maxmemory_policy
        || cfg.lfu_log_factor != before.lfu_log_factor
        || cfg.lfu_decay_time != before.lfu_decay_time
    {
        crate::server::evict::apply_policy(ctx.srv);
    }
    let cfg = &ctx.srv.config;
    crate::server::evict::set_limit(cfg.maxmemory);
    if cfg.maxmemory != before.maxmemory && cfg.maxmemory > 0 {
        let used = crate::allocator::used_memory();
        if cfg.maxmemory < used {
            crate::log_at!(
                Warning,
                "WARNING: the new maxmemory value set via CONFIG SET ({}) is smaller than the current memory usage \
                 ({used}). This will result in key eviction and/or the inability to accept new write commands \
                 depending on the maxmemory-policy.",
                cfg.maxmemory
            );
        }
        // Evict right after this command, in the same turn (the event
        // loop's eviction timer), rather than here: the configuration
        // copy CONFIG SET holds meanwhile would count as used memory and
        // cost keys.
        ctx.srv.evict.timer = true;
    }
}

fn config_resetstat(ctx: &mut Ctx, _argv: &Argv) {
    let n = ctx.srv.stats.commands.len();
    ctx.srv.stats = Stats { commands: vec![CommandStats::default(); n], ..Stats::default() };
    ctx.srv.keyspace.dbs.iter_mut().for_each(|db| db.expired = 0);
    ctx.srv.evict.reset_stats();
    ctx.srv.lazyfree.reset_stats();
    ctx.srv.acl.denied = [0; 4];
    (ctx.srv.children.total_forks, ctx.srv.children.latest_fork_usec) = (0, 0);
    crate::replication::reset_stats(ctx.srv);
    ctx.r.ok();
}

fn config_rewrite(ctx: &mut Ctx, _argv: &Argv) {
    if ctx.srv.config_file.is_empty() {
        return ctx.r.error("ERR The server is running without a config file");
    }
    match rewrite_config(ctx.srv, false) {
        Ok(()) => {
            crate::log_at!(Notice, "CONFIG REWRITE executed with success.");
            ctx.r.ok()
        }
        Err(e) => {
            // Redis's text is strerror's, without Rust's "(os error N)".
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or_default().to_string();
            crate::log_at!(Warning, "CONFIG-REWRITE failed: {text}");
            ctx.r.error(&format!("ERR Rewriting config file: {text}"))
        }
    }
}

/// Rewrites the file the server was started with (CONFIG REWRITE, and
/// DEBUG CONFIG-REWRITE-FORCE-ALL with `force_all`).
pub fn rewrite_config(srv: &crate::server::Server, force_all: bool) -> std::io::Result<()> {
    use crate::config::rewrite::{rewrite_file, Extras};
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| ".".into());
    let users = user_lines(&srv.config);
    let extras = Extras { cwd, users: Some(&users), force_all };
    rewrite_file(std::path::Path::new(&srv.config_file), &srv.config, &extras)
}

/// `user` lines for the rewrite: the users the configuration declared.
fn user_lines(cfg: &crate::config::Config) -> Vec<String> {
    cfg.users.iter().map(|words| format!("user {}", words.join(" "))).collect()
}

fn time(ctx: &mut Ctx, _argv: &Argv) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    ctx.r.array(2);
    ctx.r.bulk_int(now.as_secs() as i64);
    ctx.r.bulk_int(now.subsec_micros() as i64);
}

fn lastsave(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.int(crate::persistence::last_save(ctx.srv));
}

fn shutdown(ctx: &mut Ctx, argv: &Argv) {
    let mut mode = Shutdown::Default;
    let mut abort = false;
    for i in 1..argv.len() {
        if argv.is(i, "nosave") {
            mode = Shutdown::NoSave;
        } else if argv.is(i, "save") {
            mode = Shutdown::Save;
        } else if argv.is(i, "abort") {
            abort = true;
        } else if !(argv.is(i, "now") || argv.is(i, "force")) {
            return ctx.syntax_error();
        }
    }
    if abort {
        // Shutdown is never pending across commands here: nothing to abort.
        return if argv.len() == 2 { ctx.r.error("ERR No shutdown in progress.") } else { ctx.syntax_error() };
    }
    // Saved here, not in the loop, so a failed save can still be answered.
    if let Err(e) = crate::persistence::on_shutdown(ctx.srv, mode) {
        crate::log_at!(Warning, "Error trying to shut down: {e}");
        return ctx.r.error("ERR Errors trying to SHUTDOWN. Check logs.");
    }
    // No reply on success: the connection simply closes, as with Redis.
    ctx.srv.shutdown = Some(mode);
}
