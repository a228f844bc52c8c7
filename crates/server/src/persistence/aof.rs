//! The append-only file (placeholder: the AOF work replaces this).
use std::io;

use super::child::ChildExit;
use crate::server::Server;

/// Replay the append-only file(s) if they exist.
pub fn load_at_start(_srv: &mut Server) -> io::Result<()> {
    Ok(())
}

/// An AOF rewrite child finished.
pub fn child_done(_srv: &mut Server, _exit: &ChildExit) {}

/// Rewrite triggers and fsync bookkeeping.
pub fn cron(_srv: &mut Server, _now_ms: i64) {}

/// Flush and fsync what is buffered.
pub fn on_shutdown(_srv: &mut Server) -> io::Result<()> {
    Ok(())
}
