//! How the stream reaches replicas: each replica is a cursor into the
//! shared buffer (`backlog`), and its connection writes straight from the
//! buffer's blocks once its own output (handshake replies, `+CONTINUE`)
//! is out. Nothing is copied per replica; the memory a replica keeps is
//! the blocks from its cursor on, counted as Redis counts it (its output
//! limit, `mem_clients_slaves`, what `maxmemory` leaves out).
use std::io;

use super::{state, state_mut, Replication};
use crate::server::Server;

/// The oldest offset a streaming replica has yet to take (None: no
/// replica streams), which the backlog must keep.
pub(super) fn needed(r: &Replication) -> Option<i64> {
    r.replicas.iter().filter(|x| x.streams()).map(|x| x.sent + 1).min()
}

/// The stream filled a block and started another, or a replica took
/// some: drop the blocks nobody needs any more (never per command).
#[cold]
pub(super) fn block_added(r: &mut Replication) {
    let needed = needed(r);
    if let Some(b) = r.backlog.as_mut() {
        b.trim(needed);
    }
}

/// Streaming replicas with bytes to take, added to `slots`: the loop
/// checks their output limits (held ones too: a snapshot's wait can
/// outgrow them) and writes them at the end of its turn.
pub(super) fn behind(srv: &Server, slots: &mut Vec<usize>) {
    let r = state(srv);
    for x in r.replicas.iter().filter(|x| x.streams() && x.sent < r.offset) {
        if !slots.contains(&x.slot) {
            slots.push(x.slot);
        }
    }
}

/// Memory the replica in `slot` keeps in the shared buffer: the blocks
/// from its cursor on (its output, for limits and CLIENT LIST).
pub fn stream_pending(srv: &Server, slot: usize) -> usize {
    let r = state(srv);
    let Some(x) = r.replicas.iter().find(|x| x.slot == slot && x.streams()) else { return 0 };
    r.backlog.as_ref().map_or(0, |b| b.held_from(x.sent + 1))
}

/// Write the stream the replica in `slot` has not taken, from the shared
/// blocks, through `write` (its connection: TCP or TLS). Ok(true) when
/// it took everything (or is not a streaming replica); Ok(false) when
/// the socket is full. A replica held (its snapshot on its way) or
/// being killed gets nothing: the latter must resume, by PSYNC, from
/// where the kill found it.
pub fn send_stream(
    srv: &mut Server,
    slot: usize,
    mut write: impl FnMut(&[u8]) -> io::Result<usize>,
) -> io::Result<bool> {
    if srv.clients.get(slot).is_none_or(|c| c.out_held) || srv.pending_kills.contains(&slot) {
        return Ok(true);
    }
    let r = srv.replication.get_mut::<Replication>();
    let Some(i) = r.replicas.iter().position(|x| x.slot == slot && x.streams()) else { return Ok(true) };
    let Some(b) = r.backlog.as_ref() else { return Ok(true) };
    let mut sent = r.replicas[i].sent;
    let mut result = Ok(true);
    let mut written = 0u64;
    loop {
        let chunk = b.chunk_at(sent + 1);
        if chunk.is_empty() {
            break;
        }
        match write(chunk) {
            Ok(0) => {
                result = Err(io::ErrorKind::WriteZero.into());
                break;
            }
            Ok(n) => {
                sent += n as i64;
                written += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                result = Ok(false);
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    let over = b.histlen() > b.size();
    r.replicas[i].sent = sent;
    // Blocks only this replica kept may go now it took them, as Redis
    // trims when a replica moves to its next block.
    if over && written > 0 {
        block_added(r);
    }
    srv.stats.net_repl_output_bytes += written;
    result
}

/// `mem_total_replication_buffers`, `mem_replication_backlog` and
/// `mem_clients_slaves`, as Redis splits the shared buffer: the backlog
/// owns up to its size, replicas the rest (only while there are some).
/// The fourth figure is what `maxmemory` leaves out: everything over the
/// backlog's size, replicas or not (blocks a gone replica held are
/// trimmed as the stream moves on, and must not cause evictions).
pub fn buffer_memory(srv: &Server) -> [usize; 4] {
    let r = state(srv);
    let Some(b) = r.backlog.as_ref() else { return [0; 4] };
    let total = b.memory();
    let size = b.size();
    let over = total.saturating_sub(size + (size / (16 << 10) + 1) * super::backlog::BLOCK_OVERHEAD);
    if !r.replicas.is_empty() && total > size {
        [total, size, total - size, over]
    } else {
        [total, total, 0, over]
    }
}

/// A replica left: the blocks only its cursor kept may go.
pub(super) fn replica_gone(srv: &mut Server) {
    block_added(state_mut(srv));
}
