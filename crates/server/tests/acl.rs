//! ACL black-box tests over raw RESP: rules, key and channel checks at the
//! top level, in MULTI (queue and EXEC time) and in scripts, ACL LOAD's
//! all-or-nothing, and the disconnection of a deleted user's clients.
mod common;
use common::*;

const NOPERM_KEYS: &str = "NOPERM this user has no permissions to access one of the keys used as arguments";

/// A reply as text (bulk, error and simple strings as UTF-8, arrays
/// space-joined), for asserting on what it contains.
fn text(f: &Frame) -> String {
    match f {
        Frame::Simple(b) | Frame::Error(b) | Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Frame::Integer(i) => i.to_string(),
        Frame::Array(v) => v.iter().map(text).collect::<Vec<_>>().join(" "),
        other => format!("{other:?}"),
    }
}

fn login(srv: &TestServer, user: &str, pass: &str) -> Client {
    let mut c = srv.client();
    assert_eq!(c.cmd(&["AUTH", user, pass]), ok());
    c
}

#[test]
fn command_key_and_channel_rules() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "app", "on", ">pw", "+@read", "+@write", "~app:*", "&news"]), ok());
    let mut app = login(&srv, "app", "pw");
    assert_eq!(app.cmd(&["SET", "app:1", "v"]), ok());
    assert_eq!(app.cmd(&["GET", "app:1"]), bulk("v"));
    assert_eq!(app.cmd(&["SET", "other", "v"]), err(NOPERM_KEYS));
    assert_eq!(app.cmd(&["PING"]), err("NOPERM this user has no permissions to run the 'ping' command"));
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "app", "+publish"]), ok());
    assert_eq!(app.cmd(&["PUBLISH", "news", "x"]), int(0));
    assert_eq!(
        app.cmd(&["PUBLISH", "sports", "x"]),
        err("NOPERM this user has no permissions to access one of the channels used as arguments")
    );
    assert_eq!(app.cmd(&["ACL", "WHOAMI"]), err("NOPERM this user has no permissions to run the 'acl|whoami' command"));
    assert_eq!(
        admin.cmd(&["AUTH", "app", "wrong"]),
        err("WRONGPASS invalid username-password pair or user is disabled.")
    );
    // The refusals are in the log, newest first.
    let log = admin.cmd(&["ACL", "LOG", "1"]);
    let entry = text(&log);
    assert!(
        entry.contains("reason auth") && entry.contains("object AUTH") && entry.contains("username app"),
        "{entry}"
    );
}

#[test]
fn getuser_describes_rules_back() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["ACL", "SETUSER", "u", "reset", "+@all", "-@string", "%R~r*", "%W~w*", "~rw*"]), ok());
    let list = c.cmd(&["ACL", "LIST"]);
    let users = text(&list);
    assert!(users.contains("user u off sanitize-payload %R~r* %W~w* ~rw* resetchannels +@all -@string"), "{users}");
    assert_eq!(
        c.cmd(&["ACL", "SETUSER", "u", "~x", "(+get"]),
        err("ERR Unmatched parenthesis in acl selector starting at '(+get'.")
    );
    assert_eq!(
        c.cmd(&["ACL", "DRYRUN", "u", "SET", "w1", "v"]),
        bulk("This user has no permissions to run the 'set' command")
    );
    assert_eq!(c.cmd(&["ACL", "DRYRUN", "u", "LRANGE", "r1", "0", "-1"]), ok());
    assert_eq!(
        c.cmd(&["ACL", "DRYRUN", "u", "LPUSH", "r1", "v"]),
        bulk("This user has no permissions to access the 'r1' key")
    );
}

#[test]
fn multi_checks_at_queue_time_and_exec_time() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "t", "on", "nopass", "+multi", "+exec", "+incr", "~k*"]), ok());
    let mut t = login(&srv, "t", "x");
    assert_eq!(t.cmd(&["MULTI"]), ok());
    assert_eq!(t.cmd(&["INCR", "other"]), err(NOPERM_KEYS));
    assert_eq!(t.cmd(&["EXEC"]), err("EXECABORT Transaction discarded because of previous errors."));
    assert_eq!(t.cmd(&["MULTI"]), ok());
    assert_eq!(t.cmd(&["INCR", "k1"]), simple("QUEUED"));
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "t", "-incr"]), ok());
    let exec = t.cmd(&["EXEC"]);
    let reply = text(&exec);
    assert!(reply.contains("NOPERM ACLs rules changed between the moment the transaction was accumulated"), "{reply}");
    assert_eq!(admin.cmd(&["EXISTS", "k1"]), int(0));
}

