//! FUNCTION libraries (Redis 7.0): parsing a library's `#!lua name=<lib>`
//! header, running its code once so it can `redis.register_function`, and
//! the registry of libraries and the functions they registered.
//!
//! Libraries live in their own Lua state, built by the same sandbox as
//! EVAL's (so SCRIPT FLUSH leaves them alone and FUNCTION FLUSH leaves the
//! script cache alone, as in Redis). While a library loads, its globals
//! are the small load API (`redis.register_function`, `redis.log`, the log
//! levels and version), with a 500 ms budget; once loaded, the functions it
//! registered see the full `redis` API, like any script.
use std::collections::HashMap;
use std::ffi::c_int;
use std::time::{Duration, Instant};

use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::{sandbox, Shared};

/// How long a library's top-level code may run (Redis's LOAD_TIMEOUT_MS).
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

/// Script flags, in the order Redis lists them (FUNCTION LIST, shebangs).
pub const FLAG_NAMES: [&str; 5] = ["no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"];
pub const NO_WRITES: u8 = 1;

/// Bits of [`FLAG_NAMES`] for a flag name (case-insensitive, as Redis).
pub fn flag_bit(name: &[u8]) -> Option<u8> {
    FLAG_NAMES.iter().position(|f| f.as_bytes().eq_ignore_ascii_case(name)).map(|i| 1 << i)
}

/// One registered function.
pub struct FunctionInfo {
    pub name: Vec<u8>,
    pub desc: Option<Vec<u8>>,
    pub flags: u8,
    /// Lua registry reference of the callback.
    pub(super) func_ref: c_int,
}

/// One loaded library: its full code (header included, as FUNCTION LIST
/// WITHCODE, DUMP and the RDB give it back) and its functions.
pub struct Library {
    pub name: Vec<u8>,
    pub code: Vec<u8>,
    pub functions: Vec<FunctionInfo>,
}

/// What FUNCTION RESTORE does with libraries that already exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestorePolicy {
    Append,
    Replace,
    Flush,
}

/// The function libraries and the Lua state they run in.
pub struct Functions {
    pub(super) state: FunctionState,
    libraries: Vec<Library>,
    /// Lowercased function name -> (library index, function index):
    /// function names are case-insensitive across libraries, as in Redis.
    index: HashMap<Vec<u8>, (usize, usize)>,
}

impl Functions {
    pub(super) fn new(shared: &Rc<Shared>) -> Functions {
        let state = new_function_state(shared).expect("building the functions' Lua sandbox");
        Functions { state, libraries: Vec::new(), index: HashMap::new() }
    }

    pub fn libraries(&self) -> &[Library] {
        &self.libraries
    }

    pub fn function_count(&self) -> usize {
        self.index.len()
    }

    pub fn find(&self, name: &[u8]) -> Option<&FunctionInfo> {
        self.index.get(&name.to_ascii_lowercase()).map(|&(l, f)| &self.libraries[l].functions[f])
    }

    /// Bytes of the libraries' source code (INFO `used_memory_functions`).
    pub fn code_bytes(&self) -> usize {
        self.libraries.iter().map(|l| l.code.len()).sum()
    }

    /// Bytes the functions' Lua heap uses.
    pub fn lua_memory(&self) -> usize {
        self.state.base.lua.used_memory()
    }

    /// FUNCTION LOAD: compile and run `code`, then add its library
    /// (replacing one of the same name if `replace`). Returns its name.
    pub(super) fn load(&mut self, shared: &Shared, code: &[u8], replace: bool) -> Result<Vec<u8>, String> {
        let lib = self.create(shared, code)?;
        let name = lib.name.clone();
        let old = self.libraries.iter().position(|l| l.name == lib.name);
        if old.is_some() && !replace {
            self.free(lib);
            return Err(format!("ERR Library '{}' already exists", String::from_utf8_lossy(&name)));
        }
        self.join(vec![lib], true).map(|()| name)
    }

