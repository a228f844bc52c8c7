//! The append-only file meeting the other features: a script's writes are
//! written as one MULTI/EXEC block of the commands it ran (never the EVAL
//! itself, whose replay could differ), and FLUSHALL reaches the file even
//! when its RDB save resets the change counter.
mod aof_support;
mod common;

use aof_support::*;
use common::*;

#[test]
fn script_effects_are_one_block_and_replay() {
    let dir = DataDir::new("scripts");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    let script = "redis.call('SET', KEYS[1], ARGV[1]); redis.call('INCR', KEYS[2]); \
                  redis.call('RPUSH', KEYS[3], math.random(1000)); return redis.call('GET', KEYS[2])";
    assert_eq!(c.cmd(&["EVAL", script, "3", "a", "n", "l", "v1"]), bulk("1"));
    assert_eq!(c.cmd(&["EVAL", "return redis.call('GET', KEYS[1])", "1", "a"]), bulk("v1"));
    let sha = match c.cmd(&["SCRIPT", "LOAD", "return redis.call('INCRBY', KEYS[1], 10)"]) {
        Frame::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(c.cmd(&["EVALSHA", &sha, "1", "n"]), int(11));
    let before = dump(&mut c, 1);
    let text = String::from_utf8_lossy(&std::fs::read(dir.last_incr()).unwrap()).to_lowercase();
    assert!(!text.contains("eval"), "scripts are written as their effects: {text}");
    // The three-write script is one block; the one-write EVALSHA goes bare,
    // as Redis 7.0 wraps only what propagates more than one command.
    assert_eq!(text.matches("multi").count(), 1, "one block per script writing more than once: {text}");
    assert!(text.contains("incrby"), "{text}");
    kill9(&mut srv);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(dump(&mut c, 1), before);
}

#[test]
fn flushall_with_save_points_still_reaches_the_aof() {
    let dir = DataDir::new("flushall");
    let mut srv = start_aof(&dir, &["--appendfsync", "always", "--save", "3600 1"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "a", "1"]), ok());
    // FLUSHALL saves at once with save points set, and resets the change
    // counter to 1: the flush must be in the file all the same.
    assert_eq!(c.cmd(&["FLUSHALL"]), ok());
    assert_eq!(c.cmd(&["SET", "b", "2"]), ok());
    assert_eq!(c.cmd(&["FLUSHALL"]), ok());
    kill9(&mut srv);
    let srv = start_aof(&dir, &["--save", ""]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
}
