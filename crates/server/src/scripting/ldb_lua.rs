//! The Lua debugger's commands that work on the stopped script's Lua state
//! (`print`, `trace`, `eval`, `redis`) and the rendering of Lua values in
//! its log (`{1; 2}`, `{["k"]="v"}`, `"function@0x..."`), on the raw C API.
//! Everything here runs inside the line hook, between Lua instructions:
//! each function leaves the stack as it found it.
use std::ffi::{c_int, CStr};

use mlua::ffi::{self, lua_State};

use super::ldb::Ldb;
use super::ldb_text as text;

/// Deepest table nesting rendered (Redis's `LUA_MINSTACK/2`).
const MAX_DEPTH: usize = 10;

/// Append the value at `idx` as the debugger shows it.
///
/// # Safety
/// `idx` is a valid index of `l`'s stack.
pub(super) unsafe fn push_value(out: &mut Vec<u8>, l: *mut lua_State, idx: c_int) {
    // SAFETY: per the contract.
    unsafe {
        let idx = if idx < 0 && idx > ffi::LUA_REGISTRYINDEX { ffi::lua_gettop(l) + idx + 1 } else { idx };
        value_rec(out, l, idx, 0);
    }
}

unsafe fn value_rec(out: &mut Vec<u8>, l: *mut lua_State, idx: c_int, level: usize) {
    if level == MAX_DEPTH {
        return out.extend_from_slice(b"<max recursion level reached! Nested table?>");
    }
    // SAFETY: `idx` is absolute and valid; tables are walked with pushes
    // that are popped before returning.
    unsafe {
        match ffi::lua_type(l, idx) {
            ffi::LUA_TSTRING => {
                let mut len = 0usize;
                let p = ffi::lua_tolstring(l, idx, &mut len) as *const u8;
                text::push_repr(out, std::slice::from_raw_parts(p, len));
            }
            ffi::LUA_TBOOLEAN => {
                out.extend_from_slice(if ffi::lua_toboolean(l, idx) != 0 { b"true" } else { b"false" })
            }
            ffi::LUA_TNUMBER => push_number(out, ffi::lua_tonumber(l, idx)),
            ffi::LUA_TNIL => out.extend_from_slice(b"nil"),
            ffi::LUA_TTABLE => table(out, l, idx, level + 1),
            t @ (ffi::LUA_TFUNCTION | ffi::LUA_TUSERDATA | ffi::LUA_TTHREAD | ffi::LUA_TLIGHTUSERDATA) => {
                let name = match t {
                    ffi::LUA_TFUNCTION => "function",
                    ffi::LUA_TUSERDATA => "userdata",
                    ffi::LUA_TTHREAD => "thread",
                    _ => "light-userdata",
                };
                let p = ffi::lua_topointer(l, idx);
                let shown = if p.is_null() { "(nil)".to_string() } else { format!("{p:p}") };
                out.extend_from_slice(format!("\"{name}@{shown}\"").as_bytes());
            }
            _ => out.extend_from_slice(b"\"<unknown-lua-type>\""),
        }
    }
}

/// A table as an array (`{a; b}`) if its keys are 1, 2, 3... in the order
/// `next` visits them, else as `{[k]=v; ...}`.
unsafe fn table(out: &mut Vec<u8>, l: *mut lua_State, idx: c_int, level: usize) {
    let (mut as_array, mut as_map) = (Vec::new(), Vec::new());
    let mut is_array = true;
    let mut expected = 1.0;
    // SAFETY: key and value pushed by `lua_next` are popped in the loop.
    unsafe {
        if ffi::lua_checkstack(l, 3) == 0 {
            return out.extend_from_slice(b"<max recursion level reached! Nested table?>");
        }
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, idx) != 0 {
            let top = ffi::lua_gettop(l);
            if is_array && (ffi::lua_type(l, top - 1) != ffi::LUA_TNUMBER || ffi::lua_tonumber(l, top - 1) != expected)
            {
                is_array = false;
            }
            value_rec(&mut as_array, l, top, level);
            as_array.extend_from_slice(b"; ");
            as_map.push(b'[');
            value_rec(&mut as_map, l, top - 1, level);
            as_map.extend_from_slice(b"]=");
            value_rec(&mut as_map, l, top, level);
            as_map.extend_from_slice(b"; ");
            ffi::lua_settop(l, -2);
            expected += 1.0;
        }
    }
    let body = if is_array { &mut as_array } else { &mut as_map };
    body.truncate(body.len().saturating_sub(2));
    out.push(b'{');
    out.extend_from_slice(body);
    out.push(b'}');
}

