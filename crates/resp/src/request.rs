//! Incremental parser for client requests, following Redis's rules.
//!
//! The parser is resumable: when a frame is incomplete it remembers how far it
//! got (arguments already found, the bulk length being waited for), so a
//! command with a million arguments or a 512 MB value arriving in small reads
//! is scanned once, not once per read. Argument positions are stored relative
//! to the start of the frame, so the caller may move unconsumed bytes to the
//! front of its buffer between calls.

use crate::decimal::decimal_len;

/// Longest inline command or multibulk header line Redis accepts (64 KiB).
pub const INLINE_MAX_SIZE: usize = 64 * 1024;

/// A protocol violation; the text is what Redis replies after `-ERR Protocol error: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    fn new(s: &str) -> Self {
        ProtocolError(s.to_string())
    }
    /// The full error line payload, e.g. `ERR Protocol error: invalid bulk length`.
    pub fn reply_text(&self) -> String {
        format!("ERR Protocol error: {}", self.0)
    }
}

/// Argument tables up to this many entries are reused between commands.
const KEEP_RANGES: usize = 1024;
/// Owned argument bytes up to this are reused between commands.
const KEEP_INLINE: usize = 64 << 10;

/// The arguments of one parsed command: ranges into either the frame (multibulk)
/// or the parser's own unescape buffer (inline commands).
#[derive(Debug, Default, Clone)]
pub struct Args {
    ranges: Vec<(usize, usize)>,
    inline: Vec<u8>,
    is_inline: bool,
}

impl Args {
    /// Number of arguments, command name included.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
    /// Argument `i`, given the frame it was parsed from.
    #[inline]
    pub fn get<'a>(&'a self, frame: &'a [u8], i: usize) -> &'a [u8] {
        let (s, e) = self.ranges[i];
        if self.is_inline {
            &self.inline[s..e]
        } else {
            &frame[s..e]
        }
    }
    /// The frame's bytes when they are exactly what
    /// [`crate::encode_command`] writes for these arguments, so a caller
    /// replaying the command (the AOF, replicas) copies them instead of
    /// encoding it again. None for an inline or owned command, or when a
    /// byte the parser skipped unchecked (as Redis does) is not the CRLF's.
    /// Both scans leave nothing else to check: `*` and each `$` are where
    /// they must be, lengths are plain digits (no sign, no leading zero)
    /// each followed by `\r`, and every argument follows the previous
    /// one's two terminator bytes; what is unchecked is the `\n` ending
    /// each header line and the payloads' `\r\n` (the proptests in
    /// `tests/request_parser.rs` hold both scans to this).
    #[inline]
    pub fn canonical_frame<'a>(&self, frame: &'a [u8]) -> Option<&'a [u8]> {
        let &(_, last) = self.ranges.last()?;
        let bytes = frame.get(..last + 2)?;
        let count_lf = 2 + decimal_len(self.ranges.len() as i64);
        if self.is_inline || bytes[0] != b'*' || bytes[count_lf] != b'\n' {
            return None;
        }
        for &(start, end) in &self.ranges {
            if bytes[start - 1] != b'\n' || bytes[end..end + 2] != *b"\r\n" {
                return None;
            }
        }
        Some(bytes)
    }
    /// Arguments owned by this value (a command kept for later, e.g. a
    /// blocked command to re-run); read them with an empty frame.
    pub fn from_parts<'a, I: IntoIterator<Item = &'a [u8]>>(parts: I) -> Args {
        let mut args = Args { is_inline: true, ..Args::default() };
        for p in parts {
            let start = args.inline.len();
            args.inline.extend_from_slice(p);
            args.ranges.push((start, args.inline.len()));
        }
        args
    }
    /// Empty owned arguments, keeping the buffers, ready for [`Args::push`]
    /// (a caller building many command lines reuses one value).
    pub fn reset_owned(&mut self) {
        self.clear();
        self.is_inline = true;
    }
    /// Append an owned argument (after [`Args::reset_owned`] or
    /// [`Args::from_parts`]).
    pub fn push(&mut self, part: &[u8]) {
        let start = self.inline.len();
        self.inline.extend_from_slice(part);
        self.ranges.push((start, self.inline.len()));
    }
    fn clear(&mut self) {
        // The table of a huge command (SADD of 100k members: 1.6 MB) is not
        // kept for the next one, as Redis frees `argv` after every command;
        // otherwise a connection holds it until it goes idle.
        if self.ranges.capacity() > KEEP_RANGES {
            self.ranges = Vec::new();
        } else {
            self.ranges.clear();
        }
        if self.inline.capacity() > KEEP_INLINE {
            self.inline = Vec::new();
        } else {
            self.inline.clear();
        }
        self.is_inline = false;
    }
}

