//! `volley-client`: a client for any Redis-protocol server (Volley or Redis).
//!
//! - [`Connection`] (blocking, `std::net`) and [`aio::Connection`] (tokio),
//!   with HELLO/AUTH/SELECT from [`ConnectOptions`].
//! - Explicit pipelines ([`Pipeline`], [`aio::Pipeline`]) queueing into a
//!   [`Batch`]: a [`Handle`] per command (reading it before `sync()` is
//!   [`Error::PipelineNotSynced`]), MULTI/EXEC blocks, EVALSHA with
//!   `SCRIPT LOAD` fallback, automatic chunking with concurrent reading and
//!   bounded in-flight bytes, streaming of replies.
//! - [`Coalescer`]: merges compatible writes (SET→MSET, INCR→INCRBY...) while
//!   giving each caller its own outcome.
//! - [`AutoPipelined`]: many tasks share one connection; concurrent requests
//!   go out in one write.
//!
//! Replies are [`Value`]s, the shared codec's `resp::Frame`.
//!
//! ```no_run
//! use volley_client::{ConnectOptions, Connection, Error, Handle};
//! # fn main() -> volley_client::Result<()> {
//! let mut conn = Connection::connect(&ConnectOptions::new("127.0.0.1", 6379))?;
//! let mut p = conn.pipeline();
//! let h: Handle<i64> = p.incr("counter");
//! assert!(matches!(h.get(), Err(Error::PipelineNotSynced)));
//! p.sync()?;
//! println!("counter = {}", h.get()?);
//!
//! // Any length, flat memory: replies stream to a callback while writing.
//! let mut sp = conn.streaming_pipeline();
//! let mut total = 0;
//! let mut on_reply = |_i: usize, r: volley_client::Result<volley_client::Value>| total += r.is_ok() as usize;
//! for i in 0..10_000_000 {
//!     sp.queue(&["SET", &format!("k{i}"), "v"]);
//!     sp.stream_into(&mut on_reply)?;
//! }
//! sp.finish(&mut on_reply)?;
//! # Ok(()) }
//! ```
//!
//! Shapes kept for cluster routing later: every queued command carries its
//! first key ([`Batch::commands`] yields wire bytes and key), located by
//! [`cmd::first_key_index`].

#![warn(missing_docs)]
pub mod aio;
mod autopipe;
mod batch;
pub mod cmd;
mod coalesce;
mod conn;
mod error;
mod options;
mod pipeline;
mod router;
mod script;
mod sha1;
mod streaming;
mod value;

pub use autopipe::{AutoPipelined, Stats, ANSWER_CHUNK};
pub use batch::{Batch, Handle, QueuedCommand};
pub use coalesce::{Coalescer, CoalescerConfig, Ticket};
pub use conn::Connection;
pub use error::{Error, Result, ServerError};
pub use options::ConnectOptions;
pub use pipeline::Pipeline;
pub use script::Script;
pub use sha1::sha1_hex;
pub use streaming::StreamingPipeline;
pub use value::{FromValue, Value, ValueExt};
