//! Loading the AOF at start: read the manifest, replay the base and then the
//! incr files in order through the normal dispatch as a fake client (replies
//! dropped; MULTI/EXEC in the file run atomically; SELECT works), and open
//! the last incr file for appending.
//!
//! A command cut short at the end of the last file (a crash mid-write) is
//! dropped and the file truncated there (`aof-load-truncated yes`), as is a
//! MULTI block without its EXEC. Anything else that doesn't parse stops the
//! start with the file's name and the byte offset.
use std::fs::{self, OpenOptions};
use std::path::Path;
use std::time::Instant;

use super::manifest::{AofFile, FileType, Manifest};
use super::{aof_dir, manifest_name, State};
use crate::dispatch::{self, Argv, Registry};
use crate::persistence::aof_mut;
use crate::server::{unix_ms, ClientInfo, Server};

/// How a file ended.
enum Ending {
    Complete,
    /// A partial command (or an open MULTI) starts at this offset.
    Truncated(usize),
}

/// Load whatever AOF exists: multi-part (manifest), or an old single file
/// in `dir` (upgraded to the multi-part layout, as Redis 7 does).
///
/// Nothing expires while the files replay (Redis's `keyIsExpired` while
/// loading): each command was logged when its keys were live, so an INCR
/// of a key whose deadline has passed since must find it, not create a
/// new one without a TTL. Keys still past their deadline afterwards are
/// expired as usual, their DELs logged.
pub fn load_at_start(srv: &mut Server, reg: &'static Registry) -> Result<(), String> {
    srv.keyspace.dbs.iter_mut().for_each(|db| db.expiry_off = true);
    let loaded = load_files(srv, reg);
    srv.keyspace.dbs.iter_mut().for_each(|db| db.expiry_off = false);
    loaded
}

fn load_files(srv: &mut Server, reg: &'static Registry) -> Result<(), String> {
    let dir = aof_dir(&srv.config);
    let manifest_path = dir.join(manifest_name(&srv.config));
    let started = Instant::now();
    let manifest = match fs::read_to_string(&manifest_path) {
        Ok(text) => Manifest::parse(&text)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return upgrade_old_style(srv, reg, &dir),
        Err(e) => return Err(format!("Can't read the AOF manifest {}: {e}", manifest_path.display())),
    };
    if interrupted_upgrade(&srv.config.appendfilename, &dir, &manifest) {
        return upgrade_old_style(srv, reg, &dir);
    }
    let files: Vec<&AofFile> = manifest.base.iter().chain(&manifest.incrs).collect();
    check_files_exist(&dir, &files)?;
    for (i, f) in files.iter().enumerate() {
        let path = dir.join(&f.name);
        let last = i + 1 == files.len();
        if f.kind == FileType::Incr && !path.exists() && last {
            // Created by a crash right after the manifest named it.
            continue;
        }
        let t = Instant::now();
        replay_file(srv, reg, &path, last)?;
        let what = if f.kind == FileType::Base { "base" } else { "incr" };
        crate::log_at!(Notice, "DB loaded from {what} file {}: {:.3} seconds", f.name, t.elapsed().as_secs_f64());
    }
    if !files.is_empty() {
        crate::log_at!(Notice, "DB loaded from append only file: {:.3} seconds", started.elapsed().as_secs_f64());
    }
    aof_mut(&mut srv.persistence).manifest = manifest;
    Ok(())
}

/// An upgrade from an old single file that stopped before the file was
/// moved (Redis's `loadAppendOnlyFiles` conditions): the old file is still
/// beside the AOF directory and the manifest names nothing else, or only it
/// as the base while the directory lacks it. The upgrade is done again.
fn interrupted_upgrade(old_name: &str, dir: &Path, m: &Manifest) -> bool {
    let old = dir.parent().map(|root| root.join(old_name)).is_some_and(|p| p.is_file());
    let only_old_base = m.base.as_ref().is_some_and(|b| b.name == old_name) && !dir.join(old_name).exists();
    old && m.incrs.is_empty() && (m.base.is_none() || only_old_base)
}

/// Every file the manifest names must be there before any is loaded, as
/// Redis sizes them all first (but the last incr file, which a crash right
/// after the manifest named it may have left uncreated: it is empty).
fn check_files_exist(dir: &Path, files: &[&AofFile]) -> Result<(), String> {
    for (i, f) in files.iter().enumerate() {
        let tolerated = f.kind == FileType::Incr && i + 1 == files.len();
        match fs::metadata(dir.join(&f.name)) {
            Err(e) if !(tolerated && e.kind() == std::io::ErrorKind::NotFound) => {
                let why = e.to_string();
                let why = why.split(" (os error").next().unwrap_or(&why);
                return Err(format!("Unable to obtain the AOF file {} length. stat: {why}", f.name));
            }
            _ => {}
        }
    }
    Ok(())
}

