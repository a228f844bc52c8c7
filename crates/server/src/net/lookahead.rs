//! Key prefetching over a connection's buffered pipeline.
//!
//! Before executing a batch of pipelined commands, look ahead at up to
//! [`WINDOW`] complete frames, take each one's first key and warm the cache
//! for its keyspace lookup (`Db::prefetch_buckets` / `prefetch_entries`),
//! and for set and hash commands the lookup of their member or field in a
//! big collection (`Db::prefetch_members`), so the batch's cache misses
//! overlap instead of being paid one after another (the idea Valkey 8 uses
//! for its batch prefetching). Purely a hint: nothing here changes what any
//! command does, and a frame it cannot read is simply not prefetched.
use crate::engine::Db;
use crate::server::Server;
use resp::request::{peek_frame, Peeked};

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

/// What one window's frames name, as ranges into the pending input.
struct Window {
    frames: usize,
    keys: [(usize, usize); WINDOW],
    nkeys: usize,
    /// (key, member) of set and hash commands.
    members: [((usize, usize), (usize, usize)); WINDOW],
    nmembers: usize,
    /// The first frame showed the window is not worth prefetching.
    not_worth: bool,
}

impl Lookahead {
    /// Call with the unconsumed input (starting at a frame boundary) before
    /// executing its first frame. A new window is scanned once the last one
    /// is used up; a lone frame is not worth it here (nothing to overlap
    /// its miss with).
    pub fn before_frame(&mut self, pending: &[u8], srv: &Server, db: &Db) {
        self.finish(db);
        if self.left == 0 {
            let w = scan(pending, srv, db, WINDOW);
            if w.frames >= 2 {
                self.stage_keys(pending, db, &w);
                self.finish(db);
                let items: [(&[u8], &[u8]); WINDOW] = std::array::from_fn(|i| {
                    w.members.get(i).map_or((&[][..], &[][..]), |&(k, m)| (at(pending, k), at(pending, m)))
                });
                db.prefetch_members(&items[..w.nmembers]);
            }
            // Not worth it: look again only a window later, not per frame.
            self.left = if w.not_worth { WINDOW } else { w.frames };
        }
        self.left = self.left.saturating_sub(1);
    }

    /// Call right after a read, when other connections are still to be read
    /// before any command runs: stage one only, so the bucket loads overlap
    /// those reads; [`Lookahead::finish`] does stage two afterwards. Only
    /// the first frame: what a one-command-per-round-trip client needs;
    /// a longer pipeline's window is better prefetched just before it runs,
    /// while its lines are sure to still be in the cache.
    pub fn after_read(&mut self, pending: &[u8], srv: &Server, db: &Db) {
        if self.left == 0 && db.worth_prefetching() {
            let w = scan(pending, srv, db, 1);
            self.stage_keys(pending, db, &w);
            self.left = w.frames;
        }
    }

    /// Stage two of a window [`Lookahead::after_read`] started, if any.
    pub fn finish(&mut self, db: &Db) {
        if std::mem::take(&mut self.staged) {
            db.prefetch_entries(&self.hashes);
        }
    }

    fn stage_keys(&mut self, pending: &[u8], db: &Db, w: &Window) {
        db.prefetch_buckets(w.keys[..w.nkeys].iter().map(|&r| at(pending, r)), &mut self.hashes);
        self.staged = !self.hashes.is_empty();
    }
}

fn at(pending: &[u8], (s, e): (usize, usize)) -> &[u8] {
    &pending[s..e]
}

/// Peeks at up to `max_frames` complete frames. While the keyspace fits the
/// caches, only set and hash commands (whose members may not) are worth
/// the look, so a first frame of another kind ends the scan at once.
fn scan(pending: &[u8], srv: &Server, db: &Db, max_frames: usize) -> Window {
    let mut w = Window {
        frames: 0,
        keys: [(0, 0); WINDOW],
        nkeys: 0,
        members: [((0, 0), (0, 0)); WINDOW],
        nmembers: 0,
        not_worth: false,
    };
    let keyspace = db.worth_prefetching();
    let mut from = 0;
    while w.frames < max_frames.min(WINDOW) {
        let Some(p) = peek_frame(&pending[from..], MAX_ARGS) else {
            break;
        };
        let shift = |(s, e): (usize, usize)| (from + s, from + e);
        let collection = has_member(srv, pending, from, &p);
        if !keyspace && !collection && w.frames == 0 {
            w.not_worth = true;
            break;
        }
        if let Some(key) = p.arg(1) {
            w.keys[w.nkeys] = shift(key);
            w.nkeys += 1;
            if let (true, Some(member)) = (collection, p.arg(2)) {
                w.members[w.nmembers] = (shift(key), shift(member));
                w.nmembers += 1;
            }
        }
        from += p.len;
        w.frames += 1;
    }
    w
}

/// True for set and hash commands: their argument after the key is a
/// member or field (SADD, SISMEMBER, HSET, HGET, HINCRBY ...).
fn has_member(srv: &Server, pending: &[u8], from: usize, p: &Peeked) -> bool {
    let Some((s, e)) = p.arg(0) else { return false };
    srv.registry
        .find(&pending[from + s..from + e])
        .is_some_and(|id| matches!(srv.registry.spec(id).group, "set" | "hash"))
}
