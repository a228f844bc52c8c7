//! Streams through the RDB writer and reader: round trips (several nodes,
//! tombstones, groups with PELs and consumers, empty streams), payloads
//! written by redis-server 7.0.15 decoded and re-encoded to the same bytes,
//! the older STREAM_LISTPACKS type, and damaged input refused without a
//! panic.
use super::format::{Writer, TYPE_STREAM_LISTPACKS};
use super::packed::LpBuilder;
use super::reader::{LoadError, Reader};
use super::stream::*;
use crate::config::Config;
use crate::engine::stream::group::ENTRIES_READ_UNKNOWN;
use crate::engine::stream::{Group, Stream, StreamId};
use crate::engine::stream::{IdSpec, NodeLimits, Trim};
use crate::engine::{Keyspace, Value};
use crate::persistence::rdb::dump::{dump_value, restore_value, DumpError};
use crate::persistence::rdb::format::TYPE_STREAM_LISTPACKS_2;
use crate::persistence::rdb::load::load;
use crate::persistence::rdb::save::{write_rdb, SaveOpts};

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

fn add(s: &mut Stream, at: StreamId, pairs: &[&[u8]], limits: NodeLimits) {
    s.add(IdSpec::Exact(at), pairs, 0, limits).expect("ID above the last");
}

/// A stream with several nodes, entries with and without the master
/// fields, integers, tombstones (XDEL and a trim) and two groups.
fn sample() -> Stream {
    let lim = NodeLimits { max_bytes: 4096, max_entries: 4 };
    let mut s = Stream::new();
    for i in 0..30u64 {
        let v = format!("value-{i}");
        let n = (i as i64 * 1_000_003 - 7_000_000).to_string();
        match i % 5 {
            0 => add(&mut s, id(1000 + i / 3, i), &[b"other", v.as_bytes()], lim),
            4 => add(&mut s, id(1000 + i / 3, i), &[b"f", b"", b"n", b"9223372036854775807"], lim),
            _ => add(&mut s, id(1000 + i / 3, i), &[b"f", v.as_bytes(), b"n", n.as_bytes()], lim),
        }
    }
    s.delete(&[id(1000, 1), id(1003, 9), id(1006, 20), id(1006, 18)]);
    s.trim(Trim::MinId(id(1001, 3)), false, 0);
    let mut g = Group::new(id(1005, 15), 13);
    let (alice, _) = g.consumer_or_create(b"alice", 111);
    let (bob, _) = g.consumer_or_create(b"bob", 222);
    g.consumer_or_create(b"carol", 333);
    g.deliver(id(1001, 4), &alice, 1_700_000_000_000);
    g.deliver(id(1003, 9), &bob, 1_700_000_000_001); // deleted since: still pending
    g.deliver(id(1005, 15), &alice, 1_700_000_000_002);
    g.pel.get_mut(&id(1005, 15)).unwrap().delivery_count = 9;
    s.groups.insert(b"g1".to_vec().into_boxed_slice(), g);
    s.groups.insert(b"12".to_vec().into_boxed_slice(), Group::new(StreamId::MIN, ENTRIES_READ_UNKNOWN));
    s
}

fn body(s: &Stream, compress: bool) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), compress);
    write_stream(&mut w, s).unwrap();
    w.finish().1
}

fn read_body(b: &[u8], t: u8) -> Result<Stream, LoadError> {
    read_stream(&mut Reader::new(b), t)
}

/// Everything a walk of the stream can see, both ways, must agree.
fn check_walks(s: &Stream) {
    let fwd: Vec<StreamId> = s.range(StreamId::MIN, StreamId::MAX, false).map(|e| e.id).collect();
    let mut rev: Vec<StreamId> = s.range(StreamId::MIN, StreamId::MAX, true).map(|e| e.id).collect();
    rev.reverse();
    assert_eq!(fwd, rev);
    assert_eq!(fwd.len() as u64, s.len());
    assert!(fwd.windows(2).all(|w| w[0] < w[1]));
    for e in s.range(StreamId::MIN, StreamId::MAX, false) {
        assert!(e.pairs().count() > 0);
    }
}

