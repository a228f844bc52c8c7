//! Unit tests of the list engine: entry encoding round trips and a
//! randomized comparison against a plain `VecDeque<Vec<u8>>` model.
use super::*;

fn vals(l: &List) -> Vec<Vec<u8>> {
    l.iter().map(Elem::to_vec).collect()
}

#[test]
fn entries_round_trip_at_every_integer_width() {
    let mut l = List::new();
    let samples: Vec<Vec<u8>> = [
        "0",
        "127",
        "128",
        "-1",
        "-4096",
        "4095",
        "4096",
        "-4097",
        "524287",
        "-524288",
        "524288",
        "67108863",
        "-67108864",
        "67108864",
        "9223372036854775807",
        "-9223372036854775808",
        "007",
        "-0",
        "+1",
        "",
        "x",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .chain([vec![b'a'; 63], vec![b'b'; 64], vec![0xff; 70_000]])
    .collect();
    for s in &samples {
        l.push(End::Tail, s, Fill(-2));
    }
    assert_eq!(vals(&l), samples);
    for (i, s) in samples.iter().enumerate() {
        assert_eq!(l.get(i).unwrap().to_vec(), *s);
    }
}

/// A tiny deterministic PRNG so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn value(rng: &mut Rng) -> Vec<u8> {
    match rng.below(4) {
        0 => rng.below(10).to_string().into_bytes(),
        1 => (rng.next() as i64 >> rng.below(60)).to_string().into_bytes(),
        2 => vec![b'a' + rng.below(3) as u8; rng.below(5)],
        _ => vec![b'z'; rng.below(300)],
    }
}

fn step(rng: &mut Rng, l: &mut List, m: &mut VecDeque<Vec<u8>>, fill: Fill) {
    let end = if rng.below(2) == 0 { End::Head } else { End::Tail };
    match rng.below(9) {
        0..=2 => {
            let v = value(rng);
            l.push(end, &v, fill);
            match end {
                End::Head => m.push_front(v),
                End::Tail => m.push_back(v),
            }
        }
        3 => {
            let want = match end {
                End::Head => m.pop_front(),
                End::Tail => m.pop_back(),
            };
            assert_eq!(l.pop(end), want);
        }
        4 if !m.is_empty() => {
            let i = rng.below(m.len());
            let v = value(rng);
            l.set(i, &v);
            m[i] = v;
        }
        5 => {
            let (pivot, v, after) = (value(rng), value(rng), rng.below(2) == 0);
            let pos = m.iter().position(|x| *x == pivot);
            assert_eq!(l.insert(&pivot, after, &v, fill), pos.is_some());
            if let Some(p) = pos {
                m.insert(p + after as usize, v);
            }
        }
        6 => {
            let (v, count) = (value(rng), rng.below(5) as i64 - 2);
            let mut idx: Vec<usize> = (0..m.len()).filter(|&i| m[i] == v).collect();
            if count < 0 {
                idx.reverse();
            }
            if count != 0 {
                idx.truncate(count.unsigned_abs() as usize);
            }
            idx.sort_unstable();
            for &i in idx.iter().rev() {
                m.remove(i);
            }
            assert_eq!(l.remove(&v, count), idx.len());
        }
        7 if m.len() > 2 && rng.below(10) == 0 => {
            let s = rng.below(m.len() / 3 + 1);
            let e = m.len() - 1 - rng.below(m.len() / 3 + 1);
            if s <= e {
                l.trim(s, e);
                *m = m.iter().skip(s).take(e - s + 1).cloned().collect();
            }
        }
        _ => {
            let i = rng.below(m.len() + 1);
            assert_eq!(l.get(i).map(Elem::to_vec), m.get(i).cloned());
        }
    }
}

#[test]
fn random_operations_match_a_model() {
    for (seed, fill) in [(1, -1), (2, -2), (3, 4), (4, 1), (5, -5)] {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed);
        let (mut l, mut m) = (List::new(), VecDeque::new());
        for i in 0..6000 {
            step(&mut rng, &mut l, &mut m, Fill(fill));
            assert_eq!(l.len(), m.len(), "seed {seed} step {i}");
            if i % 500 == 0 {
                assert_eq!(vals(&l), m.iter().cloned().collect::<Vec<_>>(), "seed {seed} step {i}");
                let mut rev = Vec::new();
                l.for_each_rev(|idx, e| {
                    rev.push((idx, e.to_vec()));
                    true
                });
                rev.reverse();
                assert_eq!(rev, m.iter().cloned().enumerate().collect::<Vec<_>>());
            }
        }
        assert_eq!(vals(&l), m.iter().cloned().collect::<Vec<_>>());
    }
}

#[test]
fn queue_use_does_not_grow_a_single_node() {
    let mut l = List::new();
    for i in 0..100_000 {
        l.push(End::Tail, format!("v{i}").as_bytes(), Fill(-2));
        if i >= 10 {
            l.pop(End::Head);
        }
    }
    assert_eq!(l.len(), 10);
    assert!(l.heap_bytes() < 4096, "{} bytes", l.heap_bytes());
}
