//! The coalescing writer: per-key order across merges, per-caller outcomes,
//! errors reaching only the callers that caused them, flush triggers.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{runtime, Server};
use volley_client::{aio, Coalescer, CoalescerConfig, Error, Value, ValueExt};

async fn coalescer(s: &Server, cfg: CoalescerConfig) -> (Coalescer, aio::Connection) {
    let conn = aio::Connection::connect(&s.opts()).await.unwrap();
    let check = aio::Connection::connect(&s.opts()).await.unwrap();
    (Coalescer::new(conn, cfg), check)
}

fn slow_age() -> CoalescerConfig {
    // Everything below is submitted well within one flush window.
    CoalescerConfig { max_age: Duration::from_millis(200), ..Default::default() }
}

#[test]
fn set_del_set_on_one_key_keeps_order() {
    for s in Server::both() {
        runtime().block_on(async {
            let (c, mut check) = coalescer(&s, slow_age()).await;
            let t1 = c.set("k", "1").await.unwrap();
            let t2 = c.del("k").await.unwrap();
            let t3 = c.set("k", "2").await.unwrap();
            let t4 = c.del("never").await.unwrap();
            c.flush().await.unwrap();
            t1.await.unwrap();
            assert!(t2.await.unwrap(), "{}: DEL k saw the first SET", s.name);
            t3.await.unwrap();
            assert!(!t4.await.unwrap());
            assert_eq!(check.cmd(&["GET", "k"]).await.unwrap(), Value::Bulk(b"2".to_vec()), "{}", s.name);
        });
    }
}

#[test]
fn interleavings_on_several_keys_match_sequential_execution() {
    for s in Server::both() {
        runtime().block_on(async {
            let (c, mut check) = coalescer(&s, slow_age()).await;
            let keys = ["a", "b", "c", "d"];
            let mut expect: std::collections::HashMap<&str, Option<String>> = Default::default();
            let mut del_tickets = Vec::new();
            // A fixed pseudo-random interleaving of SET / DEL / SET over 4 keys.
            let mut x: u32 = 12345;
            for i in 0..400 {
                x = x.wrapping_mul(1103515245).wrapping_add(12345);
                let k = keys[(x >> 16) as usize % 4];
                if (x >> 8).is_multiple_of(3) {
                    let existed = expect.get(k).cloned().flatten().is_some();
                    del_tickets.push((c.del(k).await.unwrap(), existed));
                    expect.insert(k, None);
                } else {
                    drop(c.set(k, i.to_string()).await.unwrap()); // fire and forget
                    expect.insert(k, Some(i.to_string()));
                }
            }
            c.flush().await.unwrap();
            for (t, existed) in del_tickets {
                assert_eq!(t.await.unwrap(), existed, "{}: DEL outcome", s.name);
            }
            for k in keys {
                let got = check.cmd(&["GET", k]).await.unwrap().into_string();
                assert_eq!(got, expect.get(k).cloned().flatten(), "{}: key {k}", s.name);
            }
        });
    }
}

#[test]
fn incr_callers_get_their_own_values_and_errors() {
    for s in Server::both() {
        runtime().block_on(async {
            let (c, mut check) = coalescer(&s, slow_age()).await;
            check.cmd(&["SET", "text", "abc"]).await.unwrap();
            check.cmd(&["SET", "n", "100"]).await.unwrap();
            let t1 = c.incrby("n", 5).await.unwrap();
            let bad = c.incr("text").await.unwrap();
            let t2 = c.incr("n").await.unwrap();
            let t3 = c.incrby("n", 10).await.unwrap();
            let other = c.set("plain", "v").await.unwrap();
            c.flush().await.unwrap();
            assert_eq!((t1.await.unwrap(), t2.await.unwrap(), t3.await.unwrap()), (105, 106, 116), "{}", s.name);
            match bad.await {
                Err(Error::Server(e)) => assert!(e.message.contains("not an integer"), "{}: {e}", s.name),
                other => panic!("{}: expected ERR, got {other:?}", s.name),
            }
            other.await.unwrap();
            assert_eq!(check.cmd(&["GET", "n"]).await.unwrap().as_i64(), Some(116));
        });
    }
}

#[test]
fn overflowing_merged_incrby_is_reissued_per_op() {
    for s in Server::both() {
        runtime().block_on(async {
            let (c, mut check) = coalescer(&s, slow_age()).await;
            let top = i64::MAX;
            check.cmd(&["SET", "o", &(top - 10).to_string()]).await.unwrap();
            // Merged: INCRBY o 106 overflows; alone, only the middle op does.
            let ok = c.incrby("o", 5).await.unwrap();
            let overflow = c.incrby("o", 100).await.unwrap();
            let ok2 = c.incrby("o", 1).await.unwrap();
            c.flush().await.unwrap();
            assert_eq!(ok.await.unwrap(), top - 5, "{}", s.name);
            assert!(matches!(overflow.await, Err(Error::Server(_))), "{}", s.name);
            assert_eq!(ok2.await.unwrap(), top - 4, "{}", s.name);
        });
    }
}

