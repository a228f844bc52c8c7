//! SORT's data rules, apart from the key lookups (the command does those,
//! so they count as keyspace reads): what a BY/GET pattern names for an
//! element, how a weight reads as a number, the LIMIT window, and the
//! order Redis 7.0 produces.
//!
//! Redis handles patterns and weights as C strings: `*` and `->` are only
//! searched before the first NUL byte, and a weight's text ends at its
//! first NUL. ALPHA compares with `strcoll`, which in the C and C.UTF-8
//! locales of the servers we match is byte order up to the first NUL;
//! with STORE it compares whole byte strings instead. Ties keep their
//! input order (glibc's qsort is a merge sort).
use std::cmp::Ordering;

use super::numeric;

/// What a BY/GET pattern refers to for one element.
#[derive(Debug, PartialEq, Eq)]
pub enum Target<'p> {
    /// `#`: the element itself.
    Elem,
    /// A pattern without `*` names nothing.
    Nothing,
    /// The string at `key`, or with `field` that field of the hash at `key`.
    Key { key: Vec<u8>, field: Option<&'p [u8]> },
}

/// A BY or GET pattern, split once per command.
#[derive(Debug, Clone, Copy)]
pub enum Pattern<'p> {
    Elem,
    Nothing,
    Sub { prefix: &'p [u8], postfix: &'p [u8], field: Option<&'p [u8]> },
}

/// The part of `b` a C string function sees.
fn c_str(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |nul| &b[..nul])
}

/// Whether a BY pattern has a `*` (without one SORT does not sort at all).
pub fn has_star(pattern: &[u8]) -> bool {
    c_str(pattern).contains(&b'*')
}

impl<'p> Pattern<'p> {
    pub fn parse(p: &'p [u8]) -> Pattern<'p> {
        if c_str(p) == b"#" {
            return Pattern::Elem;
        }
        let Some(star) = c_str(p).iter().position(|&c| c == b'*') else {
            return Pattern::Nothing;
        };
        let after = &c_str(p)[star + 1..];
        // The first "->" after the `*` splits off a field name, unless
        // nothing follows it: then it is part of the key name.
        let arrow = after.windows(2).position(|w| w == b"->").filter(|&a| a + 2 < after.len());
        let rest = &p[star + 1..];
        match arrow {
            Some(a) => Pattern::Sub { prefix: &p[..star], postfix: &rest[..a], field: Some(&rest[a + 2..]) },
            None => Pattern::Sub { prefix: &p[..star], postfix: rest, field: None },
        }
    }

    /// What the pattern names for `elem`.
    pub fn target(&self, elem: &[u8]) -> Target<'p> {
        match *self {
            Pattern::Elem => Target::Elem,
            Pattern::Nothing => Target::Nothing,
            Pattern::Sub { prefix, postfix, field } => {
                let mut key = Vec::with_capacity(prefix.len() + elem.len() + postfix.len());
                key.extend_from_slice(prefix);
                key.extend_from_slice(elem);
                key.extend_from_slice(postfix);
                Target::Key { key, field }
            }
        }
    }
}

/// A weight as SORT reads it: C `strtod` over the text up to its first
/// NUL, which must all be consumed (leading whitespace is skipped, and
/// empty text is 0). NaN and out-of-range results are refused, including
/// inexact subnormals; hexadecimal subnormals are taken as exact.
pub fn parse_weight(b: &[u8]) -> Option<f64> {
    let text = c_str(b);
    if text.is_empty() {
        return Some(0.0);
    }
    let start = text.iter().position(|&c| !matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))?;
    let text = &text[start..];
    let v = numeric::parse_f64(text)?;
    let subnormal = v != 0.0 && v.abs() < f64::MIN_POSITIVE;
    let unsigned = text.strip_prefix(b"-").or_else(|| text.strip_prefix(b"+")).unwrap_or(text);
    let hex = unsigned.len() > 1 && unsigned[0] == b'0' && (unsigned[1] | 0x20) == b'x';
    (!subnormal || hex).then_some(v)
}

/// The LIMIT window over `len` elements: (first index, how many), with
/// Redis's clamping (a negative offset is 0, a negative count is "all").
pub fn window(len: usize, offset: i64, count: i64) -> (usize, usize) {
    let len = len as i64;
    let mut start = offset.clamp(0, len);
    let count = count.clamp(-1, len);
    let mut end = if count < 0 { len - 1 } else { start + count - 1 };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    end = end.min(len - 1);
    if end < start {
        return (0, 0);
    }
    (start as usize, (end - start + 1) as usize)
}

/// One element with what it sorts by.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub elem: Vec<u8>,
    /// Numeric weight (0 when the BY key is missing).
    pub score: f64,
    /// ALPHA BY: the BY value, None when missing (sorts first).
    pub by: Option<Vec<u8>>,
}

impl Item {
    pub fn new(elem: Vec<u8>) -> Item {
        Item { elem, score: 0.0, by: None }
    }
}

/// How to order items.
#[derive(Debug, Clone, Copy, Default)]
pub struct Order {
    pub alpha: bool,
    /// ALPHA compares the BY values rather than the elements.
    pub by_pattern: bool,
    /// STORE: ALPHA compares whole byte strings, not C strings.
    pub binary: bool,
    pub desc: bool,
}

impl Order {
    fn text(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.binary {
            a.cmp(b)
        } else {
            c_str(a).cmp(c_str(b))
        }
    }

