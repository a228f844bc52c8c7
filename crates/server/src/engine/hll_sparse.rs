//! The sparse HyperLogLog encoding, written the way Redis writes it so the
//! bytes (GET, STRLEN, DUMP-level) match: run-length opcodes after the
//! 16-byte header. `ZERO` (`00llllll`) is 1–64 zero registers, `XZERO`
//! (`01llllll llllllll`) 1–16384, `VAL` (`1vvvvvll`) 1–4 registers of value
//! 1–32. A new key is one XZERO. Setting a register splits the opcode that
//! covers it into at most three, then merges equal neighbouring VALs in a
//! short window; values above 32 or growing past `hll-sparse-max-bytes`
//! promote the key to the dense encoding.
use super::hll::{dense_set, registers, HllError, DENSE_SIZE, HDR, REGISTERS};

const ZERO_MAX: usize = 64;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;

fn is_zero(op: u8) -> bool {
    op & 0xC0 == 0
}
fn is_xzero(op: u8) -> bool {
    op & 0xC0 == 0x40
}
fn is_val(op: u8) -> bool {
    op & 0x80 != 0
}
fn val_value(op: u8) -> u8 {
    ((op >> 2) & 0x1F) + 1
}
fn val_len(op: u8) -> usize {
    (op & 3) as usize + 1
}
fn val_op(value: u8, len: usize) -> u8 {
    0x80 | ((value - 1) << 2) | (len as u8 - 1)
}

/// Append the zero-run opcode(s) Redis uses for `len` zeros.
fn push_zeros(seq: &mut Vec<u8>, len: usize) {
    if len > ZERO_MAX {
        let l = len - 1;
        seq.push((l >> 8) as u8 | 0x40);
        seq.push((l & 0xFF) as u8);
    } else {
        seq.push(len as u8 - 1);
    }
}

/// A new, empty sparse HLL (valid cached count 0).
pub fn new_sparse() -> Vec<u8> {
    let mut v = vec![0u8; HDR];
    v[..4].copy_from_slice(b"HYLL");
    v[4] = 1;
    push_zeros(&mut v, REGISTERS);
    v
}

/// Convert a sparse HLL to dense in place, keeping the header's cache bytes.
pub fn to_dense(s: &mut Vec<u8>) -> Result<(), HllError> {
    if s[4] == 0 {
        return Ok(());
    }
    let regs = registers(s)?;
    let mut d = vec![0u8; DENSE_SIZE];
    d[..HDR].copy_from_slice(&s[..HDR]);
    d[4] = 0;
    for (i, &r) in regs.iter().enumerate() {
        if r != 0 {
            dense_set(&mut d[HDR..], i, r);
        }
    }
    *s = d;
    Ok(())
}

/// The opcode covering register `index`: (its offset, first register it
/// covers, its span, the previous opcode's offset).
fn locate(s: &[u8], index: usize) -> Result<(usize, usize, usize, Option<usize>), HllError> {
    let (mut p, mut first, mut prev) = (HDR, 0usize, None);
    while p < s.len() {
        let op = s[p];
        let (span, oplen) = if is_zero(op) {
            ((op & 0x3F) as usize + 1, 1)
        } else if is_xzero(op) {
            let lo = *s.get(p + 1).ok_or(HllError::Corrupt)? as usize;
            ((((op & 0x3F) as usize) << 8 | lo) + 1, 2)
        } else {
            (val_len(op), 1)
        };
        if index < first + span {
            return Ok((p, first, span, prev));
        }
        prev = Some(p);
        p += oplen;
        first += span;
    }
    Err(HllError::Corrupt)
}

/// Set register `index` to `count` if larger. Returns whether it changed.
/// May promote `s` to dense.
pub fn set(s: &mut Vec<u8>, index: usize, count: u8, max_bytes: usize) -> Result<bool, HllError> {
    if count > VAL_MAX_VALUE {
        return promote(s, index, count);
    }
    let (p, first, span, prev) = locate(s, index)?;
    let op = s[p];
    if is_val(op) && val_value(op) >= count {
        return Ok(false);
    }
    if span == 1 && (is_val(op) || is_zero(op)) {
        s[p] = val_op(count, 1);
    } else {
        let last = first + span - 1;
        let mut seq = Vec::with_capacity(5);
        if is_val(op) {
            let cur = val_value(op);
            if index != first {
                seq.push(val_op(cur, index - first));
            }
            seq.push(val_op(count, 1));
            if index != last {
                seq.push(val_op(cur, last - index));
            }
        } else {
            if index != first {
                push_zeros(&mut seq, index - first);
            }
            seq.push(val_op(count, 1));
            if index != last {
                push_zeros(&mut seq, last - index);
            }
        }
        let oldlen = if is_xzero(op) { 2 } else { 1 };
        if seq.len() > oldlen && s.len() + seq.len() - oldlen > max_bytes {
            return promote(s, index, count);
        }
        s.splice(p..p + oldlen, seq);
    }
    merge_vals(s, prev.unwrap_or(HDR));
    s[15] |= 0x80;
    Ok(true)
}

/// Merge adjacent VAL opcodes of equal value (up to 4 registers) in the
/// five opcodes from `p`, as Redis does after every update.
fn merge_vals(s: &mut Vec<u8>, mut p: usize) {
    let mut scan = 5;
    while p < s.len() && scan > 0 {
        scan -= 1;
        let op = s[p];
        if is_xzero(op) {
            p += 2;
            continue;
        }
        if is_zero(op) {
            p += 1;
            continue;
        }
        if p + 1 < s.len() && is_val(s[p + 1]) {
            let next = s[p + 1];
            let len = val_len(op) + val_len(next);
            if val_value(op) == val_value(next) && len <= VAL_MAX_LEN {
                s[p + 1] = val_op(val_value(op), len);
                s.remove(p);
                continue;
            }
        }
        p += 1;
    }
}

fn promote(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    to_dense(s)?;
    dense_set(&mut s[HDR..], index, count);
    s[15] |= 0x80;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_merges_and_promotes() {
        let mut s = new_sparse();
        assert_eq!(&s[HDR..], &[0x7F, 0xFF]);
        assert!(set(&mut s, 100, 3, 3000).unwrap());
        // XZERO(100) VAL(3,1) XZERO(16283)
        assert_eq!(&s[HDR..], &[0x40, 99, val_op(3, 1), 0x7F, 154]);
        assert!(!set(&mut s, 100, 2, 3000).unwrap());
        assert!(set(&mut s, 101, 3, 3000).unwrap());
        assert_eq!(&s[HDR + 2..HDR + 3], &[val_op(3, 2)]);
        let regs = registers(&s).unwrap();
        assert_eq!((regs[99], regs[100], regs[101], regs[102]), (0, 3, 3, 0));
        assert!(set(&mut s, 5, 40, 3000).unwrap());
        assert_eq!(s.len(), DENSE_SIZE);
        assert_eq!(registers(&s).unwrap()[5], 40);
        let mut small = new_sparse();
        assert!(set(&mut small, 7000, 1, 19).unwrap());
        assert_eq!(small.len(), DENSE_SIZE, "growing past max bytes promotes");
    }
}
