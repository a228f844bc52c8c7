//! Keys as the keyspace stores them, with one word of per-key metadata for
//! the table's owner: 24 bytes in all, with keys of up to 20 bytes inside
//! the dict node itself (no allocation of their own) and longer keys boxed.
//!
//! Why the metadata lives here: a dict node is key + value + chain link.
//! The keyspace's value is 24 bytes; with its access time and TTL flag
//! beside it, it took 32, and the node 64. Kept in the key's spare bytes
//! they cost nothing and the node is 56 bytes (an exact mimalloc size
//! class), 8 bytes less for every key.
//!
//! Why 20 inline bytes, not 19: the last body byte is the tag (inline
//! length, or "boxed") only when the key is shorter; a 20-byte key whose
//! last byte is not a tag value (any byte below 0xC0: every ASCII key) fills
//! the whole body. Keys like `counter:000000012345` and set members like
//! `element:000000012345` then stay inline, and a lookup compares them
//! without a second cache miss.
use std::ops::Deref;

/// Longest key stored inline (if its last byte is below [`SHORT`]).
pub const KEY_INLINE_MAX: usize = 20;

/// Tag of an inline key of length n < 20: `SHORT + n`.
const SHORT: u8 = 0xC0;
/// Tag of a boxed key.
const HEAP: u8 = 0xFF;
/// Where the tag sits in `body`, when there is one.
const TAG_AT: usize = KEY_INLINE_MAX - 1;
/// Where a boxed key's pointer and length sit in `body`.
const PTR_AT: usize = 3;
const LEN_AT: usize = 11;
const WORD: usize = std::mem::size_of::<usize>();

/// A key's bytes plus an owner-defined `u32`.
///
/// `body` holds the key itself when it fits, else the pointer and length of
/// a `Box<[u8]>` this value owns (stored as bytes, read unaligned).
#[repr(C)]
pub struct KeyBuf {
    /// Free for the table's owner (the keyspace: access clock and TTL flag).
    pub meta: u32,
    body: [u8; KEY_INLINE_MAX],
}

const _: () = assert!(std::mem::size_of::<KeyBuf>() == 24);
const _: () = assert!(LEN_AT + WORD <= TAG_AT && PTR_AT + WORD <= LEN_AT);
const _: () = assert!(SHORT as usize + TAG_AT < HEAP as usize);

/// Whether `key` is stored inside the KeyBuf (no allocation of its own).
pub(crate) fn fits_inline(key: &[u8]) -> bool {
    key.len() < KEY_INLINE_MAX || (key.len() == KEY_INLINE_MAX && key[TAG_AT] < SHORT)
}

impl KeyBuf {
    /// A copy of `key` with metadata 0.
    pub fn new(key: &[u8]) -> KeyBuf {
        if !fits_inline(key) {
            return KeyBuf::boxed(key.into());
        }
        let mut body = [0u8; KEY_INLINE_MAX];
        body[..key.len()].copy_from_slice(key);
        if key.len() < KEY_INLINE_MAX {
            body[TAG_AT] = SHORT + key.len() as u8;
        }
        KeyBuf { meta: 0, body }
    }

    fn boxed(b: Box<[u8]>) -> KeyBuf {
        let len = b.len();
        let ptr = Box::into_raw(b) as *mut u8 as usize;
        let mut body = [0u8; KEY_INLINE_MAX];
        body[PTR_AT..PTR_AT + WORD].copy_from_slice(&ptr.to_ne_bytes());
        body[LEN_AT..LEN_AT + WORD].copy_from_slice(&len.to_ne_bytes());
        body[TAG_AT] = HEAP;
        KeyBuf { meta: 0, body }
    }

    fn is_boxed(&self) -> bool {
        self.body[TAG_AT] == HEAP
    }

    fn word(&self, at: usize) -> usize {
        usize::from_ne_bytes(self.body[at..at + WORD].try_into().expect("one word"))
    }

    /// Pointer and length of a boxed key.
    fn raw_parts(&self) -> (*mut u8, usize) {
        (self.word(PTR_AT) as *mut u8, self.word(LEN_AT))
    }

