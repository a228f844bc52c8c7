//! Per-client memory accounting and client eviction (`maxmemory-clients`).
//!
//! Owns each client's memory figure (CLIENT LIST `tot-mem` between its
//! commands) and their running sum, what Redis's `getClientMemoryUsage`
//! counts: the connection's buffers (reported by `net`) plus what the client
//! holds in server state (queued MULTI commands, watched keys, pub/sub
//! subscriptions, tracking prefixes). Figures are refreshed when a client's
//! buffers change (its turn, delivered pushes, a write, the cron), never per
//! reply. `net` closes the clients [`victims`] names: the largest first,
//! until the sum is under the limit, as Redis's size buckets order them.
use super::{ClientInfo, Server};
use crate::config::Config;

/// Redis never lets client eviction go under 128 KiB, so a bad setting
/// cannot cut every client off the server.
const MIN_LIMIT: usize = 128 << 10;
/// Redis's per-key cost of a watched key (list node + watchedKey).
const WATCHED_KEY: usize = 56;
/// Redis's per-subscription overheads: a pattern list node, a channel
/// dict entry with its bucket.
const PATTERN_SUB: usize = 24;
const CHANNEL_SUB: usize = 32;
/// Redis's estimate per tracking-prefix rax node.
const TRACKING_PREFIX: usize = 32;
/// Bookkeeping per queued MULTI command (Redis's multiCmd).
const QUEUED_CMD: usize = 32;

/// The figures of every client and their sum.
#[derive(Debug, Default)]
pub struct ClientMemory {
    /// Last figure of each client slot (0 for free slots).
    figures: Vec<usize>,
    sum: usize,
    /// Which slots' figures are replicas' (their output is the stream
    /// they have not taken yet), and the sum of those figures.
    replica: Vec<bool>,
    replica_sum: usize,
    /// "Over client maxmemory after evicting all evictable clients" was
    /// logged and the sum has not gone under the limit since (Redis logs
    /// it on every attempt; once per episode says the same).
    stuck_logged: bool,
}

impl ClientMemory {
    /// Memory of all clients together.
    pub fn sum(&self) -> usize {
        self.sum
    }

    /// Memory of the replicas' connections (INFO `mem_clients_slaves`);
    /// `maxmemory` does not count it, as Redis leaves replication buffers
    /// beyond the backlog out of eviction.
    pub fn replica_sum(&self) -> usize {
        self.replica_sum
    }

    /// A client's last figure.
    pub fn figure(&self, cid: usize) -> usize {
        self.figures.get(cid).copied().unwrap_or(0)
    }

    fn set(&mut self, cid: usize, mem: usize, replica: bool) {
        if cid >= self.figures.len() {
            self.figures.resize(cid + 1, 0);
            self.replica.resize(cid + 1, false);
        }
        self.sum = self.sum - self.figures[cid] + mem;
        if self.replica[cid] {
            self.replica_sum -= self.figures[cid];
        }
        if replica {
            self.replica_sum += mem;
        }
        self.figures[cid] = mem;
        self.replica[cid] = replica;
    }

    /// The client is gone: its memory no longer counts.
    pub fn forget(&mut self, cid: usize) {
        self.set(cid, 0, false);
    }
}

/// The client eviction limit in bytes, 0 when off (Redis's
/// `getClientEvictionLimit`): a percentage needs `maxmemory` set.
pub fn limit(cfg: &Config) -> usize {
    let m = cfg.maxmemory_clients;
    let bytes = if m.percent {
        if cfg.maxmemory == 0 || m.value == 0 {
            return 0;
        }
        (cfg.maxmemory as f64 * m.value as f64 / 100.0) as u64
    } else {
        m.value
    };
    if bytes == 0 {
        return 0;
    }
    usize::try_from(bytes).unwrap_or(usize::MAX).max(MIN_LIMIT)
}

/// True when client eviction is on: the one branch the request path pays.
#[inline]
pub fn enabled(cfg: &Config) -> bool {
    cfg.maxmemory_clients.value != 0
}

/// Redis's `clientEvictionAllowed`: normal and pub/sub clients without
/// CLIENT NO-EVICT (there are no master or replica clients here; MONITOR
/// clients count as normal, as in Redis).
pub fn evictable(c: &ClientInfo) -> bool {
    // As Redis: replication links are never evicted.
    !c.no_evict && c.role == super::ClientRole::Normal
}

/// Bytes of the arguments of the client's queued MULTI commands (CLIENT
/// LIST `multi-mem`).
pub fn multi_mem(c: &ClientInfo) -> usize {
    c.tx.as_ref().map_or(0, |t| t.argv_mem)
}

