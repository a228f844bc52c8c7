//! The reply writer: appends RESP2 or RESP3 replies to a connection's output
//! buffer. Handlers never touch sockets; the event loop flushes once per turn.
use crate::engine::numeric;

/// Appends replies for one connection, in the protocol version it negotiated.
pub struct Reply<'a> {
    buf: &'a mut Vec<u8>,
    resp3: bool,
    /// Error replies written (for INFO's `total_error_replies` and
    /// commandstats' `failed_calls`).
    pub errors: u32,
    /// Of those, the ones already charged to a command's `failed_calls`
    /// (an EXEC is not failed by the errors of the commands it ran).
    pub charged: u32,
    /// End of the pushes written so far (Pub/Sub confirmations and
    /// messages): CLIENT REPLY OFF/SKIP never drop those.
    pushed_to: usize,
    /// Where each error reply starts in the buffer (INFO errorstats reads
    /// their codes); empty unless an error was written.
    pub error_starts: Vec<usize>,
    /// Of `errors`, those already counted in INFO's error statistics when
    /// they first happened (a script's failed `redis.call` returned or
    /// raised as the script's own error).
    pub counted_elsewhere: u32,
}

impl<'a> Reply<'a> {
    pub fn new(buf: &'a mut Vec<u8>, resp3: bool) -> Self {
        Reply { buf, resp3, errors: 0, charged: 0, pushed_to: 0, error_starts: Vec::new(), counted_elsewhere: 0 }
    }
    /// What was written so far are pushes, kept whatever CLIENT REPLY says.
    pub fn end_push(&mut self) {
        self.pushed_to = self.buf.len();
    }
    /// Put pushes at `at` (before the replies written from there on).
    pub fn insert_push(&mut self, at: usize, pushes: &[u8]) {
        self.buf.splice(at..at, pushes.iter().copied());
        self.pushed_to = self.pushed_to.max(at + pushes.len());
    }
    /// Drop the replies written from `len` on, but not pushes.
    pub fn truncate_replies(&mut self, len: usize) {
        self.buf.truncate(len.max(self.pushed_to));
    }
    pub fn resp3(&self) -> bool {
        self.resp3
    }
    pub fn set_resp3(&mut self, on: bool) {
        self.resp3 = on;
    }
    /// Bytes written so far (the loop uses it for CLIENT REPLY OFF/SKIP).
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// Everything in the buffer (a forked debugging session writes it itself).
    pub fn bytes(&self) -> &[u8] {
        self.buf
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// The error replies written, as text after their `-` (for their codes).
    pub fn error_texts(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.error_starts.iter().map(|&at| self.buf.get(at + 1..).unwrap_or_default())
    }
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }

    fn header(&mut self, kind: u8, n: i64) {
        numeric::push_int_line(self.buf, Some(kind), n, true);
    }
    /// Redis's HELP layout: a usage line for `command`, then `lines`, then
    /// HELP itself.
    pub fn help(&mut self, command: &str, lines: &[&str]) {
        self.array(lines.len() + 3);
        self.simple(format!("{command} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:").as_bytes());
        for l in lines {
            self.simple(l.as_bytes());
        }
        self.simple(b"HELP");
        self.simple(b"    Prints this help.");
    }

    pub fn ok(&mut self) {
        self.buf.extend_from_slice(b"+OK\r\n");
    }
    pub fn simple(&mut self, s: &[u8]) {
        self.buf.push(b'+');
        self.buf.extend_from_slice(s);
        self.buf.extend_from_slice(b"\r\n");
    }
    /// An error line; `msg` starts with the code (`ERR ...`, `WRONGTYPE ...`).
    /// Newlines are replaced with spaces, as Redis does, so the line stays one line.
    pub fn error(&mut self, msg: &str) {
        self.error_bytes(msg.as_bytes());
    }
    /// An error line whose text may hold the client's binary arguments.
    pub fn error_bytes(&mut self, msg: &[u8]) {
        self.errors += 1;
        self.error_starts.push(self.buf.len());
        self.error_line(msg);
    }
    /// An error line that fails the command but whose error was counted in
    /// INFO errorstats and `total_error_replies` where it happened.
    pub fn error_counted_elsewhere(&mut self, msg: &[u8]) {
        self.errors += 1;
        self.counted_elsewhere += 1;
        self.error_line(msg);
    }
    fn error_line(&mut self, msg: &[u8]) {
        self.buf.push(b'-');
        self.buf.extend(msg.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
        self.buf.extend_from_slice(b"\r\n");
    }
    pub fn int(&mut self, v: i64) {
        self.header(b':', v);
    }
    pub fn bulk(&mut self, b: &[u8]) {
        self.header(b'$', b.len() as i64);
        self.buf.extend_from_slice(b);
        self.buf.extend_from_slice(b"\r\n");
    }
    /// A bulk string holding an integer's decimal text.
    pub fn bulk_int(&mut self, v: i64) {
        self.header(b'$', numeric::decimal_len(v) as i64);
        numeric::push_int_line(self.buf, None, v, true);
    }
    /// Null bulk string (`$-1` / `_`).
    pub fn null(&mut self) {
        self.buf.extend_from_slice(if self.resp3 { b"_\r\n" } else { b"$-1\r\n" });
    }
    /// Null array (`*-1` / `_`).
    pub fn null_array(&mut self) {
        self.buf.extend_from_slice(if self.resp3 { b"_\r\n" } else { b"*-1\r\n" });
    }
    pub fn array(&mut self, n: usize) {
        self.header(b'*', n as i64);
    }
    /// A map of `n` pairs; a flat array of 2n in RESP2.
    pub fn map(&mut self, n: usize) {
        if self.resp3 {
            self.header(b'%', n as i64);
        } else {
            self.header(b'*', 2 * n as i64);
        }
    }
    /// A set; an array in RESP2.
    pub fn set(&mut self, n: usize) {
        self.header(if self.resp3 { b'~' } else { b'*' }, n as i64);
    }
    pub fn push(&mut self, n: usize) {
        self.header(if self.resp3 { b'>' } else { b'*' }, n as i64);
    }
    /// A double: RESP3 `,`, else a bulk string in Redis's `%.17g` form.
    pub fn double(&mut self, v: f64) {
        let mut text = Vec::with_capacity(24);
        if self.resp3 {
            numeric::format_resp3_double(&mut text, v);
            self.buf.push(b',');
            self.buf.extend_from_slice(&text);
            self.buf.extend_from_slice(b"\r\n");
        } else {
            numeric::format_double(&mut text, v);
            self.bulk(&text);
        }
    }
    /// A boolean: RESP3 `#t`/`#f`, else the integer 1/0.
    pub fn boolean(&mut self, v: bool) {
        if self.resp3 {
            self.buf.extend_from_slice(if v { b"#t\r\n" } else { b"#f\r\n" });
        } else {
            self.int(v as i64);
        }
    }
    /// Verbatim text (`=` with a `txt:` prefix in RESP3), a bulk string in RESP2.
    pub fn verbatim(&mut self, text: &[u8]) {
        if self.resp3 {
            self.header(b'=', text.len() as i64 + 4);
            self.buf.extend_from_slice(b"txt:");
            self.buf.extend_from_slice(text);
            self.buf.extend_from_slice(b"\r\n");
        } else {
            self.bulk(text);
        }
    }
    /// Pre-encoded protocol bytes.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
}
