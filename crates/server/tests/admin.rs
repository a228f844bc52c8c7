//! Black-box tests of the administration commands: INFO, CONFIG, COMMAND,
//! CLIENT, TIME, LASTSAVE, SHUTDOWN and SIGTERM handling.
mod common;
use std::time::Duration;

use common::*;

fn text(f: Frame) -> String {
    match f {
        Frame::Bulk(b) | Frame::Verbatim(_, b) => String::from_utf8(b).unwrap(),
        other => panic!("expected text, got {other:?}"),
    }
}

fn items(f: Frame) -> Vec<Frame> {
    match f {
        Frame::Array(v) | Frame::Set(v) => v,
        other => panic!("expected an array, got {other:?}"),
    }
}

#[test]
fn info_sections_and_fields() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
    let info = text(c.cmd(&["INFO"]));
    assert!(info.starts_with("# Server\r\nredis_version:7.0.15\r\n"), "{info}");
    for field in ["volley_version:", "redis_mode:standalone", "process_id:", "uptime_in_days:0", "used_memory:"] {
        assert!(info.contains(field), "missing {field}");
    }
    assert!(info.contains(&format!("\r\ntcp_port:{}\r\n", srv.port)));
    assert!(info.contains("\r\nconnected_clients:1\r\n"));
    assert!(info.contains("\r\n\r\n# Clients\r\n"));
    assert!(info.contains("\r\nrole:master\r\n") && info.contains("\r\naof_enabled:0\r\n"));
    assert!(info.contains("\r\nmem_allocator:mimalloc-") && info.contains("\r\nused_cpu_user:"));
    assert!(!info.contains("# Commandstats"), "commandstats is not a default section");
    let stats = text(c.cmd(&["INFO", "commandstats"]));
    assert!(stats.starts_with("# Commandstats\r\n"));
    assert!(stats.contains("\r\ncmdstat_ping:calls=1,usec="), "{stats}");
    assert!(stats.contains("rejected_calls=0,failed_calls=0\r\n"));
    let all = text(c.cmd(&["INFO", "everything"]));
    assert!(all.contains("# Commandstats\r\n") && all.contains("# Keyspace\r\n"));
    assert!(all.contains("cmdstat_info:calls=2,"));
    assert_eq!(text(c.cmd(&["INFO", "keyspace"])), "# Keyspace\r\n");
    let two = text(c.cmd(&["INFO", "CPU", "server"]));
    assert!(two.starts_with("# Server\r\n") && two.contains("\r\n\r\n# CPU\r\n"), "fixed section order");
    assert_eq!(c.cmd(&["INFO", "nosuch"]), bulk(""));
    c.cmd(&["HELLO", "3"]);
    assert!(matches!(c.cmd(&["INFO", "server"]), Frame::Verbatim(fmt, _) if fmt == b"txt"));
}

/// The `usec` of a `cmdstat_*` line.
fn usec_of(stats: &str, command: &str) -> u64 {
    let line = stats.lines().find(|l| l.starts_with(&format!("cmdstat_{command}:"))).expect("a commandstats line");
    let usec = line.split(',').find_map(|f| f.strip_prefix("usec=")).expect("a usec field");
    usec.parse().expect("usec is a number")
}

#[test]
fn a_command_is_not_timed_across_an_idle_gap() {
    // Commands of one batch time themselves from the end of the one before
    // (one clock read each); the first of a batch must read the clock, or
    // it would be charged the idle time since the previous batch.
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "k", "v"]);
    std::thread::sleep(Duration::from_millis(300));
    let mut get = Vec::new();
    resp::encode_command(&mut get, &["GET", "k"]);
    c.send(&get.repeat(3));
    for _ in 0..3 {
        assert_eq!(c.read_frame(), bulk("v"));
    }
    let stats = text(c.cmd(&["INFO", "commandstats"]));
    assert!(stats.contains("cmdstat_get:calls=3,"), "{stats}");
    assert!(usec_of(&stats, "get") < 100_000, "GET charged the idle gap: {stats}");
    assert!(usec_of(&stats, "set") < 100_000, "{stats}");
}

