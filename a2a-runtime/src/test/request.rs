//! [`Request`]: one operation on one binding, with its headers, sent three ways.

use std::sync::atomic::{AtomicU64, Ordering};

use reqwest::Method;
use serde_json::{Value, json};

use super::Binding;
use super::answer::{Answer, ErrorAnswer};
use super::server::TestServer;
use super::sse::EventStream;

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
pub(super) enum Target {
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
    pub(super) fn new(server: &'s TestServer, binding: Binding, target: Target) -> Self {
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
