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
