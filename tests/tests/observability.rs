#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Observability: the request span and its fields, the access-log and warning lines, and the
//! W3C trace context carried from a request into the calls its agent makes — captured by a
//! real `tracing` subscriber over real HTTP on loopback; the Prometheus `/metrics` route after a
//! known workload.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::client::{A2aClient, SendOptions};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{Extension as _, TimestampExtension};
use a2a_runtime::server::{A2aServer, RunningServer};
use a2a_runtime::types::{AgentCard, Artifact, Part};
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// A closed span or an event: its name (the message for events), level and fields.
#[derive(Clone, Debug, Default)]
struct Captured {
    name: String,
    level: String,
    target: String,
    fields: HashMap<String, String>,
    parent: Option<u64>,
    id: u64,
}

#[derive(Default)]
struct Log {
    spans: Vec<Captured>,
    events: Vec<Captured>,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// Records every span (at close, with all its recorded fields) and every event.
struct Capture(Arc<Mutex<Log>>);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut c = Captured {
            name: attrs.metadata().name().to_owned(),
            level: attrs.metadata().level().to_string(),
            target: attrs.metadata().target().to_owned(),
            id: id.into_u64(),
            parent: ctx
                .span(id)
                .and_then(|s| s.parent())
                .map(|p| p.id().into_u64()),
            ..Captured::default()
        };
        attrs.record(&mut Fields(&mut c.fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(c);
        }
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(c) = span.extensions_mut().get_mut::<Captured>()
        {
            values.record(&mut Fields(&mut c.fields));
        }
    }
    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let mut c = Captured {
            level: event.metadata().level().to_string(),
            target: event.metadata().target().to_owned(),
            parent: ctx.event_span(event).map(|s| s.id().into_u64()),
            ..Captured::default()
        };
        event.record(&mut Fields(&mut c.fields));
        c.name = c.fields.get("message").cloned().unwrap_or_default();
        self.0.lock().unwrap().events.push(c);
    }
    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(c) = span.extensions().get::<Captured>()
        {
            self.0.lock().unwrap().spans.push(c.clone());
        }
    }
}

/// The process-wide capture (actix workers run on their own threads: a global subscriber).
fn log() -> Arc<Mutex<Log>> {
    static LOG: OnceLock<Arc<Mutex<Log>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(Log::default()));
        let subscriber = tracing_subscriber::registry().with(Capture(log.clone()));
        tracing::subscriber::set_global_default(subscriber).expect("one global subscriber");
        log
    })
    .clone()
}

/// Waits (bounded) until a closed request span matches `pred`; spans close when the actix
/// worker drops the request future, just after the response is written.
async fn request_span(pred: impl Fn(&Captured) -> bool) -> Captured {
    let log = log();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(c) = log
            .lock()
            .unwrap()
            .spans
            .iter()
            .find(|c| c.name == "a2a.request" && pred(c))
        {
            return c.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no matching a2a.request span"
        );
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

fn card(name: &str) -> AgentCard {
    AgentCard {
        name: name.into(),
        description: "observability test agent".into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    }
}

struct Echo;

impl AgentExecutor for Echo {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events
            .artifact(Artifact::new([Part::text(ctx.text())]))
            .await?;
        events.complete().await
    }
}

