//! Task creations/s (JSON-RPC SendMessage of the echo agent, blocking, a new task each) and SSE
//! events/s (`stream100`: 100 artifact chunks, then COMPLETED) per store.
//!
//! Every measured run starts fresh servers on a fresh store (a new SQLite file, a new
//! PostgreSQL database), checks them, loads them with SendMessage on `conns` connections spread
//! over the instances for `warmup + duration`, then streams back to back on one connection per
//! instance for `warmup` and half the duration. The stores take turns within a round, in an
//! order rotated each round. A PostgreSQL database first gets 2,000 tasks and an `ANALYZE`, as
//! autovacuum gives a running deployment (`--no-analyze`: measured new, without statistics).

use std::time::{Duration, Instant};

use sqlx::Connection as _;

use super::{Options, PgDb, Report, Row, SqliteFile, Store, StoreServer, check};
use crate::load::{self, Check, Plan, Req};
use crate::wire;

/// One store configuration of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Setup {
    Memory,
    Sqlite,
    /// PostgreSQL with this many instances on one database.
    Postgres(usize),
}

impl Setup {
    fn label(self) -> String {
        match self {
            Setup::Memory => "memory (default in-memory store)".into(),
            Setup::Sqlite => "SQLite (file, WAL, synchronous=NORMAL)".into(),
            Setup::Postgres(1) => "PostgreSQL, 1 instance".into(),
            Setup::Postgres(n) => format!("PostgreSQL, {n} instances on one database"),
        }
    }

    /// For the servers' log files.
    fn short(self) -> String {
        match self {
            Setup::Memory => "memory".into(),
            Setup::Sqlite => "sqlite".into(),
            Setup::Postgres(n) => format!("postgres{n}"),
        }
    }
}

/// One measured run.
#[derive(Clone, Debug, Default)]
struct Sample {
    send_rate: f64,
    p50_ms: f64,
    p99_ms: f64,
    /// Server CPU over the SendMessage run's wall time (1.0 = one core busy), all instances.
    cpu: f64,
    /// CPU of the PostgreSQL backends serving this run's database, likewise.
    pg_cpu: Option<f64>,
    errors: u64,
    first_error: Option<String>,
    /// SSE events/s, all instances' streams together.
    events_rate: f64,
    first_event_p50_ms: f64,
}

fn ms(nanos: u64) -> f64 {
    nanos as f64 / 1e6
}

/// The PIDs of the PostgreSQL backends connected to database `name`.
async fn backends(admin: &str, name: &str) -> Vec<u32> {
    let Ok(Ok(mut conn)) =
        tokio::time::timeout(Duration::from_secs(5), sqlx::PgConnection::connect(admin)).await
    else {
        return Vec::new();
    };
    let pids: Vec<i32> = sqlx::query_scalar("SELECT pid FROM pg_stat_activity WHERE datname = $1")
        .bind(name)
        .fetch_all(&mut conn)
        .await
        .unwrap_or_default();
    let _ = conn.close().await;
    pids.into_iter()
        .filter_map(|p| u32::try_from(p).ok())
        .collect()
}

fn cpu_of(pids: &[u32]) -> Vec<(u32, Duration)> {
    pids.iter()
        .map(|p| (*p, crate::procfs::cpu_time(*p).unwrap_or_default()))
        .collect()
}