#[test]
fn config_get_set_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["CONFIG", "GET", "maxmemory"]), arr(vec![bulk("maxmemory"), bulk("0")]));
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", "100mb", "timeout", "7"]), ok());
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "maxmemory", "timeout"]),
        arr(vec![bulk("maxmemory"), bulk("104857600"), bulk("timeout"), bulk("7")])
    );
    assert!(text(c.cmd(&["INFO", "memory"])).contains("\r\nmaxmemory_human:100.00M\r\n"));
    assert_eq!(c.cmd(&["CONFIG", "SET", "loglevel", "warning"]), ok());
    assert_eq!(c.cmd(&["CONFIG", "GET", "loglevel"]), arr(vec![bulk("loglevel"), bulk("warning")]));
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxclients", "50"]), ok());
    assert!(text(c.cmd(&["INFO", "clients"])).contains("\r\nmaxclients:50\r\n"));
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "nosuch", "1"]),
        err("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")
    );
    assert_eq!(c.cmd(&["CONFIG", "SET", "timeout"]), err("ERR wrong number of arguments for 'config|set' command"));
    assert_eq!(c.cmd(&["CONFIG", "SET", "timeout", "1", "hz"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["CONFIG", "GET"]), err("ERR wrong number of arguments for 'config|get' command"));
    assert_eq!(c.cmd(&["CONFIG"]), err("ERR wrong number of arguments for 'config' command"));
    assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), err("ERR The server is running without a config file"));
    assert_eq!(c.cmd(&["CONFIG", "NOPE"]), err("ERR unknown subcommand 'NOPE'. Try CONFIG HELP."));
    assert!(items(c.cmd(&["CONFIG", "HELP"])).len() > 4);
    assert!(matches!(c.cmd(&["HELLO", "3"]), Frame::Map(_)));
    match c.cmd(&["CONFIG", "GET", "timeout"]) {
        Frame::Map(kv) => assert_eq!(kv, vec![(bulk("timeout"), bulk("7"))]),
        other => panic!("RESP3 CONFIG GET should be a map: {other:?}"),
    }
}

#[test]
fn config_resetstat_clears_stats() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["PING"]);
    assert_eq!(c.cmd(&["CONFIG", "RESETSTAT"]), ok());
    let stats = text(c.cmd(&["INFO", "commandstats"]));
    assert!(!stats.contains("cmdstat_ping"), "{stats}");
    assert!(
        text(c.cmd(&["INFO", "stats"])).contains("\r\ntotal_commands_processed:2\r\n"),
        "RESETSTAT and INFO commandstats count"
    );
}

#[test]
fn command_count_list_and_info() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let Frame::Integer(count) = c.cmd(&["COMMAND", "COUNT"]) else { panic!() };
    let all = items(c.cmd(&["COMMAND"]));
    assert_eq!(all.len() as i64, count);
    let names = items(c.cmd(&["COMMAND", "LIST"]));
    let top = names.iter().filter(|n| !matches!(n, Frame::Bulk(b) if b.contains(&b'|'))).count();
    assert_eq!(top as i64, count);
    assert!(names.contains(&bulk("client|list")) && names.contains(&bulk("config|get")));
    assert_eq!(
        c.cmd(&["COMMAND", "INFO", "ping"]),
        arr(vec![arr(vec![
            bulk("ping"),
            int(-1),
            arr(vec![simple("fast")]),
            int(0),
            int(0),
            int(0),
            arr(vec![simple("@fast"), simple("@connection")]),
            arr(vec![bulk("request_policy:all_shards"), bulk("response_policy:all_succeeded")]),
            arr(vec![]),
            arr(vec![]),
        ])])
    );
    let info = items(c.cmd(&["COMMAND", "INFO", "config", "nosuch"]));
    assert_eq!(info[1], Frame::Null);
    let config = items(info[0].clone());
    assert_eq!(config[0], bulk("config"));
    let subs = items(config[9].clone());
    assert!(subs.iter().any(|s| items(s.clone())[0] == bulk("config|set")));
    assert_eq!(c.cmd(&["COMMAND", "LIST", "FILTERBY", "PATTERN", "config|s*"]), arr(vec![bulk("config|set")]));
    assert_eq!(c.cmd(&["COMMAND", "LIST", "FILTERBY", "MODULE", "x"]), arr(vec![]));
    assert_eq!(c.cmd(&["COMMAND", "LIST", "FILTERBY", "nope", "x"]), err("ERR syntax error"));
    assert!(items(c.cmd(&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "connection"])).contains(&bulk("ping")));
}

