//! Building a Lua state the way Redis 7.0 sets its up: base, string, table,
//! math and coroutine only (no os, io, debug, package, print, dofile,
//! loadfile, getfenv/setfenv, newproxy); the `redis` table; `math.random`
//! on Redis's generator; every global and library table read-only
//! ("Attempt to modify a readonly table", see `readonly.rs`), reading an
//! undefined global an error, and `loadstring`/`load` text-only (see
//! `loaders.rs`).
use std::rc::Rc;

use mlua::chunk::ChunkMode;
use std::ffi::c_int;

use mlua::{ffi, Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};

use super::{busy, libs, rand, Scripting, Shared, State, LUA_MEMORY_LIMIT};
use super::{call, loaders, readonly, run, stack};
use crate::server::changes;

/// Lua GC pause (percent of the live heap to allocate before a cycle).
const GC_PAUSE: c_int = 200;

/// Base-library functions Redis 7.0 removes.
const REMOVED: &[&str] = &["dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy", "module", "require"];

/// Wrappers, the `redis` table and the read-only proxies. Receives the Rust
/// functions; returns the proxy for `_G` and the runner.
const PRELUDE: &str = r#"
local handler, rust, readonly = ...
local error, type, select, setmetatable, xpcall, next, tostring =
      error, type, select, setmetatable, xpcall, next, tostring
local G = _G

local redis = {}
redis.call = rust.call
redis.pcall = rust.pcall
redis.sha1hex = rust.sha1hex
redis.setresp = rust.setresp
redis.log = rust.log
redis.acl_check_cmd = rust.acl_check_cmd
local function one_string(...)
  local s = ...
  return select('#', ...) == 1 and type(s) == 'string', s
end
-- Redis's error tables read `CODE message`: the code is what precedes the
-- first space (ERR if there is none), the message loses edge line breaks.
redis.error_reply = function(...)
  local ok, e = one_string(...)
  if not ok then return {err = 'ERR wrong number or type of arguments'} end
  if e:sub(1, 1) == '-' then e = e:sub(2) end
  local code, msg = e:match('^([^ ]*) (.*)$')
  if not code then code, msg = 'ERR', e end
  msg = msg:gsub('^[\r\n]+', ''):gsub('[\r\n]+$', '')
  return {err = code .. ' ' .. msg}
end
redis.status_reply = function(...)
  local ok, s = one_string(...)
  if not ok then return {err = 'ERR wrong number or type of arguments'} end
  return {ok = s}
end
redis.set_repl = rust.set_repl
redis.replicate_commands = function() return true end
redis.breakpoint = rust.breakpoint
redis.debug = rust.debug
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.REDIS_VERSION, redis.REDIS_VERSION_NUM = '7.0.15', 0x0007000f
G.redis = redis
G.__redis__err__handler = handler
math.random = rust.random
math.randomseed = rust.randomseed

local libs = {}
for k, v in next, G do
  if type(v) == 'table' and k ~= '_G' then libs[k] = v end
