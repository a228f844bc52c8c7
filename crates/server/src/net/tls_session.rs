//! `tls-session-cache-timeout` for rustls's two ways of resuming a session:
//! TLS 1.3 (and 1.2) tickets and the TLS 1.2 session-id cache. OpenSSL
//! drops a cached session older than the timeout; rustls has no such
//! setting (its ring ticketer's keys live 6 hours, its memory cache only
//! evicts by size), so each stored session carries the second it was made
//! and is refused once older than the timeout, and the ticket lifetime the
//! client is told is the timeout.
use std::sync::Arc;

use rustls::server::{ProducesTickets, StoresServerSessions};

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn stamp(plain: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + plain.len());
    out.extend_from_slice(&now_secs().to_be_bytes());
    out.extend_from_slice(plain);
    out
}

/// The session without its stamp, if it is still within `timeout` seconds.
fn unstamp(mut stamped: Vec<u8>, timeout: u32) -> Option<Vec<u8>> {
    let made = u64::from_be_bytes(stamped.get(..8)?.try_into().ok()?);
    if now_secs().saturating_sub(made) > u64::from(timeout) {
        return None;
    }
    stamped.drain(..8);
    Some(stamped)
}

/// Tickets that expire after the timeout.
#[derive(Debug)]
pub struct Tickets {
    pub inner: Arc<dyn ProducesTickets>,
    pub timeout: u32,
}

impl ProducesTickets for Tickets {
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    fn lifetime(&self) -> u32 {
        self.timeout.min(self.inner.lifetime())
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.inner.encrypt(&stamp(plain))
    }

    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        unstamp(self.inner.decrypt(cipher)?, self.timeout)
    }
}

/// A session-id cache whose entries expire after the timeout.
#[derive(Debug)]
pub struct Cache {
    pub inner: Arc<dyn StoresServerSessions>,
    pub timeout: u32,
}

impl StoresServerSessions for Cache {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        self.inner.put(key, stamp(&value))
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        unstamp(self.inner.get(key)?, self.timeout)
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        unstamp(self.inner.take(key)?, self.timeout)
    }

    fn can_cache(&self) -> bool {
        self.inner.can_cache()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_expires_after_the_timeout() {
        assert_eq!(unstamp(stamp(b"abc"), 10).as_deref(), Some(&b"abc"[..]));
        let mut old = stamp(b"abc");
        old[..8].copy_from_slice(&(now_secs() - 11).to_be_bytes());
        assert_eq!(unstamp(old.clone(), 10), None);
        assert_eq!(unstamp(old, 20).as_deref(), Some(&b"abc"[..]));
        assert_eq!(unstamp(vec![1, 2], 10), None);
    }
}
