//! Request parser tests: frames split at every byte boundary, Redis's
//! protocol errors and limits, and random/mutated input never panicking.
use proptest::prelude::*;
use resp::request::{Limits, Parsed};
use resp::{Args, RequestParser};

/// Feed `input` in two pieces split at `cut`, the way a socket might deliver
/// it, and collect every command's arguments.
fn parse_split(input: &[u8], cut: usize) -> Result<Vec<Vec<Vec<u8>>>, String> {
    let mut parser = RequestParser::new();
    let mut args = Args::default();
    let mut buf: Vec<u8> = input[..cut].to_vec();
    let mut fed = cut;
    let mut out = Vec::new();
    loop {
        match parser.parse(&buf, &mut args, Limits::default()).map_err(|e| e.0)? {
            Parsed::Frame(n) => {
                out.push((0..args.len()).map(|i| args.get(&buf, i).to_vec()).collect());
                buf.drain(..n);
            }
            Parsed::Incomplete { .. } => {
                if fed == input.len() {
                    return Ok(out);
                }
                buf.extend_from_slice(&input[fed..]);
                fed = input.len();
            }
        }
    }
}

/// The commands encoded as multibulk frames, then each `(position, byte)`
/// written over the encoding (positions wrap around).
fn encode_and_flip<C: AsRef<[u8]>>(cmds: &[Vec<C>], flips: &[(usize, u8)]) -> Vec<u8> {
    let mut input = Vec::new();
    for c in cmds {
        resp::encode_command(&mut input, c);
    }
    flip(&mut input, flips);
    input
}

fn flip(input: &mut [u8], flips: &[(usize, u8)]) {
    for &(pos, byte) in flips {
        let i = pos % input.len();
        input[i] = byte;
    }
}

fn words(cmds: &[&[&str]]) -> Vec<Vec<Vec<u8>>> {
    cmds.iter().map(|c| c.iter().map(|w| w.as_bytes().to_vec()).collect()).collect()
}

#[test]
fn every_split_point_gives_the_same_commands() {
    let input = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\nPING\r\n*1\r\n$4\r\nPING\r\ninline \"a b\" 'c'\r\n*0\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n";
    let want = words(&[&["SET", "k", "hello"], &["PING"], &["PING"], &["inline", "a b", "c"], &[], &["ECHO", ""]]);
    for cut in 0..=input.len() {
        assert_eq!(parse_split(input, cut).unwrap(), want, "split at {cut}");
    }
}

#[test]
fn binary_payloads_are_taken_by_length() {
    let mut input = b"*2\r\n$4\r\nECHO\r\n$6\r\n".to_vec();
    input.extend_from_slice(b"a\r\n\0\xffb\r\n");
    for cut in 0..=input.len() {
        assert_eq!(parse_split(&input, cut).unwrap(), vec![vec![b"ECHO".to_vec(), b"a\r\n\0\xffb".to_vec()]]);
    }
}

#[test]
fn protocol_errors_use_redis_wording() {
    let cases: &[(&[u8], &str)] = &[
        (b"*x\r\n", "invalid multibulk length"),
        (b"*3000000000\r\n", "invalid multibulk length"),
        (b"*1\r\n+PING\r\n", "expected '$', got '+'"),
        (b"*1\r\n$-1\r\n", "invalid bulk length"),
        (b"*1\r\n$abc\r\n", "invalid bulk length"),
        (b"*1\r\n$600000000\r\n", "invalid bulk length"),
        (b"SET \"k v\r\n", "unbalanced quotes in request"),
    ];
    for (input, want) in cases {
        let got = parse_split(input, input.len()).unwrap_err();
        assert_eq!(&got, want, "input {:?}", String::from_utf8_lossy(input));
    }
}

#[test]
fn oversized_lines_are_rejected_not_buffered_forever() {
    let long_inline = vec![b'a'; 70 * 1024];
    assert_eq!(parse_split(&long_inline, long_inline.len()).unwrap_err(), "too big inline request");
    let mut mbulk = b"*".to_vec();
    mbulk.extend(vec![b'1'; 70 * 1024]);
    assert_eq!(parse_split(&mbulk, mbulk.len()).unwrap_err(), "too big mbulk count string");
}

#[test]
fn unauthenticated_clients_get_small_limits() {
    let lim = Limits { auth_required: true, ..Limits::default() };
    let mut p = RequestParser::new();
    let mut args = Args::default();
    let err = p.parse(b"*11\r\n", &mut args, lim).unwrap_err();
    assert_eq!(err.0, "unauthenticated multibulk length");
    let mut p = RequestParser::new();
    let err = p.parse(b"*1\r\n$16385\r\n", &mut args, lim).unwrap_err();
    assert_eq!(err.0, "unauthenticated bulk length");
}

