//! BITFIELD / BITFIELD_RO: parsing of the sub-commands and their execution
//! on a string value's raw bytes.
//!
//! The caller looks the key up, decides (via [`bitfield_writes`]) whether
//! the key must be created, and writes the array reply from
//! [`exec_bitfield_counted`], whose count of changing writes is the dirty
//! count. Semantics, including overflow arithmetic and error
//! texts, were checked against a live Debian `redis-server` 7.0.15.

use super::bitmap::{parse_i64, BitError, ERR_BIT_OFFSET, ERR_SYNTAX, MAX_BIT_OFFSET};

/// Type argument that is not `i1..i64` or `u1..u63`.
pub const ERR_BITFIELD_TYPE: BitError =
    BitError("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
/// OVERFLOW argument that is not WRAP, SAT or FAIL.
pub const ERR_OVERFLOW_TYPE: BitError = BitError("ERR Invalid OVERFLOW type specified");
/// SET value or INCRBY increment that is not a 64-bit signed integer.
pub const ERR_VALUE: BitError = BitError("ERR value is not an integer or out of range");
/// A write sub-command given to BITFIELD_RO.
pub const ERR_RO: BitError = BitError("ERR BITFIELD_RO only supports the GET subcommand");

/// Integer type of a field: `i1..i64` or `u1..u63`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldType {
    /// Two's complement (`i`) or unsigned (`u`).
    pub signed: bool,
    /// Width in bits: 1..=64 signed, 1..=63 unsigned.
    pub bits: u32,
}

impl FieldType {
    /// Parses `i<N>` / `u<N>`. The prefix is case-sensitive in Redis, and
    /// Redis reads the width with `strlen`, so anything after a NUL byte is
    /// ignored (`"i8\0z"` is accepted); we mirror both.
    pub fn parse(s: &[u8]) -> Result<FieldType, BitError> {
        let (signed, rest) = match s.split_first() {
            Some((b'i', rest)) => (true, rest),
            Some((b'u', rest)) => (false, rest),
            _ => return Err(ERR_BITFIELD_TYPE),
        };
        let rest = rest.split(|&b| b == 0).next().unwrap_or_default();
        let max = if signed { 64 } else { 63 };
        match parse_i64(rest) {
            Some(n) if (1..=max).contains(&n) => Ok(FieldType { signed, bits: n as u32 }),
            _ => Err(ERR_BITFIELD_TYPE),
        }
    }

    /// Mask of the low `bits` bits.
    fn mask(self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// Smallest and largest representable value.
    fn range(self) -> (i128, i128) {
        if self.signed {
            let half = 1i128 << (self.bits - 1);
            (-half, half - 1)
        } else {
            (0, (1i128 << self.bits) - 1)
        }
    }

    /// Interprets the low `bits` bits of `raw` as a value of this type.
    fn decode(self, raw: u64) -> i64 {
        let raw = raw & self.mask();
        let shift = 64 - self.bits;
        if self.signed {
            // Move the field's sign bit to bit 63, then arithmetic-shift back.
            ((raw << shift) as i64) >> shift
        } else {
            raw as i64
        }
    }
}

/// Overflow policy for SET and INCRBY (default WRAP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Keep the low bits (modular arithmetic), sign-extended for signed.
    Wrap,
    /// Clamp to the type's minimum / maximum.
    Sat,
    /// Do nothing and reply nil.
    Fail,
}

/// One parsed BITFIELD sub-command. `offset` is absolute bits (any `#N`
/// form has already been multiplied by the width).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitfieldOp {
    /// `GET <type> <offset>`: reply the field's value.
    Get { ty: FieldType, offset: u64 },
    /// `SET <type> <offset> <value>`: store, reply the previous value.
    Set { ty: FieldType, offset: u64, value: i64 },
    /// `INCRBY <type> <offset> <incr>`: add, reply the new value.
    IncrBy { ty: FieldType, offset: u64, incr: i64 },
    /// `OVERFLOW WRAP|SAT|FAIL`: policy for the following SET/INCRBY ops.
    /// Produces no reply element.
    Overflow(Overflow),
}

