//! Black-box tests of the list commands over real TCP; expected replies
//! were taken from Redis 7.0.15 (exact bytes where null forms matter).
mod common;
use common::*;

const NOT_INT: &str = "ERR value is not an integer or out of range";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn bulks(items: &[&str]) -> Frame {
    arr(items.iter().map(|s| bulk(s)).collect())
}

fn raw(c: &mut Client, args: &[&str]) -> String {
    String::from_utf8_lossy(&c.raw_cmd(args)).into_owned()
}

#[test]
fn push_pop_len_and_null_forms() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["RPUSH", "l", "a", "b", "c"]), int(3));
    assert_eq!(c.cmd(&["LPUSH", "l", "x", "y"]), int(5));
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]), bulks(&["y", "x", "a", "b", "c"]));
    assert_eq!(c.cmd(&["LPUSHX", "nokey", "a"]), int(0));
    assert_eq!(c.cmd(&["RPUSHX", "l", "z"]), int(6));
    assert_eq!(c.cmd(&["EXISTS", "nokey"]), int(0));
    assert_eq!(c.cmd(&["LLEN", "l"]), int(6));
    assert_eq!(c.cmd(&["LLEN", "nokey"]), int(0));
    assert_eq!(c.cmd(&["LPOP", "l"]), bulk("y"));
    assert_eq!(c.cmd(&["RPOP", "l"]), bulk("z"));
    assert_eq!(c.cmd(&["LPOP", "l", "2"]), bulks(&["x", "a"]));
    assert_eq!(raw(&mut c, &["LPOP", "l", "0"]), "*0\r\n");
    assert_eq!(raw(&mut c, &["LPOP", "nokey", "0"]), "*-1\r\n");
    assert_eq!(raw(&mut c, &["LPOP", "nokey"]), "$-1\r\n");
    assert_eq!(c.cmd(&["RPOP", "l", "10"]), bulks(&["c", "b"]));
    assert_eq!(c.cmd(&["EXISTS", "l"]), int(0), "emptied lists are deleted");
    assert_eq!(c.cmd(&["LPOP", "l", "-1"]), err("ERR value is out of range, must be positive"));
    assert_eq!(c.cmd(&["LPOP", "l", "x"]), err("ERR value is out of range, must be positive"));
    assert_eq!(c.cmd(&["LPOP", "l", "1", "2"]), err("ERR wrong number of arguments for 'lpop' command"));
    assert_eq!(c.cmd(&["RPUSH", "l"]), err("ERR wrong number of arguments for 'rpush' command"));
    c.cmd(&["SET", "s", "v"]);
    for cmd in
        [&["LPUSH", "s", "a"][..], &["RPUSHX", "s", "a"], &["LPOP", "s"], &["LLEN", "s"], &["LRANGE", "s", "0", "1"]]
    {
        assert_eq!(c.cmd(cmd), err(WRONGTYPE), "{cmd:?}");
    }
    c.cmd(&["HELLO", "3"]);
    assert_eq!(raw(&mut c, &["LPOP", "nokey", "1"]), "_\r\n");
    assert_eq!(raw(&mut c, &["RPOP", "nokey"]), "_\r\n");
}

#[test]
fn range_index_set() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "l", "a", "1", "-300", "100000", "9223372036854775807", "007", ""]);
    let all = ["a", "1", "-300", "100000", "9223372036854775807", "007", ""];
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]), bulks(&all));
    assert_eq!(c.cmd(&["LRANGE", "l", "-100", "100"]), bulks(&all));
    assert_eq!(c.cmd(&["LRANGE", "l", "-2", "-1"]), bulks(&["007", ""]));
    assert_eq!(c.cmd(&["LRANGE", "l", "5", "2"]), arr(vec![]));
    assert_eq!(c.cmd(&["LRANGE", "nokey", "0", "-1"]), arr(vec![]));
    assert_eq!(c.cmd(&["LRANGE", "l", "x", "1"]), err(NOT_INT));
    assert_eq!(c.cmd(&["LINDEX", "l", "-1"]), bulk(""));
    assert_eq!(c.cmd(&["LINDEX", "l", "3"]), bulk("100000"));
    assert_eq!(raw(&mut c, &["LINDEX", "l", "7"]), "$-1\r\n");
    assert_eq!(raw(&mut c, &["LINDEX", "nokey", "x"]), "$-1\r\n");
    assert_eq!(c.cmd(&["LINDEX", "l", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["LSET", "l", "-1", "last"]), ok());
    assert_eq!(c.cmd(&["LSET", "l", "0", "12"]), ok());
    assert_eq!(c.cmd(&["LINDEX", "l", "0"]), bulk("12"));
    assert_eq!(c.cmd(&["LINDEX", "l", "6"]), bulk("last"));
    assert_eq!(c.cmd(&["LSET", "l", "7", "x"]), err("ERR index out of range"));
    assert_eq!(c.cmd(&["LSET", "l", "x", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["LSET", "nokey", "x", "x"]), err("ERR no such key"));
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["LSET", "s", "x", "v"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["LINDEX", "s", "x"]), err(WRONGTYPE));
}

