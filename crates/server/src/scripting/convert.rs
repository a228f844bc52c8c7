//! A script's return value as a Redis reply, with Redis 7.0's rules:
//! numbers truncate to integers, `false` is null (or `#f` after
//! `redis.setresp(3)`), tables stop at the first nil, `{err=}`/`{ok=}` are
//! error/status replies and `{double=}`, `{map=}`, `{set=}`,
//! `{big_number=}`, `{verbatim_string=}` are their RESP3 types. Reads the
//! value straight off the Lua stack (raw reads only, which never raise).
//! (Reply → Lua, the other direction, is in `stack.rs`.)
use std::ffi::{c_int, CStr};

use mlua::ffi::{self, lua_State};

use crate::dispatch::Reply;
use crate::engine::numeric;

/// Deepest table nesting converted (Redis stops at its Lua stack limit).
const MAX_DEPTH: usize = 1000;

/// Write the value at absolute stack index `idx` as the reply.
///
/// # Safety
/// `idx` must be a valid absolute index of `l`, with stack room for a few
/// more values per nesting level.
pub unsafe fn write_value(l: *mut lua_State, idx: c_int, r: &mut Reply, lua_resp3: bool, depth: usize) {
    // SAFETY: reads of a valid index.
    unsafe {
        match ffi::lua_type(l, idx) {
            ffi::LUA_TSTRING => r.bulk(string_at(l, idx)),
            ffi::LUA_TNUMBER => r.int(lua_to_i64(ffi::lua_tonumber(l, idx))),
            ffi::LUA_TBOOLEAN => {
                let b = ffi::lua_toboolean(l, idx) != 0;
                match (lua_resp3, b) {
                    (true, _) => r.boolean(b),
                    (false, true) => r.int(1),
                    (false, false) => r.null(),
                }
            }
            ffi::LUA_TTABLE if depth >= MAX_DEPTH => r.error("ERR reached lua stack limit"),
            ffi::LUA_TTABLE => write_table(l, idx, r, lua_resp3, depth),
            _ => r.null(),
        }
    }
}

/// The bytes of the string at `idx` (which must be a string, so reading
/// it converts nothing).
unsafe fn string_at<'a>(l: *mut lua_State, idx: c_int) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: a string value stays alive while it is on the stack.
    unsafe {
        let p = ffi::lua_tolstring(l, idx, &mut len) as *const u8;
        std::slice::from_raw_parts(p, len)
    }
}

/// `(long long)` of a double as x86 computes it: out of range and NaN give
/// the minimum, which is what redis-server replies.
fn lua_to_i64(n: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// Push `t[name]` (raw); returns its type. The caller pops it.
unsafe fn get_field(l: *mut lua_State, t: c_int, name: &CStr) -> c_int {
    // SAFETY: `t` is an absolute table index.
    unsafe {
        ffi::lua_pushstring(l, name.as_ptr());
        ffi::lua_rawget(l, t);
        ffi::lua_type(l, -1)
    }
}

unsafe fn pop(l: *mut lua_State) {
    // SAFETY: callers pushed one value.
    unsafe { ffi::lua_settop(l, -2) };
}

unsafe fn write_table(l: *mut lua_State, t: c_int, r: &mut Reply, lua_resp3: bool, depth: usize) {
    // SAFETY: every push below is popped before returning.
    unsafe {
        ffi::luaL_checkstack(l, 6, c"reply too deeply nested".as_ptr());
        if get_field(l, t, c"err") == ffi::LUA_TSTRING {
            if counted_already(l, t) {
                r.error_counted_elsewhere(string_at(l, -1));
            } else {
                r.error_bytes(string_at(l, -1));
            }
            return pop(l);
        }
        pop(l);
        if get_field(l, t, c"ok") == ffi::LUA_TSTRING {
            let line: Vec<u8> =
                string_at(l, -1).iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }).collect();
            r.simple(&line);
            return pop(l);
        }
        pop(l);
        if get_field(l, t, c"double") == ffi::LUA_TNUMBER {
            let d = ffi::lua_tonumber(l, -1);
            if d.is_nan() {
                nan(r, d.is_sign_negative())
            } else {
                r.double(d)
            }
            return pop(l);
        }
        pop(l);
        if get_field(l, t, c"big_number") == ffi::LUA_TSTRING {
            big_number(r, string_at(l, -1));
            return pop(l);
        }
        pop(l);
        for (name, is_map) in [(c"map", true), (c"set", false)] {
            if get_field(l, t, name) == ffi::LUA_TTABLE {
                let inner = ffi::lua_gettop(l);
                write_pairs(l, inner, r, lua_resp3, depth, is_map);
                return pop(l);
            }
            pop(l);
        }
        if get_field(l, t, c"verbatim_string") == ffi::LUA_TTABLE {
            let v = ffi::lua_gettop(l);
            let fmt_type = get_field(l, v, c"format");
            let s_type = get_field(l, v, c"string");
            if fmt_type == ffi::LUA_TSTRING && s_type == ffi::LUA_TSTRING {
                verbatim(r, string_at(l, -2), string_at(l, -1));
                return ffi::lua_settop(l, -4);
            }
            ffi::lua_settop(l, -3);
        }
        pop(l);
        write_array(l, t, r, lua_resp3, depth);
    }
}

