//! Shared helpers of the `server_*` tests: a server on `127.0.0.1:0`, both HTTP bindings behind
//! one call API, an SSE reader built on a real SSE client crate (`eventsource-stream`), and a
//! scriptable test agent whose progress the test controls through channels and a semaphore
//! (never sleeps).
#![allow(
    dead_code,
    unused_imports,
    unreachable_pub,
    clippy::unwrap_used,
    clippy::expect_used
)]

mod agent;
pub mod pg;
mod sse;

use std::future::Future;
use std::time::Duration;

use a2a_runtime::server::{A2aServer, A2aServerBuilder};
use a2a_runtime::types::AgentCard;
use actix_web::dev::ServerHandle;
use eventsource_stream::Eventsource as _;
use serde_json::{Map, Value, json};

pub use agent::{Control, ScriptAgent, script_agent};
pub use sse::{Ev, Sse};

/// The safety net around every await on the server (never used to order things).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Awaits `f`, failing the test if it takes longer than [`TIMEOUT`].
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(TIMEOUT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {TIMEOUT:?}: {what}"),
    }
}

/// One of the two HTTP bindings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0 at the interface URL.
    JsonRpc,
    /// HTTP+JSON (REST).
    Rest,
}

/// Both bindings, for tests that run the same scenario on each.
pub const BOTH: [Binding; 2] = [Binding::JsonRpc, Binding::Rest];

/// A minimal valid card.
pub fn card(name: &str) -> AgentCard {
    AgentCard {
        name: name.into(),
        description: format!("{name} (test agent)"),
        version: "1.0.0".into(),
        ..AgentCard::default()
    }
}

/// A server running on `127.0.0.1:0`, stopped (not gracefully) when dropped.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// The HTTP client.
    pub client: reqwest::Client,
    /// The in-process server's handle; `None` for a server in another process.
    handle: Option<ServerHandle>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // `stop` sends the command at once; the returned future only waits for completion.
        if let Some(handle) = &self.handle {
            drop(handle.stop(false));
        }
    }
}

/// Builds and starts `builder` on `127.0.0.1:0` with one worker.
pub async fn serve(builder: A2aServerBuilder) -> TestServer {
    let server: A2aServer = builder.workers(1).build().expect("build the server");
    let running = server.start("127.0.0.1:0").await.expect("start the server");
    TestServer::at(running.url(), running.handle())
}

/// The scripted agent on a fresh server (streaming on, push off), with its control.
pub async fn scripted() -> (TestServer, Control) {
    let (agent, control) = script_agent();
    let server = serve(A2aServer::builder().card(card("scripted")).executor(agent)).await;
    (server, control)
}

