//! The harness: set up, check every server, run the workloads round by round with the servers
//! interleaved, measure memory, print the table.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::Options;
use crate::load::{self, Check, Plan, Req};
use crate::procfs;
use crate::report::{Lane, Memory, Paired, Results, Sample, Workload};
use crate::servers::{self, Env, Kind, Server};
use crate::wire;

/// Pins this process (the load generator) to core 1 when the machine has two or more cores and
/// `taskset` is there; servers get core 0. Returns whether pinning is on.
pub(crate) fn pin_self(pin: bool) -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !pin || cores < 2 {
        return false;
    }
    let pid = std::process::id().to_string();
    std::process::Command::new("taskset")
        .args(["-a", "-p", "-c", "1", &pid])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn target_dir(root: &std::path::Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Runs the harness; `Ok(false)` when a server failed its correctness check (or ours erred
/// under load).
pub(crate) fn run(opts: &Options) -> Result<bool, String> {
    // Read before pinning (pinning narrows what this process sees as its cores).
    let machine = procfs::machine();
    // Before any thread exists, so every thread of this process inherits core 1.
    let pinned = pin_self(opts.pin);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(run_async(opts, pinned, machine))
}

async fn run_async(opts: &Options, pinned: bool, machine: String) -> Result<bool, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .ok_or("no workspace root")?;
    let target = target_dir(&root);
    let out = opts.out.clone().unwrap_or_else(|| target.join("bench"));
    let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
    let mut ok = true;
    let mut results = Results {
        machine,
        ..Results::default()
    };

    let mut kinds = opts.servers.clone();
    let mut python = None;
    if kinds.contains(&Kind::Python) {
        match servers::python_env(&root, &target) {
            Ok(p) => python = Some(p),
            Err(e) if opts.smoke => {
                eprintln!("skipping the Python server (smoke mode): {e}");
                results.notes.push(format!("Python server skipped: {e}"));
                kinds.retain(|k| *k != Kind::Python);
            }
            Err(e) => {
                eprintln!("FAIL the Python server could not be set up: {e}");
                results
                    .notes
                    .push(format!("Python server could not be set up: {e}"));
                kinds.retain(|k| *k != Kind::Python);
                ok = false;
            }
        }
    }
    let env = Env {
        exe,
        root: root.clone(),
        pin: pinned,
        python,
        logs: out.join("logs"),
    };
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let commit = git(&["rev-parse", "--short", "HEAD"]);
    let dirty = !git(&["status", "--porcelain", "--", "a2a-runtime"]).is_empty();
    results.machine = format!(
        "{}; a2a-runtime at {}{}",
        results.machine,
        if commit.is_empty() { "?" } else { &commit },
        if dirty {
            " with uncommitted changes"
        } else {
            ""
        }
    );
    results.settings = format!(
        "{}; {} per workload after {} warm-up, {} round(s), servers interleaved and restarted for every run; \
         load generator: {} on one thread, HTTP/1.1 keep-alive, TCP_NODELAY; load average at start {}",
        if pinned {
            "servers pinned to core 0 (taskset), load generator to core 1"
        } else {
            "no pinning"
        },
        fmt_dur(opts.duration),
        fmt_dur(opts.warmup),
        opts.rounds,
        "hyper 1 client",
        procfs::loadavg(),
    );

    // 1. Every server answers correctly before anything is timed.
    let mut checked = Vec::new();
    for &k in &kinds {
        let result = async {
            let server = Server::start(k, &env, &[]).await?;
            let c = servers::check(&server).await;
            server.stop();
            c
        }
        .await;
        match result {
            Ok(c) => {
                eprintln!(
                    "ok   {}: SendMessage reply {} B, card {} B, stream {} events / {} B",
                    k.label(),
                    c.send_bytes,
                    c.card_bytes,
                    c.stream_events,
                    c.stream_bytes
                );
                results.sizes.push((
                    k,
                    format!(
                        "SendMessage reply {} B, card {} B, stream {} events in {} B",
                        c.send_bytes, c.card_bytes, c.stream_events, c.stream_bytes
                    ),
                ));
                checked.push(k);
            }
            Err(e) => {
                eprintln!("FAIL {}: {e}", k.label());
                results
                    .notes
                    .push(format!("{} failed its correctness check: {e}", k.label()));
                ok = false;
            }
        }
    }
    results.kinds = checked.clone();

    // 2. The timed workloads: rounds × workloads × servers (rotated each round).
    for round in 0..opts.rounds {
        for w in Workload::ALL {
            for i in 0..checked.len() {
                let k = checked[(i + round) % checked.len()];
                let sample = match timed(k, w, &env, opts).await {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("FAIL {} / {}: {e}", k.label(), w.label());
                        results
                            .notes
                            .push(format!("{} / {}: {e}", k.label(), w.label()));
                        ok = false;
                        continue;
                    }
                };
                eprintln!(
                    "round {}/{}  {:32} {:38} {:>10} /s  p50 {:>7} ms  p99 {:>7} ms  cpu {:>3.0}%  errors {}",
                    round + 1,
                    opts.rounds,
                    w.label(),
                    k.label(),
                    crate::report::si(sample.rate),
                    crate::report::ms(sample.p50_ms),
                    crate::report::ms(sample.p99_ms),
                    sample.cpu * 100.0,
                    sample.errors
                );
                if sample.errors > 0 {
                    let e = sample.first_error.clone().unwrap_or_default();
                    results.notes.push(format!(
                        "{} / {} round {}: {} errors under load, first: {e}",
                        k.label(),
                        w.label(),
                        round + 1,
                        sample.errors
                    ));
                    if k.is_ours() {
                        ok = false;
                    }
                }
                results.samples.entry((w, k)).or_default().push(sample);
            }
        }
    }

    // 3. What activated extensions cost, paired: the servers of ours side by side.
    match paired(&checked, &env, opts).await {
        Ok(p) => results.paired = p,
        Err(e) => {
            eprintln!("FAIL extensions, paired: {e}");
            results.notes.push(format!("extensions, paired: {e}"));
            ok = false;
        }
    }

    // 4. Memory: bytes held per finished task.
    for &k in &checked {
        match memory(k, &env, opts).await {
            Ok(m) => {
                eprintln!(
                    "memory {:38} {} tasks at {:.0}/s: idle {} → before {} → after {}: {:.0} B/task",
                    k.label(),
                    m.tasks,
                    m.rate,
                    crate::report::mib(m.idle_rss),
                    crate::report::mib(m.before),
                    crate::report::mib(m.after),
                    m.bytes_per_task()
                );
                if m.errors > 0 {
                    results.notes.push(format!(
                        "{} / memory: {} errors, first: {}",
                        k.label(),
                        m.errors,
                        m.first_error.clone().unwrap_or_default()
                    ));
                    if k.is_ours() {
                        ok = false;
                    }
                }
                results.memory.insert(k, m);
            }
            Err(e) => {
                eprintln!("FAIL {} / memory: {e}", k.label());
                results.notes.push(format!("{} / memory: {e}", k.label()));
                ok = false;
            }
        }
    }

    results.notes.push(
        "the streaming agents of ours and of the official Rust SDK yield to the scheduler after each event (an agent \
         awaiting anything between events does the same); the official SDK needs it — it relays events through a \
         32-slot broadcast channel and fails a stream whose writer falls behind"
            .into(),
    );
    if opts.smoke {
        results.notes.push(
            "smoke mode: 1 s per workload, 1 round — the figures only prove the harness works"
                .into(),
        );
    }
    let (table, _targets_met) = results.render();
    println!("{table}");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("report.md"), &table);
        eprintln!("(also written to {})", out.join("report.md").display());
    }
    Ok(ok)
}

