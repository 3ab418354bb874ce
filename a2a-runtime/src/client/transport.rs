//! The two HTTP bindings on the client side, behind one interface: a unary call and a stream.
//!
//! Every request carries `A2A-Version: 1.0`, the configured extensions in `A2A-Extensions`,
//! the options' headers and authentication. An agent's error comes back as
//! [`ClientError::Agent`] from either binding's error shape (the `ErrorInfo.reason` decides the
//! kind); an HTTP error without one is [`ClientError::Http`]; anything else that is not the
//! shape the operation promises (HTML pages, wrong content types, malformed JSON, a truncated
//! stream) is [`ClientError::InvalidResponse`] with what was wrong.

use std::time::Duration;

use futures::StreamExt as _;
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ClientStream;
use super::error::{AgentError, ClientError, snippet as cut};
use super::options::{Auth, ClientOptions, OutgoingRequest};
use super::sse::SseDecoder;
use crate::compat::v0_3;
use crate::error::A2aError;
use crate::protocol::{A2aRequest, Operation};
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

/// Whether an interface serves protocol v0.3.
pub(crate) fn is_v0_3(interface: &AgentInterface) -> bool {
    interface.protocol_version == "0.3" || interface.protocol_version.starts_with("0.3.")
}

#[derive(Debug)]
pub(crate) struct Transport {
    pub(crate) http: reqwest::Client,
    pub(crate) options: ClientOptions,
    pub(crate) interface: AgentInterface,
    binding: Binding,
    /// The interface speaks v0.3: requests and results are translated.
    v0_3: bool,
    extensions_header: Option<String>,
    next_id: std::sync::atomic::AtomicU64,
    /// The gRPC transport, when the interface is a GRPC one.
    #[cfg(feature = "grpc")]
    grpc: Option<super::grpc::GrpcTransport>,
}

pub(crate) fn http_client(options: &ClientOptions) -> Result<reqwest::Client, ClientError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(options.timeout)
        .tcp_nodelay(true);
    if let Some(tls) = &options.tls {
        let bad = |what: &str, e: reqwest::Error| {
            ClientError::Local(A2aError::Internal(format!("client TLS: {what}: {e}")))
        };
        if let Some(pem) = &tls.root_ca_pem {
            let roots = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| bad("the root CA bundle is not valid PEM", e))?;
            if roots.is_empty() {
                return Err(ClientError::Local(A2aError::Internal(
                    "client TLS: the root CA bundle holds no certificate".into(),
                )));
            }
            builder = builder.tls_certs_only(roots);
        }
        if let Some((cert, key)) = &tls.identity {
            let mut pem = cert.clone();
            pem.push(b'\n');
            pem.extend_from_slice(key);
            let identity = reqwest::Identity::from_pem(&pem)
                .map_err(|e| bad("the client certificate and key are not usable", e))?;
            builder = builder.identity(identity);
        }
    }
    builder.build().map_err(|e| {
        ClientError::Local(A2aError::Internal(format!(
            "could not build the HTTP client: {e}"
        )))
    })
}

fn transport_error(url: &str, e: reqwest::Error, timeout: Duration) -> ClientError {
    if e.is_timeout() {
        ClientError::Timeout {
            url: url.to_owned(),
            timeout,
        }
    } else {
        ClientError::transport(url, e)
    }
}

/// GETs a card; `None` on 304 Not Modified.
pub(crate) async fn fetch_card(
    http: &reqwest::Client,
    options: &ClientOptions,
    url: &str,
    etag: Option<&str>,
    last_modified: Option<&str>,
) -> Result<Option<(AgentCard, Option<String>, Option<String>)>, ClientError> {
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
    let resp = req
        .send()
        .await
        .map_err(|e| transport_error(url, e, options.timeout))?;
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
    let body = resp
        .bytes()
        .await
        .map_err(|e| transport_error(url, e, options.timeout))?;
    if !status.is_success() {
        return Err(ClientError::http(url, status.as_u16(), &body));
    }
    let invalid = |e: A2aError| {
        ClientError::InvalidResponse(format!("the agent card at {url} is not valid: {e}"))
    };
    // A v0.3 card (no `supportedInterfaces`) is read as v1.0's, its interfaces at version 0.3.
    let value: Value = crate::json::decode(&body, MAX_DEPTH).map_err(invalid)?;
    let card: AgentCard =
        crate::json::from_value(v0_3::convert::card_in(value)).map_err(invalid)?;
    Ok(Some((card, etag, last_modified)))
}

/// A conversion of the agent's answer that failed: the answer is not what it should be.
fn invalid_response(e: A2aError) -> ClientError {
    match e {
        A2aError::InvalidAgentResponse(m) => ClientError::InvalidResponse(m),
        other => ClientError::InvalidResponse(other.to_string()),
    }
}

