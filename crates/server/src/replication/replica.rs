//! The replica's side: REPLICAOF, the link's life (connect, sync,
//! connected, down and retried), loading the primary's snapshot, ACKs
//! every second, and the promotion that REPLICAOF NO ONE is.
use std::time::Duration;

use super::link::{self, Handoff, LinkParams, Outcome, Shared, Snapshot};
use super::socket_load::{Loaded, SocketLoad};
use super::{cfg_num, cfg_str, ensure_backlog, state, state_mut};
use crate::server::{Loading, Server};

/// Where the link to the primary stands.
enum Link {
    /// Not connected; retry from this time (ms).
    Down { retry_at: i64 },
    /// The handshake thread runs.
    Syncing(Shared),
    /// The master client lives in this slot.
    Connected { slot: usize },
}

/// A replica's knowledge of its primary.
pub struct MasterState {
    pub host: String,
    pub port: u16,
    link: Link,
    /// When the link went down (INFO `master_link_down_since_seconds`).
    down_since_ms: Option<i64>,
    /// Offset of the last byte applied from the primary.
    offset: i64,
    last_ack_ms: i64,
    /// The db the primary's stream was in when the link dropped (a
    /// continued stream does not repeat its SELECT).
    stream_db: usize,
    /// How the running handshake loads a snapshot off the socket:
    /// `Some(true)` swapdb, `Some(false)` on-empty-db, `None` via a file.
    socket_load: Option<bool>,
}

impl MasterState {
    pub fn link_up(&self) -> bool {
        matches!(self.link, Link::Connected { .. })
    }

    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The db the primary's stream is in now.
    pub fn stream_db(&self, srv: &Server) -> usize {
        match self.link {
            Link::Connected { slot } => srv.clients.get(slot).map_or(self.stream_db, |c| c.db),
            _ => self.stream_db,
        }
    }

    pub fn applied(&mut self, n: usize) {
        self.offset += n as i64;
    }

    /// ROLE's state word.
    pub fn role_state(&self) -> &'static str {
        match &self.link {
            Link::Down { .. } => "connect",
            Link::Syncing(p) if p.lock().is_ok_and(|g| g.transferring) => "sync",
            Link::Syncing(_) => "handshake",
            Link::Connected { .. } => "connected",
        }
    }

    pub fn info_fields(&self, srv: &Server, now_ms: i64) -> Vec<(&'static str, String)> {
        let last_io = match self.link {
            Link::Connected { slot } => srv.clients.get(slot).map_or(-1, |c| (now_ms - c.last_interaction_ms) / 1000),
            _ => -1,
        };
        let mut f = vec![
            ("master_host", self.host.clone()),
            ("master_port", self.port.to_string()),
            ("master_link_status", if self.link_up() { "up" } else { "down" }.to_string()),
            ("master_last_io_seconds_ago", last_io.to_string()),
        ];
        let transfer = match &self.link {
            Link::Syncing(p) => p.lock().ok().filter(|g| g.transferring).map(|g| (g.total, g.read, g.last_io_ms)),
            _ => None,
        };
        f.push(("master_sync_in_progress", u8::from(transfer.is_some()).to_string()));
        f.push(("slave_read_repl_offset", self.offset.to_string()));
        f.push(("slave_repl_offset", self.offset.to_string()));
        if let Some((total, read, last)) = transfer {
            let perc = if total > 0 { read as f64 / total as f64 * 100.0 } else { 0.0 };
            f.push(("master_sync_total_bytes", total.to_string()));
            f.push(("master_sync_read_bytes", read.to_string()));
            f.push(("master_sync_left_bytes", (total - read).to_string()));
            f.push(("master_sync_perc", format!("{perc:.2}")));
            f.push(("master_sync_last_io_seconds_ago", ((now_ms - last) / 1000).to_string()));
        }
        if !self.link_up() {
            let down = self.down_since_ms.map_or(-1, |t| (now_ms - t) / 1000);
            f.push(("master_link_down_since_seconds", down.to_string()));
        }
        f.push(("slave_priority", cfg_num(srv, "replica-priority", 100).to_string()));
        f.push(("slave_read_only", u8::from(srv.config.replica_read_only).to_string()));
        f.push(("replica_announced", u8::from(super::cfg_yes(srv, "replica-announced", true)).to_string()));
        f
    }
}

