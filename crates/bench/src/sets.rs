//! The 1M-SET experiment's building blocks, shared by `seeds` and `targets`:
//! key naming, the two ways of writing (pipelined in fixed chunks on the
//! blocking [`Conn`], or submitted to `volley_client::Coalescer` on tokio),
//! and the data check afterwards (DBSIZE delta plus sampled values).

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use resp::{encode_command, Frame};
use volley_client::{aio, Coalescer, CoalescerConfig, ConnectOptions, Ticket};

use crate::conn::{ok_reply, proto_err, Conn};

/// Prefix of every key the benchmarks write.
pub const PREFIX: &str = "volley-bench:";

/// Key `i` of the SET experiment.
pub fn set_key(i: usize) -> String {
    format!("{PREFIX}set:{i}")
}

/// Value of key `i`.
pub fn set_val(i: usize) -> String {
    format!("v{i}")
}

/// Key `i` and its value written into reusable buffers (the bytes of
/// [`set_key`] and [`set_val`] without two `format!` allocations per op,
/// which would otherwise be most of the client's CPU in both write modes).
#[derive(Default)]
pub struct KeyVal {
    key: Vec<u8>,
    val: Vec<u8>,
}

impl KeyVal {
    /// Key and value of op `i`.
    pub fn get(&mut self, i: usize) -> (&[u8], &[u8]) {
        self.key.clear();
        self.key.extend_from_slice(PREFIX.as_bytes());
        self.key.extend_from_slice(b"set:");
        resp::push_decimal(&mut self.key, i);
        self.val.clear();
        self.val.push(b'v');
        resp::push_decimal(&mut self.val, i);
        (&self.key, &self.val)
    }
}

/// Delete keys 0..n of the SET experiment, `chunk` keys per DEL.
pub fn delete_set_keys(c: &mut Conn, n: usize, chunk: usize) -> io::Result<()> {
    let chunk = chunk.max(1);
    let mut req = Vec::new();
    let mut cmds = 0;
    let mut i = 0;
    while i < n {
        let end = (i + chunk).min(n);
        let mut args = vec!["DEL".to_string()];
        args.extend((i..end).map(set_key));
        encode_command(&mut req, &args);
        cmds += 1;
        i = end;
    }
    for f in c.pipeline_raw(&req, cmds)? {
        ok_reply(f)?;
    }
    Ok(())
}

/// `DBSIZE`.
pub fn dbsize(c: &mut Conn) -> io::Result<i64> {
    match ok_reply(c.cmd(&["DBSIZE"])?)? {
        Frame::Integer(n) => Ok(n),
        other => Err(proto_err(format!("unexpected DBSIZE reply {other:?}"))),
    }
}

/// `Ok(good)` when `ok`, else `Err(bad)`.
pub fn check(ok: bool, good: String, bad: String) -> Result<String, String> {
    if ok {
        Ok(good)
    } else {
        Err(bad)
    }
}

/// After writing keys 0..written: DBSIZE grew by `written` and ~100 sampled
/// keys hold their values.
pub fn verify_sets(c: &mut Conn, base: i64, written: usize) -> io::Result<Result<String, String>> {
    let size = dbsize(c)?;
    let step = (written / 100).max(1);
    let idx: Vec<usize> = (0..written).step_by(step).chain([written.saturating_sub(1)]).collect();
    let cmds: Vec<Vec<String>> = idx.iter().map(|&i| vec!["GET".into(), set_key(i)]).collect();
    let replies = c.pipeline(&cmds)?;
    let wrong = idx.iter().zip(&replies).filter(|(&i, f)| **f != Frame::Bulk(set_val(i).into_bytes())).count();
    let grew = size - base;
    Ok(check(
        grew == written as i64 && wrong == 0,
        format!("DBSIZE +{grew}, {} sampled ok", idx.len()),
        format!("DBSIZE +{grew} (want +{written}), {wrong}/{} sampled values wrong", idx.len()),
    ))
}

