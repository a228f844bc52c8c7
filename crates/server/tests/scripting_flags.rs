//! Script flags and the checks they select, with redis-server 7.0.15's reply
//! bytes: `#!lua` shebang parsing, the checks before a script that declared
//! its flags (EVAL with a shebang, FCALL) and before a script's first write
//! (`min-replicas-to-write` without replicas), and SCRIPT KILL / FUNCTION
//! KILL of a script that catches the kill error with pcall or loops inside
//! a coroutine.
mod common;
use std::thread::sleep;
use std::time::Duration;

use common::*;

fn raw(c: &mut Client, args: &[&str]) -> String {
    String::from_utf8_lossy(&c.raw_cmd(args)).into_owned()
}

fn sha1(s: &str) -> String {
    volley::scripting::sha1_hex(s.as_bytes()).iter().map(|&b| b as char).collect()
}

#[test]
fn shebang_parsing() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let cases = [
        ("#!lua\nreturn 1", ":1\r\n"),
        ("#!lua flags=\nreturn 1", ":1\r\n"),
        ("#!lua", "-ERR Invalid script shebang\r\n"),
        ("#!lua \"open\nreturn 1", "-ERR Invalid engine in script shebang\r\n"),
        ("#!not-lua\nreturn 1", "-ERR Unexpected engine in script shebang: #!not-lua\r\n"),
        ("#!lua badger=data\nreturn 1", "-ERR Unknown lua shebang option: badger=data\r\n"),
        ("#!lua flags=allow-oom,what?\nreturn 1", "-ERR Unexpected flag in script shebang: what?\r\n"),
        ("#!lua flags=NO-WRITES\nreturn 1", "-ERR Unexpected flag in script shebang: NO-WRITES\r\n"),
        ("#!lua flags=no-writes,,\nreturn 1", "-ERR Unexpected flag in script shebang: \r\n"),
    ];
    for (body, reply) in cases {
        assert_eq!(raw(&mut c, &["EVAL", body, "0"]), reply, "{body:?}");
    }
    // The line splits like a command line, so a quoted option still counts.
    let quoted = "#!lua \"flags=no-writes\"\nreturn redis.call('set', 'k', 'v')";
    assert_eq!(
        raw(&mut c, &["EVAL", quoted, "0"]),
        format!(
            "-ERR Write commands are not allowed from read-only scripts. script: {}, on @user_script:2.\r\n",
            sha1(quoted)
        )
    );
}

#[test]
fn min_replicas_refuse_writing_scripts() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let lib = "#!lua name=mc\nredis.register_function('w', function() return 1 end)\n\
               redis.register_function{function_name='r', callback=function() return 1 end, flags={'no-writes'}}";
    assert_eq!(raw(&mut c, &["FUNCTION", "LOAD", lib]), "$2\r\nmc\r\n");
    assert_eq!(raw(&mut c, &["SET", "x", "some value"]), "+OK\r\n");
    assert_eq!(raw(&mut c, &["CONFIG", "SET", "min-replicas-to-write", "1"]), "+OK\r\n");
    let noreplicas = "-NOREPLICAS Not enough good replicas to write.\r\n";
    // Declared writers are refused before they run; declared readers and
    // scripts without a shebang that only read are not.
    let get = "return redis.call('get','x')";
    assert_eq!(raw(&mut c, &["EVAL", &format!("#!lua\n{get}"), "1", "x"]), noreplicas);
    assert_eq!(raw(&mut c, &["EVAL", &format!("#!lua flags=no-writes\n{get}"), "1", "x"]), "$10\r\nsome value\r\n");
    assert_eq!(raw(&mut c, &["EVAL", get, "1", "x"]), "$10\r\nsome value\r\n");
    assert_eq!(raw(&mut c, &["FCALL", "w", "0"]), noreplicas);
    assert_eq!(raw(&mut c, &["FCALL", "r", "0"]), ":1\r\n");
    // Without a shebang the first write command is refused.
    let set = "return redis.call('set','x', 1)";
    assert_eq!(
        raw(&mut c, &["EVAL", set, "1", "x"]),
        format!("-NOREPLICAS Not enough good replicas to write. script: {}, on @user_script:1.\r\n", sha1(set))
    );
    assert_eq!(raw(&mut c, &["EVAL", "return redis.pcall('set','x', 1)", "1", "x"]), noreplicas);
    // A lag limit of 0 switches the check off.
    assert_eq!(raw(&mut c, &["CONFIG", "SET", "min-replicas-max-lag", "0"]), "+OK\r\n");
    assert_eq!(raw(&mut c, &["FCALL", "w", "0"]), ":1\r\n");
    assert_eq!(raw(&mut c, &["EVAL", set, "1", "x"]), "+OK\r\n");
}

