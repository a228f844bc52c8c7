//! The command table. Each command group registers static [`CommandSpec`]s;
//! dispatch, `COMMAND`, key extraction and per-command stats all read this
//! one table, so there are no parallel lists to keep in sync.
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::keyspecs::{self, Meta};
use super::{Argv, Ctx};

/// A command handler: parse `argv`, do the work, write one reply.
pub type Handler = fn(&mut Ctx, &Argv);

/// One command (or subcommand) as Redis's command table describes it.
pub struct CommandSpec {
    /// Lowercase name (`get`, or `setname` for `client|setname`).
    pub name: &'static str,
    /// Redis arity: exact count if positive, at least -arity if negative.
    pub arity: i32,
    pub flags: u32,
    /// Key positions (first, last, step); last < 0 counts from the end.
    pub keys: (i32, i32, i32),
    pub handler: Handler,
    pub group: &'static str,
    pub since: &'static str,
    pub summary: &'static str,
    /// ACL categories as COMMAND INFO prints them (without `@`).
    pub acl: &'static [&'static str],
    pub subcommands: &'static [CommandSpec],
}

impl CommandSpec {
    fn arity_ok(&self, argc: usize) -> bool {
        let a = self.arity;
        (a >= 0 && argc == a as usize) || (a < 0 && argc >= (-a) as usize)
    }

    /// Positions of the key arguments in `argv` (COMMAND GETKEYS, cluster).
    pub fn key_positions(&self, argc: usize) -> Vec<usize> {
        let (first, last, step) = self.keys;
        if first <= 0 || step <= 0 {
            return Vec::new();
        }
        let last = if last < 0 { argc as i32 + last } else { last };
        (first..=last.min(argc as i32 - 1)).step_by(step as usize).map(|i| i as usize).collect()
    }
}

/// FNV-1a for the fixed command-name table: names are short and the table
/// is never filled from client input, so a keyed hash buys nothing here.
#[derive(Default)]
pub struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
    fn write_usize(&mut self, _len: usize) {}
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Where a registered command lives: index into the stats tables.
pub type CommandId = usize;

/// The result of resolving argv[0] (and argv[1] for containers).
pub enum Lookup {
    Found(CommandId, &'static CommandSpec),
    /// Error reply text: unknown command/subcommand, or wrong arity (then
    /// with the command, whose `rejected_calls` counts it). Bytes, because
    /// Redis echoes the client's (possibly binary) arguments.
    Rejected(Vec<u8>, Option<CommandId>),
}

/// All commands, addressable by id; full names are `parent|sub`.
#[derive(Default)]
pub struct Registry {
    by_name: HashMap<Vec<u8>, CommandId, BuildHasherDefault<NameHasher>>,
    specs: Vec<&'static CommandSpec>,
    full_names: Vec<String>,
    /// Whether each id is a subcommand (`config|get`): found by name for
    /// COMMAND INFO and the like, never run by that name.
    is_sub: Vec<bool>,
    /// Key specs, tips and docs of each id (`keyspecs`), attached once at
    /// registration so introspection never searches for them.
    meta: Vec<Option<&'static Meta>>,
    /// The last name looked up, exactly as the client typed it: a pipeline
    /// mostly repeats one command, and comparing a few bytes is cheaper
    /// than lowercasing and hashing them again.
    last: Cell<LastName>,
}

/// See [`Registry::last`].
#[derive(Clone, Copy, Default)]
struct LastName {
    len: u8,
    name: [u8; 15],
    id: CommandId,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register top-level commands (and their subcommands).
    pub fn add(&mut self, specs: &'static [CommandSpec]) {
        for spec in specs {
            self.insert(spec.name.to_string(), spec, false);
            for sub in spec.subcommands {
                self.insert(format!("{}|{}", spec.name, sub.name), sub, true);
            }
        }
    }

    fn insert(&mut self, full: String, spec: &'static CommandSpec, is_sub: bool) {
        let id = self.specs.len();
        let old = self.by_name.insert(full.clone().into_bytes(), id);
        assert!(old.is_none(), "command {full} registered twice");
        self.last.take();
        self.specs.push(spec);
        self.full_names.push(full);
        self.is_sub.push(is_sub);
        self.meta.push(keyspecs::meta(&self.full_names[id]));
    }

