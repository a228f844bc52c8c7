//! Reading an RDB file into the keyspace: every type and encoding Redis 7.0
//! writes (and the older ziplist ones), expiries, several databases and AUX
//! fields. Values are rebuilt through the engine's own constructors, so the
//! configured listpack/intset thresholds decide their encodings. Any defect
//! (bad checksum, unknown type, short read, corrupt blob) is an error naming
//! the byte offset: the caller refuses to start rather than load partially.
use std::io::Read;

use super::format::*;
use super::packed;
use crate::config::Config;
use crate::engine::hash::HashLimits;
use crate::engine::list::{End, Fill, List};
use crate::engine::numeric::format_i64;
use crate::engine::value::EMBSTR_MAX;
use crate::engine::zset::{Limits, ZSet};
use crate::engine::{Hash, Keyspace, Set, Str, Value};

use super::reader::LResult;
pub use super::reader::{LoadError, Reader};

/// What a load found (INFO `rdb_last_load_keys_*`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LoadStats {
    pub keys_loaded: u64,
    pub keys_expired: u64,
    /// Codes of the function libraries the file holds (the caller loads
    /// them: they are scripting's, not the keyspace's).
    pub functions: Vec<Vec<u8>>,
    /// The replication id and offset the snapshot was taken at
    /// (`repl-id`, `repl-offset` aux fields), if it says.
    pub repl: Option<(String, i64)>,
    /// The db the replication stream was in (`repl-stream-db`).
    pub repl_stream_db: i64,
    /// Keys of a file with a replication position that had expired: a
    /// primary restarting from it puts their DELs in its backlog, as Redis
    /// does, so its replicas drop them too.
    pub expired_keys: Vec<(usize, Vec<u8>)>,
}

/// The engine limits that pick encodings for loaded values.
pub(super) struct Limits3 {
    hash: HashLimits,
    zset: Limits,
    intset: u64,
    fill: Fill,
}

impl Limits3 {
    pub(super) fn of(cfg: &Config) -> Self {
        Limits3 {
            hash: HashLimits { entries: cfg.hash_max_listpack_entries, value: cfg.hash_max_listpack_value },
            zset: Limits {
                entries: cfg.zset_max_listpack_entries as usize,
                value: cfg.zset_max_listpack_value as usize,
            },
            intset: cfg.set_max_intset_entries,
            fill: Fill(cfg.list_max_listpack_size),
        }
    }
}

fn unpack<R: Read>(r: &Reader<R>, res: packed::PackedResult<Vec<Vec<u8>>>) -> LResult<Vec<Vec<u8>>> {
    res.or_else(|e| r.error(e))
}

fn parse_score<R: Read>(r: &Reader<R>, s: &[u8]) -> LResult<f64> {
    match std::str::from_utf8(s).ok().and_then(|s| s.parse::<f64>().ok()) {
        Some(v) => Ok(v),
        None => r.error("invalid zset score"),
    }
}

fn list_of(items: impl IntoIterator<Item = Vec<u8>>, lim: &Limits3, list: &mut List) {
    for it in items {
        list.push(End::Tail, &it, lim.fill);
    }
}

fn set_of(members: Vec<Vec<u8>>, lim: &Limits3) -> Set {
    let mut set = if members.len() as u64 > lim.intset { Set::Table(Box::default()) } else { Set::new_intset() };
    let refs: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
    set.insert_many(&refs, lim.intset);
    set
}

fn zset_of(pairs: Vec<(Vec<u8>, f64)>, lim: &Limits3) -> ZSet {
    let maxlen = pairs.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
    let mut z = ZSet::for_size(pairs.len(), maxlen, lim.zset);
    for (m, s) in pairs {
        z.set(&m, s, lim.zset);
    }
    z
}

fn hash_of(pairs: Vec<(Vec<u8>, Vec<u8>)>, lim: &Limits3) -> Hash {
    let mut h = if pairs.len() as u64 > lim.hash.entries { Hash::Table(Box::default()) } else { Hash::default() };
    let refs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(f, v)| (f.as_slice(), v.as_slice())).collect();
    h.insert_many(&refs, lim.hash);
    h
}

/// A packed blob's flat elements as pairs; an odd count is corrupt.
fn pairs_of<R: Read>(r: &Reader<R>, flat: Vec<Vec<u8>>) -> LResult<Vec<(Vec<u8>, Vec<u8>)>> {
    if !flat.len().is_multiple_of(2) {
        return r.error("odd number of elements in a field/value or member/score blob");
    }
    let mut it = flat.into_iter();
    let mut out = Vec::with_capacity(it.len() / 2);
    while let (Some(a), Some(b)) = (it.next(), it.next()) {
        out.push((a, b));
    }
    Ok(out)
}

