//! Bit-level operations behind SETBIT, GETBIT, BITCOUNT, BITPOS and BITOP.
//!
//! Everything here works on the raw bytes of a string value (`Vec<u8>` /
//! `&[u8]`). The caller owns key lookup, type checks, parsing of plain
//! integer arguments and reply writing; this module owns the bit semantics
//! and the argument forms that are specific to bit commands (bit offsets,
//! `BYTE|BIT`, BITOP operation names). BITFIELD lives in the sibling module
//! [`super::bitfield`].
//!
//! Bit numbering follows Redis: bit 0 is the most significant bit of byte 0.
//! Semantics (ranges, clamping, -1 cases, error texts) were checked against a
//! live Debian `redis-server` 7.0.15.

/// An error reply, carried as the full error line without the leading `-`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitError(pub &'static str);

impl std::fmt::Display for BitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for BitError {}

/// Bad or out-of-range bit offset (SETBIT, GETBIT, BITFIELD).
pub const ERR_BIT_OFFSET: BitError = BitError("ERR bit offset is not an integer or out of range");
/// SETBIT value that is not 0 or 1.
pub const ERR_BIT_VALUE: BitError = BitError("ERR bit is not an integer or out of range");
/// BITPOS bit argument that is an integer but not 0 or 1.
pub const ERR_BITPOS_BIT: BitError = BitError("ERR The bit argument must be 1 or 0.");
/// BITOP NOT with other than exactly one source key.
pub const ERR_BITOP_NOT: BitError = BitError("ERR BITOP NOT must be called with a single source key.");
/// Generic syntax error (unknown BITOP op, unknown BYTE|BIT word, ...).
pub const ERR_SYNTAX: BitError = BitError("ERR syntax error");

/// Largest accepted bit offset. Redis limits the string a bit command may
/// create to `proto-max-bulk-len` (512 MB by default), so the highest bit
/// is `512 * 1024 * 1024 * 8 - 1 = 2^32 - 1`; offsets `>= 2^32` are rejected.
pub const MAX_BIT_OFFSET: u64 = (512 * 1024 * 1024 * 8) - 1;

/// Parses a decimal integer exactly as Redis's `string2ll` does: optional
/// `-`, no `+`, no spaces, no leading zeros (so `-0` and `01` are rejected),
/// must fit in `i64`. Bit commands share this strictness, and the error an
/// argument gets depends on which argument it is, so we return `Option`.
pub(crate) fn parse_i64(s: &[u8]) -> Option<i64> {
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if neg {
        // i64::MIN has no positive counterpart, so negate in i128.
        i64::try_from(-i128::from(v)).ok()
    } else {
        i64::try_from(v).ok()
    }
}

/// Parses a SETBIT/GETBIT offset: a plain non-negative integer no larger
/// than [`MAX_BIT_OFFSET`]. (The `#N` form is BITFIELD-only.)
pub fn parse_bit_offset(s: &[u8]) -> Result<u64, BitError> {
    match parse_i64(s) {
        Some(v) if v >= 0 && v as u64 <= MAX_BIT_OFFSET => Ok(v as u64),
        _ => Err(ERR_BIT_OFFSET),
    }
}

/// Parses the SETBIT value argument, which must be exactly `0` or `1`.
pub fn parse_setbit_value(s: &[u8]) -> Result<bool, BitError> {
    match s {
        b"0" => Ok(false),
        b"1" => Ok(true),
        _ => Err(ERR_BIT_VALUE),
    }
}

/// Validates the BITPOS bit argument once the caller has parsed it as an
/// integer (a non-integer gets the caller's generic integer error first).
pub fn check_bitpos_bit(bit: i64) -> Result<u8, BitError> {
    match bit {
        0 | 1 => Ok(bit as u8),
        _ => Err(ERR_BITPOS_BIT),
    }
}

/// Sets or clears the bit at `offset`, growing `buf` with zero bytes as
/// needed, and returns the previous bit (0 or 1). The caller is expected to
/// have bounded `offset` with [`parse_bit_offset`].
pub fn setbit(buf: &mut Vec<u8>, offset: u64, on: bool) -> u8 {
    let byte = (offset >> 3) as usize;
    if buf.len() <= byte {
        buf.resize(byte + 1, 0);
    }
    let mask = 0x80u8 >> (offset & 7);
    let old = u8::from(buf[byte] & mask != 0);
    if on {
        buf[byte] |= mask;
    } else {
        buf[byte] &= !mask;
    }
    old
}

/// Returns the bit at `offset`; bits past the end of the string read as 0.
pub fn getbit(buf: &[u8], offset: u64) -> u8 {
    let byte = offset >> 3;
    match usize::try_from(byte).ok().and_then(|b| buf.get(b)) {
        Some(&b) => (b >> (7 - (offset & 7))) & 1,
        None => 0,
    }
}

/// Unit of a BITCOUNT / BITPOS range (Redis 7 `BYTE|BIT`; default `BYTE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Range indexes count bytes.
    Byte,
    /// Range indexes count bits.
    Bit,
}

