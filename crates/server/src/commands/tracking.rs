//! CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: the commands of
//! client-side caching. The state and the invalidations are
//! `server::tracking`'s; these are registered as CLIENT subcommands.
use crate::dispatch::{Argv, Ctx};
use crate::engine::numeric::parse_i64;
use crate::server::tracking::TrackingClient;

/// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]... [BCAST] [OPTIN]
/// [OPTOUT] [NOLOOP], with Redis's checks in Redis's order.
pub fn tracking(ctx: &mut Ctx, argv: &Argv) {
    let Some(opts) = parse_options(ctx, argv) else { return };
    if argv.is(2, "off") {
        ctx.srv.tracking_off(ctx.cid);
        return ctx.r.ok();
    }
    if !argv.is(2, "on") {
        return ctx.syntax_error();
    }
    if let Err(msg) = check_switch(ctx, &opts) {
        return ctx.r.error(msg);
    }
    if opts.bcast {
        if let Some(msg) = prefix_collision(&opts.prefixes, ctx.srv.tracking.client(ctx.cid)) {
            return ctx.r.error(&msg);
        }
    }
    // Re-enabling keeps the prefixes already registered, as Redis does.
    let mut opts = opts;
    if let Some(old) = ctx.srv.tracking.client(ctx.cid).filter(|o| o.bcast && opts.bcast) {
        opts.prefixes.extend(old.prefixes.iter().cloned());
    }
    // One copy of each prefix, as in Redis's prefix tree.
    opts.prefixes.sort();
    opts.prefixes.dedup();
    ctx.srv.tracking_on(ctx.cid, opts);
    ctx.r.ok();
}

/// The options after ON|OFF; None after an error reply.
fn parse_options(ctx: &mut Ctx, argv: &Argv) -> Option<TrackingClient> {
    let mut o = TrackingClient::default();
    let mut i = 3;
    while i < argv.len() {
        let more = i + 1 < argv.len();
        if argv.is(i, "redirect") && more {
            i += 1;
            if o.redirect != 0 {
                ctx.r.error("ERR A client can only redirect to a single other client");
                return None;
            }
            let Some(id) = parse_i64(argv.get(i)) else {
                ctx.not_integer();
                return None;
            };
            let Some(slot) = ctx.srv.clients.iter().find(|(_, c)| c.id as i64 == id).map(|(slot, _)| slot) else {
                ctx.r.error("ERR The client ID you want redirect to does not exist");
                return None;
            };
            o.redirect = id as u64;
            o.redirect_slot = slot;
        } else if argv.is(i, "bcast") {
            o.bcast = true;
        } else if argv.is(i, "optin") {
            o.optin = true;
        } else if argv.is(i, "optout") {
            o.optout = true;
        } else if argv.is(i, "noloop") {
            o.noloop = true;
        } else if argv.is(i, "prefix") && more {
            i += 1;
            o.prefixes.push(argv.get(i).to_vec());
        } else {
            ctx.syntax_error();
            return None;
        }
        i += 1;
    }
    Some(o)
}

/// The mode rules checked before turning tracking on.
fn check_switch(ctx: &Ctx, o: &TrackingClient) -> Result<(), &'static str> {
    if !o.bcast && !o.prefixes.is_empty() {
        return Err("ERR PREFIX option requires BCAST mode to be enabled");
    }
    let old = ctx.srv.tracking.client(ctx.cid);
    if old.is_some_and(|t| t.bcast != o.bcast) {
        return Err("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then \
                    re-enabling it with a different mode.");
    }
    if o.bcast && (o.optin || o.optout) {
        return Err("ERR OPTIN and OPTOUT are not compatible with BCAST");
    }
    if o.optin && o.optout {
        return Err("ERR You can't specify both OPTIN mode and OPTOUT mode");
    }
    if old.is_some_and(|t| (o.optin && t.optout) || (o.optout && t.optin)) {
        return Err("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then \
                    re-enabling it with a different mode.");
    }
    Ok(())
}

/// Redis refuses BCAST prefixes of one client that overlap (one starts
/// another), among the new ones and against those already registered.
fn prefix_collision(new: &[Vec<u8>], old: Option<&TrackingClient>) -> Option<String> {
    let show = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    let existing: &[Vec<u8>] = old.map_or(&[], |o| &o.prefixes);
    for (i, p) in new.iter().enumerate() {
        for q in existing.iter().chain(&new[i + 1..]) {
            if p != q && (p.starts_with(q) || q.starts_with(p)) {
                return Some(format!(
                    "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not \
                     overlap.",
                    show(p),
                    show(q)
                ));
            }
        }
    }
    None
}

/// CLIENT CACHING YES|NO: whether the next command's reads are tracked.
pub fn caching(ctx: &mut Ctx, argv: &Argv) {
    let Some(t) = ctx.srv.tracking.client_mut(ctx.cid) else {
        return ctx.r.error(
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode \
             enabled",
        );
    };
    if argv.is(2, "yes") {
        if !t.optin {
            return ctx.r.error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
        }
    } else if argv.is(2, "no") {
        if !t.optout {
            return ctx.r.error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
        }
    } else {
        return ctx.syntax_error();
    }
    t.caching = true;
    ctx.r.ok();
}

/// CLIENT GETREDIR: the redirect target, 0 for none, -1 when not tracking.
pub fn getredir(ctx: &mut Ctx, _argv: &Argv) {
    let v = ctx.srv.tracking.client(ctx.cid).map_or(-1, |t| t.redirect as i64);
    ctx.r.int(v);
}

/// CLIENT TRACKINGINFO: flags, redirect and prefixes.
pub fn trackinginfo(ctx: &mut Ctx, _argv: &Argv) {
    let t = ctx.srv.tracking.client(ctx.cid).cloned();
    let mut flags = vec![if t.is_some() { "on" } else { "off" }];
    if let Some(t) = &t {
        let named = [
            (t.bcast, "bcast"),
            (t.optin, "optin"),
            (t.optin && t.caching, "caching-yes"),
            (t.optout, "optout"),
            (t.optout && t.caching, "caching-no"),
            (t.noloop, "noloop"),
            (t.broken_redirect, "broken_redirect"),
        ];
        flags.extend(named.iter().filter(|(on, _)| *on).map(|(_, n)| *n));
    }
    ctx.r.map(3);
    ctx.r.bulk(b"flags");
    ctx.r.set(flags.len());
    for f in flags {
        ctx.r.bulk(f.as_bytes());
    }
    ctx.r.bulk(b"redirect");
    ctx.r.int(t.as_ref().map_or(-1, |t| t.redirect as i64));
    ctx.r.bulk(b"prefixes");
    let prefixes = t.map(|t| t.prefixes).unwrap_or_default();
    ctx.r.array(prefixes.len());
    for p in &prefixes {
        ctx.r.bulk(p);
    }
}