#[test]
fn insert_rem_trim() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "l", "a", "b", "a", "c", "a"]);
    assert_eq!(c.cmd(&["LINSERT", "l", "BEFORE", "b", "x"]), int(6));
    assert_eq!(c.cmd(&["LINSERT", "l", "after", "c", "y"]), int(7));
    assert_eq!(c.cmd(&["LINSERT", "l", "AFTER", "zz", "y"]), int(-1));
    assert_eq!(c.cmd(&["LINSERT", "nokey", "AFTER", "zz", "y"]), int(0));
    assert_eq!(c.cmd(&["LINSERT", "l", "middle", "a", "y"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]), bulks(&["a", "x", "b", "a", "c", "y", "a"]));
    assert_eq!(c.cmd(&["LREM", "l", "-1", "a"]), int(1));
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]), bulks(&["a", "x", "b", "a", "c", "y"]));
    assert_eq!(c.cmd(&["LREM", "l", "1", "a"]), int(1));
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]), bulks(&["x", "b", "a", "c", "y"]));
    assert_eq!(c.cmd(&["LREM", "l", "0", "nothing"]), int(0));
    assert_eq!(c.cmd(&["LREM", "l", "x", "a"]), err(NOT_INT));
    assert_eq!(c.cmd(&["LREM", "nokey", "0", "a"]), int(0));
    assert_eq!(c.cmd(&["LTRIM", "l", "1", "-2"]), ok());
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]), bulks(&["b", "a", "c"]));
    assert_eq!(c.cmd(&["LTRIM", "l", "x", "1"]), err(NOT_INT));
    assert_eq!(c.cmd(&["LTRIM", "nokey", "0", "1"]), ok());
    assert_eq!(c.cmd(&["LTRIM", "l", "5", "10"]), ok());
    assert_eq!(c.cmd(&["EXISTS", "l"]), int(0));
    c.cmd(&["RPUSH", "l", "a", "a"]);
    assert_eq!(c.cmd(&["LREM", "l", "0", "a"]), int(2));
    assert_eq!(c.cmd(&["EXISTS", "l"]), int(0));
}

#[test]
fn lpos_options() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"]);
    assert_eq!(c.cmd(&["LPOS", "l", "c"]), int(2));
    assert_eq!(c.cmd(&["LPOS", "l", "c", "RANK", "-1"]), int(7));
    assert_eq!(c.cmd(&["LPOS", "l", "c", "RANK", "2"]), int(6));
    assert_eq!(c.cmd(&["LPOS", "l", "c", "COUNT", "0"]), arr(vec![int(2), int(6), int(7)]));
    assert_eq!(c.cmd(&["LPOS", "l", "c", "RANK", "-1", "COUNT", "2"]), arr(vec![int(7), int(6)]));
    assert_eq!(c.cmd(&["LPOS", "l", "c", "COUNT", "0", "MAXLEN", "7"]), arr(vec![int(2), int(6)]));
    assert_eq!(c.cmd(&["LPOS", "l", "1"]), int(3));
    assert_eq!(c.cmd(&["LPOS", "l", "a", "RANK", "-9223372036854775808"]), int(0));
    assert_eq!(raw(&mut c, &["LPOS", "l", "zz"]), "$-1\r\n");
    assert_eq!(raw(&mut c, &["LPOS", "nokey", "a", "COUNT", "1"]), "*0\r\n");
    assert_eq!(
        c.cmd(&["LPOS", "l", "a", "RANK", "0"]),
        err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
    );
    assert_eq!(c.cmd(&["LPOS", "l", "a", "COUNT", "-1"]), err("ERR COUNT can't be negative"));
    assert_eq!(c.cmd(&["LPOS", "l", "a", "COUNT", "x"]), err("ERR COUNT can't be negative"));
    assert_eq!(c.cmd(&["LPOS", "l", "a", "MAXLEN", "-1"]), err("ERR MAXLEN can't be negative"));
    assert_eq!(c.cmd(&["LPOS", "l", "a", "RANK", "x"]), err(NOT_INT));
    assert_eq!(c.cmd(&["LPOS", "l", "a", "RANK"]), err("ERR syntax error"));
}