    /// Compile and run a library's code in the load environment.
    fn create(&mut self, shared: &Shared, code: &[u8]) -> Result<Library, String> {
        let (name, body_at) = parse_header(code)?;
        let lua = &self.state.base.lua;
        let chunk = lua
            .load(&code[body_at..])
            .set_name("@user_function")
            .set_mode(mlua::chunk::ChunkMode::Text)
            .set_environment(self.state.globals.clone())
            .into_function()
            .map_err(|e| format!("ERR Error compiling function: {}", lua_message(&e)))?;
        let registered = self.run_load(shared, &chunk);
        let functions = registered.map_err(|e| format!("ERR Error registering functions: {e}"))?;
        let lib = Library { name, code: code.to_vec(), functions };
        if lib.functions.is_empty() {
            return Err("ERR No functions registered".into());
        }
        Ok(lib)
    }

    /// Run a library's top level with the load API and its time budget.
    fn run_load(&self, shared: &Shared, chunk: &Function) -> Result<Vec<FunctionInfo>, String> {
        shared.registering.replace(Some(Vec::new()));
        shared.load_deadline.set(Some(Instant::now() + LOAD_TIMEOUT));
        let switched = self.state.loading.call::<()>(true);
        let ran = switched.and_then(|()| chunk.call::<()>(()));
        // The deadline goes first: a hook firing inside `loading(false)`
        // would leave the globals pointing at the load API.
        shared.load_deadline.set(None);
        let _ = self.state.loading.call::<()>(false);
        let mut registered = shared.registering.take().unwrap_or_default();
        if let Err(e) = ran {
            self.unref_all(&registered);
            return Err(error_text(&e));
        }
        registered.shrink_to_fit();
        Ok(registered)
    }

    /// Link `libs` in: a library of the same name is replaced if `replace`
    /// (else the whole join fails), and no function name may be taken by
    /// another library. Nothing changes on failure.
    pub(super) fn join(&mut self, libs: Vec<Library>, replace: bool) -> Result<(), String> {
        let replaced: Vec<usize> = self
            .libraries
            .iter()
            .enumerate()
            .filter(|(_, l)| libs.iter().any(|n| n.name == l.name))
            .map(|(i, _)| i)
            .collect();
        if !replaced.is_empty() && !replace {
            let name = String::from_utf8_lossy(&self.libraries[replaced[0]].name).into_owned();
            libs.into_iter().for_each(|l| self.free(l));
            return Err(format!("ERR Library {name} already exists"));
        }
        let clash = libs
            .iter()
            .flat_map(|l| &l.functions)
            .find(|f| self.index.get(&f.name.to_ascii_lowercase()).is_some_and(|(li, _)| !replaced.contains(li)));
        if let Some(f) = clash {
            let msg = format!("ERR Function {} already exists", String::from_utf8_lossy(&f.name));
            libs.into_iter().for_each(|l| self.free(l));
            return Err(msg);
        }
        for i in replaced.into_iter().rev() {
            let old = self.libraries.remove(i);
            self.free(old);
        }
        self.libraries.extend(libs);
        self.reindex();
        Ok(())
    }

    /// FUNCTION DELETE.
    pub fn delete(&mut self, name: &[u8]) -> Result<(), &'static str> {
        let i = self.libraries.iter().position(|l| l.name == name).ok_or("ERR Library not found")?;
        let lib = self.libraries.remove(i);
        self.free(lib);
        self.reindex();
        Ok(())
    }

    /// FUNCTION FLUSH: every library goes.
    pub fn flush(&mut self) {
        for lib in std::mem::take(&mut self.libraries) {
            self.free(lib);
        }
        self.index.clear();
    }

    /// FUNCTION RESTORE / loading a dump: compile every library of `codes`,
    /// then link them in by `policy`. Nothing changes on failure.
    pub(super) fn restore(&mut self, shared: &Shared, codes: &[Vec<u8>], policy: RestorePolicy) -> Result<(), String> {
        let mut libs: Vec<Library> = Vec::with_capacity(codes.len());
        for code in codes {
            match self.create(shared, code) {
                Ok(lib) if libs.iter().any(|l| l.name == lib.name) => {
                    let msg = format!("ERR Library {} already exists", String::from_utf8_lossy(&lib.name));
                    self.free(lib);
                    libs.into_iter().for_each(|l| self.free(l));
                    return Err(msg);
                }
                Ok(lib) => libs.push(lib),
                Err(e) => {
                    libs.into_iter().for_each(|l| self.free(l));
                    return Err(e);
                }
            }
        }
        if policy == RestorePolicy::Flush {
            self.flush();
        }
        self.join(libs, policy == RestorePolicy::Replace)
    }

    fn reindex(&mut self) {
        self.index.clear();
        for (li, lib) in self.libraries.iter().enumerate() {
            for (fi, f) in lib.functions.iter().enumerate() {
                self.index.insert(f.name.to_ascii_lowercase(), (li, fi));
            }
        }
    }

    fn free(&self, lib: Library) {
        self.unref_all(&lib.functions);
    }

    fn unref_all(&self, functions: &[FunctionInfo]) {
        for f in functions {
            sandbox::unref(&self.state.base.lua, f.func_ref);
        }
    }
}

