//! `bit`: LuaBitOp 1.0.2 as Redis embeds it. Every operand is converted to a
//! 32-bit integer the way LuaBitOp does on doubles (add 2^52+2^51, keep the
//! low 32 bits of the representation), and results are signed 32-bit.
//!
//! These are raw Lua C functions (via `mlua::ffi`) rather than mlua
//! closures: they are tiny and hot (scripts call them in loops), and going
//! through the C API makes them ~5x cheaper and gives Lua's own argument
//! errors (`luaL_typerror`, with the caller's name for the function).

use std::os::raw::c_int;

use mlua::{ffi, Lua, Table};

/// LuaBitOp's `barg`: argument `idx` as 32 bits. Non-numbers count as 0 and
/// are only rejected when the result is 0, a quirk we keep.
///
/// # Safety
/// `l` must be the running state of a C function call. On a bad argument
/// this raises a Lua error (a longjmp out of the calling C function), so
/// callers must hold nothing that needs dropping.
unsafe fn barg(l: *mut ffi::lua_State, idx: c_int) -> u32 {
    // SAFETY: `l` is a valid state (caller contract); reading any index is
    // allowed in the C API (absent ones read as none).
    let n = unsafe { ffi::lua_tonumber(l, idx) };
    let b = (n + 6_755_399_441_055_744.0).to_bits() as u32;
    // SAFETY: as above; luaL_typerror does not return.
    if b == 0 && unsafe { ffi::lua_isnumber(l, idx) } == 0 {
        unsafe { ffi::luaL_typerror(l, idx, c"number".as_ptr()) };
    }
    b
}

/// Pushes `b` as a signed 32-bit number and returns 1 (one result).
///
/// # Safety
/// `l` must be the running state of a C function call.
unsafe fn bret(l: *mut ffi::lua_State, b: u32) -> c_int {
    // SAFETY: a C function always has LUA_MINSTACK free slots.
    unsafe { ffi::lua_pushnumber(l, f64::from(b as i32)) };
    1
}

/// Defines a C function `$name` computing `$body` from the converted first
/// argument `$b`.
macro_rules! unary {
    ($name:ident, |$b:ident| $body:expr) => {
        unsafe extern "C-unwind" fn $name(l: *mut ffi::lua_State) -> c_int {
            // SAFETY: Lua calls this with its running state.
            unsafe {
                let $b = barg(l, 1);
                bret(l, $body)
            }
        }
    };
}

/// Defines a C function folding all arguments with `$op` (from the last
/// argument down, as LuaBitOp converts them).
macro_rules! fold {
    ($name:ident, $op:tt) => {
        unsafe extern "C-unwind" fn $name(l: *mut ffi::lua_State) -> c_int {
            // SAFETY: Lua calls this with its running state.
            unsafe {
                let mut b = barg(l, 1);
                let mut i = ffi::lua_gettop(l);
                while i > 1 {
                    b $op barg(l, i);
                    i -= 1;
                }
                bret(l, b)
            }
        }
    };
}

/// Defines a shift/rotate C function; the count is taken modulo 32.
macro_rules! shift {
    ($name:ident, |$b:ident, $n:ident| $body:expr) => {
        unsafe extern "C-unwind" fn $name(l: *mut ffi::lua_State) -> c_int {
            // SAFETY: Lua calls this with its running state.
            unsafe {
                let $b = barg(l, 1);
                let $n = barg(l, 2) & 31;
                bret(l, $body)
            }
        }
    };
}

unary!(bit_tobit, |b| b);
unary!(bit_bnot, |b| !b);
unary!(bit_bswap, |b| b.swap_bytes());
fold!(bit_band, &=);
fold!(bit_bor, |=);
fold!(bit_bxor, ^=);
shift!(bit_lshift, |b, n| b << n);
shift!(bit_rshift, |b, n| b >> n);
shift!(bit_arshift, |b, n| ((b as i32) >> n) as u32);
shift!(bit_rol, |b, n| b.rotate_left(n));
shift!(bit_ror, |b, n| b.rotate_right(n));

/// `bit.tohex(x [, n])`: `n` hex digits (default 8, at most 8), upper case
/// when `n` is negative.
unsafe extern "C-unwind" fn bit_tohex(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: Lua calls this with its running state; `buf` outlives the
    // push, which copies it.
    unsafe {
        let mut b = barg(l, 1);
        let given = ffi::lua_type(l, 2) != ffi::LUA_TNONE;
        let mut n: i64 = if given { i64::from(barg(l, 2) as i32) } else { 8 };
        let digits: &[u8; 16] = if n < 0 {
            n = -n;
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let n = n.min(8) as usize;
        let mut buf = [0u8; 8];
        for slot in buf[..n].iter_mut().rev() {
            *slot = digits[(b & 15) as usize];
            b >>= 4;
        }
        ffi::lua_pushlstring(l, buf.as_ptr().cast(), n);
        1
    }
}

/// Builds the `bit` table.
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let funcs: [(&str, ffi::lua_CFunction); 12] = [
        ("tobit", bit_tobit),
        ("bnot", bit_bnot),
        ("bswap", bit_bswap),
        ("band", bit_band),
        ("bor", bit_bor),
        ("bxor", bit_bxor),
        ("lshift", bit_lshift),
        ("rshift", bit_rshift),
        ("arshift", bit_arshift),
        ("rol", bit_rol),
        ("ror", bit_ror),
        ("tohex", bit_tohex),
    ];
    for (name, f) in funcs {
        // SAFETY: every function above follows the Lua C API contract and
        // raises errors only while holding no values that need dropping.
        t.raw_set(name, unsafe { lua.create_c_function(f)? })?;
    }
    Ok(t)
}
