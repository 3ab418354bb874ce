//! Retention bounds memory: a server's RSS under many tenants, and abandoned INPUT_REQUIRED
//! tasks under an idle bound.
//!
//! Both servers are child processes (pinned to core 0 with pinning on) serving the examples'
//! `DemoAgent` (what the README's run command serves: `hello` is echoed and COMPLETED, `ask`
//! waits in INPUT_REQUIRED) on the builder's default in-memory store.
//!
//! 1. `tenants` SendMessage calls (HTTP+JSON `POST /t{n}/message:send`, 16 connections), each to
//!    a tenant of its own, against the default store and its global cap
//!    ([`DEFAULT_MAX_TASKS`](a2a_runtime::store::DEFAULT_MAX_TASKS)); VmRSS sampled every
//!    `every` calls (after 300 ms); then which tenants still hold their task (ListTasks of 200
//!    tenants spread over the range).
//! 2. `asks` JSON-RPC SendMessage `ask` calls in one scope, left unanswered, on a server whose
//!    cap is raised above them (the default cap would refuse the ones past 10,000: they are all
//!    live) with an idle bound (`--idle`), a purge age of 2 s for finished tasks and a pass every
//!    second: the INPUT_REQUIRED count and every task held (ListTasks `totalSize`), RSS when they
//!    are all held, and once the bound ended them (FAILED) and the purge removed them; twice, so
//!    that the second round shows whether the memory freed is reused (its peak RSS within 10%
//!    of the first round's) rather than added to.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Options, Report, Row, StoreServer};
use crate::load::{self, Check, Plan, Req};
use crate::wire;

fn mib(b: u64) -> f64 {
    b as f64 / 1024.0 / 1024.0
}

/// The HTTP+JSON SendMessage body of `text`.
fn rest_body(text: &str) -> bytes::Bytes {
    bytes::Bytes::from(
        json!({"message": {"messageId": crate::load::MESSAGE_ID, "role": "ROLE_USER",
                           "parts": [{"text": text}]}})
        .to_string(),
    )
}

/// `count` requests like `req` on 16 connections (at most 10 minutes); fails on any error.
pub(super) async fn send(
    addr: SocketAddr,
    req: Req,
    check: Check,
    count: u64,
) -> Result<f64, String> {
    let r = load::run(
        addr,
        req,
        check,
        Plan {
            conns: 16,
            warmup: Duration::ZERO,
            duration: Duration::from_secs(600),
            count: Some(count),
        },
    )
    .await;
    if r.errors > 0 || r.requests != count {
        return Err(format!(
            "{} of {count} requests answered, {} errors, first: {}",
            r.requests,
            r.errors,
            r.first_error.unwrap_or_default()
        ));
    }
    Ok(r.rate())
}

/// ListTasks (JSON-RPC) `totalSize` with `params`.
pub(super) async fn total(addr: SocketAddr, params: Value) -> Result<u64, String> {
    let mut params = params;
    params["pageSize"] = json!(1);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params});
    let req = Req::rpc(bytes::Bytes::from(body.to_string()));
    let (status, _, body) = load::one_shot(addr, &req).await?;
    let v: Value = serde_json::from_slice(&body)
        .map_err(|e| format!("ListTasks ({status}) is not JSON: {e}"))?;
    v["result"]["totalSize"]
        .as_u64()
        .ok_or_else(|| format!("ListTasks answered {status}: {}", wire::preview(&body)))
}

async fn tenants(opts: &Options, pin: bool, report: &mut Report) -> Result<(), String> {
    let server =
        StoreServer::start("retention-tenants", "memory:", &["--agent", "demo"], pin).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = server.rss();
    let mut samples = Vec::new();
    let mut sent = 0;
    let started = Instant::now();
    while sent < opts.tenants {
        let batch = opts.sample_every.min(opts.tenants - sent);
        let req =
            Req::post("/message:send", rest_body("hello")).numbered("/t", sent, "/message:send");
        send(server.addr, req, Check::Completed, batch).await?;
        sent += batch;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let rss = server.rss();
        eprintln!("retention: {sent} tenants, RSS {:.1} MiB", mib(rss));
        samples.push((sent, rss));
    }
    let rate = sent as f64 / started.elapsed().as_secs_f64();
    // Which tenants still hold their task: 200 spread over the range, and the last one.
    let step = (opts.tenants / 200).max(1);
    let mut probed = 0;
    let mut held = 0;
    let mut i = 0;
    while i < opts.tenants {
        let probe = if i + step >= opts.tenants {
            opts.tenants - 1
        } else {
            i
        };
        let req = Req::get("/tasks")
            .with_header("a2a-version", "1.0")
            .numbered("/t", probe, "/tasks");
        let (status, _, body) = load::one_shot(server.addr, &req).await?;
        if !status.is_success() {
            return Err(format!(
                "ListTasks of tenant t{probe} answered {status}: {}",
                wire::preview(&body)
            ));
        }
        let v: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("ListTasks of a tenant ({status}): {e}"))?;
        probed += 1;
        held += u64::from(v["totalSize"].as_u64().unwrap_or(0) > 0);
        i += step;
    }
    let peak = crate::procfs::peak_rss(server.pid).unwrap_or(0);
    drop(server);
    let cap = a2a_runtime::store::DEFAULT_MAX_TASKS as u64;
    let after_cap: Vec<u64> = samples
        .iter()
        .filter(|(n, _)| *n >= cap)
        .map(|(_, r)| *r)
        .collect();
    let (lo, hi) = (
        after_cap.iter().copied().min().unwrap_or(0),
        after_cap.iter().copied().max().unwrap_or(0),
    );
    let spread = if lo > 0 {
        (hi - lo) as f64 / lo as f64 * 100.0
    } else {
        f64::NAN
    };
    let list: Vec<String> = samples
        .iter()
        .map(|(n, r)| format!("{}k {:.1}", n / 1000, mib(*r)))
        .collect();
    report.row(Row {
        figure: format!(
            "RSS, {} SendMessage calls, each to its own tenant (default in-memory store, global cap {cap})",
            opts.tenants
        ),
        store: "memory (demo agent)".into(),
        value: format!(
            "idle {:.1} MiB; by calls (MiB): {}; peak {:.1} MiB; **after the cap: {:.1}–{:.1} MiB, \
             spread {spread:.1}%**; tenants still holding their task: {held} of {probed} probed \
             (≈ {} held); {rate:.0} calls/s",
            mib(idle),
            list.join(", "),
            mib(peak),
            mib(lo),
            mib(hi),
            held * opts.tenants / probed.max(1),
        ),
        target: "flat within 10% after the cap".into(),
        pass: Some(spread <= 10.0),
    });
    Ok(())
}

