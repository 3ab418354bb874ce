//! [`TestServer`]: a server on a free local port, driven over both bindings, and the
//! [`Request`]s sent to it (one operation on one binding, with its headers, sent three ways).

use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::dev::ServerHandle;
use reqwest::Method;
use serde_json::{Value, json};

use super::answer::{Answer, ErrorAnswer};
use super::sse::EventStream;
use super::{Binding, one_member, rest, within};
use crate::client::{A2aClient, ClientOptions};
use crate::core::AgentExecutor;
use crate::server::{A2aServer, A2aServerBuilder, RunningServer};
use crate::types::AgentCard;

/// A minimal valid card for a test agent: `name`, a description and version `1.0.0`.
///
/// ```
/// let card = a2a_runtime::test::agent_card("echo");
/// assert_eq!((card.name.as_str(), card.version.as_str()), ("echo", "1.0.0"));
/// ```
pub fn agent_card(name: &str) -> AgentCard {
    AgentCard {
        name: name.into(),
        description: format!("{name} (test agent)"),
        version: "1.0.0".into(),
        ..AgentCard::default()
    }
}

/// A server on `127.0.0.1` at a free port, stopped (at once, not gracefully) when dropped; or a
/// server that runs elsewhere ([`TestServer::remote`]). It speaks both bindings: an operation
/// and its params (ProtoJSON, as on the wire) go over JSON-RPC or HTTP+JSON alike, and the
/// answer comes back parsed, or as the error with its code and details.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use a2a_runtime::server::A2aServer;
/// use a2a_runtime::test::{agent_card, Binding, TestServer};
/// use serde_json::json;
/// # struct Agent;
/// # impl a2a_runtime::core::AgentExecutor for Agent {
/// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete_with("done").await }
/// # }
/// let server = TestServer::start(A2aServer::builder().card(agent_card("agent")).executor(Agent)).await;
/// assert_eq!(server.card().await.name, "agent");
///
/// let params = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
/// let task = server.send_task(Binding::Rest, params).await;
/// let got = server.ok(Binding::JsonRpc, "GetTask", json!({"id": task["id"]})).await;
/// assert_eq!(got["status"]["message"]["parts"][0]["text"], "done");
///
/// // The same operation with chosen headers; the raw answer.
/// let answer = server
///     .request(Binding::JsonRpc, "GetTask", json!({"id": task["id"]}))
///     .header("A2A-Extensions", "https://example.com/ext/v1")
///     .send()
///     .await;
/// assert_eq!(answer.status, 200);
/// assert_eq!(answer.json()["result"]["id"], task["id"]);
/// # }
/// ```
pub struct TestServer {
    url: String,
    http: reqwest::Client,
    running: Option<RunningServer>,
    /// Stops the server when this is dropped.
    handle: Option<ServerHandle>,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("url", &self.url)
            .field("stops_on_drop", &self.handle.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            // `stop` sends the command at once; the returned future only waits for it.
            drop(handle.stop(false));
        }
    }
}