/// Whether the snapshot being received counts as loading, as Redis's
/// `readSyncBulkPayload` decides: a load off the socket (`swapdb`, or
/// `on-empty-db` into an empty keyspace) blocks clients, except a
/// `swapdb` load of our own history (same replication id: a full sync
/// after a failed PSYNC), which keeps serving the old data meanwhile.
/// Loading starts with the snapshot's first bytes, not at +FULLRESYNC.
/// The thread loads into a keyspace aside, so the old data is intact
/// either way until the new one is swapped in.
pub fn loading(srv: &Server) -> Loading {
    let Some(m) = state(srv).master.as_ref() else { return Loading::No };
    let Link::Syncing(p) = &m.link else { return Loading::No };
    let Some(replid) = p.lock().ok().filter(|g| g.loading).map(|g| g.replid.clone()) else { return Loading::No };
    match m.socket_load {
        Some(true) if replid == srv.replid => Loading::Async,
        Some(_) => Loading::Blocking,
        None => Loading::No,
    }
}

/// REPLICAOF host port, or NO ONE (`target` None). Returns the reply.
pub fn replicaof(srv: &mut Server, target: Option<(String, u16)>, now_ms: i64) -> String {
    // CONFIG REWRITE writes (or drops) `replicaof` from here.
    srv.config.set_replicaof(target.as_ref().map(|(h, p)| (h.as_str(), *p)));
    let Some((host, port)) = target else {
        if state(srv).master.is_some() {
            promote(srv);
        }
        return "+OK\r\n".into();
    };
    if let Some(m) = &state(srv).master {
        if m.host == host && m.port == port {
            crate::log_at!(Notice, "REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
            return "+OK Already connected to specified master\r\n".into();
        }
    }
    let was_primary = state(srv).master.is_none();
    // A replica that changes primaries may continue the same stream there
    // (PSYNC), in the db the old link was in, as Redis's cached master.
    let stream_db = state(srv).master.as_ref().map_or(0, |m| m.stream_db(srv));
    drop_link(srv);
    if was_primary {
        // Our own history is what a new primary may continue us from.
        ensure_backlog(srv);
        // What blocked clients wait for would now come from the primary.
        srv.blocking
            .fail_all("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)");
    }
    // Sub-replicas stay, as Redis 7.0: they may continue our stream if the
    // new primary continues us; a full sync or a new replid drops them.
    let r = state_mut(srv);
    let offset = r.offset;
    r.master = Some(MasterState {
        host: host.clone(),
        port,
        link: Link::Down { retry_at: 0 },
        down_since_ms: Some(now_ms),
        offset,
        last_ack_ms: 0,
        stream_db,
        socket_load: None,
    });
    srv.denials.readonly_replica = srv.config.replica_read_only;
    srv.set_expire_by_primary(true);
    refresh_stale(srv);
    crate::log_at!(Notice, "Connecting to MASTER {host}:{port}");
    "+OK\r\n".into()
}

/// `replica-serve-stale-data no` refuses most commands while the link to
/// the primary is not up (MASTERDOWN); kept as a flag the guards test.
pub fn refresh_stale(srv: &mut Server) {
    let down = state(srv).master.as_ref().is_some_and(|m| !m.link_up());
    srv.denials.stale_replica = down && !super::cfg_yes(srv, "replica-serve-stale-data", true);
}

/// REPLICAOF NO ONE: a new history that continues the old one (PSYNC2).
fn promote(srv: &mut Server) {
    drop_link(srv);
    let old = srv.replid.clone();
    let r = state_mut(srv);
    r.master = None;
    r.replid2 = old;
    r.second_offset = r.offset + 1;
    srv.change_replid();
    // Our stream continues where the primary's left off, in whatever db
    // that was: the next command must say its own.
    srv.changes.reselect();
    srv.denials.readonly_replica = false;
    srv.set_expire_by_primary(false);
    refresh_stale(srv);
    srv.replica_keys.clear();
    kill_replicas(srv);
}

fn kill_replicas(srv: &mut Server) {
    let slots: Vec<usize> = state(srv).replicas.iter().map(|r| r.slot).collect();
    srv.pending_kills.extend(slots);
}

/// Close the master client (if connected), or cut a running handshake's
/// socket (the primary sees us go at once, as Redis's
/// cancelReplicationHandshake); that thread's result is ignored.
fn drop_link(srv: &mut Server) {
    srv.denials.loading = Loading::No;
    let mut kill = None;
    if let Some(m) = state(srv).master.as_ref() {
        match &m.link {
            Link::Connected { slot } => kill = Some(*slot),
            Link::Syncing(p) => link::cancel(p),
            Link::Down { .. } => {}
        }
    }
    srv.pending_kills.extend(kill);
    if let Some(m) = state_mut(srv).master.as_mut() {
        m.link = Link::Down { retry_at: 0 };
    }
}

/// The master client closed: keep our replid and offset for PSYNC.
pub fn master_gone(srv: &mut Server, slot: usize) {
    let now = crate::server::unix_ms();
    let db = srv.clients.get(slot).map_or(0, |c| c.db);
    if let Some(m) = state_mut(srv).master.as_mut() {
        if m.link_up() {
            m.stream_db = db;
            crate::log_at!(Notice, "Connection with master lost.");
            m.link = Link::Down { retry_at: now + 1000 };
            m.down_since_ms = Some(now);
        }
    }
    refresh_stale(srv);
}

/// Each cron tick: start the handshake when due, ACK every second, drop a
/// silent primary after `repl-timeout`.
pub fn cron(srv: &mut Server, now_ms: i64) {
    let Some(m) = state(srv).master.as_ref() else { return };
    // Once per tick is soon enough to start refusing: the first bytes
    // of a snapshot are read well after +FULLRESYNC anyway.
    if matches!(m.link, Link::Syncing(_)) {
        srv.denials.loading = loading(srv);
    }
    let Some(m) = state(srv).master.as_ref() else { return };
    match m.link {
        Link::Down { retry_at } if now_ms >= retry_at => start_link(srv),
        Link::Connected { slot } => {
            if now_ms - m.last_ack_ms >= 1000 {
                send_ack(srv);
            }
            let timeout = cfg_num(srv, "repl-timeout", 60) * 1000;
            if srv.clients.get(slot).is_some_and(|c| now_ms - c.last_interaction_ms > timeout) {
                crate::log_at!(Warning, "MASTER timeout: no data nor PING received...");
                srv.pending_kills.push(slot);
            }
        }
        _ => {}
    }
}

fn start_link(srv: &mut Server) {
    let user = cfg_str(srv, "masteruser");
    let pass = cfg_str(srv, "masterauth");
    let auth = (!pass.is_empty()).then(|| ((!user.is_empty()).then_some(user), pass));
    let announce_port = cfg_num(srv, "replica-announce-port", 0);
    let announce_ip = cfg_str(srv, "replica-announce-ip");
    let (psync_id, psync_offset) = (srv.replid.clone(), state(srv).offset + 1);
    let Some(m) = state_mut(srv).master.as_mut() else { return };
    let mut params = LinkParams {
        host: m.host.clone(),
        port: m.port,
        auth,
        listening_port: if announce_port > 0 { announce_port as u16 } else { srv.port },
        announce_ip: (!announce_ip.is_empty()).then_some(announce_ip),
        psync_id,
        psync_offset,
        failover: state(srv).handover.asking,
        dir: srv.config.dir.clone(),
        timeout: Duration::from_secs(cfg_num(srv, "repl-timeout", 60).max(1) as u64),
        tls: None,
        socket_load: socket_load(srv),
    };
    if super::cfg_yes(srv, "tls-replication", false) {
        params.tls = srv.tls_client.clone();
        if params.tls.is_none() {
            crate::log_at!(Warning, "Unable to connect to MASTER: TLS is not configured");
            if let Some(m) = state_mut(srv).master.as_mut() {
                m.link = Link::Down { retry_at: crate::server::unix_ms() + 1000 };
            }
            return;
        }
    }
    crate::log_at!(Notice, "MASTER <-> REPLICA sync started");
    let swapdb = params.socket_load.as_ref().map(|l| l.swapdb);
    let shared = link::spawn(params);
    if let Some(m) = state_mut(srv).master.as_mut() {
        m.link = Link::Syncing(shared);
        m.socket_load = swapdb;
    }
}

/// Redis's `useDisklessLoad`: `swapdb` always, `on-empty-db` when there
/// is nothing to lose.
fn socket_load(srv: &Server) -> Option<SocketLoad> {
    let swapdb = match cfg_str(srv, "repl-diskless-load").as_str() {
        "swapdb" => true,
        "on-empty-db" if srv.keyspace.total_keys() == 0 => false,
        _ => return None,
    };
    Some(SocketLoad { cfg: Box::new(srv.config.clone()), swapdb })
}

/// The handshake thread's finished work, for the event loop to adopt.
pub struct MasterLinkReady(Handoff);

/// A finished handshake, if one is waiting (checked every loop turn).
pub fn take_master_link(srv: &mut Server) -> Option<MasterLinkReady> {
    let m = state_mut(srv).master.as_mut()?;
    let Link::Syncing(shared) = &m.link else { return None };
    let (result, refused, in_transfer) = {
        let mut g = shared.lock().ok()?;
        (g.result.take()?, g.psync_refused, g.failed_in_transfer)
    };
    if let Err(e) = &result {
        if !e.is_empty() {
            crate::log_at!(Warning, "{e}");
        }
        // As Redis's cancelReplicationHandshake(1): a transfer that broke
        // is retried at once, a failed handshake at the next second.
        let now = crate::server::unix_ms();
        let retry_at = if in_transfer {
            crate::log_at!(Notice, "Reconnecting to MASTER {}:{} after failure", m.host, m.port);
            now
        } else {
            now + 1000
        };
        m.link = Link::Down { retry_at };
    }
    srv.denials.loading = Loading::No;
    if result.is_err() && refused && state(srv).handover.asking {
        state_mut(srv).handover.answer = Some(false);
    }
    result.ok().map(MasterLinkReady)
}

/// Apply a finished handshake: load the snapshot (full resync) or adopt
/// the primary's new id (continue). Returns the socket and the stream
/// bytes already read, for the event loop to register as the master
/// client; `connected` must then be called with its slot.
pub fn adopt_master_link(srv: &mut Server, ready: MasterLinkReady) -> Result<(link::LinkStream, Vec<u8>), String> {
    let h = ready.0;
    match h.outcome {
        Outcome::Full { replid, offset, rdb } => {
            let loaded = match rdb {
                Snapshot::File(path) => load_file(srv, &path),
                Snapshot::Loaded(l) => swap_in(srv, *l),
            };
            if let Err(e) = loaded {
                if let Some(m) = state_mut(srv).master.as_mut() {
                    m.link = Link::Down { retry_at: crate::server::unix_ms() + 1000 };
                }
                return Err(e);
            }
            srv.replid = replid;
            let r = state_mut(srv);
            r.offset = offset;
            r.replid2 = "0".repeat(40);
            r.second_offset = -1;
            // A new history: the backlog restarts at the snapshot's offset.
            r.backlog = None;
            if let Some(m) = r.master.as_mut() {
                m.stream_db = 0;
            }
            ensure_backlog_for_replica(srv);
            kill_replicas(srv);
            crate::log_at!(Notice, "MASTER <-> REPLICA sync: Finished with success");
        }
        Outcome::Continue { replid } => {
            if let Some(new) = replid.filter(|id| *id != srv.replid) {
                let old = std::mem::replace(&mut srv.replid, new);
                let r = state_mut(srv);
                r.replid2 = old;
                r.second_offset = r.offset + 1;
                kill_replicas(srv);
            }
            ensure_backlog_for_replica(srv);
            crate::log_at!(Notice, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
        }
    }
    if state(srv).handover.asking {
        state_mut(srv).handover.answer = Some(true);
    }
    h.stream.socket().set_nonblocking(true).map_err(|e| e.to_string())?;
    Ok((h.stream, h.leftover))
}

/// Empty the dataset (keys, functions) for the primary's snapshot.
fn flush_for_snapshot(srv: &mut Server) {
    for db in srv.keyspace.dbs.iter_mut() {
        drop(db.clear());
    }
    srv.scripting.get_mut::<crate::scripting::Scripting>().functions.flush();
    srv.replica_keys.clear();
}

/// Load the snapshot the thread received into a file (then kept as our
/// RDB file, as Redis renames it).
fn load_file(srv: &mut Server, rdb: &std::path::Path) -> Result<(), String> {
    crate::log_at!(Notice, "MASTER <-> REPLICA sync: Flushing old data");
    flush_for_snapshot(srv);
    crate::log_at!(Notice, "MASTER <-> REPLICA sync: Loading DB in memory");
    let loaded = crate::persistence::load_from_primary(srv, rdb);
    let target = srv.config.dir.join(&srv.config.dbfilename);
    let _ = std::fs::rename(rdb, target);
    loaded.map(drop).map_err(|e| {
        crate::log_at!(Warning, "Failed trying to load the MASTER synchronization DB from disk: {e}");
        e.to_string()
    })
}

/// Replace the dataset with the one the thread decoded off the link; the
/// old one is dropped on another thread (Redis: "in background").
fn swap_in(srv: &mut Server, l: Loaded) -> Result<(), String> {
    let Loaded { mut keyspace, stats, swapdb } = l;
    if swapdb {
        crate::log_at!(Notice, "MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
    }
    srv.keyspace.swap_data(&mut keyspace);
    std::thread::spawn(move || drop(keyspace));
    srv.scripting.get_mut::<crate::scripting::Scripting>().functions.flush();
    srv.replica_keys.clear();
    if swapdb {
        crate::log_at!(Notice, "MASTER <-> REPLICA sync: Discarding old DB in background");
    }
    // Nothing was saved: the dataset differs from the last save.
    srv.dirty += 1;
    crate::persistence::finish_socket_load(srv, stats).map(drop).map_err(|e| {
        crate::log_at!(Warning, "Failed trying to load the MASTER synchronization DB from socket: {e}");
        e
    })
}

fn ensure_backlog_for_replica(srv: &mut Server) {
    let size = cfg_num(srv, "repl-backlog-size", 1 << 20).max(16) as usize;
    let r = state_mut(srv);
    if r.backlog.is_none() {
        r.backlog = Some(super::backlog::Backlog::new(size, r.offset));
    }
    if let Some(m) = r.master.as_mut() {
        m.offset = r.offset;
    }
    srv.changes.consumers.replicas = Some(super::feed);
    // Expired keys' DELs are collected only while a replay consumer is on.
    srv.update_expired_tracking();
}

/// The event loop registered the master client in `slot`.
pub fn connected(srv: &mut Server, slot: usize, now_ms: i64) {
    if let Some(m) = state_mut(srv).master.as_mut() {
        m.link = Link::Connected { slot };
        m.down_since_ms = None;
        m.last_ack_ms = now_ms;
    }
    refresh_stale(srv);
    send_ack(srv);
}

/// REPLCONF ACK <offset> to the primary (every second, and on GETACK).
pub fn send_ack(srv: &mut Server) {
    let Some(m) = state_mut(srv).master.as_mut() else { return };
    let Link::Connected { slot } = m.link else { return };
    m.last_ack_ms = crate::server::unix_ms();
    let off = m.offset.to_string();
    let mut buf = Vec::new();
    resp::encode_command(&mut buf, &[&b"REPLCONF"[..], b"ACK", off.as_bytes()]);
    srv.pubsub.push(slot, &buf);
}

/// The db a continued stream starts in (from the RDB at start).
pub fn set_stream_db(srv: &mut Server, db: i64) {
    if let Some(m) = state_mut(srv).master.as_mut() {
        m.stream_db = db.max(0) as usize;
    }
}

/// The db the master client starts in: where the stream left off for a
/// continued stream; a full resync's stream starts with SELECT anyway.
pub fn stream_db(srv: &Server) -> usize {
    state(srv).master.as_ref().map_or(0, |m| m.stream_db)
}
