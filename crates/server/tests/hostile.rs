//! Hostile input: oversized lengths, nested aggregates in requests, huge
//! offsets, deep nesting in Lua's cjson/cmsgpack, random bytes and
//! slow-loris connections. Each must leave the server up, answer with
//! redis-server 7.0.15's error where it has one (texts taken from it), and
//! close at most the offending connection.
mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;

/// Sends raw bytes on a fresh connection and returns what comes back
/// before the server closes it or goes quiet for `quiet`.
fn exchange(port: u16, bytes: &[u8], quiet: Duration) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(quiet)).unwrap();
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

fn still_serving(srv: &TestServer) {
    assert_eq!(srv.client().cmd(&["PING"]), simple("PONG"));
}

fn starts_with_err(f: &Frame, prefix: &str) -> bool {
    matches!(f, Frame::Error(e) if e.starts_with(prefix.as_bytes()))
}

#[test]
fn protocol_errors_close_only_the_offender() {
    let srv = TestServer::start(&[]);
    let q = Duration::from_millis(500);
    let cases: &[(&[u8], &[u8])] = &[
        (b"*1\r\n$600000000\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
        (b"*1\r\n*1\r\n", b"-ERR Protocol error: expected '$', got '*'\r\n"),
        (b"*1\r\n%1\r\n", b"-ERR Protocol error: expected '$', got '%'\r\n"),
        (b"*3000000000\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
        (b"*1\r\n$-5\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    ];
    let mut bystander = srv.client();
    for (input, want) in cases {
        assert_eq!(exchange(srv.port, input, q), *want, "input {:?}", String::from_utf8_lossy(input));
        assert_eq!(bystander.cmd(&["PING"]), simple("PONG"));
    }
    // An inline request without a newline may not grow past 64 KiB.
    let big = vec![b'a'; 70 * 1024];
    assert_eq!(exchange(srv.port, &big, q), b"-ERR Protocol error: too big inline request\r\n");
    still_serving(&srv);
}

#[test]
fn huge_offsets_and_lengths_get_redis_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(
        c.cmd(&["SETRANGE", "k", "536870912", "x"]),
        err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    );
    assert_eq!(c.cmd(&["SETBIT", "k", "4294967296", "1"]), err("ERR bit offset is not an integer or out of range"));
    assert_eq!(
        c.cmd(&["BITFIELD", "k", "SET", "u8", "4294967296", "1"]),
        err("ERR bit offset is not an integer or out of range")
    );
    assert_eq!(c.cmd(&["SETBIT", "k", "-1", "1"]), err("ERR bit offset is not an integer or out of range"));
    assert!(starts_with_err(&c.cmd(&["LPOP", "k", "-1"]), "ERR value is out of range"));
    assert!(starts_with_err(&c.cmd(&["SRANDMEMBER", "k", "-9223372036854775808"]), "ERR value is out of range"));
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0));
    still_serving(&srv);
}

#[test]
fn lua_deep_nesting_and_string_rep_stay_bounded() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let r = c.cmd(&["EVAL", "return cjson.decode(string.rep('[', 100000))", "0"]);
    assert!(
        starts_with_err(&r, "ERR user_script:1: Found too many nested data structures (1001) at character 1001"),
        "{r:?}"
    );
    let deep = "local t = {} local c = t for i=1,10000 do c[1] = {} c = c[1] end return #cmsgpack.pack(t)";
    assert!(matches!(c.cmd(&["EVAL", deep, "0"]), Frame::Integer(n) if n > 0));
    // Lua 5.1 takes the count as a C int: 2^31 wraps to an empty string,
    // as on redis-server.
    assert_eq!(c.cmd(&["EVAL", "return string.rep('x', 2^31)", "0"]), bulk(""));
    still_serving(&srv);
}

#[test]
fn random_byte_streams_leave_the_server_up() {
    let srv = TestServer::start(&[]);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..64 {
        let len = 1 + (next() % 4096) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        // Half the rounds look like RESP so the parser goes deeper.
        if round % 2 == 0 {
            bytes.splice(0..0, b"*3\r\n$3\r\nSET\r\n".iter().copied());
        }
        let _ = exchange(srv.port, &bytes, Duration::from_millis(50));
    }
    still_serving(&srv);
}

#[test]
fn slow_loris_connections_do_not_stall_others() {
    let srv = TestServer::start(&[]);
    let mut loris: Vec<TcpStream> = (0..100).map(|_| TcpStream::connect(("127.0.0.1", srv.port)).unwrap()).collect();
    let start = Instant::now();
    for step in 0..5 {
        for s in &mut loris {
            // One byte of a never-finished command per round.
            let _ = s.write_all(&[b"*2\r\n$3"[step % 6]]);
        }
        let t = Instant::now();
        still_serving(&srv);
        assert!(t.elapsed() < Duration::from_secs(2), "PING took {:?} among slow clients", t.elapsed());
    }
    assert!(start.elapsed() < Duration::from_secs(10));
    // The idle timeout closes them.
    let mut c = srv.client();
    assert_eq!(c.cmd(&["CONFIG", "SET", "timeout", "1"]), ok());
    std::thread::sleep(Duration::from_millis(2500));
    let mut buf = [0u8; 16];
    loris[0].set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    assert_eq!(loris[0].read(&mut buf).unwrap_or(0), 0, "idle half-sent client was not closed");
}
