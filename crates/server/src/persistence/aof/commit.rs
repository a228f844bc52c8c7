//! Group commit for `appendfsync always`, off the event loop.
//!
//! At the end of a turn the loop hands everything the turn fed (one
//! "epoch") to this thread, which writes it and fdatasyncs once, then wakes
//! the loop. The turn's replies are held until then (see `net::EventLoop`),
//! while the loop keeps reading and executing: whatever arrives during one
//! fsync is committed by the next, so every fsync covers all the clients
//! that were waiting, instead of half of them.
//!
//! A failed write or fsync exits the process, as Redis does with `always`:
//! the held replies are never sent for writes that are not on disk.
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};

/// One turn's worth of commands to make durable.
struct Job {
    file: File,
    data: Vec<u8>,
    epoch: u64,
}

#[derive(Default)]
struct Shared {
    /// The last epoch on disk.
    done: Mutex<u64>,
    cv: Condvar,
}

/// The commit thread and the epochs handed to it.
#[derive(Default)]
pub struct Committer {
    tx: Option<Sender<Job>>,
    shared: Arc<Shared>,
    /// The last epoch handed over.
    pub sent: u64,
    /// Wakes the event loop when an epoch is on disk.
    pub waker: Option<Arc<mio::Waker>>,
}

impl Committer {
    /// The last epoch written and fsynced.
    pub fn done(&self) -> u64 {
        *self.shared.done.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn in_flight(&self) -> bool {
        self.sent > self.done()
    }

    /// Hand `data` over to be appended to `file` and fsynced; its epoch.
    pub fn submit(&mut self, file: &File, data: Vec<u8>) -> io::Result<u64> {
        let file = file.try_clone()?;
        let tx = match &self.tx {
            Some(tx) => tx,
            None => self.tx.insert(self.spawn()?),
        };
        let epoch = self.sent + 1;
        tx.send(Job { file, data, epoch }).map_err(|_| io::Error::other("AOF commit thread is gone"))?;
        self.sent = epoch;
        Ok(epoch)
    }

    /// Block until everything handed over is on disk (before the loop
    /// writes to the file itself, so writes stay in order).
    pub fn wait(&self) {
        let mut done = self.shared.done.lock().unwrap_or_else(|p| p.into_inner());
        while *done < self.sent {
            done = self.shared.cv.wait(done).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn spawn(&self) -> io::Result<Sender<Job>> {
        let (tx, rx) = channel::<Job>();
        let shared = Arc::clone(&self.shared);
        let waker = self.waker.clone();
        std::thread::Builder::new().name("aof-commit".into()).spawn(move || {
            for mut job in rx {
                if let Err(e) = persist(&mut job.file, &job.data) {
                    crate::log_at!(
                        Warning,
                        "Can't persist AOF for write/fsync error when the AOF fsync policy is 'always': {}. Exiting...",
                        super::strerror(&e)
                    );
                    std::process::exit(1);
                }
                *shared.done.lock().unwrap_or_else(|p| p.into_inner()) = job.epoch;
                shared.cv.notify_all();
                if let Some(w) = &waker {
                    let _ = w.wake();
                }
            }
        })?;
        Ok(tx)
    }
}

fn persist(file: &mut File, data: &[u8]) -> io::Result<()> {
    super::flush_sleep();
    file.write_all(data)?;
    // SAFETY: fdatasync on an open descriptor we own.
    if unsafe { libc::fdatasync(file.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_complete_in_order() {
        let path = std::env::temp_dir().join(format!("volley-commit-{}", std::process::id()));
        let f = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
        let mut c = Committer::default();
        assert!(!c.in_flight());
        assert_eq!(c.submit(&f, b"one ".to_vec()).unwrap(), 1);
        assert_eq!(c.submit(&f, b"two".to_vec()).unwrap(), 2);
        c.wait();
        assert_eq!(c.done(), 2);
        assert!(!c.in_flight());
        assert_eq!(std::fs::read(&path).unwrap(), b"one two");
        std::fs::remove_file(path).unwrap();
    }
}