/// SET keys 0..n in pipelines of `chunk`: send a chunk, read its replies,
/// repeat (one round trip per chunk). Returns the wall time.
pub fn pipelined_sets(c: &mut Conn, n: usize, chunk: usize, pb: &ProgressBar) -> io::Result<Duration> {
    let chunk = chunk.max(1);
    let start = Instant::now();
    let mut i = 0;
    let mut req = Vec::new();
    let mut kv = KeyVal::default();
    while i < n {
        let end = (i + chunk).min(n);
        req.clear();
        for k in i..end {
            let (key, val) = kv.get(k);
            encode_command(&mut req, &[&b"SET"[..], key, val]);
        }
        let mut errs = 0usize;
        c.pipeline_each(&req, end - i, |f| errs += usize::from(matches!(f, Frame::Error(_))))?;
        if errs > 0 {
            return Err(proto_err(format!("{errs} SETs failed")));
        }
        i = end;
        pb.set_position(i as u64);
    }
    Ok(start.elapsed())
}

fn client_err(e: volley_client::Error) -> io::Error {
    io::Error::other(e.to_string())
}

/// How the application awaits its coalesced SETs' tickets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tickets {
    /// Keep every ticket, flush, then await them all (memory grows with n).
    HoldAll,
    /// Hand each ticket to a task that awaits them in order while submitting
    /// goes on (memory bounded by the coalescer's `max_ops`).
    AwaitAsResolved,
}

/// SET keys 0..n through a `volley_client::Coalescer` (default config) on a
/// fresh current-thread tokio runtime, as an application would: submit every
/// `set` without awaiting its outcome (the coalescer's `max_ops` back-pressure
/// bounds what is buffered), flush, then await every ticket (`tickets` says
/// whether they are all held until then). Merged MSETs go out as soon as the
/// flusher is free, not one round trip per `max_args`. Returns the wall time
/// from the first submit to the last ticket.
pub fn coalesced_sets(
    addr: SocketAddr,
    password: Option<&str>,
    n: usize,
    tickets: Tickets,
    pb: &ProgressBar,
) -> io::Result<Duration> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let mut opts = ConnectOptions::new(&addr.ip().to_string(), addr.port());
        opts.password = password.map(String::from);
        let conn = aio::Connection::connect(&opts).await.map_err(client_err)?;
        let co = Coalescer::new(conn, CoalescerConfig::default());
        let start = Instant::now();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Ticket<()>>();
        let reaper = tokio::spawn(async move {
            let (mut errs, mut first) = (0usize, None);
            while let Some(t) = rx.recv().await {
                if let Err(e) = t.await {
                    errs += 1;
                    first.get_or_insert(e);
                }
            }
            (errs, first)
        });
        let mut held = Vec::with_capacity(if tickets == Tickets::HoldAll { n } else { 0 });
        let mut kv = KeyVal::default();
        for i in 0..n {
            let (key, val) = kv.get(i);
            let t = co.set(key, val).await.map_err(client_err)?;
            match tickets {
                Tickets::HoldAll => held.push(t),
                Tickets::AwaitAsResolved => drop(tx.send(t)),
            }
            if i % 4096 == 0 {
                pb.set_position(i as u64);
            }
        }
        co.flush().await.map_err(client_err)?;
        drop(tx);
        let (mut errs, mut first) = reaper.await.map_err(io::Error::other)?;
        for t in held {
            if let Err(e) = t.await {
                errs += 1;
                first.get_or_insert(e);
            }
        }
        let el = start.elapsed();
        match first {
            Some(e) => Err(proto_err(format!("{errs} coalesced SETs failed, first: {e}"))),
            None => Ok(el),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyval_matches_set_key_and_set_val() {
        let mut kv = KeyVal::default();
        for i in [0, 7, 10, 999_999, 1_000_000, usize::MAX] {
            let (k, v) = kv.get(i);
            assert_eq!((k, v), (set_key(i).as_bytes(), set_val(i).as_bytes()));
        }
    }
}
