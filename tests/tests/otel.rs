#![allow(clippy::unwrap_used, clippy::expect_used)]
//! OpenTelemetry export (feature `otel`): a fake OTLP collector (HTTP/protobuf, decoded with the
//! protocol's prost types) on loopback receives the spans of real requests. A caller's
//! `traceparent` comes back as the remote parent of the request's span, and the calls made while
//! serving it carry the same trace with the exporting span as their parent: the client on each
//! binding (JSON-RPC, HTTP+JSON, gRPC) and push webhook deliveries. Every wait is bounded and
//! ends on an event: a forced flush and a look at what the collector holds, or a webhook hit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, ClientOptions, SendOptions};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::otel::Otel;
use a2a_runtime::protocol::TraceContext;
use a2a_runtime::push::PushConfig;
use a2a_runtime::server::{A2aServer, RunningServer};
use a2a_runtime::types::{AgentCard, ProtocolBinding};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message as _;
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

const TIMEOUT: Duration = Duration::from_secs(30);

/// A span as the collector received it (ids in lowercase hex, "" for no parent).
#[derive(Clone, Debug)]
struct Exported {
    name: String,
    trace_id: String,
    span_id: String,
    parent: String,
    trace_state: String,
    attrs: HashMap<String, String>,
    service: String,
}

/// The fake collector: `POST /v1/traces` decoded and kept.
struct Collector {
    url: String,
    spans: Arc<Mutex<Vec<Exported>>>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(v: Option<&opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match v.and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(AnyValue::DoubleValue(d)) => d.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        _ => String::new(),
    }
}

async fn export(
    req: HttpRequest,
    body: web::Bytes,
    spans: web::Data<Mutex<Vec<Exported>>>,
) -> HttpResponse {
    assert_eq!(
        req.headers().get("content-type").unwrap(),
        "application/x-protobuf"
    );
    let decoded = ExportTraceServiceRequest::decode(body).expect("an OTLP trace export");
    let mut got = Vec::new();
    for rs in decoded.resource_spans {
        let service = rs
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .map(|kv| text(kv.value.as_ref()))
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                got.push(Exported {
                    name: s.name,
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent: hex(&s.parent_span_id),
                    trace_state: s.trace_state,
                    attrs: s
                        .attributes
                        .iter()
                        .map(|kv| (kv.key.clone(), text(kv.value.as_ref())))
                        .collect(),
                    service: service.clone(),
                });
            }
        }
    }
    spans.lock().unwrap().extend(got);
    HttpResponse::Ok()
        .content_type("application/x-protobuf")
        .body(ExportTraceServiceResponse::default().encode_to_vec())
}

/// The process-wide collector, on its own thread and actix system (it outlives every test's
/// runtime, as the global subscriber does).
fn collector() -> &'static Collector {
    static COLLECTOR: OnceLock<Collector> = OnceLock::new();
    COLLECTOR.get_or_init(|| {
        let spans = Arc::new(Mutex::new(Vec::new()));
        let data = web::Data::from(spans.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let server = HttpServer::new(move || {
                    App::new()
                        .app_data(data.clone())
                        .app_data(web::PayloadConfig::new(64 << 20))
                        .route("/v1/traces", web::post().to(export))
                })
                .workers(1)
                .bind("127.0.0.1:0")
                .unwrap();
                tx.send(server.addrs()[0]).unwrap();
                server.run().await.unwrap();
            });
        });
        let addr = rx.recv_timeout(TIMEOUT).unwrap();
        Collector {
            url: format!("http://{addr}"),
            spans,
        }
    })
}

/// The process-wide pipeline, exporting to the collector, behind the global subscriber.
fn otel() -> &'static Otel {
    static OTEL: OnceLock<Otel> = OnceLock::new();
    OTEL.get_or_init(|| {
        let otel = Otel::with_endpoint(&collector().url).unwrap();
        tracing_subscriber::registry()
            .with(otel.layer())
            .try_init()
            .unwrap();
        otel
    })
}

