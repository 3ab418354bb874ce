//! The two HTTP bindings on the client side, behind one interface: a unary call and a stream.
//!
//! Every request carries `A2A-Version: 1.0`, the configured extensions in `A2A-Extensions`,
//! the options' headers and authentication. Errors come back as [`A2aError`] from either
//! binding's error shape (the `ErrorInfo.reason` decides the kind); anything that is not the
//! shape the operation promises (HTML error pages, wrong content types, malformed JSON, a
//! truncated stream) is [`A2aError::InvalidAgentResponse`] with what was wrong.

use std::time::Duration;

use futures::StreamExt as _;
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ClientStream;
use super::options::{Auth, ClientOptions, OutgoingRequest};
use super::sse::SseDecoder;
use crate::core::{A2aRequest, Operation};
use crate::error::A2aError;
use crate::types::{AgentCard, AgentInterface, ProtocolBinding, StreamResponse, TaskState};

/// Largest JSON nesting accepted from a server.
const MAX_DEPTH: usize = 256;

/// What the server said in its headers.
#[derive(Debug, Default)]
pub(crate) struct Meta {
    pub(crate) version: Option<String>,
    pub(crate) extensions: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    JsonRpc,
    Rest,
}

#[derive(Debug)]
pub(crate) struct Transport {
    pub(crate) http: reqwest::Client,
    pub(crate) options: ClientOptions,
    pub(crate) interface: AgentInterface,
    binding: Binding,
    extensions_header: Option<String>,
    next_id: std::sync::atomic::AtomicU64,
}

pub(crate) fn http_client(options: &ClientOptions) -> Result<reqwest::Client, A2aError> {
    reqwest::Client::builder()
        .connect_timeout(options.timeout)
        .tcp_nodelay(true)
        .build()
        .map_err(|e| A2aError::Internal(format!("could not build the HTTP client: {e}")))
}

fn transport_error(url: &str, e: &reqwest::Error) -> A2aError {
    if e.is_timeout() {
        A2aError::InvalidAgentResponse(format!("no answer from {url} within the timeout"))
    } else {
        A2aError::InvalidAgentResponse(format!("request to {url} failed: {e}"))
    }
}