/// `dir/appendfilename` without a manifest: a Redis < 7 AOF. Load it, then
/// move it into the AOF directory as the base of a new manifest.
fn upgrade_old_style(srv: &mut Server, reg: &'static Registry, dir: &Path) -> Result<(), String> {
    let cfg = &srv.config;
    let root = dir.parent().map(Path::to_path_buf).unwrap_or_default();
    let old = root.join(&cfg.appendfilename);
    if !old.is_file() {
        return Ok(());
    }
    let name = cfg.appendfilename.clone();
    let mname = manifest_name(cfg);
    replay_file(srv, reg, &old, true)?;
    crate::log_at!(Notice, "Loaded the old-style AOF {}; upgrading to the multi part AOF layout", old.display());
    fs::create_dir_all(dir).map_err(|e| format!("Can't create the AOF directory {}: {e}", dir.display()))?;
    fs::rename(&old, dir.join(&name))
        .map_err(|e| format!("Can't move {} into {}: {e}", old.display(), dir.display()))?;
    let m = Manifest { base: Some(AofFile { name, seq: 1, kind: FileType::Base }), ..Manifest::default() };
    m.persist(dir, &mname).map_err(|e| format!("Can't write the AOF manifest: {e}"))?;
    aof_mut(&mut srv.persistence).manifest = m;
    Ok(())
}

/// After loading: make sure a base and an incr file exist, and open the
/// last incr file for appending.
pub fn open_on_start(srv: &mut Server) -> std::io::Result<()> {
    let cfg = &srv.config;
    let dir = aof_dir(cfg);
    fs::create_dir_all(&dir)?;
    let mut m = aof_mut(&mut srv.persistence).manifest.clone();
    let mut changed = false;
    if m.base.is_none() && m.incrs.is_empty() {
        // A fresh start: the first base holds whatever is loaded (nothing).
        let format = super::rewrite::base_format(cfg);
        let name = format!("{}.1.{}", cfg.appendfilename, super::rewrite::base_suffix(format));
        let functions = crate::persistence::function_codes(srv);
        let stamp = cfg.aof_timestamp_enabled;
        super::rewrite::write_base(&srv.keyspace, &functions, &dir.join(&name), format, stamp)?;
        crate::log_at!(Notice, "Creating AOF base file {name} on server start");
        m.base = Some(AofFile { name, seq: 1, kind: FileType::Base });
        changed = true;
    }
    if m.incrs.is_empty() {
        m.add_incr(|seq| format!("{}.{seq}.incr.aof", cfg.appendfilename));
        let name = &m.incrs[m.incrs.len() - 1].name;
        crate::log_at!(Notice, "Creating AOF incr file {name} on server start");
        changed = true;
    }
    if changed {
        m.persist(&dir, &manifest_name(cfg))?;
    }
    let incr = m.incrs.last().map(|f| f.name.clone()).unwrap_or_default();
    let file = OpenOptions::new().create(true).append(true).open(dir.join(&incr))?;
    let size = |f: &AofFile| fs::metadata(dir.join(&f.name)).map_or(0, |md| md.len());
    let aof = aof_mut(&mut srv.persistence);
    aof.base_size = m.base.as_ref().map_or(0, size);
    aof.current_size = aof.base_size + m.incrs.iter().map(size).sum::<u64>();
    aof.rewrite_base_size = aof.current_size;
    aof.manifest = m;
    aof.file = Some(file);
    aof.incr_name = incr;
    aof.state = State::On;
    Ok(())
}

/// Replay one file. A truncated tail is cut off if this is the last file
/// and `aof-load-truncated` allows it; everything else is an error.
fn replay_file(srv: &mut Server, reg: &'static Registry, path: &Path, last: bool) -> Result<(), String> {
    let name = path.display();
    let data = fs::read(path).map_err(|e| format!("Can't read the append only file {name}: {e}"))?;
    // An RDB base, or an old single file with an RDB preamble: commands may follow.
    let skip = if data.starts_with(b"REDIS") { load_preamble(srv, &data, &name.to_string())? } else { 0 };
    let ending = replay_bytes(srv, reg, &data[skip..]).map_err(|(off, why)| match why {
        // Redis's words: a command this server does not know is no corruption.
        Corrupt::Unknown(cmd) => {
            let file = path.file_name().map_or(name.to_string(), |f| f.to_string_lossy().into_owned());
            format!("Unknown command '{cmd}' reading the append only file {file}")
        }
        Corrupt::Format(why) => {
            let off = off + skip;
            format!(
                "Bad file format reading the append only file {name} at offset {off}: {why}. Make a backup of your \
                 AOF file, then fix it (e.g. redis-check-aof --fix)"
            )
        }
    })?;
    let Ending::Truncated(at) = ending else { return Ok(()) };
    let at = at + skip;
    if !last || !srv.config.aof_load_truncated {
        return Err(format!(
            "Unexpected end of file reading the append only file {name} at offset {at}. You can: 1) Make a backup \
             of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set \
             the 'aof-load-truncated' configuration option to yes and restart the server."
        ));
    }
    crate::log_at!(Warning, "!!! Warning: short read while loading the AOF file {name}!!!");
    crate::log_at!(Warning, "!!! Truncating the AOF {name} at offset {at} !!!");
    let f = OpenOptions::new().write(true).open(path).map_err(|e| format!("Can't open {name} to truncate it: {e}"))?;
    f.set_len(at as u64).map_err(|e| format!("Error truncating the AOF file {name}: {e}"))?;
    f.sync_all().map_err(|e| format!("Error syncing the AOF file {name}: {e}"))?;
    crate::log_at!(Warning, "AOF {name} loaded anyway because aof-load-truncated is enabled");
    Ok(())
}

