//! Replication, as Redis 7.0 speaks it on the wire (PSYNC2), in both roles.
//!
//! As a primary (`primary`): the change stream's replay bytes — the very
//! bytes the AOF gets — feed the backlog (`backlog`) and every replica's
//! output; PSYNC continues a replica from the backlog or starts a full
//! synchronization, an RDB written by a forked child into a pipe (diskless)
//! or to the RDB file (`transfer`), which the event loop relays to each
//! replica's connection (`relay`); REPLCONF ACKs drive WAIT and `min-replicas-to-write`.
//!
//! As a replica (`link`, `replica`): a thread connects to the primary, does
//! the handshake and PSYNC, and receives the snapshot; the event loop then
//! loads it and adopts the socket as the master client, whose commands are
//! applied and whose stream is proxied, byte for byte, to our own backlog
//! and sub-replicas (chained replication).
//!
//! The state lives in the server as replication's [`Part`]; `net` calls
//! [`cron`], [`turn`], [`client_closed`] and [`applied`], commands call the
//! rest.
mod backlog;
mod failover;
mod link;
mod primary;
mod relay;
mod replica;
mod socket_load;
mod stream;
mod transfer;

pub use failover::{
    abort_command as failover_abort, active as failover_active, psync_request as psync_failover, start as failover,
    Request as FailoverRequest,
};
pub use link::LinkStream;
pub use primary::{replconf, wait, WaitOutcome};

/// PSYNC replid offset (`psync` = None for SYNC): the primary's answer
/// (see [`primary::psync`]); a full synchronization asked for while a
/// snapshot child runs may join it.
pub fn psync(srv: &mut Server, cid: usize, psync: Option<(&[u8], &[u8])>, now_ms: i64) -> Result<Vec<u8>, String> {
    let was_replica = srv.clients.get(cid).is_some_and(|c| c.role == ClientRole::Replica);
    let reply = primary::psync(srv, cid, psync, now_ms)?;
    if !was_replica && primary::waiting(srv).contains(&cid) {
        transfer::attach_or_wait(srv, cid);
    }
    Ok(reply)
}
pub use relay::{drop_retired as drop_retired_pipe, pipe_fd as relay_pipe_fd, Writer as RelayWriter};
pub use replica::MasterLinkReady;
pub use replica::{adopt_master_link, connected as master_connected, replicaof, stream_db, take_master_link};
pub use stream::{buffer_memory, send_stream, stream_pending};
pub use transfer::{after_flushall, relay};

use crate::server::{ClientRole, Part, Server};
use backlog::Backlog;
use primary::Replica;

/// Replication's state in the server.
pub struct Replication {
    /// `master_repl_offset`: the offset of the last stream byte produced
    /// (or, on a replica, applied from the primary).
    pub offset: i64,
    /// The previous replication id and the first offset it does not cover
    /// (PSYNC2: a promoted replica continues its siblings).
    pub replid2: String,
    pub second_offset: i64,
    backlog: Option<Backlog>,
    /// Since when no replica is connected (for `repl-backlog-ttl`).
    idle_since_ms: Option<i64>,
    /// Our replicas, in the order they connected.
    replicas: Vec<Replica>,
    /// A full synchronization in progress (child or file senders).
    sync: Option<transfer::Sync>,
    /// A finished relay's pipe, open until `net` deregistered it.
    retired_pipe: Option<std::os::fd::OwnedFd>,
    /// Replicas waiting for a snapshot to start, due their keepalive newline.
    newlines: Vec<usize>,
    /// Replica slots whose held output may be flushed now.
    release: Vec<usize>,
    /// Stream fed since the loop last scheduled the replicas' writes.
    fed: bool,
    /// Clients blocked in WAIT.
    waits: Vec<primary::Wait>,
    /// WAIT results ready for their clients' re-run.
    wait_done: Vec<(usize, i64)>,
    /// Ask the replicas for an ACK before sleeping (a WAIT blocked).
    want_acks: bool,
    last_ping_ms: i64,
    /// The second in which waiting replicas last got their newline.
    last_newline_s: i64,
    /// When we are a replica: the link to our primary.
    master: Option<replica::MasterState>,
    /// INFO stats: `sync_full`, `sync_partial_ok`, `sync_partial_err`.
    sync_counts: [u64; 3],
    /// What connections said in REPLCONF before their PSYNC.
    announced: std::collections::HashMap<usize, primary::Announced>,
    /// A FAILOVER under way.
    failover: Option<failover::Failover>,
    /// FAILOVER's hand-over link, between `failover` and `replica`.
    handover: Handover,
}

