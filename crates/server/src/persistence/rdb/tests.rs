//! Round trips of whole keyspaces through the RDB writer and reader, the
//! item encodings, and the reader's refusal of damaged input.
use super::format::{Writer, CRC64};
use super::load::{load, load_aof_base, LoadError, LoadStats, Reader};
use super::save::{write_rdb, SaveOpts};
use crate::config::Config;
use crate::engine::hash::HashLimits;
use crate::engine::list::{End, Fill, List};
use crate::engine::zset::{Limits, ZSet};
use crate::engine::{Hash, Keyspace, Set, Str, Value};

const NOW: i64 = 1_700_000_000_000;

fn s(b: &[u8]) -> Value {
    Value::Str(Str::from_bytes(b))
}

fn list(items: &[Vec<u8>]) -> Value {
    let mut l = List::new();
    for it in items {
        l.push(End::Tail, it, Fill(-2));
    }
    Value::List(l)
}

fn set(ms: &[Vec<u8>]) -> Value {
    let mut st = Set::for_member(&ms[0]);
    for m in ms {
        st.insert(m, 512);
    }
    Value::Set(st)
}

fn zset(items: &[(Vec<u8>, f64)]) -> Value {
    let lim = Limits { entries: 128, value: 64 };
    let mut z = ZSet::default();
    for (m, sc) in items {
        z.set(m, *sc, lim);
    }
    Value::ZSet(Box::new(z))
}

fn hash(pairs: &[(Vec<u8>, Vec<u8>)]) -> Value {
    let mut h = Hash::default();
    for (f, v) in pairs {
        h.insert(f, v, HashLimits { entries: 128, value: 64 });
    }
    Value::Hash(h)
}

fn nums(n: i64, f: impl Fn(i64) -> String) -> Vec<Vec<u8>> {
    (0..n).map(|i| f(i).into_bytes()).collect()
}

/// A keyspace with every type in its small and large encodings.
fn sample() -> Keyspace {
    let mut ks = Keyspace::new(4);
    let db = &mut ks.dbs[0];
    let put = |db: &mut crate::engine::Db, k: &str, v: Value, at: Option<i64>| db.set(k.as_bytes(), v, at, false, NOW);
    put(db, "int", s(b"-42"), None);
    put(db, "bigint", s(b"9223372036854775807"), None);
    put(db, "emb", s(b"hello world"), Some(NOW + 60_000));
    put(db, "empty", s(b""), None);
    put(db, "zeros", s(b"007"), None);
    put(db, "long", s(&b"abcdefgh".repeat(50)), None);
    put(db, "binary", s(&(0..=255u8).collect::<Vec<_>>()), None);
    put(db, "list_small", list(&[b"a".to_vec(), b"17".to_vec(), b"-300000".to_vec(), vec![b'z'; 100]]), None);
    put(db, "list_big", list(&nums(5000, |i| format!("item-{i}"))), None);
    put(db, "set_ints", set(&[b"1".to_vec(), b"-70000".to_vec(), b"9223372036854775807".to_vec()]), None);
    put(db, "set_strs", set(&[b"x".to_vec(), b"y".to_vec(), b"12".to_vec()]), None);
    put(db, "set_big", set(&nums(2000, |i| i.to_string())), None);
    let items = [
        (b"a".to_vec(), 1.5),
        (b"b".to_vec(), f64::INFINITY),
        (b"c".to_vec(), f64::NEG_INFINITY),
        (b"d".to_vec(), -0.0),
        (b"e".to_vec(), 1e300),
        (b"f".to_vec(), -123456.0),
        (b"g".to_vec(), 0.1),
    ];
    put(db, "zset_small", zset(&items), Some(NOW + 5));
    let big: Vec<(Vec<u8>, f64)> = (0..500).map(|i| (format!("m{i}").into_bytes(), i as f64 / 3.0)).collect();
    put(db, "zset_big", zset(&big), None);
    put(db, "hash_small", hash(&[(b"f".to_vec(), b"v".to_vec()), (b"n".to_vec(), b"5".to_vec())]), None);
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..300).map(|i| (format!("f{i}").into_bytes(), vec![b'v'; i % 90])).collect();
    put(db, "hash_big", hash(&pairs), None);
    ks.dbs[3].set(b"other-db", s(b"three"), Some(NOW + 1_000_000), false, NOW);
    ks
}

