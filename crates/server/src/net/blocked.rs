//! Blocked clients in the event loop: re-running the commands of clients
//! whose keys became ready, resuming those CLIENT UNBLOCK or a pause's end
//! let go, and answering those whose timeout passed.
use super::EventLoop;
use crate::server::blocking::Resume;
use crate::server::unix_ms;

impl EventLoop {
    /// Re-run the commands of clients blocked on keys that writes touched,
    /// first blocked first; serving one may make more keys ready.
    pub(super) fn serve_ready_keys(&mut self) {
        if !self.srv.blocking.has_ready() {
            return;
        }
        // The clock moves on first, as in Redis's handleClientsBlockedOnKeys:
        // a key that expired while the command that readied it ran (a DEBUG
        // SLEEP after a PEXPIRE in one EXEC) is found expired and its waiter
        // stays blocked, instead of being served the turn's stale time.
        let now = unix_ms();
        while self.srv.blocking.has_ready() {
            for (cid, how) in self.srv.blocking.take_resumed() {
                self.resume(cid, how, now);
            }
            for key in self.srv.blocking.take_ready() {
                for cid in self.srv.blocking.waiters_of(&key) {
                    self.rerun_blocked(cid, now, &key.1);
                }
            }
        }
    }

    /// Re-run a blocked command, trying `ready` (the key whose change woke
    /// it) before its other keys: Redis serves a client from the key that
    /// became ready, not from the first of its keys that has data.
    fn rerun_blocked(&mut self, cid: usize, now: i64, ready: &[u8]) {
        let Some(argv) = self.srv.blocking.take_argv(cid) else { return };
        let Some(conn) = self.conns.get_mut(cid) else { return };
        self.srv.blocking.rerun = Some((cid, false));
        self.srv.blocking.rerun_key.clear();
        self.srv.blocking.rerun_key.extend_from_slice(ready);
        let reordered = ready_key_first(self.reg, &argv, ready);
        let run = crate::dispatch::Argv::new(&[], reordered.as_ref().unwrap_or(&argv));
        crate::dispatch::execute(&mut self.srv, self.reg, cid, &mut conn.out, &run, now);
        let blocked_again = matches!(self.srv.blocking.rerun.take(), Some((_, true)));
        if blocked_again {
            self.srv.blocking.restore_argv(cid, argv);
        } else {
            self.srv.blocking.unblock(cid);
            self.queue_flush(cid);
            self.again.push(cid);
        }
    }

    /// Resume a client let go by CLIENT UNBLOCK or the end of a pause.
    fn resume(&mut self, cid: usize, how: Resume, now: i64) {
        let resp3 = self.srv.clients.get(cid).is_some_and(|c| c.resp == 3);
        let Some(conn) = self.conns.get_mut(cid) else { return };
        match how {
            Resume::Rerun(argv) => {
                let run = crate::dispatch::Argv::new(&[], &argv);
                crate::dispatch::execute(&mut self.srv, self.reg, cid, &mut conn.out, &run, now);
                if self.srv.blocking.is_blocked(cid) {
                    // Paused again, or blocked on keys: it resumes later.
                    return;
                }
            }
            Resume::TimedOut(kind, name) => {
                crate::dispatch::write_timeout_reply(&mut conn.out, resp3, kind);
                self.count_unblocked(&name, false);
            }
            Resume::Error(name, text) => {
                crate::dispatch::Reply::new(&mut conn.out, resp3).error(text);
                self.srv.stats.error_replies += 1;
                self.srv.stats.count_error(text.as_bytes());
                // The blocked command fails, as its own call would have.
                self.count_unblocked(&name, true);
            }
        }
        self.queue_flush(cid);
        self.again.push(cid);
    }

    /// Reply to blocked clients whose timeout passed, and resume them.
    pub(super) fn expire_blocked(&mut self, now: i64) {
        for cid in self.srv.blocking.expired(now) {
            let Some(b) = self.srv.blocking.unblock(cid) else { continue };
            let resp3 = self.srv.clients.get(cid).is_some_and(|c| c.resp == 3);
            let Some(conn) = self.conns.get_mut(cid) else { continue };
            crate::dispatch::write_timeout_reply(&mut conn.out, resp3, b.on_timeout);
            self.count_unblocked(b.argv.get(&[], 0), false);
            self.queue_flush(cid);
            self.again.push(cid);
        }
    }

    /// A blocked command that ends without being served (timeout, CLIENT
    /// UNBLOCK) counts as one call, failed or not, as Redis counts it when
    /// it unblocks.
    fn count_unblocked(&mut self, name: &[u8], failed: bool) {
        if let Some(id) = self.reg.find(name) {
            let stats = &mut self.srv.stats.commands[id];
            stats.calls += 1;
            stats.failed += u64::from(failed);
        }
    }
}

/// `argv` with `key` moved to the first key position (the other keys keep
/// their order), or None when it is already first or not a key of `argv`.
fn ready_key_first(reg: &crate::dispatch::Registry, argv: &resp::Args, key: &[u8]) -> Option<resp::Args> {
    let get = |i: usize| argv.get(&[], i);
    let spec = reg.spec(reg.find(get(0))?);
    if spec.name.starts_with("xread") {
        // Stream reads pair each key with an ID; they serve the ready key
        // themselves (`Blocking::rerun_key`).
        return None;
    }
    let positions = crate::dispatch::keys::key_positions(spec, argv.len(), get);
    let at = positions.iter().position(|&p| get(p) == key)?;
    if at == 0 {
        return None;
    }
    let mut order: Vec<usize> = (0..argv.len()).collect();
    order[positions[0]] = positions[at];
    for w in 1..=at {
        order[positions[w]] = positions[w - 1];
    }
    Some(resp::Args::from_parts(order.into_iter().map(get)))
}
