//! Access control lists as Redis 7.0 has them: users (flags, password
//! hashes, selectors), the command catalog rules are resolved against,
//! authentication, the ACL log, and the ACL file. Permission checks of a
//! command line live in `dispatch::permissions` (they need key specs);
//! everything here is state and rule bookkeeping.
mod clients;
mod describe;
pub mod file;
pub mod log;
mod rules;
pub mod sha256;
mod verdicts;

use std::collections::{BTreeMap, HashMap};

use crate::engine::glob::CompiledGlob;

pub use describe::{channels_text, keys_text};
pub use rules::RuleError;
pub use verdicts::{Verdict, Verdicts};

/// Redis's ACL categories, in ACL CAT's order; a command's categories are
/// a bit mask over this list.
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// The category bit of `name` (case-insensitive), if it is one.
pub fn category_bit(name: &[u8]) -> Option<u32> {
    CATEGORIES.iter().position(|c| c.as_bytes().eq_ignore_ascii_case(name)).map(|i| 1 << i)
}

/// One command as ACL rules see it (filled from the command table).
#[derive(Debug, Clone)]
pub struct CatalogEntry {
    /// `get`, `client|kill`.
    pub name: String,
    pub categories: u32,
    pub parent: Option<usize>,
    pub subs: Vec<usize>,
    /// Where the permission check finds the command's keys.
    pub keys: KeyPlan,
    /// Channel arguments: (first position, patterns, only that one).
    pub channels: Option<(usize, bool, bool)>,
}

/// The flags of a command's one key when they depend on its arguments
/// (SET with or without GET): from (argc, argument i).
pub type KeyFlagsFn = for<'a, 'b> fn(usize, &'b (dyn Fn(usize) -> &'a [u8] + 'b)) -> u32;

/// Where a command's keys are, decided once from the command table so
/// that checking a call walks no key specs and allocates nothing.
#[derive(Debug, Clone)]
pub enum KeyPlan {
    /// Never any key.
    None,
    /// One key at a fixed position (GET, SET, INCR...): its key spec
    /// flags, or the function that reads them off the arguments; `read`
    /// and `write` are the most access a call may need (both when the
    /// flags vary).
    One { pos: usize, flags: u32, vary: Option<KeyFlagsFn>, read: bool, write: bool },
    /// Fixed ranges: (first, lastkey, step, key spec flags) per key spec,
    /// lastkey < 0 counting from the end.
    Ranges(Vec<(i32, i32, i32, u32)>),
    /// Only the full key search can tell (movable keys, keywords, counts).
    Search,
}

/// Every command by id (the registry's ids), for rules and descriptions.
#[derive(Debug, Default)]
pub struct Catalog {
    pub cmds: Vec<CatalogEntry>,
    by_name: HashMap<String, usize>,
}

impl Catalog {
    pub fn new(cmds: Vec<CatalogEntry>) -> Self {
        let by_name = cmds.iter().enumerate().map(|(i, c)| (c.name.clone(), i)).collect();
        Catalog { cmds, by_name }
    }
    /// A command by its full name, any case.
    pub fn find(&self, name: &[u8]) -> Option<usize> {
        self.by_name.get(&String::from_utf8_lossy(name).to_ascii_lowercase()).copied()
    }
    fn words(&self) -> usize {
        self.cmds.len().div_ceil(64)
    }
}

/// A key pattern with the access it grants (`~` both, `%R~`, `%W~`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPattern {
    /// As written, for ACL GETUSER, LIST and SAVE.
    pub pattern: Vec<u8>,
    /// The same pattern compiled for the check of every command.
    pub matcher: CompiledGlob,
    pub read: bool,
    pub write: bool,
}

impl KeyPattern {
    pub fn new(pattern: &[u8], read: bool, write: bool) -> Self {
        KeyPattern { pattern: pattern.to_vec(), matcher: CompiledGlob::new(pattern), read, write }
    }
    /// Whether this pattern grants the access and matches `key`.
    #[inline(always)]
    pub fn allows(&self, key: &[u8], read: bool, write: bool) -> bool {
        (!read || self.read) && (!write || self.write) && self.matcher.matches(key)
    }
}

/// One set of permissions; a user may run a command if any of its
/// selectors allows it whole (command, keys and channels).
#[derive(Debug, Clone, Default)]
pub struct Selector {
    pub root: bool,
    pub all_keys: bool,
    pub all_channels: bool,
    /// `allcommands`/`+@all` and nothing removed since: skips the bitmap.
    pub all_commands: bool,
    /// Allowed command ids.
    pub allowed: Vec<u64>,
    /// Set by `+@all` only: the "future commands" bit that tells `+@all
    /// -x` from `-@all +...` when describing.
    pub future: bool,
    /// `+select|0`: first arguments allowed for an otherwise denied command.
    pub first_args: BTreeMap<usize, Vec<Vec<u8>>>,
    pub keys: Vec<KeyPattern>,
    pub channels: Vec<Vec<u8>>,
}

