//! A replica's way to its primary: a thread that connects, does the
//! handshake (PING, AUTH, REPLCONF listening-port / ip-address / capa eof
//! capa psync2, PSYNC), and for a full resync receives the snapshot into a
//! file, `$<len>` or `$EOF:<mark>` framed, or with `repl-diskless-load`
//! decodes it straight into a keyspace (`socket_load`). The event loop takes the result
//! (the socket, the snapshot, bytes of the stream already read) and goes
//! on from there; meanwhile the thread's progress feeds INFO.
//!
//! With `tls-replication yes` the link is TLS from its first byte, with the
//! client context net built from the `tls-*` options (replication may not
//! import net, so the context comes in [`LinkParams`]); the event loop
//! adopts the same session, so the primary sees one connection throughout.
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::socket_load::{self, Loaded, Logged, SocketLoad};

/// A TLS session over a blocking socket, as the thread drives it.
pub type TlsLink = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// The link's byte stream: plain TCP, or TLS over it.
pub enum LinkStream {
    Plain(TcpStream),
    Tls(Box<TlsLink>),
}

impl LinkStream {
    pub fn socket(&self) -> &TcpStream {
        match self {
            LinkStream::Plain(s) => s,
            LinkStream::Tls(t) => &t.sock,
        }
    }
}

impl Read for LinkStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            LinkStream::Plain(s) => s.read(buf),
            LinkStream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for LinkStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            LinkStream::Plain(s) => s.write(buf),
            LinkStream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            LinkStream::Plain(s) => s.flush(),
            LinkStream::Tls(t) => t.flush(),
        }
    }
}

/// What the thread needs to know.
pub struct LinkParams {
    pub host: String,
    pub port: u16,
    pub auth: Option<(Option<String>, String)>,
    pub listening_port: u16,
    pub announce_ip: Option<String>,
    /// PSYNC's arguments: our replid and next offset, or `?` and -1.
    pub psync_id: String,
    pub psync_offset: i64,
    /// A FAILOVER hands over: PSYNC asks the primary to take over first.
    pub failover: bool,
    pub dir: PathBuf,
    pub timeout: Duration,
    /// `tls-replication yes`: the client context to connect with.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// `repl-diskless-load` applies: load off the socket, no file.
    pub socket_load: Option<SocketLoad>,
}

/// Where a full resync's snapshot went.
pub enum Snapshot {
    /// Received into this file, to be loaded.
    File(PathBuf),
    /// Decoded off the link already.
    Loaded(Box<Loaded>),
}

/// How PSYNC was answered, and what came with it.
pub enum Outcome {
    /// `+FULLRESYNC <replid> <offset>` and the snapshot.
    Full { replid: String, offset: i64, rdb: Snapshot },
    /// `+CONTINUE [<replid>]`.
    Continue { replid: Option<String> },
}

/// A finished handshake: the stream and the (plaintext) stream bytes read
/// past it.
pub struct Handoff {
    pub stream: LinkStream,
    pub outcome: Outcome,
    pub leftover: Vec<u8>,
}

/// Progress INFO shows while the thread works.
#[derive(Default)]
pub struct Progress {
    /// Receiving the snapshot (`master_sync_in_progress`).
    pub transferring: bool,
    /// Decoding it off the socket (Redis's `loading` starts there).
    pub loading: bool,
    pub total: i64,
    pub read: i64,
    pub last_io_ms: i64,
    /// PSYNC got an answer other than FULLRESYNC or CONTINUE.
    pub psync_refused: bool,
    /// It failed after +FULLRESYNC: Redis reconnects at once then.
    pub failed_in_transfer: bool,
    /// The socket, for [`cancel`] to shut down.
    pub sock: Option<TcpStream>,
    /// The link was given up (REPLICAOF): its failure is no news.
    pub cancelled: bool,
    /// The primary's replication id from +FULLRESYNC.
    pub replid: String,
    pub result: Option<Result<Handoff, String>>,
}

pub type Shared = Arc<Mutex<Progress>>;

impl socket_load::Watch for Shared {
    fn started(&self) {
        if let Ok(mut g) = self.lock() {
            g.loading = true;
        }
    }

