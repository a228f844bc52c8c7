//! What ACL changes do to connected clients (Redis 7.0): a deleted user's
//! clients are disconnected, ACL LOAD disconnects every client of a
//! non-default user, and subscribers that lost a channel permission are
//! disconnected. Also the ACL log entry of a refusal.
use super::log::{Context, Entry};
use super::{Denied, User, DEFAULT_USER};
use crate::server::pubsub::Kind;
use crate::server::Server;

impl Server {
    /// Disconnect client `slot`: at the end of its reply if it is the one
    /// running the command (`current`), else at the end of the turn. It
    /// runs as an unauthenticated default user meanwhile.
    fn acl_kill(&mut self, slot: usize, current: usize) {
        let Some(c) = self.clients.get_mut(slot) else { return };
        c.user = DEFAULT_USER;
        c.authenticated = false;
        if slot == current {
            c.close_after_reply = true;
        } else if !self.pending_kills.contains(&slot) {
            self.pending_kills.push(slot);
        }
    }

    /// ACL DELUSER: disconnect the clients of the deleted user `user`.
    pub fn acl_kill_user_clients(&mut self, user: usize, current: usize) {
        let victims: Vec<usize> = self.clients.iter().filter(|(_, c)| c.user == user).map(|(s, _)| s).collect();
        for slot in victims {
            self.acl_kill(slot, current);
        }
    }

    /// ACL LOAD replaced every user: disconnect every client of a user
    /// other than `default` (whose record is updated in place).
    pub fn acl_kill_non_default_clients(&mut self, current: usize) {
        let victims: Vec<usize> = self.clients.iter().filter(|(_, c)| c.user != DEFAULT_USER).map(|(s, _)| s).collect();
        for slot in victims {
            self.acl_kill(slot, current);
        }
    }

    /// ACL SETUSER changed `user` from `old`: disconnect its subscribers
    /// whose channels or patterns the new channel rules no longer cover
    /// (nothing to do when the new rules are a superset).
    pub fn acl_kill_revoked_subscribers(&mut self, user: usize, old: &User, current: usize) {
        let new = self.acl.user(user);
        if new.selectors.iter().any(|s| s.all_channels) {
            return;
        }
        let upcoming: Vec<Vec<u8>> = new.selectors.iter().flat_map(|s| s.channels.iter().cloned()).collect();
        let superset = old.selectors.iter().all(|s| !s.all_channels && s.channels.iter().all(|c| upcoming.contains(c)));
        if superset {
            return;
        }
        let allowed = |ch: &[u8], pattern: bool| {
            upcoming.iter().any(|p| if pattern { p == ch } else { crate::engine::glob::glob_match(p, ch, false) })
        };
        let mut victims = Vec::new();
        for (slot, c) in self.clients.iter() {
            if c.user != user {
                continue;
            }
            let ps = &self.pubsub;
            let bad = ps.patterns_of(slot).iter().any(|p| !allowed(p, true))
                || ps.channels_of(slot, Kind::Channel).iter().any(|ch| !allowed(ch, false))
                || ps.channels_of(slot, Kind::Shard).iter().any(|ch| !allowed(ch, false));
            if bad {
                victims.push(slot);
            }
        }
        for slot in victims {
            self.acl_kill(slot, current);
        }
    }

    /// Record a refusal in the ACL log and INFO's counters. `username`
    /// defaults to the client's user (a failed AUTH names the one tried);
    /// `argv_mem` is the size of the arguments of the command the client
    /// runs, which its client-info reports as Redis's does.
    pub fn acl_log(
        &mut self,
        cid: usize,
        reason: Denied,
        at: (Context, usize),
        object: &[u8],
        username: Option<&[u8]>,
    ) {
        let (context, argv_mem) = at;
        self.acl.count_denied(reason);
        let user = self.clients.get(cid).map_or(DEFAULT_USER, |c| c.user);
        let username = username.map_or_else(|| self.acl.user(user).name.clone(), <[u8]>::to_vec);
        let client_info = self.client_info_line.map(|f| f(self, cid, argv_mem)).unwrap_or_default();
        let max = self.config.other.get("acllog-max-len").and_then(|v| v.parse().ok()).unwrap_or(128);
        let entry = Entry {
            count: 1,
            reason,
            context,
            object: object.to_vec(),
            username,
            ctime: crate::server::unix_ms(),
            client_info,
        };
        self.acl.log.add(entry, max);
    }
}
