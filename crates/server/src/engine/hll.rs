//! HyperLogLog in Redis's string format: a 16-byte header (`HYLL`, encoding
//! byte, 3 unused, 8-byte little-endian cached cardinality whose top bit
//! marks it stale) and 16384 six-bit registers, dense (12304 bytes) or in
//! the sparse run-length encoding of `hll_sparse.rs`, byte for byte as Redis.
//! Elements are hashed with MurmurHash64A (seed 0xadc83b19): the low 14 bits
//! pick the register, the run of zero bits above them (+1) is the value.
//! Counting uses Ertl's improved raw estimator, as Redis 7 does.

pub const REGISTERS: usize = 1 << 14;
const P: u32 = 14;
const Q: u32 = 64 - P;
pub const HDR: usize = 16;
pub const DENSE_SIZE: usize = HDR + REGISTERS * 6 / 8;
const SEED: u64 = 0xadc8_3b19;

/// Why bytes are not a usable HLL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HllError {
    /// Not an HLL at all: `WRONGTYPE Key is not a valid HyperLogLog string value.`
    NotHll,
    /// A sparse payload that does not decode: `INVALIDOBJ Corrupted HLL object detected`.
    Corrupt,
}

/// MurmurHash64A (Austin Appleby's 64-bit variant), little-endian reads.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= (b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// Register index and value for an element.
pub fn pattern(elem: &[u8]) -> (usize, u8) {
    let h = murmur64a(elem, SEED);
    let idx = (h & (REGISTERS as u64 - 1)) as usize;
    let rest = (h >> P) | (1u64 << Q);
    (idx, rest.trailing_zeros() as u8 + 1)
}

/// Registers unpacked one per byte (for merging and counting).
pub type Regs = Vec<u8>;

fn dense_get(d: &[u8], i: usize) -> u8 {
    let pos = i * 6;
    let (b, fb) = (pos / 8, pos % 8);
    let lo = (d[b] >> fb) as u16;
    let hi = if fb > 2 { (d[b + 1] as u16) << (8 - fb) } else { 0 };
    ((lo | hi) & 63) as u8
}

pub(crate) fn dense_set(d: &mut [u8], i: usize, v: u8) {
    let pos = i * 6;
    let (b, fb) = (pos / 8, pos % 8);
    d[b] &= !(63u8 << fb);
    d[b] |= v << fb;
    if fb > 2 {
        d[b + 1] &= !(63u8 >> (8 - fb));
        d[b + 1] |= v >> (8 - fb);
    }
}

/// Check the header; Ok(true) for dense.
fn check(s: &[u8]) -> Result<bool, HllError> {
    if s.len() < HDR || &s[..4] != b"HYLL" || s[4] > 1 {
        return Err(HllError::NotHll);
    }
    let dense = s[4] == 0;
    if dense && s.len() != DENSE_SIZE {
        return Err(HllError::NotHll);
    }
    Ok(dense)
}

/// A fresh dense HLL with a valid cached count of 0.
#[cfg(test)]
pub fn new_dense() -> Vec<u8> {
    let mut v = vec![0u8; DENSE_SIZE];
    v[..4].copy_from_slice(b"HYLL");
    v
}

/// Unpack the registers of a dense or sparse HLL.
pub fn registers(s: &[u8]) -> Result<Regs, HllError> {
    let mut regs = vec![0u8; REGISTERS];
    if check(s)? {
        let d = &s[HDR..];
        for (i, r) in regs.iter_mut().enumerate() {
            *r = dense_get(d, i);
        }
        return Ok(regs);
    }
    let (mut i, mut p) = (0usize, HDR);
    while p < s.len() {
        let op = s[p];
        let (run, val) = if op & 0xC0 == 0 {
            p += 1;
            ((op & 0x3F) as usize + 1, 0)
        } else if op & 0xC0 == 0x40 {
            let lo = *s.get(p + 1).ok_or(HllError::Corrupt)? as usize;
            p += 2;
            ((((op & 0x3F) as usize) << 8 | lo) + 1, 0)
        } else {
            p += 1;
            ((op & 3) as usize + 1, ((op >> 2) & 0x1F) + 1)
        };
        if i + run > REGISTERS {
            return Err(HllError::Corrupt);
        }
        regs[i..i + run].fill(val);
        i += run;
    }
    if i != REGISTERS {
        return Err(HllError::Corrupt);
    }
    Ok(regs)
}

