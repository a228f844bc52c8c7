//! CONFIG GET and CONFIG SET over the option table: validating a value
//! against its option's kind and range, storing it where the option keeps
//! it, and Redis's error texts for each refusal.
use std::collections::HashSet;

use super::table::{self, Acc, Kind, Opt, HIDDEN, IMMUTABLE, PROTECTED};
use super::value::{parse_int, parse_mem, Value};
use super::Config;
use crate::engine::glob::glob_match;

/// Splits on single spaces like `sdssplitlen(s, " ")` (empty → no words).
pub(super) fn split_spaces(s: &[u8]) -> Vec<Vec<u8>> {
    if s.is_empty() {
        return Vec::new();
    }
    s.split(|&b| b == b' ').map(<[u8]>::to_vec).collect()
}

pub(super) fn default_args(opt: &Opt) -> Vec<Vec<u8>> {
    match opt.kind {
        Kind::Multi(_) => split_spaces(opt.default.as_bytes()),
        _ => vec![opt.default.as_bytes().to_vec()],
    }
}

/// Validates an option's arguments (exactly one unless the kind is Multi).
pub(super) fn parse_value(opt: &Opt, args: &[Vec<u8>]) -> Result<Value, String> {
    let (min, max, v) = match (&opt.kind, args) {
        (Kind::Multi(f), _) => return f(args),
        // Custom parsers check their own ranges.
        (Kind::Custom(f), [arg]) => return f(arg),
        (kind, [arg]) => parse_single(kind, arg)?,
        _ => return Err("wrong number of arguments".into()),
    };
    let n = match v {
        Value::Int(i) => i128::from(i),
        Value::Mem(m) => i128::from(m),
        _ => return Ok(v),
    };
    if n < min || n > max {
        return Err(format!("argument must be between {min} and {max} inclusive"));
    }
    Ok(v)
}

/// Parses one argument; numeric kinds also return their inclusive range.
fn parse_single(kind: &Kind, arg: &[u8]) -> Result<(i128, i128, Value), String> {
    const NOT_INT: &str = "argument couldn't be parsed into an integer";
    let none = (0, 0);
    let ((min, max), v) = match kind {
        Kind::Bool => match arg.to_ascii_lowercase().as_slice() {
            b"yes" => (none, Value::Bool(true)),
            b"no" => (none, Value::Bool(false)),
            _ => return Err("argument must be 'yes' or 'no'".into()),
        },
        Kind::Int(min, max) => {
            let v = parse_int(arg).ok_or(NOT_INT)?;
            ((i128::from(*min), i128::from(*max)), Value::Int(v))
        }
        Kind::Mem(min, max) => {
            let v = parse_mem(arg).ok_or("argument must be a memory value")?;
            ((i128::from(*min), i128::from(*max)), Value::Mem(v))
        }
        Kind::Octal(max) => {
            let text = std::str::from_utf8(arg).map_err(|_| NOT_INT)?;
            let v = i64::from_str_radix(text, 8).map_err(|_| NOT_INT)?;
            ((0, i128::from(*max)), Value::Int(v))
        }
        Kind::Enum(names, listed) => {
            let found = names.iter().find(|n| n.as_bytes().eq_ignore_ascii_case(arg));
            let name = found
                .ok_or_else(|| format!("argument(s) must be one of the following: {}", names[..*listed].join(", ")))?;
            (none, Value::Str(name.to_string()))
        }
        Kind::Str => (none, Value::Str(String::from_utf8_lossy(arg).into_owned())),
        Kind::Custom(f) => (none, f(arg)?),
        Kind::Multi(_) => unreachable!("multi-argument kinds are parsed by parse_value"),
    };
    Ok((min, max, v))
}

/// Stores a validated value where the option keeps it.
pub(super) fn store(c: &mut Config, opt: &Opt, v: Value) {
    match opt.acc {
        Acc::Field { set, .. } => set(c, v),
        Acc::Other => {
            c.other.insert(opt.name, v.show());
        }
    }
}

pub(super) fn fetch(c: &Config, opt: &Opt) -> String {
    match opt.acc {
        Acc::Field { get, .. } => get(c),
        Acc::Other => c.other.get(opt.name).cloned().unwrap_or_default(),
    }
}

