//! Redis 7.0.15 number semantics: integer and float parsing, reply
//! formatting, and INCRBYFLOAT's long double arithmetic.
//!
//! Clients and our differential tests compare these bytes exactly, so the
//! float paths go through glibc (the same library Redis uses on Debian) via
//! `csrc/longdouble.c`; Rust handles integers and the common integral-double
//! case itself because those are both frequent and easy to get exactly right.

use std::ffi::{c_char, c_int};

extern "C" {
    fn volley_parse_double(s: *const c_char, len: usize, out: *mut f64) -> c_int;
    fn volley_fmt_g17(v: f64, out: *mut c_char, outlen: usize) -> c_int;
    fn volley_ld_classify(s: *const c_char, len: usize) -> c_int;
    fn volley_ld_incr(
        cur: *const c_char,
        cur_len: usize,
        incr: *const c_char,
        incr_len: usize,
        out: *mut c_char,
        outlen: usize,
    ) -> c_int;
}

/// Redis's MAX_LONG_DOUBLE_CHARS; sizes the INCRBYFLOAT output buffer (the
/// largest finite long double needs about 4950 characters with `%.17Lf`).
const LD_MAX_CHARS: usize = 5120;

/// Parses a signed 64-bit integer exactly like Redis's `string2ll`.
///
/// Only canonical decimal text is accepted: no sign other than a leading
/// `-`, no leading zeros (so no `-0` either), no spaces, no overflow.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    match digits {
        [b'0'] if !neg => return Some(0),
        [b'1'..=b'9', ..] if digits.len() <= 19 => {}
        _ => return None,
    }
    let mut mag: u64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        mag = mag.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    const MIN_MAG: u64 = 1 << 63;
    match (neg, mag) {
        // wrapping_neg maps 2^63 (as i64::MIN) onto itself, which is right.
        (true, m) if m <= MIN_MAG => Some((m as i64).wrapping_neg()),
        (false, m) if m < MIN_MAG => Some(m as i64),
        _ => None,
    }
}

/// Parses a double the way Redis 7.0 does for ZADD scores and friends
/// (`getDoubleFromObject`): whatever C `strtod` accepts over the whole
/// string (`.5`, `1e3`, `0x10`, `inf`, `+inf`, `infinity`), but no leading
/// whitespace, no NaN, and no overflow to ±inf or underflow to zero from
/// finite text (`1e400`, `1e-400`). Subnormal results are accepted.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    // Plain integers up to 2^53 convert exactly, so strtod would give the
    // same value; skipping the FFI call and copy keeps ZADD 1 m cheap.
    if let Some(n) = parse_i64(s) {
        if n.unsigned_abs() <= 1 << 53 {
            return Some(n as f64);
        }
    }
    let mut v = 0.0;
    // SAFETY: the pointer/length pair describes `s`; the helper copies it
    // before use and writes only to `v`.
    let ok = unsafe { volley_parse_double(s.as_ptr().cast(), s.len(), &mut v) };
    (ok != 0).then_some(v)
}

/// Appends `v` as Redis 7.0 replies with a double in RESP2 (ZSCORE,
/// WITHSCORES): C `%.17g`, with infinities as `inf` / `-inf`.
///
/// Examples: `1e16` → `10000000000000000`, `1e17` → `1e+17`,
/// `0.1` → `0.10000000000000001`, `-0.0` → `-0`.
pub fn format_double(out: &mut Vec<u8>, v: f64) {
    // %.17g prints an integral value below 1e17 as its plain digits (at most
    // 17 of them, so no rounding and no exponent); do that in Rust.
    if v.trunc() == v && v.abs() < 1e17 {
        if v == 0.0 && v.is_sign_negative() {
            out.extend_from_slice(b"-0");
        } else {
            format_i64(out, v as i64);
        }
        return;
    }
    if v.is_infinite() {
        // Redis special-cases these rather than trusting libc's spelling.
        out.extend_from_slice(if v > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    out.extend_from_slice(g17_libc(v, &mut [0; 32]));
}

/// Appends the payload of a RESP3 double (`,<payload>\r\n`) as Redis 7.0
/// emits it. In 7.0 that is the same text as [`format_double`] (checked live:
/// `,1.5`, `,inf`, `,-inf`, `,0.10000000000000001`, `,1e+20`, `,-0`);
/// it is a separate entry point because later Redis versions diverge.
pub fn format_resp3_double(out: &mut Vec<u8>, v: f64) {
    format_double(out, v);
}

/// Formats with libc `%.17g` into `buf` and returns the written bytes.
fn g17_libc(v: f64, buf: &mut [u8; 32]) -> &[u8] {
    // SAFETY: buf is 32 writable bytes and snprintf is told so; %.17g of
    // any double fits (longest is 24 characters plus NUL).
    let n = unsafe { volley_fmt_g17(v, buf.as_mut_ptr().cast(), buf.len()) };
    &buf[..n.clamp(0, 31) as usize]
}

/// Two ASCII digits for each value 0..100, so the integer formatter needs
/// one division per two digits.
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Appends `v` in decimal (integer replies, INCR results, lengths).
pub fn format_i64(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut n = v.unsigned_abs();
    while n >= 100 {
        let r = (n % 100) as usize * 2;
        n /= 100;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    }
    if n >= 10 {
        let r = n as usize * 2;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    } else {
        pos -= 1;
        buf[pos] = b'0' + n as u8;
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[pos..]);
}

/// Why [`incr_by_float`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatIncrError {
    /// Current value or increment is not a valid long double
    /// (`ERR value is not a valid float`; HINCRBYFLOAT says
    /// `ERR hash value is not a float` when it is the stored value).
    NotFloat,
    /// The sum is NaN or infinite
    /// (`ERR increment would produce NaN or Infinity`).
    NanOrInfinity,
}

/// How a string reads as a Redis long double (`string2ld`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongDoubleKind {
    /// Not acceptable: empty, 5120+ bytes, spaces, garbage, NaN, out of range.
    Invalid,
    /// A finite value.
    Finite,
    /// `inf`, `-inf`, `infinity` and the like.
    Infinite,
}

