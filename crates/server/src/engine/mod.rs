//! Data operations: keyspace, values, expiry. No RESP, no sockets.

pub mod bitfield;
pub mod bitmap;
