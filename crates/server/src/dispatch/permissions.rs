//! ACL permission checks of one command line (Redis 7.0's
//! ACLCheckAllUserCommandPerm): the command bit (or an allowed first
//! argument), every key by its key-spec access (read for `access`, write
//! for insert/delete/update), and every published or subscribed channel.
//! A user may run the command if any one selector allows all of it.
use super::keys::{self, KeyRef};
use super::keyspecs::key_flags::{ACCESS, DELETE, INCOMPLETE, INSERT, NOT_KEY, UPDATE, VARIABLE_FLAGS};
use super::keyspecs::{Begin, Find, KeySpec, Meta};
use super::registry::CommandId;
use super::{flags, Argv, CommandSpec, Registry};
use crate::engine::glob::glob_match;
use crate::server::acl::{Catalog, CatalogEntry, Denied, KeyPlan, Selector, User, Verdict, CATEGORIES};

/// The ACL catalog of the command table: names, categories, containers.
pub fn catalog(reg: &Registry) -> Catalog {
    let mut cmds: Vec<CatalogEntry> = (0..reg.len())
        .map(|id| {
            let spec = reg.spec(id);
            let categories =
                spec.acl.iter().filter_map(|c| CATEGORIES.iter().position(|k| k == c)).fold(0u32, |m, i| m | (1 << i));
            CatalogEntry {
                name: reg.full_name(id).to_string(),
                categories,
                parent: None,
                subs: Vec::new(),
                keys: key_plan(spec, reg.meta(id)),
                channels: channels(spec.name),
            }
        })
        .collect();
    for id in 0..cmds.len() {
        if let Some((parent, _)) = cmds[id].name.split_once('|') {
            if let Some(pid) = reg.find(parent.as_bytes()) {
                cmds[id].parent = Some(pid);
                cmds[pid].subs.push(id);
            }
        }
    }
    Catalog::new(cmds)
}

/// Where the check finds a command's keys: most commands have fixed
/// ranges with fixed flags, usually a single key; SET and BITFIELD have
/// one key whose flags a function reads off the arguments; the rest
/// (movable keys, a finder, keywords, counts) need the full key search.
fn key_plan(spec: &CommandSpec, meta: Option<&Meta>) -> KeyPlan {
    if !keys::has_keys(spec, meta) {
        return KeyPlan::None;
    }
    let Some(meta) = meta else { return KeyPlan::Search };
    let specs: Vec<&KeySpec> = meta.keys.iter().filter(|k| k.flags & NOT_KEY == 0).collect();
    if let Some(vary) = keys::variable_flags(spec) {
        return match specs.as_slice() {
            [only] => match (only.begin, only.find) {
                (Begin::Index(pos), Find::Range(0, _, 0)) => {
                    KeyPlan::One { pos: pos as usize, flags: only.flags, vary: Some(vary), read: true, write: true }
                }
                _ => KeyPlan::Search,
            },
            _ => KeyPlan::Search,
        };
    }
    if spec.flags & flags::MOVABLEKEYS != 0 || keys::has_finder(spec) {
        return KeyPlan::Search;
    }
    let mut ranges = Vec::new();
    for ks in specs {
        if ks.flags & (INCOMPLETE | VARIABLE_FLAGS) != 0 {
            return KeyPlan::Search;
        }
        match (ks.begin, ks.find) {
            (Begin::Index(first), Find::Range(lastkey, step, 0)) => {
                ranges.push((first, lastkey, step.max(1), ks.flags))
            }
            _ => return KeyPlan::Search,
        }
    }
    match ranges.as_slice() {
        &[(first, 0, _, flags)] => {
            let (read, write) = access(flags);
            KeyPlan::One { pos: first as usize, flags, vary: None, read, write }
        }
        _ => KeyPlan::Ranges(ranges),
    }
}

/// Channel arguments: (first position, is a pattern), or None when the
/// command publishes or subscribes to nothing (unsubscribing needs no
/// permission).
fn channels(name: &str) -> Option<(usize, bool, bool)> {
    // (first, pattern, only the first argument)
    match name {
        "publish" | "spublish" => Some((1, false, true)),
        "subscribe" | "ssubscribe" => Some((1, false, false)),
        "psubscribe" => Some((1, true, false)),
        _ => None,
    }
}

/// A refusal: why, and the argument position of the key or channel.
pub type Refusal = (Denied, usize);

struct Call<'c, 'a> {
    reg: &'c Registry,
    id: CommandId,
    spec: &'c CommandSpec,
    argc: usize,
    arg: &'c dyn Fn(usize) -> &'a [u8],
    keys: Option<Vec<KeyRef>>,
}

impl<'a> Call<'_, 'a> {
    fn keys(&mut self) -> &[KeyRef] {
        if self.keys.is_none() {
            let meta = self.reg.meta(self.id);
            self.keys = Some(keys::keys_with_flags(self.spec, meta, self.argc, self.arg));
        }
        self.keys.as_deref().unwrap_or(&[])
    }
}

/// The access a key spec's flags ask for: read for `access`, write for
/// insert, delete or update (Redis's ACLSelectorCheckKey).
fn access(kflags: u32) -> (bool, bool) {
    (kflags & ACCESS != 0, kflags & (INSERT | DELETE | UPDATE) != 0)
}

fn key_allowed(s: &Selector, key: &[u8], kflags: u32) -> bool {
    let (read, write) = access(kflags);
    s.all_keys || s.keys.iter().any(|p| p.allows(key, read, write))
}

/// The usual way a restricted user is allowed, in a few instructions:
/// its root selector's verdict on the command, worked out when the user
/// was set (see `server::acl::verdicts`), and at most one key matched.
/// False sends the caller to [`check`], which decides everything else.
/// Out of line so that the unrestricted user's path stays as it was.
#[inline(never)]
pub fn quick_allow(user: &User, id: CommandId, argv: &Argv) -> bool {
    quick(user, id, argv.len(), |i| argv.get(i))
}

