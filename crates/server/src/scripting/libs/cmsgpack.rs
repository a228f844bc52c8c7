//! `cmsgpack`: lua-cmsgpack 0.4.0 as Redis 7.0 embeds it. Byte-for-byte the
//! same encoding choices (smallest integer form, float32 when lossless, str8
//! for 32..255 bytes, arrays only for tables with keys exactly 1..n, tables
//! nested deeper than 16 become nil) and the same decoder quirks (uint64
//! read as int64, no bin/ext types, Lua stack limits on huge results).

use mlua::{Lua, MultiValue, Table, Value};

use super::util::{
    bad_arg, by_index, c_i32, c_i64, check_integer, check_string, err, keep_small, key_number, lib_function,
    opt_integer, stack_exhausted, LibErr, LibResult, Results, MAX_C_STACK, ONE_PASS_MAX,
};

/// Tables nested this deep are encoded as nil (guards against cycles).
const MAX_NESTING: usize = 16;

fn put_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn put_number(out: &mut Vec<u8>, d: f64) {
    // An integral double that survives a round trip through int64.
    if !d.is_infinite() && c_i64(d) as f64 == d {
        put_int(out, c_i64(d));
        return;
    }
    let f = d as f32;
    if f64::from(f) == d {
        out.push(0xca);
        out.extend_from_slice(&f.to_bits().to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&d.to_bits().to_be_bytes());
    }
}

fn put_bytes(out: &mut Vec<u8>, s: &[u8]) {
    let len = s.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(s);
}

