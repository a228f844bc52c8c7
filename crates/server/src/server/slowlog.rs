//! The slow log (SLOWLOG): the most recent commands that took at least
//! `slowlog-log-slower-than` microseconds, newest first, at most
//! `slowlog-max-len` of them. Arguments are trimmed on entry so a huge
//! command costs the log a bounded amount of memory.
use std::collections::VecDeque;

use super::{clock, unix_ms, Server};
use crate::config::Config;

/// At most this many arguments are kept; the last kept slot then says how
/// many were left out.
const MAX_ARGC: usize = 32;
/// At most this many bytes of each argument are kept.
const MAX_ARG_BYTES: usize = 128;

/// One logged command.
#[derive(Debug, Clone)]
pub struct SlowEntry {
    pub id: u64,
    /// Unix time in seconds when it was logged.
    pub time: i64,
    pub duration_us: u64,
    pub argv: Vec<Vec<u8>>,
    /// The client's `ip:port`.
    pub peer: String,
    /// The client's name (empty if unset).
    pub name: Vec<u8>,
}

/// The log itself; ids keep growing across RESET, as in Redis.
#[derive(Debug, Default)]
pub struct SlowLog {
    entries: VecDeque<SlowEntry>,
    next_id: u64,
}

impl SlowLog {
    /// Log a command (`argv` untrimmed) and drop the oldest entries beyond `max_len`.
    pub fn push<'a>(&mut self, argv: impl ExactSizeIterator<Item = &'a [u8]>, e: EntryMeta, max_len: usize) {
        let entry = SlowEntry {
            id: self.next_id,
            time: e.time,
            duration_us: e.duration_us,
            argv: trimmed(argv),
            peer: e.peer,
            name: e.name,
        };
        self.next_id += 1;
        self.entries.push_front(entry);
        self.entries.truncate(max_len);
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn reset(&mut self) {
        self.entries.clear();
    }
    /// Entries, newest first.
    pub fn iter(&self) -> impl Iterator<Item = &SlowEntry> {
        self.entries.iter()
    }
}

/// What an entry records besides the arguments.
pub struct EntryMeta {
    pub time: i64,
    pub duration_us: u64,
    pub peer: String,
    pub name: Vec<u8>,
}

/// The arguments as the log keeps them: beyond 32 the 32nd says how many
/// more there were; each argument keeps at most 128 bytes and says how many
/// more it had.
pub fn trimmed<'a>(argv: impl ExactSizeIterator<Item = &'a [u8]>) -> Vec<Vec<u8>> {
    let argc = argv.len();
    let kept = argc.min(MAX_ARGC);
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(kept);
    for (j, arg) in argv.take(kept).enumerate() {
        if kept != argc && j == kept - 1 {
            out.push(format!("... ({} more arguments)", argc - kept + 1).into_bytes());
        } else if arg.len() > MAX_ARG_BYTES {
            let mut s = arg[..MAX_ARG_BYTES].to_vec();
            s.extend_from_slice(format!("... ({} more bytes)", arg.len() - MAX_ARG_BYTES).as_bytes());
            out.push(s);
        } else {
            out.push(arg.to_vec());
        }
    }
    out
}

/// What the slow path needs to know about the command that ran.
pub struct SlowCall<'a, I: ExactSizeIterator<Item = &'a [u8]>> {
    pub argv: I,
    /// The command is flagged `skip_slowlog` (never logged).
    pub skip_slowlog: bool,
    /// The command is flagged `fast` (latency event `fast-command`).
    pub fast: bool,
    /// Clock ticks it took.
    pub spent: u64,
}

impl Server {
    /// A command run by client `cid` took at least `config.slow_ticks`:
    /// log it where its real duration says so, and rederive the tick
    /// threshold (a CONFIG SET or a new clock calibration may have moved it).
    #[cold]
    #[inline(never)]
    /// Record `spent` under latency `event` if the latency monitor is on
    /// and it reached `latency-monitor-threshold`.
    pub fn latency_sample(&mut self, event: &str, spent: std::time::Duration) {
        let monitor_ms = self.config.latency_monitor_threshold;
        let ms = spent.as_millis() as u64;
        if monitor_ms > 0 && ms >= monitor_ms as u64 {
            self.latency_events.add(event, ms, unix_ms() / 1000);
        }
    }

    pub fn command_was_slow<'a, I: ExactSizeIterator<Item = &'a [u8]>>(&mut self, cid: usize, call: SlowCall<'a, I>) {
        self.config.slow_ticks = threshold_ticks(&self.config);
        let us = clock::ticks_to_us(call.spent);
        let now = unix_ms() / 1000;
        let monitor_ms = self.config.latency_monitor_threshold;
        if monitor_ms > 0 && us / 1000 >= monitor_ms as u64 {
            let event = if call.fast { "fast-command" } else { "command" };
            self.latency_events.add(event, us / 1000, now);
        }
        let slower_than = self.config.slowlog_log_slower_than;
        if slower_than < 0 || us < slower_than as u64 || call.skip_slowlog {
            return;
        }
        let (peer, name) = match self.clients.get(cid) {
            Some(c) => (c.addr.clone(), c.name.clone().unwrap_or_default()),
            None => (String::new(), Vec::new()),
        };
        let meta = EntryMeta { time: now, duration_us: us, peer, name };
        let max_len = self.config.slowlog_max_len.min(usize::MAX as u64) as usize;
        self.slowlog.push(call.argv, meta, max_len);
        if let Some(e) = self.slowlog.entries.front_mut() {
            redact(&mut e.argv);
        }
    }
}

