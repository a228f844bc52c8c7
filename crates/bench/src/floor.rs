//! The floor server: the least CPU a single-threaded server can spend per
//! pipelined command on this machine, to judge CPU targets against.
//!
//! It does what Volley's event loop does for I/O and nothing else: one
//! edge-triggered epoll, per ready connection read until a short read, one
//! write of every reply of the batch. It parses just enough RESP to find
//! each frame and its command name, and answers with a canned reply shaped
//! like the real one (`+OK` for SET, a 3-byte bulk for GET, `:1` for INCR
//! ...), so the load generator does the same work as against a real server.
//! No key is stored: whatever CPU it uses per command is the kernel's
//! socket work plus a minimum of user space, a floor that no server with
//! this I/O pattern goes below. `bench/floor.py` runs it beside
//! redis-server and volley-server.
//!
//! For Pub/Sub fan-out (`bench/pubsub.py`) it also keeps one channel:
//! `SUBSCRIBE` makes a connection a subscriber, and every `PUBLISH` of a
//! turn is copied to each subscriber and written once at the end of the
//! turn, as Volley delivers.
//!
//! It listens on TCP, a Unix socket and TLS as asked (`floor_io`), so the
//! floor of each transport is measured over that transport.
use std::collections::HashMap;
use std::io::{self, ErrorKind, Read, Write};

use crate::floor_io::{Listener, Stream};

/// Smallest free space offered to a read.
const MIN_READ: usize = 16 << 10;
/// Tokens at and above this one are listening sockets in the epoll set.
const LISTENER: u64 = u64::MAX - 8;

/// The canned reply for a command name (any case).
pub fn reply_for(name: &[u8]) -> &'static [u8] {
    let mut upper = [0u8; 16];
    let n = name.len().min(upper.len());
    upper[..n].copy_from_slice(&name[..n]);
    upper.make_ascii_uppercase();
    match &upper[..n] {
        b"GET" | b"LPOP" | b"RPOP" | b"SPOP" => b"$3\r\nxxx\r\n",
        b"INCR" | b"LPUSH" | b"RPUSH" | b"SADD" | b"HSET" | b"ZADD" => b":1\r\n",
        b"ZPOPMIN" => b"*2\r\n$3\r\nxxx\r\n$1\r\n1\r\n",
        b"PING" => b"+PONG\r\n",
        // redis-benchmark asks for `save` and `appendonly` before it starts.
        b"CONFIG" => b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n",
        _ => b"+OK\r\n",
    }
}

/// A whole frame's length and the byte range of its first argument.
type Frame = (usize, (usize, usize));

/// One complete multibulk frame at the start of `buf`. `None` while
/// incomplete; `Err` if it is not a frame of bulk strings.
pub fn frame(buf: &[u8]) -> Result<Option<Frame>, String> {
    let Some((count, mut at)) = header(buf, b'*')? else { return Ok(None) };
    let mut name = (0, 0);
    for i in 0..count {
        let Some((len, body)) = header(&buf[at..], b'$')? else { return Ok(None) };
        let end = at + body + len;
        if buf.len() < end + 2 {
            return Ok(None);
        }
        if i == 0 {
            name = (at + body, end);
        }
        at = end + 2;
    }
    Ok(Some((at, name)))
}

/// `<kind><digits>\r\n` at the start of `buf`: the number and the bytes used.
fn header(buf: &[u8], kind: u8) -> Result<Option<(usize, usize)>, String> {
    match buf.first() {
        None => return Ok(None),
        Some(&b) if b != kind => return Err(format!("expected '{}', got byte {b}", kind as char)),
        _ => {}
    }
    let Some(cr) = buf.iter().position(|&b| b == b'\r') else { return Ok(None) };
    if buf.len() < cr + 2 {
        return Ok(None);
    }
    let digits = std::str::from_utf8(&buf[1..cr]).map_err(|e| e.to_string())?;
    let n = digits.parse::<usize>().map_err(|e| format!("bad length {digits:?}: {e}"))?;
    Ok(Some((n, cr + 2)))
}