#[test]
fn command_docs_and_getkeys() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let docs = items(c.cmd(&["COMMAND", "DOCS", "ping", "nosuch"]));
    assert_eq!(docs[0], bulk("ping"));
    let fields = items(docs[1].clone());
    assert_eq!(&fields[..2], &[bulk("summary"), bulk("Ping the server")]);
    assert_eq!(docs.len(), 2, "unknown names are left out");
    assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "ping", "x"]), err("ERR The command has no key arguments"));
    assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "nosuch", "x"]), err("ERR Invalid command specified"));
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "ping"]),
        err("ERR wrong number of arguments for 'command|getkeys' command")
    );
    // Key-taking commands live in other groups; check them when present.
    if items(c.cmd(&["COMMAND", "LIST"])).contains(&bulk("get")) {
        assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "get", "k"]), arr(vec![bulk("k")]));
        assert_eq!(
            c.cmd(&["COMMAND", "GETKEYS", "get", "a", "b"]),
            err("ERR Invalid number of arguments specified for command")
        );
    }
}

#[test]
fn client_name_id_list_info() {
    let srv = TestServer::start(&[]);
    let mut a = srv.client();
    let mut b = srv.client();
    assert_eq!(a.cmd(&["CLIENT", "GETNAME"]), Frame::Null);
    assert_eq!(a.cmd(&["CLIENT", "SETNAME", "alpha"]), ok());
    assert_eq!(a.cmd(&["CLIENT", "GETNAME"]), bulk("alpha"));
    assert_eq!(
        a.cmd(&["CLIENT", "SETNAME", "a b"]),
        err("ERR Client names cannot contain spaces, newlines or special characters.")
    );
    let Frame::Integer(id_a) = a.cmd(&["CLIENT", "ID"]) else { panic!() };
    let Frame::Integer(id_b) = b.cmd(&["CLIENT", "ID"]) else { panic!() };
    assert_ne!(id_a, id_b);
    b.cmd(&["PING"]);
    let list = text(a.cmd(&["CLIENT", "LIST"]));
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    let mine = lines.iter().find(|l| l.starts_with(&format!("id={id_a} "))).unwrap();
    assert!(mine.contains(" name=alpha age=") && mine.contains(" flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf="));
    assert!(mine.ends_with(" events=r cmd=client|list user=default redir=-1 resp=2"), "{mine}");
    let other = lines.iter().find(|l| l.starts_with(&format!("id={id_b} "))).unwrap();
    assert!(other.contains(" cmd=ping "), "{other}");
    let only_b = text(a.cmd(&["CLIENT", "LIST", "ID", &id_b.to_string()]));
    assert_eq!(only_b.lines().count(), 1);
    assert_eq!(text(a.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"])), "");
    assert_eq!(a.cmd(&["CLIENT", "LIST", "TYPE", "x"]), err("ERR Unknown client type 'x'"));
    assert_eq!(a.cmd(&["CLIENT", "LIST", "ID", "x"]), err("ERR Invalid client ID"));
    let info = text(a.cmd(&["CLIENT", "INFO"]));
    assert!(
        info.starts_with(&format!("id={id_a} ")) && info.ends_with(" cmd=client|info user=default redir=-1 resp=2\n")
    );
    assert_eq!(a.cmd(&["CLIENT", "NO-EVICT", "on"]), ok());
    assert_eq!(a.cmd(&["CLIENT", "NO-EVICT", "maybe"]), err("ERR syntax error"));
    assert!(text(a.cmd(&["CLIENT", "INFO"])).contains(" flags=e "));
}

#[test]
fn client_setinfo() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "LIB-NAME", "redis-py"]), ok());
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "lib-ver", "5.0.1"]), ok());
    assert_eq!(
        c.cmd(&["CLIENT", "SETINFO", "lib-name", "a b"]),
        err("ERR lib-name cannot contain spaces, newlines or special characters.")
    );
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "color", "x"]), err("ERR Unrecognized option 'color'"));
}

