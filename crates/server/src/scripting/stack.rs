//! The per-call hot paths on the raw Lua C API: `redis.call`/`redis.pcall`
//! and reading a command's reply onto the Lua stack. mlua's safe API wraps
//! every table or string operation in its own protected call (a fresh C
//! closure each time), which cost more than the command itself.
//!
//! Lua raises errors with `longjmp`, which must not cross Rust frames that
//! own values with destructors. So each C function works in two phases:
//! first plain Rust (read the arguments, run the command into the shared
//! reply buffer; no Lua allocation, so nothing can raise), then only Lua
//! pushes from raw slices and integers, which may raise (out of memory, or
//! the error we raise on purpose) without skipping any destructor.
use std::ffi::{c_int, c_void};

use mlua::ffi::{self, lua_State};

use super::call;
use super::Shared;
use crate::engine::numeric;

/// `redis.call`: raises `{err=...}` when the command fails.
pub unsafe extern "C-unwind" fn redis_call(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua as a C function with our upvalue.
    unsafe { generic(l, true) }
}

/// `redis.pcall`: returns `{err=...}` when the command fails.
pub unsafe extern "C-unwind" fn redis_pcall(l: *mut lua_State) -> c_int {
    // SAFETY: as above.
    unsafe { generic(l, false) }
}

unsafe fn generic(l: *mut lua_State, raise: bool) -> c_int {
    // SAFETY: upvalue 1 is the `Shared` the closure was made with; it
    // outlives the Lua state.
    let shared = unsafe { &*(ffi::lua_touserdata(l, ffi::lua_upvalueindex(1)) as *const Shared) };
    // Phase 1: Rust only. The outcome is in the shared buffers.
    let failed = unsafe { run(l, shared) };
    // Phase 2: Lua pushes only (from raw parts of the buffer).
    let (ptr, len) = {
        let out = shared.reply_buf.borrow();
        (out.as_ptr(), out.len())
    };
    // SAFETY: nothing touches the buffer until the next call.
    let reply = unsafe { std::slice::from_raw_parts(ptr, len) };
    unsafe {
        // The arguments were copied out in phase 1. Popping them gives the
        // reply the room a call with thousands of arguments (`unpack`) took.
        ffi::lua_settop(l, 0);
        if let Some(counted) = failed {
            push_err(l, reply, counted);
            if raise {
                ffi::lua_error(l);
            }
            return 1;
        }
        ffi::luaL_checkstack(l, 8, c"reply too deeply nested".as_ptr());
        let mut pos = 0;
        push_reply(l, reply, &mut pos);
    }
    1
}

/// Read the arguments and run the command. On failure, the error text
/// (no leading `-`) is in the reply buffer and the result says whether
/// the error was counted in INFO's error statistics (every error but bad
/// arguments, which never reached a command).
unsafe fn run(l: *mut lua_State, shared: &Shared) -> Option<bool> {
    // SAFETY: a plain stack query.
    let argc = unsafe { ffi::lua_gettop(l) };
    let mut args = shared.args.borrow_mut();
    // SAFETY: indexes 1..=argc are on the stack.
    if let Err(msg) = unsafe { read_args(l, argc, &mut args, &mut shared.arg_buf.borrow_mut()) } {
        if shared.ldb.logging() {
            shared.ldb.log_error(msg);
        }
        return set_error(shared, msg, false);
    }
    // A debugging session that steps shows each call and its outcome.
    let logging = shared.ldb.logging();
    if logging {
        shared.ldb.log_command(&args);
    }
    if let Err(msg) = call::execute(shared, &args) {
        if logging {
            shared.ldb.log_error(&msg);
        }
        return set_error(shared, &msg, true);
    }
    let mut out = shared.reply_buf.borrow_mut();
    if logging {
        shared.ldb.log_reply(&out);
    }
    if out.first() != Some(&b'-') {
        return None;
    }
    // An error reply: keep its text only.
    let len = out.len().saturating_sub(2);
    out.truncate(len);
    out.remove(0);
    Some(true)
}

