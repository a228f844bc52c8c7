//! AOF rewrites (BGREWRITEAOF, automatic, and turning AOF on at run time).
//!
//! Multi-part scheme, as Redis 7: at the start the parent opens a new incr
//! file (new writes go there) and forks; the child writes a new base from
//! its copy-on-write snapshot into a temp file. When it exits, the parent
//! renames it into place, writes a manifest naming the new base and the new
//! incr file (temp + rename), and deletes the files it replaced. Nothing
//! written meanwhile is lost: it is in the new incr file.
//!
//! The base is an RDB snapshot (`.base.rdb`) with `aof-use-rdb-preamble yes`,
//! Redis's default, else commands (`.base.aof`).
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::manifest::{fsync_dir, AofFile, FileType};
use super::{aof_dir, manifest_name, State};
use crate::engine::{Keyspace, Value};
use crate::persistence::rdb::save::{key_delay_setting, write_rdb, SaveOpts};
use crate::persistence::{aof_mut, feeding};
use crate::server::child::{ChildExit, ChildKind};
use crate::server::Server;
use resp::encode_command as encode;

/// Elements per command in the base (Redis's AOF_REWRITE_ITEMS_PER_CMD).
const ITEMS_PER_CMD: usize = 64;

fn temp_base_path(srv: &Server, pid: i32) -> PathBuf {
    aof_dir(&srv.config).join(format!("temp-rewriteaof-bg-{pid}.aof"))
}

/// Start a rewrite now: switch appending to a new incr file and fork the
/// child that writes the new base.
pub fn start_rewrite(srv: &mut Server) -> io::Result<()> {
    if srv.children.running().is_some() {
        return Err(io::Error::other("a background child is already running"));
    }
    let dir = aof_dir(&srv.config);
    fs::create_dir_all(&dir).inspect_err(log_start_error)?;
    if feeding(srv) || aof_mut(&mut srv.persistence).state == State::WaitRewrite {
        open_new_incr(srv, &dir).inspect_err(log_start_error)?;
    }
    let (keyspace, dir2, format) = (&srv.keyspace, dir.clone(), base_format(&srv.config));
    let stamp = srv.config.aof_timestamp_enabled;
    let functions = crate::persistence::function_codes(srv);
    let spawned = srv.children.spawn(ChildKind::AofRewrite, move || {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        let path = dir2.join(format!("temp-rewriteaof-bg-{pid}.aof"));
        match write_base(keyspace, &functions, &path, format, stamp) {
            Ok(()) => true,
            Err(e) => {
                crate::log_at!(Warning, "Error writing the AOF base {}: {e}", path.display());
                false
            }
        }
    });
    match spawned {
        Ok(pid) => {
            crate::log_at!(Notice, "Background append only file rewriting started by pid {pid}");
            let aof = aof_mut(&mut srv.persistence);
            aof.rewrite_scheduled = false;
            aof.rewrite_started = Some(std::time::Instant::now());
            if aof.state == State::WaitRewrite {
                super::enable_feeding(srv);
            }
            Ok(())
        }
        Err(e) => {
            log_start_error(&e);
            Err(e)
        }
    }
}

fn log_start_error(e: &io::Error) {
    crate::log_at!(Warning, "Can't rewrite append only file in background: {e}");
}

/// Flush what the old incr file owes, then append to a fresh one. While
/// the first base is pending (AOF just turned on) it is a temp file the
/// manifest doesn't name yet; otherwise it joins the manifest at once.
fn open_new_incr(srv: &mut Server, dir: &Path) -> io::Result<()> {
    if feeding(srv) {
        super::flush(srv, crate::config::Appendfsync::Always, true);
    }
    let cfg = &srv.config;
    let aof = aof_mut(&mut srv.persistence);
    let waiting = aof.state == State::WaitRewrite;
    let mut m = aof.manifest.clone();
    let name = if waiting {
        format!("temp-{}.incr", cfg.appendfilename)
    } else {
        m.add_incr(|seq| format!("{}.{seq}.incr.aof", cfg.appendfilename));
        m.incrs[m.incrs.len() - 1].name.clone()
    };
    let file = OpenOptions::new().create(true).write(true).truncate(true).open(dir.join(&name))?;
    if !waiting {
        m.persist(dir, &manifest_name(cfg))?;
        aof.manifest = m;
    }
    aof.file = Some(file);
    aof.incr_name = name;
    srv.changes.reselect();
    Ok(())
}