/// Limits the parser enforces, mirroring Redis's config.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// `proto-max-bulk-len`.
    pub max_bulk_len: u64,
    /// Redis limits unauthenticated clients to 10 arguments of 16 KiB each.
    pub auth_required: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_bulk_len: 512 * 1024 * 1024, auth_required: false }
    }
}

/// Resumable request parser; one per connection.
#[derive(Debug, Default)]
pub struct RequestParser {
    /// Arguments still expected in the current multibulk; 0 = between frames.
    remaining: usize,
    /// Length of the bulk being waited for, once its `$len` line was read.
    bulk_len: Option<usize>,
    /// Parse position relative to the frame start.
    pos: usize,
}

/// Outcome of one [`RequestParser::parse`] call.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A whole frame of this many bytes was consumed; `args` holds the command
    /// (possibly empty: an empty inline line or `*0`).
    Frame(usize),
    /// More bytes are needed; `hint` is the frame size known so far, if any.
    Incomplete { need_at_least: usize },
}

impl RequestParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of the current frame already scanned (the frame's size so far).
    pub fn progress(&self) -> usize {
        self.pos
    }

    /// Length of the bulk argument being waited for, once its `$len` line
    /// was read (its payload then starts at [`RequestParser::progress`]).
    pub fn pending_bulk(&self) -> Option<usize> {
        self.bulk_len
    }

    /// Parse the frame at the start of `buf` into `args`.
    pub fn parse(&mut self, buf: &[u8], args: &mut Args, lim: Limits) -> Result<Parsed, ProtocolError> {
        if self.remaining == 0 && buf.first() == Some(&b'*') {
            args.clear();
            if let Some(n) = whole_frame(buf, args, lim) {
                return Ok(Parsed::Frame(n));
            }
        }
        self.parse_resumable(buf, args, lim)
    }

    /// [`RequestParser::parse`] without the whole-frame fast path: the
    /// general scan, which also reports errors and resumes partial frames.
    /// Public so tests can check both read every input alike.
    #[doc(hidden)]
    pub fn parse_resumable(&mut self, buf: &[u8], args: &mut Args, lim: Limits) -> Result<Parsed, ProtocolError> {
        if self.remaining == 0 {
            if buf.is_empty() {
                return Ok(Parsed::Incomplete { need_at_least: 1 });
            }
            args.clear();
            if buf[0] != b'*' {
                return parse_inline(buf, args);
            }
            match self.multibulk_header(buf, lim)? {
                Some(0) => return Ok(Parsed::Frame(std::mem::take(&mut self.pos))),
                Some(n) => {
                    self.remaining = n;
                    args.ranges.reserve(n.min(1024));
                }
                None => return Ok(Parsed::Incomplete { need_at_least: buf.len() + 1 }),
            }
        }
        while self.remaining > 0 {
            let len = match self.bulk_len {
                Some(l) => l,
                None => match self.bulk_header(buf, lim)? {
                    Some(l) => l,
                    None => return Ok(Parsed::Incomplete { need_at_least: buf.len() + 1 }),
                },
            };
            // Like Redis, the two bytes after the payload are skipped unchecked.
            let end = self.pos + len + 2;
            if buf.len() < end {
                return Ok(Parsed::Incomplete { need_at_least: end });
            }
            args.ranges.push((self.pos, self.pos + len));
            self.pos = end;
            self.bulk_len = None;
            self.remaining -= 1;
        }
        Ok(Parsed::Frame(std::mem::take(&mut self.pos)))
    }

    fn multibulk_header(&mut self, buf: &[u8], lim: Limits) -> Result<Option<usize>, ProtocolError> {
        let (n, line_end) = match int_line(buf, 0) {
            IntLine::Incomplete if buf.len() > INLINE_MAX_SIZE => {
                return Err(ProtocolError::new("too big mbulk count string"))
            }
            IntLine::Incomplete => return Ok(None),
            IntLine::Value(n, end) if n <= i32::MAX as i64 => (n, end),
            _ => return Err(ProtocolError::new("invalid multibulk length")),
        };
        if n > 10 && lim.auth_required {
            return Err(ProtocolError::new("unauthenticated multibulk length"));
        }
        self.pos = line_end + 2;
        Ok(Some(n.max(0) as usize))
    }

    fn bulk_header(&mut self, buf: &[u8], lim: Limits) -> Result<Option<usize>, ProtocolError> {
        let rest = &buf[self.pos..];
        let parsed = int_line(rest, 0);
        if matches!(parsed, IntLine::Incomplete) {
            if rest.len() > INLINE_MAX_SIZE {
                return Err(ProtocolError::new("too big bulk count string"));
            }
            return Ok(None);
        }
        if rest[0] != b'$' {
            return Err(ProtocolError(format!("expected '$', got '{}'", rest[0] as char)));
        }
        let (len, rel_end) = match parsed {
            IntLine::Value(l, end) if l >= 0 && (l as u64) <= lim.max_bulk_len => (l as usize, end),
            _ => return Err(ProtocolError::new("invalid bulk length")),
        };
        if len > 16384 && lim.auth_required {
            return Err(ProtocolError::new("unauthenticated bulk length"));
        }
        self.pos += rel_end + 2;
        self.bulk_len = Some(len);
        Ok(Some(len))
    }
}

