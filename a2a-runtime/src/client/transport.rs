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
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::answer::{
    Binding, decode, invalid_response, is_json, media_type, meta, rest_error, snippet,
    transport_error, v0_3_rest_error, wire_error,
};
use super::error::ClientError;
use super::events::sse_events;
use super::options::{Auth, CallOptions, ClientOptions, OutgoingRequest};
use super::response::Meta;
use super::route::{Target, rest_route, v0_3_rest_route};
use super::stream::Source;
use crate::compat::v0_3;
use crate::error::A2aError;
use crate::protocol::{A2aRequest, Operation};
use crate::types::{AgentInterface, ProtocolBinding};

/// Whether an interface serves protocol v0.3.
pub(crate) fn is_v0_3(interface: &AgentInterface) -> bool {
    interface.protocol_version == "0.3" || interface.protocol_version.starts_with("0.3.")
}

/// The calls to one of the agent's interfaces: its binding and protocol version, and the client
/// (HTTP, or gRPC) that makes them.
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
        call: &CallOptions,
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
        self.build_target(target, call, streaming)
    }

    /// The `A2A-Extensions` value of a call: the client's URIs, then `extra` (each once).
    pub(crate) fn extensions_for<'a>(
        &'a self,
        extra: impl IntoIterator<Item = &'a str>,
    ) -> Option<String> {
        let mut uris: Vec<&str> = match &self.extensions_header {
            Some(h) => h
                .split(',')
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .collect(),
            None => Vec::new(),
        };
        for uri in extra {
            if !uri.is_empty() && !uris.contains(&uri) {
                uris.push(uri);
            }
        }
        (!uris.is_empty()).then(|| crate::extension::format_extensions_header(uris))
    }

    fn build_target(
        &self,
        target: Target,
        call: &CallOptions,
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
        let extensions_header = self.extensions_for(
            call.extensions
                .iter()
                .map(String::as_str)
                .chain(extra_extension),
        );
        let mut outgoing = OutgoingRequest {
            method: method_name,
            url: url.clone(),
            headers: Vec::new(),
        };
        outgoing
            .headers
            .extend(self.options.headers.iter().cloned());
        outgoing.headers.extend(call.headers.iter().cloned());
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
            rb = rb.timeout(call.timeout.unwrap_or(self.options.timeout));
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
        for (k, v) in crate::protocol::trace_headers() {
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
        call: &CallOptions,
    ) -> Result<(T, Meta), ClientError> {
        #[cfg(feature = "grpc")]
        if let Some(grpc) = &self.grpc {
            let ext = self.extensions_for(call.extensions.iter().map(String::as_str));
            let (response, meta) = grpc.unary(req, &self.options, ext.as_deref(), call).await?;
            return Ok((super::grpc::typed(response, req.operation())?, meta));
        }
        let timeout = call.timeout;
        let (rb, url, _) = self.build(req, call, false)?;
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
        call: &CallOptions,
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
        let (rb, url, _) = self.build_target(target, call, false)?;
        let resp = self.send(rb, &url, call.timeout).await?;
        let limit = call.timeout.unwrap_or(self.options.timeout);
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
        let body = read_body(resp, url, self.options.limits.max_response_bytes, timeout).await?;
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

    /// A streaming call: the events (decoded lazily, with their ids) and the response headers.
    pub(crate) async fn stream(
        &self,
        req: &A2aRequest,
        call: &CallOptions,
    ) -> Result<(Source, Meta), ClientError> {
        #[cfg(feature = "grpc")]
        if let Some(grpc) = &self.grpc {
            let ext = self.extensions_for(call.extensions.iter().map(String::as_str));
            return grpc.stream(req, &self.options, ext.as_deref(), call).await;
        }
        let timeout = call.timeout;
        let headers = &call.headers;
        let (rb, url, _) = self.build(req, call, true)?;
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
            if let Some(ext) = self.extensions_for(call.extensions.iter().map(String::as_str)) {
                rb = rb.header("a2a-extensions", ext);
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
            let max = self.options.limits.max_response_bytes;
            let body = match tokio::time::timeout(limit, read_body(resp, &url, max, limit)).await {
                Err(_) => {
                    return Err(ClientError::Timeout {
                        url,
                        timeout: limit,
                    });
                }
                Ok(body) => body?,
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
        let events = sse_events(
            Box::pin(resp.bytes_stream()),
            self.binding,
            self.v0_3,
            url,
            self.options.stream_idle_timeout,
            self.options.limits,
        );
        Ok((events, meta))
    }
}

/// The body of an answer, refused past `max` bytes ([`ClientError::TooLarge`]) without
/// reading further.
pub(crate) async fn read_body(
    resp: reqwest::Response,
    url: &str,
    max: usize,
    timeout: Duration,
) -> Result<bytes::Bytes, ClientError> {
    let too_large = || ClientError::too_large(url, "a response body", max);
    if resp
        .content_length()
        .is_some_and(|n| usize::try_from(n).map_or(true, |n| n > max))
    {
        return Err(too_large());
    }
    let mut chunks = resp.bytes_stream();
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| transport_error(url, e, timeout))?;
        if body.len().saturating_add(chunk.len()) > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}