async fn start(builder: a2a_runtime::server::A2aServerBuilder) -> RunningServer {
    builder
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

#[tokio::test]
async fn one_request_has_a_span_with_its_fields_and_an_access_line() {
    let log = log();
    let srv = start(
        A2aServer::builder()
            .card(card("spans"))
            .executor(Echo)
            .extension(TimestampExtension::default()),
    )
    .await;
    let trace = "11111111111111111111111111111111";
    let body: Value = reqwest::Client::new()
        .post(format!("{}/", srv.url()))
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", TimestampExtension::URI)
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "tenant": "acme",
            "message": {"role": "ROLE_USER", "messageId": "m-1", "parts": [{"text": "hi"}]}}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = &body["result"]["task"];
    let task_id = task["id"].as_str().unwrap().to_owned();
    let span = request_span(|c| c.fields.get("trace_id").map(String::as_str) == Some(trace)).await;
    let f = &span.fields;
    assert_eq!(span.level, "INFO");
    assert_eq!(f["binding"], "JSONRPC");
    assert_eq!(f["operation"], "SendMessage");
    assert_eq!(f["task_id"], task_id);
    assert_eq!(f["context_id"], task["contextId"].as_str().unwrap());
    assert_eq!(f["tenant"], "acme");
    assert_eq!(f["principal"], "anonymous");
    assert_eq!(f["extensions"], TimestampExtension::URI);
    assert_eq!(f["status"], "200");
    assert!(f["latency_ms"].parse::<f64>().unwrap() >= 0.0);
    assert!(!f.contains_key("code"), "{f:?}");
    let (events, spans) = {
        let l = log.lock().unwrap();
        (l.events.clone(), l.spans.clone())
    };
    // The access line, at INFO, inside the request's span.
    let access = events
        .iter()
        .find(|e| e.name == "a2a request" && e.parent == Some(span.id))
        .expect("an access line");
    assert_eq!(access.level, "INFO");
    assert_eq!(access.target, "a2a::access");
    assert_eq!(access.fields["status"], "200");
    assert_eq!(access.fields["path"], "/");
    // The agent's execution: its own span, a child of the request's.
    let agent = spans
        .iter()
        .find(|s| s.name == "a2a.agent" && s.fields.get("task_id") == Some(&task_id))
        .expect("an agent span");
    assert_eq!(agent.parent, Some(span.id));
    assert_eq!(agent.fields["outcome"], "ok");
    srv.stop().await;
}

#[tokio::test]
async fn an_error_response_is_logged_at_warn_with_its_code_and_cause() {
    let log = log();
    let srv = start(A2aServer::builder().card(card("errors")).executor(Echo)).await;
    let trace = "22222222222222222222222222222222";
    let resp = reqwest::Client::new()
        .get(format!("{}/tasks/no-such-task", srv.url()))
        .header("A2A-Version", "1.0")
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let span = request_span(|c| c.fields.get("trace_id").map(String::as_str) == Some(trace)).await;
    assert_eq!(span.fields["binding"], "HTTP+JSON");
    assert_eq!(span.fields["operation"], "GetTask");
    assert_eq!(span.fields["task_id"], "no-such-task");
    assert_eq!(span.fields["code"], "-32001");
    assert_eq!(span.fields["status"], "404");
    let events = log.lock().unwrap().events.clone();
    let warn = events
        .iter()
        .find(|e| e.name == "a2a request failed" && e.parent == Some(span.id))
        .expect("a warning");
    assert_eq!(warn.level, "WARN");
    assert_eq!(warn.fields["code"], "-32001");
    assert!(warn.fields["cause"].contains("no-such-task"), "{warn:?}");
    srv.stop().await;
}

/// Calls the downstream agent with the client while serving its own request.
struct Relay {
    downstream: String,
}

impl AgentExecutor for Relay {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let client = A2aClient::builder()
            .connect(self.downstream.as_str())
            .await?;
        client
            .send_message(ctx.text().as_str(), SendOptions::default())
            .await?;
        events.complete().await
    }
}

