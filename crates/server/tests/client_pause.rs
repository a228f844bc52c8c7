//! CLIENT PAUSE / UNPAUSE / UNBLOCK, WAIT, CLIENT LIST buffer fields and
//! CONFIG SET port, against the real binary.
mod common;

use std::time::{Duration, Instant};

use common::*;

fn info_field(c: &mut Client, section: &str, field: &str) -> String {
    let Frame::Bulk(text) = c.cmd(&["INFO", section]) else { panic!("INFO is a bulk string") };
    let text = String::from_utf8(text).unwrap();
    let prefix = format!("{field}:");
    let line = text.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("{field} in INFO"));
    line[prefix.len()..].to_string()
}

fn wait_blocked(c: &mut Client, n: usize) {
    let start = Instant::now();
    while info_field(c, "clients", "blocked_clients") != n.to_string() {
        assert!(start.elapsed() < Duration::from_secs(5), "never reached {n} blocked clients");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn write_pause_holds_writers_and_releases_them_in_order() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), ok());
    let mut reader = srv.client();
    assert_eq!(reader.cmd(&["GET", "k"]), Frame::Null);
    let mut w1 = srv.client();
    let mut w2 = srv.client();
    w1.send(b"*3\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\na\r\n");
    wait_blocked(&mut admin, 1);
    w2.send(b"*3\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\nb\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    wait_blocked(&mut admin, 2);
    // Arity errors are not held.
    assert_eq!(reader.cmd(&["SET", "x"]), err("ERR wrong number of arguments for 'set' command"));
    assert_eq!(admin.cmd(&["LLEN", "l"]), int(0));
    assert_eq!(admin.cmd(&["CLIENT", "UNPAUSE"]), ok());
    assert_eq!(w1.read_frame(), int(1));
    assert_eq!(w2.read_frame(), int(2));
    assert_eq!(w2.read_frame(), Frame::Null);
    assert_eq!(admin.cmd(&["LRANGE", "l", "0", "-1"]), arr(vec![bulk("a"), bulk("b")]));
    assert_eq!(info_field(&mut admin, "clients", "blocked_clients"), "0");
}

#[test]
fn pause_all_holds_reads_until_its_deadline() {
    let srv = TestServer::start(&["--hz", "100"]);
    let mut admin = srv.client();
    admin.cmd(&["SET", "k", "v"]);
    assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "300"]), ok());
    let start = Instant::now();
    let mut reader = srv.client();
    assert_eq!(reader.cmd(&["GET", "k"]), bulk("v"));
    assert!(start.elapsed() >= Duration::from_millis(250), "read answered during the pause");
    assert_eq!(reader.cmd(&["CLIENT", "PAUSE", "10", "SOMETIMES"]), err("ERR CLIENT PAUSE mode must be WRITE or ALL"));
    assert_eq!(reader.cmd(&["CLIENT", "PAUSE", "-1"]), err("ERR timeout is negative"));
    assert_eq!(reader.cmd(&["CLIENT", "PAUSE", "x"]), err("ERR timeout is not an integer or out of range"));
}

#[test]
fn expired_keys_stay_while_paused() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "k", "v", "PX", "20"]);
    c.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]);
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(c.cmd(&["GET", "k"]), Frame::Null);
    assert_eq!(c.cmd(&["DBSIZE"]), int(1));
    assert_eq!(info_field(&mut c, "stats", "expired_keys"), "0");
    c.cmd(&["CLIENT", "UNPAUSE"]);
    assert_eq!(c.cmd(&["GET", "k"]), Frame::Null);
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    assert_eq!(info_field(&mut c, "stats", "expired_keys"), "1");
}

#[test]
fn client_unblock_answers_a_blocked_client() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    let mut b = srv.client();
    let Frame::Integer(id) = b.cmd(&["CLIENT", "ID"]) else { panic!() };
    let id = id.to_string();
    b.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n");
    wait_blocked(&mut admin, 1);
    assert_eq!(
        admin.cmd(&["CLIENT", "UNBLOCK", &id, "MAYBE"]),
        err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    );
    assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", &id]), int(1));
    assert_eq!(b.read_raw(), b"*-1\r\n");
    assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", &id]), int(0));
    b.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n");
    wait_blocked(&mut admin, 1);
    assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", &id, "ERROR"]), int(1));
    assert_eq!(b.read_frame(), err("UNBLOCKED client unblocked via CLIENT UNBLOCK"));
    // The connection carries on.
    assert_eq!(b.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn wait_without_replicas() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["WAIT", "0", "0"]), int(0));
    let start = Instant::now();
    assert_eq!(c.cmd(&["WAIT", "1", "50"]), int(0));
    assert!(start.elapsed() >= Duration::from_millis(45));
    assert_eq!(c.cmd(&["WAIT", "1", "-1"]), err("ERR timeout is negative"));
    assert_eq!(c.cmd(&["WAIT", "x", "0"]), err("ERR value is not an integer or out of range"));
    // Inside MULTI it never blocks.
    c.cmd(&["MULTI"]);
    c.cmd(&["WAIT", "1", "0"]);
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![int(0)]));
}

#[test]
fn tiny_blocking_timeouts_round_up_to_a_millisecond() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.raw_cmd(&["BLPOP", "nothing", "0.0001"]), b"*-1\r\n");
}

#[test]
fn client_list_reports_the_batch_in_the_query_buffer() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let Frame::Bulk(line) = c.cmd(&["CLIENT", "INFO"]) else { panic!() };
    let line = String::from_utf8(line).unwrap();
    // *2 $6 client $4 info: 26 bytes, still in the buffer while it runs.
    assert!(line.contains(" qbuf=26 "), "{line}");
    assert!(line.contains(" argv-mem=10 "), "{line}");
    assert!(line.contains(" obl=0 oll=0 omem=0 "), "{line}");
    assert!(line.contains(" events=r cmd=client|info "), "{line}");
}

#[test]
fn config_set_port_moves_the_listener() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port().to_string();
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "maxmemory", "12345", "port", &busy]),
        err("ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.")
    );
    assert_eq!(c.cmd(&["CONFIG", "GET", "maxmemory"]), arr(vec![bulk("maxmemory"), bulk("0")]));
    drop(taken);
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    assert_eq!(c.cmd(&["CONFIG", "SET", "port", &free.to_string()]), ok());
    // The old connection stays; new ones go to the new port.
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
    assert_eq!(Client::connect(free).cmd(&["PING"]), simple("PONG"));
    assert!(std::net::TcpStream::connect(("127.0.0.1", srv.port)).is_err());
}
