//! Writing the keyspace as an RDB version 10 file, as Redis 7.0 does: AUX
//! fields, then per non-empty db SELECTDB + RESIZEDB and its keys (with
//! EXPIRETIME_MS), EOF and the CRC64 trailer. Values use Redis 7.0's own
//! encodings: strings (integer / LZF / raw), lists as quicklists of
//! listpack nodes, intsets or plain sets, and listpacks for small hashes
//! and zsets (ZSET_2 and plain hashes when large). Files are written atomically: a
//! `temp-<pid>.rdb` beside the target, fsynced, then renamed over it.
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::format::*;
use super::packed::{build_intset, LpBuilder};
use crate::engine::list::{Elem, List};
use crate::engine::set::Set;
use crate::engine::zset::ZSet;
use crate::engine::{Db, Hash, Keyspace, Str, Value};

/// Listpack node size of the lists written (Redis's default
/// `list-max-listpack-size -2`: 8 KB).
const LIST_NODE_BYTES: usize = 8192;

/// Options from the configuration that shape the file.
#[derive(Debug, Clone, Copy, Default)]
pub struct SaveOpts {
    /// LZF for strings longer than 20 bytes (`rdbcompression`).
    pub compress: bool,
    /// Write the real CRC64 (`rdbchecksum`); otherwise zero, as Redis does.
    pub checksum: bool,
    /// Where the snapshot stands in the replication stream, saved as
    /// Redis's `repl-stream-db`, `repl-id`, `repl-offset` aux fields.
    pub repl: Option<ReplAux>,
    /// `rdb-key-save-delay`: microseconds to sleep after each key (a
    /// debugging knob tests use to keep a save running; negative: sleep
    /// 1 µs once in that many keys).
    pub key_delay_us: i64,
}

/// `rdb-key-save-delay` in force (0: none).
pub fn key_delay_setting(cfg: &crate::config::Config) -> i64 {
    cfg.other.get("rdb-key-save-delay").and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Redis's `debugDelay`, once per key saved.
fn key_delay(us: i64) {
    let us = if us < 0 { u64::from(fastrand_below(us.unsigned_abs()) == 0) } else { us as u64 };
    if us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// A cheap pseudo-random number below `n` (the delay's odds only).
fn fastrand_below(n: u64) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static STATE: AtomicU64 = AtomicU64::new(0x2545_f491_4f6c_dd1d);
    let mut x = STATE.load(Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Relaxed);
    x % n.max(1)
}

/// The replication position a snapshot corresponds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplAux {
    pub stream_db: i64,
    pub replid: [u8; 40],
    pub offset: i64,
}

/// The RDB type byte a value is written with.
pub(super) fn type_of(v: &Value) -> u8 {
    match v {
        Value::Str(_) => TYPE_STRING,
        Value::List(_) => TYPE_LIST_QUICKLIST_2,
        Value::Set(Set::Ints(_)) => TYPE_SET_INTSET,
        Value::Set(_) => TYPE_SET,
        Value::ZSet(z) if matches!(**z, ZSet::Small(_)) => TYPE_ZSET_LISTPACK,
        Value::ZSet(_) => TYPE_ZSET_2,
        Value::Hash(Hash::Listpack(_)) => TYPE_HASH_LISTPACK,
        Value::Hash(_) => TYPE_HASH,
        Value::Stream(_) => TYPE_STREAM_LISTPACKS_2,
    }
}

/// A value's body in the encoding [`type_of`] names (a file's keys, DUMP).
pub(super) fn write_value<W: Write>(w: &mut Writer<W>, v: &Value) -> io::Result<()> {
    match v {
        Value::Str(Str::Int(i)) => w.int_string(*i),
        Value::Str(s) => w.string(s.as_slice().unwrap_or_default()),
        Value::List(l) => write_list(w, l),
        Value::Stream(s) => super::stream::write_stream(w, s),
        Value::Set(Set::Ints(ints)) => {
            let vals: Vec<i64> = ints.iter().collect();
            w.string(&build_intset(&vals))
        }
        Value::Set(s) => {
            w.length(s.len() as u64)?;
            let mut res = Ok(());
            s.for_each(|m| {
                if res.is_ok() {
                    res = w.string(m);
                }
            });
            res
        }
        Value::ZSet(z) if matches!(**z, ZSet::Small(_)) => {
            let mut lp = LpBuilder::default();
            z.for_range(0, z.len(), false, &mut |it| {
                lp.push_str(it.member());
                push_score(&mut lp, it.score);
                true
            });
            w.string(&lp.finish())
        }
        Value::Hash(h @ Hash::Listpack(_)) => {
            let mut lp = LpBuilder::default();
            for (f, val) in h.iter() {
                lp.push_str(f);
                lp.push_str(val);
            }
            w.string(&lp.finish())
        }
        Value::ZSet(z) => {
            w.length(z.len() as u64)?;
            let mut res = Ok(());
            z.for_range(0, z.len(), false, &mut |it| {
                res = w.string(it.member()).and_then(|_| w.double(it.score));
                res.is_ok()
            });
            res
        }
        Value::Hash(h) => {
            w.length(h.len() as u64)?;
            h.iter().try_for_each(|(f, v)| w.string(f).and_then(|_| w.string(v)))
        }
    }
}

/// A score as Redis stores it in a listpack: integral values as integers,
/// others as the shortest text that reads back to the same double.
fn push_score(lp: &mut LpBuilder, score: f64) {
    if score == 0.0 && score.is_sign_negative() {
        lp.push_str(b"-0");
    } else if score.fract() == 0.0 && score.abs() < 9.0e15 {
        lp.push_int(score as i64);
    } else if score.is_infinite() {
        lp.push_str(if score > 0.0 { b"inf" } else { b"-inf" });
    } else {
        lp.push_str(format!("{score:e}").as_bytes());
    }
}

