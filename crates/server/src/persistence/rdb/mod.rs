//! RDB snapshots in Redis's own format: the save/load state the server
//! keeps (last save, BGSAVE status, save points), loading at start, the
//! background save through the forked child, the save SHUTDOWN owes, and
//! what FLUSHALL, CONFIG SET dir, DEBUG RELOAD and the MISCONF guard need.
//! The byte format lives in `format`/`packed`/`lzf`, the file walk in
//! `save`/`load`, single-value DUMP payloads in `dump`; the commands are
//! `commands::persistence` (and `commands::dump` for DUMP/RESTORE).
mod cow;
pub mod dump;
pub mod format;
pub mod functions;
pub mod load;
pub mod lzf;
pub mod packed;
pub mod reader;
pub mod save;
pub mod startup;
pub mod stream;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;

use std::io::{self, BufReader};
use std::path::PathBuf;

use crate::persistence::{rdb_mut, rdb_ref};
use crate::server::child::{ChildExit, ChildKind};
use crate::server::{unix_ms, Server, Shutdown};
use load::LoadStats;
use save::SaveOpts;

/// Seconds to wait after a failed BGSAVE before save points retry it.
const BGSAVE_RETRY_DELAY: i64 = 5;

/// What the server remembers about saving and loading (INFO persistence).
#[derive(Debug, Clone)]
pub struct RdbState {
    /// Unix seconds of the last successful save (LASTSAVE).
    pub last_save: i64,
    /// Unix seconds of the last BGSAVE attempt (save-point retry delay).
    pub last_bgsave_try: i64,
    /// SAVE and BGSAVE runs (INFO `rdb_saves`).
    pub saves: u64,
    pub last_bgsave_secs: i64,
    /// When the running BGSAVE started (unix ms).
    pub bgsave_started_ms: i64,
    /// BGSAVE SCHEDULE waiting for another child to finish.
    pub scheduled: bool,
    /// `dirty` when the running child forked: what a successful save covers.
    dirty_at_fork: u64,
    pub last_load: LoadStats,
    /// Bytes the last BGSAVE child reported as copied on write.
    pub last_cow: u64,
    /// Read end of the pipe the running child reports its CoW size on.
    cow_fd: Option<i32>,
}

impl RdbState {
    pub fn new(now_secs: i64) -> Self {
        RdbState {
            last_save: now_secs,
            last_bgsave_try: 0,
            saves: 0,
            last_bgsave_secs: -1,
            bgsave_started_ms: 0,
            scheduled: false,
            dirty_at_fork: 0,
            last_load: LoadStats::default(),
            last_cow: 0,
            cow_fd: None,
        }
    }
}

fn opts(srv: &Server) -> SaveOpts {
    let repl = srv.repl_position.and_then(|f| f(srv)).and_then(|(offset, stream_db)| {
        let replid: [u8; 40] = srv.replid.as_bytes().try_into().ok()?;
        Some(save::ReplAux { stream_db, replid, offset })
    });
    let key_delay_us = save::key_delay_setting(&srv.config);
    SaveOpts { compress: srv.config.rdbcompression, checksum: srv.config.rdbchecksum, repl, key_delay_us }
}

/// The keys that had expired in the file `loaded_position` speaks of,
/// handed over once (see `LoadStats::expired_keys`).
pub fn take_loaded_expired(srv: &mut Server) -> Vec<(usize, Vec<u8>)> {
    std::mem::take(&mut rdb_mut(&mut srv.persistence).last_load.expired_keys)
}

/// The replication position the RDB loaded at start carried: replid,
/// offset, and the stream's db.
pub fn loaded_position(srv: &Server) -> Option<(String, i64, i64)> {
    let last = &rdb_ref(&srv.persistence).last_load;
    last.repl.as_ref().map(|(id, off)| (id.clone(), *off, last.repl_stream_db))
}

fn rdb_path(srv: &Server) -> PathBuf {
    srv.config.dir.join(&srv.config.dbfilename)
}

fn used_mem() -> u64 {
    crate::allocator::rss_bytes()
}

/// Move into `dir` as Redis does at start, and remember it absolute (CONFIG
/// GET dir shows the working directory).
pub fn enter_dir(srv: &mut Server) -> io::Result<()> {
    change_dir(srv).map_err(io::Error::other)
}

