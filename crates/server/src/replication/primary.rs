//! The primary's side: replicas (their state, ACKs, lag), PSYNC's choice
//! between continuing from the backlog and a full synchronization,
//! REPLCONF, WAIT, pings, timeouts and `min-replicas-to-write`.
use super::{cfg_num, ensure_backlog, push_stream, state, state_mut};
use crate::server::{ClientRole, Server};

/// Where a replica stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaState {
    /// Asked for a full synchronization; no snapshot started for it yet.
    WaitBgsave,
    /// Its snapshot is on its way; the stream after it waits in its
    /// (held) output.
    Transfer,
    /// Fed the stream.
    Online,
}

/// One replica connection.
#[derive(Debug)]
pub struct Replica {
    pub slot: usize,
    pub state: ReplicaState,
    /// It sent PSYNC (it understands +FULLRESYNC / +CONTINUE).
    pub psync: bool,
    pub capa_eof: bool,
    pub capa_psync2: bool,
    pub listening_port: u16,
    pub announced_ip: Option<String>,
    pub ack_offset: i64,
    pub ack_ms: i64,
    pub since_ms: i64,
    /// Offset of the last stream byte its connection took (its cursor in
    /// the shared buffer; meaningful once it streams).
    pub sent: i64,
    /// Its diskless snapshot went out: the stream waits for its first ACK
    /// (Redis 7.0), or it would follow the EOF mark in the same read and
    /// hide it from the replica.
    pub stream_on_ack: bool,
}

impl Replica {
    /// Whether stream bytes go to it now (to its output, held or not).
    pub fn streams(&self) -> bool {
        self.state != ReplicaState::WaitBgsave
    }

    pub fn online(&self) -> bool {
        self.state == ReplicaState::Online
    }

    pub fn ip(&self, srv: &Server) -> String {
        if let Some(ip) = &self.announced_ip {
            return ip.clone();
        }
        let addr = srv.clients.get(self.slot).map_or("", |c| c.addr.as_str());
        addr.rsplit_once(':').map_or(addr, |(ip, _)| ip).trim_matches(['[', ']']).to_string()
    }
}

/// Settings a replica announced before PSYNC (REPLCONF), kept until then.
#[derive(Debug, Default, Clone)]
pub struct Announced {
    port: u16,
    ip: Option<String>,
    eof: bool,
    psync2: bool,
}

/// One client blocked in WAIT.
#[derive(Debug)]
pub struct Wait {
    pub cid: usize,
    offset: i64,
    wanted: i64,
    deadline: Option<i64>,
}

/// REPLCONF's reply, or nothing (ACK is never answered).
pub fn replconf(srv: &mut Server, cid: usize, args: &[&[u8]], now_ms: i64) -> Option<Result<(), String>> {
    if !args.len().is_multiple_of(2) {
        return Some(Err("ERR syntax error".into()));
    }
    for pair in args.chunks(2) {
        let opt = String::from_utf8_lossy(pair[0]).to_ascii_lowercase();
        let val = pair[1];
        let text = String::from_utf8_lossy(val).into_owned();
        match opt.as_str() {
            "listening-port" => match text.parse::<u16>() {
                Ok(p) => announce(srv, cid, |a| a.port = p),
                Err(_) => return Some(Err("ERR value is not an integer or out of range".into())),
            },
            "ip-address" => announce(srv, cid, |a| a.ip = Some(text.clone())),
            "capa" => match text.to_ascii_lowercase().as_str() {
                "eof" => announce(srv, cid, |a| a.eof = true),
                "psync2" => announce(srv, cid, |a| a.psync2 = true),
                _ => {}
            },
            "ack" => {
                let off = text.parse::<i64>().unwrap_or(0);
                if let Some(r) = state_mut(srv).replicas.iter_mut().find(|r| r.slot == cid) {
                    r.ack_offset = r.ack_offset.max(off);
                    r.ack_ms = now_ms;
                    if std::mem::take(&mut r.stream_on_ack) {
                        release(srv, cid);
                    }
                }
                if srv.denials.too_few_replicas {
                    super::config_changed(srv);
                }
                return None;
            }
            "getack" => {
                super::replica::send_ack(srv);
                return None;
            }
            "rdb-only" | "rdb-filter-only" => {}
            _ => return Some(Err(format!("ERR Unrecognized REPLCONF option: {}", String::from_utf8_lossy(pair[0])))),
        }
    }
    Some(Ok(()))
}