impl Unit {
    /// Parses `BYTE` or `BIT`, case-insensitively; anything else is
    /// `ERR syntax error`.
    pub fn parse(s: &[u8]) -> Result<Unit, BitError> {
        if s.eq_ignore_ascii_case(b"byte") {
            Ok(Unit::Byte)
        } else if s.eq_ignore_ascii_case(b"bit") {
            Ok(Unit::Bit)
        } else {
            Err(ERR_SYNTAX)
        }
    }
}

/// Length of `buf` measured in `unit`.
fn total_len(buf: &[u8], unit: Unit) -> u64 {
    match unit {
        Unit::Byte => buf.len() as u64,
        Unit::Bit => buf.len() as u64 * 8,
    }
}

/// Redis's range normalisation for BITCOUNT/BITPOS: negative indexes count
/// from the end, then both ends are clamped into `[0, total)`. Returns the
/// inclusive range, or `None` if it is empty. i128 keeps `total + i64::MIN`
/// and friends from overflowing.
fn normalize(start: i64, end: i64, total: u64) -> Option<(u64, u64)> {
    let total = i128::from(total);
    let mut s = i128::from(start);
    let mut e = i128::from(end);
    if s < 0 {
        s += total;
    }
    if e < 0 {
        e += total;
    }
    let s = s.max(0);
    let e = e.max(0).min(total - 1);
    (s <= e).then_some((s as u64, e as u64))
}

/// Converts an inclusive range in `unit` into an inclusive bit range.
fn to_bit_range((s, e): (u64, u64), unit: Unit) -> (u64, u64) {
    match unit {
        Unit::Byte => (s * 8, e * 8 + 7),
        Unit::Bit => (s, e),
    }
}

/// Number of set bits in `bytes`, eight bytes at a time.
fn popcount(bytes: &[u8]) -> u64 {
    let chunks = bytes.chunks_exact(8);
    let tail: u64 = chunks.remainder().iter().map(|b| u64::from(b.count_ones())).sum();
    let body: u64 = chunks
        .map(|c| u64::from(u64::from_ne_bytes(c.try_into().unwrap()).count_ones()))
        .sum();
    body + tail
}

/// Mask keeping bits `first..=last` (0 = MSB) of one byte.
fn byte_mask(first: u64, last: u64) -> u8 {
    (0xFFu8 >> first) & (0xFFu8 << (7 - last))
}

/// Number of set bits in the inclusive bit range `[s, e]`, which must lie
/// inside `buf`.
fn count_bit_range(buf: &[u8], s: u64, e: u64) -> u64 {
    let (fb, lb) = ((s >> 3) as usize, (e >> 3) as usize);
    if fb == lb {
        return u64::from((buf[fb] & byte_mask(s & 7, e & 7)).count_ones());
    }
    let first = u64::from((buf[fb] & byte_mask(s & 7, 7)).count_ones());
    let last = u64::from((buf[lb] & byte_mask(0, e & 7)).count_ones());
    first + popcount(&buf[fb + 1..lb]) + last
}

/// BITCOUNT: number of set bits in `buf`, or in `range` (start, end, unit)
/// with Redis's negative-index and clamping rules. A missing key is an
/// empty slice (count 0).
pub fn bitcount(buf: &[u8], range: Option<(i64, i64, Unit)>) -> u64 {
    let Some((start, end, unit)) = range else {
        return popcount(buf);
    };
    // Redis short-circuits this case before clamping; without it e.g.
    // `-200 -100` on a short string would clamp both ends to 0 and count
    // byte 0 (which it does: `BITCOUNT k -200 -100` is non-zero), while
    // `-100 -200` must be 0.
    if start < 0 && end < 0 && start > end {
        return 0;
    }
    let Some(range) = normalize(start, end, total_len(buf, unit)) else {
        return 0;
    };
    let (s, e) = to_bit_range(range, unit);
    count_bit_range(buf, s, e)
}

/// Position of the first bit equal to `bit` in the inclusive bit range
/// `[s, e]` (inside `buf`), or `None`.
fn find_bit(buf: &[u8], bit: u8, s: u64, e: u64) -> Option<u64> {
    // Searching for 0 is searching for 1 in the complement.
    let flip = if bit == 0 { 0xFFu8 } else { 0 };
    let (fb, lb) = ((s >> 3) as usize, (e >> 3) as usize);
    let edge = |i: usize, mask: u8| {
        let b = (buf[i] ^ flip) & mask;
        (b != 0).then(|| i as u64 * 8 + u64::from(b.leading_zeros()))
    };
    if fb == lb {
        return edge(fb, byte_mask(s & 7, e & 7));
    }
    if let Some(p) = edge(fb, byte_mask(s & 7, 7)) {
        return Some(p);
    }
    let mid = &buf[fb + 1..lb];
    let base = (fb as u64 + 1) * 8;
    // Big-endian words make leading_zeros line up with Redis bit order.
    let flip64 = if bit == 0 { u64::MAX } else { 0 };
    let mut chunks = mid.chunks_exact(8);
    for (k, c) in chunks.by_ref().enumerate() {
        let w = u64::from_be_bytes(c.try_into().unwrap()) ^ flip64;
        if w != 0 {
            return Some(base + k as u64 * 64 + u64::from(w.leading_zeros()));
        }
    }
    let done = mid.len() - chunks.remainder().len();
    for (k, &b) in chunks.remainder().iter().enumerate() {
        let b = b ^ flip;
        if b != 0 {
            return Some(base + (done + k) as u64 * 8 + u64::from(b.leading_zeros()));
        }
    }
    edge(lb, byte_mask(0, e & 7))
}

