//! EVAL / EVALSHA / SCRIPT over real TCP, with the exact reply bytes of
//! redis-server 7.0.15: the script cache, Lua ↔ RESP conversions (RESP2 and
//! RESP3), the sandbox, error texts, read-only scripts, WATCH, busy scripts
//! (-BUSY, SCRIPT KILL, UNKILLABLE, SHUTDOWN NOSAVE) and the memory cap.
mod common;
use std::time::{Duration, Instant};

use common::*;

/// One command's raw reply, as text.
fn raw(c: &mut Client, args: &[&str]) -> String {
    String::from_utf8_lossy(&c.raw_cmd(args)).into_owned()
}

/// `EVAL script 0` raw reply.
fn eval(c: &mut Client, script: &str) -> String {
    raw(c, &["EVAL", script, "0"])
}

fn sha1(s: &str) -> String {
    volley::scripting::sha1_hex(s.as_bytes()).iter().map(|&b| b as char).collect()
}

#[test]
fn script_cache_across_connections() {
    let srv = TestServer::start(&[]);
    let mut a = srv.client();
    let mut b = srv.client();
    let sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
    assert_eq!(raw(&mut a, &["SCRIPT", "LOAD", "return 1"]), format!("$40\r\n{sha}\r\n"));
    assert_eq!(raw(&mut b, &["EVALSHA", sha, "0"]), ":1\r\n");
    // Any case is accepted; unknown or malformed SHAs are not.
    assert_eq!(raw(&mut b, &["EVALSHA", &sha.to_uppercase(), "0"]), ":1\r\n");
    assert_eq!(raw(&mut b, &["EVALSHA", "abc", "0"]), "-NOSCRIPT No matching script. Please use EVAL.\r\n");
    assert_eq!(raw(&mut b, &["SCRIPT", "EXISTS", sha, &"f".repeat(40)]), "*2\r\n:1\r\n:0\r\n");
    // EVAL caches too.
    let body = "return 'cached'";
    assert_eq!(eval(&mut a, body), "$6\r\ncached\r\n");
    assert_eq!(raw(&mut b, &["EVALSHA_RO", &sha1(body), "0"]), "$6\r\ncached\r\n");
    assert_eq!(raw(&mut a, &["SCRIPT", "FLUSH", "bogus"]), "-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n");
    assert_eq!(raw(&mut a, &["SCRIPT", "FLUSH", "ASYNC"]), "+OK\r\n");
    assert_eq!(raw(&mut b, &["EVALSHA", sha, "0"]), "-NOSCRIPT No matching script. Please use EVAL.\r\n");
    assert_eq!(raw(&mut b, &["SCRIPT", "EXISTS", sha]), "*1\r\n:0\r\n");
    assert_eq!(raw(&mut a, &["SCRIPT", "KILL"]), "-NOTBUSY No scripts in execution right now.\r\n");
    assert!(raw(&mut a, &["SCRIPT", "HELP"]).starts_with("*17\r\n+SCRIPT <subcommand>"));
    assert_eq!(raw(&mut a, &["SCRIPT", "BOGUS"]), "-ERR unknown subcommand 'BOGUS'. Try SCRIPT HELP.\r\n");
}

#[test]
fn pipelined_load_then_many_evalsha_in_one_write() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let body = "return redis.call('incr', KEYS[1])";
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["SCRIPT", "LOAD", body]);
    let sha = sha1(body);
    for _ in 0..500 {
        resp::encode_command(&mut out, &["EVALSHA", &sha, "1", "counter"]);
    }
    c.send(&out);
    assert_eq!(c.read_frame(), bulk(&sha));
    for i in 1..=500 {
        assert_eq!(c.read_frame(), int(i));
    }
    assert_eq!(c.cmd(&["GET", "counter"]), bulk("500"));
}

