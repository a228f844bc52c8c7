//! Black-box tests of the connection commands over real TCP.
mod common;
use common::*;

#[test]
fn ping_echo_select_quit() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
    assert_eq!(c.cmd(&["ping", "hi"]), bulk("hi"));
    assert_eq!(c.cmd(&["PING", "a", "b"]), err("ERR wrong number of arguments for 'ping' command"));
    assert_eq!(c.cmd(&["ECHO", "x y"]), bulk("x y"));
    assert_eq!(c.cmd(&["SELECT", "15"]), ok());
    assert_eq!(c.cmd(&["SELECT", "16"]), err("ERR DB index is out of range"));
    assert_eq!(c.cmd(&["SELECT", "x"]), err("ERR value is not an integer or out of range"));
    assert_eq!(c.cmd(&["NOPE", "a", "b"]), err("ERR unknown command 'NOPE', with args beginning with: 'a' 'b' "));
    assert_eq!(c.cmd(&["QUIT"]), ok());
    assert!(c.is_closed());
}

#[test]
fn auth_and_hello() {
    let srv = TestServer::start(&["--requirepass", "s3cret"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["PING"]), err("NOAUTH Authentication required."));
    assert_eq!(c.cmd(&["AUTH", "wrong"]), err("WRONGPASS invalid username-password pair or user is disabled."));
    assert!(matches!(c.cmd(&["HELLO", "3"]), Frame::Error(e) if e.starts_with(b"NOAUTH HELLO must be called")));
    match c.cmd(&["HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "me"]) {
        Frame::Map(kv) => {
            assert!(kv.contains(&(bulk("proto"), int(3))));
            assert!(kv.contains(&(bulk("server"), bulk("redis"))));
        }
        other => panic!("HELLO 3 should reply a RESP3 map, got {other:?}"),
    }
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
    assert_eq!(c.cmd(&["HELLO", "4"]), err("NOPROTO unsupported protocol version"));
    assert_eq!(c.cmd(&["RESET"]), simple("RESET"));
    assert_eq!(c.cmd(&["PING"]), err("NOAUTH Authentication required."));
    assert_eq!(c.cmd(&["AUTH", "default", "s3cret"]), ok());
}

#[test]
fn auth_without_password_configured() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    match c.cmd(&["AUTH", "x"]) {
        Frame::Error(e) => {
            assert!(e.starts_with(b"ERR AUTH <password> called without any password configured"))
        }
        other => panic!("{other:?}"),
    }
}

/// The text of CLIENT INFO without the fields that vary between runs.
fn client_state(c: &mut Client) -> String {
    let Frame::Bulk(info) = c.cmd(&["CLIENT", "INFO"]) else { panic!("CLIENT INFO is a bulk string") };
    let info = String::from_utf8(info).unwrap();
    let keep = ["name=", "flags=", "db=", "multi=", "resp="];
    info.split_whitespace().filter(|f| keep.iter().any(|k| f.starts_with(k))).collect::<Vec<_>>().join(" ")
}

#[test]
fn reset_clears_connection_state() {
    let srv = TestServer::start(&[]);
    let (mut a, mut b) = (srv.client(), srv.client());
    for cmd in [&["CLIENT", "SETNAME", "me"][..], &["SELECT", "3"], &["CLIENT", "NO-EVICT", "on"], &["WATCH", "k"]] {
        assert_eq!(a.cmd(cmd), ok(), "{cmd:?}");
    }
    assert!(matches!(a.cmd(&["HELLO", "3"]), Frame::Map(_)));
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["SET", "k", "1"]), simple("QUEUED"));
    assert_eq!(a.raw_cmd(&["RESET"]), b"+RESET\r\n");
    // Name, database, protocol and the transaction are gone; Redis 7.0
    // keeps the no-evict flag (`e`).
    assert_eq!(client_state(&mut a), "name= flags=e db=0 multi=-1 resp=2");
    assert_eq!(a.cmd(&["EXEC"]), err("ERR EXEC without MULTI"));
    // And so is the WATCH: a write to k no longer fails a transaction.
    assert_eq!(b.cmd(&["SET", "k", "2"]), ok());
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["GET", "k"]), simple("QUEUED"));
    assert_eq!(a.raw_cmd(&["EXEC"]), b"*1\r\n$1\r\n2\r\n");
    // RESET ends CLIENT REPLY OFF and answers; a SKIP aimed at RESET
    // itself still swallows its reply.
    let mut pipeline = Vec::new();
    for cmd in [&["CLIENT", "REPLY", "OFF"][..], &["PING"], &["RESET"], &["PING", "1"]] {
        resp::encode_command(&mut pipeline, cmd);
    }
    for cmd in [&["CLIENT", "REPLY", "SKIP"][..], &["RESET"], &["PING", "2"]] {
        resp::encode_command(&mut pipeline, cmd);
    }
    a.send(&pipeline);
    assert_eq!(a.read_raw(), b"+RESET\r\n");
    assert_eq!(a.read_raw(), b"$1\r\n1\r\n");
    assert_eq!(a.read_raw(), b"$1\r\n2\r\n");
}

#[test]
fn subcommands_are_reached_only_through_their_container() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    // Redis issue #10070: `parent|sub` is how the table names a
    // subcommand, not something a client may call.
    let cases: &[(&[&str], &str)] = &[
        (&["GET|"], "ERR unknown command 'GET|', with args beginning with: "),
        (&["GET|SET"], "ERR unknown command 'GET|SET', with args beginning with: "),
        (&["CONFIG|GET", "GET_XX"], "ERR unknown command 'CONFIG|GET', with args beginning with: 'GET_XX' "),
        (&["config|get", "maxmemory"], "ERR unknown command 'config|get', with args beginning with: 'maxmemory' "),
        (&["CONFIG", "GET_XX"], "ERR unknown subcommand 'GET_XX'. Try CONFIG HELP."),
        (&["OBJECT", "foo", "bar", "baz"], "ERR unknown subcommand 'foo'. Try OBJECT HELP."),
        (&["OBJECT", "encoding"], "ERR wrong number of arguments for 'object|encoding' command"),
        (&["CLIENT", "id", "x"], "ERR wrong number of arguments for 'client|id' command"),
    ];
    for (cmd, e) in cases {
        assert_eq!(c.cmd(cmd), err(e), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
}
