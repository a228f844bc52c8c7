//! Geospatial commands: GEOADD GEODIST GEOHASH GEOPOS, and the searches
//! GEORADIUS GEORADIUSBYMEMBER (with STORE/STOREDIST and their _RO forms),
//! GEOSEARCH and GEOSEARCHSTORE. A geo set is a sorted set whose scores are
//! 52-bit geohashes (`engine::geo`); these handlers parse arguments in
//! Redis's order (so the same error wins), call the engine and reply.
use std::borrow::Cow;
use std::ffi::CStr;

use crate::commands::zset::{limits, read_zset, write_zset};
use crate::config::{NOTIFY_GENERIC, NOTIFY_ZSET};
use crate::dispatch::flags::*;
use crate::dispatch::{Argv, CommandSpec, Ctx, Reply};
use crate::engine::geo::{self, Extent, Point, Shape, Sort};
use crate::engine::numeric::{parse_f64, parse_i64};
use crate::engine::zset::{Change, ZSet};
use crate::engine::Value;
use crate::spec;

const K1: (i32, i32, i32) = (1, 1, 1);

#[rustfmt::skip]
static SPECS: [CommandSpec; 10] = [
    spec!("geoadd", -5, WRITE | DENYOOM, K1, geoadd, "geo", "3.2.0", "Add one or more geospatial items in the geospatial index represented using a sorted set", ["write", "geo", "slow"]),
    spec!("geodist", -4, READONLY, K1, geodist, "geo", "3.2.0", "Returns the distance between two members of a geospatial index", ["read", "geo", "slow"]),
    spec!("geohash", -2, READONLY, K1, geohash, "geo", "3.2.0", "Returns members of a geospatial index as standard geohash strings", ["read", "geo", "slow"]),
    spec!("geopos", -2, READONLY, K1, geopos, "geo", "3.2.0", "Returns longitude and latitude of members of a geospatial index", ["read", "geo", "slow"]),
    spec!("georadius", -6, WRITE | DENYOOM | MOVABLEKEYS, K1, georadius, "geo", "3.2.0", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", ["write", "geo", "slow"]),
    spec!("georadius_ro", -6, READONLY, K1, georadius_ro, "geo", "3.2.10", "A read-only variant for GEORADIUS", ["read", "geo", "slow"]),
    spec!("georadiusbymember", -5, WRITE | DENYOOM | MOVABLEKEYS, K1, georadiusbymember, "geo", "3.2.0", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", ["write", "geo", "slow"]),
    spec!("georadiusbymember_ro", -5, READONLY, K1, georadiusbymember_ro, "geo", "3.2.10", "A read-only variant for GEORADIUSBYMEMBER", ["read", "geo", "slow"]),
    spec!("geosearch", -7, READONLY, K1, geosearch, "geo", "6.2.0", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", ["read", "geo", "slow"]),
    spec!("geosearchstore", -8, WRITE | DENYOOM, (1, 2, 1), geosearchstore, "geo", "6.2.0", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", ["write", "geo", "slow"]),
];

pub fn register(r: &mut crate::dispatch::Registry) {
    r.add(&SPECS);
}

/// An error reply line (fixed, or formatted with the client's values).
type Fail = Cow<'static, str>;

const SYNTAX: &str = "ERR syntax error";
const NOT_FLOAT: &str = "ERR value is not a valid float";
const NO_MEMBER: &str = "ERR could not decode requested zset member";

/// Redis compares option words with C's `strcasecmp`, which stops at a NUL.
fn word_is(arg: &[u8], word: &str) -> bool {
    let text = arg.split(|&b| b == 0).next().unwrap_or(arg);
    text.eq_ignore_ascii_case(word.as_bytes())
}

/// A longitude/latitude argument pair, checked against the indexable area.
fn parse_lonlat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), Fail> {
    let (Some(lon), Some(lat)) = (parse_f64(lon), parse_f64(lat)) else { return Err(NOT_FLOAT.into()) };
    if !(geo::LON_MIN..=geo::LON_MAX).contains(&lon) || !(geo::LAT_MIN..=geo::LAT_MAX).contains(&lat) {
        let (x, y) = (format_fixed6(lon), format_fixed6(lat));
        let text = format!("ERR invalid longitude,latitude pair {},{}", ascii(&x), ascii(&y));
        return Err(text.into());
    }
    Ok((lon, lat))
}

fn ascii(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

/// Meters per unit.
fn parse_unit(u: &[u8]) -> Result<f64, Fail> {
    const UNITS: [(&str, f64); 4] = [("m", 1.0), ("km", 1000.0), ("ft", 0.3048), ("mi", 1609.34)];
    match UNITS.iter().find(|(name, _)| word_is(u, name)) {
        Some(&(_, to_m)) => Ok(to_m),
        None => Err("ERR unsupported unit provided. please use M, KM, FT, MI".into()),
    }
}

/// `<radius> <unit>` at `argv[i..]`: (radius, meters per unit).
fn parse_radius(argv: &Argv, i: usize) -> Result<(f64, f64), Fail> {
    let r = parse_f64(argv.get(i)).ok_or("ERR need numeric radius")?;
    if r < 0.0 {
        return Err("ERR radius cannot be negative".into());
    }
    Ok((r, parse_unit(argv.get(i + 1))?))
}

/// `<width> <height> <unit>` at `argv[i..]`.
fn parse_box(argv: &Argv, i: usize) -> Result<(Extent, f64), Fail> {
    let width = parse_f64(argv.get(i)).ok_or("ERR need numeric width")?;
    let height = parse_f64(argv.get(i + 1)).ok_or("ERR need numeric height")?;
    if height < 0.0 || width < 0.0 {
        return Err("ERR height or width cannot be negative".into());
    }
    Ok((Extent::Box { width, height }, parse_unit(argv.get(i + 2))?))
}

/// The position of `member` in the geo set at `key` (no stats: the key
/// was already looked up once).
fn member_position(ctx: &mut Ctx, key: &[u8], member: &[u8]) -> Option<(f64, f64)> {
    let z = write_zset(ctx, key).ok().flatten()?;
    z.score(member).map(geo::position)
}

/// A coordinate: a RESP3 double, or its text as a bulk string in RESP2.
fn reply_coord(r: &mut Reply, v: f64) {
    let text = format_coord(v);
    if r.resp3() {
        r.raw(b",");
        r.raw(&text);
        r.raw(b"\r\n");
    } else {
        r.bulk(&text);
    }
}

// ------------------------------------------------------------ number formats

/// `v` through C's printf with a one-double-argument `format`.
fn printf(format: &CStr, v: f64) -> Vec<u8> {
    let mut buf = vec![0u8; 400];
    loop {
        // SAFETY: `buf` is writable for its length; the format takes one double.
        let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), format.as_ptr(), v) };
        let n = usize::try_from(n).unwrap_or(0);
        if n < buf.len() {
            buf.truncate(n);
            return buf;
        }
        buf.resize(n + 1, 0);
    }
}

/// A coordinate as GEO replies print it: 17 decimals, trailing zeros (and
/// a bare point) dropped, `-0` as `0`.
fn format_coord(v: f64) -> Vec<u8> {
    if v.is_infinite() {
        return if v > 0.0 { b"inf".to_vec() } else { b"-inf".to_vec() };
    }
    let mut s = printf(c"%.17f", v);
    if s.contains(&b'.') {
        while s.last() == Some(&b'0') {
            s.pop();
        }
        if s.last() == Some(&b'.') {
            s.pop();
        }
    }
    if s == b"-0" {
        s = b"0".to_vec();
    }
    s
}

/// A distance as GEO replies print it: rounded (half to even) to exactly
/// four decimals.
fn format_distance(v: f64) -> Vec<u8> {
    if v == 0.0 {
        return b"0.0000".to_vec();
    }
    let scaled = (v * 10000.0).round_ties_even();
    // llrint's result for values beyond i64 (never a real distance).
    let fixed = if scaled.is_nan() || !(-9.223372036854776e18..9.223372036854776e18).contains(&scaled) {
        i64::MIN
    } else {
        scaled as i64
    };
    let sign = if fixed < 0 { "-" } else { "" };
    let mag = fixed.unsigned_abs();
    format!("{sign}{}.{:04}", mag / 10000, mag % 10000).into_bytes()
}

/// C's `%f` (six decimals), as Redis prints rejected coordinates.
fn format_fixed6(v: f64) -> Vec<u8> {
    printf(c"%f", v)
}

// ------------------------------------------------------------ GEOADD

/// GEOADD's leading NX/XX/CH words: (nx, xx, ch, index of the first longitude).
fn parse_add_flags(argv: &Argv) -> (bool, bool, bool, usize) {
    let (mut nx, mut xx, mut ch, mut i) = (false, false, false, 2);
    while i < argv.len() {
        let w = argv.get(i);
        if word_is(w, "nx") {
            nx = true;
        } else if word_is(w, "xx") {
            xx = true;
        } else if word_is(w, "ch") {
            ch = true;
        } else {
            break;
        }
        i += 1;
    }
    (nx, xx, ch, i)
}

/// GEOADD: ZADD with each (lon, lat) turned into its geohash score, and
/// replayed as that ZADD.
fn geoadd(ctx: &mut Ctx, argv: &Argv) {
    let (nx, xx, ch, at) = parse_add_flags(argv);
    let rest = argv.len() - at;
    if rest == 0 || !rest.is_multiple_of(3) || (nx && xx) {
        return ctx.syntax_error();
    }
    let mut items = Vec::with_capacity(rest / 3);
    for i in (at..argv.len()).step_by(3) {
        match parse_lonlat(argv.get(i), argv.get(i + 1)) {
            Ok((lon, lat)) => items.push((geo::score_of(lon, lat).unwrap_or(0), argv.get(i + 2))),
            Err(e) => return ctx.r.error(&e),
        }
    }
    let key = argv.get(1);
    let lim = limits(ctx);
    match write_zset(ctx, key) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) if xx => return ctx.r.int(0),
        Ok(None) => {
            let now = ctx.now;
            ctx.dbm().set(key, Value::ZSet(Box::default()), None, false, now);
        }
        Ok(Some(_)) => {}
    }
    let z = write_zset(ctx, key).ok().flatten().expect("present: just checked or created");
    let (mut added, mut updated) = (0i64, 0i64);
    for &(score, member) in &items {
        let exists = z.score(member).is_some();
        if (exists && nx) || (!exists && xx) {
            continue;
        }
        match z.set(member, score as f64, lim) {
            Change::Added => added += 1,
            Change::Updated => updated += 1,
            Change::Same => {}
        }
    }
    if added + updated > 0 {
        ctx.dirty((added + updated) as u64);
        ctx.modified(key);
        // Redis runs GEOADD as the ZADD it amounts to, events included.
        ctx.notify(NOTIFY_ZSET, "zadd", key);
        if ctx.replicating() {
            replicate_as_zadd(ctx, argv, at, &items);
        }
    }
    ctx.r.int(if ch { added + updated } else { added });
}

