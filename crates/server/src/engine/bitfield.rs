//! BITFIELD / BITFIELD_RO: parsing of the sub-commands and their execution
//! on a string value's raw bytes.
//!
//! The caller looks the key up, decides (via [`bitfield_writes`]) whether
//! the key must be created / marked dirty, and writes the array reply from
//! [`exec_bitfield`]. Semantics, including overflow arithmetic and error
//! texts, were checked against a live Debian `redis-server` 7.0.15.

use super::bitmap::{parse_i64, BitError, ERR_BIT_OFFSET, ERR_SYNTAX, MAX_BIT_OFFSET};

/// Type argument that is not `i1..i64` or `u1..u63`.
pub const ERR_BITFIELD_TYPE: BitError = BitError(
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.",
);
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
    [
        (&b"wrap"[..], Overflow::Wrap),
        (b"sat", Overflow::Sat),
        (b"fail", Overflow::Fail),
    ]
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
/// 1-byte key). So the caller should create the key and count it dirty
/// whenever this returns true.
pub fn bitfield_writes(ops: &[BitfieldOp]) -> bool {
    ops.iter()
        .any(|op| matches!(op, BitfieldOp::Set { .. } | BitfieldOp::IncrBy { .. }))
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
/// lets us do directly.
fn fit(ty: FieldType, wide: i128, policy: Overflow) -> Option<i64> {
    let (min, max) = ty.range();
    if (min..=max).contains(&wide) {
        return Some(wide as i64);
    }
    match policy {
        Overflow::Fail => None,
        Overflow::Sat => Some(if wide > max { max } else { min } as i64),
        // Truncating to u64 keeps the low bits, which is all decode needs.
        Overflow::Wrap => Some(ty.decode(wide as u64)),
    }
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
    let mut policy = Overflow::Wrap;
    let mut replies = Vec::with_capacity(ops.len());
    for op in ops {
        let reply = match *op {
            BitfieldOp::Overflow(p) => {
                policy = p;
                continue;
            }
            BitfieldOp::Get { ty, offset } => Some(ty.decode(read_raw(buf, offset, ty))),
            BitfieldOp::Set { ty, offset, value } => {
                let old = ty.decode(read_raw(buf, offset, ty));
                fit(ty, set_operand(ty, value), policy).map(|new| {
                    write_raw(buf, offset, ty, new as u64);
                    old
                })
            }
            BitfieldOp::IncrBy { ty, offset, incr } => {
                let old = ty.decode(read_raw(buf, offset, ty));
                let wide = i128::from(old) + i128::from(incr);
                fit(ty, wide, policy).inspect(|&new| write_raw(buf, offset, ty, new as u64))
            }
        };
        replies.push(reply);
    }
    replies
}
