//! MEMORY USAGE against what keys really cost: for each type and encoding,
//! a fresh server is loaded with enough keys to grow its resident set by
//! ~10 MB, and the sum of MEMORY USAGE over those keys must be within 20%
//! of that growth. Also the command's syntax, errors and reply shapes.
mod common;

use common::*;

/// Resident set of a process, from /proc/<pid>/status.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS line");
    let kb: u64 = line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("VmRSS value");
    kb * 1024
}

/// Sends commands in pipelined batches and checks no reply is an error.
fn pipeline(c: &mut Client, cmds: impl Iterator<Item = Vec<String>>) -> Vec<Frame> {
    let mut replies = Vec::new();
    let mut batch = Vec::new();
    let mut pending = 0;
    let flush = |c: &mut Client, batch: &mut Vec<u8>, pending: &mut usize, replies: &mut Vec<Frame>| {
        c.send(batch);
        batch.clear();
        for _ in 0..*pending {
            let f = c.read_frame();
            assert!(!matches!(f, Frame::Error(_)), "error reply: {f:?}");
            replies.push(f);
        }
        *pending = 0;
    };
    for cmd in cmds {
        resp::encode_command(&mut batch, &cmd);
        pending += 1;
        if batch.len() > 64 << 10 {
            flush(c, &mut batch, &mut pending, &mut replies);
        }
    }
    flush(c, &mut batch, &mut pending, &mut replies);
    replies
}

