//! Running a command for a script: the script rules (no `noscript`
//! commands, no writes from read-only scripts, Redis's texts for unknown
//! commands and wrong arity), then `dispatch::call` with the caller's
//! client, the script's database and protocol, never blocking. Also
//! `redis.acl_check_cmd`.
use std::rc::Rc;

use mlua::{Lua, MultiValue, Value};

use super::{Scripting, Shared};
use crate::dispatch::{self, flags, permissions, registry::Lookup, Argv, Ctx, Reply};
use crate::server::acl::log::Context;
use crate::server::acl::Denied;
use crate::server::Server;

/// `redis.acl_check_cmd(cmd, ...)`: whether the script's caller may run
/// the command with these arguments (an error if there is no such command).
pub fn make_acl_check(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<mlua::Function> {
    let shared = shared.clone();
    lua.create_function(move |lua, args: MultiValue| {
        // SAFETY: called from a script, see `Shared::server`.
        let Some(srv) = (unsafe { shared.server() }) else { return Ok((Value::Nil, Value::Nil)) };
        let Some(reg) = srv.scripting.get::<Scripting>().running.as_ref().map(|r| r.reg) else {
            return Ok((Value::Nil, Value::Nil));
        };
        let verdict = match build_args(&args) {
            Ok(a) if !a.is_empty() => match reg.lookup(&Argv::new(&[], &a)) {
                Lookup::Found(id, _) => {
                    let argv = Argv::new(&[], &a);
                    let cid = srv.scripting.get::<Scripting>().running.as_ref().map_or(0, |r| r.cid);
                    let user = srv.clients.get(cid).map_or(0, |c| c.user);
                    let acl = &srv.acl;
                    Some(
                        permissions::check(&acl.catalog, reg, acl.user(user), id, argv.len(), &|i| argv.get(i)).is_ok(),
                    )
                }
                Lookup::Rejected(..) => None,
            },
            _ => None,
        };
        if let Some(allowed) = verdict {
            Ok((Value::Boolean(allowed), Value::Nil))
        } else {
            let e = lua.create_string("ERR Invalid command passed to redis.acl_check_cmd()")?;
            Ok((Value::Nil, Value::String(e)))
        }
    })
}

/// The command name and arguments given to `redis.acl_check_cmd`.
fn build_args(args: &MultiValue) -> Result<resp::Args, ()> {
    let mut out = resp::Args::default();
    out.reset_owned();
    for v in args.iter() {
        match v {
            Value::String(s) => out.push(&s.as_bytes()),
            Value::Number(n) => out.push(n.to_string().as_bytes()),
            Value::Integer(n) => out.push(n.to_string().as_bytes()),
            _ => return Err(()),
        }
    }
    Ok(out)
}

/// Run one command line for the script, its reply into the shared reply
/// buffer; Err(error text) when the script rules refuse it. Either way an
/// error is counted in INFO's error statistics here, when it happens, as
/// Redis counts it (the script's own error reply, if it returns or raises
/// this one, is then not counted again).
pub fn execute(shared: &Shared, argv_owned: &resp::Args) -> Result<(), Vec<u8>> {
    // SAFETY: called from a script, see `Shared::server`.
    let Some(srv) = (unsafe { shared.server() }) else {
        return Err(b"ERR redis.call() can only be used while a script runs".to_vec());
    };
    let argv = Argv::new(&[], argv_owned);
    let reg = srv.scripting.get::<Scripting>().running.as_ref().expect("a script is running").reg;
    let refused = |srv: &mut Server, msg: Vec<u8>| {
        srv.stats.error_replies += 1;
        srv.stats.count_error(&msg);
        Err(msg)
    };
    let (id, spec) = match reg.lookup(&argv) {
        Lookup::Found(id, spec) => (id, spec),
        Lookup::Rejected(msg, _) if msg.starts_with(b"ERR wrong number of arguments") => {
            return refused(srv, b"ERR Wrong number of args calling Redis command from script".to_vec())
        }
        Lookup::Rejected(..) => return refused(srv, b"ERR Unknown Redis command called from script".to_vec()),
    };
    // Redis's scriptVerifyAllowStale, before the ACL check.
    if srv.denials.stale_replica && spec.flags & flags::STALE == 0 {
        srv.stats.commands[id].rejected += 1;
        return refused(srv, b"ERR Can not execute the command on a stale replica".to_vec());
    }
    if let Some(why) = refused_by_acl(srv, spec, id, &argv) {
        srv.stats.commands[id].rejected += 1;
        let reason = match why {
            Denied::Command => "can't run this command or subcommand",
            Denied::Key => "can't access at least one of the keys mentioned in the command arguments",
            Denied::Channel => "can't publish to the channel mentioned in the command",
            Denied::Auth => "lacking the permissions for the command",
        };
        return refused(srv, format!("ERR The user executing the script {reason}").into_bytes());
    }
    if let Err(msg) = allowed(srv, spec) {
        srv.stats.commands[id].rejected += 1;
        return refused(srv, msg.into_bytes());
    }
    let mut out = shared.reply_buf.borrow_mut();
    out.clear();
    run_command(srv, &mut out, id, spec, &argv);
    Ok(())
}

/// ACL: the script's caller must be allowed the command, its keys and
/// channels; a refusal is logged with context `lua`. `noscript` commands
/// are refused by the script rules first.
fn refused_by_acl(
    srv: &mut Server,
    spec: &dispatch::CommandSpec,
    id: dispatch::registry::CommandId,
    argv: &Argv,
) -> Option<Denied> {
    if spec.flags & flags::NOSCRIPT != 0 {
        return None;
    }
    let run = srv.scripting.get::<Scripting>().running.as_ref().expect("a script is running");
    let (cid, db, now, resp3, reg) = (run.cid, run.db, run.now, run.resp == 3, run.reg);
    if srv.clients.get(cid).is_none_or(|c| srv.acl.user(c.user).unrestricted) {
        return None;
    }
    let mut scratch = Vec::new();
    let mut ctx =
        Ctx { srv, reg, r: Reply::new(&mut scratch, resp3), cid, db, now, may_block: false, from_script: true };
    dispatch::guards::acl_refusal(&mut ctx, id, argv.len(), &|i| argv.get(i), Some(Context::Lua))
}

/// Redis's rules for a command a script calls: no `noscript` commands; no
/// writes (nor may-replicate commands) from read-only runs; and until the
/// script's first write, none on a read-only replica (unless our primary
/// runs the script) nor while the server refuses writes, since after one
/// the script can no longer fail cleanly. Marks the run as having written.
fn allowed(srv: &mut Server, spec: &dispatch::CommandSpec) -> Result<(), String> {
    if spec.flags & flags::NOSCRIPT != 0 && !srv.scripts_deny_off {
        return Err("ERR This Redis command is not allowed from script".into());
    }
    let run = srv.scripting.get::<Scripting>().running.as_ref().expect("a script is running");
    if run.readonly && spec.flags & (flags::WRITE | flags::MAY_REPLICATE) != 0 {
        return Err("ERR Write commands are not allowed from read-only scripts.".into());
    }
    if spec.flags & flags::WRITE == 0 {
        return Ok(());
    }
    if !run.wrote {
        if srv.denials.readonly_replica && !super::obeyed(srv, run.cid) {
            return Err("READONLY You can't write against a read only replica.".into());
        }
        super::writes_refused(srv)?;
        // Over maxmemory when the script started: its first denyoom call
        // fails (after a write it could no longer fail cleanly).
        if spec.flags & flags::DENYOOM != 0 && srv.evict.pre_command_oom && srv.config.maxmemory > 0 {
            return Err(dispatch::guards::OOM.into());
        }
    }
    if let Some(run) = srv.scripting.get_mut::<Scripting>().running.as_mut() {
        run.wrote = true;
    }
    Ok(())
}

/// `dispatch::call` as the script's client: the caller's slot, the
/// script's database and protocol, never blocking.
fn run_command(
    srv: &mut Server,
    out: &mut Vec<u8>,
    id: dispatch::registry::CommandId,
    spec: &'static dispatch::CommandSpec,
    argv: &Argv,
) {
    let run = srv.scripting.get::<Scripting>().running.as_ref().expect("a script is running");
    let (cid, db, now, resp3, reg) = (run.cid, run.db, run.now, run.resp == 3, run.reg);
    let mut ctx = Ctx { srv, reg, r: Reply::new(out, resp3), cid, db, now, may_block: false, from_script: true };
    dispatch::call(&mut ctx, id, spec, argv);
    dispatch::count_errors(ctx.srv, &ctx.r);
    let db = ctx.db;
    if let Some(run) = srv.scripting.get_mut::<Scripting>().running.as_mut() {
        run.db = db;
    }
}
