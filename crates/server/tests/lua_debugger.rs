//! The Lua debugger (SCRIPT DEBUG SYNC) over real TCP, reply bytes as
//! redis-server 7.0.15 sends them: each debugger command is answered with
//! an array of status lines, the session ends with `<endsession>` and the
//! script's reply, then the connection closes. Also the hostile inputs
//! Redis's suite sends (NULs in commands, a `redis` command of 100
//! arguments, bad protocol) and a client leaving mid-session.
mod common;

use common::*;

/// A debugging session's client: SCRIPT DEBUG SYNC, then EVAL `script`;
/// returns the client and the first stop's log.
fn session(srv: &TestServer, script: &str) -> (Client, String) {
    let mut c = srv.client();
    assert_eq!(c.raw_cmd(&["SCRIPT", "DEBUG", "SYNC"]), b"+OK\r\n");
    let first = String::from_utf8(c.raw_cmd(&["EVAL", script, "0"])).unwrap();
    (c, first)
}

/// A debugger command's reply, as text.
fn dbg(c: &mut Client, args: &[&str]) -> String {
    String::from_utf8_lossy(&c.raw_cmd(args)).into_owned()
}

const SCRIPT: &str = "local a = {1,2,'x'}\nredis.call('set','k','v')\nlocal b = redis.pcall('nosuch')\nreturn b\n";

#[test]
fn stepping_logs_calls_and_replies() {
    let srv = TestServer::start(&[]);
    let (mut c, first) = session(&srv, SCRIPT);
    assert_eq!(first, "*2\r\n+* Stopped at 1, stop reason = step over\r\n+-> 1   local a = {1,2,'x'}\r\n");
    assert_eq!(
        dbg(&mut c, &["s"]),
        "*2\r\n+* Stopped at 2, stop reason = step over\r\n+-> 2   redis.call('set','k','v')\r\n"
    );
    assert_eq!(
        dbg(&mut c, &["s"]),
        "*4\r\n+<redis> set k v\r\n+<reply> \"+OK\"\r\n+* Stopped at 3, stop reason = step over\r\n+-> 3   local b = redis.pcall('nosuch')\r\n"
    );
    assert_eq!(
        dbg(&mut c, &["s"]),
        "*4\r\n+<redis> nosuch\r\n+<error> Unknown Redis command called from script\r\n+* Stopped at 4, stop reason = step over\r\n+-> 4   return b\r\n"
    );
    assert_eq!(dbg(&mut c, &["p", "a"]), "*1\r\n+<value> {1; 2; \"x\"}\r\n");
    assert_eq!(dbg(&mut c, &["p", "zz"]), "*1\r\n+No such variable.\r\n");
    assert_eq!(dbg(&mut c, &["r", "ping"]), "*2\r\n+<redis> ping\r\n+<reply> \"+PONG\"\r\n");
    assert_eq!(
        dbg(&mut c, &["r", "hset", "h", "a"]),
        "*2\r\n+<redis> hset h a\r\n+<error> Wrong number of args calling Redis command from script\r\n"
    );
    assert_eq!(
        dbg(&mut c, &["e", "{1,'a',nil,true,{x={y=2}}}"]),
        "*1\r\n+<retval> {[1]=1; [2]=\"a\"; [4]=true; [5]={[\"x\"]={[\"y\"]=2}}}\r\n"
    );
    assert_eq!(dbg(&mut c, &["e", "error('boom')"]), "*1\r\n+<error> ldb_eval:1: boom\r\n");
    assert_eq!(dbg(&mut c, &["m", "10"]), "*1\r\n+<value> replies are truncated at 60 bytes.\r\n");
    assert_eq!(dbg(&mut c, &["b", "x"]), "*1\r\n+Invalid argument:'x'\r\n");
    assert_eq!(dbg(&mut c, &["b", "99"]), "*1\r\n+Wrong line number.\r\n");
    assert_eq!(dbg(&mut c, &["t"]), "*2\r\n+In top level:\r\n+-> 4   return b\r\n");
    assert_eq!(
        dbg(&mut c, &["x"]),
        "*1\r\n+<error> Unknown Redis Lua debugger command or wrong number of arguments.\r\n"
    );
    assert!(dbg(&mut c, &["h"]).starts_with("*30\r\n+Redis Lua debugger help:\r\n"));
    // Continue: the session ends, then the script's reply, then the close.
    c.send(b"*1\r\n$1\r\nc\r\n");
    let end = String::from_utf8_lossy(&c.read_to_close()).into_owned();
    // The script returns the pcall's error table: an error reply.
    assert_eq!(end, "*1\r\n+<endsession>\r\n-ERR Unknown Redis command called from script\r\n");
    // The session's writes stay (SYNC), and the server serves others again.
    assert_eq!(srv.client().cmd(&["GET", "k"]), bulk("v"));
}

