//! SORT and SORT_RO: read a list, set or sorted set, order it (numerically,
//! ALPHA, or by weights named by a BY pattern), cut a LIMIT window, and
//! reply the elements or what GET patterns name for them, or STORE the
//! result as a list. The ordering rules live in `engine::sort`; this file
//! does the key lookups (counted as keyspace reads, expiring as they go).
//!
//! SORT ... STORE replays as itself: the order it writes depends only on
//! the data, because a set read without sorting (BY a constant) is sorted
//! ALPHA when storing or inside a script, as Redis does.
use crate::config::{NOTIFY_GENERIC, NOTIFY_LIST};
use crate::dispatch::flags::*;
use crate::dispatch::permissions;
use crate::dispatch::{Argv, CommandSpec, Ctx};
use crate::engine::list::{End, List};
use crate::engine::numeric::parse_i64;
use crate::engine::sort::{self, Item, Order, Pattern, Target};
use crate::engine::zset::{Limits, ZSet};
use crate::engine::{EngineError, Value};
use crate::scripting::Scripting;
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 2] = [
    spec!("sort", -2, WRITE | DENYOOM | MOVABLEKEYS, K1, sort_cmd, "generic", "1.0.0", "Sort the elements in a list, set or sorted set", ["write", "set", "sortedset", "list", "slow", "dangerous"]),
    spec!("sort_ro", -2, READONLY | MOVABLEKEYS, K1, sort_ro, "generic", "7.0.0", "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", ["read", "set", "sortedset", "list", "slow", "dangerous"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

fn sort_cmd(ctx: &mut Ctx, argv: &Argv) {
    run(ctx, argv, false);
}

fn sort_ro(ctx: &mut Ctx, argv: &Argv) {
    run(ctx, argv, true);
}

/// The parsed options; repeated ones take their last value.
struct Opts<'a> {
    desc: bool,
    alpha: bool,
    offset: i64,
    count: i64,
    store: Option<&'a [u8]>,
    by: Option<&'a [u8]>,
    /// A BY pattern without `*` was given (even if a later BY has one):
    /// the elements keep their stored order.
    dontsort: bool,
    gets: Vec<Pattern<'a>>,
}

/// Whether the user may read every key: BY and GET patterns name keys
/// that no key spec lists, so ACL allows them only then (as Redis).
fn full_key_access(ctx: &mut Ctx, argv: &Argv) -> bool {
    let user = ctx.client().user;
    let acl = &ctx.srv.acl;
    let u = acl.user(user);
    if u.unrestricted {
        return true;
    }
    let Some(id) = ctx.reg.find(argv.get(0)) else { return false };
    permissions::unrestricted_key_access(&acl.catalog, ctx.reg, u, id, argv.len(), &|i| argv.get(i), true)
}

/// Parse the options; on error the reply is written.
fn parse<'a>(ctx: &mut Ctx, argv: &Argv<'a>, readonly: bool) -> Option<Opts<'a>> {
    let mut o = Opts {
        desc: false,
        alpha: false,
        offset: 0,
        count: -1,
        store: None,
        by: None,
        dontsort: false,
        gets: Vec::new(),
    };
    let mut j = 2;
    while j < argv.len() {
        let left = argv.len() - j - 1;
        if argv.is(j, "asc") {
            o.desc = false;
        } else if argv.is(j, "desc") {
            o.desc = true;
        } else if argv.is(j, "alpha") {
            o.alpha = true;
        } else if argv.is(j, "limit") && left >= 2 {
            let (Some(off), Some(count)) = (parse_i64(argv.get(j + 1)), parse_i64(argv.get(j + 2))) else {
                ctx.not_integer();
                return None;
            };
            (o.offset, o.count) = (off, count);
            j += 2;
        } else if !readonly && argv.is(j, "store") && left >= 1 {
            o.store = Some(argv.get(j + 1));
            j += 1;
        } else if argv.is(j, "by") && left >= 1 {
            o.by = Some(argv.get(j + 1));
            o.dontsort |= !sort::has_star(argv.get(j + 1));
            if sort::has_star(argv.get(j + 1)) && !full_key_access(ctx, argv) {
                ctx.r.error("ERR BY option of SORT denied due to insufficient ACL permissions.");
                return None;
            }
            j += 1;
        } else if argv.is(j, "get") && left >= 1 {
            if !full_key_access(ctx, argv) {
                ctx.r.error("ERR GET option of SORT denied due to insufficient ACL permissions.");
                return None;
            }
            o.gets.push(Pattern::parse(argv.get(j + 1)));
            j += 1;
        } else {
            ctx.syntax_error();
            return None;
        }
        j += 1;
    }
    Some(o)
}

