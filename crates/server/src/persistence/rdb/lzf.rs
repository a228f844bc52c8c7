//! LZF compression (the liblzf format Redis uses for long strings in RDB
//! files): a stream of literal runs (`000LLLLL` + L+1 bytes) and
//! back-references (`LLLooooo` [+ extra length byte when LLL is 7] + offset
//! low byte; copy length+2 bytes from `offset+1` bytes back).

/// Longest back-reference distance the format can express.
const MAX_OFF: usize = 1 << 13;
/// Longest match: 7 + 255 in the length fields, plus the implicit 2.
const MAX_MATCH: usize = 264;
/// Longest literal run.
const MAX_LIT: usize = 32;
const HASH_BITS: u32 = 14;

fn hash3(b: &[u8]) -> usize {
    let v = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
    (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
}

fn flush_literals(out: &mut Vec<u8>, lit: &[u8]) {
    for chunk in lit.chunks(MAX_LIT) {
        out.push((chunk.len() - 1) as u8);
        out.extend_from_slice(chunk);
    }
}

/// Compress `input`; `None` when the result would not be at least
/// `min_gain` bytes shorter (Redis then stores the string as is).
pub fn compress(input: &[u8], min_gain: usize) -> Option<Vec<u8>> {
    let limit = input.len().checked_sub(min_gain)?;
    let mut out = Vec::with_capacity(limit + MAX_LIT);
    let mut table = vec![usize::MAX; 1 << HASH_BITS];
    let (mut ip, mut lit_start) = (0, 0);
    while ip + 2 < input.len() {
        let h = hash3(&input[ip..]);
        let cand = table[h];
        table[h] = ip;
        let usable = cand != usize::MAX && ip - cand <= MAX_OFF && input[cand..cand + 3] == input[ip..ip + 3];
        if !usable {
            ip += 1;
            continue;
        }
        let max = (input.len() - ip).min(MAX_MATCH);
        let mut len = 3;
        while len < max && input[cand + len] == input[ip + len] {
            len += 1;
        }
        flush_literals(&mut out, &input[lit_start..ip]);
        let off = ip - cand - 1;
        let l = len - 2;
        if l < 7 {
            out.push(((l << 5) | (off >> 8)) as u8);
        } else {
            out.push(((7 << 5) | (off >> 8)) as u8);
            out.push((l - 7) as u8);
        }
        out.push(off as u8);
        ip += len;
        lit_start = ip;
        if out.len() > limit {
            return None;
        }
    }
    flush_literals(&mut out, &input[lit_start..]);
    (out.len() <= limit).then_some(out)
}

/// Decompress into exactly `len` bytes; `None` if the data is malformed.
pub fn decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    // A corrupt `len` must not reserve memory the input cannot produce: a
    // 3-byte back-reference yields at most 264 bytes.
    let mut out = Vec::with_capacity(len.min(input.len().saturating_mul(MAX_MATCH / 3 + 1)));
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let run = input.get(ip..ip + ctrl + 1)?;
            out.extend_from_slice(run);
            ip += ctrl + 1;
        } else {
            let mut l = ctrl >> 5;
            if l == 7 {
                l += *input.get(ip)? as usize;
                ip += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + *input.get(ip)? as usize + 1;
            ip += 1;
            let from = out.len().checked_sub(back)?;
            // Byte by byte: a reference may overlap what it produces.
            for i in 0..l + 2 {
                let b = out[from + i];
                out.push(b);
            }
        }
        if out.len() > len {
            return None;
        }
    }
    (out.len() == len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(data: &[u8]) {
        if let Some(c) = compress(data, 1) {
            assert!(c.len() < data.len());
            assert_eq!(decompress(&c, data.len()).as_deref(), Some(data));
        }
    }

    #[test]
    fn round_trips_varied_inputs() {
        round_trip(b"");
        round_trip(b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        round_trip(&b"hello world, hello world, hello world! ".repeat(100));
        let mut rng = 12345u64;
        let noisy: Vec<u8> = (0..70_000)
            .map(|i| {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if i % 7 < 3 {
                    b'x'
                } else {
                    (rng >> 59) as u8
                }
            })
            .collect();
        round_trip(&noisy);
        let long_run = vec![7u8; 100_000];
        let c = compress(&long_run, 4).expect("a run compresses");
        assert!(c.len() < 2_000, "{}", c.len());
        assert_eq!(decompress(&c, long_run.len()).unwrap(), long_run);
    }

    #[test]
    fn incompressible_input_is_refused() {
        let data: Vec<u8> = (0..=255u8).collect();
        assert!(compress(&data, 4).is_none());
    }

    #[test]
    fn decodes_hand_made_stream_and_rejects_bad_ones() {
        // "abc" literal, then a 6-byte back-reference to offset 3: "abcabcabc".
        let stream = [2, b'a', b'b', b'c', (4 << 5) as u8, 2];
        assert_eq!(decompress(&stream, 9).unwrap(), b"abcabcabc");
        assert!(decompress(&stream, 8).is_none(), "length mismatch");
        assert!(decompress(&[(1 << 5) as u8, 9], 3).is_none(), "reference before start");
        assert!(decompress(&[5, b'a'], 6).is_none(), "short literal run");
    }
}