fn snippet(body: &[u8]) -> String {
    cut(body, 200)
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

/// The REST method, path and body of a request.
fn rest_route(req: &A2aRequest, params: &Value) -> (reqwest::Method, String, Option<Value>) {
    use reqwest::Method;
    let s = |k: &str| {
        params
            .get(k)
            .and_then(Value::as_str)
            .map(crate::protocol::uri::encode_component)
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
                q.push(format!(
                    "{}={}",
                    crate::protocol::uri::encode_component(k),
                    crate::protocol::uri::encode_component(&text)
                ));
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
        uris: &[String],
    ) -> Result<Self, ClientError> {
        #[cfg(feature = "grpc")]
        let grpc = if interface.protocol_binding == ProtocolBinding::Grpc {
            Some(super::grpc::GrpcTransport::new(&interface.url, &options)?)
        } else {
            None
        };
        let binding = if interface.protocol_binding == ProtocolBinding::HttpJson {
            Binding::Rest
        } else {
            Binding::JsonRpc
        };
        let extensions_header =
            (!uris.is_empty()).then(|| crate::extension::format_extensions_header(uris));
        let v0_3 = is_v0_3(&interface);
        Ok(Self {
            http,
            options,
            interface,
            binding,
            v0_3,
            extensions_header,
            next_id: std::sync::atomic::AtomicU64::new(1),
            #[cfg(feature = "grpc")]
            grpc,
        })
    }

    /// Builds the HTTP request for `req`.
    fn build(
        &self,
        req: &A2aRequest,
        headers: &[(String, String)],
        timeout: Option<Duration>,
        streaming: bool,
    ) -> Result<(reqwest::RequestBuilder, String, u64), ClientError> {
        let params = req.to_params().map_err(|e| {
            ClientError::Local(A2aError::Internal(format!(
                "could not encode the request: {e}"
            )))
        })?;
        let op = req.operation();
        let v0_3_rest = self.v0_3 && self.binding == Binding::Rest;
        let rest =
            v0_3_rest_route(v0_3_rest, op, &params).unwrap_or_else(|| rest_route(req, &params));
        let (method, params) = if self.v0_3 {
            let Some(method) = v0_3::method(op) else {
                return Err(ClientError::Local(A2aError::UnsupportedOperation(format!(
                    "{op} does not exist in protocol v0.3, which this agent speaks"
                ))));
            };
            (method, v0_3::convert::params_out(op, params))
        } else {
            (op.method(), params)
        };
        let target = Target {
            method,
            params,
            rest,
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
    ) -> Result<(reqwest::RequestBuilder, String, u64), ClientError> {
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
                    format!(
                        "/{}",
                        crate::protocol::uri::encode_component(&self.interface.tenant)
                    )
                };
                // v0.3 servers read `application/json` bodies only.
                let media = if self.v0_3 {
                    "application/json"
                } else {
                    "application/a2a+json"
                };
                (m, format!("{base}{tenant}{path}"), body, media)
            }
        };
        let extensions_header = match (&self.extensions_header, extra_extension) {
            (Some(h), Some(x))
                if !crate::extension::parse_extensions_header([h.as_str()])
                    .is_ok_and(|uris| uris.iter().any(|u| u == x)) =>
            {
                Some(crate::extension::format_extensions_header([h.as_str(), x]))
            }
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
            Some(Auth::Interceptor(i)) => i.intercept(&mut outgoing).map_err(ClientError::Local)?,
            None => {}
        }
        let version = if self.v0_3 {
            "0.3"
        } else {
            crate::PROTOCOL_VERSION
        };
        let mut rb = self
            .http
            .request(method, &outgoing.url)
            .header("a2a-version", version)
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
            if self.v0_3 {
                rb = rb.header("x-a2a-extensions", ext.as_str());
            }
        }
        for (k, v) in &outgoing.headers {
            rb = rb.header(k.as_str(), v.as_str());
        }
        // The trace of the request being served, when this call is made while serving one.
        for (k, v) in crate::core::trace_headers() {
            rb = rb.header(k, v);
        }
        if let Some(body) = body {
            let bytes = serde_json::to_vec(&body)
                .map_err(|e| ClientError::Local(A2aError::Internal(e.to_string())))?;
            rb = rb.header(CONTENT_TYPE, content_type).body(bytes);
        }
        Ok((rb, outgoing.url, id))
    }

    async fn send(
        &self,
        rb: reqwest::RequestBuilder,
        url: &str,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, ClientError> {
        let limit = timeout.unwrap_or(self.options.timeout);
        match tokio::time::timeout(limit, rb.send()).await {
            Err(_) => Err(ClientError::Timeout {
                url: url.to_owned(),
                timeout: limit,
            }),
            Ok(r) => r.map_err(|e| transport_error(url, e, limit)),
        }
    }

    /// A unary call: the decoded result and the response headers.
    pub(crate) async fn unary<T: DeserializeOwned + 'static>(
        &self,
        req: &A2aRequest,
        headers: &[(String, String)],
        timeout: Option<Duration>,
    ) -> Result<(T, Meta), ClientError> {
        #[cfg(feature = "grpc")]
        if let Some(grpc) = &self.grpc {
            let ext = self.extensions_header.as_deref();
            let (response, meta) = grpc
                .unary(req, &self.options, ext, headers, timeout)
                .await?;
            return Ok((super::grpc::typed(response, req.operation())?, meta));
        }
        let (rb, url, _) = self.build(req, headers, timeout, false)?;
        let resp = self.send(rb, &url, timeout).await?;
        let limit = timeout.unwrap_or(self.options.timeout);
        let (value, meta) = self.read_result(resp, &url, limit).await?;
        let value = match (self.v0_3, self.binding) {
            (false, _) => value,
            (true, Binding::JsonRpc) => {
                v0_3::convert::result_in(req.operation(), value).map_err(invalid_response)?
            }
            (true, Binding::Rest) => {
                v0_3::rest::result_in(req.operation(), value).map_err(invalid_response)?
            }
        };
        // Delete returns Empty: `{}` or (from some SDKs) `null`.
        let value = if value.is_null() {
            Value::Object(Default::default())
        } else {
            value
        };
        let typed = crate::json::from_value(value).map_err(|e| {
            ClientError::InvalidResponse(format!(
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
        headers: &[(String, String)],
        timeout: Option<Duration>,
    ) -> Result<(Value, Meta), ClientError> {
        #[cfg(feature = "grpc")]
        if self.grpc.is_some() {
            return Err(ClientError::Local(A2aError::UnsupportedOperation(format!(
                "extension method {method} has no gRPC form; connect over JSONRPC or HTTP+JSON"
            ))));
        }
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
        let (rb, url, _) = self.build_target(target, headers, timeout, false)?;
        let resp = self.send(rb, &url, timeout).await?;
        let limit = timeout.unwrap_or(self.options.timeout);
        self.read_result(resp, &url, limit).await
    }

    /// The JSON result of a unary answer (the JSON-RPC `result`, or the REST body), or the
    /// error it carries, with the response headers.
    async fn read_result(
        &self,
        resp: reqwest::Response,
        url: &str,
        timeout: Duration,
    ) -> Result<(Value, Meta), ClientError> {
        let meta = meta(&resp);
        let status = resp.status();
        let media = media_type(&resp);
        let body = resp
            .bytes()
            .await
            .map_err(|e| transport_error(url, e, timeout))?;
        if !status.is_success() && !is_json(&media) {
            return Err(ClientError::http(url, status.as_u16(), &body));
        }
        if !(is_json(&media) || body.is_empty() && status.is_success()) {
            return Err(ClientError::InvalidResponse(format!(
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
                    // The SDK's v0.3 servers leave out a `null` result (delete).
                    None if self.v0_3 => Value::Null,
                    None => {
                        return Err(ClientError::InvalidResponse(format!(
                            "{url}: JSON-RPC response without result or error"
                        )));
                    }
                }
            }
            Binding::Rest if !status.is_success() && self.v0_3 => {
                let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                return Err(v0_3_rest_error(status.as_u16(), &value));
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
    ) -> Result<(ClientStream, Meta), ClientError> {
        #[cfg(feature = "grpc")]
        if let Some(grpc) = &self.grpc {
            let ext = self.extensions_header.as_deref();
            return grpc.stream(req, &self.options, ext, headers, timeout).await;
        }
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
                    return Err(ClientError::Timeout {
                        url,
                        timeout: limit,
                    });
                }
                Ok(body) => body.map_err(|e| transport_error(&url, e, limit))?,
            };
            if is_json(&media)
                && self.v0_3
                && self.binding == Binding::Rest
                && let Ok(v) = serde_json::from_slice::<Value>(&body)
            {
                return Err(v0_3_rest_error(status.as_u16(), &v));
            }
            if is_json(&media)
                && let Ok(v) = serde_json::from_slice::<Value>(&body)
                && let Some(err) = v.get("error")
            {
                return Err(match self.binding {
                    Binding::JsonRpc => wire_error(err),
                    Binding::Rest => rest_error(&body, status.as_u16(), &url),
                });
            }
            if !status.is_success() {
                return Err(ClientError::http(&url, status.as_u16(), &body));
            }
            return Err(ClientError::InvalidResponse(format!(
                "{url} answered HTTP {status} with content type {media:?} instead of an event stream: {}",
                snippet(&body)
            )));
        }
        let binding = self.binding;
        let v03 = self.v0_3;
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
                    let item = decode_event(binding, v03, &ev);
                    match &item {
                        Ok(e) => s.finished = is_final(e),
                        Err(_) => s.done = true,
                    }
                    return Some((item, s));
                }
                match tokio::time::timeout(s.idle, s.bytes.next()).await {
                    Err(_) => {
                        s.done = true;
                        let err = ClientError::Timeout {
                            url: s.url.clone(),
                            timeout: s.idle,
                        };
                        return Some((Err(err), s));
                    }
                    Ok(Some(Ok(chunk))) => {
                        let events = s.decoder.feed(&chunk);
                        s.pending.extend(events);
                    }
                    Ok(Some(Err(e))) => {
                        s.done = true;
                        let err = transport_error(&s.url, e, s.idle);
                        return Some((Err(err), s));
                    }
                    Ok(None) => {
                        s.done = true;
                        if s.decoder.has_partial() {
                            let msg = format!(
                                "the stream from {} ended in the middle of an event",
                                s.url
                            );
                            return Some((Err(ClientError::InvalidResponse(msg)), s));
                        }
                        if !s.finished {
                            let msg = format!(
                                "the stream from {} ended before the task reached a final or interrupted state",
                                s.url
                            );
                            return Some((Err(ClientError::InvalidResponse(msg)), s));
                        }
                        return None;
                    }
                }
            }
        });
        Ok((Box::pin(stream), meta))
    }
}

