//! Typed replies: [`Value`] is the shared codec's [`resp::Frame`]; [`ValueExt`]
//! adds accessors and [`FromValue`] converts replies for typed handles.

use crate::error::{Error, Result, ServerError};

/// A reply from the server (RESP2 or RESP3).
pub type Value = resp::Frame;

/// Accessors on [`Value`].
pub trait ValueExt {
    /// The integer, for integer replies and numeric bulk/simple strings.
    fn as_i64(&self) -> Option<i64>;
    /// The bytes of a bulk, simple, verbatim or double reply.
    fn as_bytes(&self) -> Option<&[u8]>;
    /// The text of a string-like reply (lossy UTF-8).
    fn into_string(self) -> Option<String>;
    /// True for a null reply.
    fn is_null(&self) -> bool;
    /// Turn an error reply into `Err(Error::Server)`, anything else into `Ok`.
    fn into_result(self) -> Result<Value>;
}

impl ValueExt for Value {
    fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Integer(i) => Some(*i),
            Value::Bulk(b) | Value::Simple(b) | Value::BigNumber(b) => std::str::from_utf8(b).ok()?.parse().ok(),
            Value::Boolean(b) => Some(*b as i64),
            _ => None,
        }
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bulk(b) | Value::Simple(b) | Value::Double(b) | Value::BigNumber(b) => Some(b),
            Value::Verbatim(_, b) => Some(b),
            _ => None,
        }
    }

    fn into_string(self) -> Option<String> {
        match self {
            Value::Bulk(b) | Value::Simple(b) | Value::Double(b) | Value::BigNumber(b) | Value::Verbatim(_, b) => {
                Some(String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
            }
            Value::Integer(i) => Some(i.to_string()),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    fn into_result(self) -> Result<Value> {
        match self {
            Value::Error(e) => Err(Error::Server(ServerError::parse(&e))),
            v => Ok(v),
        }
    }
}

/// Conversion from a reply, used by typed pipeline handles.
pub trait FromValue: Sized {
    /// Convert `v` (never an error reply: those become `Err` before this).
    fn from_value(v: &Value) -> Result<Self>;
}

fn unexpected<T>(what: &str, v: &Value) -> Result<T> {
    Err(Error::Protocol(format!("expected {what}, got {v:?}")))
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self> {
        Ok(v.clone())
    }
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<Self> {
        v.as_i64().map_or_else(|| unexpected("integer", v), Ok)
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Boolean(b) => Ok(*b),
            Value::Simple(s) if s == b"OK" => Ok(true),
            Value::Null => Ok(false),
            _ => v.as_i64().map_or_else(|| unexpected("integer or boolean", v), |i| Ok(i != 0)),
        }
    }
}

impl FromValue for () {
    fn from_value(_: &Value) -> Result<Self> {
        Ok(())
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self> {
        v.clone().into_string().map_or_else(|| unexpected("string", v), Ok)
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Result<Self> {
        v.as_bytes().map_or_else(|| unexpected("bytes", v), |b| Ok(b.to_vec()))
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Array(items) | Value::Set(items) | Value::Push(items) => items.iter().map(T::from_value).collect(),
            _ => unexpected("array", v),
        }
    }
}
