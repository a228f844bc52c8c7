//! The Lua sandbox as both Lua states show it (EVAL's and the function
//! libraries'), with redis-server 7.0.15's reply bytes: read-only globals
//! and library tables through `setmetatable`/`getmetatable`, binary chunks
//! refused by `loadstring`/`load`, `redis.call` with thousands of unpacked
//! arguments, and `redis.error_reply`'s `CODE message` shape.
mod common;

use common::*;

fn raw(c: &mut Client, args: &[&str]) -> String {
    String::from_utf8_lossy(&c.raw_cmd(args)).into_owned()
}

fn sha1(s: &str) -> String {
    volley::scripting::sha1_hex(s.as_bytes()).iter().map(|&b| b as char).collect()
}

/// Runs `body` as an EVAL script and as the body of function `f` (on line 3
/// of its library); `expected` is the reply with `{at}` standing for where
/// the error happened (`user_script:1` / `user_function:3`) and `{name}` for
/// the script's name (its SHA / `f`).
fn both(c: &mut Client, body: &str, expected: &str) {
    let eval = expected.replace("{at}", "user_script:1").replace("{name}", &sha1(body));
    assert_eq!(raw(c, &["EVAL", body, "0"]), eval, "EVAL {body}");
    let lib = format!("#!lua name=t\nredis.register_function('f', function(KEYS, ARGV)\n {body} \nend)");
    assert_eq!(raw(c, &["FUNCTION", "LOAD", "REPLACE", &lib]), "$1\r\nt\r\n");
    let fcall = expected.replace("{at}", "user_function:3").replace("{name}", "f");
    assert_eq!(raw(c, &["FCALL", "f", "0"]), fcall, "FCALL {body}");
}

#[test]
fn globals_and_their_metatable_are_read_only() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let readonly = "-ERR Attempt to modify a readonly table script: {name}, on @{at}.\r\n";
    both(&mut c, "setmetatable(_G, {})", readonly);
    both(&mut c, "setmetatable(redis, {})", readonly);
    both(&mut c, "rawset(getmetatable(_G), 'x', 1)", readonly);
    both(
        &mut c,
        "local g = getmetatable(_G); g.__index = {}",
        "-ERR {at}: Attempt to modify a readonly table script: {name}, on @{at}.\r\n",
    );
    // _G shows a metatable (the missing-global guard); library tables none.
    both(
        &mut c,
        "return {type(getmetatable(_G)), type(getmetatable(redis)), type(getmetatable(cjson))}",
        "*3\r\n$5\r\ntable\r\n$3\r\nnil\r\n$3\r\nnil\r\n",
    );
}

#[test]
fn metatables_of_script_tables_work_as_in_lua() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    both(&mut c, "return setmetatable({}, {__index = function(_, k) return k .. '!' end}).hey", "$4\r\nhey!\r\n");
    both(&mut c, "local t = setmetatable({}, {__metatable = 'locked'}); return getmetatable(t)", "$6\r\nlocked\r\n");
    both(
        &mut c,
        "local t = setmetatable({}, {__metatable = 'locked'}); setmetatable(t, {})",
        "-ERR {at}: cannot change a protected metatable script: {name}, on @{at}.\r\n",
    );
    both(
        &mut c,
        "setmetatable(nil, {})",
        "-ERR {at}: bad argument #1 to 'setmetatable' (table expected, got nil) script: {name}, on @{at}.\r\n",
    );
    both(
        &mut c,
        "setmetatable({}, 5)",
        "-ERR {at}: bad argument #2 to 'setmetatable' (nil or table expected) script: {name}, on @{at}.\r\n",
    );
    both(
        &mut c,
        "getmetatable()",
        "-ERR {at}: bad argument #1 to 'getmetatable' (value expected) script: {name}, on @{at}.\r\n",
    );
}

#[test]
fn binary_chunks_do_not_load() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    both(
        &mut c,
        "return loadstring(string.dump(function() return 1 end))()",
        "-ERR {at}: attempt to call a nil value script: {name}, on @{at}.\r\n",
    );
    both(
        &mut c,
        "local f, e = loadstring(string.dump(function() return 1 end)); return {tostring(f), e}",
        "*2\r\n$3\r\nnil\r\n$53\r\n[string \"\x1bLuaQ\"]:1: unexpected symbol near 'char(27)'\r\n",
    );
    both(
        &mut c,
        "local f, e = loadstring(string.dump(function() return 1 end), '=named'); return e",
        "$42\r\nnamed:1: unexpected symbol near 'char(27)'\r\n",
    );
    both(
        &mut c,
        "local s = string.dump(function() return 1 end); local n = 0; \
         local f, e = load(function() n = n + 1; if n == 1 then return s end end); return {tostring(f), e}",
        "*2\r\n$3\r\nnil\r\n$43\r\n(load):1: unexpected symbol near 'char(27)'\r\n",
    );
}

