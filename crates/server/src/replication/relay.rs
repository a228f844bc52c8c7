//! Moving a full synchronization's bytes to the replicas, from the event
//! loop, through each replica's own connection (so TLS replicas are served
//! like plain ones).
//!
//! Diskless, the snapshot child writes the RDB into a pipe; the loop reads
//! one chunk at a time and hands it to every replica, and reads the next
//! only once the slowest replica took all of it (memory stays one chunk,
//! and the child waits on the full pipe), as Redis's rdb pipe does.
//! Disk-based, each replica reads the saved file through its own handle, a
//! chunk at a time, as its connection takes it. `net` owns the connections:
//! it calls [`relay`] each turn with a writer, and registers the pipe
//! ([`pipe_fd`]) so that its data wakes the loop.
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};

use super::{state, state_mut};
use crate::server::Server;

/// Bytes read from the pipe or a file at a time (Redis reads 16 KiB).
const CHUNK: usize = 64 << 10;

/// Where one replica's snapshot stands.
pub struct Out {
    pub slot: usize,
    /// Bytes for this replica alone: its header, then (disk-based) the
    /// current chunk of the file.
    pub(super) own: Vec<u8>,
    pub(super) own_sent: usize,
    /// Diskless: how much of the shared chunk it took.
    pub(super) shared_sent: usize,
    /// Disk-based: the file, once the child saved it.
    file: Option<File>,
    /// Disk-based: the whole payload was handed over.
    pub(super) file_done: bool,
    /// When a write last left part of a chunk behind (Redis's
    /// `repl_last_partial_write`): a replica stuck so is timed out.
    pub partial_since_ms: Option<i64>,
}

impl Out {
    pub fn new(slot: usize, header: Vec<u8>) -> Out {
        Out { slot, own: header, own_sent: 0, shared_sent: 0, file: None, file_done: false, partial_since_ms: None }
    }

    /// Disk-based: send the saved file after the header, as a bulk.
    pub fn attach_file(&mut self, path: &std::path::Path) -> io::Result<()> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        self.own.extend_from_slice(format!("${len}\r\n").as_bytes());
        self.file = Some(file);
        Ok(())
    }
}

/// The diskless pipe's read end and the chunk being relayed.
pub struct Pipe {
    fd: OwnedFd,
    pub(super) chunk: Vec<u8>,
    /// The last bytes read: a complete payload ends with the EOF mark.
    tail: Vec<u8>,
    pub eof: bool,
}

impl Pipe {
    pub fn new(fd: OwnedFd) -> Pipe {
        Pipe { fd, chunk: Vec::new(), tail: Vec::new(), eof: false }
    }

    /// The descriptor, once the relay is over (closed after `net` let go).
    pub fn into_fd(self) -> OwnedFd {
        self.fd
    }

    /// Whether what came through ended with `mark` (the child finished).
    pub fn complete(&self, mark: &[u8]) -> bool {
        self.eof && self.tail.ends_with(mark)
    }

    /// One read: Ok(Some(n)), n = 0 at EOF; Ok(None) when empty for now.
    fn read_chunk(&mut self) -> io::Result<Option<usize>> {
        self.chunk.resize(CHUNK, 0);
        loop {
            // SAFETY: reading into our own buffer from the pipe we own.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), self.chunk.as_mut_ptr().cast(), CHUNK) };
            if n >= 0 {
                let n = n as usize;
                self.chunk.truncate(n);
                self.eof = n == 0;
                self.tail.extend_from_slice(&self.chunk);
                let keep = self.tail.len().saturating_sub(64);
                self.tail.drain(..keep);
                return Ok(Some(n));
            }
            self.chunk.clear();
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::WouldBlock => return Ok(None),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(err),
            }
        }
    }
}

/// A pipe's read end, for `net` to register, while a relay reads it.
pub fn pipe_fd(srv: &Server) -> Option<i32> {
    let sync = state(srv).sync.as_ref()?;
    sync.pipe.as_ref().filter(|p| !p.eof).map(|p| p.fd.as_raw_fd())
}

/// `net` took the pipe off its poller: a finished one may close now (not
/// before, or its descriptor's number could be reused while registered).
pub fn drop_retired(srv: &mut Server) {
    state_mut(srv).retired_pipe = None;
}

