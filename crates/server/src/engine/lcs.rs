//! LCS: the longest common subsequence of two strings, by the classic
//! dynamic-programming table of prefix lengths, and the runs of matching
//! bytes found walking that table back from its far corner (the walk and
//! its tie-breaking decide which of several equally long answers Redis
//! gives, so they follow Redis 7.0's exactly).

/// One run of the subsequence: inclusive byte ranges in each string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub a: (u32, u32),
    pub b: (u32, u32),
}

impl Run {
    /// Bytes in the run (WITHMATCHLEN).
    pub fn match_len(&self) -> u32 {
        self.a.1 - self.a.0 + 1
    }
}

/// What the walk found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Lcs {
    pub len: u32,
    pub text: Vec<u8>,
    /// Runs from the ends of the strings towards their starts, those
    /// shorter than the minimum left out.
    pub runs: Vec<Run>,
}

/// Why the table could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LcsError {
    /// An input of 4 GiB or more (lengths are 32-bit).
    TooLong,
    /// The table would be larger than the allowed bytes.
    OverLimit,
    /// The allocator refused the table.
    NoMemory,
}

/// Bytes the table for inputs of these lengths takes.
pub fn table_bytes(alen: usize, blen: usize) -> u128 {
    (alen as u128 + 1) * (blen as u128 + 1) * 4
}

/// Length only: two rows of the table are enough.
pub fn lcs_len(a: &[u8], b: &[u8], max_table: u64) -> Result<u32, LcsError> {
    check(a, b, max_table)?;
    let mut prev = vec![0u32; b.len() + 1];
    let mut row = vec![0u32; b.len() + 1];
    for &x in a {
        for (j, &y) in b.iter().enumerate() {
            row[j + 1] = if x == y { prev[j] + 1 } else { prev[j + 1].max(row[j]) };
        }
        std::mem::swap(&mut prev, &mut row);
    }
    Ok(prev[b.len()])
}

fn check(a: &[u8], b: &[u8], max_table: u64) -> Result<(), LcsError> {
    if a.len() as u64 >= u32::MAX as u64 - 1 || b.len() as u64 >= u32::MAX as u64 - 1 {
        return Err(LcsError::TooLong);
    }
    if table_bytes(a.len(), b.len()) > max_table as u128 {
        return Err(LcsError::OverLimit);
    }
    Ok(())
}

/// The subsequence and its runs of at least `min_run` bytes (0: all),
/// refusing a table over `max_table` bytes.
pub fn lcs(a: &[u8], b: &[u8], min_run: u64, max_table: u64) -> Result<Lcs, LcsError> {
    check(a, b, max_table)?;
    let w = b.len() + 1;
    let cells = (a.len() + 1) * w;
    let mut t: Vec<u32> = Vec::new();
    t.try_reserve_exact(cells).map_err(|_| LcsError::NoMemory)?;
    t.resize(w, 0);
    for (i, &x) in a.iter().enumerate() {
        let above = i * w;
        t.push(0);
        for (j, &y) in b.iter().enumerate() {
            let v = if x == y { t[above + j] + 1 } else { t[above + j + 1].max(t[above + w + j]) };
            t.push(v);
        }
    }
    let at = |i: usize, j: usize| t[i * w + j];
    let len = at(a.len(), b.len());
    let mut text = vec![0u8; len as usize];
    let mut runs = Vec::new();
    let mut k = text.len();
    let (mut i, mut j) = (a.len(), b.len());
    // The run being grown backwards: (a_start, a_end, b_start, b_end).
    let mut cur: Option<(usize, usize, usize, usize)> = None;
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            text[k - 1] = a[i - 1];
            match &mut cur {
                None => cur = Some((i - 1, i - 1, j - 1, j - 1)),
                Some(r) if r.0 == i && r.2 == j => {
                    r.0 -= 1;
                    r.2 -= 1;
                }
                Some(_) => emit = true,
            }
            // A run touching the start of either string is complete.
            emit |= cur.is_some_and(|r| r.0 == 0 || r.2 == 0);
            k -= 1;
            i -= 1;
            j -= 1;
        } else {
            if at(i - 1, j) > at(i, j - 1) {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = cur.is_some();
        }
        if emit {
            if let Some((a0, a1, b0, b1)) = cur.take() {
                let run = Run { a: (a0 as u32, a1 as u32), b: (b0 as u32, b1 as u32) };
                if min_run == 0 || run.match_len() as u64 >= min_run {
                    runs.push(run);
                }
            }
        }
    }
    Ok(Lcs { len, text, runs })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: u64 = 1 << 30;

    #[test]
    fn finds_the_subsequence_and_its_runs() {
        let r = lcs(b"ohmytext", b"mynewtext", 0, BIG).unwrap();
        assert_eq!(r.text, b"mytext");
        assert_eq!(r.len, 6);
        assert_eq!(r.runs, vec![Run { a: (4, 7), b: (5, 8) }, Run { a: (2, 3), b: (0, 1) }]);
        assert_eq!(lcs(b"ohmytext", b"mynewtext", 4, BIG).unwrap().runs, vec![Run { a: (4, 7), b: (5, 8) }]);
        assert_eq!(lcs_len(b"ohmytext", b"mynewtext", BIG), Ok(6));
        assert_eq!(lcs(b"", b"abc", 0, BIG).unwrap(), Lcs::default());
        assert_eq!(lcs(b"abc", b"xyz", 0, BIG).unwrap(), Lcs::default());
    }

    #[test]
    fn refuses_tables_over_the_limit() {
        assert_eq!(table_bytes(3, 4), 80);
        assert_eq!(lcs(b"abc", b"abcd", 0, 79), Err(LcsError::OverLimit));
        assert!(lcs(b"abc", b"abcd", 0, 80).is_ok());
        assert_eq!(lcs_len(b"abc", b"abcd", 79), Err(LcsError::OverLimit));
    }
}
