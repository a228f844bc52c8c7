//! Shared plumbing for the embedded Lua libraries: the C-closure trampoline
//! that turns Rust closures into library functions raising errors the way C
//! libraries do, result lists that fit mlua's handle limit, Lua 5.1 argument
//! checking (`luaL_check*` equivalents), C-style numeric conversions the C
//! libraries rely on, a `%.Ng` formatter and a native-stack guard.

use std::os::raw::c_int;

use mlua::{ffi, Function, LightUserData, Lua, MultiValue, Table, Value};

/// Why a library function failed.
pub(crate) enum LibErr {
    /// `luaL_error(msg)`: the message gets the caller's position prefix
    /// (`user_script:1: `) when a Lua function called the library.
    Msg(String),
    /// `luaL_argerror(narg, msg)`: "bad argument #narg to 'name' (msg)",
    /// with the name Lua's debug info gives the called function.
    Arg(usize, String),
    /// An error raised by the Lua core inside the C function (e.g. "table
    /// index is nil"): no position prefix.
    Raw(String),
    /// An error from mlua itself (e.g. out of memory), passed through as is.
    Lua(mlua::Error),
}

impl From<mlua::Error> for LibErr {
    fn from(e: mlua::Error) -> Self {
        LibErr::Lua(e)
    }
}

/// Result of a library function body.
pub(crate) type LibResult<T> = Result<T, LibErr>;

/// Shorthand for a `luaL_error` error.
#[cold]
#[inline(never)]
pub(crate) fn err<T>(msg: impl Into<String>) -> LibResult<T> {
    Err(LibErr::Msg(msg.into()))
}

/// `luaL_argerror`.
#[cold]
#[inline(never)]
pub(crate) fn bad_arg(idx: usize, msg: &str) -> LibErr {
    LibErr::Arg(idx, msg.to_string())
}

// Turns Rust closures into Lua C functions that fail like the C libraries.
//
// mlua raises callback errors as userdata (so `pcall` would hand scripts a
// userdata), and from a Rust closure we cannot raise a Lua error directly.
// So each library function is a small C closure ([`trampoline`]) around
// the mlua callback: the callback reports a failure by returning a private
// sentinel, and the trampoline raises it with `luaL_error` /
// `luaL_argerror` / `lua_error` from a C frame, exactly as the C libraries
// do: same message, same `user_script:1:` position prefix, same function
// name resolution ('?' under pcall).
//
// Long result lists come back as a table (see `Results`), which the
// trampoline spreads onto its own stack.

/// Unique addresses for the sentinels (never dereferenced).
static ERR_SENTINEL: u8 = 0;
static MANY_SENTINEL: u8 = 0;

/// Error kinds after the ERR sentinel (non-negative: luaL_argerror's narg).
const KIND_WHERE: f64 = -1.0;
const KIND_RAW: f64 = -2.0;

fn sentinel(p: &'static u8) -> Value {
    Value::LightUserData(LightUserData(std::ptr::from_ref(p) as *mut _))
}

/// The C closure around a library callback (upvalue 1).
///
/// # Safety
/// Called by Lua with its running state. Errors longjmp out of this frame,
/// which holds nothing that needs dropping at those points.
unsafe extern "C-unwind" fn trampoline(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: `l` is the running state; every index used below exists (the
    // callback's result layout is fixed by `lib_function`), and the
    // error calls do not return.
    unsafe {
        let nargs = ffi::lua_gettop(l);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, nargs, ffi::LUA_MULTRET);
        let n = ffi::lua_gettop(l);
        if n == 0 || ffi::lua_type(l, 1) != ffi::LUA_TLIGHTUSERDATA {
            return n;
        }
        let p = ffi::lua_touserdata(l, 1) as *const u8;
        if p == std::ptr::from_ref(&ERR_SENTINEL) {
            let kind = ffi::lua_tonumber(l, 2);
            ffi::lua_settop(l, 3);
            if kind == KIND_RAW {
                ffi::lua_error(l);
            } else if kind == KIND_WHERE {
                ffi::luaL_where(l, 1);
                ffi::lua_insert(l, 3);
                ffi::lua_concat(l, 2);
                ffi::lua_error(l);
            }
            ffi::luaL_argerror(l, kind as c_int, ffi::lua_tolstring(l, 3, std::ptr::null_mut()));
        }
        if p == std::ptr::from_ref(&MANY_SENTINEL) {
            // Keep only the table (slot 1) so all 8000 C stack slots but
            // one are free, as many as the C libraries had for results.
            let count = ffi::lua_tonumber(l, 3) as c_int;
            ffi::lua_settop(l, 2);
            ffi::lua_replace(l, 1);
            // Plain lua_checkstack: mlua-sys's 5.1 luaL_checkstack adds
            // LUA_MINSTACK to the request, which C Lua's does not.
            if ffi::lua_checkstack(l, count) == 0 {
                ffi::luaL_error(l, c"stack overflow (too many results)".as_ptr());
            }
            for i in 1..=count {
                ffi::lua_rawgeti(l, 1, ffi::lua_Integer::from(i));
            }
            return count;
        }
        n
    }
}

