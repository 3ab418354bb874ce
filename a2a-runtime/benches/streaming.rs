//! Streaming in process: SendStreamingMessage on the default handler with the in-memory store (no
//! HTTP), an agent streaming one artifact in N chunks (yielding to the scheduler after each, as
//! an agent awaiting anything between events does), the stream drained.
//!
//! - `streaming/chunks/{100,1000,3000}`, throughput in events: what one event costs should not
//!   depend on how many chunks came before it (a streamed chunk is applied to the store's copy of
//!   the live task, not copied with the whole task).
//!
//! Run: `cargo bench -p a2a-runtime --bench streaming`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::core::{
    AgentContext, AgentExecutor, DefaultRequestHandler, EventSink, Limits, RequestHandler,
};
use a2a_runtime::extension::RequestContext;
use a2a_runtime::store::{InMemoryPushConfigStore, InMemoryTaskStore};
use a2a_runtime::types::{AgentCapabilities, AgentCard, Message, Part, SendMessageRequest};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt as _;

/// Streams as many chunks as the message's text says, then completes.
struct Chunks;

impl AgentExecutor for Chunks {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let n: usize = ctx.text().parse().unwrap_or(1);
        for i in 0..n {
            events
                .artifact_chunk(
                    "stream",
                    [Part::text(format!("chunk {i}"))],
                    i > 0,
                    i + 1 == n,
                )
                .await?;
            tokio::task::yield_now().await;
        }
        events.complete().await
    }
}

fn streaming(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let card = AgentCard {
        capabilities: AgentCapabilities {
            streaming: Some(true),
            ..AgentCapabilities::default()
        },
        ..AgentCard::default()
    };
    let handler = DefaultRequestHandler::new(
        Chunks,
        Arc::new(InMemoryTaskStore::with_retention(1_000)),
        Arc::new(InMemoryPushConfigStore::new()),
        Arc::new(card),
        Limits::default(),
    );
    let mut group = c.benchmark_group("streaming/chunks");
    for n in [100usize, 1_000, 3_000] {
        // The chunks, the created task and the final status.
        let events = n + 2;
        group.throughput(Throughput::Elements(events as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter(|| {
                rt.block_on(async {
                    let req = SendMessageRequest {
                        message: Message::user_text(n.to_string()),
                        ..SendMessageRequest::default()
                    };
                    let mut stream = handler
                        .send_streaming_message(RequestContext::v1(), req)
                        .await
                        .unwrap();
                    let mut seen = 0;
                    while let Some(event) = stream.next().await {
                        event.unwrap();
                        seen += 1;
                    }
                    assert_eq!(seen, events);
                })
            });
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
}

criterion_group! {
    name = benches;
    config = config();
    targets = streaming
}
criterion_main!(benches);
