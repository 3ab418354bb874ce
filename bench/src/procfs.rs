//! Reading a server process's memory and CPU time from `/proc`, and the machine's description.

use std::time::Duration;

/// A field of `/proc/<pid>/status` in bytes (`VmRSS`, `VmHWM`), when readable.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()
    })
}

/// Resident set size now, in bytes.
pub(crate) fn rss(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS").map(|k| k * 1024)
}

/// The anonymous part of the resident set (heap, stacks) and the file-backed part (mapped
/// files, such as SQLite's memory-mapped pages), in bytes.
pub(crate) fn rss_parts(pid: u32) -> Option<(u64, u64)> {
    let anon = status_kib(pid, "RssAnon")?;
    let file = status_kib(pid, "RssFile")? + status_kib(pid, "RssShmem").unwrap_or(0);
    Some((anon * 1024, file * 1024))
}

/// Peak resident set size since the process started, in bytes.
pub(crate) fn peak_rss(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM").map(|k| k * 1024)
}

/// User + system CPU time used by the process (all threads) so far.
pub(crate) fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the `(comm)`, which may itself contain spaces.
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after `state`.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_secs_f64(
        (utime + stime) as f64 / clock_ticks() as f64,
    ))
}

fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .filter(|t| *t > 0)
            .unwrap_or(100)
    })
}

/// `nproc`, the CPU model from `/proc/cpuinfo`, and the date: the machine a table ran on.
pub(crate) fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    format!("nproc {cores}, {model}, Linux {kernel}, {date}")
}

/// The 1-minute load average, to say how busy the machine was.
pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_process() {
        let pid = std::process::id();
        assert!(rss(pid).is_some_and(|r| r > 0));
        assert!(peak_rss(pid).is_some_and(|r| r > 0));
        assert!(cpu_time(pid).is_some());
    }
}
