//! Keys as the keyspace stores them, with one word of per-key metadata for
//! the table's owner: 24 bytes in all, with up to 19 key bytes inside the
//! dict node itself (no allocation of their own) and longer keys boxed.
//!
//! Why the metadata lives here: a dict node is key + value + chain link.
//! The keyspace's value is 24 bytes; with its access time and TTL flag
//! beside it, it took 32, and the node 64. Kept in the key's spare bytes
//! they cost nothing and the node is 56 bytes (an exact mimalloc size
//! class), 8 bytes less for every key.
use std::ops::Deref;

/// Longest key stored inline.
pub const KEY_INLINE_MAX: usize = 19;

/// `head` value of a boxed key (inline lengths are 0..=19).
const HEAP: u8 = 0xFF;
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
    head: u8,
    body: [u8; KEY_INLINE_MAX],
}

const _: () = assert!(std::mem::size_of::<KeyBuf>() == 24);
const _: () = assert!(LEN_AT + WORD <= KEY_INLINE_MAX && PTR_AT + WORD <= LEN_AT);

impl KeyBuf {
    /// A copy of `key` with metadata 0.
    pub fn new(key: &[u8]) -> KeyBuf {
        if key.len() <= KEY_INLINE_MAX {
            let mut body = [0u8; KEY_INLINE_MAX];
            body[..key.len()].copy_from_slice(key);
            KeyBuf { meta: 0, head: key.len() as u8, body }
        } else {
            KeyBuf::boxed(key.into())
        }
    }

    fn boxed(b: Box<[u8]>) -> KeyBuf {
        let len = b.len();
        let ptr = Box::into_raw(b) as *mut u8 as usize;
        let mut body = [0u8; KEY_INLINE_MAX];
        body[PTR_AT..PTR_AT + WORD].copy_from_slice(&ptr.to_ne_bytes());
        body[LEN_AT..LEN_AT + WORD].copy_from_slice(&len.to_ne_bytes());
        KeyBuf { meta: 0, head: HEAP, body }
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
        if self.head != HEAP {
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
        if self.head == HEAP {
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
        if b.len() <= KEY_INLINE_MAX {
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
        if self.head == HEAP {
            let (ptr, len) = self.raw_parts();
            // SAFETY: the box behind `ptr` is owned by `self` and lives as
            // long as it; nothing mutates it.
            unsafe { std::slice::from_raw_parts(ptr, len) }
        } else {
            &self.body[..self.head as usize]
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
        for len in [0, 1, 16, 18, 19, 20, 23, 100] {
            let key: Vec<u8> = (0..len as u8).map(|b| b.wrapping_mul(37)).collect();
            let mut k = KeyBuf::new(&key);
            assert_eq!(&*k, &key[..]);
            assert_eq!(k.head != HEAP, len <= KEY_INLINE_MAX, "len {len}");
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
    fn metadata_does_not_touch_the_key() {
        let long = vec![b'x'; 40];
        for key in [&b"key:000000000042"[..], &long] {
            let mut k = KeyBuf::new(key);
            for meta in [0, 1, u32::MAX, 0x8000_0000] {
                k.meta = meta;
                assert_eq!((&*k, k.meta), (key, meta));
            }
        }
    }
}