/// CONFIG SET appendonly yes: appending starts with a rewrite, as in Redis
/// (scheduled if another child runs).
pub fn start_on_runtime(srv: &mut Server) -> Result<(), String> {
    let dir = aof_dir(&srv.config);
    if let Ok(text) = fs::read_to_string(dir.join(manifest_name(&srv.config))) {
        aof_mut(&mut srv.persistence).manifest = super::Manifest::parse(&text).unwrap_or_default();
    }
    aof_mut(&mut srv.persistence).state = State::WaitRewrite;
    if srv.children.running().is_some() {
        crate::log_at!(
            Notice,
            "AOF was enabled but there is already another background operation. An AOF background was scheduled \
             to start when possible."
        );
        aof_mut(&mut srv.persistence).rewrite_scheduled = true;
        return Ok(());
    }
    if srv.changes.in_atomic() {
        crate::log_at!(
            Warning,
            "AOF was enabled during a transaction. An AOF background was scheduled to start when possible."
        );
        aof_mut(&mut srv.persistence).rewrite_scheduled = true;
        return Ok(());
    }
    if start_rewrite(srv).is_err() {
        aof_mut(&mut srv.persistence).state = State::Off;
        crate::log_at!(Warning, "Redis needs to enable the AOF but can't trigger a background AOF rewrite operation.");
        return Err("Unable to turn on AOF. Check server logs.".into());
    }
    Ok(())
}

/// The RDB options of a base, or None for a base in command form.
pub fn base_format(cfg: &crate::config::Config) -> Option<SaveOpts> {
    cfg.aof_use_rdb_preamble.then_some(SaveOpts {
        compress: cfg.rdbcompression,
        checksum: cfg.rdbchecksum,
        repl: None,
        key_delay_us: key_delay_setting(cfg),
    })
}

/// The file-name suffix of a base written with `format`.
pub fn base_suffix(format: Option<SaveOpts>) -> &'static str {
    if format.is_some() {
        "base.rdb"
    } else {
        "base.aof"
    }
}

/// Write the keyspace to `path` (fsynced): an RDB snapshot when `rdb` says
/// so, else the commands that rebuild it. Keys past their deadline but not
/// yet deleted are written too, with that deadline, as Redis's rewrite
/// does: the incr file that follows may still use them, and their DEL
/// comes through it once they are expired. A base in command form starts
/// with the time of the rewrite when `stamp` (`aof-timestamp-enabled`).
pub fn write_base(
    ks: &Keyspace,
    functions: &[Vec<u8>],
    path: &Path,
    rdb: Option<SaveOpts>,
    stamp: bool,
) -> io::Result<()> {
    if let Some(opts) = rdb {
        let w = BufWriter::with_capacity(1 << 20, File::create(path)?);
        let f = write_rdb(ks, functions, w, opts, 0)?.into_inner().map_err(|e| e.into_error())?;
        return f.sync_all();
    }
    let mut w = BufWriter::with_capacity(1 << 16, File::create(path)?);
    let mut out = Vec::with_capacity(1 << 16);
    if stamp {
        out.extend_from_slice(super::timestamp_annotation(super::unix_secs()).as_bytes());
    }
    for code in functions {
        encode(&mut out, &[b"FUNCTION".as_slice(), b"LOAD", code]);
    }
    for (i, db) in ks.dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        encode(&mut out, &[b"SELECT", i.to_string().as_bytes()]);
        for (key, entry) in db.iter() {
            let at = db.expire_of(key);
            write_value(&mut out, key, &entry.value);
            if let Some(at) = at {
                encode(&mut out, &[b"PEXPIREAT", key, at.to_string().as_bytes()]);
            }
            if out.len() >= 1 << 16 {
                w.write_all(&out)?;
                out.clear();
            }
        }
    }
    w.write_all(&out)?;
    let f = w.into_inner().map_err(|e| e.into_error())?;
    f.sync_all()
}

/// The commands that rebuild one key.
fn write_value(out: &mut Vec<u8>, key: &[u8], value: &Value) {
    match value {
        Value::Str(s) => {
            let mut scratch = Vec::new();
            encode(out, &[b"SET", key, s.bytes(&mut scratch)]);
        }
        Value::Stream(s) => super::stream::rewrite_stream(out, key, s),
        Value::List(l) => {
            let items: Vec<Vec<u8>> = l.iter().map(|e| e.to_vec()).collect();
            batched(out, b"RPUSH", key, items.iter().map(|i| vec![i.as_slice()]));
        }
        Value::Set(s) => {
            let items = s.members();
            batched(out, b"SADD", key, items.iter().map(|i| vec![i.as_slice()]));
        }
        Value::Hash(h) => batched(out, b"HMSET", key, h.iter().map(|(f, v)| vec![f, v])),
        Value::ZSet(z) => {
            let items: Vec<(Vec<u8>, Vec<u8>)> = z
                .items()
                .into_iter()
                .map(|(score, m)| {
                    let mut s = Vec::new();
                    crate::engine::numeric::format_double(&mut s, score);
                    (s, m)
                })
                .collect();
            batched(out, b"ZADD", key, items.iter().map(|(s, m)| vec![s.as_slice(), m.as_slice()]));
        }
    }
}

