//! Error type: I/O failures, server error replies (with Redis's error code),
//! protocol violations and client-side misuse are kept apart.

use std::fmt;

/// An error reply sent by the server, e.g. `-WRONGTYPE Operation against ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// The first word of the reply: `ERR`, `WRONGTYPE`, `MOVED`, `NOSCRIPT`...
    pub code: String,
    /// The rest of the reply after the code.
    pub message: String,
}

impl ServerError {
    /// Split a raw error line into code and message.
    pub fn parse(raw: &[u8]) -> ServerError {
        let text = String::from_utf8_lossy(raw);
        match text.split_once(' ') {
            Some((code, msg)) => ServerError { code: code.to_string(), message: msg.to_string() },
            None => ServerError { code: text.to_string(), message: String::new() },
        }
    }
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.code)
        } else {
            write!(f, "{} {}", self.code, self.message)
        }
    }
}

/// Everything that can go wrong talking to a server.
#[derive(Debug)]
pub enum Error {
    /// Socket failure (connect, read, write, unexpected EOF).
    Io(std::io::Error),
    /// The server answered with an error reply.
    Server(ServerError),
    /// The server sent bytes that are not valid RESP, or an unexpected reply type.
    Protocol(String),
    /// A pipeline handle was read before its pipeline was synced.
    PipelineNotSynced,
    /// A MULTI/EXEC block was aborted (WATCH conflict: EXEC returned null).
    TransactionAborted,
    /// A blocking command (BLPOP, SUBSCRIBE...) was sent on a shared connection.
    BlockingCommand(String),
    /// The connection (or its background task) is gone.
    Closed,
    /// Client misuse, e.g. `exec()` without `multi()`.
    Usage(String),
}

impl Error {
    /// The Redis error code if this is a server error reply.
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Server(e) => Some(&e.code),
            _ => None,
        }
    }

    /// A copy suitable for handing to several waiters (I/O errors keep kind and text).
    pub fn duplicate(&self) -> Error {
        match self {
            Error::Io(e) => Error::Io(std::io::Error::new(e.kind(), e.to_string())),
            Error::Server(e) => Error::Server(e.clone()),
            Error::Protocol(s) => Error::Protocol(s.clone()),
            Error::PipelineNotSynced => Error::PipelineNotSynced,
            Error::TransactionAborted => Error::TransactionAborted,
            Error::BlockingCommand(s) => Error::BlockingCommand(s.clone()),
            Error::Closed => Error::Closed,
            Error::Usage(s) => Error::Usage(s.clone()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Server(e) => write!(f, "server error: {e}"),
            Error::Protocol(s) => write!(f, "protocol error: {s}"),
            Error::PipelineNotSynced => write!(f, "pipeline not synced: call sync() before reading a handle"),
            Error::TransactionAborted => write!(f, "transaction aborted (EXEC returned null)"),
            Error::BlockingCommand(c) => write!(f, "blocking command {c} needs a dedicated connection"),
            Error::Closed => write!(f, "connection closed"),
            Error::Usage(s) => write!(f, "usage error: {s}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<resp::FrameError> for Error {
    fn from(e: resp::FrameError) -> Self {
        Error::Protocol(e.0)
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;
