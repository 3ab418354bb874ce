//! What extension negotiation costs per request.
//!
//! - `negotiation/{0,1,10}`: [`Pipeline::serve`] (what every binding calls) for SendMessage with
//!   0, 1 and 10 configured extensions, all requested in `A2A-Extensions` (so 10 activated), on
//!   an in-process handler that answers at once: what remains is the pipeline and the
//!   negotiation (header parsing, required check, activation, `handle_request`,
//!   `handle_response`, the echo list). `negotiation/10/two clients taking turns`: the same
//!   with two `A2A-Extensions` values sent in turn (each client keeps its cached plan).
//! - `send_message/in_process/{0,10}`: the same with the real handler and an echo agent (task
//!   created, stored, events published through `handle_event`).
//! - `send_message/loopback/{0,10}`: a full JSON-RPC SendMessage round trip over HTTP/1.1
//!   keep-alive on 127.0.0.1.
//!
//! Run: `cargo bench -p a2a-runtime --bench extensions`. The cost of 10 extensions is
//! `negotiation/10 - negotiation/0`; its share of a round trip is that over
//! `send_message/loopback/0`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use a2a_runtime::core::{
    AgentContext, AgentExecutor, EventSink, EventStream, Limits, RequestHandler,
};
use a2a_runtime::extension::{ExtensionHooks, RequestContext};
use a2a_runtime::protocol::{A2aRequest, RequestHeaders};
use a2a_runtime::server::{A2aServer, A2aServerBuilder};
use a2a_runtime::service::{Answer, Decoded, Payload, Pipeline, RequestMeta, Target};
use a2a_runtime::types::{
    AgentCard, Artifact, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, Empty,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Part, SendMessageRequest, SendMessageResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
};
use a2a_runtime::{A2aError, a2a_extension};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

macro_rules! extensions {
    ($($name:ident $uri:literal),* $(,)?) => {
        $(
            /// A benchmark extension with request and response hooks.
            #[a2a_extension(uri = $uri)]
            #[derive(Clone, Debug, Serialize, Deserialize)]
            struct $name {
                level: u32,
            }

            impl ExtensionHooks for $name {
                type Activation = u32;

                fn handle_request(
                    &self,
                    _: &mut A2aRequest,
                    seen: &mut u32,
                    _: &RequestContext,
                ) -> Result<(), A2aError> {
                    *seen += self.level;
                    Ok(())
                }

                fn handle_response(
                    &self,
                    reply: &mut a2a_runtime::extension::Reply<'_>,
                    seen: &mut u32, _: &a2a_runtime::protocol::A2aRequest, _: &a2a_runtime::extension::RequestContext,
                ) -> Result<(), A2aError> {
                    black_box((reply, seen));
                    Ok(())
                }
            }
        )*

        /// The URIs, in declaration order.
        const URIS: &[&str] = &[$($uri),*];

        /// `builder` with the first `n` extensions.
        fn with_extensions(mut builder: A2aServerBuilder, n: usize) -> A2aServerBuilder {
            let mut i = 0;
            $(
                if i < n {
                    builder = builder.extension($name { level: 1 });
                }
                i += 1;
            )*
            let _ = i;
            builder
        }
    };
}

extensions! {
    E0 "https://bench.example/ext/e0/v1",
    E1 "https://bench.example/ext/e1/v1",
    E2 "https://bench.example/ext/e2/v1",
    E3 "https://bench.example/ext/e3/v1",
    E4 "https://bench.example/ext/e4/v1",
    E5 "https://bench.example/ext/e5/v1",
    E6 "https://bench.example/ext/e6/v1",
    E7 "https://bench.example/ext/e7/v1",
    E8 "https://bench.example/ext/e8/v1",
    E9 "https://bench.example/ext/e9/v1",
}

/// Answers SendMessage at once with a direct message; nothing else is used.
struct Instant;

fn unused<T>() -> Result<T, A2aError> {
    Err(A2aError::UnsupportedOperation("not benchmarked".into()))
}

