//! `a2a-bench store <send|stream|latency|list|retention|all>`: the figures of issue 23 for the
//! three stores (memory, SQLite, PostgreSQL). See `BENCHMARKS.md`, "Stores".
//!
//! - [`throughput`]: SendMessage/s (a new task each) and SSE events/s, every store in one run,
//!   servers as child processes pinned to core 0 (PostgreSQL: one instance, and N instances on
//!   one database with the load spread over them);
//! - [`latency`]: an event's way from an agent on instance A to a subscriber on instance B of
//!   one PostgreSQL database (LISTEN/NOTIFY), against a subscriber on A itself;
//! - [`list`]: ListTasks pages of 50 among 100,000 tasks of one owner, and the query plans;
//! - [`retention`]: a server's RSS under 200,000 tenants on the default in-memory store, and
//!   50,000 abandoned INPUT_REQUIRED tasks under an idle bound;
//! - [`disk`]: the demo agent's SQLite file and RSS under 250,000 tasks and the default
//!   retention bound.
//!
//! Every run makes its own SQLite files (a fresh temporary directory) and PostgreSQL databases
//! (`a2a_bench_<pid>_<n>`, dropped at the end); only 127.0.0.1 is addressed; every loop is
//! bounded in count and time.

mod disk;
mod fixtures;
mod latency;
mod list;
mod retention;
pub(crate) mod serve;
mod throughput;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::cli::parse_duration;

pub(crate) use fixtures::{PgDb, SqliteFile, StoreServer, check};

/// A store of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Store {
    Memory,
    Sqlite,
    Postgres,
}

impl Store {
    const ALL: [Store; 3] = [Store::Memory, Store::Sqlite, Store::Postgres];

    fn name(self) -> &'static str {
        match self {
            Store::Memory => "memory",
            Store::Sqlite => "sqlite",
            Store::Postgres => "postgres",
        }
    }
}

/// What to measure, and how long.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) what: Vec<&'static str>,
    pub(crate) stores: Vec<Store>,
    pub(crate) duration: Duration,
    pub(crate) warmup: Duration,
    pub(crate) rounds: usize,
    pub(crate) conns: usize,
    pub(crate) instances: usize,
    pub(crate) events: usize,
    pub(crate) pause_ms: u64,
    pub(crate) tasks: usize,
    pub(crate) tenants: u64,
    pub(crate) sample_every: u64,
    pub(crate) asks: u64,
    pub(crate) disk_tasks: u64,
    pub(crate) disk_every: u64,
    pub(crate) idle: Duration,
    pub(crate) pin: bool,
    pub(crate) pg: String,
    /// ANALYZE a PostgreSQL database after 2,000 tasks, before the throughput is measured.
    pub(crate) analyze: bool,
}

