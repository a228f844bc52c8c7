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
    let body: u64 = chunks.map(|c| u64::from(u64::from_ne_bytes(c.try_into().unwrap()).count_ones())).sum();
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
        [(&b"and"[..], BitOp::And), (b"or", BitOp::Or), (b"xor", BitOp::Xor), (b"not", BitOp::Not)]
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

#[cfg(test)]
mod tests {
    use super::*;

    // Every expected value in the table tests below was obtained from a live
    // Debian redis-server 7.0.15 (redis-cli against a scratch instance).

    #[test]
    fn offsets_and_setbit_values() {
        assert_eq!(parse_bit_offset(b"0"), Ok(0));
        assert_eq!(parse_bit_offset(b"4294967295"), Ok(MAX_BIT_OFFSET));
        for bad in [&b"4294967296"[..], b"-1", b"01", b"+1", b" 1", b"-0", b"0x1", b"#1", b"", b"99999999999999999999"]
        {
            assert_eq!(parse_bit_offset(bad), Err(ERR_BIT_OFFSET), "{bad:?}");
        }
        assert_eq!(parse_setbit_value(b"1"), Ok(true));
        assert_eq!(parse_setbit_value(b"0"), Ok(false));
        for bad in [&b"2"[..], b"-1", b"x", b"01"] {
            assert_eq!(parse_setbit_value(bad), Err(ERR_BIT_VALUE));
        }
        assert_eq!(check_bitpos_bit(2), Err(ERR_BITPOS_BIT));
        assert_eq!(check_bitpos_bit(1), Ok(1));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
    }

    #[test]
    fn setbit_getbit() {
        let mut s = Vec::new();
        assert_eq!(setbit(&mut s, 7, true), 0);
        assert_eq!(s, [0x01]);
        assert_eq!(setbit(&mut s, 7, false), 1);
        assert_eq!(setbit(&mut s, 20, true), 0);
        assert_eq!(s.len(), 3);
        assert_eq!(getbit(&s, 20), 1);
        assert_eq!(getbit(&s, 100), 0);
        assert_eq!(getbit(&s, MAX_BIT_OFFSET), 0);
    }

    #[test]
    fn bitcount_table() {
        let k = b"foobar";
        type Case = (Option<(i64, i64, Unit)>, u64);
        let cases: &[Case] = &[
            (None, 26),
            (Some((0, 0, Unit::Byte)), 4),
            (Some((1, 1, Unit::Byte)), 6),
            (Some((1, 1, Unit::Bit)), 1),
            (Some((5, 30, Unit::Bit)), 17),
            (Some((-100, -200, Unit::Byte)), 0),
            (Some((-1, -5, Unit::Byte)), 0),
            (Some((-200, -100, Unit::Byte)), 4),
            (Some((0, -1, Unit::Bit)), 26),
            (Some((7, 7, Unit::Bit)), 0),
            (Some((8, 8, Unit::Bit)), 0),
            (Some((-3, -1, Unit::Bit)), 1),
            (Some((40, 100, Unit::Bit)), 4),
            (Some((48, 100, Unit::Bit)), 0),
            (Some((2, -2, Unit::Byte)), 12),
            (Some((i64::MIN, i64::MAX, Unit::Byte)), 26),
            (Some((i64::MIN, i64::MAX, Unit::Bit)), 26),
        ];
        for &(range, want) in cases {
            assert_eq!(bitcount(k, range), want, "{range:?}");
        }
        assert_eq!(bitcount(b"", None), 0);
        assert_eq!(bitcount(b"", Some((0, -1, Unit::Byte))), 0);
        assert_eq!(Unit::parse(b"BiT"), Ok(Unit::Bit));
        assert_eq!(Unit::parse(b"bytes"), Err(ERR_SYNTAX));
    }

