//! Feeding changes into the AOF buffer: every command that moved the dirty
//! counter is appended as RESP (after a SELECT when the database differs
//! from the file's), unless its handler asked for a translation through
//! [`crate::dispatch::Ctx::propagate_as`] and friends (relative expiries made
//! absolute, random or blocking commands made deterministic).
//!
//! Atomic blocks ([`Aof::begin_atomic`] / [`Aof::end_atomic`]): everything
//! fed between them is wrapped in MULTI/EXEC in the file, if anything at all
//! was fed (a read-only transaction leaves no trace). EXEC uses it; a
//! scripting engine should too, around the commands a script runs.
use super::Aof;
use crate::dispatch::Argv;
use crate::server::Server;

/// What a handler asked to propagate instead of, or besides, its argv.
#[derive(Debug, Default)]
pub struct Pending {
    /// The argv itself is not propagated.
    pub replace: bool,
    /// Commands to feed (after the argv unless `replace`).
    pub cmds: Vec<Vec<Vec<u8>>>,
}

impl Pending {
    /// Replace the argv with `cmds` (none: propagate nothing).
    pub fn replace_with(cmds: Vec<Vec<Vec<u8>>>) -> Pending {
        Pending { replace: true, cmds }
    }
}

/// Owned copies of `args` (a command kept for propagation).
pub fn owned(args: &[&[u8]]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.to_vec()).collect()
}

impl Aof {
    /// Open an atomic block: what is fed until the matching
    /// [`Aof::end_atomic`] replays as one MULTI/EXEC. Blocks nest.
    pub fn begin_atomic(&mut self) {
        self.atomic_depth += 1;
    }

    /// Close an atomic block; the outermost one writes EXEC if MULTI was fed.
    pub fn end_atomic(&mut self) {
        self.atomic_depth = self.atomic_depth.saturating_sub(1);
        if self.atomic_depth == 0 && self.multi_fed {
            self.multi_fed = false;
            encode(&mut self.buf, &[b"EXEC"]);
        }
    }

    /// SELECT when the db changes, MULTI at the start of an atomic block
    /// (after the SELECT, so a block in one db holds only its commands).
    fn prelude(&mut self, db: usize) {
        if self.selected_db != Some(db) {
            self.selected_db = Some(db);
            let mut num = [0u8; 20];
            encode(&mut self.buf, &[b"SELECT", format_usize(&mut num, db)]);
        }
        if self.atomic_depth > 0 && !self.multi_fed {
            self.multi_fed = true;
            encode(&mut self.buf, &[b"MULTI"]);
        }
    }

    /// Append one command run against database `db` (no-op when off).
    pub fn feed(&mut self, db: usize, args: &[&[u8]]) {
        if !self.on {
            return;
        }
        self.prelude(db);
        encode(&mut self.buf, args);
    }

    fn feed_owned(&mut self, db: usize, args: &[Vec<u8>]) {
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        self.feed(db, &refs);
    }

    fn feed_argv(&mut self, db: usize, argv: &Argv) {
        self.prelude(db);
        let mut num = [0u8; 20];
        self.buf.push(b'*');
        self.buf.extend_from_slice(format_usize(&mut num, argv.len()));
        self.buf.extend_from_slice(b"\r\n");
        for a in argv.iter_from(0) {
            push_bulk(&mut self.buf, a);
        }
    }
}

/// After a handler ran with the AOF on: feed what it changed. `outer` is
/// the pending request of an enclosing command (EXEC), restored here.
pub(crate) fn after_call(srv: &mut Server, db: usize, argv: &Argv, dirty_moved: bool, outer: Option<Pending>) {
    let aof = &mut srv.aof;
    let mine = std::mem::replace(&mut aof.pending, outer);
    if !aof.on {
        return;
    }
    match mine {
        None if dirty_moved => aof.feed_argv(db, argv),
        None => {}
        Some(p) => {
            let with_argv = !p.replace && dirty_moved;
            let wrap = p.cmds.len() + usize::from(with_argv) > 1;
            if wrap {
                aof.begin_atomic();
            }
            if with_argv {
                aof.feed_argv(db, argv);
            }
            for c in &p.cmds {
                aof.feed_owned(db, c);
            }
            if wrap {
                aof.end_atomic();
            }
        }
    }
}

/// Append `args` as a RESP multibulk.
pub fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
    let mut num = [0u8; 20];
    out.push(b'*');
    out.extend_from_slice(format_usize(&mut num, args.len()));
    out.extend_from_slice(b"\r\n");
    for a in args {
        push_bulk(out, a);
    }
}

fn push_bulk(out: &mut Vec<u8>, a: &[u8]) {
    let mut num = [0u8; 20];
    out.push(b'$');
    out.extend_from_slice(format_usize(&mut num, a.len()));
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(a);
    out.extend_from_slice(b"\r\n");
}

/// Decimal digits of `n` in `buf`, without allocating.
fn format_usize(buf: &mut [u8; 20], mut n: usize) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> Aof {
        Aof { on: true, ..Aof::default() }
    }

    #[test]
    fn select_only_when_the_db_changes() {
        let mut a = on();
        a.feed(0, &[b"SET", b"k", b"v"]);
        a.feed(0, &[b"DEL", b"k"]);
        a.feed(3, &[b"DEL", b"k"]);
        let want =
            "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n\
                    *2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n";
        assert_eq!(String::from_utf8_lossy(&a.buf), want);
    }

    #[test]
    fn atomic_blocks_wrap_only_when_something_was_fed() {
        let mut a = on();
        a.selected_db = Some(0);
        a.begin_atomic();
        a.end_atomic();
        assert!(a.buf.is_empty());
        a.begin_atomic();
        a.begin_atomic();
        a.feed(0, &[b"INCR", b"x"]);
        a.end_atomic();
        a.feed(0, &[b"INCR", b"y"]);
        a.end_atomic();
        let want =
            "*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n*2\r\n$4\r\nINCR\r\n$1\r\ny\r\n*1\r\n$4\r\nEXEC\r\n";
        assert_eq!(String::from_utf8_lossy(&a.buf), want);
    }

    #[test]
    fn off_feeds_nothing() {
        let mut a = Aof::default();
        a.feed(0, &[b"SET", b"k", b"v"]);
        assert!(a.buf.is_empty());
        assert_eq!(format_usize(&mut [0; 20], 1234567), b"1234567");
        assert_eq!(format_usize(&mut [0; 20], 0), b"0");
    }
}