#[inline(always)]
fn quick<'a>(user: &User, id: CommandId, argc: usize, arg: impl Fn(usize) -> &'a [u8]) -> bool {
    match user.verdicts.get(id) {
        Verdict::Slow => false,
        Verdict::Allow => true,
        Verdict::Key { pos, read, write } => {
            if pos >= argc {
                return true;
            }
            let key = arg(pos);
            // A plain loop: `any` with its closure stays out of line here.
            for p in &user.selectors[0].keys {
                if p.allows(key, read, write) {
                    return true;
                }
            }
            false
        }
    }
}

fn command_allowed(cat: &Catalog, s: &Selector, call: &Call) -> bool {
    if s.all_commands || call.spec.flags & flags::NO_AUTH != 0 || s.allows_id(call.id) {
        return true;
    }
    let Some(args) = s.first_args.get(&call.id) else { return false };
    let idx = if cat.cmds[call.id].parent.is_some() { 2 } else { 1 };
    call.argc > idx && args.iter().any(|a| a.eq_ignore_ascii_case((call.arg)(idx)))
}

fn check_selector(cat: &Catalog, s: &Selector, call: &mut Call) -> Result<(), Refusal> {
    if !command_allowed(cat, s, call) {
        return Err((Denied::Command, 0));
    }
    if !s.all_keys {
        check_keys(cat, s, call)?;
    }
    if let (false, Some((first, pattern, single))) = (s.all_channels, cat.cmds[call.id].channels) {
        let last = if single { first.min(call.argc - 1) } else { call.argc - 1 };
        for pos in first..=last {
            let ch = (call.arg)(pos);
            let ok = s.channels.iter().any(|p| if pattern { p == ch } else { glob_match(p, ch, false) });
            if !ok {
                return Err((Denied::Channel, pos));
            }
        }
    }
    Ok(())
}

fn check_keys(cat: &Catalog, s: &Selector, call: &mut Call) -> Result<(), Refusal> {
    let (arg, argc) = (call.arg, call.argc);
    let plan = match &cat.cmds[call.id].keys {
        KeyPlan::None => return Ok(()),
        &KeyPlan::One { pos, flags, vary, .. } => {
            let flags = vary.map_or(flags, |vary| vary(argc, arg));
            return match pos >= argc || key_allowed(s, arg(pos), flags) {
                true => Ok(()),
                false => Err((Denied::Key, pos)),
            };
        }
        KeyPlan::Ranges(plan) => plan,
        KeyPlan::Search => {
            for &(pos, kflags) in call.keys() {
                if !key_allowed(s, arg(pos), kflags) {
                    return Err((Denied::Key, pos));
                }
            }
            return Ok(());
        }
    };
    let argc = argc as i32;
    // As the key search does: a range outside the arguments means no keys.
    let ranges = plan.iter().map(|&(first, lastkey, step, f)| {
        let last = if lastkey >= 0 { first + lastkey } else { argc + lastkey };
        (first, last, step, f)
    });
    if ranges.clone().any(|(first, last, _, _)| last >= argc || last < first || first >= argc) {
        return Ok(());
    }
    for (first, last, step, kflags) in ranges {
        for pos in (first..=last).step_by(step as usize) {
            if !key_allowed(s, arg(pos as usize), kflags) {
                return Err((Denied::Key, pos as usize));
            }
        }
    }
    Ok(())
}

/// Whether `user` may run this call; Err names the most relevant refusal
/// across its selectors, as Redis picks it (channel over key over
/// command, then the latest argument).
pub fn check<'a>(
    cat: &Catalog,
    reg: &Registry,
    user: &User,
    id: CommandId,
    argc: usize,
    arg: &dyn Fn(usize) -> &'a [u8],
) -> Result<(), Refusal> {
    if user.unrestricted || quick(user, id, argc, arg) {
        return Ok(());
    }
    let mut call = Call { reg, id, spec: reg.spec(id), argc, arg, keys: None };
    let mut worst: Refusal = (Denied::Command, 0);
    for s in &user.selectors {
        match check_selector(cat, s, &mut call) {
            Ok(()) => return Ok(()),
            Err(r) if r.0 > worst.0 || (r.0 == worst.0 && r.1 > worst.1) => worst = r,
            Err(_) => {}
        }
    }
    Err(worst)
}

/// Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess: some selector runs
/// this call and may read (`read`) or write every key (SORT's BY and GET
/// patterns name keys no key spec can list).
pub fn unrestricted_key_access<'a>(
    cat: &Catalog,
    reg: &Registry,
    user: &User,
    id: CommandId,
    argc: usize,
    arg: &dyn Fn(usize) -> &'a [u8],
    read: bool,
) -> bool {
    let mut call = Call { reg, id, spec: reg.spec(id), argc, arg, keys: None };
    user.selectors.iter().any(|s| {
        check_selector(cat, s, &mut call).is_ok()
            && (s.all_keys || s.keys.iter().any(|p| p.pattern == b"*" && (!read || p.read) && (read || p.write)))
    })
}

/// The NOPERM reply of a refusal at the top level or in a script.
pub fn refusal_text(reg: &Registry, id: CommandId, why: Denied) -> String {
    match why {
        Denied::Command => format!("NOPERM this user has no permissions to run the '{}' command", reg.full_name(id)),
        Denied::Key => "NOPERM this user has no permissions to access one of the keys used as arguments".into(),
        Denied::Channel => "NOPERM this user has no permissions to access one of the channels used as arguments".into(),
        Denied::Auth => "NOPERM no permission".into(),
    }
}