fn words(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

struct Case {
    name: &'static str,
    keys: usize,
    /// Commands that build key `i` (its name is `key:{i}`).
    load: fn(usize) -> Vec<Vec<String>>,
    encoding: &'static str,
}

fn one(cmd: Vec<String>) -> Vec<Vec<String>> {
    vec![cmd]
}

/// `cmd key:i` followed by `n` generated arguments, split into commands of
/// at most 1000 arguments each (big aggregates).
fn chunked(i: usize, cmd: &str, n: usize, arg: impl Fn(usize) -> Vec<String>) -> Vec<Vec<String>> {
    (0..n)
        .step_by(500)
        .map(|from| {
            let mut c = words(&[cmd, &format!("key:{i}")]);
            (from..(from + 500).min(n)).for_each(|j| c.extend(arg(j)));
            c
        })
        .collect()
}

const CASES: &[Case] = &[
    Case {
        name: "int strings",
        keys: 150_000,
        load: |i| one(words(&["SET", &format!("key:{i}"), &format!("{}", i * 7919)])),
        encoding: "int",
    },
    Case {
        name: "embstr strings",
        keys: 100_000,
        load: |i| one(words(&["SET", &format!("key:{i}"), &format!("value-{i:0>30}")])),
        encoding: "embstr",
    },
    Case {
        name: "raw strings",
        keys: 40_000,
        load: |i| one(words(&["SET", &format!("key:{i}"), &"r".repeat(200 + i % 50)])),
        encoding: "raw",
    },
    Case {
        name: "appended strings",
        keys: 40_000,
        load: |i| {
            vec![
                words(&["SET", &format!("key:{i}"), "start"]),
                words(&["APPEND", &format!("key:{i}"), &"a".repeat(150 + i % 50)]),
            ]
        },
        encoding: "raw",
    },
    Case {
        name: "volatile strings with long keys",
        keys: 80_000,
        load: |i| one(words(&["SET", &format!("a-rather-long-key-name:{i}"), "v", "EX", "100000"])),
        encoding: "embstr",
    },
    Case {
        name: "small lists",
        keys: 40_000,
        load: |i| chunked(i, "RPUSH", 12, |j| vec![format!("item-{j}")]),
        encoding: "quicklist",
    },
    Case {
        name: "big lists",
        keys: 4,
        load: |i| chunked(i, "RPUSH", 150_000, |j| vec![format!("element:{j}")]),
        encoding: "quicklist",
    },
    Case {
        name: "small hashes",
        keys: 30_000,
        load: |i| chunked(i, "HSET", 10, |j| vec![format!("field-{j}"), format!("value-{j}")]),
        encoding: "listpack",
    },
    Case {
        name: "big hashes",
        keys: 4,
        load: |i| chunked(i, "HSET", 40_000, |j| vec![format!("field:{j}"), format!("value:{j}")]),
        encoding: "hashtable",
    },
    Case {
        name: "int sets",
        keys: 30_000,
        load: |i| chunked(i, "SADD", 60, |j| vec![format!("{}", j * 1_000_003)]),
        encoding: "intset",
    },
    Case {
        name: "big sets",
        keys: 4,
        load: |i| chunked(i, "SADD", 50_000, |j| vec![format!("member:{j}")]),
        encoding: "hashtable",
    },
    Case {
        name: "small zsets",
        keys: 25_000,
        load: |i| chunked(i, "ZADD", 12, |j| vec![format!("{j}"), format!("m-{j}")]),
        encoding: "listpack",
    },
    Case {
        name: "big zsets",
        keys: 4,
        load: |i| chunked(i, "ZADD", 40_000, |j| vec![format!("{}", j % 977), format!("member:{j}")]),
        encoding: "skiplist",
    },
];

fn key_name(case: &Case, i: usize) -> String {
    // The loader names its keys; the first command's second word is it.
    (case.load)(i)[0][1].clone()
}

/// An integer field of INFO.
fn info_field(c: &mut Client, name: &str) -> i64 {
    let Frame::Bulk(text) = c.cmd(&["INFO", "memory"]) else { panic!("INFO is a bulk string") };
    let text = String::from_utf8_lossy(&text).into_owned();
    let prefix = format!("{name}:");
    let line = text.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no {name} in {text}"));
    line[prefix.len()..].parse().unwrap_or_else(|_| panic!("{line}"))
}

/// Returns MEMORY USAGE's sum and INFO used_memory's growth, each over the
/// resident set's growth.
fn check_case(case: &Case) -> (f64, f64) {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let before = rss_bytes(srv.pid());
    let counted_before = info_field(&mut c, "used_memory");
    pipeline(&mut c, (0..case.keys).flat_map(|i| (case.load)(i)));
    let after = rss_bytes(srv.pid());
    let counted = info_field(&mut c, "used_memory") - counted_before;
    let first = key_name(case, 0);
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", &first]), bulk(case.encoding), "{}", case.name);
    let usages = pipeline(&mut c, (0..case.keys).map(|i| words(&["MEMORY", "USAGE", &key_name(case, i)])));
    let sum: i64 = usages
        .iter()
        .map(|f| match f {
            Frame::Integer(n) => *n,
            other => panic!("{}: MEMORY USAGE replied {other:?}", case.name),
        })
        .sum();
    let grown = after.saturating_sub(before) as f64;
    assert!(grown > 5e6, "{}: only {grown} bytes of growth, too little to measure", case.name);
    (sum as f64 / grown, counted as f64 / grown)
}

/// MEMORY USAGE, and the allocator's count that drives `maxmemory`, each
/// within 20% of what the keys really cost the process.
#[test]
fn usage_sums_and_used_memory_match_rss_growth_for_every_encoding() {
    let ratios: Vec<(f64, f64)> = CASES.iter().map(check_case).collect();
    let text: Vec<String> = CASES
        .iter()
        .zip(&ratios)
        .map(|(case, (usage, counted))| format!("{}: usage/rss {usage:.3} used_memory/rss {counted:.3}", case.name))
        .collect();
    let text = text.join("\n");
    eprintln!("{text}");
    for (case, &(usage, counted)) in CASES.iter().zip(&ratios) {
        assert!((0.8..=1.2).contains(&usage), "{}: MEMORY USAGE off by more than 20%:\n{text}", case.name);
        assert!((0.8..=1.2).contains(&counted), "{}: used_memory off by more than 20%:\n{text}", case.name);
    }
}

/// used_memory follows the data both ways; the peak stays; the overheads
/// and the dataset add up to it.
#[test]
fn used_memory_counts_allocations_and_their_release() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let empty = info_field(&mut c, "used_memory");
    let startup = info_field(&mut c, "used_memory_startup");
    assert!(startup > 0 && startup <= empty, "startup {startup}, used {empty}");
    let value = "x".repeat(1000);
    pipeline(&mut c, (0..10_000).map(|i| words(&["SET", &format!("k{i}"), &value])));
    let full = info_field(&mut c, "used_memory");
    // 10k values of 1000 bytes (1024-byte blocks), keys and table nodes.
    assert!((10_240_000..13_000_000).contains(&(full - empty)), "grew {}", full - empty);
    let (overhead, dataset) = (info_field(&mut c, "used_memory_overhead"), info_field(&mut c, "used_memory_dataset"));
    let used = info_field(&mut c, "used_memory");
    assert!((overhead + dataset - used).abs() < 4096, "{overhead} + {dataset} vs {used}");
    assert!(dataset > 10_000_000, "dataset {dataset}");
    c.cmd(&["FLUSHALL", "SYNC"]);
    let flushed = info_field(&mut c, "used_memory");
    assert!(flushed - empty < 200_000, "after FLUSHALL {flushed}, empty {empty}");
    assert!(info_field(&mut c, "used_memory_peak") >= full, "the peak is kept");
}

