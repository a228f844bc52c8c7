//! Replication commands: REPLICAOF/SLAVEOF, the replica's PSYNC/SYNC and
//! REPLCONF, ROLE, WAIT. The work is `replication`'s; these parse and reply.
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Registry};
use crate::engine::numeric::parse_i64;
use crate::replication::{self, Role, WaitOutcome};
use crate::server::blocking::TimeoutReply;
use crate::spec;

#[rustfmt::skip]
static SPECS: [CommandSpec; 8] = [
    spec!("wait", 3, NOSCRIPT, (0, 0, 0), wait, "generic", "3.0.0", "Wait for the synchronous replication of all the write commands sent in the context of the current connection", ["slow", "connection"]),
    spec!("replicaof", 3, ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING, (0, 0, 0), replicaof, "server", "5.0.0", "Make the server a replica of another instance, or promote it as master.", ["admin", "slow", "dangerous"]),
    spec!("slaveof", 3, ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING, (0, 0, 0), replicaof, "server", "1.0.0", "Make the server a replica of another instance, or promote it as master.", ["admin", "slow", "dangerous"]),
    spec!("psync", -3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI, (0, 0, 0), psync, "server", "2.8.0", "Internal command used for replication", ["admin", "slow", "dangerous"]),
    spec!("sync", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI, (0, 0, 0), psync, "server", "1.0.0", "Internal command used for replication", ["admin", "slow", "dangerous"]),
    spec!("replconf", -1, ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY, (0, 0, 0), replconf, "server", "3.0.0", "An internal command for configuring the replication stream", ["admin", "slow", "dangerous"]),
    spec!("failover", -1, ADMIN | NOSCRIPT | STALE, (0, 0, 0), failover, "server", "6.2.0", "Start a coordinated failover between this server and one of its replicas.", ["admin", "slow", "dangerous"]),
    spec!("role", 1, NOSCRIPT | LOADING | STALE | FAST | SENTINEL, (0, 0, 0), role, "server", "2.8.12", "Return the role of the instance in the context of replication", ["admin", "fast", "dangerous"]),
];

pub fn register(r: &mut Registry) {
    r.add(&SPECS);
}

/// WAIT numreplicas timeout(ms).
fn wait(ctx: &mut Ctx, argv: &Argv) {
    let Some(wanted) = parse_i64(argv.get(1)) else { return ctx.not_integer() };
    let deadline = match parse_i64(argv.get(2)) {
        Some(ms) if ms < 0 => return ctx.r.error("ERR timeout is negative"),
        Some(0) => None,
        Some(ms) => Some(ctx.now.saturating_add(ms)),
        None => return ctx.r.error("ERR timeout is not an integer or out of range"),
    };
    if replication::is_replica(ctx.srv) {
        return ctx.r.error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.");
    }
    // Inside MULTI (and scripts) WAIT never blocks: it reports what it has.
    let may_block = ctx.may_block;
    match replication::wait(ctx.srv, ctx.cid, wanted, deadline, may_block) {
        WaitOutcome::Now(n) => ctx.r.int(n),
        // Replication releases it (a re-run finds its result).
        WaitOutcome::Blocked => {
            ctx.block_on(&[], None, TimeoutReply::Zero, argv);
        }
    }
}

/// REPLICAOF host port | NO ONE.
fn replicaof(ctx: &mut Ctx, argv: &Argv) {
    let target = if argv.is(1, "no") && argv.is(2, "one") {
        None
    } else {
        match parse_i64(argv.get(2)).filter(|p| (0..=65535).contains(p)) {
            Some(port) => Some((String::from_utf8_lossy(argv.get(1)).into_owned(), port as u16)),
            None => return ctx.r.error("ERR Invalid master port"),
        }
    };
    if ctx.client().tx.is_some()
        || ctx.srv.clients.get(ctx.cid).is_some_and(|c| c.role != crate::server::ClientRole::Normal)
    {
        return ctx.r.error("ERR Command is not valid when client is a replica.");
    }
    if replication::failover_active(ctx.srv) {
        return ctx.r.error("ERR REPLICAOF not allowed while failing over.");
    }
    let promoted = target.is_none() && replication::is_replica(ctx.srv);
    let reply = replication::replicaof(ctx.srv, target, ctx.now);
    if promoted {
        let who = crate::commands::client::info_line(ctx.srv, ctx.cid, argv.mem());
        crate::log_at!(Notice, "MASTER MODE enabled (user request from '{who}')");
    }
    ctx.r.raw(reply.as_bytes());
}

/// FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | FAILOVER ABORT.
fn failover(ctx: &mut Ctx, argv: &Argv) {
    if argv.len() == 2 && argv.is(1, "abort") {
        return match replication::failover_abort(ctx.srv) {
            Ok(()) => ctx.r.ok(),
            Err(e) => ctx.r.error(&e),
        };
    }
    let mut req = replication::FailoverRequest { target: None, timeout_ms: None, force: false };
    let mut j = 1;
    while j < argv.len() {
        if argv.is(j, "timeout") && j + 1 < argv.len() && req.timeout_ms.is_none() {
            match parse_i64(argv.get(j + 1)) {
                Some(ms) if ms <= 0 => return ctx.r.error("ERR FAILOVER timeout must be greater than 0"),
                Some(ms) => req.timeout_ms = Some(ms),
                None => return ctx.not_integer(),
            }
            j += 2;
        } else if argv.is(j, "to") && j + 2 < argv.len() && req.target.is_none() {
            let Some(port) = parse_i64(argv.get(j + 2)) else { return ctx.not_integer() };
            // Redis keeps the port as a long; no replica listens outside u16.
            let port = u16::try_from(port).unwrap_or(0);
            req.target = Some((String::from_utf8_lossy(argv.get(j + 1)).into_owned(), port));
            j += 3;
        } else if argv.is(j, "force") && !req.force {
            req.force = true;
            j += 1;
        } else {
            return ctx.r.error("ERR syntax error");
        }
    }
    match replication::failover(ctx.srv, req, ctx.now) {
        Ok(()) => ctx.r.ok(),
        Err(e) => ctx.r.error(&e),
    }
}

/// PSYNC replid offset [FAILOVER], or SYNC.
fn psync(ctx: &mut Ctx, argv: &Argv) {
    let args = (argv.len() >= 3).then(|| (argv.get(1), argv.get(2)));
    let is_replica_conn = ctx.srv.clients.get(ctx.cid).is_some_and(|c| c.role == crate::server::ClientRole::Replica);
    if argv.len() > 3 && argv.is(3, "failover") && !is_replica_conn {
        let who = crate::commands::client::info_line(ctx.srv, ctx.cid, argv.mem());
        if let Err(e) = replication::psync_failover(ctx.srv, argv.get(1), &who) {
            return ctx.r.error(&e);
        }
    }
    match replication::psync(ctx.srv, ctx.cid, args, ctx.now) {
        Ok(reply) => ctx.r.raw(&reply),
        Err(e) => ctx.r.error(&e),
    }
}

/// REPLCONF option value ...
fn replconf(ctx: &mut Ctx, argv: &Argv) {
    let args: Vec<&[u8]> = argv.iter_from(1).collect();
    match replication::replconf(ctx.srv, ctx.cid, &args, ctx.now) {
        Some(Ok(())) => ctx.r.ok(),
        Some(Err(e)) => ctx.r.error(&e),
        None => {}
    }
}

/// ROLE.
fn role(ctx: &mut Ctx, _argv: &Argv) {
    match replication::role(ctx.srv) {
        Role::Master { offset, replicas } => {
            ctx.r.array(3);
            ctx.r.bulk(b"master");
            ctx.r.int(offset);
            ctx.r.array(replicas.len());
            for (ip, port, off) in replicas {
                ctx.r.array(3);
                ctx.r.bulk(ip.as_bytes());
                ctx.r.bulk(port.to_string().as_bytes());
                ctx.r.bulk(off.to_string().as_bytes());
            }
        }
        Role::Replica { host, port, state, offset } => {
            ctx.r.array(5);
            ctx.r.bulk(b"slave");
            ctx.r.bulk(host.as_bytes());
            ctx.r.int(port as i64);
            ctx.r.bulk(state.as_bytes());
            ctx.r.int(offset);
        }
    }
}
