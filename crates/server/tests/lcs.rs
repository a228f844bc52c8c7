//! Black-box tests of LCS over real TCP. Exact replies were checked against
//! redis-server 7.0.15 (RESP2 and RESP3); long random inputs are checked
//! against a model computed here (the subsequence is common to both
//! strings and as long as the textbook answer, and the IDX runs spell it).
mod common;
use common::*;

fn lcg(s: &mut u64) -> u64 {
    *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *s >> 33
}

/// Textbook LCS length.
fn model_len(a: &[u8], b: &[u8]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    for &x in a {
        let mut row = vec![0usize; b.len() + 1];
        for (j, &y) in b.iter().enumerate() {
            row[j + 1] = if x == y { prev[j] + 1 } else { prev[j + 1].max(row[j]) };
        }
        prev = row;
    }
    prev[b.len()]
}

fn is_subsequence(sub: &[u8], of: &[u8]) -> bool {
    let mut it = of.iter();
    sub.iter().all(|c| it.any(|d| d == c))
}

fn ints(f: &Frame) -> (i64, i64) {
    match f {
        Frame::Array(v) => match (&v[0], &v[1]) {
            (Frame::Integer(x), Frame::Integer(y)) => (*x, *y),
            other => panic!("not a range: {other:?}"),
        },
        other => panic!("not a range: {other:?}"),
    }
}

#[test]
fn replies_in_resp2_and_resp3() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "a", "rustacean crab"]);
    c.cmd(&["SET", "b", "crustaceans grab"]);
    assert_eq!(c.cmd(&["LCS", "a", "b"]), bulk("rustacean rab"));
    assert_eq!(c.cmd(&["LCS", "a", "b", "LEN"]), int(13));
    let idx = b"*4\r\n$7\r\nmatches\r\n*3\r\n*2\r\n*2\r\n:11\r\n:13\r\n*2\r\n:13\r\n:15\r\n*2\r\n*2\r\n:9\r\n:9\r\n*2\r\n:11\r\n:11\r\n*2\r\n*2\r\n:0\r\n:8\r\n*2\r\n:1\r\n:9\r\n$3\r\nlen\r\n:13\r\n";
    assert_eq!(c.raw_cmd(&["LCS", "a", "b", "IDX"]), idx);
    // A negative minimum is 0: every run.
    assert_eq!(c.raw_cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "-5"]), idx);
    let min3 = b"*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:11\r\n:13\r\n*2\r\n:13\r\n:15\r\n:3\r\n*3\r\n*2\r\n:0\r\n:8\r\n*2\r\n:1\r\n:9\r\n:9\r\n$3\r\nlen\r\n:13\r\n";
    assert_eq!(c.raw_cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"]), min3);
    c.cmd(&["SET", "x", "abab"]);
    c.cmd(&["SET", "y", "baba"]);
    assert_eq!(c.cmd(&["LCS", "x", "y"]), bulk("bab"));
    let xy = b"*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:1\r\n:3\r\n*2\r\n:0\r\n:2\r\n:3\r\n$3\r\nlen\r\n:3\r\n";
    assert_eq!(c.raw_cmd(&["LCS", "x", "y", "IDX", "WITHMATCHLEN"]), xy);
    // Missing keys are empty strings; integers are their text.
    assert_eq!(c.raw_cmd(&["LCS", "nokey", "nokey2", "IDX"]), b"*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n");
    assert_eq!(c.cmd(&["LCS", "a", "nokey"]), bulk(""));
    c.cmd(&["SET", "n", "12345"]);
    c.cmd(&["SET", "m", "92349"]);
    assert_eq!(c.cmd(&["LCS", "n", "m"]), bulk("234"));

    c.cmd(&["HELLO", "3"]);
    let idx3 = b"%2\r\n$7\r\nmatches\r\n*3\r\n*3\r\n*2\r\n:11\r\n:13\r\n*2\r\n:13\r\n:15\r\n:3\r\n*3\r\n*2\r\n:9\r\n:9\r\n*2\r\n:11\r\n:11\r\n:1\r\n*3\r\n*2\r\n:0\r\n:8\r\n*2\r\n:1\r\n:9\r\n:9\r\n$3\r\nlen\r\n:13\r\n";
    assert_eq!(c.raw_cmd(&["LCS", "a", "b", "IDX", "WITHMATCHLEN"]), idx3);
    assert_eq!(c.raw_cmd(&["LCS", "nokey", "nokey2", "IDX"]), b"%2\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n");
}

