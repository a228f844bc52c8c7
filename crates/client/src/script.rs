//! Lua scripts addressed by SHA-1, for `EVALSHA` with `SCRIPT LOAD` fallback.

use std::sync::Arc;

/// A Lua script and its SHA-1 name.
#[derive(Debug, Clone)]
pub struct Script {
    source: Vec<u8>,
    sha: String,
}

impl Script {
    /// Wrap `source`, computing its SHA-1 as Redis does.
    pub fn new(source: impl AsRef<[u8]>) -> Arc<Script> {
        let source = source.as_ref().to_vec();
        let sha = crate::sha1::sha1_hex(&source);
        Arc::new(Script { source, sha })
    }

    /// The lowercase hex SHA-1.
    pub fn sha(&self) -> &str {
        &self.sha
    }

    /// The script text.
    pub fn source(&self) -> &[u8] {
        &self.source
    }
}
