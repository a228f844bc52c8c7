//! Black-box tests of DEBUG: access control by `enable-debug-command`, and
//! the subcommands Redis's test suite uses. Every expected reply (digests
//! included) was produced by redis-server 7.0.15 on the same commands.
mod common;

use std::time::Duration;

use common::*;

fn debug_server() -> TestServer {
    TestServer::start(&["--enable-debug-command", "yes"])
}

#[test]
fn refused_by_default_and_allowed_locally() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let want = "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run \
                it from a local connection, otherwise you need to set this option in the configuration file, and \
                then restart the server.\r\n";
    assert_eq!(c.raw_cmd(&["DEBUG", "SLEEP", "0"]), want.as_bytes());
    let srv = TestServer::start(&["--enable-debug-command", "local"]);
    assert_eq!(srv.client().raw_cmd(&["DEBUG", "SLEEP", "0"]), b"+OK\r\n");
}

/// A dataset of every type and both listpack and hashtable/skiplist
/// encodings, written identically on Volley and on redis-server.
fn write_dataset(c: &mut Client) {
    let cmds: &[&[&str]] = &[
        &["SET", "s", "hello"],
        &["SET", "n", "12345"],
        &["SET", "e", "val", "EX", "1000"],
        &["RPUSH", "l", "a", "b", "3", "-7"],
        &["SADD", "st", "x", "y", "1", "2"],
        &["SADD", "si", "1", "2", "3"],
        &["ZADD", "z", "1.5", "a", "2", "b", "inf", "c"],
        &["HSET", "h", "f", "v", "g", "12"],
        &["CONFIG", "SET", "zset-max-listpack-entries", "1"],
        &["ZADD", "zbig", "1", "a", "2", "b", "0.1", "c"],
        &["CONFIG", "SET", "hash-max-listpack-entries", "1"],
        &["HSET", "hbig", "a", "1", "b", "2"],
        &["SELECT", "3"],
        &["SET", "other", "1"],
        &["SELECT", "0"],
    ];
    for args in cmds {
        let reply = c.cmd(args);
        assert!(!matches!(reply, Frame::Error(_)), "{args:?}: {reply:?}");
    }
}

#[test]
fn digests_equal_redis_servers() {
    let srv = debug_server();
    let mut c = srv.client();
    assert_eq!(c.raw_cmd(&["DEBUG", "DIGEST"]), b"+0000000000000000000000000000000000000000\r\n");
    write_dataset(&mut c);
    assert_eq!(c.raw_cmd(&["DEBUG", "DIGEST"]), b"+da04e33d240783fe18681cf5620fb19463127075\r\n");
    let keys = ["s", "n", "e", "l", "st", "si", "z", "h", "zbig", "hbig", "nokey"];
    let want = [
        "36b23a1456b2dce2c3ed252c456761301dba8060",
        "e1cf90774e995ae03de66e8109dc5cb9d9c2dc83",
        "ac04a84d3fcd16162a871280160dabf4ef51f46f",
        "787442c5fa6f3b01890f44c9b3eb8c7a7978b82e",
        "d9a5e496512416d64a1c5e6d33afd9f2f9c366c5",
        "2a462a3f51a1db89738ebbeef0c47ce1bbc85246",
        // Sorted sets and hashes, listpack then skiplist/hashtable encoded.
        "e92d6b728e330370f3ad224b269045df0d1b132d",
        "8530acc75d5274eb0fc0da86f28ed5533274a6d4",
        "25871ad0a64f59ef902e4d844e2fa69f95ede820",
        "6c8f22b3bf510fdcfd6122dd0f908a80e88243bf",
    ];
    let mut args = vec!["DEBUG", "DIGEST-VALUE"];
    args.extend(keys);
    let Frame::Array(got) = c.cmd(&args) else { panic!("array") };
    assert_eq!(got.len(), keys.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(*g, simple(w));
    }
    assert_eq!(got[10], simple(&"0".repeat(40)));
    // Reordering the same data does not change the dataset digest.
    assert_eq!(c.cmd(&["DEL", "l"]), int(1));
    assert_eq!(c.cmd(&["RPUSH", "l", "a", "b", "3", "-7"]), int(4));
    assert_eq!(c.raw_cmd(&["DEBUG", "DIGEST"]), b"+da04e33d240783fe18681cf5620fb19463127075\r\n");
}

#[test]
fn object_describes_the_value() {
    let srv = debug_server();
    let mut c = srv.client();
    assert_eq!(c.raw_cmd(&["DEBUG", "OBJECT", "nokey"]), b"-ERR no such key\r\n");
    c.cmd(&["SET", "s", "hello"]);
    c.cmd(&["SET", "n", "12345"]);
    c.cmd(&["RPUSH", "l", "a", "b", "3", "-7"]);
    let text = |c: &mut Client, k: &str| match c.cmd(&["DEBUG", "OBJECT", k]) {
        Frame::Simple(s) => String::from_utf8(s).unwrap(),
        other => panic!("{other:?}"),
    };
    let s = text(&mut c, "s");
    assert!(s.starts_with("Value at:0x"), "{s}");
    assert!(s.contains(" refcount:1 encoding:embstr serializedlength:6 lru:"), "{s}");
    assert!(s.contains(" lru_seconds_idle:"), "{s}");
    let n = text(&mut c, "n");
    assert!(n.contains(" encoding:int serializedlength:3 "), "{n}");
    let l = text(&mut c, "l");
    assert!(l.contains(" encoding:quicklist serializedlength:21 "), "{l}");
    assert!(l.contains(" ql_nodes:1 ql_avg_node:4.00 ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:"), "{l}");
    // INCR of a non-shared integer keeps the same object, as in Redis.
    c.cmd(&["SET", "foo", "20000"]);
    c.cmd(&["INCR", "foo"]);
    let before = text(&mut c, "foo").split(' ').nth(1).unwrap().to_string();
    c.cmd(&["INCR", "foo"]);
    let after = text(&mut c, "foo").split(' ').nth(1).unwrap().to_string();
    assert_eq!(before, after);
}