    fn compare(&self, a: &Item, b: &Item) -> Ordering {
        let ord = if !self.alpha {
            // Equal weights fall back to the elements' bytes, so the
            // result does not depend on the input order.
            a.score.partial_cmp(&b.score).unwrap_or(Ordering::Equal).then_with(|| a.elem.cmp(&b.elem))
        } else if self.by_pattern {
            match (&a.by, &b.by) {
                (Some(x), Some(y)) => self.text(x, y),
                (x, y) => x.is_some().cmp(&y.is_some()),
            }
        } else {
            self.text(&a.elem, &b.elem)
        };
        if self.desc {
            ord.reverse()
        } else {
            ord
        }
    }
}

/// Sort in place, stably.
pub fn sort(items: &mut [Item], order: Order) {
    items.sort_by(|a, b| order.compare(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: Target) -> (Vec<u8>, Option<Vec<u8>>) {
        match t {
            Target::Key { key, field } => (key, field.map(<[u8]>::to_vec)),
            other => panic!("not a key: {other:?}"),
        }
    }

    #[test]
    fn patterns_substitute_the_first_star_and_split_fields() {
        assert_eq!(Pattern::parse(b"#").target(b"x"), Target::Elem);
        assert_eq!(Pattern::parse(b"#\0junk").target(b"x"), Target::Elem);
        assert_eq!(Pattern::parse(b"nostar").target(b"x"), Target::Nothing);
        assert_eq!(Pattern::parse(b"a\0*").target(b"x"), Target::Nothing);
        assert_eq!(key(Pattern::parse(b"w_*").target(b"7")), (b"w_7".to_vec(), None));
        assert_eq!(key(Pattern::parse(b"*-*").target(b"e")), (b"e-*".to_vec(), None));
        assert_eq!(key(Pattern::parse(b"h_*->f").target(b"1")), (b"h_1".to_vec(), Some(b"f".to_vec())));
        assert_eq!(key(Pattern::parse(b"h_*x->f->g").target(b"1")), (b"h_1x".to_vec(), Some(b"f->g".to_vec())));
        assert_eq!(key(Pattern::parse(b"x:*->").target(b"a")), (b"x:a->".to_vec(), None));
        assert_eq!(key(Pattern::parse(b"->*").target(b"a")), (b"->a".to_vec(), None));
        // An arrow after a NUL is not seen; the key keeps the whole tail.
        assert_eq!(key(Pattern::parse(b"k*\0->f").target(b"a")), (b"ka\0->f".to_vec(), None));
        assert!(has_star(b"a*") && !has_star(b"nosort") && !has_star(b"a\0*"));
    }

    #[test]
    fn weights_read_like_strtod() {
        assert_eq!(parse_weight(b""), Some(0.0));
        assert_eq!(parse_weight(b" 5"), Some(5.0));
        assert_eq!(parse_weight(b"7\0abc"), Some(7.0));
        assert_eq!(parse_weight(b"0x10"), Some(16.0));
        assert_eq!(parse_weight(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_weight(b"0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(parse_weight(b"\x001"), Some(0.0));
        for bad in [&b"5 "[..], b"   ", b"nan", b"1e400", b"1e-400", b"1e-310", b"abc"] {
            assert_eq!(parse_weight(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn window_clamps_like_redis() {
        assert_eq!(window(5, 0, -1), (0, 5));
        assert_eq!(window(5, -10, 100), (0, 5));
        assert_eq!(window(5, 5, 10), (0, 0));
        assert_eq!(window(5, 1, 0), (0, 0));
        assert_eq!(window(5, 3, 10), (3, 2));
        assert_eq!(window(3, 2, i64::MAX), (2, 1));
        assert_eq!(window(0, 0, 1), (0, 0));
        assert_eq!(window(3, i64::MIN, i64::MIN), (0, 3));
    }

    fn elems(items: &[Item]) -> Vec<&[u8]> {
        items.iter().map(|i| &i.elem[..]).collect()
    }

    #[test]
    fn orders_numbers_with_a_byte_tiebreak_and_text_as_c_strings() {
        let mut v: Vec<Item> = [(b"b", 1.0), (b"a", 1.0), (b"c", -0.5)]
            .iter()
            .map(|(e, s)| Item { elem: e.to_vec(), score: *s, by: None })
            .collect();
        sort(&mut v, Order::default());
        assert_eq!(elems(&v), [b"c", b"a", b"b"]);
        sort(&mut v, Order { desc: true, ..Order::default() });
        assert_eq!(elems(&v), [b"b", b"a", b"c"]);

        let mut t: Vec<Item> = [&b"a\0b"[..], b"a\0a", b"a", b"B"].iter().map(|e| Item::new(e.to_vec())).collect();
        sort(&mut t, Order { alpha: true, ..Order::default() });
        assert_eq!(elems(&t), [&b"B"[..], b"a\0b", b"a\0a", b"a"]);
        sort(&mut t, Order { alpha: true, binary: true, ..Order::default() });
        assert_eq!(elems(&t), [&b"B"[..], b"a", b"a\0a", b"a\0b"]);

        let mut by: Vec<Item> = [(b"x", Some(&b"2"[..])), (b"y", None), (b"z", Some(b"1"))]
            .iter()
            .map(|(e, w)| Item { elem: e.to_vec(), score: 0.0, by: w.map(<[u8]>::to_vec) })
            .collect();
        sort(&mut by, Order { alpha: true, by_pattern: true, ..Order::default() });
        assert_eq!(elems(&by), [b"y", b"z", b"x"]);
    }
}
