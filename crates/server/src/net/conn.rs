//! One client connection: its socket, input and output buffers, the request
//! parser, and the batch loop (read everything available, execute every
//! complete command, leave replies for one write at the end of the turn).
//!
//! Backpressure: once pending reply bytes reach `pipeline-output-pause`, the
//! connection stops *executing* but keeps *reading* (input is spilled to disk
//! past `pipeline-input-spill`), so memory stays bounded and a client that
//! writes its whole pipeline before reading still gets every reply, in order.
//! With `maxmemory-clients` set, Redis's model takes over instead: output
//! grows, and the largest clients are evicted (see `client_evict`).
use std::io;
use std::path::Path;
use std::time::Instant;

use resp::request::{Limits, Parsed};
use resp::{Args, RequestParser};

use super::lookahead::Lookahead;
use super::spill::Spill;
use super::transport::Stream;
use crate::dispatch::{self, Argv, Registry};
use crate::engine::db;
use crate::server::{client_evict, Buffers, ClientLink, ClientRole, LuaDebug, Server};

/// Most bytes read from one connection per loop turn, for fairness.
const READ_CAP: usize = 1 << 20;
/// Most request bytes executed for one connection per loop turn, so one
/// deep pipeline cannot hold the loop while other clients wait (about a
/// thousand small commands: well under a millisecond; Redis reads 16 KB).
const TURN_BUDGET: usize = 64 << 10;
/// Unexecuted input kept in memory before reading pauses (while the client
/// reads its replies; a client that does not is spilled instead).
const READ_AHEAD: usize = 1 << 20;
/// Smallest read attempted; the buffer grows past it for big pipelines.
const MIN_READ: usize = 16 << 10;
/// Output room a drained connection keeps by default: Redis's reply
/// buffer (`PROTO_REPLY_CHUNK_BYTES`). A buffer that grew past what the
/// connection keeps (a burst of pushes, one big reply) is released once
/// written, as Redis frees its reply list, so memory that eviction and
/// client eviction count returns to its pre-burst level at once.
const OUT_KEEP_MIN: usize = 16 << 10;
/// Most output room kept: a connection whose every turn writes more than
/// [`OUT_KEEP_MIN`] (a deep pipeline of big replies) keeps up to this
/// much, chosen by the cron from its recent peak, so it does not
/// reallocate each turn (Redis grows its reply buffer the same way).
const OUT_KEEP_MAX: usize = 64 << 10;
/// Input buffers above this shrink, on the cron, to their recent peak use
/// (Redis's PROTO_RESIZE_THRESHOLD).
const RESIZE_INPUT_ABOVE: usize = 32 << 10;
/// Free input room under this is not worth a reallocation.
const RESIZE_MIN_WASTE: usize = 4 << 10;
/// A bulk argument at least this long is awaited alone, as Redis reads a
/// big argument into its own query buffer (PROTO_MBULK_BIG_ARG): `qbuf`
/// then counts only its payload, not the request header before it.
const BIG_ARG: usize = 32 << 10;

/// Why a connection must be closed.
#[derive(Debug)]
pub enum Close {
    /// Peer closed or I/O failed; nothing to log above verbose.
    Gone(String),
    /// A limit or protocol rule was broken; logged with this text.
    Limit(String),
}

