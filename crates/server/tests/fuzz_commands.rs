//! Fuzzing the request parser and the command layer against a live server:
//! proptest draws commands (names from the corpus, arguments mixing
//! boundary numbers, negative counts, huge offsets, binary junk) and
//! mutated raw RESP frames, sends them pipelined, and checks that every
//! command gets exactly one well-formed reply and that the server keeps
//! serving. Bounded for CI: a fixed number of cases (`FUZZ_CASES`, default
//! 1000, about a second) of up to 32 commands each. The seed corpus is
//! `tests/fixtures/fuzz_corpus.txt` (one command per line); proptest keeps
//! any failing case in `tests/fuzz_commands.proptest-regressions`.
mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::*;
use proptest::prelude::*;

fn corpus() -> Vec<Vec<String>> {
    let text = include_str!("fixtures/fuzz_corpus.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

fn hostile_arg() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"-1".to_vec()),
        Just(b"0".to_vec()),
        Just(b"-9223372036854775808".to_vec()),
        Just(b"9223372036854775807".to_vec()),
        Just(b"4294967296".to_vec()),
        Just(b"536870912".to_vec()),
        Just(b"nan".to_vec()),
        Just(b"-inf".to_vec()),
        Just(b"k".to_vec()),
        Just(Vec::new()),
        proptest::collection::vec(any::<u8>(), 0..24),
        "[a-z0-9:*?\\[\\]-]{0,12}".prop_map(String::into_bytes),
    ]
}

/// A command from the corpus with arguments replaced, dropped or added.
fn command(corpus: Vec<Vec<String>>) -> impl Strategy<Value = Vec<Vec<u8>>> {
    (0..corpus.len(), proptest::collection::vec((0u8..4, hostile_arg()), 0..6)).prop_map(move |(i, edits)| {
        let mut argv: Vec<Vec<u8>> = corpus[i].iter().map(|a| a.as_bytes().to_vec()).collect();
        for (op, arg) in edits {
            let at = 1 + arg.len() % argv.len().max(1);
            match op {
                0 if at < argv.len() => argv[at] = arg,
                1 if at < argv.len() && argv.len() > 1 => {
                    argv.remove(at);
                }
                _ => argv.push(arg),
            }
        }
        argv
    })
}

fn encode(argv: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", argv.len()).into_bytes();
    for a in argv {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Reads one RESP reply; None if the connection closed or stalled.
fn read_reply(s: &mut TcpStream, buf: &mut Vec<u8>) -> Option<()> {
    loop {
        match resp::decode_frame(buf) {
            Ok(Some((_, used))) => {
                buf.drain(..used);
                return Some(());
            }
            Ok(None) => {}
            Err(_) => return None,
        }
        let mut chunk = [0u8; 65536];
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn cases() -> u32 {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

#[test]
fn random_commands_each_get_one_reply_and_the_server_survives() {
    let srv = TestServer::start(&["--enable-debug-command", "no", "--timeout", "0"]);
    let port = srv.port;
    let mut runner =
        proptest::test_runner::TestRunner::new(ProptestConfig { cases: cases(), ..ProptestConfig::default() });
    let strategy = proptest::collection::vec(command(corpus()), 1..32);
    runner
        .run(&strategy, |batch| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut wire = Vec::new();
            for argv in &batch {
                wire.extend(encode(argv));
            }
            s.write_all(&wire).unwrap();
            let mut buf = Vec::new();
            for (i, argv) in batch.iter().enumerate() {
                let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
                // Commands that end the connection or block may leave no reply.
                if matches!(name.as_str(), "quit" | "shutdown" | "blpop" | "brpop" | "subscribe" | "monitor") {
                    break;
                }
                prop_assert!(read_reply(&mut s, &mut buf).is_some(), "no reply to command {i}: {argv:?}");
            }
            prop_assert_eq!(Client::connect(port).cmd(&["PING"]), simple("PONG"));
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_frames_never_take_the_server_down() {
    let srv = TestServer::start(&[]);
    let port = srv.port;
    let mut runner =
        proptest::test_runner::TestRunner::new(ProptestConfig { cases: cases(), ..ProptestConfig::default() });
    let frame = command(corpus()).prop_map(|argv| encode(&argv));
    let strategy = (frame, proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8));
    runner
        .run(&strategy, |(mut bytes, flips)| {
            for (at, b) in flips {
                let i = at % bytes.len();
                bytes[i] = b;
            }
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
            let _ = s.write_all(&bytes);
            let mut sink = [0u8; 4096];
            let _ = s.read(&mut sink);
            prop_assert_eq!(Client::connect(port).cmd(&["PING"]), simple("PONG"));
            Ok(())
        })
        .unwrap();
}
