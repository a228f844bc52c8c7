//! RESP2/RESP3 codec.
pub mod splitargs;
