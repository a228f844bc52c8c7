//! `struct`: Roberto Ierusalimschy's struct library as Redis 7.0 embeds it
//! (`struct.pack`, `struct.unpack`, `struct.size`). Integers are 64-bit C
//! `long` underneath, with the same C conversion and shift quirks on x86-64.

use mlua::{Lua, MultiValue, Table, Value};

use super::util::{
    bad_arg, c_i64, c_u64, check_number, check_string, err, lib_function, opt_integer, ret1, to_number, LibResult,
    Results, MAX_C_STACK,
};

/// Largest integer size (`i32`/`I32`).
const MAX_INT_SIZE: usize = 32;
/// Default alignment for `!` on x86-64 (that of a double).
const MAX_ALIGN: usize = 8;

/// Format parsing state: byte order and maximum alignment.
struct Header {
    little: bool,
    align: usize,
}

impl Header {
    fn new() -> Self {
        Header { little: cfg!(target_endian = "little"), align: 1 }
    }
}

/// The format string up to its first NUL (the C code stops there).
fn format_bytes(s: &mlua::LuaString) -> Vec<u8> {
    let b = s.as_bytes();
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    b[..end].to_vec()
}

/// Reads an optional decimal count at `fmt[*i..]`.
fn getnum(fmt: &[u8], i: &mut usize, default: usize) -> LibResult<usize> {
    if *i >= fmt.len() || !fmt[*i].is_ascii_digit() {
        return Ok(default);
    }
    let mut a: i64 = 0;
    while *i < fmt.len() && fmt[*i].is_ascii_digit() {
        let d = i64::from(fmt[*i] - b'0');
        if a > i64::from(i32::MAX) / 10 || a * 10 > i64::from(i32::MAX) - d {
            return err("integral size overflow");
        }
        a = a * 10 + d;
        *i += 1;
    }
    Ok(a as usize)
}

/// Size in bytes of option `opt` (0 for options that take no room).
fn optsize(opt: u8, fmt: &[u8], i: &mut usize) -> LibResult<usize> {
    Ok(match opt {
        b'b' | b'B' | b'x' => 1,
        b'h' | b'H' => 2,
        b'l' | b'L' | b'T' | b'd' => 8,
        b'f' => 4,
        b'c' => getnum(fmt, i, 1)?,
        b'i' | b'I' => {
            let sz = getnum(fmt, i, 4)?;
            if sz > MAX_INT_SIZE {
                return err(format!("integral size {sz} is larger than limit of {MAX_INT_SIZE}"));
            }
            sz
        }
        _ => 0,
    })
}

/// Padding needed before an item of `size` at offset `len`.
fn gettoalign(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size.wrapping_sub(len & size.wrapping_sub(1))) & size.wrapping_sub(1)
}

/// Endianness / alignment / space options; anything else is invalid.
fn controloptions(opt: u8, fmt: &[u8], i: &mut usize, h: &mut Header) -> LibResult<()> {
    match opt {
        b' ' => {}
        b'>' => h.little = false,
        b'<' => h.little = true,
        b'!' => {
            let a = getnum(fmt, i, MAX_ALIGN)?;
            if a == 0 || a & (a - 1) != 0 {
                return err(format!("alignment {a} is not a power of 2"));
            }
            h.align = a;
        }
        _ => {
            let c = char::from(opt);
            return Err(bad_arg(1, &format!("invalid format option '{c}'")));
        }
    }
    Ok(())
}

/// Appends the low `size` bytes of `value` in the requested order; sizes
/// above 8 get zero bytes beyond the 64-bit value (no sign extension).
fn put_integer(out: &mut Vec<u8>, n: f64, little: bool, size: usize) {
    let mut value = if n < 0.0 { c_i64(n) as u64 } else { c_u64(n) };
    let start = out.len();
    out.resize(start + size, 0);
    let buf = &mut out[start..];
    for k in 0..size {
        let slot = if little { k } else { size - 1 - k };
        buf[slot] = value as u8;
        value = value.checked_shr(8).unwrap_or(0);
    }
}

