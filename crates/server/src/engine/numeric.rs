//! Redis 7.0.15 number semantics: integer and float parsing, reply
//! formatting, and INCRBYFLOAT's long double arithmetic.
//!
//! Clients and our differential tests compare these bytes exactly. Float
//! parsing and all long double work go through glibc (the library Redis uses
//! on Debian) via `csrc/longdouble.c`; integers and `%.17g` double replies
//! are done in Rust for speed and tested against glibc's output.

use std::ffi::{c_char, c_int};

extern "C" {
    fn volley_parse_double(s: *const c_char, len: usize, out: *mut f64) -> c_int;
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
    if let Some(n) = parse_i64(s).filter(|n| n.unsigned_abs() <= 1 << 53) {
        return Some(n as f64);
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
    g17(out, v);
}

/// Appends the payload of a RESP3 double (`,<payload>\r\n`) as Redis 7.0
/// emits it. In 7.0 that is the same text as [`format_double`] (checked live:
/// `,1.5`, `,inf`, `,-inf`, `,0.10000000000000001`, `,1e+20`, `,-0`);
/// it is a separate entry point because later Redis versions diverge.
pub fn format_resp3_double(out: &mut Vec<u8>, v: f64) {
    format_double(out, v);
}

/// C `%.17g` for a finite, non-zero double, written in Rust because glibc's
/// snprintf costs ~3x more. Rust's `{:.16e}` yields the same 17 correctly
/// rounded significant digits (ties to even since Rust 1.67, as glibc does);
/// this only rearranges them into %g's layout. Checked against libc below.
fn g17(out: &mut Vec<u8>, v: f64) {
    use std::io::Write;
    let start = out.len();
    // Writing into a Vec cannot fail. The text is "d.<16 digits>e<exp>".
    let _ = write!(out, "{:.16e}", v.abs());
    let digits: [u8; 17] = std::array::from_fn(|i| out[start + i + usize::from(i > 0)]);
    let exp: i32 = std::str::from_utf8(&out[start + 19..]).ok().and_then(|e| e.parse().ok()).unwrap_or(0);
    out.truncate(start);
    // %g drops trailing zeros of the significand (and then the '.').
    let sig = 17 - digits.iter().rev().take_while(|&&d| d == b'0').count();
    if v < 0.0 {
        out.push(b'-');
    }
    if (-4..17).contains(&exp) {
        if exp < 0 {
            out.extend_from_slice(b"0.");
            out.resize(out.len() + (-exp - 1) as usize, b'0');
            out.extend_from_slice(&digits[..sig]);
        } else {
            let int_len = exp as usize + 1;
            out.extend_from_slice(&digits[..int_len]);
            if sig > int_len {
                out.push(b'.');
                out.extend_from_slice(&digits[int_len..sig]);
            }
        }
    } else {
        out.push(digits[0]);
        if sig > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..sig]);
        }
        out.extend_from_slice(if exp < 0 { b"e-" } else { b"e+" });
        if exp.abs() < 10 {
            out.push(b'0');
        }
        format_i64(out, i64::from(exp.abs()));
    }
}

pub use resp::decimal::{decimal_len, push_int_line};