/// `cmd key item...` with at most [`ITEMS_PER_CMD`] items per command.
fn batched<'a>(out: &mut Vec<u8>, cmd: &[u8], key: &'a [u8], items: impl Iterator<Item = Vec<&'a [u8]>>) {
    let mut args: Vec<&[u8]> = vec![cmd, key];
    let mut n = 0;
    for item in items {
        args.extend(item);
        n += 1;
        if n == ITEMS_PER_CMD {
            encode(out, &args);
            args.truncate(2);
            n = 0;
        }
    }
    if n > 0 {
        encode(out, &args);
    }
}

/// The rewrite child exited: install its base, or clean up after it.
pub fn child_done(srv: &mut Server, exit: &ChildExit) {
    let temp = temp_base_path(srv, exit.pid);
    let secs = exit.elapsed.as_secs() as i64;
    aof_mut(&mut srv.persistence).last_rewrite_secs = Some(secs);
    aof_mut(&mut srv.persistence).rewrite_started = None;
    if !exit.ok {
        let _ = fs::remove_file(&temp);
        match exit.signal {
            Some(sig) => crate::log_at!(Warning, "Background AOF rewrite terminated by signal {sig}"),
            None => crate::log_at!(Warning, "Background AOF rewrite terminated with error"),
        }
        return rewrite_failed(srv);
    }
    if aof_mut(&mut srv.persistence).state == State::Off && !feeding(srv) {
        // BGREWRITEAOF with AOF off: the new base still replaces the old.
        crate::log_at!(Notice, "Background AOF rewrite finished with AOF off");
    }
    match install_base(srv, &temp) {
        Ok(()) => {
            let aof = aof_mut(&mut srv.persistence);
            aof.rewrites += 1;
            aof.consecutive_failures = 0;
            aof.last_rewrite_failed = false;
            if aof.state == State::WaitRewrite {
                aof.state = State::On;
            }
            crate::log_at!(Notice, "Background AOF rewrite terminated with success");
            crate::log_at!(Notice, "Background AOF rewrite finished successfully");
        }
        Err(e) => {
            crate::log_at!(Warning, "Error installing the rewritten AOF base: {e}");
            let _ = fs::remove_file(&temp);
            rewrite_failed(srv);
        }
    }
}

fn rewrite_failed(srv: &mut Server) {
    let dir = aof_dir(&srv.config);
    let aof = aof_mut(&mut srv.persistence);
    aof.last_rewrite_failed = true;
    aof.consecutive_failures += 1;
    if aof.state != State::WaitRewrite {
        return;
    }
    // Appending can't start without a base: try again from cron. What the
    // temp incr file gathered is in no base; the next rewrite's snapshot
    // holds it, so the file goes, as in Redis.
    aof.rewrite_scheduled = true;
    aof.committer.wait();
    aof.buf.clear();
    aof.file = None;
    let name = std::mem::take(&mut aof.incr_name);
    crate::log_at!(Notice, "Removing the temp incr aof file {name} in the background");
    let _ = fs::remove_file(dir.join(&name));
    super::disable_feeding(srv);
}

/// Failures this many times in a row hold automatic rewrites back.
const LIMIT_FAILURES: u64 = 3;
const LIMIT_MAX_MINUTES: i64 = 60;

/// Whether automatic rewrites wait after repeated failures: the first time
/// the threshold is met the wait starts at a minute, and each expired wait
/// that is followed by another failure doubles it, up to an hour.
fn rewrite_limited(srv: &mut Server) -> bool {
    let aof = aof_mut(&mut srv.persistence);
    if aof.consecutive_failures < LIMIT_FAILURES {
        aof.limit_minutes = 0;
        aof.limit_until = 0;
        return false;
    }
    let now = super::unix_secs();
    if aof.limit_until != 0 {
        let waiting = now < aof.limit_until;
        if !waiting {
            aof.limit_until = 0;
        }
        return waiting;
    }
    aof.limit_minutes = (aof.limit_minutes * 2).clamp(1, LIMIT_MAX_MINUTES);
    aof.limit_until = now + aof.limit_minutes * 60;
    crate::log_at!(
        Warning,
        "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {} minutes",
        aof.limit_minutes
    );
    true
}