#[test]
fn streams_round_trip_with_nodes_tombstones_and_groups() {
    let s = sample();
    assert!(s.node_count() >= 6, "several nodes");
    assert!(s.nodes().any(|(_, n)| n.deleted() > 0), "tombstones");
    for compress in [false, true] {
        let back = read_body(&body(&s, compress), TYPE_STREAM_LISTPACKS_2).unwrap();
        assert_eq!(back, s);
        check_walks(&back);
        let g = &back.groups[&b"g1"[..]];
        assert_eq!(g.pel[&id(1003, 9)].consumer.as_ref(), b"bob");
        assert_eq!(g.consumers[&b"alice"[..]].pel.len(), 2);
        assert_eq!(g.consumers[&b"carol"[..]].seen_time, 333);
        // The re-written bytes are the same: nothing is lost or reordered.
        assert_eq!(body(&back, compress), body(&s, compress));
    }
}

#[test]
fn empty_streams_keep_their_ids_and_groups() {
    let lim = NodeLimits { max_bytes: 4096, max_entries: 100 };
    let mut s = Stream::new();
    add(&mut s, id(5, 5), &[b"a", b"b"], lim);
    s.delete(&[id(5, 5)]);
    assert!(s.is_empty() && s.node_count() == 0);
    let mut g = Group::new(id(5, 5), 1);
    g.consumer_or_create(b"idle", 42);
    s.groups.insert(b"eg".to_vec().into_boxed_slice(), g);
    let back = read_body(&body(&s, true), TYPE_STREAM_LISTPACKS_2).unwrap();
    assert_eq!(back, s);
    assert_eq!((back.last_id, back.max_deleted, back.entries_added), (id(5, 5), id(5, 5), 1));
    let bare = read_body(&body(&Stream::new(), true), TYPE_STREAM_LISTPACKS_2).unwrap();
    assert_eq!(bare, Stream::new());
}

#[test]
fn streams_round_trip_through_files_and_dump_payloads() {
    let mut ks = Keyspace::new(2);
    ks.dbs[1].set(b"st", Value::Stream(Box::new(sample())), None, false, 0);
    let opts = SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 };
    let file = write_rdb(&ks, &[], Vec::new(), opts, 0).unwrap();
    let mut back = Keyspace::new(2);
    load(&mut back, file.as_slice(), &Config::default(), 0).unwrap();
    let Some(e) = back.dbs[1].get(b"st", 0) else { panic!("stream loaded") };
    assert_eq!(e.value, Value::Stream(Box::new(sample())));
    let v = Value::Stream(Box::new(sample()));
    assert_eq!(restore_value(&dump_value(&v, true), &Config::default()), Ok(v));
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// DUMP payloads from redis-server 7.0.15 (`stream-node-max-entries 4`):
/// `s` has two nodes, XDEL tombstones, integers, a long LZF-compressed
/// value, groups `g1` (PEL of three, one entry XCLAIMed with TIME and
/// RETRYCOUNT, an idle consumer) and `g2`; `e` is empty (XADD MAXLEN 0)
/// with a group; `plain` is one node of entries with and without the
/// master fields. `_RAW` are the same keys dumped with `rdbcompression no`
/// (Volley's LZF output differs from Redis's, so bytes are compared
/// uncompressed).
const REDIS_S: &str = "13021000000000000000010000000000000001405b5b0000001f00030101010201816602816e020001020100010001817602f13930030501030100010101817702dff902050100010101dfff020101856f74686572068178020601020101010401f4ffffffffffffff7f0980010501ff1000000000000000030000000000000000c34049406912690000001900020101010201816602816e02002009000020010bab6c6f6e672d76616c75652de0170a052c0101050103203408010181610281620205600b600f00672051020601ff050400010103010702026731020581ffffffffffffffff03000000000000000100000000000000010068e5cf8b01000007000000000000000200000000000000004d62a71da201000001000000000000000200000000000000055e62a71da2010000010305616c6963654d62a71da2010000010000000000000002000000000000000003626f627862a71da2010000020000000000000001000000000000000100000000000000020000000000000005056361726f6c6b62a71da201000000026732040081ffffffffffffffff000104646176658562a71da2010000000a00dc6fad877d1993b2";
const REDIS_E: &str = "1300000505000000000101026567050581ffffffffffffffff00000a004703fdeb064c5c40";
const REDIS_PLAIN: &str = "13011000000000000000010000000000000000c3343a113a0000001800030100010101816102000102200a400c00046009000120050004200f40170002402009030181620204010801ff0301020100000003000a00799f6d931a995472";