/// Classifies `s` under Redis's long double rules. HINCRBYFLOAT checks its
/// increment first (`ERR value is not a valid float`, then
/// `ERR value is NaN or Infinity` for an infinite one) before it looks at
/// the stored field, so callers need this apart from [`incr_by_float`].
pub fn classify_long_double(s: &[u8]) -> LongDoubleKind {
    // SAFETY: the pointer/length pair describes `s`; the helper only reads.
    match unsafe { volley_ld_classify(s.as_ptr().cast(), s.len()) } {
        1 => LongDoubleKind::Finite,
        2 => LongDoubleKind::Infinite,
        _ => LongDoubleKind::Invalid,
    }
}

/// True when `s` is a valid Redis long double (finite or infinite).
pub fn parse_long_double_ok(s: &[u8]) -> bool {
    classify_long_double(s) != LongDoubleKind::Invalid
}

/// INCRBYFLOAT / HINCRBYFLOAT arithmetic: `current + incr` in C long double
/// (80-bit on x86-64, as in Redis), rendered as Redis stores and replies it:
/// `%.17Lf` with trailing zeros and a trailing `.` removed, `-0` as `0`.
/// An absent key is the caller's business: pass `b"0"` as `current`.
pub fn incr_by_float(current: &[u8], incr: &[u8]) -> Result<Vec<u8>, FloatIncrError> {
    let mut buf = [0u8; LD_MAX_CHARS];
    // SAFETY: both inputs are valid pointer/length pairs and `buf` is
    // writable for its full length, which is passed along.
    let n = unsafe {
        volley_ld_incr(
            current.as_ptr().cast(),
            current.len(),
            incr.as_ptr().cast(),
            incr.len(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    match n {
        -2 => Err(FloatIncrError::NanOrInfinity),
        // -1 is a parse failure; -3 (no room) cannot happen for a finite
        // long double, and Redis would not store such a value either.
        n if n <= 0 => Err(FloatIncrError::NotFloat),
        n => Ok(buf[..n as usize].to_vec()),
    }
}

// Expected values below were checked against a live redis-server 7.0.15
// (Debian): INCRBY for integers, ZADD + ZSCORE for doubles (skiplist encoding
// for -0, since listpack stores scores as text and loses the sign), RESP3 via
// HELLO 3, and INCRBYFLOAT / HINCRBYFLOAT for long doubles.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_i64_matches_string2ll() {
        let ok: &[(&str, i64)] = &[
            ("0", 0),
            ("-5", -5),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
        ];
        for &(s, v) in ok {
            assert_eq!(parse_i64(s.as_bytes()), Some(v), "{s}");
        }
        let bad = [
            "", "007", "-0", "+5", " 5", "5 ", "1.0", "0x10", "-", "00", "1\02",
            "9223372036854775808", "-9223372036854775809", "99999999999999999999",
        ];
        for s in bad {
            assert_eq!(parse_i64(s.as_bytes()), None, "{s:?}");
        }
    }

    #[test]
    fn format_i64_roundtrips() {
        for v in [0, 7, -7, 10, 99, 100, -101, 12345, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            format_i64(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
        }
    }

    /// (ZADD argument, ZSCORE reply) pairs.
    const SCORES: &[(&str, &str)] = &[
        (".5", "0.5"),
        ("1e3", "1000"),
        ("0x10", "16"),
        ("0x1p3", "8"),
        ("0X1P-2", "0.25"),
        ("inf", "inf"),
        ("-inf", "-inf"),
        ("+inf", "inf"),
        ("infinity", "inf"),
        ("-infinity", "-inf"),
        ("INF", "inf"),
        ("Infinity", "inf"),
        ("+1.5", "1.5"),
        ("-1.5", "-1.5"),
        ("4.9e-324", "4.9406564584124654e-324"),
        ("-4.9e-324", "-4.9406564584124654e-324"),
        ("1e-320", "9.9998886718268301e-321"),
        ("1e-310", "9.9999999999999694e-311"),
        ("1e308", "1e+308"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("0.1", "0.10000000000000001"),
        ("1e15", "1000000000000000"),
        ("1e16", "10000000000000000"),
        ("1e17", "1e+17"),
        ("1e20", "1e+20"),
        ("123456789012345678", "1.2345678901234568e+17"),
        ("12345678901234567890", "1.2345678901234567e+19"),
        ("-0", "-0"),
        ("-0.0", "-0"),
        ("0.0", "0"),
        ("0e5", "0"),
        ("3.0", "3"),
        ("5.0e3", "5000"),
        ("100", "100"),
        ("1e-5", "1.0000000000000001e-05"),
        ("0.0001", "0.0001"),
        ("2.5e-7", "2.4999999999999999e-07"),
    ];

    #[test]
    fn parse_and_format_doubles_like_zscore() {
        for &(arg, reply) in SCORES {
            let v = parse_f64(arg.as_bytes()).unwrap_or_else(|| panic!("{arg}"));
            let mut out = Vec::new();
            format_double(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), reply, "{arg}");
        }
        let long = format!("{}1.5", "0".repeat(6000));
        assert_eq!(parse_f64(long.as_bytes()), Some(1.5));
    }

    #[test]
    fn parse_f64_rejects_like_zadd() {
        let bad = [
            "nan", "NaN", "-nan", " 1", "1 ", "1\t", "", "+", "-", ".", "0x",
            "1e400", "-1e400", "1e-400", "2.4e-324", "0x1p-1075", "1.5e", "1.5x",
            "1,5", "1\02", "1.7976931348623159e308",
        ];
        for s in bad {
            assert_eq!(parse_f64(s.as_bytes()), None, "{s:?}");
        }
    }

    #[test]
    fn resp3_payload_matches_hello3_zscore() {
        let cases = [(1.5, "1.5"), (f64::INFINITY, "inf"), (f64::NEG_INFINITY, "-inf")];
        let more = [(0.1, "0.10000000000000001"), (1e20, "1e+20"), (-0.0, "-0")];
        for (v, s) in cases.into_iter().chain(more).chain([(1e16, "10000000000000000"), (3.0, "3")]) {
            let mut out = Vec::new();
            format_resp3_double(&mut out, v);
            assert_eq!(out, s.as_bytes());
        }
    }

    /// Small xorshift so the randomized checks need no dependency.
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn format_double_agrees_with_libc_g17() {
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        for i in 0..200_000 {
            let r = rng(&mut seed);
            // Alternate raw bit patterns with integral values, which take
            // the Rust fast path, including those near the 1e17 boundary.
            let v = match i % 4 {
                0 => f64::from_bits(r),
                1 => (r % (1 << 53)) as f64 * if r & 1 == 0 { 1.0 } else { -1.0 },
                2 => (1e17 - (r % 100_000) as f64 * 8.0).trunc(),
                _ => (r >> 11) as f64 / (1u64 << (r % 50)) as f64,
            };
            if v.is_nan() {
                continue;
            }
            let mut out = Vec::new();
            format_double(&mut out, v);
            assert_eq!(out, g17_libc(v, &mut [0; 32]), "{v:e}");
        }
    }

    #[test]
    fn parse_f64_integer_shortcut_agrees_with_strtod() {
        let mut seed = 0x2545_F491_4F6C_DD1D;
        for _ in 0..50_000 {
            let r = rng(&mut seed);
            let n = (r % (1 << 54)) as i64 - (1 << 53);
            let s = n.to_string();
            let mut v = f64::NAN;
            // SAFETY: same contract as in parse_f64.
            let ok = unsafe { volley_parse_double(s.as_ptr().cast(), s.len(), &mut v) };
            assert!(ok == 1 && parse_f64(s.as_bytes()) == Some(v), "{s}");
        }
    }

    fn incr(cur: &str, by: &str) -> Result<String, FloatIncrError> {
        incr_by_float(cur.as_bytes(), by.as_bytes()).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn incr_by_float_matches_redis() {
        let cases: &[(&str, &str, &str)] = &[
            ("0", "0.1", "0.1"),
            ("0.1", "0.2", "0.3"),
            ("10.5", "0.1", "10.6"),
            ("5.0e3", "2.0e2", "5200"),
            ("0", "1.23456789012345678901", "1.23456789012345679"),
            ("3", "-3", "0"),
            ("0", "1e30", "1000000000000000000024696061952"),
            ("0", "1e20", "100000000000000000000"),
            ("0", "1e17", "100000000000000000"),
            ("0", "-1e-20", "0"),
            ("0", "1e-17", "0.00000000000000001"),
            ("0", "1e-18", "0"),
            ("0", "1e-4000", "0"),
            ("0", "-1e-4000", "0"),
            ("0", "4e-4951", "0"),
            ("0", "0x10", "16"),
            ("0", "0x1p-3", "0.125"),
            ("0", "+5", "5"),
            ("0", ".5", "0.5"),
            ("0", "00001.5", "1.5"),
            ("0", "-.5e1", "-5"),
            ("0", "1.", "1"),
            ("1.5", "1.5", "3"),
            ("9223372036854775807", "1", "9223372036854775808"),
            ("-0", "0", "0"),
            ("-0", "-0", "0"),
            ("0", "-100.25", "-100.25"),
            ("0", "123456789.123456789", "123456789.12345678899873747"),
            ("1", "-1e-30", "1"),
            ("5", "5.0e3", "5005"),
        ];
        for &(cur, by, want) in cases {
            assert_eq!(incr(cur, by).as_deref(), Ok(want), "{cur} + {by}");
        }
    }

    #[test]
    fn incr_by_float_huge_values() {
        // 1e4000 fits in an x86-64 long double; Redis prints all its digits.
        let big = incr("0", "1e4000").unwrap();
        assert_eq!(big.len(), 4000);
        assert!(big.starts_with("99999999999999999999654638730996"));
        assert!(big.ends_with("20629864357825543441956972190272729951206648276349901340672"));
        let twice = incr(&big, &big).unwrap();
        assert_eq!(twice.len(), 4001);
        assert!(twice.starts_with("1999999999999999999993092774619924756986"));
        let max = incr("0", "1.18973149535723176502e+4932").unwrap();
        assert_eq!(max.len(), 4933);
        assert!(max.starts_with("11897314953572317650212638530309702051690633"));
        assert!(max.ends_with("8849149662444156604419552086811989770240"));
        let e308 = incr("1", "1e308").unwrap();
        assert_eq!(e308.len(), 308);
        assert!(e308.starts_with("999999999999999999966858796558456456605600998474"));
    }

    #[test]
    fn incr_by_float_errors() {
        use FloatIncrError::*;
        let cases: &[(&str, &str, FloatIncrError)] = &[
            ("0", "inf", NanOrInfinity),
            ("0", "-inf", NanOrInfinity),
            ("0", "infinity", NanOrInfinity),
            ("inf", "1", NanOrInfinity),
            ("inf", "-inf", NanOrInfinity),
            ("1e4932", "1e4932", NanOrInfinity),
            ("0", "nan", NotFloat),
            ("0", " 1", NotFloat),
            ("0", "1 ", NotFloat),
            ("0", "", NotFloat),
            ("0", "abc", NotFloat),
            ("abc", "1", NotFloat),
            ("", "1", NotFloat),
            ("0", "1e5000", NotFloat),
            ("0", "1.2e4932", NotFloat),
            ("0", "1e-5000", NotFloat),
            ("0", "1e-4960", NotFloat),
            ("0", "1.5e", NotFloat),
            ("0", "1\x002", NotFloat),
        ];
        for &(cur, by, err) in cases {
            assert_eq!(incr(cur, by), Err(err), "{cur:?} + {by:?}");
        }
    }

    #[test]
    fn long_double_length_cap_is_5120() {
        // Redis rejects long double text of MAX_LONG_DOUBLE_CHARS or more.
        let ok = format!("{}1", "0".repeat(5118));
        assert_eq!(incr("0", &ok).as_deref(), Ok("1"));
        let too_long = format!("0{ok}");
        assert_eq!(incr("0", &too_long), Err(FloatIncrError::NotFloat));
        assert!(!parse_long_double_ok(too_long.as_bytes()));
    }

    #[test]
    fn classify_for_hincrbyfloat() {
        assert_eq!(classify_long_double(b"1.5"), LongDoubleKind::Finite);
        assert_eq!(classify_long_double(b"1e4000"), LongDoubleKind::Finite);
        assert_eq!(classify_long_double(b"-inf"), LongDoubleKind::Infinite);
        assert_eq!(classify_long_double(b"x"), LongDoubleKind::Invalid);
        assert!(parse_long_double_ok(b"inf") && !parse_long_double_ok(b"nan"));
    }
}