pub(crate) const USAGE: &str = "\
usage: a2a-bench store <send|stream|latency|list|retention|disk|all>[,…] [options]
  --stores LIST     memory,sqlite,postgres (default all three)
  --duration D      measured time per throughput run (default 10s)
  --warmup D        unmeasured load before it (default 1s)
  --rounds N        throughput rounds, stores interleaved (default 2)
  --conns N         SendMessage connections per store, spread over its instances (default 16)
  --instances N     PostgreSQL instances on one database (default 3)
  --events N        events of the latency task (default 2000)
  --pause-ms N      pause between two of them (default 2)
  --tasks N         tasks of the one owner for ListTasks (default 100000)
  --tenants N       SendMessage calls, one tenant each, for retention (default 200000)
  --every N         RSS sampled every N of them (default 20000)
  --asks N          abandoned INPUT_REQUIRED tasks (default 50000)
  --idle D          the idle bound on them (default 10s)
  --disk-tasks N    SendMessage calls on the SQLite store for disk (default 250000)
  --disk-every N    file size and RSS sampled every N of them (default 25000)
  --pg URL          PostgreSQL admin URL on 127.0.0.1 (default postgres://postgres@127.0.0.1:5432/postgres)
  --no-analyze      measure PostgreSQL throughput on the new database as it is, without the
                    ANALYZE (after 2,000 tasks) that autovacuum does in a running deployment
  --no-pin          do not pin servers to core 0 and the load generator to core 1";

const WHATS: &[&str] = &["send", "stream", "latency", "list", "retention", "disk"];

impl Options {
    fn parse(args: &[String]) -> Result<Self, String> {
        let Some(first) = args.first() else {
            return Err("what to measure?".into());
        };
        let mut what = Vec::new();
        for w in first.split(',') {
            if w == "all" {
                what.extend_from_slice(WHATS);
            } else if let Some(w) = WHATS.iter().find(|x| **x == w) {
                what.push(*w);
            } else {
                return Err(format!("unknown measurement {w:?}"));
            }
        }
        let mut o = Options {
            what,
            stores: Store::ALL.to_vec(),
            duration: Duration::from_secs(10),
            warmup: Duration::from_secs(1),
            rounds: 2,
            conns: 16,
            instances: 3,
            events: 2_000,
            pause_ms: 2,
            tasks: 100_000,
            tenants: 200_000,
            sample_every: 20_000,
            asks: 50_000,
            disk_tasks: 250_000,
            disk_every: 25_000,
            idle: Duration::from_secs(10),
            pin: true,
            pg: "postgres://postgres@127.0.0.1:5432/postgres".into(),
            analyze: true,
        };
        let mut it = args[1..].iter();
        while let Some(a) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{a} needs a value"))
            };
            let number = |v: String| {
                v.replace(['_', ','], "")
                    .parse::<u64>()
                    .map_err(|e| format!("{a} {v:?}: {e}"))
            };
            match a.as_str() {
                "--no-pin" => o.pin = false,
                "--no-analyze" => o.analyze = false,
                "--stores" => {
                    o.stores = value()?
                        .split(',')
                        .map(|s| {
                            Store::ALL
                                .into_iter()
                                .find(|k| k.name() == s)
                                .ok_or_else(|| format!("unknown store {s:?}"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--duration" => o.duration = parse_duration(&value()?)?,
                "--warmup" => o.warmup = parse_duration(&value()?)?,
                "--idle" => o.idle = parse_duration(&value()?)?,
                "--rounds" => o.rounds = number(value()?)?.clamp(1, 20) as usize,
                "--conns" => o.conns = number(value()?)?.clamp(1, 256) as usize,
                "--instances" => o.instances = number(value()?)?.clamp(1, 8) as usize,
                "--events" => o.events = number(value()?)?.clamp(10, 100_000) as usize,
                "--pause-ms" => o.pause_ms = number(value()?)?.min(1_000),
                "--tasks" => o.tasks = number(value()?)?.clamp(100, 1_000_000) as usize,
                "--tenants" => o.tenants = number(value()?)?.clamp(1, 2_000_000),
                "--every" => o.sample_every = number(value()?)?.max(1),
                "--asks" => o.asks = number(value()?)?.clamp(1, 500_000),
                "--disk-tasks" => o.disk_tasks = number(value()?)?.clamp(1, 5_000_000),
                "--disk-every" => o.disk_every = number(value()?)?.max(1),
                "--pg" => o.pg = value()?,
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if o.duration.is_zero() || o.duration > Duration::from_secs(300) {
            return Err("--duration must be between 1 ms and 300 s".into());
        }
        if !loopback_url(&o.pg) {
            return Err(format!("--pg {:?}: only 127.0.0.1 or localhost", o.pg));
        }
        Ok(o)
    }
}

/// Whether a `postgres://[user@]host[:port]/db` URL names the loopback host.
fn loopback_url(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default();
    host == "127.0.0.1" || host == "localhost"
}

/// `a2a-bench store …`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("serve") {
        return serve::serve(&args[1..]);
    }
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let opts = Options::parse(args).map_err(|e| format!("{e}\n\n{USAGE}"))?;
    let machine = crate::procfs::machine();
    let pinned = crate::run::pin_self(opts.pin);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut report = Report::new(machine, pinned, &opts);
    let result = rt.block_on(async {
        for what in &opts.what {
            // Both come from the same runs: measured once.
            if *what == "stream" && opts.what.contains(&"send") {
                continue;
            }
            eprintln!("== {what} (load average {})", loadavg());
            match *what {
                "send" | "stream" => throughput::run(&opts, pinned, &mut report).await?,
                "latency" => latency::run(&opts, pinned, &mut report).await?,
                "list" => list::run(&opts, &mut report).await?,
                "retention" => retention::run(&opts, pinned, &mut report).await?,
                "disk" => disk::run(&opts, pinned, &mut report).await?,
                _ => {}
            }
        }
        Ok::<(), String>(())
    });
    report.note(format!("load average at the end: {}", loadavg()));
    let text = report.render();
    println!("{text}");
    let out = target_dir().join("bench");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("store-report.md"), &text);
        eprintln!(
            "(also written to {})",
            out.join("store-report.md").display()
        );
    }
    result
}

/// `/proc/loadavg`'s three averages, as `uptime` prints them.
pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), PathBuf::from)
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