#[test]
fn breakpoints_and_redis_breakpoint() {
    let srv = TestServer::start(&[]);
    let script = "local x = 1\nlocal y = 2\nredis.debug('y is', y)\nredis.breakpoint()\nreturn x + y\n";
    let (mut c, _) = session(&srv, script);
    assert_eq!(
        dbg(&mut c, &["b", "2"]),
        "*3\r\n+-> 1   local x = 1\r\n+  #2   local y = 2\r\n+   3   redis.debug('y is', y)\r\n"
    );
    assert_eq!(dbg(&mut c, &["c"]), "*2\r\n+* Stopped at 2, stop reason = break point\r\n+->#2   local y = 2\r\n");
    assert_eq!(
        dbg(&mut c, &["c"]),
        "*3\r\n+<debug> line 3: \"y is\", 2\r\n+* Stopped at 5, stop reason = redis.breakpoint() called\r\n+-> 5   return x + y\r\n"
    );
    assert_eq!(dbg(&mut c, &["b", "-2"]), "*1\r\n+Breakpoint removed.\r\n");
    assert_eq!(dbg(&mut c, &["b"]), "*1\r\n+No breakpoints set. Use 'b <line>' to add one.\r\n");
    assert_eq!(dbg(&mut c, &["p"]), "*2\r\n+<value> x = 1\r\n+<value> y = 2\r\n");
    c.send(b"*1\r\n$5\r\nabort\r\n");
    let end = String::from_utf8_lossy(&c.read_to_close()).into_owned();
    let sha = volley::scripting::sha1_hex(script.as_bytes()).iter().map(|&b| b as char).collect::<String>();
    assert_eq!(
        end,
        format!("*1\r\n+<endsession>\r\n-ERR script aborted for user request script: {sha}, on @user_script:5.\r\n")
    );
}

#[test]
fn hostile_input_ends_well() {
    let srv = TestServer::start(&[]);
    let (mut c, _) = session(&srv, "return 'hello'");
    // NULs in a command name: an unknown command, as in Redis's suite.
    for name in ["'hello\0world'", "'hello\0'", "'\0hello'", "\0"] {
        assert!(dbg(&mut c, &[name]).contains("Unknown Redis Lua debugger command"));
    }
    // `redis` with 100 arguments must not overflow the Lua stack.
    let mut cmd = b"*101\r\n$5\r\nredis\r\n".to_vec();
    for _ in 0..100 {
        cmd.extend_from_slice(b"$4\r\ntest\r\n");
    }
    c.send(&cmd);
    let reply = String::from_utf8_lossy(&c.read_raw()).into_owned();
    assert_eq!(reply, "*2\r\n+<redis> test test test test test test test test test test ... (89 more)\r\n+<error> Unknown Redis command called from script\r\n");
    // Leaving mid-session: the script runs to its end, the server goes on.
    drop(c);
    assert_eq!(srv.client().cmd(&["PING"]), simple("PONG"));
    // Not the protocol: the session ends with an error.
    let (mut c, _) = session(&srv, "return 1");
    c.send(b"hello\r\n");
    let end = String::from_utf8_lossy(&c.read_to_close()).into_owned();
    assert!(end.starts_with("*1\r\n+<endsession>\r\n-ERR protocol error"), "{end}");
    // Over 1024 arguments is a protocol error too.
    let (mut c, _) = session(&srv, "return 1");
    c.send(b"*100000\r\n");
    assert!(String::from_utf8_lossy(&c.read_to_close()).contains("-ERR protocol error"));
    assert_eq!(srv.client().cmd(&["PING"]), simple("PONG"));
}

#[test]
fn script_debug_rules() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.raw_cmd(&["SCRIPT", "DEBUG", "maybe"]), b"-ERR Use SCRIPT DEBUG YES/SYNC/NO\r\n");
    // Replies waiting to be written refuse it (they would be overtaken).
    c.send(b"PING\r\nSCRIPT DEBUG SYNC\r\n");
    assert_eq!(c.read_raw(), b"+PONG\r\n");
    assert_eq!(c.read_raw(), b"-ERR SCRIPT DEBUG must be called outside a pipeline\r\n");
    assert_eq!(c.raw_cmd(&["SCRIPT", "DEBUG", "yes"]), b"+OK\r\n");
    assert_eq!(
        c.raw_cmd(&["EVALSHA", &"a".repeat(40), "0"]),
        b"-ERR Please use EVAL instead of EVALSHA for debugging\r\n"
    );
    assert_eq!(c.raw_cmd(&["SCRIPT", "DEBUG", "no"]), b"+OK\r\n");
    assert_eq!(c.raw_cmd(&["EVAL", "return 1", "0"]), b":1\r\n");
    // A forked session (YES): the child runs it; what it writes is dropped.
    assert_eq!(c.raw_cmd(&["SCRIPT", "DEBUG", "yes"]), b"+OK\r\n");
    c.raw_cmd(&["EVAL", "redis.call('set','forked','1') return 1", "0"]);
    c.send(b"*1\r\n$1\r\nc\r\n");
    assert_eq!(String::from_utf8_lossy(&c.read_to_close()), "*1\r\n+<endsession>\r\n:1\r\n");
    assert_eq!(srv.client().cmd(&["EXISTS", "forked"]), int(0));
    // Cron reaps the finished child: no zombie is left behind.
    let zombies = || {
        let tasks = std::fs::read_to_string(format!("/proc/{}/task/{}/children", srv.pid(), srv.pid()));
        let kids: Vec<String> = tasks.unwrap_or_default().split_whitespace().map(str::to_owned).collect();
        kids.iter()
            .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| st.contains(") Z ")))
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while zombies() > 0 {
        assert!(std::time::Instant::now() < deadline, "the debugging child was never reaped");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
