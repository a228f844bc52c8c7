//! Data operations: keyspace, values, expiry. Typed arguments in,
//! `Result<T, EngineError>` out; no RESP, no sockets.
pub mod bitfield;
pub mod bitmap;
pub mod bytes;
pub mod db;
pub mod dict;
pub mod digest;
pub mod evict;
pub mod geo;
pub mod glob;
pub mod hash;
pub mod hll;
pub mod hll_sparse;
pub mod keybuf;
pub mod lcs;
pub mod list;
pub mod memsize;
pub mod numeric;
pub mod sampling;
pub mod set;
pub mod siphash;
pub mod sort;
pub mod stream;
pub mod value;
pub mod zset;
pub mod ztree;

pub use db::{Db, Entry, Keyspace};
pub use hash::{Hash, HashLimits};
pub use set::Set;
pub use value::{Str, Value};

/// Errors a data operation can report; commands turn them into reply lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineError {
    WrongType,
    NotInteger,
    NotFloat,
    Overflow,
    NanOrInfinity,
    StringTooLong,
}

impl EngineError {
    /// The reply line without its leading `-`, exactly as Redis 7.0 words it.
    pub fn message(self) -> &'static str {
        match self {
            EngineError::WrongType => "WRONGTYPE Operation against a key holding the wrong kind of value",
            EngineError::NotInteger => "ERR value is not an integer or out of range",
            EngineError::NotFloat => "ERR value is not a valid float",
            EngineError::Overflow => "ERR increment or decrement would overflow",
            EngineError::NanOrInfinity => "ERR increment would produce NaN or Infinity",
            EngineError::StringTooLong => "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
        }
    }
}