fn run(ctx: &mut Ctx, argv: &Argv, readonly: bool) {
    let Some(mut o) = parse(ctx, argv, readonly) else { return };
    let (mut items, windowed) = match load(ctx, argv.get(1), &mut o) {
        Ok(loaded) => loaded,
        Err(e) => return ctx.r.error(e.message()),
    };
    let (start, n) = if windowed { (0, items.len()) } else { sort::window(items.len(), o.offset, o.count) };
    if !o.dontsort {
        let numbers_ok = weigh(ctx, &mut items, &o);
        if !numbers_ok {
            return ctx.r.error("ERR One or more scores can't be converted into double");
        }
        let order = Order { alpha: o.alpha, by_pattern: o.by.is_some(), binary: o.store.is_some(), desc: o.desc };
        sort::sort(&mut items, order);
    }
    let out = &items[start..start + n];
    match o.store {
        None => reply(ctx, out, &o.gets),
        Some(dst) => store(ctx, dst, out, &o.gets),
    }
}

/// Read the elements of `key`. True with them when the LIMIT window was
/// already applied (stored order is kept: nothing left to sort).
fn load(ctx: &mut Ctx, key: &[u8], o: &mut Opts) -> Result<(Vec<Item>, bool), EngineError> {
    let in_script = ctx.srv.scripting.get::<Scripting>().running.is_some();
    let Ctx { srv, db, now, .. } = ctx;
    let found = srv.keyspace.dbs[*db].get(key, *now);
    match found {
        None => srv.stats.key_miss(*db, key),
        Some(_) => srv.stats.keyspace_hits += 1,
    }
    let Some(entry) = found else { return Ok((Vec::new(), false)) };
    let loaded = match &mut entry.value {
        Value::List(l) if o.dontsort => (list_window(l, o), true),
        Value::List(l) => (l.iter().map(|e| Item::new(e.to_vec())).collect(), false),
        Value::Set(s) => {
            // An unsorted set comes out in hash order, which a replica or
            // AOF replay need not share: sorted when it matters.
            if o.dontsort && (o.store.is_some() || in_script) {
                (o.dontsort, o.alpha, o.by) = (false, true, None);
            }
            (s.members().into_iter().map(Item::new).collect(), false)
        }
        Value::ZSet(z) => {
            to_skiplist(z);
            if o.dontsort {
                (zset_window(z, o), true)
            } else {
                (z.items().into_iter().map(|(_, m)| Item::new(m)).collect(), false)
            }
        }
        _ => return Err(EngineError::WrongType),
    };
    Ok(loaded)
}

/// The LIMIT window of a list in stored order (from the tail with DESC).
fn list_window(l: &List, o: &Opts) -> Vec<Item> {
    let (start, n) = sort::window(l.len(), o.offset, o.count);
    if !o.desc {
        return l.iter_from(start).take(n).map(|e| Item::new(e.to_vec())).collect();
    }
    let mut out = Vec::with_capacity(n);
    let first = l.len().saturating_sub(start + 1);
    l.for_each_rev(|i, e| {
        if i <= first && out.len() < n {
            out.push(Item::new(e.to_vec()));
        }
        out.len() < n
    });
    out
}

/// The LIMIT window of a sorted set in score order (reversed with DESC).
fn zset_window(z: &ZSet, o: &Opts) -> Vec<Item> {
    let (start, n) = sort::window(z.len(), o.offset, o.count);
    let len = z.len();
    let range = if o.desc { z.range(len - start - n, len - start, true) } else { z.range(start, start + n, false) };
    range.into_iter().map(|(_, m)| Item::new(m)).collect()
}

