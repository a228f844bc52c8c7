//! The append-only file, Redis 7 multi-part layout: `dir/appenddirname`
//! holds a base file, incremental files and a manifest naming them.
//!
//! This module owns the AOF state (in the server's `persistence` part): the
//! buffer the change stream hands every write into (it is the stream's
//! first consumer, see `server::changes`), writing and fsyncing it once per
//! event-loop turn before that turn's replies leave (group commit, here and
//! in `fsync`), loading at start (`load`), and rewrites in a forked child
//! (`rewrite`). The seam functions (`load_at_start`, `child_done`, `cron`,
//! `on_shutdown`) are called by `persistence`.
mod commit;
mod fsync;
mod load;
pub mod manifest;
mod rewrite;
mod stream;

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{aof_mut, aof_ref, feeding};
use crate::config::{Appendfsync, Config};
use crate::server::child::ChildExit;
use crate::server::Server;
use manifest::Manifest;
pub use rewrite::{auto_gc_changed, start_rewrite};

/// Redis's `aof_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    /// Not appending.
    #[default]
    Off,
    /// Turned on at run time: the first base is being written.
    WaitRewrite,
    /// Appending.
    On,
}

/// Everything the AOF keeps between commands.
#[derive(Default)]
pub struct Aof {
    /// Off, waiting for the first base, or on (INFO `aof_enabled`).
    pub state: State,
    /// Commands not yet written to the incr file.
    pub buf: Vec<u8>,
    /// The incr file being appended to.
    pub(crate) file: Option<File>,
    /// Its name; the temp incr file while waiting for the first rewrite.
    pub(crate) incr_name: String,
    pub(crate) manifest: Manifest,
    pub(crate) syncer: fsync::Syncer,
    /// `always`: the thread that writes and fsyncs each turn's commands.
    pub(crate) committer: commit::Committer,
    /// strerror of the last failed write or fsync: writes get MISCONF.
    pub write_error: Option<String>,
    /// Bytes written since the last fsync started.
    pub(crate) unsynced: bool,
    pub(crate) last_fsync: Option<Instant>,
    /// A write is being postponed because an fsync is still running.
    pub(crate) postponed_since: Option<Instant>,
    /// Replies held back since, to fold more of a pipeline into one fsync.
    pub(crate) deferred_since: Option<Instant>,
    /// Bytes of the base file (INFO `aof_base_size`).
    pub base_size: u64,
    /// Bytes of base + incr files, written or handed to the commit thread.
    pub current_size: u64,
    /// Size at the last rewrite, for the automatic-rewrite growth rule.
    pub(crate) rewrite_base_size: u64,
    /// A rewrite starts once the running child is done.
    pub rewrite_scheduled: bool,
    pub(crate) rewrite_started: Option<Instant>,
    /// Duration of the last rewrite (None: never ran).
    pub last_rewrite_secs: Option<i64>,
    pub last_rewrite_failed: bool,
    /// Rewrites completed (INFO `aof_rewrites`).
    pub rewrites: u64,
    pub consecutive_failures: u64,
    /// Writes done without waiting for a slow everysec fsync.
    pub delayed_fsync: u64,
    /// The second of the last `#TS:` annotation (Redis's
    /// `aof_cur_timestamp`).
    pub(crate) annotated_sec: i64,
    /// After repeated failures, automatic rewrites wait until this second,
    /// the wait doubling each time (Redis's `aofRewriteLimited`).
    pub(crate) limit_until: i64,
    pub(crate) limit_minutes: i64,
}

/// DEBUG AOF-FLUSH-SLEEP: microseconds every write of the AOF buffer waits
/// first, so tests can widen the window between a command and its write.
static FLUSH_SLEEP_US: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub fn set_flush_sleep(micros: u64) {
    FLUSH_SLEEP_US.store(micros, std::sync::atomic::Ordering::Relaxed);
}

fn flush_sleep() {
    let us = FLUSH_SLEEP_US.load(std::sync::atomic::Ordering::Relaxed);
    if us > 0 {
        std::thread::sleep(Duration::from_micros(us));
    }
}

/// The directory of the AOF files.
pub fn aof_dir(cfg: &Config) -> PathBuf {
    let dir = if cfg.dir.as_os_str().is_empty() { PathBuf::from(".") } else { cfg.dir.clone() };
    dir.join(&cfg.appenddirname)
}

