//! Consumer groups over real TCP: XGROUP, XACK, XPENDING, XCLAIM and
//! XAUTOCLAIM errors and replies as Redis 7.0.15 gives them, and what the
//! AOF gets from claims (idempotent XCLAIMs, never the claiming command),
//! replayed to the same pending entries after a crash.
mod aof_support;
mod common;

use aof_support::*;
use common::*;

fn ids(list: &[&str]) -> Frame {
    arr(list.iter().map(|i| bulk(i)).collect())
}

fn entry(id: &str, fields: &[&str]) -> Frame {
    arr(vec![bulk(id), arr(fields.iter().map(|f| bulk(f)).collect())])
}

/// XPENDING's extended rows without their idle column (a clock reading).
fn pending_rows(c: &mut Client, args: &[&str]) -> Vec<(String, String, i64)> {
    let Frame::Array(rows) = c.cmd(args) else { panic!("XPENDING replied no array") };
    rows.into_iter()
        .map(|row| match row {
            Frame::Array(f) => match (&f[0], &f[1], &f[3]) {
                (Frame::Bulk(id), Frame::Bulk(who), Frame::Integer(n)) => {
                    (String::from_utf8_lossy(id).into_owned(), String::from_utf8_lossy(who).into_owned(), *n)
                }
                other => panic!("bad XPENDING row {other:?}"),
            },
            other => panic!("bad XPENDING row {other:?}"),
        })
        .collect()
}

#[test]
fn xgroup_errors_and_bookkeeping() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let need_key = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";
    assert_eq!(c.cmd(&["XGROUP", "CREATE", "s", "g", "$"]), err(need_key));
    assert_eq!(c.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]), ok());
    assert_eq!(c.cmd(&["XGROUP", "CREATE", "s", "g", "$"]), err("BUSYGROUP Consumer Group name already exists"));
    assert_eq!(
        c.cmd(&["XGROUP", "CREATE", "s", "h", "-"]),
        err("ERR Invalid stream ID specified as stream command argument")
    );
    assert_eq!(
        c.cmd(&["XGROUP", "CREATE", "s", "h", "$", "ENTRIESREAD", "-2"]),
        err("ERR value for ENTRIESREAD must be positive or -1")
    );
    assert_eq!(
        c.cmd(&["XGROUP", "SETID", "s", "g", "$", "MKSTREAM"]),
        err("ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.")
    );
    assert_eq!(
        c.cmd(&["XGROUP", "SETID", "s", "nope", "0"]),
        err("NOGROUP No such consumer group 'nope' for key name 's'")
    );
    assert_eq!(c.cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "alice"]), int(1));
    assert_eq!(c.cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "alice"]), int(0));
    c.cmd(&["XADD", "s", "1-0", "f", "v"]);
    c.cmd(&["XADD", "s", "2-0", "f", "v"]);
    c.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]);
    assert_eq!(c.cmd(&["XGROUP", "DELCONSUMER", "s", "g", "alice"]), int(2));
    assert_eq!(c.cmd(&["XPENDING", "s", "g"]), arr(vec![int(0), Frame::Null, Frame::Null, Frame::Null]));
    assert_eq!(c.cmd(&["XGROUP", "DESTROY", "s", "g"]), int(1));
    assert_eq!(c.cmd(&["XGROUP", "DESTROY", "s", "g"]), int(0));
    c.cmd(&["SET", "str", "x"]);
    assert_eq!(
        c.cmd(&["XGROUP", "CREATE", "str", "g", "$"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(c.cmd(&["XGROUP", "FOO"]), err("ERR unknown subcommand 'FOO'. Try XGROUP HELP."));
}

#[test]
fn pending_claims_and_autoclaim_cursor() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for i in 1..=5 {
        c.cmd(&["XADD", "s", &format!("{i}-0"), "n", &i.to_string()]);
    }
    c.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    c.cmd(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]);
    let summary = c.cmd(&["XPENDING", "s", "g"]);
    let owners = arr(vec![arr(vec![bulk("alice"), bulk("5")])]);
    assert_eq!(summary, arr(vec![int(5), bulk("1-0"), bulk("5-0"), owners]));
    assert_eq!(c.cmd(&["XPENDING", "s", "g", "IDLE", "100000", "-", "+", "10"]), arr(vec![]));
    assert_eq!(c.cmd(&["XPENDING", "s", "g", "-", "+", "10", "nobody"]), arr(vec![]));
    assert_eq!(c.cmd(&["XPENDING", "s", "g", "-", "+"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["XPENDING", "s", "nope"]), err("NOGROUP No such key 's' or consumer group 'nope'"));
    // A claim with a high min idle takes nothing; FORCE never makes up an
    // entry the stream lacks.
    assert_eq!(c.cmd(&["XCLAIM", "s", "g", "bob", "100000", "1-0"]), arr(vec![]));
    assert_eq!(c.cmd(&["XCLAIM", "s", "g", "bob", "0", "9-0", "FORCE"]), arr(vec![]));
    assert_eq!(c.cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "BOGUS"]), err("ERR Unrecognized XCLAIM option 'BOGUS'"));
    assert_eq!(
        c.cmd(&["XCLAIM", "s", "g", "bob", "0", "1-0", "RETRYCOUNT", "7"]),
        arr(vec![entry("1-0", &["n", "1"])])
    );
    assert_eq!(pending_rows(&mut c, &["XPENDING", "s", "g", "-", "(2-0", "10"]), vec![("1-0".into(), "bob".into(), 7)]);
    // Deleted entries leave the PEL and are listed; the cursor is the next
    // pending ID after the COUNT ones taken.
    c.cmd(&["XDEL", "s", "2-0"]);
    let reply = c.cmd(&["XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", "2", "JUSTID"]);
    assert_eq!(reply, arr(vec![bulk("3-0"), ids(&["1-0"]), ids(&["2-0"])]));
    let reply = c.cmd(&["XAUTOCLAIM", "s", "g", "carol", "0", "(3-0"]);
    let entries = arr(vec![entry("4-0", &["n", "4"]), entry("5-0", &["n", "5"])]);
    assert_eq!(reply, arr(vec![bulk("0-0"), entries, arr(vec![])]));
    assert_eq!(c.cmd(&["XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", "0"]), err("ERR COUNT must be > 0"));
    assert_eq!(
        c.cmd(&["XACK", "s", "g", "1-0", "bad"]),
        err("ERR Invalid stream ID specified as stream command argument")
    );
    assert_eq!(c.cmd(&["XACK", "s", "g", "1-0", "4-0", "4-0"]), int(2));
    let rows = pending_rows(&mut c, &["XPENDING", "s", "g", "-", "+", "10"]);
    assert_eq!(rows, vec![("3-0".into(), "alice".into(), 1), ("5-0".into(), "carol".into(), 2)]);
}

