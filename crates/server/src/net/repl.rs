//! The event loop's share of replication: each turn, relay a full
//! synchronization's bytes to its replicas' connections, write the stream
//! to replicas that have some to take (their snapshot through), and adopt a
//! finished link to our primary as the master client (a connection whose
//! commands are applied, unanswered).
use std::io::{self, Read};

use mio::unix::SourceFd;
use mio::{Interest, Token};

use super::transport::{Stream, TlsStream};
use super::{Conn, EventLoop};
use crate::server::{ClientInfo, ClientRole, ReplyMode};

impl EventLoop {
    /// Replication's per-turn work (cheap when there is none).
    /// Replicas with stream to take (fed this turn, or just released) are
    /// checked against their output limit and written before sleeping.
    pub(super) fn replication_turn(&mut self, now: i64) {
        self.relay_snapshot(now);
        for slot in crate::replication::turn(&mut self.srv, now) {
            let Some(conn) = self.conns.get_mut(slot) else { continue };
            if let Err(close) = conn.check_output_limits(&self.srv, slot) {
                self.to_close.push((slot, close));
                continue;
            }
            if !conn.flush_queued {
                conn.flush_queued = true;
                self.to_flush.push(slot);
            }
        }
        if let Some(ready) = crate::replication::take_master_link(&mut self.srv) {
            self.adopt_master(ready, now);
        }
    }

    /// Hand the snapshot in progress to the replicas' connections; those
    /// left with bytes pending wait for WRITABLE, the pipe for READABLE.
    fn relay_snapshot(&mut self, now: i64) {
        let conns = &mut self.conns;
        let mut write = |slot: usize, buf: &[u8]| -> io::Result<usize> {
            let conn = conns.get_mut(slot).ok_or_else(|| io::Error::other("connection closed"))?;
            loop {
                match conn.stream.write(buf) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => {
                        // TLS: records the socket did not take wait there.
                        if conn.stream.has_queued() {
                            conn.stream.send_queued()?;
                        }
                        return Ok(n);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(0),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        };
        for slot in crate::replication::relay(&mut self.srv, &mut write, now) {
            self.want_writable(slot, true);
        }
        self.track_relay_pipe();
    }

    /// Keep the poller watching the pipe being relayed, and only it; a
    /// finished pipe closes once it is off the poller.
    fn track_relay_pipe(&mut self) {
        let want = crate::replication::relay_pipe_fd(&self.srv);
        if want != self.relay_pipe {
            let reg = self.poll.registry();
            if let Some(old) = self.relay_pipe.take() {
                let _ = reg.deregister(&mut SourceFd(&old));
            }
            if let Some(fd) = want {
                match reg.register(&mut SourceFd(&fd), Token(super::RELAY_PIPE), Interest::READABLE) {
                    Ok(()) => self.relay_pipe = Some(fd),
                    Err(e) => crate::log_at!(Warning, "Watching the snapshot pipe: {e}"),
                }
            }
        }
        crate::replication::drop_retired_pipe(&mut self.srv);
    }

    fn adopt_master(&mut self, ready: crate::replication::MasterLinkReady, now: i64) {
        let (link, mut leftover) = match crate::replication::adopt_master_link(&mut self.srv, ready) {
            Ok(x) => x,
            Err(_) => return,
        };
        let sock = link.socket();
        let addr = sock.peer_addr().map(|a| a.to_string()).unwrap_or_default();
        let laddr = sock.local_addr().map(|a| a.to_string()).unwrap_or_default();
        let fd = std::os::fd::AsRawFd::as_raw_fd(sock);
        let mut conn = Box::new(Conn::new(into_stream(link, &mut leftover)));
        conn.preload(&leftover);
        let slot = self.conns.insert(conn);
        let conn = self.conns.get_mut(slot).expect("just inserted");
        if let Err(e) = self.poll.registry().register(&mut conn.stream, Token(slot), Interest::READABLE) {
            crate::log_at!(Warning, "Registering the master link: {e}");
            self.conns.remove(slot);
            return;
        }
        let id = self.srv.next_client_id;
        self.srv.next_client_id += 1;
        let mut info = ClientInfo::new(id, fd, addr, laddr, now, true);
        info.role = ClientRole::Master;
        info.db = crate::replication::stream_db(&self.srv);
        // The primary's commands get no replies (ACKs go out as pushes).
        info.reply_mode = ReplyMode::Off;
        self.srv.clients.insert_at(slot, info);
        crate::replication::master_connected(&mut self.srv, slot, now);
        self.execute(slot, now);
    }
}

/// The handshake thread's stream as the event loop's: the same TLS session
/// goes on, and plaintext rustls already decrypted joins `leftover` (no
/// new socket edge would announce it).
fn into_stream(link: crate::replication::LinkStream, leftover: &mut Vec<u8>) -> Stream {
    match link {
        crate::replication::LinkStream::Plain(s) => Stream::Tcp(mio::net::TcpStream::from_std(s)),
        crate::replication::LinkStream::Tls(t) => {
            let (mut conn, sock) = (*t).into_parts();
            let mut buf = [0u8; 16 << 10];
            while let Ok(n @ 1..) = conn.reader().read(&mut buf) {
                leftover.extend_from_slice(&buf[..n]);
            }
            Stream::Tls(Box::new(TlsStream::new(mio::net::TcpStream::from_std(sock), conn.into())))
        }
    }
}
