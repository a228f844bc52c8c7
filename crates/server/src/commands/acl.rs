//! ACL: users and permissions (SETUSER GETUSER DELUSER LIST USERS WHOAMI
//! CAT GENPASS LOG LOAD SAVE DRYRUN HELP), on the state in `server::acl`.
use crate::dispatch::flags::*;
use crate::dispatch::permissions;
use crate::dispatch::registry::Lookup;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::parse_i64;
use crate::server::acl::{self, channels_text, file, keys_text, show, Denied, Selector, CATEGORIES};
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);
const ADM: u32 = ADMIN | NOSCRIPT | LOADING | STALE | SENTINEL;
const PLAIN: u32 = NOSCRIPT | LOADING | STALE | SENTINEL;

#[rustfmt::skip]
static SUBS: [CommandSpec; 13] = [
    spec!("cat", -2, PLAIN, NONE, cat, "server", "6.0.0", "Lists the ACL categories, or the commands inside a category.", ["slow"]),
    spec!("deluser", -3, ADM, NONE, deluser, "server", "6.0.0", "Deletes ACL users, and terminates their connections.", ["admin", "slow", "dangerous"]),
    spec!("dryrun", -4, ADM, NONE, dryrun, "server", "7.0.0", "Simulates the execution of a command by a user, without executing the command.", ["admin", "slow", "dangerous"]),
    spec!("genpass", -2, PLAIN, NONE, genpass, "server", "6.0.0", "Generates a pseudorandom, secure password that can be used to identify ACL users.", ["slow"]),
    spec!("getuser", 3, ADM, NONE, getuser, "server", "6.0.0", "Lists the ACL rules of a user.", ["admin", "slow", "dangerous"]),
    spec!("help", 2, LOADING | STALE | SENTINEL, NONE, help, "server", "6.0.0", "Returns helpful text about the different subcommands.", ["slow"]),
    spec!("list", 2, ADM, NONE, list, "server", "6.0.0", "Dumps the effective rules in ACL file format.", ["admin", "slow", "dangerous"]),
    spec!("load", 2, ADM, NONE, load, "server", "6.0.0", "Reloads the rules from the configured ACL file.", ["admin", "slow", "dangerous"]),
    spec!("log", -2, ADM, NONE, log, "server", "6.0.0", "Lists recent security events generated due to commands rejected by ACL rules.", ["admin", "slow", "dangerous"]),
    spec!("save", 2, ADM, NONE, save, "server", "6.0.0", "Saves the effective ACL rules in the configured ACL file.", ["admin", "slow", "dangerous"]),
    spec!("setuser", -3, ADM, NONE, setuser, "server", "6.0.0", "Creates and modifies an ACL user and its rules.", ["admin", "slow", "dangerous"]),
    spec!("users", 2, ADM, NONE, users, "server", "6.0.0", "Lists all ACL users.", ["admin", "slow", "dangerous"]),
    spec!("whoami", 2, PLAIN, NONE, whoami, "server", "6.0.0", "Returns the authenticated username of the current connection.", ["slow"]),
];

static SPECS: [CommandSpec; 1] = [CommandSpec {
    name: "acl",
    arity: -2,
    flags: SENTINEL,
    keys: NONE,
    handler: help,
    group: "server",
    since: "6.0.0",
    summary: "A container for Access List Control commands.",
    acl: &["slow"],
    subcommands: &SUBS,
}];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn help(ctx: &mut Ctx, _argv: &Argv) {
    ctx.r.help(
        "ACL",
        &[
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
        ],
    );
}

/// `acl-pubsub-default`, read when rules create selectors.
fn sync_pubsub_default(ctx: &mut Ctx) {
    ctx.srv.acl.pubsub_all = ctx.srv.config.other.get("acl-pubsub-default").is_some_and(|v| v == "allchannels");
}

fn setuser(ctx: &mut Ctx, argv: &Argv) {
    let name = argv.get(2);
    if acl::has_spaces(name) {
        return ctx.r.error("ERR Usernames can't contain spaces or null characters");
    }
    sync_pubsub_default(ctx);
    let ops: Vec<&[u8]> = argv.iter_from(3).collect();
    match ctx.srv.acl.set_user(name, &ops) {
        Err(e) => ctx.r.error(&format!("ERR {e}")),
        Ok(old) => {
            if let (Some(old), Some(slot)) = (old, ctx.srv.acl.find(name)) {
                ctx.srv.acl_kill_revoked_subscribers(slot, &old, ctx.cid);
            }
            ctx.r.ok()
        }
    }
}

