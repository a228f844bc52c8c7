//! Splitting of inline command lines and config-file lines into arguments,
//! with the same rules as Redis's `sdssplitargs`.
//!
//! Arguments are separated by whitespace. An argument may contain
//! double-quoted parts (escapes `\n \r \t \b \a \\ \"` and `\xHH`, any other
//! escaped character stands for itself) and single-quoted parts (only `\'` is
//! an escape). A closing quote must be followed by whitespace or the end of
//! the line. A NUL byte ends the line, as it does for the C implementation.

/// Splits `line` into arguments; `None` when quotes are unbalanced or a
/// closing quote is directly followed by something other than whitespace.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut args = Vec::new();
    let mut pos = 0;
    loop {
        while pos < line.len() && is_space(line[pos]) {
            pos += 1;
        }
        if at_end(line, pos) {
            return Some(args);
        }
        let (arg, next) = one_arg(line, pos)?;
        args.push(arg);
        pos = next;
    }
}

/// C `isspace` in the "C" locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn at_end(line: &[u8], pos: usize) -> bool {
    pos >= line.len() || line[pos] == 0
}

fn hex_val(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Double,
    Single,
}

/// Reads one argument starting at `pos`; returns it and the position after it.
fn one_arg(line: &[u8], mut pos: usize) -> Option<(Vec<u8>, usize)> {
    let mut cur = Vec::new();
    let mut quote = Quote::None;
    let byte = |i: usize| if i < line.len() { line[i] } else { 0 };
    loop {
        let c = byte(pos);
        match quote {
            Quote::Double => {
                if c == b'\\' && byte(pos + 1) == b'x' {
                    if let (Some(h), Some(l)) = (hex_val(byte(pos + 2)), hex_val(byte(pos + 3))) {
                        cur.push(h * 16 + l);
                        pos += 4;
                        continue;
                    }
                }
                if c == b'\\' && byte(pos + 1) != 0 {
                    pos += 1;
                    cur.push(match byte(pos) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    return close_quote(line, pos, cur);
                } else if c == 0 {
                    return None;
                } else {
                    cur.push(c);
                }
            }
            Quote::Single => {
                if c == b'\\' && byte(pos + 1) == b'\'' {
                    pos += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    return close_quote(line, pos, cur);
                } else if c == 0 {
                    return None;
                } else {
                    cur.push(c);
                }
            }
            Quote::None => match c {
                b' ' | b'\n' | b'\r' | b'\t' | 0 => return Some((cur, pos)),
                b'"' => quote = Quote::Double,
                b'\'' => quote = Quote::Single,
                _ => cur.push(c),
            },
        }
        pos += 1;
    }
}

/// Handles a closing quote at `pos`: it must be followed by whitespace or
/// the end of the line.
fn close_quote(line: &[u8], pos: usize, cur: Vec<u8>) -> Option<(Vec<u8>, usize)> {
    let next = pos + 1;
    if at_end(line, next) || is_space(line[next]) {
        Some((cur, next))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::split_args;

    fn split(s: &str) -> Option<Vec<String>> {
        split_args(s.as_bytes()).map(|v| v.into_iter().map(|a| String::from_utf8_lossy(&a).into_owned()).collect())
    }

    fn ok(s: &str, want: &[&str]) {
        assert_eq!(split(s), Some(want.iter().map(|w| w.to_string()).collect()), "{s:?}");
    }

    #[test]
    fn plain_words() {
        ok("", &[]);
        ok("   \t ", &[]);
        ok("set foo bar", &["set", "foo", "bar"]);
        ok("  set   foo\tbar\r\n", &["set", "foo", "bar"]);
    }

    #[test]
    fn double_quotes_and_escapes() {
        ok(r#"set "a b" "c\"d""#, &["set", "a b", "c\"d"]);
        ok(r#""\n\r\t\\""#, &["\n\r\t\\"]);
        ok(r#""\x41\x6a\x6A""#, &["Ajj"]);
        ok(r#""\xZZ""#, &["xZZ"]);
        ok(r#""\q""#, &["q"]);
        ok(r#""""#, &[""]);
        let v = split_args(br#""\b\a\x00\xff""#).unwrap();
        assert_eq!(v, vec![vec![8u8, 7, 0, 0xff]]);
    }

    #[test]
    fn single_quotes() {
        ok(r"'a b' 'it\'s' '\n'", &["a b", "it's", "\\n"]);
        ok("''", &[""]);
    }

    #[test]
    fn quotes_inside_words() {
        ok(r#"foo"bar baz" x"#, &["foobar baz", "x"]);
        assert_eq!(split(r#"foo"bar"qux"#), None);
        ok("a'b c'", &["ab c"]);
    }

    #[test]
    fn errors() {
        assert_eq!(split(r#""abc"#), None);
        assert_eq!(split("'abc"), None);
        assert_eq!(split(r#""abc"def"#), None);
        assert_eq!(split("'abc'def"), None);
        assert_eq!(split(r#""abc\"#), None);
        assert_eq!(split(r#"'abc\'"#), None);
    }

    #[test]
    fn closing_quote_followed_by_space() {
        ok("\"a\"\tb", &["a", "b"]);
        ok("'a'\nb", &["a", "b"]);
    }

    #[test]
    fn nul_ends_the_line() {
        assert_eq!(split_args(b"a b\0c d"), Some(vec![b"a".to_vec(), b"b".to_vec()]));
        assert_eq!(split_args(b"\"a\0\""), None);
    }
}
