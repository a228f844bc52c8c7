//! General RESP2/RESP3 values: a decoder for whole replies and an encoder for
//! commands. Clients, the bench tool and tests use this; the server's hot path
//! uses [`crate::request`] and writes replies directly.

use crate::decimal::push_decimal;

/// One RESP value. RESP2 null bulk/array decode to [`Frame::Null`].
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Simple(Vec<u8>),
    Error(Vec<u8>),
    Integer(i64),
    Bulk(Vec<u8>),
    Array(Vec<Frame>),
    Null,
    /// RESP3 `,`; kept as text so `inf`/`-inf`/exact digits survive.
    Double(Vec<u8>),
    Boolean(bool),
    BigNumber(Vec<u8>),
    /// RESP3 `=`: format (3 bytes) and text.
    Verbatim(Vec<u8>, Vec<u8>),
    Map(Vec<(Frame, Frame)>),
    Set(Vec<Frame>),
    Push(Vec<Frame>),
    /// RESP3 `|` attributes, followed by the value they annotate.
    Attribute(Vec<(Frame, Frame)>, Box<Frame>),
}

/// The input is not valid RESP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError(pub String);

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid RESP: {}", self.0)
    }
}

impl std::error::Error for FrameError {}

/// Deepest nesting accepted, so hostile input cannot overflow the stack.
const MAX_DEPTH: usize = 128;

/// Decode one value from the start of `buf`: `Ok(Some((frame, consumed)))`,
/// `Ok(None)` when more bytes are needed.
pub fn decode_frame(buf: &[u8]) -> Result<Option<(Frame, usize)>, FrameError> {
    let mut pos = 0;
    match decode_at(buf, &mut pos, 0)? {
        Some(f) => Ok(Some((f, pos))),
        None => Ok(None),
    }
}

fn decode_at(buf: &[u8], pos: &mut usize, depth: usize) -> Result<Option<Frame>, FrameError> {
    if depth > MAX_DEPTH {
        return Err(FrameError("nesting too deep".into()));
    }
    let Some(line) = read_line(buf, *pos) else {
        return Ok(None);
    };
    if line == *pos {
        // "\r\n" alone: a frame needs at least its type byte.
        return Err(FrameError("empty line where a frame was expected".into()));
    }
    let kind = buf[*pos];
    let body = &buf[*pos + 1..line];
    let after = line + 2;
    let frame = match kind {
        b'+' => Frame::Simple(body.to_vec()),
        b'-' => Frame::Error(body.to_vec()),
        b':' => Frame::Integer(parse_int(body)?),
        b',' => Frame::Double(body.to_vec()),
        b'(' => Frame::BigNumber(body.to_vec()),
        b'#' => match body {
            b"t" => Frame::Boolean(true),
            b"f" => Frame::Boolean(false),
            _ => return Err(FrameError("bad boolean".into())),
        },
        b'_' => Frame::Null,
        b'$' | b'=' | b'!' => {
            let n = parse_int(body)?;
            if n < 0 {
                *pos = after;
                return Ok(Some(Frame::Null));
            }
            let end = after + n as usize;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            let data = buf[after..end].to_vec();
            *pos = end + 2;
            return Ok(Some(match kind {
                b'$' => Frame::Bulk(data),
                b'!' => Frame::Error(data),
                _ if data.len() >= 4 => Frame::Verbatim(data[..3].to_vec(), data[4..].to_vec()),
                _ => return Err(FrameError("short verbatim string".into())),
            }));
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            *pos = after;
            return decode_aggregate(kind, parse_int(body)?, buf, pos, depth);
        }
        other => return Err(FrameError(format!("unknown type byte {other:#04x}"))),
    };
    *pos = after;
    Ok(Some(frame))
}

fn decode_aggregate(kind: u8, n: i64, buf: &[u8], pos: &mut usize, depth: usize) -> Result<Option<Frame>, FrameError> {
    if n < 0 {
        return Ok(Some(Frame::Null));
    }
    let n = n as usize;
    let pairs = matches!(kind, b'%' | b'|');
    let count = if pairs { n.checked_mul(2).ok_or_else(|| FrameError("length".into()))? } else { n };
    // Cap preallocation: the length is untrusted until elements arrive.
    let mut items = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        match decode_at(buf, pos, depth + 1)? {
            Some(f) => items.push(f),
            None => return Ok(None),
        }
    }
    let frame = match kind {
        b'*' => Frame::Array(items),
        b'~' => Frame::Set(items),
        b'>' => Frame::Push(items),
        _ => {
            let mut it = items.into_iter();
            let mut kv = Vec::with_capacity(n);
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                kv.push((k, v));
            }
            if kind == b'%' {
                Frame::Map(kv)
            } else {
                match decode_at(buf, pos, depth + 1)? {
                    Some(v) => Frame::Attribute(kv, Box::new(v)),
                    None => return Ok(None),
                }
            }
        }
    };
    Ok(Some(frame))
}

fn read_line(buf: &[u8], from: usize) -> Option<usize> {
    if from >= buf.len() {
        return None;
    }
    let r = buf[from..].windows(2).position(|w| w == b"\r\n")?;
    Some(from + r)
}

fn parse_int(s: &[u8]) -> Result<i64, FrameError> {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| FrameError(format!("bad integer {:?}", String::from_utf8_lossy(s))))
}

/// Append `args` as a RESP multibulk command to `out`.
pub fn encode_command<A: AsRef<[u8]>>(out: &mut Vec<u8>, args: &[A]) {
    encode_command_parts(out, args.iter().map(|a| a.as_ref()));
}

/// [`encode_command`] for arguments borrowed one by one (a parsed request's
/// slices), so nothing is collected first.
pub fn encode_command_parts<'a>(out: &mut Vec<u8>, args: impl ExactSizeIterator<Item = &'a [u8]>) {
    out.push(b'*');
    push_decimal(out, args.len());
    out.extend_from_slice(b"\r\n");
    for a in args {
        out.push(b'$');
        push_decimal(out, a.len());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}
