//! Loading the primary's snapshot straight off the link, as Redis does
//! with `repl-diskless-load swapdb|on-empty-db`: the handshake thread
//! decodes the `$EOF:<mark>` or `$<len>` framed RDB as it arrives into a
//! keyspace of its own, which the event loop swaps in once it is whole.
//!
//! Why a thread and not Redis's load in the main thread (which processes
//! events every `loading-process-events-interval-bytes`): the RDB decoder
//! reads through `std::io::Read`, so it runs unchanged over the blocking
//! socket the handshake thread already owns, and the event loop keeps its
//! ordinary turns meanwhile (PING, INFO, SCRIPT KILL, -LOADING replies, or
//! the old data for an `async_loading` swapdb) with no re-entrant event
//! processing inside a load. A link that breaks midway costs only the
//! half-built keyspace, dropped on the thread; the old data never changed.
use std::io::{self, BufRead, Read};

use crate::config::Config;
use crate::engine::Keyspace;
use crate::persistence::{LoadError, LoadStats};

/// How the thread loads: with which settings, and for which mode.
pub struct SocketLoad {
    pub cfg: Box<Config>,
    /// `swapdb`: the old data stays until the new is complete (else
    /// `on-empty-db`, which Redis flushes first: there was nothing).
    pub swapdb: bool,
}

/// A snapshot decoded off the link, for the event loop to swap in.
pub struct Loaded {
    pub keyspace: Keyspace,
    pub stats: LoadStats,
    pub swapdb: bool,
}

/// What the thread reports while it loads (the link's progress, which
/// INFO reads).
pub trait Watch {
    /// Decoding has started (`loading` begins).
    fn started(&self);
    /// `read` of `total` bytes (-1: unknown) are in.
    fn read(&self, total: i64, read: u64);
    /// The link was given up: its failure is no news.
    fn cancelled(&self) -> bool;
}

/// A failure the thread has logged as Redis does; nothing more to say.
#[derive(Debug)]
pub struct Logged;

impl std::fmt::Display for Logged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("loading the snapshot from the socket failed")
    }
}

impl std::error::Error for Logged {}

/// The link as the RDB decoder reads it: bounded by `$<len>` if given,
/// noting progress for INFO, and remembering whether the connection
/// (rather than the data) failed.
struct Feed<'a, R> {
    inner: &'a mut R,
    left: Option<u64>,
    read: u64,
    noted: u64,
    total: i64,
    progress: &'a dyn Watch,
    broken: bool,
    /// Redis loads in its main thread, under its watchdog, whose timer
    /// only the cron re-arms: the whole load is one piece of work, reported
    /// once it outlasts `watchdog-period` however steadily data arrives.
    /// So here: busy from the start, never re-marked by a read.
    _watched: crate::watchdog::Work,
}

impl<R: Read> Feed<'_, R> {
    fn note(&mut self) {
        self.noted = self.read;
        self.progress.read(self.total, self.read);
    }
}

impl<R: Read> Read for Feed<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = match self.left {
            Some(0) => return Ok(0),
            Some(n) => buf.len().min(n as usize),
            None => buf.len(),
        };
        match self.inner.read(&mut buf[..want]) {
            Ok(0) => {
                self.broken = true;
                Ok(0)
            }
            Ok(n) => {
                self.read += n as u64;
                if let Some(left) = self.left.as_mut() {
                    *left -= n as u64;
                }
                // The lock is cheap, but not per RDB item.
                if self.read - self.noted >= 256 << 10 {
                    self.note();
                }
                Ok(n)
            }
            Err(e) => {
                self.broken |= e.kind() != io::ErrorKind::Interrupted;
                Err(e)
            }
        }
    }
}

/// Decode the snapshot whose bulk header is `header` off `r` into a new
/// keyspace. A failure is logged here with Redis's lines.
pub fn receive<R: BufRead>(r: &mut R, header: &str, load: &SocketLoad, progress: &dyn Watch) -> io::Result<Loaded> {
    let (mark, left) = if let Some(mark) = header.strip_prefix("$EOF:") {
        if mark.len() != 40 {
            return Err(io::Error::other("bad EOF mark from master"));
        }
        (Some(mark.as_bytes().to_vec()), None)
    } else if let Some(len) = header.strip_prefix('$').and_then(|l| l.parse::<u64>().ok()) {
        (None, Some(len))
    } else {
        return Err(io::Error::other(format!("Bad protocol from MASTER, the first byte is not '$': {header}")));
    };
    if !load.swapdb {
        crate::log_at!(Notice, "MASTER <-> REPLICA sync: Flushing old data");
    }
    crate::log_at!(Notice, "MASTER <-> REPLICA sync: Loading DB in memory");
    let total = left.map_or(-1, |l| l as i64);
    progress.started();
    let watched = crate::watchdog::Work::on_this_thread();
    watched.busy(crate::server::unix_ms());
    let mut feed = Feed { inner: r, left, read: 0, noted: 0, total, progress, broken: false, _watched: watched };
    feed.note();
    let mut keyspace = Keyspace::new(load.cfg.databases.max(1));
    let delay = crate::persistence::key_load_delay(&load.cfg);
    let (mut keys, now) = (0i64, crate::server::unix_ms());
    let loaded = crate::persistence::load_rdb_stream(&mut keyspace, &mut feed, &load.cfg, now, || {
        keys += 1;
        crate::persistence::key_delay(delay, keys);
    });
    let failed = match loaded {
        Ok(stats) => match check_mark(&mut feed, mark.as_deref()) {
            Ok(()) => return Ok(Loaded { keyspace, stats, swapdb: load.swapdb }),
            Err(e) => e,
        },
        Err(e) => {
            if progress.cancelled() {
                return Err(io::Error::other(Logged));
            }
            report(&e, feed.broken);
            io::Error::other(e.msg)
        }
    };
    crate::log_at!(Warning, "Failed trying to load the MASTER synchronization DB from socket: {failed}");
    // Dropped on this thread, so "in background" holds.
    drop(keyspace);
    if load.swapdb {
        crate::log_at!(Notice, "MASTER <-> REPLICA sync: Discarding temporary DB in background");
    }
    Err(io::Error::other(Logged))
}

/// After the RDB's own end, the `$EOF:` framing's mark must follow.
fn check_mark<R: Read>(feed: &mut Feed<'_, R>, mark: Option<&[u8]>) -> Result<(), io::Error> {
    let Some(mark) = mark else { return Ok(()) };
    let mut got = [0u8; 40];
    match feed.read_exact(&mut got) {
        Ok(()) if got.as_slice() == mark => {
            feed.note();
            Ok(())
        }
        _ => {
            crate::log_at!(Warning, "Replication stream EOF marker is broken");
            Err(io::Error::other("EOF marker is broken"))
        }
    }
}

/// Redis's `rdbReportError` lines: a short read off the socket is taken
/// for a connection error (and the replica goes on); anything else means
/// the data was corrupt.
fn report(e: &LoadError, broken: bool) {
    let head = format!("Internal error in RDB reading offset {}, function at rdbLoadRio -> ", e.offset);
    if broken {
        crate::log_at!(
            Warning,
            "{head}Unexpected EOF reading RDB file. Failure loading rdb format from socket, assuming connection error, resuming operation."
        );
    } else {
        crate::log_at!(Warning, "{head}{}. Failure loading rdb format", e.msg);
    }
}