/// The commit measured (`git rev-parse --short HEAD`, and whether the runtime was changed).
fn commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(root())
            .args(args)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let head = git(&["rev-parse", "--short", "HEAD"]);
    let dirty = !git(&["status", "--porcelain", "--", "a2a-runtime", "bench"]).is_empty();
    format!(
        "{}{}",
        if head.is_empty() { "?" } else { &head },
        if dirty {
            " with uncommitted changes"
        } else {
            ""
        }
    )
}

/// One row of the figures table.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) figure: String,
    pub(crate) store: String,
    pub(crate) value: String,
    pub(crate) target: String,
    /// `Some(true)`: PASS, `Some(false)`: MISS, `None`: no target.
    pub(crate) pass: Option<bool>,
}

/// What a run found: the table, and notes under it.
#[derive(Debug)]
pub(crate) struct Report {
    header: String,
    rows: Vec<Row>,
    notes: Vec<String>,
}

impl Report {
    fn new(machine: String, pinned: bool, opts: &Options) -> Self {
        Report {
            header: format!(
                "Machine: {machine}; a2a-runtime at {}\nSettings: {}; load average at start {}; \
                 {} s per throughput run after {} ms warm-up, {} round(s), {} connections per \
                 store, {} PostgreSQL instances{}",
                commit(),
                if pinned {
                    "servers pinned to core 0 (taskset), load generator and in-process parts to core 1"
                } else {
                    "no pinning"
                },
                loadavg(),
                opts.duration.as_secs_f64(),
                opts.warmup.as_millis(),
                opts.rounds,
                opts.conns,
                opts.instances,
                if opts.analyze {
                    " (each database ANALYZEd after 2,000 tasks, before the measured run)"
                } else {
                    " (new databases measured as they are, never ANALYZEd)"
                },
            ),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub(crate) fn row(&mut self, row: Row) {
        eprintln!(
            "  {:5} {} / {}: {} (target {})",
            match row.pass {
                Some(true) => "PASS",
                Some(false) => "MISS",
                None => "",
            },
            row.figure,
            row.store,
            row.value,
            if row.target.is_empty() {
                "–"
            } else {
                &row.target
            }
        );
        self.rows.push(row);
    }

    pub(crate) fn note(&mut self, note: String) {
        eprintln!("  note: {note}");
        self.notes.push(note);
    }

    fn render(&self) -> String {
        let mut s = format!(
            "{}\n\n| figure | store | measured | target | |\n|---|---|---|---|---|\n",
            self.header
        );
        for r in &self.rows {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                r.figure,
                r.store,
                r.value,
                r.target,
                match r.pass {
                    Some(true) => "PASS",
                    Some(false) => "**MISS**",
                    None => "",
                }
            ));
        }
        for n in &self.notes {
            s.push_str(&format!("\n- {n}"));
        }
        s
    }
}

/// The `q`-quantile of sorted `v` (nearest rank).
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// A small deterministic PRNG (xorshift64*), for the clients' random choices.
#[derive(Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let o = Options::parse(&["all".into()]).unwrap();
        assert_eq!(o.what, WHATS.to_vec());
        assert_eq!(o.stores, Store::ALL.to_vec());
        let o = Options::parse(&[
            "send,list".into(),
            "--stores".into(),
            "sqlite".into(),
            "--tasks".into(),
            "1_000".into(),
        ])
        .unwrap();
        assert_eq!(o.what, vec!["send", "list"]);
        assert_eq!((o.stores.clone(), o.tasks), (vec![Store::Sqlite], 1_000));
        assert!(Options::parse(&["nope".into()]).is_err());
        assert!(
            Options::parse(&[
                "list".into(),
                "--pg".into(),
                "postgres://db.example/x".into()
            ])
            .is_err()
        );
    }

    #[test]
    fn loopback_urls() {
        assert!(loopback_url("postgres://postgres@127.0.0.1:5432/postgres"));
        assert!(loopback_url("postgresql://localhost/x"));
        assert!(!loopback_url("postgres://u@10.0.0.1/x"));
        assert!(!loopback_url("mysql://127.0.0.1/x"));
    }

    #[test]
    fn quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 1.0), 5.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