/// A result list held in table `t` (values 1..=n), for [`trampoline`].
fn many(t: Table, n: usize) -> MultiValue {
    MultiValue::from_vec(vec![sentinel(&MANY_SENTINEL), Value::Table(t), Value::Number(n as f64)])
}

/// Wraps `f` as a library function: a C closure ([`trampoline`]) over an
/// mlua callback running `f`.
pub(crate) fn lib_function<F>(lua: &Lua, f: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, MultiValue) -> LibResult<MultiValue> + 'static,
{
    let raw = lua.create_function(move |lua, args: MultiValue| {
        let fail = |kind: f64, msg: String| -> mlua::Result<MultiValue> {
            let msg = Value::String(lua.create_string(msg)?);
            Ok(MultiValue::from_vec(vec![sentinel(&ERR_SENTINEL), Value::Number(kind), msg]))
        };
        match f(lua, args) {
            Ok(v) => Ok(v),
            Err(LibErr::Msg(m)) => fail(KIND_WHERE, m),
            Err(LibErr::Raw(m)) => fail(KIND_RAW, m),
            Err(LibErr::Arg(narg, m)) => fail(narg as f64, m),
            Err(LibErr::Lua(e)) => Err(e),
        }
    })?;
    // SAFETY: the closure only pushes a C closure over the function
    // argument exec_raw placed on the stack.
    unsafe {
        lua.exec_raw(raw, |l| {
            ffi::lua_pushcclosure(l, trampoline, 1);
        })
    }
}

/// One return value.
pub(crate) fn ret1(v: Value) -> LibResult<MultiValue> {
    Ok(MultiValue::from_vec(vec![v]))
}

/// `luaL_typename` of argument `idx` (1-based), "no value" when absent.
pub(crate) fn arg_type_name(args: &MultiValue, idx: usize) -> &'static str {
    match args.get(idx - 1) {
        None => "no value",
        Some(v) => type_name(v),
    }
}

/// `lua_typename(lua_type(v))`.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::LightUserData(_) | Value::UserData(_) => "userdata",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

fn type_error(args: &MultiValue, idx: usize, expected: &str) -> LibErr {
    bad_arg(idx, &format!("{expected} expected, got {}", arg_type_name(args, idx)))
}

/// `lua_tonumber` on a value: numbers, and strings Lua can convert.
pub(crate) fn to_number(lua: &Lua, v: &Value) -> LibResult<Option<f64>> {
    Ok(match v {
        Value::Number(n) => Some(*n),
        Value::Integer(i) => Some(*i as f64),
        Value::String(_) => lua.coerce_number(v.clone())?,
        _ => None,
    })
}

/// `luaL_checknumber`.
pub(crate) fn check_number(lua: &Lua, args: &MultiValue, idx: usize) -> LibResult<f64> {
    match args.get(idx - 1) {
        Some(v) => to_number(lua, v)?.ok_or_else(|| type_error(args, idx, "number")),
        None => Err(type_error(args, idx, "number")),
    }
}

/// `luaL_checkinteger` (Lua 5.1: a number truncated like a C cast).
pub(crate) fn check_integer(lua: &Lua, args: &MultiValue, idx: usize) -> LibResult<i64> {
    check_number(lua, args, idx).map(c_i64)
}

/// `luaL_optinteger`: `default` when the argument is absent or nil.
pub(crate) fn opt_integer(lua: &Lua, args: &MultiValue, idx: usize, default: i64) -> LibResult<i64> {
    match args.get(idx - 1) {
        None | Some(Value::Nil) => Ok(default),
        Some(_) => check_integer(lua, args, idx),
    }
}