/// Replay GEOADD as the ZADD it amounts to (what Redis propagates).
fn replicate_as_zadd(ctx: &mut Ctx, argv: &Argv, at: usize, items: &[(u64, &[u8])]) {
    let scores: Vec<Vec<u8>> = items.iter().map(|(s, _)| s.to_string().into_bytes()).collect();
    let mut args: Vec<&[u8]> = vec![b"zadd"];
    args.extend(argv.iter_from(1).take(at - 1));
    for (score, (_, member)) in scores.iter().zip(items) {
        args.push(score);
        args.push(member);
    }
    ctx.replicate_as(&args);
}

// ------------------------------------------------------------ GEODIST / GEOHASH / GEOPOS

fn geodist(ctx: &mut Ctx, argv: &Argv) {
    let to_m = match argv.len() {
        4 => 1.0,
        5 => match parse_unit(argv.get(4)) {
            Ok(u) => u,
            Err(e) => return ctx.r.error(&e),
        },
        _ => return ctx.syntax_error(),
    };
    let scores = match read_zset(ctx, argv.get(1)) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(None) => None,
        Ok(Some(z)) => z.score(argv.get(2)).zip(z.score(argv.get(3))),
    };
    let Some((a, b)) = scores else { return ctx.r.null() };
    let ((lon1, lat1), (lon2, lat2)) = (geo::position(a), geo::position(b));
    ctx.r.bulk(&format_distance(geo::distance(lon1, lat1, lon2, lat2) / to_m));
}

