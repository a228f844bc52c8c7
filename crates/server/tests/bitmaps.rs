//! Black-box tests of the bitmap commands over real TCP; expected replies
//! were taken from Redis 7.0.15.
mod common;
use common::*;

const NOT_INT: &str = "ERR value is not an integer or out of range";
const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";

#[test]
fn setbit_getbit() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SETBIT", "b", "1", "1"]), int(0));
    assert_eq!(c.cmd(&["SETBIT", "b", "7", "1"]), int(0));
    assert_eq!(c.cmd(&["SETBIT", "b", "1", "0"]), int(1));
    assert_eq!(c.raw_cmd(&["GET", "b"]), b"$1\r\n\x01\r\n");
    assert_eq!(c.cmd(&["GETBIT", "b", "7"]), int(1));
    assert_eq!(c.cmd(&["GETBIT", "b", "1000"]), int(0));
    assert_eq!(c.cmd(&["GETBIT", "nope", "0"]), int(0));
    for bad in ["-1", "4294967296", "x", ""] {
        assert_eq!(c.cmd(&["SETBIT", "b", bad, "1"]), err(BAD_OFFSET), "{bad:?}");
        assert_eq!(c.cmd(&["GETBIT", "b", bad]), err(BAD_OFFSET), "{bad:?}");
    }
    for bad in ["2", "-1", "x", "01"] {
        assert_eq!(c.cmd(&["SETBIT", "b", "0", bad]), err("ERR bit is not an integer or out of range"));
    }
    // SETBIT on a number works on its decimal text.
    assert_eq!(c.cmd(&["SET", "n", "1"]), ok()); // "1" = 0b0011_0001
    assert_eq!(c.cmd(&["SETBIT", "n", "6", "1"]), int(0));
    assert_eq!(c.cmd(&["GET", "n"]), bulk("3"));
    let srv2 = TestServer::start(&["--proto-max-bulk-len", "1mb"]);
    let mut c2 = srv2.client();
    assert_eq!(c2.cmd(&["SETBIT", "b", "8388608", "1"]), err(BAD_OFFSET));
    assert_eq!(c2.cmd(&["SETBIT", "b", "8388607", "1"]), int(0));
    assert_eq!(c2.cmd(&["STRLEN", "b"]), int(1 << 20));
}