impl Selector {
    pub fn new(root: bool, words: usize, all_channels: bool) -> Self {
        Selector { root, all_channels, allowed: vec![0; words], ..Selector::default() }
    }
    #[inline]
    pub fn allows_id(&self, id: usize) -> bool {
        self.allowed.get(id / 64).is_some_and(|w| w & (1 << (id % 64)) != 0)
    }
    fn unrestricted(&self) -> bool {
        self.all_commands && self.all_keys && self.all_channels
    }
}

/// A user: flags, password hashes and selectors (the first is the root).
#[derive(Debug, Clone)]
pub struct User {
    pub name: Vec<u8>,
    pub enabled: bool,
    pub nopass: bool,
    /// `sanitize-payload` (Some(true)) / `skip-sanitize-payload` (Some(false)).
    pub sanitize: Option<bool>,
    /// Lowercase hex SHA-256 of each password, in the order added.
    pub passwords: Vec<String>,
    pub selectors: Vec<Selector>,
    /// Every command, key and channel: the permission check is one test.
    pub unrestricted: bool,
    /// The root selector's verdict on each command, for the quick check.
    pub verdicts: Verdicts,
}

impl User {
    fn new(name: &[u8], words: usize, all_channels: bool) -> Self {
        User {
            name: name.to_vec(),
            enabled: false,
            nopass: false,
            sanitize: None,
            passwords: Vec::new(),
            selectors: vec![Selector::new(true, words, all_channels)],
            unrestricted: false,
            verdicts: Verdicts::default(),
        }
    }
    /// Work out what the checks read, once the rules are final.
    fn refresh(&mut self, cat: &Catalog) {
        self.unrestricted = self.selectors.iter().any(Selector::unrestricted);
        self.verdicts = Verdicts::build(cat, &self.selectors[0]);
    }
    /// Whether `password` opens this user (Redis's ACLCheckUserCredentials).
    pub fn accepts(&self, password: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let hashed = sha256::hex(password);
        // Compare every byte, so the time taken says nothing of the hash.
        self.passwords.iter().any(|p| p.bytes().zip(hashed.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0)
    }
}

/// Slot of the `default` user; it can't be deleted, so it never moves.
pub const DEFAULT_USER: usize = 0;

/// Why a command was refused (ACL LOG `reason`, INFO counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Denied {
    Command,
    Key,
    Channel,
    Auth,
}

/// Every user, the catalog, the log and the counters INFO reports.
#[derive(Debug)]
pub struct Acl {
    users: Vec<Option<User>>,
    by_name: BTreeMap<Vec<u8>, usize>,
    pub catalog: Catalog,
    pub log: log::AclLog,
    /// `acl-pubsub-default allchannels`: new selectors get every channel.
    pub pubsub_all: bool,
    /// INFO `acl_access_denied_{auth,cmd,key,channel}`.
    pub denied: [u64; 4],
}

impl Default for Acl {
    fn default() -> Self {
        Acl::new(Catalog::default())
    }
}

impl Acl {
    /// The default user alone (`on nopass ~* &* +@all`).
    pub fn new(catalog: Catalog) -> Self {
        let mut acl = Acl {
            users: Vec::new(),
            by_name: BTreeMap::new(),
            catalog,
            log: Default::default(),
            pubsub_all: false,
            denied: [0; 4],
        };
        let default = acl.default_user_template();
        acl.users.push(Some(default));
        acl.by_name.insert(b"default".to_vec(), DEFAULT_USER);
        acl
    }