/// A number as C's `%g` prints it.
fn push_number(out: &mut Vec<u8>, n: f64) {
    let mut buf = [0u8; 64];
    // SAFETY: snprintf writes at most `buf.len()` bytes, NUL included.
    let len = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%g".as_ptr(), n) };
    out.extend_from_slice(&buf[..(len.max(0) as usize).min(buf.len() - 1)]);
}

/// Log the value on top of the stack, after `prefix`.
unsafe fn log_top(l: *mut lua_State, ldb: &Ldb, prefix: &[u8]) {
    let mut entry = prefix.to_vec();
    // SAFETY: the caller pushed the value.
    unsafe { push_value(&mut entry, l, -1) };
    ldb.log_trimmed(entry);
}

/// `{err = "ERR <msg>"}` on the stack, the error a debugger stop raises.
///
/// # Safety
/// `l` has room for three pushes.
pub(super) unsafe fn push_error(l: *mut lua_State, msg: &CStr) {
    // SAFETY: per the contract.
    unsafe {
        ffi::lua_createtable(l, 0, 1);
        ffi::lua_pushstring(l, c"err".as_ptr());
        ffi::lua_pushstring(l, c"ERR ".as_ptr());
        ffi::lua_pushstring(l, msg.as_ptr());
        ffi::lua_concat(l, 2);
        ffi::lua_rawset(l, -3);
    }
}

/// `print <var>`: the innermost local of that name, or KEYS / ARGV.
///
/// # Safety
/// Inside the line hook of `l`.
pub(super) unsafe fn print_var(l: *mut lua_State, ldb: &Ldb, var: &[u8]) {
    let var = var.split(|&b| b == 0).next().unwrap_or_default();
    // SAFETY: inside the line hook; `each_local` pops what it pushes.
    unsafe {
        let mut ar: ffi::lua_Debug = std::mem::zeroed();
        let mut level = 0;
        while ffi::lua_getstack(l, level, &mut ar) != 0 {
            level += 1;
            let found = each_local(l, &ar, |name| {
                if name != var {
                    return false;
                }
                log_top(l, ldb, b"<value> ");
                true
            });
            if found {
                return;
            }
        }
        if var == b"ARGV" || var == b"KEYS" {
            ffi::lua_pushlstring(l, var.as_ptr().cast(), var.len());
            ffi::lua_rawget(l, ffi::LUA_GLOBALSINDEX);
            if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
                // The scripts' globals are a read-only proxy of the real table.
                ffi::lua_settop(l, -2);
                ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, if var == b"ARGV" { c"ARGV" } else { c"KEYS" }.as_ptr());
            }
            log_top(l, ldb, b"<value> ");
            ffi::lua_settop(l, -2);
        } else {
            ldb.log(b"No such variable.".to_vec());
        }
    }
}

/// `print`: every local of the current function.
///
/// # Safety
/// Inside the line hook of `l`.
pub(super) unsafe fn print_all(l: *mut lua_State, ldb: &Ldb) {
    let mut vars = 0;
    // SAFETY: inside the line hook; `each_local` pops what it pushes.
    unsafe {
        let mut ar: ffi::lua_Debug = std::mem::zeroed();
        if ffi::lua_getstack(l, 0, &mut ar) != 0 {
            each_local(l, &ar, |name| {
                if !name.windows(12).any(|w| w == b"(*temporary)") {
                    let mut prefix = b"<value> ".to_vec();
                    prefix.extend_from_slice(name);
                    prefix.extend_from_slice(b" = ");
                    log_top(l, ldb, &prefix);
                    vars += 1;
                }
                false
            });
        }
    }
    if vars == 0 {
        ldb.log(b"No local variables in the current context.".to_vec());
    }
}

/// Calls `f` with the name of each local of the frame `ar`, its value on
/// top of the stack, until `f` says it is done (then true).
///
/// # Safety
/// `ar` is a frame of `l` filled by `lua_getstack`.
unsafe fn each_local(l: *mut lua_State, ar: &ffi::lua_Debug, mut f: impl FnMut(&[u8]) -> bool) -> bool {
    // SAFETY: each local pushed by `lua_getlocal` is popped after `f`.
    unsafe {
        let mut i = 1;
        loop {
            let name = ffi::lua_getlocal(l, ar, i);
            if name.is_null() {
                return false;
            }
            i += 1;
            let done = f(CStr::from_ptr(name).to_bytes());
            ffi::lua_settop(l, -2);
            if done {
                return true;
            }
        }
    }
}

