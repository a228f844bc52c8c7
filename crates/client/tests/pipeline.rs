//! Explicit pipelines against redis-server and Volley: handles, the
//! not-synced error, the seed's 5000 INCRs, MULTI/EXEC, EVALSHA fallback,
//! connection options.

mod common;

use common::Server;
use volley_client::{ConnectOptions, Connection, Error, Script, Value, ValueExt};

#[test]
fn handles_fail_before_sync_and_resolve_after() {
    for s in Server::both() {
        let mut c = s.connect();
        c.cmd(&["DEL", "k"]).unwrap();
        let mut p = c.pipeline();
        let handles: Vec<_> = (0..5).map(|_| p.incr("k")).collect();
        assert!(matches!(handles[0].get(), Err(Error::PipelineNotSynced)), "{}", s.name);
        let g = p.get("k");
        let bad = p.cmd(&["INCRBY", "k", "notanumber"]);
        p.sync().unwrap();
        let got: Vec<i64> = handles.iter().map(|h| h.get().unwrap()).collect();
        assert_eq!(got, vec![1, 2, 3, 4, 5], "{}", s.name);
        assert_eq!(g.get().unwrap(), Some(b"5".to_vec()));
        match bad.get() {
            Err(Error::Server(e)) => assert_eq!(e.code, "ERR", "{}: {e}", s.name),
            other => panic!("{}: expected server error, got {other:?}", s.name),
        }
    }
}

#[test]
fn seed_5000_incrs_pipelined() {
    for s in Server::both() {
        let mut c = s.connect();
        c.cmd(&["DEL", "KVStore-Tanghan"]).unwrap();
        let mut p = c.pipeline();
        for _ in 0..5000 {
            p.incr("KVStore-Tanghan");
        }
        p.sync().unwrap();
        drop(p);
        let v = c.cmd(&["GET", "KVStore-Tanghan"]).unwrap();
        assert_eq!(v.as_i64(), Some(5000), "{}", s.name);
    }
}

#[test]
fn sync_and_return_all_gives_every_reply_in_order() {
    for s in Server::both() {
        let mut c = s.connect();
        c.cmd(&["DEL", "KVStore-Test1"]).unwrap();
        let mut p = c.pipeline();
        for _ in 0..5 {
            p.incr("KVStore-Test1");
        }
        p.queue(&["GET", "KVStore-Test1"]);
        let all = p.sync_and_return_all().unwrap();
        let ints: Vec<i64> = all[..5].iter().map(|r| r.as_ref().unwrap().as_i64().unwrap()).collect();
        assert_eq!(ints, vec![1, 2, 3, 4, 5]);
        assert_eq!(all[5].as_ref().unwrap(), &Value::Bulk(b"5".to_vec()));
    }
}

#[test]
fn multi_exec_inside_pipeline() {
    // Volley has no MULTI/EXEC yet.
    {
        let s = Server::redis();
        let mut c = s.connect();
        c.cmd(&["DEL", "m", "n"]).unwrap();
        let mut p = c.pipeline();
        let before = p.incr("m");
        p.multi().unwrap();
        let a = p.incr("m");
        let b = p.set("n", "x");
        let d = p.get("n");
        let exec = p.exec().unwrap();
        let after = p.incr("m");
        assert!(matches!(a.get(), Err(Error::PipelineNotSynced)));
        p.sync().unwrap();
        assert_eq!(before.get().unwrap(), 1, "{}", s.name);
        assert_eq!(a.get().unwrap(), 2, "{}", s.name);
        b.get().unwrap();
        assert_eq!(d.get().unwrap(), Some(b"x".to_vec()));
        assert!(matches!(exec.get().unwrap(), Value::Array(v) if v.len() == 3));
        assert_eq!(after.get().unwrap(), 3);
        assert!(p.exec().is_err(), "EXEC without MULTI is a usage error");
    }
}

