//! Full synchronization: the snapshot that starts a replica.
//!
//! A forked child writes the RDB. Diskless (`repl-diskless-sync yes`, and
//! every waiting replica said `capa eof`), it writes it into a pipe that
//! the event loop relays to every replica's connection (`relay`), framed
//! as `$EOF:<40 random chars>\r\n<rdb><same 40>`; otherwise it saves the
//! RDB file, which the loop then sends to each replica as
//! `$<length>\r\n<rdb>`. Either way the `+FULLRESYNC <replid> <offset>`
//! line, with the offset the snapshot stands at, comes first, and the
//! stream produced after the fork waits in the replica's output, held,
//! until its snapshot is through.
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::primary::{self, ReplicaState};
use super::relay::{Out, Pipe};
use super::{cfg_num, state, state_mut};
use crate::persistence::ReplAux;
use crate::server::child::ChildKind;
use crate::server::Server;

/// A full synchronization in progress.
pub struct Sync {
    pid: Option<i32>,
    /// The replicas it serves.
    pub(super) outs: Vec<Out>,
    /// Diskless: the child's pipe.
    pub(super) pipe: Option<Pipe>,
    /// Diskless: the mark closing a complete payload.
    mark: Vec<u8>,
    /// The replication offset the snapshot stands at (the fork's).
    offset: i64,
}

impl Sync {
    fn diskless(&self) -> bool {
        self.pipe.is_some()
    }

    fn serves(&self, slot: usize) -> bool {
        self.outs.iter().any(|o| o.slot == slot)
    }
}

/// A relay pass (`relay`), then what it means for the synchronization:
/// replicas handed their payload go online, a lost one may end it.
pub fn relay(srv: &mut Server, write: &mut super::relay::Writer, now_ms: i64) -> Vec<usize> {
    let r = super::relay::relay(srv, write, now_ms);
    if r.lost {
        check_empty(srv);
    }
    if !r.done.is_empty() {
        complete(srv, &r.done, now_ms);
    }
    r.blocked
}

/// Ends the synchronization; its pipe stays open until `net` took it off
/// its poller ([`super::relay::drop_retired`]).
fn end(srv: &mut Server) {
    let r = state_mut(srv);
    if let Some(pipe) = r.sync.take().and_then(|s| s.pipe) {
        r.retired_pipe = Some(pipe.into_fd());
    }
}

/// A replica closed: it no longer waits for its snapshot. The child holds
/// a copy of its socket, which would keep the connection open: shut it
/// down, so the replica sees the link drop now.
pub fn forget(srv: &mut Server, slot: usize) {
    let fd = srv.clients.get(slot).map(|c| c.fd);
    let Some(s) = state_mut(srv).sync.as_mut() else { return };
    if !s.serves(slot) {
        // One fewer waiting for the next snapshot: the running one may
        // have lost its last reason to go on.
        return check_empty(srv);
    }
    s.outs.retain(|o| o.slot != slot);
    if let Some(fd) = fd {
        // SAFETY: the client's socket, still open (closed after this).
        unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
    }
    check_empty(srv);
}

/// Nobody left to serve: stop a diskless child still writing (as Redis
/// does), or drop a finished transfer. A disk snapshot is stopped too when
/// no replica waits for any and no save point would use it (Redis 7.0's
/// "Kill rdb child process if its dumping RDB is not useful").
pub(super) fn check_empty(srv: &mut Server) {
    let Some(s) = state(srv).sync.as_ref() else { return };
    if !s.outs.is_empty() {
        return;
    }
    // The child is done writing (it exits, and cron reaps it).
    if s.pid.is_none() || s.pipe.as_ref().is_some_and(|p| p.eof) {
        return end(srv);
    }
    if s.diskless() {
        crate::log_at!(Warning, "Diskless rdb transfer, last replica dropped, killing fork child.");
        srv.children.kill();
        end(srv);
    } else if srv.config.save.is_empty() && primary::waiting(srv).is_empty() {
        if let Some(exit) = srv.children.kill() {
            crate::persistence::remove_temp_rdb(srv, exit.pid);
        }
        end(srv);
    }
}