pub struct Conn {
    pub stream: Stream,
    /// Input bytes live in `input[in_start..in_end]`; `input` is fully initialized.
    input: Vec<u8>,
    in_start: usize,
    in_end: usize,
    parser: RequestParser,
    args: Args,
    lookahead: Lookahead,
    pub out: Vec<u8>,
    out_sent: usize,
    /// Bytes of output ever removed from `out` (written), so a position in
    /// the output stream survives buffer compaction (see [`Conn::out_end`]).
    drained: u64,
    spill: Option<Spill>,
    /// The peer shut down its sending side.
    pub eof: bool,
    /// Execution stopped because replies are waiting for the client to read.
    pub paused: bool,
    /// Reading or executing stopped at a per-turn limit: the loop must come
    /// back without waiting for an event.
    pub read_more: bool,
    /// Complete commands are waiting because the turn budget ran out (as
    /// opposed to the buffer holding part of one big command).
    backlog: bool,
    /// The last [`Conn::process`] stopped at a command not all received.
    incomplete: bool,
    /// Queued in the loop's flush list this turn.
    pub flush_queued: bool,
    /// WRITABLE interest is registered (a write was partial).
    pub write_registered: bool,
    soft_limit_since: Option<Instant>,
    /// Most unconsumed input held since the last cron tick: the input
    /// buffer shrinks towards it.
    in_peak: usize,
    /// Output room kept when `out` drains (see [`OUT_KEEP_MIN`]).
    out_keep: usize,
    /// Most output written in one flush since the last cron tick.
    out_peak: usize,
    /// The last tick's peak was over `out_keep`.
    out_full_last_tick: bool,
}

impl Conn {
    pub fn new(stream: Stream) -> Self {
        Conn {
            stream,
            input: Vec::new(),
            in_start: 0,
            in_end: 0,
            parser: RequestParser::new(),
            args: Args::default(),
            lookahead: Lookahead::default(),
            out: Vec::new(),
            out_sent: 0,
            drained: 0,
            spill: None,
            eof: false,
            paused: false,
            read_more: false,
            backlog: false,
            incomplete: false,
            flush_queued: false,
            write_registered: false,
            soft_limit_since: None,
            in_peak: 0,
            out_keep: OUT_KEEP_MIN,
            out_peak: 0,
            out_full_last_tick: false,
        }
    }

    /// Start the input with bytes already read from the socket elsewhere
    /// (the stream that followed our primary's snapshot).
    pub fn preload(&mut self, bytes: &[u8]) {
        self.make_room(bytes.len());
        self.input[self.in_end..self.in_end + bytes.len()].copy_from_slice(bytes);
        self.in_end += bytes.len();
    }

    /// The buffers as CLIENT LIST reports them.
    pub fn buffers(&self) -> Buffers {
        let in_mem = self.in_end - self.in_start;
        let header = match self.parser.pending_bulk() {
            Some(len) if len >= BIG_ARG => self.parser.progress().min(in_mem),
            _ => 0,
        };
        let qbuf = in_mem - header;
        Buffers {
            qbuf,
            qbuf_free: self.input.len() - qbuf,
            pending_out: self.pending_out(),
            out_cap: self.out.capacity(),
            total: std::mem::size_of::<Conn>() + self.buffer_memory(),
            writing: self.write_registered,
        }
    }

    /// Reply bytes not yet accepted by the kernel.
    pub fn pending_out(&self) -> usize {
        self.out.len() - self.out_sent
    }

    /// Unexecuted request bytes, in memory and on disk.
    pub fn pending_in(&self) -> u64 {
        (self.in_end - self.in_start) as u64 + self.spill.as_ref().map_or(0, Spill::pending)
    }

    /// Memory held by this connection's buffers (CLIENT LIST `tot-mem`).
    /// The argument list of the command just run is not counted: it would
    /// make a client's figure depend on its last command's arity, while
    /// Redis frees argv after each command (`argv-mem` covers the running one).
    pub fn buffer_memory(&self) -> usize {
        self.input.len() + self.out.capacity()
    }

