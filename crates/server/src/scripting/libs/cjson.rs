//! `cjson`: lua-cjson 2.1.0 as Redis 7.0 embeds it: the module table (also
//! what `cjson.new()` returns), its per-instance configuration functions,
//! and the encoder. The decoder lives in `cjson_decode.rs`.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{LightUserData, Lua, MultiValue, Table, Value};

use super::cjson_decode;
use super::util::{
    bad_arg, by_index, c_i32, c_i64, check_number, err, fmt_g, keep_small, key_number, lib_function, ret1,
    stack_exhausted, type_name, LibErr, LibResult, MAX_C_STACK, ONE_PASS_MAX,
};

/// One cjson instance's settings (lua-cjson's `json_config_t`).
#[derive(Clone, Copy)]
pub(crate) struct Config {
    pub sparse_convert: bool,
    pub sparse_ratio: i32,
    pub sparse_safe: i32,
    pub encode_max_depth: i32,
    pub decode_max_depth: i32,
    pub precision: i32,
    pub keep_buffer: bool,
    /// 0 = error, 1 = emit `inf`/`nan`, 2 = emit `null`.
    pub encode_invalid: u8,
    pub decode_invalid: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            precision: 14,
            keep_buffer: true,
            encode_invalid: 0,
            decode_invalid: true,
        }
    }
}

type Cfg = Rc<Cell<Config>>;

/// `cjson.null`: a NULL light userdata, as in C.
pub(crate) fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// `json_arg_init`: at most `n` arguments.
fn max_args(args: &MultiValue, n: usize) -> LibResult<()> {
    if args.len() > n {
        Err(bad_arg(n + 1, "found too many arguments"))
    } else {
        Ok(())
    }
}

/// `json_enum_option`: a boolean, or one of `options` by name; returns the
/// (possibly updated) setting as Lua shows it.
fn enum_option(lua: &Lua, args: &MultiValue, idx: usize, setting: &mut u8, options: &[&str]) -> LibResult<Value> {
    match args.get(idx - 1) {
        None | Some(Value::Nil) => {}
        Some(Value::Boolean(b)) => *setting = u8::from(*b),
        Some(_) => {
            let s = super::util::check_string(lua, args, idx)?;
            let s = s.as_bytes();
            match options.iter().position(|o| o.as_bytes() == &s[..]) {
                Some(i) => *setting = i as u8,
                None => {
                    let shown = String::from_utf8_lossy(&s);
                    return Err(bad_arg(idx, &format!("invalid option '{shown}'")));
                }
            }
        }
    }
    Ok(if *setting <= 1 {
        Value::Boolean(*setting == 1)
    } else {
        Value::String(lua.create_string(options[usize::from(*setting)])?)
    })
}

/// `json_integer_option`: an integer in `min..=max` (the range error always
/// names argument #1, as lua-cjson does).
fn int_option(lua: &Lua, args: &MultiValue, idx: usize, setting: &mut i32, min: i32, max: i32) -> LibResult<Value> {
    if !matches!(args.get(idx - 1), None | Some(Value::Nil)) {
        let v = c_i64(check_number(lua, args, idx)?) as i32;
        if v < min || v > max {
            return Err(bad_arg(1, &format!("expected integer between {min} and {max}")));
        }
        *setting = v;
    }
    Ok(Value::Number(f64::from(*setting)))
}

const BOOL_OPTS: &[&str] = &["off", "on"];