fn deluser(ctx: &mut Ctx, argv: &Argv) {
    if argv.iter_from(2).any(|n| n == b"default") {
        return ctx.r.error("ERR The 'default' user cannot be removed");
    }
    let mut deleted = 0;
    for name in argv.iter_from(2) {
        if let Some(slot) = ctx.srv.acl.delete(name) {
            ctx.srv.acl_kill_user_clients(slot, ctx.cid);
            deleted += 1;
        }
    }
    ctx.r.int(deleted);
}

fn write_selector(ctx: &mut Ctx, s: &Selector) {
    let commands = ctx.srv.acl.describe_commands(s);
    ctx.r.bulk(b"commands");
    ctx.r.bulk(commands.as_bytes());
    ctx.r.bulk(b"keys");
    ctx.r.bulk(keys_text(s).as_bytes());
    ctx.r.bulk(b"channels");
    ctx.r.bulk(channels_text(s).as_bytes());
}

fn getuser(ctx: &mut Ctx, argv: &Argv) {
    let Some(slot) = ctx.srv.acl.find(argv.get(2)) else { return ctx.r.null() };
    let u = ctx.srv.acl.user(slot).clone();
    ctx.r.map(6);
    ctx.r.bulk(b"flags");
    let mut flags = vec![if u.enabled { "on" } else { "off" }];
    if u.nopass {
        flags.push("nopass");
    }
    match u.sanitize {
        Some(false) => flags.push("skip-sanitize-payload"),
        Some(true) => flags.push("sanitize-payload"),
        None => {}
    }
    ctx.r.set(flags.len());
    for f in flags {
        ctx.r.bulk(f.as_bytes());
    }
    ctx.r.bulk(b"passwords");
    ctx.r.array(u.passwords.len());
    for p in &u.passwords {
        ctx.r.bulk(p.as_bytes());
    }
    write_selector(ctx, &u.selectors[0]);
    ctx.r.bulk(b"selectors");
    ctx.r.array(u.selectors.len() - 1);
    for s in &u.selectors[1..] {
        ctx.r.map(3);
        write_selector(ctx, s);
    }
}

fn list(ctx: &mut Ctx, _argv: &Argv) {
    let lines: Vec<String> = file::render(&ctx.srv.acl).lines().map(str::to_string).collect();
    ctx.r.array(lines.len());
    for l in lines {
        ctx.r.bulk(l.as_bytes());
    }
}

fn users(ctx: &mut Ctx, _argv: &Argv) {
    let names: Vec<Vec<u8>> = ctx.srv.acl.users().map(|u| u.name.clone()).collect();
    ctx.r.array(names.len());
    for n in names {
        ctx.r.bulk(&n);
    }
}

fn whoami(ctx: &mut Ctx, _argv: &Argv) {
    let slot = ctx.client().user;
    let name = ctx.srv.acl.user(slot).name.clone();
    ctx.r.bulk(&name);
}

fn aclfile(ctx: &mut Ctx) -> Option<String> {
    let f = ctx.srv.config.other.get("aclfile").cloned().unwrap_or_default();
    if f.is_empty() {
        ctx.r.error(
            "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the \
             ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) \
             in order to store users in the Redis configuration.",
        );
        return None;
    }
    Some(f)
}

fn load(ctx: &mut Ctx, _argv: &Argv) {
    let Some(path) = aclfile(ctx) else { return };
    sync_pubsub_default(ctx);
    match file::load(&ctx.srv.acl, &path) {
        Err(e) => ctx.r.error(&format!("ERR {e}")),
        Ok(users) => {
            ctx.srv.acl.replace_all(users);
            ctx.srv.acl_kill_non_default_clients(ctx.cid);
            ctx.r.ok();
        }
    }
}

fn save(ctx: &mut Ctx, _argv: &Argv) {
    let Some(path) = aclfile(ctx) else { return };
    match file::save(&ctx.srv.acl, &path) {
        Ok(()) => ctx.r.ok(),
        Err(e) => {
            crate::log_at!(Warning, "Saving the ACL file {path}: {e}");
            ctx.r.error(
                "ERR There was an error trying to save the ACLs. Please check the server logs for more information",
            )
        }
    }
}

