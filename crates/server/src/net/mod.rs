//! The event loop: one thread owns the keyspace and every connection. Per
//! turn it reads all ready connections, executes every complete command, and
//! then ("before sleep") writes each connection's replies with one write.
mod blocked;
mod busy;
mod client_evict;
mod conn;
pub mod limits;
mod listen;
mod lookahead;
pub mod outgoing;
mod pem_legacy;
pub mod protected;
mod repl;
mod signals;
pub mod spill;
pub mod tls;
mod tls_session;
mod tls_verify;
pub mod transport;
mod x509v1;

use std::io;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use crate::dispatch::Registry;
use crate::server::{unix_ms, ClientInfo, ClientRole, Server, Slab};
pub use conn::{Close, Conn};
pub use listen::bind_all;
use listen::{Accepted, Listener};

/// Listener tokens sit above any connection slot.
const LISTENER_BASE: usize = usize::MAX / 2;
/// The AOF commit thread wakes the loop with this token.
const WAKER: usize = LISTENER_BASE - 1;
/// The diskless snapshot's pipe (see `repl.rs`).
const RELAY_PIPE: usize = LISTENER_BASE - 2;
/// A client idle this long (ms) gives its buffers back (Redis: 2 s too).
const IDLE_BUFFERS_MS: i64 = 2000;

pub struct EventLoop {
    poll: Poll,
    listeners: Vec<Listener>,
    /// Boxed: a connection is moved out of the slab and back on every turn
    /// (see `execute`), and moving a pointer beats copying the whole struct.
    conns: Slab<Box<Conn>>,
    pub srv: Server,
    /// The command table every command is dispatched through.
    reg: &'static Registry,
    /// Connections with replies to write at the end of this turn.
    to_flush: Vec<usize>,
    /// Connections to revisit without waiting for an event (read cap hit, or
    /// resumed after their replies drained).
    again: Vec<usize>,
    to_close: Vec<(usize, Close)>,
    /// Replies waiting for the AOF commit in flight: (slot, stream position
    /// up to which that commit covers them).
    held: Vec<(usize, u64)>,
    /// The commit epoch `held` waits for.
    held_epoch: u64,
    scratch: Vec<u8>,
    next_cron: Instant,
    clock: crate::server::clock::Calibration,
    /// The snapshot pipe registered with the poller, if any.
    relay_pipe: Option<i32>,
}

impl EventLoop {
    /// Bind every `bind` address on `port`. Addresses prefixed with `-` are
    /// optional, as in redis.conf (skipped if unavailable, e.g. no IPv6).
    pub fn bind(mut srv: Server, reg: &'static Registry) -> io::Result<EventLoop> {
        let poll = Poll::new()?;
        let waker = mio::Waker::new(poll.registry(), Token(WAKER))?;
        crate::persistence::set_waker(&mut srv, std::sync::Arc::new(waker));
        if tls::wanted(&srv.config) {
            let built = tls::contexts(&srv.config).inspect_err(|_| {
                crate::log_at!(Warning, "Failed to configure TLS. Check logs for more info.");
            })?;
            (srv.tls, srv.tls_client) = (Some(built.0), built.1);
        }
        let mut listeners = listen::open_all(&srv.config, tls::tls_port(&srv.config))?;
        for (i, l) in listeners.iter_mut().enumerate() {
            poll.registry().register(l.source(), Token(LISTENER_BASE + i), Interest::READABLE)?;
        }
        // INFO's tcp_port: the TLS port when there is no TCP one, as Redis.
        let tcp = listeners.iter().filter_map(Listener::tcp_port);
        srv.port = tcp.chain(listeners.iter().filter_map(Listener::tls_port)).next().unwrap_or(0);
        Ok(EventLoop {
            poll,
            listeners,
            conns: Slab::default(),
            srv,
            reg,
            to_flush: Vec::new(),
            again: Vec::new(),
            to_close: Vec::new(),
            held: Vec::new(),
            held_epoch: 0,
            scratch: vec![0; 256 << 10],
            next_cron: Instant::now(),
            clock: crate::server::clock::Calibration::start(),
            relay_pipe: None,
        })
    }

