//! `volley-bench`: reproduces the pipelining seed experiments against any
//! Redis-protocol server, sweeps throughput against pipeline depth and
//! round-trip time, and injects RTT with a built-in TCP delay proxy (this
//! machine has no `tc netem`).
//!
//! - [`proxy`]: the delay proxy ([`proxy::spawn_proxy`]).
//! - [`conn`]: a small blocking RESP connection on top of the `resp` codec.
//! - [`seeds`]: the seed experiments and their table.
//! - [`sweep`] and [`plot`]: depth × RTT sweeps, CSV and PNG output.
pub mod conn;
pub mod plot;
pub mod proxy;
pub mod seeds;
pub mod sweep;

pub use proxy::{parse_duration, spawn_proxy, ProxyHandle};