#[test]
fn lua_values_become_redis_replies() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let cases = [
        ("return 3.99", ":3\r\n"),
        ("return -3.99", ":-3\r\n"),
        ("return 1e20", ":-9223372036854775808\r\n"),
        ("return 'str'", "$3\r\nstr\r\n"),
        ("return true", ":1\r\n"),
        ("return false", "$-1\r\n"),
        ("return nil", "$-1\r\n"),
        ("return {1,{2,{3}},'x'}", "*3\r\n:1\r\n*2\r\n:2\r\n*1\r\n:3\r\n$1\r\nx\r\n"),
        ("return {1,2,nil,4}", "*2\r\n:1\r\n:2\r\n"),
        ("return {1,false,2}", "*3\r\n:1\r\n$-1\r\n:2\r\n"),
        ("return {foo='bar'}", "*0\r\n"),
        ("return {ok='a\\r\\nb'}", "+a  b\r\n"),
        ("return {err='-bad thing'}", "--bad thing\r\n"),
        ("return {err='bad\\nthing'}", "-bad thing\r\n"),
        ("return redis.error_reply('My Error')", "-My Error\r\n"),
        ("return redis.error_reply('-My Error')", "-My Error\r\n"),
        ("return redis.status_reply('FINE')", "+FINE\r\n"),
        ("return redis.status_reply()", "-ERR wrong number or type of arguments\r\n"),
        ("return {double=3.5}", "$3\r\n3.5\r\n"),
        ("return {map={a=1}}", "*2\r\n$1\r\na\r\n:1\r\n"),
        ("return {set={a=true}}", "*1\r\n$1\r\na\r\n"),
        ("return {big_number='1234'}", "$4\r\n1234\r\n"),
    ];
    for (script, want) in cases {
        assert_eq!(eval(&mut c, script), want, "{script}");
    }
    let keys_args = raw(&mut c, &["EVAL", "return {KEYS[1]..ARGV[1], #KEYS, #ARGV}", "2", "k", "j", "a", "b"]);
    assert_eq!(keys_args, "*3\r\n$2\r\nka\r\n:2\r\n:2\r\n");
}

#[test]
fn redis_replies_become_lua_values() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "l", "a", "b"]);
    c.cmd(&["SET", "s", "abc"]);
    let cases = [
        ("return redis.call('ping')", "+PONG\r\n"),
        ("return type(redis.call('ping'))", "$5\r\ntable\r\n"),
        ("return redis.call('ping').ok", "$4\r\nPONG\r\n"),
        ("return redis.call('get','nokey')", "$-1\r\n"),
        ("return type(redis.call('get','nokey'))", "$7\r\nboolean\r\n"),
        ("return redis.call('lrange','l',0,-1)", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
        ("return redis.call('llen','l') + 1", ":3\r\n"),
        ("return redis.pcall('incr','s')['err']", "$43\r\nERR value is not an integer or out of range\r\n"),
        ("return redis.pcall('incr','s')", "-ERR value is not an integer or out of range\r\n"),
        ("return redis.pcall('nosuchcmd')['err']", "$44\r\nERR Unknown Redis command called from script\r\n"),
        // Numbers are sent as %lld when integral, else %.17g.
        ("redis.call('set','x',1.5) return redis.call('get','x')", "$3\r\n1.5\r\n"),
        ("redis.call('set','x',7) return redis.call('get','x')", "$1\r\n7\r\n"),
        ("return redis.sha1hex('abc')", "$40\r\na9993e364706816aba3e25717850c26c9cd0d89d\r\n"),
        ("return redis.replicate_commands()", ":1\r\n"),
        ("return redis.set_repl(redis.REPL_ALL)", "$-1\r\n"),
    ];
    for (script, want) in cases {
        assert_eq!(eval(&mut c, script), want, "{script}");
    }
}