end
for k, v in next, libs do G[k] = readonly(v) end
local gmeta = {__index = function(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end}
setmetatable(G, gmeta)
local env = readonly(G, gmeta)
G._G = env
-- A function's callback gets KEYS and ARGV as arguments (`k`, `a`).
return env, function(f, k, a)
  if k == nil then return xpcall(f, handler) end
  return xpcall(function() return f(k, a) end, handler)
end
"#;

/// A fresh sandboxed state sharing `shared` with the server.
pub(super) fn new_state(shared: &Rc<Shared>) -> mlua::Result<State> {
    let lua = Lua::new_with(StdLib::STRING | StdLib::TABLE | StdLib::MATH, LuaOptions::default())?;
    let globals = lua.globals();
    for name in REMOVED {
        globals.raw_set(*name, Value::Nil)?;
    }
    libs::open_all(&lua)?;
    let rust = lua.create_table()?;
    let raising_fns = [
        ("sha1hex", lua.create_function(sha1hex)?),
        ("setresp", setresp(&lua, shared)?),
        ("log", lua.create_function(log)?),
        ("acl_check_cmd", call::make_acl_check(&lua, shared)?),
        ("random", random(&lua, shared)?),
        ("randomseed", randomseed(&lua, shared)?),
        ("set_repl", set_repl(&lua, shared)?),
    ];
    for (name, f) in raising_fns {
        rust.raw_set(name, raising(&lua, f)?)?;
    }
    rust.raw_set("call", c_function(&lua, stack::redis_call, shared)?)?;
    rust.raw_set("pcall", c_function(&lua, stack::redis_pcall, shared)?)?;
    rust.raw_set("breakpoint", c_function(&lua, super::ldb_hook::lua_breakpoint, shared)?)?;
    rust.raw_set("debug", c_function(&lua, super::ldb_hook::lua_debug, shared)?)?;
    let readonly = readonly::install(&lua)?;
    loaders::install(&lua)?;
    let prelude = lua.load(PRELUDE).set_name("=redis_prelude").into_function()?;
    let (env, runner): (Table, Function) = prelude.call((error_handler(&lua)?, rust, readonly))?;
    lua.set_globals(env)?;
    lua.set_memory_limit(LUA_MEMORY_LIMIT)?;
    // Small scripts make little garbage but a lot of GC steps at the default
    // pause (200%); collecting at 10x the live heap keeps that off the hot
    // path while the heap stays small (big runs are collected after the run).
    let mut raw = std::ptr::null_mut();
    // SAFETY: reads the state pointer, sets a GC parameter.
    unsafe {
        lua.exec_raw::<()>((), |state| {
            raw = state;
            ffi::lua_gc(state, ffi::LUA_GCSETPAUSE, GC_PAUSE);
        })?
    };
    // SAFETY: `raw` is the main thread, idle; the state keeps `shared`
    // alive (the closures above hold it) and Scripting outlives the state.
    unsafe { busy::install(raw, Rc::as_ptr(shared)) };
    let job = c_function(&lua, run::run_job, shared)?;
    Ok(State {
        raw,
        globals_ref: registry_ref(&lua, globals)?,
        runner_ref: registry_ref(&lua, runner)?,
        job_ref: registry_ref(&lua, job)?,
        lua,
    })
}

/// A registry reference keeping `v` alive until [`unref`].
pub(super) fn make_ref(lua: &Lua, v: impl mlua::IntoLua) -> mlua::Result<c_int> {
    registry_ref(lua, v)
}

/// Drop a reference made by [`make_ref`].
pub(super) fn unref(lua: &Lua, r: c_int) {
    // SAFETY: releases a registry slot this state handed out.
    let _ = unsafe { lua.exec_raw::<()>((), |state| ffi::luaL_unref(state, ffi::LUA_REGISTRYINDEX, r)) };
}

/// A registry reference keeping `v` alive for the state's lifetime.
fn registry_ref(lua: &Lua, v: impl mlua::IntoLua) -> mlua::Result<c_int> {
    // SAFETY: pops the pushed argument into the registry, pushes the index.
    let r = unsafe {
        lua.exec_raw::<i64>(v, |state| {
            let r = ffi::luaL_ref(state, ffi::LUA_REGISTRYINDEX);
            ffi::lua_pushinteger(state, r as ffi::lua_Integer);
        })?
    };
    Ok(r as c_int)
}

/// Compile a script body (text only; a shebang line becomes a comment so
/// line numbers stay right).
pub(super) fn compile(lua: &Lua, body: &[u8]) -> mlua::Result<c_int> {
    let mut text = body.to_vec();
    if text.starts_with(b"#!") {
        text[..2].copy_from_slice(b"--");
    }
    let f = lua.load(text).set_name("@user_script").set_mode(ChunkMode::Text).into_function()?;
    registry_ref(lua, f)
}

/// Chunks of the sandbox's own Lua code. Redis has C functions or VM
/// checks where these run, so their frames are passed over when finding
/// where an error happened.
const INTERNAL_CHUNKS: &[&str] = &["=redis_prelude", "=readonly_prelude", "=function_prelude"];

/// Where an error raised just below the message handler happened, as
/// Redis's handler sees it: the frame that raised, or its caller when that
/// frame is a C function (`error`, `redis.call`...); source and line.
fn error_position(lua: &Lua) -> Option<(String, i64)> {
    let mut first = true;
    for level in 1..200 {
        let (source, what, line) = lua.inspect_stack(level, |d| {
            let s = d.source();
            (s.source.map(|x| x.into_owned()).unwrap_or_default(), s.what, d.current_line().map_or(-1, |l| l as i64))
        })?;
        if INTERNAL_CHUNKS.contains(&source.as_str()) {
            continue;
        }
        if std::mem::take(&mut first) && what == "C" {
            continue;
        }
        return Some((source, line));
    }
    None
}

/// The message handler of every run: turn the error into an `{err=}` table
/// and note where it happened (`source`, `line`), as Redis's
/// `__redis__err__handler` does.
fn error_handler(lua: &Lua) -> mlua::Result<Function> {
    let tostring: Function = lua.globals().raw_get("tostring")?;
    lua.create_function(move |lua, err: Value| {
        let at = error_position(lua);
        let t = match err {
            Value::Table(t) => t,
            other => {
                let text: mlua::LuaString = tostring.call(other)?;
                let t = lua.create_table()?;
                t.raw_set("err", lua.create_string([b"ERR ".as_slice(), &text.as_bytes()].concat())?)?;
                t
            }
        };
        if let Some((source, line)) = at {
            t.raw_set("source", source)?;
            t.raw_set("line", line)?;
        }
        Ok(t)
    })
}

/// Wrap `f` (which returns `value` or `nil, message[, positioned]`) in a C
/// function that raises like Redis's C functions do: `{err=message}`, or
/// the message prefixed with the calling script line. A C function, not a
/// Lua wrapper, so `return redis.call(...)` keeps the script's frame (Lua
/// tail calls drop it) and errors still name the script line.
fn raising(lua: &Lua, f: Function) -> mlua::Result<Function> {
    // SAFETY: pushes one closure over the one argument exec_raw pushed.
    unsafe { lua.exec_raw::<Function>(f, |state| ffi::lua_pushcclosure(state, raise_trampoline, 1)) }
}

/// A C function with `shared` as its upvalue.
fn c_function(lua: &Lua, f: ffi::lua_CFunction, shared: &Rc<Shared>) -> mlua::Result<Function> {
    let ptr = Rc::as_ptr(shared);
    // SAFETY: exec_raw leaves stack room; `shared` outlives the state
    // (Scripting keeps the Rc and drops the state first).
    unsafe { lua.exec_raw::<Function>((), |state| stack::push_closure(state, f, ptr)) }
}

/// Calls upvalue 1 with all arguments and raises its error, if any. Holds
/// no Rust values with destructors: `lua_error` unwinds by longjmp.
unsafe extern "C-unwind" fn raise_trampoline(l: *mut ffi::lua_State) -> c_int {
    // SAFETY: a Lua C function; every index used is on the stack.
    unsafe {
        let n = ffi::lua_gettop(l);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, n, 3);
        // Stack: value, error, positioned.
        if ffi::lua_type(l, -2) == ffi::LUA_TNIL {
            ffi::lua_settop(l, -3);
            return 1;
        }
        let positioned = ffi::lua_toboolean(l, -1) != 0;
        ffi::lua_settop(l, -2);
        if positioned {
            ffi::luaL_where(l, 1);
            ffi::lua_insert(l, -2);
            ffi::lua_concat(l, 2);
        } else {
            ffi::lua_createtable(l, 0, 1);
            ffi::lua_insert(l, -2);
            ffi::lua_setfield(l, -2, c"err".as_ptr());
        }
        ffi::lua_error(l)
    }
}

