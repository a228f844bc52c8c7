//! Conversions between Lua values and RESP, with Redis 7.0's rules.
//!
//! Lua → reply: numbers truncate to integers, `false` is null (or `#f` after
//! `redis.setresp(3)`), tables stop at the first nil, `{err=}`/`{ok=}` are
//! error/status replies and `{double=}`, `{map=}`, `{set=}`,
//! `{big_number=}`, `{verbatim_string=}` are their RESP3 types.
//! (Reply → Lua, the reverse, is on the hot path: see `stack.rs`.)
use mlua::{Table, Value};

use crate::dispatch::Reply;
use crate::engine::numeric;

/// Deepest table nesting converted (Redis stops at its Lua stack limit).
const MAX_DEPTH: usize = 1000;

/// Write the script's return value as the reply.
pub fn write_reply(r: &mut Reply, v: &Value, lua_resp3: bool) {
    write_value(r, v, lua_resp3, 0);
}

fn write_value(r: &mut Reply, v: &Value, lua_resp3: bool, depth: usize) {
    match v {
        Value::String(s) => r.bulk(&s.as_bytes()),
        Value::Number(n) => r.int(lua_to_i64(*n)),
        Value::Integer(i) => r.int(*i as i64),
        Value::Boolean(b) if lua_resp3 => r.boolean(*b),
        Value::Boolean(true) => r.int(1),
        Value::Table(_) if depth >= MAX_DEPTH => r.error("ERR reached lua stack limit"),
        Value::Table(t) => write_table(r, t, lua_resp3, depth),
        _ => r.null(),
    }
}

/// `(long long)` of a double as x86 computes it: out of range and NaN give
/// the minimum, which is what redis-server replies.
fn lua_to_i64(n: f64) -> i64 {
    if n.is_nan() || n >= 9_223_372_036_854_775_808.0 || n < -9_223_372_036_854_775_808.0 {
        i64::MIN
    } else {
        n as i64
    }
}

fn field(t: &Table, name: &str) -> Value {
    t.raw_get::<Value>(name).unwrap_or(Value::Nil)
}

fn write_table(r: &mut Reply, t: &Table, lua_resp3: bool, depth: usize) {
    if let Value::String(e) = field(t, "err") {
        return r.error_bytes(&e.as_bytes());
    }
    if let Value::String(s) = field(t, "ok") {
        let line: Vec<u8> = s.as_bytes().iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }).collect();
        return r.simple(&line);
    }
    match field(t, "double") {
        Value::Number(d) if d.is_nan() => return nan(r, d.is_sign_negative()),
        Value::Number(d) => return r.double(d),
        Value::Integer(i) => return r.double(i as f64),
        _ => {}
    }
    if let Value::String(s) = field(t, "big_number") {
        return big_number(r, &s.as_bytes());
    }
    if let Value::Table(m) = field(t, "map") {
        let pairs: Vec<(Value, Value)> = m.pairs::<Value, Value>().filter_map(Result::ok).collect();
        r.map(pairs.len());
        for (k, v) in &pairs {
            write_value(r, k, lua_resp3, depth + 1);
            write_value(r, v, lua_resp3, depth + 1);
        }
        return;
    }
    if let Value::Table(s) = field(t, "set") {
        let members: Vec<Value> = s.pairs::<Value, Value>().filter_map(|p| p.ok().map(|(k, _)| k)).collect();
        r.set(members.len());
        for m in &members {
            write_value(r, m, lua_resp3, depth + 1);
        }
        return;
    }
    if let Value::Table(v) = field(t, "verbatim_string") {
        if let (Value::String(fmt), Value::String(s)) = (field(&v, "format"), field(&v, "string")) {
            return verbatim(r, &fmt.as_bytes(), &s.as_bytes());
        }
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(v),
        }
    }
    r.array(items.len());
    for v in &items {
        write_value(r, v, lua_resp3, depth + 1);
    }
}

/// NaN as glibc prints it (`0/0` is negative on x86: `-nan`).
fn nan(r: &mut Reply, negative: bool) {
    let text: &[u8] = if negative { b"-nan" } else { b"nan" };
    if r.resp3() {
        r.raw(b",");
        r.raw(text);
        r.raw(b"\r\n");
    } else {
        r.bulk(text);
    }
}

fn big_number(r: &mut Reply, digits: &[u8]) {
    if r.resp3() {
        r.raw(b"(");
        r.raw(digits);
        r.raw(b"\r\n");
    } else {
        r.bulk(digits);
    }
}

fn verbatim(r: &mut Reply, fmt: &[u8], s: &[u8]) {
    if !r.resp3() {
        return r.bulk(s);
    }
    let mut head = Vec::with_capacity(16);
    head.push(b'=');
    numeric::format_i64(&mut head, (s.len() + 4) as i64);
    head.extend_from_slice(b"\r\n");
    r.raw(&head);
    r.raw(&fmt[..fmt.len().min(3)]);
    r.raw(b":");
    r.raw(s);
    r.raw(b"\r\n");
}

/// The error reply for a failed run: the error table's `err` text, plus
/// where it happened (`script: <sha>, on @user_script:<line>.`).
pub fn script_error(err: &Value, sha: &str, killed: bool) -> Vec<u8> {
    let (mut msg, line) = match err {
        Value::Table(t) => {
            let msg = match field(t, "err") {
                Value::String(s) => s.as_bytes().to_vec(),
                _ => b"ERR unknown error".to_vec(),
            };
            let line = match (field(t, "source"), field(t, "line")) {
                (Value::String(src), Value::Number(l)) => Some((src.to_string_lossy(), l as i64)),
                (Value::String(src), Value::Integer(l)) => Some((src.to_string_lossy(), l as i64)),
                _ => None,
            };
            (msg, line)
        }
        Value::String(s) => ([b"ERR ".as_slice(), &s.as_bytes()].concat(), None),
        other => (format!("ERR {other:?}").into_bytes(), None),
    };
    if killed {
        msg = b"ERR Script killed by user with SCRIPT KILL...".to_vec();
    }
    match line {
        Some((src, l)) => msg.extend_from_slice(format!(" script: {sha}, on {src}:{l}.").as_bytes()),
        None if killed => msg.extend_from_slice(format!(" script: {sha}, on @user_script:1.").as_bytes()),
        None => msg.extend_from_slice(format!(" script: {sha}").as_bytes()),
    }
    msg
}
