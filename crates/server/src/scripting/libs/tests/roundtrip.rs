//! Randomized round trips: random nested Lua values go through
//! `cmsgpack.pack`/`unpack` and `cjson.encode`/`decode` and must come back
//! equal. cjson prints numbers with `%.14g`, so exact comparisons use
//! numbers that survive that, and other values check re-encoding stability.

use mlua::{Lua, Table, Value};
use proptest::prelude::*;

use super::new_lua;

/// A generated value, built into Lua by [`to_lua`].
#[derive(Debug, Clone)]
enum Gen {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    Array(Vec<Gen>),
    Map(Vec<(String, Gen)>),
}

/// Random nested values; with `exact`, only numbers `%.14g` reproduces
/// exactly (integers below 1e13, multiples of 1/8).
fn gen_value(exact: bool) -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Gen::Bool),
        (-10_000_000_000_000i64..10_000_000_000_000).prop_map(Gen::Int),
        (-8_000_000i64..8_000_000).prop_map(|k| Gen::Float(k as f64 / 8.0)),
        any::<i64>().prop_map(move |i| if exact { Gen::Int(i % 1_000_000) } else { Gen::Int(i) }),
        any::<f64>().prop_map(move |f| Gen::Float(if exact || !f.is_finite() { 0.5 } else { f })),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Gen::Str),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 1..8).prop_map(Gen::Array),
            proptest::collection::vec(("[a-z]{1,6}", inner), 1..8).prop_map(Gen::Map),
        ]
    })
}

fn to_lua(lua: &Lua, g: &Gen) -> mlua::Result<Value> {
    Ok(match g {
        Gen::Bool(b) => Value::Boolean(*b),
        Gen::Int(i) => Value::Number(*i as f64),
        Gen::Float(f) => Value::Number(*f),
        Gen::Str(s) => Value::String(lua.create_string(s)?),
        Gen::Array(items) => {
            let t = lua.create_table()?;
            for (i, x) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, x)?)?;
            }
            Value::Table(t)
        }
        Gen::Map(pairs) => {
            let t = lua.create_table()?;
            for (k, x) in pairs {
                t.raw_set(k.as_str(), to_lua(lua, x)?)?;
            }
            Value::Table(t)
        }
    })
}

/// Deep equality of two Lua values (tables compared by content).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Table(x), Value::Table(y)) => table_within(x, y) && table_within(y, x),
        (Value::Integer(_) | Value::Number(_), Value::Integer(_) | Value::Number(_)) => num(a) == num(b),
        _ => a == b,
    }
}

fn num(v: &Value) -> f64 {
    match v {
        Value::Integer(i) => *i as f64,
        Value::Number(n) => *n,
        _ => f64::NAN,
    }
}

fn table_within(x: &Table, y: &Table) -> bool {
    x.pairs::<Value, Value>().all(|kv| match kv {
        Ok((k, v)) => y.raw_get::<Value>(k).is_ok_and(|w| same(&v, &w)),
        Err(_) => false,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn cmsgpack_round_trip(g in gen_value(false)) {
        let lua = new_lua();
        let v = to_lua(&lua, &g).unwrap();
        let f: mlua::Function = lua.load("return function(v) return cmsgpack.unpack(cmsgpack.pack(v)) end").eval().unwrap();
        let back: Value = f.call(v.clone()).unwrap();
        prop_assert!(same(&v, &back), "{:?}", g);
    }

    #[test]
    fn cjson_round_trip_exact(g in gen_value(true)) {
        let lua = new_lua();
        let v = to_lua(&lua, &g).unwrap();
        let f: mlua::Function = lua.load("return function(v) return cjson.decode(cjson.encode(v)) end").eval().unwrap();
        let back: Value = f.call(v.clone()).unwrap();
        prop_assert!(same(&v, &back), "{:?}", g);
    }

    #[test]
    fn cjson_reencoding_is_stable(g in gen_value(false)) {
        // %.14g loses digits once; after that decode/encode is a fixpoint.
        let lua = new_lua();
        let v = to_lua(&lua, &g).unwrap();
        let f: mlua::Function = lua
            .load("return function(v) local a = cjson.decode(cjson.encode(v)) return a, cjson.decode(cjson.encode(a)) end")
            .eval()
            .unwrap();
        let (a, b): (Value, Value) = f.call(v).unwrap();
        prop_assert!(same(&a, &b), "{:?}", g);
    }

    #[test]
    fn cjson_strings_round_trip_exactly(s in proptest::collection::vec(any::<u8>(), 0..200)) {
        let lua = new_lua();
        let f: mlua::Function = lua.load("return function(v) return cjson.decode(cjson.encode(v)) end").eval().unwrap();
        let back: mlua::LuaString = f.call(lua.create_string(&s).unwrap()).unwrap();
        prop_assert_eq!(back.as_bytes().to_vec(), s);
    }

    #[test]
    fn cjson_decode_never_panics(s in "[\\[\\]{}:,\"0-9a-z\\\\.eE+ -]{0,40}") {
        let lua = new_lua();
        let f: mlua::Function = lua.load("return function(s) return pcall(cjson.decode, s) end").eval().unwrap();
        let _: (bool, Value) = f.call(s).unwrap();
    }

    #[test]
    fn cmsgpack_unpack_never_panics(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        let lua = new_lua();
        let f: mlua::Function = lua.load("return function(s) return pcall(cmsgpack.unpack, s) end").eval().unwrap();
        let _: (bool, Value) = f.call(lua.create_string(&b).unwrap()).unwrap();
    }
}
