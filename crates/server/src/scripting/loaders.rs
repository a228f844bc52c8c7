//! `loadstring` and `load` without precompiled chunks. Redis's Lua has no
//! undump: a binary chunk goes to the text parser and fails there with
//! `unexpected symbol near 'char(27)'`. Stock Lua would load it, and
//! crafted bytecode can break out of the sandbox. These replacements put a
//! blank in front of a chunk that starts with the binary signature, so
//! Lua's own parser rejects it with the very error Redis gives (same chunk
//! name, same line); anything else loads as before.
//!
//! They are C functions, like the base ones they replace, so argument
//! errors carry the calling script's line and the function's name.
use std::ffi::{c_char, c_int, c_void};

use mlua::{ffi, Lua};

/// First byte of a precompiled chunk (`LUA_SIGNATURE`).
const BINARY_MARK: u8 = 0x1b;

/// Replace `loadstring` and `load` in the (still writable) globals.
pub(super) fn install(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    for (name, f) in [("loadstring", loadstring as ffi::lua_CFunction), ("load", load)] {
        // SAFETY: pushes one C function.
        let f = unsafe { lua.exec_raw::<mlua::Function>((), |state| ffi::lua_pushcfunction(state, f))? };
        globals.raw_set(name, f)?;
    }
    Ok(())
}

/// `nil, message` after a failed load, the function after a good one.
///
/// # Safety
/// `l` is a C function's frame with the load's result on top.
unsafe fn load_result(l: *mut ffi::lua_State, status: c_int) -> c_int {
    if status == 0 {
        return 1;
    }
    // SAFETY: per the contract.
    unsafe {
        ffi::lua_pushnil(l);
        ffi::lua_insert(l, -2);
    }
    2
}

/// `loadstring(s [, chunkname])`.
unsafe extern "C-unwind" fn loadstring(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: a Lua C function; no Rust value with a destructor is alive
    // when an error may be raised. `s` and `name` point into strings that
    // stay on the stack during the load.
    unsafe {
        let mut len = 0usize;
        let s = ffi::luaL_checklstring(l, 1, &mut len);
        let name = ffi::luaL_optlstring(l, 2, s, std::ptr::null_mut());
        let status = if len > 0 && *s as u8 == BINARY_MARK {
            ffi::lua_pushlstring(l, c" ".as_ptr(), 1);
            ffi::lua_pushvalue(l, 1);
            ffi::lua_concat(l, 2);
            let mut text_len = 0usize;
            let text = ffi::lua_tolstring(l, -1, &mut text_len);
            ffi::luaL_loadbuffer(l, text, text_len, name)
        } else {
            ffi::luaL_loadbuffer(l, s, len, name)
        };
        load_result(l, status)
    }
}

/// Where a `load` reader is: before its first piece, holding a binary
/// first piece back behind the blank, or past that.
enum ReaderStep {
    First,
    Held(*const c_char, usize),
    Rest,
}

/// `load(reader [, chunkname])`.
unsafe extern "C-unwind" fn load(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `loadstring`; slot 3 keeps the reader's last piece
    // alive while the parser reads it.
    unsafe {
        let name = ffi::luaL_optlstring(l, 2, c"=(load)".as_ptr(), std::ptr::null_mut());
        ffi::luaL_checktype(l, 1, ffi::LUA_TFUNCTION);
        ffi::lua_settop(l, 3);
        let mut step = ReaderStep::First;
        let status = ffi::lua_load(l, read_piece, &mut step as *mut ReaderStep as *mut c_void, name);
        load_result(l, status)
    }
}

/// The `load` reader: calls the user's reader (argument 1) for each piece.
unsafe extern "C-unwind" fn read_piece(l: *mut ffi::lua_State, ud: *mut c_void, size: *mut usize) -> *const c_char {
    // SAFETY: `ud` is the `load` frame's ReaderStep, alive during lua_load;
    // errors raised here are caught by lua_load's protected parser.
    unsafe {
        let step = &mut *(ud as *mut ReaderStep);
        if let ReaderStep::Held(p, len) = *step {
            *step = ReaderStep::Rest;
            *size = len;
            return p;
        }
        ffi::luaL_checkstack(l, 2, c"too many nested functions".as_ptr());
        ffi::lua_pushvalue(l, 1);
        ffi::lua_call(l, 0, 1);
        if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
            *size = 0;
            return std::ptr::null();
        }
        if ffi::lua_isstring(l, -1) == 0 {
            ffi::luaL_error(l, c"reader function must return a string".as_ptr());
        }
        ffi::lua_replace(l, 3);
        let p = ffi::lua_tolstring(l, 3, size);
        if matches!(step, ReaderStep::First) {
            *step = ReaderStep::Rest;
            if *size > 0 && *p as u8 == BINARY_MARK {
                *step = ReaderStep::Held(p, *size);
                *size = 1;
                return c" ".as_ptr();
            }
        }
        p
    }
}
