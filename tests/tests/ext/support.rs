//! Shared helpers of the `ext_*` tests: a server on `127.0.0.1:0`, raw JSON-RPC / REST / SSE
//! calls with chosen headers, three recording extensions whose hooks write into one shared log,
//! and a test agent. Nothing here sleeps: every wait is on the server's answer, bounded by a
//! timeout that only turns a hang into a failure.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{Activate, ExtensionHooks, Reply, RequestContext};
use a2a_runtime::protocol::A2aRequest;
use a2a_runtime::server::{A2aServer, A2aServerBuilder};
use a2a_runtime::types::{AgentCard, Artifact, Message, Part, SendMessageResponse, StreamResponse};
use actix_web::dev::ServerHandle;
use eventsource_stream::Eventsource as _;
use futures::{Stream, StreamExt as _};
use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The safety net around every await on the server.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Awaits `f`, failing the test if it takes longer than [`TIMEOUT`].
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(TIMEOUT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {TIMEOUT:?}: {what}"),
    }
}

/// A minimal valid card.
pub fn card(name: &str) -> AgentCard {
    AgentCard {
        name: name.into(),
        description: format!("{name} (extension test agent)"),
        version: "1.0.0".into(),
        ..AgentCard::default()
    }
}

/// A server on `127.0.0.1:0`, stopped when dropped.
pub struct Srv {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// The HTTP client.
    pub client: reqwest::Client,
    handle: ServerHandle,
}

impl Drop for Srv {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

/// Builds `builder` and starts it on `127.0.0.1:0` with one worker.
pub async fn start(builder: A2aServerBuilder) -> Srv {
    let server: A2aServer = builder.workers(1).build().expect("build the server");
    let running = server.start("127.0.0.1:0").await.expect("start the server");
    Srv {
        url: running.url(),
        client: reqwest::Client::new(),
        handle: running.handle(),
    }
}

/// One HTTP answer.
#[derive(Debug)]
pub struct Resp {
    /// HTTP status.
    pub status: u16,
    /// Headers.
    pub headers: HeaderMap,
    /// The JSON body (`null` when empty).
    pub body: Value,
}

impl Resp {
    /// The echoed `A2A-Extensions` values, joined (`None` when absent).
    pub fn echoed(&self) -> Option<String> {
        echoed(&self.headers)
    }

    /// The JSON-RPC `result`, failing the test on an error.
    pub fn result(&self) -> &Value {
        assert!(
            self.body.get("error").is_none(),
            "expected a result, got {}",
            self.body
        );
        &self.body["result"]
    }
}

/// The `A2A-Extensions` response header values, joined with ", " (`None` when absent).
pub fn echoed(headers: &HeaderMap) -> Option<String> {
    let values: Vec<&str> = headers
        .get_all("a2a-extensions")
        .iter()
        .map(|v| v.to_str().expect("ascii header"))
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// The echoed URIs, split.
pub fn echoed_uris(headers: &HeaderMap) -> Vec<String> {
    echoed(headers)
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect())
        .unwrap_or_default()
}

/// The bearer token every request of these helpers carries (servers that authenticate accept
/// it with [`authenticated`]; the others ignore it).
pub const TOKEN: &str = "ext-tests-token";

/// Authenticates callers with [`TOKEN`].
pub fn authenticated(builder: A2aServerBuilder) -> A2aServerBuilder {
    builder.authenticator(a2a_runtime::auth::StaticTokens::bearer().token("ext-tests", TOKEN))
}

fn with_headers(
    mut rb: reqwest::RequestBuilder,
    headers: &[(&str, &str)],
) -> reqwest::RequestBuilder {
    rb = rb
        .header("A2A-Version", "1.0")
        .header("Authorization", format!("Bearer {TOKEN}"));
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    rb
}

async fn finish(resp: reqwest::Response) -> Resp {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = within("the response body", resp.bytes())
        .await
        .expect("body");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
    };
    Resp {
        status,
        headers,
        body,
    }
}

/// A JSON-RPC call (unary, or a streaming method answered with an error).
pub async fn rpc(srv: &Srv, method: &str, params: Value, headers: &[(&str, &str)]) -> Resp {
    let rb = srv
        .client
        .post(format!("{}/", srv.url))
        .header("Content-Type", "application/json")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    let resp = within(method, with_headers(rb, headers).send())
        .await
        .expect("send");
    finish(resp).await
}

