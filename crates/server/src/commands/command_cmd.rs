//! COMMAND and its subcommands, all generated from the registry: each
//! command's spec (arity, flags, key range, ACL categories) plus the key
//! specs, tips and documentation the registry attaches from
//! `dispatch::keyspecs`. Key extraction (GETKEYS) is `dispatch::keys`'s.
use crate::dispatch::flags::{self, NAMES};
use crate::dispatch::keyspecs::{self, arg_flags, doc_flags, key_flags, Arg, Begin, Find, KeySpec, Meta};
use crate::dispatch::registry::{CommandId, Registry};
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::glob::glob_match;

/// `COMMAND` alone: every top-level command's info.
pub fn all(ctx: &mut Ctx, _argv: &Argv) {
    let reg = &ctx.reg;
    let top: Vec<CommandId> = reg.top_level().map(|(id, _)| id).collect();
    ctx.r.array(top.len());
    for id in top {
        write_info(&mut ctx.r, reg, id);
    }
}

pub fn count(ctx: &mut Ctx, _argv: &Argv) {
    let n = ctx.reg.top_level().count();
    ctx.r.int(n as i64);
}

/// A set of simple-string flag names, as Redis replies every flag list.
fn write_flags<T: Copy + Into<u32>>(r: &mut Reply, flags: T, names: &[(T, &str)]) {
    let set: Vec<&str> = names.iter().filter(|(bit, _)| flags.into() & (*bit).into() != 0).map(|(_, n)| *n).collect();
    r.set(set.len());
    for name in set {
        r.simple(name.as_bytes());
    }
}

/// The registry id of `parent|sub`.
fn sub_id(reg: &Registry, parent: CommandId, sub: &CommandSpec) -> Option<CommandId> {
    reg.find(format!("{}|{}", reg.full_name(parent), sub.name).as_bytes())
}

/// One command's COMMAND INFO entry (Redis 7.0's ten fields).
fn write_info(r: &mut Reply, reg: &Registry, id: CommandId) {
    let spec = reg.spec(id);
    let meta = reg.meta(id);
    r.array(10);
    r.bulk(reg.full_name(id).as_bytes());
    r.int(spec.arity as i64);
    write_flags(r, spec.flags, NAMES);
    r.int(spec.keys.0 as i64);
    r.int(spec.keys.1 as i64);
    r.int(spec.keys.2 as i64);
    r.set(spec.acl.len());
    for cat in spec.acl {
        r.simple(format!("@{cat}").as_bytes());
    }
    let tips = meta.map_or(&[][..], |m| m.tips);
    r.set(tips.len());
    for tip in tips {
        r.bulk(tip.as_bytes());
    }
    let specs = meta.map_or(&[][..], |m| m.keys);
    r.set(specs.len());
    for ks in specs {
        write_key_spec(r, ks);
    }
    if spec.subcommands.is_empty() {
        r.set(0);
    } else {
        r.array(spec.subcommands.len());
        for sub in spec.subcommands {
            match sub_id(reg, id, sub) {
                Some(sid) => write_info(r, reg, sid),
                None => r.null(),
            }
        }
    }
}

fn write_key_spec(r: &mut Reply, ks: &KeySpec) {
    r.map(3 + ks.notes.is_some() as usize);
    if let Some(notes) = ks.notes {
        r.bulk(b"notes");
        r.bulk(notes.as_bytes());
    }
    r.bulk(b"flags");
    write_flags(r, ks.flags, key_flags::NAMES);
    r.bulk(b"begin_search");
    match ks.begin {
        Begin::Index(pos) => typed(r, "index", &[("index", pos)], None),
        Begin::Keyword(word, from) => typed(r, "keyword", &[("startfrom", from)], Some(word)),
        Begin::Unknown => typed(r, "unknown", &[], None),
    }
    r.bulk(b"find_keys");
    match ks.find {
        Find::Range(last, step, limit) => {
            typed(r, "range", &[("lastkey", last), ("keystep", step), ("limit", limit)], None)
        }
        Find::Keynum(idx, first, step) => {
            typed(r, "keynum", &[("keynumidx", idx), ("firstkey", first), ("keystep", step)], None)
        }
        Find::Unknown => typed(r, "unknown", &[], None),
    }
}

