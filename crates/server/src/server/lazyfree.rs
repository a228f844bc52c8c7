//! Lazy freeing (Redis's lazyfree.c): values and whole keyspace tables taken
//! out of the dataset are dropped on one background thread, so deleting a
//! 10M-member set does not stall the event loop. Owns the thread, the job
//! channel, the effort rule that decides what is worth sending there, and
//! the `lazyfree_pending_objects` / `lazyfreed_objects` counters of INFO.
//!
//! One long-lived thread rather than a thread per job: the allocator gives
//! each thread its own counting slot (see `allocator`), and a thread per
//! FLUSHALL would use them up.
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

use crate::engine::hash::Hash;
use crate::engine::set::Set;
use crate::engine::stream::Stream;
use crate::engine::zset::ZSet;
use crate::engine::Value;

use super::Server;

/// Redis's `LAZYFREE_THRESHOLD`: values whose free effort is at most this
/// are freed inline, as handing them to the thread would cost more.
pub const LAZYFREE_THRESHOLD: usize = 64;

/// Nice value of the lazy-free thread (the event loop runs at 0).
const LAZYFREE_NICE: libc::c_int = 5;

/// Something to drop on the thread, with the number of objects it counts
/// for in INFO.
type Job = (Box<dyn Send>, usize);

#[derive(Default)]
struct Counters {
    /// Objects queued and not yet freed (`lazyfree_pending_objects`).
    pending: AtomicUsize,
    /// Objects freed by the thread since start or CONFIG RESETSTAT
    /// (`lazyfreed_objects`).
    freed: AtomicUsize,
}

/// The lazy-free thread's handle, held by [`super::Server`]. The thread is
/// started by the first job, so servers that never free lazily (and unit
/// tests) run none.
#[derive(Default)]
pub struct Lazyfree {
    counters: Arc<Counters>,
    worker: Option<Sender<Job>>,
    /// Whether the databases were last told to keep implicitly removed
    /// values for [`reap`] (an implicit-delete option was on).
    dbs_keep_drops: bool,
}

/// Hand the values the databases removed implicitly (expiry, overwrite,
/// `dbDelete`-style removal) to the thread, and keep the databases' lazy
/// flags in step with `lazyfree-lazy-expire` / `lazyfree-lazy-server-del`
/// (the engine cannot reach the thread, so it leaves those values in
/// `Db::lazy_drops`). Called after every command and cron tick; with both
/// options off, as by default, it costs two loads and a branch.
#[inline]
pub fn reap(srv: &mut Server) {
    let on = srv.config.lazyfree_lazy_expire || srv.config.lazyfree_lazy_server_del;
    if on || srv.lazyfree.dbs_keep_drops {
        reap_dbs(srv, on);
    }
}

#[cold]
fn reap_dbs(srv: &mut Server, on: bool) {
    let (expire, server_del) = (srv.config.lazyfree_lazy_expire, srv.config.lazyfree_lazy_server_del);
    for db in &mut srv.keyspace.dbs {
        // Set on every pass rather than on CONFIG SET alone: a db replaced
        // wholesale (DEBUG RELOAD, a sync from a master) starts unset.
        db.lazy_expire = expire;
        db.lazy_server_del = server_del;
        for v in db.lazy_drops.drain(..) {
            srv.lazyfree.free(v, true);
        }
    }
    srv.lazyfree.dbs_keep_drops = on;
}

impl Lazyfree {
    /// Free a value removed from the keyspace: on the thread if `lazy` and
    /// its effort is over [`LAZYFREE_THRESHOLD`], here otherwise (Redis's
    /// `freeObjAsync` when lazy, `decrRefCount` when not). The entry point
    /// for UNLINK, the `lazyfree-lazy-*` options and eviction.
    #[inline]
    pub fn free(&mut self, v: Value, lazy: bool) {
        if lazy && free_effort(&v) > LAZYFREE_THRESHOLD {
            self.send(Box::new(v), 1);
        }
        // Otherwise `v` drops here.
    }

    /// Free a value, choosing by a `lazyfree-lazy-*` option's value.
    /// Same as [`Lazyfree::free`]; named for call sites that pass config.
    pub fn free_value(&mut self, v: Value, lazy_option: bool) {
        self.free(v, lazy_option)
    }