#[test]
fn syntax_errors_and_missing_keys() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "k", "v"]);
    let syntax = err("ERR syntax error");
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "k", "SAMPLES"]), syntax);
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "k", "SAMPLES", "-1"]), syntax);
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "k", "FOO"]), syntax);
    // Options are checked before the key is looked up.
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "missing", "FOO", "1"]), syntax);
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "k", "SAMPLES", "x"]), err("ERR value is not an integer or out of range"));
    assert_eq!(c.raw_cmd(&["MEMORY", "USAGE", "missing"]), b"$-1\r\n");
    assert_eq!(c.raw_cmd(&["MEMORY", "USAGE", "missing", "samples", "0"]), b"$-1\r\n");
    assert!(matches!(c.cmd(&["MEMORY", "USAGE", "k", "samples", "0", "SAMPLES", "3"]), Frame::Integer(n) if n > 0));
    assert_eq!(c.cmd(&["MEMORY", "USAGE"]), err("ERR wrong number of arguments for 'memory|usage' command"));
    assert_eq!(c.cmd(&["MEMORY", "PURGE", "x"]), err("ERR wrong number of arguments for 'memory|purge' command"));
    assert_eq!(c.cmd(&["MEMORY", "NOPE"]), err("ERR unknown subcommand 'NOPE'. Try MEMORY HELP."));
    assert_eq!(c.cmd(&["MEMORY"]), err("ERR wrong number of arguments for 'memory' command"));
    assert_eq!(c.cmd(&["MEMORY", "PURGE"]), ok());
    c.send(b"HELLO 3\r\n");
    c.read_frame();
    assert_eq!(c.raw_cmd(&["MEMORY", "USAGE", "missing"]), b"_\r\n");
}

#[test]
fn usage_follows_the_value() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let usage = |c: &mut Client, k: &str| match c.cmd(&["MEMORY", "USAGE", k, "SAMPLES", "0"]) {
        Frame::Integer(n) => n,
        other => panic!("{other:?}"),
    };
    c.cmd(&["SET", "s", "1"]);
    let small = usage(&mut c, "s");
    c.cmd(&["SET", "s", &"x".repeat(10_000)]);
    let big = usage(&mut c, "s");
    assert!(big >= small + 10_000 && big < small + 12_000, "{small} -> {big}");
    // A TTL costs an expiry-table entry.
    c.cmd(&["SET", "t", "1"]);
    let plain = usage(&mut c, "t");
    c.cmd(&["EXPIRE", "t", "1000"]);
    assert!(usage(&mut c, "t") > plain);
    // Sampling: members of different sizes, all counted with SAMPLES 0.
    for i in 0..200 {
        c.cmd(&["SADD", "set", &format!("m{i}-{}", "y".repeat(i))]);
    }
    let all = usage(&mut c, "set");
    assert!(all > (0..200).sum::<i64>(), "{all}");
}

#[test]
fn stats_doctor_and_malloc_stats_shapes() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["SET", "b", "1", "EX", "100"]);
    let Frame::Array(items) = c.cmd(&["MEMORY", "STATS"]) else { panic!("STATS is an array in RESP2") };
    let names: Vec<String> = items
        .iter()
        .step_by(2)
        .map(|f| match f {
            Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("field name {other:?}"),
        })
        .collect();
    let expect = "peak.allocated total.allocated startup.allocated replication.backlog clients.slaves \
        clients.normal cluster.links aof.buffer lua.caches functions.caches db.0 overhead.total keys.count \
        keys.bytes-per-key dataset.bytes dataset.percentage peak.percentage allocator.allocated allocator.active \
        allocator.resident allocator-fragmentation.ratio allocator-fragmentation.bytes allocator-rss.ratio \
        allocator-rss.bytes rss-overhead.ratio rss-overhead.bytes fragmentation fragmentation.bytes";
    assert_eq!(names.join(" "), expect.split_whitespace().collect::<Vec<_>>().join(" "));
    let field = |name: &str| items[names.iter().position(|n| n == name).unwrap() * 2 + 1].clone();
    assert_eq!(field("keys.count"), int(2));
    let db0 = field("db.0");
    let Frame::Array(db) = db0 else { panic!("db.0 is a nested map: {db0:?}") };
    assert_eq!(db[0], bulk("overhead.hashtable.main"));
    assert!(matches!(db[3], Frame::Integer(n) if n > 0), "one volatile key: {:?}", db[3]);
    assert!(matches!(field("dataset.percentage"), Frame::Bulk(_)), "a double is a bulk string in RESP2");
    assert!(matches!(c.cmd(&["MEMORY", "DOCTOR"]), Frame::Bulk(b) if b.starts_with(b"Hi Sam")));
    assert!(matches!(c.cmd(&["MEMORY", "MALLOC-STATS"]), Frame::Bulk(b) if !b.is_empty()));
    c.send(b"HELLO 3\r\n");
    c.read_frame();
    let raw = c.raw_cmd(&["MEMORY", "STATS"]);
    assert!(raw.starts_with(b"%28\r\n$14\r\npeak.allocated\r\n:"), "{}", String::from_utf8_lossy(&raw[..40]));
    assert!(String::from_utf8_lossy(&raw).contains("$18\r\ndataset.percentage\r\n,"));
    assert!(c.raw_cmd(&["MEMORY", "DOCTOR"]).starts_with(b"="));
}