impl TestServer {
    /// Builds `builder` with one worker thread and starts it on `127.0.0.1` at a free port.
    ///
    /// # Panics
    /// When the server does not build (the builder's error is in the message) or cannot listen.
    pub async fn start(builder: A2aServerBuilder) -> Self {
        let server = builder
            .workers(1)
            .build()
            .unwrap_or_else(|e| panic!("TestServer: the server does not build: {e}"));
        let running = server
            .start("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("TestServer: cannot listen on 127.0.0.1: {e}"));
        Self::from_running(running)
    }

    /// `executor` behind a minimal card ([`agent_card`]), started as [`TestServer::start`] does.
    ///
    /// # Panics
    /// As [`TestServer::start`].
    pub async fn for_agent(executor: impl AgentExecutor) -> Self {
        Self::start(
            A2aServer::builder()
                .card(agent_card("test agent"))
                .executor(executor),
        )
        .await
    }

    /// A server the test started itself (e.g. with more workers, or to keep its gRPC address).
    pub fn from_running(running: RunningServer) -> Self {
        let mut server = Self::attached(running.url(), running.handle());
        server.running = Some(running);
        server
    }

    /// The server at `url`, started elsewhere in this process, stopped through `handle` (at
    /// once) when this is dropped: for a server whose [`RunningServer`] the test keeps, e.g. to
    /// stop it gracefully, or several clients of one server.
    pub fn attached(url: impl Into<String>, handle: ServerHandle) -> Self {
        let mut server = Self::remote(url);
        server.handle = Some(handle);
        server
    }

    /// The server at `url` (e.g. `http://127.0.0.1:8080`), running elsewhere: another process,
    /// another implementation. Dropping it leaves that server alone.
    ///
    /// # Panics
    /// When no HTTP client can be built (the TLS roots cannot be loaded).
    pub fn remote(url: impl Into<String>) -> Self {
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap_or_else(|e| panic!("TestServer: no HTTP client: {e}"));
        Self {
            url: url.into().trim_end_matches('/').to_owned(),
            http,
            running: None,
            handle: None,
        }
    }

    /// Sends every request with `http` instead (e.g. one with default headers, or trusting a
    /// test certificate authority).
    pub fn with_http(mut self, http: reqwest::Client) -> Self {
        self.http = http;
        self
    }

    /// The base URL: `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The HTTP client the requests go through.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The running server, when this was started by [`TestServer::start`] or given by
    /// [`TestServer::from_running`].
    pub fn running(&self) -> Option<&RunningServer> {
        self.running.as_ref()
    }

    /// Stops the server gracefully and waits for it ([`RunningServer::stop`]), when it was
    /// started by [`TestServer::start`] or given by [`TestServer::from_running`]; otherwise
    /// stops it as dropping this does.
    pub async fn stop(mut self) {
        if let Some(running) = self.running.take() {
            self.handle = None;
            running.stop().await;
        }
    }

    /// The public agent card (`/.well-known/agent-card.json`).
    ///
    /// # Panics
    /// When the card cannot be fetched, is not HTTP 200, or is not an agent card.
    pub async fn card(&self) -> AgentCard {
        let answer = self.get(crate::server::WELL_KNOWN_PATH).await;
        assert_eq!(answer.status, 200, "the agent card: {answer:?}");
        serde_json::from_str(&answer.text)
            .unwrap_or_else(|e| panic!("the agent card does not parse ({e}): {}", answer.text))
    }

    /// A client of this server, from its card ([`A2aClient::discover`], default options).
    ///
    /// # Panics
    /// When discovery fails.
    pub async fn client(&self) -> A2aClient {
        within(
            "the client's discovery",
            A2aClient::discover(&self.url, ClientOptions::default()),
        )
        .await
        .unwrap_or_else(|e| panic!("TestServer: cannot discover {}: {e}", self.url))
    }

    /// `op` (a method name, e.g. `SendMessage`) with `params` on `binding`, to send with more
    /// headers or read as raw HTTP. It carries `A2A-Version: 1.0`. On HTTP+JSON, the fields of
    /// the route's path go into the path, those of a GET or DELETE into the query, the others
    /// into the body.
    ///
    /// # Panics
    /// On HTTP+JSON, when `op` has no REST route.
    pub fn request(&self, binding: Binding, op: &str, params: Value) -> Request<'_> {
        let target = match binding {
            Binding::JsonRpc => Target::Rpc {
                method: op.to_owned(),
                params,
            },
            Binding::Rest => {
                let route = rest::route(op, &params)
                    .unwrap_or_else(|| panic!("TestServer: no REST route for {op}"));
                Target::Rest {
                    method: route.method,
                    path: route.path,
                    body: route.body,
                }
            }
        };
        Request::new(self, binding, target)
    }