#[test]
fn text_chunks_still_load() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    both(&mut c, "return loadstring('return 2 + 3')()", ":5\r\n");
    both(
        &mut c,
        "local parts = {'return ', '4 ', '* 5'}; local i = 0; return load(function() i = i + 1; return parts[i] end)()",
        ":20\r\n",
    );
    both(
        &mut c,
        "local f, e = load(function() return {} end); return e",
        "-ERR {at}: reader function must return a string\r\n",
    );
    both(
        &mut c,
        "load(5)",
        "-ERR {at}: bad argument #1 to 'load' (function expected, got number) script: {name}, on @{at}.\r\n",
    );
    both(
        &mut c,
        "loadstring()",
        "-ERR {at}: bad argument #1 to 'loadstring' (string expected, got no value) script: {name}, on @{at}.\r\n",
    );
}

#[test]
fn call_with_thousands_of_unpacked_arguments() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let body = "redis.call('del', 'l'); local a = {}; for i = 1, 7999 do a[i] = 1 end; \
                return redis.call('lpush', 'l', unpack(a))";
    both(&mut c, body, ":7999\r\n");
    assert_eq!(raw(&mut c, &["LLEN", "l"]), ":7999\r\n");
}

#[test]
fn error_reply_splits_code_and_message() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let cases = [
        ("x", "-ERR x\r\n", "$5\r\nERR x\r\n"),
        ("-x", "-ERR x\r\n", "$5\r\nERR x\r\n"),
        ("MY_ERR_CODE custom msg", "-MY_ERR_CODE custom msg\r\n", "$22\r\nMY_ERR_CODE custom msg\r\n"),
        ("", "-ERR \r\n", "$4\r\nERR \r\n"),
        ("-", "-ERR \r\n", "$4\r\nERR \r\n"),
        ("a b\r\n", "-a b\r\n", "$3\r\na b\r\n"),
        (" x", "- x\r\n", "$2\r\n x\r\n"),
        ("\nx y\n", "- x y\r\n", "$4\r\n\nx y\r\n"),
    ];
    for (arg, reply, table) in cases {
        assert_eq!(raw(&mut c, &["EVAL", "return redis.error_reply(ARGV[1])", "0", arg]), reply, "{arg:?}");
        assert_eq!(raw(&mut c, &["EVAL", "return redis.error_reply(ARGV[1]).err", "0", arg]), table, "{arg:?}");
    }
}

#[test]
fn iteration_and_rawset_keep_tables_read_only() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    // pairs must not hand the script a writable global table.
    both(
        &mut c,
        "local _, g = pairs(_G); g.foo = 1",
        "-ERR {at}: Attempt to modify a readonly table script: {name}, on @{at}.\r\n",
    );
    both(&mut c, "for k, v in pairs(_G) do if k == 'redis' then return type(v) end end", "$5\r\ntable\r\n");
    both(&mut c, "local n = 0 for k, v in pairs(redis) do n = n + 1 end return n > 5", ":1\r\n");
    both(&mut c, "return next(cjson) ~= nil", ":1\r\n");
    both(&mut c, "rawset(redis, 'x', 1)", "-ERR Attempt to modify a readonly table script: {name}, on @{at}.\r\n");
    both(&mut c, "local t = {} rawset(t, 'a', 1) return t.a", ":1\r\n");
    both(
        &mut c,
        "rawset(5, 1, 2)",
        "-ERR {at}: bad argument #1 to 'rawset' (table expected, got number) script: {name}, on @{at}.\r\n",
    );
    both(
        &mut c,
        "for k in pairs(nil) do end",
        "-ERR {at}: bad argument #1 to 'pairs' (table expected, got nil) script: {name}, on @{at}.\r\n",
    );
}

#[test]
fn errors_name_the_chunk_that_raised_them() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    both(
        &mut c,
        "local f = loadstring('return a') return f()",
        "-ERR [string \"return a\"]:1: Script attempted to access nonexistent global variable 'a' \
         script: {name}, on return a:1.\r\n",
    );
    both(&mut c, "local function f() error('x') end f() return 1", "-ERR {at}: x script: {name}, on @{at}.\r\n");
}
