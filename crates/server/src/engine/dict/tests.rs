//! Tests of the keyspace table: a model check, incremental growth and
//! shrink, where entries live mid-rehash, the SCAN guarantee across resizes,
//! sampling, and hash flooding.
use super::*;
use std::collections::{HashMap, HashSet};
use std::hash::Hasher;

fn key(i: u64) -> Vec<u8> {
    format!("key:{i}").into_bytes()
}

fn assert_matches_model<S: BuildHasher>(d: &Dict<u64, S>, model: &HashMap<Vec<u8>, u64>) {
    assert_eq!(d.len(), model.len());
    assert_eq!(d.iter().count(), model.len());
    for (k, v) in d.iter() {
        assert_eq!(model.get(k), Some(v));
    }
    for (k, v) in model {
        assert_eq!(d.get(k), Some(v));
    }
}

fn bump(v: Option<&mut u64>) -> Option<u64> {
    v.map(|v| {
        *v += 1;
        *v
    })
}

/// Runs `ops` random operations over `keys` keys against a HashMap model.
/// Alternates insert-heavy and delete-heavy phases so the table both grows
/// and (through `try_shrink`) shrinks. Returns (ops while rehashing, shrinks).
fn run_model<S: BuildHasher>(d: &mut Dict<u64, S>, ops: u64, keys: u64) -> (u64, u64) {
    let mut model = HashMap::new();
    let mut rng = 0x5EED_u64;
    let (mut rehashing_ops, mut shrinks) = (0, 0);
    for op in 0..ops {
        let r = next_random(&mut rng);
        let k = key((r >> 32) % keys);
        // Four phases: grow, thin out to a few percent full, grow, thin.
        let grow_phase = matches!(op * 4 / ops, 0 | 2);
        let (ins, del) = if grow_phase { (60, 20) } else { (2, 80) };
        match r % 100 {
            x if x < ins => assert_eq!(d.insert(&k, op), model.insert(k, op)),
            x if x < ins + del => assert_eq!(d.remove(&k), model.remove(&k)),
            x if x < ins + del + 10 => assert_eq!(bump(d.get_mut(&k)), bump(model.get_mut(&k))),
            _ => assert_eq!(
                d.get_key_value(&k).map(|(k, v)| (k.to_vec(), *v)),
                model.get_key_value(&k).map(|(k, v)| (k.clone(), *v))
            ),
        }
        if op % 64 == 0 {
            let before = d.bucket_count();
            d.try_shrink();
            shrinks += u64::from(d.bucket_count() > before && d.tables[1].len() < before);
        }
        rehashing_ops += u64::from(d.is_rehashing());
        assert_eq!(d.len(), model.len());
        if op % (ops / 10) == 0 {
            assert_matches_model(d, &model);
        }
    }
    assert_matches_model(d, &model);
    (rehashing_ops, shrinks)
}

#[test]
fn random_ops_match_hashmap_model() {
    let (rehashing_ops, shrinks) = run_model(&mut Dict::new(), 200_000, 10_000);
    assert!(rehashing_ops > 1_000, "only {rehashing_ops} ops ran mid-rehash");
    assert!(shrinks > 0, "the table never shrank");
}

/// Sends every key to the same bucket, to exercise long chains.
#[derive(Clone)]
struct Collide;
struct ZeroHasher;
impl Hasher for ZeroHasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, _: &[u8]) {}
}
impl BuildHasher for Collide {
    type Hasher = ZeroHasher;
    fn build_hasher(&self) -> ZeroHasher {
        ZeroHasher
    }
}

#[test]
fn chains_unlink_anywhere_with_colliding_hasher() {
    run_model(&mut Dict::with_hasher(Collide), 16_000, 64);
}

