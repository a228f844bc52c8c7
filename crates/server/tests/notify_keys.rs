//! Keyspace events of the string, bitmap, HyperLogLog and generic key
//! commands, checked where their order or absence is easy to get wrong:
//! two-key commands, events in another database, *STORE commands whose
//! result is empty, and writes that change nothing.
mod common;

use common::{Client, TestServer};

const MARKER: &str = "notify-keys-marker";

/// A commanding connection and a subscriber to every keyevent channel.
struct Events {
    cmd: Client,
    sub: Client,
}

impl Events {
    fn new(srv: &TestServer, classes: &str) -> Events {
        let mut cmd = srv.client();
        assert_eq!(cmd.cmd(&["CONFIG", "SET", "notify-keyspace-events", classes]), common::ok());
        let mut sub = srv.client();
        sub.cmd(&["PSUBSCRIBE", "__keyevent@*__:*"]);
        sub.cmd(&["SUBSCRIBE", MARKER]);
        Events { cmd, sub }
    }

    /// Run `args`; the events it caused as `db event key`, in order.
    fn run(&mut self, args: &[&str]) -> Vec<String> {
        self.cmd.cmd(args);
        self.cmd.cmd(&["PUBLISH", MARKER, "end"]);
        let mut got = Vec::new();
        loop {
            let text = self.sub.read_message();
            if text[0] == "message" && text[1] == MARKER {
                return got;
            }
            // pmessage, pattern, "__keyevent@<db>__:<event>", key
            let (db, event) = text[2].trim_start_matches("__keyevent@").split_once("__:").expect("keyevent channel");
            got.push(format!("{db} {event} {}", text[3]));
        }
    }
}

#[test]
fn rename_reports_the_new_key_then_from_then_to() {
    let srv = TestServer::start(&[]);
    let mut ev = Events::new(&srv, "KEAn");
    ev.run(&["SET", "a", "1"]);
    ev.run(&["SET", "b", "2"]);
    // `b` is replaced, so it is created anew before the rename events.
    assert_eq!(ev.run(&["RENAME", "a", "b"]), ["0 new b", "0 rename_from a", "0 rename_to b"]);
    assert_eq!(ev.run(&["RENAMENX", "b", "c"]), ["0 new c", "0 rename_from b", "0 rename_to c"]);
    ev.run(&["SET", "d", "1"]);
    assert!(ev.run(&["RENAMENX", "c", "d"]).is_empty());
    assert!(ev.run(&["RENAME", "c", "c"]).is_empty());
}

#[test]
fn expiry_family_events() {
    let srv = TestServer::start(&[]);
    let mut ev = Events::new(&srv, "KEA");
    assert_eq!(ev.run(&["SET", "k", "v", "EX", "100"]), ["0 set k", "0 expire k"]);
    assert_eq!(ev.run(&["GETEX", "k", "PERSIST"]), ["0 persist k"]);
    assert!(ev.run(&["GETEX", "k", "PERSIST"]).is_empty());
    assert!(ev.run(&["PERSIST", "k"]).is_empty());
    assert_eq!(ev.run(&["PEXPIRE", "k", "100000"]), ["0 expire k"]);
    assert!(ev.run(&["EXPIRE", "k", "10", "NX"]).is_empty());
    assert_eq!(ev.run(&["PERSIST", "k"]), ["0 persist k"]);
    // A deadline already past deletes the key: "del", not "expire".
    assert_eq!(ev.run(&["EXPIRE", "k", "-1"]), ["0 del k"]);
    assert!(ev.run(&["EXPIRE", "k", "10"]).is_empty());
    ev.run(&["SET", "k", "v"]);
    assert_eq!(ev.run(&["GETEX", "k", "EXAT", "1"]), ["0 del k"]);
}

#[test]
fn move_and_copy_report_in_each_database() {
    let srv = TestServer::start(&[]);
    let mut ev = Events::new(&srv, "KEAn");
    ev.run(&["SET", "k", "v"]);
    assert_eq!(ev.run(&["MOVE", "k", "3"]), ["3 new k", "0 move_from k", "3 move_to k"]);
    ev.run(&["SET", "k", "v"]);
    assert!(ev.run(&["MOVE", "k", "3"]).is_empty());
    assert_eq!(ev.run(&["COPY", "k", "k2", "DB", "5"]), ["5 new k2", "5 copy_to k2"]);
    assert!(ev.run(&["COPY", "k", "k2", "DB", "5"]).is_empty());
    assert_eq!(ev.run(&["COPY", "k", "k2", "DB", "5", "REPLACE"]), ["5 new k2", "5 copy_to k2"]);
    // SWAPDB and FLUSHDB say nothing in Redis 7.0.
    assert!(ev.run(&["SWAPDB", "0", "5"]).is_empty());
    assert!(ev.run(&["FLUSHDB"]).is_empty());
}