fn elem_len(e: Elem) -> usize {
    LpBuilder::with_backlen(match e {
        Elem::Int(i) => LpBuilder::int_entry_len(i),
        Elem::Bytes(b) => LpBuilder::entry_len(b),
    })
}

/// Split a list into ~8 KB listpack nodes: `node` gets each node's first
/// element index and element count (one pass to count, one to write).
fn list_nodes(l: &List, mut node: impl FnMut(usize, usize) -> io::Result<()>) -> io::Result<()> {
    let (mut start, mut count, mut bytes) = (0, 0, 7);
    for (i, e) in l.iter().enumerate() {
        let n = elem_len(e);
        if count > 0 && (bytes + n > LIST_NODE_BYTES || count == 65535) {
            node(start, count)?;
            (start, count, bytes) = (i, 0, 7);
        }
        count += 1;
        bytes += n;
    }
    if count > 0 {
        node(start, count)?;
    }
    Ok(())
}

/// A list as QUICKLIST_2: the node count, then each node as a packed
/// listpack (LZF-compressed by the string writer when that pays).
fn write_list<W: Write>(w: &mut Writer<W>, l: &List) -> io::Result<()> {
    let mut nodes = 0u64;
    list_nodes(l, |_, _| {
        nodes += 1;
        Ok(())
    })?;
    w.length(nodes)?;
    let mut it = l.iter();
    list_nodes(l, |_, count| {
        let mut lp = LpBuilder::default();
        for e in it.by_ref().take(count) {
            match e {
                Elem::Int(i) => lp.push_int(i),
                Elem::Bytes(b) => lp.push_str(b),
            }
        }
        w.length(QUICKLIST_NODE_PACKED)?;
        w.string(&lp.finish())
    })
}

fn aux<W: Write>(w: &mut Writer<W>, key: &str, val: &[u8]) -> io::Result<()> {
    w.byte(OP_AUX)?;
    w.string(key.as_bytes())?;
    w.string(val)
}

fn write_db<W: Write>(w: &mut Writer<W>, index: usize, db: &Db, delay_us: i64) -> io::Result<()> {
    w.byte(OP_SELECTDB)?;
    w.length(index as u64)?;
    w.byte(OP_RESIZEDB)?;
    w.length(db.len() as u64)?;
    w.length(db.volatile_count() as u64)?;
    for (key, e, expire_at) in db.iter_with_expiry() {
        if let Some(at) = expire_at {
            w.byte(OP_EXPIRETIME_MS)?;
            w.raw(&(at as u64).to_le_bytes())?;
        }
        w.byte(type_of(&e.value))?;
        w.string(key)?;
        write_value(w, &e.value)?;
        if delay_us != 0 {
            key_delay(delay_us);
        }
    }
    Ok(())
}

/// Write the whole keyspace as an RDB stream onto `out`; returns the sink.
/// `functions` are the codes of the function libraries (saved before the
/// keys, as Redis 7.0 does).
pub fn write_rdb<W: Write>(
    ks: &Keyspace,
    functions: &[Vec<u8>],
    out: W,
    opts: SaveOpts,
    used_mem: u64,
) -> io::Result<W> {
    let mut w = Writer::new(out, opts.compress);
    w.raw(format!("REDIS{RDB_VERSION:04}").as_bytes())?;
    let now = crate::server::unix_ms() / 1000;
    aux(&mut w, "redis-ver", b"7.0.15")?;
    aux(&mut w, "redis-bits", b"64")?;
    aux(&mut w, "ctime", now.to_string().as_bytes())?;
    aux(&mut w, "used-mem", used_mem.to_string().as_bytes())?;
    if let Some(repl) = opts.repl {
        aux(&mut w, "repl-stream-db", repl.stream_db.to_string().as_bytes())?;
        aux(&mut w, "repl-id", &repl.replid)?;
        aux(&mut w, "repl-offset", repl.offset.to_string().as_bytes())?;
    }
    aux(&mut w, "aof-base", b"0")?;
    for code in functions {
        w.byte(OP_FUNCTION2)?;
        w.string(code)?;
    }
    for (i, db) in ks.dbs.iter().enumerate().filter(|(_, db)| !db.is_empty()) {
        write_db(&mut w, i, db, opts.key_delay_us)?;
    }
    w.byte(OP_EOF)?;
    let (crc, mut out) = w.finish();
    out.write_all(&(if opts.checksum { crc } else { 0 }).to_le_bytes())?;
    Ok(out)
}

/// Save `ks` to `dir/filename` atomically through `dir/temp-<pid>.rdb`.
/// The error text says which step failed, for the log.
pub fn save_to_file(
    ks: &Keyspace,
    functions: &[Vec<u8>],
    dir: &Path,
    filename: &str,
    opts: SaveOpts,
    used_mem: u64,
) -> io::Result<()> {
    let tmp = dir.join(format!("temp-{}.rdb", std::process::id()));
    let file = File::create(&tmp).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "Failed opening the temp RDB file {} (in server root dir {}) for saving: {e}",
                tmp.display(),
                dir.display()
            ),
        )
    })?;
    let written = (|| {
        let buf = write_rdb(ks, functions, BufWriter::with_capacity(4 << 20, file), opts, used_mem)?;
        let file = buf.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, dir.join(filename))
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io::Error::new(e.kind(), format!("Write error saving DB on disk: {e}")));
    }
    Ok(())
}
