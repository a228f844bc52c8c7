//! RDB snapshots in Redis's format (placeholder: the RDB work replaces this).
use std::io;

use super::child::ChildExit;
use crate::server::{Server, Shutdown};

/// Load `dir/dbfilename` if it exists.
pub fn load_at_start(_srv: &mut Server) -> io::Result<()> {
    Ok(())
}

/// A BGSAVE child finished.
pub fn child_done(_srv: &mut Server, _exit: &ChildExit) {}

/// Save points.
pub fn cron(_srv: &mut Server, _now_ms: i64) {}

/// The save SHUTDOWN owes.
pub fn on_shutdown(_srv: &mut Server, _how: Shutdown) -> io::Result<()> {
    Ok(())
}