/// Rename the child's file into the new base, write the manifest naming it
/// and the current incr file, and delete what they replace.
fn install_base(srv: &mut Server, temp: &Path) -> io::Result<()> {
    let appending = feeding(srv);
    let cfg = &srv.config;
    let dir = aof_dir(cfg);
    let aof = aof_mut(&mut srv.persistence);
    let mut m = aof.manifest.clone();
    let seq = m.next_base_seq();
    // The child wrote the format the config named when it started.
    let mut magic = [0u8; 5];
    let rdb = File::open(temp).and_then(|mut f| io::Read::read_exact(&mut f, &mut magic)).is_ok() && &magic == b"REDIS";
    let suffix = if rdb { "base.rdb" } else { "base.aof" };
    let base = AofFile { name: format!("{}.{seq}.{suffix}", cfg.appendfilename), seq, kind: FileType::Base };
    fs::rename(temp, dir.join(&base.name))?;
    let base_size = fs::metadata(dir.join(&base.name))?.len();
    // Every incr file but the one opened at rewrite start is in the base now.
    let keep = appending.then(|| aof.incr_name.clone());
    let (kept, old): (Vec<AofFile>, Vec<AofFile>) = m.incrs.drain(..).partition(|f| Some(&f.name) == keep.as_ref());
    // Newest first, as Redis lists history: these incr files, the base they
    // followed, then what earlier rewrites left (with auto gc off).
    let mut history = old;
    history.extend(m.base.take());
    history.append(&mut m.history);
    m.incrs = kept;
    if aof.state == State::WaitRewrite {
        m.incrs.clear();
        m.add_incr(|seq| format!("{}.{seq}.incr.aof", cfg.appendfilename));
        let name = m.incrs[0].name.clone();
        fs::rename(dir.join(&aof.incr_name), dir.join(&name))?;
        aof.incr_name = name;
    }
    for h in &mut history {
        h.kind = FileType::History;
    }
    m.history = history;
    m.base = Some(base);
    m.persist(&dir, &manifest_name(cfg))?;
    if auto_gc(cfg) {
        delete_history(&mut m, &dir);
        m.persist(&dir, &manifest_name(cfg))?;
    }
    let incr_size: u64 = m.incrs.iter().filter_map(|f| fs::metadata(dir.join(&f.name)).ok()).map(|md| md.len()).sum();
    aof.manifest = m;
    aof.base_size = base_size;
    aof.current_size = base_size + incr_size + aof.buf.len() as u64;
    aof.rewrite_base_size = aof.current_size;
    fsync_dir(&dir)
}

/// `aof-disable-auto-gc yes` keeps the files a rewrite replaced, listed
/// as history, until it is switched off again.
fn auto_gc(cfg: &crate::config::Config) -> bool {
    cfg.other.get("aof-disable-auto-gc").is_none_or(|v| v != "yes")
}

/// Delete the history files and forget them (Redis's aofDelHistoryFiles).
fn delete_history(m: &mut super::Manifest, dir: &Path) {
    for h in m.history.drain(..) {
        crate::log_at!(Notice, "Removing the history file {} in the background", h.name);
        let _ = fs::remove_file(dir.join(&h.name));
    }
}

/// CONFIG SET aof-disable-auto-gc: switching it off deletes the history
/// kept meanwhile at once, as Redis does.
pub fn auto_gc_changed(srv: &mut Server) -> io::Result<()> {
    let cfg = &srv.config;
    let (dir, name) = (aof_dir(cfg), manifest_name(cfg));
    let aof = aof_mut(&mut srv.persistence);
    if !auto_gc(cfg) || aof.manifest.history.is_empty() {
        return Ok(());
    }
    delete_history(&mut aof.manifest, &dir);
    aof.manifest.persist(&dir, &name)
}

/// Remove a rewrite child's leftover file (after it was killed).
pub fn remove_temp_base(srv: &Server) {
    let Ok(entries) = fs::read_dir(aof_dir(&srv.config)) else { return };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with("temp-rewriteaof-bg-") {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Scheduled rewrites, and the automatic one when the AOF grew enough.
pub fn cron(srv: &mut Server) {
    if srv.children.running().is_some() {
        return;
    }
    if aof_mut(&mut srv.persistence).rewrite_scheduled {
        // Failures are logged and leave it scheduled for the next tick.
        if !rewrite_limited(srv) {
            let _ = start_rewrite(srv);
        }
        return;
    }
    let cfg = &srv.config;
    let aof = &aof_mut(&mut srv.persistence);
    if aof.state != State::On
        || cfg.auto_aof_rewrite_percentage == 0
        || aof.current_size < cfg.auto_aof_rewrite_min_size
    {
        return;
    }
    let base = aof.rewrite_base_size.max(1);
    let growth = (aof.current_size.saturating_sub(base)) * 100 / base;
    if growth >= u64::from(cfg.auto_aof_rewrite_percentage) && !rewrite_limited(srv) {
        crate::log_at!(Notice, "Starting automatic rewriting of AOF on {growth}% growth");
        let _ = start_rewrite(srv);
    }
}
