//! Transactions: MULTI EXEC DISCARD WATCH UNWATCH. Commands between MULTI
//! and EXEC are queued by the dispatcher (see `dispatch::run_command`); EXEC
//! runs them back to back, so no other client's command interleaves, with
//! blocking commands acting as their non-blocking forms. WATCH is optimistic
//! locking: any change to a watched key makes EXEC reply a null array.
use crate::dispatch::flags::*;
use crate::dispatch::{call, guards, Argv, CommandSpec, Ctx, Registry};
use crate::server::acl::log::Context;
use crate::server::acl::Denied;
use crate::server::Transaction;
use crate::spec;

const NONE: (i32, i32, i32) = (0, 0, 0);

#[rustfmt::skip]
static SPECS: [CommandSpec; 5] = [
    spec!("multi", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, NONE, multi, "transactions", "1.2.0", "Starts a transaction.", ["fast", "transaction"]),
    spec!("exec", 1, NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG, NONE, exec, "transactions", "1.2.0", "Executes all commands in a transaction.", ["slow", "transaction"]),
    spec!("discard", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, NONE, discard, "transactions", "2.0.0", "Discards a transaction.", ["fast", "transaction"]),
    spec!("watch", -2, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, (1, -1, 1), watch, "transactions", "2.2.0", "Monitors changes to keys to determine the execution of a transaction.", ["fast", "transaction"]),
    spec!("unwatch", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, NONE, unwatch, "transactions", "2.2.0", "Forgets about watched keys of a transaction.", ["fast", "transaction"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

fn multi(ctx: &mut Ctx, _argv: &Argv) {
    let c = ctx.client();
    if c.tx.is_some() {
        return ctx.r.error("ERR MULTI calls can not be nested");
    }
    c.tx = Some(Transaction::default());
    ctx.r.ok();
}

fn discard(ctx: &mut Ctx, _argv: &Argv) {
    if ctx.client().tx.take().is_none() {
        return ctx.r.error("ERR DISCARD without MULTI");
    }
    ctx.srv.unwatch_all(ctx.cid);
    ctx.r.ok();
}

fn exec(ctx: &mut Ctx, _argv: &Argv) {
    let Some(tx) = ctx.client().tx.take() else { return ctx.r.error("ERR EXEC without MULTI") };
    let touched = ctx.client().watch_touched || watched_key_expired(ctx);
    ctx.srv.unwatch_all(ctx.cid);
    if tx.aborted {
        return ctx.r.error("EXECABORT Transaction discarded because of previous errors.");
    }
    if touched {
        return ctx.r.null_array();
    }
    ctx.r.array(tx.queued.len());
    let may_block = std::mem::replace(&mut ctx.may_block, false);
    // The queued writes replay as one MULTI/EXEC in the AOF; EXEC itself
    // is not written.
    ctx.srv.changes.begin_atomic();
    for (id, args) in &tx.queued {
        let spec = ctx.reg.spec(*id);
        let argv = Argv::new(&[], args);
        if let Some(why) = refused_at_exec(ctx, *id, &argv) {
            ctx.r.error(&format!(
                "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. \
                 This command is no longer allowed for the following reason: {why}"
            ));
            continue;
        }
        call(ctx, *id, spec, &argv);
    }
    ctx.srv.changes.end_atomic();
    ctx.replicate_nothing();
    ctx.may_block = may_block;
}

/// ACL rules are checked again when EXEC runs the queue: they may have
/// changed since the commands were queued (Redis's reasons).
fn refused_at_exec(ctx: &mut Ctx, id: usize, argv: &Argv) -> Option<&'static str> {
    let user = ctx.client().user;
    if ctx.srv.acl.user(user).unrestricted {
        return None;
    }
    let why = guards::acl_refusal(ctx, id, argv.len(), &|i| argv.get(i), Some(Context::Multi))?;
    Some(match why {
        Denied::Command => "no permission to execute the command or subcommand",
        Denied::Key => "no permission to touch the specified keys",
        Denied::Channel => "no permission to access one of the channels used as arguments",
        Denied::Auth => "no permission",
    })
}

/// A watched key that is logically expired by now counts as changed, even if
/// nobody has touched it yet (Redis 7.0's `isWatchedKeyExpired`).
fn watched_key_expired(ctx: &mut Ctx) -> bool {
    let now = ctx.now;
    let watched = ctx.client().watched.clone();
    let stale = &ctx.client().watched_stale.clone();
    watched.iter().any(|w| !stale.contains(w) && ctx.srv.keyspace.dbs[w.0].is_stale(&w.1, now))
}

fn watch(ctx: &mut Ctx, argv: &Argv) {
    if ctx.client().tx.is_some() {
        return ctx.r.error("ERR WATCH inside MULTI is not allowed");
    }
    for key in argv.iter_from(1) {
        if ctx.srv.watches.watch(ctx.cid, ctx.db, key) {
            let (db, now) = (ctx.db, ctx.now);
            if ctx.srv.keyspace.dbs[db].is_stale(key, now) {
                ctx.client().watched_stale.push((db, key.to_vec()));
            }
            ctx.client().watched.push((db, key.to_vec()));
        }
    }
    ctx.srv.update_expired_tracking();
    ctx.r.ok();
}

fn unwatch(ctx: &mut Ctx, _argv: &Argv) {
    ctx.srv.unwatch_all(ctx.cid);
    ctx.r.ok();
}