/// `t[1..]` up to the first nil.
unsafe fn write_array(l: *mut lua_State, t: c_int, r: &mut Reply, lua_resp3: bool, depth: usize) {
    // SAFETY: pushes are popped in each iteration.
    unsafe {
        let mut n = 0;
        loop {
            ffi::lua_rawgeti(l, t, n + 1);
            let nil = ffi::lua_type(l, -1) == ffi::LUA_TNIL;
            pop(l);
            if nil {
                break;
            }
            n += 1;
        }
        r.array(n as usize);
        for i in 1..=n {
            ffi::lua_rawgeti(l, t, i);
            let top = ffi::lua_gettop(l);
            write_value(l, top, r, lua_resp3, depth + 1);
            pop(l);
        }
    }
}

/// A map (keys and values) or a set (keys) from the table at `t`.
unsafe fn write_pairs(l: *mut lua_State, t: c_int, r: &mut Reply, lua_resp3: bool, depth: usize, is_map: bool) {
    // SAFETY: lua_next over a table nobody modifies meanwhile.
    unsafe {
        let mut n = 0;
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, t) != 0 {
            n += 1;
            pop(l);
        }
        if is_map {
            r.map(n);
        } else {
            r.set(n);
        }
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, t) != 0 {
            let top = ffi::lua_gettop(l);
            write_value(l, top - 1, r, lua_resp3, depth + 1);
            if is_map {
                write_value(l, top, r, lua_resp3, depth + 1);
            }
            pop(l);
        }
    }
}

/// NaN as glibc prints it (`0/0` is negative on x86: `-nan`).
fn nan(r: &mut Reply, negative: bool) {
    typed_or_bulk(r, b",", if negative { b"-nan" } else { b"nan" });
}

/// CR and LF become spaces, as Redis maps them: a big number is one line
/// in RESP3, and its RESP2 bulk says the same.
fn big_number(r: &mut Reply, digits: &[u8]) {
    let text: Vec<u8> = digits.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }).collect();
    typed_or_bulk(r, b"(", &text);
}

/// `text` as the RESP3 type `prefix` (a double, a big number), or as a
/// bulk string in RESP2.
fn typed_or_bulk(r: &mut Reply, prefix: &[u8], text: &[u8]) {
    if r.resp3() {
        r.raw(prefix);
        r.raw(text);
        r.raw(b"\r\n");
    } else {
        r.bulk(text);
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

/// Whether the error table at `t` holds an error already counted in INFO's
/// error statistics (one a `redis.call` got; see `stack::push_err`).
unsafe fn counted_already(l: *mut lua_State, t: c_int) -> bool {
    // SAFETY: one push, popped.
    unsafe {
        let counted =
            get_field(l, t, super::stack::IGNORE_STATS) == ffi::LUA_TBOOLEAN && ffi::lua_toboolean(l, -1) != 0;
        pop(l);
        counted
    }
}

/// The error reply for a failed run from the error value at `idx`: the
/// `err` text, plus where it happened (`script: <sha>, on @user_script:N.`),
/// and whether the error was already counted in INFO's error statistics.
///
/// # Safety
/// `idx` must be a valid absolute index of `l`.
pub unsafe fn script_error(l: *mut lua_State, idx: c_int, sha: &str, killed: bool) -> (Vec<u8>, bool) {
    // SAFETY: raw reads; every push is popped.
    unsafe {
        let counted = !killed && ffi::lua_type(l, idx) == ffi::LUA_TTABLE && counted_already(l, idx);
        let (mut msg, line) = match ffi::lua_type(l, idx) {
            ffi::LUA_TTABLE => {
                let msg = match get_field(l, idx, c"err") {
                    ffi::LUA_TSTRING => string_at(l, -1).to_vec(),
                    _ => b"ERR unknown error".to_vec(),
                };
                let src = (get_field(l, idx, c"source") == ffi::LUA_TSTRING)
                    .then(|| String::from_utf8_lossy(string_at(l, -1)).into_owned());
                let line = (get_field(l, idx, c"line") == ffi::LUA_TNUMBER).then(|| ffi::lua_tonumber(l, -1) as i64);
                ffi::lua_settop(l, -4);
                (msg, src.zip(line))
            }
            ffi::LUA_TSTRING => ([b"ERR ".as_slice(), string_at(l, idx)].concat(), None),
            _ => (b"ERR unknown error".to_vec(), None),
        };
        if killed {
            msg = b"ERR Script killed by user with SCRIPT KILL...".to_vec();
        }
        match line {
            Some((src, n)) => msg.extend_from_slice(format!(" script: {sha}, on {src}:{n}.").as_bytes()),
            None if killed => msg.extend_from_slice(format!(" script: {sha}, on @user_script:1.").as_bytes()),
            None => msg.extend_from_slice(format!(" script: {sha}").as_bytes()),
        }
        (msg, counted)
    }
}