fn pack(lua: &Lua, mut args: MultiValue) -> LibResult<MultiValue> {
    let fmt = format_bytes(&check_string(lua, &args, 1)?);
    // The C code pushes a nil after the arguments, so the first missing one
    // is reported as "got nil".
    args.push_back(Value::Nil);
    let mut h = Header::new();
    let mut out = Vec::with_capacity(32);
    let mut arg = 2;
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = optsize(opt, &fmt, &mut i)?;
        let toalign = gettoalign(out.len(), &h, opt, size);
        out.resize(out.len() + toalign, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let n = check_number(lua, &args, arg)?;
                arg += 1;
                put_integer(&mut out, n, h.little, size);
            }
            b'x' => out.push(0),
            b'f' => {
                let f = check_number(lua, &args, arg)? as f32;
                arg += 1;
                out.extend_from_slice(&if h.little { f.to_le_bytes() } else { f.to_be_bytes() });
            }
            b'd' => {
                let d = check_number(lua, &args, arg)?;
                arg += 1;
                out.extend_from_slice(&if h.little { d.to_le_bytes() } else { d.to_be_bytes() });
            }
            b'c' | b's' => {
                let s = check_string(lua, &args, arg)?;
                arg += 1;
                let s = s.as_bytes();
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    // The C code reports the index after the string's.
                    return Err(bad_arg(arg, "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            _ => controloptions(opt, &fmt, &mut i, &mut h)?,
        }
    }
    ret1(Value::String(lua.create_string(&out)?))
}

/// Reads a `size`-byte integer; sizes above 8 keep the last 64 bits read and
/// sign-extend with the shift count taken modulo 64, as x86-64 C does.
fn get_integer(data: &[u8], little: bool, signed: bool, size: usize) -> f64 {
    let mut l: u64 = 0;
    for k in 0..size {
        let byte = if little { data[size - 1 - k] } else { data[k] };
        l = (l << 8) | u64::from(byte);
    }
    if !signed {
        return l as f64;
    }
    let mask = u64::MAX.wrapping_shl((size * 8).wrapping_sub(1) as u32);
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

/// The shared data-length check ("data string too short").
fn check_room(pos: usize, size: usize, ld: usize) -> LibResult<()> {
    if size <= ld && pos <= ld - size {
        Ok(())
    } else {
        Err(bad_arg(2, "data string too short"))
    }
}

fn unpack(lua: &Lua, args: MultiValue) -> LibResult<MultiValue> {
    let fmt = format_bytes(&check_string(lua, &args, 1)?);
    let data_s = check_string(lua, &args, 2)?;
    let data = data_s.as_bytes();
    let ld = data.len();
    let mut pos = opt_integer(lua, &args, 3, 1)? as u64 as usize;
    if pos == 0 {
        return Err(bad_arg(3, "offset must be 1 or greater"));
    }
    pos -= 1;
    let nargs = args.len();
    let mut h = Header::new();
    let mut res = Results::new(lua);
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = optsize(opt, &fmt, &mut i)?;
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        check_room(pos, size, ld)?;
        // luaL_checkstack(L, 2, "too many results") with the arguments and
        // results so far on the C function's stack.
        if nargs + res.len() + 2 > MAX_C_STACK {
            return err("stack overflow (too many results)");
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let v = get_integer(&data[pos..pos + size], h.little, opt.is_ascii_lowercase(), size);
                res.push(Value::Number(v))?;
            }
            b'x' => {}
            b'f' => {
                let raw: [u8; 4] = data[pos..pos + 4].try_into().unwrap_or_default();
                let f = if h.little { f32::from_le_bytes(raw) } else { f32::from_be_bytes(raw) };
                res.push(Value::Number(f64::from(f)))?;
            }
            b'd' => {
                let raw: [u8; 8] = data[pos..pos + 8].try_into().unwrap_or_default();
                let d = if h.little { f64::from_le_bytes(raw) } else { f64::from_be_bytes(raw) };
                res.push(Value::Number(d))?;
            }
            b'c' => {
                if size == 0 {
                    // "c0": the length is the previous result, if numeric.
                    let prev = match res.len() {
                        0 => None,
                        n => to_number(lua, &res.get(n)?)?,
                    };
                    let Some(n) = prev else { return err("format 'c0' needs a previous size") };
                    size = c_u64(n) as usize;
                    res.pop()?;
                    check_room(pos, size, ld)?;
                }
                res.push(Value::String(lua.create_string(&data[pos..pos + size])?))?;
            }
            b's' => {
                let Some(len) = data[pos..].iter().position(|&c| c == 0) else {
                    return err("unfinished string in data");
                };
                size = len + 1;
                res.push(Value::String(lua.create_string(&data[pos..pos + len])?))?;
            }
            _ => controloptions(opt, &fmt, &mut i, &mut h)?,
        }
        pos = pos.wrapping_add(size);
    }
    res.push(Value::Number(pos.wrapping_add(1) as i64 as f64))?;
    Ok(res.finish())
}

fn size(lua: &Lua, args: MultiValue) -> LibResult<MultiValue> {
    let fmt = format_bytes(&check_string(lua, &args, 1)?);
    let mut h = Header::new();
    let mut pos: usize = 0;
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let size = optsize(opt, &fmt, &mut i)?;
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if opt == b's' {
            return Err(bad_arg(1, "option 's' has no fixed size"));
        } else if opt == b'c' && size == 0 {
            return Err(bad_arg(1, "option 'c0' has no fixed size"));
        }
        // Unknown letters and digits are skipped here, unlike pack/unpack.
        if !opt.is_ascii_alphanumeric() {
            controloptions(opt, &fmt, &mut i, &mut h)?;
        }
        pos = pos.wrapping_add(size);
    }
    ret1(Value::Number(pos as i64 as f64))
}

/// Builds the `struct` table.
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("pack", lib_function(lua, pack)?)?;
    t.raw_set("unpack", lib_function(lua, unpack)?)?;
    t.raw_set("size", lib_function(lua, size)?)?;
    Ok(t)
}