#[test]
fn resp3_conversions() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["HSET", "h", "f", "v"]);
    c.cmd(&["SADD", "st", "a"]);
    c.cmd(&["ZADD", "z", "1.5", "m"]);
    // RESP2 caller, RESP3 inside the script: converted back to RESP2.
    assert_eq!(eval(&mut c, "redis.setresp(3) return redis.call('hgetall','h')"), "*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
    assert_eq!(eval(&mut c, "redis.setresp(3) return {true,false}"), "*2\r\n:1\r\n:0\r\n");
    c.cmd(&["HELLO", "3"]);
    let cases = [
        ("redis.setresp(3) return redis.call('hgetall','h')", "%1\r\n$1\r\nf\r\n$1\r\nv\r\n"),
        ("redis.setresp(3) local s = redis.call('smembers','st') return {type(s.set), s.set.a}", "*2\r\n$5\r\ntable\r\n#t\r\n"),
        ("redis.setresp(3) local d = redis.call('zscore','z','m') return tostring(d.double)", "$3\r\n1.5\r\n"),
        ("redis.setresp(3) return redis.call('zscore','z','m')", ",1.5\r\n"),
        ("redis.setresp(3) return type(redis.call('get','nokey'))", "$3\r\nnil\r\n"),
        ("redis.setresp(3) return {true,false}", "*2\r\n#t\r\n#f\r\n"),
        ("return {1,'a',false,true}", "*4\r\n:1\r\n$1\r\na\r\n_\r\n:1\r\n"),
        ("return {double=3.5}", ",3.5\r\n"),
        ("return {map={a=1}}", "%1\r\n$1\r\na\r\n:1\r\n"),
        ("return {set={a=true}}", "~1\r\n$1\r\na\r\n"),
        ("return {big_number='123456789012345678901234'}", "(123456789012345678901234\r\n"),
        ("return {verbatim_string={format='txt',string='hi'}}", "=6\r\ntxt:hi\r\n"),
        ("return nil", "_\r\n"),
        ("return redis.setresp(4)", "-ERR RESP version must be 2 or 3. script: 921c0a48021d97dfd5884aeea41875972c7804d9, on @user_script:1.\r\n"),
    ];
    for (script, want) in cases {
        assert_eq!(eval(&mut c, script), want, "{script}");
    }
}

/// A RESP3 attribute before a reply is parsed and dropped: the script gets
/// the reply after it (Redis does not expose attributes to Lua), and its
/// fields do not leak into what follows.
#[test]
fn resp3_attributes_are_skipped() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    c.cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"]);
    c.cmd(&["HELLO", "3"]);
    let script = "redis.setresp(3) return redis.call('debug', 'protocol', 'attrib')";
    assert_eq!(eval(&mut c, script), "$39\r\nSome real reply following the attribute\r\n");
    let script = "redis.setresp(3) local a = redis.call('debug', 'protocol', 'attrib') \
                  return {a, redis.call('ping')}";
    assert_eq!(eval(&mut c, script), "*2\r\n$39\r\nSome real reply following the attribute\r\n+PONG\r\n");
}

#[test]
fn sandbox_matches_redis() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for name in
        ["os", "io", "require", "dofile", "loadfile", "print", "setfenv", "getfenv", "package", "debug", "newproxy"]
    {
        let script = format!("return type({name})");
        let want = format!(
            "-ERR user_script:1: Script attempted to access nonexistent global variable '{name}' script: {}, on @user_script:1.\r\n",
            sha1(&script)
        );
        assert_eq!(eval(&mut c, &script), want);
    }
    for name in ["loadstring", "load", "pcall", "xpcall", "unpack", "gcinfo", "collectgarbage"] {
        assert_eq!(eval(&mut c, &format!("return type({name})")), "$8\r\nfunction\r\n", "{name}");
    }
    for name in ["string", "table", "math", "coroutine", "redis"] {
        assert_eq!(eval(&mut c, &format!("return type({name})")), "$5\r\ntable\r\n", "{name}");
    }
    let readonly = |s: &str, pos: &str| {
        format!("-ERR {pos}Attempt to modify a readonly table script: {}, on @user_script:1.\r\n", sha1(s))
    };
    for script in ["x = 1", "redis.foo = 1", "_G.x = 1", "string.foo = 1"] {
        assert_eq!(eval(&mut c, script), readonly(script, "user_script:1: "), "{script}");
    }
    let script = "rawset(_G,'x',1) return x";
    assert_eq!(eval(&mut c, script), readonly(script, ""));
    // Iterating _G sees the globals behind the read-only proxy.
    let globals = eval(&mut c, "local n = 0 for k in pairs(_G) do n = n + 1 end return n");
    let n: i64 = globals.trim_start_matches(':').trim().parse().unwrap();
    assert!(n >= 30, "{globals}");
    assert_eq!(eval(&mut c, "local f = loadstring('return 1 + 1') return f()"), ":2\r\n");
}