#[test]
fn protocol_replies_in_both_protocols() {
    let srv = debug_server();
    let mut c = srv.client();
    let resp2: &[(&str, &[u8])] = &[
        ("string", b"$11\r\nHello World\r\n"),
        ("integer", b":12345\r\n"),
        ("double", b"$5\r\n3.141\r\n"),
        ("bignum", b"$37\r\n1234567999999999999999999999999999999\r\n"),
        ("null", b"$-1\r\n"),
        ("array", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
        ("set", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
        ("map", b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n"),
        ("attrib", b"$39\r\nSome real reply following the attribute\r\n"),
        ("push", b"-ERR RESP2 is not supported by this command\r\n"),
        ("true", b":1\r\n"),
        ("verbatim", b"$25\r\nThis is a verbatim\nstring\r\n"),
        ("zzz", b"-ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false\r\n"),
    ];
    for (kind, want) in resp2 {
        assert_eq!(c.raw_cmd(&["DEBUG", "PROTOCOL", kind]), *want, "{kind}");
    }
    c.cmd(&["HELLO", "3"]);
    let resp3: &[(&str, &[u8])] = &[
        ("double", b",3.141\r\n"),
        ("bignum", b"(1234567999999999999999999999999999999\r\n"),
        ("null", b"_\r\n"),
        ("set", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
        ("map", b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
        ("false", b"#f\r\n"),
        ("verbatim", b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
    ];
    for (kind, want) in resp3 {
        assert_eq!(c.raw_cmd(&["DEBUG", "PROTOCOL", kind]), *want, "{kind}");
    }
    // Attribute and push frames are followed by a real reply.
    c.send(b"*3\r\n$5\r\nDEBUG\r\n$8\r\nPROTOCOL\r\n$6\r\nattrib\r\n");
    let want: &[u8] = b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n";
    let mut got = Vec::new();
    while got.len() < want.len() {
        got.extend(c.read_raw());
    }
    assert_eq!(got, want);
    c.send(b"*3\r\n$5\r\nDEBUG\r\n$8\r\nPROTOCOL\r\n$4\r\npush\r\n");
    assert_eq!(c.read_raw(), b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n");
    assert_eq!(c.read_raw(), b"$40\r\nSome real reply following the push reply\r\n");
}

#[test]
fn set_active_expire_stops_and_restarts_the_cycle() {
    let srv = debug_server();
    let mut c = srv.client();
    assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    assert_eq!(c.cmd(&["SET", "k", "v", "PX", "100"]), ok());
    std::thread::sleep(Duration::from_millis(500));
    // Nobody read the key and the cycle is off: it is still counted.
    assert_eq!(c.cmd(&["DBSIZE"]), int(1));
    assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]), ok());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
}

#[test]
fn small_subcommands_and_errors() {
    let srv = debug_server();
    let mut c = srv.client();
    let cases: &[(&[&str], &[u8])] = &[
        (&["DEBUG", "SLEEP", "abc"], b"+OK\r\n"),
        (&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1kb"], b"+OK\r\n"),
        (&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"], b"+OK\r\n"),
        (
            &["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"],
            b"-ERR argument must be a memory value bigger than 1 and smaller than 4gb\r\n",
        ),
        (
            &["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "-1"],
            b"-ERR argument must be a memory value bigger than 1 and smaller than 4gb\r\n",
        ),
        (&["DEBUG", "POPULATE", "3"], b"+OK\r\n"),
        (&["DBSIZE"], b":3\r\n"),
        (&["GET", "key:0"], b"$7\r\nvalue:0\r\n"),
        (&["DEBUG", "POPULATE", "2", "pfx", "3"], b"+OK\r\n"),
        (&["GET", "pfx:1"], b"$3\r\nval\r\n"),
        (&["DEBUG", "POPULATE", "2", "pfx2", "12"], b"+OK\r\n"),
        (&["GET", "pfx2:1"], b"$12\r\nvalue:1\0\0\0\0\0\r\n"),
        (&["DEBUG", "POPULATE", "x"], b"-ERR value is out of range, must be positive\r\n"),
        (&["DEBUG", "POPULATE", "-1"], b"-ERR value is out of range, must be positive\r\n"),
        (&["DEBUG", "STRINGMATCH-TEST"], b"+Apparently Redis did not crash: test passed\r\n"),
        (&["DEBUG", "LISTPACK", "key:0"], b"-ERR Not a listpack encoded object.\r\n"),
        (&["DEBUG", "LISTPACK", "nokey"], b"-ERR no such key\r\n"),
        (&["HSET", "hh", "a", "1"], b":1\r\n"),
        (&["DEBUG", "LISTPACK", "hh"], b"+Listpack structure printed on stdout\r\n"),
        (&["DEBUG", "DIGEST-VALUE"], b"*0\r\n"),
        (
            &["DEBUG", "NOSUCH"],
            b"-ERR unknown subcommand or wrong number of arguments for 'NOSUCH'. Try DEBUG HELP.\r\n",
        ),
        (
            &["DEBUG", "OBJECT"],
            b"-ERR unknown subcommand or wrong number of arguments for 'OBJECT'. Try DEBUG HELP.\r\n",
        ),
        (&["DEBUG"], b"-ERR wrong number of arguments for 'debug' command\r\n"),
    ];
    for (args, want) in cases {
        assert_eq!(c.raw_cmd(args), *want, "{args:?}");
    }
}