#[test]
fn errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["SET", "a", "abc"]);
    c.cmd(&["RPUSH", "l", "x"]);
    let not_strings = "ERR The specified keys must contain string values";
    let cases: &[(&[&str], &str)] = &[
        (&["LCS", "a", "l"], not_strings),
        // Types are checked before the options.
        (&["LCS", "l", "a", "NOPE"], not_strings),
        (&["LCS", "a", "a", "NOPE"], "ERR syntax error"),
        (&["LCS", "a", "a", "MINMATCHLEN"], "ERR syntax error"),
        (&["LCS", "a", "a", "MINMATCHLEN", "x"], "ERR value is not an integer or out of range"),
        (&["LCS", "a", "a", "IDX", "LEN"], "ERR If you want both the length and indexes, please just use IDX."),
        (&["LCS", "a"], "ERR wrong number of arguments for 'lcs' command"),
    ];
    for (cmd, e) in cases {
        assert_eq!(c.cmd(cmd), err(e), "{cmd:?}");
    }
    // The table of (600+1)^2 4-byte cells exceeds a 1mb proto-max-bulk-len.
    assert_eq!(c.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1mb"]), ok());
    let long = "A".repeat(600);
    c.cmd(&["SET", "big1", &long]);
    c.cmd(&["SET", "big2", &long]);
    for opt in ["LEN", "IDX"] {
        assert_eq!(
            c.cmd(&["LCS", "big1", "big2", opt]),
            err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
        );
    }
    c.cmd(&["SET", "big2", &long[..400]]);
    assert_eq!(c.cmd(&["LCS", "big1", "big2", "LEN"]), int(400));
    assert_eq!(c.cmd(&["COMMAND", "GETKEYS", "LCS", "k1", "k2", "LEN"]), arr(vec![bulk("k1"), bulk("k2")]));
}

#[test]
fn long_random_inputs_agree_with_a_model() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let mut rng = 7u64;
    for round in 0..6 {
        // Two mutated copies of one random text: long shared runs plus noise.
        let base: Vec<u8> = (0..300).map(|_| b"ACGT"[(lcg(&mut rng) % 4) as usize]).collect();
        let mutate = |rng: &mut u64| -> Vec<u8> {
            let mut out = Vec::with_capacity(base.len());
            for &b in &base {
                match lcg(rng) % 30 {
                    0..=2 => {}
                    3 => out.push(b'N'),
                    _ => out.push(b),
                }
            }
            out
        };
        let a = mutate(&mut rng);
        let b = mutate(&mut rng);
        c.raw_cmd(&[&b"SET"[..], b"a", &a]);
        c.raw_cmd(&[&b"SET"[..], b"b", &b]);
        let want = model_len(&a, &b);
        let Frame::Bulk(text) = c.cmd(&["LCS", "a", "b"]) else { panic!("no string") };
        assert_eq!(text.len(), want, "round {round}");
        assert!(is_subsequence(&text, &a) && is_subsequence(&text, &b));
        assert_eq!(c.cmd(&["LCS", "a", "b", "LEN"]), int(want as i64));

        let Frame::Array(reply) = c.cmd(&["LCS", "a", "b", "IDX", "WITHMATCHLEN"]) else { panic!("no map") };
        assert_eq!(reply[0], bulk("matches"));
        assert_eq!(reply[2], bulk("len"));
        assert_eq!(reply[3], int(want as i64));
        let Frame::Array(runs) = &reply[1] else { panic!("no runs") };
        // Runs come from the ends backwards and spell the subsequence.
        let mut spelled = Vec::new();
        for run in runs.iter().rev() {
            let Frame::Array(parts) = run else { panic!("bad run") };
            let ((a0, a1), (b0, b1)) = (ints(&parts[0]), ints(&parts[1]));
            assert_eq!(parts[2], int(a1 - a0 + 1));
            assert_eq!(&a[a0 as usize..=a1 as usize], &b[b0 as usize..=b1 as usize]);
            spelled.extend_from_slice(&a[a0 as usize..=a1 as usize]);
        }
        assert_eq!(spelled, text);
        let Frame::Array(long) = c.cmd(&["LCS", "a", "b", "IDX", "MINMATCHLEN", "8"]) else { panic!("no map") };
        let Frame::Array(kept) = &long[1] else { panic!("no runs") };
        let expected: Vec<Frame> = runs
            .iter()
            .filter_map(|r| match r {
                Frame::Array(p) if matches!(p[2], Frame::Integer(n) if n >= 8) => Some(Frame::Array(p[..2].to_vec())),
                _ => None,
            })
            .collect();
        assert!(!expected.is_empty() && expected.len() < runs.len(), "round {round}: a weak filter check");
        assert_eq!(kept, &expected);
    }
}