#[async_trait::async_trait]
impl RequestHandler for Instant {
    async fn send_message(
        &self,
        _: RequestContext,
        _: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aError> {
        Ok(SendMessageResponse::Message(Message::agent_text("ok")))
    }
    async fn send_streaming_message(
        &self,
        _: RequestContext,
        _: SendMessageRequest,
    ) -> Result<EventStream, A2aError> {
        unused()
    }
    async fn get_task(&self, _: RequestContext, _: GetTaskRequest) -> Result<Task, A2aError> {
        unused()
    }
    async fn list_tasks(
        &self,
        _: RequestContext,
        _: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError> {
        unused()
    }
    async fn cancel_task(&self, _: RequestContext, _: CancelTaskRequest) -> Result<Task, A2aError> {
        unused()
    }
    async fn subscribe_to_task(
        &self,
        _: RequestContext,
        _: SubscribeToTaskRequest,
    ) -> Result<EventStream, A2aError> {
        unused()
    }
    async fn create_task_push_notification_config(
        &self,
        _: RequestContext,
        _: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        unused()
    }
    async fn get_task_push_notification_config(
        &self,
        _: RequestContext,
        _: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        unused()
    }
    async fn list_task_push_notification_configs(
        &self,
        _: RequestContext,
        _: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
        unused()
    }
    async fn delete_task_push_notification_config(
        &self,
        _: RequestContext,
        _: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, A2aError> {
        unused()
    }
    async fn get_extended_agent_card(
        &self,
        _: RequestContext,
        _: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2aError> {
        unused()
    }
}

/// Echoes the message as an artifact and completes.
struct Echo;

impl AgentExecutor for Echo {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events
            .artifact(Artifact::new([Part::text(ctx.text())]))
            .await?;
        events.complete().await
    }
}

fn card() -> AgentCard {
    AgentCard {
        name: "bench".into(),
        description: "extension negotiation benchmark".into(),
        version: "1".into(),
        ..AgentCard::default()
    }
}

fn builder(n: usize) -> A2aServerBuilder {
    with_extensions(
        A2aServer::builder().card(card()).linked_extensions(false),
        n,
    )
}

/// The headers of a v1.0 request asking for `uris`.
fn headers(uris: &[&str]) -> RequestHeaders {
    let mut headers = RequestHeaders::new();
    headers.push("a2a-version", "1.0");
    headers.push("a2a-extensions", uris.join(", "));
    headers
}

/// A v1.0 request's headers asking for every benchmark extension (configured or not).
fn context() -> RequestHeaders {
    headers(URIS)
}

/// A payload decoded already: an in-process transport.
struct Ready(Option<A2aRequest>);

impl Payload for Ready {
    async fn target(&mut self, _: &Limits) -> Result<Target, a2a_runtime::A2aError> {
        unreachable!("the metadata names the target")
    }

    async fn decode(&mut self, _: &Target, _: &Limits) -> Result<Decoded, a2a_runtime::A2aError> {
        Ok(Decoded::Operation(self.0.take().unwrap()))
    }
}

/// Runs `req` through the pipeline as a binding does.
async fn serve(pipeline: &Pipeline, template: &RequestHeaders, req: A2aRequest) -> Answer {
    let mut meta = RequestMeta::from_headers(template.clone());
    meta.target = Some(Target::Operation(req.operation()));
    pipeline.serve(meta, &mut Ready(Some(req))).await.unwrap()
}

async fn one(pipeline: &Pipeline, template: &RequestHeaders, req: A2aRequest) {
    black_box(serve(pipeline, template, req).await);
}

fn negotiation(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("negotiation");
    let req = A2aRequest::SendMessage(SendMessageRequest {
        message: Message::user_text("hi"),
        ..SendMessageRequest::default()
    });
    let template = context();
    for n in [0, 1, 10] {
        let server = builder(n).handler(Arc::new(Instant)).build().unwrap();
        let service = server.pipeline().clone();
        // Check the setup: n extensions activated.
        let Answer::Operation(served) = rt.block_on(serve(&service, &template, req.clone())) else {
            panic!("not an operation's answer");
        };
        assert_eq!(served.activated.uris().len(), n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| rt.block_on(one(&service, &template, req.clone())));
        });
        if n == 10 {
            // Two kinds of client taking turns, each with its own `A2A-Extensions` value (the
            // same URIs in another order): each keeps its cached plan.
            let uris: Vec<&str> = URIS.iter().rev().copied().collect();
            let reversed = headers(&uris);
            let templates = [&template, &reversed];
            let mut turn = 0usize;
            group.bench_function("10/two clients taking turns", |b| {
                b.iter(|| {
                    turn += 1;
                    rt.block_on(one(&service, templates[turn % 2], req.clone()))
                });
            });
        }
    }
    group.finish();
}

fn send_in_process(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("send_message/in_process");
    let template = context();
    for n in [0, 10] {
        let server = builder(n).executor(Echo).build().unwrap();
        let service = server.pipeline().clone();
        let request = || {
            A2aRequest::SendMessage(SendMessageRequest {
                message: Message::user_text("hi"),
                ..SendMessageRequest::default()
            })
        };
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| rt.block_on(one(&service, &template, request())));
        });
    }
    group.finish();
}

/// One keep-alive HTTP/1.1 connection sending JSON-RPC SendMessage.
struct Conn {
    stream: tokio::net::TcpStream,
    buf: Vec<u8>,
    n: u64,
}

impl Conn {
    async fn send(&mut self, extensions: &str) -> usize {
        self.n += 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"SendMessage","params":{{"message":{{"messageId":"m-{n}","role":"ROLE_USER","parts":[{{"text":"hi"}}]}}}}}}"#,
            n = self.n
        );
        let head = format!(
            "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\na2a-version: 1.0\r\na2a-extensions: {extensions}\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        self.stream.write_all(head.as_bytes()).await.unwrap();
        self.stream.write_all(body.as_bytes()).await.unwrap();
        // Read the head, then exactly content-length bytes.
        self.buf.clear();
        let mut chunk = [0u8; 16 * 1024];
        loop {
            let read = self.stream.read(&mut chunk).await.unwrap();
            assert!(read > 0, "connection closed");
            self.buf.extend_from_slice(&chunk[..read]);
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                let head = std::str::from_utf8(&self.buf[..end])
                    .unwrap()
                    .to_ascii_lowercase();
                assert!(head.starts_with("http/1.1 200"), "{head}");
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map(|v| v.trim().parse().unwrap())
                    .expect("content-length");
                while self.buf.len() < end + 4 + len {
                    let read = self.stream.read(&mut chunk).await.unwrap();
                    assert!(read > 0, "connection closed");
                    self.buf.extend_from_slice(&chunk[..read]);
                }
                assert!(find(&self.buf[end..], b"\"result\"").is_some());
                return len;
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn send_loopback(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("send_message/loopback");
    let extensions = URIS.join(", ");
    for n in [0, 10] {
        let server = builder(n).executor(Echo).workers(1).build().unwrap();
        let running = rt.block_on(server.start("127.0.0.1:0")).unwrap();
        let stream = rt
            .block_on(tokio::net::TcpStream::connect(running.addr))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        let mut conn = Conn {
            stream,
            buf: Vec::new(),
            n: 0,
        };
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| rt.block_on(conn.send(&extensions)));
        });
        drop(conn);
        rt.block_on(running.stop());
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
}

criterion_group! {
    name = benches;
    config = config();
    targets = negotiation, send_in_process, send_loopback
}
criterion_main!(benches);
