//! Streams in a rewritten AOF: the commands that rebuild one.
use crate::engine::stream::Stream;

/// Append the commands that rebuild stream `key`.
pub fn rewrite_stream(_out: &mut Vec<u8>, _key: &[u8], _s: &Stream) {}