fn announce(srv: &mut Server, cid: usize, f: impl FnOnce(&mut Announced)) {
    f(state_mut(srv).announced.entry(cid).or_default());
}

/// PSYNC replid offset (`psync` = None for SYNC). On success the reply
/// (+CONTINUE and the backlog, or nothing yet for a full resync) is
/// returned as raw bytes for the replica's output.
pub fn psync(srv: &mut Server, cid: usize, psync: Option<(&[u8], &[u8])>, now_ms: i64) -> Result<Vec<u8>, String> {
    if srv.clients.get(cid).is_some_and(|c| c.role == ClientRole::Replica) {
        return Ok(Vec::new());
    }
    if super::failover::active(srv) {
        return Err("NOMASTERLINK Can't SYNC while failing over".into());
    }
    if let Some(m) = &state(srv).master {
        if !m.link_up() {
            return Err("NOMASTERLINK Can't SYNC while not connected with my master".into());
        }
    }
    let ann = state_mut(srv).announced.remove(&cid).unwrap_or_default();
    let mut replica = Replica {
        slot: cid,
        state: ReplicaState::WaitBgsave,
        psync: psync.is_some(),
        capa_eof: ann.eof,
        capa_psync2: ann.psync2,
        listening_port: ann.port,
        announced_ip: ann.ip,
        ack_offset: 0,
        ack_ms: now_ms,
        since_ms: now_ms,
        sent: 0,
        stream_on_ack: false,
    };
    let bad_offset = |off: &[u8]| std::str::from_utf8(off).ok().and_then(|o| o.parse::<i64>().ok()).is_none();
    if psync.is_some_and(|(_, off)| bad_offset(off)) {
        let name = format!("{}:{}", replica.ip(srv), replica.listening_port);
        crate::log_at!(Warning, "Replica {name} asks for synchronization but with a wrong offset");
        return Err("ERR value is not an integer or out of range".into());
    }
    if let Some(c) = srv.clients.get_mut(cid) {
        c.role = ClientRole::Replica;
    }
    if let Some((id, off)) = psync {
        if let Some((reply, backlog_len)) = try_continue(srv, &mut replica, id, off) {
            crate::log_at!(
                Notice,
                "Partial resynchronization request from {} accepted. Sending {} bytes of backlog starting from \
                 offset {}.",
                replica.ip(srv),
                backlog_len,
                String::from_utf8_lossy(off)
            );
            add_replica(state_mut(srv), replica, now_ms);
            state_mut(srv).sync_counts[1] += 1;
            return Ok(reply);
        }
        // Asked to continue (not `?`) and could not: a failed partial.
        if psync.is_some_and(|(id, _)| id != b"?") {
            state_mut(srv).sync_counts[2] += 1;
        }
    }
    crate::log_at!(Notice, "Replica {}:{} asks for synchronization", replica.ip(srv), replica.listening_port);
    ensure_backlog(srv);
    add_replica(state_mut(srv), replica, now_ms);
    state_mut(srv).sync_counts[0] += 1;
    Ok(Vec::new())
}

fn add_replica(r: &mut super::Replication, replica: Replica, now_ms: i64) {
    // The ping period counts from the first replica, not from the start
    // (nor from a restart whose replicas continue).
    if r.replicas.is_empty() {
        r.last_ping_ms = now_ms;
    }
    r.idle_since_ms = None;
    r.replicas.push(replica);
}

/// The backlog holds what the replica lacks: `+CONTINUE`, and the count
/// of bytes that will follow it from the shared buffer.
fn try_continue(srv: &mut Server, replica: &mut Replica, id: &[u8], off: &[u8]) -> Option<(Vec<u8>, usize)> {
    let off: i64 = std::str::from_utf8(off).ok()?.parse().ok()?;
    let r = state(srv);
    let ours = id == srv.replid.as_bytes();
    let previous = id == r.replid2.as_bytes() && off <= r.second_offset;
    if !(ours || previous) {
        return None;
    }
    let b = r.backlog.as_ref()?;
    if !b.covers(off) {
        return None;
    }
    // The backlog's bytes go from the shared buffer, after the reply.
    let reply = if replica.capa_psync2 {
        format!("+CONTINUE {}\r\n", srv.replid).into_bytes()
    } else {
        b"+CONTINUE\r\n".to_vec()
    };
    replica.sent = off - 1;
    replica.state = ReplicaState::Online;
    Some((reply, (b.end() + 1 - off) as usize))
}

