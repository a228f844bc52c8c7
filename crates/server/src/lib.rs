//! Volley server library: everything `volley-server` runs, exposed for tests.
pub mod commands;
pub mod config;
pub mod daemon;
pub mod dispatch;
pub mod engine;
pub mod log;
pub mod net;
pub mod server;

use config::Config;

/// Build the command table with every command group.
pub fn registry() -> dispatch::Registry {
    let mut r = dispatch::Registry::new();
    commands::register_all(&mut r);
    r
}

/// Start serving with `config` until shutdown.
pub fn run(config: Config) -> std::io::Result<()> {
    let srv = server::Server::new(config, registry());
    let mut ev = net::EventLoop::bind(srv)?;
    let ports = ev.local_ports();
    log_at!(Notice, "Server initialized");
    log_at!(
        Notice,
        "Ready to accept connections tcp (port {})",
        ports.first().copied().unwrap_or(0)
    );
    ev.run()
}