#[test]
fn evalsha_loads_script_on_noscript_and_retries() {
    let s = Server::redis();
    let mut c = s.connect();
    c.cmd(&["SCRIPT", "FLUSH"]).unwrap();
    let script = Script::new("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    c.cmd(&["SET", "e", "10"]).unwrap();
    let mut p = c.pipeline();
    let h1 = p.evalsha(&script, &["e"], &["5"]);
    let h2 = p.evalsha(&script, &["e"], &["1"]);
    let all = p.sync_and_return_all().unwrap();
    assert_eq!(h1.get().unwrap().as_i64(), Some(15));
    assert_eq!(h2.get().unwrap().as_i64(), Some(16));
    assert_eq!(all[1].as_ref().unwrap().as_i64(), Some(16));
    // Loaded now: no retry needed.
    let mut p = c.pipeline();
    let h3 = p.evalsha(&script, &["e"], &["4"]);
    p.sync().unwrap();
    assert_eq!(h3.get().unwrap().as_i64(), Some(20));
}

#[test]
fn evalsha_error_surfaces_when_server_lacks_scripting() {
    let s = Server::volley();
    let mut c = s.connect();
    let script = Script::new("return 1");
    let mut p = c.pipeline();
    let h = p.evalsha(&script, &[] as &[&str], &[] as &[&str]);
    let ping = p.ping();
    p.sync().unwrap();
    assert_eq!(ping.get().unwrap(), "PONG");
    match h.get() {
        Err(Error::Server(e)) => assert!(!e.code.is_empty()),
        Ok(v) => assert_eq!(v.as_i64(), Some(1), "volley has scripting after all"),
        Err(e) => panic!("unexpected {e}"),
    }
}

#[test]
fn server_errors_carry_their_code() {
    for s in Server::both() {
        let mut c = s.connect();
        c.cmd(&["SET", "str", "v"]).unwrap();
        let err = c.cmd(&["INCR", "str"]).unwrap_err();
        assert_eq!(err.code(), Some("ERR"), "{}: {err}", s.name);
        assert!(matches!(&err, Error::Server(e) if e.message.contains("not an integer")), "{err}");
    }
    let s = Server::redis();
    let mut c = s.connect();
    c.cmd(&["SET", "str", "v"]).unwrap();
    let err = c.cmd(&["LPUSH", "str", "x"]).unwrap_err();
    assert_eq!(err.code(), Some("WRONGTYPE"), "{err}");
}

#[test]
fn connect_options_select_db_and_resp3() {
    let s = Server::redis();
    let mut opts = s.opts();
    opts.db = 3;
    opts.protocol = 3;
    let mut c = Connection::connect(&opts).unwrap();
    c.cmd(&["SET", "dbk", "v"]).unwrap();
    assert!(matches!(c.cmd(&["HGETALL", "nohash"]).unwrap(), Value::Map(_)), "RESP3 map reply");
    let mut c0 = Connection::connect(&ConnectOptions::new("127.0.0.1", s.port)).unwrap();
    assert_eq!(c0.cmd(&["EXISTS", "dbk"]).unwrap().as_i64(), Some(0));
    c0.cmd(&["SELECT", "3"]).unwrap();
    assert_eq!(c0.cmd(&["EXISTS", "dbk"]).unwrap().as_i64(), Some(1));
}

#[test]
fn password_is_sent_with_auth() {
    let s = Server::redis();
    let mut c = s.connect();
    c.cmd(&["CONFIG", "SET", "requirepass", "sekrit"]).unwrap();
    let mut opts = s.opts();
    assert!(Connection::connect(&opts).unwrap().cmd(&["PING"]).is_err());
    opts.password = Some("sekrit".into());
    assert_eq!(Connection::connect(&opts).unwrap().cmd(&["PING"]).unwrap().into_string().unwrap(), "PONG");
    opts.protocol = 3;
    assert_eq!(Connection::connect(&opts).unwrap().cmd(&["PING"]).unwrap().into_string().unwrap(), "PONG");
}

#[test]
fn queued_commands_keep_their_first_key() {
    let s = Server::redis();
    let mut c = s.connect();
    let mut p = c.pipeline();
    p.set("alpha", "1");
    p.ping();
    p.cmd(&["EVALSHA", "abc", "2", "k1", "k2", "x"]);
    let keys: Vec<Option<Vec<u8>>> = p.commands().map(|q| q.key.map(<[u8]>::to_vec)).collect();
    assert_eq!(keys, vec![Some(b"alpha".to_vec()), None, Some(b"k1".to_vec())]);
}

#[test]
fn sync_refuses_an_open_multi_block() {
    let s = Server::redis();
    let mut c = s.connect();
    let mut p = c.pipeline();
    p.multi().unwrap();
    p.incr("x");
    assert!(matches!(p.sync(), Err(Error::Usage(_))));
    drop(p);
    assert_eq!(c.cmd(&["PING"]).unwrap().into_string().unwrap(), "PONG", "connection still usable");
}

#[test]
fn streaming_pipeline_handles_multi_across_chunks_and_evalsha() {
    let s = Server::redis();
    let mut c = s.connect();
    c.cmd(&["SCRIPT", "FLUSH"]).unwrap();
    c.cmd(&["DEL", "sx"]).unwrap();
    c.set_chunk_size(3);
    let script = Script::new("return 7");
    let mut n = 0usize;
    let mut count = |_: usize, _: volley_client::Result<Value>| n += 1;
    let mut p = c.streaming_pipeline();
    let h0 = p.incr("sx");
    p.stream_into(&mut count).unwrap();
    p.multi().unwrap();
    let inside: Vec<_> = (0..7).map(|_| p.incr("sx")).collect();
    for _ in 0..7 {
        p.stream_into(&mut count).unwrap();
    }
    let exec = p.exec().unwrap();
    let e = p.evalsha(&script, &[] as &[&str], &[] as &[&str]);
    p.finish(&mut count).unwrap();
    drop(p);
    assert_eq!(h0.get().unwrap(), 1);
    let got: Vec<i64> = inside.iter().map(|h| h.get().unwrap()).collect();
    assert_eq!(got, (2..=8).collect::<Vec<_>>());
    assert!(matches!(exec.get().unwrap(), Value::Array(a) if a.len() == 7));
    assert_eq!(e.get().unwrap().as_i64(), Some(7));
    assert_eq!(n, 1 + 1 + 7 + 1 + 1 + 1, "every reply, plus the EVALSHA retry");
}

#[test]
fn io_errors_are_not_server_errors() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = Connection::connect(&ConnectOptions::new("127.0.0.1", port)).err().expect("nothing listens there");
    assert!(matches!(err, Error::Io(_)), "{err}");
    assert_eq!(err.code(), None);
}

