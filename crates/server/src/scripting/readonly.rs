//! Read-only tables, one mechanism for both Lua states (EVAL's and the
//! function libraries'). Redis flags tables read-only inside its patched
//! VM; stock Lua cannot, so a read-only table here is an empty proxy whose
//! metatable sends reads to the real table and refuses writes. The base
//! functions that could reach around a proxy are replaced by C functions
//! that behave as the originals otherwise: `rawset` and `setmetatable`
//! refuse a proxy with Redis's "Attempt to modify a readonly table",
//! `next` and `pairs` walk the real table, `getmetatable` shows the real
//! table's metatable (read-only too).
//!
//! `install` runs before the globals are locked; the `readonly(t[, meta])`
//! maker it returns is also kept in the registry ([`maker`]) for the
//! function libraries' own environment.
use std::ffi::c_int;

use mlua::{ffi, Function, Lua, Table};

/// Registry name of the `readonly` maker.
const MAKER_KEY: &str = "volley.readonly";

/// The proxy maker. Takes the `proxied` table (proxy -> the table it
/// guards) and the `views` table (proxy -> what `getmetatable` gives,
/// `false` for nothing) that the C functions below share; returns
/// `readonly(t[, meta])`, `meta` being the metatable `t` shows.
const PRELUDE: &str = r#"
local proxied, views = ...
local error, setmetatable = error, setmetatable
local function refuse() error('Attempt to modify a readonly table', 2) end
local function readonly(t, meta)
  local p = setmetatable({}, {__index = t, __newindex = refuse, __metatable = false})
  proxied[p] = t
  views[p] = meta ~= nil and readonly(meta) or false
  return p
end
return readonly
"#;

/// Upvalue indexes of the C functions.
const PROXIED: c_int = ffi::lua_upvalueindex(1);
const VIEWS: c_int = ffi::lua_upvalueindex(2);
const NEXT: c_int = ffi::lua_upvalueindex(3);

/// Replace the base functions in the (still writable) globals and return
/// the `readonly` maker.
pub(super) fn install(lua: &Lua) -> mlua::Result<Function> {
    let weak = lua.create_table()?;
    weak.raw_set("__mode", "k")?;
    let (proxied, views) = (lua.create_table()?, lua.create_table()?);
    proxied.set_metatable(Some(weak.clone()))?;
    views.set_metatable(Some(weak))?;
    let prelude = lua.load(PRELUDE).set_name("=readonly_prelude").into_function()?;
    let readonly: Function = prelude.call((proxied.clone(), views.clone()))?;
    let globals = lua.globals();
    // `pairs` returns a `next` of its own, as Redis's does (not the global).
    let pairs_next = closure(lua, next, &proxied, &views, None)?;
    globals.raw_set("pairs", closure(lua, pairs, &proxied, &views, Some(&pairs_next))?)?;
    globals.raw_set("next", closure(lua, next, &proxied, &views, None)?)?;
    globals.raw_set("rawset", closure(lua, rawset, &proxied, &views, None)?)?;
    globals.raw_set("getmetatable", closure(lua, getmetatable, &proxied, &views, None)?)?;
    globals.raw_set("setmetatable", closure(lua, setmetatable, &proxied, &views, None)?)?;
    lua.set_named_registry_value(MAKER_KEY, readonly.clone())?;
    Ok(readonly)
}

/// The `readonly(t[, meta])` maker of `lua` (see [`install`]).
pub(super) fn maker(lua: &Lua) -> mlua::Result<Function> {
    lua.named_registry_value(MAKER_KEY)
}

/// `f` as a C closure over `proxied`, `views` and optionally `next`. C
/// functions, not Lua wrappers, so argument errors name the function and
/// the script line as the base library's own do.
fn closure(
    lua: &Lua,
    f: ffi::lua_CFunction,
    proxied: &Table,
    views: &Table,
    next: Option<&Function>,
) -> mlua::Result<Function> {
    let n = if next.is_some() { 3 } else { 2 };
    // SAFETY: one closure over the arguments exec_raw pushed.
    unsafe {
        lua.exec_raw::<Function>((proxied, views, next), |state| {
            ffi::lua_settop(state, n);
            ffi::lua_pushcclosure(state, f, n);
        })
    }
}