#[test]
fn bitcount_and_bitpos() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SETBIT", "b", "7", "1"]);
    c.cmd(&["SETBIT", "b", "9", "1"]);
    assert_eq!(c.cmd(&["BITCOUNT", "b"]), int(2));
    assert_eq!(c.cmd(&["BITCOUNT", "b", "0", "0"]), int(1));
    assert_eq!(c.cmd(&["BITCOUNT", "b", "0", "8", "BIT"]), int(1));
    assert_eq!(c.cmd(&["BITCOUNT", "b", "-1", "-1"]), int(1));
    assert_eq!(c.cmd(&["BITCOUNT", "b", "0"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["BITCOUNT", "b", "0", "1", "BOTH"]), err("ERR syntax error"));
    // An inverted negative range is 0 before the unit is even looked at.
    assert_eq!(c.cmd(&["BITCOUNT", "b", "-1", "-2", "BOTH"]), int(0));
    assert_eq!(c.cmd(&["BITCOUNT", "b", "x", "1"]), err(NOT_INT));
    // A missing key is 0 whatever the arguments (Redis 7.0 order).
    assert_eq!(c.cmd(&["BITCOUNT", "nope", "x"]), int(0));
    assert_eq!(c.cmd(&["BITPOS", "b", "1"]), int(7));
    assert_eq!(c.cmd(&["BITPOS", "b", "0"]), int(0));
    assert_eq!(c.cmd(&["BITPOS", "b", "1", "1"]), int(9));
    assert_eq!(c.cmd(&["BITPOS", "b", "1", "8", "-1", "BIT"]), int(9));
    assert_eq!(c.cmd(&["BITPOS", "b", "1", "0", "x", "FOO"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["BITPOS", "b", "2"]), err("ERR The bit argument must be 1 or 0."));
    assert_eq!(c.cmd(&["BITPOS", "b", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["BITPOS", "nope", "0"]), int(0));
    assert_eq!(c.cmd(&["BITPOS", "nope", "1", "5"]), int(-1));
    c.raw_cmd(&[&b"SET"[..], b"ones", b"\xff\xff"]);
    assert_eq!(c.cmd(&["BITPOS", "ones", "0"]), int(16));
    assert_eq!(c.cmd(&["BITPOS", "ones", "0", "0", "-1"]), int(-1));
    c.cmd(&["SET", "empty", ""]);
    assert_eq!(c.cmd(&["BITPOS", "empty", "0"]), int(-1));
}

#[test]
fn bitop() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["MSET", "x1", "foo", "x2", "bar"]);
    assert_eq!(c.cmd(&["BITOP", "AND", "d", "x1", "x2"]), int(3));
    assert_eq!(c.cmd(&["GET", "d"]), bulk("bab"));
    assert_eq!(c.cmd(&["BITOP", "or", "d", "x1", "x2"]), int(3));
    assert_eq!(c.raw_cmd(&["GET", "d"]), b"$3\r\nfo\x7f\r\n");
    assert_eq!(c.cmd(&["BITOP", "XOR", "d", "x1", "nope"]), int(3));
    assert_eq!(c.cmd(&["GET", "d"]), bulk("foo"));
    assert_eq!(c.cmd(&["BITOP", "NOT", "d", "x1"]), int(3));
    assert_eq!(c.raw_cmd(&["GET", "d"]), b"$3\r\n\x99\x90\x90\r\n");
    assert_eq!(
        c.cmd(&["BITOP", "NOT", "d", "x1", "x2"]),
        err("ERR BITOP NOT must be called with a single source key.")
    );
    assert_eq!(c.cmd(&["BITOP", "NAND", "d", "x1"]), err("ERR syntax error"));
    // All sources empty: the destination is deleted.
    assert_eq!(c.cmd(&["BITOP", "AND", "d", "nope1", "nope2"]), int(0));
    assert_eq!(c.cmd(&["GET", "d"]), Frame::Null);
}

#[test]
fn bitfield_and_bitfield_ro() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let reply = c.cmd(&[
        "BITFIELD", "bf", "SET", "i8", "0", "-100", "GET", "i8", "0", "INCRBY", "i8", "0", "-100", "OVERFLOW", "SAT",
        "INCRBY", "i8", "0", "-100", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "-100",
    ]);
    assert_eq!(reply, arr(vec![int(0), int(-100), int(56), int(-44), Frame::Null]));
    assert_eq!(c.cmd(&["BITFIELD", "bf", "GET", "u4", "#1"]), arr(vec![int(4)]));
    assert_eq!(c.cmd(&["BITFIELD", "bf"]), arr(vec![]));
    assert_eq!(
        c.cmd(&["BITFIELD", "bf", "GET", "i65", "0"]),
        err("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
    );
    assert_eq!(c.cmd(&["BITFIELD", "bf", "OVERFLOW", "foo"]), err("ERR Invalid OVERFLOW type specified"));
    assert_eq!(c.cmd(&["BITFIELD", "bf", "GET", "u8"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["BITFIELD", "bf", "GET", "u8", "-1"]), err(BAD_OFFSET));
    assert_eq!(c.cmd(&["BITFIELD_RO", "bf", "GET", "u8", "0"]), arr(vec![int(212)]));
    assert_eq!(
        c.cmd(&["BITFIELD_RO", "bf", "SET", "u8", "0", "1"]),
        err("ERR BITFIELD_RO only supports the GET subcommand")
    );
    // GET-only never creates the key; a write does, even when FAIL skips it.
    assert_eq!(c.cmd(&["BITFIELD", "new", "GET", "u8", "0"]), arr(vec![int(0)]));
    assert_eq!(c.cmd(&["STRLEN", "new"]), int(0));
    assert_eq!(c.cmd(&["BITFIELD", "new", "OVERFLOW", "FAIL", "SET", "u8", "8", "1000"]), arr(vec![Frame::Null]));
    assert_eq!(c.cmd(&["STRLEN", "new"]), int(2));
}

#[test]
fn setbit_that_changes_nothing_leaves_watch_valid() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SETBIT", "bits", "65", "1"]), int(0));
    assert_eq!(c.cmd(&["WATCH", "bits"]), ok());
    // Same value, inside the string: no change, as in Redis 7.0.
    assert_eq!(c.cmd(&["SETBIT", "bits", "65", "1"]), int(1));
    assert_eq!(c.cmd(&["SETBIT", "bits", "3", "0"]), int(0));
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["GETBIT", "bits", "65"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![int(1)]));
    // A flipped bit, or a string that grows, is a change.
    for args in [["SETBIT", "bits", "65", "0"], ["SETBIT", "bits", "200", "0"]] {
        assert_eq!(c.cmd(&["WATCH", "bits"]), ok());
        c.cmd(&args);
        assert_eq!(c.cmd(&["MULTI"]), ok());
        assert_eq!(c.cmd(&["GETBIT", "bits", "65"]), simple("QUEUED"));
        assert_eq!(c.cmd(&["EXEC"]), Frame::Null, "{args:?} must abort the transaction");
    }
}

