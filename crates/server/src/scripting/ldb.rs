//! Redis's Lua debugger (LDB: `SCRIPT DEBUG YES|SYNC`, `redis-cli --ldb`):
//! the session state, its log, and the commands that only touch them
//! (`list`, `break`, `maxlen`). The line hook and the command loop are in
//! `ldb_hook`.
//!
//! As in Redis, a session talks to its client directly, outside the event
//! loop: the hook stops at a line, sends the log lines gathered so far as
//! one array of status replies, and reads the client's next debugger
//! command from the connection (a [`ClientLink`] the connection layer
//! lends for the EVAL), answering each the same way until one resumes the
//! script. Meanwhile nothing else runs: a SYNC session blocks the server.
//! The text formats are in `ldb_text`, the Lua-side commands (`print`,
//! `eval`, `redis`, `trace`, value rendering) in `ldb_lua`.
//!
//! State lives in `Shared` (cells, borrowed only between Lua calls), so
//! `redis.call` can log `<redis>`/`<reply>` lines while the user steps.
use std::cell::{Cell, RefCell};

use super::ldb_text as text;
use crate::server::ClientLink;

/// Most breakpoints at a time.
const MAX_BREAKPOINTS: usize = 64;

/// One debugging session's state (Redis's `ldb`), reset by SCRIPT DEBUG.
#[derive(Default)]
pub(crate) struct Ldb {
    /// A session runs.
    pub(super) active: Cell<bool>,
    /// Stop at the next line, and log what `redis.call` does meanwhile.
    pub(super) step: Cell<bool>,
    /// `redis.breakpoint()` was called: stop at the next line.
    pub(super) luabp: Cell<bool>,
    pub(super) currentline: Cell<i32>,
    /// Longest log entry for values and replies (0: no limit).
    pub(super) maxlen: Cell<usize>,
    pub(super) hint_sent: Cell<bool>,
    pub(super) breakpoints: RefCell<Vec<i32>>,
    /// The script's source, one entry per line.
    pub(super) src: RefCell<Vec<Vec<u8>>>,
    /// Bytes read from the client, not yet a whole command.
    pub(super) cbuf: RefCell<Vec<u8>>,
    pub(super) logs: RefCell<Vec<Vec<u8>>>,
    pub(super) link: Cell<Option<*mut dyn ClientLink>>,
}

impl Ldb {
    /// SCRIPT DEBUG YES/SYNC: fresh settings for the client's sessions.
    pub(crate) fn enable(&self) {
        self.logs.borrow_mut().clear();
        self.step.set(true);
        self.breakpoints.borrow_mut().clear();
        self.luabp.set(false);
        self.cbuf.borrow_mut().clear();
        self.maxlen.set(text::MAXLEN_DEFAULT);
        self.hint_sent.set(false);
    }

    pub(crate) fn link(&self) -> Option<*mut dyn ClientLink> {
        self.link.get()
    }

    pub(crate) fn active(&self) -> bool {
        self.active.get()
    }

    /// Whether `redis.call` logs its command and reply (stepping).
    #[inline]
    pub(crate) fn logging(&self) -> bool {
        self.active.get() && self.step.get()
    }

