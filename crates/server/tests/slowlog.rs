//! SLOWLOG, LATENCY and INFO latencystats over real TCP, checked against
//! the replies of redis-server 7.0.15: what gets logged (thresholds, EXEC,
//! trimming, redaction, the client's address and name), the reply shapes and
//! error texts, latency monitor events and per-command histograms.
mod common;
use common::*;

fn raw(c: &mut Client, args: &[&str]) -> String {
    String::from_utf8_lossy(&c.raw_cmd(args)).into_owned()
}

/// The entries of `SLOWLOG GET -1`, newest first.
fn entries(c: &mut Client) -> Vec<Vec<Frame>> {
    match c.cmd(&["SLOWLOG", "GET", "-1"]) {
        Frame::Array(items) => items
            .into_iter()
            .map(|e| match e {
                Frame::Array(fields) => fields,
                other => panic!("entry is not an array: {other:?}"),
            })
            .collect(),
        other => panic!("SLOWLOG GET replied {other:?}"),
    }
}

fn argv_of(entry: &[Frame]) -> Vec<String> {
    match &entry[3] {
        Frame::Array(a) => a
            .iter()
            .map(|f| match f {
                Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("argument is {other:?}"),
            })
            .collect(),
        other => panic!("argv is {other:?}"),
    }
}

fn as_int(f: &Frame) -> i64 {
    match f {
        Frame::Integer(i) => *i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

#[test]
fn thresholds_length_and_get_counts() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    assert_eq!(
        raw(&mut c, &["CONFIG", "GET", "slowlog-log-slower-than"]),
        "*2\r\n$23\r\nslowlog-log-slower-than\r\n$5\r\n10000\r\n"
    );
    assert_eq!(raw(&mut c, &["CONFIG", "GET", "slowlog-max-len"]), "*2\r\n$15\r\nslowlog-max-len\r\n$3\r\n128\r\n");
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "100000"]);
    c.cmd(&["PING"]);
    assert_eq!(raw(&mut c, &["SLOWLOG", "LEN"]), ":0\r\n");
    c.cmd(&["DEBUG", "SLEEP", "0.12"]);
    assert_eq!(raw(&mut c, &["SLOWLOG", "LEN"]), ":1\r\n");
    // 0 logs everything; the log keeps the newest max-len entries.
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    c.cmd(&["CONFIG", "SET", "slowlog-max-len", "10"]);
    for _ in 0..30 {
        c.cmd(&["PING"]);
    }
    assert_eq!(raw(&mut c, &["SLOWLOG", "LEN"]), ":10\r\n");
    assert!(raw(&mut c, &["SLOWLOG", "GET"]).starts_with("*10\r\n"));
    assert!(raw(&mut c, &["SLOWLOG", "GET", "3"]).starts_with("*3\r\n"));
    assert_eq!(raw(&mut c, &["SLOWLOG", "GET", "0"]), "*0\r\n");
    let ids: Vec<i64> = entries(&mut c).iter().map(|e| as_int(&e[0])).collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1] + 1), "newest first, consecutive ids: {ids:?}");
    assert_eq!(raw(&mut c, &["SLOWLOG", "RESET"]), "+OK\r\n");
    // RESET itself is logged right after it runs.
    assert_eq!(raw(&mut c, &["SLOWLOG", "LEN"]), ":1\r\n");
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    c.cmd(&["SLOWLOG", "RESET"]);
    c.cmd(&["DEBUG", "SLEEP", "0.05"]);
    assert_eq!(raw(&mut c, &["SLOWLOG", "LEN"]), ":0\r\n");
}

