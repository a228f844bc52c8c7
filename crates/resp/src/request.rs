//! Incremental parser for client requests, following Redis's rules.
//!
//! The parser is resumable: when a frame is incomplete it remembers how far it
//! got (arguments already found, the bulk length being waited for), so a
//! command with a million arguments or a 512 MB value arriving in small reads
//! is scanned once, not once per read. Argument positions are stored relative
//! to the start of the frame, so the caller may move unconsumed bytes to the
//! front of its buffer between calls.

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
    pub fn get<'a>(&'a self, frame: &'a [u8], i: usize) -> &'a [u8] {
        let (s, e) = self.ranges[i];
        if self.is_inline {
            &self.inline[s..e]
        } else {
            &frame[s..e]
        }
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
    fn clear(&mut self) {
        self.ranges.clear();
        self.inline.clear();
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

    /// Parse the frame at the start of `buf` into `args`.
    pub fn parse(&mut self, buf: &[u8], args: &mut Args, lim: Limits) -> Result<Parsed, ProtocolError> {
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
        let Some(line_end) = find_crlf_line(buf, 0) else {
            if buf.len() > INLINE_MAX_SIZE {
                return Err(ProtocolError::new("too big mbulk count string"));
            }
            return Ok(None);
        };
        let n = parse_len(&buf[1..line_end]);
        let n = match n {
            Some(n) if n <= i32::MAX as i64 => n,
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
        let Some(rel_end) = find_crlf_line(rest, 0) else {
            if rest.len() > INLINE_MAX_SIZE {
                return Err(ProtocolError::new("too big bulk count string"));
            }
            return Ok(None);
        };
        if rest[0] != b'$' {
            return Err(ProtocolError(format!("expected '$', got '{}'", rest[0] as char)));
        }
        let len = match parse_len(&rest[1..rel_end]) {
            Some(l) if l >= 0 && (l as u64) <= lim.max_bulk_len => l as usize,
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

/// Index of the `\r` of the first line, if the line and its `\n` are complete.
fn find_crlf_line(buf: &[u8], from: usize) -> Option<usize> {
    let r = buf[from..].iter().position(|&b| b == b'\r')? + from;
    (r + 1 < buf.len()).then_some(r)
}

/// Redis's string2ll restricted to the header use: decimal, optional minus.
fn parse_len(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add((d - b'0') as i64)?;
    }
    Some(if neg { -v } else { v })
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