/// `{type: kind, spec: {...}}`; a keyword comes first in its spec map.
fn typed(r: &mut Reply, kind: &str, fields: &[(&str, i32)], keyword: Option<&str>) {
    r.map(2);
    r.bulk(b"type");
    r.bulk(kind.as_bytes());
    r.bulk(b"spec");
    r.map(fields.len() + keyword.is_some() as usize);
    if let Some(word) = keyword {
        r.bulk(b"keyword");
        r.bulk(word.as_bytes());
    }
    for (name, v) in fields {
        r.bulk(name.as_bytes());
        r.int(*v as i64);
    }
}

pub fn info(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() == 2 {
        return all(ctx, argv);
    }
    ctx.r.array(argv.len() - 2);
    for name in argv.iter_from(2) {
        match ctx.reg.find(name) {
            Some(id) => write_info(&mut ctx.r, ctx.reg, id),
            None => ctx.r.null(),
        }
    }
}

/// A bulk-string key and value pair of a docs map.
fn pair(r: &mut Reply, key: &str, value: &str) {
    r.bulk(key.as_bytes());
    r.bulk(value.as_bytes());
}

/// COMMAND DOCS entry: Redis's fields in its order, leaving out the absent
/// ones. A command without table docs shows its spec's summary and group.
fn write_docs(r: &mut Reply, reg: &Registry, id: CommandId) {
    let spec = reg.spec(id);
    let Some(meta) = reg.meta(id) else {
        let subs = !spec.subcommands.is_empty();
        r.map(3 + subs as usize);
        pair(r, "summary", spec.summary);
        pair(r, "since", spec.since);
        pair(r, "group", spec.group);
        return write_doc_subs(r, reg, id);
    };
    let present = [
        meta.complexity.is_some(),
        meta.doc_flags != 0,
        meta.deprecated_since.is_some(),
        meta.replaced_by.is_some(),
        !meta.history.is_empty(),
        !meta.args.is_empty(),
        !spec.subcommands.is_empty(),
    ];
    r.map(3 + present.iter().filter(|p| **p).count());
    pair(r, "summary", meta.summary);
    pair(r, "since", meta.since);
    pair(r, "group", meta.group);
    write_doc_extras(r, meta);
    write_doc_subs(r, reg, id);
}

fn write_doc_extras(r: &mut Reply, meta: &Meta) {
    if let Some(c) = meta.complexity {
        pair(r, "complexity", c);
    }
    if meta.doc_flags != 0 {
        r.bulk(b"doc_flags");
        write_flags(r, meta.doc_flags, doc_flags::NAMES);
    }
    if let Some(v) = meta.deprecated_since {
        pair(r, "deprecated_since", v);
    }
    if let Some(v) = meta.replaced_by {
        pair(r, "replaced_by", v);
    }
    if !meta.history.is_empty() {
        r.bulk(b"history");
        r.set(meta.history.len());
        for (since, change) in meta.history {
            r.array(2);
            r.bulk(since.as_bytes());
            r.bulk(change.as_bytes());
        }
    }
    if !meta.args.is_empty() {
        r.bulk(b"arguments");
        write_args(r, meta.args);
    }
}

fn write_doc_subs(r: &mut Reply, reg: &Registry, id: CommandId) {
    let spec = reg.spec(id);
    if spec.subcommands.is_empty() {
        return;
    }
    r.bulk(b"subcommands");
    let subs: Vec<CommandId> = spec.subcommands.iter().filter_map(|s| sub_id(reg, id, s)).collect();
    r.map(subs.len());
    for sid in subs {
        r.bulk(reg.full_name(sid).as_bytes());
        write_docs(r, reg, sid);
    }
}

fn write_args(r: &mut Reply, args: &[Arg]) {
    r.array(args.len());
    for arg in args {
        let nested = !arg.args.is_empty() || matches!(arg.kind, keyspecs::ArgType::OneOf | keyspecs::ArgType::Block);
        let optional = [
            arg.key_spec.is_some(),
            arg.token.is_some(),
            arg.summary.is_some(),
            arg.since.is_some(),
            arg.deprecated_since.is_some(),
            arg.flags != 0,
            nested,
        ];
        r.map(2 + optional.iter().filter(|p| **p).count());
        pair(r, "name", arg.name);
        pair(r, "type", arg.kind.name());
        if let Some(i) = arg.key_spec {
            r.bulk(b"key_spec_index");
            r.int(i as i64);
        }
        for (key, value) in [("token", arg.token), ("summary", arg.summary), ("since", arg.since)] {
            if let Some(v) = value {
                pair(r, key, v);
            }
        }
        if let Some(v) = arg.deprecated_since {
            pair(r, "deprecated_since", v);
        }
        if arg.flags != 0 {
            r.bulk(b"flags");
            write_flags(r, arg.flags, arg_flags::NAMES);
        }
        if nested {
            r.bulk(b"arguments");
            write_args(r, arg.args);
        }
    }
}