#[test]
fn errors_and_help() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    let count_err = "-ERR count should be greater than or equal to -1\r\n";
    assert_eq!(raw(&mut c, &["SLOWLOG", "GET", "-2"]), count_err);
    assert_eq!(raw(&mut c, &["SLOWLOG", "GET", "abc"]), count_err);
    assert_eq!(
        raw(&mut c, &["SLOWLOG", "GET", "1", "2"]),
        "-ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.\r\n"
    );
    assert_eq!(raw(&mut c, &["SLOWLOG", "LEN", "x"]), "-ERR wrong number of arguments for 'slowlog|len' command\r\n");
    assert_eq!(raw(&mut c, &["SLOWLOG", "NOPE"]), "-ERR unknown subcommand 'NOPE'. Try SLOWLOG HELP.\r\n");
    let help = raw(&mut c, &["SLOWLOG", "HELP"]);
    assert!(help
        .starts_with("*12\r\n+SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET [<count>]\r\n"));
    assert_eq!(raw(&mut c, &["LATENCY", "HELP", "x"]), "-ERR wrong number of arguments for 'latency|help' command\r\n");
    assert!(raw(&mut c, &["LATENCY", "HELP"]).starts_with("*17\r\n+LATENCY <subcommand>"));
    assert_eq!(raw(&mut c, &["LATENCY", "GRAPH", "nope"]), "-ERR No samples available for event 'nope'\r\n");
    assert_eq!(raw(&mut c, &["LATENCY", "HISTORY", "nope"]), "*0\r\n");
    assert_eq!(raw(&mut c, &["LATENCY", "RESET", "nope"]), ":0\r\n");
    assert_eq!(raw(&mut c, &["LATENCY", "LATEST"]), "*0\r\n");
    let doctor = raw(&mut c, &["LATENCY", "DOCTOR"]);
    assert!(doctor.contains("I'm sorry, Dave, I can't do that. Latency monitoring is disabled"), "{doctor}");
}

#[test]
fn entries_record_client_and_trimmed_arguments() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    c.cmd(&["CLIENT", "SETNAME", "foobar"]);
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    c.cmd(&["SLOWLOG", "RESET"]);
    let many: Vec<String> = (3..=33).map(|i| i.to_string()).collect();
    let mut args = vec!["SADD", "set"];
    args.extend(many.iter().map(String::as_str));
    c.cmd(&args);
    let long = "A".repeat(129);
    c.cmd(&["SADD", "set", "foo", &long]);
    let e = entries(&mut c);
    let newest = &e[0];
    assert_eq!(newest.len(), 6);
    assert_eq!(argv_of(newest), ["SADD", "set", "foo", &format!("{}... (1 more bytes)", "A".repeat(128))]);
    let trimmed = argv_of(&e[1]);
    assert_eq!(trimmed.len(), 32);
    assert_eq!(trimmed[30], "31");
    assert_eq!(trimmed[31], "... (2 more arguments)");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!((as_int(&newest[1]) - now).abs() <= 2, "timestamp {:?}", newest[1]);
    assert!(as_int(&newest[2]) >= 0);
    let info = match c.cmd(&["CLIENT", "INFO"]) {
        Frame::Bulk(b) | Frame::Verbatim(_, b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    let addr = info.split(' ').find_map(|f| f.strip_prefix("addr=")).unwrap().to_string();
    assert_eq!(newest[4], bulk(&addr));
    assert_eq!(newest[5], bulk("foobar"));
}

#[test]
fn exec_is_not_logged_but_its_commands_are() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "50000"]);
    c.cmd(&["SLOWLOG", "RESET"]);
    c.cmd(&["MULTI"]);
    c.cmd(&["DEBUG", "SLEEP", "0.08"]);
    c.cmd(&["EXEC"]);
    let e = entries(&mut c);
    assert_eq!(e.len(), 1);
    assert_eq!(argv_of(&e[0]), ["DEBUG", "SLEEP", "0.08"]);
    assert!(as_int(&e[0][2]) >= 80_000, "duration {:?}", e[0][2]);
}

#[test]
fn secrets_are_redacted() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    c.cmd(&["SLOWLOG", "RESET"]);
    c.cmd(&["CONFIG", "SET", "masterauth", ""]);
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    let e = entries(&mut c);
    assert_eq!(e.len(), 2, "the last CONFIG SET disabled the log before it was logged");
    assert_eq!(argv_of(&e[0]), ["CONFIG", "SET", "masterauth", "(redacted)"]);
    assert_eq!(argv_of(&e[1]), ["SLOWLOG", "RESET"]);
}