    /// Read what the socket has (up to the per-turn cap). Returns bytes read.
    pub fn fill(&mut self, srv: &Server, scratch: &mut [u8]) -> io::Result<usize> {
        self.read_more = false;
        let mut total = 0;
        let mut limited = false;
        while total < READ_CAP && !self.eof {
            let in_mem = self.in_end - self.in_start;
            if self.backlog && !self.paused && self.spill.is_none() && in_mem >= READ_AHEAD {
                // Executing is behind reading: let TCP flow control pace the client.
                self.read_more = true;
                return Ok(total);
            }
            let spilling = self.spill.is_some() || (self.paused && in_mem as u64 >= srv.config.pipeline_input_spill);
            let got = if spilling {
                let n = read_some(&mut self.stream, scratch)?;
                if let Some(n) = n.filter(|&n| n > 0) {
                    self.spill_append(&scratch[..n], &srv.config.dir)?;
                }
                n
            } else {
                let Some(want) = self.read_want() else {
                    // A big argument is all here: it runs before more is read,
                    // and the loop comes back for the rest (edge-triggered).
                    self.read_more = true;
                    return Ok(total);
                };
                self.make_room(want);
                let n = read_some(&mut self.stream, &mut self.input[self.in_end..])?;
                // A read that filled all the room offered did not drain the socket.
                limited = n.is_some_and(|n| n > 0 && self.in_end + n == self.input.len());
                self.in_end += n.unwrap_or(0);
                self.in_peak = self.in_peak.max(self.in_end - self.in_start);
                n
            };
            match got {
                None => return Ok(total),
                Some(0) => self.eof = true,
                Some(n) => {
                    total += n;
                    // A short read drained the socket; data arriving later raises
                    // a new edge, so skip the read that would only say EAGAIN.
                    if n < MIN_READ.min(scratch.len()) && !limited {
                        return Ok(total);
                    }
                }
            }
        }
        self.read_more |= total >= READ_CAP;
        Ok(total)
    }

    /// Stage one of prefetching the keys of the next commands to run (see
    /// `lookahead`); true if there is a stage two for [`Conn::prefetch_finish`].
    pub fn prefetch_stage(&mut self, srv: &Server, reg: &Registry, cid: usize) -> bool {
        let Some(client) = srv.clients.get(cid) else { return false };
        self.lookahead.stage(&self.input[self.in_start..self.in_end], reg, &srv.keyspace.dbs[client.db], 1)
    }

    /// Stage two of what [`Conn::prefetch_stage`] started.
    pub fn prefetch_finish(&mut self, srv: &Server, cid: usize) {
        if let Some(client) = srv.clients.get(cid) {
            self.lookahead.finish(&self.input[self.in_start..self.in_end], &srv.keyspace.dbs[client.db]);
        }
    }

    fn spill_append(&mut self, data: &[u8], dir: &Path) -> io::Result<()> {
        if self.spill.is_none() {
            self.spill = Some(Spill::create(dir)?);
        }
        self.spill.as_mut().expect("just created").append(data)
    }

    /// Ensure at least `want` writable bytes after `in_end`.
    fn make_room(&mut self, want: usize) {
        if self.input.len() - self.in_end >= want {
            return;
        }
        // Bytes move (or the buffer is replaced) below: hashes known for
        // keys at their old addresses no longer apply.
        self.lookahead.forget();
        let used = self.in_end - self.in_start;
        if self.in_start > 0 {
            self.input.copy_within(self.in_start..self.in_end, 0);
            self.in_start = 0;
            self.in_end = used;
            if self.input.len() - used >= want {
                return;
            }
        }
        // Ordinary reads double the buffer (amortized copies), or grow at
        // once to what the socket already holds (up to the read-ahead): each
        // doubling is fresh memory, and faulting it in, one 2 MiB huge page
        // after another, held a new pipeline's first turn for 10-14 ms. A
        // known big argument gets exactly its size, not the next power of two.
        let target = used + want;
        let new_len = if want > MIN_READ || self.big_arg_frame().is_some() {
            target
        } else {
            let queued = (used + self.stream.queued_input()).min(READ_AHEAD + MIN_READ);
            target.max(self.input.len() * 2).max(MIN_READ).max(queued)
        };
        self.input.resize(new_len, 0);
    }

    /// Size of the frame in the buffer when it ends with a big argument
    /// whose length is known (Redis reads such an argument into a query
    /// buffer of exactly its size).
    fn big_arg_frame(&self) -> Option<usize> {
        let len = self.parser.pending_bulk().filter(|&l| l >= BIG_ARG)?;
        Some(self.parser.progress() + len + 2)
    }

    /// Room wanted for the next read: the rest of a big argument's frame
    /// and no more (so its buffer is exactly its size, whatever the reads
    /// were), or a usual read; None when that frame is complete.
    fn read_want(&self) -> Option<usize> {
        let in_mem = self.in_end - self.in_start;
        match self.big_arg_frame() {
            Some(frame) if frame <= in_mem => None,
            Some(frame) => Some(frame - in_mem),
            None => Some(MIN_READ),
        }
    }