#[test]
fn lmove_rpoplpush_lmpop() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "src", "a", "b", "c"]);
    assert_eq!(c.cmd(&["LMOVE", "src", "dst", "LEFT", "RIGHT"]), bulk("a"));
    assert_eq!(c.cmd(&["RPOPLPUSH", "src", "dst"]), bulk("c"));
    assert_eq!(c.cmd(&["LRANGE", "dst", "0", "-1"]), bulks(&["c", "a"]));
    assert_eq!(c.cmd(&["LMOVE", "dst", "dst", "LEFT", "RIGHT"]), bulk("c"), "rotation");
    assert_eq!(c.cmd(&["LRANGE", "dst", "0", "-1"]), bulks(&["a", "c"]));
    assert_eq!(raw(&mut c, &["LMOVE", "nokey", "dst", "LEFT", "LEFT"]), "$-1\r\n");
    assert_eq!(c.cmd(&["LMOVE", "src", "dst", "UP", "LEFT"]), err("ERR syntax error"));
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["LMOVE", "src", "s", "LEFT", "LEFT"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["LLEN", "src"]), int(1), "nothing popped on a WRONGTYPE destination");
    assert_eq!(c.cmd(&["RPOPLPUSH", "src", "dst"]), bulk("b"));
    assert_eq!(c.cmd(&["EXISTS", "src"]), int(0));

    assert_eq!(
        c.cmd(&["LMPOP", "3", "nokey", "dst", "x", "RIGHT", "COUNT", "5"]),
        arr(vec![bulk("dst"), bulks(&["c", "a", "b"])])
    );
    assert_eq!(raw(&mut c, &["LMPOP", "1", "dst", "LEFT"]), "*-1\r\n");
    assert_eq!(c.cmd(&["LMPOP", "1", "s", "LEFT"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["LMPOP", "0", "a", "LEFT"]), err("ERR numkeys should be greater than 0"));
    assert_eq!(c.cmd(&["LMPOP", "x", "a", "LEFT"]), err("ERR numkeys should be greater than 0"));
    assert_eq!(c.cmd(&["LMPOP", "3", "a", "LEFT"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["LMPOP", "1", "a", "LEFT", "COUNT", "0"]), err("ERR count should be greater than 0"));
    assert_eq!(c.cmd(&["LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "1"]), err("ERR syntax error"));
}

#[test]
fn encoding_and_node_sizes() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "small", "a"]);
    assert_eq!(c.cmd(&["TYPE", "small"]), simple("list"));
    // Redis 7.0 reports every list as a quicklist, small or large.
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "small"]), bulk("quicklist"));
    let big = "x".repeat(100);
    for fill in ["-1", "-2", "-5", "1", "128"] {
        c.cmd(&["CONFIG", "SET", "list-max-listpack-size", fill]);
        c.cmd(&["DEL", "big"]);
        for i in 0..500 {
            let v = format!("{big}{i}");
            c.cmd(&[if i % 2 == 0 { "RPUSH" } else { "LPUSH" }, "big", &v]);
        }
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "big"]), bulk("quicklist"));
        assert_eq!(c.cmd(&["LLEN", "big"]), int(500));
        assert_eq!(c.cmd(&["LINDEX", "big", "0"]), bulk(&format!("{big}499")));
        assert_eq!(c.cmd(&["LINDEX", "big", "-1"]), bulk(&format!("{big}498")));
        assert_eq!(c.cmd(&["LINDEX", "big", "250"]), bulk(&format!("{big}0")));
        assert_eq!(c.cmd(&["LINSERT", "big", "AFTER", &format!("{big}0"), "mid"]), int(501));
        assert_eq!(c.cmd(&["LINDEX", "big", "251"]), bulk("mid"));
        assert_eq!(c.cmd(&["LREM", "big", "0", "mid"]), int(1));
        assert_eq!(c.cmd(&["LTRIM", "big", "100", "-101"]), ok());
        assert_eq!(c.cmd(&["LLEN", "big"]), int(300));
        assert_eq!(c.cmd(&["LINDEX", "big", "0"]), bulk(&format!("{big}299")));
    }
}