/// Mark the cached count stale (top bit of the last header byte).
pub fn invalidate(s: &mut [u8]) {
    s[15] |= 0x80;
}

/// Add elements to the HLL in `s` (sparse keys may be promoted to dense).
/// Returns whether any register changed; the cache is marked stale if so.
pub fn add(s: &mut Vec<u8>, elems: &mut dyn Iterator<Item = &[u8]>, max_bytes: usize) -> Result<bool, HllError> {
    check(s)?;
    let mut changed = false;
    for e in elems {
        let (i, v) = pattern(e);
        if s[4] == 0 {
            if dense_get(&s[HDR..], i) < v {
                dense_set(&mut s[HDR..], i, v);
                changed = true;
            }
        } else {
            changed |= super::hll_sparse::set(s, i, v, max_bytes)?;
        }
    }
    if changed {
        invalidate(s);
    }
    Ok(changed)
}

/// Whether `s` (a checked HLL) is dense.
pub fn is_dense(s: &[u8]) -> bool {
    s[4] == 0
}

/// PFMERGE's write: raise `dst`'s registers to `regs`, going dense first
/// when any input was dense; the cache is marked stale.
pub fn merge_into(dst: &mut Vec<u8>, regs: &[u8], dense: bool, max_bytes: usize) -> Result<(), HllError> {
    check(dst)?;
    if dense {
        super::hll_sparse::to_dense(dst)?;
    }
    for (i, &r) in regs.iter().enumerate() {
        if r == 0 {
            continue;
        }
        if dst[4] == 0 {
            dense_set(&mut dst[HDR..], i, r);
        } else {
            super::hll_sparse::set(dst, i, r, max_bytes)?;
        }
    }
    invalidate(dst);
    Ok(())
}

/// The cached count, if valid.
pub fn cached(s: &[u8]) -> Option<u64> {
    (s[15] & 0x80 == 0).then(|| u64::from_le_bytes(s[8..16].try_into().expect("8 bytes")))
}

pub fn set_cache(s: &mut [u8], n: u64) {
    s[8..16].copy_from_slice(&n.to_le_bytes());
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let prev = z;
        z += x * y;
        y += y;
        if prev == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let prev = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if prev == z {
            return z / 3.0;
        }
    }
}

/// Cardinality estimate from unpacked registers.
pub fn count(regs: &[u8]) -> u64 {
    let mut histo = [0u32; 64];
    for &r in regs {
        histo[r as usize] += 1;
    }
    let m = REGISTERS as f64;
    let mut z = m * tau((m - histo[Q as usize + 1] as f64) / m);
    for j in (1..=Q as usize).rev() {
        z += histo[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histo[0] as f64 / m);
    const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
    (ALPHA_INF * m * m / z).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur_known_values() {
        // Reference values of MurmurHash64A (seed 0) from the original C code.
        assert_eq!(murmur64a(b"", 0), 0);
        assert_ne!(murmur64a(b"a", SEED), murmur64a(b"b", SEED));
    }

    #[test]
    fn dense_registers_roundtrip_at_byte_edges() {
        let mut d = new_dense();
        for i in [0, 1, 2, 3, 4, 5, REGISTERS - 2, REGISTERS - 1] {
            dense_set(&mut d[HDR..], i, (i % 63) as u8 + 1);
        }
        for i in [0, 1, 2, 3, 4, 5, REGISTERS - 2, REGISTERS - 1] {
            assert_eq!(dense_get(&d[HDR..], i), (i % 63) as u8 + 1);
        }
        assert_eq!(dense_get(&d[HDR..], 6), 0);
    }

    #[test]
    fn estimates_within_error_bounds() {
        let mut s = new_dense();
        let n = 100_000u64;
        let keys: Vec<Vec<u8>> = (0..n).map(|i| format!("elem:{i}").into_bytes()).collect();
        add(&mut s, &mut keys.iter().map(|k| &k[..]), 3000).unwrap();
        let est = count(&registers(&s).unwrap()) as f64;
        assert!((est - n as f64).abs() / (n as f64) < 0.03, "estimate {est}");
        assert_eq!(count(&vec![0u8; REGISTERS]), 0);
    }

    #[test]
    fn sparse_decodes() {
        // XZERO covering all 16384 registers.
        let mut s = b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
        s.extend_from_slice(&[0x7f, 0xff]);
        assert_eq!(registers(&s).unwrap(), vec![0u8; REGISTERS]);
        s.push(0x80);
        assert_eq!(registers(&s), Err(HllError::Corrupt));
    }
}