/// The replica in `slot` closed.
pub fn replica_gone(srv: &mut Server, slot: usize) {
    let r = state_mut(srv);
    if let Some(i) = r.replicas.iter().position(|x| x.slot == slot) {
        r.replicas.remove(i);
        crate::log_at!(Notice, "Connection with replica lost (slot {slot}).");
        super::stream::replica_gone(srv);
        refresh_good_replicas(srv, crate::server::unix_ms());
    }
}

/// Put a replica whose snapshot arrived online: its held output may go
/// (after its first ACK, when `on_ack`).
pub fn set_online(srv: &mut Server, slot: usize, now_ms: i64, on_ack: bool) {
    let r = state_mut(srv);
    if let Some(x) = r.replicas.iter_mut().find(|x| x.slot == slot) {
        x.state = ReplicaState::Online;
        x.ack_ms = now_ms;
        x.stream_on_ack = on_ack;
    }
    if !on_ack {
        release(srv, slot);
    }
    refresh_good_replicas(srv, now_ms);
    crate::log_at!(Notice, "Synchronization with replica succeeded (slot {slot})");
}

fn release(srv: &mut Server, slot: usize) {
    state_mut(srv).release.push(slot);
    if let Some(c) = srv.clients.get_mut(slot) {
        c.out_held = false;
    }
}

/// Replicas waiting for a snapshot that has not started.
pub fn waiting(srv: &Server) -> Vec<usize> {
    state(srv).replicas.iter().filter(|x| x.state == ReplicaState::WaitBgsave).map(|x| x.slot).collect()
}

pub fn replica_mut(srv: &mut Server, slot: usize) -> Option<&mut Replica> {
    state_mut(srv).replicas.iter_mut().find(|x| x.slot == slot)
}

/// What WAIT does now.
pub enum WaitOutcome {
    /// Reply with this count.
    Now(i64),
    /// Block until enough replicas acknowledge or the deadline passes.
    Blocked,
}

/// WAIT numreplicas with `deadline` (None: forever). It waits for the
/// stream up to the client's own last write, not for what other clients
/// wrote since (Redis's `c->woff`).
pub fn wait(srv: &mut Server, cid: usize, wanted: i64, deadline: Option<i64>, may_block: bool) -> WaitOutcome {
    let woff = srv.clients.get(cid).map(|c| c.woff);
    let r = state_mut(srv);
    if let Some(i) = r.wait_done.iter().position(|&(c, _)| c == cid) {
        return WaitOutcome::Now(r.wait_done.swap_remove(i).1);
    }
    let offset = woff.unwrap_or(r.offset);
    let acked = acked_at(r, offset);
    if acked >= wanted || !may_block {
        return WaitOutcome::Now(acked);
    }
    r.waits.push(Wait { cid, offset, wanted, deadline });
    r.want_acks = true;
    WaitOutcome::Blocked
}

fn acked_at(r: &super::Replication, offset: i64) -> i64 {
    r.replicas.iter().filter(|x| x.online() && x.ack_offset >= offset).count() as i64
}

/// Each loop turn: ask for ACKs if a WAIT blocked, release WAITs that are
/// satisfied or timed out.
pub fn turn(srv: &mut Server, now_ms: i64) {
    let r = state_mut(srv);
    if r.waits.is_empty() {
        return;
    }
    if std::mem::take(&mut r.want_acks) {
        let getack = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";
        push_stream(srv, getack);
    }
    let r = state_mut(srv);
    let mut done = Vec::new();
    let waits = std::mem::take(&mut r.waits);
    for w in waits {
        let acked = acked_at(r, w.offset);
        if acked >= w.wanted || w.deadline.is_some_and(|d| now_ms >= d) {
            done.push((w.cid, acked));
        } else {
            r.waits.push(w);
        }
    }
    for (cid, acked) in done {
        state_mut(srv).wait_done.push((cid, acked));
        srv.blocking.resume_rerun(cid);
    }
}