    fn read(&self, total: i64, read: u64) {
        if let Ok(mut g) = self.lock() {
            g.total = total;
            g.read = read as i64;
            g.last_io_ms = crate::server::unix_ms();
        }
    }

    fn cancelled(&self) -> bool {
        self.lock().is_ok_and(|g| g.cancelled)
    }
}

/// Give up a running handshake: its blocked reads and writes fail now.
pub fn cancel(p: &Shared) {
    if let Ok(mut g) = p.lock() {
        g.cancelled = true;
        if let Some(s) = g.sock.take() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Start the thread; its result appears in the returned progress.
pub fn spawn(p: LinkParams) -> Shared {
    let shared: Shared = Arc::default();
    let mine = shared.clone();
    std::thread::spawn(move || {
        let result = run(&p, &mine).map_err(|e| match e.kind() {
            _ if e.get_ref().is_some_and(|inner| inner.is::<Logged>()) => String::new(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => "Timeout connecting to the MASTER...".to_string(),
            _ => format!("Error condition on socket for SYNC: {e}"),
        });
        if let Ok(mut g) = mine.lock() {
            g.failed_in_transfer = g.transferring && result.is_err();
            g.transferring = false;
            g.loading = false;
            g.sock = None;
            g.result = Some(result);
        }
    });
    shared
}

fn connect(p: &LinkParams) -> io::Result<TcpStream> {
    use std::net::ToSocketAddrs;
    let addrs = (p.host.as_str(), p.port).to_socket_addrs()?;
    let mut last = io::Error::other("no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, p.timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The TLS session (handshake done on first use), or the plain socket.
fn secure(p: &LinkParams, sock: TcpStream) -> io::Result<LinkStream> {
    let Some(cfg) = &p.tls else { return Ok(LinkStream::Plain(sock)) };
    // Redis checks the chain, not the name: any name will do.
    let name = rustls::pki_types::ServerName::try_from(p.host.clone())
        .unwrap_or_else(|_| rustls::pki_types::ServerName::try_from("localhost").expect("valid name"));
    let conn = rustls::ClientConnection::new(cfg.clone(), name).map_err(io::Error::other)?;
    Ok(LinkStream::Tls(Box::new(rustls::StreamOwned::new(conn, sock))))
}

fn run(p: &LinkParams, progress: &Shared) -> io::Result<Handoff> {
    let sock = connect(p)?;
    if let Ok(mut g) = progress.lock() {
        if g.cancelled {
            return Err(io::Error::other("cancelled"));
        }
        g.sock = sock.try_clone().ok();
    }
    sock.set_read_timeout(Some(p.timeout))?;
    sock.set_write_timeout(Some(p.timeout))?;
    sock.set_nodelay(true)?;
    let mut r = BufReader::with_capacity(64 << 10, secure(p, sock)?);
    let mut ask = |args: &[&str]| -> io::Result<String> {
        let parts: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let mut buf = Vec::new();
        resp::encode_command(&mut buf, &parts);
        r.get_mut().write_all(&buf)?;
        r.get_mut().flush()?;
        read_line(&mut r)
    };
    let pong = ask(&["PING"])?;
    if pong.starts_with('-') && !pong.starts_with("-NOAUTH") && !pong.starts_with("-NOPERM") {
        return Err(io::Error::other(format!("Error reply to PING from master: '{pong}'")));
    }
    if let Some((user, pass)) = &p.auth {
        let reply = match user {
            Some(u) => ask(&["AUTH", u, pass])?,
            None => ask(&["AUTH", pass])?,
        };
        if reply.starts_with('-') {
            return Err(io::Error::other(format!("Unable to AUTH to MASTER: {reply}")));
        }
    }
    let port = p.listening_port.to_string();
    ask(&["REPLCONF", "listening-port", &port])?;
    if let Some(ip) = &p.announce_ip {
        ask(&["REPLCONF", "ip-address", ip])?;
    }
    ask(&["REPLCONF", "capa", "eof", "capa", "psync2"])?;
    let offset = p.psync_offset.to_string();
    let mut psync = vec!["PSYNC", &p.psync_id, &offset];
    if p.failover {
        psync.push("FAILOVER");
    }
    let reply = ask(&psync)?;
    let outcome = if let Some(rest) = reply.strip_prefix("+FULLRESYNC ") {
        let mut it = rest.split(' ');
        let replid = it.next().unwrap_or_default().to_string();
        if replid.len() != 40 || !replid.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(io::Error::other(format!("Bad replication id from master: {reply}")));
        }
        let offset = it.next().and_then(|o| o.parse().ok()).unwrap_or(0);
        // Redis's REPL_STATE_TRANSFER starts here (ROLE says "sync"), even
        // while a diskless primary's child has written nothing yet.
        if let Ok(mut g) = progress.lock() {
            g.transferring = true;
            g.last_io_ms = crate::server::unix_ms();
            g.replid = replid.clone();
        }
        let header = read_line(&mut r)?;
        let rdb = match &p.socket_load {
            Some(load) => Snapshot::Loaded(Box::new(socket_load::receive(&mut r, &header, load, progress)?)),
            None => Snapshot::File(receive_rdb(&mut r, &header, p, progress)?),
        };
        Outcome::Full { replid, offset, rdb }
    } else if let Some(rest) = reply.strip_prefix("+CONTINUE") {
        let id = rest.trim();
        Outcome::Continue { replid: (id.len() == 40).then(|| id.to_string()) }
    } else {
        if let Ok(mut g) = progress.lock() {
            g.psync_refused = true;
        }
        return Err(io::Error::other(format!("Unexpected reply to PSYNC from master: {reply}")));
    };
    let leftover = r.buffer().to_vec();
    let stream = r.into_inner();
    stream.socket().set_read_timeout(None)?;
    stream.socket().set_write_timeout(None)?;
    Ok(Handoff { stream, outcome, leftover })
}

/// One reply line (keepalive newlines skipped), without its CRLF.
fn read_line(r: &mut impl BufRead) -> io::Result<String> {
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "master closed the connection"));
        }
        let t = line.trim_end_matches(['\r', '\n']);
        if !t.is_empty() {
            return Ok(t.to_string());
        }
    }
}

