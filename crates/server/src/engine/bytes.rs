//! Equality of short byte strings without a call into libc.
//!
//! Keys, members and command names are mostly a few bytes to a few dozen;
//! slice `==` calls `bcmp` for any length, and that call (plus its length
//! dispatch) costs more than the compare itself on the lookup paths every
//! command takes.

/// `a == b`, comparing up to 32 bytes with at most eight word loads.
#[inline]
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        17..=32 => {
            (word8(a, 0) ^ word8(b, 0))
                | (word8(a, 8) ^ word8(b, 8))
                | (word8(a, n - 16) ^ word8(b, n - 16))
                | (word8(a, n - 8) ^ word8(b, n - 8))
                == 0
        }
        _ => a == b,
    }
}

#[inline(always)]
fn word4(s: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(s[at..at + 4].try_into().expect("4 bytes"))
}

#[inline(always)]
fn word8(s: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(s[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::eq;
    use proptest::prelude::*;

    #[test]
    fn every_length_and_every_differing_byte() {
        for n in 0..48usize {
            let a: Vec<u8> = (0..n as u8).collect();
            assert!(eq(&a, &a.clone()), "len {n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x80;
                assert!(!eq(&a, &b), "len {n}, byte {i} differs");
            }
            assert!(!eq(&a, &a[..n.saturating_sub(1)]) || n == 0);
        }
    }

    proptest! {
        #[test]
        fn agrees_with_slice_eq(a in proptest::collection::vec(0u8..4, 0..40), b in proptest::collection::vec(0u8..4, 0..40)) {
            prop_assert_eq!(eq(&a, &b), a == b);
        }
    }
}