/// `luaL_checklstring`: strings, and numbers converted as Lua does (`%.14g`).
pub(crate) fn check_string(lua: &Lua, args: &MultiValue, idx: usize) -> LibResult<mlua::LuaString> {
    match args.get(idx - 1) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v @ (Value::Integer(_) | Value::Number(_))) => {
            lua.coerce_string(v.clone())?.ok_or_else(|| type_error(args, idx, "string"))
        }
        _ => Err(type_error(args, idx, "string")),
    }
}

const TWO63: f64 = 9_223_372_036_854_775_808.0;

/// C `(int64_t)d` as x86-64 computes it (`cvttsd2si`): truncation, with
/// NaN and out-of-range values giving `INT64_MIN`.
pub(crate) fn c_i64(d: f64) -> i64 {
    if d.is_nan() || !(-TWO63..TWO63).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// C `(uint64_t)d` as gcc compiles it on x86-64: values below 2^63 (and NaN)
/// go through `cvttsd2si` directly, the rest have 2^63 subtracted first.
pub(crate) fn c_u64(d: f64) -> u64 {
    if d >= TWO63 {
        (c_i64(d - TWO63) as u64) ^ (1 << 63)
    } else {
        c_i64(d) as u64
    }
}

/// C `(int)d` on x86-64: truncation, `INT_MIN` when out of range or NaN.
pub(crate) fn c_i32(d: f64) -> i32 {
    if d.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&d) {
        i32::MIN
    } else {
        d as i32
    }
}

/// Appends C `printf("%.{prec}g", v)` for `prec` in 1..=17, with glibc's
/// spellings `inf`, `-inf`, `nan`, `-nan`.
pub(crate) fn fmt_g(out: &mut Vec<u8>, v: f64, prec: usize) {
    use std::io::Write;
    if v.is_nan() {
        out.extend_from_slice(if v.is_sign_negative() { b"-nan" } else { b"nan" });
        return;
    }
    if v.is_infinite() {
        out.extend_from_slice(if v < 0.0 { b"-inf" } else { b"inf" });
        return;
    }
    // Fast path: an integral value with at most `prec` digits prints as is.
    if v.trunc() == v && v.abs() < 10f64.powi(prec as i32) {
        if v == 0.0 && v.is_sign_negative() {
            out.extend_from_slice(b"-0");
        } else {
            let _ = write!(out, "{}", v as i64);
        }
        return;
    }
    let mut buf = [0u8; 40];
    let mut cur = std::io::Cursor::new(&mut buf[..]);
    // Rust rounds the decimal expansion exactly (ties to even), as glibc does.
    let _ = write!(cur, "{:.*e}", prec - 1, v.abs());
    let len = cur.position() as usize;
    let text = &buf[..len];
    let epos = text.iter().position(|&c| c == b'e').unwrap_or(len);
    let exp: i32 = std::str::from_utf8(&text[epos + 1..]).ok().and_then(|e| e.parse().ok()).unwrap_or(0);
    let mut digits = [0u8; 17];
    let mut n = 0;
    for &c in &text[..epos] {
        if c.is_ascii_digit() {
            digits[n] = c;
            n += 1;
        }
    }
    // %g drops trailing zeros of the significand (and then the '.').
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    if v < 0.0 {
        out.push(b'-');
    }
    if exp < -4 || exp >= prec as i32 {
        out.push(digits[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..n]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else if exp < 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-exp - 1) as usize, b'0');
        out.extend_from_slice(&digits[..n]);
    } else {
        let int_len = exp as usize + 1;
        let have = int_len.min(n);
        out.extend_from_slice(&digits[..have]);
        out.resize(out.len() + (int_len - have), b'0');
        if n > int_len {
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..n]);
        }
    }
}

/// Lua 5.1's `LUAI_MAXCSTACK`: a C function may hold at most this many
/// stack slots. The C libraries hit this limit (via `lua_checkstack`) on
/// huge results or deep nesting; we count slots the same way to fail alike.
pub(crate) const MAX_C_STACK: usize = 8000;

/// Native stack kept free below the deepest recursion of the encoders and
/// decoders (room for mlua, Lua and error formatting).
const STACK_RESERVE: usize = 256 << 10;

thread_local! {
    /// Lowest usable stack address of this thread (0 = unknown).
    static STACK_LOW: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// This thread's lowest stack address, from `pthread_getattr_np` (cached:
/// for the main thread glibc reads /proc/self/maps).
fn stack_low() -> usize {
    STACK_LOW.with(|c| {
        if let Some(v) = c.get() {
            return v;
        }
        let mut low = 0usize;
        // SAFETY: `attr` is initialised by pthread_getattr_np before use and
        // destroyed once; the out-pointers are valid locals.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) == 0 {
                let mut addr: *mut libc::c_void = std::ptr::null_mut();
                let mut size: libc::size_t = 0;
                if libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0 {
                    low = addr as usize;
                }
                libc::pthread_attr_destroy(&mut attr);
            }
        }
        c.set(Some(low));
        low
    })
}

