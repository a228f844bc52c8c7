//! Where a command's keys are in its arguments. Most commands describe them
//! with the spec's (first, last, step) triple; the ones Redis flags
//! `movablekeys` count their keys with a `numkeys` argument, read here from
//! the arguments themselves. WATCH invalidation, blocked-client wake-ups and
//! `COMMAND GETKEYS` all ask this one place.
use super::registry::CommandSpec;

/// Commands whose keys are counted by a numkeys argument:
/// (name, position of numkeys, position of a fixed destination key).
const NUMKEYS: &[(&str, usize, Option<usize>)] = &[
    ("zunion", 1, None),
    ("zinter", 1, None),
    ("zdiff", 1, None),
    ("zintercard", 1, None),
    ("sintercard", 1, None),
    ("lmpop", 1, None),
    ("zmpop", 1, None),
    ("blmpop", 2, None),
    ("bzmpop", 2, None),
    ("zunionstore", 2, Some(1)),
    ("zinterstore", 2, Some(1)),
    ("zdiffstore", 2, Some(1)),
    ("eval", 2, None),
    ("evalsha", 2, None),
    ("eval_ro", 2, None),
    ("evalsha_ro", 2, None),
];

/// Positions (0 = the command name) of the keys in a call of `spec` with
/// `argc` arguments, `arg(i)` giving argument i. A numkeys argument that is
/// not a positive count within the arguments yields no keys.
pub fn key_positions<'a>(spec: &CommandSpec, argc: usize, arg: impl Fn(usize) -> &'a [u8]) -> Vec<usize> {
    let Some(&(_, at, dest)) = NUMKEYS.iter().find(|(name, _, _)| *name == spec.name) else {
        return spec.key_positions(argc);
    };
    let count = if at < argc { std::str::from_utf8(arg(at)).ok().and_then(|s| s.parse::<i64>().ok()) } else { None };
    match count {
        Some(n) if n > 0 && (n as usize) < argc - at => dest.into_iter().chain(at + 1..=at + n as usize).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(words: &[&str]) -> Vec<usize> {
        let reg = crate::registry();
        let id = reg.find(words[0].as_bytes()).expect("known command");
        key_positions(reg.spec(id), words.len(), |i| words[i].as_bytes())
    }

    #[test]
    fn numkeys_commands() {
        assert_eq!(keys_of(&["zunion", "2", "a", "b", "withscores"]), vec![2, 3]);
        assert_eq!(keys_of(&["zunionstore", "d", "2", "a", "b", "weights", "1", "2"]), vec![1, 3, 4]);
        assert_eq!(keys_of(&["blmpop", "0", "2", "a", "b", "left"]), vec![3, 4]);
        assert_eq!(keys_of(&["lmpop", "1", "a", "left"]), vec![2]);
    }

    #[test]
    fn bad_counts_give_no_keys() {
        assert!(keys_of(&["zunion", "0", "a"]).is_empty());
        assert!(keys_of(&["zunion", "5", "a"]).is_empty());
        assert!(keys_of(&["zunion", "x", "a"]).is_empty());
        assert!(keys_of(&["lmpop", "-1", "a", "left"]).is_empty());
    }

    #[test]
    fn fixed_keys_come_from_the_spec() {
        assert_eq!(keys_of(&["mset", "a", "1", "b", "2"]), vec![1, 3]);
        assert_eq!(keys_of(&["get", "a"]), vec![1]);
    }
}