/// A `messageId` unique within the test run.
pub fn mid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "msg-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// SendMessage params for a user message with one text part.
pub fn msg(text: &str) -> Value {
    json!({"message": {"messageId": mid(), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// SendMessage params continuing `task_id` (no contextId: the server infers it).
pub fn msg_to(task_id: &str, text: &str) -> Value {
    json!({"message": {"messageId": mid(), "role": "ROLE_USER", "taskId": task_id,
                       "parts": [{"text": text}]}})
}

/// Adds `configuration` members to SendMessage params.
pub fn with_config(mut params: Value, config: Value) -> Value {
    params["configuration"] = config;
    params
}

/// The `task` of a SendMessage result (panics when it is a message).
pub fn task_of(result: &Value) -> &Value {
    assert_eq!(
        one_member(result),
        "task",
        "expected a task result: {result}"
    );
    &result["task"]
}

/// The name of the only member of a oneof wrapper (`task`, `message`, `statusUpdate`, ...).
pub fn one_member(v: &Value) -> &str {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    assert_eq!(obj.len(), 1, "a oneof wrapper has exactly one member: {v}");
    obj.keys().next().map(String::as_str).unwrap_or_default()
}

/// The state string of a task.
pub fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

/// The id string of a task.
pub fn id(task: &Value) -> String {
    task["id"].as_str().expect("task id").to_owned()
}

/// The concatenated text parts of a message (or artifact).
pub fn text(m: &Value) -> String {
    m["parts"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default()
}

/// Percent-encodes a query value.
pub fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A query string (`?a=1&b=x`) from the scalar members of an object.
pub fn query(params: &Map<String, Value>) -> String {
    let pairs: Vec<String> = params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{}={}", enc(k), enc(&v))
        })
        .collect();
    if pairs.is_empty() {
        String::new()
    } else {
        format!("?{}", pairs.join("&"))
    }
}

/// An HTTP response, read whole.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: reqwest::header::HeaderMap,
    /// The body text.
    pub text: String,
}

impl Reply {
    /// The body as JSON (panics if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.text))
    }

    /// A header value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The media type of the response, lowercase, without parameters.
    pub fn media_type(&self) -> String {
        self.header("content-type")
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    }
}

/// An error answer of either binding, parsed and checked for the shape every error must have
/// (digest §4.1/§4.3: a code, a message, and `details` whose elements all carry `@type`).
#[derive(Clone, Debug)]
pub struct ApiError {
    /// Which binding answered.
    pub binding: Binding,
    /// The HTTP status.
    pub http: u16,
    /// The JSON-RPC `error.code`, or the REST `error.code` (the HTTP status).
    pub code: i64,
    /// The REST `error.status` (gRPC code name); `None` for JSON-RPC.
    pub status: Option<String>,
    /// The message.
    pub message: String,
    /// `data` (JSON-RPC) or `details` (REST).
    pub details: Vec<Value>,
    /// The response body.
    pub body: Value,
}

impl ApiError {
    /// Parses an error response of `binding` (JSON-RPC: the envelope; REST: google.rpc.Status).
    pub fn parse(binding: Binding, http: u16, body: Value) -> Self {
        let (code, status, message, details) = match binding {
            Binding::JsonRpc => {
                assert_eq!(body["jsonrpc"], "2.0", "{body}");
                let e = &body["error"];
                assert!(
                    body.get("result").is_none(),
                    "error and result together: {body}"
                );
                (
                    e["code"].as_i64().unwrap_or_else(|| panic!("code: {body}")),
                    None,
                    e["message"].as_str().unwrap_or_default().to_owned(),
                    e["data"]
                        .as_array()
                        .unwrap_or_else(|| panic!("JSON-RPC error.data must be an array: {body}"))
                        .clone(),
                )
            }
            Binding::Rest => {
                let e = &body["error"];
                let code = e["code"].as_i64().unwrap_or_else(|| panic!("code: {body}"));
                assert_eq!(
                    code,
                    i64::from(http),
                    "error.code is the HTTP status: {body}"
                );
                (
                    code,
                    Some(
                        e["status"]
                            .as_str()
                            .unwrap_or_else(|| panic!("error.status: {body}"))
                            .to_owned(),
                    ),
                    e["message"].as_str().unwrap_or_default().to_owned(),
                    e["details"]
                        .as_array()
                        .unwrap_or_else(|| panic!("REST error.details must be an array: {body}"))
                        .clone(),
                )
            }
        };
        assert!(
            !message.is_empty(),
            "every error has a message (#80): {body}"
        );
        for d in &details {
            assert!(
                d["@type"].as_str().is_some_and(|t| !t.is_empty()),
                "every details object has @type (#80, #83): {body}"
            );
        }
        Self {
            binding,
            http,
            code,
            status,
            message,
            details,
            body,
        }
    }

    /// The `google.rpc.ErrorInfo` detail, if any.
    pub fn info(&self) -> Option<&Value> {
        self.details
            .iter()
            .find(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
    }

    /// `ErrorInfo.reason`.
    pub fn reason(&self) -> Option<&str> {
        self.info().and_then(|i| i["reason"].as_str())
    }

    /// `ErrorInfo.metadata[key]`.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.info().and_then(|i| i["metadata"][key].as_str())
    }

    /// The fields named by the `google.rpc.BadRequest` detail.
    pub fn fields(&self) -> Vec<String> {
        self.details
            .iter()
            .filter(|d| d["@type"] == "type.googleapis.com/google.rpc.BadRequest")
            .flat_map(|d| d["fieldViolations"].as_array().cloned().unwrap_or_default())
            .filter_map(|v| v["field"].as_str().map(str::to_owned))
            .collect()
    }

    /// Asserts an A2A error per the v1.0.1 table: the JSON-RPC code (HTTP 200) or the HTTP status
    /// and gRPC name, and an ErrorInfo with `reason` in domain `a2a-protocol.org` (#81, #82, #84).
    pub fn assert_a2a(&self, reason: &str, rpc_code: i64, http: u16, grpc: &str) {
        match self.binding {
            Binding::JsonRpc => {
                assert_eq!(
                    self.code, rpc_code,
                    "JSON-RPC code of {reason}: {}",
                    self.body
                );
                assert_eq!(self.http, 200, "JSON-RPC errors travel with HTTP 200");
            }
            Binding::Rest => {
                assert_eq!(self.http, http, "HTTP status of {reason}: {}", self.body);
                assert_eq!(self.status.as_deref(), Some(grpc), "{}", self.body);
            }
        }
        let info = self
            .info()
            .unwrap_or_else(|| panic!("A2A errors carry an ErrorInfo: {}", self.body));
        assert_eq!(info["reason"], reason, "{}", self.body);
        assert_eq!(info["domain"], "a2a-protocol.org", "{}", self.body);
    }

    /// Asserts an invalid-params error (-32602 / 400 INVALID_ARGUMENT) naming `field`.
    pub fn assert_invalid(&self, field: &str) {
        match self.binding {
            Binding::JsonRpc => assert_eq!(self.code, -32602, "{}", self.body),
            Binding::Rest => {
                assert_eq!(self.http, 400, "{}", self.body);
                assert_eq!(
                    self.status.as_deref(),
                    Some("INVALID_ARGUMENT"),
                    "{}",
                    self.body
                );
            }
        }
        assert!(
            self.fields().iter().any(|f| f == field),
            "a field violation names {field:?}: {}",
            self.body
        );
    }

    /// TaskNotFound (-32001 / 404 NOT_FOUND).
    pub fn assert_task_not_found(&self) {
        self.assert_a2a("TASK_NOT_FOUND", -32001, 404, "NOT_FOUND");
    }

    /// UnsupportedOperation (-32004 / 400 FAILED_PRECONDITION).
    pub fn assert_unsupported(&self) {
        self.assert_a2a("UNSUPPORTED_OPERATION", -32004, 400, "FAILED_PRECONDITION");
    }
}

/// How a REST request is sent.
struct RestCall {
    method: reqwest::Method,
    path: String,
    body: Option<Value>,
}

/// Maps an operation and its params onto its REST route (digest §5.1): path fields move into the
/// path, GET/DELETE fields into the query, POST fields into the body.
fn rest_call(op: &str, params: &Value) -> RestCall {
    let mut p = params.as_object().cloned().unwrap_or_default();
    let mut take = |k: &str| -> String {
        match p.remove(k) {
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
            None => String::new(),
        }
    };
    use reqwest::Method;
    let (method, path, body_or_query) = match op {
        "SendMessage" => (Method::POST, "/message:send".to_owned(), true),
        "SendStreamingMessage" => (Method::POST, "/message:stream".to_owned(), true),
        "GetTask" => (Method::GET, format!("/tasks/{}", take("id")), false),
        "ListTasks" => (Method::GET, "/tasks".to_owned(), false),
        "CancelTask" => (Method::POST, format!("/tasks/{}:cancel", take("id")), true),
        "SubscribeToTask" => (
            Method::POST,
            format!("/tasks/{}:subscribe", take("id")),
            true,
        ),
        "CreateTaskPushNotificationConfig" => (
            Method::POST,
            format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
            true,
        ),
        "GetTaskPushNotificationConfig" => {
            let task = take("taskId");
            (
                Method::GET,
                format!("/tasks/{task}/pushNotificationConfigs/{}", take("id")),
                false,
            )
        }
        "ListTaskPushNotificationConfigs" => (
            Method::GET,
            format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
            false,
        ),
        "DeleteTaskPushNotificationConfig" => {
            let task = take("taskId");
            (
                Method::DELETE,
                format!("/tasks/{task}/pushNotificationConfigs/{}", take("id")),
                false,
            )
        }
        "GetExtendedAgentCard" => (Method::GET, "/extendedAgentCard".to_owned(), false),
        other => panic!("no REST route for {other}"),
    };
    if body_or_query {
        RestCall {
            method,
            path,
            body: Some(Value::Object(p)),
        }
    } else {
        RestCall {
            method,
            path: format!("{path}{}", query(&p)),
            body: None,
        }
    }
}

impl TestServer {
    /// A server already listening at `url`.
    pub fn at(url: String, handle: ServerHandle) -> Self {
        let mut server = Self::remote(url);
        server.handle = Some(handle);
        server
    }

    /// The server at `url`, running in another process.
    pub fn remote(url: String) -> Self {
        Self {
            url,
            client: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("an HTTP client"),
            handle: None,
        }
    }

    /// Sends a request and reads the whole response.
    pub async fn send(&self, req: reqwest::RequestBuilder) -> Reply {
        let resp = within("HTTP request", req.send())
            .await
            .expect("the HTTP request");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = within("HTTP body", resp.text()).await.expect("the body");
        Reply {
            status,
            headers,
            text,
        }
    }

    /// A POST of raw bytes to `path` with a content type and (optionally) `A2A-Version: 1.0`.
    pub async fn post_raw(
        &self,
        path: &str,
        content_type: &str,
        body: impl Into<reqwest::Body>,
        version: Option<&str>,
    ) -> Reply {
        let mut req = self
            .client
            .post(format!("{}{path}", self.url))
            .header("content-type", content_type)
            .body(body);
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        self.send(req).await
    }

    /// A GET of `path` with `A2A-Version: 1.0`.
    pub async fn get(&self, path: &str) -> Reply {
        self.send(
            self.client
                .get(format!("{}{path}", self.url))
                .header("A2A-Version", "1.0"),
        )
        .await
    }

    /// A JSON-RPC envelope POSTed to the JSON-RPC endpoint (`/`); returns the reply.
    pub async fn rpc_envelope(&self, envelope: &Value) -> Reply {
        self.post_raw("/", "application/json", envelope.to_string(), Some("1.0"))
            .await
    }

    /// Runs `op` on `binding`: the result, or the parsed error.
    pub async fn call(&self, binding: Binding, op: &str, params: Value) -> Result<Value, ApiError> {
        match binding {
            Binding::JsonRpc => {
                let id = json!(format!("req-{}", mid()));
                let reply = self
                    .rpc_envelope(
                        &json!({"jsonrpc": "2.0", "id": id, "method": op, "params": params}),
                    )
                    .await;
                assert_eq!(reply.media_type(), "application/json", "{reply:?}");
                assert_eq!(reply.header("a2a-version"), Some("1.0"), "{reply:?}");
                let body = reply.json();
                if reply.status == 401 {
                    // Refused before the body is read: no id is known yet.
                    assert!(body["id"].is_null(), "no id before the body: {body}");
                } else {
                    assert_eq!(body["id"], id, "the id is echoed: {body}");
                }
                if body.get("error").is_some() {
                    Err(ApiError::parse(binding, reply.status, body))
                } else {
                    assert_eq!(reply.status, 200);
                    assert_eq!(body["jsonrpc"], "2.0");
                    Ok(body["result"].clone())
                }
            }
            Binding::Rest => {
                let call = rest_call(op, &params);
                let mut req = self
                    .client
                    .request(call.method, format!("{}{}", self.url, call.path))
                    .header("A2A-Version", "1.0");
                if let Some(body) = call.body {
                    req = req
                        .header("content-type", "application/a2a+json")
                        .body(body.to_string());
                }
                let reply = self.send(req).await;
                assert_eq!(reply.header("a2a-version"), Some("1.0"), "{reply:?}");
                if reply.status == 200 {
                    assert_eq!(reply.media_type(), "application/a2a+json", "{reply:?}");
                    Ok(reply.json())
                } else {
                    assert!(
                        matches!(
                            reply.media_type().as_str(),
                            "application/json" | "application/a2a+json"
                        ),
                        "REST errors are JSON: {reply:?}"
                    );
                    Err(ApiError::parse(binding, reply.status, reply.json()))
                }
            }
        }
    }

    /// Runs `op` and returns its result (panics on an error).
    pub async fn ok(&self, binding: Binding, op: &str, params: Value) -> Value {
        match self.call(binding, op, params).await {
            Ok(v) => v,
            Err(e) => panic!("{op} over {binding:?} failed: {}", e.body),
        }
    }

    /// Runs `op` and returns its error (panics on success).
    pub async fn err(&self, binding: Binding, op: &str, params: Value) -> ApiError {
        match self.call(binding, op, params).await {
            Ok(v) => panic!("{op} over {binding:?} succeeded but should fail: {v}"),
            Err(e) => e,
        }
    }

    /// SendMessage, returning the task (panics on an error or a message reply).
    pub async fn send_task(&self, binding: Binding, params: Value) -> Value {
        let r = self.ok(binding, "SendMessage", params).await;
        task_of(&r).clone()
    }

    /// Starts a streaming operation: the open SSE stream, or the error answered before it.
    pub async fn stream(&self, binding: Binding, op: &str, params: Value) -> Result<Sse, ApiError> {
        match binding {
            Binding::JsonRpc => {
                let id = json!(format!("stream-{}", mid()));
                let req = self
                    .client
                    .post(format!("{}/", self.url))
                    .header("content-type", "application/json")
                    .header("A2A-Version", "1.0")
                    .body(
                        json!({"jsonrpc": "2.0", "id": id, "method": op, "params": params})
                            .to_string(),
                    );
                self.open_sse(binding, req, Some(id)).await
            }
            Binding::Rest => {
                let call = rest_call(op, &params);
                let mut req = self
                    .client
                    .request(call.method, format!("{}{}", self.url, call.path))
                    .header("A2A-Version", "1.0");
                if let Some(body) = call.body {
                    req = req
                        .header("content-type", "application/a2a+json")
                        .body(body.to_string());
                }
                self.open_sse(binding, req, None).await
            }
        }
    }

    /// Opens an SSE stream from a prepared request.
    pub async fn open_sse(
        &self,
        binding: Binding,
        req: reqwest::RequestBuilder,
        rpc_id: Option<Value>,
    ) -> Result<Sse, ApiError> {
        let resp = within("SSE request", req.send())
            .await
            .expect("the request");
        let status = resp.status().as_u16();
        let media = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if !media.starts_with("text/event-stream") {
            let body: Value = within("error body", resp.json()).await.expect("JSON error");
            if let Some(id) = &rpc_id {
                assert_eq!(&body["id"], id, "the id is echoed: {body}");
            }
            return Err(ApiError::parse(binding, status, body));
        }
        assert_eq!(status, 200);
        assert_eq!(
            resp.headers()
                .get("a2a-version")
                .and_then(|v| v.to_str().ok()),
            Some("1.0")
        );
        Ok(Sse {
            events: Box::pin(resp.bytes_stream().eventsource()),
            rpc_id,
            last_id: None,
        })
    }
}