    /// Begin a session on `link` for the script `body`.
    pub(crate) fn start(&self, link: *mut dyn ClientLink, body: &[u8]) {
        let mut end = body.len();
        while end > 0 && matches!(body[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        let lines =
            if end == 0 { Vec::new() } else { body[..end].split(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
        *self.src.borrow_mut() = lines;
        self.link.set(Some(link));
        self.active.set(true);
    }

    /// End the session: the remaining log lines and `<endsession>` go out.
    pub(crate) fn end(&self) {
        self.log(b"<endsession>".to_vec());
        self.send_logs();
        self.src.borrow_mut().clear();
        self.link.set(None);
        self.active.set(false);
    }

    pub(super) fn log(&self, entry: Vec<u8>) {
        self.logs.borrow_mut().push(entry);
    }

    /// Log a value or reply, trimmed to `maxlen`; the first trim adds a hint.
    pub(super) fn log_trimmed(&self, mut entry: Vec<u8>) {
        let trimmed = text::trim_to(&mut entry, self.maxlen.get());
        self.log(entry);
        if trimmed && !self.hint_sent.replace(true) {
            self.log(b"<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.".to_vec());
        }
    }

    /// `<redis> cmd arg ...` (at most ten words shown).
    pub(crate) fn log_command(&self, args: &resp::Args) {
        let mut entry = b"<redis>".to_vec();
        for j in 0..args.len() {
            let arg = args.get(&[], j);
            if j == 10 {
                entry.extend_from_slice(format!(" ... ({} more)", args.len() - j - 1).as_bytes());
                break;
            }
            entry.push(b' ');
            entry.extend_from_slice(arg);
        }
        self.log(entry);
    }

    /// `<error> text` for an error a script's command call met: Redis's
    /// own refusals read without their `ERR ` code, command error replies
    /// with their leading `-`.
    pub(crate) fn log_error(&self, msg: &[u8]) {
        let mut entry = b"<error> ".to_vec();
        match msg.strip_prefix(b"ERR ") {
            Some(rest) => entry.extend_from_slice(rest),
            None => {
                entry.push(b'-');
                entry.extend_from_slice(msg);
            }
        }
        self.log(entry);
    }

    /// `<error> -ERR ...` then `<reply> "..."` for a command's reply.
    pub(crate) fn log_reply(&self, reply: &[u8]) {
        if reply.first() == Some(&b'-') {
            let end = reply.windows(2).position(|w| w == b"\r\n").unwrap_or(reply.len());
            let mut entry = b"<error> ".to_vec();
            entry.extend_from_slice(&reply[..end]);
            self.log(entry);
        }
        let mut entry = b"<reply> ".to_vec();
        text::push_reply_human(&mut entry, reply);
        self.log_trimmed(entry);
    }

    /// Send the gathered log lines as one reply. A failed write is left to
    /// the next read to notice, as in Redis.
    pub(super) fn send_logs(&self) {
        let logs = std::mem::take(&mut *self.logs.borrow_mut());
        let Some(link) = self.link.get() else { return };
        let bytes = text::encode_logs(&logs);
        // SAFETY: the link is valid while the EVAL that began the session runs.
        let _ = unsafe { (*link).write_all_blocking(&bytes) };
    }

    pub(super) fn is_breakpoint(&self, line: i32) -> bool {
        self.breakpoints.borrow().contains(&line)
    }

    pub(super) fn log_source_line(&self, lnum: i32) {
        let src = self.src.borrow();
        let code: &[u8] = match usize::try_from(lnum - 1).ok().and_then(|i| src.get(i)) {
            Some(line) => line,
            None => b"<out of range source code line>",
        };
        let entry = text::source_line(lnum, code, self.currentline.get() == lnum, self.is_breakpoint(lnum));
        drop(src);
        self.log(entry);
    }

    /// The lines within `context` of `around` (0: every line).
    pub(super) fn list(&self, around: i64, context: i64) {
        let lines = self.src.borrow().len() as i64;
        for j in 1..=lines {
            if around != 0 && (around - j).abs() > context {
                continue;
            }
            self.log_source_line(j as i32);
        }
    }

    /// `break`: list, add (`N`), remove (`-N`) or clear (`0`) breakpoints.
    pub(super) fn breakpoint_command(&self, argv: &[Vec<u8>]) {
        if argv.len() == 1 {
            let bps = self.breakpoints.borrow().clone();
            if bps.is_empty() {
                return self.log(b"No breakpoints set. Use 'b <line>' to add one.".to_vec());
            }
            self.log(format!("{} breakpoints set:", bps.len()).into_bytes());
            return bps.iter().for_each(|&l| self.log_source_line(l));
        }
        for arg in &argv[1..] {
            let Some(line) = crate::engine::numeric::parse_i64(arg) else {
                let shown = String::from_utf8_lossy(arg.split(|&b| b == 0).next().unwrap_or_default()).into_owned();
                self.log(format!("Invalid argument:'{shown}'").into_bytes());
                continue;
            };
            let lines = self.src.borrow().len() as i64;
            let mut bps = self.breakpoints.borrow_mut();
            let msg: &[u8] = if line == 0 {
                bps.clear();
                b"All breakpoints removed."
            } else if line > 0 {
                if bps.len() == MAX_BREAKPOINTS {
                    b"Too many breakpoints set."
                } else if line > lines || bps.contains(&(line as i32)) {
                    b"Wrong line number."
                } else {
                    bps.push(line as i32);
                    drop(bps);
                    self.list(line, 1);
                    continue;
                }
            } else if let Some(i) = bps.iter().position(|&b| b as i64 == -line) {
                bps.remove(i);
                b"Breakpoint removed."
            } else {
                b"No breakpoint in the specified line."
            };
            drop(bps);
            self.log(msg.to_vec());
        }
    }

    /// `maxlen [len]`: show or set the log trim length (0: unlimited).
    pub(super) fn maxlen_command(&self, argv: &[Vec<u8>]) {
        if argv.len() == 2 {
            let mut n = text::atoi(&argv[1]).clamp(i32::MIN as i64, i32::MAX as i64);
            self.hint_sent.set(true);
            if n != 0 && n <= text::MAXLEN_FLOOR as i64 {
                n = text::MAXLEN_FLOOR as i64;
            }
            self.maxlen.set(n as usize);
        }
        let msg = match self.maxlen.get() {
            0 => "<value> replies are unlimited.".to_string(),
            n => format!("<value> replies are truncated at {n} bytes."),
        };
        self.log(msg.into_bytes());
    }
}