    /// An HTTP+JSON request of `method` to `path` (below the base URL) with an optional JSON
    /// body, for routes [`TestServer::request`] does not map (an extension's method, a GET
    /// subscribe).
    pub fn rest(&self, method: Method, path: &str, body: Option<Value>) -> Request<'_> {
        let target = Target::Rest {
            method,
            path: path.to_owned(),
            body,
        };
        Request::new(self, Binding::Rest, target)
    }

    /// Runs `op` on `binding`: the result, or the error answered ([`Request::result`]).
    ///
    /// # Panics
    /// As [`Request::result`].
    pub async fn call(
        &self,
        binding: Binding,
        op: &str,
        params: Value,
    ) -> Result<Value, ErrorAnswer> {
        self.request(binding, op, params).result().await
    }

    /// Runs `op` and returns its result.
    ///
    /// # Panics
    /// When the server answers an error, and as [`Request::result`].
    pub async fn ok(&self, binding: Binding, op: &str, params: Value) -> Value {
        match self.call(binding, op, params).await {
            Ok(v) => v,
            Err(e) => panic!("{op} over {binding:?} failed: {}", e.body),
        }
    }

    /// Runs `op` and returns its error.
    ///
    /// # Panics
    /// When `op` succeeds, and as [`Request::result`].
    pub async fn err(&self, binding: Binding, op: &str, params: Value) -> ErrorAnswer {
        match self.call(binding, op, params).await {
            Ok(v) => panic!("{op} over {binding:?} succeeded but should fail: {v}"),
            Err(e) => e,
        }
    }

    /// SendMessage, returning the task.
    ///
    /// # Panics
    /// When the server answers an error or a message, and as [`Request::result`].
    pub async fn send_task(&self, binding: Binding, params: Value) -> Value {
        let result = self.ok(binding, "SendMessage", params).await;
        assert_eq!(
            one_member(&result),
            "task",
            "expected a task result: {result}"
        );
        result["task"].clone()
    }

    /// Starts a streaming operation (`SendStreamingMessage`, `SubscribeToTask`): the open
    /// stream, or the error answered instead ([`Request::stream`]).
    ///
    /// # Panics
    /// As [`Request::stream`].
    pub async fn stream(
        &self,
        binding: Binding,
        op: &str,
        params: Value,
    ) -> Result<EventStream, ErrorAnswer> {
        self.request(binding, op, params).stream().await
    }

    /// Sends a request built on [`TestServer::http`] and reads the whole answer.
    ///
    /// # Panics
    /// When the request fails or takes longer than [`TIMEOUT`](super::TIMEOUT).
    pub async fn send(&self, request: reqwest::RequestBuilder) -> Answer {
        self.exchange(request, None).await
    }

    pub(super) async fn exchange(
        &self,
        request: reqwest::RequestBuilder,
        binding: Option<Binding>,
    ) -> Answer {
        let response = within("the HTTP request", request.send())
            .await
            .unwrap_or_else(|e| panic!("the HTTP request failed: {e}"));
        read(response, binding).await
    }

    /// A GET of `path` (below the base URL) with `A2A-Version: 1.0`.
    ///
    /// # Panics
    /// As [`TestServer::send`].
    pub async fn get(&self, path: &str) -> Answer {
        self.send(
            self.http
                .get(format!("{}{path}", self.url))
                .header("A2A-Version", "1.0"),
        )
        .await
    }

    /// A POST of `body` to `path` with a content type and, when given, an `A2A-Version`.
    ///
    /// # Panics
    /// As [`TestServer::send`].
    pub async fn post_raw(
        &self,
        path: &str,
        content_type: &str,
        body: impl Into<reqwest::Body>,
        version: Option<&str>,
    ) -> Answer {
        let mut request = self
            .http
            .post(format!("{}{path}", self.url))
            .header("content-type", content_type)
            .body(body);
        if let Some(v) = version {
            request = request.header("A2A-Version", v);
        }
        self.send(request).await
    }

    /// A JSON-RPC `envelope`, as given, POSTed to the JSON-RPC endpoint (`/`).
    ///
    /// # Panics
    /// As [`TestServer::send`].
    pub async fn rpc_envelope(&self, envelope: &Value) -> Answer {
        self.post_raw("/", "application/json", envelope.to_string(), Some("1.0"))
            .await
    }

    /// Sends a request built on [`TestServer::http`] expecting a stream: the open stream, or
    /// the error answered instead (any answer that is not `text/event-stream`). On JSON-RPC
    /// `rpc_id` is the id the request carries.
    ///
    /// # Panics
    /// As [`Request::stream`].
    pub async fn open_sse(
        &self,
        binding: Binding,
        request: reqwest::RequestBuilder,
        rpc_id: Option<Value>,
    ) -> Result<EventStream, ErrorAnswer> {
        let response = within("the stream request", request.send())
            .await
            .unwrap_or_else(|e| panic!("the stream request failed: {e}"));
        let status = response.status().as_u16();
        let media = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if !media.starts_with("text/event-stream") {
            let answer = read(response, Some(binding)).await;
            let body = answer.json();
            match &rpc_id {
                // Refused before the body is read: no id is known yet.
                Some(_) if status == 401 => {
                    assert!(body["id"].is_null(), "no id before the body: {body}");
                }
                Some(id) => assert_eq!(&body["id"], id, "the id is echoed: {body}"),
                None => {}
            }
            let mut error = ErrorAnswer::parse(binding, status, body);
            error.headers = answer.headers;
            error.text = answer.text;
            return Err(error);
        }
        assert_eq!(status, 200, "a stream opens with HTTP 200");
        let stream = EventStream::new(response, binding, rpc_id);
        assert_eq!(
            stream.header("a2a-version"),
            Some("1.0"),
            "a stream answers A2A-Version: 1.0"
        );
        Ok(stream)
    }
}