    /// Ports actually bound, TCP before TLS (the first is reported by
    /// INFO, as Redis reports `tls-port` when `port` is 0).
    pub fn local_ports(&self) -> Vec<u16> {
        let tcp = self.listeners.iter().filter_map(Listener::tcp_port);
        tcp.chain(self.listeners.iter().filter_map(Listener::tls_port)).collect()
    }

    /// Serve until SHUTDOWN or SIGTERM/SIGINT.
    pub fn run(&mut self) -> io::Result<()> {
        // SAFETY: the poller points into `self`, which stays put (and is not
        // otherwise used while a script runs) until it is removed below.
        self.srv.busy_hook = Some(Box::new(unsafe { busy::BusyPoller::new(self) }));
        let result = self.serve();
        self.srv.busy_hook = None;
        result
    }

    fn serve(&mut self) -> io::Result<()> {
        signals::install();
        if !self.srv.config.unixsocket.is_empty() {
            crate::log_at!(Notice, "The server is now ready to accept connections at {}", self.srv.config.unixsocket);
        }
        let mut events = Events::with_capacity(1024);
        let mut ready = Vec::new();
        let watched = crate::watchdog::Work::on_this_thread(); // a turn past `watchdog-period` is reported
        loop {
            // An eviction round that hit its time limit goes on next turn.
            let busy = !self.again.is_empty() || self.srv.evict.timer;
            let timeout = if busy { Duration::ZERO } else { self.sleep_budget() };
            watched.idle();
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            let now = unix_ms();
            watched.busy(now);
            // Taken before the events: a connection served by an event and
            // queued again comes back next turn, not twice in this one (a
            // deep pipeline would hold the loop for two budgets).
            let again = std::mem::take(&mut self.again);
            for ev in events.iter() {
                let t = ev.token().0;
                if t == WAKER || t == RELAY_PIPE {
                    // An AOF commit finished: flush_all releases its replies.
                    // Snapshot bytes: the turn's replication work relays them.
                    continue;
                }
                if t >= LISTENER_BASE {
                    self.accept(t - LISTENER_BASE, now);
                    continue;
                }
                if ev.is_writable() {
                    self.on_writable(t, now);
                }
                if (ev.is_readable() || ev.is_read_closed() || ev.is_error()) && self.read_slot(t) {
                    ready.push(t);
                }
            }
            self.execute_ready(&ready, now);
            ready.clear();
            for t in again {
                if !self.again.contains(&t) {
                    self.on_readable(t, now);
                }
            }
            self.expire_blocked(now);
            crate::server::evict::timer_turn(&mut self.srv);
            self.srv.tracking_end_of_turn();
            self.deliver_pushes();
            if Instant::now() >= self.next_cron {
                self.cron(now);
                // The cron may have ended a pause.
                self.serve_ready_keys();
                self.deliver_pushes();
            }
            self.replication_turn(now);
            // As Redis frees another client at once on CLIENT KILL: gone
            // before the killer's reply leaves (a replica killed in a
            // MULTI has lost its link once EXEC is answered).
            for slot in std::mem::take(&mut self.srv.pending_kills) {
                self.to_close.push((slot, Close::Gone("killed by CLIENT KILL".into())));
            }
            self.close_pending();
            self.flush_all();
            self.close_pending();
            self.evict_clients(now);
            if let Some(new) = self.srv.rebound.take() {
                swap_listeners(&self.poll, &mut self.listeners, new.into_iter().map(Listener::Tcp).collect());
            }
            if let Some(new) = self.srv.rebound_tls.take() {
                swap_listeners(&self.poll, &mut self.listeners, new.into_iter().map(Listener::Tls).collect());
            }
            if let Some(sig) = signals::take() {
                crate::log_at!(Warning, "Received {sig} scheduling shutdown...");
                match crate::persistence::on_shutdown(&mut self.srv, crate::server::Shutdown::Default) {
                    Ok(()) => {
                        self.srv.shutdown.get_or_insert(crate::server::Shutdown::Default);
                    }
                    Err(e) => crate::log_at!(
                        Warning,
                        "{sig} received but errors trying to shut down the server ({e}), check the logs for more information"
                    ),
                }
            }
            if self.srv.shutdown.is_some() {
                return self.shutdown();
            }
        }
    }

