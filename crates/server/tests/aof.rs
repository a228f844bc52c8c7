//! The append-only file over real restarts: every data type replays,
//! expiries are written as absolute times, transactions stay atomic in the
//! file, rewrites (BGREWRITEAOF, CONFIG SET appendonly yes) lose nothing,
//! a truncated tail loads with a warning and corruption refuses to start.
mod aof_support;
mod common;

use std::io::Write;
use std::time::Duration;

use aof_support::*;
use common::*;

/// Writes of every type, across databases, including translated commands.
fn write_every_type(c: &mut Client) {
    let cmds: &[&[&str]] = &[
        &["SET", "s", "hello"],
        &["SET", "n", "10"],
        &["INCRBY", "n", "5"],
        &["INCRBYFLOAT", "f", "1.25"],
        &["APPEND", "s", " world"],
        &["RPUSH", "l", "a", "b", "c", "d"],
        &["LPOP", "l"],
        &["SADD", "set", "x", "y", "z", "w"],
        &["SADD", "ints", "1", "2", "3"],
        &["SPOP", "set"],
        &["HSET", "h", "f1", "v1", "f2", "v2"],
        &["HINCRBYFLOAT", "h", "fl", "0.5"],
        &["ZADD", "z", "1.5", "a", "2", "b", "-3", "c"],
        &["ZINCRBY", "z", "0.25", "a"],
        &["ZPOPMAX", "z"],
        &["SET", "gone", "1"],
        &["DEL", "gone"],
        &["SELECT", "2"],
        &["SET", "other-db", "v"],
        &["LPUSH", "l2", "q"],
        &["SELECT", "0"],
        &["EXPIRE", "s", "1000"],
        &["SETEX", "sx", "1000", "v"],
    ];
    for args in cmds {
        let reply = c.cmd(args);
        assert!(!matches!(reply, Frame::Error(_)), "{args:?} failed: {reply:?}");
    }
}

#[test]
fn restart_replays_every_type_and_database() {
    let dir = DataDir::new("types");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    write_every_type(&mut c);
    let before = dump(&mut c, 3);
    assert!(before.len() >= 10, "{before:?}");
    kill9(&mut srv);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(dump(&mut c, 3), before);
    let log = srv.log();
    assert!(log.contains("DB loaded from append only file"), "{log}");
}

#[test]
fn relative_expiries_are_written_as_absolute_times() {
    let dir = DataDir::new("expire");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "k", "v", "PX", "4000"]), ok());
    assert_eq!(c.cmd(&["SETEX", "k2", "100", "v"]), ok());
    assert_eq!(c.cmd(&["SET", "short", "v", "PX", "200"]), ok());
    assert_eq!(c.cmd(&["SET", "k3", "v"]), ok());
    assert_eq!(c.cmd(&["PEXPIRE", "k3", "4000"]), int(1));
    let incr = std::fs::read_to_string(dir.last_incr()).unwrap();
    assert!(incr.contains("PXAT") && incr.contains("PEXPIREAT"), "{incr}");
    assert!(!incr.contains("SETEX") && !incr.contains("PEXPIRE\r"), "{incr}");
    std::thread::sleep(Duration::from_millis(1500));
    kill9(&mut srv);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    for key in ["k", "k3"] {
        let Frame::Integer(left) = c.cmd(&["PTTL", key]) else { panic!("PTTL") };
        // Had the TTL restarted at replay it would be ~4000 again.
        assert!(left > 0 && left <= 2600, "{key}: {left} ms left after 1.5 s of a 4 s TTL");
    }
    let Frame::Integer(left) = c.cmd(&["TTL", "k2"]) else { panic!("TTL") };
    assert!((95..=100).contains(&left), "{left}");
    assert_eq!(c.cmd(&["EXISTS", "short"]), int(0));
}

#[test]
fn expired_keys_are_deleted_in_the_file() {
    let dir = DataDir::new("expired");
    let srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "lazy", "v", "PX", "50"]), ok());
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(c.cmd(&["GET", "lazy"]), Frame::Null);
    let incr = std::fs::read_to_string(dir.last_incr()).unwrap();
    assert!(incr.ends_with("*2\r\n$3\r\nDEL\r\n$4\r\nlazy\r\n"), "{incr:?}");
    // Nobody reads this one: the active expiry cycle deletes it.
    assert_eq!(c.cmd(&["SET", "active", "v", "PX", "50"]), ok());
    let deleted = wait_for(Duration::from_secs(5), || {
        std::fs::read_to_string(dir.last_incr()).unwrap().ends_with("*2\r\n$3\r\nDEL\r\n$6\r\nactive\r\n")
    });
    assert!(deleted, "no DEL for the actively expired key");
}