/// Replaces argument 1 by the table it guards, if it is a proxy.
///
/// # Safety
/// A C function's frame with argument 1 and the `proxied` upvalue.
unsafe fn see_through(l: *mut ffi::lua_State) {
    // SAFETY: per the contract; reading a nil key is allowed.
    unsafe {
        ffi::lua_pushvalue(l, 1);
        ffi::lua_rawget(l, PROXIED);
        if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
            ffi::lua_settop(l, -2);
        } else {
            ffi::lua_replace(l, 1);
        }
    }
}

/// `next`: the base behaviour, walking the guarded table of a proxy.
unsafe extern "C-unwind" fn next(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: a Lua C function with this module's upvalues; no Rust value
    // with a destructor is alive when an error may be raised.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        ffi::lua_settop(l, 2);
        see_through(l);
        if ffi::lua_next(l, 1) != 0 {
            return 2;
        }
        ffi::lua_pushnil(l);
        1
    }
}

/// `pairs`: the base behaviour (`next, t, nil`). A proxy stays the state
/// (the guarded table must not reach the script); `next` sees through it.
unsafe extern "C-unwind" fn pairs(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `next`.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        ffi::lua_settop(l, 1);
        ffi::lua_pushvalue(l, NEXT);
        ffi::lua_pushvalue(l, 1);
        ffi::lua_pushnil(l);
        3
    }
}

/// `rawset`: the base behaviour, refusing a proxy.
unsafe extern "C-unwind" fn rawset(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `next`.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        ffi::luaL_checkany(l, 2);
        ffi::luaL_checkany(l, 3);
        ffi::lua_settop(l, 3);
        refuse_proxy(l);
        ffi::lua_rawset(l, 1);
        1
    }
}

/// Raises Redis's read-only error (with no position, as Redis's C check
/// gives none) if argument 1 is a proxy.
///
/// # Safety
/// A C function's frame with argument 1 and the `views` upvalue.
unsafe fn refuse_proxy(l: *mut ffi::lua_State) {
    // SAFETY: per the contract.
    unsafe {
        push_view(l);
        if ffi::lua_type(l, -1) != ffi::LUA_TNIL {
            ffi::lua_pushstring(l, c"Attempt to modify a readonly table".as_ptr());
            ffi::lua_error(l);
        }
        ffi::lua_settop(l, -2);
    }
}

/// Pushes `views[arg 1]`: nil for anything but a proxy.
///
/// # Safety
/// A C function's frame with argument 1 and the `views` upvalue.
unsafe fn push_view(l: *mut ffi::lua_State) {
    // SAFETY: per the contract; reading a nil key is allowed.
    unsafe {
        ffi::lua_pushvalue(l, 1);
        ffi::lua_rawget(l, VIEWS);
    }
}

/// `getmetatable`: the base behaviour, except that a proxy shows the
/// guarded table's metatable view (or nothing).
unsafe extern "C-unwind" fn getmetatable(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: a Lua C function with the views upvalue; no Rust value with
    // a destructor is alive when an error may be raised.
    unsafe {
        ffi::luaL_checkany(l, 1);
        push_view(l);
        if ffi::lua_type(l, -1) != ffi::LUA_TNIL {
            if ffi::lua_toboolean(l, -1) == 0 {
                ffi::lua_pushnil(l);
            }
            return 1;
        }
        if ffi::lua_getmetatable(l, 1) == 0 {
            ffi::lua_pushnil(l);
            return 1;
        }
        ffi::luaL_getmetafield(l, 1, c"__metatable".as_ptr());
        1
    }
}

/// `setmetatable`: the base behaviour, except that a proxy is refused
/// (after the argument checks, as Redis does).
unsafe extern "C-unwind" fn setmetatable(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `getmetatable`.
    unsafe {
        let t = ffi::lua_type(l, 2);
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        if t != ffi::LUA_TNIL && t != ffi::LUA_TTABLE {
            ffi::luaL_argerror(l, 2, c"nil or table expected".as_ptr());
        }
        refuse_proxy(l);
        if ffi::luaL_getmetafield(l, 1, c"__metatable".as_ptr()) != ffi::LUA_TNIL {
            ffi::luaL_error(l, c"cannot change a protected metatable".as_ptr());
        }
        ffi::lua_settop(l, 2);
        ffi::lua_setmetatable(l, 1);
        1
    }
}
