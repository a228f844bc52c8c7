//! Stream engine tests: adds, range walks both ways, deletes and trims
//! against a plain ordered model.
use super::*;

const LIMITS: NodeLimits = NodeLimits { max_bytes: 4096, max_entries: 5 };

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

fn ids(r: Range) -> Vec<StreamId> {
    r.map(|e| e.id).collect()
}

fn filled(n: u64) -> Stream {
    let mut s = Stream::new();
    for i in 1..=n {
        let v = i.to_string();
        s.add(IdSpec::Exact(id(i, 0)), &[b"f", v.as_bytes()], 0, LIMITS).unwrap();
    }
    s
}

#[test]
fn ids_generate_and_must_grow() {
    let mut s = Stream::new();
    assert_eq!(s.add(IdSpec::Auto, &[b"a", b"1"], 1000, LIMITS), Ok(id(1000, 0)));
    assert_eq!(s.add(IdSpec::Auto, &[b"a", b"1"], 999, LIMITS), Ok(id(1000, 1)));
    assert_eq!(s.add(IdSpec::AutoSeq(1000), &[b"a", b"1"], 0, LIMITS), Ok(id(1000, 2)));
    assert_eq!(s.add(IdSpec::AutoSeq(2000), &[b"a", b"1"], 0, LIMITS), Ok(id(2000, 0)));
    assert_eq!(s.add(IdSpec::Exact(id(2000, 0)), &[b"a", b"1"], 0, LIMITS), Err(AddError::NotGreater));
    assert_eq!(s.add(IdSpec::AutoSeq(5), &[b"a", b"1"], 0, LIMITS), Err(AddError::NotGreater));
    s.last_id = id(7, u64::MAX);
    assert_eq!(s.next_id(IdSpec::AutoSeq(7), 0), None);
    assert_eq!((s.len(), s.entries_added, s.first_id), (4, 4, id(1000, 0)));
}

#[test]
fn nodes_split_by_entries_and_ranges_walk_both_ways() {
    let s = filled(23);
    assert_eq!(s.node_count(), 5);
    assert_eq!(ids(s.range(id(3, 0), id(12, 0), false)), (3..=12).map(|i| id(i, 0)).collect::<Vec<_>>());
    assert_eq!(ids(s.range(id(3, 0), id(12, 0), true)), (3..=12).rev().map(|i| id(i, 0)).collect::<Vec<_>>());
    assert_eq!(ids(s.range(id(2, 1), id(2, 5), false)), vec![]);
    assert_eq!(ids(s.range(id(9, 0), id(3, 0), false)), vec![]);
    assert_eq!(ids(s.range(StreamId::MIN, StreamId::MAX, true)).len(), 23);
    let e = s.get(id(17, 0)).unwrap();
    let pairs: Vec<_> = e.pairs().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
    assert_eq!(pairs, vec![(b"f".to_vec(), b"17".to_vec())]);
}

#[test]
fn deletes_skip_in_ranges_and_drop_empty_nodes() {
    let mut s = filled(12);
    assert_eq!(s.delete(&[id(1, 0), id(3, 0), id(3, 0), id(99, 0)]), 2);
    assert_eq!((s.len(), s.first_id, s.max_deleted), (10, id(2, 0), id(3, 0)));
    assert_eq!(s.delete(&[id(2, 0), id(4, 0), id(5, 0)]), 3);
    assert_eq!(s.node_count(), 2);
    assert_eq!(s.first_live(), Some(id(6, 0)));
    assert_eq!(s.first_id, id(6, 0));
    assert_eq!(ids(s.range(StreamId::MIN, id(7, 0), true)), vec![id(7, 0), id(6, 0)]);
    assert!(s.range_has_tombstones(None, None) == (s.first_id <= s.max_deleted));
}

#[test]
fn trims_follow_redis_node_rules() {
    // Approximate MAXLEN only drops whole nodes.
    let mut s = filled(23);
    assert_eq!(s.trim(Trim::MaxLen(12), true, 0), 10);
    assert_eq!((s.len(), s.first_id), (13, id(11, 0)));
    // Exact MAXLEN marks entries deleted inside the first node.
    assert_eq!(s.trim(Trim::MaxLen(12), false, 0), 1);
    assert_eq!((s.len(), s.first_id), (12, id(12, 0)));
    // MINID drops nodes whose last entry is below it, then marks.
    assert_eq!(s.trim(Trim::MinId(id(18, 0)), false, 0), 6);
    assert_eq!(s.first_live(), Some(id(18, 0)));
    // A limit stops before a node that would exceed it.
    let mut s = filled(23);
    assert_eq!(s.trim(Trim::MaxLen(0), true, 7), 5);
    assert_eq!(s.trim(Trim::MaxLen(0), false, 0), 18);
    assert_eq!((s.len(), s.first_id, s.node_count()), (0, StreamId::MIN, 0));
}

#[test]
fn entries_read_estimates_match_redis_cases() {
    let mut s = filled(10);
    assert_eq!(s.entries_up_to(id(10, 0)), Some(10));
    assert_eq!(s.entries_up_to(id(11, 0)), None);
    assert_eq!(s.entries_up_to(id(0, 5)), Some(0));
    assert_eq!(s.entries_up_to(id(1, 0)), Some(1));
    assert_eq!(s.entries_up_to(id(5, 0)), None);
    s.delete(&[id(5, 0)]);
    assert_eq!(s.entries_up_to(id(1, 0)), None);
}

#[test]
fn appends_follow_the_tail_nodes_last_entry_when_the_tail_changes() {
    let two = NodeLimits { max_bytes: 4096, max_entries: 2 };
    let mut s = Stream::new();
    for i in 1..=3 {
        s.add(IdSpec::Exact(id(i, 0)), &[b"f", b"v"], 0, two).unwrap();
    }
    // The tail node [3] goes; with a larger limit the next entry joins
    // [1, 2], stored after 2, not after the 3 the stream remembers.
    assert_eq!(s.delete(&[id(3, 0)]), 1);
    s.add(IdSpec::Exact(id(4, 7)), &[b"f", b"v"], 0, LIMITS).unwrap();
    assert_eq!(s.node_count(), 1);
    assert_eq!(ids(s.range(StreamId::MIN, StreamId::MAX, false)), [id(1, 0), id(2, 0), id(4, 7)]);
    // A stream rebuilt node by node (as a load does) knows no tail yet.
    let mut copy = Stream::new();
    for (&master, node) in s.nodes() {
        copy.insert_node(master, node.clone());
    }
    copy.set_meta(s.len(), s.last_id, s.first_id, s.max_deleted, s.entries_added);
    copy.add(IdSpec::Exact(id(4, 9)), &[b"f", b"v"], 0, LIMITS).unwrap();
    assert_eq!(ids(copy.range(StreamId::MIN, StreamId::MAX, true)), [id(4, 9), id(4, 7), id(2, 0), id(1, 0)]);
}