/// GETs a card; `None` on 304 Not Modified.
pub(crate) async fn fetch_card(
    http: &reqwest::Client,
    options: &ClientOptions,
    url: &str,
    etag: Option<&str>,
    last_modified: Option<&str>,
) -> Result<Option<(AgentCard, Option<String>, Option<String>)>, A2aError> {
    let mut req = http
        .get(url)
        .timeout(options.timeout)
        .header(ACCEPT, "application/json");
    if let Some(e) = etag {
        req = req.header(IF_NONE_MATCH, e);
    }
    if let Some(lm) = last_modified {
        req = req.header(IF_MODIFIED_SINCE, lm);
    }
    for (k, v) in &options.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let resp = req.send().await.map_err(|e| transport_error(url, &e))?;
    if resp.status() == reqwest::StatusCode::NOT_MODIFIED {
        return Ok(None);
    }
    let header = |name| {
        resp.headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let (etag, last_modified) = (header(ETAG), header(LAST_MODIFIED));
    let status = resp.status();
    let body = resp.bytes().await.map_err(|e| transport_error(url, &e))?;
    if !status.is_success() {
        return Err(A2aError::InvalidAgentResponse(format!(
            "GET {url} answered HTTP {status}: {}",
            snippet(&body)
        )));
    }
    let card: AgentCard = crate::json::decode(&body, MAX_DEPTH).map_err(|e| {
        A2aError::InvalidAgentResponse(format!("the agent card at {url} is not valid: {e}"))
    })?;
    Ok(Some((card, etag, last_modified)))
}

fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn media_type(resp: &reqwest::Response) -> String {
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

fn is_json(media: &str) -> bool {
    media == "application/json" || media == "application/a2a+json" || media.ends_with("+json")
}

fn meta(resp: &reqwest::Response) -> Meta {
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
    );
    Meta {
        version,
        extensions,
    }
}

/// Percent-encodes a query value.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The REST method, path and body of a request.
fn rest_route(req: &A2aRequest, params: &Value) -> (reqwest::Method, String, Option<Value>) {
    use reqwest::Method;
    let s = |k: &str| {
        params
            .get(k)
            .and_then(Value::as_str)
            .map(encode)
            .unwrap_or_default()
    };
    let query_from = |skip: &[&str]| -> String {
        let mut q = Vec::new();
        if let Some(obj) = params.as_object() {
            for (k, v) in obj {
                if skip.contains(&k.as_str()) || k == "tenant" {
                    continue;
                }
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => continue,
                };
                q.push(format!("{}={}", encode(k), encode(&text)));
            }
        }
        if q.is_empty() {
            String::new()
        } else {
            format!("?{}", q.join("&"))
        }
    };
    match req.operation() {
        Operation::SendMessage => (Method::POST, "/message:send".into(), Some(params.clone())),
        Operation::SendStreamingMessage => {
            (Method::POST, "/message:stream".into(), Some(params.clone()))
        }
        Operation::GetTask => (
            Method::GET,
            format!("/tasks/{}{}", s("id"), query_from(&["id"])),
            None,
        ),
        Operation::ListTasks => (Method::GET, format!("/tasks{}", query_from(&[])), None),
        Operation::CancelTask => {
            let body = params.get("metadata").map_or_else(
                || serde_json::json!({}),
                |m| serde_json::json!({"metadata": m}),
            );
            (
                Method::POST,
                format!("/tasks/{}:cancel", s("id")),
                Some(body),
            )
        }
        Operation::SubscribeToTask => (
            Method::POST,
            format!("/tasks/{}:subscribe", s("id")),
            Some(serde_json::json!({})),
        ),
        Operation::CreateTaskPushNotificationConfig => (
            Method::POST,
            format!("/tasks/{}/pushNotificationConfigs", s("taskId")),
            Some(params.clone()),
        ),
        Operation::GetTaskPushNotificationConfig => (
            Method::GET,
            format!("/tasks/{}/pushNotificationConfigs/{}", s("taskId"), s("id")),
            None,
        ),
        Operation::ListTaskPushNotificationConfigs => (
            Method::GET,
            format!(
                "/tasks/{}/pushNotificationConfigs{}",
                s("taskId"),
                query_from(&["taskId"])
            ),
            None,
        ),
        Operation::DeleteTaskPushNotificationConfig => (
            Method::DELETE,
            format!("/tasks/{}/pushNotificationConfigs/{}", s("taskId"), s("id")),
            None,
        ),
        Operation::GetExtendedAgentCard => (Method::GET, "/extendedAgentCard".into(), None),
    }
}

impl Transport {
    pub(crate) fn new(
        http: reqwest::Client,
        options: ClientOptions,
        interface: AgentInterface,
        uris: Vec<&'static str>,
    ) -> Self {
        let binding = if interface.protocol_binding == ProtocolBinding::HttpJson {
            Binding::Rest
        } else {
            Binding::JsonRpc
        };
        let extensions_header = (!uris.is_empty()).then(|| uris.join(","));
        Self {
            http,
            options,
            interface,
            binding,
            extensions_header,
            next_id: std::sync::atomic::AtomicU64::new(1),
        }
    }

    /// Builds the HTTP request for `req`.
    fn build(
        &self,
        req: &A2aRequest,
        headers: &[(String, String)],
        timeout: Option<Duration>,
        streaming: bool,
    ) -> Result<(reqwest::RequestBuilder, String, u64), A2aError> {
        let params = req
            .to_params()
            .map_err(|e| A2aError::Internal(format!("could not encode the request: {e}")))?;
        let (m, path, body) = rest_route(req, &params);
        let target = Target {
            method: req.operation().method(),
            params,
            rest: (m, path, body),
            extra_extension: None,
        };
        self.build_target(target, headers, timeout, streaming)
    }

