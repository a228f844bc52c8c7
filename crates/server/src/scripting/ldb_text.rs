//! The Lua debugger's text: how it quotes strings, shows a command's reply
//! to a human, trims long log lines, lays out source lines, and parses the
//! commands its client sends. Pure functions over bytes (no Lua, no I/O),
//! so the formats can be checked against Redis's byte for byte.

/// Longest log line by default (`maxlen`), and the least a user may set.
pub const MAXLEN_DEFAULT: usize = 256;
pub const MAXLEN_FLOOR: usize = 60;

/// Most arguments, and most bytes per argument, of a debugger command.
const MAX_ARGS: i64 = 1024;
const MAX_ARG_LEN: i64 = 1024;

/// `s` quoted the way Redis's `sdscatrepr` does (as MONITOR shows it).
pub fn push_repr(out: &mut Vec<u8>, s: &[u8]) {
    crate::server::monitor::quote(out, s);
}

/// A command's reply (RESP2 or RESP3) as the debugger's `<reply>` shows it:
/// strings quoted, arrays `[a,b]`, sets `~(a,b)`, maps `{k => v}`, nulls
/// `NULL` / `(null)`, booleans `#true`, doubles `(double) 1.5`, status and
/// error lines quoted with their `+` / `-`. Types Redis 7.0's debugger does
/// not know (big numbers, verbatim strings) end the rendering, as there.
pub fn push_reply_human(out: &mut Vec<u8>, reply: &[u8]) {
    let mut pos = 0;
    human(out, reply, &mut pos);
}

/// The line at `pos` (after its type byte), up to CRLF; moves past it.
fn line<'a>(buf: &'a [u8], pos: &mut usize) -> &'a [u8] {
    let start = (*pos + 1).min(buf.len());
    let end = buf[start..].windows(2).position(|w| w == b"\r\n").map_or(buf.len(), |i| start + i);
    *pos = (end + 2).min(buf.len());
    &buf[start..end]
}

fn count(text: &[u8]) -> i64 {
    crate::engine::numeric::parse_i64(text).unwrap_or(-1)
}

fn human(out: &mut Vec<u8>, buf: &[u8], pos: &mut usize) {
    let Some(&kind) = buf.get(*pos) else { return };
    let start = *pos;
    match kind {
        b':' => out.extend_from_slice(line(buf, pos)),
        b'$' => {
            let n = count(line(buf, pos));
            if n < 0 {
                return out.extend_from_slice(b"NULL");
            }
            let end = (*pos + n as usize).min(buf.len());
            push_repr(out, &buf[*pos..end]);
            *pos = (end + 2).min(buf.len());
        }
        b'+' | b'-' => {
            line(buf, pos);
            let end = pos.saturating_sub(2).max(start);
            push_repr(out, &buf[start..end]);
        }
        b'*' | b'~' | b'%' => aggregate(out, buf, pos, kind),
        b'_' => {
            line(buf, pos);
            out.extend_from_slice(b"(null)");
        }
        b'#' => {
            let t = line(buf, pos) == b"t";
            out.extend_from_slice(if t { b"#true" } else { b"#false" });
        }
        b',' => {
            out.extend_from_slice(b"(double) ");
            out.extend_from_slice(line(buf, pos));
        }
        // Redis stops here too: the rest of the reply is not shown.
        _ => *pos = buf.len(),
    }
}

fn aggregate(out: &mut Vec<u8>, buf: &[u8], pos: &mut usize, kind: u8) {
    let n = count(line(buf, pos));
    if n < 0 {
        return out.extend_from_slice(if kind == b'*' { b"NULL" } else { b"" });
    }
    let (open, close): (&[u8], &[u8]) = match kind {
        b'*' => (b"[", b"]"),
        b'~' => (b"~(", b")"),
        _ => (b"{", b"}"),
    };
    out.extend_from_slice(open);
    for i in 0..n {
        if *pos >= buf.len() {
            break;
        }
        human(out, buf, pos);
        if kind == b'%' {
            out.extend_from_slice(b" => ");
            human(out, buf, pos);
        }
        if i != n - 1 {
            out.push(b',');
        }
    }
    out.extend_from_slice(close);
}

/// Trim `entry` to `maxlen` bytes (0: no limit), marking the cut with
/// ` ...`; true if it was cut.
pub fn trim_to(entry: &mut Vec<u8>, maxlen: usize) -> bool {
    if maxlen == 0 || entry.len() <= maxlen {
        return false;
    }
    entry.truncate(maxlen);
    entry.extend_from_slice(b" ...");
    true
}