/// Registers the configuration functions on `t`.
fn config_functions(lua: &Lua, t: &Table, cfg: &Cfg) -> mlua::Result<()> {
    let c = cfg.clone();
    t.raw_set(
        "encode_sparse_array",
        lib_function(lua, move |lua, args| {
            max_args(&args, 3)?;
            let mut k = c.get();
            let mut conv = u8::from(k.sparse_convert);
            let a = enum_option(lua, &args, 1, &mut conv, BOOL_OPTS)?;
            k.sparse_convert = conv == 1;
            let b = int_option(lua, &args, 2, &mut k.sparse_ratio, 0, i32::MAX);
            c.set(k);
            let b = b?;
            let d = int_option(lua, &args, 3, &mut k.sparse_safe, 0, i32::MAX);
            c.set(k);
            Ok(MultiValue::from_vec(vec![a, b, d?]))
        })?,
    )?;
    type IntField = fn(&mut Config) -> &mut i32;
    let ints: [(&'static str, IntField, i32, i32); 3] = [
        ("encode_max_depth", |k| &mut k.encode_max_depth, 1, i32::MAX),
        ("decode_max_depth", |k| &mut k.decode_max_depth, 1, i32::MAX),
        ("encode_number_precision", |k| &mut k.precision, 1, 14),
    ];
    for (name, field, min, max) in ints {
        let c = cfg.clone();
        let f = lib_function(lua, move |lua, args| {
            max_args(&args, 1)?;
            let mut k = c.get();
            let v = int_option(lua, &args, 1, field(&mut k), min, max)?;
            c.set(k);
            ret1(v)
        })?;
        t.raw_set(name, f)?;
    }
    type EnumField = fn(&mut Config) -> (u8, &'static [&'static str]);
    type EnumStore = fn(&mut Config, u8);
    let enums: [(&'static str, EnumField, EnumStore); 3] = [
        ("encode_keep_buffer", |k| (u8::from(k.keep_buffer), BOOL_OPTS), |k, v| k.keep_buffer = v == 1),
        ("encode_invalid_numbers", |k| (k.encode_invalid, &["off", "on", "null"]), |k, v| k.encode_invalid = v),
        ("decode_invalid_numbers", |k| (u8::from(k.decode_invalid), BOOL_OPTS), |k, v| k.decode_invalid = v == 1),
    ];
    for (name, get, store) in enums {
        let c = cfg.clone();
        let f = lib_function(lua, move |lua, args| {
            max_args(&args, 1)?;
            let mut k = c.get();
            let (mut v, opts) = get(&mut k);
            let r = enum_option(lua, &args, 1, &mut v, opts)?;
            store(&mut k, v);
            c.set(k);
            ret1(r)
        })?;
        t.raw_set(name, f)?;
    }
    Ok(())
}

/// Builds a cjson module table with fresh default settings (`cjson` itself
/// and every `cjson.new()`).
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let cfg: Cfg = Rc::new(Cell::new(Config::default()));
    let t = lua.create_table()?;
    let c = cfg.clone();
    t.raw_set(
        "encode",
        lib_function(lua, move |lua, args| {
            if args.len() != 1 {
                return Err(bad_arg(1, "expected 1 argument"));
            }
            let mut enc = Encoder { cfg: c.get(), out: Vec::with_capacity(64), slots: 1 };
            enc.value(&args[0], 0)?;
            ret1(Value::String(lua.create_string(&enc.out)?))
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set("decode", lib_function(lua, move |lua, args| cjson_decode::decode(lua, &c.get(), &args))?)?;
    t.raw_set("new", lib_function(lua, |lua, _| ret1(Value::Table(module(lua)?)))?)?;
    config_functions(lua, &t, &cfg)?;
    t.raw_set("null", null())?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    Ok(t)
}

/// JSON text of byte `c` inside a string, when it needs escaping.
fn escape(c: u8) -> Option<&'static [u8]> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    static CTRL: [[u8; 6]; 32] = {
        let mut t = [[0u8; 6]; 32];
        let mut i = 0;
        while i < 32 {
            t[i] = [b'\\', b'u', b'0', b'0', HEX[i >> 4], HEX[i & 15]];
            i += 1;
        }
        t
    };
    Some(match c {
        b'\x08' => b"\\b",
        b'\t' => b"\\t",
        b'\n' => b"\\n",
        b'\x0c' => b"\\f",
        b'\r' => b"\\r",
        0..=31 => &CTRL[usize::from(c)],
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        b'/' => b"\\/",
        127 => b"\\u007f",
        _ => return None,
    })
}

/// Serialises one value into `out` (lua-cjson's `json_append_*`).
struct Encoder {
    cfg: Config,
    out: Vec<u8>,
    /// Lua stack slots the C encoder would hold (see `MAX_C_STACK`).
    slots: usize,
}

impl Encoder {
    #[inline(never)]
    fn string(&mut self, s: &[u8]) {
        self.out.reserve(s.len() + 2);
        self.out.push(b'"');
        let mut start = 0;
        for (i, &c) in s.iter().enumerate() {
            if let Some(e) = escape(c) {
                self.out.extend_from_slice(&s[start..i]);
                self.out.extend_from_slice(e);
                start = i + 1;
            }
        }
        self.out.extend_from_slice(&s[start..]);
        self.out.push(b'"');
    }

    #[inline(never)]
    fn number(&mut self, n: f64) -> LibResult<()> {
        if !n.is_finite() {
            match self.cfg.encode_invalid {
                0 => return err("Cannot serialise number: must not be NaN or Inf"),
                // Redis's lua-cjson spells every NaN "nan" (never "-nan").
                1 if n.is_nan() => {
                    self.out.extend_from_slice(b"nan");
                    return Ok(());
                }
                1 => {}
                _ => {
                    self.out.extend_from_slice(b"null");
                    return Ok(());
                }
            }
        }
        fmt_g(&mut self.out, n, self.cfg.precision as usize);
        Ok(())
    }

    fn value(&mut self, v: &Value, depth: i32) -> LibResult<()> {
        match v {
            Value::String(s) => self.string(&s.as_bytes()),
            Value::Integer(i) => self.number(*i as f64)?,
            Value::Number(n) => self.number(*n)?,
            Value::Boolean(b) => self.out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::LightUserData(p) if p.0.is_null() => self.out.extend_from_slice(b"null"),
            Value::Table(t) => self.table(t, depth + 1)?,
            other => return err(format!("Cannot serialise {}: type not supported", type_name(other))),
        }
        Ok(())
    }

    /// lua-cjson's `lua_array_length`: the array length, or None to encode
    /// as an object. Keys must be integral numbers >= 1; the running maximum
    /// is a C `int` (huge keys wrap to `INT_MIN`, as on x86-64).
    #[inline(never)]
    fn array_length(&self, t: &Table, pairs: &mut Vec<(Value, Value)>) -> LibResult<Option<i32>> {
        let (mut max, mut items, mut array, mut count) = (0i32, 0i32, true, 0usize);
        t.for_each(|k: Value, v: Value| {
            count += 1;
            if array {
                let n = key_number(&k).unwrap_or(0.0);
                if n != 0.0 && n.floor() == n && n >= 1.0 {
                    if n > f64::from(max) {
                        max = c_i32(n);
                    }
                    items = items.wrapping_add(1);
                } else {
                    array = false;
                }
            }
            keep_small(pairs, count, k, v);
            Ok(())
        })?;
        if !array {
            return Ok(None);
        }
        let c = &self.cfg;
        if c.sparse_ratio > 0 && max > items.wrapping_mul(c.sparse_ratio) && max > c.sparse_safe {
            if !c.sparse_convert {
                return err("Cannot serialise table: excessively sparse array");
            }
            return Ok(None);
        }
        Ok((max > 0).then_some(max))
    }

    fn table(&mut self, t: &Table, depth: i32) -> LibResult<()> {
        match self.table_body(t, depth) {
            // mlua's handle stack (~8000 live handles) ran out: our analogue
            // of the Lua stack limit, reached a little before Redis's.
            Err(LibErr::Lua(mlua::Error::StackError)) => err(format!("Cannot serialise, excessive nesting ({depth})")),
            r => r,
        }
    }

    fn table_body(&mut self, t: &Table, depth: i32) -> LibResult<()> {
        if depth > self.cfg.encode_max_depth || self.slots + 3 > MAX_C_STACK || stack_exhausted() {
            return err(format!("Cannot serialise, excessive nesting ({depth})"));
        }
        let mut pairs = Vec::new();
        let len = self.array_length(t, &mut pairs)?;
        // `pairs` holds the whole table only when it is small.
        let one_pass = !pairs.is_empty();
        match len {
            Some(len) => {
                self.out.push(b'[');
                self.slots += 1;
                if one_pass && (len as usize) <= 4 * ONE_PASS_MAX {
                    let slots = by_index(pairs, len as usize);
                    for (i, v) in slots.into_iter().enumerate() {
                        if i > 0 {
                            self.out.push(b',');
                        }
                        self.value(&v, depth)?;
                    }
                } else {
                    drop(pairs);
                    for i in 1..=len {
                        if i > 1 {
                            self.out.push(b',');
                        }
                        self.value(&t.raw_get::<Value>(i)?, depth)?;
                    }
                }
                self.slots -= 1;
                self.out.push(b']');
            }
            None => {
                self.out.push(b'{');
                self.slots += 2;
                if one_pass {
                    for (i, (k, v)) in pairs.into_iter().enumerate() {
                        if i > 0 {
                            self.out.push(b',');
                        }
                        self.key(k)?;
                        self.value(&v, depth)?;
                    }
                } else {
                    // `pairs` (one protected `lua_next` per step) rather than
                    // `for_each`: recursing inside for_each nests protected
                    // calls, which Lua caps at 200 ("C stack overflow").
                    let mut first = true;
                    for kv in t.pairs::<Value, Value>() {
                        let (k, v) = kv?;
                        if !std::mem::take(&mut first) {
                            self.out.push(b',');
                        }
                        self.key(k)?; // consumed: one handle fewer while recursing
                        self.value(&v, depth)?;
                    }
                }
                self.slots -= 2;
                self.out.push(b'}');
            }
        }
        Ok(())
    }

    /// An object member's key and colon.
    fn key(&mut self, k: Value) -> LibResult<()> {
        match k {
            Value::Integer(i) => self.number_key(i as f64),
            Value::Number(n) => self.number_key(n),
            Value::String(s) => {
                self.string(&s.as_bytes());
                self.out.push(b':');
                Ok(())
            }
            other => err(format!("Cannot serialise {}: table key must be a number or string", type_name(&other))),
        }
    }

    fn number_key(&mut self, n: f64) -> LibResult<()> {
        self.out.push(b'"');
        self.number(n)?;
        self.out.extend_from_slice(b"\":");
        Ok(())
    }
}