    fn accept(&mut self, li: usize, now: i64) {
        accept_from(&self.listeners[li], &self.poll, &mut self.conns, &mut self.srv, now, &mut self.again);
    }
}

/// Drop connection `slot` and everything the server keeps for its client
/// (also while a busy script runs, see `busy.rs`).
fn close_conn(
    srv: &mut Server,
    conns: &mut Slab<Box<Conn>>,
    held: &mut Vec<(usize, u64)>,
    poll: &Poll,
    slot: usize,
    why: Close,
) {
    let Some(mut conn) = conns.remove(slot) else {
        return;
    };
    srv.blocking.unblock(slot);
    srv.unwatch_all(slot);
    srv.pubsub.drop_client(slot);
    srv.tracking_off(slot);
    srv.client_mem.forget(slot);
    // The slot may be reused: held positions belong to this connection.
    held.retain(|&(s, _)| s != slot);
    if let Some(role) = srv.clients.get(slot).map(|c| c.role) {
        crate::replication::client_closed(srv, slot, role);
    }
    let info = srv.clients.remove(slot);
    let addr = info.as_ref().map_or(String::new(), |c| c.addr.clone());
    match why {
        Close::Gone(msg) => crate::log_at!(Verbose, "Client {addr} closed: {msg}"),
        Close::Limit(msg) => crate::log_at!(Warning, "{msg}: client addr={addr}"),
    }
    let _ = poll.registry().deregister(&mut conn.stream);
    // Redis ends a TLS session with close_notify; a client that writes
    // after our close (redis-cli does, once a debugging session ends) then
    // sees the end cleanly rather than a reset. A forked debugging
    // session's child still uses this TLS session: not for it.
    let forked_debug = info.as_ref().is_some_and(|c| c.lua_debug == crate::server::LuaDebug::Forked);
    if !forked_debug {
        conn.stream.close_notify();
    }
}

/// Accept every pending connection on `listener` (also used while a script is busy).
/// A connection refused by protected mode is queued in `again`, where its
/// DENIED reply is written (once the TLS handshake is done, on TLS).
fn accept_from(
    listener: &Listener,
    poll: &Poll,
    conns: &mut Slab<Box<Conn>>,
    srv: &mut Server,
    now: i64,
    again: &mut Vec<usize>,
) {
    loop {
        let accepted = match listener.accept(srv.tls.as_ref()) {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                crate::log_at!(Warning, "Accepting client connection: {e}");
                return;
            }
        };
        srv.stats.connections_received += 1;
        if conns.len() >= srv.config.maxclients as usize {
            reject_max_clients(accepted.stream);
            srv.stats.rejected_connections += 1;
            continue;
        }
        match register(poll, conns, srv, accepted, now) {
            Ok(Some(denied)) => again.push(denied),
            Ok(None) => {}
            Err(e) => crate::log_at!(Warning, "Registering client connection: {e}"),
        }
    }
}