#[test]
fn a_huge_argument_count_is_scanned_once() {
    // 200k arguments arriving in 1 KiB reads: the parser resumes instead of
    // rescanning, so this stays fast (quadratic rescans would take minutes).
    let n = 200_000;
    let mut input = format!("*{n}\r\n").into_bytes();
    for _ in 0..n {
        input.extend_from_slice(b"$1\r\nx\r\n");
    }
    let mut parser = RequestParser::new();
    let mut args = Args::default();
    let mut end = 0;
    let done = loop {
        end = (end + 1024).min(input.len());
        if let Parsed::Frame(k) = parser.parse(&input[..end], &mut args, Limits::default()).unwrap() {
            break k;
        }
    };
    assert_eq!(done, input.len());
    assert_eq!(args.len(), n);
}

proptest! {
    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512), cut in 0usize..512) {
        let cut = cut.min(data.len());
        let _ = parse_split(&data, cut);
    }

    #[test]
    fn mutated_commands_never_panic(
        cmds in proptest::collection::vec(proptest::collection::vec("[a-z0-9 ]{0,12}", 1..5), 1..5),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
    ) {
        let input = encode_and_flip(&cmds, &flips);
        for cut in [0, input.len() / 2, input.len()] {
            let _ = parse_split(&input, cut);
        }
    }

    #[test]
    fn encoded_commands_round_trip(cmds in proptest::collection::vec(proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 1..6), 1..6), cut in 0usize..400) {
        let input = encode_and_flip(&cmds, &[]);
        let got = parse_split(&input, cut.min(input.len())).unwrap();
        prop_assert_eq!(got, cmds);
    }
}

/// Whenever `peek_frame` recognises a frame, the parser must read the same
/// frame: same size, and the peeked key is the parser's second argument.
fn peek_agrees_with_parser(buf: &[u8]) -> Result<(), TestCaseError> {
    let Some(p) = resp::request::peek_frame(buf, 64) else {
        return Ok(());
    };
    let mut args = Args::default();
    let parsed = RequestParser::new().parse(buf, &mut args, Limits::default());
    prop_assert_eq!(parsed, Ok(Parsed::Frame(p.len)));
    prop_assert_eq!(p.argc, args.len());
    for i in 0..3 {
        let want = (i < args.len()).then(|| args.get(buf, i).to_vec());
        prop_assert_eq!(p.arg(i).map(|(s, e)| buf[s..e].to_vec()), want);
    }
    Ok(())
}

#[test]
fn peek_sees_whole_multibulk_frames_only() {
    let frame = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
    let p = resp::request::peek_frame(frame, 64).expect("a whole frame");
    assert_eq!(p.len, frame.len());
    let (s, e) = p.arg(1).unwrap();
    assert_eq!(&frame[s..e], b"key");
    assert_eq!((p.argc, p.arg(3)), (3, None));
    for cut in 0..frame.len() {
        assert_eq!(resp::request::peek_frame(&frame[..cut], 64), None, "prefix of {cut} bytes");
    }
    assert_eq!(resp::request::peek_frame(b"*1\r\n$4\r\nPING\r\n", 64).unwrap().arg(1), None);
    assert_eq!(resp::request::peek_frame(b"GET key\r\n", 64), None, "inline commands are left to the parser");
    assert_eq!(resp::request::peek_frame(b"*2\r\n$3\r\nGET\r\n+key\r\n", 64), None);
    assert_eq!(resp::request::peek_frame(frame, 2), None, "more arguments than the cap");
}

proptest! {
    #[test]
    fn peek_matches_the_parser_on_mutated_input(
        cmds in proptest::collection::vec(proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 1..5), 1..4),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3),
    ) {
        let mut input = encode_and_flip(&cmds, &[]);
        let first = resp::request::peek_frame(&input, 64).expect("an unmutated frame is seen");
        prop_assert_eq!(first.arg(1).map(|(s, e)| input[s..e].to_vec()), cmds[0].get(1).cloned());
        flip(&mut input, &flips);
        for cut in [input.len() / 3, input.len() / 2, input.len()] {
            peek_agrees_with_parser(&input[..cut])?;
        }
    }
}