/// Array/map header: fix form up to 15, then 16- and 32-bit lengths.
fn put_header(out: &mut Vec<u8>, len: usize, fix: u8, code16: u8) {
    if len <= 15 {
        out.push(fix | len as u8);
    } else if len <= 0xffff {
        out.push(code16);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(code16 + 1);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

/// A table as lua-cmsgpack encodes it: an array when its keys are exactly
/// 1..n (`table_is_an_array`, keys compared as C `int`), else a map.
fn encode_table(out: &mut Vec<u8>, t: &Table, level: usize) -> mlua::Result<()> {
    let (mut count, mut max, mut array) = (0usize, 0i32, true);
    let mut pairs: Vec<(Value, Value)> = Vec::new();
    t.for_each(|k: Value, v: Value| {
        count += 1;
        if array {
            let n = key_number(&k).unwrap_or(f64::NAN);
            if n > 0.0 && f64::from(c_i32(n)) == n {
                max = max.max(c_i32(n));
            } else {
                array = false;
            }
        }
        keep_small(&mut pairs, count, k, v);
        Ok(())
    })?;
    if array && max as usize == count {
        put_header(out, count, 0x90, 0xdc);
        if count <= ONE_PASS_MAX {
            // Keys are exactly 1..=count: put each value in its slot.
            let slots = by_index(pairs, count);
            for v in &slots {
                encode(out, v, level + 1)?;
            }
        } else {
            for i in 1..=count {
                encode(out, &t.raw_get::<Value>(i)?, level + 1)?;
            }
        }
    } else {
        put_header(out, count, 0x80, 0xde);
        if count <= ONE_PASS_MAX {
            for (k, v) in &pairs {
                encode(out, k, level + 1)?;
                encode(out, v, level + 1)?;
            }
        } else {
            t.for_each(|k: Value, v: Value| {
                encode(out, &k, level + 1)?;
                encode(out, &v, level + 1)
            })?;
        }
    }
    Ok(())
}

fn encode(out: &mut Vec<u8>, v: &Value, level: usize) -> mlua::Result<()> {
    match v {
        Value::String(s) => put_bytes(out, &s.as_bytes()),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => put_number(out, *i as f64),
        Value::Number(n) => put_number(out, *n),
        Value::Table(t) if level < MAX_NESTING => encode_table(out, t, level)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

fn pack(lua: &Lua, args: MultiValue) -> LibResult<MultiValue> {
    if args.is_empty() {
        return Err(bad_arg(0, "MessagePack pack needs input."));
    }
    let mut out = Vec::with_capacity(64);
    for v in args.iter() {
        encode(&mut out, v, 0)?;
    }
    Ok(MultiValue::from_vec(vec![Value::String(lua.create_string(&out)?)]))
}

/// Why decoding stopped.
enum DecodeErr {
    /// Input ended inside a value.
    Eof,
    /// An unknown type byte.
    BadFormat,
    /// A Lua error raised mid-decode (stack limit, nil/NaN table key).
    Lua(LibErr),
}

impl From<mlua::Error> for DecodeErr {
    fn from(e: mlua::Error) -> Self {
        DecodeErr::Lua(LibErr::Lua(e))
    }
}

/// Decoder cursor; `slots` mirrors the C function's Lua stack usage so the
/// stack-overflow errors happen exactly where lua-cmsgpack's would.
struct Cursor<'a> {
    lua: &'a Lua,
    data: &'a [u8],
    pos: usize,
    slots: usize,
}

#[cold]
#[inline(never)]
fn stack_overflow(what: &str) -> DecodeErr {
    DecodeErr::Lua(LibErr::Msg(format!("stack overflow ({what})")))
}

impl Cursor<'_> {
    fn need(&self, n: usize) -> Result<(), DecodeErr> {
        if self.data.len() - self.pos < n {
            Err(DecodeErr::Eof)
        } else {
            Ok(())
        }
    }

    /// Big-endian unsigned integer of `n` bytes after the type byte.
    fn be(&mut self, n: usize) -> Result<u64, DecodeErr> {
        self.need(1 + n)?;
        let v = self.data[self.pos + 1..self.pos + 1 + n].iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
        self.pos += 1 + n;
        Ok(v)
    }

    #[inline(never)]
    fn string(&mut self, hdr: usize, len: usize) -> Result<Value, DecodeErr> {
        self.need(hdr + len)?;
        let s = self.lua.create_string(&self.data[self.pos + hdr..self.pos + hdr + len])?;
        self.pos += hdr + len;
        Ok(Value::String(s))
    }

    fn value(&mut self) -> Result<Value, DecodeErr> {
        self.need(1)?;
        if self.slots + 1 > MAX_C_STACK {
            return Err(stack_overflow("too many return values at once; use unpack_one or unpack_limit instead."));
        }
        let b = self.data[self.pos];
        Ok(match b {
            0xc0 => self.skip(1, Value::Nil),
            0xc2 => self.skip(1, Value::Boolean(false)),
            0xc3 => self.skip(1, Value::Boolean(true)),
            0xcc..=0xce => Value::Number(self.be(1 << (b - 0xcc))? as f64),
            // lua-cmsgpack pushes uint64 through a signed lua_Integer.
            0xcf => Value::Number(self.be(8)? as i64 as f64),
            0xd0 => Value::Number(f64::from(self.be(1)? as i8)),
            0xd1 => Value::Number(f64::from(self.be(2)? as i16)),
            0xd2 => Value::Number(f64::from(self.be(4)? as i32)),
            0xd3 => Value::Number(self.be(8)? as i64 as f64),
            0xca => Value::Number(f64::from(f32::from_bits(self.be(4)? as u32))),
            0xcb => Value::Number(f64::from_bits(self.be(8)?)),
            0xd9 => {
                self.need(2)?;
                self.string(2, usize::from(self.data[self.pos + 1]))?
            }
            0xda => {
                self.need(3)?;
                let len = u16::from_be_bytes([self.data[self.pos + 1], self.data[self.pos + 2]]);
                self.string(3, usize::from(len))?
            }
            0xdb => {
                self.need(5)?;
                let len = u32::from_be_bytes(self.data[self.pos + 1..self.pos + 5].try_into().unwrap_or_default());
                self.string(5, len as usize)?
            }
            0xdc | 0xde => {
                let len = self.be(2)? as usize;
                self.container(b == 0xde, len)?
            }
            0xdd | 0xdf => {
                let len = self.be(4)? as usize;
                self.container(b == 0xdf, len)?
            }
            0x00..=0x7f => self.skip(1, Value::Number(f64::from(b))),
            0xe0..=0xff => self.skip(1, Value::Number(f64::from(b as i8))),
            0xa0..=0xbf => self.string(1, usize::from(b & 0x1f))?,
            0x90..=0x9f => {
                self.pos += 1;
                self.container(false, usize::from(b & 0xf))?
            }
            0x80..=0x8f => {
                self.pos += 1;
                self.container(true, usize::from(b & 0xf))?
            }
            _ => return Err(DecodeErr::BadFormat),
        })
    }

    fn skip(&mut self, n: usize, v: Value) -> Value {
        self.pos += n;
        v
    }

    /// An array (`map == false`) or map of `len` entries; the table is
    /// filled as entries arrive, so a short input fails at the first gap.
    fn container(&mut self, map: bool, len: usize) -> Result<Value, DecodeErr> {
        let t = self.lua.create_table()?;
        self.slots += 1;
        if stack_exhausted() {
            // Deeper than our native stack allows (Redis's C frames are
            // smaller): fail with the message Lua's own limit would give.
            return Err(stack_overflow("in function mp_decode_to_lua_array"));
        }
        if !map {
            if self.slots + 1 > MAX_C_STACK {
                return Err(stack_overflow("in function mp_decode_to_lua_array"));
            }
            for i in 1..=len {
                self.slots += 1;
                let v = self.value()?;
                self.slots -= 1;
                t.raw_set(i, v)?;
            }
        } else {
            for _ in 0..len {
                let k = self.value()?;
                self.slots += 1;
                let v = self.value()?;
                self.slots -= 1;
                match k {
                    Value::Nil => return Err(DecodeErr::Lua(LibErr::Raw("table index is nil".into()))),
                    Value::Number(n) if n.is_nan() => {
                        return Err(DecodeErr::Lua(LibErr::Raw("table index is NaN".into())));
                    }
                    k => t.raw_set(k, v)?,
                }
            }
        }
        self.slots -= 1;
        Ok(Value::Table(t))
    }
}

/// `mp_unpack_full`: decode up to `limit` values from `offset`; `decode_all`
/// (no limit and no offset) returns only the values, otherwise the next
/// offset (-1 at the end) comes first.
fn unpack_full(lua: &Lua, s: &mlua::LuaString, nargs: usize, limit: i64, offset: i64) -> LibResult<MultiValue> {
    let data = s.as_bytes();
    let len = data.len();
    // The C code keeps these as 64-bit integers but prints them with %d,
    // which shows only the low 32 bits.
    if offset < 0 || limit < 0 {
        let (o, l) = (offset as i32, len as i32);
        return err(format!("Invalid request to unpack with offset of {o} and limit of {l}."));
    }
    if offset as u64 > len as u64 {
        return err(format!("Start offset {} greater than input length {}.", offset as i32, len as i32));
    }
    let decode_all = limit == 0 && offset == 0;
    let limit = if decode_all { i64::from(i32::MAX) } else { limit };
    let mut cur = Cursor { lua, data: &data, pos: offset as usize, slots: nargs };
    let mut out = Results::new(lua);
    if !decode_all {
        out.push(Value::Nil)?; // the offset, filled in below
    }
    let mut cnt = 0i64;
    while cur.pos < len && cnt < limit {
        match cur.value() {
            Ok(v) => out.push(v)?,
            Err(DecodeErr::Eof) => return err("Missing bytes in input."),
            Err(DecodeErr::BadFormat) => return err("Bad data format in input."),
            Err(DecodeErr::Lua(e)) => return Err(e),
        }
        cur.slots += 1;
        cnt += 1;
    }
    if !decode_all {
        if cur.slots + 1 > MAX_C_STACK {
            return err("stack overflow (in function mp_unpack_full)");
        }
        out.set(1, Value::Number(if cur.pos == len { -1.0 } else { cur.pos as f64 }))?;
    }
    Ok(out.finish())
}

fn unpack(lua: &Lua, args: MultiValue) -> LibResult<MultiValue> {
    let s = check_string(lua, &args, 1)?;
    unpack_full(lua, &s, args.len(), 0, 0)
}

fn unpack_one(lua: &Lua, args: MultiValue) -> LibResult<MultiValue> {
    let offset = opt_integer(lua, &args, 2, 0)?;
    let s = check_string(lua, &args, 1)?;
    unpack_full(lua, &s, 1, 1, offset)
}

fn unpack_limit(lua: &Lua, args: MultiValue) -> LibResult<MultiValue> {
    let limit = check_integer(lua, &args, 2)?;
    let offset = opt_integer(lua, &args, 3, 0)?;
    let s = check_string(lua, &args, 1)?;
    unpack_full(lua, &s, 1, limit, offset)
}

/// Builds the `cmsgpack` table.
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("pack", lib_function(lua, pack)?)?;
    t.raw_set("unpack", lib_function(lua, unpack)?)?;
    t.raw_set("unpack_one", lib_function(lua, unpack_one)?)?;
    t.raw_set("unpack_limit", lib_function(lua, unpack_limit)?)?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}