/// Most frames arrive whole, with plain lengths: read such a frame in one
/// pass with a cheap digit loop, leaving anything else (an incomplete frame,
/// a length Redis would reject or that needs its exact rules: sign, leading
/// zero, limits) to the resumable scan, which then starts over. Returns the
/// frame's size with `args` filled, or None with `args` to be discarded.
#[inline]
fn whole_frame(buf: &[u8], args: &mut Args, lim: Limits) -> Option<usize> {
    /// Larger frames gain nothing here and would be rescanned on every read
    /// while they arrive.
    const MAX_ARGS: usize = 64;
    scan_whole(buf, MAX_ARGS, lim, |_, range| args.ranges.push(range)).map(|(len, _)| len)
}

/// The pass behind [`whole_frame`] and [`peek_frame`], for a `buf` starting
/// with `*`: calls `arg` with each argument's index and range; returns the
/// frame's size and argument count. None for an incomplete frame, one of
/// no or more than `max_args` arguments, or anything [`whole_frame`] leaves
/// to the resumable scan.
#[inline(always)]
fn scan_whole(
    buf: &[u8],
    max_args: usize,
    lim: Limits,
    mut arg: impl FnMut(usize, (usize, usize)),
) -> Option<(usize, usize)> {
    let (n, mut pos) = plain_len(buf, 1)?;
    if n == 0 || n > max_args || (n > 10 && lim.auth_required) {
        return None;
    }
    for i in 0..n {
        if *buf.get(pos)? != b'$' {
            return None;
        }
        let (len, start) = plain_len(buf, pos + 1)?;
        if len as u64 > lim.max_bulk_len || (len > 16384 && lim.auth_required) {
            return None;
        }
        let end = start + len;
        // Like the resumable scan, the two bytes after the payload are not checked.
        if end + 2 > buf.len() {
            return None;
        }
        arg(i, (start, end));
        pos = end + 2;
    }
    Some((pos, n))
}

/// The digits from `at` up to a `\r` with a byte after it: (value, index
/// after the line). None unless there are 1 to 18 digits and no leading zero.
#[inline(always)]
fn plain_len(buf: &[u8], at: usize) -> Option<(usize, usize)> {
    let digits = buf.get(at..)?;
    let mut v = 0usize;
    for (i, &b) in digits.iter().enumerate().take(19) {
        match b {
            b'0'..=b'9' => v = v * 10 + (b - b'0') as usize,
            b'\r' if i > 0 && i + 1 < digits.len() && (i == 1 || digits[0] != b'0') => return Some((v, at + i + 2)),
            _ => return None,
        }
    }
    None
}