/// Add the connection and its client record; Some(slot) if protected
/// mode refuses it.
fn register(
    poll: &Poll,
    conns: &mut Slab<Box<Conn>>,
    srv: &mut Server,
    a: Accepted,
    now: i64,
) -> io::Result<Option<usize>> {
    let fd = std::os::fd::AsRawFd::as_raw_fd(&a.stream);
    let slot = conns.insert(Box::new(Conn::new(a.stream)));
    let conn = conns.get_mut(slot).expect("just inserted");
    // Readable only: with WRITABLE always on, every ACK would wake the loop.
    poll.registry().register(&mut conn.stream, Token(slot), Interest::READABLE)?;
    let id = srv.next_client_id;
    srv.next_client_id += 1;
    let authed = srv.acl.default_is_open();
    crate::log_at!(Verbose, "Accepted {}", a.addr);
    let mut info = ClientInfo::new(id, fd, a.addr, a.laddr, now, authed);
    info.unix = a.unix;
    let denied = protected::denies_client(srv, a.local);
    if denied {
        conn.out.extend_from_slice(protected::DENIED.as_bytes());
        info.close_after_reply = true;
        srv.stats.rejected_connections += 1;
    }
    srv.clients.insert_at(slot, info);
    Ok(denied.then_some(slot))
}

impl EventLoop {
    fn on_readable(&mut self, slot: usize, now: i64) {
        if self.read_slot(slot) {
            self.execute(slot, now);
        }
    }

    /// Reads what the connection has. False if the connection failed.
    fn read_slot(&mut self, slot: usize) -> bool {
        let Some(conn) = self.conns.get_mut(slot) else {
            return false;
        };
        match conn.fill(&self.srv, &mut self.scratch) {
            Ok(n) => {
                self.srv.stats.net_input_bytes += n as u64;
                self.srv.stats.io_reads += 1;
                true
            }
            Err(e) => {
                self.to_close.push((slot, Close::Gone(e.to_string())));
                false
            }
        }
    }

    /// Runs the commands of every connection just read. Every ready
    /// connection was read before any command runs, so their keys can be
    /// prefetched in a staggered way: while connection i runs, the key
    /// entries of i + 1 and the key buckets of i + 2 are on their way (see
    /// `lookahead`), and the misses overlap useful work.
    fn execute_ready(&mut self, ready: &[usize], now: i64) {
        let mut staged = [false; 2];
        for i in 0..ready.len() + 2 {
            if let Some(&t) = ready.get(i) {
                if let Some(conn) = self.conns.get_mut(t) {
                    staged[i % 2] = conn.prefetch_stage(&self.srv, self.reg, t);
                }
            }
            if let Some(&t) = i.checked_sub(1).and_then(|p| ready.get(p)) {
                if std::mem::take(&mut staged[(i - 1) % 2]) {
                    if let Some(conn) = self.conns.get_mut(t) {
                        conn.prefetch_finish(&self.srv, t);
                    }
                }
            }
            if let Some(&t) = i.checked_sub(2).and_then(|p| ready.get(p)) {
                self.execute(t, now);
            }
        }
    }

    fn on_writable(&mut self, slot: usize, now: i64) {
        let replica = self.srv.clients.get(slot).is_some_and(|c| c.role == ClientRole::Replica && !c.out_held);
        let Some(conn) = self.conns.get_mut(slot) else {
            return;
        };
        if conn.pending_out() == 0 && !conn.stream.has_queued() && !replica {
            return;
        }
        // A replica's snapshot goes first: the turn's relay writes it.
        if self.srv.clients.get(slot).is_some_and(|c| c.out_held) {
            return;
        }
        let res = match conn.flush(&mut self.srv) {
            Ok(true) if replica => conn.flush_stream(&mut self.srv, slot),
            res => res,
        };
        match res {
            Ok(true) => {
                self.want_writable(slot, false);
                let Some(conn) = self.conns.get_mut(slot) else {
                    return;
                };
                if conn.paused {
                    self.execute(slot, now);
                }
            }
            Ok(false) => {}
            Err(e) => self.to_close.push((slot, Close::Gone(e.to_string()))),
        }
    }

