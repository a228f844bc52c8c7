//! The ACL log (ACL LOG): recent refusals, similar ones folded into one
//! entry with a count, newest first, at most `acllog-max-len`.
use std::collections::VecDeque;

use super::Denied;

/// Where the refused command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Toplevel,
    Multi,
    Lua,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub count: u64,
    pub reason: Denied,
    pub context: Context,
    /// The command, key or channel refused (`AUTH` for a failed login).
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    /// Unix ms of the last occurrence.
    pub ctime: i64,
    /// CLIENT INFO of the client, at the last occurrence.
    pub client_info: String,
}

impl Denied {
    pub fn name(self) -> &'static str {
        match self {
            Denied::Command => "command",
            Denied::Key => "key",
            Denied::Channel => "channel",
            Denied::Auth => "auth",
        }
    }
}

/// Entries within this many ms of each other may fold together.
const GROUPING_MS: i64 = 60_000;
/// How many recent entries are searched for one to fold into.
const SCAN: usize = 10;

#[derive(Debug, Default)]
pub struct AclLog {
    pub entries: VecDeque<Entry>,
}

impl AclLog {
    /// Record a refusal, folding it into a similar recent entry.
    pub fn add(&mut self, e: Entry, max_len: usize) {
        let similar = |o: &Entry| {
            o.reason == e.reason
                && o.context == e.context
                && (o.ctime - e.ctime).abs() <= GROUPING_MS
                && o.object == e.object
                && o.username == e.username
        };
        if let Some(i) = self.entries.iter().take(SCAN).position(similar) {
            let mut old = self.entries.remove(i).expect("found");
            old.count += 1;
            old.ctime = e.ctime;
            old.client_info = e.client_info;
            self.entries.push_front(old);
            return;
        }
        self.entries.push_front(e);
        self.entries.truncate(max_len);
    }
    pub fn reset(&mut self) {
        self.entries.clear();
    }
}