/// The scores of `argv[2..]` in the geo set at `argv[1]` (None: missing).
fn member_scores(ctx: &mut Ctx, argv: &Argv) -> Result<Vec<Option<f64>>, &'static str> {
    match read_zset(ctx, argv.get(1)) {
        Err(e) => Err(e.message()),
        Ok(z) => Ok(argv.iter_from(2).map(|m| z.as_ref().and_then(|z| z.score(m))).collect()),
    }
}

fn geohash(ctx: &mut Ctx, argv: &Argv) {
    let scores = match member_scores(ctx, argv) {
        Ok(s) => s,
        Err(e) => return ctx.r.error(e),
    };
    ctx.r.array(scores.len());
    for s in scores {
        match s {
            Some(s) => ctx.r.bulk(&geo::geohash_text(s)),
            None => ctx.r.null(),
        }
    }
}

fn geopos(ctx: &mut Ctx, argv: &Argv) {
    let scores = match member_scores(ctx, argv) {
        Ok(s) => s,
        Err(e) => return ctx.r.error(e),
    };
    ctx.r.array(scores.len());
    for s in scores {
        match s {
            Some(s) => {
                let (lon, lat) = geo::position(s);
                ctx.r.array(2);
                reply_coord(&mut ctx.r, lon);
                reply_coord(&mut ctx.r, lat);
            }
            None => ctx.r.null_array(),
        }
    }
}