/// One source line as listed: a marker (`->` current line, `#`
/// breakpoint), the number padded to three columns, the code.
pub fn source_line(lnum: i32, code: &[u8], current: bool, breakpoint: bool) -> Vec<u8> {
    let prefix = match (current, breakpoint) {
        (true, true) => "->#",
        (true, false) => "-> ",
        (false, true) => "  #",
        (false, false) => "   ",
    };
    let mut out = format!("{prefix}{lnum:<3} ").into_bytes();
    out.extend_from_slice(code);
    out
}

/// C's `atoi`: optional blanks and sign, then digits; 0 if none.
pub fn atoi(s: &[u8]) -> i64 {
    let mut i = 0;
    while s.get(i).is_some_and(|b| b" \t\n\x0b\x0c\r".contains(b)) {
        i += 1;
    }
    let neg = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut n: i64 = 0;
    while let Some(d) = s.get(i).filter(|b| b.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add((d - b'0') as i64);
        i += 1;
    }
    if neg {
        -n
    } else {
        n
    }
}

/// What the client's buffered input holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A whole command.
    Command(Vec<Vec<u8>>),
    /// Not yet a whole command: read more.
    More,
    /// Not the protocol at all: the session ends with an error.
    Error,
}

/// Parse one `*N` / `$len` command from `buf` as Redis's debugger does: as
/// C strings (a NUL ends the text searched for markers), at most 1024
/// arguments of 1 to 1024 bytes each.
pub fn parse_command(buf: &[u8]) -> Parsed {
    if buf.is_empty() {
        return Parsed::More;
    }
    // The searches below stop at the first NUL, as strchr/strstr do.
    let text_end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let Some(star) = buf[..text_end].iter().position(|&b| b == b'*') else { return Parsed::Error };
    let Some(eol) = find_crlf(buf, star, text_end) else { return Parsed::More };
    let argc = atoi(&buf[star + 1..eol]);
    if argc <= 0 || argc > MAX_ARGS {
        return Parsed::Error;
    }
    let mut p = eol + 2;
    let mut argv = Vec::with_capacity(argc as usize);
    while (argv.len() as i64) < argc {
        let c_end = buf[p.min(buf.len())..].iter().position(|&b| b == 0).map_or(buf.len(), |i| p + i);
        if p >= c_end {
            return Parsed::More;
        }
        if buf[p] != b'$' {
            return Parsed::Error;
        }
        let Some(eol) = find_crlf(buf, p, c_end) else { return Parsed::More };
        let len = atoi(&buf[p + 1..eol]);
        if len <= 0 || len > MAX_ARG_LEN {
            return Parsed::Error;
        }
        p = eol + 2;
        let end = p + len as usize;
        if end + 2 > buf.len() {
            return Parsed::More;
        }
        argv.push(buf[p..end].to_vec());
        if &buf[end..end + 2] != b"\r\n" {
            return Parsed::Error;
        }
        p = end + 2;
    }
    Parsed::Command(argv)
}

/// First CRLF in `buf[from..limit]`.
fn find_crlf(buf: &[u8], from: usize, limit: usize) -> Option<usize> {
    buf[from..limit].windows(2).position(|w| w == b"\r\n").map(|i| from + i)
}