/// Redis converts a listpack sorted set to its skiplist form for SORT, and
/// OBJECT ENCODING shows it afterwards.
fn to_skiplist(z: &mut ZSet) {
    if z.encoding() != "listpack" {
        return;
    }
    let mut big = ZSet::for_size(z.len(), usize::MAX, Limits { entries: 0, value: 0 });
    z.for_range(0, z.len(), false, &mut |it| {
        big.push_sorted(it.score, it.member());
        true
    });
    *z = big;
}

/// Fill in what each item sorts by; false if a numeric weight is not a
/// number (every weight is still looked up, as Redis does).
fn weigh(ctx: &mut Ctx, items: &mut [Item], o: &Opts) -> bool {
    let by = o.by.map(Pattern::parse);
    if o.alpha && by.is_none() {
        return true;
    }
    let mut ok = true;
    for it in items.iter_mut() {
        let value = match &by {
            Some(p) => match fetch(ctx, p, &it.elem) {
                Some(v) => Some(v),
                None => continue,
            },
            None => None,
        };
        if o.alpha {
            it.by = value;
            continue;
        }
        match sort::parse_weight(value.as_deref().unwrap_or(&it.elem)) {
            Some(s) => it.score = s,
            None => ok = false,
        }
    }
    ok
}

/// The value a BY/GET pattern names for `elem`: a string key's value or a
/// hash field; None if missing or of another type.
fn fetch(ctx: &mut Ctx, pat: &Pattern, elem: &[u8]) -> Option<Vec<u8>> {
    let (key, field) = match pat.target(elem) {
        Target::Elem => return Some(elem.to_vec()),
        Target::Nothing => return None,
        Target::Key { key, field } => (key, field),
    };
    let Ctx { srv, db, now, .. } = ctx;
    let found = srv.keyspace.dbs[*db].get(&key, *now).map(|e| match (&e.value, field) {
        (Value::Str(s), None) => Some(s.bytes(&mut Vec::new()).to_vec()),
        (Value::Hash(h), Some(f)) => h.get(f).map(<[u8]>::to_vec),
        _ => None,
    });
    match found {
        None => srv.stats.key_miss(*db, &key),
        Some(_) => srv.stats.keyspace_hits += 1,
    }
    found.flatten()
}

fn reply(ctx: &mut Ctx, out: &[Item], gets: &[Pattern]) {
    ctx.r.array(out.len() * gets.len().max(1));
    for it in out {
        if gets.is_empty() {
            ctx.r.bulk(&it.elem);
        }
        for g in gets {
            match fetch(ctx, g, &it.elem) {
                Some(v) => ctx.r.bulk(&v),
                None => ctx.r.null(),
            }
        }
    }
}

/// STORE: the result becomes a list at `dst` (missing GET values as empty
/// strings); an empty result deletes `dst` instead.
fn store(ctx: &mut Ctx, dst: &[u8], out: &[Item], gets: &[Pattern]) {
    let fill = crate::commands::list::fill(ctx);
    let mut list = List::new();
    for it in out {
        if gets.is_empty() {
            list.push(End::Tail, &it.elem, fill);
        }
        for g in gets {
            list.push(End::Tail, &fetch(ctx, g, &it.elem).unwrap_or_default(), fill);
        }
    }
    let n = list.len();
    let now = ctx.now;
    if n > 0 {
        let db = ctx.dbm();
        crate::commands::string::expire_stale(db, dst, now);
        db.set(dst, Value::List(list), None, false, now);
        ctx.modified(dst);
        ctx.dirty(n as u64);
        ctx.notify(NOTIFY_LIST, "sortstore", dst);
    } else if ctx.dbm().delete(dst) {
        // Deleted stale or not (Redis's `dbDelete` does not look).
        ctx.modified(dst);
        ctx.dirty(1);
        ctx.notify(NOTIFY_GENERIC, "del", dst);
    }
    ctx.r.int(n as i64);
}
