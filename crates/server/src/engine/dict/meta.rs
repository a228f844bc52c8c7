//! Per-key metadata: the `u32` every entry's key carries for the table's
//! owner ([`KeyBuf::meta`]). The keyspace keeps each key's access clock and
//! TTL flag there, so they cost no bytes beside the value; these lookups
//! hand the word out together with the value.
use super::{chain_iter, Dict, Entry};
use crate::engine::keybuf::KeyBuf;
use std::hash::BuildHasher;

impl<V, S> Dict<V, S> {
    /// Iterates over (key, metadata, value) in no particular order.
    pub fn iter_meta(&self) -> impl Iterator<Item = (&[u8], u32, &V)> {
        self.tables
            .iter()
            .flat_map(|t| t.iter())
            .flat_map(|bucket| chain_iter(bucket))
            .map(|e| (&*e.key, e.key.meta, &e.value))
    }
}

impl<V, S: BuildHasher> Dict<V, S> {
    /// [`Dict::get_hashed`] with the key's metadata.
    pub fn get_meta_hashed(&self, hash: u64, key: &[u8]) -> Option<(u32, &V)> {
        if self.is_empty() {
            return None;
        }
        self.find(hash, key).map(|e| (e.key.meta, &e.value))
    }

    /// [`Dict::get_mut_hashed`] with the key's metadata, writable. Performs
    /// one rehash step.
    pub fn get_meta_mut_hashed(&mut self, hash: u64, key: &[u8]) -> Option<(&mut u32, &mut V)> {
        if self.is_empty() {
            return None;
        }
        self.step_if_rehashing();
        self.find_mut(hash, key).map(|e| (&mut e.key.meta, &mut e.value))
    }

    /// [`Dict::insert_new_hashed`] storing `meta` with the key.
    pub fn insert_new_meta_hashed(&mut self, hash: u64, key: &[u8], meta: u32, value: V) -> (&mut u32, &mut V) {
        self.step_if_rehashing();
        debug_assert!(self.find(hash, key).is_none(), "insert_new_meta_hashed on a present key");
        let mut key = KeyBuf::new(key);
        key.meta = meta;
        let e = self.add_new_entry(hash, key, value);
        (&mut e.key.meta, &mut e.value)
    }

    /// [`Dict::remove_hashed`] returning the key's metadata with the value.
    /// Performs one rehash step.
    pub fn remove_meta_hashed(&mut self, hash: u64, key: &[u8]) -> Option<(u32, V)> {
        let Entry { key, value, .. } = *self.unlink_hashed(hash, key)?;
        Some((key.meta, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyspace_node_is_56_bytes() {
        // mimalloc has a 56-byte size class; one byte more costs 8 per key.
        assert_eq!(std::mem::size_of::<Entry<crate::engine::db::Entry>>(), 56);
    }

    #[test]
    fn metadata_travels_with_its_key_through_growth() {
        let mut d: Dict<u64> = Dict::new();
        let key = |i: u64| format!("key:{i:016}").into_bytes();
        for i in 0..5_000u64 {
            let h = d.hash_key(&key(i));
            let (meta, v) = d.insert_new_meta_hashed(h, &key(i), i as u32 ^ 0xA5A5, i);
            assert_eq!((*meta, *v), (i as u32 ^ 0xA5A5, i));
        }
        // Rewrite some words mid-rehash, then check every key after growth.
        for i in (0..5_000u64).step_by(3) {
            let h = d.hash_key(&key(i));
            *d.get_meta_mut_hashed(h, &key(i)).expect("present").0 = u32::MAX - i as u32;
        }
        while d.rehash_step(100) {}
        let want = |i: u64| if i.is_multiple_of(3) { u32::MAX - i as u32 } else { i as u32 ^ 0xA5A5 };
        for i in 0..5_000u64 {
            let h = d.hash_key(&key(i));
            assert_eq!(d.get_meta_hashed(h, &key(i)), Some((want(i), &i)));
        }
        assert_eq!(d.iter_meta().filter(|&(k, m, &v)| k == key(v) && m == want(v)).count(), 5_000);
        let h = d.hash_key(&key(9));
        assert_eq!(d.remove_meta_hashed(h, &key(9)), Some((want(9), 9)));
        assert_eq!(d.remove_meta_hashed(h, &key(9)), None);
        assert_eq!(d.len(), 4_999);
    }
}
