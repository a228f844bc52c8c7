//! Background fsync for `appendfsync everysec`: the event loop hands a
//! duplicate of the AOF file descriptor to one worker thread and never waits
//! for the disk itself (Redis's BIO fsync job).
use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

/// The worker and what it reports back.
#[derive(Default)]
pub struct Syncer {
    tx: Option<Sender<File>>,
    /// Jobs queued or running (INFO `aof_pending_bio_fsync`).
    pending: Arc<AtomicUsize>,
    /// The last fsync failure, taken by the loop.
    error: Arc<Mutex<Option<std::io::Error>>>,
}

impl Syncer {
    /// Queue an fsync of `file` (a duplicate descriptor is handed over).
    pub fn request(&mut self, file: &File) -> std::io::Result<()> {
        let dup = file.try_clone()?;
        let tx = match &self.tx {
            Some(tx) => tx,
            None => self.tx.insert(self.spawn()?),
        };
        self.pending.fetch_add(1, Ordering::SeqCst);
        if tx.send(dup).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
            self.tx = None;
            return Err(std::io::Error::other("AOF fsync thread is gone"));
        }
        Ok(())
    }

    fn spawn(&self) -> std::io::Result<Sender<File>> {
        let (tx, rx) = channel::<File>();
        let pending = Arc::clone(&self.pending);
        let error = Arc::clone(&self.error);
        std::thread::Builder::new().name("aof-fsync".into()).spawn(move || {
            for file in rx {
                if let Err(e) = file.sync_data() {
                    *error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                }
                pending.fetch_sub(1, Ordering::SeqCst);
            }
        })?;
        Ok(tx)
    }

    /// Jobs not finished yet.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    /// An fsync failure reported since the last call.
    pub fn take_error(&self) -> Option<std::io::Error> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsyncs_in_background_and_drains() {
        let path = std::env::temp_dir().join(format!("volley-syncer-{}", std::process::id()));
        let f = File::create(&path).unwrap();
        let mut s = Syncer::default();
        s.request(&f).unwrap();
        s.request(&f).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while s.pending() > 0 {
            assert!(std::time::Instant::now() < deadline, "fsync never finished");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(s.take_error().is_none());
        std::fs::remove_file(path).unwrap();
    }
}
