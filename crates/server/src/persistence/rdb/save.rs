//! Writing the keyspace as an RDB version 10 file, as Redis 7.0 does: AUX
//! fields, then per non-empty db SELECTDB + RESIZEDB and its keys (with
//! EXPIRETIME_MS), EOF and the CRC64 trailer. Values use encodings every
//! Redis 7.0 loads: strings (integer / LZF / raw), plain lists, intsets or
//! plain sets, ZSET_2 and plain hashes. Files are written atomically: a
//! `temp-<pid>.rdb` beside the target, fsynced, then renamed over it.
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::format::*;
use super::packed::build_intset;
use crate::engine::list::Elem;
use crate::engine::set::Set;
use crate::engine::{Db, Keyspace, Str, Value};

/// Options from the configuration that shape the file.
#[derive(Debug, Clone, Copy)]
pub struct SaveOpts {
    /// LZF for strings longer than 20 bytes (`rdbcompression`).
    pub compress: bool,
    /// Write the real CRC64 (`rdbchecksum`); otherwise zero, as Redis does.
    pub checksum: bool,
}

/// The RDB type byte a value is written with.
fn type_of(v: &Value) -> u8 {
    match v {
        Value::Str(_) => TYPE_STRING,
        Value::List(_) => TYPE_LIST,
        Value::Set(Set::Ints(_)) => TYPE_SET_INTSET,
        Value::Set(_) => TYPE_SET,
        Value::ZSet(_) => TYPE_ZSET_2,
        Value::Hash(_) => TYPE_HASH,
    }
}

fn write_value<W: Write>(w: &mut Writer<W>, v: &Value) -> io::Result<()> {
    match v {
        Value::Str(Str::Int(i)) => w.int_string(*i),
        Value::Str(s) => w.string(s.as_slice().unwrap_or_default()),
        Value::List(l) => {
            w.length(l.len() as u64)?;
            l.iter().try_for_each(|e| match e {
                Elem::Int(i) => w.int_string(i),
                Elem::Bytes(b) => w.string(b),
            })
        }
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

fn aux<W: Write>(w: &mut Writer<W>, key: &str, val: &[u8]) -> io::Result<()> {
    w.byte(OP_AUX)?;
    w.string(key.as_bytes())?;
    w.string(val)
}

fn write_db<W: Write>(w: &mut Writer<W>, index: usize, db: &Db) -> io::Result<()> {
    w.byte(OP_SELECTDB)?;
    w.length(index as u64)?;
    w.byte(OP_RESIZEDB)?;
    w.length(db.len() as u64)?;
    w.length(db.volatile_count() as u64)?;
    for (key, e) in db.iter() {
        if let Some(at) = e.is_volatile().then(|| db.expire_of(key)).flatten() {
            w.byte(OP_EXPIRETIME_MS)?;
            w.raw(&(at as u64).to_le_bytes())?;
        }
        w.byte(type_of(&e.value))?;
        w.string(key)?;
        write_value(w, &e.value)?;
    }
    Ok(())
}

/// Write the whole keyspace as an RDB stream onto `out`; returns the sink.
pub fn write_rdb<W: Write>(ks: &Keyspace, out: W, opts: SaveOpts, used_mem: u64) -> io::Result<W> {
    let mut w = Writer::new(out, opts.compress);
    w.raw(format!("REDIS{RDB_VERSION:04}").as_bytes())?;
    let now = crate::server::unix_ms() / 1000;
    aux(&mut w, "redis-ver", b"7.0.15")?;
    aux(&mut w, "redis-bits", b"64")?;
    aux(&mut w, "ctime", now.to_string().as_bytes())?;
    aux(&mut w, "used-mem", used_mem.to_string().as_bytes())?;
    aux(&mut w, "aof-base", b"0")?;
    for (i, db) in ks.dbs.iter().enumerate().filter(|(_, db)| !db.is_empty()) {
        write_db(&mut w, i, db)?;
    }
    w.byte(OP_EOF)?;
    let (crc, mut out) = w.finish();
    out.write_all(&(if opts.checksum { crc } else { 0 }).to_le_bytes())?;
    Ok(out)
}

/// Save `ks` to `dir/filename` atomically through `dir/temp-<pid>.rdb`.
/// The error text says which step failed, for the log.
pub fn save_to_file(ks: &Keyspace, dir: &Path, filename: &str, opts: SaveOpts, used_mem: u64) -> io::Result<()> {
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
        let buf = write_rdb(ks, BufWriter::with_capacity(4 << 20, file), opts, used_mem)?;
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
