//! RESP2/RESP3 codec shared by the Volley server, client and bench.
//!
//! - [`request`]: the server's incremental request parser (multibulk and
//!   inline), zero-copy: arguments are ranges into the caller's buffer.
//! - [`decimal`]: integers written as RESP lines (replies and headers).
//! - [`frame`]: a general reply/value decoder and encoder, used by clients,
//!   tools and tests, so both sides of the wire test one codec.
//!
//! No I/O and no async here: callers own sockets and buffers.
pub mod decimal;
pub mod frame;
pub mod request;
pub mod splitargs;

pub use decimal::push_decimal;
pub use frame::{decode_frame, encode_command, encode_command_parts, Frame, FrameError};
pub use request::{Args, ProtocolError, RequestParser};
