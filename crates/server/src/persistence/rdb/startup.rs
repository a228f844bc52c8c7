//! Loading the RDB file at start while the server already listens, as
//! Redis does: clients connecting meanwhile are answered (`-LOADING` to
//! most commands; INFO, CONFIG GET and the other `loading` commands work),
//! INFO shows `loading:1`, and "Ready to accept connections" is logged once
//! the data is in.
//!
//! Redis loads in its main thread and serves events between chunks of the
//! file; here a thread decodes the file into a keyspace of its own (as a
//! replica's socket load does) and the event loop's cron swaps it in when
//! it is whole, so the loop never runs inside a half-done load. A damaged
//! file stops the server, as it would have before listening.
use std::fs::File;
use std::io::{self, BufReader};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Instant;

use super::load::{self, LoadStats};
use crate::engine::Keyspace;
use crate::server::{unix_ms, Loading, Server};

/// A load running on its thread.
pub struct StartupLoad {
    done: Receiver<Result<(Keyspace, LoadStats), String>>,
    started: Instant,
    /// Redis answers nothing before it has read
    /// `loading-process-events-interval-bytes` of the file: one no longer
    /// than that is in before the first reply here too.
    pub small: bool,
}

/// Start loading `path` on a thread; None when there is no file. Commands
/// are refused with -LOADING from now until [`poll`] swaps the data in.
pub fn start(srv: &mut Server, path: PathBuf) -> io::Result<Option<StartupLoad>> {
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            // Rust appends " (os error N)"; Redis shows strerror alone.
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or_default();
            return Err(io::Error::other(format!("Fatal error loading the DB {}: {text}. Exiting.", path.display())));
        }
    };
    let interval = srv.config.other.get("loading-process-events-interval-bytes").and_then(|v| v.parse::<u64>().ok());
    let small = file.metadata().is_ok_and(|m| m.len() <= interval.unwrap_or(2 << 20));
    let cfg = Box::new(srv.config.clone());
    let (tx, done) = mpsc::channel();
    std::thread::Builder::new().name("rdb-load".into()).spawn(move || {
        let mut keyspace = Keyspace::new(cfg.databases.max(1));
        let delay = crate::persistence::key_load_delay(&cfg);
        let mut keys = 0i64;
        let reader = BufReader::with_capacity(1 << 20, file);
        let loaded = load::load_with(&mut keyspace, reader, &cfg, unix_ms(), || {
            keys += 1;
            crate::persistence::key_delay(delay, keys);
        });
        let sent = match loaded {
            Ok(stats) => Ok((keyspace, stats)),
            Err(e) => Err(super::bad_file(&path, &e)),
        };
        let _ = tx.send(sent);
    })?;
    srv.denials.loading = Loading::Blocking;
    Ok(Some(StartupLoad { done, started: Instant::now(), small }))
}

/// From the cron: once the thread is done, the loaded data replaces the
/// empty keyspace and loading ends (`Some(Ok)`); a damaged file is
/// `Some(Err(message))`, which the caller treats as fatal.
pub fn poll(srv: &mut Server, load: &StartupLoad) -> Option<Result<(), String>> {
    match load.done.try_recv() {
        Err(TryRecvError::Empty) => None,
        Err(TryRecvError::Disconnected) => Some(Err(DIED.into())),
        Ok(received) => Some(finish(srv, load, received)),
    }
}

/// Wait for the load to end, then as [`poll`].
pub fn wait(srv: &mut Server, load: &StartupLoad) -> Result<(), String> {
    match load.done.recv() {
        Err(_) => Err(DIED.into()),
        Ok(received) => finish(srv, load, received),
    }
}

const DIED: &str = "the RDB loading thread died";

fn finish(srv: &mut Server, load: &StartupLoad, received: Result<(Keyspace, LoadStats), String>) -> Result<(), String> {
    let (mut keyspace, mut stats) = received?;
    // Nothing could write meanwhile (-LOADING), so the keyspace is empty;
    // only the data moves: each db's settings (notifications, expired-key
    // tracking) and statistics stay the server's.
    srv.keyspace.swap_data(&mut keyspace);
    drop(keyspace);
    srv.denials.loading = Loading::No;
    let codes = std::mem::take(&mut stats.functions);
    if let Err(msg) = crate::persistence::install_functions(srv, &codes) {
        return Err(format!("Bad RDB file: its functions could not be loaded: {msg}"));
    }
    super::log_loaded(&stats);
    crate::log_at!(Notice, "DB loaded from disk: {:.3} seconds", load.started.elapsed().as_secs_f64());
    crate::persistence::rdb_mut(&mut srv.persistence).last_load = stats;
    Ok(())
}