const REDIS_S_RAW: &str = "13021000000000000000010000000000000001405b5b0000001f00030101010201816602816e020001020100010001817602f13930030501030100010101817702dff902050100010101dfff020101856f74686572068178020601020101010401f4ffffffffffffff7f0980010501ff10000000000000000300000000000000004069690000001900020101010201816602816e020001020100010001ab6c6f6e672d76616c75652d6c6f6e672d76616c75652d6c6f6e672d76616c75652d6c6f6e672d76616c75652c010105010301000101018161028162020501000101010001010181670200010601ff050400010103010702026731020581ffffffffffffffff03000000000000000100000000000000010068e5cf8b01000007000000000000000200000000000000004d62a71da201000001000000000000000200000000000000055e62a71da2010000010305616c6963654d62a71da2010000010000000000000002000000000000000003626f627862a71da2010000020000000000000001000000000000000100000000000000020000000000000005056361726f6c6b62a71da201000000026732040081ffffffffffffffff000104646176658562a71da2010000000a003bb4b5f44be3f724";
const REDIS_PLAIN_RAW: &str = "130110000000000000000100000000000000003a3a0000001800030100010101816102000102010001000101010401020100010101020104010001000102010201816102030181620204010801ff0301020100000003000a003ec0d3c06436c93b";

#[test]
fn redis_payloads_decode_and_encode_to_the_same_bytes() {
    let cfg = Config::default();
    let pairs = [(REDIS_S, REDIS_S_RAW), (REDIS_E, REDIS_E), (REDIS_PLAIN, REDIS_PLAIN_RAW)];
    for (compressed, raw) in pairs.map(|(c, r)| (unhex(c), unhex(r))) {
        let v = restore_value(&compressed, &cfg).expect("Redis's payload restores");
        let Value::Stream(s) = &v else { panic!("a stream") };
        check_walks(s);
        assert_eq!(restore_value(&raw, &cfg), Ok(v.clone()));
        assert_eq!(dump_value(&v, false), raw);
    }
    let Value::Stream(s) = restore_value(&unhex(REDIS_S), &cfg).unwrap() else { unreachable!() };
    let ids: Vec<_> = s.range(StreamId::MIN, StreamId::MAX, false).map(|e| e.id.to_string()).collect();
    assert_eq!(ids, ["1-1", "2-0", "2-5", "3-0", "4-0"]);
    assert_eq!((s.len(), s.last_id, s.first_id, s.max_deleted, s.entries_added), (5, id(4, 0), id(1, 1), id(3, 1), 7));
    let g1 = &s.groups[&b"g1"[..]];
    assert_eq!((g1.last_id, g1.entries_read), (id(2, 5), ENTRIES_READ_UNKNOWN));
    let claimed = &g1.pel[&id(1, 1)];
    assert_eq!(
        (claimed.consumer.as_ref(), claimed.delivery_time, claimed.delivery_count),
        (&b"bob"[..], 1_700_000_000_000, 7)
    );
    assert_eq!(
        g1.consumers.keys().map(|k| k.to_vec()).collect::<Vec<_>>(),
        [b"alice".to_vec(), b"bob".to_vec(), b"carol".to_vec()]
    );
    let e = s.get(id(2, 5)).unwrap();
    let pairs: Vec<_> = e.pairs().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
    assert_eq!(pairs, [(b"f".to_vec(), b"9223372036854775807".to_vec()), (b"n".to_vec(), b"".to_vec())]);
}

