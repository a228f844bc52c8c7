//! Data operations: keyspace, values, expiry. No RESP, no sockets.
pub mod glob;
