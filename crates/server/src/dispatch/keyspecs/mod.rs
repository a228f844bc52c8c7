//! Redis 7.0's introspection data for each command, beyond what the
//! registry's `CommandSpec` holds: key specifications (which arguments are
//! keys and how the command uses them), command tips, and the `COMMAND DOCS`
//! documentation (summary, complexity, history, the argument tree).
//!
//! Kept apart from the `spec!` calls so the command group files stay small;
//! tables are keyed by full name (`set`, `config|get`) and the registry
//! attaches each entry to its command once, when it is registered. The
//! tables live in this directory's files, split by command group.
use std::collections::HashMap;
use std::sync::OnceLock;

mod acl;
mod cluster;
mod collections;
mod generic;
mod memory;
mod messaging;
mod server;
mod streams;
mod strings;
mod zset_geo;

/// Key spec flags, in the order `COMMAND INFO` lists them.
pub mod key_flags {
    pub const RO: u32 = 1;
    pub const RW: u32 = 1 << 1;
    pub const OW: u32 = 1 << 2;
    pub const RM: u32 = 1 << 3;
    pub const ACCESS: u32 = 1 << 4;
    pub const UPDATE: u32 = 1 << 5;
    pub const INSERT: u32 = 1 << 6;
    pub const DELETE: u32 = 1 << 7;
    pub const NOT_KEY: u32 = 1 << 8;
    pub const INCOMPLETE: u32 = 1 << 9;
    pub const VARIABLE_FLAGS: u32 = 1 << 10;

    pub const NAMES: &[(u32, &str)] = &[
        (RO, "RO"),
        (RW, "RW"),
        (OW, "OW"),
        (RM, "RM"),
        (ACCESS, "access"),
        (UPDATE, "update"),
        (INSERT, "insert"),
        (DELETE, "delete"),
        (NOT_KEY, "not_key"),
        (INCOMPLETE, "incomplete"),
        (VARIABLE_FLAGS, "variable_flags"),
    ];
}

/// Documentation flags of a command.
pub mod doc_flags {
    pub const DEPRECATED: u8 = 1;
    pub const SYSCMD: u8 = 2;
    pub const NAMES: &[(u8, &str)] = &[(DEPRECATED, "deprecated"), (SYSCMD, "syscmd")];
}

/// Flags of one documented argument.
pub mod arg_flags {
    pub const OPTIONAL: u8 = 1;
    pub const MULTIPLE: u8 = 2;
    pub const MULTIPLE_TOKEN: u8 = 4;
    pub const NAMES: &[(u8, &str)] =
        &[(OPTIONAL, "optional"), (MULTIPLE, "multiple"), (MULTIPLE_TOKEN, "multiple_token")];
}

/// Where the search for a key spec's keys starts.
#[derive(Clone, Copy, Debug)]
pub enum Begin {
    /// At a fixed argument index.
    Index(i32),
    /// After the first argument equal to the keyword, searching from
    /// `startfrom` (negative: from the end, backwards).
    Keyword(&'static str, i32),
    Unknown,
}

/// How many keys follow the start.
#[derive(Clone, Copy, Debug)]
pub enum Find {
    /// (lastkey, keystep, limit): lastkey relative to the start, negative
    /// counting from the end; a limit divides the remaining arguments.
    Range(i32, i32, i32),
    /// (keynumidx, firstkey, keystep), relative to the start.
    Keynum(i32, i32, i32),
    Unknown,
}

/// One key specification.
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    pub notes: Option<&'static str>,
    pub flags: u32,
    pub begin: Begin,
    pub find: Find,
}

impl KeySpec {
    const fn notes(mut self, notes: &'static str) -> Self {
        self.notes = Some(notes);
        self
    }
}

const fn ks(flags: u32, begin: Begin, find: Find) -> KeySpec {
    KeySpec { notes: None, flags, begin, find }
}

/// An argument's type, as `COMMAND DOCS` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    Str,
    Int,
    Dbl,
    Key,
    Pat,
    Time,
    Tok,
    OneOf,
    Block,
}

impl ArgType {
    pub fn name(self) -> &'static str {
        match self {
            ArgType::Str => "string",
            ArgType::Int => "integer",
            ArgType::Dbl => "double",
            ArgType::Key => "key",
            ArgType::Pat => "pattern",
            ArgType::Time => "unix-time",
            ArgType::Tok => "pure-token",
            ArgType::OneOf => "oneof",
            ArgType::Block => "block",
        }
    }
}

/// One node of a command's documented argument tree.
#[derive(Debug)]
pub struct Arg {
    pub name: &'static str,
    pub kind: ArgType,
    /// Index into the command's key specs, for key arguments.
    pub key_spec: Option<u8>,
    pub token: Option<&'static str>,
    /// No command Volley has documents one yet; Redis shows it when set.
    pub summary: Option<&'static str>,
    pub since: Option<&'static str>,
    pub deprecated_since: Option<&'static str>,
    pub flags: u8,
    /// The alternatives (oneof) or parts (block).
    pub args: &'static [Arg],
}