/// Whether the snapshot serving `slot` is still being written (INFO says
/// `wait_bgsave` until it is, as Redis's WAIT_BGSAVE_END).
pub fn child_running_for(srv: &Server, slot: usize) -> bool {
    state(srv).sync.as_ref().is_some_and(|s| s.pid.is_some() && s.serves(slot))
}

/// FLUSHALL, as Redis 7.0: a snapshot child in progress is stale; stop it,
/// and the replicas it was for start over (they reconnect).
pub fn after_flushall(srv: &mut Server) {
    if srv.children.running() != Some(ChildKind::ReplSync) {
        return;
    }
    let Some(s) = state(srv).sync.as_ref() else { return };
    let slots: Vec<usize> = s.outs.iter().map(|o| o.slot).collect();
    srv.children.kill();
    crate::log_at!(Warning, "Background transfer terminated by signal, the replicas it served start over");
    srv.pending_kills.extend(slots);
    end(srv);
}

/// The relay handed these replicas their whole payload: they go online,
/// unless a diskless payload came through incomplete (the child failed).
pub(super) fn complete(srv: &mut Server, slots: &[usize], now_ms: i64) {
    let Some(s) = state_mut(srv).sync.as_mut() else { return };
    let ok = s.pipe.as_ref().is_none_or(|p| p.complete(&s.mark));
    let diskless = s.diskless();
    s.outs.retain(|o| !slots.contains(&o.slot));
    for &slot in slots {
        if ok {
            primary::set_online(srv, slot, now_ms, diskless);
        } else {
            crate::log_at!(Warning, "Diskless rdb transfer ended before the end of the RDB: closing the replica");
            srv.pending_kills.push(slot);
        }
    }
    check_empty(srv);
}

/// Each cron tick: reap the child, drop replicas stuck in a diskless
/// transfer, start a snapshot for waiting replicas when due.
pub fn cron(srv: &mut Server, now_ms: i64) {
    if srv.children.running() == Some(ChildKind::ReplSync) {
        if let Some(exit) = srv.children.reap() {
            child_done(srv, exit.ok);
        }
    }
    timeouts(srv, now_ms);
    if state(srv).sync.is_none() && srv.children.running().is_none() {
        maybe_start(srv, now_ms);
    }
}

/// As Redis, only diskless replicas time out here: a stuck one holds the
/// child (and every other replica) back.
fn timeouts(srv: &mut Server, now_ms: i64) {
    let timeout_ms = cfg_num(srv, "repl-timeout", 60).max(1) * 1000;
    let Some(s) = state(srv).sync.as_ref().filter(|s| s.diskless()) else { return };
    let stuck: Vec<usize> =
        s.outs.iter().filter(|o| o.partial_since_ms.is_some_and(|t| now_ms - t > timeout_ms)).map(|o| o.slot).collect();
    for slot in stuck {
        let r = state(srv).replicas.iter().find(|r| r.slot == slot);
        let name = r.map_or(format!("slot {slot}"), |r| format!("{}:{}", r.ip(srv), r.listening_port));
        crate::log_at!(Warning, "Disconnecting timedout replica (full sync): {name}");
        srv.pending_kills.push(slot);
        forget(srv, slot);
    }
}

fn maybe_start(srv: &mut Server, now_ms: i64) {
    let waiting = primary::waiting(srv);
    if waiting.is_empty() {
        return;
    }
    let diskless = srv.config.repl_diskless_sync
        && waiting.iter().all(|&s| primary::replica_mut(srv, s).is_some_and(|r| r.capa_eof));
    if diskless {
        let delay = cfg_num(srv, "repl-diskless-sync-delay", 5) * 1000;
        let max = cfg_num(srv, "repl-diskless-sync-max-replicas", 0);
        let oldest = waiting.iter().filter_map(|&s| primary::replica_mut(srv, s).map(|r| r.since_ms)).min();
        let full = max > 0 && waiting.len() as i64 >= max;
        if !full && oldest.is_some_and(|t| now_ms - t < delay) {
            return;
        }
    }
    start(srv, waiting, diskless);
}

/// Each served replica's header, its state set to the transfer.
fn prepare(srv: &mut Server, slots: Vec<usize>, mark: Option<&[u8]>) -> Vec<Out> {
    let offset = state(srv).offset;
    let outs = slots.into_iter().filter_map(|slot| join(srv, slot, offset, mark)).collect();
    // The stream after the snapshot must not assume the replica's db.
    srv.changes.reselect();
    outs
}