    /// `rename-command <from> <to>` from the config file: the command
    /// answers to `to` only (nowhere when `to` is empty); errors are
    /// Redis's fatal config texts.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<(), &'static str> {
        let from = from.to_ascii_lowercase().into_bytes();
        let Some(&id) = self.by_name.get(&from).filter(|&&id| !self.is_sub[id]) else {
            return Err("No such command in rename-command");
        };
        let to = to.to_ascii_lowercase().into_bytes();
        if !to.is_empty() && to != from && self.by_name.contains_key(&to) {
            return Err("Target command name already exists");
        }
        self.by_name.remove(&from);
        if !to.is_empty() {
            self.by_name.insert(to, id);
        }
        self.last.take();
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.specs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
    pub fn spec(&self, id: CommandId) -> &'static CommandSpec {
        self.specs[id]
    }
    /// Key specs, tips and docs; None for a command the tables lack.
    pub fn meta(&self, id: CommandId) -> Option<&'static Meta> {
        self.meta[id]
    }
    /// Whether `id` is a subcommand (`config|get`), reachable only through
    /// its container.
    pub fn is_subcommand(&self, id: CommandId) -> bool {
        self.is_sub[id]
    }
    /// `get`, `client|setname`.
    pub fn full_name(&self, id: CommandId) -> &str {
        &self.full_names[id]
    }
    /// Top-level commands only, for COMMAND / COMMAND LIST / COMMAND COUNT.
    pub fn top_level(&self) -> impl Iterator<Item = (CommandId, &'static CommandSpec)> + '_ {
        self.specs.iter().enumerate().filter(|(i, _)| !self.is_sub[*i]).map(|(i, s)| (i, *s))
    }

    /// Find by a name as typed by a client, case-insensitively, without allocating
    /// for ordinary command lengths.
    pub fn find(&self, name: &[u8]) -> Option<CommandId> {
        let last = self.last.get();
        // len 0 = no memo yet (an empty name is never a command).
        if last.len != 0 && name.len() == last.len as usize && crate::engine::bytes::eq(name, &last.name[..name.len()])
        {
            return Some(last.id);
        }
        let id = self.find_uncached(name)?;
        if name.len() <= last.name.len() {
            let mut memo = LastName { len: name.len() as u8, id, ..LastName::default() };
            memo.name[..name.len()].copy_from_slice(name);
            self.last.set(memo);
        }
        Some(id)
    }

    fn find_uncached(&self, name: &[u8]) -> Option<CommandId> {
        let mut stack = [0u8; 48];
        if name.len() <= stack.len() {
            let lower = &mut stack[..name.len()];
            lower.copy_from_slice(name);
            lower.make_ascii_lowercase();
            self.by_name.get(&*lower).copied()
        } else {
            self.by_name.get(&name.to_ascii_lowercase()).copied()
        }
    }

    /// Resolve a command line to a spec, with Redis's rejection texts.
    pub fn lookup(&self, argv: &Argv) -> Lookup {
        let name = argv.get(0);
        // `config|get` names a subcommand in the table, but clients reach
        // subcommands only through their container (Redis issue #10070).
        let Some(id) = self.find(name).filter(|&id| !self.is_sub[id]) else {
            return Lookup::Rejected(unknown_command(argv), None);
        };
        let spec = self.specs[id];
        if !spec.subcommands.is_empty() && argv.len() >= 2 {
            let sub = argv.get(1);
            let mut full = spec.name.as_bytes().to_vec();
            full.push(b'|');
            full.extend(sub.iter().map(u8::to_ascii_lowercase));
            return match self.by_name.get(&full) {
                Some(&sid) => self.check_arity(sid, argv),
                None => {
                    let mut msg = b"ERR unknown subcommand '".to_vec();
                    msg.extend_from_slice(clip(sub, 128));
                    msg.extend_from_slice(format!("'. Try {} HELP.", spec.name.to_ascii_uppercase()).as_bytes());
                    Lookup::Rejected(msg, None)
                }
            };
        }
        self.check_arity(id, argv)
    }

    fn check_arity(&self, id: CommandId, argv: &Argv) -> Lookup {
        let spec = self.specs[id];
        if spec.arity_ok(argv.len()) {
            Lookup::Found(id, spec)
        } else {
            Lookup::Rejected(
                format!("ERR wrong number of arguments for '{}' command", self.full_names[id]).into_bytes(),
                Some(id),
            )
        }
    }
}

/// At most `max` bytes of `b`, as Redis's `%.128s` prints it: a C string,
/// so it also stops at the first NUL byte.
pub fn clip(b: &[u8], max: usize) -> &[u8] {
    let b = &b[..b.len().min(max)];
    b.iter().position(|&c| c == 0).map_or(b, |nul| &b[..nul])
}

fn unknown_command(argv: &Argv) -> Vec<u8> {
    let mut args = Vec::new();
    for a in argv.iter_from(1) {
        if args.len() >= 128 {
            break;
        }
        let room = 128 - args.len();
        args.push(b'\'');
        args.extend_from_slice(clip(a, room));
        args.extend_from_slice(b"' ");
    }
    let mut msg = b"ERR unknown command '".to_vec();
    msg.extend_from_slice(clip(argv.get(0), 128));
    msg.extend_from_slice(b"', with args beginning with: ");
    msg.extend_from_slice(&args);
    msg
}