/// True when the native stack is nearly exhausted. The C libraries recurse
/// with tiny frames and are bounded by Lua's stack limit instead; our frames
/// are bigger, so deep (but Redis-legal) nesting on a small thread stack
/// fails with the library's nesting error instead of crashing the process.
#[inline]
pub(crate) fn stack_exhausted() -> bool {
    let marker = 0u8;
    let sp = std::ptr::addr_of!(marker) as usize;
    let low = stack_low();
    low != 0 && sp < low + STACK_RESERVE
}

/// A function's result list. Every mlua handle (string, table) pins a slot
/// of mlua's reference stack, which holds at most ~8000; the C libraries
/// return up to 7999 values, so past a few hundred the values move into a
/// Lua table, which the trampoline spreads onto the Lua stack.
pub(crate) struct Results<'a> {
    lua: &'a Lua,
    vec: Vec<Value>,
    table: Option<Table>,
    len: usize,
}

/// Results kept as handles before switching to a table.
const RESULTS_IN_VEC: usize = 256;

impl<'a> Results<'a> {
    pub(crate) fn new(lua: &'a Lua) -> Self {
        Results { lua, vec: Vec::new(), table: None, len: 0 }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn push(&mut self, v: Value) -> mlua::Result<()> {
        if self.table.is_none() && self.len >= RESULTS_IN_VEC {
            let t = self.lua.create_table_with_capacity(self.len * 2, 0)?;
            for (i, x) in self.vec.drain(..).enumerate() {
                t.raw_set(i + 1, x)?;
            }
            self.table = Some(t);
        }
        self.len += 1;
        match &self.table {
            Some(t) => t.raw_set(self.len, v),
            None => {
                self.vec.push(v);
                Ok(())
            }
        }
    }

    /// Result number `i` (1-based).
    pub(crate) fn get(&self, i: usize) -> mlua::Result<Value> {
        match &self.table {
            Some(t) => t.raw_get(i),
            None => Ok(self.vec.get(i - 1).cloned().unwrap_or(Value::Nil)),
        }
    }

    /// Replaces result number `i` (1-based, must exist).
    pub(crate) fn set(&mut self, i: usize, v: Value) -> mlua::Result<()> {
        match &self.table {
            Some(t) => t.raw_set(i, v),
            None => {
                self.vec[i - 1] = v;
                Ok(())
            }
        }
    }

    pub(crate) fn pop(&mut self) -> mlua::Result<()> {
        if self.len > 0 {
            self.set(self.len, Value::Nil)?;
            self.len -= 1;
            self.vec.truncate(self.len);
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> MultiValue {
        match self.table {
            Some(t) => many(t, self.len),
            None => MultiValue::from_vec(self.vec),
        }
    }
}

/// Tables with at most this many entries are read in one pass by the
/// encoders, which then work from the collected pairs; bigger ones are
/// walked again, so a table never pins more than this many mlua handles.
pub(crate) const ONE_PASS_MAX: usize = 32;

/// Keeps entry number `count` of a table walk in `pairs` while the table is
/// small enough for one pass (and forgets them all once it is not).
pub(crate) fn keep_small(pairs: &mut Vec<(Value, Value)>, count: usize, k: Value, v: Value) {
    if count <= ONE_PASS_MAX {
        pairs.push((k, v));
    } else {
        pairs.clear();
    }
}

/// The values of an array-like table's collected `pairs`, placed by their
/// integer keys 1..=len (missing ones nil).
pub(crate) fn by_index(pairs: Vec<(Value, Value)>, len: usize) -> Vec<Value> {
    let mut slots = vec![Value::Nil; len];
    for (k, v) in pairs {
        let i = match k {
            Value::Integer(i) => i as usize,
            Value::Number(n) => n as usize,
            _ => continue,
        };
        if let Some(slot) = i.checked_sub(1).and_then(|i| slots.get_mut(i)) {
            *slot = v;
        }
    }
    slots
}

/// A table key as a number, if it is one.
pub(crate) fn key_number(k: &Value) -> Option<f64> {
    match k {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}