/// One replica joins a snapshot standing at `offset`: its header, and its
/// stream from that offset on, held until the snapshot is through.
fn join(srv: &mut Server, slot: usize, offset: i64, mark: Option<&[u8]>) -> Option<Out> {
    let replid = srv.replid.clone();
    let r = state_mut(srv).replicas.iter_mut().find(|x| x.slot == slot)?;
    let mut header = if r.psync { format!("+FULLRESYNC {replid} {offset}\r\n").into_bytes() } else { vec![] };
    if let Some(mark) = mark {
        header.extend_from_slice(b"$EOF:");
        header.extend_from_slice(mark);
        header.extend_from_slice(b"\r\n");
    }
    r.state = ReplicaState::Transfer;
    r.sent = offset;
    if let Some(c) = srv.clients.get_mut(slot) {
        c.out_held = true;
    }
    Some(Out::new(slot, header))
}

/// A replica asks for a full synchronization while a child runs. As
/// Redis's SYNC: a disk snapshot taken for other replicas serves it too
/// when it has at least their capabilities (the stream since the fork is
/// still in the shared buffer, held at their cursors), so it need not
/// wait for a snapshot of its own; otherwise it waits for the next one,
/// which the cron starts once the child is gone.
pub fn attach_or_wait(srv: &mut Server, slot: usize) {
    let running = srv.children.running();
    let sync = state(srv).sync.as_ref().filter(|s| s.pid.is_some() && running == Some(ChildKind::ReplSync));
    let verdict = match sync {
        None if running == Some(ChildKind::Rdb) => Err("Can't attach the replica to the current BGSAVE."),
        None => return,
        Some(s) if s.diskless() => Err("Current BGSAVE has socket target."),
        Some(s) if !joinable(srv, s, slot) => Err("Can't attach the replica to the current BGSAVE."),
        Some(s) => Ok(s.offset),
    };
    let offset = match verdict {
        Ok(offset) => offset,
        Err(why) => {
            crate::log_at!(Notice, "{why} Waiting for next BGSAVE for SYNC");
            return;
        }
    };
    if let Some(out) = join(srv, slot, offset, None) {
        if let Some(s) = state_mut(srv).sync.as_mut() {
            s.outs.push(out);
        }
        srv.changes.reselect();
        crate::log_at!(Notice, "Waiting for end of BGSAVE for SYNC");
    }
}

/// Redis's test: the newcomer has every capability of a replica the
/// snapshot serves (that replica's stream since the fork is the one it
/// will get).
fn joinable(srv: &Server, s: &Sync, slot: usize) -> bool {
    let caps = |slot: usize| state(srv).replicas.iter().find(|x| x.slot == slot).map(|x| (x.capa_eof, x.capa_psync2));
    match (caps(slot), s.outs.iter().find_map(|o| caps(o.slot))) {
        (Some((eof, psync2)), Some((e, p))) => (eof || !e) && (psync2 || !p),
        _ => false,
    }
}

fn start(srv: &mut Server, slots: Vec<usize>, diskless: bool) {
    let offset = state(srv).offset;
    // Always 40 characters (ours, or checked when a primary sent it).
    let replid: [u8; 40] = srv.replid.as_bytes().try_into().unwrap_or([b'0'; 40]);
    let aux = ReplAux { stream_db: 0, replid, offset };
    let mark: Vec<u8> = eof_mark();
    let pipe = if diskless {
        match new_pipe() {
            Ok(p) => Some(p),
            Err(e) => {
                crate::log_at!(Warning, "Can't create the pipe for the diskless transfer: {e}");
                return;
            }
        }
    } else {
        None
    };
    let outs = prepare(srv, slots, diskless.then_some(&mark[..]));
    let fds = pipe.as_ref().map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd()));
    let child_mark = mark.clone();
    let srv_ptr: *const Server = srv;
    let work = move || -> bool {
        // SAFETY: this runs in the forked child, on its own copy of the
        // server, which nothing else touches there.
        let srv_ref = unsafe { &*srv_ptr };
        match fds {
            Some((rd, wr)) => write_to_pipe(srv_ref, rd, wr, aux, &child_mark).is_ok(),
            None => crate::persistence::save_for_replicas(srv_ref, aux).is_ok(),
        }
    };
    let target = if diskless { "replicas sockets" } else { "disk" };
    crate::log_at!(Notice, "Starting BGSAVE for SYNC with target: {target}");
    match srv.children.spawn(ChildKind::ReplSync, work) {
        Ok(pid) => {
            let what = if diskless { "Background RDB transfer" } else { "Background saving" };
            crate::log_at!(Notice, "{what} started by pid {pid}");
            // Our copy of the write end goes: the pipe ends with the child.
            let pipe = pipe.map(|(r, _w)| Pipe::new(r));
            state_mut(srv).sync = Some(Sync { pid: Some(pid), outs, pipe, mark, offset });
        }
        Err(e) => {
            crate::log_at!(Warning, "Can't start the replication snapshot: {e}");
            srv.pending_kills.extend(outs.iter().map(|o| o.slot));
        }
    }
}