/// The manifest's file name.
pub fn manifest_name(cfg: &Config) -> String {
    format!("{}.manifest", cfg.appendfilename)
}

/// The text of the OS error, as C's strerror (used in MISCONF replies).
pub fn strerror(e: &io::Error) -> String {
    match e.raw_os_error() {
        // SAFETY: strerror returns a valid NUL-terminated static string.
        Some(code) => unsafe { std::ffi::CStr::from_ptr(libc::strerror(code)) }.to_string_lossy().into_owned(),
        None => e.to_string(),
    }
}

/// Replay the append-only file(s), then open them for appending.
pub fn load_at_start(srv: &mut Server, reg: &'static crate::dispatch::Registry) -> io::Result<()> {
    load_marked(srv, reg).map_err(io::Error::other)?;
    load::open_on_start(srv).map_err(|e| io::Error::other(format!("Can't open the append-only file: {e}")))?;
    enable_feeding(srv);
    Ok(())
}

/// Replay the files with the server marked as loading: a script in them
/// that runs long lets clients in, and they get LOADING as in Redis.
fn load_marked(srv: &mut Server, reg: &'static crate::dispatch::Registry) -> Result<(), String> {
    let before = std::mem::replace(&mut srv.denials.loading, crate::server::Loading::Blocking);
    let loaded = load::load_at_start(srv, reg);
    srv.denials.loading = before;
    loaded
}

/// Start appending what the change stream hands on (expired keys are
/// tracked from now on, so their deletions reach the file too).
pub(crate) fn enable_feeding(srv: &mut Server) {
    srv.changes.consumers.aof = Some(append_changes);
    srv.changes.reselect();
    // SAFETY: ignoring SIGXFSZ so a file-size limit fails the write with
    // EFBIG (handled as a write error) instead of killing the server.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    srv.update_expired_tracking();
}

/// Stop appending (AOF turned off).
pub(crate) fn disable_feeding(srv: &mut Server) {
    srv.changes.consumers.aof = None;
    srv.update_expired_tracking();
}

/// The change stream's AOF consumer: the commands that replay a finished
/// command (or block), written at the end of the turn.
fn append_changes(srv: &mut Server, commands: &[u8]) {
    let annotate = srv.config.aof_timestamp_enabled;
    let aof = aof_mut(&mut srv.persistence);
    if annotate {
        // Once per second at most, ahead of that second's first commands.
        let now = unix_secs();
        if aof.annotated_sec < now {
            aof.annotated_sec = now;
            aof.buf.extend_from_slice(timestamp_annotation(now).as_bytes());
        }
    }
    aof.buf.extend_from_slice(commands);
}

/// Seconds since the epoch.
fn unix_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// `aof-timestamp-enabled`'s line (a loader skips it as any `#` line).
pub(crate) fn timestamp_annotation(secs: i64) -> String {
    format!("#TS:{secs}\r\n")
}

/// Write and fsync the buffer as `policy` says (see [`Aof::flush`]), and
/// keep the server's MISCONF state in step with how that went.
fn flush(srv: &mut Server, policy: Appendfsync, force: bool) {
    aof_mut(&mut srv.persistence).flush(policy, force);
    sync_denial(srv);
}

/// Writes are refused with MISCONF while the AOF can't be written.
fn sync_denial(srv: &mut Server) {
    let aof = aof_ref(&srv.persistence);
    let refuse = aof.state != State::Off && aof.write_error.is_some();
    if refuse || srv.denials.aof_error.is_some() {
        srv.denials.aof_error = aof.write_error.clone().filter(|_| refuse);
    }
}

/// DEBUG LOADAOF: write out what is buffered, empty the dataset and replay
/// the files the manifest names, as Redis does (nothing replayed is written
/// to the AOF again).
pub fn debug_loadaof(srv: &mut Server, reg: &'static crate::dispatch::Registry) -> Result<(), String> {
    if aof_ref(&srv.persistence).state != State::Off {
        flush(srv, Appendfsync::Always, true);
        wait_commits(srv);
    }
    for db in srv.keyspace.dbs.iter_mut() {
        drop(db.clear());
    }
    srv.scripting.get_mut::<crate::scripting::Scripting>().functions.flush();
    let feeding = srv.changes.consumers.aof.take();
    let loaded = load_marked(srv, reg);
    srv.changes.consumers.aof = feeding;
    loaded?;
    srv.dirty = 0;
    crate::log_at!(Warning, "Append Only File loaded by DEBUG LOADAOF");
    Ok(())
}