pub fn docs(ctx: &mut Ctx, argv: &Argv) {
    let reg = &ctx.reg;
    let ids: Vec<CommandId> = if argv.len() == 2 {
        reg.top_level().map(|(id, _)| id).collect()
    } else {
        argv.iter_from(2).filter_map(|n| reg.find(n)).collect()
    };
    ctx.r.map(ids.len());
    for id in ids {
        ctx.r.bulk(reg.full_name(id).as_bytes());
        write_docs(&mut ctx.r, reg, id);
    }
}

/// A COMMAND LIST filter over (full name, spec).
type NameFilter = dyn Fn(&str, &CommandSpec) -> bool;

/// COMMAND LIST [FILTERBY MODULE|ACLCAT|PATTERN <value>]: subcommands are
/// listed and filtered like commands; there are no modules, and an unknown
/// category matches nothing.
pub fn list(ctx: &mut Ctx, argv: &Argv) {
    let keep: Box<NameFilter> = match argv.len() {
        2 => Box::new(|_, _| true),
        5 if argv.is(2, "filterby") => {
            let value = argv.get(4).to_vec();
            if argv.is(3, "module") {
                Box::new(|_, _| false)
            } else if argv.is(3, "aclcat") {
                let value = String::from_utf8_lossy(&value).into_owned();
                Box::new(move |_, s| s.acl.iter().any(|c| c.eq_ignore_ascii_case(&value)))
            } else if argv.is(3, "pattern") {
                Box::new(move |n, _| glob_match(&value, n.as_bytes(), true))
            } else {
                return ctx.syntax_error();
            }
        }
        _ => return ctx.syntax_error(),
    };
    let reg = &ctx.reg;
    let names: Vec<&str> = (0..reg.len())
        .map(|id| (reg.full_name(id), reg.spec(id)))
        .filter(|(n, s)| keep(n, s))
        .map(|(n, _)| n)
        .collect();
    ctx.r.array(names.len());
    for n in names {
        ctx.r.bulk(n.as_bytes());
    }
}

/// Arity check as dispatch applies it.
fn arity_ok(arity: i32, argc: usize) -> bool {
    (arity >= 0 && argc == arity as usize) || (arity < 0 && argc >= arity.unsigned_abs() as usize)
}

/// The command a full command line names: its container's subcommand when
/// it has subcommands and a second word, else the command itself.
fn resolve(reg: &Registry, argv: &Argv, at: usize) -> Option<CommandId> {
    let id = reg.find(argv.get(at)).filter(|&id| !reg.is_subcommand(id))?;
    if reg.spec(id).subcommands.is_empty() || argv.len() <= at + 1 {
        return Some(id);
    }
    let mut full = format!("{}|", reg.full_name(id)).into_bytes();
    full.extend_from_slice(argv.get(at + 1));
    reg.find(&full)
}

/// COMMAND GETKEYS / GETKEYSANDFLAGS over the command line from argv[2].
fn getkeys_impl(ctx: &mut Ctx, argv: &Argv, with_flags: bool) {
    let reg = &ctx.reg;
    let Some(id) = resolve(reg, argv, 2) else { return ctx.r.error("ERR Invalid command specified") };
    let (spec, meta) = (reg.spec(id), reg.meta(id));
    let argc = argv.len() - 2;
    if !crate::dispatch::keys::has_keys(spec, meta) {
        return ctx.r.error("ERR The command has no key arguments");
    }
    if !arity_ok(spec.arity, argc) {
        return ctx.r.error("ERR Invalid number of arguments specified for command");
    }
    let keys = crate::dispatch::keys::keys_with_flags(spec, meta, argc, |i| argv.get(i + 2));
    if keys.is_empty() && spec.flags & flags::NO_MANDATORY_KEYS == 0 {
        return ctx.r.error("ERR Invalid arguments specified for command");
    }
    ctx.r.array(keys.len());
    for (pos, key_flags) in keys {
        if with_flags {
            ctx.r.array(2);
            ctx.r.bulk(argv.get(pos + 2));
            write_flags(&mut ctx.r, key_flags, keyspecs::key_flags::NAMES);
        } else {
            ctx.r.bulk(argv.get(pos + 2));
        }
    }
}

