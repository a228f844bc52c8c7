//! FUNCTION libraries and FCALL over real TCP, with redis-server 7.0.15's
//! reply bytes: loading (header, load API, errors), calls and their flags,
//! LIST/STATS/DELETE/FLUSH, DUMP/RESTORE policies, and libraries surviving
//! a restart through the RDB and through the AOF.
mod common;
use std::time::Duration;

use common::*;

fn raw(c: &mut Client, args: &[&str]) -> String {
    String::from_utf8_lossy(&c.raw_cmd(args)).into_owned()
}

/// A library `lib` with one function `f` whose body is `body`.
fn lib(lib: &str, f: &str, body: &str) -> String {
    format!("#!lua name={lib}\nredis.register_function('{f}', function(KEYS, ARGV)\n {body} \nend)")
}

#[test]
fn load_call_list_delete() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(
        raw(&mut c, &["FUNCTION", "LOAD", &lib("mylib", "Hello", "return 'hi ' .. ARGV[1]")]),
        "$5\r\nmylib\r\n"
    );
    // Function names are case-insensitive, library names are not.
    assert_eq!(raw(&mut c, &["FCALL", "hello", "0", "bob"]), "$6\r\nhi bob\r\n");
    assert_eq!(
        raw(&mut c, &["FUNCTION", "LOAD", &lib("mylib", "g", "return 1")]),
        "-ERR Library 'mylib' already exists\r\n"
    );
    assert_eq!(
        raw(&mut c, &["FUNCTION", "LOAD", &lib("other", "HELLO", "return 1")]),
        "-ERR Function HELLO already exists\r\n"
    );
    let list = "*1\r\n*6\r\n$12\r\nlibrary_name\r\n$5\r\nmylib\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n\
                *1\r\n*6\r\n$4\r\nname\r\n$5\r\nHello\r\n$11\r\ndescription\r\n$-1\r\n$5\r\nflags\r\n*0\r\n";
    assert_eq!(raw(&mut c, &["FUNCTION", "LIST"]), list);
    assert_eq!(raw(&mut c, &["FUNCTION", "LIST", "LIBRARYNAME", "x*"]), "*0\r\n");
    assert_eq!(raw(&mut c, &["FUNCTION", "DELETE", "nosuch"]), "-ERR Library not found\r\n");
    assert_eq!(raw(&mut c, &["FUNCTION", "DELETE", "mylib"]), "+OK\r\n");
    assert_eq!(raw(&mut c, &["FCALL", "hello", "0"]), "-ERR Function not found\r\n");
}

#[test]
fn load_errors_match_redis() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let cases = [
        ("return 1", "-ERR Missing library metadata\r\n"),
        ("#!lua\nreturn 1", "-ERR Library name was not given\r\n"),
        ("#!lua name=a foo=b\nreturn 1", "-ERR Invalid metadata value given: foo=b\r\n"),
        ("#!js name=a\nreturn 1", "-ERR Engine 'js' not found\r\n"),
        ("#!lua name=a-b\nreturn 1", "-ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long\r\n"),
        ("#!lua name=a\nreturn 1", "-ERR No functions registered\r\n"),
        ("#!lua name=a\nlocal x = = 1", "-ERR Error compiling function: user_function:2: unexpected symbol near '='\r\n"),
        ("#!lua name=a\nreturn math.random()", "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'math'\r\n"),
        ("#!lua name=a\na = 1", "-ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table\r\n"),
        ("#!lua name=a\nredis.register_function(1, 2)", "-ERR Error registering functions: ERR second argument to redis.register_function must be a function\r\n"),
        ("#!lua name=a\nredis.register_function{function_name='f'}", "-ERR Error registering functions: ERR redis.register_function must get a callback argument\r\n"),
        ("#!lua name=a\nredis.register_function('f', function() end)\nredis.register_function('f', function() end)", "-ERR Error registering functions: ERR Function already exists in the library\r\n"),
        ("#!lua name=a\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}", "-ERR Error registering functions: ERR unknown flag given\r\n"),
    ];
    for (code, want) in cases {
        assert_eq!(raw(&mut c, &["FUNCTION", "LOAD", code]), want, "{code}");
    }
    let endless = "#!lua name=a\nlocal i = 0 while true do i = i + 1 end";
    assert!(raw(&mut c, &["FUNCTION", "LOAD", endless]).contains("FUNCTION LOAD timeout"));
    assert_eq!(raw(&mut c, &["FUNCTION", "LIST"]), "*0\r\n");
}