/// An AOF rewrite child finished.
pub fn child_done(srv: &mut Server, exit: &ChildExit) {
    rewrite::child_done(srv, exit);
}

/// Rewrite triggers, retrying a failed write, and the once-a-second fsync.
pub fn cron(srv: &mut Server, _now_ms: i64) {
    if let Some(e) = aof_mut(&mut srv.persistence).syncer.take_error() {
        crate::log_at!(Warning, "Fsync of the AOF file failed: {}", strerror(&e));
        aof_mut(&mut srv.persistence).write_error = Some(strerror(&e));
        sync_denial(srv);
    }
    if feeding(srv) && !async_commit(srv) {
        // Retries a failed write, and starts the everysec fsync when idle.
        let retry = aof_ref(&srv.persistence).write_error.is_some();
        flush(srv, srv.config.appendfsync, retry);
    }
    rewrite::cron(srv);
}

/// Flush and fsync what is buffered before the process exits.
pub fn on_shutdown(srv: &mut Server) -> io::Result<()> {
    rewrite::remove_temp_base(srv);
    if !feeding(srv) {
        return Ok(());
    }
    crate::log_at!(Notice, "Calling fsync() on the AOF file.");
    flush(srv, Appendfsync::Always, true);
    if let Some(e) = &aof_mut(&mut srv.persistence).write_error {
        return Err(io::Error::other(format!("Error writing the AOF file: {e}")));
    }
    Ok(())
}

/// Before this turn's replies leave: write (and with `always` fsync) what
/// the turn's commands fed. Called once per turn, before `flush_all`.
pub fn before_sleep(srv: &mut Server) {
    if feeding(srv) && !aof_mut(&mut srv.persistence).buf.is_empty() {
        flush(srv, srv.config.appendfsync, false);
    }
}

/// With `always`, while connections still have input read but not yet
/// executed (a big pipeline is run in slices, one per turn), keep the turn's
/// writes and replies back so the whole batch costs one write and one
/// fdatasync. Bounded in time and size; true means "don't flush this turn".
pub fn defer_group_commit(srv: &mut Server, more_input: bool) -> bool {
    let aof = aof_mut(&mut srv.persistence);
    if !more_input || aof.buf.is_empty() || srv.config.appendfsync != Appendfsync::Always {
        aof.deferred_since = None;
        return false;
    }
    let since = *aof.deferred_since.get_or_insert_with(Instant::now);
    if since.elapsed() < GROUP_COMMIT_MAX_WAIT && aof.buf.len() < GROUP_COMMIT_MAX_BYTES {
        return true;
    }
    aof.deferred_since = None;
    false
}

/// Longest a batch's replies wait for the rest of the batch.
const GROUP_COMMIT_MAX_WAIT: Duration = Duration::from_millis(10);
/// Most bytes one group commit gathers before writing anyway.
const GROUP_COMMIT_MAX_BYTES: usize = 16 << 20;

/// Called before any reply is written to a socket: with `always`, nothing
/// may leave while fed commands are not on disk (replies written on
/// writable events, shutdown).
#[inline]
pub fn before_reply(srv: &mut Server) {
    if srv.config.appendfsync != Appendfsync::Always {
        return;
    }
    // A failed write with `always` exits: the MISCONF state can't change here.
    let aof = aof_mut(&mut srv.persistence);
    if !aof.buf.is_empty() || aof.committer.in_flight() {
        aof.flush(Appendfsync::Always, true);
    }
}

/// Let the commit thread wake the event loop when a commit is on disk.
pub fn set_waker(srv: &mut Server, waker: std::sync::Arc<mio::Waker>) {
    aof_mut(&mut srv.persistence).committer.waker = Some(waker);
}

/// Whether each turn is committed by the commit thread (`always`): the
/// event loop then holds a turn's replies until [`committed_epoch`] reaches
/// the epoch [`start_commit`] returned for it.
pub fn async_commit(srv: &Server) -> bool {
    feeding(srv) && srv.config.appendfsync == Appendfsync::Always && aof_ref(&srv.persistence).committer.waker.is_some()
}

/// Block until every commit handed to the commit thread is on disk.
pub fn wait_commits(srv: &Server) {
    aof_ref(&srv.persistence).committer.wait();
}

/// The last epoch written and fsynced.
pub fn committed_epoch(srv: &Server) -> u64 {
    aof_ref(&srv.persistence).committer.done()
}

