//! Reply decoder tests: every RESP2/RESP3 type, incomplete input at every
//! split point, and hostile input never panicking.
use proptest::prelude::*;
use resp::{decode_frame, Frame};

const SAMPLE: &[u8] = b"*9\r\n+OK\r\n-ERR bad\r\n:-42\r\n$3\r\nfoo\r\n$-1\r\n%1\r\n+k\r\n,1.5\r\n~2\r\n#t\r\n_\r\n=8\r\ntxt:abcd\r\n>1\r\n(12345678901234567890\r\n";

#[test]
fn decodes_every_type() {
    let (f, n) = decode_frame(SAMPLE).unwrap().unwrap();
    assert_eq!(n, SAMPLE.len());
    let Frame::Array(items) = f else { panic!("not an array") };
    assert_eq!(items[0], Frame::Simple(b"OK".to_vec()));
    assert_eq!(items[1], Frame::Error(b"ERR bad".to_vec()));
    assert_eq!(items[2], Frame::Integer(-42));
    assert_eq!(items[3], Frame::Bulk(b"foo".to_vec()));
    assert_eq!(items[4], Frame::Null);
    assert_eq!(items[5], Frame::Map(vec![(Frame::Simple(b"k".to_vec()), Frame::Double(b"1.5".to_vec()))]));
    assert_eq!(items[6], Frame::Set(vec![Frame::Boolean(true), Frame::Null]));
    assert_eq!(items[7], Frame::Verbatim(b"txt".to_vec(), b"abcd".to_vec()));
    assert_eq!(items[8], Frame::Push(vec![Frame::BigNumber(b"12345678901234567890".to_vec())]));
}

#[test]
fn every_prefix_is_incomplete_not_an_error() {
    for cut in 0..SAMPLE.len() {
        assert_eq!(decode_frame(&SAMPLE[..cut]).unwrap(), None, "prefix of {cut} bytes");
    }
}

#[test]
fn deep_nesting_is_refused() {
    let input = b"*1\r\n".repeat(1000);
    assert!(decode_frame(&input).is_err());
}

proptest! {
    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode_frame(&data);
    }

    #[test]
    fn mutated_sample_never_panics(i in 0usize..SAMPLE.len(), b in any::<u8>()) {
        let mut data = SAMPLE.to_vec();
        data[i] = b;
        let _ = decode_frame(&data);
    }
}

#[test]
fn push_decimal_writes_every_width() {
    for n in [0usize, 7, 10, 99, 100, 123_456_789, usize::MAX] {
        let mut out = b"x".to_vec();
        resp::push_decimal(&mut out, n);
        assert_eq!(out, format!("x{n}").into_bytes());
    }
}

#[test]
fn an_empty_line_is_an_error_not_a_panic() {
    // Found by the mutation fuzz: a bare CRLF where a frame starts.
    assert!(decode_frame(b"\r\n").is_err());
    assert!(decode_frame(b"*2\r\n:1\r\n\r\n").is_err());
}