/// The route of `op` on v0.3's REST binding, when `v0_3_rest` (a v0.3 HTTP+JSON interface).
fn v0_3_rest_route(
    v0_3_rest: bool,
    op: Operation,
    params: &Value,
) -> Option<(reqwest::Method, String, Option<Value>)> {
    if !v0_3_rest {
        return None;
    }
    let r = v0_3::rest::request_out(op, params.clone())?;
    let method = match r.method {
        "GET" => reqwest::Method::GET,
        "DELETE" => reqwest::Method::DELETE,
        _ => reqwest::Method::POST,
    };
    Some((method, r.path, r.body))
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
pub(crate) fn is_final(e: &StreamResponse) -> bool {
    let final_state = |s: TaskState| s.is_terminal() || s.is_interrupted();
    match e {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => final_state(t.status.state),
        StreamResponse::StatusUpdate(u) => final_state(u.status.state),
        StreamResponse::ArtifactUpdate(_) => false,
    }
}

fn decode_event(
    binding: Binding,
    v03: bool,
    ev: &super::sse::SseEvent,
) -> Result<StreamResponse, ClientError> {
    let value: Value = serde_json::from_str(&ev.data).map_err(|e| {
        ClientError::InvalidResponse(format!(
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
                ClientError::InvalidResponse("a stream event without result or error".into())
            })?
        }
        Binding::Rest if v03 => {
            if ev.event == "error" {
                return Err(v0_3_rest_error(500, &value));
            }
            let event = v0_3::rest::event_in(value).map_err(invalid_response)?;
            return crate::json::from_value(event).map_err(|e| {
                ClientError::InvalidResponse(format!(
                    "a stream event does not fit StreamResponse: {e}"
                ))
            });
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
    let payload = if v03 {
        v0_3::convert::event_in(payload).map_err(invalid_response)?
    } else {
        payload
    };
    crate::json::from_value(payload).map_err(|e| {
        ClientError::InvalidResponse(format!("a stream event does not fit StreamResponse: {e}"))
    })
}

fn decode(body: &[u8], url: &str) -> Result<Value, ClientError> {
    crate::json::decode(body, MAX_DEPTH).map_err(|e| {
        ClientError::InvalidResponse(format!(
            "{url} answered malformed JSON ({e}): {}",
            snippet(body)
        ))
    })
}

/// A JSON-RPC `error` object as the agent's error.
/// An error of a v0.3 REST answer: the agent's, unless the answer is not one at all.
fn v0_3_rest_error(status: u16, body: &Value) -> ClientError {
    match v0_3::rest::error_in(status, body) {
        A2aError::InvalidAgentResponse(m) => ClientError::InvalidResponse(m),
        error => ClientError::Agent(AgentError::from_error(error, Some(status))),
    }
}

fn wire_error(err: &Value) -> ClientError {
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

fn rest_error(body: &[u8], status: u16, url: &str) -> ClientError {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.get("error").is_some_and(Value::is_object) => {
            rest_error_value(&v["error"], i32::from(status))
        }
        _ => ClientError::http(url, status, body),
    }
}

fn rest_error_value(err: &Value, status: i32) -> ClientError {
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
