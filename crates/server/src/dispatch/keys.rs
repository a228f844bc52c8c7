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
    ("fcall", 2, None),
    ("fcall_ro", 2, None),
];

/// Positions (0 = the command name) of the keys in a call of `spec` with
/// `argc` arguments, `arg(i)` giving argument i. A numkeys argument that is
/// not a positive count within the arguments yields no keys.
pub fn key_positions<'a>(spec: &CommandSpec, argc: usize, arg: impl Fn(usize) -> &'a [u8]) -> Vec<usize> {
    if spec.name == "sort" {
        return sort_keys(argc, arg);
    }
    let Some(&(_, at, dest)) = NUMKEYS.iter().find(|(name, _, _)| *name == spec.name) else {
        return spec.key_positions(argc);
    };
    let count = if at < argc { std::str::from_utf8(arg(at)).ok().and_then(|s| s.parse::<i64>().ok()) } else { None };
    match count {
        Some(n) if n > 0 && (n as usize) < argc - at => dest.into_iter().chain(at + 1..=at + n as usize).collect(),
        _ => Vec::new(),
    }
}

/// SORT's keys: the sorted key and the destination of its last STORE.
/// Options are skipped by their argument counts (LIMIT 2, GET/BY 1) and
/// anything else by none, so a STORE inside an option's arguments is not
/// one, as Redis scans them.
fn sort_keys<'a>(argc: usize, arg: impl Fn(usize) -> &'a [u8]) -> Vec<usize> {
    let mut store = None;
    let mut i = 2;
    while i < argc {
        let a = arg(i);
        if a.eq_ignore_ascii_case(b"limit") {
            i += 2;
        } else if a.eq_ignore_ascii_case(b"get") || a.eq_ignore_ascii_case(b"by") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"store") && i + 1 < argc {
            store = Some(i + 1);
        }
        i += 1;
    }
    std::iter::once(1).chain(store).collect()
}