// ------------------------------------------------------------ searches

/// Which search command is running (Redis's flags for the shared parser).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// GEORADIUS[_RO]: centre and radius are positional.
    ByCoords { store_ok: bool },
    /// GEORADIUSBYMEMBER[_RO]: centre member and radius are positional.
    ByMember { store_ok: bool },
    /// GEOSEARCH / GEOSEARCHSTORE: everything comes from options.
    Search { store: bool },
}

impl Variant {
    /// Index of the source key.
    fn src(self) -> usize {
        match self {
            Variant::Search { store: true } => 2,
            _ => 1,
        }
    }
    /// Whether STORE/STOREDIST <key> options are accepted.
    fn store_ok(self) -> bool {
        matches!(self, Variant::ByCoords { store_ok: true } | Variant::ByMember { store_ok: true })
    }
}

/// A parsed search request.
#[derive(Default)]
struct Request<'a> {
    centre: Option<(f64, f64)>,
    /// The area's extent and meters per unit.
    area: Option<(Extent, f64)>,
    from_member: bool,
    from_lonlat: bool,
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    any: bool,
    sort: Option<Sort>,
    /// 0: no limit.
    count: i64,
    store: Option<&'a [u8]>,
    store_dist: bool,
}

impl Request<'_> {
    fn by_radius(&self) -> bool {
        matches!(self.area, Some((Extent::Radius(_), _)))
    }
    fn by_box(&self) -> bool {
        matches!(self.area, Some((Extent::Box { .. }, _)))
    }
}

