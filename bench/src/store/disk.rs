//! Retention bounds the disk: the README agent's SQLite store (the demo agent, the default
//! [`Retention::durable`](a2a_runtime::core::Retention::durable): at most
//! [`DURABLE_MAX_FINISHED`] finished tasks, a pass every 5 s) under `disk_tasks` SendMessage
//! calls (JSON-RPC, 16 connections, a new COMPLETED task each, as an anonymous caller): the
//! database file (with its WAL) and the server's RSS every `disk_every` calls, and how many
//! tasks it holds at the end. Past the bound the file and RSS must stay flat within 10%.

use std::time::{Duration, Instant};

use a2a_runtime::core::DURABLE_MAX_FINISHED;
use serde_json::json;

use super::retention::{send, total};
use super::{Options, Report, Row, SqliteFile, StoreServer};
use crate::load::{Check, Req};
use crate::wire;

fn mib(b: u64) -> f64 {
    b as f64 / 1024.0 / 1024.0
}

/// The bytes of the database file and its WAL.
fn on_disk(file: &SqliteFile) -> u64 {
    let db = file.path();
    let wal = db.with_extension("db-wal");
    [db, wal]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// `(hi - lo) / lo` in percent over `values`.
fn spread(values: &[u64]) -> f64 {
    let lo = values.iter().copied().min().unwrap_or(0);
    let hi = values.iter().copied().max().unwrap_or(0);
    if lo == 0 {
        return f64::NAN;
    }
    (hi - lo) as f64 / lo as f64 * 100.0
}

pub(super) async fn run(opts: &Options, pin: bool, report: &mut Report) -> Result<(), String> {
    let file = SqliteFile::new();
    let server =
        StoreServer::start("retention-disk", &file.url(), &["--agent", "demo"], pin).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut samples = Vec::new();
    let mut parts = Vec::new();
    let mut sent = 0;
    let started = Instant::now();
    while sent < opts.disk_tasks {
        let batch = opts.disk_every.min(opts.disk_tasks - sent);
        let req = Req::rpc(wire::rpc_body("SendMessage", "hello"));
        send(server.addr, req, Check::Completed, batch).await?;
        sent += batch;
        let (disk, rss) = (on_disk(&file), server.rss());
        let (anon, mapped) = crate::procfs::rss_parts(server.pid).unwrap_or_default();
        eprintln!(
            "retention-disk: {sent} tasks, file {:.1} MiB, RSS {:.1} MiB (anonymous {:.1}, \
             file-backed {:.1})",
            mib(disk),
            mib(rss),
            mib(anon),
            mib(mapped)
        );
        samples.push((sent, disk, rss));
        parts.push((anon, mapped));
    }
    let rate = sent as f64 / started.elapsed().as_secs_f64();
    // A pass (every 5 s) after the last call: what the store holds under its bound.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let held = total(server.addr, json!({})).await?;
    let (disk_end, rss_end) = (on_disk(&file), server.rss());
    drop(server);
    let bound = DURABLE_MAX_FINISHED as u64;
    let after: Vec<_> = samples.iter().filter(|(n, _, _)| *n > bound).collect();
    let disks: Vec<u64> = after.iter().map(|s| s.1).collect();
    let rsss: Vec<u64> = after.iter().map(|s| s.2).collect();
    let (disk_spread, rss_spread) = (spread(&disks), spread(&rsss));
    let list: Vec<String> = samples
        .iter()
        .zip(&parts)
        .map(|((n, d, r), (a, f))| {
            format!(
                "{}k {:.0}/{:.0} ({:.0}+{:.0})",
                n / 1000,
                mib(*d),
                mib(*r),
                mib(*a),
                mib(*f)
            )
        })
        .collect();
    report.row(Row {
        figure: format!(
            "file (with WAL) and RSS, {} SendMessage calls on the demo agent's SQLite store \
             (default retention: {bound} finished tasks)",
            opts.disk_tasks
        ),
        store: "sqlite (demo agent)".into(),
        value: format!(
            "by calls (file/RSS MiB, RSS as anonymous+file-backed): {}; **after the bound: file spread {disk_spread:.1}%, \
             RSS spread {rss_spread:.1}%**; at the end {held} tasks held, file {:.1} MiB, RSS \
             {:.1} MiB; {rate:.0} calls/s",
            list.join(", "),
            mib(disk_end),
            mib(rss_end),
        ),
        target: "flat within 10% after the bound".into(),
        pass: Some(disk_spread <= 10.0 && rss_spread <= 10.0 && held <= bound + 1),
    });
    Ok(())
}
