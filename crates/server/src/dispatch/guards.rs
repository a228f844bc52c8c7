//! Checks that run before every command, in order. Each is a small named
//! function; the first that objects rejects the command with its reply text.
use super::registry::CommandId;
use super::{flags, permissions, Argv, CommandSpec, Ctx};
use crate::server::acl::log::Context;
use crate::server::acl::Denied;
use crate::server::{BusyScript, Loading, Server};

/// Run the guards, in the order Redis's `processCommand` applies them; the
/// first `Err(reply text)` rejects the command. Called directly rather than
/// through a table of function pointers so each guard inlines to the one
/// branch it costs when its state is quiet (every command pays for them).
#[inline(always)]
pub fn check(ctx: &mut Ctx, id: CommandId, spec: &CommandSpec, argv: &Argv) -> Result<(), String> {
    let verdict = refuse_protected_command(ctx, spec, argv)
        .and_then(|()| require_auth(ctx, spec, argv))
        .and_then(|()| check_acl(ctx, id, argv))
        .and_then(|()| refuse_inside_multi(ctx, spec, argv))
        .and_then(|()| refuse_when_out_of_memory(ctx, spec, argv))
        .and_then(|()| refuse_writes_after_failed_save(ctx, spec, argv))
        .and_then(|()| refuse_writes_on_aof_error(ctx, spec, argv))
        .and_then(|()| refuse_writes_on_replica(ctx, spec, argv))
        .and_then(|()| refuse_in_subscribed_mode(ctx, spec, argv))
        // After LOADING, as Redis's processCommand: a script replayed
        // from the AOF that runs long makes clients wait for the load.
        .and_then(|()| reject_while_busy(ctx, spec, argv))
        .and_then(|()| refuse_keyspace_from_replica(ctx, spec, argv));
    match verdict {
        Err(msg) if spec.name == "exec" => Err(abort_exec(ctx, &msg)),
        v => v,
    }
}

/// A rejected EXEC does not leave the client half inside MULTI: Redis
/// discards the transaction (and its WATCHes) and names the reason, whether
/// or not MULTI was called, so a pipelined block never runs in part.
#[cold]
pub(super) fn abort_exec(ctx: &mut Ctx, reason: &str) -> String {
    if let Some(c) = ctx.srv.clients.get_mut(ctx.cid) {
        c.tx = None;
    }
    ctx.srv.unwatch_all(ctx.cid);
    format!("EXECABORT Transaction discarded because of: {reason}")
}

/// DEBUG and MODULE run only where `enable-debug-command` /
/// `enable-module-command` allow (`local`: loopback and Unix-socket
/// clients), checked before authentication as Redis's processCommand does.
#[inline]
fn refuse_protected_command(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    if spec.flags & flags::PROTECTED == 0 {
        return Ok(());
    }
    protected_denial(ctx, spec)
}

#[cold]
fn protected_denial(ctx: &mut Ctx, spec: &CommandSpec) -> Result<(), String> {
    let local = crate::config::is_local_addr(&ctx.client().addr);
    let (setting, option) = if spec.name == "debug" {
        (&ctx.srv.config.enable_debug_command, "enable-debug-command")
    } else {
        (&ctx.srv.config.enable_module_command, "enable-module-command")
    };
    if crate::config::allows(setting, local) {
        return Ok(());
    }
    Err(format!(
        "ERR {} command not allowed. If the {option} option is set to \"local\", you can run it from a local \
         connection, otherwise you need to set this option in the configuration file, and then restart the server.",
        spec.name.to_ascii_uppercase()
    ))
}

/// Unauthenticated clients may only run commands flagged `no_auth`
/// (while the default user has a password or is off).
#[inline]
fn require_auth(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    let authenticated = ctx.client().authenticated;
    if spec.flags & flags::NO_AUTH != 0 || !ctx.srv.acl.auth_required(authenticated) {
        return Ok(());
    }
    Err("NOAUTH Authentication required.".to_string())
}

