//! Where a command's keys are in its arguments, as Redis 7.0 finds them:
//! from the command's key specs (`keyspecs`), falling back to a per-command
//! key finder for the commands whose specs cannot say (SORT's STORE,
//! MIGRATE's KEYS, a numkeys of 0, SET's GET...). WATCH invalidation,
//! blocked-client wake-ups and `COMMAND GETKEYS` all ask this one place.
use super::flags::MOVABLEKEYS;
use super::keyspecs::key_flags::*;
use super::keyspecs::{self, Begin, Find, KeySpec, Meta};
use super::registry::CommandSpec;
use crate::server::acl::KeyFlagsFn;

/// A key's position in argv (0 = the command name) and its key spec flags.
pub type KeyRef = (usize, u32);

/// Positions (0 = the command name) of the keys in a call of `spec` with
/// `argc` arguments, `arg(i)` giving argument i. Nothing when the arguments
/// do not parse (a numkeys that is not a count within the arguments).
pub fn key_positions<'a>(spec: &CommandSpec, argc: usize, arg: impl Fn(usize) -> &'a [u8]) -> Vec<usize> {
    // A command without movable keys has only fixed index/range specs, which
    // its (first, last, step) triple states exactly (Redis's legacy range);
    // only movable ones need their specs, and those are all top-level.
    if spec.flags & MOVABLEKEYS == 0 {
        return spec.key_positions(argc);
    }
    keys_with_flags(spec, keyspecs::meta(spec.name), argc, arg).into_iter().map(|(pos, _)| pos).collect()
}

/// Whether the command has its own key finder (its specs can't say all).
pub fn has_finder(spec: &CommandSpec) -> bool {
    finder(spec).is_some()
}

/// Whether the command can have keys at all (`COMMAND GETKEYS` refuses the
/// others).
pub fn has_keys(spec: &CommandSpec, meta: Option<&Meta>) -> bool {
    finder(spec).is_some() || meta.is_some_and(Meta::has_real_keys)
}

/// The keys of a call with their flags: from the key specs when they are
/// complete and their flags fixed, else from the command's own finder.
/// Empty when the arguments do not parse.
pub fn keys_with_flags<'a>(
    spec: &CommandSpec,
    meta: Option<&Meta>,
    argc: usize,
    arg: impl Fn(usize) -> &'a [u8],
) -> Vec<KeyRef> {
    let specs = meta.map_or(&[][..], |m| m.keys);
    let variable = specs.iter().any(|k| k.flags & VARIABLE_FLAGS != 0);
    if meta.is_some_and(Meta::has_real_keys) && !variable {
        if let Some(keys) = from_specs(specs, argc, &arg) {
            return keys;
        }
    }
    match finder(spec) {
        Some(find) => find(argc, &arg),
        None => Vec::new(),
    }
}

/// Keys by the specs alone; None when a spec cannot locate its keys in
/// these arguments (or is incomplete), so the command's finder decides.
fn from_specs<'a>(specs: &[KeySpec], argc: usize, arg: &ArgFn<'a, '_>) -> Option<Vec<KeyRef>> {
    let mut keys = Vec::new();
    let argc = argc as i64;
    for ks in specs.iter().filter(|k| k.flags & NOT_KEY == 0) {
        let first = match ks.begin {
            Begin::Index(pos) => pos as i64,
            Begin::Keyword(word, from) => match find_keyword(word, from as i64, argc, arg) {
                Some(first) => first,
                None => continue,
            },
            Begin::Unknown => return None,
        };
        let (first, last, step) = match ks.find {
            Find::Range(lastkey, step, limit) => {
                let (lastkey, limit) = (lastkey as i64, limit as i64);
                let last = if lastkey >= 0 {
                    first + lastkey
                } else if limit == 0 {
                    argc + lastkey
                } else {
                    first + ((argc - first) / limit + lastkey)
                };
                (first, last, step as i64)
            }
            Find::Keynum(numidx, firstkey, step) => {
                let at = first + numidx as i64;
                if numidx as i64 >= argc || at >= argc {
                    return None;
                }
                let n = std::str::from_utf8(arg(at as usize)).ok().and_then(parse_count)?;
                let first = first + firstkey as i64;
                (first, first + n - 1, step as i64)
            }
            Find::Unknown => return None,
        };
        if last >= argc || last < first || first >= argc {
            return None;
        }
        keys.extend((first..=last).step_by(step.max(1) as usize).map(|i| (i as usize, ks.flags)));
        if ks.flags & INCOMPLETE != 0 {
            return None;
        }
    }
    Some(keys)
}

