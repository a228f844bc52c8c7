//! Stored values. Strings keep Redis's three encodings observable through
//! `OBJECT ENCODING`: integers as `i64` ("int"), short strings created whole
//! ("embstr", ≤ 44 bytes) and strings built or modified in place ("raw").
use super::list::List;
use super::numeric;

/// Longest string Redis stores with the embstr encoding.
pub const EMBSTR_MAX: usize = 44;

/// Strings up to this long are stored inside the value itself, with no
/// allocation of their own (most keys' values in practice).
pub const INLINE_MAX: usize = 22;

/// A string value. Kept at 24 bytes so a [`Value`] is 24 bytes: long
/// modifiable strings are boxed, short ones live inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Str {
    Int(i64),
    /// embstr of at most [`INLINE_MAX`] bytes, stored inline.
    Small {
        len: u8,
        buf: [u8; INLINE_MAX],
    },
    /// embstr longer than [`INLINE_MAX`] (up to [`EMBSTR_MAX`]).
    Emb(Box<[u8]>),
    /// A long string created whole ("raw"): one exact-size allocation.
    Long(Box<[u8]>),
    /// A string modified in place ("raw"), with room to grow.
    Raw(Box<Vec<u8>>),
}

impl Str {
    /// Encode bytes the way Redis's `tryObjectEncoding` would.
    pub fn from_bytes(b: &[u8]) -> Str {
        if b.len() <= 20 {
            if let Some(i) = numeric::parse_i64(b) {
                return Str::Int(i);
            }
        }
        Str::embstr(b).unwrap_or_else(|| Str::Long(b.into()))
    }

    /// An embstr-encoded string if `b` is short enough for one.
    pub fn embstr(b: &[u8]) -> Option<Str> {
        if b.len() <= INLINE_MAX {
            let mut buf = [0u8; INLINE_MAX];
            buf[..b.len()].copy_from_slice(b);
            Some(Str::Small { len: b.len() as u8, buf })
        } else if b.len() <= EMBSTR_MAX {
            Some(Str::Emb(b.into()))
        } else {
            None
        }
    }

    /// Like [`Str::from_bytes`] but taking ownership (no copy for long strings).
    pub fn from_vec(v: Vec<u8>) -> Str {
        if v.len() <= EMBSTR_MAX {
            return Str::from_bytes(&v);
        }
        Str::Long(v.into_boxed_slice())
    }

    /// A raw-encoded string (built or modified in place).
    pub fn raw(v: Vec<u8>) -> Str {
        Str::Raw(Box::new(v))
    }

    /// Redis's encoding name.
    pub fn encoding(&self) -> &'static str {
        match self {
            Str::Int(_) => "int",
            Str::Small { .. } | Str::Emb(_) => "embstr",
            Str::Long(_) | Str::Raw(_) => "raw",
        }
    }

    /// The bytes of a non-integer string; None for `Int`.
    pub fn as_slice(&self) -> Option<&[u8]> {
        match self {
            Str::Int(_) => None,
            Str::Small { len, buf } => Some(&buf[..*len as usize]),
            Str::Emb(b) | Str::Long(b) => Some(b),
            Str::Raw(v) => Some(v),
        }
    }

    /// The value as bytes; integers are formatted into `scratch`.
    pub fn bytes<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        match self.as_slice() {
            Some(b) => b,
            None => {
                scratch.clear();
                if let Str::Int(i) = self {
                    numeric::format_i64(scratch, *i);
                }
                scratch
            }
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Str::Int(i) => {
                let mut s = Vec::with_capacity(20);
                numeric::format_i64(&mut s, *i);
                s.len()
            }
            other => other.as_slice().map_or(0, <[u8]>::len),
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
            *self = Str::raw(v);
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
            other => other.as_slice().and_then(numeric::parse_i64),
        }
    }
}

// A Value is what every key stores inline in its dict node: keep it small.
// New data types must box their payload (e.g. `List(Box<List>)`).
const _: () = assert!(std::mem::size_of::<Value>() == 24);

/// Any stored value. Later data types add variants here, boxed.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(Str),
    Hash(super::hash::Hash),
    Set(super::set::Set),
    ZSet(Box<super::zset::ZSet>),
    List(List),
    Stream(Box<super::stream::Stream>),
}

impl Value {
    /// The name `TYPE` reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::List(_) => "list",
            Value::Stream(_) => "stream",
        }
    }

    /// The name `OBJECT ENCODING` reports.
    pub fn encoding(&self) -> &'static str {
        match self {
            Value::Str(s) => s.encoding(),
            Value::Hash(h) => h.encoding(),
            Value::Set(s) => s.encoding(),
            Value::ZSet(z) => z.encoding(),
            Value::List(l) => l.encoding(),
            Value::Stream(_) => "stream",
        }
    }
}
