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
    /// Upcoming frames, from the head of the input on, whose keys were
    /// already prefetched (or are being: see `staged`).
    left: usize,
    /// Hashes of the keys of the last window scanned.
    hashes: Vec<u64>,
    /// Stage one (buckets) is done for `hashes`, stage two (entries) is not.
    staged: bool,
}

impl Lookahead {
    /// Call with the unconsumed input (starting at a frame boundary) before
    /// executing its first frame. A new window is scanned once the last one
    /// is used up; a lone frame is not worth it here (nothing to overlap
    /// its miss with).
    pub fn before_frame(&mut self, pending: &[u8], db: &Db) {
        self.finish(db);
        if self.left == 0 {
            self.left = self.scan(pending, db, 2, WINDOW);
            self.finish(db);
        }
        self.left = self.left.saturating_sub(1);
    }

    /// Call right after a read, when other connections are still to be read
    /// before any command runs: stage one only, so the bucket loads overlap
    /// those reads; [`Lookahead::finish`] does stage two afterwards. Only
    /// the first frame: what a one-command-per-round-trip client needs;
    /// a longer pipeline's window is better prefetched just before it runs,
    /// while its lines are sure to still be in the cache.
    pub fn after_read(&mut self, pending: &[u8], db: &Db) {
        if self.left == 0 {
            self.left = self.scan(pending, db, 1, 1);
        }
    }

    /// Stage two of a window [`Lookahead::after_read`] started, if any.
    pub fn finish(&mut self, db: &Db) {
        if std::mem::take(&mut self.staged) {
            db.prefetch_entries(&self.hashes);
        }
    }

    /// Starts loading the buckets of the keys of up to `max_frames` (at
    /// most [`WINDOW`]) complete frames if there are at least `min_frames`
    /// of them; returns how many frames it covered.
    fn scan(&mut self, pending: &[u8], db: &Db, min_frames: usize, max_frames: usize) -> usize {
        if !db.worth_prefetching() {
            return 0;
        }
        let mut keys = [(0usize, 0usize); WINDOW];
        let (mut frames, mut nkeys, mut at) = (0, 0, 0);
        while frames < max_frames.min(WINDOW) {
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
        if frames < min_frames {
            return 0;
        }
        db.prefetch_buckets(keys[..nkeys].iter().map(|&(s, e)| &pending[s..e]), &mut self.hashes);
        self.staged = !self.hashes.is_empty();
        frames
    }
}