/// Reads a whole answer.
async fn read(response: reqwest::Response, binding: Option<Binding>) -> Answer {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = within("the HTTP body", response.bytes())
        .await
        .unwrap_or_else(|e| panic!("the HTTP body could not be read: {e}"));
    Answer::new(
        status,
        headers,
        String::from_utf8_lossy(&body).into_owned(),
        binding,
    )
}

/// A request id unique within the process.
fn next_id(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Where a request goes.
#[derive(Debug)]
enum Target {
    Rpc {
        method: String,
        params: Value,
    },
    Rest {
        method: Method,
        path: String,
        body: Option<Value>,
    },
}

/// A request to a [`TestServer`] on one binding, built by [`TestServer::request`] or
/// [`TestServer::rest`]: add headers, then send it and read the raw answer, the checked result,
/// or the stream.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use a2a_runtime::test::{Binding, TestServer};
/// use serde_json::json;
/// # struct Agent;
/// # impl a2a_runtime::core::AgentExecutor for Agent {
/// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
/// # }
/// let server = TestServer::for_agent(Agent).await;
/// let error = server
///     .request(Binding::JsonRpc, "GetTask", json!({"id": "nope"}))
///     .id(json!(7))
///     .result()
///     .await
///     .unwrap_err();
/// error.assert_task_not_found();
/// assert_eq!(error.body["id"], 7);
/// # }
/// ```
#[derive(Debug)]
#[must_use = "a request does nothing until it is sent"]
pub struct Request<'s> {
    server: &'s TestServer,
    binding: Binding,
    target: Target,
    headers: Vec<(String, String)>,
    version: Option<String>,
    rpc_id: Option<Value>,
    tenant: Option<String>,
}