/// Flushes and looks at the spans of `trace` until `done` finds what it needs (spans end when
/// their futures are dropped, which may be just after the response is written).
async fn spans_until<T>(
    trace: &str,
    mut done: impl FnMut(&[Exported]) -> Option<T>,
) -> (T, Vec<Exported>) {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        tokio::task::spawn_blocking(|| otel().force_flush().unwrap())
            .await
            .unwrap();
        let spans: Vec<Exported> = collector()
            .spans
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.trace_id == trace)
            .cloned()
            .collect();
        if let Some(found) = done(&spans) {
            return (found, spans);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the collector never got the spans: {spans:#?}"
        );
        tokio::task::yield_now().await;
    }
}

fn fresh_trace() -> String {
    format!("{:032x}", uuid_like())
}

fn uuid_like() -> u128 {
    use std::hash::{BuildHasher as _, RandomState};
    let a = RandomState::new().hash_one(std::time::SystemTime::now()) as u128;
    let b = RandomState::new().hash_one(std::thread::current().id()) as u128;
    (a << 64 | b).max(1)
}

/// What an execution saw: its message's text and the trace context it ran in.
type Seen = Arc<Mutex<Vec<(String, Option<TraceContext>)>>>;

/// An agent that records the trace context of each execution and, for `call BINDING`, sends
/// `leaf BINDING` to its own server over that binding.
#[derive(Clone, Default)]
struct Relay {
    seen: Seen,
    url: Arc<OnceLock<String>>,
}

fn binding(name: &str) -> ProtocolBinding {
    match name {
        "JSONRPC" => ProtocolBinding::JsonRpc,
        "HTTP+JSON" => ProtocolBinding::HttpJson,
        _ => ProtocolBinding::Grpc,
    }
}

impl AgentExecutor for Relay {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let text = ctx.text();
        self.seen
            .lock()
            .unwrap()
            .push((text.clone(), TraceContext::current()));
        if let Some(name) = text.strip_prefix("call ") {
            let url = self.url.get().cloned().unwrap_or_default();
            let options = ClientOptions {
                preferred_binding: Some(binding(name)),
                ..ClientOptions::default()
            };
            let client = A2aClient::new(url.as_str(), options).await?;
            client
                .send_message(format!("leaf {name}"), SendOptions::default())
                .await?;
        }
        events.complete().await
    }
}

async fn start(relay: &Relay, push: bool) -> RunningServer {
    let card = AgentCard {
        name: "otel".into(),
        description: "OpenTelemetry test agent".into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    };
    let mut builder = A2aServer::builder()
        .card(card)
        .executor(relay.clone())
        .workers(2)
        .grpc_addr("127.0.0.1:0");
    if push {
        builder = builder.push(PushConfig::new().allow_private_networks(true));
    }
    let running = builder.build().unwrap().start("127.0.0.1:0").await.unwrap();
    relay.url.set(running.url()).unwrap();
    running
}

fn seen(relay: &Relay, text: &str) -> TraceContext {
    relay
        .seen
        .lock()
        .unwrap()
        .iter()
        .find(|(t, _)| t == text)
        .and_then(|(_, tc)| tc.clone())
        .unwrap_or_else(|| panic!("{text:?} ran without a trace context"))
}

fn find(spans: &[Exported], pred: impl Fn(&Exported) -> bool) -> Option<&Exported> {
    spans.iter().find(|s| pred(s))
}

