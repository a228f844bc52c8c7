//! `volley-floor`: the floor server of `volley_bench::floor`, started like
//! a Redis server: `--port N` (0: no TCP listener), `--unixsocket PATH`,
//! `--tls-port N` with `--tls-cert-file`, `--tls-key-file` and
//! `--tls-ca-cert-file`. Every other `--name value` pair is accepted and
//! ignored, so the test harness can start it as it starts the others.
use std::collections::HashMap;
use std::io;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::process::ExitCode;

use volley_bench::floor_io::{tls_config, Listener, TlsFiles};

fn listeners(opts: &HashMap<String, String>) -> io::Result<Vec<Listener>> {
    let opt = |name: &str| opts.get(name).cloned().unwrap_or_default();
    let port = |name: &str, default: &str| -> io::Result<u16> {
        let v = opts.get(name).map_or(default, String::as_str);
        v.parse().map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("--{name} needs a port number")))
    };
    let tcp = |p: u16| -> io::Result<TcpListener> {
        let l = TcpListener::bind(("127.0.0.1", p))?;
        l.set_nonblocking(true)?;
        Ok(l)
    };
    let mut out = Vec::new();
    let p = port("port", "6379")?;
    if p != 0 {
        out.push(Listener::Tcp(tcp(p)?));
    }
    let sock = opt("unixsocket");
    if !sock.is_empty() {
        let _ = std::fs::remove_file(&sock);
        let l = UnixListener::bind(&sock)?;
        l.set_nonblocking(true)?;
        out.push(Listener::Unix(l));
    }
    let tp = port("tls-port", "0")?;
    if tp != 0 {
        let files = TlsFiles { cert: opt("tls-cert-file"), key: opt("tls-key-file"), ca: opt("tls-ca-cert-file") };
        out.push(Listener::Tls(tcp(tp)?, tls_config(&files)?));
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts: HashMap<String, String> = args
        .chunks(2)
        .filter_map(|kv| Some((kv[0].strip_prefix("--")?.to_string(), kv.get(1).cloned().unwrap_or_default())))
        .collect();
    match listeners(&opts).and_then(volley_bench::floor::serve) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("volley-floor: {e}");
            ExitCode::FAILURE
        }
    }
}