#[tokio::test]
async fn traceparent_in_reaches_the_span_and_the_agents_outgoing_call() {
    log();
    let downstream = start(A2aServer::builder().card(card("downstream")).executor(Echo)).await;
    let relay = start(A2aServer::builder().card(card("relay")).executor(Relay {
        downstream: downstream.url(),
    }))
    .await;
    let incoming = format!("00-{TRACE}-00f067aa0ba902b7-01");
    let resp = reqwest::Client::new()
        .post(format!("{}/message:send", relay.url()))
        .header("A2A-Version", "1.0")
        .header("traceparent", &incoming)
        .header("tracestate", "vendor=abc")
        .json(&json!({"message": {"role": "ROLE_USER", "messageId": "m-2", "parts": [{"text": "relay me"}]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "{:?}", resp.text().await);
    // The relay's span and the downstream's span (the agent's client call, with a new
    // parent id) share the trace.
    let mine = request_span(|c| {
        c.fields.get("trace_id").map(String::as_str) == Some(TRACE)
            && c.fields.get("binding").map(String::as_str) == Some("HTTP+JSON")
    })
    .await;
    assert_eq!(mine.fields["operation"], "SendMessage");
    let theirs = request_span(|c| {
        c.fields.get("trace_id").map(String::as_str) == Some(TRACE) && c.id != mine.id
    })
    .await;
    assert_eq!(theirs.fields["operation"], "SendMessage");
    relay.stop().await;
    downstream.stop().await;
}

/// Holds its stream open until released.
struct Held(Arc<tokio::sync::Notify>);

impl AgentExecutor for Held {
    async fn execute(&self, _: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.working().await?;
        self.0.notified().await;
        events.complete().await
    }
}

/// The value of the sample `name{labels}` in a Prometheus text page (labels in any order).
fn sample(page: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    page.lines().find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (n, rest) = series.split_once('{').unwrap_or((series, "}"));
        if n != name {
            return None;
        }
        let rest = rest.strip_suffix('}')?;
        let have: Vec<&str> = rest.split(',').filter(|l| !l.is_empty()).collect();
        let all = labels
            .iter()
            .all(|(k, v)| have.contains(&format!("{k}=\"{v}\"").as_str()));
        (all && have.len() == labels.len()).then(|| value.parse().ok())?
    })
}

#[tokio::test]
async fn metrics_after_a_known_workload() {
    use a2a_runtime::server::Metrics;
    let metrics = Metrics::install().unwrap();
    let release = Arc::new(tokio::sync::Notify::new());
    let server = A2aServer::builder()
        .card(card("metrics"))
        .executor(Held(release.clone()))
        .extension(TimestampExtension::default())
        .build()
        .unwrap();
    let (config, route) = (server.config(), server.metrics_route(metrics));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let http = actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .configure(route.clone())
            .configure(config.clone())
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = http.handle();
    tokio::spawn(http);
    let client = reqwest::Client::new();
    let scrape = || async {
        let resp = client.get(format!("{url}/metrics")).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        resp.text().await.unwrap()
    };
    // Three ListTasks over JSON-RPC (one activating Timestamp), two CancelTask of a missing
    // task (TaskNotFound), one stream held open.
    for i in 0..3 {
        let mut rb = client.post(format!("{url}/")).header("A2A-Version", "1.0");
        if i == 0 {
            rb = rb.header("A2A-Extensions", TimestampExtension::URI);
        }
        let body: Value = rb
            .json(&json!({"jsonrpc": "2.0", "id": i, "method": "ListTasks", "params": {}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(body.get("result").is_some(), "{body}");
    }
    for _ in 0..2 {
        let body: Value = client
            .post(format!("{url}/"))
            .header("A2A-Version", "1.0")
            .json(&json!({"jsonrpc": "2.0", "id": 9, "method": "CancelTask", "params": {"id": "missing"}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(body["error"]["code"], -32001, "{body}");
    }
    let stream = client
        .post(format!("{url}/message:stream"))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": {"role": "ROLE_USER", "messageId": "m-3", "parts": [{"text": "hold"}]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);

    let page = scrape().await;
    let rpc_list = [
        ("binding", "JSONRPC"),
        ("operation", "ListTasks"),
        ("code", "0"),
    ];
    assert_eq!(
        sample(&page, "a2a_requests_total", &rpc_list),
        Some(3.0),
        "{page}"
    );
    let cancel = [
        ("binding", "JSONRPC"),
        ("operation", "CancelTask"),
        ("code", "-32001"),
    ];
    assert_eq!(
        sample(&page, "a2a_requests_total", &cancel),
        Some(2.0),
        "{page}"
    );
    let streaming = [
        ("binding", "HTTP+JSON"),
        ("operation", "SendStreamingMessage"),
    ];
    assert_eq!(
        sample(&page, "a2a_active_streams", &streaming),
        Some(1.0),
        "{page}"
    );
    let list_hist = [("binding", "JSONRPC"), ("operation", "ListTasks")];
    assert_eq!(
        sample(&page, "a2a_request_duration_seconds_count", &list_hist),
        Some(3.0),
        "{page}"
    );
    let ts = [("uri", TimestampExtension::URI)];
    assert_eq!(
        sample(&page, "a2a_extension_activations_total", &ts),
        Some(1.0),
        "{page}"
    );
    assert_eq!(
        sample(&page, "a2a_extension_refusals_total", &ts),
        Some(0.0),
        "{page}"
    );

    // The stream ends: no longer active.
    release.notify_one();
    let body = stream.text().await.unwrap();
    assert!(body.contains("TASK_STATE_COMPLETED"), "{body}");
    let page = scrape().await;
    assert_eq!(
        sample(&page, "a2a_active_streams", &streaming),
        Some(0.0),
        "{page}"
    );
    let sent = [
        ("binding", "HTTP+JSON"),
        ("operation", "SendStreamingMessage"),
        ("code", "0"),
    ];
    assert_eq!(
        sample(&page, "a2a_requests_total", &sent),
        Some(1.0),
        "{page}"
    );
    handle.stop(true).await;
}

/// An agent whose disk is full: before any event for "early", after its first event otherwise.
struct DiskFull;

impl AgentExecutor for DiskFull {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if ctx.text() != "early" {
            events.working().await?;
        }
        Err(std::io::Error::other("disk full").into())
    }
}

/// The correlation id a wire message gives (`… (correlation id <id>)`).
fn correlation_id(message: &str) -> String {
    let (_, rest) = message
        .split_once("correlation id ")
        .unwrap_or_else(|| panic!("no correlation id in {message:?}"));
    rest.split(')').next().unwrap_or_default().to_owned()
}

/// Waits (bounded) for the ERROR line of `id` and returns its cause.
async fn logged_cause(id: &str) -> String {
    let log = log();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(c) = log.lock().unwrap().events.iter().find(|c| {
            c.target == "a2a::error"
                && c.fields.get("correlation_id").map(String::as_str) == Some(id)
        }) {
            assert_eq!(c.level, "ERROR");
            return c.fields["cause"].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no ERROR line for {id}"
        );
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// What each binding answers a blocking SendMessage of `text` with: the error's wire message
/// and the whole body.
async fn internal_errors(srv: &RunningServer, text: &str) -> Vec<(&'static str, String, String)> {
    let http = reqwest::Client::new();
    let url = srv.url();
    // A new message id per call: the same id again would be a repeat of the first call.
    let v1 = |n: u8| json!({"message": {"role": "ROLE_USER", "messageId": format!("m-{text}-{n}"), "parts": [{"text": text}]}});
    let v03 = |n: u8| json!({"message": {"kind": "message", "role": "user", "messageId": format!("o-{text}-{n}"), "parts": [{"kind": "text", "text": text}]}});
    let mut out = Vec::new();
    let calls = [
        (
            "JSONRPC",
            format!("{url}/"),
            Some("1.0"),
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": v1(1)}),
        ),
        (
            "HTTP+JSON",
            format!("{url}/message:send"),
            Some("1.0"),
            v1(2),
        ),
        (
            "JSONRPC v0.3",
            format!("{url}/"),
            None,
            json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": v03(3)}),
        ),
        (
            "HTTP+JSON v0.3",
            format!("{url}/v1/message:send"),
            None,
            v03(4),
        ),
    ];
    for (binding, at, version, body) in calls {
        let mut req = http.post(at).json(&body);
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        let body: Value = req.send().await.unwrap().json().await.unwrap();
        // v0.3's HTTP+JSON answers the JSON-RPC error object itself.
        let error = if body["error"].is_object() {
            &body["error"]
        } else {
            &body
        };
        let message = error["message"].as_str().unwrap_or_default().to_owned();
        out.push((binding, message, body.to_string()));
    }
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://{}", srv.grpc_addr().unwrap()))
            .unwrap()
            .connect_lazy();
    let mut grpc = a2a_runtime::grpc::pb::a2a_service_client::A2aServiceClient::new(channel);
    let mut req = tonic::Request::new(a2a_runtime::grpc::pb::SendMessageRequest::from(
        a2a_runtime::types::SendMessageRequest {
            message: a2a_runtime::types::Message::user_text(text),
            ..Default::default()
        },
    ));
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    let status = grpc.send_message(req).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Internal);
    use tonic_types::StatusExt as _;
    let request_id = status
        .get_error_details()
        .request_info()
        .map(|r| r.request_id.clone());
    assert_eq!(
        request_id,
        Some(correlation_id(status.message())),
        "RequestInfo carries the id"
    );
    out.push(("GRPC", status.message().to_owned(), format!("{status:?}")));
    out
}

/// An internal error on every binding: the caller gets -32603/500/INTERNAL, a generic message
/// and a correlation id (also as `RequestInfo.requestId`); the cause is logged at ERROR under
/// that id and the id is on the request span. A task that fails after its first event stores
/// a status message without the cause. With the development switch, causes are on the wire.
#[tokio::test]
async fn an_internal_error_is_a_correlation_id_on_every_binding_and_a_cause_in_the_log() {
    let _log = log();
    let srv = start(
        A2aServer::builder()
            .card(card("disk-full"))
            .executor(DiskFull)
            .grpc_addr("127.0.0.1:0"),
    )
    .await;
    let answers = internal_errors(&srv, "early").await;
    assert_eq!(answers.len(), 5);
    for (binding, message, body) in answers {
        assert!(message.starts_with("Internal error: "), "{binding}: {body}");
        assert!(!body.contains("disk full"), "{binding}: {body}");
        let id = correlation_id(&message);
        assert_eq!(id.len(), 36, "{binding}: {message}");
        if binding != "GRPC" {
            assert!(body.contains("google.rpc.RequestInfo"), "{binding}: {body}");
            assert!(
                body.contains("-32603") || body.contains("500"),
                "{binding}: {body}"
            );
        }
        assert_eq!(logged_cause(&id).await, "disk full", "{binding}");
        request_span(|c| c.fields.get("correlation_id").map(String::as_str) == Some(id.as_str()))
            .await;
    }

    // After its first event the task ends FAILED; its status message hides the cause too.
    let body: Value = reqwest::Client::new()
        .post(format!("{}/message:send", srv.url()))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": {"role": "ROLE_USER", "messageId": "late-1", "parts": [{"text": "late"}]}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task_id = body["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"))
        .to_owned();
    let got: Value = reqwest::Client::new()
        .get(format!("{}/tasks/{task_id}", srv.url()))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got["status"]["state"], "TASK_STATE_FAILED", "{got}");
    let text = got["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(!got.to_string().contains("disk full"), "{got}");
    assert_eq!(logged_cause(&correlation_id(text)).await, "disk full");
    srv.stop().await;

    // The development switch: the cause on the wire, beside the id.
    let dev = start(
        A2aServer::builder()
            .card(card("disk-full-dev"))
            .executor(DiskFull)
            .grpc_addr("127.0.0.1:0")
            .internal_error_causes(true),
    )
    .await;
    for (binding, message, _) in internal_errors(&dev, "early").await {
        assert!(message.contains("disk full"), "{binding}: {message}");
        assert_eq!(logged_cause(&correlation_id(&message)).await, "disk full");
    }
    dev.stop().await;
}

/// Several agents in one server (#50): one registry, the request metrics labelled by agent.
#[tokio::test]
async fn the_request_metrics_of_several_agents_carry_the_agent() {
    use a2a_runtime::server::{Metrics, MultiAgentServer};
    let metrics = Metrics::install().unwrap();
    let server = MultiAgentServer::builder()
        .agent(
            "alpha",
            A2aServer::builder().card(card("alpha")).executor(Echo),
        )
        .agent(
            "beta",
            A2aServer::builder().card(card("beta")).executor(Echo),
        )
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    let client = reqwest::Client::new();
    for (agent, times) in [("alpha", 2), ("beta", 1)] {
        for _ in 0..times {
            let resp = client
                .post(format!("{}/agents/{agent}", running.url()))
                .header("A2A-Version", "1.0")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
        }
    }
    let page = metrics.render();
    for (agent, count) in [("alpha", 2.0), ("beta", 1.0)] {
        let labels = [
            ("binding", "JSONRPC"),
            ("operation", "ListTasks"),
            ("code", "0"),
            ("agent", agent),
        ];
        assert_eq!(
            sample(&page, "a2a_requests_total", &labels),
            Some(count),
            "{agent}:\n{page}"
        );
    }
    running.stop().await;
}

// ---------------------------------------------------------------------------------------------
// `/metrics` read by a strict parser of the Prometheus text format (`a2a_tests::prometheus`)
// ---------------------------------------------------------------------------------------------

/// A webhook receiver: `/ok` 200, `/flaky` 500 the first time then 200, `/moved` 302 (a
/// delivery given up on at once).
async fn webhook_receiver() -> (String, actix_web::dev::ServerHandle) {
    let flaky = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let http = actix_web::HttpServer::new(move || {
        let flaky = flaky.clone();
        actix_web::App::new().default_service(actix_web::web::to(
            move |req: actix_web::HttpRequest| {
                let flaky = flaky.clone();
                async move {
                    use actix_web::HttpResponse;
                    match req.path() {
                        "/flaky" if !flaky.swap(true, std::sync::atomic::Ordering::SeqCst) => {
                            HttpResponse::InternalServerError().finish()
                        }
                        "/moved" => HttpResponse::Found()
                            .insert_header(("location", "http://127.0.0.1:9/"))
                            .finish(),
                        _ => HttpResponse::Ok().finish(),
                    }
                }
            },
        ))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let url = format!("http://{}", http.addrs()[0]);
    let http = http.run();
    let handle = http.handle();
    tokio::spawn(http);
    (url, handle)
}

#[tokio::test]
async fn metrics_scrape_parses_with_histograms_and_push_counters() {
    use a2a_runtime::push::{PushConfig, RetryPolicy};
    use a2a_runtime::server::{DEFAULT_REQUEST_BUCKETS, Metrics};
    let metrics = Metrics::install().unwrap();
    let (hooks, hooks_handle) = webhook_receiver().await;
    let stores = a2a_runtime::store::connect("memory:").await.unwrap();
    let server = A2aServer::builder()
        .card(card("scrape"))
        .executor(Echo)
        .stores(stores.clone())
        .push(
            PushConfig::new()
                .allow_private_networks(true)
                .retry(RetryPolicy {
                    base: Duration::from_millis(10),
                    cap: Duration::from_millis(40),
                    ..RetryPolicy::default()
                })
                .poll_interval(Duration::from_millis(20)),
        )
        .build()
        .unwrap();
    let sender = server.push().unwrap().clone();
    let (config, route) = (server.config(), server.metrics_route(metrics));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let http = actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .configure(route.clone())
            .configure(config.clone())
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = http.handle();
    tokio::spawn(http);
    let client = reqwest::Client::new();

    // One task per webhook: delivered, delivered after a retry, given up on.
    for path in ["ok", "flaky", "moved"] {
        let body: Value = client
            .post(format!("{url}/message:send"))
            .header("A2A-Version", "1.0")
            .json(&json!({
                "message": {"role": "ROLE_USER", "messageId": format!("scrape-{path}"), "parts": [{"text": path}]},
                "configuration": {"taskPushNotificationConfig": {"url": format!("{hooks}/{path}")}}
            }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(body.get("task").is_some(), "{body}");
    }
    // A v1.0 method without `A2A-Version`: refused, under its own operation.
    let refused: Value = client
        .post(format!("{url}/"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let code = refused["error"]["code"].as_i64().unwrap().to_string();

    // Every delivery settled (the outbox is empty once the last one is sent or dead).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while stores.outbox.pending().await.unwrap() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            sender.metrics()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let figures = sender.metrics();
    assert!(
        figures.delivered >= 2 && figures.retried >= 1 && figures.dead >= 1,
        "{figures:?}"
    );

    let page = client
        .get(format!("{url}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let (types, samples) = a2a_tests::prometheus::parse(&page);
    assert_eq!(types["a2a_request_duration_seconds"], "histogram", "{page}");
    assert_eq!(
        types["a2a_push_delivery_duration_seconds"], "histogram",
        "{page}"
    );
    assert_eq!(types["a2a_push_sent_total"], "counter", "{page}");
    // The request histogram's buckets are the default bounds, then +Inf.
    let send = [("binding", "HTTP+JSON"), ("operation", "SendMessage")];
    let bounds: Vec<f64> = samples
        .iter()
        .filter(|s| {
            s.name == "a2a_request_duration_seconds_bucket"
                && send.iter().all(|(k, v)| s.labels[*k] == *v)
        })
        .map(|s| s.labels["le"].parse().unwrap_or(f64::INFINITY))
        .collect();
    let mut expected = DEFAULT_REQUEST_BUCKETS.to_vec();
    expected.push(f64::INFINITY);
    assert_eq!(bounds, expected, "{page}");
    assert!(
        a2a_tests::prometheus::value(&samples, "a2a_request_duration_seconds_count", &send)
            .unwrap()
            >= 3.0
    );
    let version = [
        ("binding", "JSONRPC"),
        ("operation", "GetTask"),
        ("code", code.as_str()),
    ];
    assert!(
        a2a_tests::prometheus::value(&samples, "a2a_requests_total", &version).unwrap_or(0.0)
            >= 1.0,
        "{page}"
    );
    // The push counters are the sender's own figures (this test alone pushes here).
    let as_f = |n: u64| n as f64;
    assert_eq!(
        a2a_tests::prometheus::value(&samples, "a2a_push_sent_total", &[]),
        Some(as_f(figures.delivered)),
        "{page}"
    );
    assert_eq!(
        a2a_tests::prometheus::value(&samples, "a2a_push_retried_total", &[]),
        Some(as_f(figures.retried)),
        "{page}"
    );
    assert_eq!(
        a2a_tests::prometheus::value(&samples, "a2a_push_dead_total", &[]),
        Some(as_f(figures.dead)),
        "{page}"
    );
    assert_eq!(
        a2a_tests::prometheus::value(&samples, "a2a_push_failed_total", &[]),
        Some(as_f(figures.retried + figures.dead)),
        "{page}"
    );
    let took = |result| {
        a2a_tests::prometheus::value(
            &samples,
            "a2a_push_delivery_duration_seconds_count",
            &[("result", result)],
        )
        .unwrap_or(0.0)
    };
    assert_eq!(took("ok"), as_f(figures.delivered), "{page}");
    assert_eq!(
        took("ok") + took("error"),
        as_f(figures.attempted),
        "{page}"
    );
    handle.stop(true).await;
    hooks_handle.stop(true).await;
}