/// Load the RDB snapshot that starts `data`; returns its length.
fn load_preamble(srv: &mut Server, data: &[u8], name: &str) -> Result<usize, String> {
    let mut rest = data;
    let mut stats = crate::persistence::rdb::load::load_aof_base(&mut srv.keyspace, &mut rest, &srv.config, unix_ms())
        .map_err(|e| format!("Bad RDB data in the append only file {name} at byte offset {}: {}", e.offset, e.msg))?;
    let codes = std::mem::take(&mut stats.functions);
    crate::persistence::install_functions(srv, &codes)
        .map_err(|e| format!("Can't load the functions of the append only file {name}: {e}"))?;
    crate::log_at!(Notice, "Reading RDB base file on AOF loading... {name}: {} keys loaded", stats.keys_loaded);
    Ok(data.len() - rest.len())
}

/// Why replaying stopped short.
enum Corrupt {
    Format(String),
    /// A command name the registry does not know.
    Unknown(String),
}

/// Run every command in `data` as a fake client: `Err((offset, why))` on
/// corruption.
fn replay_bytes(srv: &mut Server, reg: &'static Registry, data: &[u8]) -> Result<Ending, (usize, Corrupt)> {
    let cid = srv.clients.insert(ClientInfo::new(
        crate::server::AOF_CLIENT_ID,
        -1,
        "aof".into(),
        String::new(),
        unix_ms(),
        true,
    ));
    let result = run_commands(srv, reg, cid, data);
    srv.blocking.unblock(cid);
    srv.unwatch_all(cid);
    srv.clients.remove(cid);
    result
}

fn run_commands(srv: &mut Server, reg: &'static Registry, cid: usize, data: &[u8]) -> Result<Ending, (usize, Corrupt)> {
    let mut parser = resp::RequestParser::new();
    let mut args = resp::Args::default();
    let limits = resp::request::Limits { max_bulk_len: u64::MAX >> 1, auth_required: false };
    let mut out = Vec::new();
    let mut pos = 0;
    let mut multi_at = None;
    while pos < data.len() {
        if data[pos] == b'#' {
            // An annotation (`aof-timestamp-enabled`'s `#TS:...`): skipped, as Redis does.
            match data[pos..].iter().position(|&b| b == b'\n') {
                Some(n) => pos += n + 1,
                None => return Ok(Ending::Truncated(multi_at.unwrap_or(pos))),
            }
            continue;
        }
        if data[pos] != b'*' {
            return Err((pos, Corrupt::Format(format!("expected '*', found byte {:#04x}", data[pos]))));
        }
        let n = match parser.parse(&data[pos..], &mut args, limits) {
            Ok(resp::request::Parsed::Frame(n)) => n,
            Ok(resp::request::Parsed::Incomplete { .. }) => return Ok(Ending::Truncated(multi_at.unwrap_or(pos))),
            Err(e) => return Err((pos, Corrupt::Format(e.0))),
        };
        let frame = &data[pos..pos + n];
        let argv = Argv::new(frame, &args);
        if argv.is_empty() {
            return Err((pos, Corrupt::Format("empty command".into())));
        }
        if let dispatch::registry::Lookup::Rejected(..) = reg.lookup(&argv) {
            let cmd = String::from_utf8_lossy(argv.get(0)).into_owned();
            return Err((pos, Corrupt::Unknown(cmd)));
        }
        if argv.is(0, "multi") {
            multi_at = Some(pos);
        } else if argv.is(0, "exec") {
            multi_at = None;
        }
        out.clear();
        dispatch::execute(srv, reg, cid, &mut out, &argv, unix_ms());
        pos += n;
    }
    Ok(multi_at.map_or(Ending::Complete, Ending::Truncated))
}