/// The writer `net` lends: bytes written to slot's connection, Ok(0) when
/// it takes nothing now.
pub type Writer<'a> = dyn FnMut(usize, &[u8]) -> io::Result<usize> + 'a;

/// What a relay pass did.
#[derive(Default)]
pub struct Relayed {
    /// Slots left with bytes pending (they need WRITABLE events).
    pub blocked: Vec<usize>,
    /// Slots handed their whole payload.
    pub done: Vec<usize>,
    /// A replica failed (and is being closed).
    pub lost: bool,
}

/// Move what the replicas can take now.
pub fn relay(srv: &mut Server, write: &mut Writer, now_ms: i64) -> Relayed {
    for slot in std::mem::take(&mut state_mut(srv).newlines) {
        // Best effort: a full socket has no use for a keepalive.
        let _ = write(slot, b"\n");
    }
    let Some(sync) = state_mut(srv).sync.as_mut() else { return Relayed::default() };
    let mut failed = Vec::new();
    let mut blocked = Vec::new();
    let mut written = 0;
    loop {
        blocked.clear();
        for out in sync.outs.iter_mut() {
            let shared = sync.pipe.as_ref().map_or(&[][..], |p| &p.chunk[..]);
            match push(out, shared, write, now_ms, &mut written) {
                Ok(true) => {}
                Ok(false) => blocked.push(out.slot),
                Err(e) => failed.push((out.slot, e)),
            }
        }
        sync.outs.retain(|o| !failed.iter().any(|(s, _)| *s == o.slot));
        let Some(pipe) = sync.pipe.as_mut() else { break };
        if !blocked.is_empty() || pipe.eof || sync.outs.is_empty() {
            break;
        }
        match pipe.read_chunk() {
            Ok(Some(0)) => {
                crate::log_at!(
                    Warning,
                    "Diskless rdb transfer, done reading from pipe, {} replicas still up.",
                    sync.outs.len()
                );
                break;
            }
            Ok(Some(_)) => sync.outs.iter_mut().for_each(|o| o.shared_sent = 0),
            Ok(None) => break,
            Err(e) => {
                crate::log_at!(Warning, "Diskless rdb transfer, read error sending DB to replicas: {e}");
                pipe.eof = true;
                pipe.tail.clear();
                break;
            }
        }
    }
    let done = sync.finished();
    let diskless = sync.pipe.is_some();
    srv.stats.net_output_bytes += written;
    let lost = !failed.is_empty();
    for (slot, e) in failed {
        let what = if diskless { "Diskless rdb transfer, write" } else { "Write" };
        crate::log_at!(Warning, "{what} error sending DB to replica: {e}");
        srv.pending_kills.push(slot);
    }
    Relayed { blocked, done, lost }
}

/// Write one replica's pending bytes: Ok(true) once it has taken all it
/// can be given now.
fn push(out: &mut Out, shared: &[u8], write: &mut Writer, now_ms: i64, written: &mut u64) -> io::Result<bool> {
    loop {
        if out.own_sent == out.own.len() && out.file.is_some() && !out.file_done {
            refill_from_file(out)?;
        }
        let (buf, shared_part) = if out.own_sent < out.own.len() {
            (&out.own[out.own_sent..], false)
        } else if out.shared_sent < shared.len() {
            (&shared[out.shared_sent..], true)
        } else {
            out.partial_since_ms = None;
            return Ok(true);
        };
        let n = write(out.slot, buf)?;
        if n == 0 {
            // Redis stamps the stall on the write that left bytes behind.
            out.partial_since_ms.get_or_insert(now_ms);
            return Ok(false);
        }
        if n < buf.len() {
            out.partial_since_ms = Some(now_ms);
        }
        if shared_part {
            out.shared_sent += n;
        } else {
            out.own_sent += n;
        }
        *written += n as u64;
    }
}

fn refill_from_file(out: &mut Out) -> io::Result<()> {
    let Some(file) = out.file.as_mut() else { return Ok(()) };
    out.own.resize(CHUNK, 0);
    out.own_sent = 0;
    let n = file.read(&mut out.own)?;
    out.own.truncate(n);
    if n == 0 {
        out.file_done = true;
        out.file = None;
    }
    Ok(())
}
