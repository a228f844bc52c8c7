//! Key specs and command introspection: COMMAND INFO (key specs, tips),
//! DOCS, GETKEYS, GETKEYSANDFLAGS and LIST FILTERBY, as raw RESP against
//! redis-server 7.0.15's bytes, and a compat sweep that starts a real
//! redis-server and compares INFO and DOCS of every command both servers
//! have, in RESP2 and RESP3.
mod common;

use common::*;

/// Redis's reply to `COMMAND INFO get` (RESP2): one index/range key spec.
const GET_INFO: &str = "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n";

fn raw(c: &mut Client, args: &[&str]) -> String {
    String::from_utf8(c.raw_cmd(args)).unwrap()
}

#[test]
fn info_key_specs_raw() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(raw(&mut c, &["COMMAND", "INFO", "get"]), GET_INFO);
    // RESP3: sets and maps instead of flat arrays.
    assert!(matches!(c.cmd(&["HELLO", "3"]), Frame::Map(_)));
    let r3 = raw(&mut c, &["COMMAND", "INFO", "GET"]);
    assert!(r3.starts_with("*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n"), "{r3}");
    assert!(r3.contains("~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n"), "{r3}");
    assert!(r3.ends_with("%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"), "{r3}");
}

#[test]
fn info_keynum_spec_and_unknown_names() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let r = raw(&mut c, &["COMMAND", "INFO", "zunionstore", "nosuchcommand"]);
    let keynum = "$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n";
    assert!(
        r.starts_with("*2\r\n*10\r\n$11\r\nzunionstore\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+movablekeys\r\n"),
        "{r}"
    );
    assert!(r.ends_with(&format!("{keynum}$-1\r\n")), "{r}");
    // Keyword begin search with notes (SET's RW note).
    let set = raw(&mut c, &["COMMAND", "INFO", "set"]);
    assert!(set.contains("$5\r\nnotes\r\n$48\r\nRW and ACCESS due to the optional `GET` argument\r\n"), "{set}");
    let geo = raw(&mut c, &["COMMAND", "INFO", "georadius"]);
    assert!(geo.contains("$4\r\ntype\r\n$7\r\nkeyword\r\n$4\r\nspec\r\n*4\r\n$7\r\nkeyword\r\n$5\r\nSTORE\r\n$9\r\nstartfrom\r\n:6\r\n"), "{geo}");
    // Tips are bulk strings.
    let keys = raw(&mut c, &["COMMAND", "INFO", "keys"]);
    assert!(
        keys.contains("*2\r\n$25\r\nrequest_policy:all_shards\r\n$29\r\nnondeterministic_output_order\r\n"),
        "{keys}"
    );
}