/// Appends `v` in decimal (integer replies, INCR results, lengths).
pub fn format_i64(out: &mut Vec<u8>, v: i64) {
    push_int_line(out, None, v, false);
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
// HELLO 3, and INCRBYFLOAT / HINCRBYFLOAT for long doubles. Tables are
// whitespace-separated words; `\x00` marks an embedded NUL.
#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &str) -> impl Iterator<Item = Vec<u8>> + '_ {
        t.split_whitespace().map(|w| w.replace("\\x00", "\0").into())
    }

    /// Inputs with spaces or tabs, which the word tables cannot hold.
    const SPACED: [&str; 5] = [" 1", "1 ", "1\t", " 5", "5 "];

    #[test]
    fn parse_and_format_i64_like_string2ll() {
        let ok = "0 -5 7 10 99 100 -101 1000 12345 9223372036854775807 -9223372036854775808";
        for w in words(ok) {
            let want: i64 = std::str::from_utf8(&w).unwrap().parse().unwrap();
            assert_eq!(parse_i64(&w), Some(want));
            let mut out = b"x".to_vec();
            format_i64(&mut out, want);
            assert_eq!(out[1..], w);
            out.clear();
            push_int_line(&mut out, Some(b':'), want, true);
            assert_eq!(decimal_len(want), w.len());
            assert_eq!(out, [&b":"[..], &w, b"\r\n"].concat());
        }
        let bad = "007 -0 +5 1.0 0x10 - 00 1\\x002 9223372036854775808 \
                   -9223372036854775809 99999999999999999999";
        for w in words(bad).chain(SPACED.map(|s| s.into())).chain([vec![]]) {
            assert_eq!(parse_i64(&w), None, "{w:?}");
        }
    }

    /// `ZADD argument=ZSCORE reply` pairs.
    const SCORES: &str = "
        .5=0.5 1e3=1000 0x10=16 0x1p3=8 0X1P-2=0.25 inf=inf -inf=-inf +inf=inf
        infinity=inf -infinity=-inf INF=inf Infinity=inf +1.5=1.5 -1.5=-1.5
        4.9e-324=4.9406564584124654e-324 -4.9e-324=-4.9406564584124654e-324
        1e-320=9.9998886718268301e-321 1e-310=9.9999999999999694e-311
        1e308=1e+308 1.7976931348623157e308=1.7976931348623157e+308
        0.1=0.10000000000000001 1e15=1000000000000000 1e16=10000000000000000
        1e17=1e+17 1e20=1e+20 123456789012345678=1.2345678901234568e+17
        12345678901234567890=1.2345678901234567e+19 -0=-0 -0.0=-0 0.0=0 0e5=0
        3.0=3 5.0e3=5000 100=100 1e-5=1.0000000000000001e-05 0.0001=0.0001
        2.5e-7=2.4999999999999999e-07";

    #[test]
    fn parse_and_format_doubles_like_zscore() {
        for pair in words(SCORES) {
            let text = String::from_utf8(pair).unwrap();
            let (arg, reply) = text.split_once('=').unwrap();
            let v = parse_f64(arg.as_bytes()).unwrap_or_else(|| panic!("{arg}"));
            let (mut out, mut out3) = (Vec::new(), Vec::new());
            format_double(&mut out, v);
            // Live HELLO 3 replies carried the same text after ','.
            format_resp3_double(&mut out3, v);
            assert_eq!((&out[..], &out3[..]), (reply.as_bytes(), reply.as_bytes()));
        }
        let long = format!("{}1.5", "0".repeat(6000));
        assert_eq!(parse_f64(long.as_bytes()), Some(1.5));
    }

    #[test]
    fn parse_f64_rejects_like_zadd() {
        let bad = "nan NaN -nan + - . 0x 1e400 -1e400 1e-400 2.4e-324 0x1p-1075 \
                   1.5e 1.5x 1,5 1\\x002 1.7976931348623159e308";
        for w in words(bad).chain(SPACED.map(|s| s.into())).chain([vec![]]) {
            assert_eq!(parse_f64(&w), None, "{w:?}");
        }
    }

    extern "C" {
        fn volley_fmt_g17(v: f64, out: *mut c_char, outlen: usize) -> c_int;
    }

    /// libc `%.17g`, the reference the Rust formatter must reproduce.
    fn g17_libc(v: f64) -> Vec<u8> {
        let mut buf = [0u8; 32];
        // SAFETY: buf is 32 writable bytes and snprintf is told so; %.17g
        // of any double fits (longest is 24 characters plus NUL).
        let n = unsafe { volley_fmt_g17(v, buf.as_mut_ptr().cast(), buf.len()) };
        buf[..n as usize].to_vec()
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
                // Dyadic fractions produce exact rounding ties; scaled ones
                // probe the %g fixed/exponent switch at 1e-4 and 1e17.
                3 if r & 1 == 0 => (r >> 11) as f64 / (1u64 << (r % 50)) as f64,
                _ => {
                    f64::from_bits((r % (1 << 52)) | (0x3FF0 << 48)) * [1e-5, 1e-4, 1e16, 1e17][(r >> 60) as usize % 4]
                }
            };
            if v.is_nan() {
                continue;
            }
            let mut out = Vec::new();
            format_double(&mut out, v);
            assert_eq!(out, g17_libc(v), "{v:e}");
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

    /// `current+increment=INCRBYFLOAT reply` triples.
    const INCRS: &str = "
        0+0.1=0.1 0.1+0.2=0.3 10.5+0.1=10.6 5.0e3+2.0e2=5200 3+-3=0
        0+1.23456789012345678901=1.23456789012345679
        0+1e30=1000000000000000000024696061952 0+1e20=100000000000000000000
        0+1e17=100000000000000000 0+-1e-20=0 0+1e-17=0.00000000000000001
        0+1e-18=0 0+1e-4000=0 0+-1e-4000=0 0+4e-4951=0 0+0x10=16 0+0x1p-3=0.125
        0++5=5 0+.5=0.5 0+00001.5=1.5 0+-.5e1=-5 0+1.=1 1.5+1.5=3
        9223372036854775807+1=9223372036854775808 -0+0=0 -0+-0=0
        0+-100.25=-100.25 0+123456789.123456789=123456789.12345678899873747
        1+-1e-30=1 5+5.0e3=5005";

    #[test]
    fn incr_by_float_matches_redis() {
        for w in words(INCRS) {
            let text = String::from_utf8(w).unwrap();
            let (sum, want) = text.split_once('=').unwrap();
            let (cur, by) = sum.split_once('+').unwrap();
            assert_eq!(incr(cur, by).as_deref(), Ok(want), "{text}");
        }
    }

    #[test]
    fn incr_by_float_huge_values() {
        // 1e4000 fits in an x86-64 long double; Redis prints all its digits.
        // Full outputs were compared byte for byte with Redis; the prefix,
        // suffix and length keep the table readable.
        let big = incr("0", "1e4000").unwrap();
        let twice = incr(&big, &big).unwrap();
        let max = incr("0", "1.18973149535723176502e+4932").unwrap();
        let e308 = incr("1", "1e308").unwrap();
        // Length, leading digits and trailing digits of each result.
        let want = "4000 9999999999999999999965463873099623 51206648276349901340672
                    4001 1999999999999999999993092774619924 02413296552699802681344
                    4933 1189731495357231765021263853030970 44156604419552086811989770240
                    308 9999999999999999999668587965584564 255046343928578048";
        for (got, line) in [big, twice, max, e308].iter().zip(want.lines()) {
            let w: Vec<&str> = line.split_whitespace().collect();
            let ok = got.len().to_string() == w[0] && got.starts_with(w[1]);
            assert!(ok && got.ends_with(w[2]), "{got}");
        }
    }

    #[test]
    fn incr_by_float_errors() {
        let nan_or_inf = "0+inf 0+-inf 0+infinity inf+1 inf+-inf 1e4932+1e4932";
        for w in words(nan_or_inf) {
            let text = String::from_utf8(w).unwrap();
            let (cur, by) = text.split_once('+').unwrap();
            assert_eq!(incr(cur, by), Err(FloatIncrError::NanOrInfinity), "{text}");
        }
        let bad = "nan abc 1e5000 1.2e4932 1e-5000 1e-4960 1.5e 1\\x002";
        for w in words(bad).chain(SPACED.map(|s| s.into())).chain([vec![]]) {
            assert_eq!(incr_by_float(b"0", &w), Err(FloatIncrError::NotFloat));
            assert_eq!(incr_by_float(&w, b"1"), Err(FloatIncrError::NotFloat));
        }
    }

    #[test]
    fn long_double_length_cap_and_classify() {
        // Redis rejects long double text of MAX_LONG_DOUBLE_CHARS or more.
        let ok = format!("{}1", "0".repeat(5118));
        assert_eq!(incr("0", &ok).as_deref(), Ok("1"));
        let too_long = format!("0{ok}");
        assert_eq!(incr("0", &too_long), Err(FloatIncrError::NotFloat));
        assert!(!parse_long_double_ok(too_long.as_bytes()));
        // HINCRBYFLOAT's separate increment checks.
        assert_eq!(classify_long_double(b"1e4000"), LongDoubleKind::Finite);
        assert_eq!(classify_long_double(b"-inf"), LongDoubleKind::Infinite);
        assert_eq!(classify_long_double(b"nan"), LongDoubleKind::Invalid);
    }

    /// Rough per-call costs; run with `cargo test --release -p volley-server
    /// --lib cost_probe -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn cost_probe() {
        use std::hint::black_box as bb;
        let names = "format_i64 format_double:integral format_double:fraction \
                     libc_snprintf_%.17g parse_i64 parse_f64:integer parse_f64:strtod incr_by_float";
        let mut out = Vec::with_capacity(64);
        for (k, name) in names.split_whitespace().enumerate() {
            let t = std::time::Instant::now();
            for i in 0..200_000u32 {
                out.clear();
                let (o, i) = (bb(&mut out), bb(i));
                match k {
                    0 => format_i64(o, i64::from(i) * 7919),
                    1 => format_double(o, f64::from(i)),
                    2 => format_double(o, f64::from(i) + 0.1),
                    3 => o.extend(g17_libc(f64::from(i) + 0.1)),
                    4 => o.push(parse_i64(bb(b"-1234567")).is_some().into()),
                    5 => o.push(parse_f64(bb(b"12345")).is_some().into()),
                    6 => o.push(parse_f64(bb(b"3.14")).is_some().into()),
                    _ => o.extend(incr_by_float(bb(b"10.5"), bb(b"0.1")).unwrap_or_default()),
                }
            }
            println!("{name}: {:.1} ns/op", t.elapsed().as_nanos() as f64 / 2e5);
        }
    }
}
