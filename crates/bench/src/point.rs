//! What a sweep measures and produces: [`Op`], the command a point measured,
//! and [`Point`], one measured (server, RTT, depth, command) result. Owned
//! here so that `sweep` (which makes points) and `plot` (which draws them)
//! both depend on this file and not on each other.

/// Which command a point measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `GET volley-bench:sweep:<j>` (keys are set beforehand).
    Get,
    /// `SET volley-bench:sweep:<j> <16 bytes>`.
    Set,
}

impl Op {
    /// Upper-case command name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Get => "GET",
            Op::Set => "SET",
        }
    }
}

/// One measured point.
#[derive(Debug, Clone)]
pub struct Point {
    /// Server name.
    pub server: String,
    /// Injected RTT (ms).
    pub rtt_ms: f64,
    /// Commands per batch.
    pub depth: usize,
    /// Command measured.
    pub op: Op,
    /// Median throughput over the repeats (commands per second).
    pub ops_per_sec: f64,
    /// Every repeat's throughput.
    pub runs: Vec<f64>,
    /// Batch round-trip percentiles over all repeats (µs): p50, p99, max.
    pub batch_us: [u64; 3],
    /// Commands sent in timed runs.
    pub ops: u64,
}