async fn measure(setup: Setup, opts: &Options, pin: bool) -> Result<Sample, String> {
    let file = SqliteFile::new();
    let db = match setup {
        Setup::Postgres(_) => Some(PgDb::create(&opts.pg).await?),
        _ => None,
    };
    let (url, n) = match setup {
        Setup::Memory => ("memory:".to_owned(), 1),
        Setup::Sqlite => (file.url(), 1),
        Setup::Postgres(n) => (db.as_ref().map(|d| d.url.clone()).unwrap_or_default(), n),
    };
    let mut servers = Vec::with_capacity(n);
    for i in 0..n {
        let label = format!("{}-{i}", setup.short());
        servers.push(StoreServer::start(&label, &url, &[], pin).await?);
    }
    for s in &servers {
        check(s.addr)
            .await
            .map_err(|e| format!("{}: {e}", setup.label()))?;
    }
    if let Some(db) = &db
        && opts.analyze
    {
        // A running deployment's tables have statistics (autovacuum analyzes a table within a
        // minute of its first thousands of writes); a new one has none, and then PostgreSQL
        // plans the versioned UPDATE of a task on the context index instead of the primary
        // key, reading every index entry of the owner: each write costs more as the table
        // grows. Measured as a deployment runs: 2,000 tasks, then ANALYZE.
        let r = load::run(
            servers[0].addr,
            Req::rpc(wire::send_body()),
            Check::Completed,
            Plan {
                conns: 8,
                warmup: Duration::ZERO,
                duration: Duration::from_secs(60),
                count: Some(2_000),
            },
        )
        .await;
        if r.errors > 0 {
            return Err(format!(
                "{}: warm-up: {}",
                setup.label(),
                r.first_error.unwrap_or_default()
            ));
        }
        db.exec_in("ANALYZE").await?;
    }
    let name = db.as_ref().map(|d| d.name.clone());
    let pg_before = match &name {
        Some(name) => cpu_of(&backends(&opts.pg, name).await),
        None => Vec::new(),
    };
    let cpu0: Duration = servers.iter().map(StoreServer::cpu).sum();
    let t0 = Instant::now();
    let runs = servers.iter().enumerate().map(|(i, s)| {
        let conns = opts.conns / n + usize::from(i < opts.conns % n);
        load::run(
            s.addr,
            Req::rpc(wire::send_body()),
            Check::Completed,
            Plan {
                conns: conns.max(1),
                warmup: opts.warmup,
                duration: opts.duration,
                count: None,
            },
        )
    });
    let results = futures::future::join_all(runs).await;
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
    let cpu1: Duration = servers.iter().map(StoreServer::cpu).sum();
    let pg_cpu = match &name {
        Some(name) => {
            let after = cpu_of(&backends(&opts.pg, name).await);
            let used: Duration = after
                .iter()
                .map(|(pid, t)| {
                    let before = pg_before
                        .iter()
                        .find(|(p, _)| p == pid)
                        .map_or(Duration::ZERO, |(_, b)| *b);
                    t.saturating_sub(before)
                })
                .sum();
            Some(used.as_secs_f64() / wall)
        }
        None => None,
    };
    let mut latency = load::histogram();
    let mut sample = Sample {
        cpu: cpu1.saturating_sub(cpu0).as_secs_f64() / wall,
        pg_cpu,
        ..Sample::default()
    };
    for r in &results {
        sample.send_rate += r.rate();
        sample.errors += r.errors;
        if sample.first_error.is_none() {
            sample.first_error.clone_from(&r.first_error);
        }
        let _ = latency.add(&r.latency);
    }
    sample.p50_ms = ms(latency.value_at_quantile(0.5));
    sample.p99_ms = ms(latency.value_at_quantile(0.99));
    if results.iter().all(|r| r.requests == 0) {
        return Err(format!(
            "{}: no SendMessage completed: {}",
            setup.label(),
            sample.first_error.unwrap_or_default()
        ));
    }

    // Half the time: a stream's rate settles within a second.
    let window = (opts.duration / 2)
        .max(Duration::from_secs(1))
        .min(opts.duration);
    let streams = servers.iter().map(|s| {
        load::stream_run(
            s.addr,
            Req::rpc(wire::stream_body()),
            wire::STREAM_CHUNKS as u64,
            opts.warmup,
            window,
        )
    });
    let streamed = futures::future::join_all(streams).await;
    let mut first = load::histogram();
    for r in &streamed {
        sample.events_rate += r.events_per_sec();
        sample.errors += r.errors;
        if sample.first_error.is_none() {
            sample.first_error.clone_from(&r.first_error);
        }
        let _ = first.add(&r.first_event);
    }
    sample.first_event_p50_ms = ms(first.value_at_quantile(0.5));
    drop(servers);
    drop(db);
    Ok(sample)
}

fn si(v: f64) -> String {
    crate::report::si(v)
}

/// Median (the mean of the middle two of an even count), min and max of `v`.
fn spread(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let median = match s.len() {
        0 => f64::NAN,
        n if n % 2 == 0 => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        n => s[n / 2],
    };
    (
        median,
        s.first().copied().unwrap_or(f64::NAN),
        s.last().copied().unwrap_or(f64::NAN),
    )
}

