//! [`ClientError`]: why a client call failed, and [`AgentError`]: an error the agent answered.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::{A2aError, ERROR_INFO_TYPE};

/// Why a client call failed.
///
/// ```no_run
/// use a2a_runtime::client::{A2aClient, ClientError, ClientOptions};
///
/// # async fn run(client: A2aClient) {
/// match client.get_task("t-1", None).await {
///     Ok(task) => println!("{}", task.get_ref().status.state),
///     Err(ClientError::Agent(e)) => println!("the agent said {} ({:?})", e.code(), e.reason()),
///     Err(ClientError::Timeout { .. }) => println!("no answer in time"),
///     Err(other) => println!("{other}"),
/// }
/// # }
/// ```
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// No complete answer within the timeout.
    #[error("no answer from {url} within {timeout:?}")]
    Timeout {
        /// The URL called.
        url: String,
        /// The timeout that ran out.
        timeout: Duration,
    },
    /// The connection could not be made or broke (refused, reset, DNS, TLS).
    #[error("request to {url} failed: {source}")]
    Transport {
        /// The URL called.
        url: String,
        /// The HTTP library's error.
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// An HTTP status other than success, without an A2A error in the body.
    #[error("{url} answered HTTP {status}: {body}")]
    Http {
        /// The URL called.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The start of the body (at most 1 KiB, whitespace collapsed).
        body: String,
    },
    /// An answer that is not what the operation promises (not JSON, the wrong shape, a
    /// truncated stream).
    #[error("invalid agent response: {0}")]
    InvalidResponse(String),
    /// The server sent more than the client holds (see
    /// [`ClientLimits`](super::ClientLimits)): a body, an event-stream line or event, or a
    /// gRPC message over its limit. What came before it was delivered; nothing after it is
    /// read.
    #[error("{url} sent {what} larger than the client's limit of {limit} bytes")]
    TooLarge {
        /// The URL called.
        url: String,
        /// What was too large (`a response body`, `an event-stream line`, ...).
        what: &'static str,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The agent answered with an A2A (or JSON-RPC) error.
    #[error("the agent answered: {0}")]
    Agent(AgentError),
    /// Refused by the client itself, before or after the exchange: a local check (an extension
    /// the agent requires and the client does not activate), a client-side extension hook, or a
    /// request that could not be encoded. Nothing of it came from the agent.
    #[error("refused by the client (a local check, not the agent's answer): {0}")]
    Local(A2aError),
}

impl ClientError {
    /// The A2A error behind this one: the agent's error, a local refusal, or (for timeouts,
    /// transport failures, HTTP errors and invalid answers) `InvalidAgentResponse`.
    pub fn to_a2a_error(&self) -> A2aError {
        match self {
            Self::Agent(e) => e.inner.error.clone(),
            Self::Local(e) => e.clone(),
            other => A2aError::InvalidAgentResponse(other.to_string()),
        }
    }

    /// The agent's error, when the agent answered with one.
    pub fn agent_error(&self) -> Option<&AgentError> {
        match self {
            Self::Agent(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn transport(url: &str, e: reqwest::Error) -> Self {
        Self::Transport {
            url: url.to_owned(),
            source: Arc::new(e),
        }
    }

    pub(crate) fn too_large(url: &str, what: &'static str, limit: usize) -> Self {
        Self::TooLarge {
            url: url.to_owned(),
            what,
            limit,
        }
    }

    pub(crate) fn http(url: &str, status: u16, body: &[u8]) -> Self {
        Self::Http {
            url: url.to_owned(),
            status,
            body: snippet(body, 1024),
        }
    }
}

impl From<ClientError> for A2aError {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Agent(e) => e.inner.error,
            ClientError::Local(e) => e,
            other => A2aError::InvalidAgentResponse(other.to_string()),
        }
    }
}

/// The start of `body` as text, whitespace collapsed: at most `limit` bytes of it.
pub(crate) fn snippet(body: &[u8], limit: usize) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(limit)]);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An error the agent answered with, as it came on the wire, and the [`A2aError`] it stands
/// for.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentError {
    // Boxed: keeps `ClientError`, and every `Result` carrying it, small.
    inner: Box<Wire>,
}

