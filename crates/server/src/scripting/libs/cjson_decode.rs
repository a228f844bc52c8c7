//! `cjson.decode`: lua-cjson 2.1.0's tokenizer and recursive-descent parser,
//! with its exact error texts ("Expected value but found invalid token at
//! character 1"), its NUL-terminated view of the input, its `strtod`-based
//! number syntax (hex, inf, nan accepted unless `decode_invalid_numbers` is
//! off) and its nesting limit.

use mlua::{Lua, MultiValue, Value};

use super::cjson::{null, Config};
use super::util::{bad_arg, check_string, err, ret1, stack_exhausted, LibErr, LibResult, MAX_C_STACK};

/// A lexical token; `Error` carries lua-cjson's description.
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl Tok {
    /// How error messages name the token.
    fn name(&self) -> &'static str {
        match self {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Str(_) => "T_STRING",
            Tok::Num(_) => "T_NUMBER",
            Tok::Bool(_) => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Colon => "T_COLON",
            Tok::Comma => "T_COMMA",
            Tok::End => "T_END",
            Tok::Error(e) => e,
        }
    }
}

struct Parser<'a> {
    lua: &'a Lua,
    /// The input up to its first NUL: C sees a NUL as the end of the text.
    data: &'a [u8],
    pos: usize,
    cfg: Config,
    depth: i32,
    /// Lua stack slots the C decoder would hold (see `MAX_C_STACK`).
    slots: usize,
}

/// Decodes argument 1 (`cjson.decode(text)`).
pub(crate) fn decode(lua: &Lua, cfg: &Config, args: &MultiValue) -> LibResult<MultiValue> {
    if args.len() != 1 {
        return Err(bad_arg(1, "expected 1 argument"));
    }
    let s = check_string(lua, args, 1)?;
    let bytes = s.as_bytes();
    // lua-cjson's check for UTF-16/32 input: a NUL in the first two bytes.
    if bytes.len() >= 2 && (bytes[0] == 0 || bytes[1] == 0) {
        return err("JSON parser does not support UTF-16 or UTF-32");
    }
    let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
    let mut p = Parser { lua, data: &bytes[..end], pos: 0, cfg: *cfg, depth: 0, slots: 1 };
    let (tok, at) = p.next_token();
    let v = p.value(tok, at)?;
    let (tok, at) = p.next_token();
    if !matches!(tok, Tok::End) {
        return parse_error("the end", &tok, at);
    }
    ret1(v)
}

#[cold]
#[inline(never)]
fn parse_error<T>(expected: &str, tok: &Tok, at: usize) -> LibResult<T> {
    err(format!("Expected {expected} but found {} at character {}", tok.name(), at + 1))
}

fn hex4(s: &[u8]) -> Option<u32> {
    if s.len() < 4 {
        return None;
    }
    s[..4].iter().try_fold(0u32, |a, &c| Some((a << 4) | (c as char).to_digit(16)?))
}

fn utf8(out: &mut Vec<u8>, cp: u32) {
    // Surrogates never get here (pairs are combined, lone ones rejected).
    let ch = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
    out.extend_from_slice(ch.encode_utf8(&mut [0u8; 4]).as_bytes());
}