/// Parse the positional part; returns the index options start at.
fn parse_positional<'a>(
    ctx: &mut Ctx,
    argv: &Argv<'a>,
    v: Variant,
    exists: bool,
    q: &mut Request<'a>,
) -> Result<usize, Fail> {
    match v {
        Variant::ByCoords { .. } => {
            q.centre = Some(parse_lonlat(argv.get(2), argv.get(3))?);
            let (r, unit) = parse_radius(argv, 4)?;
            q.area = Some((Extent::Radius(r), unit));
            Ok(6)
        }
        // Without a key there is nothing to search: the options are still
        // parsed, to pick the reply.
        Variant::ByMember { .. } if !exists => Ok(5),
        Variant::ByMember { .. } => {
            q.centre = Some(member_position(ctx, argv.get(1), argv.get(2)).ok_or(NO_MEMBER)?);
            let (r, unit) = parse_radius(argv, 3)?;
            q.area = Some((Extent::Radius(r), unit));
            Ok(5)
        }
        Variant::Search { store: false } => Ok(2),
        Variant::Search { store: true } => {
            q.store = Some(argv.get(1));
            Ok(3)
        }
    }
}

/// Parse the option at `argv[i]`; returns how many arguments it took.
/// Each option is only recognised where Redis recognises it (enough
/// arguments follow, the command takes it, no conflicting option came
/// first); anything else is a syntax error.
fn parse_option<'a>(
    ctx: &mut Ctx,
    argv: &Argv<'a>,
    v: Variant,
    exists: bool,
    i: usize,
    q: &mut Request<'a>,
) -> Result<usize, Fail> {
    let arg = argv.get(i);
    let left = argv.len() - i - 1;
    let search = matches!(v, Variant::Search { .. });
    let set = |f: &mut bool| {
        *f = true;
        Ok(1)
    };
    if word_is(arg, "withdist") {
        set(&mut q.with_dist)
    } else if word_is(arg, "withhash") {
        set(&mut q.with_hash)
    } else if word_is(arg, "withcoord") {
        set(&mut q.with_coord)
    } else if word_is(arg, "any") {
        set(&mut q.any)
    } else if word_is(arg, "asc") || word_is(arg, "desc") {
        q.sort = Some(if word_is(arg, "asc") { Sort::Asc } else { Sort::Desc });
        Ok(1)
    } else if word_is(arg, "count") && left >= 1 {
        q.count = parse_i64(argv.get(i + 1)).ok_or("ERR value is not an integer or out of range")?;
        if q.count <= 0 {
            return Err("ERR COUNT must be > 0".into());
        }
        Ok(2)
    } else if (word_is(arg, "store") || word_is(arg, "storedist")) && left >= 1 && v.store_ok() {
        q.store = Some(argv.get(i + 1));
        q.store_dist = word_is(arg, "storedist");
        Ok(2)
    } else if word_is(arg, "storedist") && v == (Variant::Search { store: true }) {
        set(&mut q.store_dist)
    } else if word_is(arg, "frommember") && left >= 1 && search && !q.from_lonlat {
        q.from_member = true;
        if exists {
            q.centre = Some(member_position(ctx, argv.get(v.src()), argv.get(i + 1)).ok_or(NO_MEMBER)?);
        }
        Ok(2)
    } else if word_is(arg, "fromlonlat") && left >= 2 && search && !q.from_member {
        q.centre = Some(parse_lonlat(argv.get(i + 1), argv.get(i + 2))?);
        q.from_lonlat = true;
        Ok(3)
    } else if word_is(arg, "byradius") && left >= 2 && search && !q.by_box() {
        let (r, unit) = parse_radius(argv, i + 1)?;
        q.area = Some((Extent::Radius(r), unit));
        Ok(3)
    } else if word_is(arg, "bybox") && left >= 3 && search && !q.by_radius() {
        q.area = Some(parse_box(argv, i + 1)?);
        Ok(4)
    } else {
        Err(SYNTAX.into())
    }
}

