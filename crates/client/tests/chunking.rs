//! Automatic chunking: a 1,000,000-command pipeline against each server,
//! replies checked for count and order, and the test process's peak RSS
//! growth kept under 100 MiB. (One test per binary so RSS is ours alone.)

mod common;

use std::time::Instant;

use common::Server;
use volley_client::ValueExt;

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = s.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("{field} missing"));
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("number")
}

/// Reset VmHWM to the current RSS (Linux `clear_refs` 5).
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("clear_refs");
}

const N: usize = 1_000_000;

fn million_incrs(s: &Server, streaming: bool) -> (u64, f64) {
    let mut c = s.connect();
    c.cmd(&["DEL", "ctr"]).unwrap();
    reset_peak();
    let base = status_kib("VmRSS:");
    let t = Instant::now();
    let mut seen = 0usize;
    let mut check = |i: usize, r: volley_client::Result<volley_client::Value>| {
        assert_eq!(i, seen, "replies out of order");
        assert_eq!(r.unwrap().as_i64(), Some(i as i64 + 1), "reply {i}");
        seen += 1;
    };
    if streaming {
        let mut p = c.streaming_pipeline();
        for _ in 0..N {
            p.queue(&["INCR", "ctr"]);
            p.stream_into(&mut check).unwrap();
        }
        p.finish(&mut check).unwrap();
    } else {
        let mut p = c.pipeline();
        for _ in 0..N {
            p.queue(&["INCR", "ctr"]);
        }
        p.sync_streaming(&mut check).unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(seen, N);
    assert_eq!(c.cmd(&["GET", "ctr"]).unwrap().as_i64(), Some(N as i64));
    let growth_mib = (status_kib("VmHWM:").saturating_sub(base)) / 1024;
    eprintln!("{}: {N} INCRs (streaming={streaming}) in {secs:.2} s, peak RSS growth {growth_mib} MiB", s.name);
    (growth_mib, secs)
}

#[test]
fn million_command_pipeline_flat_memory() {
    for s in Server::both() {
        let (growth, _) = million_incrs(&s, false);
        assert!(growth < 100, "{}: pipeline peak RSS grew {growth} MiB", s.name);
        let (growth, _) = million_incrs(&s, true);
        assert!(growth < 16, "{}: streaming pipeline peak RSS grew {growth} MiB", s.name);
    }
    // Tiny chunks and a tiny in-flight bound still deliver everything.
    let s = Server::volley();
    let mut c = s.connect();
    c.set_chunk_size(7);
    c.set_max_inflight_bytes(100);
    let mut p = c.pipeline();
    for i in 0..20_000 {
        p.queue(&["ECHO", &i.to_string()]);
    }
    let all = p.sync_and_return_all().unwrap();
    assert_eq!(all.len(), 20_000);
    for (i, r) in all.into_iter().enumerate() {
        assert_eq!(r.unwrap().into_string().unwrap(), i.to_string());
    }
}
