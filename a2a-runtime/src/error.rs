//! [`A2aError`]: every A2A error and every standard JSON-RPC error, each defined once with its
//! JSON-RPC code, HTTP status, gRPC status and `google.rpc.ErrorInfo` reason (the v1.0.1 table).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The `domain` of every A2A `ErrorInfo`.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";
/// The `@type` of `google.rpc.ErrorInfo`.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// The `@type` of `google.rpc.BadRequest`.
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";
/// The `@type` of `google.rpc.RequestInfo` (its `requestId` is an internal error's
/// correlation id).
pub const REQUEST_INFO_TYPE: &str = "type.googleapis.com/google.rpc.RequestInfo";

/// One invalid field: its path (e.g. `message.parts[0]`) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldViolation {
    /// The field path, in wire (lowerCamelCase) names.
    pub field: String,
    /// What is wrong.
    pub description: String,
}

impl FieldViolation {
    /// A violation of `field`.
    pub fn new(field: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            description: description.into(),
        }
    }
}

/// An error of the A2A protocol or of the JSON-RPC layer.
///
/// ```
/// use a2a_runtime::error::A2aError;
/// let e = A2aError::TaskNotFound { task_id: "t-1".into() };
/// assert_eq!((e.code(), e.http_status(), e.grpc_status()), (-32001, 404, "NOT_FOUND"));
/// assert_eq!(e.reason(), Some("TASK_NOT_FOUND"));
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// The task does not exist or is not visible to the caller.
    #[error("Task not found: {task_id}")]
    TaskNotFound {
        /// The requested task id.
        task_id: String,
    },
    /// The task is in a state that cannot be canceled.
    #[error("Task {task_id} cannot be canceled in state {state}")]
    TaskNotCancelable {
        /// The task id.
        task_id: String,
        /// The task's state name.
        state: String,
    },
    /// The agent does not support push notifications.
    #[error("Push notifications are not supported by this agent")]
    PushNotificationNotSupported,
    /// The operation is not supported (capability off, or the task is terminal).
    #[error("Unsupported operation: {0}")]
    UnsupportedOperation(String),
    /// A media type in the request is not supported (HTTP 400, as the v1.0.1 table says;
    /// v1.0.0 said 415 Unsupported Media Type).
    #[error("Content type not supported: {0}")]
    ContentTypeNotSupported(String),
    /// The agent's response does not conform to the operation (mostly raised by clients).
    #[error("Invalid agent response: {0}")]
    InvalidAgentResponse(String),
    /// The extended card capability is declared but no card is configured.
    #[error("The extended agent card is not configured")]
    ExtendedAgentCardNotConfigured,
    /// A required extension was not requested.
    #[error("Extension support required: {}", uris.join(", "))]
    ExtensionSupportRequired {
        /// The required extensions that were not requested.
        uris: Vec<String>,
    },
    /// An activated extension's required dependency was not requested (JSON-RPC -32008).
    #[error(
        "Extension support required: extension {extension} requires extension {dependency}; request both in A2A-Extensions"
    )]
    ExtensionDependencyMissing {
        /// The activated extension.
        extension: String,
        /// Its dependency the request did not name.
        dependency: String,
    },
    /// The requested protocol version is not served by this interface.
    #[error("{}", version_not_supported(requested, supported))]
    VersionNotSupported {
        /// The version the request asked for (`0.3` when the header was missing).
        requested: String,
        /// The versions this interface serves.
        supported: Vec<String>,
    },
    /// The body is not valid JSON (JSON-RPC -32700).
    #[error("Invalid JSON payload: {0}")]
    Parse(String),
    /// The JSON-RPC envelope is invalid (JSON-RPC -32600).
    #[error("Request payload validation error: {0}")]
    InvalidRequest(String),
    /// The JSON-RPC method (or REST route) does not exist (JSON-RPC -32601).
    #[error("Method not found: {method}")]
    MethodNotFound {
        /// The method name.
        method: String,
        /// Extra ErrorInfo metadata (e.g. the extension that serves the method).
        hint: Vec<(String, String)>,
    },
    /// The parameters break a rule (JSON-RPC -32602), each violation with its field path.
    #[error("Invalid parameters: {}", describe(violations))]
    InvalidParams {
        /// What is wrong, field by field.
        violations: Vec<FieldViolation>,
    },
    /// The request body is larger than the server accepts (JSON-RPC -32600, HTTP 413).
    #[error(
        "Request payload validation error: the body of {size} bytes exceeds the limit of {limit} bytes"
    )]
    PayloadTooLarge {
        /// The body size seen so far.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The request body did not arrive in time (JSON-RPC -32600, HTTP 408).
    #[error("Request timeout: {0}")]
    RequestTimeout(String),
    /// The server is shutting down and cannot finish the request (JSON-RPC -32603, HTTP 503).
    #[error("Service unavailable: {0}")]
    Unavailable(String),
    /// An error inside the server (JSON-RPC -32603).
    #[error("Internal error: {0}")]
    Internal(String),
    /// An error inside the server (JSON-RPC -32603) caused by another error, which is kept as
    /// its [`source`](std::error::Error::source). Made by [`A2aError::internal`] and the `From`
    /// conversions (`io::Error`, `serde_json::Error`, `anyhow::Error`); on the wire it is the
    /// same as [`Internal`](Self::Internal).
    #[error("Internal error: {source}")]
    InternalCause {
        /// The cause.
        #[source]
        source: ErrorSource,
    },
    /// An internal error as the caller sees it (JSON-RPC -32603): the server logged its cause
    /// at ERROR under `correlation_id`, which the wire carries in the message and in a
    /// `google.rpc.RequestInfo` detail. Made by [`A2aError::for_caller`].
    #[error("Internal error: {} (correlation id {correlation_id})", cause.as_deref().unwrap_or("the server could not complete the request; its log has the cause"))]
    InternalLogged {
        /// The id of the log line that holds the cause.
        correlation_id: String,
        /// The cause, only when the server shows causes (a development setting).
        cause: Option<String>,
    },
    /// The request carries no valid credential (HTTP 401 with `WWW-Authenticate`). The same
    /// for a missing and a wrong credential.
    #[error("Authentication required: the request has no valid credential")]
    Unauthenticated {
        /// The `WWW-Authenticate` challenge naming the accepted schemes.
        challenge: String,
    },
    /// The caller may not perform this operation here (HTTP 403). Never used for a task the
    /// caller cannot see: that is [`A2aError::TaskNotFound`].
    #[error("Permission denied: {0}")]
    PermissionDenied(String),
    /// The caller used up one of its quotas (a request rate, live tasks, open streams): HTTP
    /// 429 with `Retry-After`, gRPC RESOURCE_EXHAUSTED. Other callers are not affected.
    #[error("Quota exceeded: {quota}; retry after {retry_after_secs} s")]
    QuotaExceeded {
        /// Which quota, e.g. `request rate of the principal`.
        quota: String,
        /// How long to wait before trying again, in whole seconds (at least 1).
        retry_after_secs: u64,
    },
}