/// Every outcome of `parse` (which reads whole frames in one pass when it
/// can) must be exactly that of the general resumable scan alone.
fn fast_path_agrees(buf: &[u8], lim: Limits) -> Result<(), TestCaseError> {
    let (mut a, mut b) = (Args::default(), Args::default());
    let fast = RequestParser::new().parse(buf, &mut a, lim);
    let general = RequestParser::new().parse_resumable(buf, &mut b, lim);
    prop_assert_eq!(&fast, &general);
    if let Ok(Parsed::Frame(_)) = fast {
        let all = |args: &Args| (0..args.len()).map(|i| args.get(buf, i).to_vec()).collect::<Vec<_>>();
        prop_assert_eq!(all(&a), all(&b));
    }
    Ok(())
}

proptest! {
    #[test]
    fn whole_frame_reading_matches_the_resumable_scan(
        cmds in proptest::collection::vec(proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..14), 1..13), 1..3),
        flips in proptest::collection::vec((any::<usize>(), prop::sample::select(b"0123456789-+*$\r\n x".to_vec())), 0..3),
        auth_required in any::<bool>(),
        max_bulk_len in prop::sample::select(vec![4u64, 12, 512 * 1024 * 1024]),
    ) {
        let input = encode_and_flip(&cmds, &flips);
        let lim = Limits { max_bulk_len, auth_required };
        for cut in [input.len() / 2, input.len() - 1, input.len()] {
            fast_path_agrees(&input[..cut], lim)?;
        }
    }
}

#[test]
fn whole_frames_with_unusual_lengths_are_left_to_the_resumable_scan() {
    for input in [
        &b"*01\r\n$4\r\nPING\r\n"[..],
        b"*1\r\n$04\r\nPING\r\n",
        b"*-1\r\n",
        b"*0\r\n",
        b"*1\r\n$-1\r\n",
        b"*1\r\n$4\r\nPING\r",
        b"*2\r\n$4\r\nPING\r\n",
        b"*1\r\n$4 \r\nPING\r\n",
        b"*1\r\n$99999999999999999999\r\nPING\r\n",
        b"*1\r\n$4\r\nPINGxx",
    ] {
        fast_path_agrees(input, Limits::default()).unwrap();
    }
}

/// `canonical_frame` may only hand out bytes equal to the arguments'
/// encoding (replay consumers copy them as that); both parser paths.
fn canonical_frame_is_the_encoding(buf: &[u8]) -> Result<Option<bool>, TestCaseError> {
    let mut copied = None;
    for resumable in [false, true] {
        let mut args = Args::default();
        let mut p = RequestParser::new();
        let parsed = if resumable {
            p.parse_resumable(buf, &mut args, Limits::default())
        } else {
            p.parse(buf, &mut args, Limits::default())
        };
        let Ok(Parsed::Frame(n)) = parsed else { return Ok(None) };
        let mut want = Vec::new();
        resp::encode_command_parts(&mut want, (0..args.len()).map(|i| args.get(buf, i)));
        let got = args.canonical_frame(buf);
        if let Some(got) = got {
            prop_assert_eq!(got, &want[..]);
            prop_assert_eq!(got.len(), n);
        }
        copied = Some(got.is_some());
    }
    Ok(copied)
}

proptest! {
    #[test]
    fn canonical_frames_are_copied_exactly(
        cmds in proptest::collection::vec(proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..14), 1..13), 1..3),
        flips in proptest::collection::vec((any::<usize>(), prop::sample::select(b"0123456789-+*$\r\n x".to_vec())), 0..3),
    ) {
        let clean = encode_and_flip(&cmds, &[]);
        prop_assert_eq!(canonical_frame_is_the_encoding(&clean)?, Some(true));
        let input = encode_and_flip(&cmds, &flips);
        canonical_frame_is_the_encoding(&input)?;
    }
}

#[test]
fn frames_the_parser_reads_leniently_are_not_copied() {
    for input in [
        &b"*1\r\n$4\r\nPINGxx"[..],
        b"*1\rx$4\r\nPING\r\n",
        b"*1\r\n$4\rxPING\r\n",
        b"*2\r\n$3\r\nGET\r\n$1\r\nk\nx",
        b"PING\r\n",
        b"*0\r\n",
    ] {
        assert_eq!(
            canonical_frame_is_the_encoding(input).unwrap(),
            Some(false),
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
    assert_eq!(canonical_frame_is_the_encoding(b"*1\r\n$4\r\nPING\r\n*1").unwrap(), Some(true));
    assert!(Args::from_parts([&b"PING"[..]]).canonical_frame(b"*1\r\n$4\r\nPING\r\n").is_none(), "owned arguments");
}
