//! Persistence: RDB snapshots (`rdb`) and the append-only file (`aof`),
//! written in the background by the server's forked child (`server::child`).
//! This module is the seam the rest of the server calls: load at start,
//! periodic work, the final save at shutdown, what the commands and INFO
//! need. Nothing outside reaches into `aof::` or `rdb::` (tests/layering.rs).
pub mod aof;
pub mod rdb;

pub use aof::auto_gc_changed as aof_auto_gc_changed;
pub use aof::set_flush_sleep as set_aof_flush_sleep;
pub use aof::{async_commit, before_reply, before_sleep, commit_in_flight, committed_epoch, defer_group_commit};
pub use aof::{debug_loadaof, set_enabled as set_aof_enabled, set_waker, start_commit, wait_commits};
pub use rdb::dump::{dump_value, restore_value, DumpError};
pub use rdb::load::{load_with as load_rdb_stream, LoadError, LoadStats};
pub use rdb::save::ReplAux;
pub use rdb::take_loaded_expired;
pub use rdb::write_for_replicas;
pub use rdb::{after_flushall, change_dir, debug_reload, finish_socket_load, load_from_primary, loaded_position};
pub use rdb::{remove_temp as remove_temp_rdb, save_for_replicas};

use std::io;

use crate::scripting::function::RestorePolicy;
use crate::scripting::Scripting;
use crate::server::child::ChildKind;
use crate::server::{Part, Server};
use aof::Aof;
use rdb::RdbState;

/// What persistence keeps in the server (as its opaque `persistence` part).
pub struct Persistence {
    pub aof: Aof,
    pub rdb: RdbState,
    /// The RDB load at start, while it runs.
    startup: Option<rdb::startup::StartupLoad>,
}

/// The server part persistence owns, for `Server::new`.
pub fn new_part(now_secs: i64) -> Part {
    Part::new(Persistence { aof: Aof::default(), rdb: RdbState::new(now_secs), startup: None })
}

#[inline]
pub(crate) fn aof_mut(p: &mut Part) -> &mut Aof {
    &mut p.get_mut::<Persistence>().aof
}

#[inline]
pub(crate) fn aof_ref(p: &Part) -> &Aof {
    &p.get::<Persistence>().aof
}

#[inline]
pub(crate) fn rdb_mut(p: &mut Part) -> &mut RdbState {
    &mut p.get_mut::<Persistence>().rdb
}

#[inline]
pub(crate) fn rdb_ref(p: &Part) -> &RdbState {
    &p.get::<Persistence>().rdb
}

/// Whether changes are being appended to the AOF (its change-stream
/// consumer is installed).
#[inline]
pub(crate) fn feeding(srv: &Server) -> bool {
    srv.changes.consumers.aof.is_some()
}

/// Load the dataset at start when `appendonly yes`: the append-only file
/// (the more complete record), before the server listens. The RDB, used
/// otherwise, loads once it listens ([`start_rdb_load`]), as in Redis.
pub fn load_at_start(srv: &mut Server, reg: &'static crate::dispatch::Registry) -> io::Result<()> {
    // Redis works inside `dir`: both formats' files live there.
    rdb::enter_dir(srv)?;
    if srv.config.appendonly {
        aof::load_at_start(srv, reg)?;
    }
    Ok(())
}

/// Start loading the RDB file (without `appendonly`) while clients are
/// answered -LOADING: true while it runs; false when there was nothing to
/// load, or a file small enough to be in before the first reply is.
pub fn start_rdb_load(srv: &mut Server) -> io::Result<bool> {
    if srv.config.appendonly {
        return Ok(false);
    }
    let Some(load) = rdb::start_load(srv)? else { return Ok(false) };
    if load.small {
        rdb::startup::wait(srv, &load).map_err(io::Error::other)?;
        return Ok(false);
    }
    srv.persistence.get_mut::<Persistence>().startup = Some(load);
    Ok(true)
}

/// Whether the start-up RDB load has finished: `Some(Ok)` once, when the
/// data is in; `Some(Err)` for a damaged file (fatal).
pub fn poll_rdb_load(srv: &mut Server) -> Option<Result<(), String>> {
    let load = srv.persistence.get_mut::<Persistence>().startup.take()?;
    let done = rdb::startup::poll(srv, &load);
    if done.is_none() {
        srv.persistence.get_mut::<Persistence>().startup = Some(load);
    }
    done
}

/// `key-load-delay`, a test knob slowing loads down.
pub(crate) fn key_load_delay(cfg: &crate::config::Config) -> i64 {
    cfg.other.get("key-load-delay").and_then(|v| v.parse::<i64>().ok()).unwrap_or(0)
}

/// Redis's `debugDelay` after each key loaded (`key-load-delay`): that
/// many microseconds, or for a negative value one microsecond every
/// `-delay` keys.
pub(crate) fn key_delay(delay: i64, keys: i64) {
    let us = match delay {
        0 => return,
        d if d > 0 => d as u64,
        d if keys % -d == 0 => 1,
        _ => return,
    };
    std::thread::sleep(std::time::Duration::from_micros(us));
}