const fn a(name: &'static str, kind: ArgType) -> Arg {
    Arg {
        name,
        kind,
        key_spec: None,
        token: None,
        summary: None,
        since: None,
        deprecated_since: None,
        flags: 0,
        args: &[],
    }
}

/// A pure token, the most common leaf.
const fn t(name: &'static str, token: &'static str) -> Arg {
    a(name, ArgType::Tok).tok(token)
}

const fn oneof(name: &'static str, args: &'static [Arg]) -> Arg {
    let mut arg = a(name, ArgType::OneOf);
    arg.args = args;
    arg
}

const fn block(name: &'static str, args: &'static [Arg]) -> Arg {
    let mut arg = a(name, ArgType::Block);
    arg.args = args;
    arg
}

impl Arg {
    const fn tok(mut self, token: &'static str) -> Self {
        self.token = Some(token);
        self
    }
    const fn ks(mut self, index: u8) -> Self {
        self.key_spec = Some(index);
        self
    }
    const fn since(mut self, since: &'static str) -> Self {
        self.since = Some(since);
        self
    }
    const fn dep(mut self, since: &'static str) -> Self {
        self.deprecated_since = Some(since);
        self
    }
    const fn opt(mut self) -> Self {
        self.flags |= arg_flags::OPTIONAL;
        self
    }
    const fn multi(mut self) -> Self {
        self.flags |= arg_flags::MULTIPLE;
        self
    }
    const fn mtok(mut self) -> Self {
        self.flags |= arg_flags::MULTIPLE_TOKEN;
        self
    }
}

/// Everything Redis 7.0 reports about a command that the registry's spec
/// does not: key specs and tips (`COMMAND INFO`) and its documentation.
/// Empty slices stand for fields Redis leaves out.
#[derive(Debug)]
pub struct Meta {
    pub summary: &'static str,
    pub since: &'static str,
    pub group: &'static str,
    pub complexity: Option<&'static str>,
    pub doc_flags: u8,
    pub deprecated_since: Option<&'static str>,
    pub replaced_by: Option<&'static str>,
    pub tips: &'static [&'static str],
    pub keys: &'static [KeySpec],
    pub history: &'static [(&'static str, &'static str)],
    pub args: &'static [Arg],
}

const fn m(summary: &'static str, since: &'static str, group: &'static str) -> Meta {
    Meta {
        summary,
        since,
        group,
        complexity: None,
        doc_flags: 0,
        deprecated_since: None,
        replaced_by: None,
        tips: &[],
        keys: &[],
        history: &[],
        args: &[],
    }
}

impl Meta {
    const fn cx(mut self, complexity: &'static str) -> Self {
        self.complexity = Some(complexity);
        self
    }
    const fn doc_flags(mut self, flags: u8) -> Self {
        self.doc_flags = flags;
        self
    }
    const fn deprecated(mut self, since: &'static str) -> Self {
        self.deprecated_since = Some(since);
        self
    }
    const fn replaced_by(mut self, by: &'static str) -> Self {
        self.replaced_by = Some(by);
        self
    }
    const fn tips(mut self, tips: &'static [&'static str]) -> Self {
        self.tips = tips;
        self
    }
    const fn keys(mut self, keys: &'static [KeySpec]) -> Self {
        self.keys = keys;
        self
    }
    const fn hist(mut self, history: &'static [(&'static str, &'static str)]) -> Self {
        self.history = history;
        self
    }
    const fn args(mut self, args: &'static [Arg]) -> Self {
        self.args = args;
        self
    }

    /// Whether some key spec names real keys (not only NOT_KEY ones).
    pub fn has_real_keys(&self) -> bool {
        self.keys.iter().any(|k| k.flags & key_flags::NOT_KEY == 0)
    }
}

/// A table file's entries: (full name, metadata).
type Table = &'static [(&'static str, Meta)];

static TABLES: &[Table] = &[
    strings::TABLE,
    collections::TABLE,
    zset_geo::TABLE,
    generic::TABLE,
    server::TABLE,
    messaging::TABLE,
    memory::TABLE,
    cluster::TABLE,
    acl::TABLE,
    streams::TABLE,
];

/// Every table entry, for checks that the tables and the registry agree.
pub fn all() -> impl Iterator<Item = (&'static str, &'static Meta)> {
    TABLES.iter().flat_map(|t| t.iter()).map(|(name, meta)| (*name, meta))
}

/// The metadata of a command by full lowercase name (`set`, `config|get`).
pub fn meta(full_name: &str) -> Option<&'static Meta> {
    static BY_NAME: OnceLock<HashMap<&'static str, &'static Meta>> = OnceLock::new();
    BY_NAME.get_or_init(|| all().collect()).get(full_name).copied()
}
