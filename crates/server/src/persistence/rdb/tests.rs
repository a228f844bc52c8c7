//! Round trips of whole keyspaces through the RDB writer and reader.