    #[test]
    fn bitpos_table() {
        use Unit::{Bit, Byte};
        type Case = (&'static [u8], u8, Option<(i64, Option<i64>, Unit)>, i64);
        let cases: &[Case] = &[
            (b"", 0, None, -1),
            (b"", 1, None, -1),
            (b"", 0, Some((0, None, Byte)), -1),
            (b"\xff\xff\xff", 0, None, 24),
            (b"\xff\xff\xff", 0, Some((0, None, Byte)), 24),
            (b"\xff\xff\xff", 0, Some((0, Some(-1), Byte)), -1),
            (b"\xff\xff\xff", 0, Some((0, Some(-1), Bit)), -1),
            (b"\xff\xff\xff", 1, Some((2, None, Byte)), 16),
            (b"\xff\xff\xff", 0, Some((1, None, Byte)), 24),
            (b"\0\0\0", 1, None, -1),
            (b"\0\0\0", 0, None, 0),
            (b"\0\0\0", 0, Some((1, None, Byte)), 8),
            (b"\0\0\0", 1, Some((0, Some(-1), Bit)), -1),
            (b"\xff\xf0\x00", 0, None, 12),
            (b"\xff\xf0\x00", 0, Some((0, Some(0), Byte)), -1),
            (b"\xff\xf0\x00", 0, Some((0, Some(11), Bit)), -1),
            (b"\xff\xf0\x00", 0, Some((0, Some(12), Bit)), 12),
            (b"\xff\xf0\x00", 1, Some((12, Some(23), Bit)), -1),
            (b"\xff\xf0\x00", 0, Some((0, Some(-1), Bit)), 12),
            (b"\xff\xf0\x00", 1, Some((-1, None, Byte)), -1),
            (b"\xff\xf0\x00", 0, Some((3, Some(-1), Bit)), 12),
            (b"\xff\xf0\x00", 1, Some((4, Some(7), Bit)), 4),
            (b"\xff\xf0\x00", 0, Some((4, Some(7), Bit)), -1),
            (b"\xff\xf0\x00", 1, Some((-9, Some(-1), Bit)), -1),
            (b"foobar", 1, Some((-100, Some(-200), Byte)), 1),
            (b"foobar", 1, Some((-200, Some(-100), Byte)), 1),
            (b"foobar", 0, Some((-1, Some(-5), Byte)), -1),
            (b"foobar", 1, Some((7, Some(15), Bit)), 9),
            (b"foobar", 0, Some((2, Some(1), Byte)), -1),
            (b"foobar", 0, None, 0),
            (b"foobar", 1, Some((2, None, Byte)), 17),
            (b"foobar", 0, Some((2, Some(-1), Bit)), 3),
            (b"foobar", 1, Some((-3, Some(-1), Bit)), 46),
            (b"foobar", 0, Some((47, Some(47), Bit)), 47),
            (b"foobar", 1, Some((47, Some(47), Bit)), -1),
            (b"foobar", 0, Some((i64::MIN, Some(i64::MAX), Bit)), 0),
            (b"foobar", 1, Some((6, None, Byte)), -1),
            (b"foobar", 0, Some((6, None, Byte)), -1),
        ];
        for &(s, bit, range, want) in cases {
            assert_eq!(bitpos(s, bit, range), want, "{s:?} {bit} {range:?}");
        }
        assert_eq!(bitpos_missing(0), 0);
        assert_eq!(bitpos_missing(1), -1);
    }

    #[test]
    fn bitpos_long_runs_use_word_scan() {
        // Exercise the 8-byte middle loop and its remainder on both sides.
        for len in [17usize, 24, 40, 41] {
            for target in [9usize, 8 * 8 + 3, len * 8 - 12] {
                let mut ones = vec![0xffu8; len];
                setbit(&mut ones, target as u64, false);
                assert_eq!(bitpos(&ones, 0, None), target as i64);
                let mut zeros = vec![0u8; len];
                setbit(&mut zeros, target as u64, true);
                assert_eq!(bitpos(&zeros, 1, None), target as i64);
            }
        }
    }

    #[test]
    fn bitop_table() {
        let a: &[u8] = b"\xff\x0f\xaa";
        let b: &[u8] = b"\x0f";
        assert_eq!(bitop(BitOp::And, &[a, b]), b"\x0f\0\0");
        assert_eq!(bitop(BitOp::And, &[b, a]), b"\x0f\0\0");
        assert_eq!(bitop(BitOp::Or, &[a, b]), b"\xff\x0f\xaa");
        assert_eq!(bitop(BitOp::Xor, &[a, b, b""]), b"\xf0\x0f\xaa");
        assert_eq!(bitop(BitOp::Xor, &[a, a]), b"\0\0\0");
        assert_eq!(bitop(BitOp::Xor, &[b"", b]), b"\x0f");
        assert_eq!(bitop(BitOp::Not, &[a]), b"\x00\xf0\x55");
        assert!(bitop(BitOp::Not, &[b""]).is_empty());
        assert!(bitop(BitOp::And, &[b"", b""]).is_empty());
        assert_eq!(BitOp::parse(b"And"), Ok(BitOp::And));
        assert_eq!(BitOp::parse(b"nand"), Err(ERR_SYNTAX));
        assert_eq!(BitOp::Not.check_sources(2), Err(ERR_BITOP_NOT));
        assert_eq!(BitOp::Not.check_sources(1), Ok(()));
        assert_eq!(BitOp::Or.check_sources(3), Ok(()));
    }

    /// Deterministic xorshift64 so failures reproduce without a seed dump.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn range(&mut self, lo: i64, hi: i64) -> i64 {
            lo + (self.next() % (hi - lo + 1) as u64) as i64
        }
    }

    /// Naive BITPOS over a bool-per-bit model, written from the rules in
    /// the `bitpos` doc rather than from its implementation.
    fn model_bitpos(bits: &[bool], bit: u8, r: (i64, Option<i64>, Unit)) -> i64 {
        let (start, end, unit) = r;
        let per = if unit == Unit::Bit { 1 } else { 8 };
        let total = (bits.len() / per) as i64;
        let fix = |x: i64| if x < 0 { (x + total).max(0) } else { x };
        let (s, e) = (fix(start), fix(end.unwrap_or(-1)).min(total - 1));
        if s > e {
            return -1;
        }
        let (bs, be) = (s as usize * per, e as usize * per + per - 1);
        match (bs..=be).find(|&i| bits[i] == (bit == 1)) {
            Some(i) => i as i64,
            None if bit == 0 && end.is_none() => be as i64 + 1,
            None => -1,
        }
    }

    fn model_bitcount(bits: &[bool], start: i64, end: i64, unit: Unit) -> u64 {
        let per = if unit == Unit::Bit { 1 } else { 8 };
        let total = (bits.len() / per) as i64;
        if start < 0 && end < 0 && start > end {
            return 0;
        }
        let fix = |x: i64| if x < 0 { (x + total).max(0) } else { x };
        let (s, e) = (fix(start), fix(end).min(total - 1));
        if s > e {
            return 0;
        }
        let (bs, be) = (s as usize * per, e as usize * per + per - 1);
        bits[bs..=be].iter().filter(|&&b| b).count() as u64
    }

    #[test]
    fn randomized_against_bool_model() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _round in 0..300 {
            let mut buf = Vec::new();
            let mut bits: Vec<bool> = Vec::new();
            // Mostly-dense or mostly-sparse strings, so both targets of
            // BITPOS have long runs to skip over.
            let density = rng.range(0, 100);
            let writes = rng.range(0, 200);
            for _ in 0..writes {
                let off = rng.range(0, 400) as usize;
                let on = rng.range(0, 99) < density;
                if bits.len() <= off {
                    bits.resize((off / 8 + 1) * 8, false);
                }
                let old = setbit(&mut buf, off as u64, on);
                assert_eq!(old, u8::from(bits[off]));
                bits[off] = on;
            }
            assert_eq!(buf.len() * 8, bits.len());
            for (i, &b) in bits.iter().enumerate() {
                assert_eq!(getbit(&buf, i as u64), u8::from(b));
            }
            let total = bits.iter().filter(|&&b| b).count() as u64;
            assert_eq!(bitcount(&buf, None), total);
            for _ in 0..20 {
                let unit = if rng.next() & 1 == 0 { Unit::Bit } else { Unit::Byte };
                let lim = if unit == Unit::Bit { 450 } else { 60 };
                let (s, e) = (rng.range(-lim, lim), rng.range(-lim, lim));
                let bit = (rng.next() % 2) as u8;
                let end = (rng.range(0, 2) != 0).then_some(e);
                assert_eq!(bitcount(&buf, Some((s, e, unit))), model_bitcount(&bits, s, e, unit));
                // Redis only allows BIT together with an explicit end.
                let unit = if end.is_none() { Unit::Byte } else { unit };
                let r = (s, end, unit);
                assert_eq!(bitpos(&buf, bit, Some(r)), model_bitpos(&bits, bit, r), "{r:?}");
            }
            let r = (0, None, Unit::Byte);
            for bit in [0, 1] {
                assert_eq!(bitpos(&buf, bit, None), model_bitpos(&bits, bit, r));
            }
        }
    }
}