/// Redis refuses a collection that names a member or field twice.
fn no_duplicates<R: Read>(r: &Reader<R>, read: usize, kept: usize) -> LResult<()> {
    if read != kept {
        return r.error("duplicate members or fields in a collection");
    }
    Ok(())
}

/// Read a list in any of its encodings.
fn read_list<R: Read>(r: &mut Reader<R>, t: u8, lim: &Limits3) -> LResult<Value> {
    let mut list = List::new();
    match t {
        TYPE_LIST => {
            for _ in 0..r.length()? {
                let s = r.string()?;
                list.push(End::Tail, &s, lim.fill);
            }
        }
        TYPE_LIST_ZIPLIST => {
            let blob = r.string()?;
            list_of(unpack(r, packed::ziplist(&blob))?, lim, &mut list);
        }
        _ => {
            for _ in 0..r.length()? {
                let container = if t == TYPE_LIST_QUICKLIST_2 { r.length()? } else { QUICKLIST_NODE_PACKED };
                let blob = r.string()?;
                match (container, t) {
                    (QUICKLIST_NODE_PLAIN, _) => list.push(End::Tail, &blob, lim.fill),
                    (QUICKLIST_NODE_PACKED, TYPE_LIST_QUICKLIST) => {
                        list_of(unpack(r, packed::ziplist(&blob))?, lim, &mut list)
                    }
                    (QUICKLIST_NODE_PACKED, _) => list_of(unpack(r, packed::listpack(&blob))?, lim, &mut list),
                    (c, _) => return r.error(format!("unknown quicklist node container {c}")),
                }
            }
        }
    }
    Ok(Value::List(list))
}

fn read_zset<R: Read>(r: &mut Reader<R>, t: u8, lim: &Limits3) -> LResult<Value> {
    let items = match t {
        TYPE_ZSET | TYPE_ZSET_2 => {
            let n = r.length()?;
            let mut v = Vec::with_capacity(n.min(1 << 16) as usize);
            for _ in 0..n {
                let m = r.string()?;
                let s = if t == TYPE_ZSET_2 { f64::from_bits(r.u64_le()?) } else { r.text_double()? };
                if s.is_nan() {
                    return r.error("zset score is NaN");
                }
                v.push((m, s));
            }
            v
        }
        _ => {
            let blob = r.string()?;
            let flat =
                unpack(r, if t == TYPE_ZSET_ZIPLIST { packed::ziplist(&blob) } else { packed::listpack(&blob) })?;
            let mut v = Vec::with_capacity(flat.len() / 2);
            for (m, s) in pairs_of(r, flat)? {
                let score = parse_score(r, &s)?;
                v.push((m, score));
            }
            v
        }
    };
    let read = items.len();
    let z = zset_of(items, lim);
    no_duplicates(r, read, z.len())?;
    Ok(Value::ZSet(Box::new(z)))
}

