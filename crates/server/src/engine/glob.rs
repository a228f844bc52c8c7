//! Glob-style matching as used by KEYS, SCAN MATCH, PSUBSCRIBE and CONFIG GET,
//! following the rules of Redis's `stringmatchlen`.
//!
//! `*` matches any run of bytes, `?` one byte, `[...]` a class (`^` negates,
//! `a-z` ranges, reversed ranges allowed, `\` escapes), `\x` the byte `x`.
//! The matcher is iterative and keeps a single backtrack point for the last
//! `*`, so its cost is O(pattern * string) even for patterns such as
//! `*a*a*a*a*b`, where a naive recursive matcher explodes.
//!
//! One Redis quirk is kept on purpose: an empty string only matches an empty
//! pattern (Redis's main loop never runs when the string is empty).

/// Whether `s` matches the glob `pattern`; `nocase` folds ASCII case.
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    if s.is_empty() {
        return pattern.is_empty();
    }
    let (mut p, mut i) = (0usize, 0usize);
    // (pattern index just after the `*`, string index the `*` resumes at)
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            while p < pattern.len() && pattern[p] == b'*' {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
            star = Some((p, i));
            continue;
        }
        match match_one(pattern, p, s[i], nocase) {
            Some(next) => {
                p = next;
                i += 1;
            }
            None => match star {
                Some((sp, si)) => {
                    // Let the last `*` swallow one more byte and retry.
                    star = Some((sp, si + 1));
                    p = sp;
                    i = si + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

fn eq(a: u8, b: u8, nocase: bool) -> bool {
    if nocase {
        a.eq_ignore_ascii_case(&b)
    } else {
        a == b
    }
}

/// Matches the single pattern element at `p` (not `*`) against byte `c`;
/// returns the index of the next element on success.
fn match_one(pattern: &[u8], p: usize, c: u8, nocase: bool) -> Option<usize> {
    let pc = *pattern.get(p)?;
    match pc {
        b'?' => Some(p + 1),
        b'[' => match_class(pattern, p + 1, c, nocase),
        b'\\' if p + 1 < pattern.len() => eq(pattern[p + 1], c, nocase).then_some(p + 2),
        _ => eq(pc, c, nocase).then_some(p + 1),
    }
}

/// Matches a `[...]` class whose body starts at `p`; returns the index after
/// the closing `]` (or the end of the pattern for an unterminated class).
fn match_class(pattern: &[u8], mut p: usize, c: u8, nocase: bool) -> Option<usize> {
    let negate = pattern.get(p) == Some(&b'^');
    if negate {
        p += 1;
    }
    let mut hit = false;
    loop {
        let rest = pattern.len().saturating_sub(p);
        if rest == 0 {
            break;
        }
        let pc = pattern[p];
        if pc == b'\\' && rest >= 2 {
            // Escaped bytes compare exactly, as in Redis.
            p += 1;
            hit |= pattern[p] == c;
        } else if pc == b']' {
            p += 1;
            break;
        } else if rest >= 3 && pattern[p + 1] == b'-' {
            let (mut lo, mut hi, mut x) = (pc, pattern[p + 2], c);
            if nocase {
                lo = lo.to_ascii_lowercase();
                hi = hi.to_ascii_lowercase();
                x = x.to_ascii_lowercase();
            }
            if lo > hi {
                std::mem::swap(&mut lo, &mut hi);
            }
            p += 2;
            hit |= x >= lo && x <= hi;
        } else {
            hit |= eq(pc, c, nocase);
        }
        p += 1;
    }
    (hit != negate).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    fn m(p: &str, s: &str) -> bool {
        glob_match(p.as_bytes(), s.as_bytes(), false)
    }

    #[test]
    fn literals_and_wildcards() {
        assert!(m("hello", "hello"));
        assert!(!m("hello", "hell"));
        assert!(!m("hell", "hello"));
        assert!(m("h?llo", "hallo"));
        assert!(!m("h?llo", "hllo"));
        assert!(m("h*llo", "hllo"));
        assert!(m("h*llo", "heeeello"));
        assert!(m("*", "anything"));
        assert!(m("**", "x"));
        assert!(m("a*", "a"));
        assert!(m("*o", "hello"));
        assert!(!m("*x", "hello"));
        assert!(m("*l*o", "hello"));
        assert!(m("*ll*", "hello"));
    }

    #[test]
    fn empty_string_only_matches_empty_pattern() {
        assert!(m("", ""));
        assert!(!m("*", ""));
        assert!(!m("**", ""));
        assert!(!m("", "a"));
    }

    #[test]
    fn classes() {
        assert!(m("h[ae]llo", "hello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(m("h[b-a]llo", "hbllo"), "reversed range");
        assert!(!m("h[a-b]llo", "hcllo"));
        assert!(!m("[]", "a"));
        assert!(m("[^]", "a"));
        assert!(m("[b", "b"), "unterminated class");
        assert!(m("[ab", "a"));
        assert!(!m("[ab", "c"));
        assert!(m("[\\]]", "]"));
        // As in Redis, `a-]` is a range up to `]` (and the class is unterminated).
        assert!(m("[a-]", "_"));
        assert!(!m("[a-]", "-"));
        assert!(m("x[a-]", "xa"));
    }

    #[test]
    fn escapes() {
        assert!(m("h\\*llo", "h*llo"));
        assert!(!m("h\\*llo", "hello"));
        assert!(m("\\?", "?"));
        assert!(!m("\\?", "a"));
        assert!(m("a\\", "a\\"), "trailing backslash is literal");
        assert!(m("*\\", "a\\"));
    }

    #[test]
    fn nocase() {
        assert!(glob_match(b"HeLLo", b"hello", true));
        assert!(glob_match(b"h[A-Z]llo", b"hello", true));
        assert!(glob_match(b"*MAX*", b"maxmemory", true));
        assert!(!glob_match(b"HeLLo", b"hello", false));
    }

    #[test]
    fn pathological_patterns_are_fast() {
        let s = "a".repeat(10_000);
        let start = std::time::Instant::now();
        assert!(!m("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", &s));
        assert!(m("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", &s));
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    /// Reference: a straightforward recursive matcher for small inputs.
    fn naive(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') => (0..=s.len()).any(|k| naive(&p[1..], &s[k..])),
            Some(b'?') => !s.is_empty() && naive(&p[1..], &s[1..]),
            Some(&c) => s.first() == Some(&c) && naive(&p[1..], &s[1..]),
        }
    }

    #[test]
    fn agrees_with_naive_matcher_on_simple_alphabet() {
        let alphabet = [b'a', b'b', b'*', b'?'];
        let mut patterns = vec![Vec::new()];
        for _ in 0..4 {
            let mut next = patterns.clone();
            for p in &patterns {
                for &c in &alphabet {
                    let mut q = p.clone();
                    q.push(c);
                    next.push(q);
                }
            }
            patterns = next;
        }
        let strings: Vec<&[u8]> = vec![b"a", b"b", b"ab", b"ba", b"aab", b"abab", b"bbb"];
        for p in &patterns {
            for s in &strings {
                assert_eq!(glob_match(p, s, false), naive(p, s), "{:?} {:?}", p, s);
            }
        }
    }
}
