//! Async (tokio) connection and explicit pipeline. The pipeline writes
//! chunks and reads replies concurrently inside one task (`join!` of a writer
//! and a reader over the split socket), bounding unanswered request bytes.

use std::cell::Cell;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::batch::Batch;
use crate::conn::ReplyBuf;
use crate::error::{Error, Result};
use crate::options::ConnectOptions;
use crate::router::{finish_retries, retry_round, route, Retry};
use crate::value::{Value, ValueExt};

/// Read one reply from `r`, buffering in `rb`.
pub(crate) async fn read_reply_from<R: AsyncRead + Unpin>(rb: &mut ReplyBuf, r: &mut R) -> Result<Value> {
    loop {
        if let Some(v) = rb.try_next()? {
            return Ok(v);
        }
        let res = r.read(rb.spare()).await;
        rb.commit(*res.as_ref().unwrap_or(&0));
        match res {
            Ok(0) => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()),
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// An async connection to a Redis-protocol server.
pub struct Connection {
    pub(crate) stream: TcpStream,
    pub(crate) replies: ReplyBuf,
    pub(crate) opts: ConnectOptions,
}

impl Connection {
    /// Connect and run the handshake (HELLO / AUTH / SELECT) from `opts`.
    pub async fn connect(opts: &ConnectOptions) -> Result<Connection> {
        let connect = TcpStream::connect(opts.addr());
        let stream = tokio::time::timeout(opts.connect_timeout, connect)
            .await
            .map_err(|_| Error::Io(std::io::Error::from(std::io::ErrorKind::TimedOut)))??;
        stream.set_nodelay(true)?;
        let mut conn = Connection { stream, replies: ReplyBuf::default(), opts: opts.clone() };
        for cmd in opts.handshake() {
            conn.cmd(&cmd).await?;
        }
        Ok(conn)
    }

    /// Send one command and await its reply; error replies become `Err(Server)`.
    pub async fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<Value> {
        let mut out = Vec::new();
        resp::encode_command(&mut out, args);
        self.stream.write_all(&out).await?;
        self.read_reply().await?.into_result()
    }

    /// Read the next reply (error replies are returned as `Value::Error`).
    pub async fn read_reply(&mut self) -> Result<Value> {
        read_reply_from(&mut self.replies, &mut self.stream).await
    }

    /// Start an explicit pipeline on this connection.
    pub fn pipeline(&mut self) -> Pipeline<'_> {
        Pipeline { conn: self, batch: Batch::default() }
    }

    /// Send `cmds` in one write and return their raw replies (error replies included).
    pub async fn round<A: AsRef<[u8]>>(&mut self, cmds: &[Vec<A>]) -> Result<Vec<Value>> {
        let mut out = Vec::new();
        cmds.iter().for_each(|c| resp::encode_command(&mut out, c));
        self.stream.write_all(&out).await?;
        let mut replies = Vec::with_capacity(cmds.len());
        for _ in cmds {
            replies.push(self.read_reply().await?);
        }
        Ok(replies)
    }
}

/// An explicit pipeline on an async [`Connection`]; derefs to [`Batch`].
pub struct Pipeline<'a> {
    conn: &'a mut Connection,
    batch: Batch,
}

crate::batch::deref_to_batch!(Pipeline);

impl Pipeline<'_> {
    /// Send everything queued and fill the handles, dropping other replies.
    pub async fn sync(&mut self) -> Result<()> {
        self.sync_streaming(|_, _| {}).await
    }

    /// Send everything queued and return every reply in order.
    pub async fn sync_and_return_all(&mut self) -> Result<Vec<Result<Value>>> {
        let mut all = Vec::with_capacity(self.batch.len());
        let retries = self.run(|_, v| all.push(v)).await?;
        for (i, v) in retries {
            all[i] = v;
        }
        Ok(all)
    }

    /// Send everything queued and give each reply to `f(index, reply)` as it
    /// arrives; EVALSHA retries are reported again at the end.
    pub async fn sync_streaming<F: FnMut(usize, Result<Value>)>(&mut self, mut f: F) -> Result<()> {
        for (i, v) in self.run(&mut f).await? {
            f(i, v);
        }
        Ok(())
    }

    async fn run(&mut self, mut on_reply: impl FnMut(usize, Result<Value>)) -> Result<Vec<(usize, Result<Value>)>> {
        let batch = self.batch.take()?;
        let n = batch.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let chunk = self.conn.opts.chunk_size.max(1);
        let mut cuts: Vec<usize> = (chunk..n).step_by(chunk).map(|i| batch.offset(i)).collect();
        cuts.push(batch.buf.len());
        let Batch { buf, entries, .. } = batch;
        let mut entries = entries.into_iter();
        let mut retries: Vec<Retry> = Vec::new();
        send_and_receive(self.conn, &buf, &cuts, chunk, n, |i, v| {
            if let Some(entry) = entries.next() {
                retries.extend(route(i, entry, &v));
            }
            on_reply(i, v.into_result());
        })
        .await?;
        if retries.is_empty() {
            return Ok(Vec::new());
        }
        let plan = retry_round(&retries);
        let cmds: Vec<Vec<Vec<u8>>> = plan.iter().map(|(c, _)| c.clone()).collect();
        let replies = self.conn.round(&cmds).await?;
        finish_retries(&retries, &plan, replies);
        let slot_value =
            |r: &Retry| r.slot.get().map_or(Err(Error::Closed), |v| v.as_ref().map_err(|e| e.duplicate()).cloned());
        Ok(retries.iter().map(|r| (r.index, slot_value(r))).collect())
    }
}

/// Write chunks and read `n` replies concurrently in one task.
async fn send_and_receive(
    conn: &mut Connection,
    buf: &[u8],
    cuts: &[usize],
    chunk: usize,
    n: usize,
    mut on_each: impl FnMut(usize, Value),
) -> Result<()> {
    let max_inflight = conn.opts.max_inflight_bytes;
    let replied = Cell::new(0usize);
    let failed = Cell::new(false);
    let notify = Notify::new();
    let (mut rd, mut wr) = conn.stream.split();
    let rb = &mut conn.replies;
    let writer = async {
        let (mut start, mut inflight, mut inflight_bytes) = (0, std::collections::VecDeque::new(), 0usize);
        for (j, &end) in cuts.iter().enumerate() {
            let len = end - start;
            loop {
                while inflight.front().is_some_and(|&(done, _)| done <= replied.get()) {
                    inflight_bytes -= inflight.pop_front().map_or(0, |(_, b)| b);
                }
                if inflight.is_empty() || inflight_bytes + len <= max_inflight || failed.get() {
                    break;
                }
                notify.notified().await;
            }
            if failed.get() {
                return Ok(());
            }
            wr.write_all(&buf[start..end]).await?;
            inflight.push_back((((j + 1) * chunk).min(n), len));
            inflight_bytes += len;
            start = end;
        }
        Ok::<(), Error>(())
    };
    let reader = async {
        for i in 0..n {
            let v = match read_reply_from(rb, &mut rd).await {
                Ok(v) => v,
                Err(e) => {
                    failed.set(true);
                    notify.notify_one();
                    return Err(e);
                }
            };
            on_each(i, v);
            replied.set(i + 1);
            if (i + 1) % chunk == 0 {
                notify.notify_one();
            }
        }
        Ok::<(), Error>(())
    };
    let (w, r) = tokio::join!(writer, reader);
    r.and(w)
}
