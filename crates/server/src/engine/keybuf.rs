//! Keys as the keyspace stores them: up to 23 bytes inside the dict node
//! itself (no allocation of their own), longer keys boxed. 24 bytes either
//! way, which with a 24-byte value keeps a whole key in one 64-byte node.
use std::ops::Deref;

/// Longest key stored inline.
pub const KEY_INLINE_MAX: usize = 23;

#[derive(Clone, PartialEq, Eq)]
pub enum KeyBuf {
    Inline { len: u8, buf: [u8; KEY_INLINE_MAX - 1] },
    Heap(Box<[u8]>),
}

impl KeyBuf {
    pub fn new(key: &[u8]) -> KeyBuf {
        if key.len() < KEY_INLINE_MAX {
            let mut buf = [0u8; KEY_INLINE_MAX - 1];
            buf[..key.len()].copy_from_slice(key);
            KeyBuf::Inline { len: key.len() as u8, buf }
        } else {
            KeyBuf::Heap(key.into())
        }
    }

    /// The key as an owned boxed slice.
    pub fn into_boxed(self) -> Box<[u8]> {
        match self {
            KeyBuf::Heap(b) => b,
            inline => inline.deref().into(),
        }
    }
}

impl From<Box<[u8]>> for KeyBuf {
    fn from(b: Box<[u8]>) -> KeyBuf {
        if b.len() < KEY_INLINE_MAX {
            KeyBuf::new(&b)
        } else {
            KeyBuf::Heap(b)
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
        match self {
            KeyBuf::Inline { len, buf } => &buf[..*len as usize],
            KeyBuf::Heap(b) => b,
        }
    }
}

impl std::fmt::Debug for KeyBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

const _: () = assert!(std::mem::size_of::<KeyBuf>() == 24);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_keys_inline_long_keys_boxed() {
        for len in [0, 1, 16, 21, 22, 23, 24, 100] {
            let key: Vec<u8> = (0..len as u8).collect();
            let k = KeyBuf::new(&key);
            assert_eq!(&*k, &key[..]);
            assert_eq!(matches!(k, KeyBuf::Inline { .. }), len < KEY_INLINE_MAX, "len {len}");
            assert_eq!(&*KeyBuf::from(key.clone().into_boxed_slice()), &key[..]);
            assert_eq!(&*k.into_boxed(), &key[..]);
        }
    }
}
