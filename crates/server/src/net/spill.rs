//! Request bytes parked on disk. While a connection's replies wait for the
//! client to read them, its commands stop executing but its input is still
//! read, so a client that writes its whole pipeline before reading never
//! blocks. Past `pipeline-input-spill` bytes in memory, further input goes to
//! an unlinked temp file in `dir`, read back in order as execution resumes.
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// An append-only byte queue backed by an unlinked file.
pub struct Spill {
    file: File,
    written: u64,
    read: u64,
}

impl Spill {
    pub fn create(dir: &Path) -> io::Result<Spill> {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".volley-spill-{}-{n}", std::process::id()));
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
        // Unlinked at once: the space is freed when the file is dropped, even on a crash.
        std::fs::remove_file(&path)?;
        Ok(Spill { file, written: 0, read: 0 })
    }

    pub fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.file.write_all_at(data, self.written)?;
        self.written += data.len() as u64;
        Ok(())
    }

    /// Bytes parked and not yet read back.
    pub fn pending(&self) -> u64 {
        self.written - self.read
    }

    /// Read back up to `buf.len()` bytes in arrival order.
    pub fn take(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min(self.pending() as usize);
        self.file.read_exact_at(&mut buf[..want], self.read)?;
        self.read += want as u64;
        Ok(want)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_come_back_in_order() {
        let mut s = Spill::create(&std::env::temp_dir()).unwrap();
        s.append(b"hello ").unwrap();
        s.append(b"world").unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(s.take(&mut buf).unwrap(), 4);
        assert_eq!(&buf, b"hell");
        let mut rest = [0u8; 64];
        let n = s.take(&mut rest).unwrap();
        assert_eq!(&rest[..n], b"o world");
        assert_eq!(s.pending(), 0);
    }
}
