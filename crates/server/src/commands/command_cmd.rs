//! COMMAND and its subcommands, all generated from the registry. Key
//! positions are reported as (first, last, step); key specs are replied as
//! an empty list, and command tips are not modeled (empty).
use crate::dispatch::flags::{self, NAMES};
use crate::dispatch::registry::CommandId;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::glob::glob_match;

/// `COMMAND` alone: every top-level command's info.
pub fn all(ctx: &mut Ctx, _argv: &Argv) {
    let reg = &ctx.reg;
    let top: Vec<CommandId> = reg.top_level().map(|(id, _)| id).collect();
    ctx.r.array(top.len());
    for id in top {
        write_info(&mut ctx.r, ctx.reg.full_name(id), ctx.reg.spec(id));
    }
}

pub fn count(ctx: &mut Ctx, _argv: &Argv) {
    let n = ctx.reg.top_level().count();
    ctx.r.int(n as i64);
}

/// One command's COMMAND INFO entry (Redis 7.0's ten fields).
fn write_info(r: &mut Reply, full_name: &str, spec: &CommandSpec) {
    r.array(10);
    r.bulk(full_name.as_bytes());
    r.int(spec.arity as i64);
    let flags: Vec<&str> = NAMES.iter().filter(|(bit, _)| spec.flags & bit != 0).map(|(_, n)| *n).collect();
    r.set(flags.len());
    for f in flags {
        r.simple(f.as_bytes());
    }
    r.int(spec.keys.0 as i64);
    r.int(spec.keys.1 as i64);
    r.int(spec.keys.2 as i64);
    r.set(spec.acl.len());
    for cat in spec.acl {
        r.simple(format!("@{cat}").as_bytes());
    }
    r.set(0); // tips
    r.set(0); // key specs
    if spec.subcommands.is_empty() {
        r.set(0);
    } else {
        r.array(spec.subcommands.len());
        for sub in spec.subcommands {
            write_info(r, &format!("{full_name}|{}", sub.name), sub);
        }
    }
}

pub fn info(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() == 2 {
        return all(ctx, argv);
    }
    ctx.r.array(argv.len() - 2);
    for name in argv.iter_from(2) {
        match ctx.reg.find(name) {
            Some(id) => write_info(&mut ctx.r, ctx.reg.full_name(id), ctx.reg.spec(id)),
            None => ctx.r.null(),
        }
    }
}

/// COMMAND DOCS entry: summary, since, group and nested subcommands.
fn write_docs(r: &mut Reply, full_name: &str, spec: &CommandSpec) {
    let has_subs = !spec.subcommands.is_empty();
    r.map(3 + has_subs as usize);
    for (k, v) in [("summary", spec.summary), ("since", spec.since), ("group", spec.group)] {
        r.bulk(k.as_bytes());
        r.bulk(v.as_bytes());
    }
    if has_subs {
        r.bulk(b"subcommands");
        r.map(spec.subcommands.len());
        for sub in spec.subcommands {
            let name = format!("{full_name}|{}", sub.name);
            r.bulk(name.as_bytes());
            write_docs(r, &name, sub);
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
        let name = ctx.reg.full_name(id);
        ctx.r.bulk(name.as_bytes());
        write_docs(&mut ctx.r, name, ctx.reg.spec(id));
    }
}

/// A COMMAND LIST filter over (full name, spec).
type NameFilter = dyn Fn(&str, &CommandSpec) -> bool;

pub fn list(ctx: &mut Ctx, argv: &Argv) {
    let keep: Box<NameFilter> = match argv.len() {
        2 => Box::new(|_, _| true),
        5 if argv.is(2, "filterby") => {
            let value = String::from_utf8_lossy(argv.get(4)).into_owned();
            if argv.is(3, "module") {
                Box::new(|_, _| false)
            } else if argv.is(3, "aclcat") {
                Box::new(move |_, s| s.acl.iter().any(|c| c.eq_ignore_ascii_case(&value)))
            } else if argv.is(3, "pattern") {
                Box::new(move |n, _| glob_match(value.as_bytes(), n.as_bytes(), true))
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

pub fn getkeys(ctx: &mut Ctx, argv: &Argv) {
    let reg = &ctx.reg;
    let Some(mut id) = reg.find(argv.get(2)) else { return ctx.r.error("ERR Invalid command specified") };
    if !reg.spec(id).subcommands.is_empty() && argv.len() > 3 {
        let mut full = format!("{}|", reg.full_name(id)).into_bytes();
        full.extend_from_slice(argv.get(3));
        match reg.find(&full) {
            Some(sub) => id = sub,
            None => return ctx.r.error("ERR Invalid command specified"),
        }
    }
    let spec = reg.spec(id);
    let argc = argv.len() - 2;
    let movable = spec.flags & flags::MOVABLEKEYS != 0;
    if spec.keys.0 <= 0 && !movable {
        return ctx.r.error("ERR The command has no key arguments");
    }
    if !arity_ok(spec.arity, argc) {
        return ctx.r.error("ERR Invalid number of arguments specified for command");
    }
    let positions = crate::dispatch::keys::key_positions(spec, argc, |i| argv.get(i + 2));
    if positions.is_empty() && spec.flags & flags::NO_MANDATORY_KEYS == 0 {
        return ctx.r.error("ERR Invalid arguments specified for command");
    }
    ctx.r.array(positions.len());
    for p in positions {
        ctx.r.bulk(argv.get(p + 2));
    }
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
        ],
    );
}
