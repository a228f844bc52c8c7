//! Shared plumbing for the embedded Lua libraries: raising plain-string Lua
//! errors from Rust, Lua 5.1 argument checking (`luaL_check*` equivalents
//! with their exact messages), C-style numeric conversions the C libraries
//! rely on, and a `%.Ng` formatter.

use mlua::{Function, LightUserData, Lua, MultiValue, Value};

/// Why a library function failed.
pub(crate) enum LibErr {
    /// A Lua error whose value is this plain string, as `luaL_error` raises
    /// from a C function (no position prefix).
    Msg(String),
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

/// Shorthand for a string error.
#[cold]
#[inline(never)]
pub(crate) fn err<T>(msg: impl Into<String>) -> LibResult<T> {
    Err(LibErr::Msg(msg.into()))
}

/// `luaL_argerror`: "bad argument #N to 'f' (msg)".
#[cold]
#[inline(never)]
pub(crate) fn bad_arg(idx: usize, fname: &str, msg: &str) -> LibErr {
    LibErr::Msg(format!("bad argument #{idx} to '{fname}' ({msg})"))
}

/// Chunk name of the Lua trampolines; an EVAL error handler that looks for
/// the calling script's line should skip frames from this source, as Redis
/// skips the C frames of its libraries.
pub const TRAMPOLINE_SOURCE: &str = "=volley_lualibs";

/// Turns Rust closures into Lua functions that raise *string* errors.
///
/// mlua raises callback errors as userdata, so `pcall(cjson.decode, "x")`
/// would hand scripts a userdata instead of Redis's message string. Each
/// Rust body therefore returns a private sentinel followed by the message,
/// and a tiny Lua wrapper turns that into `error(msg, 0)` (level 0: no
/// position, exactly like `luaL_error` called from a C function).
///
/// The wrapper also lifts a limit: an mlua callback can return a few values
/// fewer than a C function (it keeps its arguments on the stack), so long
/// result lists come back as a table that the wrapper expands in Lua.
pub(crate) struct Wrapper {
    factory: Function,
    err: Value,
    many: Value,
}

/// Unique addresses for the sentinels (never dereferenced).
static ERR_SENTINEL: u8 = 0;
static MANY_SENTINEL: u8 = 0;

/// Result lists longer than this travel as a table (`MANY, t, n`).
const MANY_THRESHOLD: usize = 4000;

fn sentinel(p: &'static u8) -> Value {
    Value::LightUserData(LightUserData(std::ptr::from_ref(p) as *mut _))
}

impl Wrapper {
    /// Compiles the trampoline factory in `lua`.
    pub(crate) fn new(lua: &Lua) -> mlua::Result<Wrapper> {
        let (err, many) = (sentinel(&ERR_SENTINEL), sentinel(&MANY_SENTINEL));
        // `tail` returns t[i..n]: C `unpack` for the last few thousand
        // values (it too is capped by the C stack), one recursion per extra.
        let src = "local ERR, MANY, error, select, unpack = ...\n\
            local function tail(t, i, n)\n\
              if n - i < 4000 then return unpack(t, i, n) end\n\
              return t[i], tail(t, i + 1, n)\n\
            end\n\
            local function ret(...)\n\
              local first = ...\n\
              if first == ERR then error((select(2, ...)), 0) end\n\
              if first == MANY then local _, t, n = ... return tail(t, 1, n) end\n\
              return ...\n\
            end\n\
            return function(raw) return function(...) return ret(raw(...)) end end";
        let g = lua.globals();
        let factory: Function = lua.load(src).set_name(TRAMPOLINE_SOURCE).call((
            err.clone(),
            many.clone(),
            g.raw_get::<Function>("error")?,
            g.raw_get::<Function>("select")?,
            g.raw_get::<Function>("unpack")?,
        ))?;
        Ok(Wrapper { factory, err, many })
    }

    /// Wraps `f` as a Lua function.
    pub(crate) fn function<F>(&self, lua: &Lua, f: F) -> mlua::Result<Function>
    where
        F: Fn(&Lua, MultiValue) -> LibResult<MultiValue> + 'static,
    {
        let (err, many) = (self.err.clone(), self.many.clone());
        let raw = lua.create_function(move |lua, args: MultiValue| match f(lua, args) {
            Ok(v) if v.len() > MANY_THRESHOLD => {
                let n = v.len();
                let t = lua.create_table_with_capacity(n, 0)?;
                for (i, x) in v.into_iter().enumerate() {
                    t.raw_set(i + 1, x)?;
                }
                Ok(MultiValue::from_vec(vec![many.clone(), Value::Table(t), Value::Number(n as f64)]))
            }
            Ok(v) => Ok(v),
            Err(LibErr::Msg(m)) => Ok(MultiValue::from_vec(vec![err.clone(), Value::String(lua.create_string(m)?)])),
            Err(LibErr::Lua(e)) => Err(e),
        })?;
        self.factory.call(raw)
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

fn type_error(args: &MultiValue, idx: usize, fname: &str, expected: &str) -> LibErr {
    bad_arg(idx, fname, &format!("{expected} expected, got {}", arg_type_name(args, idx)))
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
pub(crate) fn check_number(lua: &Lua, args: &MultiValue, idx: usize, fname: &str) -> LibResult<f64> {
    match args.get(idx - 1) {
        Some(v) => to_number(lua, v)?.ok_or_else(|| type_error(args, idx, fname, "number")),
        None => Err(type_error(args, idx, fname, "number")),
    }
}

/// `luaL_checkinteger` (Lua 5.1: a number truncated like a C cast).
pub(crate) fn check_integer(lua: &Lua, args: &MultiValue, idx: usize, fname: &str) -> LibResult<i64> {
    check_number(lua, args, idx, fname).map(c_i64)
}

/// `luaL_optinteger`: `default` when the argument is absent or nil.
pub(crate) fn opt_integer(lua: &Lua, args: &MultiValue, idx: usize, fname: &str, default: i64) -> LibResult<i64> {
    match args.get(idx - 1) {
        None | Some(Value::Nil) => Ok(default),
        Some(_) => check_integer(lua, args, idx, fname),
    }
}

/// `luaL_checklstring`: strings, and numbers converted as Lua does (`%.14g`).
pub(crate) fn check_string(lua: &Lua, args: &MultiValue, idx: usize, fname: &str) -> LibResult<mlua::LuaString> {
    match args.get(idx - 1) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v @ (Value::Integer(_) | Value::Number(_))) => {
            lua.coerce_string(v.clone())?.ok_or_else(|| type_error(args, idx, fname, "string"))
        }
        _ => Err(type_error(args, idx, fname, "string")),
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
