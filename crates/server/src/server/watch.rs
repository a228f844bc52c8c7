//! WATCHed keys: which clients watch which (db, key), so that any change to
//! a key (a write that changed the dataset, expiry, a flush) makes those
//! clients' next EXEC fail, as Redis's optimistic locking does.
use std::collections::HashMap;

type DbKey = (usize, Vec<u8>);

#[derive(Default)]
pub struct Watches {
    by_key: HashMap<DbKey, Vec<usize>>,
}

impl Watches {
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Record that client `cid` watches `key` in `db`; false if it already did.
    pub fn watch(&mut self, cid: usize, db: usize, key: &[u8]) -> bool {
        let clients = self.by_key.entry((db, key.to_vec())).or_default();
        if clients.contains(&cid) {
            return false;
        }
        clients.push(cid);
        true
    }

    /// Forget client `cid`'s watches on `keys`.
    pub fn unwatch(&mut self, cid: usize, keys: &[DbKey]) {
        for k in keys {
            if let Some(clients) = self.by_key.get_mut(k) {
                clients.retain(|&c| c != cid);
                if clients.is_empty() {
                    self.by_key.remove(k);
                }
            }
        }
    }

    /// Clients watching `key` in `db`.
    pub fn watchers(&self, db: usize, key: &[u8]) -> &[usize] {
        if self.by_key.is_empty() {
            return &[];
        }
        self.by_key.get(&(db, key.to_vec())).map_or(&[], Vec::as_slice)
    }

    /// All watched keys of `db` (a flush touches those that exist).
    pub fn keys_in_db(&self, db: usize) -> Vec<Vec<u8>> {
        self.by_key.keys().filter(|(d, _)| *d == db).map(|(_, k)| k.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_unwatch_and_lookup() {
        let mut w = Watches::default();
        assert!(w.watch(1, 0, b"a"));
        assert!(!w.watch(1, 0, b"a"));
        assert!(w.watch(2, 0, b"a"));
        assert!(w.watch(2, 3, b"a"));
        assert_eq!(w.watchers(0, b"a"), &[1, 2]);
        assert_eq!(w.keys_in_db(3), vec![b"a".to_vec()]);
        w.unwatch(1, &[(0, b"a".to_vec())]);
        assert_eq!(w.watchers(0, b"a"), &[2]);
        w.unwatch(2, &[(0, b"a".to_vec()), (3, b"a".to_vec())]);
        assert!(w.is_empty());
    }
}