/// A commit is being written or fsynced.
pub fn commit_in_flight(srv: &Server) -> bool {
    aof_ref(&srv.persistence).committer.in_flight()
}

/// Hand what this turn fed to the commit thread; the epoch its replies
/// wait for, or None if nothing was fed (everything is durable already).
pub fn start_commit(srv: &mut Server) -> Option<u64> {
    let aof = aof_mut(&mut srv.persistence);
    if aof.buf.is_empty() {
        return None;
    }
    let file = aof.file.as_ref()?;
    let keep = aof.buf.capacity().min(1 << 20);
    let data = std::mem::replace(&mut aof.buf, Vec::with_capacity(keep));
    aof.current_size += data.len() as u64;
    match aof.committer.submit(file, data) {
        Ok(epoch) => Some(epoch),
        Err(e) => {
            crate::log_at!(Warning, "Can't hand the AOF to its commit thread: {e}. Exiting...");
            std::process::exit(1);
        }
    }
}

/// CONFIG SET appendonly: turn appending on (through a rewrite) or off.
pub fn set_enabled(srv: &mut Server, on: bool) -> Result<(), String> {
    match (on, aof_mut(&mut srv.persistence).state) {
        (true, State::Off) => rewrite::start_on_runtime(srv),
        (false, State::On | State::WaitRewrite) => {
            stop(srv);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Stop appending: flush and fsync, close, kill a rewrite child.
fn stop(srv: &mut Server) {
    if feeding(srv) {
        flush(srv, Appendfsync::Always, true);
    }
    if srv.children.running() == Some(crate::server::child::ChildKind::AofRewrite) {
        if let Some(exit) = srv.children.kill() {
            crate::log_at!(Notice, "Killing running AOF rewrite child: {}", exit.pid);
            rewrite::remove_temp_base(srv);
        }
    }
    if aof_mut(&mut srv.persistence).state == State::WaitRewrite {
        let _ = std::fs::remove_file(aof_dir(&srv.config).join(&aof_mut(&mut srv.persistence).incr_name));
    }
    disable_feeding(srv);
    let aof = aof_mut(&mut srv.persistence);
    aof.file = None;
    aof.buf.clear();
    aof.state = State::Off;
    aof.rewrite_scheduled = false;
    aof.write_error = None;
    sync_denial(srv);
}

impl Aof {
    /// Write the buffer, then fsync as `policy` says. `force` writes even
    /// while an everysec fsync is still running.
    pub(crate) fn flush(&mut self, policy: Appendfsync, force: bool) {
        // Writes stay in order: what the commit thread holds goes first.
        self.committer.wait();
        if self.buf.is_empty() {
            self.maybe_background_fsync(policy);
            return;
        }
        if policy == Appendfsync::Everysec && !force && self.syncer.pending() > 0 {
            // Redis's rule: wait up to 2 s for the running fsync before
            // writing anyway (a write would stall behind it on many kernels).
            let since = *self.postponed_since.get_or_insert_with(Instant::now);
            if since.elapsed() < Duration::from_secs(2) {
                return;
            }
            self.delayed_fsync += 1;
            crate::log_at!(
                Notice,
                "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer without waiting \
                 for fsync to complete, this may slow down Volley."
            );
        }
        self.postponed_since = None;
        let Some(file) = self.file.as_mut() else { return };
        flush_sleep();
        let (written, err) = write_some(file, &self.buf);
        if let Some(e) = err {
            self.write_failed(policy, written, &e);
            return;
        }
        self.current_size += written as u64;
        self.buf.clear();
        if self.buf.capacity() > 4 << 20 {
            self.buf.shrink_to(1 << 20);
        }
        self.unsynced = true;
        if policy == Appendfsync::Always {
            self.fsync_now();
        } else {
            self.maybe_background_fsync(policy);
        }
        if self.write_error.take().is_some() {
            crate::log_at!(Warning, "AOF write error looks solved, Volley can write again.");
        }
    }

    /// fsync in the loop (`always`): a failure exits, as in Redis, because
    /// the replies of the turn's writes must not be sent.
    fn fsync_now(&mut self) {
        let Some(file) = self.file.as_ref() else { return };
        // SAFETY: fdatasync on our own open descriptor.
        if unsafe { libc::fdatasync(file.as_raw_fd()) } != 0 {
            let e = io::Error::last_os_error();
            crate::log_at!(
                Warning,
                "Can't persist AOF for fsync error when the AOF fsync policy is 'always': {}. Exiting...",
                strerror(&e)
            );
            std::process::exit(1);
        }
        self.unsynced = false;
        self.last_fsync = Some(Instant::now());
    }

    /// `everysec`: hand an fsync to the background thread once a second.
    fn maybe_background_fsync(&mut self, policy: Appendfsync) {
        if policy != Appendfsync::Everysec || !self.unsynced || self.syncer.pending() > 0 {
            return;
        }
        if self.last_fsync.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
            return;
        }
        let Some(file) = self.file.as_ref() else { return };
        match self.syncer.request(file) {
            Ok(()) => {
                self.unsynced = false;
                self.last_fsync = Some(Instant::now());
            }
            Err(e) => crate::log_at!(Warning, "Can't start the background AOF fsync: {e}"),
        }
    }

    /// A write failed after `written` bytes: undo the partial write if we
    /// can, remember the error (writes get MISCONF), retry from cron.
    fn write_failed(&mut self, policy: Appendfsync, written: usize, e: &io::Error) {
        if policy == Appendfsync::Always {
            crate::log_at!(
                Warning,
                "Can't recover from AOF write error when the AOF fsync policy is 'always': {}. Exiting...",
                strerror(e)
            );
            std::process::exit(1);
        }
        let mut kept = written;
        if written > 0 {
            if let Some(file) = self.file.as_ref() {
                if file.set_len(self.current_size).is_ok() {
                    kept = 0;
                }
            }
        }
        if kept > 0 {
            // Could not cut it off: those bytes are in the file now.
            self.current_size += kept as u64;
            self.buf.drain(..kept);
        }
        if self.write_error.is_none() {
            crate::log_at!(Warning, "Error writing to the AOF file: {}", strerror(e));
        }
        self.write_error = Some(strerror(e));
    }
}

/// Write as much of `data` as the file takes: (bytes written, error).
fn write_some(file: &mut File, data: &[u8]) -> (usize, Option<io::Error>) {
    let mut done = 0;
    while done < data.len() {
        match file.write(&data[done..]) {
            Ok(0) => return (done, Some(io::Error::from_raw_os_error(libc::ENOSPC))),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (done, Some(e)),
        }
    }
    (done, None)
}

/// INFO persistence's `aof_*` fields, Redis 7.0's names and order.
/// The AOF buffer's allocation.
pub fn buffer_bytes(srv: &Server) -> u64 {
    aof_ref(&srv.persistence).buf.capacity() as u64
}

pub fn info_fields(srv: &Server) -> Vec<(&'static str, String)> {
    let a = aof_ref(&srv.persistence);
    let rewriting = srv.children.running() == Some(crate::server::child::ChildKind::AofRewrite);
    let current = a.rewrite_started.filter(|_| rewriting).map_or(-1, |t| t.elapsed().as_secs() as i64);
    let mut f: Vec<(&'static str, String)> = vec![
        ("aof_enabled", u8::from(a.state != State::Off).to_string()),
        ("aof_rewrite_in_progress", u8::from(rewriting).to_string()),
        ("aof_rewrite_scheduled", u8::from(a.rewrite_scheduled).to_string()),
        ("aof_last_rewrite_time_sec", a.last_rewrite_secs.unwrap_or(-1).to_string()),
        ("aof_current_rewrite_time_sec", current.to_string()),
        ("aof_last_bgrewrite_status", if a.last_rewrite_failed { "err" } else { "ok" }.into()),
        ("aof_rewrites", a.rewrites.to_string()),
        ("aof_rewrites_consecutive_failures", a.consecutive_failures.to_string()),
        ("aof_last_write_status", if a.write_error.is_some() { "err" } else { "ok" }.into()),
        ("aof_last_cow_size", "0".into()),
        ("module_fork_in_progress", "0".into()),
        ("module_fork_last_cow_size", "0".into()),
    ];
    if a.state != State::Off {
        f.extend([
            ("aof_current_size", a.current_size.to_string()),
            ("aof_base_size", a.base_size.to_string()),
            ("aof_pending_rewrite", u8::from(a.rewrite_scheduled).to_string()),
            ("aof_buffer_length", a.buf.len().to_string()),
            ("aof_pending_bio_fsync", a.syncer.pending().to_string()),
            ("aof_delayed_fsync", a.delayed_fsync.to_string()),
        ]);
    }
    f
}