fn dirty(c: &mut Client) -> i64 {
    let Frame::Bulk(text) = c.cmd(&["INFO", "persistence"]) else { panic!("INFO reply") };
    let text = String::from_utf8(text).unwrap();
    let line = text.lines().find_map(|l| l.strip_prefix("rdb_changes_since_last_save:")).expect("field");
    line.trim().parse().unwrap()
}

#[test]
fn setbit_and_bitfield_count_only_real_changes() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    // (command, reply, dirty increase), as Redis 7.0.15 gives them.
    let n = Frame::Null;
    let steps: Vec<(&[&str], Frame, i64)> = vec![
        (&["SETBIT", "bf", "0", "0"], int(0), 1),
        (&["SETBIT", "bf", "0", "0"], int(0), 0),
        (&["SETBIT", "bf", "0", "1"], int(0), 1),
        (&["SETBIT", "bf", "100", "0"], int(0), 1),
        (&["BITFIELD", "b2", "SET", "i5", "0", "0"], arr(vec![int(0)]), 1),
        (&["BITFIELD", "b2", "SET", "i5", "0", "0"], arr(vec![int(0)]), 0),
        (
            &[
                "BITFIELD", "b2", "SET", "i5", "0", "0", "SET", "i5", "0", "1", "INCRBY", "u2", "3", "0", "SET", "u2",
                "3", "0",
            ],
            arr(vec![int(0), int(0), int(1), int(1)]),
            2,
        ),
        // OVERFLOW FAIL skipped the only write: no change counted, though
        // the key was created.
        (&["BITFIELD", "b3", "OVERFLOW", "FAIL", "SET", "u2", "0", "9"], arr(vec![n.clone()]), 0),
        (&["EXISTS", "b3"], int(1), 0),
        // Growing the string counts the write that stored, even unchanged.
        (
            &["BITFIELD", "b2", "OVERFLOW", "FAIL", "SET", "u2", "40", "9", "SET", "u2", "0", "1"],
            arr(vec![n, int(0)]),
            1,
        ),
        (&["BITFIELD", "b2", "INCRBY", "u8", "0", "0", "INCRBY", "u8", "0", "256"], arr(vec![int(64), int(64)]), 0),
    ];
    for (cmd, reply, delta) in steps {
        let before = dirty(&mut c);
        assert_eq!(c.cmd(cmd), reply, "{cmd:?}");
        assert_eq!(dirty(&mut c) - before, delta, "{cmd:?}");
    }
}
