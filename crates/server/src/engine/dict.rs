//! Placeholder until the dict branch lands: same API over std's HashMap.
use std::collections::HashMap;
pub struct Dict<V> { m: HashMap<Box<[u8]>, V> }
impl<V> Default for Dict<V> { fn default() -> Self { Dict { m: HashMap::new() } } }
pub fn next_random(s: &mut u64) -> u64 { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; *s }
impl<V> Dict<V> {
    pub fn new() -> Self { Self::default() }
    pub fn len(&self) -> usize { self.m.len() }
    pub fn is_empty(&self) -> bool { self.m.is_empty() }
    pub fn get(&self, k: &[u8]) -> Option<&V> { self.m.get(k) }
    pub fn get_mut(&mut self, k: &[u8]) -> Option<&mut V> { self.m.get_mut(k) }
    pub fn contains_key(&self, k: &[u8]) -> bool { self.m.contains_key(k) }
    pub fn insert(&mut self, k: &[u8], v: V) -> Option<V> { self.m.insert(k.into(), v) }
    pub fn insert_owned(&mut self, k: Box<[u8]>, v: V) -> Option<V> { self.m.insert(k, v) }
    pub fn get_or_insert_with(&mut self, k: &[u8], f: impl FnOnce() -> V) -> &mut V { self.m.entry(k.into()).or_insert_with(f) }
    pub fn remove(&mut self, k: &[u8]) -> Option<V> { self.m.remove(k) }
    pub fn remove_entry(&mut self, k: &[u8]) -> Option<(Box<[u8]>, V)> { self.m.remove_entry(k) }
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> { self.m.iter().map(|(k, v)| (&**k, v)) }
    pub fn clear(&mut self) { self.m.clear() }
    pub fn take_all(&mut self) -> Self { Dict { m: std::mem::take(&mut self.m) } }
    pub fn scan(&self, cursor: u64, mut f: impl FnMut(&[u8], &V)) -> u64 {
        if cursor == 0 { for (k, v) in &self.m { f(k, v) } } 0
    }
    pub fn random_key(&self, rng: &mut u64) -> Option<&[u8]> {
        if self.m.is_empty() { return None; }
        let i = (next_random(rng) % self.m.len() as u64) as usize; self.m.keys().nth(i).map(|k| &**k)
    }
    pub fn rehash_step(&mut self, _n: usize) -> bool { false }
    pub fn try_shrink(&mut self) {}
    pub fn bucket_count(&self) -> usize { self.m.capacity() }
}