#[test]
fn flags_writes_and_errors_at_call_time() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let code = "#!lua name=l\n\
        redis.register_function('w', function(k, a) return redis.call('set', k[1], a[1]) end)\n\
        redis.register_function{function_name='r', callback=function(k) return redis.call('get', k[1]) end, flags={'no-writes'}, description='reader'}\n\
        redis.register_function{function_name='rw', callback=function(k) return redis.call('set', k[1], 'x') end, flags={'no-writes'}}\n\
        redis.register_function('boom', function() return redis.call('nosuch') end)";
    assert_eq!(raw(&mut c, &["FUNCTION", "LOAD", code]), "$1\r\nl\r\n");
    assert_eq!(raw(&mut c, &["FCALL", "w", "1", "k", "v"]), "+OK\r\n");
    assert_eq!(raw(&mut c, &["FCALL_RO", "r", "1", "k"]), "$1\r\nv\r\n");
    assert_eq!(
        raw(&mut c, &["FCALL_RO", "w", "1", "k", "v"]),
        "-ERR Can not execute a script with write flag using *_ro command.\r\n"
    );
    assert!(raw(&mut c, &["FCALL", "rw", "1", "k"])
        .starts_with("-ERR Write commands are not allowed from read-only scripts."));
    assert_eq!(
        raw(&mut c, &["FCALL", "boom", "0"]),
        "-ERR Unknown Redis command called from script script: boom, on @user_function:5.\r\n"
    );
    assert_eq!(raw(&mut c, &["FCALL", "w", "x"]), "-ERR Bad number of keys provided\r\n");
    assert_eq!(raw(&mut c, &["FCALL", "w", "2", "k"]), "-ERR Number of keys can't be greater than number of args\r\n");
    assert_eq!(raw(&mut c, &["FCALL", "w", "-1"]), "-ERR Number of keys can't be negative\r\n");
    assert_eq!(raw(&mut c, &["COMMAND", "GETKEYS", "FCALL", "w", "1", "k", "v"]), "*1\r\n$1\r\nk\r\n");
    let stats = raw(&mut c, &["FUNCTION", "STATS"]);
    assert!(
        stats.contains("$14\r\nrunning_script\r\n$-1\r\n") && stats.ends_with(":1\r\n$15\r\nfunctions_count\r\n:4\r\n")
    );
}

#[test]
fn dump_and_restore_policies() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["FUNCTION", "LOAD", &lib("a", "fa", "return 'a1'")]);
    let Frame::Bulk(payload) = c.cmd(&["FUNCTION", "DUMP"]) else { panic!("FUNCTION DUMP gives a bulk string") };
    let restore = |c: &mut Client, policy: &[u8]| {
        let mut args: Vec<&[u8]> = vec![b"FUNCTION", b"RESTORE", &payload];
        args.extend((!policy.is_empty()).then_some(policy));
        String::from_utf8_lossy(&c.raw_cmd(&args)).into_owned()
    };
    assert_eq!(restore(&mut c, b""), "-ERR Library a already exists\r\n");
    assert_eq!(raw(&mut c, &["FUNCTION", "RESTORE", "bad"]), "-ERR DUMP payload version or checksum are wrong\r\n");
    assert_eq!(
        restore(&mut c, b"MERGE"),
        "-ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.\r\n"
    );
    c.cmd(&["FUNCTION", "LOAD", "REPLACE", &lib("a", "fa", "return 'a2'")]);
    assert_eq!(restore(&mut c, b"REPLACE"), "+OK\r\n");
    assert_eq!(raw(&mut c, &["FCALL", "fa", "0"]), "$2\r\na1\r\n");
    c.cmd(&["FUNCTION", "LOAD", &lib("b", "fb", "return 'b'")]);
    assert_eq!(restore(&mut c, b"FLUSH"), "+OK\r\n");
    assert_eq!(raw(&mut c, &["FCALL", "fb", "0"]), "-ERR Function not found\r\n");
    assert_eq!(raw(&mut c, &["FUNCTION", "FLUSH", "bad"]), "-ERR FUNCTION FLUSH only supports SYNC|ASYNC option\r\n");
    assert_eq!(raw(&mut c, &["FUNCTION", "FLUSH", "ASYNC"]), "+OK\r\n");
    assert_eq!(raw(&mut c, &["FUNCTION", "LIST"]), "*0\r\n");
}

/// A library loaded before SAVE is back after a restart on the same
/// directory; FLUSHALL leaves libraries alone.
#[test]
fn libraries_survive_a_restart_through_the_rdb() {
    let mut srv = TestServer::start(&[]);
    let dir = srv.dir.display().to_string();
    let mut c = srv.client();
    c.cmd(&["FUNCTION", "LOAD", &lib("keep", "kept", "return 42")]);
    assert_eq!(raw(&mut c, &["FLUSHALL"]), "+OK\r\n");
    assert_eq!(raw(&mut c, &["SAVE"]), "+OK\r\n");
    c.send(b"SHUTDOWN NOSAVE\r\n");
    srv.wait_exit(Duration::from_secs(10));
    let srv2 = TestServer::start(&["--dir", &dir]);
    let mut c2 = srv2.client();
    assert_eq!(raw(&mut c2, &["FCALL", "kept", "0"]), ":42\r\n");
}

/// FUNCTION LOAD goes to the AOF as itself and replays at start.
#[test]
fn libraries_survive_a_restart_through_the_aof() {
    let mut srv = TestServer::start(&["--appendonly", "yes"]);
    let dir = srv.dir.display().to_string();
    let mut c = srv.client();
    c.cmd(&["FUNCTION", "LOAD", &lib("aofl", "af", "return redis.call('incr', KEYS[1])")]);
    assert_eq!(raw(&mut c, &["FCALL", "af", "1", "n"]), ":1\r\n");
    c.send(b"SHUTDOWN NOSAVE\r\n");
    srv.wait_exit(Duration::from_secs(10));
    let srv2 = TestServer::start(&["--dir", &dir, "--appendonly", "yes"]);
    let mut c2 = srv2.client();
    assert_eq!(raw(&mut c2, &["FCALL", "af", "1", "n"]), ":2\r\n");
}
