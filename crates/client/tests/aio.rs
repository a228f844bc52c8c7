//! The async connection and pipeline: handles, chunked sync with a small
//! in-flight bound, MULTI/EXEC and EVALSHA fallback through the async path.

mod common;

use common::{runtime, Server};
use volley_client::{aio, Error, Script, Value, ValueExt};

#[test]
fn async_pipeline_chunks_and_fills_handles() {
    for s in Server::both() {
        runtime().block_on(async {
            let mut opts = s.opts();
            opts.chunk_size = 100;
            opts.max_inflight_bytes = 2048;
            let mut c = aio::Connection::connect(&opts).await.unwrap();
            c.cmd(&["DEL", "ak"]).await.unwrap();
            let mut p = c.pipeline();
            let first = p.incr("ak");
            for _ in 0..9_998 {
                p.queue(&["INCR", "ak"]);
            }
            let last = p.incr("ak");
            assert!(matches!(last.get(), Err(Error::PipelineNotSynced)));
            p.sync().await.unwrap();
            assert_eq!((first.get().unwrap(), last.get().unwrap()), (1, 10_000), "{}", s.name);
            let mut p = c.pipeline();
            for i in 0..1000 {
                p.queue(&["ECHO", &i.to_string()]);
            }
            let all = p.sync_and_return_all().await.unwrap();
            let ok = all.into_iter().enumerate().all(|(i, r)| r.unwrap().into_string() == Some(i.to_string()));
            assert!(ok, "{}: replies in order", s.name);
        });
    }
}

#[test]
fn async_multi_exec_and_evalsha() {
    let s = Server::redis();
    runtime().block_on(async {
        let mut c = aio::Connection::connect(&s.opts()).await.unwrap();
        c.cmd(&["SCRIPT", "FLUSH"]).await.unwrap();
        let script = Script::new("return tonumber(ARGV[1]) * 2");
        let mut p = c.pipeline();
        p.multi().unwrap();
        let a = p.set("tx", "1");
        let b = p.incr("tx");
        let exec = p.exec().unwrap();
        let e = p.evalsha(&script, &[] as &[&str], &["21"]);
        let mut seen = Vec::new();
        p.sync_streaming(|i, r| seen.push((i, r.is_ok()))).await.unwrap();
        a.get().unwrap();
        assert_eq!(b.get().unwrap(), 2);
        assert!(matches!(exec.get().unwrap(), Value::Array(_)));
        assert_eq!(e.get().unwrap().as_i64(), Some(42));
        // MULTI, SET, INCR, EXEC, EVALSHA (NOSCRIPT), then EVALSHA again after the retry.
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[5], (4, true));
    });
}
