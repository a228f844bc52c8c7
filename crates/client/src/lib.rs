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

pub use autopipe::{AutoPipelined, Stats};
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
