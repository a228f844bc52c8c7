//! Client-side caching (CLIENT TRACKING) against the real binary: RESP3
//! invalidation pushes, RESP2 redirection to `__redis__:invalidate`, BCAST
//! prefixes, OPTIN, NOLOOP, flushes and TRACKINGINFO, as Redis 7.0.15's bytes.
mod common;

use common::*;

fn client_id(c: &mut Client) -> String {
    let Frame::Integer(id) = c.cmd(&["CLIENT", "ID"]) else { panic!() };
    id.to_string()
}

#[test]
fn resp3_reader_is_told_once_when_another_client_writes() {
    let srv = TestServer::start(&[]);
    let mut r = srv.client();
    let mut w = srv.client();
    r.cmd(&["HELLO", "3"]);
    assert_eq!(r.cmd(&["CLIENT", "TRACKING", "on"]), ok());
    w.cmd(&["SET", "k", "1"]);
    assert_eq!(r.cmd(&["GET", "k"]), bulk("1"));
    w.cmd(&["SET", "k", "2"]);
    w.cmd(&["SET", "k", "3"]);
    assert_eq!(r.read_raw(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
    // The key was forgotten after its first change: the next reply is PING's.
    assert_eq!(r.cmd(&["PING"]), simple("PONG"));
    w.cmd(&["FLUSHALL"]);
    assert_eq!(r.read_raw(), b">2\r\n$10\r\ninvalidate\r\n_\r\n");
}

#[test]
fn resp2_redirect_target_gets_invalidate_messages() {
    let srv = TestServer::start(&[]);
    let mut target = srv.client();
    let id = client_id(&mut target);
    target.cmd(&["SUBSCRIBE", "__redis__:invalidate"]);
    let mut r = srv.client();
    assert_eq!(
        r.cmd(&["CLIENT", "TRACKING", "on", "REDIRECT", "999999"]),
        err("ERR The client ID you want redirect to does not exist")
    );
    assert_eq!(r.cmd(&["CLIENT", "TRACKING", "on", "REDIRECT", &id]), ok());
    assert_eq!(r.cmd(&["CLIENT", "GETREDIR"]), Frame::Integer(id.parse().unwrap()));
    r.cmd(&["GET", "a"]);
    r.cmd(&["SET", "a", "x"]);
    assert_eq!(target.read_raw(), b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\na\r\n".to_vec());
    let Frame::Bulk(line) = r.cmd(&["CLIENT", "INFO"]) else { panic!() };
    let line = String::from_utf8(line).unwrap();
    assert!(line.contains("flags=t ") && line.contains(&format!(" redir={id} ")), "{line}");
}

#[test]
fn bcast_sends_changed_keys_per_prefix_and_noloop_skips_own_writes() {
    let srv = TestServer::start(&[]);
    let mut r = srv.client();
    let mut w = srv.client();
    r.cmd(&["HELLO", "3"]);
    assert_eq!(
        r.cmd(&["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:", "PREFIX", "a:b"]),
        err("ERR Prefix 'a:' overlaps with an existing prefix 'a:b'. Prefixes for a single client must not overlap.")
    );
    assert_eq!(r.cmd(&["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:", "NOLOOP"]), ok());
    r.cmd(&["SET", "a:mine", "1"]);
    w.cmd(&["MSET", "a:1", "x", "b:1", "y"]);
    assert_eq!(r.read_raw(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\na:1\r\n");
    assert_eq!(
        r.cmd(&["CLIENT", "TRACKINGINFO"]),
        Frame::Map(vec![
            (bulk("flags"), Frame::Set(vec![bulk("on"), bulk("bcast"), bulk("noloop")])),
            (bulk("redirect"), int(0)),
            (bulk("prefixes"), arr(vec![bulk("a:")])),
        ])
    );
}

#[test]
fn optin_tracks_only_after_caching_yes() {
    let srv = TestServer::start(&[]);
    let mut r = srv.client();
    let mut w = srv.client();
    r.cmd(&["HELLO", "3"]);
    assert_eq!(r.cmd(&["CLIENT", "CACHING", "yes"]), err(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
    ));
    r.cmd(&["CLIENT", "TRACKING", "on", "OPTIN"]);
    r.cmd(&["GET", "untracked"]);
    assert_eq!(r.cmd(&["CLIENT", "CACHING", "yes"]), ok());
    r.cmd(&["GET", "tracked"]);
    w.cmd(&["SET", "untracked", "1"]);
    w.cmd(&["SET", "tracked", "1"]);
    assert_eq!(r.read_raw(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$7\r\ntracked\r\n");
    let Frame::Bulk(info) = w.cmd(&["INFO", "clients"]) else { panic!() };
    assert!(String::from_utf8(info).unwrap().contains("\r\ntracking_clients:1\r\n"));
}

#[test]
fn expiry_invalidates_without_any_other_consumer_of_expired_keys() {
    // Nothing else (WATCH, notifications, AOF) asks for expired keys here:
    // turning tracking on must be enough for the active cycle to report them.
    let srv = TestServer::start(&[]);
    let mut r = srv.client();
    let mut w = srv.client();
    r.cmd(&["HELLO", "3"]);
    assert_eq!(r.cmd(&["CLIENT", "TRACKING", "on"]), ok());
    w.cmd(&["SET", "e", "soon", "PX", "50"]);
    assert_eq!(r.cmd(&["GET", "e"]), bulk("soon"));
    assert_eq!(r.read_raw(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ne\r\n");
    // Lazy expiry by another client's read invalidates too.
    w.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    w.cmd(&["SET", "l", "soon", "PX", "20"]);
    assert_eq!(r.cmd(&["GET", "l"]), bulk("soon"));
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(w.cmd(&["GET", "l"]), Frame::Null);
    assert_eq!(r.read_raw(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nl\r\n");
}