    /// Free whole detached tables of `keys` keys (FLUSHDB/FLUSHALL ASYNC,
    /// Redis's `emptyDbAsync`): always on the thread, whatever their size,
    /// and counted as `keys` objects.
    pub fn free_tables<T: Send + 'static>(&mut self, tables: T, keys: usize) {
        self.send(Box::new(tables), keys);
    }

    /// Free something counted as `objects` (script caches, function
    /// libraries) on the thread when there are more than
    /// [`LAZYFREE_THRESHOLD`] of them, as Redis's `freeLuaScriptsAsync`.
    pub fn free_many<T: Send + 'static>(&mut self, items: T, objects: usize) {
        if objects > LAZYFREE_THRESHOLD {
            self.send(Box::new(items), objects);
        }
    }

    /// `lazyfree_pending_objects`.
    pub fn pending(&self) -> usize {
        self.counters.pending.load(Relaxed)
    }

    /// `lazyfreed_objects`.
    pub fn freed(&self) -> usize {
        self.counters.freed.load(Relaxed)
    }

    /// CONFIG RESETSTAT: Redis's `lazyfreeResetStats` zeroes the freed
    /// count only (pending objects are still on their way).
    pub fn reset_stats(&self) {
        self.counters.freed.store(0, Relaxed);
    }

    #[cold]
    fn send(&mut self, job: Box<dyn Send>, objects: usize) {
        let counters = Arc::clone(&self.counters);
        let Some(tx) = self.worker() else { return drop(job) };
        counters.pending.fetch_add(objects, Relaxed);
        if let Err(e) = tx.send((job, objects)) {
            // The thread is gone: free here rather than lose the count.
            counters.pending.fetch_sub(objects, Relaxed);
            self.worker = None;
            drop(e.0);
        }
    }

    /// The channel to the thread, starting it on first use; None if no
    /// thread can be started (everything is then freed inline).
    fn worker(&mut self) -> Option<&Sender<Job>> {
        if self.worker.is_none() {
            let (tx, rx) = channel::<Job>();
            let counters = Arc::clone(&self.counters);
            let spawned = std::thread::Builder::new().name("lazyfree".into()).spawn(move || {
                // Freeing is never urgent: on a busy machine the event loop
                // should win the CPU. On Linux `who` 0 names this thread only.
                // SAFETY: plain syscall; failure just keeps the default nice.
                unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, LAZYFREE_NICE) };
                for (job, objects) in rx {
                    drop(job);
                    counters.pending.fetch_sub(objects, Relaxed);
                    counters.freed.fetch_add(objects, Relaxed);
                }
            });
            if spawned.is_ok() {
                self.worker = Some(tx);
            }
        }
        self.worker.as_ref()
    }
}

/// The work freeing `v` takes, as Redis's `lazyfreeGetFreeEffort`: roughly
/// the number of allocations. Compact single-allocation encodings (strings,
/// intsets, listpacks) count 1; lists count their nodes; hash tables and
/// skiplists their elements; streams their nodes plus, per consumer group,
/// one plus the first group's PEL size (an estimate that stays O(1)).
pub fn free_effort(v: &Value) -> usize {
    match v {
        Value::Str(_) => 1,
        Value::List(l) => l.node_count(),
        Value::Set(Set::Table(d)) => d.len(),
        Value::Set(Set::Ints(_)) => 1,
        Value::Hash(Hash::Table(d)) => d.len(),
        Value::Hash(Hash::Listpack(_)) => 1,
        Value::ZSet(z) => match **z {
            ZSet::Big(_) => z.len(),
            ZSet::Small(_) => 1,
        },
        Value::Stream(s) => stream_effort(s),
    }
}

fn stream_effort(s: &Stream) -> usize {
    let groups = s.groups.len();
    let first_pel = s.groups.values().next().map_or(0, |g| g.pel.len());
    s.node_count() + groups * (1 + first_pel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::list::{End, Fill, List};
    use crate::engine::Str;

    #[test]
    fn strings_cost_one() {
        let big = Value::Str(Str::from_vec(vec![b'x'; 1 << 20]));
        assert_eq!(free_effort(&big), 1);
        assert_eq!(free_effort(&Value::Str(Str::Int(7))), 1);
    }

    #[test]
    fn hashtable_sets_cost_their_members_intsets_one() {
        let mut s = Set::for_member(b"a");
        for i in 0..100 {
            s.insert(format!("m{i}").as_bytes(), 512);
        }
        assert_eq!(free_effort(&Value::Set(s)), 100);
        let mut ints = Set::new_intset();
        for i in 0..100 {
            ints.insert(i.to_string().as_bytes(), 512);
        }
        assert_eq!(free_effort(&Value::Set(ints)), 1);
    }

    #[test]
    fn lists_cost_their_nodes() {
        let mut l = List::new();
        for _ in 0..10 {
            l.push(End::Tail, b"v", Fill(-2));
        }
        assert_eq!(free_effort(&Value::List(l.clone())), l.node_count());
        assert!(l.node_count() <= 1);
        let big = vec![b'x'; 10_000];
        for _ in 0..100 {
            l.push(End::Tail, &big, Fill(-2));
        }
        assert!(free_effort(&Value::List(l)) > LAZYFREE_THRESHOLD);
    }

    #[test]
    fn small_values_are_freed_inline_big_ones_on_the_thread() {
        let mut lf = Lazyfree::default();
        lf.free(Value::Str(Str::from_bytes(b"small")), true);
        assert!(lf.worker.is_none(), "a small value must not start the thread");
        let mut s = Set::for_member(b"a");
        for i in 0..1000 {
            s.insert(format!("m{i}").as_bytes(), 512);
        }
        lf.free(Value::Set(s.clone()), false);
        assert!(lf.worker.is_none(), "not lazy: freed inline");
        lf.free(Value::Set(s), true);
        for _ in 0..1000 {
            if lf.freed() == 1 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert_eq!((lf.freed(), lf.pending()), (1, 0));
        lf.free_tables(vec![0u8; 10], 3);
        for _ in 0..1000 {
            if lf.freed() == 4 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert_eq!(lf.freed(), 4);
        lf.reset_stats();
        assert_eq!(lf.freed(), 0);
    }
}
