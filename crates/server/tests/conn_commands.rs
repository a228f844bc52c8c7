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
