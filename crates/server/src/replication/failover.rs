//! FAILOVER: a primary hands its role to one of its replicas without
//! losing a write. Writes are paused; once a replica has acknowledged the
//! whole stream (or the timeout passes with FORCE) this server becomes a
//! replica of it and asks it, with `PSYNC <replid> <offset> FAILOVER`, to
//! take over. The replica's side of that request is [`psync_request`].
//! The failover ends when the new primary answers the PSYNC; a refusal,
//! a timeout without FORCE, or FAILOVER ABORT puts everything back.
use super::{replica, state, state_mut};
use crate::server::Server;

/// Where a failover stands (INFO `master_failover_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Writes paused; waiting for a replica to acknowledge everything.
    WaitForSync,
    /// We are now a replica of the target, whose PSYNC answer ends it.
    InProgress,
}

/// A failover under way.
pub struct Failover {
    stage: Stage,
    /// The chosen replica: given by TO, or the first one found caught up.
    target: Option<(String, u16)>,
    end_ms: Option<i64>,
    force: bool,
}

/// What FAILOVER asks for.
pub struct Request {
    pub target: Option<(String, u16)>,
    pub timeout_ms: Option<i64>,
    pub force: bool,
}

/// INFO's `master_failover_state`.
pub fn state_name(srv: &Server) -> &'static str {
    match state(srv).failover.as_ref().map(|f| f.stage) {
        None => "no-failover",
        Some(Stage::WaitForSync) => "waiting-for-sync",
        Some(Stage::InProgress) => "failover-in-progress",
    }
}

/// Whether a failover is under way (REPLICAOF and SYNC are refused).
pub fn active(srv: &Server) -> bool {
    state(srv).failover.is_some()
}

/// FAILOVER [TO host port] [FORCE] [TIMEOUT ms]: checks and starts.
pub fn start(srv: &mut Server, req: Request, now_ms: i64) -> Result<(), String> {
    let r = state(srv);
    if r.failover.is_some() {
        return Err("ERR FAILOVER already in progress.".into());
    }
    if r.master.is_some() {
        return Err("ERR FAILOVER is not valid when server is a replica.".into());
    }
    if r.replicas.is_empty() {
        return Err("ERR FAILOVER requires connected replicas.".into());
    }
    if req.force && (req.timeout_ms.is_none() || req.target.is_none()) {
        return Err("ERR FAILOVER with force option requires both a timeout and target HOST and IP.".into());
    }
    match &req.target {
        Some((host, port)) => {
            let Some(online) = find(srv, host, *port).map(|i| r.replicas[i].online()) else {
                return Err("ERR FAILOVER target HOST and PORT is not a replica.".into());
            };
            if !online {
                return Err("ERR FAILOVER target replica is not online.".into());
            }
            crate::log_at!(Notice, "FAILOVER requested to {host}:{port}.");
        }
        None => crate::log_at!(Notice, "FAILOVER requested to any replica."),
    }
    state_mut(srv).failover = Some(Failover {
        stage: Stage::WaitForSync,
        target: req.target,
        end_ms: req.timeout_ms.map(|t| now_ms.saturating_add(t)),
        force: req.force,
    });
    srv.pause_for_failover(true);
    Ok(())
}

/// FAILOVER ABORT.
pub fn abort_command(srv: &mut Server) -> Result<(), String> {
    if state(srv).failover.is_none() {
        return Err("ERR No failover in progress.".into());
    }
    abort(srv, "Failover manually aborted");
    Ok(())
}

/// Index of the replica announced as host:port.
fn find(srv: &Server, host: &str, port: u16) -> Option<usize> {
    state(srv).replicas.iter().position(|x| x.listening_port == port && x.ip(srv) == host)
}

/// Each loop turn and cron tick: time out, or hand over to a replica that
/// has everything.
pub fn update(srv: &mut Server, now_ms: i64) {
    if let Some(accepted) = state_mut(srv).handover.answer.take() {
        link_answered(srv, accepted);
    }
    let Some(f) = state(srv).failover.as_ref() else { return };
    if f.stage != Stage::WaitForSync {
        return;
    }
    if f.end_ms.is_some_and(|end| end <= now_ms) {
        if f.force {
            let (host, port) = f.target.clone().unwrap_or_default();
            crate::log_at!(Notice, "FAILOVER to {host}:{port} time out exceeded, failing over.");
            hand_over(srv, host, port, now_ms);
        } else {
            abort(srv, "Replica never caught up before timeout");
        }
        return;
    }
    let r = state(srv);
    let caught_up = |i: usize| r.replicas[i].ack_offset == r.offset;
    let chosen = match &f.target {
        Some((host, port)) => find(srv, host, *port).filter(|&i| caught_up(i)).map(|_| (host.clone(), *port)),
        None => (0..r.replicas.len()).find(|&i| caught_up(i)).map(|i| {
            let x = &r.replicas[i];
            (x.ip(srv), x.listening_port)
        }),
    };
    if let Some((host, port)) = chosen {
        crate::log_at!(Notice, "Failover target {host}:{port} is synced, failing over.");
        hand_over(srv, host, port, now_ms);
    }
}

/// Become a replica of the target; the link's PSYNC carries FAILOVER.
fn hand_over(srv: &mut Server, host: String, port: u16, now_ms: i64) {
    let r = state_mut(srv);
    if let Some(f) = r.failover.as_mut() {
        f.stage = Stage::InProgress;
        f.target = Some((host.clone(), port));
    }
    r.handover.asking = true;
    replica::replicaof(srv, Some((host, port)), now_ms);
}

/// The hand-over link finished its PSYNC: `accepted` (CONTINUE or
/// FULLRESYNC) ends the failover; a refusal undoes it.
fn link_answered(srv: &mut Server, accepted: bool) {
    state_mut(srv).handover.asking = false;
    if !state(srv).failover.as_ref().is_some_and(|f| f.stage == Stage::InProgress) {
        return;
    }
    if accepted {
        clear(srv);
    } else {
        abort(srv, "Failover target rejected psync request");
    }
}

fn abort(srv: &mut Server, why: &str) {
    state_mut(srv).handover = Default::default();
    let Some(f) = state_mut(srv).failover.take() else { return };
    match &f.target {
        Some((host, port)) => crate::log_at!(Notice, "FAILOVER to {host}:{port} aborted: {why}"),
        None => crate::log_at!(Notice, "FAILOVER to any replica aborted: {why}"),
    }
    if f.stage == Stage::InProgress {
        replica::replicaof(srv, None, crate::server::unix_ms());
    }
    srv.pause_for_failover(false);
}

fn clear(srv: &mut Server) {
    state_mut(srv).failover = None;
    srv.pause_for_failover(false);
}

/// The replica's side: `PSYNC <replid> <offset> FAILOVER` from our primary
/// makes us a primary first (when it speaks of our own history), so that
/// the PSYNC itself then continues it as our replica.
pub fn psync_request(srv: &mut Server, replid: &[u8], client: &str) -> Result<(), String> {
    crate::log_at!(Warning, "Failover request received for replid {}.", String::from_utf8_lossy(replid));
    if state(srv).master.is_none() {
        return Err("ERR PSYNC FAILOVER can't be sent to a master.".into());
    }
    if replid != srv.replid.as_bytes() {
        return Err("ERR PSYNC FAILOVER replid must match my replid.".into());
    }
    replica::replicaof(srv, None, crate::server::unix_ms());
    crate::log_at!(Notice, "MASTER MODE enabled (failover request from '{client}')");
    Ok(())
}