    /// Give an incomplete big argument's frame a buffer of exactly its
    /// size, once its length is known: reads before the length was parsed
    /// may have grown the buffer past it. Its figure (`tot-mem`) is then
    /// what Redis reports, and the same for every client sending it.
    fn fit_big_arg(&mut self) {
        let Some(frame) = self.big_arg_frame() else { return };
        if self.in_start == 0 && self.input.len() == frame {
            return;
        }
        self.lookahead.forget();
        let used = self.in_end - self.in_start;
        self.input.copy_within(self.in_start..self.in_end, 0);
        self.in_start = 0;
        self.in_end = used;
        self.input.resize(frame.max(used), 0);
        self.input.shrink_to_fit();
    }

    /// Move parked input back into memory; false if there was none.
    fn refill_from_spill(&mut self, need: usize) -> io::Result<bool> {
        let Some(spill) = self.spill.as_mut() else {
            return Ok(false);
        };
        if spill.pending() == 0 {
            self.spill = None;
            return Ok(false);
        }
        let want = need.saturating_sub(self.in_end - self.in_start).max(256 << 10);
        self.make_room(want);
        let spill = self.spill.as_mut().expect("checked above");
        let n = spill.take(&mut self.input[self.in_end..])?;
        self.in_end += n;
        if spill.pending() == 0 {
            self.spill = None;
        }
        Ok(n > 0)
    }

    /// Execute every complete command until input runs out, the output pause
    /// threshold is reached, the client blocks, or it must be closed.
    /// Returns true when it stopped early because a command made keys ready
    /// for blocked clients: the loop serves them, then calls again.
    pub fn process(&mut self, srv: &mut Server, reg: &'static Registry, cid: usize, now: i64) -> Result<bool, Close> {
        // Our primary's stream is counted and passed on as it is applied,
        // and its commands see keys it has not expired yet as present.
        if srv.clients.get(cid).is_none_or(|c| c.role != ClientRole::Master) {
            return self.process_batch(srv, reg, cid, now, false);
        }
        srv.keyspace.dbs.iter_mut().for_each(|db| db.expiry_off = true);
        let done = self.process_batch(srv, reg, cid, now, true);
        srv.keyspace.dbs.iter_mut().for_each(|db| db.expiry_off = false);
        done
    }