    fn default_user_template(&self) -> User {
        let mut u = User::new(b"default", self.catalog.words(), false);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            self.apply(&mut u, op.as_bytes()).expect("default rules are valid");
        }
        u.refresh(&self.catalog);
        u
    }

    /// The user in `slot`; a deleted user's clients fall back to default.
    #[inline]
    pub fn user(&self, slot: usize) -> &User {
        match self.users.get(slot) {
            Some(Some(u)) => u,
            _ => self.users[DEFAULT_USER].as_ref().expect("default user exists"),
        }
    }
    pub fn find(&self, name: &[u8]) -> Option<usize> {
        self.by_name.get(name).copied()
    }
    /// Users in name order, as ACL LIST and ACL SAVE show them.
    pub fn users(&self) -> impl Iterator<Item = &User> + '_ {
        self.by_name.values().map(|&slot| self.user(slot))
    }
    pub fn default_user(&self) -> &User {
        self.user(DEFAULT_USER)
    }

    /// Whether the default user lets a new connection in without AUTH
    /// (on and nopass); protected mode asks this too.
    pub fn default_is_open(&self) -> bool {
        let d = self.default_user();
        d.nopass && d.enabled
    }

    /// Redis's `authRequired`: a client that never authenticated must
    /// while the default user has a password or is off.
    #[inline]
    pub fn auth_required(&self, authenticated: bool) -> bool {
        !authenticated && !self.default_is_open()
    }

    /// The slot of the user these credentials open, if they do.
    pub fn check_credentials(&self, name: &[u8], password: &[u8]) -> Option<usize> {
        let slot = self.find(name)?;
        self.user(slot).accepts(password).then_some(slot)
    }

    /// `requirepass`: the default user's only password, or nopass.
    pub fn set_default_password(&mut self, password: Option<&[u8]>) {
        let mut u = self.users[DEFAULT_USER].take().expect("default user exists");
        let _ = self.apply(&mut u, b"resetpass");
        match password {
            Some(p) => {
                let mut op = b">".to_vec();
                op.extend_from_slice(p);
                let _ = self.apply(&mut u, &op);
            }
            None => {
                let _ = self.apply(&mut u, b"nopass");
            }
        }
        u.refresh(&self.catalog);
        self.users[DEFAULT_USER] = Some(u);
    }

    /// ACL SETUSER: apply `ops` to a copy of the user (a new one if it does
    /// not exist) and store it only if every op is valid. Returns the
    /// previous version of an existing user (to judge its clients).
    pub fn set_user(&mut self, name: &[u8], ops: &[&[u8]]) -> Result<Option<User>, String> {
        let ops = rules::merge_selector_args(ops)
            .map_err(|at| format!("Unmatched parenthesis in acl selector starting at '{}'.", show(at)))?;
        let existing = self.find(name);
        let mut u = match existing {
            Some(slot) => self.user(slot).clone(),
            None => User::new(name, self.catalog.words(), self.pubsub_all),
        };
        for op in &ops {
            self.apply(&mut u, op)
                .map_err(|e| format!("Error in ACL SETUSER modifier '{}': {}", show(op), e.text()))?;
        }
        u.refresh(&self.catalog);
        match existing {
            Some(slot) => Ok(self.users[slot].replace(u)),
            None => {
                self.insert(u);
                Ok(None)
            }
        }
    }

    fn insert(&mut self, u: User) -> usize {
        let name = u.name.clone();
        let slot = match self.users.iter().skip(1).position(Option::is_none) {
            Some(i) => {
                self.users[i + 1] = Some(u);
                i + 1
            }
            None => {
                self.users.push(Some(u));
                self.users.len() - 1
            }
        };
        self.by_name.insert(name, slot);
        slot
    }

    /// Remove a user (never `default`); its slot, for killing its clients.
    pub fn delete(&mut self, name: &[u8]) -> Option<usize> {
        if name == b"default" {
            return None;
        }
        let slot = self.by_name.remove(name)?;
        self.users[slot] = None;
        Some(slot)
    }

    /// Replace every user at once (ACL LOAD, start-up), keeping the default
    /// user's slot; the users are built and checked by `file`.
    pub fn replace_all(&mut self, users: Vec<User>) {
        let default = users.iter().find(|u| u.name == b"default").cloned();
        self.users.truncate(1);
        self.by_name.retain(|n, _| n == b"default");
        self.users[DEFAULT_USER] = Some(default.unwrap_or_else(|| self.default_user_template()));
        for u in users.into_iter().filter(|u| u.name != b"default") {
            self.insert(u);
        }
    }

    /// A fresh user with `ops` applied, not stored (file loading).
    pub fn build_user(&self, name: &[u8], ops: &[Vec<u8>]) -> Result<User, (usize, RuleError)> {
        let mut u = User::new(name, self.catalog.words(), self.pubsub_all);
        for (i, op) in ops.iter().enumerate() {
            self.apply(&mut u, op).map_err(|e| (i, e))?;
        }
        u.refresh(&self.catalog);
        Ok(u)
    }

    /// Count a refusal for INFO.
    pub fn count_denied(&mut self, why: Denied) {
        let i = match why {
            Denied::Auth => 0,
            Denied::Command => 1,
            Denied::Key => 2,
            Denied::Channel => 3,
        };
        self.denied[i] += 1;
    }

    /// The rule text of a user, as ACL LIST shows it after `user <name> `.
    pub fn describe_user(&self, u: &User) -> String {
        describe::user(&self.catalog, u)
    }
    /// A selector's command rules (`+@all -debug`), as ACL GETUSER shows them.
    pub fn describe_commands(&self, s: &Selector) -> String {
        describe::command_rules(&self.catalog, s)
    }
}

/// Bytes as Redis prints them in its messages.
pub fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Redis's ACLStringHasSpaces: usernames and patterns may not hold
/// whitespace or NUL.
pub fn has_spaces(b: &[u8]) -> bool {
    b.iter().any(|&c| c.is_ascii_whitespace() || c == 0 || c == 0x0b)
}