/// Waits until `ListTasks` with `params` counts 0 (polling every 250 ms, until `deadline`);
/// returns how long it took, or `None`.
async fn until_none(
    addr: SocketAddr,
    params: Value,
    since: Instant,
    deadline: Instant,
) -> Option<Duration> {
    loop {
        if let Ok(0) = total(addr, params.clone()).await {
            return Some(since.elapsed());
        }
        if Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn asks(opts: &Options, pin: bool, report: &mut Report) -> Result<(), String> {
    let cap = (opts.asks + 10_000).to_string();
    let idle = format!("{}ms", opts.idle.as_millis());
    let server = StoreServer::start(
        "retention-asks",
        "memory:",
        &[
            "--agent",
            "demo",
            "--max-tasks",
            &cap,
            "--idle",
            &idle,
            "--purge",
            "2s",
            "--sweep",
            "1s",
            "--batch",
            "10000",
        ],
        pin,
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_idle = server.rss();
    let waiting = json!({"status": "TASK_STATE_INPUT_REQUIRED"});
    let mut rounds = Vec::new();
    for round in 1..=2 {
        let started = Instant::now();
        let req = Req::rpc(wire::rpc_body("SendMessage", "ask"));
        let rate = send(server.addr, req, Check::Ok, opts.asks).await?;
        let held_waiting = total(server.addr, waiting.clone()).await?;
        let held = total(server.addr, json!({})).await?;
        let full = server.rss();
        let deadline = Instant::now() + opts.idle + Duration::from_secs(120);
        let ended = until_none(server.addr, waiting.clone(), started, deadline).await;
        let purged = until_none(server.addr, json!({}), started, deadline).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let after = server.rss();
        eprintln!(
            "retention: round {round}: {held_waiting} INPUT_REQUIRED ({held} held) at {rate:.0}/s, RSS {:.1} MiB; \
             ended after {ended:?}, purged after {purged:?}; RSS {:.1} MiB",
            mib(full),
            mib(after)
        );
        rounds.push((held_waiting, full, ended, purged, after));
    }
    drop(server);
    let describe = |(waiting, full, ended, purged, after): &(
        u64,
        u64,
        Option<Duration>,
        Option<Duration>,
        u64,
    )| {
        let secs = |d: &Option<Duration>| {
            d.map_or("not within the bound".into(), |d| {
                format!("{:.1} s", d.as_secs_f64())
            })
        };
        format!(
            "{waiting} INPUT_REQUIRED held, RSS {:.1} MiB (+{:.1} over idle); all ended after {}, purged after {}; RSS then {:.1} MiB",
            mib(*full),
            mib(full.saturating_sub(rss_idle)),
            secs(ended),
            secs(purged),
            mib(*after),
        )
    };
    let all_freed = rounds
        .iter()
        .all(|r| r.0 == opts.asks && r.2.is_some() && r.3.is_some());
    // The memory freed is reused: the second round's peak stays within 10% of the first's.
    let peak = |r: &(u64, u64, Option<Duration>, Option<Duration>, u64)| r.1.max(r.4);
    let reused = peak(&rounds[1]) as f64 <= peak(&rounds[0]) as f64 * 1.10;
    report.row(Row {
        figure: format!(
            "{} abandoned INPUT_REQUIRED tasks, idle bound {} s (cap raised to {cap}, purge of finished tasks after 2 s)",
            opts.asks,
            opts.idle.as_secs_f64()
        ),
        store: "memory (demo agent)".into(),
        value: format!(
            "idle {:.1} MiB; round 1: {}; round 2: {}",
            mib(rss_idle),
            describe(&rounds[0]),
            describe(&rounds[1])
        ),
        target: "all ended and purged; round 2's peak RSS within 10% of round 1's".into(),
        pass: Some(all_freed && reused),
    });
    Ok(())
}

pub(super) async fn run(opts: &Options, pin: bool, report: &mut Report) -> Result<(), String> {
    tenants(opts, pin, report).await?;
    asks(opts, pin, report).await
}