#[test]
fn getkeys_from_specs_and_finders() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let keys = |c: &mut Client, args: &[&str]| raw(c, &[&["COMMAND", "GETKEYS"], args].concat());
    assert_eq!(
        keys(&mut c, &["georadius", "k", "0", "0", "1", "km", "STORE", "dst"]),
        "*2\r\n$1\r\nk\r\n$3\r\ndst\r\n"
    );
    assert_eq!(keys(&mut c, &["migrate", "h", "p", "", "0", "5", "KEYS", "a", "b"]), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    assert_eq!(keys(&mut c, &["migrate", "h", "p", "k", "0", "5"]), "*1\r\n$1\r\nk\r\n");
    assert_eq!(keys(&mut c, &["sort", "s", "LIMIT", "0", "1", "STORE", "d"]), "*2\r\n$1\r\ns\r\n$1\r\nd\r\n");
    assert_eq!(keys(&mut c, &["zunionstore", "d", "2", "a", "b"]), "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n");
    // A numkeys that is no clean count falls back to atoi-like parsing.
    assert_eq!(keys(&mut c, &["zunion", "1x", "a"]), "*1\r\n$1\r\na\r\n");
    assert_eq!(keys(&mut c, &["blmpop", "0", "2", "a", "b", "left"]), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    assert_eq!(keys(&mut c, &["sintercard", "3", "a", "b"]), "-ERR Invalid arguments specified for command\r\n");
    assert_eq!(keys(&mut c, &["mset", "a", "1", "b", "2"]), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    assert_eq!(keys(&mut c, &["object", "encoding", "k"]), "*1\r\n$1\r\nk\r\n");
    // No keys found: an empty list for a command whose keys are optional.
    assert_eq!(keys(&mut c, &["eval", "return 1", "0"]), "*0\r\n");
    assert_eq!(keys(&mut c, &["ping", "x"]), "-ERR The command has no key arguments\r\n");
    assert_eq!(keys(&mut c, &["nosuch", "x"]), "-ERR Invalid command specified\r\n");
    assert_eq!(keys(&mut c, &["config|get", "x"]), "-ERR Invalid command specified\r\n");
    assert_eq!(keys(&mut c, &["get", "a", "b"]), "-ERR Invalid number of arguments specified for command\r\n");
}

#[test]
fn getkeysandflags() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let flags = |c: &mut Client, args: &[&str]| raw(c, &[&["COMMAND", "GETKEYSANDFLAGS"], args].concat());
    assert_eq!(flags(&mut c, &["set", "k", "v", "get"]), "*1\r\n*2\r\n$1\r\nk\r\n*3\r\n+RW\r\n+access\r\n+update\r\n");
    assert_eq!(flags(&mut c, &["set", "k", "v"]), "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+OW\r\n+update\r\n");
    assert_eq!(
        flags(&mut c, &["lmove", "a", "b", "left", "right"]),
        "*2\r\n*2\r\n$1\r\na\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n*2\r\n$1\r\nb\r\n*2\r\n+RW\r\n+insert\r\n"
    );
    assert_eq!(flags(&mut c, &["bitfield", "k", "get", "u8", "0"]), "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+RO\r\n+access\r\n");
}

fn names(f: Frame) -> Vec<String> {
    let Frame::Array(items) = f else { panic!("not an array: {f:?}") };
    let mut v: Vec<String> = items
        .into_iter()
        .map(|i| match i {
            Frame::Bulk(b) => String::from_utf8(b).unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    v.sort();
    v
}

#[test]
fn list_filterby() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let cfg = names(c.cmd(&["COMMAND", "LIST", "FILTERBY", "PATTERN", "CONFIG|*"]));
    assert_eq!(cfg, ["config|get", "config|help", "config|resetstat", "config|rewrite", "config|set"]);
    let all = names(c.cmd(&["COMMAND", "LIST"]));
    assert!(all.contains(&"config|get".to_string()) && all.contains(&"get".to_string()));
    let hll = names(c.cmd(&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "HyperLogLog"]));
    assert!(hll.iter().all(|n| n.starts_with("pf")), "{hll:?}");
    assert!(["pfadd", "pfcount", "pfmerge"].iter().all(|n| hll.contains(&n.to_string())), "{hll:?}");
    assert_eq!(c.cmd(&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcat"]), arr(vec![]));
    assert_eq!(c.cmd(&["COMMAND", "LIST", "FILTERBY", "MODULE", "m"]), arr(vec![]));
    assert_eq!(c.cmd(&["COMMAND", "LIST", "FILTERBY", "COLOR", "x"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["COMMAND", "LIST", "FILTERBY", "PATTERN"]), err("ERR syntax error"));
}

#[test]
fn docs_raw() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["HELLO", "3"]);
    assert_eq!(
        raw(&mut c, &["COMMAND", "DOCS", "getdel", "nosuch"]),
        "%1\r\n$6\r\ngetdel\r\n%5\r\n$7\r\nsummary\r\n$41\r\nGet the value of a key and delete the key\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n"
    );
}

/// Subcommands come in each server's own table order (Redis's is a hash
/// order that changes from run to run), so both sides are sorted.
fn sorted_subs(f: Frame) -> Frame {
    let sort = |mut v: Vec<Frame>| {
        v.sort_by_key(|f| format!("{f:?}"));
        v
    };
    match f {
        Frame::Array(mut items) if items.len() == 10 => {
            if let Frame::Array(subs) = items.pop().unwrap() {
                items.push(Frame::Array(sort(subs.into_iter().map(sorted_subs).collect())));
            } else {
                items.push(Frame::Set(vec![]));
            }
            Frame::Array(items)
        }
        other => other,
    }
}

/// The same for a docs map's `subcommands` entry (RESP3 map or RESP2 pairs).
fn sorted_doc_subs(f: Frame) -> Frame {
    match f {
        Frame::Map(pairs) => Frame::Map(
            pairs
                .into_iter()
                .map(|(k, v)| match (&k, v) {
                    (Frame::Bulk(name), Frame::Map(subs)) if name == b"subcommands" => {
                        let mut subs: Vec<_> = subs.into_iter().map(|(n, d)| (n, sorted_doc_subs(d))).collect();
                        subs.sort_by_key(|p| format!("{p:?}"));
                        (k, Frame::Map(subs))
                    }
                    (_, v) => (k, v),
                })
                .collect(),
        ),
        Frame::Array(items) => {
            let mut out = Vec::new();
            let mut it = items.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                let v = match (&k, v) {
                    (Frame::Bulk(name), Frame::Array(subs)) if name == b"subcommands" => {
                        let mut pairs = Vec::new();
                        let mut s = subs.into_iter();
                        while let (Some(n), Some(d)) = (s.next(), s.next()) {
                            pairs.push(arr(vec![n, sorted_doc_subs(d)]));
                        }
                        pairs.sort_by_key(|p| format!("{p:?}"));
                        Frame::Array(pairs)
                    }
                    (_, v) => v,
                };
                out.push(k);
                out.push(v);
            }
            Frame::Array(out)
        }
        other => other,
    }
}

fn first_of(f: Frame) -> Frame {
    match f {
        Frame::Array(mut v) if !v.is_empty() => v.swap_remove(0),
        Frame::Map(mut v) if !v.is_empty() => v.swap_remove(0).1,
        other => panic!("unexpected reply {other:?}"),
    }
}

fn docs_of(f: Frame) -> Frame {
    match f {
        Frame::Array(mut v) if v.len() == 2 => v.swap_remove(1),
        Frame::Map(mut v) if v.len() == 1 => v.swap_remove(0).1,
        other => panic!("unexpected docs reply {other:?}"),
    }
}

/// Commands whose COMMAND INFO differs from Redis 7.0.15 outside the key
/// specs and tips, in data the command group files own (their `spec!`
/// flags and categories, their subcommand lists). Their key specs and tips
/// are still compared; an entry that starts matching fails the test, so the
/// list only shrinks.
const SPEC_DIFFS: &[(&str, &str)] = &[("client", "7.0's subcommands not all there; 7.2's setinfo is")];

fn decode(bytes: &[u8]) -> Frame {
    resp::decode_frame(bytes).expect("valid RESP").expect("a whole reply").0
}

/// Tips and key specs (fields 8 and 9) of a COMMAND INFO entry.
fn tips_and_key_specs(f: &Frame) -> Vec<Frame> {
    match f {
        Frame::Array(items) if items.len() == 10 => items[7..9].to_vec(),
        other => panic!("not a command entry: {other:?}"),
    }
}

/// The docs map without its subcommands.
fn without_subs(f: Frame) -> Frame {
    match f {
        Frame::Map(pairs) => Frame::Map(pairs.into_iter().filter(|(k, _)| *k != bulk("subcommands")).collect()),
        Frame::Array(items) => {
            let at = items.iter().position(|i| *i == bulk("subcommands")).unwrap_or(items.len());
            Frame::Array(items[..at].to_vec())
        }
        other => other,
    }
}

/// COMMAND INFO and DOCS of every command both servers have, RESP2 and
/// RESP3: the same bytes, or (for containers, whose subcommands each
/// server lists in its own table order) the same replies with subcommands
/// sorted.
#[test]
fn info_and_docs_match_redis_for_every_command() {
    let redis = RedisServer::start();
    let srv = TestServer::start(&[]);
    let (mut r, mut v) = (Client::connect(redis.port), srv.client());
    let theirs = names(r.cmd(&["COMMAND", "LIST"]));
    let ours = names(v.cmd(&["COMMAND", "LIST"]));
    let common: Vec<&String> = ours.iter().filter(|n| theirs.contains(n)).collect();
    assert!(common.len() > 200, "only {} commands in common", common.len());
    let mut bad = Vec::new();
    for proto in ["2", "3"] {
        r.cmd(&["HELLO", proto]);
        v.cmd(&["HELLO", proto]);
        for name in &common {
            let known = SPEC_DIFFS.iter().any(|(n, _)| n == name);
            let (want, got) = (r.raw_cmd(&["COMMAND", "INFO", name]), v.raw_cmd(&["COMMAND", "INFO", name]));
            let (want, got) = (sorted_subs(first_of(decode(&want))), sorted_subs(first_of(decode(&got))));
            if known && want == got {
                bad.push(format!("{name} matches now: drop it from SPEC_DIFFS"));
            } else if known && tips_and_key_specs(&want) != tips_and_key_specs(&got) || !known && want != got {
                bad.push(format!("RESP{proto} INFO {name}:\n redis  {want:?}\n volley {got:?}"));
            }
            let want = sorted_doc_subs(docs_of(r.cmd(&["COMMAND", "DOCS", name])));
            let got = sorted_doc_subs(docs_of(v.cmd(&["COMMAND", "DOCS", name])));
            let same =
                if *name == "client" { without_subs(want.clone()) == without_subs(got.clone()) } else { want == got };
            if !same {
                bad.push(format!("RESP{proto} DOCS {name}:\n redis  {want:?}\n volley {got:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

/// Byte for byte, for the commands without subcommands (no order question).
#[test]
fn info_and_docs_bytes_match_redis() {
    let redis = RedisServer::start();
    let srv = TestServer::start(&[]);
    let (mut r, mut v) = (Client::connect(redis.port), srv.client());
    let theirs = names(r.cmd(&["COMMAND", "LIST"]));
    let ours = names(v.cmd(&["COMMAND", "LIST"]));
    let plain: Vec<&String> = ours
        .iter()
        .filter(|n| theirs.contains(n) && !n.contains('|') && !ours.iter().any(|o| o.starts_with(&format!("{n}|"))))
        .filter(|n| !SPEC_DIFFS.iter().any(|(k, _)| k == n))
        .collect();
    assert!(plain.len() > 150, "only {} plain commands", plain.len());
    for proto in ["2", "3"] {
        r.cmd(&["HELLO", proto]);
        v.cmd(&["HELLO", proto]);
        for name in &plain {
            for sub in ["INFO", "DOCS"] {
                let want = String::from_utf8(r.raw_cmd(&["COMMAND", sub, name])).unwrap();
                let got = String::from_utf8(v.raw_cmd(&["COMMAND", sub, name])).unwrap();
                assert_eq!(got, want, "RESP{proto} COMMAND {sub} {name}");
            }
        }
    }
}
