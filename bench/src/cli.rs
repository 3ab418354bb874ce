//! Command-line options of the harness.

use std::time::Duration;

use crate::servers::Kind;

pub(crate) const USAGE: &str = "\
usage: a2a-bench [--smoke] [--duration 10s] [--rounds 3] [--servers LIST] [--tasks N]
                 [--warmup 1s] [--no-pin] [--out DIR]
       a2a-bench serve <ours|ours3ext|ours10ext|official|officialgrpc|floor|grpcfloor> <port> [--grpc PORT]
       a2a-bench grpc [--duration 3s] [--slice 500ms] [--no-pin]
                       (SendMessage and streams over gRPC: ours against the official Rust SDK)
       a2a-bench drive <addr> <send|send-ext|send-ext10|card|stream> <conns> <requests>
                       (a fixed load against a server you started, e.g. under a profiler)
       a2a-bench push <memory|sqlite> [tasks] [clients]
                       (push notifications to a local webhook: deliveries/s, event->webhook
                       latency; default 2000 tasks, 8 clients)
       a2a-bench store <send|stream|latency|list|retention|disk|all> [--stores LIST] [--duration 10s]
                       [--rounds 2] [--conns 16] [--instances 3] [--tasks 100000]
                       [--tenants 200000] [--asks 50000] [--no-pin] (`store --help`: all)
                       (the stores: SendMessage/s and events/s on memory, SQLite and
                       PostgreSQL, cross-instance event latency, ListTasks among 100,000
                       tasks, RSS under retention)

  --smoke          1 s per workload, 1 round, 1,000 tasks for the memory workload; servers whose
                   toolchain is unavailable (Python venv) are skipped instead of failing
  --duration D     time per workload and round (default 10s; units ms, s)
  --rounds N       rounds, servers interleaved within each round (default 3)
  --servers LIST   comma-separated subset of ours,ours3ext,ours10ext,official,python,
                   floor (default all)
  --tasks N        tasks sent for the bytes-per-task workload (default 100000)
  --warmup D       unmeasured load before each measured run (default 1s; smoke 200ms)
  --no-pin         do not pin servers to core 0 and the load generator to core 1
  --out DIR        where results.json and report.md go (default target/bench)";

/// What to run.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) smoke: bool,
    pub(crate) duration: Duration,
    pub(crate) warmup: Duration,
    pub(crate) rounds: usize,
    pub(crate) servers: Vec<Kind>,
    pub(crate) tasks: u64,
    pub(crate) pin: bool,
    pub(crate) out: Option<std::path::PathBuf>,
}

impl Options {
    /// Parses the arguments; `Ok(None)` for `--help`.
    pub(crate) fn parse(args: &[String]) -> Result<Option<Self>, String> {
        let smoke = args.iter().any(|a| a == "--smoke");
        let mut o = Options {
            smoke,
            duration: Duration::from_secs(if smoke { 1 } else { 10 }),
            warmup: Duration::from_millis(if smoke { 200 } else { 1000 }),
            rounds: if smoke { 1 } else { 3 },
            servers: Kind::ALL.to_vec(),
            tasks: if smoke { 1_000 } else { 100_000 },
            pin: true,
            out: None,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |name: &str| {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match a.as_str() {
                "--smoke" => {}
                "-h" | "--help" => return Ok(None),
                "--no-pin" => o.pin = false,
                "--duration" => o.duration = parse_duration(&value(a)?)?,
                "--warmup" => o.warmup = parse_duration(&value(a)?)?,
                "--rounds" => {
                    o.rounds = value(a)?.parse().map_err(|e| format!("--rounds: {e}"))?;
                    if o.rounds == 0 {
                        return Err("--rounds must be at least 1".into());
                    }
                }
                "--tasks" => {
                    o.tasks = value(a)?
                        .replace(['_', ','], "")
                        .parse()
                        .map_err(|e| format!("--tasks: {e}"))?;
                }
                "--servers" => {
                    o.servers = value(a)?
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(|s| {
                            Kind::parse(s.trim()).ok_or_else(|| format!("unknown server {s:?}"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--out" => o.out = Some(value(a)?.into()),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if o.duration.is_zero() || o.duration > Duration::from_secs(600) {
            return Err("--duration must be between 1 ms and 600 s".into());
        }
        if o.tasks > 10_000_000 {
            return Err("--tasks is capped at 10,000,000".into());
        }
        Ok(Some(o))
    }
}

/// `10s`, `500ms`, `2` (seconds).
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("bad duration {s:?} (use e.g. 10s or 500ms)");
    if let Some(ms) = s.strip_suffix("ms") {
        return ms.parse().map(Duration::from_millis).map_err(|_| bad());
    }
    let secs = s.strip_suffix('s').unwrap_or(s);
    secs.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert!(parse_duration("x").is_err());
    }

    #[test]
    fn smoke_defaults() {
        let o = Options::parse(&["--smoke".into()]).unwrap().unwrap();
        assert_eq!(o.rounds, 1);
        assert_eq!(o.tasks, 1_000);
        assert_eq!(o.duration, Duration::from_secs(1));
    }
}