#[test]
fn claims_reach_the_aof_as_xclaim_and_replay_the_same_pel() {
    let dir = DataDir::new("stream-claims");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    for i in 1..=6 {
        c.cmd(&["XADD", "s", &format!("{i}-0"), "n", &i.to_string()]);
    }
    c.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    c.cmd(&["XREADGROUP", "GROUP", "g", "alice", "COUNT", "4", "STREAMS", "s", ">"]);
    c.cmd(&["XDEL", "s", "2-0"]);
    c.cmd(&["XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT", "2"]);
    c.cmd(&["XCLAIM", "s", "g", "carol", "0", "4-0", "RETRYCOUNT", "9"]);
    // Only the group's last ID moves: replayed as XGROUP SETID.
    c.cmd(&["XCLAIM", "s", "g", "dave", "0", "LASTID", "5-0"]);
    c.cmd(&["XACK", "s", "g", "3-0"]);
    let pel = pending_rows(&mut c, &["XPENDING", "s", "g", "-", "+", "10"]);
    assert_eq!(pel, vec![("1-0".into(), "bob".into(), 2), ("4-0".into(), "carol".into(), 9)]);
    let aof = std::fs::read_to_string(dir.last_incr()).unwrap();
    assert!(!aof.contains("XAUTOCLAIM"), "claims replay as XCLAIM: {aof}");
    assert!(aof.contains("SETID"), "a LASTID-only claim replays as XGROUP SETID: {aof}");
    kill9(&mut srv);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(pending_rows(&mut c, &["XPENDING", "s", "g", "-", "+", "10"]), pel);
    // The group's last ID came back too: nothing before 6-0 is new.
    let read = c.cmd(&["XREADGROUP", "GROUP", "g", "erin", "STREAMS", "s", ">"]);
    assert_eq!(read, arr(vec![arr(vec![bulk("s"), arr(vec![entry("6-0", &["n", "6"])])])]));
}

#[test]
fn claim_option_errors_and_time_clamp() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["XADD", "s", "1-0", "n", "1"]);
    c.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    c.cmd(&["XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">"]);
    let not_int = "ERR value is not an integer or out of range";
    let cases: &[(&[&str], &str)] = &[
        (&["XCLAIM", "s", "g", "b", "x", "1-0"], "ERR Invalid min-idle-time argument for XCLAIM"),
        (&["XCLAIM", "s", "g", "b", "0", "1-0", "IDLE", "x"], "ERR Invalid IDLE option argument for XCLAIM"),
        (&["XCLAIM", "s", "g", "b", "0", "1-0", "TIME", "x"], "ERR Invalid TIME option argument for XCLAIM"),
        (
            &["XCLAIM", "s", "g", "b", "0", "1-0", "RETRYCOUNT", "x"],
            "ERR Invalid RETRYCOUNT option argument for XCLAIM",
        ),
        (
            &["XCLAIM", "s", "g", "b", "0", "1-0", "LASTID", "bad"],
            "ERR Invalid stream ID specified as stream command argument",
        ),
        (&["XAUTOCLAIM", "s", "g", "b", "x", "0"], "ERR Invalid min-idle-time argument for XAUTOCLAIM"),
        (&["XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", "x"], "ERR COUNT must be > 0"),
        (&["XAUTOCLAIM", "s", "g", "b", "0", "0", "FOO"], "ERR syntax error"),
        (&["XPENDING", "s", "g", "IDLE", "x", "-", "+", "10"], not_int),
        (&["XPENDING", "s", "g", "-", "+", "x"], not_int),
    ];
    for (args, want) in cases {
        assert_eq!(c.cmd(args), err(want), "{args:?}");
    }
    // Nothing was claimed by the failed calls.
    assert_eq!(pending_rows(&mut c, &["XPENDING", "s", "g", "-", "+", "10"]), vec![("1-0".into(), "a".into(), 1)]);
    // A delivery time in the future is taken as now: the idle time is small, not negative.
    assert_eq!(c.cmd(&["XCLAIM", "s", "g", "b", "0", "1-0", "TIME", "99999999999999", "JUSTID"]), ids(&["1-0"]));
    let Frame::Array(rows) = c.cmd(&["XPENDING", "s", "g", "-", "+", "10"]) else { panic!("no rows") };
    let Frame::Array(row) = &rows[0] else { panic!("no row") };
    assert!(matches!(row[2], Frame::Integer(idle) if (0..5_000).contains(&idle)), "{row:?}");
    assert_eq!((&row[1], &row[3]), (&bulk("b"), &int(1)));
}