    fn build_target(
        &self,
        target: Target,
        headers: &[(String, String)],
        timeout: Option<Duration>,
        streaming: bool,
    ) -> Result<(reqwest::RequestBuilder, String, u64), A2aError> {
        let Target {
            method: method_name,
            params,
            rest,
            extra_extension,
        } = target;
        let base = self.interface.url.trim_end_matches('/');
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (method, url, body, content_type) = match self.binding {
            Binding::JsonRpc => {
                let envelope = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method_name, "params": params});
                (
                    reqwest::Method::POST,
                    self.interface.url.clone(),
                    Some(envelope),
                    "application/json",
                )
            }
            Binding::Rest => {
                let (m, path, body) = rest;
                let tenant = if self.interface.tenant.is_empty() {
                    String::new()
                } else {
                    format!("/{}", encode(&self.interface.tenant))
                };
                (
                    m,
                    format!("{base}{tenant}{path}"),
                    body,
                    "application/a2a+json",
                )
            }
        };
        let extensions_header = match (&self.extensions_header, extra_extension) {
            (Some(h), Some(x)) if !h.split(',').any(|u| u == x) => Some(format!("{h},{x}")),
            (None, Some(x)) => Some(x.to_owned()),
            (h, _) => h.clone(),
        };
        let mut outgoing = OutgoingRequest {
            method: method_name,
            url: url.clone(),
            headers: Vec::new(),
        };
        outgoing
            .headers
            .extend(self.options.headers.iter().cloned());
        outgoing.headers.extend(headers.iter().cloned());
        match &self.options.auth {
            Some(Auth::Bearer(token)) => outgoing
                .headers
                .push(("authorization".into(), format!("Bearer {token}"))),
            Some(Auth::ApiKey { header, value }) => {
                outgoing.headers.push((header.clone(), value.clone()))
            }
            Some(Auth::Interceptor(i)) => i.intercept(&mut outgoing)?,
            None => {}
        }
        let mut rb = self
            .http
            .request(method, &outgoing.url)
            .header("a2a-version", crate::PROTOCOL_VERSION)
            .header(
                ACCEPT,
                if streaming {
                    "text/event-stream"
                } else {
                    "application/json, application/a2a+json"
                },
            );
        if !streaming {
            rb = rb.timeout(timeout.unwrap_or(self.options.timeout));
        }
        if let Some(ext) = &extensions_header {
            rb = rb.header("a2a-extensions", ext.as_str());
        }
        for (k, v) in &outgoing.headers {
            rb = rb.header(k.as_str(), v.as_str());
        }
        if let Some(body) = body {
            let bytes = serde_json::to_vec(&body).map_err(|e| A2aError::Internal(e.to_string()))?;
            rb = rb.header(CONTENT_TYPE, content_type).body(bytes);
        }
        Ok((rb, outgoing.url, id))
    }

    async fn send(
        &self,
        rb: reqwest::RequestBuilder,
        url: &str,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, A2aError> {
        let limit = timeout.unwrap_or(self.options.timeout);
        match tokio::time::timeout(limit, rb.send()).await {
            Err(_) => Err(A2aError::InvalidAgentResponse(format!(
                "no answer from {url} within {limit:?}"
            ))),
            Ok(r) => r.map_err(|e| transport_error(url, &e)),
        }
    }

    /// A unary call: the decoded result and the response headers.
    pub(crate) async fn unary<T: DeserializeOwned>(
        &self,
        req: &A2aRequest,
        headers: &[(String, String)],
        timeout: Option<Duration>,
    ) -> Result<(T, Meta), A2aError> {
        let (rb, url, _) = self.build(req, headers, timeout, false)?;
        let resp = self.send(rb, &url, timeout).await?;
        let (value, meta) = self.read_result(resp, &url).await?;
        // Delete returns Empty: `{}` or (from some SDKs) `null`.
        let value = if value.is_null() {
            Value::Object(Default::default())
        } else {
            value
        };
        let typed = crate::json::from_value(value).map_err(|e| {
            A2aError::InvalidAgentResponse(format!(
                "the result of {} does not fit: {e}",
                req.operation()
            ))
        })?;
        Ok((typed, meta))
    }

    /// Calls an extension method (POST on both bindings), activating its extension.
    pub(crate) async fn call_method(
        &self,
        method: &'static str,
        rest_path: &'static str,
        extension: &'static str,
        params: Value,
    ) -> Result<(Value, Meta), A2aError> {
        let rest = (
            reqwest::Method::POST,
            rest_path.to_owned(),
            Some(params.clone()),
        );
        let target = Target {
            method,
            params,
            rest,
            extra_extension: Some(extension),
        };
        let (rb, url, _) = self.build_target(target, &[], None, false)?;
        let resp = self.send(rb, &url, None).await?;
        self.read_result(resp, &url).await
    }

    /// The JSON result of a unary answer (the JSON-RPC `result`, or the REST body), or the
    /// error it carries, with the response headers.
    async fn read_result(
        &self,
        resp: reqwest::Response,
        url: &str,
    ) -> Result<(Value, Meta), A2aError> {
        let meta = meta(&resp);
        let status = resp.status();
        let media = media_type(&resp);
        let body = resp.bytes().await.map_err(|e| transport_error(url, &e))?;
        if !(is_json(&media) || body.is_empty() && status.is_success()) {
            return Err(A2aError::InvalidAgentResponse(format!(
                "{url} answered HTTP {status} with content type {media:?}, not JSON: {}",
                snippet(&body)
            )));
        }
        let value = match self.binding {
            Binding::JsonRpc => {
                let envelope: Value = decode(&body, url)?;
                if let Some(err) = envelope.get("error") {
                    return Err(wire_error(err));
                }
                match envelope.get("result") {
                    Some(result) => result.clone(),
                    None => {
                        return Err(A2aError::InvalidAgentResponse(format!(
                            "{url}: JSON-RPC response without result or error"
                        )));
                    }
                }
            }
            Binding::Rest if !status.is_success() => {
                return Err(rest_error(&body, status.as_u16(), url));
            }
            Binding::Rest if body.is_empty() => Value::Object(Default::default()),
            Binding::Rest => decode(&body, url)?,
        };
        Ok((value, meta))
    }

    /// A streaming call: the events (decoded lazily) and the response headers.
    pub(crate) async fn stream(
        &self,
        req: &A2aRequest,
        headers: &[(String, String)],
        timeout: Option<Duration>,
    ) -> Result<(ClientStream, Meta), A2aError> {
        let (rb, url, _) = self.build(req, headers, timeout, true)?;
        let mut resp = self.send(rb, &url, timeout).await?;
        if self.binding == Binding::Rest
            && resp.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED
            && req.operation() == Operation::SubscribeToTask
        {
            // The proto binds subscribe to GET; some servers accept only that.
            let mut rb = self
                .http
                .get(&url)
                .header("a2a-version", crate::PROTOCOL_VERSION)
                .header(ACCEPT, "text/event-stream");
            if let Some(ext) = &self.extensions_header {
                rb = rb.header("a2a-extensions", ext.as_str());
            }
            for (k, v) in self.options.headers.iter().chain(headers) {
                rb = rb.header(k.as_str(), v.as_str());
            }
            resp = self.send(rb, &url, timeout).await?;
        }
        let meta = meta(&resp);
        let status = resp.status();
        let media = media_type(&resp);
        if media != "text/event-stream" {
            // A stream request carries no reqwest timeout: bound this body read here.
            let limit = timeout.unwrap_or(self.options.timeout);
            let body = match tokio::time::timeout(limit, resp.bytes()).await {
                Err(_) => {
                    return Err(A2aError::InvalidAgentResponse(format!(
                        "the {status} answer from {url} did not complete within {limit:?}"
                    )));
                }
                Ok(body) => body.map_err(|e| transport_error(&url, &e))?,
            };
            if is_json(&media)
                && let Ok(v) = serde_json::from_slice::<Value>(&body)
                && let Some(err) = v.get("error")
            {
                return Err(match self.binding {
                    Binding::JsonRpc => wire_error(err),
                    Binding::Rest => rest_error(&body, status.as_u16(), &url),
                });
            }
            return Err(A2aError::InvalidAgentResponse(format!(
                "{url} answered HTTP {status} with content type {media:?} instead of an event stream: {}",
                snippet(&body)
            )));
        }
        let binding = self.binding;
        let idle = self.options.stream_idle_timeout;
        let bytes = resp.bytes_stream();
        let state = StreamState {
            bytes: Box::pin(bytes),
            decoder: SseDecoder::new(),
            pending: Default::default(),
            done: false,
            finished: false,
            url,
            idle,
        };
        let stream = futures::stream::unfold(state, move |mut s| async move {
            loop {
                if s.done {
                    return None;
                }
                if let Some(ev) = s.pending.pop_front() {
                    let item = decode_event(binding, &ev);
                    match &item {
                        Ok(e) => s.finished = is_final(e),
                        Err(_) => s.done = true,
                    }
                    return Some((item, s));
                }
                match tokio::time::timeout(s.idle, s.bytes.next()).await {
                    Err(_) => {
                        s.done = true;
                        let msg = format!("the stream from {} was silent for {:?}", s.url, s.idle);
                        return Some((Err(A2aError::InvalidAgentResponse(msg)), s));
                    }
                    Ok(Some(Ok(chunk))) => {
                        let events = s.decoder.feed(&chunk);
                        s.pending.extend(events);
                    }
                    Ok(Some(Err(e))) => {
                        s.done = true;
                        return Some((Err(transport_error(&s.url, &e)), s));
                    }
                    Ok(None) => {
                        s.done = true;
                        if s.decoder.has_partial() {
                            let msg = format!(
                                "the stream from {} ended in the middle of an event",
                                s.url
                            );
                            return Some((Err(A2aError::InvalidAgentResponse(msg)), s));
                        }
                        if !s.finished {
                            let msg = format!(
                                "the stream from {} ended before the task reached a final or interrupted state",
                                s.url
                            );
                            return Some((Err(A2aError::InvalidAgentResponse(msg)), s));
                        }
                        return None;
                    }
                }
            }
        });
        Ok((Box::pin(stream), meta))
    }
}