#[test]
fn store_commands_with_an_empty_result_delete() {
    let srv = TestServer::start(&[]);
    let mut ev = Events::new(&srv, "KEA");
    ev.run(&["RPUSH", "l", "2", "1"]);
    assert_eq!(ev.run(&["SORT", "l", "STORE", "dst"]), ["0 sortstore dst"]);
    assert_eq!(ev.run(&["SORT", "missing", "STORE", "dst"]), ["0 del dst"]);
    assert!(ev.run(&["SORT", "missing", "STORE", "dst"]).is_empty());
    ev.run(&["SET", "s", "abc"]);
    assert_eq!(ev.run(&["BITOP", "OR", "dst", "s"]), ["0 set dst"]);
    assert_eq!(ev.run(&["BITOP", "AND", "dst", "missing"]), ["0 del dst"]);
    assert!(ev.run(&["BITOP", "AND", "dst", "missing"]).is_empty());
}

#[test]
fn writes_that_change_nothing_say_nothing() {
    let srv = TestServer::start(&[]);
    let mut ev = Events::new(&srv, "KEA");
    assert_eq!(ev.run(&["SETBIT", "b", "3", "1"]), ["0 setbit b"]);
    assert!(ev.run(&["SETBIT", "b", "3", "1"]).is_empty());
    assert_eq!(ev.run(&["BITFIELD", "b", "SET", "u2", "0", "1"]), ["0 setbit b"]);
    assert!(ev.run(&["BITFIELD", "b", "SET", "u2", "0", "1", "GET", "u4", "0"]).is_empty());
    assert!(ev.run(&["BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "7"]).is_empty());
    assert_eq!(ev.run(&["PFADD", "h", "x"]), ["0 pfadd h"]);
    assert!(ev.run(&["PFADD", "h", "x"]).is_empty());
    assert_eq!(ev.run(&["PFMERGE", "h", "h"]), ["0 pfadd h"]);
    assert!(ev.run(&["SETRANGE", "r", "0", ""]).is_empty());
    assert_eq!(ev.run(&["SETRANGE", "r", "1", "x"]), ["0 setrange r"]);
    assert!(ev.run(&["SET", "r", "y", "NX"]).is_empty());
    assert!(ev.run(&["MSETNX", "r", "1", "q", "2"]).is_empty());
    assert_eq!(ev.run(&["DEL", "missing", "r", "b"]), ["0 del r", "0 del b"]);
    assert!(ev.run(&["GETDEL", "r"]).is_empty());
}

#[test]
fn string_commands_name_their_events() {
    let srv = TestServer::start(&[]);
    let mut ev = Events::new(&srv, "KEA");
    assert_eq!(ev.run(&["MSET", "a", "1", "b", "2"]), ["0 set a", "0 set b"]);
    assert_eq!(ev.run(&["INCR", "a"]), ["0 incrby a"]);
    assert_eq!(ev.run(&["DECRBY", "a", "3"]), ["0 incrby a"]);
    assert_eq!(ev.run(&["INCRBYFLOAT", "a", "0.5"]), ["0 incrbyfloat a"]);
    assert_eq!(ev.run(&["APPEND", "c", "x"]), ["0 append c"]);
    assert_eq!(ev.run(&["GETSET", "c", "y"]), ["0 set c"]);
    assert_eq!(ev.run(&["SET", "c", "z", "GET", "PX", "100000"]), ["0 set c", "0 expire c"]);
    assert_eq!(ev.run(&["GETDEL", "c"]), ["0 del c"]);
    // Failed commands emit nothing.
    assert!(ev.run(&["INCR", "b", "x"]).is_empty());
    ev.run(&["SET", "n", "notanumber"]);
    assert!(ev.run(&["INCR", "n"]).is_empty());
}