#[test]
fn large_array_reply_arrives_whole() {
    let s = Server::redis();
    let mut c = s.connect();
    let mut p = c.streaming_pipeline();
    let mut ignore = |_: usize, r: volley_client::Result<Value>| assert!(r.is_ok());
    for i in 0..200_000 {
        p.queue(&["RPUSH", "big", &format!("element-{i}")]);
        p.stream_into(&mut ignore).unwrap();
    }
    p.finish(&mut ignore).unwrap();
    drop(p);
    match c.cmd(&["LRANGE", "big", "0", "-1"]).unwrap() {
        Value::Array(items) => {
            assert_eq!(items.len(), 200_000);
            assert_eq!(items[199_999], Value::Bulk(b"element-199999".to_vec()));
        }
        other => panic!("expected array, got {other:?}"),
    }
}

#[test]
fn panicking_callback_does_not_hang_the_writer() {
    let s = Server::volley();
    let mut c = s.connect();
    c.set_chunk_size(10);
    c.set_max_inflight_bytes(200);
    let mut p = c.pipeline();
    for _ in 0..100_000 {
        p.queue(&["PING"]);
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.sync_streaming(|i, _| assert!(i < 50, "stop here")).unwrap();
    }));
    assert!(r.is_err(), "the callback's panic propagates instead of hanging");
}