impl<'s> Request<'s> {
    fn new(server: &'s TestServer, binding: Binding, target: Target) -> Self {
        Self {
            server,
            binding,
            target,
            headers: Vec::new(),
            version: Some("1.0".to_owned()),
            rpc_id: None,
            tenant: None,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds headers.
    pub fn headers(mut self, headers: &[(&str, &str)]) -> Self {
        self.headers.extend(
            headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        self
    }

    /// The `A2A-Version` header to send (`1.0` unless changed; `None`: no header).
    pub fn version(mut self, version: Option<&str>) -> Self {
        self.version = version.map(str::to_owned);
        self
    }

    /// The JSON-RPC id (a fresh string unless changed).
    pub fn id(mut self, id: Value) -> Self {
        self.rpc_id = Some(id);
        self
    }

    /// Addresses `tenant`: its `tenant` param on JSON-RPC, the `/{tenant}` prefix of the route
    /// on HTTP+JSON.
    pub fn tenant(mut self, tenant: &str) -> Self {
        self.tenant = Some(tenant.to_owned());
        self
    }

    /// The HTTP request, and the JSON-RPC id it carries.
    fn build(&mut self, stream: bool) -> (reqwest::RequestBuilder, Option<Value>) {
        let server = self.server;
        let (mut request, id) = match &self.target {
            Target::Rpc { method, params } => {
                let prefix = if stream { "stream" } else { "req" };
                let id = self.rpc_id.take().unwrap_or_else(|| json!(next_id(prefix)));
                let mut params = params.clone();
                if let (Some(tenant), Some(members)) = (&self.tenant, params.as_object_mut()) {
                    members.insert("tenant".into(), tenant.as_str().into());
                }
                let envelope =
                    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                let request = server
                    .http()
                    .post(format!("{}/", server.url()))
                    .header("content-type", "application/json")
                    .body(envelope.to_string());
                (request, Some(id))
            }
            Target::Rest { method, path, body } => {
                let prefix = self
                    .tenant
                    .as_ref()
                    .map(|t| format!("/{t}"))
                    .unwrap_or_default();
                let mut request = server
                    .http()
                    .request(method.clone(), format!("{}{prefix}{path}", server.url()));
                if let Some(body) = body {
                    request = request
                        .header("content-type", "application/a2a+json")
                        .body(body.to_string());
                }
                (request, None)
            }
        };
        if let Some(v) = &self.version {
            request = request.header("A2A-Version", v.as_str());
        }
        if stream {
            request = request.header("accept", "text/event-stream");
        }
        for (k, v) in &self.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        (request, id)
    }

    /// Sends the request and reads the whole answer, whatever it is.
    ///
    /// # Panics
    /// When the request fails or takes longer than [`TIMEOUT`](super::TIMEOUT).
    pub async fn send(mut self) -> Answer {
        let (request, _) = self.build(false);
        self.server.exchange(request, Some(self.binding)).await
    }

    /// Sends the request: the result (the JSON-RPC `result`, or the REST body), or the error
    /// answered. The answer must have its binding's shape: the JSON-RPC envelope echoing the id
    /// (`null` for a 401 refused before the body was read) as `application/json`, HTTP 200 with
    /// a result; a REST result as `application/a2a+json`; `A2A-Version: 1.0` when the request
    /// asked for 1.0; an error as [`ErrorAnswer::parse`] checks it.
    ///
    /// # Panics
    /// When the answer breaks these rules, and as [`Request::send`].
    pub async fn result(mut self) -> Result<Value, ErrorAnswer> {
        let (request, id) = self.build(false);
        let binding = self.binding;
        let v1 = self.version.as_deref() == Some("1.0");
        let reply = self.server.exchange(request, Some(binding)).await;
        if v1 {
            assert_eq!(reply.header("a2a-version"), Some("1.0"), "{reply:?}");
        }
        match binding {
            Binding::JsonRpc => {
                assert_eq!(reply.media_type(), "application/json", "{reply:?}");
                let body = reply.json();
                if reply.status == 401 {
                    // Refused before the body is read: no id is known yet.
                    assert!(body["id"].is_null(), "no id before the body: {body}");
                } else {
                    let id = id.unwrap_or(Value::Null);
                    assert_eq!(body["id"], id, "the id is echoed: {body}");
                }
                if body.get("error").is_some() {
                    let mut error = ErrorAnswer::parse(binding, reply.status, body);
                    error.headers = reply.headers;
                    error.text = reply.text;
                    Err(error)
                } else {
                    assert_eq!(reply.status, 200, "a JSON-RPC result: {body}");
                    assert_eq!(body["jsonrpc"], "2.0", "{body}");
                    Ok(body["result"].clone())
                }
            }
            Binding::Rest => {
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
                    let mut error = ErrorAnswer::parse(binding, reply.status, reply.json());
                    error.headers = reply.headers;
                    error.text = reply.text;
                    Err(error)
                }
            }
        }
    }

    /// Sends the request expecting a stream (with `Accept: text/event-stream`): the open stream,
    /// or the error answered instead (any answer that is not `text/event-stream`).
    ///
    /// # Panics
    /// When the request fails; when a stream opens without HTTP 200 or `A2A-Version: 1.0`; when
    /// an error answer is not an error of the binding's shape ([`ErrorAnswer::parse`]) or does
    /// not echo the JSON-RPC id (`null` for a 401 refused before the body was read).
    pub async fn stream(mut self) -> Result<EventStream, ErrorAnswer> {
        let (request, id) = self.build(true);
        self.server.open_sse(self.binding, request, id).await
    }
}
