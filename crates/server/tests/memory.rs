//! Process-level memory settings of the server binary: transparent huge
//! pages (which inflate RSS in 2 MiB steps) are off unless `disable-thp no`.
mod common;

use common::TestServer;

/// The `THP_enabled` flag the kernel reports for `pid`, if this kernel has it.
fn thp_enabled(pid: u32) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("THP_enabled:"))?;
    Some(line.split_whitespace().nth(1)? == "1")
}

#[test]
fn transparent_huge_pages_follow_disable_thp() {
    assert!(thp_enabled(std::process::id()).is_some(), "this kernel does not report THP_enabled in /proc/PID/status");
    let default = TestServer::start(&[]);
    assert_eq!(thp_enabled(default.pid()), Some(false), "disable-thp defaults to yes");
    let mut c = default.client();
    assert_eq!(c.raw_cmd(&["CONFIG", "GET", "disable-thp"]), b"*2\r\n$11\r\ndisable-thp\r\n$3\r\nyes\r\n");
    // Set explicitly, whatever the parent process had.
    let kept = TestServer::start(&["--disable-thp", "no"]);
    assert_eq!(thp_enabled(kept.pid()), Some(true));
}
