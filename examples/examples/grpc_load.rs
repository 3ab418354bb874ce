//! A short, bounded load run: SendMessage requests per second over gRPC and over JSON-RPC
//! against one in-process server (both listeners), at 1, 16 and 64 concurrent calls, and the
//! events per second of one gRPC server stream. Client and server share the machine, so the
//! ratios are the figure to read, not the absolute numbers.
//!
//! ```sh
//! cargo run --release -p a2a-examples --example grpc_load [SECONDS_PER_STEP]
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, ClientOptions, SendOptions};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::server::A2aServer;
use a2a_runtime::types::{AgentCard, Artifact, Part, ProtocolBinding};
use futures::StreamExt as _;

/// Completes every task with one artifact; `burst N` streams N artifact chunks first.
struct Load;

impl AgentExecutor for Load {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let text = ctx.text();
        if let Some(n) = text.strip_prefix("burst ") {
            let n: usize = n.trim().parse().unwrap_or(0);
            for i in 0..n {
                events
                    .artifact_chunk("out", [Part::text("x")], i > 0, i + 1 == n)
                    .await?;
            }
            return events.complete().await;
        }
        events.artifact(Artifact::new([Part::text(text)])).await?;
        events.complete().await
    }
}

async fn client(url: &str, binding: ProtocolBinding) -> A2aClient {
    let options = ClientOptions {
        preferred_binding: Some(binding),
        ..ClientOptions::default()
    };
    match A2aClient::new(url, options).await {
        Ok(c) => c,
        Err(e) => panic!("connect: {e}"),
    }
}

/// Requests per second with `concurrency` calls in flight for `secs`.
async fn rate(c: &A2aClient, concurrency: usize, secs: f64) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let workers = (0..concurrency).map(|_| {
        let c = c.clone();
        let done = done.clone();
        tokio::spawn(async move {
            while Instant::now() < end {
                if c.send_message("hello", SendOptions::default())
                    .await
                    .is_ok()
                {
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    });
    let started = Instant::now();
    futures::future::join_all(workers).await;
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3.0);
    let card = AgentCard {
        name: "load".into(),
        description: "load".into(),
        version: "1".into(),
        ..AgentCard::default()
    };
    let server = A2aServer::builder()
        .card(card)
        .executor(Load)
        .workers(1)
        .linked_extensions(false)
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"));
    let running = server
        .start("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("start: {e}"));
    let url = running.url();
    let rpc = client(&url, ProtocolBinding::JsonRpc).await;
    let grpc = client(&url, ProtocolBinding::Grpc).await;
    println!(
        "SendMessage req/s, {secs} s per step (one actix worker; gRPC on one HTTP/2 connection)"
    );
    println!(
        "{:>11} {:>10} {:>10} {:>7}",
        "concurrency", "JSON-RPC", "gRPC", "ratio"
    );
    for n in [1, 16, 64] {
        let r = rate(&rpc, n, secs).await;
        let g = rate(&grpc, n, secs).await;
        println!("{n:>11} {r:>10.0} {g:>10.0} {:>7.2}", g / r);
    }
    // Bursts below the per-subscriber buffer (1,024 events by default), one stream at a time.
    for (name, c) in [("JSON-RPC (SSE)", &rpc), ("gRPC", &grpc)] {
        let (rounds, n) = (20, 1000);
        let mut events = 0;
        let started = Instant::now();
        for _ in 0..rounds {
            let resp = c
                .stream_message(format!("burst {n}"), SendOptions::default())
                .await
                .unwrap_or_else(|e| panic!("stream: {e}"));
            events += resp
                .into_inner()
                .filter(|e| futures::future::ready(e.is_ok()))
                .count()
                .await;
        }
        let elapsed = started.elapsed().as_secs_f64();
        println!(
            "one {name} stream at a time: {events} events in {elapsed:.2} s = {:.0} events/s",
            events as f64 / elapsed
        );
    }
    running.stop().await;
}
