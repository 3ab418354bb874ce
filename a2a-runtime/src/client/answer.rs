//! Reading an agent's HTTP answer: its content type and headers, its JSON, and the error each
//! binding's answer may carry instead of a result.

use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use serde_json::Value;

use super::error::{AgentError, ClientError, snippet as cut};
use super::response::Meta;
use crate::compat::v0_3;
use crate::error::A2aError;

/// Largest JSON nesting accepted from a server.
pub(super) const MAX_DEPTH: usize = 256;

/// The HTTP binding an answer came over, which decides its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    JsonRpc,
    Rest,
}

/// A request that failed on the way: a timeout, or the transport's error.
pub(super) fn transport_error(url: &str, e: reqwest::Error, timeout: Duration) -> ClientError {
    if e.is_timeout() {
        ClientError::Timeout {
            url: url.to_owned(),
            timeout,
        }
    } else {
        ClientError::transport(url, e)
    }
}

/// A conversion of the agent's answer that failed: the answer is not what it should be.
pub(super) fn invalid_response(e: A2aError) -> ClientError {
    match e {
        A2aError::InvalidAgentResponse(m) => ClientError::InvalidResponse(m),
        other => ClientError::InvalidResponse(other.to_string()),
    }
}

/// The start of a body, for an error message.
pub(super) fn snippet(body: &[u8]) -> String {
    cut(body, 200)
}

/// The media type of an answer (lowercase, without parameters).
pub(super) fn media_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// Whether a media type is JSON.
pub(super) fn is_json(media: &str) -> bool {
    media == "application/json" || media == "application/a2a+json" || media.ends_with("+json")
}

/// The protocol version and the extensions the server reported in its headers.
pub(super) fn meta(resp: &reqwest::Response) -> Meta {
    let headers = resp.headers();
    let version = headers
        .get("a2a-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let extensions = crate::extension::parse_extensions_header(
        headers
            .get_all("a2a-extensions")
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
    .unwrap_or_else(|e| {
        tracing::warn!(error = %e, "ignoring the server's A2A-Extensions header");
        Vec::new()
    });
    Meta {
        version,
        extensions,
    }
}

/// A JSON body, or what is wrong with it.
pub(super) fn decode(body: &[u8], url: &str) -> Result<Value, ClientError> {
    crate::json::decode(body, MAX_DEPTH).map_err(|e| {
        ClientError::InvalidResponse(format!(
            "{url} answered malformed JSON ({e}): {}",
            snippet(body)
        ))
    })
}

/// An error of a v0.3 REST answer: the agent's, unless the answer is not one at all.
pub(super) fn v0_3_rest_error(status: u16, body: &Value) -> ClientError {
    match v0_3::rest::error_in(status, body) {
        A2aError::InvalidAgentResponse(m) => ClientError::InvalidResponse(m),
        error => ClientError::Agent(AgentError::from_error(error, Some(status))),
    }
}

/// A JSON-RPC `error` object as the agent's error.
pub(super) fn wire_error(err: &Value) -> ClientError {
    let code = err
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(-32603);
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("error without message");
    let details = err
        .get("data")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    ClientError::Agent(AgentError::from_wire(code, None, message, details))
}

/// The error of a REST answer that is not a success: its `error` object, or the HTTP error.
pub(super) fn rest_error(body: &[u8], status: u16, url: &str) -> ClientError {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.get("error").is_some_and(Value::is_object) => {
            rest_error_value(&v["error"], i32::from(status))
        }
        _ => ClientError::http(url, status, body),
    }
}

/// A REST `error` object (`{code, message, details}`) as the agent's error.
pub(super) fn rest_error_value(err: &Value, status: i32) -> ClientError {
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("error without message");
    let details = err
        .get("details")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let http_status = u16::try_from(status).ok();
    ClientError::Agent(AgentError::from_wire(status, http_status, message, details))
}