/// Each cron tick: pings, replica timeouts, the backlog's time to live,
/// and the good-replica count behind `min-replicas-to-write`.
pub fn cron(srv: &mut Server, now_ms: i64) {
    if super::is_replica(srv) {
        srv.denials.too_few_replicas = false;
        return;
    }
    let period = cfg_num(srv, "repl-ping-replica-period", 10).max(1) * 1000;
    let r = state_mut(srv);
    if !r.replicas.is_empty() && now_ms - r.last_ping_ms >= period {
        r.last_ping_ms = now_ms;
        push_stream(srv, b"*1\r\n$4\r\nPING\r\n");
    }
    // Replicas waiting for their snapshot to start get a newline a second,
    // so their handshake timeout does not fire while we wait.
    if now_ms / 1000 != state(srv).last_newline_s {
        state_mut(srv).last_newline_s = now_ms / 1000;
        // Not through the output buffer (a newline left there would follow
        // the snapshot and shift the stream's offsets): the relay writes it.
        let due = waiting(srv);
        state_mut(srv).newlines = due;
    }
    let timeout = cfg_num(srv, "repl-timeout", 60) * 1000;
    let stale: Vec<usize> =
        state(srv).replicas.iter().filter(|x| x.online() && now_ms - x.ack_ms > timeout).map(|x| x.slot).collect();
    for slot in stale {
        crate::log_at!(Warning, "Disconnecting timedout replica (streaming sync): slot {slot}");
        srv.pending_kills.push(slot);
    }
    expire_backlog(srv, now_ms);
    refresh_good_replicas(srv, now_ms);
}

/// Recount the good replicas behind `min-replicas-to-write`: every cron
/// tick, and as soon as a replica goes online or away (Redis's
/// `refreshGoodSlavesCount`), so a write right after either is judged by
/// the new count (a script busy-polling INFO sees its replica leave).
fn refresh_good_replicas(srv: &mut Server, now_ms: i64) {
    let min = cfg_num(srv, "min-replicas-to-write", 0);
    srv.denials.too_few_replicas = match good_replicas_if_enforced(srv, now_ms) {
        Some(good) => good < min && !super::is_replica(srv),
        None => false,
    };
}

/// Free the backlog after `repl-backlog-ttl` seconds without replicas.
fn expire_backlog(srv: &mut Server, now_ms: i64) {
    let ttl = cfg_num(srv, "repl-backlog-ttl", 3600) * 1000;
    let r = state_mut(srv);
    if r.backlog.is_none() || !r.replicas.is_empty() {
        r.idle_since_ms = None;
        return;
    }
    let since = *r.idle_since_ms.get_or_insert(now_ms);
    if ttl > 0 && now_ms - since >= ttl {
        r.backlog = None;
        r.replid2 = "0".repeat(40);
        r.second_offset = -1;
        srv.changes.consumers.replicas = None;
        // Expired keys' DELs are collected only while a replay consumer is on.
        srv.update_expired_tracking();
        srv.change_replid();
        crate::log_at!(Notice, "Replication backlog freed after {} seconds without connected replicas.", ttl / 1000);
    }
}

/// The replicas whose last ACK is within `min-replicas-max-lag`, when
/// `min-replicas-to-write` is in force.
pub fn good_replicas_if_enforced(srv: &Server, now_ms: i64) -> Option<i64> {
    let min = cfg_num(srv, "min-replicas-to-write", 0);
    let lag = cfg_num(srv, "min-replicas-max-lag", 10);
    if min == 0 || lag == 0 {
        return None;
    }
    Some(state(srv).replicas.iter().filter(|x| x.online() && (now_ms - x.ack_ms) / 1000 <= lag).count() as i64)
}

/// INFO's `slaveN:` lines; `child_writing` says whether a replica's
/// snapshot is still being written (`wait_bgsave` until it is).
pub fn replica_lines(srv: &Server, now_ms: i64, child_writing: impl Fn(usize) -> bool) -> Vec<String> {
    state(srv)
        .replicas
        .iter()
        .map(|x| {
            let st = match x.state {
                ReplicaState::WaitBgsave => "wait_bgsave",
                ReplicaState::Transfer if child_writing(x.slot) => "wait_bgsave",
                ReplicaState::Transfer => "send_bulk",
                ReplicaState::Online => "online",
            };
            let lag = if x.online() { (now_ms - x.ack_ms) / 1000 } else { 0 };
            format!("ip={},port={},state={st},offset={},lag={lag}", x.ip(srv), x.listening_port, x.ack_offset)
        })
        .collect()
}