/// ACL: a user with every command, key and channel (the default user)
/// costs this one test; a restricted user's usual command (its root
/// selector allows it, with at most one key at a fixed position) a byte
/// read and a pattern match; anything else is checked in full.
#[inline]
fn check_acl(ctx: &mut Ctx, id: CommandId, argv: &Argv) -> Result<(), String> {
    let slot = ctx.client().user;
    let user = ctx.srv.acl.user(slot);
    if user.unrestricted || permissions::quick_allow(user, id, argv) {
        return Ok(());
    }
    match acl_refusal(ctx, id, argv.len(), &|i| argv.get(i), None) {
        None => Ok(()),
        Some(why) => Err(permissions::refusal_text(ctx.reg, id, why)),
    }
}

/// The full ACL check of a call by the client's user; a refusal is logged
/// (ACL LOG, INFO) under `context` (by default top level, or multi inside
/// MULTI) and returned. Not inlined: restricted users only pay for it.
#[inline(never)]
pub fn acl_refusal<'a>(
    ctx: &mut Ctx,
    id: CommandId,
    argc: usize,
    arg: &dyn Fn(usize) -> &'a [u8],
    context: Option<Context>,
) -> Option<Denied> {
    let client = ctx.srv.clients.get(ctx.cid);
    let user = client.map_or(0, |c| c.user);
    let in_multi = client.is_some_and(|c| c.tx.is_some());
    let acl = &ctx.srv.acl;
    let (why, pos) = permissions::check(&acl.catalog, ctx.reg, acl.user(user), id, argc, arg).err()?;
    let context = context.unwrap_or(if in_multi { Context::Multi } else { Context::Toplevel });
    let object = match why {
        Denied::Key | Denied::Channel => arg(pos).to_vec(),
        _ => ctx.reg.full_name(id).as_bytes().to_vec(),
    };
    // The denied command is the client's own but for a script's call, whose
    // caller's arguments (EVAL's) are not at hand here.
    let argv_mem = if context == Context::Lua { 0 } else { (0..argc).map(|i| arg(i).len()).sum() };
    ctx.srv.acl_log(ctx.cid, why, (context, argv_mem), &object, None);
    Some(why)
}

/// Inside MULTI, refuse (and so flag the transaction for) the commands
/// flagged `no_multi`: they act on the whole server at once.
#[inline]
fn refuse_inside_multi(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    if spec.flags & flags::NO_MULTI != 0 && ctx.srv.clients.get(ctx.cid).is_some_and(|c| c.tx.is_some()) {
        return Err("ERR Command not allowed inside a transaction".to_string());
    }
    Ok(())
}

/// Redis's reply to a denyoom command while over `maxmemory`.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// With `maxmemory` set, evict first (one compare of the used memory when
/// under the limit); if memory can't be freed, refuse denyoom commands,
/// EXEC of a block holding one, scripts declared without `allow-oom`, and
/// inside MULTI every command but EXEC, DISCARD, QUIT and RESET (queueing
/// takes memory too), as Redis's processCommand does.
#[inline]
fn refuse_when_out_of_memory(ctx: &mut Ctx, spec: &CommandSpec, argv: &Argv) -> Result<(), String> {
    if ctx.srv.config.maxmemory == 0 {
        return Ok(());
    }
    check_memory(ctx, spec, argv)
}

#[inline(never)]
fn check_memory(ctx: &mut Ctx, spec: &CommandSpec, argv: &Argv) -> Result<(), String> {
    use crate::server::evict;
    // A command served while a script is busy must not evict under it.
    if ctx.srv.script_busy.is_some() {
        return Ok(());
    }
    let oom = evict::perform(ctx.srv) == evict::Outcome::Fail;
    ctx.srv.evict.pre_command_oom = oom;
    if !oom {
        return Ok(());
    }
    let srv = &*ctx.srv;
    let denies = |id: usize, args: &resp::Args| queued_flags(srv, ctx.reg.spec(id), args) & flags::DENYOOM != 0;
    let tx = srv.clients.get(ctx.cid).and_then(|c| c.tx.as_ref());
    let deny = command_flags(srv, spec, argv) & flags::DENYOOM != 0
        || (spec.name == "exec" && tx.is_some_and(|tx| tx.queued.iter().any(|(id, a)| denies(*id, a))))
        || (tx.is_some() && !matches!(spec.name, "exec" | "discard" | "quit" | "reset"));
    if deny {
        return Err(OOM.to_string());
    }
    Ok(())
}