/// chdir to `config.dir` (start, CONFIG SET dir); the error is the OS's text.
pub fn change_dir(srv: &mut Server) -> Result<(), String> {
    let dir = srv.config.dir.clone();
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    std::env::set_current_dir(&dir).map_err(|e| {
        let text = e.to_string();
        // Rust appends " (os error N)"; Redis shows strerror alone.
        text.split(" (os error").next().unwrap_or(&text).to_string()
    })?;
    if let Ok(abs) = std::env::current_dir() {
        srv.config.dir = abs;
    }
    Ok(())
}

/// Start loading `dir/dbfilename` on a thread if it exists (see
/// [`startup`]); a damaged file stops the server once found out.
pub fn start_load(srv: &mut Server) -> io::Result<Option<startup::StartupLoad>> {
    let path = rdb_path(srv);
    startup::start(srv, path)
}

fn load_file(srv: &mut Server, file: std::fs::File, path: &std::path::Path) -> io::Result<LoadStats> {
    let reader = BufReader::with_capacity(1 << 20, file);
    let loaded = load::load(&mut srv.keyspace, reader, &srv.config, unix_ms());
    let loaded = loaded.and_then(|mut stats| {
        let codes = std::mem::take(&mut stats.functions);
        super::install_functions(srv, &codes).map(|()| stats).map_err(|msg| load::LoadError { offset: 0, msg })
    });
    match loaded {
        Ok(stats) => {
            log_loaded(&stats);
            Ok(stats)
        }
        Err(e) => Err(io::Error::other(bad_file(path, &e))),
    }
}

fn log_loaded(stats: &LoadStats) {
    crate::log_at!(
        Notice,
        "Done loading RDB, keys loaded: {}, keys expired: {}.",
        stats.keys_loaded,
        stats.keys_expired
    );
}

/// What a damaged file is refused with: which file, where, and why.
fn bad_file(path: &std::path::Path, e: &load::LoadError) -> String {
    format!(
        "Bad RDB file {} at byte offset {}: {}. Refusing to load it: fix or remove the file.",
        path.display(),
        e.offset,
        e.msg
    )
}

/// Write a snapshot for replicas onto `out` (a socket, in the replication
/// child), marked with its place in the replication stream.
pub fn write_for_replicas<W: io::Write>(srv: &Server, out: W, repl: save::ReplAux) -> io::Result<W> {
    let opts = save::SaveOpts { repl: Some(repl), ..opts(srv) };
    save::write_rdb(&srv.keyspace, &super::function_codes(srv), out, opts, used_mem())
}

/// Save the RDB file for replicas (disk-based synchronization, in the
/// replication child): the usual file, marked with its stream position.
pub fn save_for_replicas(srv: &Server, repl: save::ReplAux) -> io::Result<PathBuf> {
    let opts = save::SaveOpts { repl: Some(repl), ..opts(srv) };
    let functions = super::function_codes(srv);
    save::save_to_file(&srv.keyspace, &functions, &srv.config.dir, &srv.config.dbfilename, opts, used_mem())?;
    Ok(rdb_path(srv))
}

/// Load a snapshot received from our primary into the (emptied) dataset;
/// returns the replication position it carries, if any.
pub fn load_from_primary(srv: &mut Server, path: &std::path::Path) -> io::Result<Option<(String, i64)>> {
    let file = std::fs::File::open(path)?;
    let mut stats = load_file(srv, file, path)?;
    let repl = stats.repl.take();
    // Only a primary restarting from its file propagates those DELs.
    stats.expired_keys = Vec::new();
    rdb_mut(&mut srv.persistence).last_load = stats;
    Ok(repl)
}

/// Finish a snapshot replication read straight off the primary's link
/// into the keyspace: install its function libraries (the caller flushed
/// ours) and keep its statistics for INFO. Returns its replication position.
pub fn finish_socket_load(srv: &mut Server, mut stats: LoadStats) -> Result<Option<(String, i64)>, String> {
    let codes = std::mem::take(&mut stats.functions);
    super::install_functions(srv, &codes)?;
    crate::log_at!(
        Notice,
        "Done loading RDB, keys loaded: {}, keys expired: {}.",
        stats.keys_loaded,
        stats.keys_expired
    );
    let repl = stats.repl.take();
    stats.expired_keys = Vec::new();
    rdb_mut(&mut srv.persistence).last_load = stats;
    Ok(repl)
}