/// A complete multibulk frame seen ahead of the parser by [`peek_frame`].
#[derive(Debug, PartialEq, Eq)]
pub struct Peeked {
    /// The frame's size in bytes.
    pub len: usize,
    /// Number of arguments, command name included.
    pub argc: usize,
    /// Where its first arguments lie (name, first key, and the argument
    /// after it: a member or field for most collection commands); only
    /// the first `argc` are meaningful.
    pub head: [(usize, usize); 3],
}

impl Peeked {
    /// Argument `i` (< 3) as a range into the peeked buffer, if present.
    #[inline]
    pub fn arg(&self, i: usize) -> Option<(usize, usize)> {
        (i < self.argc.min(self.head.len())).then(|| self.head[i])
    }
}

/// Looks at the frame at the start of `buf` without building its argument
/// list: its size and its second argument, so a caller can warm caches for
/// the keys of a pipelined batch before executing it. Returns None for
/// anything but a complete multibulk frame of 1 to `max_args` arguments
/// with plain lengths (the parser proper then decides what the bytes are);
/// the cap keeps a peek at a huge frame still arriving from costing more
/// than the parser's own resumable scan.
pub fn peek_frame(buf: &[u8], max_args: usize) -> Option<Peeked> {
    if buf.first() != Some(&b'*') {
        return None;
    }
    let mut head = [(0, 0); 3];
    let (len, argc) = scan_whole(buf, max_args, Limits::default(), |i, range| {
        if let Some(slot) = head.get_mut(i) {
            *slot = range;
        }
    })?;
    Some(Peeked { len, argc, head })
}

/// A header line `<type byte><integer>\r\n` read in one pass.
enum IntLine {
    /// The value and the index of the line's `\r`.
    Value(i64, usize),
    /// The line is complete but is not an integer by Redis's rules.
    Invalid,
    /// No complete line yet (`\r` and one byte after it).
    Incomplete,
}

/// Parse the integer after the type byte at `from` up to `\r` (Redis's
/// string2ll rules: optional minus, no plus, no spaces), scanning each byte
/// once; the common all-digits case never searches separately for `\r`.
fn int_line(buf: &[u8], from: usize) -> IntLine {
    let mut i = from + 1;
    let neg = buf.get(i) == Some(&b'-');
    i += neg as usize;
    let digits_start = i;
    let mut v: u64 = 0;
    while let Some(&b) = buf.get(i) {
        if !b.is_ascii_digit() {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add((b - b'0') as u64);
        i += 1;
    }
    let ndigits = i - digits_start;
    match buf.get(i) {
        Some(b'\r') if i + 1 < buf.len() => {
            // string2ll also rejects leading zeros and "-0"; lengths never need them.
            let ok = ndigits > 0
                && ndigits <= 19
                && v <= i64::MAX as u64
                && !(ndigits > 1 && buf[digits_start] == b'0')
                && !(neg && v == 0);
            if ok {
                IntLine::Value(if neg { -(v as i64) } else { v as i64 }, i)
            } else {
                IntLine::Invalid
            }
        }
        Some(b'\r') | None => IntLine::Incomplete,
        // A stray byte: the line is invalid once it is complete.
        Some(_) => match buf[i..].iter().position(|&b| b == b'\r') {
            Some(r) if i + r + 1 < buf.len() => IntLine::Invalid,
            _ => IntLine::Incomplete,
        },
    }
}

fn parse_inline(buf: &[u8], args: &mut Args) -> Result<Parsed, ProtocolError> {
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > INLINE_MAX_SIZE {
            return Err(ProtocolError::new("too big inline request"));
        }
        return Ok(Parsed::Incomplete { need_at_least: buf.len() + 1 });
    };
    let line_end = if nl > 0 && buf[nl - 1] == b'\r' { nl - 1 } else { nl };
    let Some(words) = crate::splitargs::split_args(&buf[..line_end]) else {
        return Err(ProtocolError::new("unbalanced quotes in request"));
    };
    args.is_inline = true;
    for w in words {
        let start = args.inline.len();
        args.inline.extend_from_slice(&w);
        args.ranges.push((start, args.inline.len()));
    }
    Ok(Parsed::Frame(nl + 1))
}
