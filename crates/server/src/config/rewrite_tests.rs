//! CONFIG REWRITE's text transformation against what redis-server 7.0.15
//! writes for the same file and changes.
use super::rewrite::{rewrite_text, Extras, SIGNATURE};
use super::Config;

/// What every rewrite appends when the file lacks them: Redis writes the
/// save points and the latency percentiles even at their defaults.
const SAVE_AND_PERCENTILES: &str =
    "save 3600 1\nsave 300 100\nsave 60 10000\nlatency-tracking-info-percentiles 50 99 99.9\n";

fn extras() -> Extras<'static> {
    Extras { cwd: "/data".into(), users: None, force_all: false }
}

fn loaded(text: &str) -> Config {
    let mut c = Config::default();
    c.load_str(text).unwrap();
    c
}

#[test]
fn unchanged_file_keeps_comments_order_and_gains_dir_only() {
    let old = "# my server\nport 7000\n\n\n# memory\nmaxmemory 100mb\nsave 900 1\n";
    let cfg = loaded(old);
    let new = rewrite_text(old, &cfg, &extras());
    assert_eq!(new, format!("# my server\nport 7000\n\n# memory\nmaxmemory 100mb\nsave 900 1\n\n{SIGNATURE}\ndir \"/data\"\nlatency-tracking-info-percentiles 50 99 99.9\n"));
    // The marker is not repeated; as with Redis, the file's final newline
    // becomes one blank line at the end, and from there it is a fixed point.
    let again = rewrite_text(&new, &loaded(&new), &extras());
    assert_eq!(again, format!("{new}\n"));
    assert_eq!(rewrite_text(&again, &loaded(&again), &extras()), again);
}

#[test]
fn changed_values_replace_their_line_in_place() {
    let old = "port 7000\n# keep me\nmaxmemory 100mb\nappendonly no\n";
    let mut cfg = loaded(old);
    cfg.set(&[(b"maxmemory", b"3gb"), (b"appendonly", b"yes"), (b"hz", b"20")]).unwrap();
    let new = rewrite_text(old, &cfg, &extras());
    let want = format!("port 7000\n# keep me\nmaxmemory 3gb\nappendonly yes\n\n{SIGNATURE}\ndir \"/data\"\nhz 20\n{SAVE_AND_PERCENTILES}");
    assert_eq!(new, want);
}

#[test]
fn options_back_at_defaults_keep_their_line_and_bind_goes() {
    let old = "bind 127.0.0.1\nmaxmemory 100mb\nreplicaof 10.0.0.1 6379\n";
    let mut cfg = loaded(old);
    cfg.set(&[(b"maxmemory", b"0"), (b"bind", b"* -::*")]).unwrap();
    cfg.set_replicaof(None);
    let new = rewrite_text(old, &cfg, &extras());
    // Redis rewrites an option found in the file even at its default;
    // bind at its default and a primary's replicaof are dropped.
    assert_eq!(new, format!("\nmaxmemory 0\n\n{SIGNATURE}\ndir \"/data\"\n{SAVE_AND_PERCENTILES}"));
}

#[test]
fn multi_line_options_save_and_output_limits() {
    let old = "save 900 1\nsave 300 10\nsave 60 10000\nclient-output-buffer-limit pubsub 32mb 8mb 60\n";
    let mut cfg = loaded(old);
    cfg.set(&[(b"save", b"100 5"), (b"client-output-buffer-limit", b"normal 1mb 512kb 10")]).unwrap();
    let new = rewrite_text(old, &cfg, &extras());
    let want = format!(
        "save 100 5\n\n\
         client-output-buffer-limit normal 1mb 512kb 10\n\n\
         {SIGNATURE}\ndir \"/data\"\nlatency-tracking-info-percentiles 50 99 99.9\n"
    );
    // The two leftover save lines blank out and squeeze into one blank;
    // the pubsub line is reused for the first class written (normal).
    assert_eq!(new, want);
    cfg.set(&[(b"save", b"")]).unwrap();
    let new = rewrite_text(old, &cfg, &extras());
    assert!(new.starts_with("save \"\"\n"), "{new}");
    assert_eq!(loaded(&new).save, Vec::<(u64, u64)>::new());
}

#[test]
fn aliases_unknown_lines_and_file_only_directives() {
    let old = "slaveof 10.0.0.9 7000\nhash-max-ziplist-entries 20\nrename-command flushdb badger\n\
               include /etc/other.conf\nno-such-option 1\nport \"unbalanced\n";
    let mut cfg = Config::default();
    cfg.load_str("slaveof 10.0.0.9 7000\nhash-max-ziplist-entries 20\nrename-command flushdb badger\n").unwrap();
    cfg.set(&[(b"hash-max-listpack-entries", b"100")]).unwrap();
    cfg.set_replicaof(Some(("10.0.0.1", 6380)));
    let new = rewrite_text(old, &cfg, &extras());
    let want = format!(
        "replicaof 10.0.0.1 6380\nhash-max-listpack-entries 100\nrename-command flushdb badger\n\
         include /etc/other.conf\n# ??? no-such-option 1\n# ??? port \"unbalanced\n\n{SIGNATURE}\ndir \"/data\"\n{SAVE_AND_PERCENTILES}"
    );
    assert_eq!(new, want);
}

#[test]
fn strings_are_quoted_and_empty_null_strings_dropped() {
    let old = "masterauth secret\nlogfile \"\"\ndbfilename \"my dump.rdb\"\n";
    let mut cfg = loaded(old);
    cfg.set(&[(b"masterauth", b""), (b"notify-keyspace-events", b"KEA")]).unwrap();
    let new = rewrite_text(old, &cfg, &extras());
    let want = format!(
        "\nlogfile \"\"\ndbfilename \"my dump.rdb\"\n\n{SIGNATURE}\ndir \"/data\"\n{SAVE_AND_PERCENTILES}notify-keyspace-events \"AKE\"\n"
    );
    assert_eq!(new, want);
}

#[test]
fn users_replace_user_lines_and_aclfile_drops_them() {
    let old = "user alice on >pw ~* +@all\nport 7000\nuser bob off\n";
    let cfg = loaded(old);
    let users = vec!["user alice on #abc ~* +@all".to_string()];
    let ex = Extras { users: Some(&users), ..extras() };
    let new = rewrite_text(old, &cfg, &ex);
    assert_eq!(
        new,
        format!("user alice on #abc ~* +@all\nport 7000\n\n{SIGNATURE}\ndir \"/data\"\n{SAVE_AND_PERCENTILES}")
    );
    let mut cfg = cfg;
    cfg.other.insert("aclfile", "/etc/users.acl".into());
    let new = rewrite_text(old, &cfg, &ex);
    assert!(!new.contains("user "), "{new}");
}

#[test]
fn force_all_writes_every_option_and_reloads_to_the_same_config() {
    let mut cfg = Config::default();
    cfg.set(&[(b"maxmemory-clients", b"10%"), (b"shutdown-on-sigterm", b"nosave now")]).unwrap();
    let ex = Extras { force_all: true, ..extras() };
    let new = rewrite_text("", &cfg, &ex);
    assert!(new.starts_with(SIGNATURE), "{new}");
    for line in ["maxmemory-clients 10%", "shutdown-on-sigterm nosave now", "port 6379", "unixsocketperm 0"] {
        assert!(new.contains(&format!("\n{line}\n")), "{line} missing in {new}");
    }
    let mut reloaded = loaded(&new);
    reloaded.dir = cfg.dir.clone();
    assert_eq!(reloaded, cfg);
}
