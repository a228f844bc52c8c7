//! `volley-bench`: reproduces the pipelining seed experiments against any
//! Redis-protocol server, sweeps throughput against pipeline depth and
//! round-trip time, and injects RTT with a built-in TCP delay proxy (this
//! machine has no `tc netem`).
//!
//! - [`proxy`]: the delay proxy ([`proxy::spawn_proxy`]).
//! - [`conn`]: a small blocking RESP connection on top of the `resp` codec.
//! - [`seeds`]: the seed experiments and their table.
//! - [`sweep`] and [`plot`]: depth × RTT sweeps, CSV and PNG output; their
//!   shared result types are in [`point`].
//! - [`meter`]: client peak RSS and CPU per measurement.
//! - [`sets`]: the 1M-SET modes (pipelined chunks, `volley_client::Coalescer`).
//! - [`targets`] and [`multiplex`]: the acceptance targets as ratios.
//! - [`cache`], [`cache_probe`] and [`zipf`]: the cache-aside benchmark of
//!   issue #16 (Zipf keys, GET then SET on a miss; `bench/cache.py`);
//!   [`cache_sim`] replays its key sequence against a model cache.
pub mod cache;
pub mod cache_probe;
pub mod cache_sim;
pub mod conn;
pub mod floor;
pub mod floor_io;
pub mod meter;
pub mod multiplex;
pub mod plot;
pub mod point;
pub mod proxy;
pub mod seeds;
pub mod sets;
pub mod sweep;
pub mod targets;
pub mod zipf;

pub use proxy::{parse_duration, spawn_proxy, ProxyHandle};
