//! Keyspace notifications of the list, set, sorted-set and geo commands
//! against the real binary: the events Redis 7.0.15 sends and their order
//! where a command touches two keys, empties one, or is a blocked pop
//! served by another client's write.
mod common;

use std::time::Duration;

use common::*;

const MARK: &str = "mark";

/// A subscriber to every key's keyspace channel of db 0 (and the marker
/// channel that ends each command's batch), plus a commanding client.
struct Watch {
    sub: Client,
    cmd: Client,
}

impl Watch {
    fn new(srv: &TestServer) -> Watch {
        let mut cmd = srv.client();
        assert_eq!(cmd.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEAn"]), ok());
        let mut sub = srv.client();
        sub.cmd(&["PSUBSCRIBE", "__keyspace@0__:*"]);
        sub.cmd(&["SUBSCRIBE", MARK]);
        Watch { sub, cmd }
    }

    /// Run `args` and return the `key event` pairs it caused, in order.
    fn events(&mut self, args: &[&str]) -> Vec<String> {
        self.cmd.cmd(args);
        self.drain()
    }

    /// The events sent since the last call (up to a marker published now).
    fn drain(&mut self) -> Vec<String> {
        self.cmd.cmd(&["PUBLISH", MARK, "x"]);
        let mut got = Vec::new();
        loop {
            let text = self.sub.read_message();
            if text[0] == "message" && text[1] == MARK {
                return got;
            }
            let key = text[2].trim_start_matches("__keyspace@0__:");
            got.push(format!("{key} {}", text[3]));
        }
    }
}

fn ev(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn moving_the_last_element_reports_the_push_before_the_pop() {
    let srv = TestServer::start(&[]);
    let mut w = Watch::new(&srv);
    w.events(&["RPUSH", "src", "a"]);
    assert_eq!(
        w.events(&["LMOVE", "src", "dst", "LEFT", "RIGHT"]),
        ev(&["dst new", "dst rpush", "src lpop", "src del"])
    );
    // Onto itself: one list, pushed then popped, never deleted.
    assert_eq!(w.events(&["RPOPLPUSH", "dst", "dst"]), ev(&["dst lpush", "dst rpop"]));
    // Nothing to move: no event at all.
    assert_eq!(w.events(&["LMOVE", "nosuch", "dst", "LEFT", "LEFT"]), ev(&[]));
}

#[test]
fn list_edits_that_empty_the_key_end_with_del() {
    let srv = TestServer::start(&[]);
    let mut w = Watch::new(&srv);
    w.events(&["RPUSH", "l", "a", "b", "c"]);
    assert_eq!(w.events(&["LPOP", "l"]), ev(&["l lpop"]));
    assert_eq!(w.events(&["RPOP", "l", "5"]), ev(&["l rpop", "l del"]));
    w.events(&["RPUSH", "l", "a"]);
    // LTRIM reports even a trim that keeps everything.
    assert_eq!(w.events(&["LTRIM", "l", "0", "-1"]), ev(&["l ltrim"]));
    assert_eq!(w.events(&["LTRIM", "l", "5", "6"]), ev(&["l ltrim", "l del"]));
    w.events(&["RPUSH", "l", "a"]);
    assert_eq!(w.events(&["LREM", "l", "0", "zz"]), ev(&[]));
    assert_eq!(w.events(&["LINSERT", "l", "BEFORE", "zz", "x"]), ev(&[]));
    assert_eq!(w.events(&["LREM", "l", "0", "a"]), ev(&["l lrem", "l del"]));
    assert_eq!(w.events(&["LPUSHX", "l", "a"]), ev(&[]));
}

#[test]
fn smove_reports_the_source_before_creating_the_destination() {
    let srv = TestServer::start(&[]);
    let mut w = Watch::new(&srv);
    w.events(&["SADD", "s", "m"]);
    assert_eq!(w.events(&["SMOVE", "s", "d", "m"]), ev(&["s srem", "s del", "d new", "d sadd"]));
    // Already a member of the destination: only the source changed.
    w.events(&["SADD", "s", "m", "n"]);
    assert_eq!(w.events(&["SMOVE", "s", "d", "m"]), ev(&["s srem"]));
    assert_eq!(w.events(&["SADD", "d", "m"]), ev(&[]));
    assert_eq!(w.events(&["SPOP", "s", "9"]), ev(&["s spop", "s del"]));
}

#[test]
fn store_commands_delete_on_an_empty_result() {
    let srv = TestServer::start(&[]);
    let mut w = Watch::new(&srv);
    w.events(&["ZADD", "z", "1", "a"]);
    assert_eq!(w.events(&["ZUNIONSTORE", "out", "1", "z"]), ev(&["out new", "out zunionstore"]));
    assert_eq!(w.events(&["ZINTERSTORE", "out", "2", "z", "nosuch"]), ev(&["out del"]));
    // Nothing to delete: no event.
    assert_eq!(w.events(&["ZINTERSTORE", "out", "2", "z", "nosuch"]), ev(&[]));
    assert_eq!(w.events(&["SUNIONSTORE", "s", "nosuch"]), ev(&[]));
    assert_eq!(w.events(&["GEOADD", "g", "13.361389", "38.115556", "p"]), ev(&["g new", "g zadd"]));
    assert_eq!(
        w.events(&["GEOSEARCHSTORE", "near", "g", "FROMLONLAT", "13.36", "38.11", "BYRADIUS", "10", "km"]),
        ev(&["near new", "near geosearchstore"])
    );
    assert_eq!(w.events(&["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "near"]), ev(&["near del"]));
}

#[test]
fn zset_updates_report_only_real_changes() {
    let srv = TestServer::start(&[]);
    let mut w = Watch::new(&srv);
    assert_eq!(w.events(&["ZADD", "z", "XX", "1", "a"]), ev(&[]));
    assert_eq!(w.events(&["ZADD", "z", "1", "a", "2", "b"]), ev(&["z new", "z zadd"]));
    assert_eq!(w.events(&["ZADD", "z", "1", "a"]), ev(&[]));
    assert_eq!(w.events(&["ZINCRBY", "z", "0", "a"]), ev(&[]));
    assert_eq!(w.events(&["ZINCRBY", "z", "1", "a"]), ev(&["z zincr"]));
    assert_eq!(w.events(&["ZREMRANGEBYSCORE", "z", "5", "6"]), ev(&[]));
    assert_eq!(w.events(&["ZREMRANGEBYRANK", "z", "0", "0"]), ev(&["z zremrangebyrank"]));
    assert_eq!(w.events(&["ZPOPMAX", "z"]), ev(&["z zpopmax", "z del"]));
}

#[test]
fn blocked_pops_report_when_served() {
    let srv = TestServer::start(&[]);
    let mut w = Watch::new(&srv);
    let mut blocked = srv.client();
    blocked.send(b"*6\r\n$6\r\nBLMOVE\r\n$1\r\nq\r\n$3\r\ndst\r\n$4\r\nLEFT\r\n$5\r\nRIGHT\r\n$1\r\n0\r\n");
    // Let the BLMOVE block before the push arrives.
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(w.events(&["RPUSH", "q", "v"]), ev(&["q new", "q rpush", "dst new", "dst rpush", "q lpop", "q del"]));
    assert_eq!(blocked.read_frame(), bulk("v"));
    blocked.send(b"*3\r\n$8\r\nBZPOPMIN\r\n$1\r\nz\r\n$1\r\n0\r\n");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(w.events(&["ZADD", "z", "1", "a", "2", "b"]), ev(&["z new", "z zadd", "z zpopmin"]));
}

#[test]
fn hash_writes_report_like_redis() {
    let srv = TestServer::start(&[]);
    let mut w = Watch::new(&srv);
    assert_eq!(w.events(&["HSET", "h", "f", "v"]), ev(&["h new", "h hset"]));
    // Same value again: still reported.
    assert_eq!(w.events(&["HSET", "h", "f", "v"]), ev(&["h hset"]));
    assert_eq!(w.events(&["HSETNX", "h", "f", "x"]), ev(&[]));
    assert_eq!(w.events(&["HINCRBY", "h", "f", "1"]), ev(&[]));
    assert_eq!(w.events(&["HINCRBYFLOAT", "h", "n", "1.5"]), ev(&["h hincrbyfloat"]));
    assert_eq!(w.events(&["HDEL", "h", "zz"]), ev(&[]));
    assert_eq!(w.events(&["HDEL", "h", "f", "n"]), ev(&["h hdel", "h del"]));
}
