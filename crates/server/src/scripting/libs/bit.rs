//! `bit`: LuaBitOp 1.0.2 as Redis embeds it. Every operand is converted to a
//! 32-bit integer the way LuaBitOp does on doubles (add 2^52+2^51, keep the
//! low 32 bits of the representation), and results are signed 32-bit.

use mlua::{Lua, MultiValue, Table, Value};

use super::util::{arg_type_name, bad_arg, ret1, to_number, LibResult, Wrapper};

/// LuaBitOp's `barg`: the argument as 32 bits. Non-numbers count as 0 and
/// are only rejected when the result is 0, a quirk we keep.
fn barg(lua: &Lua, args: &MultiValue, idx: usize, fname: &str) -> LibResult<u32> {
    let n = match args.get(idx - 1) {
        Some(v) => to_number(lua, v)?,
        None => None,
    };
    let b = (n.unwrap_or(0.0) + 6_755_399_441_055_744.0).to_bits() as u32;
    if b == 0 && n.is_none() {
        return Err(bad_arg(idx, fname, &format!("number expected, got {}", arg_type_name(args, idx))));
    }
    Ok(b)
}

fn bret(b: u32) -> LibResult<MultiValue> {
    ret1(Value::Number(f64::from(b as i32)))
}

/// A `bit` function taking one operand.
fn unary(w: &Wrapper, lua: &Lua, t: &Table, name: &'static str, op: fn(u32) -> u32) -> mlua::Result<()> {
    t.raw_set(name, w.function(lua, move |lua, args| bret(op(barg(lua, &args, 1, name)?)))?)
}

/// A `bit` function folding all its operands (band, bor, bxor).
fn fold(w: &Wrapper, lua: &Lua, t: &Table, name: &'static str, op: fn(u32, u32) -> u32) -> mlua::Result<()> {
    let f = w.function(lua, move |lua, args| {
        let mut b = barg(lua, &args, 1, name)?;
        // LuaBitOp converts the operands from the last one down.
        for i in (2..=args.len()).rev() {
            b = op(b, barg(lua, &args, i, name)?);
        }
        bret(b)
    })?;
    t.raw_set(name, f)
}

/// A shift or rotate: the count is taken modulo 32.
fn shift(w: &Wrapper, lua: &Lua, t: &Table, name: &'static str, op: fn(u32, u32) -> u32) -> mlua::Result<()> {
    let f = w.function(lua, move |lua, args| {
        let b = barg(lua, &args, 1, name)?;
        let n = barg(lua, &args, 2, name)? & 31;
        bret(op(b, n))
    })?;
    t.raw_set(name, f)
}

/// `bit.tohex(x [, n])`: `n` hex digits (default 8, at most 8), upper case
/// when `n` is negative.
fn tohex(lua: &Lua, args: MultiValue) -> LibResult<MultiValue> {
    let mut b = barg(lua, &args, 1, "tohex")?;
    let mut n: i64 = if args.len() < 2 { 8 } else { i64::from(barg(lua, &args, 2, "tohex")? as i32) };
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
    ret1(Value::String(lua.create_string(&buf[..n])?))
}

/// Builds the `bit` table.
pub(crate) fn module(lua: &Lua, w: &Wrapper) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    unary(w, lua, &t, "tobit", |b| b)?;
    unary(w, lua, &t, "bnot", |b| !b)?;
    unary(w, lua, &t, "bswap", u32::swap_bytes)?;
    fold(w, lua, &t, "band", |a, b| a & b)?;
    fold(w, lua, &t, "bor", |a, b| a | b)?;
    fold(w, lua, &t, "bxor", |a, b| a ^ b)?;
    shift(w, lua, &t, "lshift", |b, n| b << n)?;
    shift(w, lua, &t, "rshift", |b, n| b >> n)?;
    shift(w, lua, &t, "arshift", |b, n| ((b as i32) >> n) as u32)?;
    shift(w, lua, &t, "rol", u32::rotate_left)?;
    shift(w, lua, &t, "ror", u32::rotate_right)?;
    t.raw_set("tohex", w.function(lua, tohex)?)?;
    Ok(t)
}