/// A REST call: `method` (GET, POST, DELETE), a path below the server URL, an optional body.
pub async fn rest(
    srv: &Srv,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Resp {
    let url = format!("{}{path}", srv.url);
    let mut rb = match method {
        "GET" => srv.client.get(url),
        "POST" => srv.client.post(url),
        "DELETE" => srv.client.delete(url),
        other => panic!("method {other}"),
    };
    if let Some(b) = body {
        rb = rb
            .header("Content-Type", "application/a2a+json")
            .body(b.to_string());
    }
    let resp = within(path, with_headers(rb, headers).send())
        .await
        .expect("send");
    finish(resp).await
}

/// An open SSE response: status, headers, and the `data:` payloads as they arrive.
pub struct Sse {
    /// HTTP status.
    pub status: u16,
    /// Headers.
    pub headers: HeaderMap,
    events: std::pin::Pin<Box<dyn Stream<Item = Value> + Send>>,
}

impl Sse {
    /// The next event's JSON (`None` at the end of the stream).
    pub async fn next(&mut self) -> Option<Value> {
        within("the next SSE event", self.events.next()).await
    }

    /// Every remaining event, until the server ends the stream.
    pub async fn collect(mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(v) = self.next().await {
            out.push(v);
        }
        out
    }
}

impl std::fmt::Debug for Sse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sse")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// Sends a streaming request: the open SSE stream, or the error answer (any non-SSE answer).
async fn open(rb: reqwest::RequestBuilder, headers: &[(&str, &str)]) -> Result<Sse, Resp> {
    let resp = within("open the stream", with_headers(rb, headers).send())
        .await
        .expect("send");
    let is_sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    if !is_sse {
        return Err(finish(resp).await);
    }
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let events = resp.bytes_stream().eventsource().map(|e| {
        let e = e.expect("SSE framing");
        assert_ne!(e.event, "error", "error event: {}", e.data);
        serde_json::from_str::<Value>(&e.data).expect("SSE data is JSON")
    });
    Ok(Sse {
        status,
        headers,
        events: Box::pin(events),
    })
}

/// A JSON-RPC streaming call; each event is the `result` of its frame. `Err`: the error answer.
pub async fn rpc_stream(
    srv: &Srv,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> Result<Sse, Resp> {
    let rb = srv
        .client
        .post(format!("{}/", srv.url))
        .header("Content-Type", "application/json")
        .header("Accept", "text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    let mut sse = open(rb, headers).await?;
    sse.events = Box::pin(sse.events.map(|frame| {
        assert!(frame.get("error").is_none(), "error frame: {frame}");
        frame["result"].clone()
    }));
    Ok(sse)
}

/// SendMessage with `params` on the HTTP+JSON binding (`rest_binding`) or JSON-RPC.
pub async fn send_message(
    srv: &Srv,
    rest_binding: bool,
    params: Value,
    headers: &[(&str, &str)],
) -> Resp {
    if rest_binding {
        rest(srv, "POST", "/message:send", Some(params), headers).await
    } else {
        rpc(srv, "SendMessage", params, headers).await
    }
}

/// SendStreamingMessage with `params` on the HTTP+JSON binding (`rest_binding`) or JSON-RPC;
/// fails the test unless a stream opens.
pub async fn stream_message(
    srv: &Srv,
    rest_binding: bool,
    params: Value,
    headers: &[(&str, &str)],
) -> Sse {
    if rest_binding {
        rest_stream(srv, "POST", "/message:stream", Some(params), headers).await
    } else {
        rpc_stream(srv, "SendStreamingMessage", params, headers).await
    }
    .expect("a stream")
}

/// A REST streaming call (POST with a body, or GET without). `Err`: the error answer.
pub async fn rest_stream(
    srv: &Srv,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Result<Sse, Resp> {
    let url = format!("{}{path}", srv.url);
    let mut rb = if method == "GET" {
        srv.client.get(url)
    } else {
        srv.client.post(url)
    };
    rb = rb.header("Accept", "text/event-stream");
    if let Some(b) = body {
        rb = rb
            .header("Content-Type", "application/a2a+json")
            .body(b.to_string());
    }
    open(rb, headers).await
}

/// A user message as JSON (a fresh message id).
pub fn user_message(text: &str) -> Value {
    json!({
        "messageId": format!("m-{}", uuid()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    })
}

fn uuid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// SendMessage params carrying `text`.
pub fn send_params(text: &str) -> Value {
    json!({"message": user_message(text)})
}

/// The kind of a streamed event (`task`, `statusUpdate`, `artifactUpdate`, `message`).
pub fn kind(event: &Value) -> &'static str {
    for k in ["task", "statusUpdate", "artifactUpdate", "message"] {
        if event.get(k).is_some() {
            return k;
        }
    }
    panic!("unknown event {event}")
}

// ---------------------------------------------------------------------------------------------
// The recording extensions.

/// A log shared by the extensions' hooks and the test.
#[derive(Clone, Debug, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    /// Appends an entry.
    pub fn push(&self, entry: String) {
        self.0.lock().unwrap().push(entry);
    }

    /// Every entry so far, leaving the log empty.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// Every entry so far.
    pub fn entries(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// What a recording extension's `activate` answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// `Activate::Activated`.
    #[default]
    Activate,
    /// `Activate::Skip`.
    Skip,
    /// `Activate::Refuse` with InvalidParams naming the extension.
    Refuse,
}

/// The name of a reply as recorded in the log.
pub fn reply_name(reply: &Reply<'_>) -> String {
    match reply {
        Reply::SendMessage(SendMessageResponse::Task(_)) => "send:task".into(),
        Reply::SendMessage(SendMessageResponse::Message(_)) => "send:message".into(),
        Reply::Task(_) => "task".into(),
        Reply::ListTasks(_) => "list".into(),
        Reply::PushConfig(_) => "push-config".into(),
        Reply::PushConfigs(_) => "push-configs".into(),
        Reply::Empty(_) => "empty".into(),
        Reply::AgentCard(_) => "card".into(),
        Reply::Event(e) => format!("event:{}", event_name(e)),
    }
}

/// The name of a stream event as recorded in the log.
pub fn event_name(event: &StreamResponse) -> &'static str {
    match event {
        StreamResponse::Task(_) => "task",
        StreamResponse::Message(_) => "message",
        StreamResponse::StatusUpdate(_) => "status",
        StreamResponse::ArtifactUpdate(_) => "artifact",
    }
}

macro_rules! recorder {
    ($name:ident, $uri:literal, $label:literal) => {
        /// A recording extension: every hook call is appended to its log as
        /// `<label>.<hook>[:<what>]`.
        #[a2a_extension(uri = $uri)]
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub struct $name {
            #[serde(skip)]
            pub log: Log,
            #[serde(skip)]
            pub mode: Mode,
        }

        impl $name {
            /// The label in the log.
            pub const LABEL: &'static str = $label;

            /// A recorder writing into `log`.
            pub fn new(log: &Log, mode: Mode) -> Self {
                Self {
                    log: log.clone(),
                    mode,
                }
            }
        }

        impl ExtensionHooks for $name {
            /// The label and every operation seen for this request.
            type Activation = Vec<String>;

            fn activate(&self, requested: &[String], _: &RequestContext) -> Activate<Vec<String>> {
                self.log.push(format!("{}.activate", $label));
                assert!(requested.iter().any(|u| u == $uri));
                match self.mode {
                    Mode::Activate => Activate::Activated(vec![$label.to_owned()]),
                    Mode::Skip => Activate::Skip,
                    Mode::Refuse => Activate::Refuse(A2aError::invalid_field(
                        "A2A-Extensions",
                        format!("{} refuses this request", $label),
                    )),
                }
            }

            fn handle_request(
                &self,
                request: &mut A2aRequest,
                act: &mut Vec<String>,
                _: &RequestContext,
            ) -> Result<(), A2aError> {
                self.log
                    .push(format!("{}.request:{}", $label, request.operation()));
                act.push(request.operation().to_string());
                Ok(())
            }

            fn handle_response(
                &self,
                reply: &mut Reply<'_>,
                act: &mut Vec<String>,
            ) -> Result<(), A2aError> {
                assert_eq!(act.first().map(String::as_str), Some($label));
                self.log
                    .push(format!("{}.response:{}", $label, reply_name(reply)));
                Ok(())
            }

            fn handle_event(
                &self,
                event: &mut StreamResponse,
                _: &mut Vec<String>,
            ) -> Result<(), A2aError> {
                self.log
                    .push(format!("{}.event:{}", $label, event_name(event)));
                Ok(())
            }
        }
    };
}

recorder!(RecA, "https://test.example/ext/a/v1", "A");
recorder!(RecB, "https://test.example/ext/b/v1", "B");
recorder!(RecC, "https://test.example/ext/c/v1", "C");

/// The URI of [`RecA`].
pub const A: &str = "https://test.example/ext/a/v1";
/// The URI of [`RecB`].
pub const B: &str = "https://test.example/ext/b/v1";
/// The URI of [`RecC`].
pub const C: &str = "https://test.example/ext/c/v1";

/// A data-only extension that clients must activate.
#[a2a_extension(uri = "https://test.example/ext/required/v1", required = true)]
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Contract {
    /// The terms' version.
    pub terms: String,
}

/// The URI of [`Contract`].
pub const REQUIRED: &str = "https://test.example/ext/required/v1";

// ---------------------------------------------------------------------------------------------
// The agent.

/// By message text: `wait` works until canceled; `reply` answers with a direct message;
/// anything else: a progress status, an artifact, and COMPLETED with a message. Its artifact's
/// metadata lists what the agent saw of the negotiation (`active`, `a`: `RecA`'s activation).
#[derive(Clone, Copy, Debug, Default)]
pub struct TestAgent;

impl AgentExecutor for TestAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        match ctx.text().as_str() {
            "wait" => {
                events.progress("waiting until canceled").await?;
                ctx.cancelled().await;
                Ok(())
            }
            "reply" => events.reply(Message::agent_text("direct")).await,
            _ => {
                events.progress("working").await?;
                let mut artifact = Artifact::new([Part::text("result")]).with_name("out");
                let active: Vec<&str> = ctx.request.extensions.activated_uris().collect();
                artifact.metadata.insert("active".into(), json!(active));
                artifact
                    .metadata
                    .insert("a".into(), json!(ctx.extension::<RecA>()));
                artifact
                    .metadata
                    .insert("aActive".into(), json!(ctx.is_active::<RecA>()));
                events.artifact(artifact).await?;
                events.complete_with("done").await
            }
        }
    }
}

/// A builder with [`TestAgent`], no linked extensions, and `card("ext")`.
pub fn builder() -> A2aServerBuilder {
    A2aServer::builder()
        .card(card("ext"))
        .executor(TestAgent)
        .linked_extensions(false)
}