pub(super) async fn run(opts: &Options, pin: bool, report: &mut Report) -> Result<(), String> {
    let mut setups = Vec::new();
    for s in &opts.stores {
        match s {
            Store::Memory => setups.push(Setup::Memory),
            Store::Sqlite => setups.push(Setup::Sqlite),
            Store::Postgres => {
                setups.push(Setup::Postgres(1));
                if opts.instances > 1 {
                    setups.push(Setup::Postgres(opts.instances));
                }
            }
        }
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); setups.len()];
    for round in 0..opts.rounds {
        for k in 0..setups.len() {
            let i = (k + round) % setups.len();
            let setup = setups[i];
            let s = measure(setup, opts, pin).await?;
            eprintln!(
                "round {}/{} {:46} SendMessage {:>7}/s p50 {:.3} ms p99 {:.3} ms cpu {:.0}%{}  \
                 stream {:>7} events/s  errors {}  (load {})",
                round + 1,
                opts.rounds,
                setup.label(),
                si(s.send_rate),
                s.p50_ms,
                s.p99_ms,
                s.cpu * 100.0,
                s.pg_cpu
                    .map(|c| format!(" (PostgreSQL backends {:.0}%)", c * 100.0))
                    .unwrap_or_default(),
                si(s.events_rate),
                s.errors,
                super::loadavg()
            );
            if s.errors > 0 {
                report.note(format!(
                    "{} round {}: {} errors, first: {}",
                    setup.label(),
                    round + 1,
                    s.errors,
                    s.first_error.clone().unwrap_or_default()
                ));
            }
            samples[i].push(s);
        }
    }
    let memory_rate = setups
        .iter()
        .position(|s| *s == Setup::Memory)
        .map(|i| spread(&samples[i].iter().map(|s| s.send_rate).collect::<Vec<_>>()).0);
    let memory_events = setups
        .iter()
        .position(|s| *s == Setup::Memory)
        .map(|i| spread(&samples[i].iter().map(|s| s.events_rate).collect::<Vec<_>>()).0);
    let one_core = if pin { "server on core 0" } else { "unpinned" };
    for (i, setup) in setups.iter().enumerate() {
        let v = &samples[i];
        let (med, lo, hi) = spread(&v.iter().map(|s| s.send_rate).collect::<Vec<_>>());
        let p50 = spread(&v.iter().map(|s| s.p50_ms).collect::<Vec<_>>()).0;
        let p99 = spread(&v.iter().map(|s| s.p99_ms).collect::<Vec<_>>()).0;
        let cpu = spread(&v.iter().map(|s| s.cpu).collect::<Vec<_>>()).0;
        let pg = v.iter().filter_map(|s| s.pg_cpu).collect::<Vec<_>>();
        let ratio = match memory_rate {
            Some(m) if *setup != Setup::Memory && m > 0.0 => {
                format!("; {:.1}% of memory", med / m * 100.0)
            }
            _ => String::new(),
        };
        let (target, pass) = match setup {
            // Unpinned, the server may use both cores: not the target's figure.
            Setup::Sqlite => (
                format!("≥ 5,000/s ({one_core})"),
                pin.then_some(med >= 5_000.0),
            ),
            Setup::Postgres(n) if *n == opts.instances && *n > 1 => {
                (format!("≥ 2,000/s ({n} instances)"), Some(med >= 2_000.0))
            }
            _ => (String::new(), None),
        };
        report.row(Row {
            figure: format!("SendMessage/s, {} conns, new task each", opts.conns),
            store: setup.label(),
            value: format!(
                "**{}/s** ({}–{}); p50 {p50:.2} ms, p99 {p99:.2} ms; server CPU {:.0}%{}{ratio}",
                si(med),
                si(lo),
                si(hi),
                cpu * 100.0,
                if pg.is_empty() {
                    String::new()
                } else {
                    format!(", PostgreSQL backends {:.0}%", spread(&pg).0 * 100.0)
                }
            ),
            target,
            pass,
        });
    }
    for (i, setup) in setups.iter().enumerate() {
        let v = &samples[i];
        let (med, lo, hi) = spread(&v.iter().map(|s| s.events_rate).collect::<Vec<_>>());
        let first = spread(&v.iter().map(|s| s.first_event_p50_ms).collect::<Vec<_>>()).0;
        let n = match setup {
            Setup::Postgres(n) => *n,
            _ => 1,
        };
        let ratio = match memory_events {
            Some(m) if *setup != Setup::Memory && m > 0.0 => {
                format!("; {:.1}% of memory", med / m * 100.0)
            }
            _ => String::new(),
        };
        report.row(Row {
            figure: if n == 1 {
                "SSE events/s, one stream (100 chunks a task)".into()
            } else {
                format!("SSE events/s, {n} streams, one per instance")
            },
            store: setup.label(),
            value: format!(
                "**{}/s** ({}–{}); first event p50 {first:.2} ms{ratio}",
                si(med),
                si(lo),
                si(hi)
            ),
            target: String::new(),
            pass: None,
        });
    }
    Ok(())
}