/// What [`AgentError`] holds.
#[derive(Clone, Debug, PartialEq)]
struct Wire {
    code: i32,
    http_status: Option<u16>,
    message: String,
    reason: Option<String>,
    metadata: Map<String, Value>,
    details: Vec<Value>,
    error: A2aError,
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.inner.message, self.inner.code)
    }
}

impl std::error::Error for AgentError {}

impl AgentError {
    /// An error already read into an [`A2aError`] (a v0.3 REST answer).
    pub(crate) fn from_error(error: A2aError, http_status: Option<u16>) -> Self {
        Self {
            inner: Box::new(Wire {
                code: error.code(),
                http_status,
                message: error.to_string(),
                reason: None,
                metadata: Map::new(),
                details: Vec::new(),
                error,
            }),
        }
    }

    /// From a JSON-RPC `error` (`code`) or an HTTP+JSON error body (`http_status`).
    pub(crate) fn from_wire(
        code: i32,
        http_status: Option<u16>,
        message: &str,
        details: Vec<Value>,
    ) -> Self {
        let error = A2aError::from_wire(code, message, &details);
        let info = details
            .iter()
            .find(|d| d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE));
        let reason = info
            .and_then(|i| i.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let metadata = info
            .and_then(|i| i.get("metadata"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Self {
            inner: Box::new(Wire {
                // On HTTP+JSON the body's code is the HTTP status: the A2A code is the error's.
                code: if http_status.is_some() {
                    error.code()
                } else {
                    code
                },
                http_status,
                message: message.to_owned(),
                reason,
                metadata,
                details,
                error,
            }),
        }
    }

    /// The same wire fields standing for `error` (when the binding reads the error itself).
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) fn with_error(mut self, error: A2aError) -> Self {
        self.inner.error = error;
        self
    }

    /// The JSON-RPC error code (as sent on JSON-RPC; from the error's kind on HTTP+JSON).
    pub fn code(&self) -> i32 {
        self.inner.code
    }

    /// The HTTP status, on HTTP+JSON.
    pub fn http_status(&self) -> Option<u16> {
        self.inner.http_status
    }

    /// The error message.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The `ErrorInfo.reason` (e.g. `TASK_NOT_FOUND`), when the agent sent one.
    pub fn reason(&self) -> Option<&str> {
        self.inner.reason.as_deref()
    }

    /// The `ErrorInfo.metadata`.
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.inner.metadata
    }

    /// Every detail object, as sent.
    pub fn details(&self) -> &[Value] {
        &self.inner.details
    }

    /// The A2A error it stands for.
    pub fn error(&self) -> &A2aError {
        &self.inner.error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_error_keeps_the_wire_fields_and_converts() {
        let wire = A2aError::TaskNotFound {
            task_id: "t-9".into(),
        };
        let e = AgentError::from_wire(-32001, None, "Task not found: t-9", wire.details());
        assert_eq!(e.code(), -32001);
        assert_eq!(e.reason(), Some("TASK_NOT_FOUND"));
        assert_eq!(e.metadata()["taskId"], "t-9");
        assert_eq!(e.error(), &wire);
        let rest = AgentError::from_wire(404, Some(404), "nope", wire.details());
        assert_eq!((rest.code(), rest.http_status()), (-32001, Some(404)));
        assert_eq!(A2aError::from(ClientError::Agent(e)), wire);
        let local = ClientError::Local(A2aError::ExtensionSupportRequired {
            uris: vec!["u".into()],
        });
        assert!(local.to_string().contains("local check"), "{local}");
        assert_eq!(local.to_a2a_error().code(), -32008);
        let timeout = ClientError::Timeout {
            url: "http://x".into(),
            timeout: Duration::from_secs(1),
        };
        assert!(matches!(
            A2aError::from(timeout),
            A2aError::InvalidAgentResponse(m) if m.contains("within")
        ));
    }
}