/// The diskless pipe: (read end, non-blocking, for the loop; write end,
/// blocking, for the child).
fn new_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two descriptors on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just created and are ours alone.
    let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: setting a flag on our own descriptor.
    if unsafe { libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((rd, wr))
}

/// In the child: the RDB, then the mark, into the pipe. Once the parent is
/// gone the pipe has no reader and the write fails, ending the child.
fn write_to_pipe(srv: &Server, rd: i32, wr: i32, aux: ReplAux, mark: &[u8]) -> io::Result<()> {
    // SAFETY: the child's copies; the read end is the parent's business.
    let file = unsafe {
        libc::close(rd);
        std::fs::File::from_raw_fd(wr)
    };
    let out = crate::persistence::write_for_replicas(srv, io::BufWriter::with_capacity(64 << 10, file), aux)?;
    let mut out = out.into_inner().map_err(|e| e.into_error())?;
    out.write_all(mark)
}

/// 40 random hex characters closing a diskless payload.
fn eof_mark() -> Vec<u8> {
    let mut buf = [0u8; 20];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut buf)).is_err() {
        let t = crate::server::unix_ms() as u64;
        buf[..8].copy_from_slice(&t.to_le_bytes());
    }
    buf.iter().flat_map(|b| format!("{b:02x}").into_bytes()).collect()
}

/// The child exited. Diskless, the relay finishes from the pipe (a child
/// that failed leaves an incomplete payload, which `complete` refuses).
/// Disk-based, the saved file now goes to each replica.
fn child_done(srv: &mut Server, ok: bool) {
    let path = srv.config.dir.join(&srv.config.dbfilename);
    let Some(sync) = state_mut(srv).sync.as_mut() else { return };
    sync.pid = None;
    if sync.diskless() {
        let how = if ok { "terminated with success" } else { "failed" };
        crate::log_at!(Notice, "Background RDB transfer {how}");
        return check_empty(srv);
    }
    let mut failed = Vec::new();
    if !ok {
        crate::log_at!(Warning, "SYNC failed. BGSAVE child returned an error");
        failed.extend(sync.outs.iter().map(|o| o.slot));
    } else {
        crate::log_at!(Notice, "Background saving terminated with success");
    }
    for out in sync.outs.iter_mut().filter(|_| ok) {
        if let Err(e) = out.attach_file(&path) {
            crate::log_at!(Warning, "Can't open the RDB file to send it to a replica: {e}");
            failed.push(out.slot);
        }
    }
    sync.outs.retain(|o| !failed.contains(&o.slot));
    srv.pending_kills.extend(failed);
    check_empty(srv);
}

impl Sync {
    /// Replicas whose whole payload went out (all of it, once the source
    /// is exhausted).
    pub(super) fn finished(&mut self) -> Vec<usize> {
        let pipe_done = self.pipe.as_ref().map(|p| p.eof && p.chunk.is_empty());
        let done: Vec<usize> = self
            .outs
            .iter()
            .filter(|o| {
                o.own_sent == o.own.len()
                    && match pipe_done {
                        Some(eof) => eof,
                        None => o.file_done,
                    }
            })
            .map(|o| o.slot)
            .collect();
        done
    }
}