/// Parses a BITFIELD offset: `N` or `#N` (N times the type width).
fn parse_field_offset(s: &[u8], bits: u32) -> Result<u64, BitError> {
    let (hash, digits) = match s.split_first() {
        Some((b'#', rest)) => (true, rest),
        _ => (false, s),
    };
    let n = parse_i64(digits).ok_or(ERR_BIT_OFFSET)?;
    // Redis multiplies in a C `long long` without an overflow check, so a
    // huge `#N` can wrap around to a small valid offset (verified live:
    // `GET u8 #2305843009213693953` reads offset 8). Mirror that rather
    // than reject what Redis accepts.
    let n = if hash { n.wrapping_mul(i64::from(bits)) } else { n };
    if n < 0 || n as u64 > MAX_BIT_OFFSET {
        return Err(ERR_BIT_OFFSET);
    }
    Ok(n as u64)
}

/// Parses `OVERFLOW`'s argument, case-insensitively.
fn parse_overflow(s: &[u8]) -> Result<Overflow, BitError> {
    [(&b"wrap"[..], Overflow::Wrap), (b"sat", Overflow::Sat), (b"fail", Overflow::Fail)]
        .into_iter()
        .find(|(name, _)| s.eq_ignore_ascii_case(name))
        .map(|(_, o)| o)
        .ok_or(ERR_OVERFLOW_TYPE)
}

/// Parses the arguments after the key of BITFIELD (`readonly == false`) or
/// BITFIELD_RO (`readonly == true`). Like Redis, all sub-commands are
/// parsed (and their errors reported, in order) before a write is refused
/// under BITFIELD_RO. No arguments is valid and yields no ops.
pub fn parse_bitfield(args: &[&[u8]], readonly: bool) -> Result<Vec<BitfieldOp>, BitError> {
    let mut ops = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let sub = args[i];
        let remaining = args.len() - i - 1;
        let is = |name: &[u8], need: usize| sub.eq_ignore_ascii_case(name) && remaining >= need;
        if is(b"overflow", 1) {
            ops.push(BitfieldOp::Overflow(parse_overflow(args[i + 1])?));
            i += 2;
            continue;
        }
        let nargs = if is(b"get", 2) {
            2
        } else if is(b"set", 3) || is(b"incrby", 3) {
            3
        } else {
            // Unknown word or too few arguments left: both are syntax errors.
            return Err(ERR_SYNTAX);
        };
        let ty = FieldType::parse(args[i + 1])?;
        let offset = parse_field_offset(args[i + 2], ty.bits)?;
        let op = if nargs == 2 {
            BitfieldOp::Get { ty, offset }
        } else {
            let n = parse_i64(args[i + 3]).ok_or(ERR_VALUE)?;
            if sub.eq_ignore_ascii_case(b"set") {
                BitfieldOp::Set { ty, offset, value: n }
            } else {
                BitfieldOp::IncrBy { ty, offset, incr: n }
            }
        };
        ops.push(op);
        i += 1 + nargs;
    }
    if readonly && bitfield_writes(&ops) {
        return Err(ERR_RO);
    }
    Ok(ops)
}

/// True if `ops` contains a SET or INCRBY. Redis then creates the key and
/// grows the string to cover every written field *before* running the ops,
/// even if OVERFLOW FAIL ends up skipping all writes (verified live:
/// `BITFIELD new OVERFLOW FAIL SET u8 0 1000` replies nil yet creates a
/// 1-byte key). So the caller should create the key whenever this returns
/// true (the dirty count comes from [`exec_bitfield_counted`]).
pub fn bitfield_writes(ops: &[BitfieldOp]) -> bool {
    ops.iter().any(|op| matches!(op, BitfieldOp::Set { .. } | BitfieldOp::IncrBy { .. }))
}

/// Reads the 9-byte big-endian window starting at byte `offset / 8`, zero
/// padded past the end of `buf`. Nine bytes cover any 64-bit field at any
/// bit alignment.
fn window(buf: &[u8], first: usize) -> u128 {
    (0..9).fold(0u128, |acc, i| {
        let b = buf.get(first + i).copied().unwrap_or(0);
        (acc << 8) | u128::from(b)
    })
}