/// `#!<engine> name=<lib>` on the first line: the library's name and where
/// the code after the header starts (the newline, so line numbers stay).
fn parse_header(code: &[u8]) -> Result<(Vec<u8>, usize), String> {
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let end = code.iter().position(|&b| b == b'\n').ok_or("ERR Invalid library metadata")?;
    let parts = resp::splitargs::split_args(&code[..end]).ok_or("ERR Invalid library metadata")?;
    let Some(engine) = parts.first().map(|e| e.get(2..).unwrap_or_default()) else {
        return Err("ERR Invalid library metadata".into());
    };
    let mut name = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err("ERR Invalid metadata value, name argument was given multiple times".into());
            }
            name = Some(part[5..].to_vec());
            continue;
        }
        return Err(format!("ERR Invalid metadata value given: {}", String::from_utf8_lossy(part)));
    }
    let name = name.ok_or("ERR Library name was not given")?;
    if !valid_name(&name) {
        return Err(INVALID_NAME.into());
    }
    if !engine.eq_ignore_ascii_case(b"lua") {
        return Err(format!("ERR Engine '{}' not found", String::from_utf8_lossy(engine)));
    }
    Ok((name, end))
}

pub(super) const INVALID_NAME: &str =
    "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// Library and function names: `[A-Za-z0-9_]+`.
pub(super) fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The text of a load error, as Redis's error extraction gives it: what
/// `register_function` refused already carries its code; a Lua error string
/// gets `ERR `.
fn error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => lua_message(cause),
        other => format!("ERR {}", lua_message(other)),
    }
}

/// The innermost message of an mlua error (callback errors wrap the cause).
fn lua_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => lua_message(cause),
        // mlua appends a traceback to errors raised inside `call`; Redis's
        // text ends at the message.
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => {
            m.split("\nstack traceback:").next().unwrap_or_default().to_string()
        }
        mlua::Error::ExternalError(x) => x.to_string(),
        other => other.to_string(),
    }
}

/// `redis.register_function(name, callback)` or
/// `redis.register_function{function_name=, callback=, description=, flags=}`
/// during a library load.
pub(super) fn register_function(lua: &Lua, shared: &Shared, args: MultiValue) -> mlua::Result<()> {
    if shared.registering.borrow().is_none() {
        return Err(raise("redis.register_function can only be called on FUNCTION LOAD command"));
    }
    let info = match args.len() {
        1 => named_args(lua, &args[0])?,
        2 => positional_args(lua, &args[0], &args[1])?,
        _ => return Err(raise("wrong number of arguments to redis.register_function")),
    };
    if !valid_name(&info.name) {
        sandbox::unref(lua, info.func_ref);
        return Err(raise(&INVALID_NAME[4..]));
    }
    let mut registering = shared.registering.borrow_mut();
    let Some(list) = registering.as_mut() else { return Ok(()) };
    // Names are case-sensitive within a library (Redis's library dict).
    if list.iter().any(|f| f.name == info.name) {
        sandbox::unref(lua, info.func_ref);
        return Err(raise("Function already exists in the library"));
    }
    list.push(info);
    Ok(())
}

fn raise(msg: &str) -> mlua::Error {
    mlua::Error::runtime(format!("ERR {msg}"))
}

fn positional_args(lua: &Lua, name: &Value, callback: &Value) -> mlua::Result<FunctionInfo> {
    let Some(name) = lua.coerce_string(name.clone())? else {
        return Err(raise("first argument to redis.register_function must be a string"));
    };
    let Value::Function(f) = callback else {
        return Err(raise("second argument to redis.register_function must be a function"));
    };
    Ok(FunctionInfo {
        name: name.as_bytes().to_vec(),
        desc: None,
        flags: 0,
        func_ref: sandbox::make_ref(lua, f.clone())?,
    })
}