/// Parse a whole search request, with Redis's checks in Redis's order.
fn parse_request<'a>(ctx: &mut Ctx, argv: &Argv<'a>, v: Variant, exists: bool) -> Result<Request<'a>, Fail> {
    let mut q = Request::default();
    let mut i = parse_positional(ctx, argv, v, exists, &mut q)?;
    while i < argv.len() {
        i += parse_option(ctx, argv, v, exists, i, &mut q)?;
    }
    let search = matches!(v, Variant::Search { .. });
    let name = || String::from_utf8_lossy(argv.get(0)).into_owned();
    if q.store.is_some() && (q.with_dist || q.with_hash || q.with_coord) {
        let what = if search { "GEOSEARCHSTORE" } else { "STORE option in GEORADIUS" };
        return Err(format!("ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options").into());
    }
    if search && !(q.from_member || q.from_lonlat) {
        return Err(format!("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {}", name()).into());
    }
    if search && q.area.is_none() {
        return Err(format!("ERR exactly one of BYRADIUS and BYBOX can be specified for {}", name()).into());
    }
    if q.any && q.count == 0 {
        return Err("ERR the ANY argument requires COUNT argument".into());
    }
    Ok(q)
}

/// Every search command: look the source up, parse, search, then reply
/// with the points or store them.
fn search_generic(ctx: &mut Ctx, argv: &Argv, v: Variant) {
    let src = argv.get(v.src());
    let event = if matches!(v, Variant::Search { .. }) { "geosearchstore" } else { "georadiusstore" };
    let exists = match read_zset(ctx, src) {
        Err(e) => return ctx.r.error(e.message()),
        Ok(z) => z.is_some(),
    };
    let q = match parse_request(ctx, argv, v, exists) {
        Ok(q) => q,
        Err(e) => return ctx.r.error(&e),
    };
    let (Some(z), Some((lon, lat)), Some((extent, unit))) = (write_zset(ctx, src).ok().flatten(), q.centre, q.area)
    else {
        // No source: an empty result (a STORE deletes its destination).
        return store_or_reply(ctx, &q, Vec::new(), 1.0, event);
    };
    let sort = match q.sort {
        Some(s) => s,
        // The n nearest, unless ANY asked for whichever n come first.
        None if q.count > 0 && !q.any => Sort::Asc,
        None => Sort::Unsorted,
    };
    let count = usize::try_from(q.count).unwrap_or(usize::MAX);
    let mut points = geo::search(z, &Shape { lon, lat, unit, extent }, if q.any { count } else { 0 });
    let keep = if count == 0 { points.len() } else { points.len().min(count) };
    geo::sort_points(&mut points, sort, keep);
    points.truncate(keep);
    store_or_reply(ctx, &q, points, unit, event);
}

/// `event`: the one a STORE sends for its destination.
fn store_or_reply(ctx: &mut Ctx, q: &Request, points: Vec<Point>, unit: f64, event: &str) {
    match q.store {
        Some(dst) => store_points(ctx, dst, &points, q.store_dist, unit, event),
        None => reply_points(&mut ctx.r, q, &points, unit),
    }
}

fn reply_points(r: &mut Reply, q: &Request, points: &[Point], unit: f64) {
    let extras = usize::from(q.with_dist) + usize::from(q.with_hash) + usize::from(q.with_coord);
    r.array(points.len());
    for p in points {
        if extras > 0 {
            r.array(extras + 1);
        }
        r.bulk(&p.member);
        if q.with_dist {
            r.bulk(&format_distance(p.dist / unit));
        }
        if q.with_hash {
            // Found scores lie within the 52-bit hash range: the cast is exact.
            r.int(p.score as i64);
        }
        if q.with_coord {
            r.array(2);
            reply_coord(r, p.lon);
            reply_coord(r, p.lat);
        }
    }
}