#[test]
fn wrongtype_reaches_only_the_sadd_caller() {
    let s = Server::redis();
    runtime().block_on(async {
        let (c, mut check) = coalescer(&s, slow_age()).await;
        let set = c.set("str", "v").await.unwrap();
        let other_set = c.set("x", "1").await.unwrap();
        let sadd_bad = c.sadd("str", "m").await.unwrap();
        let sadd_ok = c.sadd("s", "m1").await.unwrap();
        let sadd_ok2 = c.sadd("s", "m2").await.unwrap();
        let push1 = c.rpush("l", "a").await.unwrap();
        let push2 = c.rpush("l", "b").await.unwrap();
        let hset = c.hset("h", "f", "v").await.unwrap();
        let unlink = c.unlink("x").await.unwrap();
        c.flush().await.unwrap();
        set.await.unwrap();
        other_set.await.unwrap();
        assert_eq!(sadd_bad.await.unwrap_err().code(), Some("WRONGTYPE"));
        sadd_ok.await.unwrap();
        sadd_ok2.await.unwrap();
        assert_eq!((push1.await.unwrap(), push2.await.unwrap()), (1, 2));
        hset.await.unwrap();
        assert!(unlink.await.unwrap());
        assert_eq!(check.cmd(&["SCARD", "s"]).await.unwrap().as_i64(), Some(2));
    });
}

#[test]
fn age_trigger_flushes_without_explicit_flush() {
    let s = Server::volley();
    runtime().block_on(async {
        let (c, mut check) = coalescer(&s, CoalescerConfig::default()).await;
        let t = c.set("aged", "yes").await.unwrap();
        tokio::time::timeout(Duration::from_secs(2), t).await.expect("flushed by age").unwrap();
        assert_eq!(check.cmd(&["GET", "aged"]).await.unwrap(), Value::Bulk(b"yes".to_vec()));
    });
}

#[test]
fn many_concurrent_submitters_with_bounded_buffer() {
    let s = Server::volley();
    runtime().block_on(async {
        let cfg = CoalescerConfig { max_args: 500, max_ops: 1000, ..Default::default() };
        let (c, mut check) = coalescer(&s, cfg).await;
        let c = Arc::new(c);
        let mut tasks = Vec::new();
        for t in 0..16 {
            let c = c.clone();
            tasks.push(tokio::spawn(async move {
                let mut last = 0;
                for i in 0..1000 {
                    drop(c.set(format!("t{t}:{i}"), "v").await.unwrap());
                    last = c.incr(format!("ctr{t}")).await.unwrap().await.unwrap();
                }
                last
            }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap(), 1000);
        }
        c.flush().await.unwrap();
        assert_eq!(check.cmd(&["DBSIZE"]).await.unwrap().as_i64(), Some(16 * 1000 + 16));
    });
}

#[test]
fn merges_show_up_as_few_commands_on_the_server() {
    let s = Server::redis();
    runtime().block_on(async {
        // Only the explicit flush() sends: no timing dependence.
        let cfg = CoalescerConfig { max_age: Duration::from_secs(600), ..Default::default() };
        let (c, mut check) = coalescer(&s, cfg).await;
        check.cmd(&["CONFIG", "RESETSTAT"]).await.unwrap();
        let mut tickets = Vec::new();
        for i in 0..1000 {
            drop(c.set(format!("m{i}"), "v").await.unwrap());
            tickets.push(c.incr("hits").await.unwrap());
        }
        c.flush().await.unwrap();
        let values: Vec<i64> = await_all(tickets).await;
        assert_eq!(values, (1..=1000).collect::<Vec<_>>());
        let info = check.cmd(&["INFO", "commandstats"]).await.unwrap().into_string().unwrap();
        let calls = |name: &str| {
            info.lines()
                .find(|l| l.starts_with(&format!("cmdstat_{name}:")))
                .and_then(|l| l.split("calls=").nth(1)?.split(',').next()?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        assert_eq!((calls("mset"), calls("incrby"), calls("set"), calls("incr")), (1, 1, 0, 0), "{info}");
    });
}

async fn await_all(tickets: Vec<volley_client::Ticket<i64>>) -> Vec<i64> {
    let mut out = Vec::new();
    for t in tickets {
        out.push(t.await.unwrap());
    }
    out
}
