//! Persistence: RDB snapshots (`rdb`), the append-only file (`aof`), and the
//! forked child that writes either in the background (`child`). This module
//! is the seam the rest of the server calls: load at start, periodic work,
//! and the final save at shutdown.
pub mod aof;
pub mod child;
pub mod rdb;

use std::io;

use crate::server::Server;
use child::ChildKind;

/// Load the dataset at start: the append-only file when `appendonly yes`
/// (it is the more complete record), else the RDB snapshot, as Redis does.
pub fn load_at_start(srv: &mut Server) -> io::Result<()> {
    // Redis works inside `dir`: both formats' files live there.
    rdb::enter_dir(srv)?;
    if srv.config.appendonly {
        aof::load_at_start(srv)
    } else {
        rdb::load_at_start(srv)
    }
}

/// Periodic work from the event loop's cron: reap a finished child, then
/// let each format decide whether to start or finish something.
pub fn cron(srv: &mut Server, now_ms: i64) {
    if let Some(exit) = srv.children.reap() {
        match exit.kind {
            ChildKind::Rdb => rdb::child_done(srv, &exit),
            ChildKind::AofRewrite => aof::child_done(srv, &exit),
        }
    }
    rdb::cron(srv, now_ms);
    aof::cron(srv, now_ms);
}

/// Before the process exits (SHUTDOWN, SIGTERM): stop a running child and
/// make what must be durable durable. An error means "don't exit".
pub fn on_shutdown(srv: &mut Server, save: crate::server::Shutdown) -> io::Result<()> {
    if let Some(exit) = srv.children.kill() {
        crate::log_at!(Warning, "There is a child saving an .rdb or rewriting the AOF. Killing it (pid {})", exit.pid);
        if exit.kind == ChildKind::Rdb {
            rdb::remove_temp(srv, exit.pid);
        }
    }
    aof::on_shutdown(srv)?;
    rdb::on_shutdown(srv, save)
}