/// Save in the foreground (SAVE, SHUTDOWN, FLUSHALL, DEBUG RELOAD).
pub fn save_sync(srv: &mut Server) -> io::Result<()> {
    let dir = srv.config.dir.clone();
    let functions = super::function_codes(srv);
    match save::save_to_file(&srv.keyspace, &functions, &dir, &srv.config.dbfilename, opts(srv), used_mem()) {
        Ok(()) => {
            crate::log_at!(Notice, "DB saved on disk");
            srv.dirty = 0;
            rdb_mut(&mut srv.persistence).last_save = unix_ms() / 1000;
            srv.denials.bgsave_failed = false;
            Ok(())
        }
        Err(e) => {
            crate::log_at!(Warning, "{e}");
            Err(e)
        }
    }
}

/// Fork a child that writes the snapshot; the event loop keeps serving.
pub fn bgsave(srv: &mut Server) -> io::Result<i32> {
    let now = unix_ms();
    rdb_mut(&mut srv.persistence).last_bgsave_try = now / 1000;
    rdb_mut(&mut srv.persistence).dirty_at_fork = srv.dirty;
    rdb_mut(&mut srv.persistence).saves += 1;
    let (dir, name, opts, mem) = (srv.config.dir.clone(), srv.config.dbfilename.clone(), opts(srv), used_mem());
    let (keyspace, functions) = (&srv.keyspace, super::function_codes(srv));
    let pipe = cow::pipe();
    let save = || save::save_to_file(keyspace, &functions, &dir, &name, opts, mem);
    let spawned = srv.children.spawn(ChildKind::Rdb, || match save() {
        Ok(()) => {
            crate::log_at!(Notice, "DB saved on disk");
            cow::report(pipe);
            true
        }
        Err(e) => {
            crate::log_at!(Warning, "{e}");
            false
        }
    });
    rdb_mut(&mut srv.persistence).cow_fd = cow::parent_end(pipe, spawned.is_ok());
    match spawned {
        Ok(pid) => {
            crate::log_at!(Notice, "Background saving started by pid {pid}");
            rdb_mut(&mut srv.persistence).bgsave_started_ms = now;
            Ok(pid)
        }
        Err(e) => {
            srv.denials.bgsave_failed = true;
            crate::log_at!(Warning, "Can't save in background: fork: {e}");
            Err(e)
        }
    }
}

/// Remove what a killed or failed child left behind.
pub fn remove_temp(srv: &Server, pid: i32) {
    let _ = std::fs::remove_file(srv.config.dir.join(format!("temp-{pid}.rdb")));
}

/// A BGSAVE child finished.
pub fn child_done(srv: &mut Server, exit: &ChildExit) {
    rdb_mut(&mut srv.persistence).last_bgsave_secs = exit.elapsed.as_secs() as i64;
    let cow = cow::collect(rdb_mut(&mut srv.persistence).cow_fd.take());
    if exit.ok {
        rdb_mut(&mut srv.persistence).last_cow = cow.unwrap_or(0);
        crate::log_at!(Notice, "Background saving terminated with success");
        srv.dirty = srv.dirty.saturating_sub(rdb_mut(&mut srv.persistence).dirty_at_fork);
        rdb_mut(&mut srv.persistence).last_save = unix_ms() / 1000;
        srv.denials.bgsave_failed = false;
        return;
    }
    remove_temp(srv, exit.pid);
    match exit.signal {
        Some(sig) => {
            crate::log_at!(Warning, "Background saving terminated by signal {sig}");
            // SIGUSR1 is how the server itself stops a child: not a failure.
            if sig != libc::SIGUSR1 {
                srv.denials.bgsave_failed = true;
            }
        }
        None => {
            crate::log_at!(Warning, "Background saving error");
            srv.denials.bgsave_failed = true;
        }
    }
}