/// Raw (unsigned, unextended) bits of the field at `offset`.
fn read_raw(buf: &[u8], offset: u64, ty: FieldType) -> u64 {
    let shift = 72 - (offset & 7) as u32 - ty.bits;
    (window(buf, (offset >> 3) as usize) >> shift) as u64 & ty.mask()
}

/// Stores the low `ty.bits` bits of `raw` at `offset`. `buf` must already
/// cover the field.
fn write_raw(buf: &mut [u8], offset: u64, ty: FieldType, raw: u64) {
    let first = (offset >> 3) as usize;
    let last = ((offset + u64::from(ty.bits) - 1) >> 3) as usize;
    let shift = 72 - (offset & 7) as u32 - ty.bits;
    let mask = u128::from(ty.mask()) << shift;
    let w = (window(buf, first) & !mask) | ((u128::from(raw) << shift) & mask);
    for (i, byte) in buf[first..=last].iter_mut().enumerate() {
        // Byte i of the window sits at bits 64 - 8i .. 72 - 8i.
        *byte = (w >> (64 - 8 * i)) as u8;
    }
}

/// Fits the mathematically exact result `wide` into `ty` under `policy`;
/// `None` means FAIL refused it. Redis's overflow checks are equivalent to
/// testing the exact sum against the type's range, which is what i128
/// lets us do directly, except for the saturation direction of signed SET
/// (see [`sat_high`]).
fn fit(ty: FieldType, wide: i128, policy: Overflow, sat_high: bool) -> Option<i64> {
    let (min, max) = ty.range();
    if (min..=max).contains(&wide) {
        return Some(wide as i64);
    }
    match policy {
        Overflow::Fail => None,
        Overflow::Sat => Some(if sat_high { max } else { min } as i64),
        // Truncating to u64 keeps the low bits, which is all decode needs.
        Overflow::Wrap => Some(ty.decode(wide as u64)),
    }
}

/// Whether an out-of-range `wide` saturates to the maximum. Normally that
/// is simply `wide > max`, but for a signed SET narrower than 64 bits
/// Redis 7.0 computes `max - value` in 64-bit two's complement and treats
/// a wrapped (negative) difference as overflow upwards. So values at or
/// below `max - 2^63` saturate to the *maximum* (verified live:
/// `OVERFLOW SAT SET i8 0 -9223372036854775681` stores 127, `...680`
/// stores -128, and every too-small value does it for i63).
fn sat_high(ty: FieldType, wide: i128, is_set: bool) -> bool {
    let max = ty.range().1;
    let quirk = is_set && ty.signed && ty.bits < 64 && max - wide > i128::from(i64::MAX);
    wide > max || quirk
}

/// The value SET asks to store, widened. Redis converts the i64 argument
/// to `uint64_t` for unsigned types, so a negative value is a huge one
/// (`SET u8 0 -1` saturates to 255, not 0 — verified live).
fn set_operand(ty: FieldType, value: i64) -> i128 {
    if ty.signed {
        i128::from(value)
    } else {
        i128::from(value as u64)
    }
}

/// Executes parsed ops in order and returns one reply element per
/// GET/SET/INCRBY (OVERFLOW yields nothing); `None` is a nil reply from
/// OVERFLOW FAIL. If any op writes, `buf` is first grown (zero-filled) to
/// cover every written field, as Redis does; GET-only ops never grow it.
/// A missing key is an empty `buf`.
pub fn exec_bitfield(buf: &mut Vec<u8>, ops: &[BitfieldOp]) -> Vec<Option<i64>> {
    exec_bitfield_counted(buf, ops).0
}

