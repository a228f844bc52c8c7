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
pub mod replication;
pub mod scripting;
pub mod server;
pub mod watchdog;

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
    // Renames were checked by `run` (a bad one stops the server there).
    let reg = registry_for(&config).unwrap_or_else(|_| registry());
    let reg: &'static dispatch::Registry = Box::leak(Box::new(reg));
    let now_secs = server::unix_ms() / 1000;
    let persistence = persistence::new_part(now_secs);
    let scripting = server::Part::new(scripting::Scripting::new());
    let mut srv = server::Server::new(config, reg.len(), persistence, scripting);
    srv.replication = replication::new_part();
    srv.script_may_write = Some(scripting::may_write);
    srv.script_cmd_flags = Some(scripting::cmd_flags);
    srv.evict.not_counted = Some(not_counted_for_evict);
    srv.acl = server::acl::Acl::new(dispatch::permissions::catalog(reg));
    srv.client_info_line = Some(commands::client::info_line);
    (srv, reg)
}

/// Memory `maxmemory` leaves out (Redis's `freeMemoryGetNotCountedMemory`),
/// for `server::evict`, which cannot see the AOF buffer: that buffer and
/// the replication buffer beyond the backlog's size, which replicas keep
/// (evicting keys for it would only grow it with their DELs).
fn not_counted_for_evict(srv: &server::Server) -> u64 {
    persistence::aof_buffer_bytes(srv) + replication::buffer_memory(srv)[3] as u64
}

/// The command table with the config file's `rename-command` lines applied.
pub fn registry_for(config: &Config) -> Result<dispatch::Registry, config::ConfigError> {
    let mut r = registry();
    for rc in &config.rename_commands {
        r.rename(&rc.from, &rc.to).map_err(|msg| config::ConfigError::Directive {
            line: rc.line,
            text: rc.text.clone(),
            msg: msg.to_string(),
        })?;
    }
    Ok(r)
}

/// Start serving with `config` until shutdown.
pub fn run(mut config: Config) -> std::io::Result<()> {
    registry_for(&config).map_err(std::io::Error::other)?;
    allocator::configure(config.other.get("disable-thp").is_none_or(|v| v != "no"));
    watchdog::configure(&mut config);
    let maxclients = net::limits::raise_fd_limit(config.maxclients);
    if maxclients == 0 {
        return Err(std::io::Error::other("not enough file descriptors for even one client"));
    }
    config.maxclients = maxclients;
    let config_file = config_file_arg();
    let show_logo = config.always_show_logo;
    let (mut srv, reg) = new_server(config);
    load_acl(&mut srv)?;
    srv.config_file = config_file;
    srv.update_notify_tracking();
    // Redis's order: listen, show the banner (with the pid that tools
    // wait for), then load the data, so a start that fails while loading
    // is seen as a started server that died, not as one that never came.
    let mut ev = net::EventLoop::bind(srv, reg)?;
    ev.srv.startup_port = ev.local_ports().first().copied().unwrap_or(0);
    announce(show_logo, ev.srv.startup_port);
    log_at!(Notice, "Server initialized");
    // The empty server's footprint, as Redis measures it once listening
    // and before loading data: what binding allocates counts, the data not.
    ev.srv.memory.startup = allocator::used_memory();
    persistence::load_at_start(&mut ev.srv, reg)?;
    if !persistence::start_rdb_load(&mut ev.srv)? {
        replication::ready(&mut ev.srv);
    }
    ev.run()
}

/// ACL users at start-up: `requirepass` as the default user's password,
/// then the config file's `user` lines or the `aclfile` (not both, as in
/// Redis); any error stops the server.
fn load_acl(srv: &mut server::Server) -> std::io::Result<()> {
    use server::acl::file;
    let fail = |msg: String| Err(std::io::Error::other(msg));
    srv.acl.pubsub_all = srv.config.other.get("acl-pubsub-default").is_some_and(|v| v == "allchannels");
    let pass = srv.config.requirepass.clone();
    if pass.is_some() {
        srv.acl.set_default_password(pass.as_deref());
    }
    let aclfile = srv.config.other.get("aclfile").cloned().unwrap_or_default();
    if !aclfile.is_empty() && !srv.config.users.is_empty() {
        return fail(
            "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. \
             This setup is very likely to lead to configuration errors and security holes, please define either an \
             ACL file or declare users directly in your redis.conf, but not both."
                .into(),
        );
    }
    let users = srv.config.users.clone();
    if let Err(e) = file::apply_config_users(&mut srv.acl, &users) {
        return fail(format!("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n{e}"));
    }
    if !aclfile.is_empty() {
        // Redis reads it after moving into `dir`, so a relative path is there.
        let path = std::path::Path::new(&srv.config.dir).join(&aclfile);
        match file::load(&srv.acl, &path.to_string_lossy()) {
            Ok(users) => srv.acl.replace_all(users),
            Err(e) => return fail(format!("Aborting Redis startup because of ACL errors: {e}")),
        }
    }
    Ok(())
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