fn named_args(lua: &Lua, arg: &Value) -> mlua::Result<FunctionInfo> {
    let Value::Table(t) = arg else {
        return Err(raise(
            "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).",
        ));
    };
    let (mut name, mut desc, mut callback, mut flags) = (None, None, None, 0u8);
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, v) = pair?;
        let Value::String(k) = k else {
            return Err(raise("named argument key given to redis.register_function is not a string"));
        };
        match k.to_str()?.to_ascii_lowercase().as_str() {
            "function_name" => match lua.coerce_string(v)? {
                Some(s) => name = Some(s.as_bytes().to_vec()),
                None => return Err(raise("function_name argument given to redis.register_function must be a string")),
            },
            "description" => match lua.coerce_string(v)? {
                Some(s) => desc = Some(s.as_bytes().to_vec()),
                None => return Err(raise("description argument given to redis.register_function must be a string")),
            },
            "callback" => match v {
                Value::Function(f) => callback = Some(f),
                _ => return Err(raise("callback argument given to redis.register_function must be a function")),
            },
            "flags" => flags = read_flags(&v)?,
            _ => return Err(raise("unknown argument given to redis.register_function")),
        }
    }
    let name = name.ok_or_else(|| raise("redis.register_function must get a function name argument"))?;
    let callback = callback.ok_or_else(|| raise("redis.register_function must get a callback argument"))?;
    Ok(FunctionInfo { name, desc, flags, func_ref: sandbox::make_ref(lua, callback)? })
}

fn read_flags(v: &Value) -> mlua::Result<u8> {
    let Value::Table(t) = v else {
        return Err(raise("flags argument to redis.register_function must be a table representing function flags"));
    };
    let mut flags = 0;
    for item in t.clone().sequence_values::<Value>() {
        let bit = match item? {
            Value::String(s) => flag_bit(&s.as_bytes()),
            _ => None,
        };
        flags |= bit.ok_or_else(|| raise("unknown flag given"))?;
    }
    Ok(flags)
}

/// The function libraries' globals: a read-only table whose reads go to
/// the load API while a library loads and to the script globals otherwise
/// (through `switch`, whose metatable `loading` repoints). The load API is
/// `redis` with only `register_function`, `log`, the log levels and the
/// version; reading anything else there is the missing-global error.
const FUNCTION_PRELUDE: &str = r#"
local env, register, log, readonly = ...
local error, setmetatable, tostring = error, setmetatable, tostring
local function missing(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end
local redis = setmetatable({register_function = register, log = log,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REDIS_VERSION = '7.0.15', REDIS_VERSION_NUM = 0x0007000f}, {__index = missing})
local load_api = readonly(setmetatable({redis = readonly(redis)}, {__index = missing}))
local switch_meta = {__index = env}
local globals = readonly(setmetatable({}, switch_meta))
local function loading(on) switch_meta.__index = on and load_api or env end
return globals, loading
"#;

/// The state function libraries run in: a script state plus the switchable
/// globals of [`FUNCTION_PRELUDE`] and a runner passing KEYS and ARGV as
/// the callback's arguments.
pub(super) struct FunctionState {
    pub(super) base: super::State,
    pub(super) globals: Table,
    /// `loading(true|false)`: point the globals at the load API or back.
    pub(super) loading: Function,
}

/// A fresh state for function libraries, sharing `shared` with the server.
pub(super) fn new_function_state(shared: &Rc<Shared>) -> mlua::Result<FunctionState> {
    let base = sandbox::new_state(shared)?;
    let lua = &base.lua;
    let env = lua.globals();
    let redis: Table = env.get("redis")?;
    let log: Function = redis.get("log")?;
    let reg_shared = shared.clone();
    let register = lua.create_function(move |lua, args: MultiValue| register_function(lua, &reg_shared, args))?;
    let prelude = lua.load(FUNCTION_PRELUDE).set_name("=function_prelude").into_function()?;
    let readonly = super::readonly::maker(lua)?;
    let (globals, loading): (Table, Function) = prelude.call((env, register, log, readonly))?;
    Ok(FunctionState { base, globals, loading })
}