/// The debugger's reply to a batch of log lines: an array of status
/// lines, line breaks inside an entry shown as spaces.
pub fn encode_logs(logs: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", logs.len()).into_bytes();
    for entry in logs {
        out.push(b'+');
        out.extend(entry.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human_of(reply: &[u8]) -> String {
        let mut out = Vec::new();
        push_reply_human(&mut out, reply);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn replies_render_as_redis_shows_them() {
        assert_eq!(human_of(b"+OK\r\n"), r#""+OK""#);
        assert_eq!(human_of(b"-ERR bad\r\n"), r#""-ERR bad""#);
        assert_eq!(human_of(b":42\r\n"), "42");
        assert_eq!(human_of(b"$-1\r\n"), "NULL");
        assert_eq!(human_of(b"*-1\r\n"), "NULL");
        assert_eq!(human_of(b"$3\r\na\nb\r\n"), r#""a\nb""#);
        assert_eq!(human_of(b"*2\r\n$1\r\nf\r\n*1\r\n:1\r\n"), r#"["f",[1]]"#);
        assert_eq!(human_of(b"*0\r\n"), "[]");
        assert_eq!(human_of(b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"), r#"{"f" => "v"}"#);
        assert_eq!(human_of(b"~2\r\n:1\r\n:2\r\n"), "~(1,2)");
        assert_eq!(human_of(b"_\r\n"), "(null)");
        assert_eq!(human_of(b"#t\r\n"), "#true");
        assert_eq!(human_of(b",1.5\r\n"), "(double) 1.5");
    }

    #[test]
    fn repr_escapes_like_sdscatrepr() {
        let mut out = Vec::new();
        push_repr(&mut out, b"a\"\\\r\t\x07\x08\x00\xff");
        assert_eq!(out, br#""a\"\\\r\t\a\b\x00\xff""#.to_vec());
    }

    #[test]
    fn long_entries_are_trimmed() {
        let mut e = b"<reply> 0123456789".to_vec();
        assert!(trim_to(&mut e, 10));
        assert_eq!(e, b"<reply> 01 ...".to_vec());
        let mut short = b"abc".to_vec();
        assert!(!trim_to(&mut short, 10) && !trim_to(&mut short, 0));
    }

    #[test]
    fn source_lines_are_marked_and_padded() {
        assert_eq!(source_line(1, b"return 1", true, false), b"-> 1   return 1".to_vec());
        assert_eq!(source_line(3, b"x", true, true), b"->#3   x".to_vec());
        assert_eq!(source_line(12, b"x", false, true), b"  #12  x".to_vec());
        assert_eq!(source_line(1234, b"x", false, false), b"   1234 x".to_vec());
    }

    #[test]
    fn commands_parse_like_redis_debugger() {
        let cmd = |parts: &[&[u8]]| Parsed::Command(parts.iter().map(|p| p.to_vec()).collect());
        assert_eq!(parse_command(b"*2\r\n$1\r\np\r\n$1\r\na\r\n"), cmd(&[b"p", b"a"]));
        assert_eq!(parse_command(b"*1\r\n$7\r\nh\0ll\0o!\r\n"), cmd(&[b"h\0ll\0o!"]));
        assert_eq!(parse_command(b""), Parsed::More);
        assert_eq!(parse_command(b"*2\r\n$1\r\np\r\n"), Parsed::More);
        assert_eq!(parse_command(b"*1\r\n$5\r\nab"), Parsed::More);
        assert_eq!(parse_command(b"hello\r\n"), Parsed::Error);
        assert_eq!(parse_command(b"*0\r\n"), Parsed::Error);
        assert_eq!(parse_command(b"*1025\r\n"), Parsed::Error);
        assert_eq!(parse_command(b"*1\r\n$0\r\n\r\n"), Parsed::Error);
        assert_eq!(parse_command(b"*1\r\n:1\r\n"), Parsed::Error);
        assert_eq!(parse_command(b"*1\r\n$1\r\nabc"), Parsed::Error);
    }

    #[test]
    fn any_bytes_parse_without_panicking() {
        // Prefixes and corruptions of valid commands, and noise.
        let valid = b"*3\r\n$5\r\nredis\r\n$3\r\nget\r\n$1\r\nk\r\n".to_vec();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for cut in 0..=valid.len() {
            let _ = parse_command(&valid[..cut]);
            for _ in 0..64 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let mut bent = valid[..cut].to_vec();
                if let Some(b) = bent.get_mut((seed >> 33) as usize % cut.max(1)) {
                    *b = b"*$\r\n\0-9"[(seed >> 13) as usize % 7];
                }
                let _ = parse_command(&bent);
            }
        }
        assert_eq!(parse_command(&valid), Parsed::Command(vec![b"redis".to_vec(), b"get".to_vec(), b"k".to_vec()]));
    }

    #[test]
    fn logs_encode_as_status_array() {
        let out = encode_logs(&[b"a\r\nb".to_vec(), b"<endsession>".to_vec()]);
        assert_eq!(out, b"*2\r\n+a  b\r\n+<endsession>\r\n".to_vec());
    }

    #[test]
    fn atoi_is_c_like() {
        assert_eq!(atoi(b" 12x"), 12);
        assert_eq!(atoi(b"-3"), -3);
        assert_eq!(atoi(b"x"), 0);
    }
}