/// Read one value of RDB type `t`; `scratch` is a reusable buffer.
pub(super) fn read_value<R: Read>(r: &mut Reader<R>, t: u8, lim: &Limits3, scratch: &mut Vec<u8>) -> LResult<Value> {
    Ok(match t {
        TYPE_STRING => {
            r.string_into(scratch)?;
            // Short strings are copied inline: keep the buffer for the next.
            Value::Str(if scratch.len() <= EMBSTR_MAX {
                Str::from_bytes(scratch)
            } else {
                Str::from_vec(std::mem::take(scratch))
            })
        }
        TYPE_LIST | TYPE_LIST_ZIPLIST | TYPE_LIST_QUICKLIST | TYPE_LIST_QUICKLIST_2 => read_list(r, t, lim)?,
        TYPE_SET => {
            let n = r.length()?;
            let mut ms = Vec::with_capacity(n.min(1 << 16) as usize);
            for _ in 0..n {
                ms.push(r.string()?);
            }
            let set = set_of(ms, lim);
            no_duplicates(r, n as usize, set.len())?;
            Value::Set(set)
        }
        TYPE_SET_INTSET => {
            let blob = r.string()?;
            let ints = packed::intset(&blob).or_else(|e| r.error(e))?;
            let ms = ints
                .into_iter()
                .map(|v| {
                    let mut s = Vec::with_capacity(20);
                    format_i64(&mut s, v);
                    s
                })
                .collect::<Vec<_>>();
            let read = ms.len();
            let set = set_of(ms, lim);
            no_duplicates(r, read, set.len())?;
            Value::Set(set)
        }
        TYPE_ZSET | TYPE_ZSET_2 | TYPE_ZSET_ZIPLIST | TYPE_ZSET_LISTPACK => read_zset(r, t, lim)?,
        TYPE_HASH => {
            let n = r.length()?;
            let mut ps = Vec::with_capacity(n.min(1 << 16) as usize);
            for _ in 0..n {
                ps.push((r.string()?, r.string()?));
            }
            let h = hash_of(ps, lim);
            no_duplicates(r, n as usize, h.len())?;
            Value::Hash(h)
        }
        TYPE_HASH_ZIPLIST | TYPE_HASH_LISTPACK => {
            let blob = r.string()?;
            let flat =
                unpack(r, if t == TYPE_HASH_ZIPLIST { packed::ziplist(&blob) } else { packed::listpack(&blob) })?;
            let ps = pairs_of(r, flat)?;
            let read = ps.len();
            let h = hash_of(ps, lim);
            no_duplicates(r, read, h.len())?;
            Value::Hash(h)
        }
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 | super::stream::TYPE_STREAM_LISTPACKS_3 => {
            Value::Stream(Box::new(super::stream::read_stream(r, t)?))
        }
        TYPE_MODULE | TYPE_MODULE_2 => return r.error("the RDB holds a module value, which Volley cannot load"),
        TYPE_HASH_ZIPMAP => return r.error("the RDB holds a zipmap hash (Redis < 2.6), which Volley cannot load"),
        other => return r.error(format!("unknown RDB value type {other}")),
    })
}

pub(super) fn is_empty(v: &Value) -> bool {
    match v {
        Value::Str(_) => false,
        Value::List(l) => l.is_empty(),
        Value::Set(s) => s.is_empty(),
        Value::ZSet(z) => z.is_empty(),
        Value::Hash(h) => h.is_empty(),
        // Redis keeps empty streams (their IDs and groups still matter).
        Value::Stream(_) => false,
    }
}

fn aux_log(key: &[u8], val: &[u8]) {
    let v = String::from_utf8_lossy(val);
    match key {
        b"redis-ver" => crate::log_at!(Notice, "Loading RDB produced by version {v}"),
        b"ctime" => {
            let now = crate::server::unix_ms() / 1000;
            let age = v.parse::<i64>().map_or(0, |c| (now - c).max(0));
            crate::log_at!(Notice, "RDB age {age} seconds");
        }
        b"used-mem" => {
            let mb = v.parse::<f64>().unwrap_or(0.0) / (1024.0 * 1024.0);
            crate::log_at!(Notice, "RDB memory usage when created {mb:.2} Mb");
        }
        _ => {}
    }
}

fn read_header<R: Read>(r: &mut Reader<R>) -> LResult<u32> {
    let magic: [u8; 9] = r.array()?;
    if &magic[..5] != b"REDIS" {
        return Err(LoadError { offset: 0, msg: "wrong signature: not an RDB file".into() });
    }
    let ver = std::str::from_utf8(&magic[5..]).ok().and_then(|s| s.parse::<u32>().ok());
    match ver {
        Some(v) if (1..=RDB_VERSION).contains(&v) => Ok(v),
        _ => Err(LoadError { offset: 5, msg: format!("can't handle RDB format version {:?}", &magic[5..]) }),
    }
}

/// Load an RDB stream into `ks` (which the caller has emptied). On a
/// primary, keys whose expiry has passed at `now_ms` are skipped and
/// counted; a replica (`replicaof` set) keeps them, as Redis 7.0 does:
/// they go when its primary's DEL arrives, its reads hiding them until
/// then.
pub fn load<R: Read>(ks: &mut Keyspace, inp: R, cfg: &Config, now_ms: i64) -> LResult<LoadStats> {
    load_with(ks, inp, cfg, now_ms, || ())
}

/// [`load`] for an AOF's RDB base or preamble: every key is kept, expired
/// or not, as Redis's `RDBFLAGS_AOF_PREAMBLE` load does. The incr files
/// after it were logged against exactly that keyspace (a PERSIST of a key
/// whose old deadline has passed since must still find it); what is left
/// expired after the replay goes through the normal expiry, with its DEL.
pub fn load_aof_base<R: Read>(ks: &mut Keyspace, inp: R, cfg: &Config, now_ms: i64) -> LResult<LoadStats> {
    load_inner(ks, inp, cfg, now_ms, false, || ())
}