/// The base a rewrite writes, in either format, and the incr file after it
/// describe one keyspace: a key live at the rewrite whose deadline passed
/// before the restart is still there for what the incr file did to it
/// (Redis loads an AOF base keeping expired keys, and nothing expires
/// while the files replay); a key already expired but not yet deleted is
/// in the base too, and gone once the server runs.
#[test]
fn a_base_keeps_keys_whose_deadline_passed_for_the_incr_file() {
    for preamble in ["yes", "no"] {
        let dir = DataDir::new(&format!("past-deadline-{preamble}"));
        let mut srv = start_aof(
            &dir,
            &["--appendfsync", "always", "--aof-use-rdb-preamble", preamble, "--enable-debug-command", "yes"],
        );
        let mut c = srv.client();
        assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
        let set_at = std::time::Instant::now();
        assert_eq!(c.cmd(&["SET", "k", "10", "PX", "3000"]), ok());
        assert_eq!(c.cmd(&["SET", "stale", "v", "PX", "1"]), ok());
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(c.cmd(&["BGREWRITEAOF"]), simple("Background append only file rewriting started"));
        wait_rewrites(&mut c, 1);
        assert_eq!(c.cmd(&["INCR", "k"]), int(11), "{preamble}: k expired before the test could use it");
        assert_eq!(c.cmd(&["PERSIST", "k"]), int(1));
        let base = dir.manifest().lines().find(|l| l.contains("type b")).unwrap().split(' ').nth(1).unwrap().to_owned();
        let base = std::fs::read(dir.aof_dir().join(base)).unwrap();
        assert!(base.windows(5).any(|w| w == b"stale"), "{preamble}: the expired key is not in the base");
        std::thread::sleep(Duration::from_millis(3200).saturating_sub(set_at.elapsed()));
        kill9(&mut srv);
        let srv = start_aof(&dir, &[]);
        let mut c = srv.client();
        assert_eq!(c.cmd(&["GET", "k"]), bulk("11"), "aof-use-rdb-preamble {preamble}");
        assert_eq!(c.cmd(&["TTL", "k"]), int(-1), "aof-use-rdb-preamble {preamble}");
        assert_eq!(c.cmd(&["EXISTS", "stale"]), int(0));
    }
}

#[test]
fn exec_is_one_multi_exec_block_in_the_file() {
    let dir = DataDir::new("multi");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["INCR", "a"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["GET", "a"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["INCR", "b"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![int(1), bulk("1"), int(1)]));
    // A read-only transaction leaves nothing.
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["GET", "a"]), simple("QUEUED"));
    assert_eq!(c.cmd(&["EXEC"]), arr(vec![bulk("1")]));
    let incr = std::fs::read_to_string(dir.last_incr()).unwrap();
    let want =
        "*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\na\r\n*2\r\n$4\r\nINCR\r\n$1\r\nb\r\n*1\r\n$4\r\nEXEC\r\n";
    assert!(incr.ends_with(want), "{incr:?}");
    kill9(&mut srv);
    // A crash in the middle of the block: the whole block is dropped.
    let cut = incr.len() - "*1\r\n$4\r\nEXEC\r\n".len();
    std::fs::OpenOptions::new().write(true).open(dir.last_incr()).unwrap().set_len(cut as u64).unwrap();
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["MGET", "a", "b"]), arr(vec![Frame::Null, Frame::Null]));
    assert!(srv.log().contains("Truncating the AOF"), "{}", srv.log());
}

/// A writer thread pipelining `RPUSH log i` + `HSET hlog i i` batches
/// (paced, so the dataset stays small) until told to stop; returns how
/// many pushes were acknowledged.
fn spawn_writer(port: u16, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut c = Client::connect(port);
        let mut i = 0;
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            let mut batch = Vec::new();
            for j in i..i + 50 {
                resp::encode_command(&mut batch, &["RPUSH", "log", &j.to_string()]);
                resp::encode_command(&mut batch, &["HSET", "hlog", &j.to_string(), &j.to_string()]);
            }
            c.send(&batch);
            for j in i..i + 50 {
                assert_eq!(c.read_frame(), int(j as i64 + 1));
                assert_eq!(c.read_frame(), int(1));
            }
            i += 50;
            std::thread::sleep(Duration::from_millis(1));
        }
        i
    })
}

