//! Placeholder for the Lua libraries (cjson, cmsgpack, bit, struct); the real module replaces this file at merge.

/// Register the libraries as globals of `lua` (nothing yet).
pub fn open_all(_lua: &mlua::Lua) -> mlua::Result<()> {
    Ok(())
}
