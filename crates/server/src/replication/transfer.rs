//! Full synchronization: the snapshot that starts a replica.
//!
//! A forked child writes the RDB. Diskless (`repl-diskless-sync yes`, and
//! every waiting replica said `capa eof`), it writes straight to the
//! replicas' sockets framed as `$EOF:<40 random chars>\r\n<rdb><same 40>`;
//! otherwise it saves the RDB file, and once it is done a thread per
//! replica sends it as `$<length>\r\n<rdb>`. Either way the `+FULLRESYNC
//! <replid> <offset>` line, with the offset the snapshot stands at, comes
//! first, and the stream produced after the fork waits in the replica's
//! output, held, until its snapshot is through.
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use super::primary::{self, ReplicaState};
use super::{cfg_num, state, state_mut};
use crate::persistence::ReplAux;
use crate::server::child::ChildKind;
use crate::server::Server;

/// A full synchronization in progress.
pub struct Sync {
    pid: Option<i32>,
    diskless: bool,
    /// Replica slots served by this snapshot, with their header.
    slots: Vec<(usize, Vec<u8>)>,
    senders: Vec<Sender>,
}

/// A thread sending the RDB file to one replica.
struct Sender {
    slot: usize,
    /// 0 running, 1 done, 2 failed.
    status: Arc<AtomicU8>,
}

/// A replica closed: it no longer waits for its snapshot. A diskless
/// child writes to a copy of its socket, which would keep the connection
/// open: shut it down for both, so the replica sees the link drop now, and
/// stop the child once nobody is left to read it (as Redis does).
pub fn forget(srv: &mut Server, slot: usize) {
    let fd = srv.clients.get(slot).map(|c| c.fd);
    let Some(s) = state_mut(srv).sync.as_mut() else { return };
    let served = s.slots.iter().any(|(x, _)| *x == slot);
    s.slots.retain(|(x, _)| *x != slot);
    if !(served && s.diskless) {
        return;
    }
    if let Some(fd) = fd {
        // SAFETY: the client's socket, still open (closed after this).
        unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
    }
    if s.slots.is_empty() && s.pid.is_some() {
        crate::log_at!(Warning, "Diskless rdb transfer, last replica dropped, killing fork child.");
        srv.children.kill();
        state_mut(srv).sync = None;
    }
}