#[test]
fn latency_monitor_events() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "50"]);
    assert_eq!(
        raw(&mut c, &["CONFIG", "GET", "latency-monitor-threshold"]),
        "*2\r\n$25\r\nlatency-monitor-threshold\r\n$2\r\n50\r\n"
    );
    assert!(raw(&mut c, &["LATENCY", "DOCTOR"]).starts_with("$"));
    assert!(raw(&mut c, &["LATENCY", "DOCTOR"]).contains("Dave, no latency spike was observed"));
    c.cmd(&["PING"]);
    assert_eq!(raw(&mut c, &["LATENCY", "LATEST"]), "*0\r\n");
    c.cmd(&["DEBUG", "SLEEP", "0.08"]);
    let latest = c.cmd(&["LATENCY", "LATEST"]);
    let Frame::Array(events) = latest else { panic!("{latest:?}") };
    assert_eq!(events.len(), 1);
    let Frame::Array(ev) = &events[0] else { panic!() };
    assert_eq!(ev[0], bulk("command"));
    let ms = as_int(&ev[2]);
    assert!((80..400).contains(&ms), "latency {ms}");
    assert_eq!(as_int(&ev[3]), ms);
    let Frame::Array(hist) = c.cmd(&["LATENCY", "HISTORY", "command"]) else { panic!() };
    assert_eq!(hist, vec![arr(vec![ev[1].clone(), int(ms)])]);
    let graph = raw(&mut c, &["LATENCY", "GRAPH", "command"]);
    assert!(
        graph.contains(&format!("command - high {ms} ms, low {ms} ms (all time high {ms} ms)\n{}\n", "-".repeat(80))),
        "{graph}"
    );
    assert!(raw(&mut c, &["LATENCY", "DOCTOR"]).contains("1. command: 1 latency spikes"));
    assert_eq!(raw(&mut c, &["LATENCY", "RESET"]), ":1\r\n");
    assert_eq!(raw(&mut c, &["LATENCY", "LATEST"]), "*0\r\n");
}

#[test]
fn latency_histograms_and_info_latencystats() {
    let srv = TestServer::start(&["--enable-debug-command", "yes"]);
    let mut c = srv.client();
    c.cmd(&["CONFIG", "RESETSTAT"]);
    let Frame::Array(all) = c.cmd(&["LATENCY", "HISTOGRAM"]) else { panic!() };
    assert_eq!(all.len(), 2, "only config|resetstat: {all:?}");
    assert_eq!(all[0], bulk("config|resetstat"));
    c.cmd(&["SET", "a", "b"]);
    c.cmd(&["SET", "c", "d"]);
    c.cmd(&["CLIENT", "ID"]);
    let Frame::Array(h) = c.cmd(&["LATENCY", "HISTOGRAM", "set", "blabla", "client"]) else { panic!() };
    assert_eq!(h.len(), 4, "{h:?}");
    assert_eq!(h[0], bulk("set"));
    let Frame::Array(set) = &h[1] else { panic!() };
    assert_eq!(set[..3], [bulk("calls"), int(2), bulk("histogram_usec")]);
    let Frame::Array(buckets) = &set[3] else { panic!() };
    assert!(!buckets.is_empty() && buckets.len() % 2 == 0);
    assert_eq!(buckets[buckets.len() - 1], int(2), "cumulative counts end at the calls");
    assert_eq!(h[2], bulk("client|id"));
    // RESP3: maps.
    c.cmd(&["HELLO", "3"]);
    let r = raw(&mut c, &["LATENCY", "HISTOGRAM", "set"]);
    assert!(r.starts_with("%1\r\n$3\r\nset\r\n%2\r\n$5\r\ncalls\r\n:2\r\n$14\r\nhistogram_usec\r\n%"), "{r}");
    c.cmd(&["HELLO", "2"]);
    let info = String::from_utf8(c.raw_cmd(&["INFO", "latencystats"])).unwrap();
    let line = info.lines().find(|l| l.starts_with("latency_percentiles_usec_set:")).expect(&info);
    let parts: Vec<&str> = line.split_once(':').unwrap().1.split(',').collect();
    assert_eq!(parts.len(), 3);
    for (p, prefix) in parts.iter().zip(["p50=", "p99=", "p99.9="]) {
        let v = p.strip_prefix(prefix).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(v.split('.').nth(1).map(str::len), Some(3), "{line}");
    }
    assert!(!String::from_utf8(c.raw_cmd(&["INFO"])).unwrap().contains("# Latencystats"));
    let everything = String::from_utf8(c.raw_cmd(&["INFO", "everything"])).unwrap();
    let (errs, lat, cluster) =
        (everything.find("# Errorstats"), everything.find("# Latencystats"), everything.find("# Cluster"));
    assert!(errs < lat && lat < cluster, "section order");
    c.cmd(&["CONFIG", "SET", "latency-tracking-info-percentiles", "50 100"]);
    let info = String::from_utf8(c.raw_cmd(&["INFO", "latencystats"])).unwrap();
    assert!(info.contains("latency_percentiles_usec_set:p50="), "{info}");
    assert!(info.contains(",p100="), "{info}");
    c.cmd(&["CONFIG", "SET", "latency-tracking", "no"]);
    let info = String::from_utf8(c.raw_cmd(&["INFO", "latencystats"])).unwrap();
    assert!(!info.contains("latency_percentiles"), "{info}");
}