/// Periodic work from the event loop's cron: reap a finished child, then
/// let each format decide whether to start or finish something.
pub fn cron(srv: &mut Server, now_ms: i64) {
    // A replication child is replication's to reap.
    let mine = matches!(srv.children.running(), Some(ChildKind::Rdb | ChildKind::AofRewrite));
    if let Some(exit) = if mine { srv.children.reap() } else { None } {
        match exit.kind {
            ChildKind::Rdb => rdb::child_done(srv, &exit),
            ChildKind::AofRewrite => aof::child_done(srv, &exit),
            ChildKind::ReplSync => {}
        }
    }
    rdb::cron(srv, now_ms);
    aof::cron(srv, now_ms);
}

/// Before the process exits (SHUTDOWN, SIGTERM): stop a running child and
/// make what must be durable durable. An error means "don't exit".
pub fn on_shutdown(srv: &mut Server, save: crate::server::Shutdown) -> io::Result<()> {
    // A half-loaded dataset is never saved over the file, as in Redis.
    let save =
        if srv.denials.loading == crate::server::Loading::Blocking { crate::server::Shutdown::NoSave } else { save };
    if let Some(exit) = srv.children.kill() {
        crate::log_at!(Warning, "There is a child saving an .rdb or rewriting the AOF. Killing it (pid {})", exit.pid);
        if exit.kind == ChildKind::Rdb {
            rdb::remove_temp(srv, exit.pid);
        }
    }
    aof::on_shutdown(srv)?;
    rdb::on_shutdown(srv, save)
}

/// The codes of the function libraries, as the RDB and the AOF base store
/// them.
pub fn function_codes(srv: &Server) -> Vec<Vec<u8>> {
    srv.scripting.get::<Scripting>().functions.libraries().iter().map(|l| l.code.clone()).collect()
}

/// Load the function libraries a dump held (all of them or none).
pub(crate) fn install_functions(srv: &mut Server, codes: &[Vec<u8>]) -> Result<(), String> {
    if codes.is_empty() {
        return Ok(());
    }
    srv.scripting.get_mut::<Scripting>().restore_libraries(codes, RestorePolicy::Append)
}

/// FUNCTION DUMP's payload for the libraries whose codes are `codes`.
pub fn dump_functions(codes: &[Vec<u8>], compress: bool) -> Vec<u8> {
    rdb::functions::dump(codes, compress)
}

/// The library codes of a FUNCTION RESTORE payload, or the error reply.
pub fn parse_function_dump(payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    rdb::functions::parse(payload)
}

/// How a request to save or rewrite in the background went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Started {
    /// Started (or, for SAVE, done).
    Now,
    /// Will start once the running child is done.
    Scheduled,
    /// The same kind of child is running already.
    AlreadyRunning,
    /// Another kind of child runs and scheduling was not asked for.
    OtherChild,
    Failed,
}

/// SAVE: write the snapshot in the foreground.
pub fn save(srv: &mut Server) -> Started {
    if srv.children.running() == Some(ChildKind::Rdb) {
        return Started::AlreadyRunning;
    }
    rdb_mut(&mut srv.persistence).saves += 1;
    match rdb::save_sync(srv) {
        Ok(()) => Started::Now,
        Err(_) => Started::Failed,
    }
}

/// BGSAVE: fork the child that writes the snapshot, or schedule it when
/// another child runs and `schedule` says so (always `in_exec`: a
/// transaction never forks midway).
pub fn bgsave(srv: &mut Server, schedule: bool, in_exec: bool) -> Started {
    let running = srv.children.running();
    if running == Some(ChildKind::Rdb) {
        return Started::AlreadyRunning;
    }
    if running.is_some() || in_exec {
        if !schedule {
            return Started::OtherChild;
        }
        rdb_mut(&mut srv.persistence).scheduled = true;
        return Started::Scheduled;
    }
    match rdb::bgsave(srv) {
        Ok(_) => Started::Now,
        Err(_) => Started::Failed,
    }
}

/// BGREWRITEAOF: fork the rewrite child, or schedule it behind another
/// child or after the running transaction.
pub fn bgrewriteaof(srv: &mut Server) -> Started {
    let in_exec = srv.changes.in_atomic();
    match srv.children.running() {
        Some(ChildKind::AofRewrite) => Started::AlreadyRunning,
        None if !in_exec => match aof::start_rewrite(srv) {
            Ok(()) => Started::Now,
            Err(_) => Started::Failed,
        },
        _ => {
            aof_mut(&mut srv.persistence).rewrite_scheduled = true;
            Started::Scheduled
        }
    }
}

/// Unix seconds of the last successful save (LASTSAVE).
pub fn last_save(srv: &Server) -> i64 {
    rdb_ref(&srv.persistence).last_save
}

/// Bytes the AOF buffer holds (INFO `mem_aof_buffer`).
pub fn aof_buffer_bytes(srv: &Server) -> u64 {
    aof::buffer_bytes(srv)
}

/// The `rdb_*` and `aof_*` fields of INFO persistence, in Redis's order.
pub fn info_fields(srv: &Server) -> Vec<(&'static str, String)> {
    let mut fields = rdb::info_fields(srv, crate::server::unix_ms());
    fields.extend(aof::info_fields(srv));
    fields
}