    /// The key as an owned boxed slice (the metadata is dropped).
    pub fn into_boxed(self) -> Box<[u8]> {
        if !self.is_boxed() {
            return self.deref().into();
        }
        let (ptr, len) = self.raw_parts();
        std::mem::forget(self);
        // SAFETY: `ptr`/`len` came from `Box::into_raw` in `boxed`, and
        // forgetting `self` hands that ownership over exactly once.
        unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) }
    }
}

impl Drop for KeyBuf {
    fn drop(&mut self) {
        if self.is_boxed() {
            let (ptr, len) = self.raw_parts();
            // SAFETY: as in `into_boxed`; this KeyBuf owns the box and is
            // being dropped, so the box is freed exactly once.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
        }
    }
}

impl Clone for KeyBuf {
    fn clone(&self) -> Self {
        let mut k = KeyBuf::new(self);
        k.meta = self.meta;
        k
    }
}

impl PartialEq for KeyBuf {
    fn eq(&self, other: &KeyBuf) -> bool {
        **self == **other && self.meta == other.meta
    }
}

impl Eq for KeyBuf {}

impl From<Box<[u8]>> for KeyBuf {
    fn from(b: Box<[u8]>) -> KeyBuf {
        if fits_inline(&b) {
            KeyBuf::new(&b)
        } else {
            KeyBuf::boxed(b)
        }
    }
}

impl From<&[u8]> for KeyBuf {
    fn from(b: &[u8]) -> KeyBuf {
        KeyBuf::new(b)
    }
}

impl Deref for KeyBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self.body[TAG_AT] {
            tag if tag < SHORT => &self.body,
            HEAP => {
                let (ptr, len) = self.raw_parts();
                // SAFETY: the box behind `ptr` is owned by `self` and lives
                // as long as it; nothing mutates it.
                unsafe { std::slice::from_raw_parts(ptr, len) }
            }
            tag => &self.body[..(tag - SHORT) as usize],
        }
    }
}

impl std::fmt::Debug for KeyBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_keys_inline_long_keys_boxed() {
        for len in [0, 1, 16, 18, 19, 20, 21, 23, 100] {
            let key: Vec<u8> = (0..len as u8).map(|b| b.wrapping_mul(37)).collect();
            let mut k = KeyBuf::new(&key);
            assert_eq!(&*k, &key[..]);
            assert_eq!(!k.is_boxed(), len <= KEY_INLINE_MAX, "len {len}");
            k.meta = 0xDEAD_BEEF;
            let c = k.clone();
            assert_eq!((&*c, c.meta), (&key[..], 0xDEAD_BEEF));
            assert_eq!(c, k);
            assert_eq!(&*KeyBuf::from(key.clone().into_boxed_slice()), &key[..]);
            assert_eq!(&*k.into_boxed(), &key[..]);
            drop(c);
        }
    }

    #[test]
    fn a_full_body_key_ending_in_a_tag_byte_is_boxed() {
        for last in [0u8, b'9', SHORT - 1, SHORT, SHORT + 7, HEAP] {
            let mut key = b"element:00000001234".to_vec();
            key.push(last);
            let k = KeyBuf::new(&key);
            assert_eq!(k.is_boxed(), last >= SHORT, "last byte {last:#x}");
            assert_eq!(&*k, &key[..]);
            assert_eq!(&*KeyBuf::from(key.clone().into_boxed_slice()), &key[..]);
        }
        // Every inline length round-trips, whatever its bytes.
        for len in 0..KEY_INLINE_MAX {
            let key = vec![0xFFu8; len];
            assert_eq!(&*KeyBuf::new(&key), &key[..]);
        }
    }

    #[test]
    fn metadata_does_not_touch_the_key() {
        let long = vec![b'x'; 40];
        for key in [&b"key:000000000042"[..], &b"counter:000000000042"[..], &long] {
            let mut k = KeyBuf::new(key);
            for meta in [0, 1, u32::MAX, 0x8000_0000] {
                k.meta = meta;
                assert_eq!((&*k, k.meta), (key, meta));
            }
        }
    }
}
