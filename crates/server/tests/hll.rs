//! HyperLogLog over real TCP: PFADD/PFCOUNT/PFMERGE replies, estimates within
//! Redis's error bounds at 100k and 1M elements, overlapping merges,
//! byte-identical sparse values, and rejection of strings that are not HLLs.
mod common;
use common::*;

fn pfadd_range(c: &mut Client, key: &str, from: u64, to: u64) {
    let mut i = from;
    while i < to {
        let end = (i + 10_000).min(to);
        let names: Vec<String> = (i..end).map(|j| format!("elem:{j}")).collect();
        let mut args = vec!["PFADD", key];
        args.extend(names.iter().map(String::as_str));
        c.cmd(&args);
        i = end;
    }
}

fn count(c: &mut Client, keys: &[&str]) -> i64 {
    let mut args = vec!["PFCOUNT"];
    args.extend_from_slice(keys);
    match c.cmd(&args) {
        Frame::Integer(n) => n,
        other => panic!("PFCOUNT replied {other:?}"),
    }
}

fn assert_close(got: i64, want: u64) {
    let err = (got as f64 - want as f64).abs() / want as f64;
    // Standard error 0.81%; allow about 3 sigma.
    assert!(err < 0.025, "estimate {got} for {want} (error {:.2}%)", err * 100.0);
}

#[test]
fn basic_replies_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["PFADD", "h"]), int(1));
    let empty = b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff";
    assert_eq!(c.cmd(&["GET", "h"]), Frame::Bulk(empty.to_vec()));
    assert_eq!(c.cmd(&["PFADD", "h"]), int(0));
    assert_eq!(c.cmd(&["PFADD", "h", "a", "b", "c"]), int(1));
    assert_eq!(c.cmd(&["PFADD", "h", "a", "b"]), int(0));
    assert_eq!(c.cmd(&["PFCOUNT", "h"]), int(3));
    assert_eq!(c.cmd(&["PFCOUNT", "h"]), int(3));
    assert_eq!(c.cmd(&["PFCOUNT", "none"]), int(0));
    assert_eq!(c.cmd(&["TYPE", "h"]), simple("string"));
    // Byte-identical with Redis 7.0.15: sparse encoding, stale then cached count.
    c.cmd(&["PFADD", "hx", "a", "b", "c"]);
    let body = b"`\xf3\x80P\xb1\x84K\xfb\x80BZ";
    let mut want = b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80".to_vec();
    want.extend_from_slice(body);
    assert_eq!(c.cmd(&["GET", "hx"]), Frame::Bulk(want.clone()));
    assert_eq!(c.cmd(&["PFCOUNT", "hx"]), int(3));
    want[8] = 3;
    want[15] = 0;
    assert_eq!(c.cmd(&["GET", "hx"]), Frame::Bulk(want));
    c.cmd(&["SET", "s", "not an hll"]);
    let not_hll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
    assert_eq!(c.cmd(&["PFADD", "s", "a"]), err(not_hll));
    assert_eq!(c.cmd(&["PFCOUNT", "s"]), err(not_hll));
    assert_eq!(c.cmd(&["PFMERGE", "d", "s"]), err(not_hll));
    c.cmd(&["ZADD", "z", "1", "a"]);
    assert_eq!(c.cmd(&["PFADD", "z", "a"]), err("WRONGTYPE Operation against a key holding the wrong kind of value"));
    assert_eq!(c.cmd(&["PFMERGE", "d", "h", "none"]), ok());
    assert_eq!(c.cmd(&["PFCOUNT", "d"]), int(3));
    // A copy made with GET/SET is still a valid HLL.
    let Frame::Bulk(raw) = c.cmd(&["GET", "h"]) else { panic!("bulk") };
    assert_eq!(&raw[..4], b"HYLL");
}

#[test]
fn estimates_within_error_bounds() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    pfadd_range(&mut c, "a", 0, 100_000);
    assert_close(count(&mut c, &["a"]), 100_000);
    pfadd_range(&mut c, "big", 0, 1_000_000);
    assert_close(count(&mut c, &["big"]), 1_000_000);
    assert_eq!(c.cmd(&["STRLEN", "big"]), int(12304), "promoted to dense");
    // Overlapping sets: a = [0, 100k), b = [50k, 150k) -> union 150k.
    pfadd_range(&mut c, "b", 50_000, 150_000);
    assert_close(count(&mut c, &["a", "b"]), 150_000);
    assert_eq!(c.cmd(&["PFMERGE", "u", "a", "b"]), ok());
    assert_close(count(&mut c, &["u"]), 150_000);
    assert_eq!(count(&mut c, &["u"]), count(&mut c, &["a", "b"]));
}