/// On each binding: the client sends the trace it serves in; the server's request span has it
/// as its remote parent; the agent's span is the request span's child; the agent's own client
/// call carries the trace with the agent's span as the parent, and the called request's span
/// is its child. Service name and tracestate come through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_runs_through_spans_and_client_calls_on_every_binding() {
    otel();
    let relay = Relay::default();
    let running = start(&relay, false).await;
    for name in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let trace = fresh_trace();
        let incoming =
            TraceContext::parse(&format!("00-{trace}-00f067aa0ba902b7-01"), Some("vendor=x"))
                .unwrap();
        let options = ClientOptions {
            preferred_binding: Some(binding(name)),
            ..ClientOptions::default()
        };
        let client = A2aClient::new(running.url().as_str(), options)
            .await
            .unwrap();
        let sent =
            incoming.scope(client.send_message(format!("call {name}"), SendOptions::default()));
        tokio::time::timeout(TIMEOUT, sent).await.unwrap().unwrap();

        // What the server extracted from each call.
        let first = seen(&relay, &format!("call {name}"));
        assert_eq!(first.trace_id(), trace, "{name}");
        assert_eq!(first.tracestate(), Some("vendor=x"), "{name}");
        let second = seen(&relay, &format!("leaf {name}"));
        assert_eq!(second.trace_id(), trace, "{name}: the agent's call");
        assert_eq!(second.tracestate(), Some("vendor=x"), "{name}");

        // And what was exported: request -> agent -> (client call) -> request -> agent.
        let (agent_span, spans) = spans_until(&trace, |spans| {
            let outer = find(spans, |s| {
                s.name == "a2a.request" && s.parent == first.parent_id()
            })?;
            let agent = find(spans, |s| {
                s.name == "a2a.agent" && s.parent == outer.span_id
            })?;
            let inner = find(spans, |s| {
                s.name == "a2a.request" && s.parent == second.parent_id()
            })?;
            find(spans, |s| {
                s.name == "a2a.agent" && s.parent == inner.span_id
            })?;
            Some(agent.clone())
        })
        .await;
        assert_eq!(
            second.parent_id(),
            agent_span.span_id,
            "{name}: the outgoing call's parent is the agent's span"
        );
        let requests: Vec<&Exported> = spans.iter().filter(|s| s.name == "a2a.request").collect();
        assert_eq!(requests.len(), 2, "{name}: {spans:#?}");
        for r in &requests {
            assert_eq!(r.attrs["binding"], name, "{r:?}");
            assert_eq!(r.attrs["operation"], "SendMessage", "{r:?}");
            assert_eq!(r.trace_state, "vendor=x", "{r:?}");
            assert_eq!(r.attrs["trace_id"], trace, "{r:?}");
        }
        assert!(
            spans.iter().all(|s| !s.service.is_empty()),
            "every span names its service: {spans:#?}"
        );
    }
    running.handle().stop(true).await;
}

/// A request's trace goes with its task's push notifications: the webhook gets the same trace
/// id, with the exported delivery attempt's span as the parent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_webhooks_carry_the_trace_of_the_request() {
    otel();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Option<String>>();
    let tx = web::Data::new(tx);
    let receiver = HttpServer::new(move || {
        App::new().app_data(tx.clone()).default_service(web::to(
            |req: HttpRequest,
             tx: web::Data<tokio::sync::mpsc::UnboundedSender<Option<String>>>| async move {
                let tp = req
                    .headers()
                    .get("traceparent")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let _ = tx.send(tp);
                HttpResponse::Ok().finish()
            },
        ))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let hook = format!("http://{}/hook", receiver.addrs()[0]);
    let receiver = receiver.run();
    let receiver_handle = receiver.handle();
    tokio::spawn(receiver);

    let relay = Relay::default();
    let running = start(&relay, true).await;
    let trace = fresh_trace();
    let body: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/", running.url()))
        .header("A2A-Version", "1.0")
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"role": "ROLE_USER", "messageId": "m-push", "parts": [{"text": "push"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook, "token": "t"}}}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(body["result"]["task"]["id"].is_string(), "{body}");

    let header = tokio::time::timeout(TIMEOUT, rx.recv())
        .await
        .unwrap()
        .unwrap()
        .expect("the webhook call has a traceparent");
    let hit = TraceContext::parse(&header, None).unwrap();
    assert_eq!(hit.trace_id(), trace);
    let (attempt, _) = spans_until(&trace, |spans| {
        find(spans, |s| {
            s.name == "a2a.request" && s.parent == "00f067aa0ba902b7"
        })?;
        find(spans, |s| {
            s.name == "push.attempt" && s.span_id == hit.parent_id()
        })
        .cloned()
    })
    .await;
    assert!(!attempt.parent.is_empty(), "{attempt:?}");
    running.handle().stop(true).await;
    receiver_handle.stop(true).await;
}
