//! Streams in RDB files (type STREAM_LISTPACKS_2, as Redis 7.0 writes them).
use std::io::{self, Write};

use super::format::Writer;
use crate::engine::stream::Stream;

/// Write a stream's body.
pub fn write_stream<W: Write>(_w: &mut Writer<W>, _s: &Stream) -> io::Result<()> {
    Err(io::Error::other("streams cannot be saved yet"))
}