fn fmt_dur(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

fn ms(nanos: u64) -> f64 {
    nanos as f64 / 1e6
}

/// One timed run of workload `w` on a fresh server `k`.
async fn timed(k: Kind, w: Workload, env: &Env, opts: &Options) -> Result<Sample, String> {
    let server = Server::start(k, env, &[]).await?;
    // Let the freshly started process settle.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let cpu0 = procfs::cpu_time(server.pid).unwrap_or_default();
    let t0 = Instant::now();
    let mut sample = match w {
        Workload::Send(_) | Workload::Card => {
            let (req, check, conns) = match w {
                Workload::Send(c) => (k.request(Req::rpc(wire::send_body())), Check::Completed, c),
                _ => (Req::get(wire::CARD_PATH), Check::Ok, 16),
            };
            let r = load::run(
                server.addr,
                req,
                check,
                Plan {
                    conns,
                    warmup: opts.warmup,
                    duration: opts.duration,
                    count: None,
                },
            )
            .await;
            Sample {
                rate: r.rate(),
                p50_ms: ms(r.latency.value_at_quantile(0.5)),
                p99_ms: ms(r.latency.value_at_quantile(0.99)),
                requests: r.requests,
                errors: r.errors,
                first_error: r.first_error,
                ..Sample::default()
            }
        }
        Workload::Stream => {
            let r = load::stream_run(
                server.addr,
                k.request(Req::rpc(wire::stream_body())),
                wire::STREAM_CHUNKS as u64,
                opts.warmup,
                opts.duration,
            )
            .await;
            Sample {
                rate: r.events_per_sec(),
                p50_ms: ms(r.first_event.value_at_quantile(0.5)),
                p99_ms: ms(r.first_event.value_at_quantile(0.99)),
                requests: r.streams,
                errors: r.errors,
                first_error: r.first_error,
                streams_per_sec: r.streams as f64 / r.elapsed.as_secs_f64().max(1e-9),
                stream_p50_ms: ms(r.latency.value_at_quantile(0.5)),
                ..Sample::default()
            }
        }
    };
    let wall = t0.elapsed();
    let cpu1 = procfs::cpu_time(server.pid).unwrap_or_default();
    sample.cpu = cpu1.saturating_sub(cpu0).as_secs_f64() / wall.as_secs_f64().max(1e-9);
    sample.rss_peak = procfs::peak_rss(server.pid).unwrap_or(0);
    if sample.requests == 0 {
        return Err(format!(
            "no request completed: {}",
            sample.first_error.unwrap_or_default()
        ));
    }
    server.stop();
    Ok(sample)
}

/// The extensions' cost measured in pairs: `ours` and each `ours+N ext` server run side by
/// side, and SendMessage load at 16 connections takes turns between them in short slices (the
/// order rotating each slice). A slice's rates are compared with `ours`' in the same slice: they
/// saw the same host, which drifts by more than 5% between runs tens of seconds apart. Two more
/// lanes tell what the figure is made of: a second `ours` (the control: what two identical
/// servers differ by) and `ours` sent the ten-URI header with no extension configured (what the
/// header's bytes alone cost). Then the same servers are measured together: ours and one other
/// lane loaded at once, both on the one server core, which the kernel shares between the two
/// busy processes, so that their rates compare what a request costs each under the same host at
/// the same moment (taking turns, slices a second apart still see the host drift). The official
/// Rust SDK's server is a lane too, when it was run: ours' req/s over its own, on one host; so
/// are `ours+bearer` and `ours+jwt` (the authenticators' cost), when named. `None` when ours was
/// not run, or none of those.
async fn paired(checked: &[Kind], env: &Env, opts: &Options) -> Result<Option<Paired>, String> {
    let with_extensions: Vec<Kind> = [Kind::Ours10Ext, Kind::Ours3Ext]
        .into_iter()
        .filter(|k| checked.contains(k))
        .collect();
    // The authenticators' cost: ours with the bearer-token and the JWT authenticator.
    let with_auth: Vec<Kind> = [Kind::OursBearer, Kind::OursJwt]
        .into_iter()
        .filter(|k| checked.contains(k))
        .collect();
    let official = checked.contains(&Kind::Official);
    if !checked.contains(&Kind::Ours)
        || (with_extensions.is_empty() && with_auth.is_empty() && !official)
    {
        return Ok(None);
    }
    let mut lanes = vec![Lane::Server(Kind::Ours), Lane::Control];
    if !with_extensions.is_empty() {
        lanes.push(Lane::HeaderOnly(Kind::Ours10Ext));
    }
    lanes.extend(with_extensions.into_iter().map(Lane::Server));
    lanes.extend(with_auth.into_iter().map(Lane::Server));
    // The official SDK side by side with ours: the 2.0× ratio on one host.
    if official {
        lanes.push(Lane::Server(Kind::Official));
    }
    let mut servers = Vec::with_capacity(lanes.len());
    for lane in &lanes {
        servers.push(Server::start(lane.server(), env, &[]).await?);
    }
    let (slices, slice) = if opts.smoke {
        (2, Duration::from_millis(200))
    } else {
        (80, Duration::from_millis(250))
    };
    let load_at = |addr: SocketAddr, lane: Lane, warmup: Duration, duration: Duration| {
        load::run(
            addr,
            lane.client().request(Req::rpc(wire::send_body())),
            Check::Completed,
            Plan {
                conns: 16,
                warmup,
                duration,
                count: None,
            },
        )
    };
    let load = |i: usize, warmup: Duration, duration: Duration| {
        load_at(servers[i].addr, lanes[i], warmup, duration)
    };
    for i in 0..lanes.len() {
        load(i, opts.warmup, Duration::from_millis(100)).await;
    }
    let mut rates = vec![Vec::with_capacity(slices); lanes.len()];
    let mut stalled = 0;
    for s in 0..slices {
        for n in 0..lanes.len() {
            let i = (n + s) % lanes.len();
            let r = load(i, Duration::from_millis(50), slice).await;
            if r.errors == 0 && r.requests == 0 {
                // No request completed in the slice, none failed: the server stalled (the
                // official SDK's store, which keeps every task, grows by rehashing). The slice
                // is left out of every comparison; a server that never answers fails below.
                stalled += 1;
                rates[i].push(f64::NAN);
                continue;
            }
            if r.errors > 0 {
                return Err(format!(
                    "{}: {} errors in slice {}, first: {}",
                    lanes[i].label(),
                    r.errors,
                    s + 1,
                    r.first_error.unwrap_or_default()
                ));
            }
            rates[i].push(r.rate());
        }
    }
    for server in servers {
        server.stop();
    }
    if let Some(i) = rates.iter().position(|r| r.iter().all(|x| x.is_nan())) {
        return Err(format!(
            "{}: no request completed in any of the {slices} slices",
            lanes[i].label()
        ));
    }
    // Together: ours and one other lane loaded at once, the lanes in rotating order; each pair
    // on freshly started servers, so that no one process's memory layout decides the figure.
    let (rounds, round) = if opts.smoke {
        (1, Duration::from_millis(300))
    } else {
        // 24 rounds: the median of 12 still moved by ±0.5 points between runs on one host (a
        // spread of about ±0.7 points per round), near the 5% the extensions' target allows.
        (24, Duration::from_secs(2))
    };
    let mut together = vec![Vec::with_capacity(rounds); lanes.len()];
    let others = lanes.len() - 1;
    for r in 0..rounds {
        for n in 0..others {
            let i = 1 + (n + r) % others;
            let base_server = Server::start(lanes[0].server(), env, &[]).await?;
            let other_server = Server::start(lanes[i].server(), env, &[]).await?;
            let warmup = Duration::from_millis(300);
            let base_load = load_at(base_server.addr, lanes[0], warmup, round);
            let other_load = load_at(other_server.addr, lanes[i], warmup, round);
            // Which of the two the load generator starts (and polls) first alternates.
            let (base, other) = if r % 2 == 0 {
                tokio::join!(base_load, other_load)
            } else {
                let (other, base) = tokio::join!(other_load, base_load);
                (base, other)
            };
            base_server.stop();
            other_server.stop();
            for (lane, res) in [(0, &base), (i, &other)] {
                if res.errors > 0 || res.requests == 0 {
                    return Err(format!(
                        "{} (loaded together with {}): {} errors in round {}, first: {}",
                        lanes[lane].label(),
                        lanes[if lane == 0 { i } else { 0 }].label(),
                        res.errors,
                        r + 1,
                        res.first_error.clone().unwrap_or_default()
                    ));
                }
            }
            together[i].push((base.rate(), other.rate()));
        }
    }
    let paired = Paired {
        lanes,
        rates,
        slice,
        stalled,
        together,
        round,
    };
    for (i, lane) in paired.lanes.iter().enumerate().skip(1) {
        if *lane == Lane::Server(Kind::Official) {
            if let Some(text) = paired.describe_ratio(Kind::Official) {
                eprintln!("paired ours ÷ {}: {text}", lane.label());
            }
            continue;
        }
        let show = |how: &str, c: Option<crate::report::Cost>| {
            if let Some(c) = c {
                eprintln!(
                    "paired {:44} vs ours, {how}: cost {:.1}% (middle half {:.1}% … {:.1}%)",
                    lane.label(),
                    c.median,
                    c.low,
                    c.high
                );
            }
        };
        show("taking turns", paired.cost(i));
        show("together", paired.cost_together(i));
    }
    Ok(Some(paired))
}

/// Bytes held per finished task: RSS after `opts.tasks` SendMessage calls (all completed)
/// minus RSS before them, divided by the tasks.
///
/// Our store keeps 10,000 finished tasks by default (the oldest go first); here it is told to keep
/// every task sent, so the figure is the cost of a task actually held, as in the other servers.
async fn memory(k: Kind, env: &Env, opts: &Options) -> Result<Memory, String> {
    let warm = (opts.tasks / 10).clamp(100, 2_000);
    let extra: Vec<String> = match k {
        k if k.is_ours() => {
            vec!["--retain".into(), (opts.tasks + warm + 100).to_string()]
        }
        _ => Vec::new(),
    };
    let server = Server::start(k, env, &extra).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let idle_rss = procfs::rss(server.pid).unwrap_or(0);
    let req = k.request(Req::rpc(wire::send_body()));
    let plan = |count: u64, cap: Duration| Plan {
        conns: 16,
        warmup: Duration::ZERO,
        duration: cap,
        count: Some(count),
    };
    // Warm up: connections, allocator pools, lazily built state.
    let w = load::run(
        server.addr,
        req.clone(),
        Check::Completed,
        plan(warm, Duration::from_secs(60)),
    )
    .await;
    if w.requests == 0 {
        return Err(format!(
            "warm-up failed: {}",
            w.first_error.unwrap_or_default()
        ));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = procfs::rss(server.pid).unwrap_or(0);
    let cap = if opts.smoke {
        Duration::from_secs(30)
    } else {
        Duration::from_secs(400)
    };
    let r = load::run(server.addr, req, Check::Completed, plan(opts.tasks, cap)).await;
    // The tasks are complete (every reply was); let deferred cleanup run.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = procfs::rss(server.pid).unwrap_or(0);
    let peak = procfs::peak_rss(server.pid).unwrap_or(0);
    server.stop();
    Ok(Memory {
        idle_rss,
        before,
        after,
        peak,
        tasks: r.requests,
        rate: r.rate(),
        p50_ms: ms(r.latency.value_at_quantile(0.5)),
        p99_ms: ms(r.latency.value_at_quantile(0.99)),
        errors: r.errors,
        first_error: r.first_error,
    })
}

/// `a2a-bench drive <addr> <send|send-ext|send-ext10|card|stream> <conns> <requests>`: a fixed number of
/// requests against a server started by hand (under `perf` or `valgrind --tool=callgrind`, say),
/// then the rate and latencies. Bounded: 10 minutes at most.
pub(crate) fn drive(args: &[String]) -> Result<(), String> {
    let [addr, what, conns, requests] = args else {
        return Err(
            "usage: a2a-bench drive <addr> <send|send-ext|send-ext10|send-bearer|send-jwt|card|stream> <conns> <requests>".into(),
        );
    };
    let addr: std::net::SocketAddr = addr.parse().map_err(|e| format!("address {addr:?}: {e}"))?;
    if !addr.ip().is_loopback() {
        return Err("drive only targets loopback addresses".into());
    }
    let conns: usize = conns.parse().map_err(|e| format!("conns: {e}"))?;
    let requests: u64 = requests.parse().map_err(|e| format!("requests: {e}"))?;
    let cap = Duration::from_secs(600);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let (req, check) = match what.as_str() {
            "send" => (Req::rpc(wire::send_body()), Check::Completed),
            "send-ext" => (
                Kind::Ours3Ext.request(Req::rpc(wire::send_body())),
                Check::Completed,
            ),
            "send-ext10" => (
                Kind::Ours10Ext.request(Req::rpc(wire::send_body())),
                Check::Completed,
            ),
            "send-bearer" => (
                Kind::OursBearer.request(Req::rpc(wire::send_body())),
                Check::Completed,
            ),
            "send-jwt" => (
                Kind::OursJwt.request(Req::rpc(wire::send_body())),
                Check::Completed,
            ),
            "card" => (Req::get(wire::CARD_PATH), Check::Ok),
            "stream" => {
                // One connection, streams back to back, until `requests` streams are done.
                let t0 = Instant::now();
                let mut done = 0u64;
                let mut events = 0u64;
                while done < requests && t0.elapsed() < cap {
                    let r = load::stream_run(
                        addr,
                        Req::rpc(wire::stream_body()),
                        wire::STREAM_CHUNKS as u64,
                        Duration::ZERO,
                        Duration::from_millis(1),
                    )
                    .await;
                    if r.errors > 0 {
                        return Err(r.first_error.unwrap_or_default());
                    }
                    done += r.streams;
                    events += r.events;
                }
                let secs = t0.elapsed().as_secs_f64();
                println!(
                    "{done} streams, {events} events in {secs:.2} s: {:.0} events/s",
                    events as f64 / secs
                );
                return Ok(());
            }
            other => return Err(format!("unknown workload {other:?}")),
        };
        let r = load::run(
            addr,
            req,
            check,
            Plan {
                conns,
                warmup: Duration::ZERO,
                duration: cap,
                count: Some(requests),
            },
        )
        .await;
        println!(
            "{} requests in {:.2} s: {:.0}/s, p50 {:.3} ms, p99 {:.3} ms, {} errors {}",
            r.requests,
            r.elapsed.as_secs_f64(),
            r.rate(),
            ms(r.latency.value_at_quantile(0.5)),
            ms(r.latency.value_at_quantile(0.99)),
            r.errors,
            r.first_error.unwrap_or_default()
        );
        Ok(())
    })
}