#[test]
fn client_kill_other_and_self() {
    let srv = TestServer::start(&[]);
    let mut a = srv.client();
    let mut b = srv.client();
    let Frame::Integer(id_b) = b.cmd(&["CLIENT", "ID"]) else { panic!() };
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", &id_b.to_string()]), int(1));
    assert!(b.is_closed());
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", "999999"]), int(0));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "ID", "x"]), err("ERR client-id should be greater than 0"));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "1.2.3.4:5"]), err("ERR No such client"));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "TYPE", "bogus"]), err("ERR Unknown client type 'bogus'"));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "USER", "bob"]), err("ERR No such user 'bob'"));
    assert_eq!(a.cmd(&["CLIENT", "KILL", "SKIPME", "maybe"]), err("ERR syntax error"));
    // Old form by address.
    let mut c = srv.client();
    let addr = c.stream.local_addr().unwrap().to_string();
    assert_eq!(a.cmd(&["CLIENT", "KILL", &addr]), ok());
    assert!(c.is_closed());
    // Yourself: the reply arrives, then the connection closes.
    assert_eq!(a.cmd(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no"]), int(1));
    assert!(a.is_closed());
}

#[test]
fn client_reply_off_then_on() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let mut batch = Vec::new();
    for args in [&["CLIENT", "REPLY", "OFF"][..], &["PING"], &["PING", "x"], &["NOPE"], &["CLIENT", "REPLY", "ON"]] {
        resp::encode_command(&mut batch, args);
    }
    c.send(&batch);
    assert_eq!(c.read_frame(), ok(), "only CLIENT REPLY ON answers");
    assert_eq!(c.cmd(&["PING", "after"]), bulk("after"));
    assert_eq!(c.cmd(&["CLIENT", "REPLY", "MAYBE"]), err("ERR syntax error"));
}

#[test]
fn client_reply_skip_drops_one_reply() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let mut batch = Vec::new();
    for args in [&["CLIENT", "REPLY", "SKIP"][..], &["PING", "a"], &["PING", "b"]] {
        resp::encode_command(&mut batch, args);
    }
    c.send(&batch);
    assert_eq!(c.read_frame(), bulk("b"));
    assert_eq!(c.cmd(&["PING", "c"]), bulk("c"));
}

#[test]
fn time_and_lastsave() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let t = items(c.cmd(&["TIME"]));
    let secs: i64 = text(t[0].clone()).parse().unwrap();
    let usecs: i64 = text(t[1].clone()).parse().unwrap();
    assert!((secs - now).abs() <= 2 && (0..1_000_000).contains(&usecs));
    let Frame::Integer(last) = c.cmd(&["LASTSAVE"]) else { panic!() };
    assert!(last <= secs && last > secs - 60);
}

#[test]
fn shutdown_exits_cleanly() {
    let mut srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SHUTDOWN", "BOGUS"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["SHUTDOWN", "ABORT"]), err("ERR No shutdown in progress."));
    c.send(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n");
    assert!(c.is_closed(), "no reply, the connection just closes");
    let status = srv.wait_exit(Duration::from_secs(10)).expect("server exits after SHUTDOWN");
    assert!(status.success(), "{status:?}");
}

#[test]
fn sigterm_exits_gracefully() {
    let mut srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["PING"]), simple("PONG"));
    // SAFETY: plain kill(2) on the child we started.
    assert_eq!(unsafe { libc::kill(srv.pid() as i32, libc::SIGTERM) }, 0);
    let status = srv.wait_exit(Duration::from_secs(10)).expect("server exits after SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(srv.log().contains("Received SIGTERM scheduling shutdown"));
}

#[test]
fn getkeys_reads_numkeys() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let mut getkeys = |args: &[&str]| c.cmd(&[&["COMMAND", "GETKEYS"], args].concat());
    let names = |ks: &[&str]| arr(ks.iter().map(|k| bulk(k)).collect());
    assert_eq!(getkeys(&["zunionstore", "d", "2", "a", "b", "weights", "1", "2"]), names(&["d", "a", "b"]));
    assert_eq!(getkeys(&["blmpop", "0", "2", "a", "b", "left"]), names(&["a", "b"]));
    assert_eq!(getkeys(&["sintercard", "1", "a", "limit", "5"]), names(&["a"]));
    for bad in [&["zunion", "0", "a"][..], &["zunion", "5", "a"], &["lmpop", "x", "a", "left"]] {
        assert_eq!(getkeys(bad), err("ERR Invalid arguments specified for command"), "{bad:?}");
    }
    let info = items(c.cmd(&["COMMAND", "INFO", "zunionstore"]));
    assert!(items(items(info[0].clone())[2].clone()).contains(&simple("movablekeys")));
}

/// The value of `name` in INFO `section`, empty when absent.
fn stat(c: &mut Client, section: &str, name: &str) -> String {
    let all = text(c.cmd(&["INFO", section]));
    let prefix = format!("{name}:");
    all.lines().find(|l| l.starts_with(&prefix)).map(|l| l[prefix.len()..].to_string()).unwrap_or_default()
}