/// `(nil, message)`: the wrapper raises `{err=message}`.
fn fail(lua: &Lua, msg: &str) -> mlua::Result<(Value, Value)> {
    Ok((Value::Nil, Value::String(lua.create_string(msg)?)))
}

fn sha1hex(lua: &Lua, args: MultiValue) -> mlua::Result<(Value, Value)> {
    if args.len() != 1 {
        return fail(lua, "ERR wrong number of arguments");
    }
    let text = match &args[0] {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Number(n) => lua.coerce_string(Value::Number(*n))?.map(|s| s.as_bytes().to_vec()).unwrap_or_default(),
        Value::Integer(n) => n.to_string().into_bytes(),
        _ => Vec::new(),
    };
    Ok((Value::String(lua.create_string(super::sha1_hex(&text))?), Value::Nil))
}

/// `redis.set_repl(flags)`: where the script's next commands replay, as
/// `REPL_AOF` and `REPL_REPLICA` bits (Redis's `PROPAGATE_*`); the flags
/// are read as Lua's `tonumber` and C's `(int)` do (a non-number is 0).
fn set_repl(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<Function> {
    let shared = shared.clone();
    lua.create_function(move |lua, args: MultiValue| {
        // SAFETY: called from a script, see `Shared::server`.
        let Some(srv) = (unsafe { shared.server() }) else {
            return fail(lua, "ERR redis.set_repl can only be called inside a script invocation");
        };
        if args.len() != 1 {
            // Sic: Redis 7.0's text.
            return fail(lua, "ERR redis.set_repl() requires two arguments.");
        }
        let flags = number(&args[0]).map_or(0, |n| n as i64);
        let all = i64::from(changes::TO_AOF | changes::TO_REPLICAS);
        if flags & !all != 0 {
            return fail(lua, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
        }
        srv.changes.set_withheld((!flags & all) as u8);
        Ok((Value::Nil, Value::Nil))
    })
}

fn setresp(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<Function> {
    let shared = shared.clone();
    lua.create_function(move |lua, args: MultiValue| {
        if args.len() != 1 {
            return fail(lua, "ERR redis.setresp() requires one argument.");
        }
        let v = match &args[0] {
            Value::Number(n) => *n as i64,
            Value::Integer(n) => *n,
            _ => 0,
        };
        if v != 2 && v != 3 {
            return fail(lua, "ERR RESP version must be 2 or 3.");
        }
        // SAFETY: called from a script, see `Shared::server`.
        if let Some(run) = unsafe { shared.server() }.and_then(|s| s.scripting.get_mut::<Scripting>().running.as_mut())
        {
            run.resp = v as u8;
        }
        Ok((Value::Nil, Value::Nil))
    })
}

fn log(lua: &Lua, args: MultiValue) -> mlua::Result<(Value, Value)> {
    use crate::config::LogLevel;
    if args.len() < 2 {
        return fail(lua, "ERR redis.log() requires two arguments or more.");
    }
    let level = match &args[0] {
        Value::Number(n) => *n as i64,
        Value::Integer(n) => *n,
        _ => return fail(lua, "ERR First argument must be a number (log level)."),
    };
    let level = match level {
        0 => LogLevel::Debug,
        1 => LogLevel::Verbose,
        2 => LogLevel::Notice,
        3 => LogLevel::Warning,
        _ => return fail(lua, "ERR Invalid debug level."),
    };
    let mut parts = Vec::new();
    for v in args.iter().skip(1) {
        if let Some(s) = lua.coerce_string(v.clone())? {
            parts.push(s.to_string_lossy());
        }
    }
    crate::log::write(level, format_args!("{}", parts.join(" ")));
    Ok((Value::Nil, Value::Nil))
}

/// `(nil, message, true)`: the wrapper raises the string at the caller's line.
fn fail_here(lua: &Lua, msg: &str) -> mlua::Result<(Value, Value, bool)> {
    Ok((Value::Nil, Value::String(lua.create_string(msg)?), true))
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => Some(*n),
        Value::Integer(n) => Some(*n as f64),
        Value::String(s) => s.to_str().ok()?.trim().parse().ok(),
        _ => None,
    }
}

fn random(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<Function> {
    let shared = shared.clone();
    lua.create_function(move |lua, args: MultiValue| {
        let mut state = shared.rand.get();
        let r = rand::next_double(&mut state);
        shared.rand.set(state);
        let bound = |i: usize| number(&args[i]).map(|n| n as i64);
        let v = match args.len() {
            0 => r,
            1 => match bound(0) {
                None => return fail_here(lua, "bad argument #1 to 'random' (number expected)"),
                Some(m) if m < 1 => return fail_here(lua, "bad argument #1 to 'random' (interval is empty)"),
                Some(m) => (r * m as f64).floor() + 1.0,
            },
            2 => match (bound(0), bound(1)) {
                (Some(lo), Some(hi)) if lo <= hi => (r * (hi - lo + 1) as f64).floor() + lo as f64,
                (Some(_), Some(_)) => return fail_here(lua, "bad argument #2 to 'random' (interval is empty)"),
                _ => return fail_here(lua, "bad argument to 'random' (number expected)"),
            },
            _ => return fail_here(lua, "wrong number of arguments"),
        };
        Ok((Value::Number(v), Value::Nil, false))
    })
}

fn randomseed(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<Function> {
    let shared = shared.clone();
    lua.create_function(move |lua, args: MultiValue| {
        let Some(seed) = args.front().and_then(number) else {
            return fail_here(lua, "bad argument #1 to 'randomseed' (number expected, got no value)");
        };
        shared.rand.set(rand::seeded(seed as i64 as i32));
        Ok((Value::Nil, Value::Nil, false))
    })
}