#[test]
fn bgrewriteaof_while_writing_then_restart_equals() {
    let dir = DataDir::new("rewrite");
    let mut srv = start_aof(&dir, &["--appendfsync", "everysec"]);
    let mut c = srv.client();
    write_every_type(&mut c);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = spawn_writer(srv.port, stop.clone());
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(c.cmd(&["BGREWRITEAOF"]), simple("Background append only file rewriting started"));
    let again = c.cmd(&["BGREWRITEAOF"]);
    // Either still running (error) or already done (a second one starts).
    assert!(
        again == err("ERR Background append only file rewriting already in progress")
            || again == simple("Background append only file rewriting started"),
        "{again:?}"
    );
    wait_rewrites(&mut c, 1);
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let pushed = writer.join().unwrap();
    assert!(pushed > 0);
    assert_eq!(c.cmd(&["LLEN", "log"]), int(pushed as i64));
    let before = dump(&mut c, 3);
    wait_rewrites(&mut c, 1);
    let manifest = dir.manifest();
    assert!(manifest.contains("type b") && !manifest.contains("seq 1 type b"), "{manifest}");
    assert!(!manifest.contains("type h"), "{manifest}");
    let files = std::fs::read_dir(dir.aof_dir()).unwrap().count();
    assert_eq!(files, 3, "base + incr + manifest: {manifest}");
    let mut shutdown = Vec::new();
    resp::encode_command(&mut shutdown, &["SHUTDOWN"]);
    c.send(&shutdown);
    assert!(srv.wait_exit(Duration::from_secs(10)).expect("shutdown").success());
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(dump(&mut c, 3), before);
}

#[test]
fn config_set_appendonly_yes_at_runtime_then_restart() {
    let dir = DataDir::new("runtime");
    let srv = TestServer::start(&["--dir", dir.path()]);
    let mut c = srv.client();
    assert_eq!(info_field(&mut c, "persistence", "aof_enabled"), "0");
    write_every_type(&mut c);
    assert_eq!(c.cmd(&["CONFIG", "SET", "appendonly", "yes"]), ok());
    assert_eq!(c.cmd(&["CONFIG", "SET", "appendfsync", "always"]), ok());
    assert_eq!(c.cmd(&["RPUSH", "during", "1"]), int(1));
    wait_rewrites(&mut c, 1);
    assert_eq!(info_field(&mut c, "persistence", "aof_enabled"), "1");
    assert_eq!(c.cmd(&["RPUSH", "during", "2"]), int(2));
    let before = dump(&mut c, 3);
    let manifest = dir.manifest();
    assert!(manifest.contains("type b") && manifest.contains("type i"), "{manifest}");
    drop(srv); // SIGKILL
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(dump(&mut c, 3), before);
    // And off again: writes stop reaching the file.
    assert_eq!(c.cmd(&["CONFIG", "SET", "appendonly", "no"]), ok());
    let size = std::fs::metadata(dir.last_incr()).unwrap().len();
    assert_eq!(c.cmd(&["SET", "after-off", "1"]), ok());
    assert_eq!(std::fs::metadata(dir.last_incr()).unwrap().len(), size);
    assert_eq!(info_field(&mut c, "persistence", "aof_enabled"), "0");
}

#[test]
fn truncated_tail_loads_with_a_warning() {
    let dir = DataDir::new("trunc");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    for i in 0..20 {
        assert_eq!(c.cmd(&["RPUSH", "l", &i.to_string()]), int(i + 1));
    }
    kill9(&mut srv);
    let incr = dir.last_incr();
    let good = std::fs::metadata(&incr).unwrap().len();
    let mut f = std::fs::OpenOptions::new().append(true).open(&incr).unwrap();
    f.write_all(b"*3\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$2\r\n2").unwrap();
    drop(f);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["LLEN", "l"]), int(20));
    let log = srv.log();
    assert!(log.contains("short read") && log.contains(&format!("at offset {good}")), "{log}");
    assert_eq!(std::fs::metadata(&incr).unwrap().len(), good);
    // Appending continues after the cut.
    assert_eq!(c.cmd(&["RPUSH", "l", "20"]), int(21));
}

