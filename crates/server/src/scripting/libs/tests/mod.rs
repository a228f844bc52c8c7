//! Tests for the embedded Lua libraries: hundreds of snippets whose replies
//! were recorded from redis-server 7.0.15 (`cases_*.rs`), plus randomized
//! round trips and a few direct checks of the helpers.

mod cases_bit;
mod cases_cjson;
mod cases_cmsgpack;
mod cases_struct;
mod cases_vectors;
mod roundtrip;

use mlua::{Lua, Value};

use super::open_all;
use super::util::c_i64;

/// Helpers every recorded snippet may use; sent to Redis verbatim too.
pub(super) const PRELUDE: &str = "local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end)) end \
local function J(...) local t = {} for i = 1, select('#', ...) do t[i] = tostring((select(i, ...))) end return table.concat(t, ',') end ";

pub(super) fn new_lua() -> Lua {
    let lua = Lua::new();
    open_all(&lua).expect("open_all");
    lua
}

/// The innermost message of an mlua error.
fn message(e: &mlua::Error) -> String {
    match e {
        // mlua appends a traceback; Redis's message is the part before it.
        mlua::Error::RuntimeError(m) => m.split("\nstack traceback:").next().unwrap_or(m).to_string(),
        mlua::Error::CallbackError { cause, .. } => message(cause),
        other => other.to_string(),
    }
}

/// Runs `snippet` after the prelude and renders its first result the way the
/// recorded Redis replies are written (see `cases_cjson.rs`).
fn run(lua: &Lua, snippet: &[u8]) -> Vec<u8> {
    let mut code = PRELUDE.as_bytes().to_vec();
    code.extend_from_slice(snippet);
    // Redis names EVAL chunks "@user_script"; error positions show it.
    match lua.load(&code[..]).set_name("@user_script").eval::<Value>() {
        Ok(Value::String(s)) => s.as_bytes().to_vec(),
        Ok(Value::Integer(i)) => i.to_string().into_bytes(),
        // Redis turns a Lua number into an integer reply with a C cast.
        Ok(Value::Number(n)) => c_i64(n).to_string().into_bytes(),
        Ok(Value::Boolean(true)) => b"1".to_vec(),
        Ok(Value::Nil | Value::Boolean(false)) => b"(nil)".to_vec(),
        Ok(other) => format!("unexpected {other:?}").into_bytes(),
        Err(e) => format!("ERR {}", message(&e)).into_bytes(),
    }
}

/// Runs every recorded case in one Lua state (as they ran in one Redis) and
/// fails listing all mismatches.
fn check(cases: &'static [(&'static [u8], &'static [u8])]) {
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || check_on_this_thread(cases))
        .unwrap()
        .join()
        .unwrap();
}

fn check_on_this_thread(cases: &[(&[u8], &[u8])]) {
    let lua = new_lua();
    let mut bad = Vec::new();
    for (snippet, want) in cases {
        let got = run(&lua, snippet);
        if got != *want {
            bad.push(format!(
                "{}\n   redis: {}\n  volley: {}",
                String::from_utf8_lossy(snippet),
                String::from_utf8_lossy(want),
                String::from_utf8_lossy(&got)
            ));
        }
    }
    assert!(bad.is_empty(), "{} of {} cases differ:\n{}", bad.len(), cases.len(), bad.join("\n"));
}

#[test]
fn cjson_matches_redis() {
    check(cases_cjson::CASES);
}

#[test]
fn cmsgpack_matches_redis() {
    check(cases_cmsgpack::CASES);
}

#[test]
fn bit_matches_redis() {
    check(cases_bit::CASES);
}

#[test]
fn struct_matches_redis() {
    check(cases_struct::CASES);
}

/// 160 random numbers through every numeric conversion of the four libraries
/// (and all 14 cjson precisions), recorded from Redis.
#[test]
fn numeric_vectors_match_redis() {
    check(cases_vectors::CASES);
}