#[test]
fn growth_is_incremental() {
    let mut d = Dict::new();
    let (mut max_moved, mut rehashing_inserts) = (0, 0);
    for i in 0..=1u64 << 17 {
        let before = d.moved;
        assert_eq!(d.insert(&key(i), i), None);
        max_moved = max_moved.max(d.moved - before);
        rehashing_inserts += u64::from(d.is_rehashing());
    }
    // One bucket per write, and chains at load factor 1 are short.
    assert!(max_moved <= 32, "one insert moved {max_moved} entries");
    assert!(rehashing_inserts > 1 << 15, "growth was not spread out");
    // Key 2^17 + 1 just started growth to 2^18 buckets; it is not done.
    assert!(d.is_rehashing(), "growth finished at once");
    while d.rehash_step(100) {}
    assert!(!d.is_rehashing());
    assert_eq!(d.bucket_count(), 1 << 18);
    assert!((0..=1u64 << 17).all(|i| d.get(&key(i)) == Some(&i)));
}

#[test]
fn reserve_sizes_an_empty_table_so_a_load_never_rehashes() {
    let mut d = Dict::new();
    d.reserve(100_000);
    assert_eq!(d.bucket_count(), 1 << 17);
    for i in 0..100_000u64 {
        assert_eq!(d.insert(&key(i), i), None);
        assert!(!d.is_rehashing(), "insert {i} started a rehash");
    }
    assert_eq!(d.bucket_count(), 1 << 17);
    // A table with entries keeps growing incrementally instead.
    d.reserve(1 << 20);
    assert_eq!(d.bucket_count(), 1 << 17);
    assert!((0..100_000u64).all(|i| d.get(&key(i)) == Some(&i)));
}

#[test]
fn bucket_arrays_on_their_own_mapping_are_counted() {
    // Other tests' tables come and go meanwhile: check with a margin
    // (16 MiB) far over a small test table and far under this one (64 MiB).
    let before = mapped_bytes();
    let mut d: Dict<u64> = Dict::new();
    d.reserve(1 << 23);
    assert_eq!(d.bucket_count(), 1 << 23);
    assert!(mapped_bytes() >= before + (48 << 20), "{} then {}", before, mapped_bytes());
    drop(d);
    assert!(mapped_bytes() + (48 << 20) <= before + (64 << 20), "{} then {}", before, mapped_bytes());
}

#[test]
fn shrink_waits_for_try_shrink_and_is_incremental() {
    let mut d = Dict::new();
    (0..10_000).for_each(|i| _ = d.insert(&key(i), i));
    while d.rehash_step(1000) {}
    (100..10_000).for_each(|i| _ = d.remove(&key(i)));
    while d.rehash_step(1000) {}
    assert_eq!(d.bucket_count(), 16_384, "removes must not shrink");
    d.try_shrink();
    assert!(d.is_rehashing());
    let before = d.moved;
    assert!(d.rehash_step(1));
    assert!(d.moved - before <= 32);
    while d.rehash_step(10) {}
    assert_eq!(d.bucket_count(), 256);
    assert!((0..100).all(|i| d.get(&key(i)) == Some(&i)));
    d.try_shrink();
    assert!(!d.is_rehashing(), "100 keys in 256 buckets is not sparse");
}

/// Checks where entries live mid-rehash: a key whose old bucket is not
/// migrated yet is in the old table, every other key in the new one.
/// Returns the highest new-table bucket in use.
fn assert_placement<V>(d: &Dict<V>) -> usize {
    let (n0, idx) = (d.tables[0].len(), d.rehash_idx);
    let mut top = 0;
    for (t, table) in d.tables.iter().enumerate() {
        for (i, bucket) in table.iter().enumerate() {
            for e in chain_iter(bucket) {
                let home = bucket_index(d.hasher.hash_one(&*e.key), n0);
                assert_eq!(t == 1, home < idx, "key in table {t}, old bucket {home}, migrated below {idx}");
                top = if t == 1 { top.max(i) } else { top };
            }
        }
    }
    top
}