/// [`exec_bitfield`], also counting the writes that changed the string:
/// Redis adds one to the dirty counter per SET/INCRBY that stored a new
/// value or ran on a string it had to create or grow, and none for a write
/// OVERFLOW FAIL skipped (even when the string was grown for it).
pub fn exec_bitfield_counted(buf: &mut Vec<u8>, ops: &[BitfieldOp]) -> (Vec<Option<i64>>, u64) {
    let before = buf.len();
    let needed = ops
        .iter()
        .filter_map(|op| match *op {
            BitfieldOp::Set { ty, offset, .. } | BitfieldOp::IncrBy { ty, offset, .. } => {
                Some(((offset + u64::from(ty.bits) - 1) >> 3) as usize + 1)
            }
            _ => None,
        })
        .max();
    if let Some(len) = needed {
        if buf.len() < len {
            buf.resize(len, 0);
        }
    }
    let grown = buf.len() != before;
    let mut policy = Overflow::Wrap;
    let mut replies = Vec::with_capacity(ops.len());
    let mut changes = 0;
    for op in ops {
        let (reply, stored) = match *op {
            BitfieldOp::Overflow(p) => {
                policy = p;
                continue;
            }
            BitfieldOp::Get { ty, offset } => (Some(ty.decode(read_raw(buf, offset, ty))), None),
            BitfieldOp::Set { ty, offset, value } => {
                let old = ty.decode(read_raw(buf, offset, ty));
                let wide = set_operand(ty, value);
                let new = fit(ty, wide, policy, sat_high(ty, wide, true));
                (new.map(|_| old), new.map(|new| (ty, offset, old, new)))
            }
            BitfieldOp::IncrBy { ty, offset, incr } => {
                let old = ty.decode(read_raw(buf, offset, ty));
                let wide = i128::from(old) + i128::from(incr);
                let new = fit(ty, wide, policy, sat_high(ty, wide, false));
                (new, new.map(|new| (ty, offset, old, new)))
            }
        };
        if let Some((ty, offset, old, new)) = stored {
            write_raw(buf, offset, ty, new as u64);
            changes += u64::from(grown || old != new);
        }
        replies.push(reply);
    }
    (replies, changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::bitmap::{getbit, setbit};

    // Expected replies and errors below were obtained from a live Debian
    // redis-server 7.0.15 by running the same BITFIELD commands.

    fn args(line: &str) -> Vec<&[u8]> {
        line.split_whitespace().map(str::as_bytes).collect()
    }

    /// Runs one BITFIELD command line against `buf`.
    fn run(buf: &mut Vec<u8>, line: &str) -> Vec<Option<i64>> {
        let ops = parse_bitfield(&args(line), false).expect(line);
        exec_bitfield(buf, &ops)
    }

    const N: Option<i64> = None;

    #[test]
    fn signed_overflow_sequence() {
        let mut k = Vec::new();
        let line = "set i8 0 100 get i8 0 incrby i8 0 100 incrby i8 0 -300";
        assert_eq!(run(&mut k, line), [Some(0), Some(100), Some(-56), Some(-100)]);
        let line = "overflow sat incrby i8 0 200 incrby i8 0 -300";
        assert_eq!(run(&mut k, line), [Some(100), Some(-128)]);
        let line = "overflow fail incrby i8 0 200 get i8 0";
        assert_eq!(run(&mut k, line), [Some(72), Some(72)]);
    }

    #[test]
    fn i64_boundaries() {
        let mut a = Vec::new();
        let line = "set i64 0 9223372036854775807 incrby i64 0 1 incrby i64 0 -1 \
            overflow sat incrby i64 0 1 incrby i64 0 -9223372036854775808 \
            incrby i64 0 -9223372036854775808 incrby i64 0 -1 overflow fail \
            incrby i64 0 -1 incrby i64 0 9223372036854775807 incrby i64 0 9223372036854775807";
        let max = i64::MAX;
        let min = i64::MIN;
        let want = [0, min, max, max, -1, min, min].map(Some);
        let got = run(&mut a, line);
        assert_eq!(got[..7], want);
        assert_eq!(got[7..], [N, Some(-1), Some(max - 1)]);
    }

    #[test]
    fn unsigned_set_and_incr() {
        let mut u = Vec::new();
        let line = "set u8 0 -1 overflow sat set u8 0 -1 get u8 0 overflow fail set u8 0 -1 get u8 0";
        let want = [Some(0), Some(255), Some(255), N, Some(255)];
        assert_eq!(run(&mut u, line), want);
        let line = "overflow wrap set u8 0 256 set u8 0 257 set u8 8 -2 get u8 8";
        assert_eq!(run(&mut u, line), [255, 0, 0, 254].map(Some));

        let mut b = Vec::new();
        let line = "set u63 0 -1 get u63 0 overflow sat set u63 0 -5 incrby u63 0 1 \
            incrby u63 0 -9223372036854775808 overflow wrap incrby u63 0 -1 \
            incrby u63 0 -9223372036854775808 get i63 0 get i64 0";
        let m = i64::MAX;
        assert_eq!(run(&mut b, line), [0, m, m, m, 0, m, m, -1, -2].map(Some));
    }

    #[test]
    fn narrow_and_unaligned_fields() {
        let mut c = Vec::new();
        let line = "set u1 3 5 get u1 3 set i1 5 1 get i1 5 overflow sat set i1 6 1 get i1 6 \
            set i1 7 -5 get i1 7 overflow wrap set i1 8 -5 get i1 8 get u16 0";
        let want = [0, 1, 0, -1, 0, 0, 0, -1, 0, -1, 5504].map(Some);
        assert_eq!(run(&mut c, line), want);

        let mut d = Vec::new();
        let line = "set i5 3 -17 get i5 3 overflow sat set i5 3 -17 incrby i5 3 100 \
            overflow wrap incrby i5 3 17 incrby i5 3 -9223372036854775808 \
            incrby u5 3 -9223372036854775807";
        assert_eq!(run(&mut d, line), [0, 15, 15, 15, 0, 0, 1].map(Some));

        let mut e = Vec::new();
        let line = "set i3 13 1 set u60 17 1152921504606846975 get u60 17 get i64 10 \
            get i64 11 get u7 70 get i7 71";
        let want = [0, 0, 1152921504606846975, 432345564227567615, 864691128455135231, 127, -2];
        assert_eq!(run(&mut e, line), want.map(Some));

        let mut k = Vec::new();
        let line = "set u8 #1 255 get u4 #2 get i4 #2 get u16 0 get i16 4";
        assert_eq!(run(&mut k, line), [0, 15, -1, 255, 4080].map(Some));
    }

    #[test]
    fn signed_set_saturation_quirk() {
        // Redis 7.0 saturates some far-too-small signed SET values upwards.
        let mut q = Vec::new();
        let line = "overflow sat set i8 0 -9223372036854775681 get i8 0 \
            set i8 0 -9223372036854775680 get i8 0 set i1 0 -9223372036854775808 get i1 0 \
            set i1 0 -9223372036854775807 get i1 0";
        assert_eq!(run(&mut q, line), [0, 127, 127, -128, -1, 0, 0, -1].map(Some));
        let mut q = Vec::new();
        let line = "overflow sat set i63 8 -4611686018427387905 get i63 8 \
            set i63 8 -4611686018427387904 get i63 8 overflow fail set i8 0 -9223372036854775808";
        let (max, min) = (4611686018427387903, -4611686018427387904);
        assert_eq!(run(&mut q, line), [Some(0), Some(max), Some(max), Some(min), N]);
    }

    #[test]
    fn growth_matches_redis() {
        // OVERFLOW FAIL still creates/grows the key (STRLEN 1 and 14 live).
        let mut f = Vec::new();
        assert_eq!(run(&mut f, "overflow fail set u8 0 1000"), [N]);
        assert_eq!(f, [0]);
        let mut g = Vec::new();
        assert_eq!(run(&mut g, "overflow fail incrby u8 100 300"), [N]);
        assert_eq!(g.len(), 14);
        // GET never grows; no ops is an empty reply.
        let mut h = Vec::new();
        assert_eq!(run(&mut h, "get u8 100"), [Some(0)]);
        assert!(h.is_empty());
        assert!(run(&mut h, "").is_empty());
        assert!(!bitfield_writes(&parse_bitfield(&args("get u8 0 overflow sat"), false).unwrap()));
        assert!(bitfield_writes(&parse_bitfield(&args("incrby u8 0 1"), false).unwrap()));
    }

    #[test]
    fn parse_errors() {
        let cases: &[(&str, bool, BitError)] = &[
            ("get u8", false, ERR_SYNTAX),
            ("overflow", false, ERR_SYNTAX),
            ("overflow foo get u8 0", false, ERR_OVERFLOW_TYPE),
            ("foo", false, ERR_SYNTAX),
            ("set u8 0", false, ERR_SYNTAX),
            ("set u8 0 x", false, ERR_VALUE),
            ("set u8 0 1.5", false, ERR_VALUE),
            ("incrby u8 0 99999999999999999999", false, ERR_VALUE),
            ("get u8 -1", false, ERR_BIT_OFFSET),
            ("get u8 #-1", false, ERR_BIT_OFFSET),
            ("get u8 #", false, ERR_BIT_OFFSET),
            ("get u8 ##1", false, ERR_BIT_OFFSET),
            ("get u8 4294967296", false, ERR_BIT_OFFSET),
            ("get u8 #536870912", false, ERR_BIT_OFFSET),
            ("get i64 #144115188075855873", false, ERR_BIT_OFFSET),
            ("get u64 0", false, ERR_BITFIELD_TYPE),
            ("get i65 0", false, ERR_BITFIELD_TYPE),
            ("get I8 0", false, ERR_BITFIELD_TYPE),
            ("get i0 0", false, ERR_BITFIELD_TYPE),
            ("get i08 0", false, ERR_BITFIELD_TYPE),
            ("get x8 0", false, ERR_BITFIELD_TYPE),
            ("get i 0", false, ERR_BITFIELD_TYPE),
            ("get u8 0 set u8 0 1", true, ERR_RO),
            ("incrby u8 0 1", true, ERR_RO),
            // Parsing finishes before the read-only check.
            ("set u8 0 1 get x8 0", true, ERR_BITFIELD_TYPE),
        ];
        for &(line, ro, err) in cases {
            assert_eq!(parse_bitfield(&args(line), ro), Err(err), "{line}");
        }
        assert_eq!(FieldType::parse(b""), Err(ERR_BITFIELD_TYPE));
        assert_eq!(FieldType::parse(b"u8 "), Err(ERR_BITFIELD_TYPE));
        assert_eq!(FieldType::parse(b"i8\0z"), Ok(FieldType { signed: true, bits: 8 }));
        assert_eq!(parse_bitfield(&[b"get", b"i8", b" 1"], false), Err(ERR_BIT_OFFSET));
    }

    #[test]
    fn parse_accepts_what_redis_accepts() {
        let ops = parse_bitfield(&args("OverFlow Sat Get u8 0"), true).unwrap();
        let u8t = FieldType { signed: false, bits: 8 };
        let get0 = BitfieldOp::Get { ty: u8t, offset: 0 };
        assert_eq!(ops, [BitfieldOp::Overflow(Overflow::Sat), get0]);
        // Accepted live; 4294967295 is the largest offset.
        for line in ["get u8 4294967295", "get u8 #536870911", "get u63 0", "get i64 0"] {
            assert!(parse_bitfield(&args(line), true).is_ok(), "{line}");
        }
        // `#N * 8` wraps past 2^64 to offset 8 in Redis's C arithmetic.
        let ops = parse_bitfield(&args("get u8 #2305843009213693953"), true).unwrap();
        assert_eq!(ops, [BitfieldOp::Get { ty: u8t, offset: 8 }]);
        assert_eq!(parse_bitfield(&[], false), Ok(vec![]));
    }

    #[test]
    fn randomized_fields_against_single_bits() {
        // Field reads/writes must agree with bit-at-a-time SETBIT/GETBIT.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut buf = Vec::new();
        let mut model = Vec::new();
        for _ in 0..3000 {
            let signed = next() & 1 == 0;
            let bits = 1 + (next() % if signed { 64 } else { 63 }) as u32;
            let ty = FieldType { signed, bits };
            let offset = next() % 300;
            let raw = next() & ty.mask();
            let set = BitfieldOp::Set { ty, offset, value: ty.decode(raw) };
            exec_bitfield(&mut buf, &[set]);
            for i in 0..u64::from(bits) {
                setbit(&mut model, offset + i, (raw >> (u64::from(bits) - 1 - i)) & 1 == 1);
            }
            assert_eq!(buf, model);
            let (roff, rbits) = (next() % 340, 1 + (next() % 63) as u32);
            let rty = FieldType { signed: false, bits: rbits };
            let want = (0..u64::from(rbits)).fold(0u64, |a, i| a << 1 | u64::from(getbit(&model, roff + i)));
            let got = exec_bitfield(&mut buf, &[BitfieldOp::Get { ty: rty, offset: roff }]);
            assert_eq!(got, [Some(want as i64)]);
        }
    }
}