#[test]
fn errors_are_charged_to_the_command_that_raised_them() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    // Wrong arity: rejected, not called.
    c.cmd(&["SET", "k"]);
    assert!(stat(&mut c, "commandstats", "cmdstat_set").starts_with("calls=0,"), "set stats");
    assert!(stat(&mut c, "commandstats", "cmdstat_set").ends_with("rejected_calls=1,failed_calls=0"));
    // An error inside EXEC fails that command, not EXEC.
    c.cmd(&["MULTI"]);
    c.cmd(&["SET", "a", "b"]);
    c.cmd(&["INCR", "a"]);
    c.cmd(&["EXEC"]);
    assert!(stat(&mut c, "commandstats", "cmdstat_incr").ends_with("rejected_calls=0,failed_calls=1"));
    assert!(stat(&mut c, "commandstats", "cmdstat_exec").ends_with("rejected_calls=0,failed_calls=0"));
    assert_eq!(stat(&mut c, "errorstats", "errorstat_ERR"), "count=2");
    // CLIENT UNBLOCK ... ERROR fails the blocked command under its own code.
    let mut b = srv.client();
    let Frame::Integer(id) = b.cmd(&["CLIENT", "ID"]) else { panic!() };
    b.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n");
    while stat(&mut c, "clients", "blocked_clients") != "1" {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(c.cmd(&["CLIENT", "UNBLOCK", &id.to_string(), "ERROR"]), int(1));
    b.read_frame();
    assert_eq!(stat(&mut c, "errorstats", "errorstat_UNBLOCKED"), "count=1");
    let blpop = stat(&mut c, "commandstats", "cmdstat_blpop");
    assert!(blpop.starts_with("calls=1,") && blpop.ends_with("rejected_calls=0,failed_calls=1"), "{blpop}");
    // A timeout ends the blocked command as one call that did not fail.
    b.cmd(&["BLPOP", "q", "0.01"]);
    let blpop = stat(&mut c, "commandstats", "cmdstat_blpop");
    assert!(blpop.starts_with("calls=2,") && blpop.ends_with("rejected_calls=0,failed_calls=1"), "{blpop}");
    // Percentiles are shown as Redis prints doubles.
    c.cmd(&["CONFIG", "SET", "latency-tracking-info-percentiles", "0.0 50.0 99.9"]);
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "latency-tracking-info-percentiles"]),
        arr(vec![bulk("latency-tracking-info-percentiles"), bulk("0 50 99.9")])
    );
}

/// Errors of commands a script runs are counted when they happen; the
/// script's own error reply then fails EVAL without counting them again,
/// unless the script made the error itself (as Redis 7.0 counts them).
#[test]
fn script_command_errors_are_counted_once() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let cases: &[(&str, &str, &str)] = &[
        // (script, errorstats line, total_error_replies)
        ("redis.pcall('XGROUP', 'CREATECONSUMER', 'nokey', 'g', 'c') return 1", "errorstat_ERR:count=1", "1"),
        ("return redis.call('SELECT', 99)", "errorstat_ERR:count=1", "1"),
        ("return redis.pcall('LPUSH', KEYS[1], 'x')", "errorstat_WRONGTYPE:count=1", "1"),
        ("return redis.call('NOSUCH')", "errorstat_ERR:count=1", "1"),
        ("local t = redis.pcall('SET', 'x') return 1", "errorstat_ERR:count=1", "1"),
        ("return redis.error_reply('MINE here')", "errorstat_MINE:count=1", "1"),
        ("return {redis.pcall('SELECT', 99), redis.pcall('SELECT', 98)}", "errorstat_ERR:count=2", "2"),
    ];
    c.cmd(&["SET", "str", "v"]);
    for (script, line, total) in cases {
        c.cmd(&["CONFIG", "RESETSTAT"]);
        c.cmd(&["EVAL", script, "1", "str"]);
        let errorstats = text(c.cmd(&["INFO", "errorstats"]));
        assert!(errorstats.lines().any(|l| l == *line) && errorstats.lines().count() == 2, "{script}: {errorstats}");
        assert_eq!(stat(&mut c, "stats", "total_error_replies"), *total, "{script}");
    }
    // The script's error reply still fails EVAL.
    c.cmd(&["CONFIG", "RESETSTAT"]);
    c.cmd(&["EVAL", "return redis.call('SELECT', 99)", "0"]);
    assert!(stat(&mut c, "commandstats", "cmdstat_eval").ends_with("failed_calls=1"));
    assert!(stat(&mut c, "commandstats", "cmdstat_select").ends_with("failed_calls=1"));
}