/// The error behind an [`A2aError::InternalCause`]: shared, so the error stays `Clone`.
/// Displays as the cause; its [`source`](std::error::Error::source) is the cause's.
#[derive(Clone)]
pub struct ErrorSource(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl ErrorSource {
    /// The cause, e.g. to downcast it.
    pub fn get(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for ErrorSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for ErrorSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for ErrorSource {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Two sources are equal when they are the same error (not merely equal messages).
impl PartialEq for ErrorSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl From<std::io::Error> for A2aError {
    fn from(e: std::io::Error) -> Self {
        Self::internal(e)
    }
}

impl From<serde_json::Error> for A2aError {
    fn from(e: serde_json::Error) -> Self {
        Self::internal(e)
    }
}

/// An `A2aError` inside the `anyhow::Error` comes back as it was; anything else is
/// [`A2aError::InternalCause`] with the whole chain as its source.
#[cfg(feature = "anyhow")]
impl From<anyhow::Error> for A2aError {
    fn from(e: anyhow::Error) -> Self {
        match e.downcast::<A2aError>() {
            Ok(a2a) => a2a,
            Err(e) => {
                let boxed: Box<dyn std::error::Error + Send + Sync + 'static> = e.into();
                Self::InternalCause {
                    source: ErrorSource(Arc::from(boxed)),
                }
            }
        }
    }
}

/// `value` quoted for an error message, clipped to its first 64 characters: an error names the
/// input it refuses without echoing all of it.
pub(crate) fn quoted(value: &str) -> String {
    const MAX: usize = 64;
    match value.char_indices().nth(MAX) {
        None => format!("{value:?}"),
        Some((end, _)) => format!("{:?}… ({} bytes)", &value[..end], value.len()),
    }
}

/// An internal error's text and every source under it, joined by `: ` (a source whose text its
/// parent already shows is not repeated).
fn cause_chain(error: &A2aError) -> String {
    let mut chain = match error {
        A2aError::Internal(text) => text.clone(),
        A2aError::InternalCause { source } => source.to_string(),
        other => other.to_string(),
    };
    let mut next = std::error::Error::source(error);
    if matches!(error, A2aError::InternalCause { .. }) {
        // Its own text is its source's.
        next = next.and_then(std::error::Error::source);
    }
    while let Some(source) = next {
        let text = source.to_string();
        if !chain.ends_with(&text) {
            chain.push_str(": ");
            chain.push_str(&text);
        }
        next = source.source();
    }
    chain
}

fn describe(violations: &[FieldViolation]) -> String {
    violations
        .iter()
        .map(|v| {
            if v.field.is_empty() {
                v.description.clone()
            } else {
                format!("{}: {}", v.field, v.description)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The message of [`A2aError::VersionNotSupported`]; for version 0.3, which is what a request
/// without `A2A-Version` asks for, it says which header to send.
fn version_not_supported(requested: &str, supported: &[String]) -> String {
    let mut message = format!(
        "A2A protocol version {requested} is not supported by this interface (supported: {})",
        supported.join(", ")
    );
    if requested == "0.3"
        && let Some(version) = supported.first()
    {
        message.push_str(&format!(
            "; a request without an A2A-Version header is version 0.3: send A2A-Version: {version}"
        ));
    }
    message
}

impl A2aError {
    /// An internal error (-32603) caused by `source`, which it keeps: `?` in an agent on any
    /// error type, without losing the chain.
    ///
    /// ```
    /// use a2a_runtime::A2aError;
    /// let e = A2aError::internal(std::io::Error::other("disk full"));
    /// assert_eq!((e.code(), e.to_string().as_str()), (-32603, "Internal error: disk full"));
    /// assert!(std::error::Error::source(&e).is_some());
    /// ```
    pub fn internal(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::InternalCause {
            source: ErrorSource(Arc::new(source)),
        }
    }

    /// An invalid-params error.
    pub fn invalid_params(violations: Vec<FieldViolation>) -> Self {
        Self::InvalidParams { violations }
    }

    /// An invalid-params error for one field.
    pub fn invalid_field(field: impl Into<String>, description: impl Into<String>) -> Self {
        Self::InvalidParams {
            violations: vec![FieldViolation::new(field, description)],
        }
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        match self {
            Self::TaskNotFound { .. } => -32001,
            Self::TaskNotCancelable { .. } => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation(_) => -32004,
            Self::ContentTypeNotSupported(_) => -32005,
            Self::InvalidAgentResponse(_) => -32006,
            Self::ExtendedAgentCardNotConfigured => -32007,
            Self::ExtensionSupportRequired { .. } | Self::ExtensionDependencyMissing { .. } => {
                -32008
            }
            Self::VersionNotSupported { .. } => -32009,
            Self::Parse(_) => -32700,
            Self::InvalidRequest(_) | Self::PayloadTooLarge { .. } | Self::RequestTimeout(_) => {
                -32600
            }
            Self::MethodNotFound { .. } => -32601,
            Self::InvalidParams { .. } => -32602,
            // Outside the A2A range (-32001..-32099) and the standard one: the spec leaves the
            // code of these to the binding ("a JSON-RPC custom code"); these mirror HTTP's.
            Self::Unauthenticated { .. } => -31401,
            Self::PermissionDenied(_) => -31403,
            Self::QuotaExceeded { .. } => -31429,
            Self::Internal(_)
            | Self::InternalCause { .. }
            | Self::InternalLogged { .. }
            | Self::Unavailable(_) => -32603,
        }
    }

    /// The HTTP status of the HTTP+JSON binding.
    pub fn http_status(&self) -> u16 {
        match self {
            Self::TaskNotFound { .. } | Self::MethodNotFound { .. } => 404,
            Self::PayloadTooLarge { .. } => 413,
            Self::Unauthenticated { .. } => 401,
            Self::PermissionDenied(_) => 403,
            Self::QuotaExceeded { .. } => 429,
            Self::RequestTimeout(_) => 408,
            Self::Unavailable(_) => 503,
            Self::InvalidAgentResponse(_)
            | Self::Internal(_)
            | Self::InternalCause { .. }
            | Self::InternalLogged { .. } => 500,
            _ => 400,
        }
    }

    /// The gRPC status code name.
    pub fn grpc_status(&self) -> &'static str {
        match self {
            Self::TaskNotFound { .. } => "NOT_FOUND",
            Self::ContentTypeNotSupported(_)
            | Self::Parse(_)
            | Self::InvalidRequest(_)
            | Self::InvalidParams { .. } => "INVALID_ARGUMENT",
            Self::InvalidAgentResponse(_)
            | Self::Internal(_)
            | Self::InternalCause { .. }
            | Self::InternalLogged { .. } => "INTERNAL",
            Self::MethodNotFound { .. } => "UNIMPLEMENTED",
            Self::PayloadTooLarge { .. } | Self::QuotaExceeded { .. } => "RESOURCE_EXHAUSTED",
            Self::Unauthenticated { .. } => "UNAUTHENTICATED",
            Self::PermissionDenied(_) => "PERMISSION_DENIED",
            Self::RequestTimeout(_) => "DEADLINE_EXCEEDED",
            Self::Unavailable(_) => "UNAVAILABLE",
            _ => "FAILED_PRECONDITION",
        }
    }

    /// The `ErrorInfo.reason` of an A2A error (`None` for the standard JSON-RPC errors, except
    /// MethodNotFound, which carries `METHOD_NOT_FOUND` so hints can travel with it).
    pub fn reason(&self) -> Option<&'static str> {
        Some(match self {
            Self::TaskNotFound { .. } => "TASK_NOT_FOUND",
            Self::TaskNotCancelable { .. } => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation(_) => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported(_) => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::InvalidAgentResponse(_) => "INVALID_AGENT_RESPONSE",
            Self::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            Self::ExtensionSupportRequired { .. } | Self::ExtensionDependencyMissing { .. } => {
                "EXTENSION_SUPPORT_REQUIRED"
            }
            Self::VersionNotSupported { .. } => "VERSION_NOT_SUPPORTED",
            Self::MethodNotFound { .. } => "METHOD_NOT_FOUND",
            Self::Unauthenticated { .. } => "UNAUTHENTICATED",
            Self::PermissionDenied(_) => "PERMISSION_DENIED",
            Self::QuotaExceeded { .. } => "QUOTA_EXCEEDED",
            Self::Parse(_)
            | Self::InvalidRequest(_)
            | Self::InvalidParams { .. }
            | Self::PayloadTooLarge { .. }
            | Self::RequestTimeout(_)
            | Self::Unavailable(_)
            | Self::Internal(_)
            | Self::InternalCause { .. }
            | Self::InternalLogged { .. } => {
                return None;
            }
        })
    }

    /// The `ErrorInfo.metadata` (string values only, as google.rpc requires).
    pub fn info_metadata(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let mut put = |k: &str, v: &str| {
            m.insert(k.to_owned(), Value::String(v.to_owned()));
        };
        match self {
            Self::TaskNotFound { task_id } => put("taskId", task_id),
            Self::TaskNotCancelable { task_id, state } => {
                put("taskId", task_id);
                put("state", state);
            }
            Self::ExtensionSupportRequired { uris } => put("extensions", &uris.join(",")),
            Self::ExtensionDependencyMissing {
                extension,
                dependency,
            } => {
                put("extensions", dependency);
                put("requiredBy", extension);
            }
            Self::VersionNotSupported {
                requested,
                supported,
            } => {
                put("requestedVersion", requested);
                put("supportedVersions", &supported.join(","));
            }
            Self::MethodNotFound { method, hint } => {
                put("method", method);
                for (k, v) in hint {
                    put(k, v);
                }
            }
            Self::QuotaExceeded {
                quota,
                retry_after_secs,
            } => {
                put("quota", quota);
                put("retryAfterSeconds", &retry_after_secs.to_string());
            }
            _ => {}
        }
        m
    }

    /// The error's `details`: an `ErrorInfo` for A2A errors, a `BadRequest` for invalid params.
    pub fn details(&self) -> Vec<Value> {
        let mut out = Vec::with_capacity(1);
        if let Some(reason) = self.reason() {
            let mut info = Map::new();
            info.insert("@type".into(), ERROR_INFO_TYPE.into());
            info.insert("reason".into(), reason.into());
            info.insert("domain".into(), ERROR_DOMAIN.into());
            let meta = self.info_metadata();
            if !meta.is_empty() {
                info.insert("metadata".into(), Value::Object(meta));
            }
            out.push(Value::Object(info));
        }
        if let Self::InvalidParams { violations } = self {
            out.push(json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations}));
        }
        if let Self::InternalLogged { correlation_id, .. } = self {
            out.push(json!({"@type": REQUEST_INFO_TYPE, "requestId": correlation_id}));
        }
        out
    }

    /// Whether this is an error inside the server, whose text is for its operators
    /// ([`Internal`](Self::Internal), [`InternalCause`](Self::InternalCause)).
    pub fn is_internal(&self) -> bool {
        matches!(self, Self::Internal(_) | Self::InternalCause { .. })
    }

    /// The error as a caller may see it. An [internal](Self::is_internal) error is logged at
    /// ERROR (target `a2a::error`) with its whole cause chain under a new correlation id, which
    /// is also recorded on the current span (its `correlation_id` field), and comes back as
    /// [`InternalLogged`](Self::InternalLogged) with that id (and the chain, when
    /// `show_cause`). Any other error comes back as it is: the caller can act on it.
    ///
    /// ```
    /// use a2a_runtime::A2aError;
    /// let e = A2aError::internal(std::io::Error::other("disk full")).for_caller(false);
    /// assert_eq!(e.code(), -32603);
    /// assert!(!e.to_string().contains("disk full"), "{e}");
    /// let A2aError::InternalLogged { correlation_id, .. } = &e else { unreachable!() };
    /// assert!(e.to_string().contains(correlation_id.as_str()));
    /// ```
    pub fn for_caller(self, show_cause: bool) -> Self {
        if !self.is_internal() {
            return self;
        }
        let correlation_id = uuid::Uuid::new_v4().to_string();
        let chain = cause_chain(&self);
        tracing::error!(
            target: "a2a::error",
            correlation_id = %correlation_id,
            cause = %chain,
            "internal error"
        );
        tracing::Span::current().record("correlation_id", correlation_id.as_str());
        Self::InternalLogged {
            correlation_id,
            cause: show_cause.then_some(chain),
        }
    }

    /// The JSON-RPC `error` object: `{"code", "message", "data": [details]}`.
    pub fn to_jsonrpc_error(&self) -> Value {
        json!({"code": self.code(), "message": self.to_string(), "data": self.details()})
    }

    /// The HTTP+JSON error body (`google.rpc.Status` in AIP-193 form).
    pub fn to_rest_body(&self) -> Value {
        json!({"error": {
            "code": self.http_status(),
            "status": self.grpc_status(),
            "message": self.to_string(),
            "details": self.details(),
        }})
    }

    /// Rebuilds an error from its wire form: a JSON-RPC code or HTTP status, a message, and the
    /// details array. The `ErrorInfo.reason` wins over the code when present (v1.0.0 and v1.0.1
    /// disagree on HTTP statuses, never on reasons).
    pub fn from_wire(code: i32, message: &str, details: &[Value]) -> Self {
        let info = details
            .iter()
            .find(|d| d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE));
        let meta = |k: &str| {
            info.and_then(|i| i.get("metadata"))
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let reason = info.and_then(|i| i.get("reason")).and_then(Value::as_str);
        let msg = message.to_owned();
        match (reason, code) {
            (Some("TASK_NOT_FOUND"), _) | (None, -32001) => Self::TaskNotFound {
                task_id: meta("taskId"),
            },
            (Some("TASK_NOT_CANCELABLE"), _) | (None, -32002) => Self::TaskNotCancelable {
                task_id: meta("taskId"),
                state: meta("state"),
            },
            (Some("PUSH_NOTIFICATION_NOT_SUPPORTED"), _) | (None, -32003) => {
                Self::PushNotificationNotSupported
            }
            (Some("UNSUPPORTED_OPERATION"), _) | (None, -32004) => Self::UnsupportedOperation(msg),
            (Some("CONTENT_TYPE_NOT_SUPPORTED"), _) | (None, -32005) => {
                Self::ContentTypeNotSupported(msg)
            }
            (Some("INVALID_AGENT_RESPONSE"), _) | (None, -32006) => Self::InvalidAgentResponse(msg),
            (Some("EXTENDED_AGENT_CARD_NOT_CONFIGURED"), _) | (None, -32007) => {
                Self::ExtendedAgentCardNotConfigured
            }
            (Some("EXTENSION_SUPPORT_REQUIRED"), _) | (None, -32008) => {
                Self::ExtensionSupportRequired {
                    uris: meta("extensions")
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect(),
                }
            }
            (Some("VERSION_NOT_SUPPORTED"), _) | (None, -32009) => Self::VersionNotSupported {
                requested: meta("requestedVersion"),
                supported: meta("supportedVersions")
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            },
            (Some("METHOD_NOT_FOUND"), _) | (None, -32601) => Self::MethodNotFound {
                method: meta("method"),
                hint: Vec::new(),
            },
            (Some("UNAUTHENTICATED"), _) | (None, -31401 | 401) => Self::Unauthenticated {
                challenge: String::new(),
            },
            (Some("PERMISSION_DENIED"), _) | (None, -31403 | 403) => Self::PermissionDenied(msg),
            (Some("QUOTA_EXCEEDED"), _) | (None, -31429 | 429) => Self::QuotaExceeded {
                quota: meta("quota"),
                retry_after_secs: meta("retryAfterSeconds").parse().unwrap_or(1),
            },
            (_, -32700) => Self::Parse(msg),
            (_, -32600) => Self::InvalidRequest(msg),
            (_, -32602) | (_, 400) => {
                let violations = details
                    .iter()
                    .filter(|d| d.get("@type").and_then(Value::as_str) == Some(BAD_REQUEST_TYPE))
                    .flat_map(|d| {
                        d.get("fieldViolations")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default()
                    })
                    .filter_map(|v| serde_json::from_value::<FieldViolation>(v).ok())
                    .collect::<Vec<_>>();
                if violations.is_empty() {
                    Self::invalid_field("", msg)
                } else {
                    Self::InvalidParams { violations }
                }
            }
            (_, 404) => Self::TaskNotFound {
                task_id: meta("taskId"),
            },
            _ => Self::Internal(msg),
        }
    }
}

#[cfg(test)]
mod tests;
