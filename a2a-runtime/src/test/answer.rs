//! What a server answered: the raw HTTP answer, and an A2A error parsed from either binding.

use std::sync::OnceLock;

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::Binding;

/// An HTTP answer, read whole.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use a2a_runtime::test::{Binding, TestServer};
/// # struct Agent;
/// # impl a2a_runtime::core::AgentExecutor for Agent {
/// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
/// # }
/// let server = TestServer::for_agent(Agent).await;
/// let answer = server.request(Binding::Rest, "GetTask", serde_json::json!({"id": "nope"})).send().await;
/// assert_eq!(answer.status, 404);
/// assert_eq!(answer.header("a2a-version"), Some("1.0"));
/// assert_eq!(answer.json()["error"]["status"], "NOT_FOUND");
/// # }
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: HeaderMap,
    /// The body, as text (invalid UTF-8 replaced).
    pub text: String,
    /// The binding of the request, when it was sent as an operation of one.
    binding: Option<Binding>,
    /// The body as JSON, parsed on first use.
    parsed: OnceLock<Value>,
}

impl Answer {
    pub(super) fn new(
        status: u16,
        headers: HeaderMap,
        text: String,
        binding: Option<Binding>,
    ) -> Self {
        Self {
            status,
            headers,
            text,
            binding,
            parsed: OnceLock::new(),
        }
    }

    /// The body as JSON.
    ///
    /// # Panics
    /// When the body is not JSON (an empty body is not).
    pub fn body(&self) -> &Value {
        self.parsed.get_or_init(|| {
            serde_json::from_str(&self.text)
                .unwrap_or_else(|e| panic!("the body is not JSON ({e}): {:?}", self.text))
        })
    }

    /// The body as JSON, owned.
    ///
    /// # Panics
    /// When the body is not JSON (an empty body is not).
    pub fn json(&self) -> Value {
        self.body().clone()
    }

    /// The result of a successful operation: the JSON-RPC `result`, or the HTTP+JSON body.
    ///
    /// # Panics
    /// When the answer is an error, is not JSON, or answers a request that was not an
    /// operation of a binding ([`TestServer::send`](super::TestServer::send)).
    pub fn result(&self) -> &Value {
        let body = self.body();
        match self.binding {
            Some(Binding::JsonRpc) => {
                assert!(
                    body.get("error").is_none() && body.get("result").is_some(),
                    "expected a result, got {body}"
                );
                &body["result"]
            }
            Some(Binding::Rest) => {
                assert!(
                    self.status == 200 && body.get("error").is_none(),
                    "expected a result, got HTTP {}: {body}",
                    self.status
                );
                body
            }
            None => panic!("a raw answer has no result: {body}"),
        }
    }

    /// A header value as text (the first one, `None` when absent or not visible ASCII).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Every value of a header, joined with `", "` as one list (`None` when absent).
    ///
    /// # Panics
    /// When a value is not visible ASCII.
    pub fn header_list(&self, name: &str) -> Option<String> {
        header_list(&self.headers, name)
    }

    /// The media type of the answer, lowercase, without parameters (`""` without one).
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

/// Every value of header `name`, joined with `", "` (`None` when absent).
pub(super) fn header_list(headers: &HeaderMap, name: &str) -> Option<String> {
    let values: Vec<&str> = headers
        .get_all(name)
        .iter()
        .map(|v| {
            v.to_str()
                .unwrap_or_else(|_| panic!("the {name} header is not visible ASCII: {v:?}"))
        })
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// An error answer of either binding, parsed and checked for the shape every A2A error has: a
/// code, a message, and details that all carry `@type` (a JSON-RPC error object, or a REST
/// `google.rpc.Status`).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use a2a_runtime::test::{Binding, TestServer};
/// # struct Agent;
/// # impl a2a_runtime::core::AgentExecutor for Agent {
/// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
/// # }
/// let server = TestServer::for_agent(Agent).await;
/// for binding in Binding::BOTH {
///     let error = server.err(binding, "GetTask", serde_json::json!({"id": "nope"})).await;
///     error.assert_task_not_found();
///     assert_eq!(error.reason(), Some("TASK_NOT_FOUND"));
/// }
/// # }
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ErrorAnswer {
    /// Which binding answered.
    pub binding: Binding,
    /// The HTTP status.
    pub http: u16,
    /// The JSON-RPC `error.code`, or the REST `error.code` (the HTTP status).
    pub code: i64,
    /// The REST `error.status` (a gRPC code name); `None` for JSON-RPC.
    pub status: Option<String>,
    /// The message.
    pub message: String,
    /// `data` (JSON-RPC) or `details` (REST).
    pub details: Vec<Value>,
    /// The whole body.
    pub body: Value,
    /// The headers of the answer (empty when [`parse`](ErrorAnswer::parse)d from a body).
    pub headers: HeaderMap,
    /// The body as it was sent (`body` as JSON text when [`parse`](ErrorAnswer::parse)d from a
    /// body).
    pub text: String,
}

impl std::fmt::Display for ErrorAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} error (HTTP {}): {}",
            self.binding, self.http, self.body
        )
    }
}

impl std::error::Error for ErrorAnswer {}

impl ErrorAnswer {
    /// Parses the error answer `body` of `binding`, sent with HTTP status `http`.
    ///
    /// # Panics
    /// When `body` is not an error of the binding's shape: a JSON-RPC envelope with an `error`
    /// (a code, a message, `data` an array) and no `result`; a REST `error` whose `code` is the
    /// HTTP status, with a `status` and a `details` array; or when the message is empty or a
    /// detail lacks `@type`.
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
        assert!(!message.is_empty(), "every error has a message: {body}");
        for d in &details {
            assert!(
                d["@type"].as_str().is_some_and(|t| !t.is_empty()),
                "every details object has @type: {body}"
            );
        }
        Self {
            binding,
            http,
            code,
            status,
            message,
            details,
            text: body.to_string(),
            body,
            headers: HeaderMap::new(),
        }
    }

    /// Every value of a header, joined with `", "` as one list (`None` when absent).
    ///
    /// # Panics
    /// When a value is not visible ASCII.
    pub fn header_list(&self, name: &str) -> Option<String> {
        header_list(&self.headers, name)
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

    /// Asserts an A2A error as the specification maps it: the JSON-RPC code `rpc_code` (with HTTP
    /// 200), or the HTTP status `http` and gRPC code name `grpc`; and an ErrorInfo with `reason`
    /// in the domain `a2a-protocol.org`.
    ///
    /// # Panics
    /// When the error is another one.
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

    /// Asserts an invalid-params error (-32602, or HTTP 400 `INVALID_ARGUMENT`) with a field
    /// violation naming `field`.
    ///
    /// # Panics
    /// When the error is another one.
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

    /// Asserts TaskNotFound (-32001, or HTTP 404 `NOT_FOUND`).
    ///
    /// # Panics
    /// When the error is another one.
    pub fn assert_task_not_found(&self) {
        self.assert_a2a("TASK_NOT_FOUND", -32001, 404, "NOT_FOUND");
    }

    /// Asserts UnsupportedOperation (-32004, or HTTP 400 `FAILED_PRECONDITION`).
    ///
    /// # Panics
    /// When the error is another one.
    pub fn assert_unsupported(&self) {
        self.assert_a2a("UNSUPPORTED_OPERATION", -32004, 400, "FAILED_PRECONDITION");
    }
}
