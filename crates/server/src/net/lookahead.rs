//! Key prefetching over the buffered pipelines of the ready connections.
//!
//! Before a connection's commands run, look ahead at up to [`WINDOW`] of
//! its complete frames, take each one's first key and warm the cache for
//! its keyspace lookup (`Db::prefetch_buckets`, then `prefetch_entries`),
//! and for set and hash commands the lookup of their member or field in a
//! big collection (`Db::prefetch_members`), so those cache misses overlap
//! each other and the execution of other connections' commands instead of
//! being paid one after another (the idea behind Valkey 8's batch
//! prefetching). The event loop staggers the stages over the ready
//! connections (see `EventLoop::execute_ready`). The key hashes computed
//! on the way are handed to the commands ([`KnownHash`]), which then skip
//! hashing their first key again. Otherwise purely a hint: nothing here
//! changes what any command does, and a frame it cannot read is simply not
//! prefetched.
//!
//! A known hash names the key by its address in the input buffer, so the
//! connection must [`Lookahead::forget`] the window whenever it moves or
//! replaces bytes of that buffer.
use crate::dispatch::Registry;
use crate::engine::db::KnownHash;
use crate::engine::Db;
use resp::request::{peek_frame, Peeked};

/// Frames looked at per window: roughly how many outstanding cache misses
/// a core can keep in flight.
const WINDOW: usize = 16;
/// Bigger frames are left alone (their cost is not in the key lookup, and a
/// peek at a huge frame still arriving would rescan it on every read).
const MAX_ARGS: usize = 8;

type Range = (usize, usize);

/// Per-connection lookahead state.
#[derive(Default)]
pub struct Lookahead {
    /// Upcoming frames, from the head of the input on, whose keys were
    /// already prefetched (or are being: see `staged`).
    left: usize,
    /// Each frame of the last window scanned, in order: its first key with
    /// that key's hash, when it was hashed (its bucket prefetched).
    known: Vec<Option<KnownHash>>,
    /// Index in `known` of the next frame to run.
    next: usize,
    /// (key, member) ranges in the input of the window's set and hash
    /// commands.
    members: Vec<(Range, Range)>,
    /// Stage one (key buckets) is done, stage two (key entries, then
    /// members) is not.
    staged: bool,
}

impl Lookahead {
    /// Stage one for the next window, if the last one is used up: hashes
    /// the keys of up to [`WINDOW`] complete frames of `pending` (the
    /// unconsumed input, starting at a frame boundary) and starts loading
    /// their buckets. Returns whether there is a stage two to do.
    pub fn stage(&mut self, pending: &[u8], reg: &Registry, db: &Db, min_frames: usize) -> bool {
        if self.left == 0 {
            self.left = self.scan(pending, reg, db, min_frames);
        }
        self.staged
    }

    /// Stage two, once stage one had a moment: loads the key entries, then
    /// the members' buckets and entries in big sets and hashes. `pending`
    /// must be the same input as at stage one (only ranges into it were
    /// kept; a range that no longer fits is skipped).
    pub fn finish(&mut self, pending: &[u8], db: &Db) {
        if !std::mem::take(&mut self.staged) {
            return;
        }
        db.prefetch_entries(self.known.iter().flatten().map(KnownHash::hash));
        if !self.members.is_empty() {
            let get = |(s, e): Range| pending.get(s..e).unwrap_or_default();
            let items: [(&[u8], &[u8]); WINDOW] =
                std::array::from_fn(|i| self.members.get(i).map_or((&[][..], &[][..]), |&(k, m)| (get(k), get(m))));
            db.prefetch_members(&items[..self.members.len().min(WINDOW)]);
        }
    }

    /// Call before executing the frame at the head of `pending`: finishes a
    /// window staged earlier, or prefetches a new one at once when the last
    /// is used up (a lone frame is not worth it: nothing to overlap with).
    /// Returns the frame's first key with its hash, if that was computed.
    pub fn before_frame(&mut self, pending: &[u8], reg: &Registry, db: &Db) -> Option<KnownHash> {
        if self.stage(pending, reg, db, 2) {
            self.finish(pending, db);
        }
        self.left = self.left.saturating_sub(1);
        let known = self.known.get(self.next).copied().flatten();
        self.next += 1;
        known
    }

    /// Drop the window: the input bytes it describes moved or were replaced.
    pub fn forget(&mut self) {
        self.left = 0;
        self.staged = false;
        self.known.clear();
    }

    /// Peeks at up to [`WINDOW`] complete frames and does stage one for
    /// them if there are at least `min_frames`; returns how many frames the
    /// window covers. While the keyspace fits the caches, only set and hash
    /// commands (whose members may not) are worth the look: a first frame
    /// of another kind makes the whole window count as covered.
    fn scan(&mut self, pending: &[u8], reg: &Registry, db: &Db, min_frames: usize) -> usize {
        let mut keys = [(0, 0); WINDOW];
        let mut frame_of_key = [0; WINDOW];
        let (mut frames, mut nkeys, mut from) = (0, 0, 0);
        let keyspace = db.worth_prefetching();
        self.members.clear();
        self.known.clear();
        self.next = 0;
        while frames < WINDOW {
            let Some(p) = peek_frame(&pending[from..], MAX_ARGS) else {
                break;
            };
            let shift = |(s, e): Range| (from + s, from + e);
            let collection = has_member(reg, &pending[from..], &p);
            if !keyspace && !collection && frames == 0 {
                return WINDOW;
            }
            if let Some(key) = p.arg(1) {
                keys[nkeys] = shift(key);
                frame_of_key[nkeys] = frames;
                nkeys += 1;
                if let (true, Some(member)) = (collection, p.arg(2)) {
                    self.members.push((shift(key), shift(member)));
                }
            }
            from += p.len;
            frames += 1;
        }
        if frames < min_frames {
            self.members.clear();
            return 0;
        }
        if keyspace && nkeys > 0 {
            self.known.resize(frames, None);
            for (&(s, e), &frame) in keys[..nkeys].iter().zip(&frame_of_key) {
                let key = &pending[s..e];
                self.known[frame] = db.prefetch_bucket(key).map(|hash| KnownHash::new(key, hash));
            }
        }
        self.staged = !self.known.is_empty() || !self.members.is_empty();
        frames
    }
}

/// True for set and hash commands: their argument after the key is a
/// member or field (SADD, SISMEMBER, HSET, HGET, HINCRBY ...).
fn has_member(reg: &Registry, frame: &[u8], p: &Peeked) -> bool {
    let Some((s, e)) = p.arg(0) else { return false };
    reg.find(&frame[s..e]).is_some_and(|id| matches!(reg.spec(id).group, "set" | "hash"))
}
