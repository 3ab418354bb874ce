//! `a2a-bench store serve <port> --store URL [options]`: one server of the store benchmark, on
//! a store chosen by URL, until killed.
//!
//! The agent is [`StoreAgent`] (or, with `--agent demo`, the examples' `DemoAgent`, what the
//! README's run command serves). With `memory:` the server keeps the builder's default
//! in-memory store (so that `--max-tasks` and its global cap apply); any other URL is opened
//! with `a2a_runtime::store::connect` and given to the builder with `stores` (PostgreSQL: the
//! instances sharing the database form a cluster).

use std::time::Duration;

use a2a_examples::{DemoAgent, EchoAgent};
use a2a_runtime::A2aError;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink, Retention};
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::Part;

use crate::cli::parse_duration;

/// The agent of the store benchmark, by the message's text:
/// - `stream100`: 100 artifact chunks, then COMPLETED (the harness's streaming agent);
/// - `ask`: INPUT_REQUIRED (a question the client never answers);
/// - `latency N MS`: WORKING, a second's pause (for subscribers to connect), then `N` chunks
///   `MS` milliseconds apart, each carrying `i t` with `t` the wall clock (µs since the epoch)
///   just before it was published, then COMPLETED. Each chunk replaces the last (`append`
///   false): the task keeps its size, so the figure is the path of an event, not a growing
///   task's write;
/// - anything else: the examples' echo (`echo: <text>` artifact, COMPLETED).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StoreAgent;

/// The most chunks a `latency` task emits, and the longest pause between two.
const MAX_LATENCY_EVENTS: usize = 100_000;
const MAX_LATENCY_PAUSE_MS: u64 = 1_000;

/// Wall clock, µs since the epoch.
pub(crate) fn now_us() -> i64 {
    chrono::Utc::now().timestamp_micros()
}

impl AgentExecutor for StoreAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let text = ctx.text();
        let mut words = text.split_whitespace();
        match words.next() {
            Some("ask") => events.input_required("which one?").await,
            Some("latency") => {
                let n: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(100);
                let pause: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(2);
                let n = n.min(MAX_LATENCY_EVENTS);
                let pause = Duration::from_millis(pause.min(MAX_LATENCY_PAUSE_MS));
                events.progress("timing events").await?;
                tokio::time::sleep(Duration::from_secs(1)).await;
                for i in 0..n {
                    if ctx.is_cancelled() {
                        return Ok(());
                    }
                    let at = now_us();
                    events
                        .artifact_chunk(
                            "latency",
                            [Part::text(format!("{i} {at}"))],
                            false,
                            i + 1 == n,
                        )
                        .await?;
                    tokio::time::sleep(pause).await;
                }
                events.complete().await
            }
            Some(w) if w == crate::wire::STREAM_TEXT => {
                crate::servers::ours::BenchAgent.execute(ctx, events).await
            }
            _ => EchoAgent.execute(ctx, events).await,
        }
    }
}

/// What `store serve` was asked for.
#[derive(Debug)]
struct ServeOptions {
    port: u16,
    store: String,
    demo: bool,
    max_tasks: Option<usize>,
    idle: Option<Duration>,
    purge: Option<Duration>,
    sweep: Option<Duration>,
    batch: Option<usize>,
}

fn parse(args: &[String]) -> Result<ServeOptions, String> {
    let port = args.first().ok_or(
        "usage: a2a-bench store serve <port> --store URL [--agent store|demo] \
                [--max-tasks N] [--idle D] [--purge D] [--sweep D] [--batch N]",
    )?;
    let mut o = ServeOptions {
        port: port.parse().map_err(|e| format!("port {port:?}: {e}"))?,
        store: "memory:".into(),
        demo: false,
        max_tasks: None,
        idle: None,
        purge: None,
        sweep: None,
        batch: None,
    };
    let mut it = args[1..].iter();
    while let Some(opt) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("store serve option {opt:?} needs a value"))?;
        let number = |v: &str| {
            v.replace(['_', ','], "")
                .parse::<usize>()
                .map_err(|e| format!("{opt} {v:?}: {e}"))
        };
        match opt.as_str() {
            "--store" => o.store.clone_from(value),
            "--agent" => {
                o.demo = match value.as_str() {
                    "demo" => true,
                    "store" => false,
                    other => return Err(format!("unknown agent {other:?}: store or demo")),
                }
            }
            "--max-tasks" => o.max_tasks = Some(number(value)?),
            "--batch" => o.batch = Some(number(value)?),
            "--idle" => o.idle = Some(parse_duration(value)?),
            "--purge" => o.purge = Some(parse_duration(value)?),
            "--sweep" => o.sweep = Some(parse_duration(value)?),
            other => return Err(format!("unknown store serve option {other:?}")),
        }
    }
    Ok(o)
}

/// Serves until killed.
pub(crate) fn serve(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    actix_web::rt::System::new().block_on(async move {
        let mut builder = A2aServer::builder()
            .card(crate::servers::ours::card())
            .workers(1)
            .linked_extensions(false);
        builder = if o.demo {
            builder.executor(DemoAgent)
        } else {
            builder.executor(StoreAgent)
        };
        if o.store != "memory:" {
            let stores = a2a_runtime::store::connect(&o.store)
                .await
                .map_err(|e| e.to_string())?;
            builder = builder.stores(stores);
        }
        if let Some(n) = o.max_tasks {
            builder = builder.max_tasks(n);
        }
        if o.idle.is_some() || o.purge.is_some() || o.sweep.is_some() || o.batch.is_some() {
            let base = if o.store == "memory:" {
                Retention::in_memory()
            } else {
                Retention::durable()
            };
            builder = builder.retention(Retention {
                interrupted_ttl: o.idle.or(base.interrupted_ttl),
                finished_ttl: o.purge.or(base.finished_ttl),
                every: o.sweep.unwrap_or(base.every),
                batch: o.batch.unwrap_or(base.batch),
                ..base
            });
        }
        let server = builder.build().map_err(|e| e.to_string())?;
        server
            .start(("127.0.0.1", o.port))
            .await
            .map_err(|e| e.to_string())?
            .wait()
            .await
            .map_err(|e| e.to_string())
    })
}
