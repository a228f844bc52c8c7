//! RESP2/RESP3 codec.