/// Each cron tick: reap the child, finish senders, start a snapshot for
/// waiting replicas when due.
pub fn cron(srv: &mut Server, now_ms: i64) {
    if srv.children.running() == Some(ChildKind::ReplSync) {
        if let Some(exit) = srv.children.reap() {
            child_done(srv, exit.ok, now_ms);
        }
    }
    senders_done(srv, now_ms);
    if state(srv).sync.is_none() && srv.children.running().is_none() {
        maybe_start(srv, now_ms);
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

fn start(srv: &mut Server, slots: Vec<usize>, diskless: bool) {
    let offset = state(srv).offset;
    // Always 40 characters (ours, or checked when a primary sent it).
    let replid: [u8; 40] = srv.replid.as_bytes().try_into().unwrap_or([b'0'; 40]);
    let aux = ReplAux { stream_db: 0, replid, offset };
    let mark: Vec<u8> = eof_mark();
    let mut served = Vec::new();
    let fullresync = format!("+FULLRESYNC {} {offset}\r\n", srv.replid).into_bytes();
    for slot in slots {
        let Some(r) = primary::replica_mut(srv, slot) else { continue };
        let mut header = if r.psync { fullresync.clone() } else { vec![] };
        if diskless {
            header.extend_from_slice(b"$EOF:");
            header.extend_from_slice(&mark);
            header.extend_from_slice(b"\r\n");
        }
        r.state = ReplicaState::Transfer;
        // Its stream starts after the snapshot's offset, held meanwhile.
        r.sent = offset;
        if let Some(c) = srv.clients.get_mut(slot) {
            c.out_held = true;
        }
        served.push((slot, header));
    }
    // The stream after the snapshot must not assume the replica's db.
    srv.changes.reselect();
    let fds: Vec<(i32, Vec<u8>)> =
        served.iter().filter_map(|(s, h)| srv.clients.get(*s).map(|c| (c.fd, h.clone()))).collect();
    let timeout_ms = cfg_num(srv, "repl-timeout", 60).max(1) * 1000;
    let srv_ptr: *const Server = srv;
    let work = move || -> bool {
        // SAFETY: this runs in the forked child, on its own copy of the
        // server, which nothing else touches there.
        let srv_ref = unsafe { &*srv_ptr };
        if diskless {
            let mut sink = FdSink { fds: fds.into_iter().map(|(fd, h)| (fd, Some(h))).collect(), timeout_ms };
            // +FULLRESYNC at once, however slowly the snapshot comes.
            let written = (|| {
                sink.send_headers()?;
                let out = crate::persistence::write_for_replicas(
                    srv_ref,
                    io::BufWriter::with_capacity(64 << 10, &mut sink),
                    aux,
                )?;
                let out = out.into_inner().map_err(|e| e.into_error())?;
                out.write_all(&mark)
            })();
            written.is_ok()
        } else {
            crate::persistence::save_for_replicas(srv_ref, aux).is_ok()
        }
    };
    let kind = if diskless { "diskless" } else { "disk" };
    match srv.children.spawn(ChildKind::ReplSync, work) {
        Ok(pid) => {
            crate::log_at!(Notice, "Starting BGSAVE for SYNC with target: {kind} (pid {pid})");
            state_mut(srv).sync = Some(Sync { pid: Some(pid), diskless, slots: served, senders: Vec::new() });
        }
        Err(e) => {
            crate::log_at!(Warning, "Can't start the replication snapshot: {e}");
            for (slot, _) in served {
                srv.pending_kills.push(slot);
            }
        }
    }
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

fn child_done(srv: &mut Server, ok: bool, now_ms: i64) {
    let Some(mut sync) = state_mut(srv).sync.take() else { return };
    sync.pid = None;
    if !ok {
        crate::log_at!(Warning, "The replication snapshot child failed: closing the replicas it served");
        for (slot, _) in sync.slots {
            srv.pending_kills.push(slot);
        }
        return;
    }
    if sync.diskless {
        crate::log_at!(
            Notice,
            "Diskless rdb transfer, done reading from pipe, {} replicas still up.",
            sync.slots.len()
        );
        for (slot, _) in sync.slots {
            primary::set_online(srv, slot, now_ms);
        }
        return;
    }
    crate::log_at!(Notice, "Background RDB transfer terminated with success");
    let path = srv.config.dir.join(&srv.config.dbfilename);
    for (slot, header) in std::mem::take(&mut sync.slots) {
        let Some(fd) = srv.clients.get(slot).map(|c| c.fd) else { continue };
        let status = Arc::new(AtomicU8::new(0));
        let (st, path) = (status.clone(), path.clone());
        // SAFETY: dup of a socket we own; the thread closes its copy.
        let dup = unsafe { libc::dup(fd) };
        if dup < 0 {
            srv.pending_kills.push(slot);
            continue;
        }
        let timeout_ms = cfg_num(srv, "repl-timeout", 60).max(1) * 1000;
        std::thread::spawn(move || {
            let ok = send_file(dup, &header, &path, timeout_ms).is_ok();
            // SAFETY: the thread's own descriptor.
            unsafe { libc::close(dup) };
            st.store(if ok { 1 } else { 2 }, Ordering::Release);
        });
        sync.senders.push(Sender { slot, status });
    }
    state_mut(srv).sync = Some(sync);
}

fn senders_done(srv: &mut Server, now_ms: i64) {
    let Some(sync) = state_mut(srv).sync.as_mut() else { return };
    if sync.pid.is_some() {
        return;
    }
    let mut finished = Vec::new();
    sync.senders.retain(|s| match s.status.load(Ordering::Acquire) {
        0 => true,
        st => {
            finished.push((s.slot, st == 1));
            false
        }
    });
    if sync.senders.is_empty() {
        state_mut(srv).sync = None;
    }
    for (slot, ok) in finished {
        if ok {
            primary::set_online(srv, slot, now_ms);
        } else {
            srv.pending_kills.push(slot);
        }
    }
}

fn send_file(fd: i32, header: &[u8], path: &std::path::Path, timeout_ms: i64) -> io::Result<()> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut out = FdSink { fds: vec![(fd, None)], timeout_ms };
    out.write_all(header)?;
    out.write_all(format!("${len}\r\n").as_bytes())?;
    let mut buf = vec![0u8; 256 << 10];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n])?;
    }
}

/// Writes every buffer to each live socket, waiting (up to the timeout)
/// while a socket is full; a socket that fails drops out, and the write
/// fails once none is left. The first write to each sends its header.
struct FdSink {
    fds: Vec<(i32, Option<Vec<u8>>)>,
    timeout_ms: i64,
}

impl FdSink {
    /// Each replica's header (+FULLRESYNC, $EOF:), sent once, first.
    fn send_headers(&mut self) -> io::Result<()> {
        let timeout = self.timeout_ms;
        self.fds.retain_mut(|(fd, header)| header.take().is_none_or(|h| write_fd(*fd, &h, timeout).is_ok()));
        if self.fds.is_empty() {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "no replica left"));
        }
        Ok(())
    }
}

impl Write for FdSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.send_headers()?;
        let timeout = self.timeout_ms;
        self.fds.retain(|(fd, _)| write_fd(*fd, buf, timeout).is_ok());
        if self.fds.is_empty() {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "no replica left"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Write all of `buf` to a non-blocking socket, polling while it is full.
fn write_fd(fd: i32, mut buf: &[u8], timeout_ms: i64) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: writing from a valid slice to a descriptor we hold.
        let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) };
        if n > 0 {
            buf = &buf[n as usize..];
            continue;
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock => {
                let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
                // SAFETY: one valid pollfd.
                let r = unsafe { libc::poll(&mut p, 1, timeout_ms as i32) };
                if r == 0 {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "replica not reading"));
                }
            }
            io::ErrorKind::Interrupted => {}
            _ => return Err(err),
        }
    }
    Ok(())
}