impl Config {
    /// CONFIG GET: the (name, value) pairs matching any of the patterns.
    /// A pattern without `*`, `?` or `[` is looked up directly and replied
    /// under the name as given; glob patterns match option names and aliases
    /// case-insensitively. Each name appears once.
    pub fn get(&self, patterns: &[&[u8]]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for pattern in patterns {
            if !pattern.iter().any(|c| matches!(c, b'*' | b'?' | b'[')) {
                let given = String::from_utf8_lossy(pattern).into_owned();
                if let Some(opt) = table::lookup(pattern) {
                    if seen.insert(given.to_ascii_lowercase()) {
                        out.push((given, fetch(self, opt)));
                    }
                }
                continue;
            }
            for opt in table::TABLE.iter().filter(|o| o.flags & HIDDEN == 0) {
                for name in std::iter::once(&opt.name).chain(opt.aliases) {
                    if glob_match(pattern, name.as_bytes(), true) && seen.insert(name.to_string()) {
                        out.push((name.to_string(), fetch(self, opt)));
                    }
                }
            }
        }
        out
    }

    /// CONFIG SET with one or more (name, value) pairs, applied atomically:
    /// names are checked first (unknown, immutable, protected, duplicate),
    /// then every value is validated, and only then are all stored. The error
    /// is Redis's reply text without the leading `-`.
    pub fn set(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<(), String> {
        self.set_from(pairs, false)
    }

    /// CONFIG SET from a client; `local` says whether it is connected over
    /// loopback or a Unix socket, which `enable-protected-configs local`
    /// requires for protected options.
    pub fn set_from(&mut self, pairs: &[(&[u8], &[u8])], local: bool) -> Result<(), String> {
        let opts = self.check_names(pairs, local)?;
        let mut values = Vec::with_capacity(pairs.len());
        for (opt, (name, value)) in opts.iter().zip(pairs) {
            let args = match opt.kind {
                Kind::Multi(_) => split_spaces(value),
                _ => vec![value.to_vec()],
            };
            let v = parse_value(opt, &args).map_err(|e| set_failed(name, &e))?;
            values.push(v);
        }
        for (opt, v) in opts.into_iter().zip(values) {
            store(self, opt, v);
        }
        self.slow_ticks = 0;
        Ok(())
    }

    fn check_names(&self, pairs: &[(&[u8], &[u8])], local: bool) -> Result<Vec<&'static Opt>, String> {
        let mut opts = Vec::with_capacity(pairs.len());
        let mut first_err: Option<String> = None;
        for (i, (name, _)) in pairs.iter().enumerate() {
            let Some(opt) = table::lookup(name) else {
                let name = String::from_utf8_lossy(name);
                return Err(format!("ERR Unknown option or number of arguments for CONFIG SET - '{name}'"));
            };
            opts.push(opt);
            if first_err.is_some() {
                continue;
            }
            let protected = opt.flags & PROTECTED != 0 && !allows(&self.enable_protected_configs, local);
            let dup = pairs[..i].iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
            first_err = if opt.flags & IMMUTABLE != 0 {
                Some(set_failed(name, "can't set immutable config"))
            } else if protected {
                Some(set_failed(name, "can't set protected config"))
            } else if dup {
                Some(set_failed(name, "duplicate parameter"))
            } else {
                None
            };
        }
        first_err.map_or(Ok(opts), Err)
    }
}

/// Whether a `no|yes|local` setting (`enable-protected-configs`,
/// `enable-debug-command`, `enable-module-command`) lets a client through;
/// `local` admits loopback and Unix-socket clients only.
pub fn allows(setting: &str, local: bool) -> bool {
    setting == "yes" || (setting == "local" && local)
}

/// Whether a client address is local as Redis's `islocalClient` decides:
/// a Unix socket (its path), or exactly 127.0.0.1 or ::1.
pub fn is_local_addr(addr: &str) -> bool {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    addr.starts_with('/') || host == "127.0.0.1" || host == "[::1]" || host == "::1"
}

fn set_failed(name: &[u8], msg: &str) -> String {
    let name = String::from_utf8_lossy(name);
    format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {msg}")
}
