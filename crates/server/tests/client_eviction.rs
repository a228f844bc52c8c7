//! Client eviction (`maxmemory-clients`) and the per-client memory figures
//! CLIENT LIST reports, against the real binary.
mod common;

use std::time::{Duration, Instant};

use common::*;

/// `field` of the CLIENT LIST line of the client named `name`, if any.
fn client_field(c: &mut Client, name: &str, field: &str) -> Option<i64> {
    let Frame::Bulk(text) = c.cmd(&["CLIENT", "LIST"]) else { panic!("CLIENT LIST is a bulk string") };
    let text = String::from_utf8(text).unwrap();
    let line = text.lines().find(|l| l.contains(&format!(" name={name} ")))?;
    let prefix = format!("{field}=");
    let value = line.split(' ').find_map(|kv| kv.strip_prefix(&prefix))?;
    Some(value.parse().unwrap())
}

fn info_field(c: &mut Client, field: &str) -> String {
    let Frame::Bulk(text) = c.cmd(&["INFO", "everything"]) else { panic!("INFO is a bulk string") };
    let text = String::from_utf8(text).unwrap();
    let prefix = format!("{field}:");
    let line = text.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("{field} in INFO"));
    line[prefix.len()..].to_string()
}

/// A client named `name` (the admin connection is protected by NO-EVICT).
fn named(srv: &TestServer, name: &str) -> Client {
    let mut c = srv.client();
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", name]), ok());
    c
}

/// Send the start of a command whose one argument is `size` bytes, of
/// which `sent` are sent: the argument waits in the query buffer.
fn partial_arg(c: &mut Client, size: usize, sent: usize) {
    let mut bytes = format!("*1\r\n${size}\r\n").into_bytes();
    bytes.resize(bytes.len() + sent, b'v');
    c.send(&bytes);
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn admin(srv: &TestServer) -> Client {
    let mut a = named(srv, "admin");
    assert_eq!(a.cmd(&["CLIENT", "NO-EVICT", "on"]), ok());
    a
}

#[test]
fn a_big_query_buffer_gets_its_client_evicted_and_counted() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    assert_eq!(a.cmd(&["CONFIG", "SET", "maxmemory-clients", "1mb"]), ok());
    let mut big = named(&srv, "big");
    partial_arg(&mut big, 3 << 20, 1_500_000);
    wait_until("big evicted", || client_field(&mut a, "big", "id").is_none());
    assert!(big.is_closed());
    assert_eq!(info_field(&mut a, "evicted_clients"), "1");
    assert!(srv.log().contains("Evicting client: id="), "logged as Redis does");
}

#[test]
fn no_evict_protects_and_its_replies_are_redis_s() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    assert_eq!(a.cmd(&["CLIENT", "NO-EVICT", "maybe"]), err("ERR syntax error"));
    assert_eq!(a.cmd(&["CLIENT", "NO-EVICT"]), err("ERR wrong number of arguments for 'client|no-evict' command"));
    assert_eq!(a.cmd(&["CONFIG", "SET", "maxmemory-clients", "1mb"]), ok());
    let mut kept = named(&srv, "kept");
    assert_eq!(kept.cmd(&["CLIENT", "NO-EVICT", "ON"]), ok());
    partial_arg(&mut kept, 2 << 20, 2 << 20);
    wait_until("qbuf filled", || client_field(&mut a, "kept", "qbuf") == Some(2 << 20));
    assert!(client_field(&mut a, "kept", "tot-mem").unwrap() > 1 << 20);
    assert_eq!(info_field(&mut a, "evicted_clients"), "0");
}

#[test]
fn the_largest_clients_go_first_when_the_limit_is_lowered() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    let sizes = [("small", 200_000), ("medium", 400_000), ("large", 800_000)];
    let mut conns = Vec::new();
    for (name, size) in sizes {
        let mut c = named(&srv, name);
        partial_arg(&mut c, size, size);
        wait_until("qbuf filled", || client_field(&mut a, name, "qbuf") == Some(size as i64));
        conns.push(c);
    }
    let mem: Vec<i64> = sizes.iter().map(|(n, _)| client_field(&mut a, n, "tot-mem").unwrap()).collect();
    let admin_mem = client_field(&mut a, "admin", "tot-mem").unwrap();
    // Room for all but the largest: it alone goes, at once.
    let limit = mem[0] + mem[1] + admin_mem;
    assert_eq!(a.cmd(&["CONFIG", "SET", "maxmemory-clients", &limit.to_string()]), ok());
    assert!(client_field(&mut a, "large", "id").is_none());
    assert!(client_field(&mut a, "medium", "id").is_some());
    assert!(client_field(&mut a, "small", "id").is_some());
    assert_eq!(info_field(&mut a, "evicted_clients"), "1");
}

#[test]
fn a_percentage_is_of_maxmemory() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    assert_eq!(a.cmd(&["CONFIG", "SET", "maxmemory-clients", "10%"]), ok());
    assert_eq!(a.cmd(&["CONFIG", "GET", "maxmemory-clients"]), arr(vec![bulk("maxmemory-clients"), bulk("10%")]));
    let mut c = named(&srv, "c");
    partial_arg(&mut c, 1_200_000, 1_200_000);
    wait_until("qbuf filled", || client_field(&mut a, "c", "qbuf") == Some(1_200_000));
    // Without maxmemory a percentage means no limit.
    assert!(client_field(&mut a, "c", "id").is_some());
    assert_eq!(a.cmd(&["CONFIG", "SET", "maxmemory", "10mb"]), ok());
    wait_until("c evicted", || client_field(&mut a, "c", "id").is_none());
}

