//! MONITOR lines: every command the server runs, as Redis prints it to
//! monitoring clients (`+<secs>.<usecs> [<db> <addr>] "arg" ...`), with
//! the arguments of AUTH, HELLO AUTH and MIGRATE AUTH/AUTH2 redacted.
use std::time::{SystemTime, UNIX_EPOCH};

/// Who ran the command.
pub enum Origin<'a> {
    Client(&'a str),
    Script,
}

/// Redis's quoted form of one argument (its `sdscatrepr`).
pub fn quote(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'"');
    for &b in arg {
        match b {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            b if b.is_ascii_graphic() || b == b' ' => out.push(b),
            b => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

/// Which arguments (by position) must not be shown: passwords.
fn redacted(args: &[&[u8]]) -> Vec<bool> {
    let mut hide = vec![false; args.len()];
    let is = |i: usize, w: &str| args.get(i).is_some_and(|a| a.eq_ignore_ascii_case(w.as_bytes()));
    if is(0, "auth") {
        hide.iter_mut().skip(1).for_each(|h| *h = true);
    } else if is(0, "hello") {
        if let Some(at) = (2..args.len()).find(|&i| is(i, "auth")) {
            hide.iter_mut().skip(at + 1).take(2).for_each(|h| *h = true);
        }
    } else if is(0, "migrate") {
        for i in 6..args.len() {
            if is(i, "keys") {
                break;
            }
            if is(i, "auth") {
                hide.iter_mut().skip(i + 1).take(1).for_each(|h| *h = true);
            } else if is(i, "auth2") {
                hide.iter_mut().skip(i + 1).take(2).for_each(|h| *h = true);
            }
        }
    }
    hide
}

/// The line monitors receive for one command.
pub fn line(db: usize, origin: Origin, args: &[&[u8]]) -> Vec<u8> {
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let mut out = Vec::with_capacity(64 + args.iter().map(|a| a.len() + 3).sum::<usize>());
    out.extend_from_slice(format!("+{}.{:06} ", t.as_secs(), t.subsec_micros()).as_bytes());
    match origin {
        Origin::Client(addr) => out.extend_from_slice(format!("[{db} {addr}] ").as_bytes()),
        Origin::Script => out.extend_from_slice(format!("[{db} lua] ").as_bytes()),
    }
    let hide = redacted(args);
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        quote(&mut out, if hide[i] { b"(redacted)" } else { a });
    }
    out.extend_from_slice(b"\r\n");
    out
}

impl super::Server {
    /// Send a command's line to every monitor.
    pub fn feed_monitors(&mut self, db: usize, origin: Origin, args: &[&[u8]]) {
        let text = line(db, origin, args);
        for m in self.pubsub.monitors.clone() {
            self.pubsub.push(m, &text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_quote_and_redact_as_redis() {
        let l = line(3, Origin::Client("127.0.0.1:5000"), &[b"SET", b"k\"\n", b"\x01 v"]);
        let text = String::from_utf8(l).unwrap();
        assert!(text.starts_with('+') && text.ends_with("\r\n"));
        assert!(text.contains(r#" [3 127.0.0.1:5000] "SET" "k\"\n" "\x01 v""#), "{text}");
        let l = String::from_utf8(line(0, Origin::Script, &[b"hello", b"3", b"AUTH", b"u", b"p"])).unwrap();
        assert!(l.contains(r#"[0 lua] "hello" "3" "AUTH" "(redacted)" "(redacted)""#), "{l}");
        let args: [&[u8]; 9] = [b"migrate", b"h", b"1", b"k", b"0", b"5", b"AUTH2", b"u", b"p"];
        let l = String::from_utf8(line(0, Origin::Script, &args)).unwrap();
        assert!(l.ends_with("\"AUTH2\" \"(redacted)\" \"(redacted)\"\r\n"), "{l}");
    }
}