/// What to call: a method name with its params, and its REST route.
struct Target {
    method: &'static str,
    params: Value,
    rest: (reqwest::Method, String, Option<Value>),
    /// An extension to activate for this call on top of the configured ones.
    extra_extension: Option<&'static str>,
}

struct StreamState {
    bytes:
        std::pin::Pin<Box<dyn futures::Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send>>,
    decoder: SseDecoder,
    pending: std::collections::VecDeque<super::sse::SseEvent>,
    done: bool,
    finished: bool,
    url: String,
    idle: Duration,
}

/// Is this event one after which a server may close the stream?
fn is_final(e: &StreamResponse) -> bool {
    let final_state = |s: TaskState| s.is_terminal() || s.is_interrupted();
    match e {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => final_state(t.status.state),
        StreamResponse::StatusUpdate(u) => final_state(u.status.state),
        StreamResponse::ArtifactUpdate(_) => false,
    }
}

fn decode_event(binding: Binding, ev: &super::sse::SseEvent) -> Result<StreamResponse, A2aError> {
    let value: Value = serde_json::from_str(&ev.data).map_err(|e| {
        A2aError::InvalidAgentResponse(format!(
            "a stream event is not JSON ({e}): {}",
            snippet(ev.data.as_bytes())
        ))
    })?;
    let payload = match binding {
        Binding::JsonRpc => {
            if let Some(err) = value.get("error") {
                return Err(wire_error(err));
            }
            value.get("result").cloned().ok_or_else(|| {
                A2aError::InvalidAgentResponse("a stream event without result or error".into())
            })?
        }
        Binding::Rest => {
            if ev.event == "error" || value.get("error").is_some() {
                let err = value.get("error").cloned().unwrap_or(Value::Null);
                let code = err
                    .get("code")
                    .and_then(Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok())
                    .unwrap_or(500);
                return Err(rest_error_value(&err, code));
            }
            value
        }
    };
    crate::json::from_value(payload).map_err(|e| {
        A2aError::InvalidAgentResponse(format!("a stream event does not fit StreamResponse: {e}"))
    })
}

fn decode(body: &[u8], url: &str) -> Result<Value, A2aError> {
    crate::json::decode(body, MAX_DEPTH).map_err(|e| {
        A2aError::InvalidAgentResponse(format!(
            "{url} answered malformed JSON ({e}): {}",
            snippet(body)
        ))
    })
}

/// A JSON-RPC `error` object as an [`A2aError`].
fn wire_error(err: &Value) -> A2aError {
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
    A2aError::from_wire(code, message, &details)
}

fn rest_error(body: &[u8], status: u16, url: &str) -> A2aError {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.get("error").is_some() => rest_error_value(&v["error"], i32::from(status)),
        _ => A2aError::InvalidAgentResponse(format!(
            "{url} answered HTTP {status}: {}",
            snippet(body)
        )),
    }
}

fn rest_error_value(err: &Value, status: i32) -> A2aError {
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("error without message");
    let details = err
        .get("details")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    A2aError::from_wire(status, message, &details)
}
