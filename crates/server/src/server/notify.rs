//! Keyspace notifications (`notify-keyspace-events`): a command's handler
//! names each event as Redis does (`ctx.notify(class, "lpush", key)`), and
//! the notification goes out as a Pub/Sub message on
//! `__keyspace@<db>__:<key>` (the event) and `__keyevent@<db>__:<event>`
//! (the key), for the classes configured.
//!
//! Events the engine causes are logged there and turned into notifications
//! here, before the event of the command that caused them, as in Redis:
//! `new` for keys created (while class `n` is on) and `expired` for keys
//! found expired (class `x`; see `changes::collect_expired`), and `keymiss`
//! for read lookups that found nothing (class `m`, logged by
//! `Stats::key_miss`). Off, a
//! notification costs one branch on the configured classes.
use crate::config::{NOTIFY_EXPIRED, NOTIFY_KEYEVENT, NOTIFY_KEYSPACE, NOTIFY_KEY_MISS, NOTIFY_NEW};

use super::pubsub::Kind;
use super::Server;

impl Server {
    /// An event of `class` happened to `key` of database `db`.
    #[inline]
    pub fn notify(&mut self, class: u32, event: &str, db: usize, key: &[u8]) {
        if self.config.notify_keyspace_events & class != 0 {
            self.notify_now(event, db, key);
        }
    }

    #[cold]
    fn notify_now(&mut self, event: &str, db: usize, key: &[u8]) {
        // What the engine logged happened first.
        self.flush_engine_events();
        self.send_notification(event, db, key);
    }

    /// Publish one event on the keyspace and/or keyevent channel.
    fn send_notification(&mut self, event: &str, db: usize, key: &[u8]) {
        let flags = self.config.notify_keyspace_events;
        // Channel names are built in one buffer kept across notifications.
        let mut channel = std::mem::take(&mut self.notify_channel);
        if flags & NOTIFY_KEYSPACE != 0 {
            channel_name(&mut channel, b"__keyspace@", db, key);
            self.publish(&channel, event.as_bytes(), Kind::Channel);
        }
        if flags & NOTIFY_KEYEVENT != 0 {
            channel_name(&mut channel, b"__keyevent@", db, event.as_bytes());
            self.publish(&channel, key, Kind::Channel);
        }
        self.notify_channel = channel;
    }

    /// `expired` events (and their other consumers) for keys the engine
    /// found expired, then `new` events for keys it created: a write to a
    /// key that had just expired reads `expired`, `new`, then its own event,
    /// as from Redis. (The two logs are separate, so a command that creates
    /// one key before finding another expired reports them in this order
    /// too, where Redis would interleave them.)
    pub fn flush_engine_events(&mut self) {
        super::changes::collect_expired(self);
        // A lookup of an expired key reads `expired`, then `keymiss`.
        for (db, key) in std::mem::take(&mut self.stats.missed_keys) {
            self.send_notification("keymiss", db, &key);
        }
        if self.config.notify_keyspace_events & NOTIFY_NEW != 0 {
            for db in 0..self.keyspace.dbs.len() {
                for key in std::mem::take(&mut self.keyspace.dbs[db].new_log) {
                    self.send_notification("new", db, &key);
                }
            }
        }
    }

    /// Sent for each key found expired (`changes::collect_expired`).
    pub fn notify_expired(&mut self, db: usize, key: &[u8]) {
        if self.config.notify_keyspace_events & NOTIFY_EXPIRED != 0 {
            self.send_notification("expired", db, key);
        }
    }

    /// Keep the engine's logs on exactly while notifications need them
    /// (after CONFIG SET notify-keyspace-events).
    pub fn update_notify_tracking(&mut self) {
        self.stats.log_misses = self.config.notify_keyspace_events & NOTIFY_KEY_MISS != 0;
        self.stats.missed_keys.clear();
        let track_new = self.config.notify_keyspace_events & NOTIFY_NEW != 0;
        for db in &mut self.keyspace.dbs {
            db.track_new = track_new;
            if !track_new {
                db.new_log.clear();
            }
        }
        self.update_expired_tracking();
    }
}

/// `<head><db>__:<tail>` into `out`, replacing what it held.
fn channel_name(out: &mut Vec<u8>, head: &[u8], db: usize, tail: &[u8]) {
    out.clear();
    out.extend_from_slice(head);
    resp::push_decimal(out, db);
    out.extend_from_slice(b"__:");
    out.extend_from_slice(tail);
}
