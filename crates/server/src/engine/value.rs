//! Stored values. Strings keep Redis's three encodings observable through
//! `OBJECT ENCODING`: integers as `i64` ("int"), short strings created whole
//! ("embstr", ≤ 44 bytes) and strings built or modified in place ("raw").
use super::list::List;
use super::numeric;

/// Longest string Redis stores with the embstr encoding.
pub const EMBSTR_MAX: usize = 44;

/// A string value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Str {
    Int(i64),
    Emb(Box<[u8]>),
    Raw(Vec<u8>),
}

impl Str {
    /// Encode bytes the way Redis's `tryObjectEncoding` would.
    pub fn from_bytes(b: &[u8]) -> Str {
        if b.len() <= 20 {
            if let Some(i) = numeric::parse_i64(b) {
                return Str::Int(i);
            }
        }
        if b.len() <= EMBSTR_MAX {
            Str::Emb(b.into())
        } else {
            Str::Raw(b.to_vec())
        }
    }

    /// Like [`Str::from_bytes`] but taking ownership (no copy for long strings).
    pub fn from_vec(v: Vec<u8>) -> Str {
        if v.len() <= 20 || v.len() <= EMBSTR_MAX {
            return Str::from_bytes(&v);
        }
        Str::Raw(v)
    }

    /// Redis's encoding name.
    pub fn encoding(&self) -> &'static str {
        match self {
            Str::Int(_) => "int",
            Str::Emb(_) => "embstr",
            Str::Raw(_) => "raw",
        }
    }

    /// The value as bytes; integers are formatted into `scratch`.
    pub fn bytes<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        match self {
            Str::Int(i) => {
                scratch.clear();
                numeric::format_i64(scratch, *i);
                scratch
            }
            Str::Emb(b) => b,
            Str::Raw(v) => v,
        }
    }

    /// Length in bytes, without formatting integers twice.
    pub fn len(&self) -> usize {
        match self {
            Str::Int(i) => {
                let mut s = Vec::with_capacity(20);
                numeric::format_i64(&mut s, *i);
                s.len()
            }
            Str::Emb(b) => b.len(),
            Str::Raw(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Make the value an in-place modifiable buffer (APPEND, SETRANGE, SETBIT).
    pub fn make_raw(&mut self) -> &mut Vec<u8> {
        if !matches!(self, Str::Raw(_)) {
            let mut s = Vec::new();
            let v = self.bytes(&mut s).to_vec();
            *self = Str::Raw(v);
        }
        match self {
            Str::Raw(v) => v,
            _ => unreachable!("just converted to raw"),
        }
    }

    /// The integer this string holds, if it is one by Redis's rules.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Str::Int(i) => Some(*i),
            Str::Emb(b) => numeric::parse_i64(b),
            Str::Raw(v) => numeric::parse_i64(v),
        }
    }
}

/// Any stored value. Later data types add variants here.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(Str),
    List(List),
}

impl Value {
    /// The name `TYPE` reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
        }
    }

    /// The name `OBJECT ENCODING` reports.
    pub fn encoding(&self) -> &'static str {
        match self {
            Value::Str(s) => s.encoding(),
            Value::List(l) => l.encoding(),
        }
    }
}