#[test]
fn error_texts_match_redis() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let at = |s: &str, msg: &str| format!("-{msg} script: {}, on @user_script:1.\r\n", sha1(s));
    assert_eq!(
        eval(&mut c, "return 1+"),
        "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n"
    );
    let cases = [
        ("error('boom')", "ERR user_script:1: boom"),
        ("error(123)", "ERR user_script:1: 123"),
        ("error()", "ERR nil"),
        ("error('x', 0)", "ERR x"),
        ("local function f() error('deep') end f()", "ERR user_script:1: deep"),
        ("error({err='custom'})", "custom"),
        ("local a = nil; return a.b", "ERR user_script:1: attempt to index local 'a' (a nil value)"),
        ("return redis.call('nosuch')", "ERR Unknown Redis command called from script"),
        ("return redis.call('get')", "ERR Wrong number of args calling Redis command from script"),
        ("return redis.call('eval','return 1',0)", "ERR This Redis command is not allowed from script"),
        ("return redis.call('blpop','nolist',0)", "ERR This Redis command is not allowed from script"),
        ("return redis.call('set','x',{})", "ERR Lua redis lib command arguments must be strings or integers"),
        ("return redis.call()", "ERR Please specify at least one argument for this redis lib call"),
        ("return redis.sha1hex()", "ERR wrong number of arguments"),
        ("return redis.log()", "ERR redis.log() requires two arguments or more."),
        ("return redis.log(99,'x')", "ERR Invalid debug level."),
        ("return redis.setresp()", "ERR redis.setresp() requires one argument."),
        ("return math.random(0)", "ERR user_script:1: bad argument #1 to 'random' (interval is empty)"),
        ("return math.random(1,2,3)", "ERR user_script:1: wrong number of arguments"),
        (
            "return redis.set_repl(99)",
            "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
        ),
    ];
    for (script, msg) in cases {
        assert_eq!(eval(&mut c, script), at(script, msg), "{script}");
    }
    c.cmd(&["SET", "s", "abc"]);
    let script = "return redis.call('incr','s')";
    assert_eq!(eval(&mut c, script), at(script, "ERR value is not an integer or out of range"));
    // The error line is the script's, even deeper in.
    let script = "local x = 1\nlocal y = 2\nreturn redis.call('incr','s')";
    assert!(eval(&mut c, script).ends_with(", on @user_script:3.\r\n"));
    assert_eq!(raw(&mut c, &["EVAL", "return 1", "-1"]), "-ERR Number of keys can't be negative\r\n");
    assert_eq!(
        raw(&mut c, &["EVAL", "return 1", "2", "a"]),
        "-ERR Number of keys can't be greater than number of args\r\n"
    );
    assert_eq!(raw(&mut c, &["EVAL", "return 1", "abc"]), "-ERR value is not an integer or out of range\r\n");
    assert_eq!(raw(&mut c, &["EVAL", "return 1"]), "-ERR wrong number of arguments for 'eval' command\r\n");
    // Still serving.
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn read_only_scripts_refuse_writes() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let script = "return redis.call('set','a','1')";
    let want = format!(
        "-ERR Write commands are not allowed from read-only scripts. script: {}, on @user_script:1.\r\n",
        sha1(script)
    );
    assert_eq!(raw(&mut c, &["EVAL_RO", script, "0"]), want);
    assert_eq!(raw(&mut c, &["SCRIPT", "LOAD", script]), format!("$40\r\n{}\r\n", sha1(script)));
    assert_eq!(raw(&mut c, &["EVALSHA_RO", &sha1(script), "0"]), want);
    assert_eq!(c.cmd(&["EXISTS", "a"]), int(0));
    let shebang = "#!lua flags=no-writes\nreturn redis.call('set','a','1')";
    assert!(eval(&mut c, shebang).starts_with("-ERR Write commands are not allowed from read-only scripts."));
    assert_eq!(eval(&mut c, "#!lua\nreturn redis.call('get','a')"), "$-1\r\n");
    assert_eq!(eval(&mut c, "#!lua flags=bogus\nreturn 1"), "-ERR Unexpected flag in script shebang: bogus\r\n");
    assert_eq!(eval(&mut c, "#!notlua\nreturn 1"), "-ERR Unexpected engine in script shebang: #!notlua\r\n");
    assert_eq!(eval(&mut c, "#!lua name=x\nreturn 1"), "-ERR Unknown lua shebang option: name=x\r\n");
    assert_eq!(raw(&mut c, &["EVAL_RO", "return redis.call('get','a')", "0"]), "$-1\r\n");
    assert_eq!(eval(&mut c, script), "+OK\r\n");
}