/// Save points and scheduled BGSAVEs, as Redis's serverCron checks them.
pub fn cron(srv: &mut Server, now_ms: i64) {
    if srv.children.running().is_some() {
        return;
    }
    let now = now_ms / 1000;
    let may_retry =
        !srv.denials.bgsave_failed || now - rdb_mut(&mut srv.persistence).last_bgsave_try > BGSAVE_RETRY_DELAY;
    if !may_retry {
        return;
    }
    if rdb_mut(&mut srv.persistence).scheduled {
        rdb_mut(&mut srv.persistence).scheduled = false;
        let _ = bgsave(srv);
        return;
    }
    let due = srv
        .config
        .save
        .iter()
        .find(|&&(secs, changes)| srv.dirty >= changes && now - rdb_mut(&mut srv.persistence).last_save > secs as i64)
        .copied();
    if let Some((secs, changes)) = due {
        crate::log_at!(Notice, "{changes} changes in {secs} seconds. Saving...");
        let _ = bgsave(srv);
    }
}

/// The save SHUTDOWN owes: with save points configured or `SAVE`, never
/// with `NOSAVE`. An error keeps the server running.
pub fn on_shutdown(srv: &mut Server, how: Shutdown) -> io::Result<()> {
    let wanted = match how {
        Shutdown::Save => true,
        Shutdown::NoSave => false,
        Shutdown::Default => !srv.config.save.is_empty(),
    };
    if !wanted {
        return Ok(());
    }
    crate::log_at!(Notice, "Saving the final RDB snapshot before exiting.");
    save_sync(srv).inspect_err(|_| crate::log_at!(Warning, "Error trying to save the DB, can't exit."))
}

/// After FLUSHALL, as Redis 7.0: stop a running BGSAVE (its snapshot is
/// stale) and, with save points configured, save the empty dataset at once.
/// The flush itself still counts as one change afterwards.
pub fn after_flushall(srv: &mut Server) {
    if srv.children.running() == Some(ChildKind::Rdb) {
        if let Some(exit) = srv.children.kill() {
            remove_temp(srv, exit.pid);
            cow::collect(rdb_mut(&mut srv.persistence).cow_fd.take());
        }
    }
    if !srv.config.save.is_empty() && save_sync(srv).is_ok() {
        srv.dirty = 1;
    }
}

/// DEBUG RELOAD: save, empty every db, load the file back.
pub fn debug_reload(srv: &mut Server) -> Result<(), String> {
    if save_sync(srv).is_err() {
        return Err("ERR Error trying to save the DB, check the logs".into());
    }
    for db in srv.keyspace.dbs.iter_mut() {
        drop(db.clear());
    }
    // Redis empties the whole dataset, functions included, before reloading.
    srv.scripting.get_mut::<crate::scripting::Scripting>().functions.flush();
    let path = rdb_path(srv);
    let loaded = std::fs::File::open(&path).and_then(|f| load_file(srv, f, &path));
    match loaded {
        Ok(stats) => {
            rdb_mut(&mut srv.persistence).last_load = stats;
            crate::log_at!(Warning, "DB reloaded by DEBUG RELOAD");
            Ok(())
        }
        Err(e) => {
            crate::log_at!(Warning, "{e}");
            Err("ERR Error trying to load the RDB dump, check server logs.".into())
        }
    }
}

/// The `rdb_*` fields of INFO persistence, in Redis's order.
pub fn info_fields(srv: &Server, now_ms: i64) -> Vec<(&'static str, String)> {
    let st = rdb_ref(&srv.persistence);
    // As Redis's CHILD_TYPE_RDB, the replication snapshot counts too.
    let running = matches!(srv.children.running(), Some(ChildKind::Rdb | ChildKind::ReplSync));
    let current = if running { (now_ms - st.bgsave_started_ms) / 1000 } else { -1 };
    vec![
        ("rdb_changes_since_last_save", srv.dirty.to_string()),
        ("rdb_bgsave_in_progress", u8::from(running).to_string()),
        ("rdb_last_save_time", st.last_save.to_string()),
        ("rdb_last_bgsave_status", if srv.denials.bgsave_failed { "err" } else { "ok" }.to_string()),
        ("rdb_last_bgsave_time_sec", st.last_bgsave_secs.to_string()),
        ("rdb_current_bgsave_time_sec", current.to_string()),
        ("rdb_saves", st.saves.to_string()),
        ("rdb_last_cow_size", st.last_cow.to_string()),
        ("rdb_last_load_keys_expired", st.last_load.keys_expired.to_string()),
        ("rdb_last_load_keys_loaded", st.last_load.keys_loaded.to_string()),
    ]
}