pub fn getkeys(ctx: &mut Ctx, argv: &Argv) {
    getkeys_impl(ctx, argv, false);
}

pub fn getkeysandflags(ctx: &mut Ctx, argv: &Argv) {
    getkeys_impl(ctx, argv, true);
}

pub fn help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help(
        "COMMAND",
        &[
            "(no subcommand)",
            "    Return details about all commands.",
            "COUNT",
            "    Return the total number of commands in this server.",
            "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
            "    Return a list of all commands, optionally filtered.",
            "INFO [<command-name> ...]",
            "    Return details about the named commands, or all commands when none is given.",
            "DOCS [<command-name> ...]",
            "    Return documentation about the named commands, or all commands when none is given.",
            "GETKEYS <full-command>",
            "    Return the keys from a full command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys from a full command, each with how the command uses it.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use crate::dispatch::flags::MOVABLEKEYS;
    use crate::dispatch::keys::{key_positions, keys_with_flags};
    use crate::dispatch::keyspecs::{self, Arg, Begin, Find};
    use crate::dispatch::Registry;

    /// Registered by Volley but newer than Redis 7.0.15, so without 7.0 data.
    const NEWER_THAN_7_0: &[&str] = &["client|setinfo"];

    fn registry() -> Registry {
        let mut reg = Registry::new();
        super::super::register_all(&mut reg);
        reg
    }

    #[test]
    fn tables_and_registry_agree() {
        let reg = registry();
        for id in 0..reg.len() {
            let (name, spec) = (reg.full_name(id), reg.spec(id));
            if NEWER_THAN_7_0.contains(&name) {
                continue;
            }
            let meta = reg
                .meta(id)
                .unwrap_or_else(|| panic!("{name} has no entry in dispatch/keyspecs/ (key specs, tips, docs)"));
            if spec.keys.0 > 0 || spec.flags & MOVABLEKEYS != 0 {
                assert!(!meta.keys.is_empty(), "{name} has keys but no key specs");
            }
        }
        for (name, _) in keyspecs::all() {
            assert!(reg.find(name.as_bytes()).is_some(), "table entry {name} names no registered command");
        }
    }

    fn max_key_spec(args: &[Arg]) -> Option<u8> {
        args.iter().filter_map(|a| a.key_spec.max(max_key_spec(a.args))).max()
    }

    #[test]
    fn argument_key_spec_indexes_exist() {
        for (name, meta) in keyspecs::all() {
            if let Some(i) = max_key_spec(meta.args) {
                assert!((i as usize) < meta.keys.len(), "{name}: argument names key spec {i}");
            }
        }
    }

    /// key_positions reads the (first, last, step) triple of commands
    /// without movable keys (Redis's legacy range): where their specs find
    /// keys at all, they must find the same ones. (A spec that runs out of
    /// arguments, as PFMERGE's sources in `pfmerge d`, makes GETKEYS refuse
    /// the call, while the range still names the destination.)
    #[test]
    fn fixed_key_specs_match_the_spec_triple() {
        let reg = registry();
        for id in 0..reg.len() {
            let (spec, Some(meta)) = (reg.spec(id), reg.meta(id)) else { continue };
            if spec.flags & MOVABLEKEYS != 0 || meta.keys.is_empty() {
                continue;
            }
            for ks in meta.keys {
                assert!(matches!((ks.begin, ks.find), (Begin::Index(_), Find::Range(..))), "{}", reg.full_name(id));
            }
            let base = spec.arity.unsigned_abs() as usize;
            for argc in base..base + if spec.arity < 0 { 6 } else { 1 } {
                let from_specs: Vec<usize> =
                    keys_with_flags(spec, Some(meta), argc, |_| b"x").into_iter().map(|(p, _)| p).collect();
                if !from_specs.is_empty() {
                    assert_eq!(key_positions(spec, argc, |_| b"x"), from_specs, "{} argc {argc}", reg.full_name(id));
                }
            }
        }
    }
}
