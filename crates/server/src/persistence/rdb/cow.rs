//! How much memory a BGSAVE child copied on write (INFO
//! `rdb_last_cow_size`): the child reads its own `Private_Dirty` when done
//! and writes it on a pipe the parent reads once the child has exited.
use std::io::Read;

/// A close-on-exec pipe (read end, write end), if one can be made.
pub fn pipe() -> Option<(i32, i32)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid two-int out array.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    (rc == 0).then_some((fds[0], fds[1]))
}

/// In the parent after the fork: keep the read end (if the child runs),
/// close what it no longer needs.
pub fn parent_end(pipe: Option<(i32, i32)>, child_runs: bool) -> Option<i32> {
    let (r, w) = pipe?;
    // SAFETY: closing descriptors this module created and owns.
    unsafe { libc::close(w) };
    if child_runs {
        Some(r)
    } else {
        // SAFETY: as above.
        unsafe { libc::close(r) };
        None
    }
}

/// Private dirty bytes of the calling process.
fn private_dirty() -> u64 {
    let mut text = String::new();
    let read = std::fs::File::open("/proc/self/smaps_rollup").and_then(|mut f| f.read_to_string(&mut text));
    if read.is_err() {
        return 0;
    }
    text.lines()
        .filter(|l| l.starts_with("Private_Dirty:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

/// In the child: send the copy-on-write size and log it, as Redis does.
pub fn report(pipe: Option<(i32, i32)>) {
    let cow = private_dirty();
    crate::log_at!(Notice, "Fork CoW for RDB: current {} MB", cow >> 20);
    if let Some((_, w)) = pipe {
        let b = cow.to_le_bytes();
        // SAFETY: writing 8 bytes from a live buffer to our pipe.
        unsafe { libc::write(w, b.as_ptr().cast(), b.len()) };
    }
}

/// In the parent once the child is gone: the reported size, closing the pipe.
pub fn collect(fd: Option<i32>) -> Option<u64> {
    let fd = fd?;
    let mut b = [0u8; 8];
    // SAFETY: reading into a live 8-byte buffer; the writer has exited, so
    // this returns at once (data or end of file).
    let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
    // SAFETY: closing the read end this module opened.
    unsafe { libc::close(fd) };
    (n == 8).then(|| u64::from_le_bytes(b))
}