#[test]
fn select_in_script_keeps_callers_db() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(
        eval(&mut c, "redis.call('select','1') redis.call('set','k','db1') return redis.call('get','k')"),
        "$3\r\ndb1\r\n"
    );
    assert_eq!(c.cmd(&["GET", "k"]), Frame::Null);
    c.cmd(&["SELECT", "1"]);
    assert_eq!(c.cmd(&["GET", "k"]), bulk("db1"));
}

#[test]
fn math_random_follows_redis_sequence() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    // A fresh redis-server 7.0.15 gives exactly these; the stream is not
    // reseeded between scripts.
    let first = "return {tostring(math.random()), tostring(math.random()), math.random(100), math.random(5,10)}";
    assert_eq!(eval(&mut c, first), "*4\r\n$16\r\n0.39646477363839\r\n$16\r\n0.84048536971234\r\n:36\r\n:7\r\n");
    assert_eq!(eval(&mut c, "return tostring(math.random())"), "$16\r\n0.31869277233197\r\n");
    assert_eq!(eval(&mut c, "math.randomseed(7) return tostring(math.random())"), "$16\r\n0.26644419658298\r\n");
}

#[test]
fn script_write_breaks_watch_of_other_client() {
    let srv = TestServer::start(&[]);
    let mut a = srv.client();
    let mut b = srv.client();
    assert_eq!(a.cmd(&["WATCH", "w"]), ok());
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["SET", "other", "1"]), simple("QUEUED"));
    assert_eq!(raw(&mut b, &["EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "w"]), "+OK\r\n");
    assert_eq!(a.cmd(&["EXEC"]), Frame::Null);
    assert_eq!(a.cmd(&["EXISTS", "other"]), int(0));
    // EVAL inside MULTI runs at EXEC.
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["EVAL", "return redis.call('incr','n')", "0"]), simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]), arr(vec![int(1)]));
}

