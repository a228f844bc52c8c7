//! Decimal integers as RESP writes them: integer replies, bulk and array
//! length headers, and counters in generated keys. A line is built in a
//! stack buffer and appended with one fixed-size copy, not a `memcpy` call
//! sized at run time (these lines are on every command's path).

/// Two ASCII digits for each value 0..100: one division per two digits.
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

/// Room for the longest line written: a type byte, a sign or a 20th digit,
/// 19 digits and CRLF.
const LINE: usize = 24;

/// Digits in `n`.
#[inline]
fn digits(n: u64) -> usize {
    let (mut digits, mut bound) = (1, 10u64);
    while digits < 20 && n >= bound {
        digits += 1;
        bound = bound.saturating_mul(10);
    }
    digits
}

/// Characters in `v`'s decimal text, sign included.
#[inline]
pub fn decimal_len(v: i64) -> usize {
    digits(v.unsigned_abs()) + usize::from(v < 0)
}

/// Appends `v` in decimal, after `prefix` (a RESP type byte) if given and
/// followed by CRLF if `crlf`.
#[inline]
pub fn push_int_line(out: &mut Vec<u8>, prefix: Option<u8>, v: i64, crlf: bool) {
    push_line(out, prefix, v < 0, v.unsigned_abs(), crlf);
}

/// Appends `n` in decimal, without the allocation `to_string` makes.
#[inline]
pub fn push_decimal(out: &mut Vec<u8>, n: usize) {
    push_line(out, None, false, n as u64, false);
}

#[inline]
fn push_line(out: &mut Vec<u8>, prefix: Option<u8>, negative: bool, mut n: u64, crlf: bool) {
    let mut line = [0u8; LINE];
    let mut len = 0;
    if let Some(p) = prefix {
        line[0] = p;
        len = 1;
    }
    if negative {
        line[len] = b'-';
        len += 1;
    }
    len += digits(n);
    let mut pos = len;
    while n >= 100 {
        let r = (n % 100) as usize * 2;
        n /= 100;
        pos -= 2;
        line[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    }
    if n >= 10 {
        let r = n as usize * 2;
        line[pos - 2..pos].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    } else {
        line[pos - 1] = b'0' + n as u8;
    }
    if crlf {
        line[len..len + 2].copy_from_slice(b"\r\n");
        len += 2;
    }
    out.reserve(LINE);
    // SAFETY: `reserve` made room for LINE bytes after the current length;
    // all LINE are written, and `len` <= LINE of them become part of `out`.
    unsafe {
        std::ptr::copy_nonoverlapping(line.as_ptr(), out.as_mut_ptr().add(out.len()), LINE);
        out.set_len(out.len() + len);
    }
}