fn round_trip(ks: &Keyspace, opts: SaveOpts) -> (Keyspace, LoadStats) {
    let bytes = write_rdb(ks, &[], Vec::new(), opts, 1234).unwrap();
    let mut out = Keyspace::new(ks.dbs.len());
    let stats = load(&mut out, &bytes[..], &Config::default(), NOW).unwrap();
    (out, stats)
}

fn assert_same(a: &Keyspace, b: &Keyspace) {
    for (i, (da, db)) in a.dbs.iter().zip(&b.dbs).enumerate() {
        assert_eq!(da.len(), db.len(), "db {i} size");
        for (k, e) in da.iter() {
            let key = String::from_utf8_lossy(k);
            let got = db.iter().find(|(k2, _)| *k2 == k).map(|(_, e)| e).unwrap_or_else(|| panic!("{key} missing"));
            assert_eq!(got.value, e.value, "{key}");
            assert_eq!(got.value.encoding(), e.value.encoding(), "{key} encoding");
            assert_eq!(db.expire_of(k), da.expire_of(k), "{key} expiry");
        }
    }
}

#[test]
fn every_type_and_encoding_round_trips() {
    let ks = sample();
    for opts in [
        SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 },
        SaveOpts { compress: false, checksum: false, repl: None, key_delay_us: 0 },
    ] {
        let (back, stats) = round_trip(&ks, opts);
        assert_same(&ks, &back);
        assert_eq!(stats, LoadStats { keys_loaded: 17, keys_expired: 0, functions: vec![], ..Default::default() });
    }
    let (back, _) = round_trip(&ks, SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 });
    let enc = |k: &[u8]| back.dbs[0].iter().find(|(k2, _)| *k2 == k).unwrap().1.value.encoding();
    assert_eq!(enc(b"set_ints"), "intset");
    assert_eq!(enc(b"set_big"), "hashtable");
    assert_eq!(enc(b"zset_small"), "listpack");
    assert_eq!(enc(b"zset_big"), "skiplist");
    assert_eq!(enc(b"hash_small"), "listpack");
    assert_eq!(enc(b"hash_big"), "hashtable");
    assert_eq!(enc(b"int"), "int");
    let mut back = back;
    let z = back.dbs[0].get_zset(b"zset_small", NOW).unwrap().unwrap();
    assert_eq!((z.score(b"g"), z.score(b"e")), (Some(0.1), Some(1e300)));
}

#[test]
fn expired_keys_are_skipped_and_counted() {
    let mut ks = Keyspace::new(2);
    ks.dbs[1].set(b"gone", s(b"x"), Some(NOW - 1), false, NOW - 10);
    ks.dbs[1].set(b"kept", s(b"y"), Some(NOW + 1), false, NOW - 10);
    let (back, stats) = round_trip(&ks, SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 });
    assert_eq!(stats, LoadStats { keys_loaded: 1, keys_expired: 1, functions: vec![], ..Default::default() });
    assert_eq!(back.dbs[1].expire_of(b"kept"), Some(NOW + 1));
}

#[test]
fn a_replica_keeps_expired_keys_for_its_primarys_del() {
    let mut ks = Keyspace::new(2);
    ks.dbs[1].set(b"gone", s(b"x"), Some(NOW - 1), false, NOW - 10);
    ks.dbs[1].set(b"kept", s(b"y"), Some(NOW + 1), false, NOW - 10);
    let opts = SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 };
    let bytes = write_rdb(&ks, &[], Vec::new(), opts, 1234).unwrap();
    let mut cfg = Config::default();
    cfg.set_replicaof(Some(("127.0.0.1", 6379)));
    let mut back = Keyspace::new(2);
    let stats = load(&mut back, &bytes[..], &cfg, NOW).unwrap();
    assert_eq!((stats.keys_loaded, stats.keys_expired), (2, 0));
    assert_eq!(back.dbs[1].expire_of(b"gone"), Some(NOW - 1));
}

