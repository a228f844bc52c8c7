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