/// Argument index just after `word`, scanning from `from` towards the end
/// (or, negative, from the end backwards), never looking at the bound
/// itself: the last argument going forward, argument 1 going backward.
fn find_keyword<'a>(word: &str, from: i64, argc: i64, arg: &ArgFn<'a, '_>) -> Option<i64> {
    let (start, end) = if from > 0 { (from, argc - 1) } else { (argc + from, 1) };
    let mut i = start;
    while i != end {
        if i >= argc || i < 1 {
            break;
        }
        if arg(i as usize).eq_ignore_ascii_case(word.as_bytes()) {
            return Some(i + 1);
        }
        i += if start <= end { 1 } else { -1 };
    }
    None
}

/// A strict non-negative integer, as a numkeys argument must be: digits
/// only, no sign, no leading zero.
fn parse_count(s: &str) -> Option<i64> {
    let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits && (s == "0" || !s.starts_with('0'))).then(|| s.parse().ok()).flatten()
}

/// A command's own key finder, for what its specs leave open.
type Finder = for<'a, 'b> fn(usize, &ArgFn<'a, 'b>) -> Vec<KeyRef>;

/// Argument i of the call being searched.
type ArgFn<'a, 'b> = dyn Fn(usize) -> &'a [u8] + 'b;

fn finder(spec: &CommandSpec) -> Option<Finder> {
    Some(match spec.name {
        "zunion" | "zinter" | "zdiff" | "zintercard" | "sintercard" | "lmpop" | "zmpop" => {
            |argc, arg| counted(argc, arg, 1, None)
        }
        "blmpop" | "bzmpop" | "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" => {
            |argc, arg| counted(argc, arg, 2, None)
        }
        "zunionstore" | "zinterstore" | "zdiffstore" => |argc, arg| counted(argc, arg, 2, Some(1)),
        "sort" => sort_keys,
        "sort_ro" => |_, _| vec![(1, RO | ACCESS)],
        "migrate" => migrate_keys,
        "georadius" | "georadiusbymember" => georadius_keys,
        "xread" | "xreadgroup" => xread_keys,
        "set" => set_keys,
        "bitfield" => bitfield_keys,
        _ => return None,
    })
}

/// Keys counted by the argument at `at` and following it, then `store`.
/// Like Redis's C parser, a count that is not a number reads as 0.
fn counted(argc: usize, arg: &ArgFn<'_, '_>, at: usize, store: Option<usize>) -> Vec<KeyRef> {
    let first = at + 1;
    if first > argc {
        return Vec::new();
    }
    let n = c_atoi(arg(at));
    if n < 1 || n > (argc - first) as i64 {
        return Vec::new();
    }
    (first..first + n as usize).chain(store).map(|p| (p, 0)).collect()
}

/// C's atoi: leading blanks, a sign, then digits up to the first non-digit.
fn c_atoi(b: &[u8]) -> i64 {
    let s = std::str::from_utf8(b).unwrap_or("").trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| n.saturating_mul(10).saturating_add((d - b'0') as i64));
    if neg {
        -n
    } else {
        n
    }
}

fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// SORT: the sorted key and the destination of its last STORE. Options are
/// skipped by their argument counts (LIMIT 2, GET/BY 1), so a STORE inside
/// an option's arguments is not one.
fn sort_keys(argc: usize, arg: &ArgFn<'_, '_>) -> Vec<KeyRef> {
    let mut store = None;
    let mut i = 2;
    while i < argc {
        let a = arg(i);
        if is(a, "limit") {
            i += 2;
        } else if is(a, "get") || is(a, "by") {
            i += 1;
        } else if is(a, "store") && i + 1 < argc {
            store = Some((i + 1, OW | UPDATE));
        }
        i += 1;
    }
    std::iter::once((1, RO | ACCESS)).chain(store).collect()
}