#[test]
fn an_aof_base_keeps_expired_keys_on_a_primary() {
    let mut ks = Keyspace::new(2);
    ks.dbs[1].set(b"past", s(b"x"), Some(NOW - 1), false, NOW - 10);
    let opts = SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 };
    let bytes = write_rdb(&ks, &[], Vec::new(), opts, 1234).unwrap();
    let mut back = Keyspace::new(2);
    let stats = load_aof_base(&mut back, &bytes[..], &Config::default(), NOW).unwrap();
    assert_eq!((stats.keys_loaded, stats.keys_expired), (1, 0));
    assert_eq!(back.dbs[1].expire_of(b"past"), Some(NOW - 1));
}

#[test]
fn compression_shrinks_repetitive_strings() {
    let ks = sample();
    let packed =
        write_rdb(&ks, &[], Vec::new(), SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 }, 0)
            .unwrap();
    let plain =
        write_rdb(&ks, &[], Vec::new(), SaveOpts { compress: false, checksum: true, repl: None, key_delay_us: 0 }, 0)
            .unwrap();
    assert!(packed.len() < plain.len(), "{} vs {}", packed.len(), plain.len());
    assert!(packed.starts_with(b"REDIS0010"));
}

#[test]
fn length_encodings() {
    let cases: [(u64, usize); 8] = [
        (0, 1),
        (63, 1),
        (64, 2),
        (16383, 2),
        (16384, 5),
        (u32::MAX as u64, 5),
        (u32::MAX as u64 + 1, 9),
        (u64::MAX, 9),
    ];
    for (n, size) in cases {
        let mut w = Writer::new(Vec::new(), false);
        w.length(n).unwrap();
        let (_, buf) = w.finish();
        assert_eq!(buf.len(), size, "{n}");
        assert_eq!(Reader::new(&buf[..]).length().unwrap(), n);
    }
}

#[test]
fn string_encodings() {
    let cases: [(&[u8], usize); 8] = [
        (b"123", 2),
        (b"-128", 2),
        (b"-129", 3),
        (b"70000", 5),
        (b"012", 4),
        (b"+1", 3),
        (b"12345678901", 12),
        (b"2147483647", 5),
    ];
    for (text, size) in cases {
        let mut w = Writer::new(Vec::new(), true);
        w.string(text).unwrap();
        let (_, buf) = w.finish();
        assert_eq!(buf.len(), size, "{}", String::from_utf8_lossy(text));
        assert_eq!(Reader::new(&buf[..]).string().unwrap(), text);
    }
    let long = vec![b'a'; 1000];
    let mut w = Writer::new(Vec::new(), true);
    w.string(&long).unwrap();
    let (_, buf) = w.finish();
    assert_eq!(buf[0], 0xC3, "LZF encoded");
    assert!(buf.len() < 100);
    assert_eq!(Reader::new(&buf[..]).string().unwrap(), long);
}