#[test]
fn errors_are_plain_strings() {
    // Redis: `eval "return type(select(2, pcall(cjson.decode, '{')))" 0` → "string".
    let lua = new_lua();
    for f in ["cjson.decode, '{'", "cmsgpack.unpack, '\\193'", "bit.band, {}", "struct.pack, 'z'"] {
        let code = format!("local ok, e = pcall({f}) return tostring(ok) .. ' ' .. type(e)");
        assert_eq!(lua.load(&code).eval::<String>().unwrap(), "false string", "{f}");
    }
}

#[test]
fn libraries_are_globals_and_distinct_instances() {
    let lua = new_lua();
    let code = "return type(cjson) .. type(cmsgpack) .. type(bit) .. type(struct) .. tostring(cjson.new() ~= cjson)";
    assert_eq!(lua.load(code).eval::<String>().unwrap(), "tabletabletabletabletrue");
    // Settings are per instance: changing a new() copy leaves cjson alone.
    let code = "local c = cjson.new() c.encode_number_precision(3) return c.encode(1/3) .. ' ' .. cjson.encode(1/3)";
    assert_eq!(lua.load(code).eval::<String>().unwrap(), "0.333 0.33333333333333");
}

/// On a small thread stack, nesting far beyond what fits fails with the
/// library's own error instead of overflowing the native stack.
#[test]
fn deep_nesting_on_small_stack_errors_cleanly() {
    let run = || {
        let lua = new_lua();
        let cases = [
            ("local c=cjson.new() c.encode_max_depth(9000) local t={} local x=t for i=1,7000 do x[1]={} x=x[1] end return c.encode(t)", "Cannot serialise, excessive nesting ("),
            ("local c=cjson.new() c.decode_max_depth(9000) return c.decode(string.rep('[',7000))", "Found too many nested data structures ("),
            ("return cmsgpack.unpack(string.rep('\\145', 3990)..'\\1')", "stack overflow (in function mp_decode_to_lua_array)"),
        ];
        for (code, want) in cases {
            let got = run(&lua, code.as_bytes());
            let got = String::from_utf8_lossy(&got);
            assert!(got.starts_with(&format!("ERR user_script:1: {want}")), "{code}: {got}");
        }
    };
    std::thread::Builder::new().stack_size(1 << 20).spawn(run).unwrap().join().unwrap();
}

/// Known deviation: mlua holds at most ~8000 live handles, so with
/// `encode_max_depth`/`decode_max_depth` raised far above the default 1000,
/// nesting fails a few levels earlier than Redis's Lua stack limit (Redis:
/// 7997 array levels, 3999 object levels). It must still fail with the
/// library's own error, and depths a little below the limit must work.
#[test]
fn raised_depth_limits_fail_cleanly() {
    let run = || {
        let lua = new_lua();
        let ok = [
            "local c=cjson.new() c.encode_max_depth(9000) local t={} local x=t for i=1,7900 do x[1]={} x=x[1] end return #c.encode(t)",
            "local c=cjson.new() c.encode_max_depth(9000) local t={} local x=t for i=1,3900 do x.a={} x=x.a end return #c.encode(t)",
            "local c=cjson.new() c.decode_max_depth(9000) return #c.decode(string.rep('[',7900)..string.rep(']',7900))",
        ];
        for code in ok {
            let got = String::from_utf8_lossy(&run(&lua, code.as_bytes())).to_string();
            assert!(got.parse::<i64>().is_ok(), "{code}: {got}");
        }
        let too_deep = [
            ("local c=cjson.new() c.encode_max_depth(9000) local t={} local x=t for i=1,7998 do x[1]={} x=x[1] end return c.encode(t)", "Cannot serialise, excessive nesting ("),
            ("local c=cjson.new() c.encode_max_depth(9000) local t={} local x=t for i=1,4100 do x.a={} x=x.a end return c.encode(t)", "Cannot serialise, excessive nesting ("),
            ("local c=cjson.new() c.decode_max_depth(9000) return c.decode(string.rep('[',7999)..string.rep(']',7999))", "Found too many nested data structures ("),
        ];
        for (code, want) in too_deep {
            let got = String::from_utf8_lossy(&run(&lua, code.as_bytes())).to_string();
            assert!(got.starts_with(&format!("ERR user_script:1: {want}")), "{code}: {got}");
        }
    };
    std::thread::Builder::new().stack_size(64 << 20).spawn(run).unwrap().join().unwrap();
}