#[test]
fn tot_mem_grows_with_each_kind_of_buffer() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    let mut c = named(&srv, "c");
    let base = client_field(&mut a, "c", "tot-mem").unwrap();
    // MULTI queue.
    let value = "x".repeat(20_000);
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["SET", "k", &value]), simple("QUEUED"));
    let multi_mem = client_field(&mut a, "c", "multi-mem").unwrap();
    assert!(multi_mem >= 20_000, "multi-mem {multi_mem}");
    let with_multi = client_field(&mut a, "c", "tot-mem").unwrap();
    assert!(with_multi >= base + 20_000, "{with_multi} vs {base}");
    assert_eq!(c.cmd(&["DISCARD"]), ok());
    assert_eq!(client_field(&mut a, "c", "multi-mem"), Some(0));
    // Watched keys.
    let before = client_field(&mut a, "c", "tot-mem").unwrap();
    let keys: Vec<String> = (0..200).map(|i| format!("key{i}")).collect();
    let mut watch = vec!["WATCH"];
    watch.extend(keys.iter().map(String::as_str));
    assert_eq!(c.cmd(&watch), ok());
    assert!(client_field(&mut a, "c", "tot-mem").unwrap() > before);
    // Subscriptions.
    let before = client_field(&mut a, "c", "tot-mem").unwrap();
    let mut sub = vec!["PSUBSCRIBE"];
    sub.extend(keys.iter().map(String::as_str));
    c.send(&{
        let mut out = Vec::new();
        resp::encode_command(&mut out, &sub);
        out
    });
    for _ in 0..keys.len() {
        c.read_frame();
    }
    assert!(client_field(&mut a, "c", "tot-mem").unwrap() > before);
    // Output waiting for a client that does not read.
    assert_eq!(a.cmd(&["SET", "big", &"v".repeat(1 << 20)]), ok());
    let mut r = named(&srv, "reader");
    let before = client_field(&mut a, "reader", "tot-mem").unwrap();
    let mut gets = Vec::new();
    for _ in 0..16 {
        resp::encode_command(&mut gets, &["GET", "big"]);
    }
    r.send(&gets);
    wait_until("output queued", || client_field(&mut a, "reader", "tot-mem").unwrap() > before + (1 << 20));
    assert!(client_field(&mut a, "reader", "omem").unwrap() > 0);
}

#[test]
fn a_client_that_does_not_read_is_evicted_by_its_output() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    assert_eq!(a.cmd(&["SET", "big", &"v".repeat(500_000)]), ok());
    assert_eq!(a.cmd(&["CONFIG", "SET", "maxmemory-clients", "3mb"]), ok());
    let mut r = named(&srv, "reader");
    let mut gets = Vec::new();
    for _ in 0..64 {
        resp::encode_command(&mut gets, &["GET", "big"]);
    }
    r.send(&gets);
    wait_until("reader evicted", || client_field(&mut a, "reader", "id").is_none());
    assert_eq!(info_field(&mut a, "evicted_clients"), "1");
}

#[test]
fn a_client_gone_mid_command_is_closed() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    let mut c = named(&srv, "half");
    partial_arg(&mut c, 100_000, 50_000);
    wait_until("qbuf filled", || client_field(&mut a, "half", "qbuf") == Some(50_000));
    drop(c);
    wait_until("half closed", || client_field(&mut a, "half", "id").is_none());
}

#[test]
fn output_room_a_burst_took_is_given_back_once_written() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    let mut s = named(&srv, "sub");
    s.send(b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n");
    s.read_frame();
    let before = client_field(&mut a, "sub", "tot-mem").unwrap();
    // 40 KB of messages in one turn: more than the 16 KiB a connection
    // keeps, so the buffer that held them must not stay allocated (it
    // would count against maxmemory and maxmemory-clients).
    let mut p = srv.client();
    let msg = "m".repeat(1000);
    let mut burst = Vec::new();
    for _ in 0..40 {
        resp::encode_command(&mut burst, &["PUBLISH", "ch", &msg]);
    }
    p.send(&burst);
    for _ in 0..40 {
        assert_eq!(p.read_frame(), Frame::Integer(1));
    }
    for _ in 0..40 {
        s.read_frame();
    }
    let after = client_field(&mut a, "sub", "tot-mem").unwrap();
    assert!(after < before + 4096, "tot-mem {after} after the burst, {before} before");
    assert_eq!(client_field(&mut a, "sub", "omem"), Some(0));
}

#[test]
fn a_client_over_its_output_limit_is_gone_before_the_next_client_runs() {
    let srv = TestServer::start(&[]);
    let mut a = admin(&srv);
    assert_eq!(a.cmd(&["CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"]), ok());
    assert_eq!(a.cmd(&["SETRANGE", "k", "2097152", "v"]), int(2_097_153));
    let mut big = named(&srv, "big");
    let mut lister = named(&srv, "lister");
    // Stopped, the server finds both commands in one turn: the GET whose
    // reply passes the hard limit first, then the CLIENT LIST.
    let pid = srv.pid() as i32;
    // SAFETY: signalling the child process this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    big.send_cmd(&["GET", "k"]);
    std::thread::sleep(Duration::from_millis(50));
    lister.send_cmd(&["CLIENT", "LIST"]);
    std::thread::sleep(Duration::from_millis(50));
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let Frame::Bulk(list) = lister.read_frame() else { panic!("CLIENT LIST is a bulk string") };
    let list = String::from_utf8(list).unwrap();
    assert!(list.contains(" name=lister ") && !list.contains(" name=big "), "{list}");
    assert!(big.is_closed());
}