impl Parser<'_> {
    fn byte(&self, i: usize) -> u8 {
        self.data.get(i).copied().unwrap_or(0)
    }

    /// Returns the next token and its 0-based start offset (for errors,
    /// where the token failed).
    #[inline(never)]
    fn next_token(&mut self) -> (Tok, usize) {
        while matches!(self.byte(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let at = self.pos;
        let c = self.byte(at);
        let single = match c {
            0 => return (Tok::End, at),
            b'{' => Tok::ObjBegin,
            b'}' => Tok::ObjEnd,
            b'[' => Tok::ArrBegin,
            b']' => Tok::ArrEnd,
            b',' => Tok::Comma,
            b':' => Tok::Colon,
            b'"' => return self.string(),
            b'-' | b'0'..=b'9' => {
                if !self.cfg.decode_invalid && self.is_invalid_number() {
                    return (Tok::Error("invalid number"), at);
                }
                return self.number();
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => return self.word(),
            _ => return (Tok::Error("invalid token"), at),
        };
        self.pos += 1;
        (single, at)
    }

    fn word(&mut self) -> (Tok, usize) {
        let at = self.pos;
        let rest = &self.data[at..];
        for (lit, tok) in [(&b"true"[..], Tok::Bool(true)), (b"false", Tok::Bool(false)), (b"null", Tok::Null)] {
            if rest.starts_with(lit) {
                self.pos += lit.len();
                return (tok, at);
            }
        }
        if self.cfg.decode_invalid && self.is_invalid_number() {
            return self.number();
        }
        (Tok::Error("invalid token"), at)
    }

    /// Numbers strict JSON forbids but `strtod` takes: leading `+`, hex,
    /// leading zeros, inf and nan.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.pos;
        match self.byte(p) {
            b'+' => return true,
            b'-' => p += 1,
            _ => {}
        }
        let c = self.byte(p);
        if c == b'0' {
            let c2 = self.byte(p + 1);
            return (c2 | 0x20) == b'x' || c2.is_ascii_digit();
        }
        if c <= b'9' {
            return false;
        }
        let rest = &self.data[p.min(self.data.len())..];
        rest.len() >= 3 && (rest[..3].eq_ignore_ascii_case(b"inf") || rest[..3].eq_ignore_ascii_case(b"nan"))
    }

    fn number(&mut self) -> (Tok, usize) {
        let at = self.pos;
        match strtod(&self.data[at..]) {
            Some((v, used)) => {
                self.pos += used;
                (Tok::Num(v), at)
            }
            None => (Tok::Error("invalid number"), at),
        }
    }

    fn string(&mut self) -> (Tok, usize) {
        let at = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let c = self.byte(self.pos);
            match c {
                b'"' => break,
                0 => return (Tok::Error("unexpected end of string"), self.pos),
                b'\\' => {
                    let e = match self.byte(self.pos + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            if !self.unicode_escape(&mut out) {
                                return (Tok::Error("invalid unicode escape code"), self.pos);
                            }
                            continue;
                        }
                        _ => return (Tok::Error("invalid escape code"), self.pos),
                    };
                    out.push(e);
                    self.pos += 2;
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        (Tok::Str(out), at)
    }

    /// `\uXXXX` (or a surrogate pair) at `pos`, appended as UTF-8.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> bool {
        let rest = &self.data[self.pos..];
        let Some(mut cp) = hex4(&rest[2..]) else { return false };
        let mut len = 6;
        if cp & 0xf800 == 0xd800 {
            if cp & 0x400 != 0 || rest.get(6) != Some(&b'\\') || rest.get(7) != Some(&b'u') {
                return false;
            }
            let Some(low) = hex4(&rest[8..]) else { return false };
            if low & 0xfc00 != 0xdc00 {
                return false;
            }
            cp = (((cp & 0x3ff) << 10) | (low & 0x3ff)) + 0x10000;
            len = 12;
        }
        utf8(out, cp);
        self.pos += len;
        true
    }

    #[inline(never)]
    fn descend(&mut self, need: usize) -> LibResult<()> {
        self.depth += 1;
        if self.depth <= self.cfg.decode_max_depth && self.slots + need <= MAX_C_STACK && !stack_exhausted() {
            return Ok(());
        }
        self.too_deep()
    }

    #[cold]
    fn too_deep<T>(&self) -> LibResult<T> {
        err(format!("Found too many nested data structures ({}) at character {}", self.depth, self.pos))
    }

    fn value(&mut self, tok: Tok, at: usize) -> LibResult<Value> {
        Ok(match tok {
            Tok::Str(s) => Value::String(self.lua.create_string(&s)?),
            Tok::Num(n) => Value::Number(n),
            Tok::Bool(b) => Value::Boolean(b),
            Tok::Null => null(),
            Tok::ObjBegin | Tok::ArrBegin => {
                let r = if matches!(tok, Tok::ObjBegin) { self.object() } else { self.array() };
                match r {
                    // mlua's handle stack (~8000 live handles) ran out: our
                    // analogue of the Lua stack limit in the same place.
                    Err(LibErr::Lua(mlua::Error::StackError)) => return self.too_deep(),
                    r => r?,
                }
            }
            other => return parse_error("value", &other, at),
        })
    }

    fn object(&mut self) -> LibResult<Value> {
        self.descend(3)?;
        let t = self.lua.create_table()?;
        self.slots += 2; // the table and a key
        let (mut tok, mut at) = self.next_token();
        if !matches!(tok, Tok::ObjEnd) {
            loop {
                let Tok::Str(key) = tok else { return parse_error("object key string", &tok, at) };
                let key = self.lua.create_string(&key)?;
                let (colon, cat) = self.next_token();
                if !matches!(colon, Tok::Colon) {
                    return parse_error("colon", &colon, cat);
                }
                let (vt, vat) = self.next_token();
                let v = self.value(vt, vat)?;
                t.raw_set(key, v).map_err(LibErr::Lua)?;
                let (sep, sat) = self.next_token();
                match sep {
                    Tok::ObjEnd => break,
                    Tok::Comma => {}
                    other => return parse_error("comma or object end", &other, sat),
                }
                (tok, at) = self.next_token();
            }
        }
        self.slots -= 2;
        self.depth -= 1;
        Ok(Value::Table(t))
    }

    fn array(&mut self) -> LibResult<Value> {
        self.descend(2)?;
        let t = self.lua.create_table()?;
        self.slots += 1; // the table
        let (mut tok, mut at) = self.next_token();
        if !matches!(tok, Tok::ArrEnd) {
            let mut i = 1usize;
            loop {
                let v = self.value(tok, at)?;
                t.raw_set(i, v)?;
                i += 1;
                let (sep, sat) = self.next_token();
                match sep {
                    Tok::ArrEnd => break,
                    Tok::Comma => {}
                    other => return parse_error("comma or array end", &other, sat),
                }
                (tok, at) = self.next_token();
            }
        }
        self.slots -= 1;
        self.depth -= 1;
        Ok(Value::Table(t))
    }
}

/// glibc `strtod` on `s` (no leading whitespace here): returns the value
/// and the bytes consumed, or None when nothing converts. Accepts a sign,
/// decimal with optional exponent, hex (`0x1.8p3`), `inf`/`infinity` and
/// `nan`/`nan(chars)`, case-insensitively.
pub(crate) fn strtod(s: &[u8]) -> Option<(f64, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = 0;
    let neg = match at(0) {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let sign = |v: f64| if neg { -v } else { v };
    let rest = &s[i..];
    let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    if starts(b"infinity") {
        return Some((sign(f64::INFINITY), i + 8));
    }
    if starts(b"inf") {
        return Some((sign(f64::INFINITY), i + 3));
    }
    if starts(b"nan") {
        let mut n = i + 3;
        if at(n) == b'(' {
            let mut j = n + 1;
            while at(j).is_ascii_alphanumeric() || at(j) == b'_' {
                j += 1;
            }
            if at(j) == b')' {
                n = j + 1;
            }
        }
        return Some((sign(f64::NAN), n));
    }
    if at(i) == b'0' && (at(i + 1) | 0x20) == b'x' {
        if let Some((v, used)) = hex_float(&s[i + 2..]) {
            return Some((sign(v), i + 2 + used));
        }
        // "0x" without hex digits: just the "0".
        return Some((sign(0.0), i + 1));
    }
    let start = i;
    let mut digits = 0;
    while at(i).is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if at(i) == b'.' {
        i += 1;
        while at(i).is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if (at(i) | 0x20) == b'e' {
        let mut j = i + 1;
        if matches!(at(j), b'+' | b'-') {
            j += 1;
        }
        if at(j).is_ascii_digit() {
            while at(j).is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let text = std::str::from_utf8(&s[start..i]).ok()?;
    let v: f64 = text.parse().ok()?;
    Some((sign(v), i))
}

/// The part of a hex float after "0x": digits, optional fraction, optional
/// binary exponent. Rounds to nearest (ties to even) like glibc.
fn hex_float(s: &[u8]) -> Option<(f64, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let (mut mant, mut exp, mut i, mut any, mut sticky) = (0u64, 0i64, 0usize, false, false);
    let mut frac = false;
    loop {
        let c = at(i);
        if c == b'.' && !frac {
            frac = true;
            i += 1;
            continue;
        }
        let Some(d) = (c as char).to_digit(16) else { break };
        any = true;
        if mant >> 60 == 0 {
            mant = (mant << 4) | u64::from(d);
            if frac {
                exp -= 4;
            }
        } else {
            sticky |= d != 0;
            if !frac {
                exp += 4;
            }
        }
        i += 1;
    }
    if !any {
        return None;
    }
    if (at(i) | 0x20) == b'p' {
        let mut j = i + 1;
        let eneg = at(j) == b'-';
        if matches!(at(j), b'+' | b'-') {
            j += 1;
        }
        if at(j).is_ascii_digit() {
            let mut e: i64 = 0;
            while at(j).is_ascii_digit() {
                e = (e * 10 + i64::from(at(j) - b'0')).min(1 << 40);
                j += 1;
            }
            exp += if eneg { -e } else { e };
            i = j;
        }
    }
    Some((scale(mant, sticky, exp), i))
}

/// `mant * 2^exp` rounded to nearest, ties to even; `sticky` marks dropped
/// non-zero digits. (Subnormal results may round twice; glibc rounds once.)
fn scale(mant: u64, sticky: bool, exp: i64) -> f64 {
    if mant == 0 {
        return 0.0;
    }
    let lz = i64::from(mant.leading_zeros());
    let m = mant << lz;
    // Round the 64-bit significand to 53 bits so the conversion is exact.
    let (mut top, rem) = (m >> 11, m & 0x7ff);
    if rem > 0x400 || (rem == 0x400 && (sticky || top & 1 == 1)) {
        top += 1;
    }
    let mut v = top as f64;
    let mut e = (exp - lz + 11).clamp(-2200, 2200) as i32;
    while e != 0 {
        let step = e.clamp(-1000, 1000);
        v *= 2f64.powi(step);
        e -= step;
    }
    v
}