/// Store the points at `dst` scored by hash (or by distance in the
/// request's unit), replacing it; an empty result deletes it.
fn store_points(ctx: &mut Ctx, dst: &[u8], points: &[Point], by_dist: bool, unit: f64, event: &str) {
    let n = points.len();
    if n == 0 {
        if ctx.dbm().delete(dst) {
            ctx.dirty(1);
            ctx.modified(dst);
            ctx.notify(NOTIFY_GENERIC, "del", dst);
        }
        return ctx.r.int(0);
    }
    let lim = limits(ctx);
    let maxlen = points.iter().map(|p| p.member.len()).max().unwrap_or(0);
    let mut z = ZSet::for_size(n, maxlen, lim);
    for p in points {
        z.set(&p.member, if by_dist { p.dist / unit } else { p.score }, lim);
    }
    let now = ctx.now;
    ctx.dbm().set(dst, Value::ZSet(Box::new(z)), None, false, now);
    ctx.dirty(n as u64);
    ctx.modified(dst);
    ctx.notify(NOTIFY_ZSET, event, dst);
    ctx.r.int(n as i64);
}

fn georadius(ctx: &mut Ctx, argv: &Argv) {
    search_generic(ctx, argv, Variant::ByCoords { store_ok: true });
}
fn georadius_ro(ctx: &mut Ctx, argv: &Argv) {
    search_generic(ctx, argv, Variant::ByCoords { store_ok: false });
}
fn georadiusbymember(ctx: &mut Ctx, argv: &Argv) {
    search_generic(ctx, argv, Variant::ByMember { store_ok: true });
}
fn georadiusbymember_ro(ctx: &mut Ctx, argv: &Argv) {
    search_generic(ctx, argv, Variant::ByMember { store_ok: false });
}
fn geosearch(ctx: &mut Ctx, argv: &Argv) {
    search_generic(ctx, argv, Variant::Search { store: false });
}
fn geosearchstore(ctx: &mut Ctx, argv: &Argv) {
    search_generic(ctx, argv, Variant::Search { store: true });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_print_with_four_decimals() {
        let ((a, b), (c, d)) = (geo::position(3479099956230698.0), geo::position(3479447370796909.0));
        assert_eq!(format_distance(geo::distance(a, b, c, d)), b"166274.1516");
        assert_eq!(format_distance(geo::distance(a, b, c, d) / 1000.0), b"166.2742");
        assert_eq!(format_distance(0.0), b"0.0000");
        assert_eq!(format_distance(0.00004), b"0.0000");
        assert_eq!(format_distance(0.775), b"0.7750");
        // 1/32 and 3/32 end exactly halfway at the fifth decimal: to even.
        assert_eq!(format_distance(0.03125), b"0.0312");
        assert_eq!(format_distance(0.09375), b"0.0938");
        assert_eq!(format_distance(-1.5), b"-1.5000");
    }

    #[test]
    fn coordinates_print_like_long_doubles() {
        let (lon, lat) = geo::position(3479099956230698.0);
        assert_eq!(
            (format_coord(lon), format_coord(lat)),
            (b"13.36138933897018433".to_vec(), b"38.11555639549629859".to_vec())
        );
        assert_eq!(format_coord(geo::LAT_MAX), b"85.0511287799999991");
        assert_eq!(format_coord(-0.0), b"0");
        assert_eq!(format_coord(-1e-20), b"0");
        assert_eq!(format_coord(2.5), b"2.5");
        assert_eq!(format_coord(100.0), b"100");
        assert_eq!(format_coord(f64::NEG_INFINITY), b"-inf");
        assert_eq!(format_fixed6(200.0), b"200.000000");
        assert_eq!(format_fixed6(f64::INFINITY), b"inf");
        assert_eq!(format_fixed6(1e300).len(), 301 + 7, "longer than the first buffer");
    }
}
