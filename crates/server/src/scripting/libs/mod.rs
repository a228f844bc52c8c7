//! The Lua libraries Redis 7.0 embeds in its scripting engine, written in
//! Rust against mlua (PUC Lua 5.1.5): `cjson` (lua-cjson 2.1.0), `cmsgpack`
//! (lua-cmsgpack 0.4.0), `bit` (LuaBitOp 1.0.2) and `struct` (Roberto
//! Ierusalimschy's struct library). Behaviour, including error texts and C
//! numeric quirks, follows redis-server 7.0.15; see `tests/` (expectations
//! recorded from a live redis-server 7.0.15).
//!
//! Each library function is a Lua C function (a C closure around an mlua
//! callback, or plain C API code for `bit`), so errors are raised from a C
//! frame exactly as the C libraries raise them: plain string values, with
//! the calling script's `user_script:N:` position and Lua's own function
//! name resolution.

mod bit;
mod cjson;
mod cjson_decode;
mod cmsgpack;
mod structlib;
mod util;

#[cfg(test)]
mod tests;

use mlua::Lua;

/// Installs the globals `cjson`, `cmsgpack`, `bit` and `struct` in `lua`.
/// (Redis 7.0 scripts have no `package`, so nothing goes in
/// `package.loaded`.) Call before sandboxing the globals table. Settings
/// changed with `cjson.encode_*`/`decode_*` live as long as `lua`, as in
/// Redis (where SCRIPT FLUSH recreates the state).
pub fn open_all(lua: &Lua) -> mlua::Result<()> {
    let g = lua.globals();
    g.raw_set("cjson", cjson::module(lua)?)?;
    g.raw_set("cmsgpack", cmsgpack::module(lua)?)?;
    g.raw_set("bit", bit::module(lua)?)?;
    g.raw_set("struct", structlib::module(lua)?)?;
    Ok(())
}