    /// Switch WRITABLE interest on (after a partial write) or off (drained).
    fn want_writable(&mut self, slot: usize, on: bool) {
        let Some(conn) = self.conns.get_mut(slot) else {
            return;
        };
        if conn.write_registered == on {
            return;
        }
        let interest = if on { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
        match self.poll.registry().reregister(&mut conn.stream, Token(slot), interest) {
            Ok(()) => conn.write_registered = on,
            Err(e) => self.to_close.push((slot, Close::Gone(e.to_string()))),
        }
    }

    /// Run the connection's complete commands and queue its replies.
    fn execute(&mut self, slot: usize, now: i64) {
        if let Some(c) = self.srv.clients.get_mut(slot) {
            c.last_interaction_ms = now;
        }
        // Messages published before this batch go out before its replies.
        if self.srv.pubsub.has_pushes() {
            self.deliver(slot);
        }
        // Redis evicts before each command: clients grown since are gone
        // before this one runs (and this one, if it is the largest).
        self.evict_clients(now);
        loop {
            // Out of the slab while it runs commands: a busy script's poller
            // may accept connections (growing the slab) meanwhile.
            let Some(mut conn) = self.conns.take_out(slot) else { return };
            let processed = conn.process(&mut self.srv, self.reg, slot, now);
            self.conns.put_back(slot, conn);
            match processed {
                // Over its output limit: gone before the next client runs
                // (Redis's beforeNextClient), so a CLIENT LIST read in the
                // same turn no longer shows it.
                Err(close @ Close::Limit(_)) => return self.close_one(slot, close),
                Err(close) => {
                    self.to_close.push((slot, close));
                    return;
                }
                // A command made keys ready: serve blocked clients right after
                // it, as Redis does, then carry on with this pipeline.
                Ok(true) => self.serve_ready_keys(),
                Ok(false) => break,
            }
        }
        self.note_memory(slot);
        self.evict_clients(now);
        self.queue_flush(slot);
        let Some(conn) = self.conns.get(slot) else { return };
        if conn.read_more && !self.again.contains(&slot) {
            self.again.push(slot);
        }
        let closing = self.srv.clients.get(slot).is_none_or(|c| c.close_after_reply);
        if (conn.input_finished() || closing) && conn.pending_out() == 0 {
            self.to_close.push((slot, Close::Gone("client closed connection".into())));
        }
    }

    fn queue_flush(&mut self, slot: usize) {
        let Some(conn) = self.conns.get_mut(slot) else { return };
        if (conn.pending_out() > 0 || conn.stream.has_queued()) && !conn.flush_queued {
            conn.flush_queued = true;
            self.to_flush.push(slot);
        }
    }

    /// Poll timeout: until the next cron tick or blocked-client deadline.
    fn sleep_budget(&self) -> Duration {
        let mut d = self.next_cron.saturating_duration_since(Instant::now());
        if let Some(deadline) = self.srv.blocking.next_deadline() {
            // Expiry fires once the clock is past the deadline.
            let ms = (deadline + 1 - unix_ms()).max(0) as u64;
            d = d.min(Duration::from_millis(ms));
        }
        d
    }

    /// Move every client's waiting pushes (messages, MONITOR lines) into
    /// its output: one write per client per turn however many there were.
    fn deliver_pushes(&mut self) {
        if !self.srv.pubsub.has_pushes() {
            return;
        }
        for slot in self.srv.pubsub.take_dirty() {
            self.deliver(slot);
        }
    }

    /// Append pushes to a connection's output; a subscriber that lets them
    /// pile up past its output limit is disconnected, as by Redis.
    fn deliver(&mut self, slot: usize) {
        let Some(conn) = self.conns.get_mut(slot) else {
            // No connection (a pseudo-client's slot): nobody to deliver to,
            // and the shared log is only reset once every outbox is empty.
            self.srv.pubsub.discard_pushes(slot);
            return;
        };
        if !self.srv.pubsub.move_pushes(slot, &mut conn.out) {
            return;
        }
        if let Err(close) = conn.check_output_limits(&self.srv, slot) {
            self.to_close.push((slot, close));
            return;
        }
        self.note_memory(slot);
        self.queue_flush(slot);
    }

    /// Before sleep: one write per connection with replies, after the
    /// turn's AOF writes are written (and with `always` fsynced, once).
    fn flush_all(&mut self) {
        if crate::persistence::async_commit(&self.srv) {
            return self.flush_after_commit();
        }
        crate::persistence::before_sleep(&mut self.srv);
        if !self.held.is_empty() {
            // `always` was just switched off (or AOF turned off): once the
            // last commit is on disk, the replies it held may go.
            crate::persistence::wait_commits(&self.srv);
            for (slot, _) in std::mem::take(&mut self.held) {
                self.flush_slot(slot, None);
            }
        }
        self.flush_queued();
    }

    /// Write every connection queued in `to_flush`. The queue is refilled
    /// every turn, so it keeps its capacity (no allocation per turn).
    fn flush_queued(&mut self) {
        let mut slots = std::mem::take(&mut self.to_flush);
        for &slot in &slots {
            self.flush_slot(slot, None);
        }
        slots.clear();
        slots.append(&mut self.to_flush);
        self.to_flush = slots;
    }

    /// `appendfsync always`: replies leave once the commit covering them is
    /// on disk; meanwhile the loop keeps executing, and what it feeds goes
    /// to the next commit, started as soon as the previous one is done.
    fn flush_after_commit(&mut self) {
        use crate::persistence as aof;
        if !self.held.is_empty() && aof::committed_epoch(&self.srv) >= self.held_epoch {
            for (slot, end) in std::mem::take(&mut self.held) {
                self.flush_slot(slot, Some(end));
            }
        }
        if aof::commit_in_flight(&self.srv) || aof::defer_group_commit(&mut self.srv, !self.again.is_empty()) {
            return;
        }
        match aof::start_commit(&mut self.srv) {
            Some(epoch) => {
                self.held_epoch = epoch;
                for slot in std::mem::take(&mut self.to_flush) {
                    let Some(conn) = self.conns.get_mut(slot) else { continue };
                    conn.flush_queued = false;
                    self.held.push((slot, conn.out_end()));
                }
            }
            // Nothing new was fed: every reply is backed by what's on disk.
            None => self.flush_queued(),
        }
    }

    /// Write a connection's replies (up to stream position `upto`, if
    /// given) and act on the outcome.
    fn flush_slot(&mut self, slot: usize, upto: Option<u64>) {
        let Some(conn) = self.conns.get_mut(slot) else {
            return;
        };
        if upto.is_none() {
            // Taken off `to_flush` (a held slot may be queued there again).
            conn.flush_queued = false;
        }
        // A replica's stream waits while its snapshot is being sent.
        let (held, replica) =
            self.srv.clients.get(slot).map_or((false, false), |c| (c.out_held, c.role == ClientRole::Replica));
        if held {
            return;
        }
        let res = match upto {
            Some(end) => conn.flush_upto(&mut self.srv, end),
            None => conn.flush(&mut self.srv),
        };
        let res = match res {
            Ok(true) if replica && conn.pending_out() == 0 => conn.flush_stream(&mut self.srv, slot),
            res => res,
        };
        match res {
            Ok(true) if conn.pending_out() > 0 => {
                // Later replies wait for the next commit.
                self.queue_flush(slot);
            }
            Ok(true) => {
                let closing = self.srv.clients.get(slot).is_none_or(|c| c.close_after_reply);
                if closing || conn.input_finished() {
                    self.to_close.push((slot, Close::Gone("closed after reply".into())));
                } else if conn.paused || (conn.has_input() && conn.eof) {
                    self.again.push(slot);
                }
            }
            // The kernel took less: a WRITABLE event resumes us.
            Ok(false) => self.want_writable(slot, true),
            Err(e) => self.to_close.push((slot, Close::Gone(e.to_string()))),
        }
        // What the kernel took no longer counts against the client.
        self.note_memory(slot);
    }

    fn close_pending(&mut self) {
        for (slot, why) in std::mem::take(&mut self.to_close) {
            self.close_one(slot, why);
        }
    }

    fn close_one(&mut self, slot: usize, why: Close) {
        close_conn(&mut self.srv, &mut self.conns, &mut self.held, &self.poll, slot, why);
    }

    /// Periodic work, `hz` times a second.
    fn cron(&mut self, now: i64) {
        let hz = self.srv.config.hz.clamp(1, 500);
        self.next_cron = Instant::now() + Duration::from_millis(1000 / hz as u64);
        if self.srv.cron_paused {
            return;
        }
        crate::server::cron::tick(&mut self.srv, now);
        crate::replication::cron(&mut self.srv, now);
        crate::persistence::cron(&mut self.srv, now);
        if self.srv.denials.loading == crate::server::Loading::Blocking {
            crate::replication::poll_startup_load(&mut self.srv);
        }
        self.clock.update();
        let timeout_ms = self.srv.config.timeout as i64 * 1000;
        if timeout_ms > 0 {
            for (slot, c) in self.srv.clients.iter() {
                // As in Redis, subscribers, monitors and blocked clients
                // are waiting on purpose.
                // Replication links have their own timeout (repl-timeout).
                let waiting = c.pubsub
                    || c.monitor
                    || self.srv.blocking.is_blocked(slot)
                    || c.role != crate::server::ClientRole::Normal;
                if !waiting && now - c.last_interaction_ms > timeout_ms {
                    self.to_close.push((slot, Close::Gone("idle timeout".into())));
                }
            }
        }
        let clients: Vec<(usize, i64)> = self.srv.clients.iter().map(|(s, c)| (s, c.last_interaction_ms)).collect();
        for (slot, last) in clients {
            if let Some(conn) = self.conns.get_mut(slot) {
                conn.resize_input(now - last > IDLE_BUFFERS_MS);
                conn.resize_output();
                crate::server::client_evict::update(&mut self.srv, slot, conn.buffers());
            }
        }
    }

    fn shutdown(&mut self) -> io::Result<()> {
        crate::log_at!(Warning, "User requested shutdown...");
        self.flush_all();
        for (_, conn) in self.conns.iter_mut() {
            let _ = conn.flush(&mut self.srv);
        }
        listen::remove_unix_socket(&self.srv.config);
        crate::log_at!(Warning, "Volley is now ready to exit, bye bye...");
        // Like Redis, don't free a possibly huge keyspace key by key on exit.
        std::mem::forget(std::mem::replace(&mut self.srv.keyspace, crate::engine::Keyspace::new(0)));
        Ok(())
    }
}

/// Take over listeners CONFIG SET port/bind/tls-port opened: the old ones
/// of the same kind close, connections already accepted stay.
fn swap_listeners(poll: &Poll, all: &mut Vec<Listener>, new: Vec<Listener>) {
    let tls = matches!(new.first(), Some(Listener::Tls(_)));
    for l in all.iter_mut() {
        let _ = poll.registry().deregister(l.source());
    }
    all.retain(|l| match l {
        Listener::Tcp(_) => tls,
        Listener::Tls(_) => !tls,
        Listener::Unix(..) => true,
    });
    all.extend(new);
    for (i, l) in all.iter_mut().enumerate() {
        if let Err(e) = poll.registry().register(l.source(), Token(LISTENER_BASE + i), Interest::READABLE) {
            crate::log_at!(Warning, "Could not watch a new listening socket: {e}");
        }
    }
}

/// Best effort, as Redis: on TLS nothing is written (no handshake yet).
fn reject_max_clients(mut stream: transport::Stream) {
    if !stream.is_tls() {
        let _ = stream.write(b"-ERR max number of clients reached\r\n");
    }
}