    fn process_batch(
        &mut self,
        srv: &mut Server,
        reg: &'static Registry,
        cid: usize,
        now: i64,
        from_primary: bool,
    ) -> Result<bool, Close> {
        // With client eviction on, Redis's model replaces the output pause:
        // maxmemory-clients bounds clients' memory by disconnecting the
        // largest, and CLIENT NO-EVICT lets one grow. An evictable client's
        // figure is then refreshed after each command.
        // `pipeline-output-pause 0` turns the pause off, as Redis runs.
        let evicting = client_evict::enabled(&srv.config);
        let pause_at = match srv.config.pipeline_output_pause {
            0 => usize::MAX,
            _ if evicting => usize::MAX,
            n => n as usize,
        };
        let evictable = evicting && srv.clients.get(cid).is_some_and(client_evict::evictable);
        let mut executed = 0;
        self.backlog = false;
        self.incomplete = false;
        // Commands of this batch time themselves from the end of the one before.
        srv.call_clock.reset();
        client_evict::update(srv, cid, self.buffers());
        // The floor only decides when to look; the full check picks the class.
        let floor = Self::output_floor(srv);
        loop {
            if executed >= TURN_BUDGET && self.has_input() {
                self.read_more = true;
                self.backlog = true;
                return Ok(false);
            }
            if self.pending_out() >= pause_at {
                self.paused = true;
                return Ok(false);
            }
            self.paused = false;
            let client = srv.clients.get(cid).expect("connection has a client record");
            if client.close_after_reply || srv.blocking.is_blocked(cid) {
                return Ok(false);
            }
            let debugging = client.lua_debug != LuaDebug::Off;
            let limits = Limits {
                max_bulk_len: srv.config.proto_max_bulk_len,
                auth_required: srv.acl.auth_required(client.authenticated),
            };
            let frame = &self.input[self.in_start..self.in_end];
            let known = self.lookahead.before_frame(frame, reg, &srv.keyspace.dbs[client.db]);
            match self.parser.parse(frame, &mut self.args, limits) {
                Ok(Parsed::Frame(n)) => {
                    if !self.args.is_empty() {
                        let argv = Argv::new(frame, &self.args);
                        srv.call_clock.chain();
                        if debugging {
                            // An EVAL may open a debugging session on this
                            // connection: it reads and writes the stream
                            // directly (the stream is not touched otherwise
                            // until the command returns).
                            srv.client_link = Some(&mut self.stream as &mut dyn ClientLink as *mut dyn ClientLink);
                        }
                        db::with_known_hash(known, || dispatch::execute(srv, reg, cid, &mut self.out, &argv, now));
                        if debugging {
                            srv.client_link = None;
                        }
                    }
                    if from_primary {
                        crate::replication::applied(srv, &frame[..n]);
                    }
                    self.in_start += n;
                    executed += n;
                    self.check_output_limits_fast(srv, cid, floor)?;
                    if evictable && client_evict::update(srv, cid, self.buffers()) {
                        // Over maxmemory-clients: the loop evicts before more runs.
                        self.read_more = true;
                        return Ok(false);
                    }
                    if srv.blocking.has_ready() {
                        return Ok(true);
                    }
                }
                Ok(Parsed::Incomplete { need_at_least }) => {
                    if self.refill_from_spill(need_at_least).map_err(|e| Close::Gone(e.to_string()))? {
                        continue;
                    }
                    self.check_query_limit(srv, need_at_least)?;
                    if self.in_end > self.in_start {
                        // The figure taken before parsing saw the buffer as
                        // the reads left it; parsing a partial command may
                        // have resized it (`fit_big_arg`): record what is
                        // held now, as Redis does after processing input,
                        // not at the next cron tick.
                        client_evict::update(srv, cid, self.buffers());
                    }
                    self.incomplete = true;
                    break;
                }
                Err(e) => {
                    crate::log_at!(Verbose, "Protocol error ({}) from client: {}", e.0, client.addr);
                    let mut r = dispatch::Reply::new(&mut self.out, false);
                    r.error(&e.reply_text());
                    srv.stats.error_replies += 1;
                    if let Some(c) = srv.clients.get_mut(cid) {
                        c.close_after_reply = true;
                    }
                    return Ok(false);
                }
            }
        }
        self.release_idle_input();
        Ok(false)
    }

    fn check_query_limit(&mut self, srv: &Server, need: usize) -> Result<(), Close> {
        let in_frame = (self.in_end - self.in_start).max(self.parser.progress());
        if in_frame as u64 > srv.config.client_query_buffer_limit {
            return Err(Close::Limit(format!(
                "Closing client that reached max query buffer length (qbuf={in_frame}, client-query-buffer-limit={})",
                srv.config.client_query_buffer_limit
            )));
        }
        // A big bulk argument is coming: size the buffer for it once.
        if need > self.input.len() - self.in_start {
            self.make_room(need - (self.in_end - self.in_start));
        }
        self.fit_big_arg();
        Ok(())
    }

    /// Redis's client-output-buffer-limit for the client's class (normal,
    /// or pubsub for a subscriber).
    /// Per command: the limit checks run only once output reaches the
    /// lowest limit in force, or while a soft limit is being timed.
    #[inline]
    fn check_output_limits_fast(&mut self, srv: &Server, cid: usize, floor: u64) -> Result<(), Close> {
        if (self.pending_out() as u64) < floor && self.soft_limit_since.is_none() {
            return Ok(());
        }
        self.check_output_limits(srv, cid)
    }