/// `trace`: the script's frames, innermost first.
///
/// # Safety
/// Inside the line hook of `l`.
pub(super) unsafe fn trace(l: *mut lua_State, ldb: &Ldb) {
    // SAFETY: stack inspection only.
    unsafe {
        let mut ar: ffi::lua_Debug = std::mem::zeroed();
        let mut level = 0;
        while ffi::lua_getstack(l, level, &mut ar) != 0 {
            ffi::lua_getinfo(l, c"Snl".as_ptr(), &mut ar);
            let src = CStr::from_ptr(ar.short_src.as_ptr()).to_bytes();
            if src.windows(11).any(|w| w == b"user_script") {
                let name = if ar.name.is_null() {
                    "top level".to_string()
                } else {
                    CStr::from_ptr(ar.name).to_string_lossy().into_owned()
                };
                ldb.log(format!("{} {}:", if level == 0 { "In" } else { "From" }, name).into_bytes());
                ldb.log_source_line(ar.currentline);
            }
            level += 1;
        }
        if level == 0 {
            ldb.log(b"<error> Can't retrieve Lua stack.".to_vec());
        }
    }
}

/// `eval <code>`: run a fragment in its own frame (as an expression first,
/// then as statements) and log what it returns.
///
/// # Safety
/// Inside the line hook of `l`.
pub(super) unsafe fn eval(l: *mut lua_State, ldb: &Ldb, words: &[Vec<u8>]) {
    let code = words.join(&b' ');
    let expr = [b"return ".as_slice(), &code].concat();
    // SAFETY: what loading and the call push is popped; errors are caught.
    unsafe {
        if ffi::lua_checkstack(l, 4) == 0 {
            return ldb.log(b"<error> max lua stack reached".to_vec());
        }
        if load(l, &expr) != 0 {
            ffi::lua_settop(l, -2);
            if load(l, &code) != 0 {
                log_error_top(l, ldb);
                return;
            }
        }
        if ffi::lua_pcall(l, 0, 1, 0) != 0 {
            log_error_top(l, ldb);
            return;
        }
        log_top(l, ldb, b"<retval> ");
        ffi::lua_settop(l, -2);
    }
}

unsafe fn load(l: *mut lua_State, code: &[u8]) -> c_int {
    // SAFETY: pushes the chunk or an error message.
    unsafe { ffi::luaL_loadbuffer(l, code.as_ptr().cast(), code.len(), c"@ldb_eval".as_ptr()) }
}

/// Log the error message on top as `<error> ...`, and pop it.
unsafe fn log_error_top(l: *mut lua_State, ldb: &Ldb) {
    let mut entry = b"<error> ".to_vec();
    // SAFETY: the error value is on top.
    unsafe {
        if ffi::lua_type(l, -1) == ffi::LUA_TSTRING {
            let mut len = 0usize;
            let p = ffi::lua_tolstring(l, -1, &mut len) as *const u8;
            entry.extend_from_slice(std::slice::from_raw_parts(p, len));
        } else {
            push_value(&mut entry, l, -1);
        }
        ffi::lua_settop(l, -2);
    }
    ldb.log(entry);
}

/// `redis <cmd> ...`: call the command through `redis.call` with stepping
/// on, so the call itself logs `<redis>`, `<reply>` or `<error>`.
///
/// # Safety
/// Inside the line hook of `l`.
pub(super) unsafe fn redis(l: *mut lua_State, ldb: &Ldb, args: &[Vec<u8>]) {
    // SAFETY: pushes checked first; the pcall catches every error and the
    // stack is restored to where it was.
    unsafe {
        if ffi::lua_checkstack(l, args.len() as c_int + 2) == 0 {
            return ldb.log_trimmed(b"<reply> ".to_vec());
        }
        let top = ffi::lua_gettop(l);
        ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, c"redis".as_ptr());
        ffi::lua_getfield(l, -1, c"call".as_ptr());
        for a in args {
            ffi::lua_pushlstring(l, a.as_ptr().cast(), a.len());
        }
        ldb.step.set(true);
        ffi::lua_pcall(l, args.len() as c_int, 1, 0);
        ldb.step.set(false);
        ffi::lua_settop(l, top);
    }
}