#[test]
fn crc64_matches_redis() {
    // The check value Redis's crc64.c tests against.
    assert_eq!(CRC64.checksum(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
}

/// A minimal file around one hand-encoded key: `type`, key, value bytes.
fn file_with(rdb_type: u8, value: &[u8]) -> Vec<u8> {
    let mut v = b"REDIS0010".to_vec();
    v.extend_from_slice(&[254, 0, rdb_type, 1, b'k']);
    v.extend_from_slice(value);
    v.push(255);
    let crc = CRC64.checksum(&v);
    v.extend_from_slice(&crc.to_le_bytes());
    v
}

fn load_bytes(b: &[u8]) -> Result<Keyspace, LoadError> {
    let mut ks = Keyspace::new(16);
    load(&mut ks, b, &Config::default(), NOW).map(|_| ks)
}

#[test]
fn reads_listpack_hash_and_quicklist2() {
    // Listpack {f: v, n: 7}: 6-bit strings and a 7-bit integer.
    let lp = [19, 0, 0, 0, 4, 0, 0x81, b'f', 2, 0x81, b'v', 2, 0x81, b'n', 2, 7, 1, 0xFF];
    let mut lp = lp.to_vec();
    lp[0] = lp.len() as u8;
    let mut val = vec![lp.len() as u8];
    val.extend_from_slice(&lp);
    let mut ks = load_bytes(&file_with(16, &val)).unwrap();
    let h = ks.dbs[0].get_hash(b"k", NOW).unwrap().unwrap();
    assert_eq!((h.get(b"f"), h.get(b"n"), h.encoding()), (Some(&b"v"[..]), Some(&b"7"[..]), "listpack"));
    // Quicklist 2: one packed node (the listpack above) and one plain node.
    let mut q = vec![2, 2, lp.len() as u8];
    q.extend_from_slice(&lp);
    q.extend_from_slice(&[1, 3, b'b', b'i', b'g']);
    let mut ks = load_bytes(&file_with(18, &q)).unwrap();
    let l = ks.dbs[0].get_list(b"k", NOW).unwrap().unwrap();
    let items: Vec<Vec<u8>> = l.iter().map(|e| e.to_vec()).collect();
    assert_eq!(items, [&b"f"[..], b"v", b"n", b"7", b"big"].map(|x| x.to_vec()));
}

#[test]
fn damaged_files_are_refused_with_offsets() {
    let good = write_rdb(
        &sample(),
        &[],
        Vec::new(),
        SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 },
        0,
    )
    .unwrap();
    let mut flipped = good.clone();
    let at = good.len() / 2;
    flipped[at] ^= 0x01;
    let e = load_bytes(&flipped).err().expect("a flipped byte is caught");
    assert!(e.offset as usize >= at || e.msg.contains("checksum"), "{e}");
    let e = load_bytes(&good[..good.len() - 100]).err().expect("truncation is caught");
    assert!(e.msg.contains("unexpected end of file"), "{e}");
    assert!(e.offset as usize <= good.len() - 100);
    let e = load_bytes(&good[..good.len() - 3]).err().expect("short trailer is caught");
    assert!(e.msg.contains("unexpected end"), "{e}");
    let e = load_bytes(&file_with(99, b"")).err().unwrap();
    assert!(e.msg.contains("unknown RDB value type 99") && e.offset == 14, "{e}");
    // A stream with no nodes whose length runs into the EOF opcode.
    let e = load_bytes(&file_with(15, b"\x00")).err().unwrap();
    assert!(e.msg.contains("length") && e.offset == 16, "{e}");
    let e = load_bytes(b"RUBBISH!!").err().unwrap();
    assert!(e.msg.contains("signature"), "{e}");
    // A zero trailer means "written without checksum" and is accepted.
    let mut unchecked = good.clone();
    let n = unchecked.len();
    unchecked[n - 8..].fill(0);
    assert!(load_bytes(&unchecked).is_ok());
}

#[test]
fn duplicated_keys_are_refused() {
    let mut v = b"REDIS0010".to_vec();
    v.extend_from_slice(&[254, 0, 0, 1, b'k', 1, b'a', 0, 1, b'k', 1, b'b', 255]);
    let crc = CRC64.checksum(&v);
    v.extend_from_slice(&crc.to_le_bytes());
    let e = load_bytes(&v).err().expect("a key twice is corruption");
    assert!(e.msg.contains("duplicated key 'k' in DB 0"), "{e}");
}

#[test]
fn replication_position_round_trips_in_aux_fields() {
    let replid = *b"0123456789abcdef0123456789abcdef01234567";
    let repl = super::save::ReplAux { stream_db: 3, replid, offset: 987_654 };
    let opts = SaveOpts { compress: true, checksum: true, repl: Some(repl), key_delay_us: 0 };
    let (_, stats) = round_trip(&sample(), opts);
    assert_eq!(stats.repl, Some((String::from_utf8(replid.to_vec()).unwrap(), 987_654)));
    assert_eq!(stats.repl_stream_db, 3);
    let (_, plain) = round_trip(&sample(), SaveOpts { compress: true, checksum: true, repl: None, key_delay_us: 0 });
    assert_eq!(plain.repl, None);
}