fn cat(ctx: &mut Ctx, argv: &Argv) {
    match argv.len() {
        2 => {
            ctx.r.array(CATEGORIES.len());
            for c in CATEGORIES {
                ctx.r.bulk(c.as_bytes());
            }
        }
        3 => {
            let Some(bit) = acl::category_bit(argv.get(2)) else {
                let name = show(crate::dispatch::registry::clip(argv.get(2), 128));
                return ctx.r.error(&format!("ERR Unknown category '{name}'"));
            };
            let names: Vec<String> =
                ctx.srv.acl.catalog.cmds.iter().filter(|c| c.categories & bit != 0).map(|c| c.name.clone()).collect();
            ctx.r.array(names.len());
            for n in names {
                ctx.r.bulk(n.as_bytes());
            }
        }
        _ => subcommand_error(ctx, argv),
    }
}

fn subcommand_error(ctx: &mut Ctx, argv: &Argv) {
    let sub = show(argv.get(1)).to_ascii_uppercase();
    ctx.r.error(&format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try ACL HELP."));
}

fn genpass(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 3 {
        return subcommand_error(ctx, argv);
    }
    let bits = if argv.len() == 3 {
        match parse_i64(argv.get(2)) {
            Some(b) => b,
            None => return ctx.not_integer(),
        }
    } else {
        256
    };
    if !(1..=4096).contains(&bits) {
        return ctx.r.error(
            "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to \
             4096",
        );
    }
    let chars = (bits as usize).div_ceil(4);
    let mut raw = vec![0u8; chars.div_ceil(2)];
    random_bytes(&mut raw);
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    ctx.r.bulk(&hex.as_bytes()[..chars]);
}

/// Bytes from the kernel's generator (GENPASS wants unguessable output).
fn random_bytes(buf: &mut [u8]) {
    use std::io::Read;
    let got = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(buf));
    if got.is_err() {
        let mut x = crate::server::unix_ms() as u64 ^ 0x9E37_79B9_7F4A_7C15;
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
    }
}

fn log(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() > 3 {
        return subcommand_error(ctx, argv);
    }
    let mut count = 10i64;
    if argv.len() == 3 {
        if argv.is(2, "reset") {
            ctx.srv.acl.log.reset();
            return ctx.r.ok();
        }
        match parse_i64(argv.get(2)) {
            Some(n) => count = n.max(0),
            None => return ctx.not_integer(),
        }
    }
    let now = crate::server::unix_ms();
    let entries: Vec<_> = ctx.srv.acl.log.entries.iter().take(count as usize).cloned().collect();
    ctx.r.array(entries.len());
    for e in entries {
        let r = &mut ctx.r;
        r.map(7);
        r.bulk(b"count");
        r.int(e.count as i64);
        r.bulk(b"reason");
        r.bulk(e.reason.name().as_bytes());
        r.bulk(b"context");
        r.bulk(e.context.name().as_bytes());
        r.bulk(b"object");
        r.bulk(&e.object);
        r.bulk(b"username");
        r.bulk(&e.username);
        r.bulk(b"age-seconds");
        r.double((now - e.ctime) as f64 / 1000.0);
        r.bulk(b"client-info");
        r.bulk(e.client_info.as_bytes());
    }
}

fn dryrun(ctx: &mut Ctx, argv: &Argv) {
    let Some(slot) = ctx.srv.acl.find(argv.get(2)) else {
        return ctx.r.error(&format!("ERR User '{}' not found", show(argv.get(2))));
    };
    let args = resp::Args::from_parts(argv.iter_from(3));
    let inner = Argv::new(&[], &args);
    let id = match ctx.reg.lookup(&inner) {
        Lookup::Found(id, _) => id,
        Lookup::Rejected(msg, Some(_)) => return ctx.r.error_bytes(&msg),
        Lookup::Rejected(_, None) => {
            return ctx.r.error(&format!("ERR Command '{}' not found", show(argv.get(3))));
        }
    };
    let acl = &ctx.srv.acl;
    let verdict = permissions::check(&acl.catalog, ctx.reg, acl.user(slot), id, inner.len(), &|i| inner.get(i));
    match verdict {
        Ok(()) => ctx.r.ok(),
        Err((why, pos)) => {
            let text = match why {
                Denied::Key => format!("This user has no permissions to access the '{}' key", show(inner.get(pos))),
                Denied::Channel => {
                    format!("This user has no permissions to access the '{}' channel", show(inner.get(pos)))
                }
                _ => format!("This user has no permissions to run the '{}' command", ctx.reg.full_name(id)),
            };
            ctx.r.bulk(text.as_bytes());
        }
    }
}