/// Receive the snapshot into `dir/temp-<pid>.<n>.rdb`.
fn receive_rdb(r: &mut BufReader<LinkStream>, header: &str, p: &LinkParams, progress: &Shared) -> io::Result<PathBuf> {
    let path = p.dir.join(format!("temp-repl-{}.rdb", std::process::id()));
    let mut file = io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path)?);
    let note = |total: i64, read: i64| {
        if let Ok(mut g) = progress.lock() {
            g.transferring = true;
            g.total = total;
            g.read = read;
            g.last_io_ms = crate::server::unix_ms();
        }
    };
    if let Some(mark) = header.strip_prefix("$EOF:") {
        let mark = mark.as_bytes().to_vec();
        if mark.len() != 40 {
            return Err(io::Error::other("bad EOF mark from master"));
        }
        let mut tail: Vec<u8> = Vec::new();
        let mut read = 0i64;
        loop {
            let chunk = r.fill_buf()?;
            if chunk.is_empty() {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "master closed during the transfer"));
            }
            let (n, kept) = (chunk.len(), tail.len());
            tail.extend_from_slice(chunk);
            // The mark may straddle two reads; what follows it is stream.
            if let Some(at) = tail.windows(40).position(|w| w == mark.as_slice()) {
                file.write_all(&tail[..at])?;
                r.consume(at + 40 - kept);
                break;
            }
            r.consume(n);
            read += n as i64;
            note(0, read);
            if tail.len() > 40 {
                let cut = tail.len() - 40;
                file.write_all(&tail[..cut])?;
                tail.drain(..cut);
            }
        }
    } else if let Some(len) = header.strip_prefix('$').and_then(|l| l.parse::<i64>().ok()) {
        let mut left = len;
        let mut buf = vec![0u8; 64 << 10];
        while left > 0 {
            let want = buf.len().min(left as usize);
            let n = r.read(&mut buf[..want])?;
            if n == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "master closed during the transfer"));
            }
            file.write_all(&buf[..n])?;
            left -= n as i64;
            note(len, len - left);
        }
    } else {
        return Err(io::Error::other(format!("Bad protocol from MASTER, the first byte is not '$': {header}")));
    }
    file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(path)
}