/// The link a FAILOVER starts asks its target to take over (PSYNC ...
/// FAILOVER); the link reports how that was answered, for `failover`.
#[derive(Default)]
struct Handover {
    asking: bool,
    /// CONTINUE/FULLRESYNC (true) or a refusal (false), not yet handled.
    answer: Option<bool>,
}

/// The part `lib.rs` installs in the server.
pub fn new_part() -> Part {
    Part::new(Replication {
        offset: 0,
        replid2: "0".repeat(40),
        second_offset: -1,
        backlog: None,
        idle_since_ms: None,
        replicas: Vec::new(),
        sync: None,
        retired_pipe: None,
        newlines: Vec::new(),
        release: Vec::new(),
        fed: false,
        waits: Vec::new(),
        wait_done: Vec::new(),
        want_acks: false,
        last_ping_ms: 0,
        last_newline_s: 0,
        master: None,
        sync_counts: [0; 3],
        announced: Default::default(),
        failover: None,
        handover: Handover::default(),
    })
}

#[inline]
fn state(srv: &Server) -> &Replication {
    srv.replication.get::<Replication>()
}

#[inline]
fn state_mut(srv: &mut Server) -> &mut Replication {
    srv.replication.get_mut::<Replication>()
}

/// A numeric option replication keeps as text in the config (`other`).
fn cfg_num(srv: &Server, name: &str, default: i64) -> i64 {
    srv.config.other.get(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn cfg_str(srv: &Server, name: &str) -> String {
    srv.config.other.get(name).cloned().unwrap_or_default()
}

fn cfg_yes(srv: &Server, name: &str, default: bool) -> bool {
    srv.config.other.get(name).map_or(default, |v| v == "yes")
}

/// Create the backlog (first replica, or a replica's own start) and start
/// feeding it from the change stream.
fn ensure_backlog(srv: &mut Server) {
    let size = cfg_num(srv, "repl-backlog-size", 1 << 20).max(16) as usize;
    let r = state_mut(srv);
    if r.backlog.is_none() {
        // A new history: PSYNC2 must not continue an older one with it.
        r.backlog = Some(Backlog::new(size, r.offset));
        if r.master.is_none() {
            srv.change_replid();
            let r = state_mut(srv);
            r.replid2 = "0".repeat(40);
            r.second_offset = -1;
        }
    }
    srv.changes.consumers.replicas = Some(feed);
    // Expired keys' DELs are collected only while a replay consumer is on.
    srv.update_expired_tracking();
}

/// The change stream's replication consumer: each hand-off's replay bytes
/// go to the backlog and to every replica past its snapshot point.
fn feed(srv: &mut Server, bytes: &[u8]) {
    let r = state_mut(srv);
    // A replica proxies its primary's stream instead (see `applied`); its
    // own writes (replica-read-only no) stay local, as in Redis.
    if r.master.is_some() {
        return;
    }
    // One look-up of the replication state per hand-off (it is a
    // downcast): this runs after every write command.
    let offset = push(r, bytes);
    if let Some(cid) = srv.changes.origin {
        if let Some(c) = srv.clients.get_mut(cid) {
            c.woff = offset;
        }
    }
}

/// Append bytes to the replication stream: the offset and the shared
/// buffer, which the replicas' connections read from (see `stream`).
fn push_stream(srv: &mut Server, bytes: &[u8]) {
    push(state_mut(srv), bytes);
}

/// [`push_stream`] on the state: runs once per write command, one copy
/// whatever the replica count. Returns the new offset.
#[inline]
fn push(r: &mut Replication, bytes: &[u8]) -> i64 {
    r.offset += bytes.len() as i64;
    if let Some(b) = r.backlog.as_mut() {
        if b.feed(bytes) {
            stream::block_added(r);
        }
        r.fed = true;
    }
    r.offset
}

/// The master client ran the command whose bytes are `raw`: count them
/// and pass them on, unchanged, to our backlog and sub-replicas.
pub fn applied(srv: &mut Server, raw: &[u8]) {
    push_stream(srv, raw);
    if let Some(m) = state_mut(srv).master.as_mut() {
        m.applied(raw.len());
    }
}

/// A connection closed: forget it as a replica, WAIT client or primary.
pub fn client_closed(srv: &mut Server, slot: usize, role: ClientRole) {
    let r = state_mut(srv);
    r.announced.remove(&slot);
    r.waits.retain(|w| w.cid != slot);
    r.wait_done.retain(|&(c, _)| c != slot);
    match role {
        ClientRole::Replica => {
            primary::replica_gone(srv, slot);
            transfer::forget(srv, slot);
        }
        ClientRole::Master => replica::master_gone(srv, slot),
        ClientRole::Normal => {}
    }
}

/// Periodic work, every cron tick.
pub fn cron(srv: &mut Server, now_ms: i64) {
    transfer::cron(srv, now_ms);
    primary::cron(srv, now_ms);
    replica::cron(srv, now_ms);
    failover::update(srv, now_ms);
}

/// Every loop turn: WAIT results and GETACKs (cheap when idle). Returns
/// the replicas whose connections have stream to write: those fed this
/// turn, and those whose snapshot just went through.
pub fn turn(srv: &mut Server, now_ms: i64) -> Vec<usize> {
    primary::turn(srv, now_ms);
    failover::update(srv, now_ms);
    let mut slots = std::mem::take(&mut state_mut(srv).release);
    if std::mem::take(&mut state_mut(srv).fed) {
        stream::behind(srv, &mut slots);
    }
    slots
}

/// Whether this server is a replica (REPLICAOF set).
pub fn is_replica(srv: &Server) -> bool {
    state(srv).master.is_some()
}

/// `INFO replication`, in Redis's order.
pub fn info_fields(srv: &Server, now_ms: i64) -> Vec<(String, String)> {
    let r = state(srv);
    let mut f: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, v: String| f.push((k.to_string(), v));
    add("role", if r.master.is_some() { "slave" } else { "master" }.into());
    if let Some(m) = &r.master {
        for (k, v) in m.info_fields(srv, now_ms) {
            add(k, v);
        }
    }
    add("connected_slaves", r.replicas.len().to_string());
    if let Some(good) = primary::good_replicas_if_enforced(srv, now_ms) {
        add("min_slaves_good_slaves", good.to_string());
    }
    for (i, line) in
        primary::replica_lines(srv, now_ms, |slot| transfer::child_running_for(srv, slot)).into_iter().enumerate()
    {
        add(&format!("slave{i}"), line);
    }
    add("master_failover_state", failover::state_name(srv).into());
    add("master_replid", srv.replid.clone());
    add("master_replid2", r.replid2.clone());
    add("master_repl_offset", r.offset.to_string());
    add("second_repl_offset", r.second_offset.to_string());
    let b = r.backlog.as_ref();
    add("repl_backlog_active", u8::from(b.is_some()).to_string());
    add("repl_backlog_size", b.map_or(cfg_num(srv, "repl-backlog-size", 1 << 20) as usize, |b| b.size()).to_string());
    add("repl_backlog_first_byte_offset", b.map_or(0, |b| b.first_offset()).to_string());
    add("repl_backlog_histlen", b.map_or(0, |b| b.histlen()).to_string());
    f
}

/// `repl-backlog-size` in force (a replica's output limit is never
/// below it).
pub fn backlog_size(srv: &Server) -> u64 {
    cfg_num(srv, "repl-backlog-size", 1 << 20).max(0) as u64
}

/// ROLE's reply parts.
pub enum Role {
    Master { offset: i64, replicas: Vec<(String, u16, i64)> },
    Replica { host: String, port: u16, state: &'static str, offset: i64 },
}

pub fn role(srv: &Server) -> Role {
    let r = state(srv);
    match &r.master {
        Some(m) => Role::Replica { host: m.host.clone(), port: m.port, state: m.role_state(), offset: m.offset() },
        None => Role::Master {
            offset: r.offset,
            replicas: r
                .replicas
                .iter()
                .filter(|x| x.online())
                .map(|x| (x.ip(srv), x.listening_port, x.ack_offset))
                .collect(),
        },
    }
}

/// CONFIG SET repl-backlog-size applies at once.
pub fn resize_backlog(srv: &mut Server) {
    let size = cfg_num(srv, "repl-backlog-size", 1 << 20).max(16) as usize;
    let needed = stream::needed(state(srv));
    if let Some(b) = state_mut(srv).backlog.as_mut() {
        b.resize(size, needed);
    }
}

/// Once the data is in (at once, or when the start-up RDB load ends):
/// replication starts from the loaded position, and the server says so.
pub fn ready(srv: &mut Server) {
    start_from_config(srv);
    crate::log_at!(Notice, "Ready to accept connections tcp (port {})", srv.startup_port);
}

/// From the cron while the start-up RDB load runs: finish it, or stop the
/// server on a damaged file as Redis does.
pub fn poll_startup_load(srv: &mut Server) {
    match crate::persistence::poll_rdb_load(srv) {
        None => {}
        Some(Ok(())) => ready(srv),
        Some(Err(msg)) => {
            crate::log_at!(Warning, "{msg}");
            eprintln!("{msg}");
            std::process::exit(1);
        }
    }
}

/// At start: `replicaof` in the config file makes us a replica; an RDB
/// that recorded a replication position lets the history continue (PSYNC
/// after a restart, either role). Also installs the position hook RDB
/// saves read.
pub fn start_from_config(srv: &mut Server) {
    srv.repl_position = Some(position);
    let target = srv.config.replicaof();
    let now = crate::server::unix_ms();
    let Some((id, offset, db)) = crate::persistence::loaded_position(srv) else {
        if target.is_some() {
            replicaof(srv, target, now);
        }
        return;
    };
    let expired = crate::persistence::take_loaded_expired(srv);
    // A backlog from the file's offset on: what replicas continue from,
    // and what keeps REPLICAOF below from starting a new history.
    let size = cfg_num(srv, "repl-backlog-size", 1 << 20).max(16) as usize;
    let r = state_mut(srv);
    r.offset = offset;
    r.backlog = Some(Backlog::new(size, offset));
    srv.changes.consumers.replicas = Some(feed);
    // Expired keys' DELs are collected only while a replay consumer is on.
    srv.update_expired_tracking();
    if target.is_some() {
        srv.replid = id;
        crate::log_at!(Notice, "Using the replication id and offset from the RDB file to continue: {offset}");
        replicaof(srv, target, now);
        replica::set_stream_db(srv, db);
        return;
    }
    // A primary keeps its new id: the file's becomes the one it continues
    // (replid2), as after a promotion. Keys that expired in the file go
    // down the stream as DELs, as Redis's loader feeds them.
    let r = state_mut(srv);
    r.replid2 = id;
    r.second_offset = offset + 1;
    r.idle_since_ms = Some(now);
    feed_expired(srv, expired);
}

/// DEL (UNLINK with `lazyfree-lazy-expire`) of each key that expired in
/// the loaded file, with a SELECT where the db changes.
fn feed_expired(srv: &mut Server, keys: Vec<(usize, Vec<u8>)>) {
    if keys.is_empty() {
        return;
    }
    let cmd: &[u8] = if srv.config.lazyfree_lazy_expire { b"UNLINK" } else { b"DEL" };
    let mut buf = Vec::new();
    let mut db = None;
    for (d, key) in &keys {
        if db != Some(*d) {
            db = Some(*d);
            resp::encode_command(&mut buf, &[&b"SELECT"[..], d.to_string().as_bytes()]);
        }
        resp::encode_command(&mut buf, &[cmd, key.as_slice()]);
    }
    push_stream(srv, &buf);
    // Live commands must say their db again.
    srv.changes.reselect();
}

/// The dataset's replication position, when there is a history to
/// continue: (offset, the stream's current db).
fn position(srv: &Server) -> Option<(i64, i64)> {
    let r = state(srv);
    match &r.master {
        Some(m) => Some((r.offset, m.stream_db(srv) as i64)),
        None => r.backlog.as_ref().map(|_| (r.offset, 0)),
    }
}

/// INFO stats' synchronization counters, in Redis's order.
pub fn sync_stats(srv: &Server) -> [(&'static str, u64); 3] {
    let c = state(srv).sync_counts;
    [("sync_full", c[0]), ("sync_partial_ok", c[1]), ("sync_partial_err", c[2])]
}

/// CONFIG RESETSTAT: the synchronization counters start again.
pub fn reset_stats(srv: &mut Server) {
    state_mut(srv).sync_counts = [0; 3];
}

/// CONFIG SET changed options: apply what replication reads once.
pub fn config_changed(srv: &mut Server) {
    resize_backlog(srv);
    let replica = is_replica(srv);
    srv.denials.readonly_replica = replica && srv.config.replica_read_only;
    replica::refresh_stale(srv);
    let now = crate::server::unix_ms();
    let min = cfg_num(srv, "min-replicas-to-write", 0);
    srv.denials.too_few_replicas =
        !replica && primary::good_replicas_if_enforced(srv, now).is_some_and(|good| good < min);
}
