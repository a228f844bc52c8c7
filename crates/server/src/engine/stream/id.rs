//! Stream entry IDs (`<ms>-<seq>`, two unsigned 64-bit halves) with Redis's
//! parsing rules: `-` and `+` as the smallest and largest IDs, a missing
//! sequence filled in by the caller, `<ms>-*` for XADD.
use std::fmt;

/// One entry ID; ordered by milliseconds, then sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

/// How an ID argument was written (XADD accepts `*` forms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdSpec {
    /// `*`: generated from the clock.
    Auto,
    /// `<ms>-*`: the sequence is generated.
    AutoSeq(u64),
    /// A complete ID.
    Exact(StreamId),
}

pub const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId { ms: u64::MAX, seq: u64::MAX };

    pub const fn new(ms: u64, seq: u64) -> Self {
        StreamId { ms, seq }
    }

    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// The next ID, or None past the largest.
    pub fn next(self) -> Option<StreamId> {
        if self.seq < u64::MAX {
            Some(StreamId::new(self.ms, self.seq + 1))
        } else if self.ms < u64::MAX {
            Some(StreamId::new(self.ms + 1, 0))
        } else {
            None
        }
    }

    /// The previous ID, or None before 0-0.
    pub fn prev(self) -> Option<StreamId> {
        if self.seq > 0 {
            Some(StreamId::new(self.ms, self.seq - 1))
        } else if self.ms > 0 {
            Some(StreamId::new(self.ms - 1, u64::MAX))
        } else {
            None
        }
    }

    /// 16 bytes, big endian: the key order of Redis's radix trees and RDB.
    pub fn to_be_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    pub fn from_be_bytes(b: &[u8]) -> Option<StreamId> {
        if b.len() != 16 {
            return None;
        }
        let ms = u64::from_be_bytes(b[..8].try_into().ok()?);
        let seq = u64::from_be_bytes(b[8..].try_into().ok()?);
        Some(StreamId::new(ms, seq))
    }

    /// `<ms>-<seq>` as bytes.
    pub fn to_bytes(self) -> Vec<u8> {
        self.to_string().into_bytes()
    }

    /// Parse `<ms>[-<seq>]`, `-` or `+`; a missing sequence is `missing_seq`.
    /// `strict` refuses `-` and `+` (where they mean nothing).
    pub fn parse(arg: &[u8], missing_seq: u64, strict: bool) -> Result<StreamId, &'static str> {
        match Self::parse_spec(arg, missing_seq, strict, false)? {
            IdSpec::Exact(id) => Ok(id),
            _ => Err(INVALID_ID),
        }
    }

    /// Parse an ID argument that may also be `*` or `<ms>-*` (`auto`).
    pub fn parse_spec(arg: &[u8], missing_seq: u64, strict: bool, auto: bool) -> Result<IdSpec, &'static str> {
        // Redis copies the argument into a 128-byte buffer first.
        if arg.len() > 127 {
            return Err(INVALID_ID);
        }
        // ... and reads it as a C string.
        let arg = arg.iter().position(|&c| c == 0).map_or(arg, |nul| &arg[..nul]);
        match arg {
            b"-" | b"+" if strict => return Err(INVALID_ID),
            b"-" => return Ok(IdSpec::Exact(StreamId::MIN)),
            b"+" => return Ok(IdSpec::Exact(StreamId::MAX)),
            b"*" if auto => return Ok(IdSpec::Auto),
            _ => {}
        }
        let (ms_part, seq_part) = match arg.iter().position(|&c| c == b'-') {
            Some(i) => (&arg[..i], Some(&arg[i + 1..])),
            None => (arg, None),
        };
        let ms = parse_u64(ms_part).ok_or(INVALID_ID)?;
        match seq_part {
            None => Ok(IdSpec::Exact(StreamId::new(ms, missing_seq))),
            Some(b"*") if auto => Ok(IdSpec::AutoSeq(ms)),
            Some(s) => Ok(IdSpec::Exact(StreamId::new(ms, parse_u64(s).ok_or(INVALID_ID)?))),
        }
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// Redis's `string2ull`: a number its strict `string2ll` reads (then not
/// negative), or else what C's `strtoull` reads whole: leading whitespace,
/// an optional sign (`-` wraps modulo 2^64), digits, nothing after, no
/// overflow. Clients do send such IDs (" 1", "+3", "5--0"), and Redis
/// accepts them.
fn parse_u64(b: &[u8]) -> Option<u64> {
    if let Some(v) = string2ll(b) {
        return u64::try_from(v).ok();
    }
    let start = b.iter().position(|c| !matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))?;
    let (negative, digits) = match &b[start..] {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(if negative { v.wrapping_neg() } else { v })
}

/// Redis's `string2ll`: `0`, or an optional `-` then digits without a
/// leading zero, within i64.
fn string2ll(b: &[u8]) -> Option<i64> {
    if b == b"0" {
        return Some(0);
    }
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    if !matches!(digits.first(), Some(b'1'..=b'9')) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_redis() {
        assert_eq!(StreamId::parse(b"5", 0, false), Ok(StreamId::new(5, 0)));
        assert_eq!(StreamId::parse(b"5", u64::MAX, false), Ok(StreamId::new(5, u64::MAX)));
        assert_eq!(StreamId::parse(b"5-7", 0, true), Ok(StreamId::new(5, 7)));
        assert_eq!(StreamId::parse(b"-", 0, false), Ok(StreamId::MIN));
        assert_eq!(StreamId::parse(b"+", 0, false), Ok(StreamId::MAX));
        assert!(StreamId::parse(b"+", 0, true).is_err());
        assert!(StreamId::parse(b"1-", 0, false).is_err());
        assert!(StreamId::parse(b"-1", 0, false).is_err());
        assert!(StreamId::parse(b"1-2-3", 0, false).is_err());
        assert!(StreamId::parse(b"18446744073709551616", 0, false).is_err());
        // strtoull's forms, as Redis falls back to it.
        assert_eq!(StreamId::parse(b" 1", 0, true), Ok(StreamId::new(1, 0)));
        assert_eq!(StreamId::parse(b"+3-+1", 0, true), Ok(StreamId::new(3, 1)));
        assert_eq!(StreamId::parse(b"5--0", 0, true), Ok(StreamId::new(5, 0)));
        assert_eq!(StreamId::parse(b"6- -1", 0, true), Ok(StreamId::new(6, u64::MAX)));
        assert_eq!(StreamId::parse(b"7--18446744073709551615", 0, true), Ok(StreamId::new(7, 1)));
        assert_eq!(StreamId::parse(b"8-01", 0, true), Ok(StreamId::new(8, 1)));
        assert_eq!(StreamId::parse(b"13\x00-7", 0, true), Ok(StreamId::new(13, 0)));
        assert!(StreamId::parse(b"6--1", 0, true).is_err());
        assert!(StreamId::parse(b"4-1 ", 0, true).is_err());
        assert!(StreamId::parse(b"1- ", 0, true).is_err());
        assert_eq!(StreamId::parse_spec(b"*", 0, true, true), Ok(IdSpec::Auto));
        assert_eq!(StreamId::parse_spec(b"7-*", 0, true, true), Ok(IdSpec::AutoSeq(7)));
        assert!(StreamId::parse_spec(b"7-*", 0, true, false).is_err());
    }

    #[test]
    fn steps_and_bytes() {
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
        assert_eq!(StreamId::MIN.prev(), None);
        let id = StreamId::new(0x0102, 0x0304);
        assert_eq!(StreamId::from_be_bytes(&id.to_be_bytes()), Some(id));
        assert_eq!(id.to_string(), "258-772");
    }
}