/// The tick count below which neither the slow log nor the latency monitor
/// can want a command: 0 (every command takes the slow path) until the
/// clock is calibrated, the maximum when both are off. A 2% margin keeps
/// calibration drift from hiding borderline commands; the slow path
/// compares exact microseconds.
pub fn threshold_ticks(cfg: &Config) -> u64 {
    let slowlog = u64::try_from(cfg.slowlog_log_slower_than).ok();
    let monitor = (cfg.latency_monitor_threshold > 0).then(|| cfg.latency_monitor_threshold as u64 * 1000);
    let Some(us) = slowlog.into_iter().chain(monitor).min() else { return u64::MAX };
    const PROBE: u64 = 1 << 40;
    let probe_us = clock::ticks_to_us(PROBE);
    if probe_us == 0 {
        return 0;
    }
    let ticks_per_us = PROBE as f64 / probe_us as f64;
    (us as f64 * ticks_per_us * 0.98) as u64
}

const REDACTED: &[u8] = b"(redacted)";

/// Hide secrets as Redis does: passwords of AUTH, HELLO ... AUTH, MIGRATE
/// ... AUTH/AUTH2, every rule of ACL SETUSER, and sensitive CONFIG SET values.
fn redact(argv: &mut [Vec<u8>]) {
    let is = |a: &[u8], w: &str| a.eq_ignore_ascii_case(w.as_bytes());
    let Some(name) = argv.first() else { return };
    let secret: Vec<usize> = if is(name, "auth") {
        (1..argv.len()).collect()
    } else if is(name, "acl") && argv.len() > 2 && is(&argv[1], "setuser") {
        (2..argv.len()).collect()
    } else if is(name, "config") && argv.len() > 3 && is(&argv[1], "set") {
        let sensitive = |a: &[u8]| ["masterauth", "masteruser", "requirepass"].iter().any(|w| is(a, w));
        (2..argv.len() - 1).step_by(2).filter(|&i| sensitive(&argv[i])).map(|i| i + 1).collect()
    } else if is(name, "migrate") || is(name, "hello") {
        let auth_args = if is(name, "hello") { 2 } else { 1 };
        match argv.iter().position(|a| is(a, "auth2")) {
            Some(i) => (i + 1..i + 3).collect(),
            None => {
                argv.iter().position(|a| is(a, "auth")).map_or(Vec::new(), |i| (i + 1..i + 1 + auth_args).collect())
            }
        }
    } else {
        Vec::new()
    };
    let argc = argv.len();
    for i in secret.into_iter().filter(|&i| i < argc) {
        argv[i] = REDACTED.to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> EntryMeta {
        EntryMeta { time: 1, duration_us: 2, peer: "127.0.0.1:1".into(), name: Vec::new() }
    }

    #[test]
    fn long_commands_keep_31_arguments_and_a_count() {
        let args: Vec<Vec<u8>> = (0..40).map(|i| i.to_string().into_bytes()).collect();
        let t = trimmed(args.iter().map(|a| a.as_slice()));
        assert_eq!(t.len(), 32);
        assert_eq!(t[30], b"30");
        assert_eq!(t[31], b"... (9 more arguments)");
        let exact: Vec<Vec<u8>> = (0..32).map(|i| i.to_string().into_bytes()).collect();
        assert_eq!(trimmed(exact.iter().map(|a| a.as_slice()))[31], b"31");
    }

    #[test]
    fn long_arguments_keep_128_bytes_and_a_count() {
        let long = vec![b'A'; 130];
        let t = trimmed([long.as_slice()].into_iter());
        assert_eq!(&t[0][..128], &long[..128]);
        assert_eq!(&t[0][128..], b"... (2 more bytes)");
        assert_eq!(trimmed([&long[..128]].into_iter())[0].len(), 128);
    }

    #[test]
    fn the_log_is_bounded_newest_first_and_ids_survive_reset() {
        let mut log = SlowLog::default();
        for i in 0..5u8 {
            log.push([[b'a' + i].as_slice()].into_iter(), meta(), 3);
        }
        assert_eq!(log.len(), 3);
        let ids: Vec<u64> = log.iter().map(|e| e.id).collect();
        assert_eq!(ids, [4, 3, 2]);
        log.reset();
        assert!(log.is_empty());
        log.push([b"x".as_slice()].into_iter(), meta(), 3);
        assert_eq!(log.iter().next().map(|e| e.id), Some(5));
    }

    fn redacted(args: &[&str]) -> Vec<String> {
        let mut v: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        redact(&mut v);
        v.into_iter().map(|a| String::from_utf8(a).unwrap()).collect()
    }

    #[test]
    fn secrets_are_redacted() {
        assert_eq!(redacted(&["acl", "setuser", "u", "+get"]), ["acl", "setuser", "(redacted)", "(redacted)"]);
        assert_eq!(redacted(&["config", "set", "masterauth", "x"]), ["config", "set", "masterauth", "(redacted)"]);
        assert_eq!(redacted(&["config", "set", "maxclients", "9"]), ["config", "set", "maxclients", "9"]);
        let m = redacted(&["migrate", "h", "1", "k", "0", "5", "AUTH2", "u", "p"]);
        assert_eq!(m[6..], ["AUTH2", "(redacted)", "(redacted)"]);
        let m = redacted(&["migrate", "h", "1", "k", "0", "5", "AUTH", "p", "KEYS"]);
        assert_eq!(m[6..], ["AUTH", "(redacted)", "KEYS"]);
        assert_eq!(redacted(&["auth", "a", "b"]), ["auth", "(redacted)", "(redacted)"]);
    }
}
