//! The memory figures INFO's memory section and MEMORY STATS/DOCTOR share:
//! what the allocator counts (see `crate::allocator`), its peak, the
//! footprint of an empty server, and the overheads Redis lists beside the
//! dataset (client buffers, the AOF buffer, script caches, the keyspace's
//! own tables). The dataset is what remains, as in Redis's
//! `getMemoryOverheadData`.
use super::Server;
use crate::engine::memsize;

/// Marks kept across calls: the peak of `used_memory` and the bytes
/// allocated once the server was ready, before any data was loaded. The
/// peak is a `Cell` so readers holding `&Server` (INFO) record it too.
#[derive(Debug, Default, Clone)]
pub struct MemoryMarks {
    pub peak: std::cell::Cell<u64>,
    pub startup: u64,
}

/// One reading of the figures; `lua_caches` and `functions_caches` are the
/// script caches' bytes, measured by the layers that own them.
#[derive(Debug, Default, Clone)]
pub struct MemoryFigures {
    pub used: u64,
    pub rss: u64,
    pub peak: u64,
    pub startup: u64,
    pub clients_normal: u64,
    /// Replicas' connections (their pending stream): `mem_clients_slaves`.
    pub clients_replicas: u64,
    /// The shared replication buffer (`mem_total_replication_buffers`),
    /// the backlog's share of it (`mem_replication_backlog`), and what of
    /// it `maxmemory` leaves out; set by the replication layer.
    pub repl_buffers: u64,
    pub repl_backlog: u64,
    pub repl_not_counted: u64,
    pub aof_buffer: u64,
    pub lua_caches: u64,
    pub functions_caches: u64,
    /// Per non-empty db: (index, main table bytes, expiry table bytes).
    pub dbs: Vec<(usize, u64, u64)>,
    pub keys: u64,
}

impl MemoryFigures {
    /// Everything counted that is not the dataset.
    pub fn overhead(&self) -> u64 {
        let tables: u64 = self.dbs.iter().map(|&(_, m, e)| m + e).sum();
        let clients = self.clients_normal + self.clients_replicas;
        self.startup + clients + self.repl_backlog + self.aof_buffer + self.lua_caches + self.functions_caches + tables
    }

    pub fn dataset(&self) -> u64 {
        self.used.saturating_sub(self.overhead())
    }

    /// Bytes above the startup footprint (at least 1: a divisor).
    pub fn net(&self) -> u64 {
        self.used.saturating_sub(self.startup).max(1)
    }

    /// `used_memory_dataset_perc`: the dataset's share of the memory above
    /// the startup footprint.
    pub fn dataset_perc(&self) -> f64 {
        (self.dataset() as f32 * 100.0 / self.net() as f32) as f64
    }

    pub fn peak_perc(&self) -> f64 {
        (self.used as f32 * 100.0 / self.peak.max(1) as f32) as f64
    }

    /// Memory `maxmemory` does not count (Redis's
    /// `freeMemoryGetNotCountedMemory`): the AOF buffer and the shared
    /// replication buffer beyond the backlog's size (the backlog counts).
    pub fn not_counted_for_evict(&self) -> u64 {
        self.aof_buffer + self.repl_not_counted
    }
}

impl Server {
    /// Records `used_memory`'s high-water mark (cron and readers call
    /// this: a per-command update would sum the allocator's counters on
    /// the hot path) and returns the current figure.
    pub fn note_memory_peak(&self) -> u64 {
        let used = crate::allocator::used_memory();
        self.memory.peak.set(self.memory.peak.get().max(used));
        used
    }

    /// Reads every figure; `aof_buffer` is the pending AOF bytes.
    pub fn memory_figures(&self, aof_buffer: u64, lua_caches: u64, functions_caches: u64) -> MemoryFigures {
        let used = self.note_memory_peak();
        let dbs = self
            .keyspace
            .dbs
            .iter()
            .enumerate()
            .filter(|(_, db)| !db.is_empty())
            .map(|(i, db)| {
                let [main, expires] = memsize::table_overhead(db);
                (i, main as u64, expires as u64)
            })
            .collect();
        MemoryFigures {
            used,
            rss: crate::allocator::rss_bytes(),
            peak: self.memory.peak.get(),
            startup: self.memory.startup.min(used),
            // The client eviction figures: buffers plus what clients hold
            // in server state (MULTI queues, watches, subscriptions).
            clients_normal: (self.client_mem.sum() - self.client_mem.replica_sum()) as u64,
            clients_replicas: self.client_mem.replica_sum() as u64,
            repl_buffers: 0,
            repl_backlog: 0,
            repl_not_counted: 0,
            aof_buffer,
            lua_caches,
            functions_caches,
            dbs,
            keys: self.keyspace.total_keys() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dataset_is_what_the_overheads_leave() {
        let f = MemoryFigures {
            used: 10_000,
            startup: 1_000,
            clients_normal: 500,
            aof_buffer: 100,
            lua_caches: 200,
            functions_caches: 0,
            dbs: vec![(0, 700, 300), (3, 100, 0)],
            ..Default::default()
        };
        assert_eq!(f.overhead(), 2_900);
        assert_eq!(f.dataset(), 7_100);
        assert_eq!(f.net(), 9_000);
        assert!((f.dataset_perc() - 78.888_89).abs() < 1e-3, "{}", f.dataset_perc());
        let empty = MemoryFigures { used: 500, startup: 1_000, ..Default::default() };
        assert_eq!((empty.dataset(), empty.net()), (0, 1));
    }
}
