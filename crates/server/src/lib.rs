//! Volley server library: everything `volley-server` runs, exposed for tests.
pub mod allocator;
pub mod commands;
pub mod config;
pub mod daemon;
pub mod dispatch;
pub mod engine;
pub mod log;
pub mod net;
pub mod persistence;
pub mod scripting;
pub mod server;

use config::Config;

/// Build the command table with every command group.
pub fn registry() -> dispatch::Registry {
    let mut r = dispatch::Registry::new();
    commands::register_all(&mut r);
    r
}

/// A server with its layers wired together: the command table (kept for
/// the process's lifetime, as every command is dispatched through it) and
/// the parts persistence and scripting keep in the server.
pub fn new_server(config: Config) -> (server::Server, &'static dispatch::Registry) {
    let reg: &'static dispatch::Registry = Box::leak(Box::new(registry()));
    let now_secs = server::unix_ms() / 1000;
    let persistence = persistence::new_part(now_secs);
    let scripting = server::Part::new(scripting::Scripting::new());
    let mut srv = server::Server::new(config, reg.len(), persistence, scripting);
    srv.script_may_write = Some(scripting::may_write);
    srv.evict.script_denies_oom = Some(scripting::denies_oom);
    (srv, reg)
}

/// Start serving with `config` until shutdown.
pub fn run(mut config: Config) -> std::io::Result<()> {
    allocator::configure(config.other.get("disable-thp").is_none_or(|v| v != "no"));
    let maxclients = net::limits::raise_fd_limit(config.maxclients);
    if maxclients == 0 {
        return Err(std::io::Error::other("not enough file descriptors for even one client"));
    }
    config.maxclients = maxclients;
    let config_file = config_file_arg();
    let show_logo = config.always_show_logo;
    let (mut srv, reg) = new_server(config);
    srv.config_file = config_file;
    srv.update_notify_tracking();
    // The empty server's footprint, as Redis measures it once listening
    // and before loading data: what binding allocates counts, the data not.
    let before_load = allocator::used_memory();
    persistence::load_at_start(&mut srv, reg)?;
    let loaded = allocator::used_memory();
    let mut ev = net::EventLoop::bind(srv, reg)?;
    ev.srv.memory.startup = (before_load + allocator::used_memory()).saturating_sub(loaded);
    let ports = ev.local_ports();
    announce(show_logo, ports.first().copied().unwrap_or(0));
    log_at!(Notice, "Server initialized");
    log_at!(Notice, "Ready to accept connections tcp (port {})", ports.first().copied().unwrap_or(0));
    ev.run()
}

/// The start-up banner: with `always-show-logo yes` (or on a terminal) a
/// few lines naming the version, port and pid, else Redis's one-line mode
/// summary. Tools that start servers, Redis's test suite among them, find
/// the process they started by the banner's ` PID: <pid>`.
fn announce(show_logo: bool, port: u16) {
    use std::io::IsTerminal;
    let pid = std::process::id();
    let version = env!("CARGO_PKG_VERSION");
    log_at!(Notice, "Volley version={version}, bits=64, pid={pid}, just started (speaks Redis 7.0.15)");
    if show_logo || std::io::stdout().is_terminal() {
        log_at!(Notice, "  Volley {version}: Redis 7.0.15 compatible, pipelined, standalone mode");
        log_at!(Notice, "  Port: {port}");
        log_at!(Notice, "  PID: {pid}");
    } else {
        log_at!(Notice, "Running mode=standalone, port={port}.");
    }
}

/// Absolute path of the config file named on the command line, if any
/// (CONFIG REWRITE writes back to it; INFO reports it).
fn config_file_arg() -> String {
    match std::env::args().nth(1) {
        Some(a) if !a.starts_with("--") => std::fs::canonicalize(&a).map(|p| p.display().to_string()).unwrap_or(a),
        _ => String::new(),
    }
}
