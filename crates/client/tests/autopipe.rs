//! Auto-pipelining: 64 tasks × 1000 commands on one shared connection, each
//! task seeing its own replies, with fewer writes than commands; blocking
//! commands refused.

mod common;

use common::{runtime, Server};
use volley_client::{AutoPipelined, Error, ValueExt};

#[test]
fn sixty_four_tasks_share_one_connection() {
    for s in Server::both() {
        runtime().block_on(async {
            let ap = AutoPipelined::connect(&s.opts(), 4096).await.unwrap();
            let mut tasks = Vec::new();
            for t in 0..64 {
                let ap = ap.clone();
                tasks.push(tokio::spawn(async move {
                    let key = format!("task:{t}");
                    for i in 1..=500i64 {
                        assert_eq!(ap.incr(&key).await.unwrap(), i, "task {t} INCR {i}");
                        let got = ap.get(&key).await.unwrap();
                        assert_eq!(got, Some(i.to_string().into_bytes()), "task {t} GET {i}");
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
            let (commands, writes) = ap.counts();
            eprintln!("{}: {commands} commands in {writes} writes", s.name);
            assert_eq!(commands, 64 * 1000);
            assert!(writes < commands / 4, "{}: {writes} writes for {commands} commands", s.name);
        });
    }
}

#[test]
fn multi_thread_runtime_and_errors_stay_with_their_caller() {
    let s = Server::volley();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let ap = AutoPipelined::connect(&s.opts(), 1024).await.unwrap();
        ap.set("text", "abc").await.unwrap();
        let mut tasks = Vec::new();
        for t in 0..32 {
            let ap = ap.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..200 {
                    if (t + i) % 7 == 0 {
                        let e = ap.incr("text").await.unwrap_err();
                        assert_eq!(e.code(), Some("ERR"));
                    } else {
                        let v = ap.cmd(&["ECHO", &format!("{t}:{i}")]).await.unwrap();
                        assert_eq!(v.into_string().unwrap(), format!("{t}:{i}"));
                    }
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
}

#[test]
fn blocking_commands_need_a_dedicated_connection() {
    let s = Server::redis();
    runtime().block_on(async {
        let ap = AutoPipelined::connect(&s.opts(), 16).await.unwrap();
        assert!(matches!(ap.cmd(&["BLPOP", "q", "0"]).await, Err(Error::BlockingCommand(c)) if c == "BLPOP"));
        assert!(matches!(ap.cmd(&["MULTI"]).await, Err(Error::BlockingCommand(_))));
        let mut dedicated = ap.dedicated().await.unwrap();
        ap.cmd(&["RPUSH", "q", "x"]).await.unwrap();
        let v = dedicated.cmd(&["BLPOP", "q", "1"]).await.unwrap();
        assert_eq!(v.as_i64(), None);
        assert!(matches!(v, volley_client::Value::Array(ref a) if a.len() == 2));
    });
}

/// `GET kNN` as the client encodes it: 22 bytes, key at 17..20.
const GET_LEN: usize = 22;

/// A one-connection fake server: holds the first 64 GETs until all have
/// arrived and answers them in one write, then echoes each later read's GETs.
fn fake_server(listener: std::net::TcpListener, total: usize) -> std::thread::JoinHandle<()> {
    use std::io::{Read, Write};
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
        let (mut buf, mut seen, mut chunk) = (Vec::new(), 0, [0u8; 4096]);
        while seen < total {
            let n = s.read(&mut chunk).unwrap();
            assert!(n > 0, "client closed after {seen} commands");
            buf.extend_from_slice(&chunk[..n]);
            let ready = buf.len() / GET_LEN;
            if seen == 0 && ready < 64 {
                continue; // first round: answer all 64 at once
            }
            let mut out = Vec::new();
            for cmd in buf.drain(..ready * GET_LEN).collect::<Vec<_>>().chunks(GET_LEN) {
                assert_eq!(&cmd[..17], b"*2\r\n$3\r\nGET\r\n$3\r\n");
                out.extend_from_slice(b"$3\r\n");
                out.extend_from_slice(&cmd[17..22]);
            }
            s.write_all(&out).unwrap();
            seen += ready;
        }
    })
}

#[test]
fn replies_from_one_read_are_answered_in_chunks() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = fake_server(listener, 128);
    runtime().block_on(async {
        let opts = volley_client::ConnectOptions::new("127.0.0.1", port);
        let ap = AutoPipelined::connect(&opts, 4096).await.unwrap();
        let tasks: Vec<_> = (0..64)
            .map(|t| {
                let ap = ap.clone();
                tokio::spawn(async move {
                    let key = format!("k{t:02}");
                    for _ in 0..2 {
                        assert_eq!(ap.get(&key).await.unwrap(), Some(key.clone().into_bytes()));
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let (commands, writes) = ap.counts();
        assert_eq!(commands, 128);
        // Round one is a single write of 64. The 64 replies of round two come
        // in one read; answering them all before yielding would send the 64
        // follow-ups in one write (2 writes in all), chunking sends them in
        // 64 / ANSWER_CHUNK writes.
        assert!(writes > (64 / volley_client::ANSWER_CHUNK) as u64, "{writes} writes for {commands} commands");
    });
    server.join().unwrap();
}