/// The body of `s` as Redis < 7.0 wrote it (STREAM_LISTPACKS): no first
/// ID, max deleted ID, entries added or groups' entries read.
fn body_v1(s: &Stream) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), false);
    w.length(s.node_count() as u64).unwrap();
    for (&master, node) in s.nodes() {
        w.string(&master.to_be_bytes()).unwrap();
        w.string(&node_listpack(master, node)).unwrap();
    }
    w.length(s.len()).unwrap();
    write_id(&mut w, s.last_id).unwrap();
    w.length(s.groups.len() as u64).unwrap();
    for (name, g) in &s.groups {
        w.string(name).unwrap();
        write_id(&mut w, g.last_id).unwrap();
        write_pels(&mut w, g).unwrap();
    }
    w.finish().1
}

#[test]
fn the_older_stream_type_loads_with_counters_estimated() {
    let mut s = sample();
    let back = read_body(&body_v1(&s), TYPE_STREAM_LISTPACKS).unwrap();
    check_walks(&back);
    assert_eq!(back.entries_added, s.len());
    assert_eq!(back.max_deleted, StreamId::MIN);
    assert_eq!(back.first_id, s.first_live().unwrap());
    // Entries read is estimated as Redis does: unknown inside the stream,
    // none read before its first entry.
    assert_eq!(back.groups[&b"g1"[..]].entries_read, ENTRIES_READ_UNKNOWN);
    assert_eq!(back.groups[&b"12"[..]].entries_read, 0);
    s.entries_added = back.entries_added;
    s.max_deleted = back.max_deleted;
    s.first_id = back.first_id;
    for (name, g) in s.groups.iter_mut() {
        g.entries_read = back.groups[name].entries_read;
    }
    assert_eq!(back, s);
}

#[test]
fn truncated_and_damaged_bodies_never_panic() {
    let good = body(&sample(), false);
    for n in 0..good.len() {
        assert!(read_body(&good[..n], TYPE_STREAM_LISTPACKS_2).is_err(), "truncated at {n}");
    }
    for i in 0..good.len() {
        for bit in [0x01, 0x10, 0x80] {
            let mut bad = good.clone();
            bad[i] ^= bit;
            if let Ok(s) = read_body(&bad, TYPE_STREAM_LISTPACKS_2) {
                check_walks(&s);
            }
        }
    }
}

/// A node listpack from raw elements (integers as decimal strings).
fn lp_of(items: &[&[u8]]) -> Vec<u8> {
    let mut lp = LpBuilder::default();
    for it in items {
        lp.push_str(it);
    }
    lp.finish()
}

/// A one-node stream body whose node is `items`, with `len` entries and
/// master ID 1-5 and last ID 9-9, no groups.
fn one_node(items: &[&[u8]], len: u64) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), false);
    w.length(1).unwrap();
    w.string(&id(1, 5).to_be_bytes()).unwrap();
    w.string(&lp_of(items)).unwrap();
    w.length(len).unwrap();
    for v in [9, 9, 1, 0, 0, 0, 1, 0] {
        w.length(v).unwrap();
    }
    w.finish().1
}