/// The flags the guards judge a command by: a script command takes the
/// write, denyoom and stale flags its script declared (Redis's
/// `getCommandFlags`). Only the cold guards pay for the lookup.
fn command_flags(srv: &Server, spec: &CommandSpec, argv: &Argv) -> u32 {
    script_flags(srv, spec, (argv.len() > 1).then(|| argv.get(1)))
}

/// [`command_flags`] of a command queued in a transaction.
fn queued_flags(srv: &Server, spec: &CommandSpec, args: &resp::Args) -> u32 {
    script_flags(srv, spec, (args.len() > 1).then(|| args.get(&[], 1)))
}

fn script_flags(srv: &Server, spec: &CommandSpec, first: Option<&[u8]>) -> u32 {
    match (srv.script_cmd_flags, spec.name, first) {
        (Some(hook), "eval" | "evalsha" | "fcall" | "eval_ro" | "evalsha_ro" | "fcall_ro", Some(first)) => {
            hook(srv, spec.name, spec.flags, first)
        }
        _ => spec.flags,
    }
}

/// The AOF can't be written: refuse writes (and PING, as Redis does) with
/// MISCONF until a write succeeds again; reads keep working.
#[inline]
fn refuse_writes_on_aof_error(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    match &ctx.srv.denials.aof_error {
        Some(e) if spec.flags & flags::WRITE != 0 || spec.name == "ping" => {
            Err(format!("MISCONF Errors writing to the AOF file: {e}"))
        }
        _ => Ok(()),
    }
}

/// A read-only replica refuses its clients' writes (READONLY), and a
/// primary with fewer good replicas than `min-replicas-to-write` refuses
/// writes (NOREPLICAS); our primary's own commands always apply.
#[inline]
fn refuse_writes_on_replica(ctx: &mut Ctx, spec: &CommandSpec, argv: &Argv) -> Result<(), String> {
    let d = &ctx.srv.denials;
    if !(d.readonly_replica || d.too_few_replicas || d.stale_replica || d.loading != Loading::No) {
        return Ok(());
    }
    replica_write_verdict(ctx, spec, argv)?;
    refuse_while_loading(ctx, spec)
}

/// A replica loading its primary's snapshot answers LOADING, as Redis's
/// `processCommand`: to commands without the `loading` flag, or while
/// it keeps serving its old data, to `no_async_loading` ones only.
#[cold]
fn refuse_while_loading(ctx: &mut Ctx, spec: &CommandSpec) -> Result<(), String> {
    if ctx.client().id == crate::server::AOF_CLIENT_ID {
        return Ok(());
    }
    let denied = match ctx.srv.denials.loading {
        Loading::No => false,
        Loading::Blocking => spec.flags & flags::LOADING == 0,
        Loading::Async => spec.flags & flags::NO_ASYNC_LOADING != 0,
    };
    if denied {
        return Err(LOADING_ERROR.to_string());
    }
    Ok(())
}

/// Redis's `shared.loadingerr`.
pub const LOADING_ERROR: &str = "LOADING Redis is loading the dataset in memory";

#[cold]
fn replica_write_verdict(ctx: &mut Ctx, spec: &CommandSpec, argv: &Argv) -> Result<(), String> {
    let srv = &*ctx.srv;
    let Some(c) = srv.clients.get(ctx.cid) else { return Ok(()) };
    if c.role == crate::server::ClientRole::Master {
        return Ok(());
    }
    // EXEC is judged by what it would run, as Redis does.
    let queued = |bit: u32, want: bool| {
        spec.name == "exec"
            && c.tx.as_ref().is_some_and(|tx| {
                tx.queued.iter().any(|(id, a)| (queued_flags(srv, ctx.reg.spec(*id), a) & bit != 0) == want)
            })
    };
    let own = command_flags(srv, spec, argv);
    let d = &srv.denials;
    if (d.readonly_replica || d.too_few_replicas) && (own & flags::WRITE != 0 || queued(flags::WRITE, true)) {
        if d.readonly_replica {
            return Err("READONLY You can't write against a read only replica.".to_string());
        }
        return Err("NOREPLICAS Not enough good replicas to write.".to_string());
    }
    if d.stale_replica && (own & flags::STALE == 0 || queued(flags::STALE, false)) {
        return Err("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.".to_string());
    }
    Ok(())
}