#[test]
fn scripts_are_checked_as_their_caller() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "s", "on", "nopass", "+eval", "+get", "~x*"]), ok());
    let mut s = login(&srv, "s", "x");
    assert_eq!(s.cmd(&["EVAL", "return redis.call('get', KEYS[1])", "1", "x1"]), Frame::Null);
    let denied = text(&s.cmd(&["EVAL", "return redis.call('set', 'x1', 'v')", "0"]));
    assert!(denied.contains("The user executing the script can't run this command or subcommand"), "{denied}");
    assert_eq!(s.cmd(&["EVAL", "return redis.acl_check_cmd('get', 'y')", "0"]), Frame::Null);
    assert_eq!(s.cmd(&["EVAL", "return redis.acl_check_cmd('get', 'x2')", "0"]), int(1));
}

#[test]
fn deluser_disconnects_its_clients() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "gone", "on", ">p", "+@all", "~*"]), ok());
    let mut g = login(&srv, "gone", "p");
    assert_eq!(g.cmd(&["PING"]), simple("PONG"));
    assert_eq!(admin.cmd(&["ACL", "DELUSER", "gone"]), int(1));
    assert!(g.is_closed());
    assert_eq!(admin.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn acl_load_is_all_or_nothing() {
    let dir = std::env::temp_dir().join(format!("volley-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("users.acl");
    std::fs::write(&file, "user default on nopass ~* &* +@all\nuser alice on >a ~* +@all\n").unwrap();
    let path = file.to_string_lossy().to_string();
    let srv = TestServer::start(&["--aclfile", &path]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["AUTH", "alice", "a"]), ok());
    std::fs::write(&file, "user default on nopass ~* &* +@all\nuser bob on >b +nosuchcommand\n").unwrap();
    let e = c.cmd(&["ACL", "LOAD"]);
    let msg = text(&e);
    assert!(msg.contains(":2: Error in applying operation '+nosuchcommand'"), "{msg}");
    assert!(msg.contains("no change to the previously active ACL rules was performed"), "{msg}");
    let users = c.cmd(&["ACL", "USERS"]);
    assert_eq!(users, arr(vec![bulk("alice"), bulk("default")]));
    std::fs::write(&file, "user default on nopass ~* &* +@all\nuser bob on >b ~* +@all\n").unwrap();
    assert_eq!(c.cmd(&["ACL", "LOAD"]), ok());
    // alice no longer exists: her connection is closed after the reply.
    assert!(c.is_closed());
    let mut d = srv.client();
    assert_eq!(d.cmd(&["ACL", "USERS"]), arr(vec![bulk("bob"), bulk("default")]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn requirepass_is_the_default_users_password() {
    let srv = TestServer::start(&["--requirepass", "sekret"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["GET", "x"]), err("NOAUTH Authentication required."));
    assert_eq!(c.cmd(&["AUTH", "default", "sekret"]), ok());
    assert_eq!(c.cmd(&["CONFIG", "SET", "requirepass", ""]), ok());
    let mut d = srv.client();
    assert_eq!(d.cmd(&["GET", "x"]), Frame::Null);
}

/// The `client-info` field of the newest ACL LOG entry.
fn last_client_info(admin: &mut Client) -> String {
    let Frame::Array(entries) = admin.cmd(&["ACL", "LOG", "1"]) else { panic!("ACL LOG is an array") };
    let Some(Frame::Array(fields)) = entries.first() else { panic!("no ACL LOG entry") };
    let at = fields.iter().position(|f| text(f) == "client-info").expect("client-info field");
    text(&fields[at + 1])
}

#[test]
fn acl_log_client_info_describes_the_denied_command() {
    // As Redis 7.0.15: the entry's client-info is the client as the denial
    // found it, running the denied command (cmd=, argv-mem=), not the one
    // before it.
    let srv = TestServer::start(&[]);
    let mut admin = srv.client();
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "u", "on", ">p", "~a*", "+get", "+set", "+multi", "+exec"]), ok());
    let mut u = login(&srv, "u", "p");
    assert_eq!(u.cmd(&["GET", "a"]), Frame::Null);
    assert!(matches!(u.cmd(&["INCR", "a"]), Frame::Error(_)));
    let info = last_client_info(&mut admin);
    assert!(info.contains(" argv-mem=5 ") && info.contains(" cmd=incr user=u "), "{info}");
    assert_eq!(u.cmd(&["MULTI"]), ok());
    assert_eq!(u.cmd(&["SET", "a", "1"]), simple("QUEUED"));
    assert_eq!(u.cmd(&["GET", "zz"]), err(NOPERM_KEYS));
    let info = last_client_info(&mut admin);
    assert!(info.contains(" flags=x ") && info.contains(" argv-mem=5 ") && info.contains(" cmd=get "), "{info}");
    let mut anon = srv.client();
    assert!(matches!(anon.cmd(&["AUTH", "u", "wrong"]), Frame::Error(_)));
    let info = last_client_info(&mut admin);
    assert!(info.contains(" argv-mem=10 ") && info.contains(" cmd=auth user=default "), "{info}");
}