#[test]
fn malformed_nodes_are_refused() {
    // count deleted nfields f 0 | flags ms seq v lp-count
    let good: &[&[u8]] = &[b"1", b"0", b"1", b"f", b"0", b"2", b"0", b"0", b"v", b"4"];
    assert!(read_body(&one_node(good, 1), TYPE_STREAM_LISTPACKS_2).is_ok());
    let cases: &[(&[&[u8]], u64, &str)] = &[
        (good, 2, "length differs from the nodes'"),
        (&[b"2", b"0", b"1", b"f", b"0", b"2", b"0", b"0", b"v", b"4"], 1, "live count"),
        (&[b"1", b"0", b"1", b"f", b"1", b"2", b"0", b"0", b"v", b"4"], 1, "terminator"),
        (&[b"1", b"0", b"1", b"f", b"0", b"2", b"0", b"0", b"v", b"5"], 1, "lp-count"),
        (&[b"1", b"0", b"1", b"f", b"0", b"2", b"0", b"0", b"v"], 1, "cut entry"),
        (&[b"1", b"0", b"1", b"f", b"0", b"6", b"0", b"0", b"v", b"4"], 1, "unknown flag"),
        (&[b"1", b"0", b"1", b"f", b"0", b"2", b"-1", b"0", b"v", b"4"], 1, "ms delta below master"),
        (&[b"1", b"0", b"1", b"f", b"0", b"2", b"0", b"-1", b"v", b"4"], 1, "seq below master"),
        (&[b"1", b"0", b"1", b"f", b"0", b"2", b"20", b"0", b"v", b"4"], 1, "entry above last ID"),
        (&[b"1", b"0", b"1", b"f", b"0", b"0", b"0", b"0", b"0", b"4"], 1, "entry without fields"),
        (&[b"1", b"0", b"99", b"f", b"0"], 1, "master field count"),
        (&[b"0", b"0", b"1", b"f", b"0"], 0, "node without entries"),
        (&[b"x", b"0", b"1", b"f", b"0", b"2", b"0", b"0", b"v", b"4"], 1, "count not an integer"),
        (&[b"2", b"0", b"1", b"f", b"0", b"2", b"0", b"1", b"v", b"4", b"2", b"0", b"1", b"w", b"4"], 2, "repeated ID"),
    ];
    for (items, len, what) in cases {
        assert!(read_body(&one_node(items, *len), TYPE_STREAM_LISTPACKS_2).is_err(), "{what}");
    }
}

#[test]
fn inconsistent_groups_and_node_keys_are_refused() {
    let mut s = sample();
    let g = s.groups.get_mut(&b"g1"[..]).unwrap();
    // A PEL entry no consumer owns.
    g.consumers.get_mut(&b"bob"[..]).unwrap().pel.clear();
    assert!(read_body(&body(&s, false), TYPE_STREAM_LISTPACKS_2).is_err());
    // A consumer's PEL naming an ID its group does not have pending.
    let mut s = sample();
    let g = s.groups.get_mut(&b"g1"[..]).unwrap();
    g.consumers.get_mut(&b"carol"[..]).unwrap().pel.insert(id(1, 1));
    assert!(read_body(&body(&s, false), TYPE_STREAM_LISTPACKS_2).is_err());
    // One pending entry owned by two consumers.
    let mut s = sample();
    let g = s.groups.get_mut(&b"g1"[..]).unwrap();
    g.consumers.get_mut(&b"carol"[..]).unwrap().pel.insert(id(1001, 4));
    assert!(read_body(&body(&s, false), TYPE_STREAM_LISTPACKS_2).is_err());
    // A node key that is not 16 bytes.
    let good = body(&sample(), false);
    let mut bad = good.clone();
    assert_eq!(bad[1], 16);
    bad[1] = 15;
    assert!(read_body(&bad, TYPE_STREAM_LISTPACKS_2).is_err());
    // The same DUMP footer check applies to streams.
    let v = Value::Stream(Box::new(sample()));
    let mut p = dump_value(&v, true);
    let n = p.len();
    p[n - 12] ^= 1;
    assert_eq!(restore_value(&p, &Config::default()), Err(DumpError::Footer));
}