/// Append the replies of every complete frame in `input` to `out`; returns
/// the bytes consumed.
pub fn answer(input: &[u8], out: &mut Vec<u8>) -> Result<usize, String> {
    answer_with(input, out, &mut Channel::default())
}

/// The one Pub/Sub channel: how many subscribe, and the messages
/// published this turn (already framed).
#[derive(Default)]
pub struct Channel {
    pub subscribers: usize,
    pub messages: Vec<u8>,
    /// Set when the frames just answered included a SUBSCRIBE.
    pub joined: bool,
}

/// [`answer`], with SUBSCRIBE and PUBLISH served on `ch`.
pub fn answer_with(input: &[u8], out: &mut Vec<u8>, ch: &mut Channel) -> Result<usize, String> {
    let mut at = 0;
    while let Some((len, (s, e))) = frame(&input[at..])? {
        let name = &input[at + s..at + e];
        // The argument after the name: channel, then message for PUBLISH.
        let arg = |from: usize| frame_arg(&input[at..at + len], from);
        if name.eq_ignore_ascii_case(b"SUBSCRIBE") {
            let channel = arg(e + 2);
            ch.subscribers += 1;
            ch.joined = true;
            out.extend_from_slice(b"*3\r\n$9\r\nsubscribe\r\n");
            bulk(out, channel.0);
            out.extend_from_slice(b":1\r\n");
        } else if name.eq_ignore_ascii_case(b"PUBLISH") {
            let (channel, next) = arg(e + 2);
            let (message, _) = frame_arg(&input[at..at + len], next);
            ch.messages.extend_from_slice(b"*3\r\n$7\r\nmessage\r\n");
            bulk(&mut ch.messages, channel);
            bulk(&mut ch.messages, message);
            out.push(b':');
            out.extend_from_slice(ch.subscribers.to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        } else {
            out.extend_from_slice(reply_for(name));
        }
        at += len;
    }
    Ok(at)
}

/// The bulk string starting at `at` of a checked frame, and where the next
/// one starts.
fn frame_arg(frame: &[u8], at: usize) -> (&[u8], usize) {
    let Ok(Some((len, body))) = header(&frame[at..], b'$') else { return (&[], frame.len()) };
    let start = at + body;
    (&frame[start..start + len], start + len + 2)
}

fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(b.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

struct Client {
    stream: Stream,
    input: Vec<u8>,
    used: usize,
    out: Vec<u8>,
    subscriber: bool,
}

impl Client {
    /// Read until a short read; false when the peer is gone.
    fn fill(&mut self) -> bool {
        loop {
            if self.input.len() - self.used < MIN_READ {
                self.input.resize(self.used + MIN_READ.max(self.input.len()), 0);
            }
            let room = self.input.len() - self.used;
            match self.stream.read(&mut self.input[self.used..]) {
                Ok(0) => return false,
                Ok(n) => {
                    self.used += n;
                    if n < room {
                        return true;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// Write what is pending; false when the peer is gone.
    fn flush(&mut self) -> bool {
        if self.stream.send_queued().is_err() {
            return false;
        }
        while !self.out.is_empty() {
            match self.stream.write(&self.out) {
                Ok(n) => drop(self.out.drain(..n)),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// Handle one readiness event; false when the connection should close.
    fn on_event(&mut self, ch: &mut Channel) -> bool {
        let open = self.fill();
        ch.joined = false;
        let answered = answer_with(&self.input[..self.used], &mut self.out, ch);
        self.subscriber |= ch.joined;
        match answered {
            Ok(done) => {
                self.input.copy_within(done..self.used, 0);
                self.used -= done;
            }
            Err(e) => {
                eprintln!("volley-floor: protocol error, closing: {e}");
                return false;
            }
        }
        self.flush() && open
    }
}

fn epoll_ctl(ep: i32, op: i32, fd: i32, events: u32, token: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event { events, u64: token };
    // SAFETY: `ev` is a valid epoll_event for the duration of the call.
    if unsafe { libc::epoll_ctl(ep, op, fd, &mut ev) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Serve on `listeners` until killed.
pub fn serve(listeners: Vec<Listener>) -> io::Result<()> {
    // SAFETY: plain syscall; the descriptor is checked below.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(io::Error::last_os_error());
    }
    for (i, l) in listeners.iter().enumerate() {
        epoll_ctl(ep, libc::EPOLL_CTL_ADD, l.fd(), libc::EPOLLIN as u32, LISTENER + i as u64)?;
    }
    let mut clients: HashMap<u64, Client> = HashMap::new();
    let mut ch = Channel::default();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 512];
    loop {
        // SAFETY: `events` has room for the count passed.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, -1) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        for ev in &events[..n as usize] {
            let token = ev.u64;
            if token >= LISTENER {
                while let Ok(Some(stream)) = listeners[(token - LISTENER) as usize].accept() {
                    let fd = stream.fd();
                    let flags = (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32;
                    epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, flags, fd as u64)?;
                    let client = Client { stream, input: Vec::new(), used: 0, out: Vec::new(), subscriber: false };
                    clients.insert(fd as u64, client);
                }
            } else if let Some(client) = clients.get_mut(&token) {
                if !client.on_event(&mut ch) {
                    ch.subscribers -= usize::from(client.subscriber);
                    clients.remove(&token);
                }
            }
        }
        // The turn's messages: one copy and one write per subscriber.
        if !ch.messages.is_empty() {
            for c in clients.values_mut().filter(|c| c.subscriber) {
                c.out.extend_from_slice(&ch.messages);
                c.flush();
            }
            ch.messages.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_follow_the_command_name_in_any_case() {
        let mut out = Vec::new();
        let input = b"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n";
        assert_eq!(answer(input, &mut out), Ok(input.len()));
        assert_eq!(out, b"+OK\r\n$3\r\nxxx\r\n+PONG\r\n");
    }

    #[test]
    fn an_incomplete_frame_is_left_for_the_next_read() {
        let whole = b"*2\r\n$4\r\nINCR\r\n$3\r\nkey\r\n";
        for cut in 0..whole.len() {
            let mut out = Vec::new();
            let mut input = whole.to_vec();
            input.extend_from_slice(&whole[..cut]);
            assert_eq!(answer(&input, &mut out), Ok(whole.len()), "cut at {cut}");
            assert_eq!(out, b":1\r\n");
        }
    }

    #[test]
    fn publish_frames_the_message_for_subscribers() {
        let mut ch = Channel::default();
        let mut out = Vec::new();
        answer_with(b"*2\r\n$9\r\nSUBSCRIBE\r\n$1\r\nc\r\n", &mut out, &mut ch).unwrap();
        assert_eq!(out, b"*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
        assert!(ch.joined);
        out.clear();
        // Two in one read: the second frame's arguments are found too.
        let two = b"*3\r\n$7\r\nPUBLISH\r\n$1\r\nc\r\n$2\r\nhi\r\n*3\r\n$7\r\npublish\r\n$2\r\nch\r\n$0\r\n\r\n";
        answer_with(two, &mut out, &mut ch).unwrap();
        assert_eq!(out, b":1\r\n:1\r\n");
        let want = b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$2\r\nhi\r\n*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$0\r\n\r\n";
        assert_eq!(ch.messages, want);
    }

    #[test]
    fn bytes_that_are_not_a_frame_are_an_error() {
        assert!(answer(b"PING\r\n", &mut Vec::new()).is_err());
        assert!(answer(b"*1\r\n$x\r\n", &mut Vec::new()).is_err());
    }
}