/// BITPOS on an existing string: position of the first `bit` (0 or 1) in
/// `buf`, optionally within `range` = (start, optional end, unit).
///
/// Redis rules reproduced here:
/// * an empty range (after negative-index conversion and clamping) is -1;
/// * looking for 1 and finding none is -1;
/// * looking for 0 in an all-ones range is -1 when the end was given, but
///   when no end was given the string is treated as zero-padded to the
///   right, so the answer is the bit just past the range (`8 * len`);
/// * an *existing* empty string gives -1 for both 0 and 1.
///
/// A **missing key is not the same as an empty string**: Redis answers 0
/// for `BITPOS missing 0` and -1 for `BITPOS missing 1`, whatever the
/// range. Use [`bitpos_missing`] for that case instead of passing `&[]`.
pub fn bitpos(buf: &[u8], bit: u8, range: Option<(i64, Option<i64>, Unit)>) -> i64 {
    let bit = u8::from(bit != 0);
    // No range means "start 0, no end", which behaves identically.
    let (start, end, unit) = range.unwrap_or((0, None, Unit::Byte));
    let end_given = end.is_some();
    // A missing end means "to the end of the string", i.e. index -1.
    let Some(range) = normalize(start, end.unwrap_or(-1), total_len(buf, unit)) else {
        return -1;
    };
    let (s, e) = to_bit_range(range, unit);
    match find_bit(buf, bit, s, e) {
        Some(p) => p as i64,
        None if bit == 0 && !end_given => (e + 1) as i64,
        None => -1,
    }
}

/// BITPOS reply for a key that does not exist: Redis treats it as an
/// infinite run of zeros, so a 0 is at position 0 and a 1 is never found.
pub fn bitpos_missing(bit: u8) -> i64 {
    if bit == 0 {
        0
    } else {
        -1
    }
}

/// BITOP operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    /// Bitwise AND of all sources.
    And,
    /// Bitwise OR of all sources.
    Or,
    /// Bitwise XOR of all sources.
    Xor,
    /// Bitwise complement of exactly one source.
    Not,
}

impl BitOp {
    /// Parses `AND|OR|XOR|NOT` case-insensitively; anything else is
    /// `ERR syntax error`.
    pub fn parse(s: &[u8]) -> Result<BitOp, BitError> {
        [
            (&b"and"[..], BitOp::And),
            (b"or", BitOp::Or),
            (b"xor", BitOp::Xor),
            (b"not", BitOp::Not),
        ]
        .into_iter()
        .find(|(name, _)| s.eq_ignore_ascii_case(name))
        .map(|(_, op)| op)
        .ok_or(ERR_SYNTAX)
    }

    /// Checks the source count: NOT takes exactly one source key, the
    /// others at least one (Redis's arity check already enforces that).
    pub fn check_sources(self, n: usize) -> Result<(), BitError> {
        if self == BitOp::Not && n != 1 {
            Err(ERR_BITOP_NOT)
        } else {
            Ok(())
        }
    }
}

/// BITOP: combines the sources (missing keys passed as empty slices) into a
/// new value as long as the longest source; shorter sources are treated as
/// zero-padded. For NOT only `srcs[0]` is used (check arity with
/// [`BitOp::check_sources`]). An empty result means Redis deletes the
/// destination key and replies 0; otherwise it stores it and replies with
/// its length.
pub fn bitop(op: BitOp, srcs: &[&[u8]]) -> Vec<u8> {
    let Some((first, rest)) = srcs.split_first() else {
        return Vec::new();
    };
    if op == BitOp::Not {
        return first.iter().map(|b| !b).collect();
    }
    let maxlen = srcs.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = first.to_vec();
    out.resize(maxlen, 0);
    for src in rest {
        // Plain zip loops so the compiler can vectorise them.
        let (head, tail) = out.split_at_mut(src.len());
        match op {
            BitOp::And => {
                head.iter_mut().zip(src.iter()).for_each(|(o, s)| *o &= s);
                // Zero padding ANDs the rest of the output away.
                tail.fill(0);
            }
            BitOp::Or => head.iter_mut().zip(src.iter()).for_each(|(o, s)| *o |= s),
            BitOp::Xor => head.iter_mut().zip(src.iter()).for_each(|(o, s)| *o ^= s),
            BitOp::Not => unreachable!("handled above"),
        }
    }
    out
}
