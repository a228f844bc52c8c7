//! Redis's packed blobs as they appear inside RDB strings: listpacks
//! (7.0's small hashes, zsets and list nodes), ziplists (their pre-7.0
//! counterparts) and intsets. Decoders turn a blob into its elements as
//! strings (integers in decimal, as Redis would reply them); every bound is
//! checked, so a corrupt blob is an error, never a panic.
use crate::engine::numeric::format_i64;

/// A decoding failure, described for the load error message.
pub type PackedResult<T> = Result<T, String>;

fn int_elem(v: i64) -> Vec<u8> {
    let mut s = Vec::with_capacity(20);
    format_i64(&mut s, v);
    s
}

fn take<'a>(b: &'a [u8], at: usize, n: usize, what: &str) -> PackedResult<&'a [u8]> {
    at.checked_add(n).and_then(|end| b.get(at..end)).ok_or_else(|| format!("{what} entry runs past its end"))
}

fn le_signed(b: &[u8]) -> i64 {
    let mut v: u64 = 0;
    for (i, &x) in b.iter().enumerate() {
        v |= u64::from(x) << (8 * i);
    }
    let shift = 64 - 8 * b.len() as u32;
    ((v << shift) as i64) >> shift
}

/// Bytes a listpack back-length takes for an entry of `n` bytes (Redis's
/// `lpEncodeBacklen` thresholds, upper bounds exclusive past the first).
fn lp_backlen_size(n: usize) -> usize {
    match n {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// Builds a listpack the way Redis encodes one: canonical integers in the
/// narrowest integer form, strings with 6/12/32-bit lengths, each entry
/// followed by its back-length.
pub struct LpBuilder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for LpBuilder {
    fn default() -> Self {
        LpBuilder { buf: vec![0; 6], count: 0 }
    }
}

impl LpBuilder {
    /// Entries added so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Bytes the listpack would take if finished now.
    pub fn bytes(&self) -> usize {
        self.buf.len() + 1
    }

    /// Encoded size (header + data, without back-length) of a string entry.
    pub fn entry_len(s: &[u8]) -> usize {
        match crate::engine::numeric::parse_i64(s) {
            Some(v) => int_len(v),
            None => str_header_len(s.len()) + s.len(),
        }
    }

    /// Encoded size (without back-length) of an integer entry.
    pub fn int_entry_len(v: i64) -> usize {
        int_len(v)
    }

    /// Bytes an entry of encoded size `n` takes with its back-length.
    pub fn with_backlen(n: usize) -> usize {
        n + lp_backlen_size(n)
    }

    pub fn push_str(&mut self, s: &[u8]) {
        match crate::engine::numeric::parse_i64(s) {
            Some(v) => self.push_int(v),
            None => {
                let start = self.buf.len();
                let n = s.len();
                if n < 64 {
                    self.buf.push(0x80 | n as u8);
                } else if n < 4096 {
                    self.buf.extend_from_slice(&[0xE0 | (n >> 8) as u8, n as u8]);
                } else {
                    self.buf.push(0xF0);
                    self.buf.extend_from_slice(&(n as u32).to_le_bytes());
                }
                self.buf.extend_from_slice(s);
                self.end_entry(start);
            }
        }
    }

    pub fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        let le = v.to_le_bytes();
        match int_len(v) {
            1 => self.buf.push(v as u8),
            2 => {
                let u = (v as u64) & 0x1fff;
                self.buf.extend_from_slice(&[0xC0 | (u >> 8) as u8, u as u8]);
            }
            n => {
                self.buf.push([0xF1, 0xF2, 0xF3, 0, 0, 0, 0xF4][n - 3]);
                self.buf.extend_from_slice(&le[..n - 1]);
            }
        }
        self.end_entry(start);
    }

    fn end_entry(&mut self, start: usize) {
        let l = self.buf.len() - start;
        // Big-endian 7-bit groups, every byte after the first flagged, so
        // the length reads back from the entry's last byte.
        let size = lp_backlen_size(l);
        for i in (0..size).rev() {
            let group = ((l >> (7 * i)) & 127) as u8;
            self.buf.push(if i == size - 1 { group } else { group | 128 });
        }
        self.count += 1;
    }

    /// The finished listpack.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(0xFF);
        let total = self.buf.len() as u32;
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        let count = self.count.min(65535) as u16;
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

fn str_header_len(n: usize) -> usize {
    if n < 64 {
        1
    } else if n < 4096 {
        2
    } else {
        5
    }
}

/// Encoded size of an integer entry: 7-bit, 13-bit, 16/24/32/64-bit forms.
fn int_len(v: i64) -> usize {
    if (0..=127).contains(&v) {
        1
    } else if (-4096..=4095).contains(&v) {
        2
    } else if i16::try_from(v).is_ok() {
        3
    } else if (-(1 << 23)..(1 << 23)).contains(&v) {
        4
    } else if i32::try_from(v).is_ok() {
        5
    } else {
        9
    }
}

/// One listpack entry at `at`: (element, encoded size without back-length).
fn lp_entry(b: &[u8], at: usize) -> PackedResult<(Vec<u8>, usize)> {
    let h = b[at];
    let (elem, size) = if h & 0x80 == 0 {
        (int_elem(i64::from(h & 0x7f)), 1)
    } else if h & 0xC0 == 0x80 {
        let n = (h & 0x3f) as usize;
        (take(b, at + 1, n, "listpack")?.to_vec(), 1 + n)
    } else if h & 0xE0 == 0xC0 {
        let hi = u64::from(h & 0x1f) << 8 | u64::from(take(b, at + 1, 1, "listpack")?[0]);
        (int_elem(((hi << 51) as i64) >> 51), 2)
    } else if h & 0xF0 == 0xE0 {
        let lo = take(b, at + 1, 1, "listpack")?[0];
        let n = ((h & 0x0f) as usize) << 8 | lo as usize;
        (take(b, at + 2, n, "listpack")?.to_vec(), 2 + n)
    } else {
        match h {
            0xF0 => {
                let l = take(b, at + 1, 4, "listpack")?;
                let n = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
                (take(b, at + 5, n, "listpack")?.to_vec(), 5 + n)
            }
            0xF1..=0xF4 => {
                let w = [2, 3, 4, 8][(h - 0xF1) as usize];
                (int_elem(le_signed(take(b, at + 1, w, "listpack")?)), 1 + w)
            }
            _ => return Err(format!("bad listpack entry encoding 0x{h:02x}")),
        }
    };
    Ok((elem, size))
}

/// The elements of a listpack.
pub fn listpack(b: &[u8]) -> PackedResult<Vec<Vec<u8>>> {
    if b.len() < 7 {
        return Err("listpack shorter than its header".into());
    }
    let total = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    if total != b.len() || b[total - 1] != 0xFF {
        return Err("listpack size or terminator mismatch".into());
    }
    let count = u16::from_le_bytes([b[4], b[5]]) as usize;
    let mut out = Vec::with_capacity(count.min(4096));
    let mut at = 6;
    while b[at] != 0xFF {
        let (elem, size) = lp_entry(b, at)?;
        at += size + lp_backlen_size(size);
        if at >= total {
            return Err("listpack entry runs past its end".into());
        }
        out.push(elem);
    }
    // 65535 means "count unknown, walk it" (as the header field saturates).
    if count != 65535 && count != out.len() {
        return Err("listpack element count mismatch".into());
    }
    Ok(out)
}

/// One ziplist entry's payload at `at` (past its prev-length): (element, size).
fn zl_entry(b: &[u8], at: usize) -> PackedResult<(Vec<u8>, usize)> {
    let h = b[at];
    Ok(match h >> 6 {
        0 => {
            let n = (h & 0x3f) as usize;
            (take(b, at + 1, n, "ziplist")?.to_vec(), 1 + n)
        }
        1 => {
            let n = ((h & 0x3f) as usize) << 8 | take(b, at + 1, 1, "ziplist")?[0] as usize;
            (take(b, at + 2, n, "ziplist")?.to_vec(), 2 + n)
        }
        2 => {
            let l = take(b, at + 1, 4, "ziplist")?;
            let n = u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize;
            (take(b, at + 5, n, "ziplist")?.to_vec(), 5 + n)
        }
        _ => {
            let w = match h {
                0xC0 => 2,
                0xD0 => 4,
                0xE0 => 8,
                0xF0 => 3,
                0xFE => 1,
                0xF1..=0xFD => return Ok((int_elem(i64::from(h & 0x0f) - 1), 1)),
                _ => return Err(format!("bad ziplist entry encoding 0x{h:02x}")),
            };
            (int_elem(le_signed(take(b, at + 1, w, "ziplist")?)), 1 + w)
        }
    })
}

/// The elements of a ziplist.
pub fn ziplist(b: &[u8]) -> PackedResult<Vec<Vec<u8>>> {
    if b.len() < 11 {
        return Err("ziplist shorter than its header".into());
    }
    let total = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    if total != b.len() || b[total - 1] != 0xFF {
        return Err("ziplist size or terminator mismatch".into());
    }
    let count = u16::from_le_bytes([b[8], b[9]]) as usize;
    let mut out = Vec::with_capacity(count.min(4096));
    let mut at = 10;
    while b[at] != 0xFF {
        at += if b[at] == 0xFE { 5 } else { 1 };
        if at >= total {
            return Err("ziplist entry runs past its end".into());
        }
        let (elem, size) = zl_entry(b, at)?;
        at += size;
        if at >= total {
            return Err("ziplist entry runs past its end".into());
        }
        out.push(elem);
    }
    if count != 65535 && count != out.len() {
        return Err("ziplist element count mismatch".into());
    }
    Ok(out)
}

/// The integers of an intset (`width u32 LE, count u32 LE, values LE`).
pub fn intset(b: &[u8]) -> PackedResult<Vec<i64>> {
    if b.len() < 8 {
        return Err("intset shorter than its header".into());
    }
    let w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let n = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    if !matches!(w, 2 | 4 | 8) || n.checked_mul(w).and_then(|x| x.checked_add(8)) != Some(b.len()) {
        return Err("intset header does not match its size".into());
    }
    Ok(b[8..].chunks_exact(w).map(le_signed).collect())
}

/// Encode sorted distinct integers as a Redis intset.
pub fn build_intset(values: &[i64]) -> Vec<u8> {
    let w: usize = values
        .iter()
        .map(|&v| {
            if i16::try_from(v).is_ok() {
                2
            } else if i32::try_from(v).is_ok() {
                4
            } else {
                8
            }
        })
        .max()
        .unwrap_or(2);
    let mut out = Vec::with_capacity(8 + values.len() * w);
    out.extend_from_slice(&(w as u32).to_le_bytes());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes()[..w]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listpack from raw entries (encoding + data), adding back-lengths.
    fn lp(entries: &[Vec<u8>]) -> Vec<u8> {
        let mut body = Vec::new();
        for e in entries {
            body.extend_from_slice(e);
            let n = e.len();
            assert!(n < 128, "test helper handles 1-byte back-lengths");
            body.push(n as u8);
        }
        let total = 6 + body.len() + 1;
        let mut out = (total as u32).to_le_bytes().to_vec();
        out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        out.extend_from_slice(&body);
        out.push(0xFF);
        out
    }

    #[test]
    fn listpack_every_encoding() {
        let b = lp(&[
            vec![5],                      // 7-bit uint
            vec![0x83, b'a', b'b', b'c'], // 6-bit string
            vec![0xDF, 0xFF],             // 13-bit: -1
            vec![0xC0 | 0x0F, 0xFF],      // 13-bit: 4095
            vec![0xF1, 0x00, 0x80],       // int16: -32768
            vec![0xF2, 0xFF, 0xFF, 0x7F], // int24: 8388607
            vec![0xF3, 0, 0, 0, 0x80],    // int32 min
            [vec![0xF4], i64::MIN.to_le_bytes().to_vec()].concat(),
            [vec![0xE0, 3], b"xyz".to_vec()].concat(), // 12-bit string
        ]);
        let got = listpack(&b).unwrap();
        let want: Vec<&[u8]> =
            vec![b"5", b"abc", b"-1", b"4095", b"-32768", b"8388607", b"-2147483648", b"-9223372036854775808", b"xyz"];
        assert_eq!(got, want.iter().map(|s| s.to_vec()).collect::<Vec<_>>());
    }

    #[test]
    fn listpack_long_string_and_corruption() {
        let s = vec![b'q'; 300];
        let mut body = vec![0xE1, 44];
        body.extend_from_slice(&s);
        body.extend_from_slice(&[0x2E, 0x82]); // 2-byte back-length of 302
        let total = 6 + body.len() + 1;
        let mut b = (total as u32).to_le_bytes().to_vec();
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&body);
        b.push(0xFF);
        assert_eq!(listpack(&b).unwrap(), vec![s]);
        let mut bad = b.clone();
        bad[6] = 0xEF; // 12-bit length beyond the blob
        assert!(listpack(&bad).is_err());
        assert!(listpack(&b[..b.len() - 1]).is_err(), "size mismatch");
        let mut wrong_count = lp(&[vec![1]]);
        wrong_count[4] = 2;
        assert!(listpack(&wrong_count).is_err());
    }

    #[test]
    fn built_listpacks_parse_back() {
        let long = vec![b'L'; 5000];
        let mid = vec![b'M'; 200];
        let items: Vec<Vec<u8>> = [
            &b"0"[..],
            b"127",
            b"128",
            b"-1",
            b"-4096",
            b"4095",
            b"4096",
            b"-32768",
            b"32768",
            b"8388607",
            b"-8388609",
            b"2147483647",
            b"2147483648",
            b"-9223372036854775808",
            b"007",
            b"+5",
            b"",
            b"abc",
            &mid,
            &long,
        ]
        .iter()
        .map(|s| s.to_vec())
        .collect();
        let mut b = LpBuilder::default();
        for it in &items {
            b.push_str(it);
        }
        let sizes: usize = items.iter().map(|i| LpBuilder::with_backlen(LpBuilder::entry_len(i))).sum();
        assert_eq!(b.bytes(), 6 + sizes + 1);
        let lp = b.finish();
        assert_eq!(listpack(&lp).unwrap(), items);
        // Back-lengths: the last byte of every entry, read backwards, gives
        // the entry's size (what Redis walks from the tail with).
        assert_eq!(lp[lp.len() - 2] & 0x80, 0x80, "a 5005-byte entry has a 2-byte back-length");
        assert_eq!(lp_backlen_size(16_382), 2);
        assert_eq!(lp_backlen_size(16_383), 3);
    }

    #[test]
    fn ziplist_entries() {
        // prevlen, encoding, data...
        let entries: Vec<Vec<u8>> = vec![
            vec![0, 0x02, b'h', b'i'],
            vec![4, 0xF1 + 7],                     // immediate: 0xF8 is 7
            vec![2, 0xFE, 0x80],                   // int8 -128
            vec![3, 0xC0, 0x39, 0x30],             // int16 12345
            vec![4, 0xF0, 0x00, 0x00, 0x80],       // int24 min
            vec![5, 0xD0, 0xFF, 0xFF, 0xFF, 0x7F], // int32 max
            [vec![6, 0xE0], 1i64.to_le_bytes().to_vec()].concat(),
            [vec![10, 0x40, 0x41], vec![b'z'; 65]].concat(), // 14-bit string
        ];
        let body: Vec<u8> = entries.concat();
        let total = 10 + body.len() + 1;
        let mut b = (total as u32).to_le_bytes().to_vec();
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        b.extend_from_slice(&body);
        b.push(0xFF);
        let got = ziplist(&b).unwrap();
        let z = vec![b'z'; 65];
        let want: Vec<&[u8]> = vec![b"hi", b"7", b"-128", b"12345", b"-8388608", b"2147483647", b"1", &z];
        assert_eq!(got, want.iter().map(|s| s.to_vec()).collect::<Vec<_>>());
        b[10 + 1] = 0x3F; // string longer than the blob
        assert!(ziplist(&b).is_err());
    }

    #[test]
    fn intset_round_trip_and_checks() {
        for vals in [vec![], vec![1, 2, 3], vec![-40_000, 7], vec![i64::MIN, 0, i64::MAX]] {
            let b = build_intset(&vals);
            assert_eq!(intset(&b).unwrap(), vals);
        }
        assert_eq!(build_intset(&[1, 70_000])[0], 4);
        let mut b = build_intset(&[1, 2]);
        b[4] = 3;
        assert!(intset(&b).is_err());
        b[0] = 3;
        assert!(intset(&b).is_err());
    }
}