#[test]
fn redis_log_reaches_server_log_and_info_counts_scripts() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(eval(&mut c, "redis.log(redis.LOG_WARNING, 'hello from', 'lua') return 1"), ":1\r\n");
    c.cmd(&["SCRIPT", "LOAD", "return 2"]);
    let Frame::Bulk(info) = c.cmd(&["INFO", "memory"]) else { panic!("INFO") };
    let info = String::from_utf8(info).unwrap();
    assert!(info.contains("number_of_cached_scripts:2\r\n"), "{info}");
    assert!(info.contains("used_memory_lua:"), "{info}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !srv.log().contains("hello from lua") {
        assert!(Instant::now() < deadline, "log: {}", srv.log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait until `c` gets -BUSY for PING (the script passed the threshold).
fn wait_busy(c: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let reply = raw(c, &["PING"]);
        if reply.starts_with("-BUSY") {
            assert_eq!(
                reply,
                "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
            );
            return;
        }
        assert!(Instant::now() < deadline, "never busy: {reply}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn busy_script_answers_busy_and_can_be_killed() {
    let srv = TestServer::start(&["--busy-reply-threshold", "200"]);
    let mut a = srv.client();
    let mut b = srv.client();
    let script = "local i = 0 while true do i = i + 1 end";
    let mut out = Vec::new();
    resp::encode_command(&mut out, &["EVAL", script, "0"]);
    resp::encode_command(&mut out, &["PING"]);
    a.send(&out);
    std::thread::sleep(Duration::from_millis(100));
    wait_busy(&mut b);
    // A pipeline gets one -BUSY per command, in order; SHUTDOWN needs NOSAVE.
    let mut out = Vec::new();
    for cmd in [&["GET", "x"][..], &["SHUTDOWN"], &["SCRIPT", "EXISTS", "abc"]] {
        resp::encode_command(&mut out, cmd);
    }
    b.send(&out);
    for _ in 0..3 {
        assert!(String::from_utf8(b.read_raw()).unwrap().starts_with("-BUSY "));
    }
    // New connections are served too.
    let mut fresh = srv.client();
    assert!(raw(&mut fresh, &["GET", "x"]).starts_with("-BUSY "));
    assert_eq!(raw(&mut b, &["SCRIPT", "KILL"]), "+OK\r\n");
    let killed = String::from_utf8(a.read_raw()).unwrap();
    assert_eq!(
        killed,
        format!("-ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:1.\r\n", sha1(script))
    );
    // The killed client's pipelined command runs after the script.
    assert_eq!(a.read_frame(), simple("PONG"));
    assert_eq!(b.cmd(&["PING"]), simple("PONG"));
    assert_eq!(raw(&mut b, &["SCRIPT", "KILL"]), "-NOTBUSY No scripts in execution right now.\r\n");
}

#[test]
fn writing_script_is_unkillable_but_shutdown_nosave_works() {
    let mut srv = TestServer::start(&["--busy-reply-threshold", "200"]);
    let mut a = srv.client();
    let mut b = srv.client();
    a.send(&{
        let mut out = Vec::new();
        resp::encode_command(&mut out, &["EVAL", "redis.call('set','k','v') while true do end", "0"]);
        out
    });
    std::thread::sleep(Duration::from_millis(100));
    wait_busy(&mut b);
    assert_eq!(
        raw(&mut b, &["SCRIPT", "KILL"]),
        "-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n"
    );
    b.send(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n");
    assert!(srv.wait_exit(Duration::from_secs(10)).is_some(), "server did not exit");
}

#[test]
fn runaway_memory_gets_an_error_not_a_crash() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let started = Instant::now();
    let reply = eval(&mut c, "local t = {} local i = 0 while true do i = i + 1 t[i] = i end");
    assert!(reply.starts_with("-ERR ") && reply.contains("not enough memory"), "{reply}");
    let reply = eval(&mut c, "return string.rep('x', 1e10)");
    assert!(reply.starts_with("-ERR ") && reply.contains("not enough memory"), "{reply}");
    assert!(started.elapsed() < Duration::from_secs(40));
    // The state is still usable, and so is the server.
    assert_eq!(eval(&mut c, "return #string.rep('x', 1000)"), ":1000\r\n");
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn blocking_commands_never_block_in_scripts() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["RPUSH", "ll", "a"]);
    // BLMPOP/BZMPOP are allowed in scripts (BLPOP & co. are `noscript`)
    // and act as their non-blocking forms even with timeout 0.
    let started = Instant::now();
    assert_eq!(eval(&mut c, "return redis.call('blmpop', 0, 1, 'll', 'left')"), "*2\r\n$2\r\nll\r\n*1\r\n$1\r\na\r\n");
    assert_eq!(eval(&mut c, "return redis.call('blmpop', 0, 1, 'll', 'left')"), "$-1\r\n");
    assert_eq!(eval(&mut c, "return type(redis.call('bzmpop', 0, 1, 'nz', 'min'))"), "$7\r\nboolean\r\n");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn embedded_libraries_are_reachable_from_eval() {
    // Expected replies as redis-server 7.0.15 gives them for the same scripts.
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let eval = |c: &mut Client, s: &str| c.cmd(&["EVAL", s, "0"]);
    assert_eq!(eval(&mut c, "return cjson.encode({1,2,{a=1}})"), bulk("[1,2,{\"a\":1}]"));
    assert_eq!(eval(&mut c, "return cjson.decode('[1,2,{\"a\":3}]')[3].a"), int(3));
    assert_eq!(eval(&mut c, "return cmsgpack.unpack(cmsgpack.pack({1,2,3}))"), arr(vec![int(1), int(2), int(3)]));
    assert_eq!(eval(&mut c, "return bit.tohex(bit.bxor(0xff, 0x0f))"), bulk("000000f0"));
    assert_eq!(eval(&mut c, "return struct.unpack('>I2', struct.pack('>I2', 258))"), int(258));
    assert_eq!(
        eval(&mut c, "local ok, e = pcall(cjson.decode, '[') return e"),
        bulk("Expected value but found T_END at character 2")
    );
    // The library tables are read-only, like every global.
    match eval(&mut c, "cjson.encode = nil") {
        Frame::Error(e) => assert!(e.starts_with(b"ERR user_script:1: Attempt to modify a readonly table script: ")),
        other => panic!("{other:?}"),
    }
}