fn set_error(shared: &Shared, msg: &[u8], counted: bool) -> Option<bool> {
    let mut out = shared.reply_buf.borrow_mut();
    out.clear();
    out.extend_from_slice(msg);
    Some(counted)
}

/// Strings as they are, numbers as Redis prints them (`%lld` if integral,
/// else `%.17g`), anything else refused. `digits` is scratch space.
unsafe fn read_args(
    l: *mut lua_State,
    argc: c_int,
    args: &mut resp::Args,
    digits: &mut Vec<u8>,
) -> Result<(), &'static [u8]> {
    if argc == 0 {
        return Err(b"ERR Please specify at least one argument for this redis lib call");
    }
    args.reset_owned();
    for i in 1..=argc {
        // SAFETY: i is a valid stack index; strings are read in place (no
        // conversion, so nothing allocates).
        unsafe {
            match ffi::lua_type(l, i) {
                ffi::LUA_TSTRING => {
                    let mut len = 0usize;
                    let p = ffi::lua_tolstring(l, i, &mut len) as *const u8;
                    args.push(std::slice::from_raw_parts(p, len));
                }
                ffi::LUA_TNUMBER => {
                    let n = ffi::lua_tonumber(l, i);
                    digits.clear();
                    if n.trunc() == n && n.abs() < 9.2e18 {
                        numeric::format_i64(digits, n as i64);
                    } else {
                        numeric::format_double(digits, n);
                    }
                    args.push(digits);
                }
                _ => return Err(b"ERR Lua redis lib command arguments must be strings or integers"),
            }
        }
    }
    Ok(())
}

/// `{err = text}` on the stack; an error already `counted` in INFO's
/// error statistics carries Redis's `ignore_error_stats_update = true`, so
/// that returning or raising it does not count it again.
unsafe fn push_err(l: *mut lua_State, text: &[u8], counted: bool) {
    // SAFETY: plain pushes on a stack with room for them.
    unsafe {
        ffi::lua_createtable(l, 0, 2);
        ffi::lua_pushlstring(l, text.as_ptr() as *const _, text.len());
        ffi::lua_setfield(l, -2, c"err".as_ptr());
        if counted {
            ffi::lua_pushboolean(l, 1);
            ffi::lua_setfield(l, -2, IGNORE_STATS.as_ptr());
        }
    }
}

/// The field marking an error table whose error was already counted.
pub(super) const IGNORE_STATS: &std::ffi::CStr = c"ignore_error_stats_update";

/// `{name = <top of stack>}`, replacing the top.
unsafe fn wrap_top(l: *mut lua_State, name: &std::ffi::CStr) {
    // SAFETY: the value to wrap is on top.
    unsafe {
        ffi::lua_createtable(l, 0, 1);
        ffi::lua_insert(l, -2);
        ffi::lua_setfield(l, -2, name.as_ptr());
    }
}

fn line<'b>(buf: &'b [u8], pos: &mut usize) -> &'b [u8] {
    let start = *pos + 1;
    let end = buf[start.min(buf.len())..].windows(2).position(|w| w == b"\r\n").map_or(buf.len(), |i| start + i);
    *pos = (end + 2).min(buf.len());
    &buf[start.min(end)..end]
}

fn count(text: &[u8]) -> i64 {
    numeric::parse_i64(text).unwrap_or(-1)
}

fn parse_double(text: &[u8]) -> f64 {
    match text {
        b"inf" => f64::INFINITY,
        b"-inf" => f64::NEG_INFINITY,
        _ => std::str::from_utf8(text).ok().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN),
    }
}

unsafe fn push_str(l: *mut lua_State, s: &[u8]) {
    // SAFETY: a push.
    unsafe { ffi::lua_pushlstring(l, s.as_ptr() as *const _, s.len()) };
}