#[test]
fn truncated_tail_refused_when_aof_load_truncated_is_no() {
    let dir = DataDir::new("trunc-no");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    assert_eq!(srv.client().cmd(&["SET", "k", "v"]), ok());
    kill9(&mut srv);
    let mut f = std::fs::OpenOptions::new().append(true).open(dir.last_incr()).unwrap();
    f.write_all(b"*2\r\n$3\r\nDEL").unwrap();
    drop(f);
    let (status, log) = start_expecting_failure(&dir.0, &["--aof-load-truncated", "no"]);
    assert!(!status.success());
    assert!(log.contains("Unexpected end of file"), "{log}");
}

#[test]
fn corruption_in_the_middle_refuses_to_start_naming_file_and_offset() {
    let dir = DataDir::new("corrupt");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    for i in 0..10 {
        assert_eq!(c.cmd(&["SET", &format!("k{i}"), "v"]), ok());
    }
    kill9(&mut srv);
    let incr = dir.last_incr();
    let mut data = std::fs::read(&incr).unwrap();
    let at = data.len() / 2;
    // Garbage at a command boundary near the middle.
    let boundary = at + data[at..].iter().position(|&b| b == b'*').unwrap();
    data.splice(boundary..boundary, b"garbage!".iter().copied());
    std::fs::write(&incr, &data).unwrap();
    let (status, log) = start_expecting_failure(&dir.0, &[]);
    assert!(!status.success());
    let name = incr.file_name().unwrap().to_str().unwrap();
    assert!(log.contains(name) && log.contains(&format!("at offset {boundary}")), "{log}");
    assert!(log.contains("Bad file format"), "{log}");
}

#[test]
fn info_persistence_reports_aof_state() {
    let dir = DataDir::new("info");
    let srv = start_aof(&dir, &["--appendfsync", "everysec"]);
    let mut c = srv.client();
    assert_eq!(info_field(&mut c, "persistence", "aof_enabled"), "1");
    assert_eq!(info_field(&mut c, "persistence", "aof_rewrites"), "0");
    let size0: u64 = info_field(&mut c, "persistence", "aof_current_size").parse().unwrap();
    assert_eq!(c.cmd(&["SET", "k", "0123456789"]), ok());
    let size1: u64 = info_field(&mut c, "persistence", "aof_current_size").parse().unwrap();
    assert!(size1 > size0, "{size0} -> {size1}");
    assert_eq!(info_field(&mut c, "persistence", "aof_last_write_status"), "ok");
    assert_eq!(info_field(&mut c, "persistence", "aof_buffer_length"), "0");
    assert_eq!(c.cmd(&["BGREWRITEAOF"]), simple("Background append only file rewriting started"));
    wait_rewrites(&mut c, 1);
    assert_eq!(info_field(&mut c, "persistence", "aof_last_bgrewrite_status"), "ok");
    let base: u64 = info_field(&mut c, "persistence", "aof_base_size").parse().unwrap();
    assert!(base > 0);
}

#[test]
fn automatic_rewrite_when_the_file_doubled() {
    let dir = DataDir::new("auto");
    let srv = start_aof(
        &dir,
        &["--appendfsync", "no", "--auto-aof-rewrite-percentage", "100", "--auto-aof-rewrite-min-size", "20kb"],
    );
    let mut c = srv.client();
    let value = "v".repeat(1000);
    for i in 0..40 {
        assert_eq!(c.cmd(&["SET", &format!("k{}", i % 5), &value]), ok());
    }
    wait_rewrites(&mut c, 1);
    assert!(srv.log().contains("Starting automatic rewriting of AOF"), "{}", srv.log());
    // The new base holds 5 keys, not 40 writes.
    let base: u64 = info_field(&mut c, "persistence", "aof_base_size").parse().unwrap();
    assert!(base < 8000, "base of {base} bytes");
}

