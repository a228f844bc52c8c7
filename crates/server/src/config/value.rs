//! Parsing and printing of option values: the generic kinds (bool, integer,
//! memory size, enum, string) and the special multi-word options (save,
//! bind, client-output-buffer-limit, notify-keyspace-events, ...).
//! Error texts are those of redis-server 7.0.
use std::path::PathBuf;

use super::{Appendfsync, BufferLimit, LogLevel, MemOrPercent};

/// A parsed option value, before it is stored into a [`super::Config`] field.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Value {
    Bool(bool),
    Int(i64),
    Mem(u64),
    Str(String),
    Save(Vec<(u64, u64)>),
    Words(Vec<String>),
    /// (class index: 0 normal, 1 replica, 2 pubsub; limits)
    Limits(Vec<(usize, BufferLimit)>),
    Flags(u32),
}

impl Value {
    /// The CONFIG GET text of a value kept in `Config::other`.
    pub(super) fn show(&self) -> String {
        match self {
            Value::Bool(b) => yes_no(*b).to_string(),
            Value::Int(i) => i.to_string(),
            Value::Mem(m) => m.to_string(),
            Value::Str(s) => s.clone(),
            Value::Words(w) => w.join(" "),
            Value::Save(s) => s.show(),
            Value::Limits(_) | Value::Flags(_) => String::new(),
        }
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Conversion between a typed [`super::Config`] field and [`Value`].
pub(super) trait Field: Sized {
    /// Builds the field from a value already validated by the option's kind.
    fn from_value(v: Value) -> Self;
    /// The CONFIG GET text.
    fn show(&self) -> String;
}

impl Field for bool {
    fn from_value(v: Value) -> Self {
        matches!(v, Value::Bool(true))
    }
    fn show(&self) -> String {
        yes_no(*self).to_string()
    }
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            fn from_value(v: Value) -> Self {
                match v {
                    Value::Int(i) => i as $t,
                    Value::Mem(m) => m as $t,
                    _ => 0,
                }
            }
            fn show(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
int_field!(u16, u32, u64, usize, i64);

impl Field for String {
    fn from_value(v: Value) -> Self {
        match v {
            Value::Str(s) => s,
            other => other.show(),
        }
    }
    fn show(&self) -> String {
        self.clone()
    }
}

impl Field for PathBuf {
    fn from_value(v: Value) -> Self {
        PathBuf::from(String::from_value(v))
    }
    fn show(&self) -> String {
        self.display().to_string()
    }
}

impl Field for Option<Vec<u8>> {
    fn from_value(v: Value) -> Self {
        Some(String::from_value(v).into_bytes()).filter(|s| !s.is_empty())
    }
    fn show(&self) -> String {
        self.as_deref().map(|p| String::from_utf8_lossy(p).into_owned()).unwrap_or_default()
    }
}

impl Field for Vec<String> {
    fn from_value(v: Value) -> Self {
        match v {
            Value::Words(w) => w,
            _ => Vec::new(),
        }
    }
    fn show(&self) -> String {
        self.join(" ")
    }
}

impl Field for Vec<(u64, u64)> {
    fn from_value(v: Value) -> Self {
        match v {
            Value::Save(s) => s,
            _ => Vec::new(),
        }
    }
    fn show(&self) -> String {
        let parts: Vec<String> = self.iter().map(|(s, c)| format!("{s} {c}")).collect();
        parts.join(" ")
    }
}

impl Field for MemOrPercent {
    fn from_value(v: Value) -> Self {
        match v {
            Value::Mem(m) => MemOrPercent { value: m, percent: false },
            Value::Str(s) => {
                let n = s.strip_suffix('%').and_then(|d| d.parse().ok()).unwrap_or(0);
                MemOrPercent { value: n, percent: true }
            }
            _ => MemOrPercent::default(),
        }
    }
    fn show(&self) -> String {
        if self.percent {
            format!("{}%", self.value)
        } else {
            self.value.to_string()
        }
    }
}

macro_rules! enum_field {
    ($t:ty) => {
        impl Field for $t {
            fn from_value(v: Value) -> Self {
                let name = String::from_value(v);
                let i = <$t>::NAMES.iter().position(|n| *n == name).unwrap_or(0);
                <$t>::ALL[i]
            }
            fn show(&self) -> String {
                <$t>::NAMES[*self as usize].to_string()
            }
        }
    };
}
enum_field!(LogLevel);
enum_field!(Appendfsync);

/// Redis `string2ll`: optional `-`, digits, no leading zeros, no spaces.
pub(super) fn parse_int(s: &[u8]) -> Option<i64> {
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    let ok = !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) && (digits[0] != b'0' || digits.len() == 1);
    if !ok || s == b"-0" {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Redis `memtoull`: digits followed by an optional case-insensitive unit
/// (`b`, `k`, `kb`, `m`, `mb`, `g`, `gb`; `k` = 1000, `kb` = 1024).
/// A memory size, or a percentage of `maxmemory` written `N%` (up to 100),
/// kept as written (maxmemory-clients).
pub(super) fn parse_mem_or_percent(s: &[u8]) -> Result<Value, String> {
    if let Some(digits) = s.strip_suffix(b"%").filter(|d| !d.is_empty()) {
        let n: i64 = std::str::from_utf8(digits)
            .ok()
            .and_then(|t| t.parse().ok())
            .filter(|&n| n >= 0)
            .ok_or("argument must be a memory or percent value")?;
        if n > 100 {
            return Err("percentage argument must be less or equal to 100".into());
        }
        return Ok(Value::Str(format!("{n}%")));
    }
    parse_mem(s).map(Value::Mem).ok_or_else(|| "argument must be a memory or percent value".into())
}

pub(super) fn parse_mem(s: &[u8]) -> Option<u64> {
    let split = s.iter().position(|c| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mul: u64 = match unit.to_ascii_lowercase().as_slice() {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1024,
        b"m" => 1000 * 1000,
        b"mb" => 1024 * 1024,
        b"g" => 1000 * 1000 * 1000,
        b"gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if num.is_empty() {
        return Some(0);
    }
    let n: u64 = std::str::from_utf8(num).ok()?.parse().ok()?;
    n.checked_mul(mul)
}

/// `save <seconds> <changes> [...]`; no argument or a single `""` clears.
pub(super) fn parse_save(args: &[Vec<u8>]) -> Result<Value, String> {
    const BAD: &str = "Invalid save parameters";
    if args.is_empty() || (args.len() == 1 && args[0].is_empty()) {
        return Ok(Value::Save(Vec::new()));
    }
    if args.len() % 2 == 1 {
        return Err(BAD.into());
    }
    let num = |a: &[u8]| -> Option<i64> { std::str::from_utf8(a).ok()?.parse().ok() };
    let mut out = Vec::new();
    for pair in args.chunks(2) {
        match (num(&pair[0]), num(&pair[1])) {
            (Some(secs), Some(changes)) if secs >= 1 && changes >= 0 => out.push((secs as u64, changes as u64)),
            _ => return Err(BAD.into()),
        }
    }
    Ok(Value::Save(out))
}

/// `bind addr...` (a leading `-` marks an optional address).
pub(super) fn parse_bind(args: &[Vec<u8>]) -> Result<Value, String> {
    let addrs: Vec<String> =
        args.iter().filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    if addrs.len() > 16 {
        return Err("Too many bind addresses specified.".into());
    }
    Ok(Value::Words(addrs))
}

/// `client-output-buffer-limit <class> <hard> <soft> <soft-seconds> [...]`.
pub(super) fn parse_limits(args: &[Vec<u8>]) -> Result<Value, String> {
    if args.is_empty() || !args.chunks_exact(4).remainder().is_empty() {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut out = Vec::new();
    for group in args.chunks(4) {
        let class = match group[0].to_ascii_lowercase().as_slice() {
            b"normal" => 0,
            b"replica" | b"slave" => 1,
            b"pubsub" => 2,
            _ => return Err("Invalid client class specified in buffer limit configuration.".into()),
        };
        let secs = std::str::from_utf8(&group[3]).ok().and_then(|s| s.parse::<i64>().ok());
        match (parse_mem(&group[1]), parse_mem(&group[2]), secs) {
            (Some(hard), Some(soft), Some(secs)) if secs >= 0 => out.push((class, (hard, soft, secs as u64))),
            _ => return Err("Error in hard, soft or soft_seconds setting in buffer limit configuration.".into()),
        }
    }
    Ok(Value::Limits(out))
}

/// The CONFIG GET text of the three buffer-limit classes.
pub(super) fn show_limits(classes: [&BufferLimit; 3]) -> String {
    let names = ["normal", "slave", "pubsub"];
    let parts: Vec<String> = names.iter().zip(classes).map(|(n, (h, s, t))| format!("{n} {h} {s} {t}")).collect();
    parts.join(" ")
}

/// Keyspace-notification class letters and their bits, in print order.
const NOTIFY_LETTERS: [(u8, u32); 14] = [
    (b'g', super::NOTIFY_GENERIC),
    (b'$', super::NOTIFY_STRING),
    (b'l', super::NOTIFY_LIST),
    (b's', super::NOTIFY_SET),
    (b'h', super::NOTIFY_HASH),
    (b'z', super::NOTIFY_ZSET),
    (b'x', super::NOTIFY_EXPIRED),
    (b'e', super::NOTIFY_EVICTED),
    (b't', super::NOTIFY_STREAM),
    (b'd', super::NOTIFY_MODULE),
    (b'K', super::NOTIFY_KEYSPACE),
    (b'E', super::NOTIFY_KEYEVENT),
    (b'm', super::NOTIFY_KEY_MISS),
    (b'n', super::NOTIFY_NEW),
];

/// `notify-keyspace-events` class string to flags.
pub(super) fn parse_notify(arg: &[u8]) -> Result<Value, String> {
    let mut flags = 0;
    for &c in arg {
        flags |= match c {
            b'A' => super::NOTIFY_ALL,
            _ => match NOTIFY_LETTERS.iter().find(|(l, _)| *l == c) {
                Some((_, bit)) => *bit,
                None => return Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into()),
            },
        };
    }
    Ok(Value::Flags(flags))
}

/// Flags back to the canonical class string (`AKE`, `gx`, ...).
pub(super) fn show_notify(flags: u32) -> String {
    let mut out = String::new();
    let all = flags & super::NOTIFY_ALL == super::NOTIFY_ALL;
    if all {
        out.push('A');
    }
    for (letter, bit) in NOTIFY_LETTERS {
        let class_bit = bit & super::NOTIFY_ALL != 0;
        if flags & bit != 0 && !(all && class_bit) {
            out.push(letter as char);
        }
    }
    out
}

/// Words from a fixed vocabulary (`shutdown-on-sigint save now`, ...); no
/// word at all (`--shutdown-on-sigint` without a value) is refused too, as
/// Redis's multi-argument enums do.
pub(super) fn words_from(args: &[Vec<u8>], allowed: &[&str]) -> Result<Value, String> {
    let words: Vec<String> = args.iter().map(|a| String::from_utf8_lossy(a).to_ascii_lowercase()).collect();
    if words.is_empty() || words.iter().any(|w| !allowed.contains(&w.as_str())) {
        return Err(format!("argument(s) must be one of the following: {}", allowed.join(", ")));
    }
    Ok(Value::Words(words))
}

/// `oom-score-adj-values <replica> <master> <bg-child>`.
pub(super) fn parse_oom_values(args: &[Vec<u8>]) -> Result<Value, String> {
    let vals: Option<Vec<i64>> = args.iter().map(|a| parse_int(a)).collect();
    match vals {
        Some(v) if v.len() == 3 && v.iter().all(|x| (-2000..=2000).contains(x)) => {
            Ok(Value::Words(v.iter().map(i64::to_string).collect()))
        }
        _ => Err("Invalid oom-score-adj-values, elements must be between -2000 and 2000.".into()),
    }
}

/// `latency-tracking-info-percentiles <p>...`, each in 0..=100.
pub(super) fn parse_percentiles(args: &[Vec<u8>]) -> Result<Value, String> {
    let mut out = Vec::new();
    for a in args.iter().filter(|a| !a.is_empty()) {
        let p: f64 = std::str::from_utf8(a)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("latency-tracking-info-percentiles should be a number")?;
        if !(0.0..=100.0).contains(&p) {
            return Err("latency-tracking-info-percentiles should be between 0.0 and 100.0".into());
        }
        // Shown as Redis prints a double (`0`, `50`, `99.9`), not as typed.
        out.push(p.to_string());
    }
    Ok(Value::Words(out))
}

/// `replicaof`: only the "no replication" forms are accepted by Volley.
pub(super) fn parse_replicaof(args: &[Vec<u8>]) -> Result<Value, String> {
    if args.is_empty() {
        return Ok(Value::Words(Vec::new()));
    }
    // No arguments: the table's default (a primary).
    if args.is_empty() {
        return Ok(Value::Words(Vec::new()));
    }
    if args.len() != 2 {
        return Err("wrong number of arguments".into());
    }
    if args[0].eq_ignore_ascii_case(b"no") && args[1].eq_ignore_ascii_case(b"one") {
        return Ok(Value::Words(Vec::new()));
    }
    let port = std::str::from_utf8(&args[1]).ok().and_then(|p| p.parse::<u16>().ok()).ok_or("Invalid master port")?;
    Ok(Value::Words(vec![String::from_utf8_lossy(&args[0]).into_owned(), port.to_string()]))
}