/// Push one reply (as a command wrote it, RESP2 or RESP3) with Redis's
/// conversion rules: status `{ok=}`, error `{err=}`, null bulk/array
/// `false`, RESP3 null `nil`, map `{map=}`, set `{set=}`, double
/// `{double=}`, big number `{big_number=}`, verbatim `{verbatim_string=}`.
unsafe fn push_reply(l: *mut lua_State, buf: &[u8], pos: &mut usize) {
    let Some(&kind) = buf.get(*pos) else {
        // SAFETY: a push.
        return unsafe { ffi::lua_pushnil(l) };
    };
    let text = line(buf, pos);
    // SAFETY: pushes, each with stack room checked by the caller.
    unsafe {
        match kind {
            b'+' => {
                push_str(l, text);
                wrap_top(l, c"ok");
            }
            b'-' => push_err(l, text, true),
            b':' => ffi::lua_pushnumber(l, count(text) as f64),
            b'$' | b'=' => {
                let n = count(text);
                if n < 0 {
                    return ffi::lua_pushboolean(l, 0);
                }
                let end = (*pos + n as usize).min(buf.len());
                let body = &buf[*pos..end];
                *pos = (end + 2).min(buf.len());
                if kind == b'$' {
                    return push_str(l, body);
                }
                ffi::lua_createtable(l, 0, 2);
                push_str(l, &body[..body.len().min(3)]);
                ffi::lua_setfield(l, -2, c"format".as_ptr());
                push_str(l, body.get(4..).unwrap_or_default());
                ffi::lua_setfield(l, -2, c"string".as_ptr());
                wrap_top(l, c"verbatim_string");
            }
            b'*' | b'>' | b'~' | b'%' => {
                let n = count(text);
                if n < 0 {
                    return ffi::lua_pushboolean(l, 0);
                }
                push_aggregate(l, buf, pos, kind, n as usize);
            }
            // Attributes are not exposed to scripts (as in Redis 7.0): the
            // key/value pairs are parsed and dropped, the reply after them
            // is the value.
            b'|' => {
                for _ in 0..count(text).max(0) * 2 {
                    push_reply(l, buf, pos);
                    ffi::lua_settop(l, -2);
                }
                push_reply(l, buf, pos);
            }
            b'_' => ffi::lua_pushnil(l),
            b'#' => ffi::lua_pushboolean(l, (text == b"t") as c_int),
            b',' => {
                ffi::lua_pushnumber(l, parse_double(text));
                wrap_top(l, c"double");
            }
            b'(' => {
                push_str(l, text);
                wrap_top(l, c"big_number");
            }
            _ => ffi::lua_pushnil(l),
        }
    }
}

unsafe fn push_aggregate(l: *mut lua_State, buf: &[u8], pos: &mut usize, kind: u8, n: usize) {
    let is_array = kind == b'*' || kind == b'>';
    // SAFETY: pushes; the checkstack keeps room for nested replies.
    unsafe {
        ffi::luaL_checkstack(l, 4, c"reply too deeply nested".as_ptr());
        ffi::lua_createtable(l, if is_array { n as c_int } else { 0 }, if is_array { 0 } else { n as c_int });
        for i in 0..n {
            push_reply(l, buf, pos);
            match kind {
                b'%' => {
                    push_reply(l, buf, pos);
                    ffi::lua_rawset(l, -3);
                }
                b'~' => {
                    ffi::lua_pushboolean(l, 1);
                    ffi::lua_rawset(l, -3);
                }
                _ => ffi::lua_rawseti(l, -2, i as ffi::lua_Integer + 1),
            }
        }
        match kind {
            b'%' => wrap_top(l, c"map"),
            b'~' => wrap_top(l, c"set"),
            _ => {}
        }
    }
}

/// Push `f` as a C closure over `shared` (as light userdata upvalue 1).
///
/// # Safety
/// `l` must have room for two values; `shared` must outlive the closure.
pub unsafe fn push_closure(l: *mut lua_State, f: ffi::lua_CFunction, shared: *const Shared) {
    // SAFETY: per the contract.
    unsafe {
        ffi::lua_pushlightuserdata(l, shared as *mut c_void);
        ffi::lua_pushcclosure(l, f, 1);
    }
}