/// [`load`], calling `each_key` after every key read (`key-load-delay`).
pub fn load_with<R: Read>(
    ks: &mut Keyspace,
    inp: R,
    cfg: &Config,
    now_ms: i64,
    each_key: impl FnMut(),
) -> LResult<LoadStats> {
    load_inner(ks, inp, cfg, now_ms, cfg.replicaof().is_none(), each_key)
}

fn load_inner<R: Read>(
    ks: &mut Keyspace,
    inp: R,
    cfg: &Config,
    now_ms: i64,
    skip_expired: bool,
    mut each_key: impl FnMut(),
) -> LResult<LoadStats> {
    let mut r = Reader::new(inp);
    let version = read_header(&mut r)?;
    let lim = Limits3::of(cfg);
    let mut stats = LoadStats::default();
    let (mut db, mut expire) = (0usize, None::<i64>);
    let (mut key, mut scratch) = (Vec::new(), Vec::new());
    loop {
        let op = r.u8()?;
        match op {
            OP_EOF => break,
            OP_SELECTDB => {
                let n = r.length()?;
                if n >= ks.dbs.len() as u64 {
                    return r.error(format!(
                        "the RDB uses DB {n} but this server is configured with {} databases",
                        ks.dbs.len()
                    ));
                }
                db = n as usize;
            }
            OP_RESIZEDB => {
                let (keys, expires) = (r.length()?, r.length()?);
                // A hint only: a damaged one must not allocate absurdly.
                let cap = |n: u64| n.min(1 << 30) as usize;
                ks.dbs[db].reserve(cap(keys), cap(expires));
            }
            OP_AUX => {
                let (k, v) = (r.string()?, r.string()?);
                aux_log(&k, &v);
                note_repl_aux(&mut stats, &k, &v);
            }
            OP_EXPIRETIME_MS => expire = Some(r.u64_le()? as i64),
            OP_EXPIRETIME => expire = Some(i64::from(u32::from_le_bytes(r.array()?)) * 1000),
            OP_IDLE => {
                r.length()?;
            }
            OP_FREQ => {
                r.u8()?;
            }
            OP_MODULE_AUX => return r.error("the RDB holds module auxiliary data, which Volley cannot load"),
            OP_FUNCTION2 => stats.functions.push(r.string()?),
            OP_FUNCTION => return r.error("the RDB holds functions in Redis 7.0's pre-release format"),
            t => {
                r.string_into(&mut key)?;
                let value = read_value(&mut r, t, &lim, &mut scratch)?;
                let at = expire.take();
                each_key();
                if skip_expired && at.is_some_and(|at| at < now_ms) {
                    stats.keys_expired += 1;
                    if stats.repl.is_some() {
                        stats.expired_keys.push((db, key.clone()));
                    }
                } else if !is_empty(&value) {
                    if !ks.dbs[db].insert_new(&key, value, at, now_ms) {
                        let name = String::from_utf8_lossy(&key);
                        return r.error(format!("duplicated key '{name}' in DB {db}"));
                    }
                    stats.keys_loaded += 1;
                }
            }
        }
    }
    let computed = r.checksum();
    if version >= 5 {
        let stored = r.u64_le()?;
        if stored != 0 && cfg.rdbchecksum && stored != computed {
            return Err(LoadError {
                offset: r.pos - 8,
                msg: format!("Wrong RDB checksum expected: ({stored:x}) got ({computed:x}): RDB CRC error"),
            });
        }
    }
    Ok(stats)
}

/// Keep the replication position a snapshot carries (a restarted replica
/// continues from it with PSYNC).
fn note_repl_aux(stats: &mut LoadStats, k: &[u8], v: &[u8]) {
    let text = String::from_utf8_lossy(v);
    match k {
        b"repl-id" if v.len() == 40 => stats.repl = Some((text.into_owned(), stats.repl.as_ref().map_or(0, |r| r.1))),
        b"repl-stream-db" => stats.repl_stream_db = text.parse().unwrap_or(0),
        b"repl-offset" => {
            if let (Ok(off), Some(r)) = (text.parse::<i64>(), stats.repl.as_mut()) {
                r.1 = off;
            }
        }
        _ => {}
    }
}
