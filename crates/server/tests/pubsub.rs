//! Pub/Sub and MONITOR against the real binary: Redis 7.0.15's bytes for
//! confirmations and messages in RESP2 and RESP3, subscribed mode, pattern
//! and shard channels, introspection, slow subscribers.
mod common;

use std::time::{Duration, Instant};

use common::*;

fn sub(c: &mut Client, args: &[&str]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    resp::encode_command(&mut out, args);
    c.send(&out);
    (1..args.len().max(2)).map(|_| c.read_raw()).collect()
}

#[test]
fn resp2_subscribe_publish_unsubscribe_bytes() {
    let srv = TestServer::start(&[]);
    let mut s = srv.client();
    let mut p = srv.client();
    let got = sub(&mut s, &["SUBSCRIBE", "a", "b"]);
    assert_eq!(got[0], b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n");
    assert_eq!(got[1], b"*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n");
    assert_eq!(sub(&mut s, &["PSUBSCRIBE", "a*"])[0], b"*3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:3\r\n");
    assert_eq!(p.cmd(&["PUBLISH", "a", "hi"]), int(2));
    assert_eq!(s.read_raw(), b"*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nhi\r\n");
    assert_eq!(s.read_raw(), b"*4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$1\r\na\r\n$2\r\nhi\r\n");
    assert_eq!(p.cmd(&["PUBLISH", "nobody", "x"]), int(0));
    // Subscribed RESP2 connections: PING in message shape, others refused.
    assert_eq!(s.raw_cmd(&["PING"]), b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    assert_eq!(
        s.cmd(&["GET", "k"]),
        err("ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
    );
    assert_eq!(
        s.cmd(&["CLIENT", "ID"]),
        err("ERR Can't execute 'client|id': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
    );
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["UNSUBSCRIBE"]);
    s.send(&out);
    let left = [s.read_raw(), s.read_raw()];
    // Channels are left in hash order; the counts go down one by one.
    let heads = [b"*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n".as_slice(), b"*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n"];
    assert!(left[0].ends_with(b":2\r\n") && left[1].ends_with(b":1\r\n"), "{left:?}");
    assert!(heads.iter().all(|h| left.iter().any(|l| l.starts_with(h))), "{left:?}");
    assert_eq!(sub(&mut s, &["PUNSUBSCRIBE"])[0], b"*3\r\n$12\r\npunsubscribe\r\n$2\r\na*\r\n:0\r\n");
    assert_eq!(sub(&mut s, &["UNSUBSCRIBE"])[0], b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
    // Out of subscribed mode again.
    assert_eq!(s.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn resp3_pushes_ride_along_normal_replies() {
    let srv = TestServer::start(&[]);
    let mut s = srv.client();
    s.cmd(&["HELLO", "3"]);
    assert_eq!(sub(&mut s, &["SUBSCRIBE", "c"])[0], b">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
    assert_eq!(s.cmd(&["SET", "k", "v"]), ok());
    // Publishing to its own channel: the message comes before the reply.
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["PUBLISH", "c", "m"]);
    s.send(&out);
    assert_eq!(s.read_raw(), b">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n");
    assert_eq!(s.read_raw(), b":1\r\n");
    // Confirmations are pushes: CLIENT REPLY OFF does not drop them.
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["CLIENT", "REPLY", "OFF"]);
    resp::encode_command(&mut out, &["SUBSCRIBE", "d"]);
    resp::encode_command(&mut out, &["SET", "k", "w"]);
    resp::encode_command(&mut out, &["CLIENT", "REPLY", "ON"]);
    s.send(&out);
    assert_eq!(s.read_raw(), b">3\r\n$9\r\nsubscribe\r\n$1\r\nd\r\n:2\r\n");
    assert_eq!(s.read_raw(), b"+OK\r\n");
}

#[test]
fn shard_channels_and_introspection() {
    let srv = TestServer::start(&[]);
    let mut s = srv.client();
    let mut s2 = srv.client();
    let mut p = srv.client();
    assert_eq!(sub(&mut s, &["SSUBSCRIBE", "sh"])[0], b"*3\r\n$10\r\nssubscribe\r\n$2\r\nsh\r\n:1\r\n");
    sub(&mut s2, &["SUBSCRIBE", "news.a", "news.b"]);
    sub(&mut s2, &["PSUBSCRIBE", "news.*", "x?"]);
    assert_eq!(p.cmd(&["SPUBLISH", "sh", "v"]), int(1));
    assert_eq!(s.read_raw(), b"*3\r\n$8\r\nsmessage\r\n$2\r\nsh\r\n$1\r\nv\r\n");
    // A plain PUBLISH does not reach shard subscribers.
    assert_eq!(p.cmd(&["PUBLISH", "sh", "v"]), int(0));
    let Frame::Array(mut names) = p.cmd(&["PUBSUB", "CHANNELS", "news.*"]) else { panic!() };
    names.sort_by_key(|f| format!("{f:?}"));
    assert_eq!(names, vec![bulk("news.a"), bulk("news.b")]);
    assert_eq!(p.cmd(&["PUBSUB", "NUMSUB", "news.a", "zzz"]), arr(vec![bulk("news.a"), int(1), bulk("zzz"), int(0)]));
    assert_eq!(p.cmd(&["PUBSUB", "NUMPAT"]), int(2));
    assert_eq!(p.cmd(&["PUBSUB", "SHARDCHANNELS"]), arr(vec![bulk("sh")]));
    assert_eq!(p.cmd(&["PUBSUB", "SHARDNUMSUB", "sh"]), arr(vec![bulk("sh"), int(1)]));
    let Frame::Bulk(list) = p.cmd(&["CLIENT", "LIST"]) else { panic!() };
    let list = String::from_utf8(list).unwrap();
    assert!(list.contains("flags=P db=0 sub=2 psub=2 ssub=0"), "{list}");
    assert!(list.contains("flags=P db=0 sub=0 psub=0 ssub=1"), "{list}");
    let Frame::Bulk(info) = p.cmd(&["INFO", "stats"]) else { panic!() };
    let info = String::from_utf8(info).unwrap();
    assert!(info.contains("pubsub_channels:2\r\npubsub_patterns:2\r\npubsubshard_channels:1\r\n"), "{info}");
    // RESET leaves every subscription.
    assert_eq!(s2.cmd(&["RESET"]), simple("RESET"));
    assert_eq!(p.cmd(&["PUBSUB", "NUMPAT"]), int(0));
    assert_eq!(p.cmd(&["PUBLISH", "news.a", "x"]), int(0));
}

#[test]
fn monitor_shows_commands_as_redis_prints_them() {
    let srv = TestServer::start(&[]);
    let mut m = srv.client();
    let mut c = srv.client();
    assert_eq!(m.cmd(&["MONITOR"]), ok());
    c.cmd(&["SET", "k", "a \"b\"\n"]);
    c.cmd(&["AUTH", "secret"]);
    c.cmd(&["CONFIG", "GET", "port"]);
    c.cmd(&["GET", "k"]);
    let Frame::Simple(line) = m.read_frame() else { panic!() };
    let line = String::from_utf8(line).unwrap();
    let addr = line.split(['[', ']']).nth(1).unwrap().to_string();
    assert!(addr.starts_with("0 127.0.0.1:"), "{line}");
    assert!(line.ends_with(r#"] "SET" "k" "a \"b\"\n""#), "{line}");
    let Frame::Simple(line) = m.read_frame() else { panic!() };
    assert!(String::from_utf8(line).unwrap().ends_with(r#""AUTH" "(redacted)""#));
    // CONFIG is an admin command: not shown.
    let Frame::Simple(line) = m.read_frame() else { panic!() };
    assert!(String::from_utf8(line).unwrap().ends_with(r#""GET" "k""#));
}

#[test]
fn a_subscriber_that_stops_reading_is_disconnected() {
    let srv = TestServer::start(&["--client-output-buffer-limit", "pubsub 256kb 0 0"]);
    let mut s = srv.client();
    sub(&mut s, &["SUBSCRIBE", "c"]);
    s.stream.set_read_buffer_size(4096).ok();
    let mut p = srv.client();
    let payload = "x".repeat(64 << 10);
    let start = Instant::now();
    loop {
        p.cmd(&["PUBLISH", "c", &payload]);
        if p.cmd(&["PUBSUB", "NUMSUB", "c"]) == arr(vec![bulk("c"), int(0)]) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "subscriber never disconnected");
    }
    // The publisher was never held up, and the log names the limit.
    assert_eq!(p.cmd(&["PING"]), simple("PONG"));
    let log = srv.log();
    assert!(log.contains("client-output-buffer-limit pubsub hard"), "{log}");
}

trait ReadBuf {
    fn set_read_buffer_size(&self, n: usize) -> std::io::Result<()>;
}

impl ReadBuf for std::net::TcpStream {
    fn set_read_buffer_size(&self, n: usize) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let v = n as libc::c_int;
        // SAFETY: setsockopt reads one c_int from the valid pointer given.
        let rc = unsafe {
            libc::setsockopt(
                self.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                &v as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

#[test]
fn a_pipelined_burst_reaches_each_subscriber_in_a_few_writes() {
    use std::io::Write;
    let srv = TestServer::start(&[]);
    let subs: Vec<Client> = (0..50)
        .map(|_| {
            let mut s = srv.client();
            sub(&mut s, &["SUBSCRIBE", "c"]);
            s
        })
        .collect();
    let mut p = srv.client();
    assert_eq!(p.cmd(&["PUBSUB", "NUMSUB", "c"]), arr(vec![bulk("c"), int(50)]));
    let trace = traced(&srv, &["-c"], || {
        let readers: Vec<_> = subs
            .into_iter()
            .map(|mut s| {
                std::thread::spawn(move || {
                    for i in 0..1000 {
                        let want = format!("*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$4\r\n{i:04}\r\n");
                        assert_eq!(s.read_raw(), want.as_bytes(), "message {i}");
                    }
                })
            })
            .collect();
        let mut burst = Vec::new();
        for i in 0..1000 {
            resp::encode_command(&mut burst, &["PUBLISH", "c", &format!("{i:04}")]);
        }
        p.stream.write_all(&burst).unwrap();
        for _ in 0..1000 {
            assert_eq!(p.read_frame(), int(50));
        }
        for r in readers {
            r.join().unwrap();
        }
    });
    let (writes, _) = io_calls(&strace_counts(&trace));
    eprintln!("fan-out of 1,000 messages to 50 subscribers: {writes} write calls");
    // 50,000 messages: one write each would be 50,000 calls. Batched, each
    // subscriber gets its turn's messages in one write (a few more if the
    // socket buffer fills first).
    assert!(writes <= 50 * 2 + 10, "{writes} write calls for 50 subscribers");
}

#[test]
fn own_notifications_precede_the_reply_and_own_invalidations_follow_it() {
    // As Redis 7.0.15: a keyspace notification is written into the client's
    // buffer while its command runs; an invalidation of a key the client
    // itself wrote is deferred until after the reply.
    let srv = TestServer::start(&["--notify-keyspace-events", "KEA"]);
    let mut c = srv.client();
    c.cmd(&["HELLO", "3"]);
    c.cmd(&["SUBSCRIBE", "__keyevent@0__:set"]);
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\n");
    assert_eq!(c.read_raw(), b">3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$1\r\na\r\n");
    assert_eq!(c.read_raw(), b"+OK\r\n");
    assert_eq!(c.read_raw(), b"$1\r\n1\r\n");
    c.cmd(&["UNSUBSCRIBE"]);
    c.cmd(&["CLIENT", "TRACKING", "on"]);
    assert_eq!(c.cmd(&["GET", "a"]), Frame::Bulk(b"1".to_vec()));
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n2\r\n");
    assert_eq!(c.read_raw(), b"+OK\r\n");
    assert_eq!(c.read_raw(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n");
    // Its own FLUSHDB's null invalidation comes after EXEC's whole reply.
    c.cmd(&["MULTI"]);
    c.cmd(&["FLUSHDB"]);
    c.send(b"*1\r\n$4\r\nEXEC\r\n");
    assert_eq!(c.read_raw(), b"*1\r\n+OK\r\n");
    assert_eq!(c.read_raw(), b">2\r\n$10\r\ninvalidate\r\n_\r\n");
}