/// Starts `args` on `runner` (its reply is read later), waits until the
/// server answers -BUSY, kills it with `kill`, and returns the runner's
/// reply once the server serves PING again.
fn kill_busy(srv: &TestServer, runner: &mut Client, args: &[&str], kill: &[&str]) -> String {
    let mut c = srv.client();
    assert_eq!(raw(&mut c, &["CONFIG", "SET", "lua-time-limit", "10"]), "+OK\r\n");
    let mut out = Vec::new();
    resp::encode_command(&mut out, args);
    runner.send(&out);
    // Give the script time to start before the next command arrives (a
    // command read in the same event-loop turn waits for the script).
    sleep(Duration::from_millis(200));
    assert!(raw(&mut c, &["PING"]).starts_with("-BUSY "));
    assert_eq!(raw(&mut c, kill), "+OK\r\n");
    let reply = String::from_utf8_lossy(&runner.read_raw()).into_owned();
    assert_eq!(raw(&mut c, &["PING"]), "+PONG\r\n");
    reply
}

#[test]
fn killed_script_cannot_catch_the_kill_with_pcall() {
    let srv = TestServer::start(&[]);
    let mut runner = srv.client();
    let body = "local f = function() while 1 do redis.call('ping') end end\nwhile 1 do pcall(f) end";
    let reply = kill_busy(&srv, &mut runner, &["EVAL", body, "0"], &["SCRIPT", "KILL"]);
    assert_eq!(
        reply,
        format!("-ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:2.\r\n", sha1(body))
    );
    let lib = format!("#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n {body} \nend)");
    assert_eq!(raw(&mut runner, &["FUNCTION", "LOAD", &lib]), "$4\r\ntest\r\n");
    let reply = kill_busy(&srv, &mut runner, &["FCALL", "test", "0"], &["FUNCTION", "KILL"]);
    assert_eq!(reply, "-ERR Script killed by user with SCRIPT KILL... script: test, on @user_function:4.\r\n");
    // Both states run scripts normally afterwards (no kill left behind).
    let count = "local n = 0 for i = 1, 100000 do n = n + 1 end return n";
    assert_eq!(raw(&mut runner, &["EVAL", count, "0"]), ":100000\r\n");
    let lib = format!("#!lua name=test\nredis.register_function('test', function() {count} end)");
    assert_eq!(raw(&mut runner, &["FUNCTION", "LOAD", "REPLACE", &lib]), "$4\r\ntest\r\n");
    assert_eq!(raw(&mut runner, &["FCALL", "test", "0"]), ":100000\r\n");
}

#[test]
fn script_looping_in_a_coroutine_can_be_killed() {
    let srv = TestServer::start(&[]);
    let mut runner = srv.client();
    let bodies = [
        "local co = coroutine.wrap(function() while true do end end) co()",
        "local f = function() while 1 do end end \
         local co = coroutine.wrap(function() while 1 do pcall(f) end end) while 1 do pcall(co) end",
    ];
    for body in bodies {
        let reply = kill_busy(&srv, &mut runner, &["EVAL", body, "0"], &["SCRIPT", "KILL"]);
        assert_eq!(
            reply,
            format!("-ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:1.\r\n", sha1(body))
        );
    }
}
