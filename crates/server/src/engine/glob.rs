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

/// A glob compiled once for many case-sensitive matches (ACL key and
/// channel patterns, checked on every command of a restricted user). The
/// shapes such patterns take in practice, a name, `app:*` or `*:log`,
/// become one byte comparison; any other pattern keeps the general
/// matcher. Answers exactly as [`glob_match`] with `nocase` false.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompiledGlob {
    /// No wildcard: the string must equal this (escapes resolved).
    Exact(Box<[u8]>),
    /// `literal*`: a non-empty string starting with the literal.
    Prefix(Prefix),
    /// `*literal`: a non-empty string ending with the literal.
    Suffix(Box<[u8]>),
    /// Anything else, matched by [`glob_match`].
    General(Box<[u8]>),
}

impl CompiledGlob {
    pub fn new(pattern: &[u8]) -> Self {
        // Resolve escapes into literal bytes and note where the stars are;
        // `?` and classes need the general matcher.
        let mut lit = Vec::with_capacity(pattern.len());
        let (mut lead, mut trail, mut i) = (0usize, 0usize, 0usize);
        while i < pattern.len() {
            match pattern[i] {
                b'\\' if i + 1 < pattern.len() => {
                    if trail > 0 {
                        return Self::General(pattern.into());
                    }
                    lit.push(pattern[i + 1]);
                    i += 1;
                }
                b'*' if lit.is_empty() => lead += 1,
                b'*' => trail += 1,
                b'?' | b'[' => return Self::General(pattern.into()),
                c if trail == 0 => lit.push(c),
                _ => return Self::General(pattern.into()),
            }
            i += 1;
        }
        let lit = lit.into_boxed_slice();
        match (lead > 0, trail > 0) {
            (false, false) => Self::Exact(lit),
            (false, true) => Self::Prefix(Prefix::new(lit)),
            (true, false) => Self::Suffix(lit),
            (true, true) => Self::General(pattern.into()),
        }
    }

    /// Whether `s` matches, as `glob_match(pattern, s, false)` would say.
    #[inline(always)]
    pub fn matches(&self, s: &[u8]) -> bool {
        match self {
            Self::Exact(lit) => s == &**lit,
            // `*` never matches an empty string (see the module's note).
            Self::Prefix(prefix) => prefix.starts(s),
            Self::Suffix(lit) => !s.is_empty() && s.ends_with(lit),
            Self::General(p) => glob_match(p, s, false),
        }
    }
}

/// A literal prefix, with its first 8 bytes as a masked word: a key of 8
/// bytes or more (most keys) is judged on them by one load and compare,
/// with no call to `memcmp`, when the literal is that short (`app:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    lit: Box<[u8]>,
    head: u64,
    mask: u64,
}

impl Prefix {
    fn new(lit: Box<[u8]>) -> Self {
        let n = lit.len().min(8);
        let mut word = [0u8; 8];
        word[..n].copy_from_slice(&lit[..n]);
        let mask = if n == 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
        Prefix { head: u64::from_le_bytes(word), mask, lit }
    }

    /// Whether `s` is non-empty and starts with the literal.
    #[inline(always)]
    fn starts(&self, s: &[u8]) -> bool {
        match s.first_chunk::<8>() {
            Some(first) => {
                u64::from_le_bytes(*first) & self.mask == self.head
                    && (self.lit.len() <= 8 || s[8..].starts_with(&self.lit[8..]))
            }
            None => !s.is_empty() && s.starts_with(&self.lit),
        }
    }
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

    #[test]
    fn compiled_shapes() {
        use super::CompiledGlob::{self, Exact, General, Prefix, Suffix};
        let c = |p: &str| CompiledGlob::new(p.as_bytes());
        let prefix = |lit: &[u8]| Prefix(super::Prefix::new(lit.into()));
        assert_eq!(c("app:*"), prefix(b"app:"));
        assert_eq!(c("app:**"), prefix(b"app:"));
        assert_eq!(c("*"), Suffix(b""[..].into()));
        assert_eq!(c("user:1"), Exact(b"user:1"[..].into()));
        assert_eq!(c("*:log"), Suffix(b":log"[..].into()));
        assert_eq!(c("a\\*b*"), prefix(b"a*b"));
        assert_eq!(c("a\\"), Exact(b"a\\"[..].into()));
        assert_eq!(c(""), Exact(b""[..].into()));
        for general in ["a*b", "*a*", "a?", "[ab]*", "a*\\*", "a*\\"] {
            assert!(matches!(c(general), General(_)), "{general}");
        }
        assert!(!c("*").matches(b""), "a star needs a byte, as in glob_match");
        assert!(c("").matches(b""));
    }

    /// The compiled forms answer as the general matcher on many random
    /// patterns (escapes, `?`, classes, stars anywhere) and strings.
    #[test]
    fn compiled_agrees_with_glob_match() {
        use super::CompiledGlob;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        // Literal-heavy patterns reach the fast shapes; the full alphabet
        // reaches the general one. Half the strings are random, half
        // spelled from the pattern (stars filled, `?` and escapes replaced)
        // so that long literal prefixes and suffixes match too.
        let shapes: [&[u8]; 2] = [b"ab*\\", b"ab*?[]^-\\"];
        let text: &[u8] = b"ab*?[]-\\";
        let mut fast = 0;
        for round in 0..200_000 {
            let alphabet = shapes[round % 2];
            let pattern: Vec<u8> = (0..next(14)).map(|_| alphabet[next(alphabet.len())]).collect();
            let compiled = CompiledGlob::new(&pattern);
            fast += usize::from(!matches!(compiled, CompiledGlob::General(_)));
            for k in 0..6 {
                let s: Vec<u8> = if k % 2 == 0 {
                    (0..next(14)).map(|_| text[next(text.len())]).collect()
                } else {
                    let mut s = Vec::new();
                    for &c in &pattern {
                        match c {
                            b'*' => s.extend((0..next(4)).map(|_| text[next(text.len())])),
                            b'?' => s.push(text[next(text.len())]),
                            b'\\' if next(2) == 0 => {}
                            c => s.push(c),
                        }
                    }
                    s
                };
                assert_eq!(compiled.matches(&s), glob_match(&pattern, &s, false), "{pattern:?} {s:?} {compiled:?}");
            }
        }
        assert!(fast > 50_000, "only {fast} patterns took a fast shape");
    }
}