#[test]
fn bgrewriteaof_with_aof_off_writes_a_base() {
    let dir = DataDir::new("off-rewrite");
    let srv = TestServer::start(&["--dir", dir.path()]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(c.cmd(&["BGREWRITEAOF"]), simple("Background append only file rewriting started"));
    wait_rewrites(&mut c, 1);
    let manifest = dir.manifest();
    assert!(manifest.contains("type b") && !manifest.contains("type i"), "{manifest}");
    drop(srv);
    let srv = start_aof(&dir, &[]);
    assert_eq!(srv.client().cmd(&["GET", "k"]), bulk("v"));
}

/// An upgrade cut short after the manifest was written but before the old
/// file moved is done again, as Redis does, instead of failing on the
/// base the manifest names but the directory lacks.
#[test]
fn an_interrupted_upgrade_is_resumed() {
    let dir = DataDir::new("upgrade-resumed");
    let mut old = Vec::new();
    resp::encode_command(&mut old, &["SET", "legacy", "yes"]);
    std::fs::write(dir.0.join("appendonly.aof"), &old).unwrap();
    std::fs::create_dir_all(dir.aof_dir()).unwrap();
    std::fs::write(dir.aof_dir().join("appendonly.aof.manifest"), "file appendonly.aof seq 1 type b\n").unwrap();
    let srv = start_aof(&dir, &[]);
    assert_eq!(srv.client().cmd(&["GET", "legacy"]), bulk("yes"));
    assert!(dir.aof_dir().join("appendonly.aof").is_file() && !dir.0.join("appendonly.aof").exists());
    assert!(dir.manifest().starts_with("file appendonly.aof seq 1 type b\n"), "{}", dir.manifest());
}

/// With `aof-disable-auto-gc yes` the files rewrites replace stay, listed
/// newest first as history; switching it off deletes them at once.
#[test]
fn history_is_kept_while_auto_gc_is_off() {
    let dir = DataDir::new("auto-gc");
    let srv = start_aof(&dir, &["--aof-disable-auto-gc", "yes"]);
    let mut c = srv.client();
    for n in 1..=2 {
        assert_eq!(c.cmd(&["SET", "k", &n.to_string()]), ok());
        assert_eq!(c.cmd(&["BGREWRITEAOF"]), simple("Background append only file rewriting started"));
        wait_rewrites(&mut c, n);
    }
    let manifest = dir.manifest();
    let history: Vec<&str> = manifest.lines().filter(|l| l.ends_with("type h")).collect();
    let want = [
        "appendonly.aof.2.incr.aof",
        "appendonly.aof.2.base.rdb",
        "appendonly.aof.1.incr.aof",
        "appendonly.aof.1.base.rdb",
    ];
    let names: Vec<&str> = history.iter().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!(names, want, "{manifest}");
    assert!(want.iter().all(|f| dir.aof_dir().join(f).is_file()));
    assert_eq!(c.cmd(&["CONFIG", "SET", "aof-disable-auto-gc", "no"]), ok());
    assert!(!dir.manifest().contains("type h"), "{}", dir.manifest());
    assert!(want.iter().all(|f| !dir.aof_dir().join(f).exists()));
}

#[test]
fn old_style_single_file_is_loaded_and_upgraded() {
    let dir = DataDir::new("upgrade");
    // With an annotation line, as Redis's aof-timestamp-enabled writes.
    let mut old = b"#TS:1700000000\r\n".to_vec();
    resp::encode_command(&mut old, &["SELECT", "0"]);
    resp::encode_command(&mut old, &["SET", "legacy", "yes"]);
    resp::encode_command(&mut old, &["RPUSH", "l", "a", "b"]);
    std::fs::write(dir.0.join("appendonly.aof"), &old).unwrap();
    let srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["GET", "legacy"]), bulk("yes"));
    assert_eq!(c.cmd(&["LLEN", "l"]), int(2));
    let manifest = dir.manifest();
    assert!(manifest.starts_with("file appendonly.aof seq 1 type b\n"), "{manifest}");
    assert!(dir.aof_dir().join("appendonly.aof").is_file() && !dir.0.join("appendonly.aof").exists());
    assert_eq!(c.cmd(&["SET", "new", "1"]), ok());
    drop(srv);
    let srv = start_aof(&dir, &[]);
    assert_eq!(srv.client().cmd(&["MGET", "legacy", "new"]), arr(vec![bulk("yes"), bulk("1")]));
}

#[test]
fn switching_appendfsync_away_from_always_releases_every_reply() {
    let dir = DataDir::new("switch");
    let srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut clients: Vec<Client> = (0..4).map(|_| srv.client()).collect();
    let mut admin = srv.client();
    for round in 0..6 {
        for (n, c) in clients.iter_mut().enumerate() {
            let mut batch = Vec::new();
            for _ in 0..100 {
                resp::encode_command(&mut batch, &["INCR", &format!("c{n}")]);
            }
            c.send(&batch);
        }
        if round == 2 {
            assert_eq!(admin.cmd(&["CONFIG", "SET", "appendfsync", "everysec"]), ok());
        }
        if round == 4 {
            assert_eq!(admin.cmd(&["CONFIG", "SET", "appendfsync", "always"]), ok());
        }
        for c in clients.iter_mut() {
            for i in 0..100 {
                assert_eq!(c.read_frame(), int(round * 100 + i + 1));
            }
        }
    }
}