/// While a script runs past `busy-reply-threshold`, only allow-busy commands
/// run (and SHUTDOWN only with NOSAVE); everything else gets -BUSY.
#[inline]
fn reject_while_busy(ctx: &mut Ctx, spec: &CommandSpec, argv: &Argv) -> Result<(), String> {
    let Some(kind) = ctx.srv.script_busy else {
        return Ok(());
    };
    let nosave = (1..argv.len()).any(|i| argv.is(i, "nosave"));
    if spec.flags & flags::ALLOW_BUSY != 0 && (spec.name != "shutdown" || nosave) {
        return Ok(());
    }
    let killer = if kind == BusyScript::Eval { "SCRIPT KILL" } else { "FUNCTION KILL" };
    Err(format!("BUSY Redis is busy running a script. You can only call {killer} or SHUTDOWN NOSAVE."))
}

/// Commands a RESP2 client may send while subscribed: its connection
/// carries messages, so only commands whose replies fit among them.
const SUBSCRIBED_MODE: &[&str] =
    &["ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe", "quit", "reset"];

#[inline]
fn refuse_in_subscribed_mode(ctx: &mut Ctx, spec: &CommandSpec, argv: &Argv) -> Result<(), String> {
    if !ctx.srv.pubsub.has_subscribers() {
        return Ok(());
    }
    let c = ctx.client();
    if !c.pubsub || c.resp != 2 || SUBSCRIBED_MODE.contains(&spec.name) {
        return Ok(());
    }
    // A subcommand's spec is named without its container.
    let first = String::from_utf8_lossy(argv.get(0)).to_ascii_lowercase();
    let name = if first == spec.name { first } else { format!("{first}|{}", spec.name) };
    Err(format!(
        "ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this \
         context"
    ))
}

/// A replica's link (or a MONITOR connection, which Redis flags as a
/// replica too) may not touch the keyspace: replicas are exempt from
/// CLIENT PAUSE, so this keeps the link from being a way around it.
#[inline]
fn refuse_keyspace_from_replica(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    let c = ctx.client();
    if c.role != crate::server::ClientRole::Replica && !c.monitor {
        return Ok(());
    }
    if spec.flags & (flags::WRITE | flags::READONLY | flags::MAY_REPLICATE) == 0 {
        return Ok(());
    }
    Err("ERR Replica can't interact with the keyspace".to_string())
}

/// Redis's reply when `stop-writes-on-bgsave-error` stops writes.
const MISCONF: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to \
                       disk. Commands that may modify the data set are disabled, because this instance is configured \
                       to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). \
                       Please check the Redis logs for details about the RDB error.";

/// After a failed background save (with save points configured), refuse
/// writes, EXEC of a block holding writes, and PING, as Redis 7.0 does;
/// reads keep working.
#[inline]
fn refuse_writes_after_failed_save(ctx: &mut Ctx, spec: &CommandSpec, _argv: &Argv) -> Result<(), String> {
    let srv = &*ctx.srv;
    if !srv.denials.bgsave_failed || !srv.config.stop_writes_on_bgsave_error || srv.config.save.is_empty() {
        return Ok(());
    }
    let queued_write = spec.name == "exec"
        && srv
            .clients
            .get(ctx.cid)
            .and_then(|c| c.tx.as_ref())
            .is_some_and(|tx| tx.queued.iter().any(|(id, _)| ctx.reg.spec(*id).flags & flags::WRITE != 0));
    if spec.flags & flags::WRITE != 0 || spec.name == "ping" || queued_write {
        return Err(MISCONF.to_string());
    }
    Ok(())
}