#[test]
fn new_table_is_written_only_behind_the_migration_frontier() {
    let mut d = Dict::new();
    let mut i = 0;
    while !(d.is_rehashing() && d.len() > 4000) {
        d.insert(&key(i), i);
        i += 1;
    }
    let n0 = d.tables[0].len();
    let mut checked = 0;
    while d.is_rehashing() {
        d.insert(&key(i), i);
        i += 1;
        let top = assert_placement(&d);
        if d.is_rehashing() {
            // Growth splits old bucket b into new buckets b and b + n0.
            assert!(top < n0 + d.rehash_idx, "new bucket {top} written ahead of the frontier {}", d.rehash_idx);
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} inserts while rehashing");
    assert!((0..i).all(|k| d.get(&key(k)) == Some(&k)));
    // And while shrinking, with keys coming and going.
    let mut model: HashMap<Vec<u8>, u64> = (0..i).step_by(16).map(|k| (key(k), k)).collect();
    (0..i).filter(|k| k % 16 != 0).for_each(|k| _ = d.remove(&key(k)));
    d.try_shrink();
    assert!(d.is_rehashing());
    while d.is_rehashing() {
        d.insert(&key(i), i);
        model.insert(key(i), i);
        let gone = key(i - 7);
        assert_eq!(d.remove(&gone), model.remove(&gone));
        assert_placement(&d);
        i += 1;
    }
    assert_matches_model(&d, &model);
}

#[test]
fn big_tables_give_drained_pages_back_during_the_rehash() {
    // Past 2 MiB a bucket array is its own mapping, and the old one hands
    // back its drained front while growth is still under way.
    let mut d = Dict::new();
    let mut i = 0;
    while !(d.is_rehashing() && d.tables[0].len() >= 1 << 19) {
        d.insert(&key(i), i);
        i += 1;
    }
    let n0 = d.tables[0].len();
    while d.is_rehashing() && d.rehash_idx < n0 / 2 {
        d.insert(&key(i), i);
        i += 1;
    }
    assert!(d.is_rehashing(), "growth finished before half the old table drained");
    let released = d.tables[0].released;
    assert!(released >= n0 * 8 / 2 - (256 << 10), "released {released} of {} bytes", n0 * 8);
    // Released buckets read as empty, and every key is still found.
    assert!(d.tables[0][..released / 8].iter().all(Option::is_none));
    assert!((0..i).all(|k| d.get(&key(k)) == Some(&k)));
    let mut seen = 0;
    let mut cursor = 0;
    loop {
        cursor = d.scan(cursor, |_, _| seen += 1);
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(seen, i as usize);
    while d.rehash_step(1000) {}
    assert_eq!(d.len(), i as usize);
}

fn scan_counts<V>(d: &Dict<V>) -> HashMap<Vec<u8>, usize> {
    let mut seen = HashMap::new();
    let mut cursor = 0;
    loop {
        cursor = d.scan(cursor, |k, _| *seen.entry(k.to_vec()).or_insert(0) += 1);
        if cursor == 0 {
            return seen;
        }
    }
}

#[test]
fn full_scan_returns_every_key_once() {
    let mut d = Dict::new();
    assert_eq!(d.scan(0, |_, _| panic!("empty dict")), 0);
    (0..5_000).for_each(|i| _ = d.insert(&key(i), ()));
    while d.rehash_step(1000) {}
    let seen = scan_counts(&d);
    assert_eq!(seen.len(), 5_000);
    assert!(seen.values().all(|&n| n == 1));
    // Also with the table frozen mid-growth.
    let mut i = 5_000;
    while !d.is_rehashing() {
        d.insert(&key(i), ());
        i += 1;
    }
    let seen = scan_counts(&d);
    assert_eq!(seen.len(), d.len());
    assert!(seen.values().all(|&n| n == 1));
}

#[test]
fn scan_survives_growth_between_calls() {
    let mut d = Dict::new();
    (0..1_000).for_each(|i| _ = d.insert(&key(i), ()));
    let (start_buckets, mut next, mut calls, mut mid_rehash) = (d.bucket_count(), 1_000, 0, 0);
    let mut seen = HashSet::new();
    let mut cursor = 0;
    loop {
        mid_rehash += u64::from(d.is_rehashing());
        cursor = d.scan(cursor, |k, _| _ = seen.insert(k.to_vec()));
        if cursor == 0 {
            break;
        }
        // Grow for a while (only a while, or the scan could never finish).
        if calls < 300 {
            (next..next + 40).for_each(|i| _ = d.insert(&key(i), ()));
            next += 40;
        }
        calls += 1;
    }
    assert!(
        d.bucket_count() >= 8 * start_buckets,
        "table did not grow enough: {start_buckets} -> {}",
        d.bucket_count()
    );
    assert!(mid_rehash > 0);
    assert!((0..1_000).all(|i| seen.contains(&key(i))));
}

#[test]
fn scan_survives_shrink_between_calls() {
    let mut d = Dict::new();
    (0..20_000).for_each(|i| _ = d.insert(&key(i), ()));
    while d.rehash_step(1000) {}
    let (start_buckets, mut deleted, mut mid_rehash) = (d.bucket_count(), 0, 0);
    let mut seen = HashSet::new();
    let mut cursor = 0;
    loop {
        mid_rehash += u64::from(d.is_rehashing());
        cursor = d.scan(cursor, |k, _| _ = seen.insert(k.to_vec()));
        if cursor == 0 {
            break;
        }
        // Delete all but every 20th key, a slice per call, and let the
        // cron shrink the table a little at a time.
        for i in (deleted..20_000).take(500).filter(|i| i % 20 != 0) {
            d.remove(&key(i));
        }
        deleted = (deleted + 500).min(20_000);
        d.try_shrink();
        d.rehash_step(20);
    }
    assert!(d.bucket_count() * 8 <= start_buckets, "table did not shrink");
    assert!(mid_rehash > 0);
    assert!((0..20_000).step_by(20).all(|i| seen.contains(&key(i))));
}

#[test]
fn scan_survives_inserts_and_removes_mid_rehash() {
    // Keys inserted mid-rehash now join unmigrated old buckets; a scan that
    // runs through a whole growth and a whole shrink with such inserts (and
    // removes) between its calls must still report every key that stayed.
    let mut d = Dict::new();
    (0..4_000).for_each(|i| _ = d.insert(&key(i), ()));
    while d.rehash_step(1000) {}
    let (mut next, mut grew, mut shrank) = (4_000, 0, 0);
    let mut seen = HashSet::new();
    let mut cursor = 0;
    loop {
        cursor = d.scan(cursor, |k, _| _ = seen.insert(k.to_vec()));
        if cursor == 0 {
            break;
        }
        if next < 12_000 {
            // Growing: new keys, and a few of them removed again.
            (next..next + 20).for_each(|i| _ = d.insert(&key(i), ()));
            d.remove(&key(next + 3));
            next += 20;
        } else {
            // Then shrinking: drop all but keys 0..1000, keep inserting a trickle.
            let lo = 1_000 + (next - 12_000) * 40;
            (lo..(lo + 40).min(12_000)).for_each(|i| _ = d.remove(&key(i)));
            d.insert(&key(next), ());
            next += 1;
            d.try_shrink();
            d.rehash_step(4);
        }
        let [t0, t1] = &d.tables;
        grew += u64::from(d.is_rehashing() && t1.len() > t0.len());
        shrank += u64::from(d.is_rehashing() && t1.len() < t0.len());
    }
    assert!(grew > 0 && shrank > 0, "the scan did not span a growth ({grew}) and a shrink ({shrank})");
    assert!((0..1_000).all(|i| seen.contains(&key(i))), "a key present throughout was not reported");
}

#[test]
fn random_key_samples_present_keys() {
    let mut rng = 0;
    let mut d = Dict::new();
    assert_eq!(d.random_key(&mut rng), None);
    (0..1_000).for_each(|i| _ = d.insert(&key(i), ()));
    (0..1_000).step_by(2).for_each(|i| _ = d.remove(&key(i)));
    let mut distinct = HashSet::new();
    for _ in 0..20_000 {
        let k = d.random_key(&mut rng).expect("non-empty");
        assert!(d.contains_key(k));
        distinct.insert(k.to_vec());
    }
    assert!(distinct.len() > 450, "only {} distinct keys", distinct.len());
    // Mid-rehash, keys come from both tables.
    let mut i = 1_000;
    while !d.is_rehashing() {
        d.insert(&key(i), ());
        i += 1;
    }
    d.rehash_step(50);
    for _ in 0..5_000 {
        assert!(d.contains_key(d.random_key(&mut rng).expect("non-empty")));
    }
    d.clear();
    assert_eq!(d.random_key(&mut rng), None);
}

#[test]
fn get_or_insert_with_and_insert_owned() {
    let mut d = Dict::new();
    *d.get_or_insert_with(b"a", || 1) += 10;
    *d.get_or_insert_with(b"a", || unreachable!()) += 100;
    assert_eq!(d.get(b"a"), Some(&111));
    assert_eq!(d.insert_owned(b"b".to_vec().into(), 2), None);
    assert_eq!(d.insert_owned(b"b".to_vec().into(), 3), Some(2));
    assert_eq!(d.remove_entry(b"b"), Some((b"b".to_vec().into(), 3)));
    assert!(!d.contains_key(b"b") && d.len() == 1);
}

#[test]
fn long_chain_drops_without_recursion() {
    let mut chain = None;
    for i in 0..1_000_000 {
        chain = Some(Box::new(Entry { key: KeyBuf::new(&key(i)), value: i, next: chain }));
    }
    let mut d: Dict<u64> = Dict::new();
    d.tables[0] = Buckets::new(INITIAL_BUCKETS);
    d.tables[0][0] = chain;
    d.used[0] = 1_000_000;
    drop(d);
}

#[test]
fn take_all_leaves_empty_and_drops_elsewhere() {
    let mut d = Dict::new();
    (0..10_000).for_each(|i| _ = d.insert(&key(i), i));
    assert!(d.is_rehashing());
    let taken = d.take_all();
    assert!(d.is_empty() && d.bucket_count() == 0 && !d.is_rehashing());
    assert_eq!(taken.len(), 10_000);
    assert_eq!(taken.get(&key(42)), Some(&42));
    std::thread::spawn(move || drop(taken)).join().unwrap();
    d.insert(b"x", 1);
    assert_eq!(d.get(b"x"), Some(&1));
}

#[test]
fn next_random_escapes_zero_state() {
    let mut s = 0;
    let a = next_random(&mut s);
    assert_ne!(s, 0);
    assert_ne!(a, next_random(&mut s));
}

/// Hash flooding: keys crafted so they all land in one bucket under an
/// unkeyed hash (SipHash with a known all-zero key) spread normally in the
/// keyspace's table, whose key is random per process.
#[test]
fn keys_crafted_to_collide_without_a_key_do_not_collide_with_one() {
    use super::super::siphash::{siphash12, KeyedSip};
    let mask = (1u64 << 12) - 1;
    let crafted: Vec<Vec<u8>> = (0u64..)
        .map(|i| format!("attack:{i}").into_bytes())
        .filter(|k| siphash12(0, 0, k) & mask == 0)
        .take(1500)
        .collect();
    let mut unkeyed: Dict<u32, KeyedSip> = Dict::with_hasher(KeyedSip::with_key(0, 0));
    let mut keyed: Dict<u32> = Dict::new();
    for (i, k) in crafted.iter().enumerate() {
        unkeyed.insert(k, i as u32);
        keyed.insert(k, i as u32);
    }
    // The attack works against a known key: one chain holds everything...
    assert!(unkeyed.longest_chain() >= 1000, "crafting failed: {}", unkeyed.longest_chain());
    // ...and does nothing against the random one.
    assert!(keyed.longest_chain() <= 12, "longest chain {}", keyed.longest_chain());
    assert!(crafted.iter().all(|k| keyed.get(k).is_some()));
}