    /// The lowest output limit a client running commands can reach: its
    /// class is normal, or pubsub once a command subscribes it.
    fn output_floor(srv: &Server) -> u64 {
        let (nh, ns, _) = srv.config.client_output_buffer_limit_normal;
        let (ph, ps, _) = srv.config.client_output_buffer_limit_pubsub;
        [nh, ns, ph, ps].into_iter().filter(|&l| l > 0).min().unwrap_or(u64::MAX)
    }

    #[cold]
    pub fn check_output_limits(&mut self, srv: &Server, cid: usize) -> Result<(), Close> {
        let (subscriber, replica) =
            srv.clients.get(cid).map_or((false, false), |c| (c.pubsub, c.role == crate::server::ClientRole::Replica));
        let (class, (mut hard, soft, secs)) = if replica {
            ("replica", srv.config.client_output_buffer_limit_replica)
        } else if subscriber {
            ("pubsub", srv.config.client_output_buffer_limit_pubsub)
        } else {
            ("normal", srv.config.client_output_buffer_limit_normal)
        };
        if replica && hard > 0 {
            // As Redis: a replica may always hold a backlog's worth (a
            // partial resync sends that much at once).
            hard = hard.max(crate::replication::backlog_size(srv));
        }
        let mut pending = self.pending_out() as u64;
        if replica {
            pending += crate::replication::stream_pending(srv, cid) as u64;
        }
        if hard > 0 && pending >= hard {
            return Err(Close::Limit(format!(
                "Client closed for overcoming of output buffer limits (client-output-buffer-limit {class} hard {hard}, pending {pending})"
            )));
        }
        if soft > 0 && pending >= soft {
            let since = *self.soft_limit_since.get_or_insert_with(Instant::now);
            if since.elapsed().as_secs() >= secs {
                return Err(Close::Limit(format!(
                    "Client closed for overcoming of output buffer limits (client-output-buffer-limit {class} soft {soft} for {secs}s)"
                )));
            }
        } else {
            self.soft_limit_since = None;
        }
        Ok(())
    }

    /// Rewind an emptied input buffer; its size is the cron's business
    /// ([`Conn::resize_input`]), so a client sending one big command after
    /// another does not reallocate for each.
    fn release_idle_input(&mut self) {
        if self.in_start == self.in_end {
            self.in_start = 0;
            self.in_end = 0;
            self.lookahead.forget();
            if self.eof {
                self.input = Vec::new();
            }
        }
    }

    /// Cron: give back input room the connection has not used lately, as
    /// Redis does: all of it once the client is idle, otherwise down to
    /// the peak use since the last tick when that is under half the buffer.
    pub fn resize_input(&mut self, idle: bool) {
        let used = self.in_end - self.in_start;
        let quiet = self.spill.is_none() && self.parser.progress() == 0;
        if quiet && self.input.len() - used > RESIZE_MIN_WASTE {
            if idle {
                self.release_idle_buffers();
            } else if self.input.len() > RESIZE_INPUT_ABOVE && self.input.len() / 2 > self.in_peak {
                self.lookahead.forget();
                self.input.copy_within(self.in_start..self.in_end, 0);
                self.in_start = 0;
                self.in_end = used;
                self.input.truncate(used.max(self.in_peak));
                self.input.shrink_to_fit();
            }
        }
        self.in_peak = self.in_end - self.in_start;
    }

    /// Write pending replies. Ok(true) when everything was written.
    pub fn flush(&mut self, srv: &mut Server) -> io::Result<bool> {
        // No reply leaves before the writes it acknowledges are durable.
        crate::persistence::before_reply(srv);
        if !self.write_out(srv, self.out.len())? {
            return Ok(false);
        }
        self.out_sent = 0;
        self.drained += self.out.len() as u64;
        self.out_peak = self.out_peak.max(self.out.len());
        if self.out.capacity() > self.out_keep {
            self.out = Vec::new();
        } else {
            self.out.clear();
        }
        Ok(true)
    }

