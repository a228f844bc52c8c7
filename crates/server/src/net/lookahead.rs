//! Key prefetching over a connection's buffered pipeline.
//!
//! Before executing a batch of pipelined commands, look ahead at up to
//! [`WINDOW`] complete frames, take each one's first key and warm the cache
//! for its keyspace lookup (`Db::prefetch`), so the batch's cache misses
//! overlap instead of being paid one after another (the idea Valkey 8 uses
//! for its batch prefetching). Purely a hint: nothing here changes what any
//! command does, and a frame it cannot read is simply not prefetched.
use crate::engine::Db;
use resp::request::peek_frame;

/// Frames looked at per window: roughly how many outstanding cache misses
/// a core can keep in flight.
const WINDOW: usize = 16;
/// Bigger frames are left alone (their cost is not in the key lookup, and a
/// peek at a huge frame still arriving would rescan it on every read).
const MAX_ARGS: usize = 8;

/// Per-connection lookahead state.
#[derive(Default)]
pub struct Lookahead {
    /// Frames after the current one whose keys were already prefetched.
    left: usize,
    hashes: Vec<u64>,
}

impl Lookahead {
    /// Call with the unconsumed input (starting at a frame boundary) before
    /// executing its first frame. One window is scanned once its frames are
    /// used up; a lone frame is not worth it (nothing to overlap with).
    pub fn before_frame(&mut self, pending: &[u8], db: &Db) {
        if self.left > 0 {
            self.left -= 1;
            return;
        }
        let mut keys = [(0usize, 0usize); WINDOW];
        let (mut frames, mut nkeys, mut at) = (0, 0, 0);
        while frames < WINDOW {
            let Some(p) = peek_frame(&pending[at..], MAX_ARGS) else {
                break;
            };
            if let Some((s, e)) = p.key {
                keys[nkeys] = (at + s, at + e);
                nkeys += 1;
            }
            at += p.len;
            frames += 1;
        }
        if frames >= 2 {
            db.prefetch(keys[..nkeys].iter().map(|&(s, e)| &pending[s..e]), &mut self.hashes);
        }
        self.left = frames.saturating_sub(1);
    }
}