/// MIGRATE: argument 3, or everything after KEYS when the key argument is
/// empty (KEYS with a key is a syntax error: no keys).
fn migrate_keys(argc: usize, arg: &ArgFn<'_, '_>) -> Vec<KeyRef> {
    let (mut first, mut num) = (3, 1);
    let mut i = 6;
    while argc > 6 && i < argc {
        let a = arg(i);
        if is(a, "keys") {
            if arg(3).is_empty() {
                (first, num) = (i + 1, argc - i - 1);
            } else {
                num = 0;
            }
            break;
        }
        if is(a, "auth") {
            i += 1;
        } else if is(a, "auth2") {
            i += 2;
        }
        i += 1;
    }
    (first..first + num).map(|p| (p, RW | ACCESS | DELETE)).collect()
}

/// GEORADIUS[BYMEMBER]: the key and the last STORE/STOREDIST destination.
fn georadius_keys(argc: usize, arg: &ArgFn<'_, '_>) -> Vec<KeyRef> {
    let mut stored = None;
    let mut i = 5;
    while i < argc {
        if (is(arg(i), "store") || is(arg(i), "storedist")) && i + 1 < argc {
            stored = Some((i + 1, 0));
            i += 1;
        }
        i += 1;
    }
    std::iter::once((1, 0)).chain(stored).collect()
}

/// XREAD[GROUP]: the first half of what follows STREAMS.
fn xread_keys(argc: usize, arg: &ArgFn<'_, '_>) -> Vec<KeyRef> {
    let mut i = 1;
    while i < argc {
        let a = arg(i);
        if is(a, "block") || is(a, "count") {
            i += 1;
        } else if is(a, "group") {
            i += 2;
        } else if is(a, "streams") {
            let n = argc - i - 1;
            if n == 0 || !n.is_multiple_of(2) {
                return Vec::new();
            }
            return (i + 1..i + 1 + n / 2).map(|p| (p, 0)).collect();
        } else if !is(a, "noack") {
            break;
        }
        i += 1;
    }
    Vec::new()
}

/// The flags of the one key (argument 1) of a command whose key spec says
/// VARIABLE_FLAGS: the ACL check asks this instead of the finder, which
/// would allocate.
pub fn variable_flags(spec: &CommandSpec) -> Option<KeyFlagsFn> {
    match spec.name {
        "set" => Some(set_flags),
        "bitfield" => Some(bitfield_flags),
        _ => None,
    }
}

fn set_keys(argc: usize, arg: &ArgFn<'_, '_>) -> Vec<KeyRef> {
    vec![(1, set_flags(argc, arg))]
}

/// SET: read and written when GET is among the options, else overwritten.
fn set_flags(argc: usize, arg: &ArgFn<'_, '_>) -> u32 {
    let get = (3..argc).any(|i| is(arg(i), "get"));
    if get {
        RW | ACCESS | UPDATE
    } else {
        OW | UPDATE
    }
}

fn bitfield_keys(argc: usize, arg: &ArgFn<'_, '_>) -> Vec<KeyRef> {
    vec![(1, bitfield_flags(argc, arg))]
}

/// BITFIELD: read-only while every operation parses as a GET or OVERFLOW.
fn bitfield_flags(argc: usize, arg: &ArgFn<'_, '_>) -> u32 {
    let mut readonly = true;
    let mut i = 2;
    while i < argc {
        let left = argc - i - 1;
        let a = arg(i);
        if is(a, "get") && left >= 2 {
            i += 2;
        } else if is(a, "overflow") && left >= 1 {
            i += 1;
        } else {
            // SET/INCRBY writes; anything else is a syntax error, taken as a write.
            readonly = false;
            break;
        }
        i += 1;
    }
    if readonly {
        RO | ACCESS
    } else {
        RW | ACCESS | UPDATE
    }
}