    /// A replica's connection, its own output written: write the stream
    /// it has not taken, straight from the shared replication buffer.
    /// Ok(true) when everything went.
    pub fn flush_stream(&mut self, srv: &mut Server, slot: usize) -> io::Result<bool> {
        let stream = &mut self.stream;
        let mut writes = 0;
        let done = crate::replication::send_stream(srv, slot, |chunk| {
            writes += 1;
            stream.write(chunk)
        })?;
        srv.stats.io_writes += writes;
        // TLS records encrypted but not yet taken by the socket.
        if stream.has_queued() {
            return Ok(stream.send_queued()? && done);
        }
        Ok(done)
    }

    /// Cron: how much output room to keep from now on. A peak that filled
    /// the kept room in two ticks running (a steady pipeline, not a single
    /// burst) doubles it, up to [`OUT_KEEP_MAX`]; a peak under half of it
    /// halves it, down to [`OUT_KEEP_MIN`], as Redis resizes its reply
    /// buffer from its peak use.
    pub fn resize_output(&mut self) {
        let (peak, keep) = (self.out_peak, self.out_keep);
        if peak > keep && self.out_full_last_tick {
            self.out_keep = (keep * 2).min(OUT_KEEP_MAX);
        } else if peak < keep / 2 {
            self.out_keep = (keep / 2).max(OUT_KEEP_MIN);
        }
        self.out_full_last_tick = peak > keep;
        self.out_peak = 0;
    }

    /// Write `out[out_sent..limit]`; Ok(false) when the kernel took less.
    fn write_out(&mut self, srv: &mut Server, limit: usize) -> io::Result<bool> {
        while self.out_sent < limit {
            match self.stream.write(&self.out[self.out_sent..limit]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.out_sent += n;
                    srv.stats.net_output_bytes += n as u64;
                    srv.stats.io_writes += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        // TLS records encrypted but not yet taken by the socket.
        if self.stream.has_queued() {
            return self.stream.send_queued();
        }
        Ok(true)
    }

    /// Position of the end of the output produced so far, in the
    /// connection's whole output stream.
    pub fn out_end(&self) -> u64 {
        self.drained + self.out.len() as u64
    }

    /// Write pending replies up to stream position `end` (replies produced
    /// later wait for their AOF commit). Ok(true) when all of it was written.
    pub fn flush_upto(&mut self, srv: &mut Server, end: u64) -> io::Result<bool> {
        let limit = end.saturating_sub(self.drained).min(self.out.len() as u64) as usize;
        // Bytes already sent by a full flush (which made everything durable) count as sent.
        let limit = limit.max(self.out_sent);
        if !self.write_out(srv, limit)? {
            return Ok(false);
        }
        if limit > 0 {
            self.out.drain(..limit);
            self.out_sent = 0;
            self.drained += limit as u64;
        }
        Ok(true)
    }

    /// Frees the buffers of a connection with nothing in flight (the cron
    /// calls it for clients idle a while, as Redis shrinks idle clients'
    /// query buffers): an idle connection then costs a few hundred bytes
    /// instead of a 16 KiB read buffer. The next read allocates again.
    pub fn release_idle_buffers(&mut self) {
        if self.in_start == self.in_end && self.spill.is_none() && self.parser.progress() == 0 {
            self.input = Vec::new();
            self.in_start = 0;
            self.in_end = 0;
            self.args = Args::default();
            self.lookahead = Lookahead::default();
        }
        if self.out.is_empty() {
            self.out = Vec::new();
        }
    }

    /// True if complete or parked input may be waiting for execution.
    pub fn has_input(&self) -> bool {
        self.in_start < self.in_end || self.spill.is_some()
    }

    /// The peer closed its side and nothing left can run: at most part of
    /// a command that can never complete remains. Redis frees a client at
    /// EOF whatever its query buffer holds; kept, its buffer would count
    /// against maxmemory-clients forever.
    pub fn input_finished(&self) -> bool {
        self.eof && (!self.has_input() || self.incomplete)
    }
}

/// One read: Some(n) bytes (0 = EOF), None when the socket has nothing now.
fn read_some(stream: &mut Stream, buf: &mut [u8]) -> io::Result<Option<usize>> {
    loop {
        match stream.read(buf) {
            Ok(n) => return Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}