/// What a client holds in server state, as Redis estimates it: queued
/// commands, watched keys, subscriptions, tracking prefixes (their
/// overheads, not the shared strings themselves).
pub fn state_memory(srv: &Server, cid: usize) -> usize {
    let Some(c) = srv.clients.get(cid) else { return 0 };
    let tx = c.tx.as_ref().map_or(0, |t| t.argv_mem + t.queued.capacity() * QUEUED_CMD);
    let mut mem = tx + c.watched.len() * WATCHED_KEY;
    if let Some(s) = srv.pubsub.subs(cid) {
        mem += s.patterns.len() * PATTERN_SUB + (s.channels.len() + s.shard.len()) * CHANNEL_SUB;
    }
    if let Some(t) = srv.tracking.client(cid) {
        mem += t.prefixes.len() * TRACKING_PREFIX;
    }
    mem
}

/// Record the connection's buffers of client `cid` and refresh its figure.
/// Returns true when client eviction is on and the sum is at its limit.
pub fn update(srv: &mut Server, cid: usize, bufs: super::Buffers) -> bool {
    let mem = bufs.total + state_memory(srv, cid);
    let Some(c) = srv.clients.get_mut(cid) else { return false };
    c.bufs = bufs;
    let replica = c.role == super::ClientRole::Replica;
    srv.client_mem.set(cid, mem, replica);
    over_limit(srv)
}

/// The sum of client memory reached the eviction limit (Redis evicts at
/// `>=`).
pub fn over_limit(srv: &Server) -> bool {
    let l = limit(&srv.config);
    l > 0 && srv.client_mem.sum >= l
}

/// The clients to disconnect, largest first, so that the sum goes under
/// the limit; `connected` says which slots have a connection to close.
/// Logs Redis's warning when evicting every candidate is not enough.
pub fn victims(srv: &mut Server, connected: impl Fn(usize) -> bool) -> Vec<usize> {
    let l = limit(&srv.config);
    if l == 0 || srv.client_mem.sum < l {
        srv.client_mem.stuck_logged = false;
        return Vec::new();
    }
    let mut candidates: Vec<(usize, usize)> = srv
        .clients
        .iter()
        .filter(|&(cid, c)| evictable(c) && connected(cid))
        .map(|(cid, _)| (srv.client_mem.figure(cid), cid))
        .collect();
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    let mut sum = srv.client_mem.sum;
    let mut out = Vec::new();
    for (mem, cid) in candidates {
        if sum < l {
            break;
        }
        sum -= mem;
        out.push(cid);
    }
    if sum >= l && !srv.client_mem.stuck_logged {
        srv.client_mem.stuck_logged = true;
        crate::log_at!(Warning, "Over client maxmemory after evicting all evictable clients");
    }
    out
}

/// The "Evicting client: ..." log text: the CLIENT LIST fields that say
/// who it was and why.
pub fn describe(srv: &Server, cid: usize, now_ms: i64) -> String {
    let Some(c) = srv.clients.get(cid) else { return String::new() };
    let name = c.name.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    format!(
        "id={} addr={} laddr={} fd={} name={name} age={} idle={} db={} qbuf={} qbuf-free={} multi-mem={} omem={} tot-mem={}",
        c.id,
        c.addr,
        c.laddr,
        c.fd,
        (now_ms - c.created_ms).max(0) / 1000,
        (now_ms - c.last_interaction_ms).max(0) / 1000,
        c.db,
        c.bufs.qbuf,
        c.bufs.qbuf_free,
        multi_mem(c),
        c.bufs.pending_out,
        srv.client_mem.figure(cid),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MemOrPercent;

    #[test]
    fn limit_follows_redis() {
        let mut cfg = Config::default();
        assert_eq!(limit(&cfg), 0);
        cfg.maxmemory_clients = MemOrPercent { value: 1000, percent: false };
        assert_eq!(limit(&cfg), MIN_LIMIT, "never under 128 KiB");
        cfg.maxmemory_clients = MemOrPercent { value: 3_000_000, percent: false };
        assert_eq!(limit(&cfg), 3_000_000);
        cfg.maxmemory_clients = MemOrPercent { value: 7, percent: true };
        assert_eq!(limit(&cfg), 0, "a percentage of no maxmemory is off");
        cfg.maxmemory = 6 << 20;
        assert_eq!(limit(&cfg), (6 << 20) * 7 / 100);
    }

    #[test]
    fn figures_sum_and_forget() {
        let mut m = ClientMemory::default();
        m.set(3, 100, false);
        m.set(1, 50, false);
        m.set(3, 70, false);
        assert_eq!(m.sum(), 120);
        m.forget(1);
        assert_eq!((m.sum(), m.figure(1), m.figure(3)), (70, 0, 70));
    }

    #[test]
    fn replica_figures_have_their_own_sum() {
        let mut m = ClientMemory::default();
        m.set(2, 100, false);
        m.set(5, 400, true);
        assert_eq!((m.sum(), m.replica_sum()), (500, 400));
        // A client that became a replica moves its figure over.
        m.set(2, 150, true);
        assert_eq!((m.sum(), m.replica_sum()), (550, 550));
        m.forget(5);
        assert_eq!((m.sum(), m.replica_sum()), (150, 150));
    }
}
