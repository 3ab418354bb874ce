//! The gRPC binding on the client side (features `client` + `grpc`): every operation of
//! `lf.a2a.v1.A2AService` over one HTTP/2 channel to the interface's `host:port`.
//!
//! Every call carries `a2a-version: 1.0`, the configured extensions in `a2a-extensions`, the
//! options' headers and authentication as metadata; the response's initial metadata gives the
//! server's version and activated extensions. A status from the agent comes back as
//! [`ClientError::Agent`]; a failed connection is [`ClientError::Transport`], no answer in time
//! [`ClientError::Timeout`] and a stream that stops early [`ClientError::InvalidResponse`].

use std::any::Any;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use std::time::Duration;

use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tonic::transport::{Channel, Endpoint};

use super::error::{AgentError, ClientError};
use super::options::{Auth, CallOptions, ClientOptions, OutgoingRequest};
use super::response::Meta;
use super::stream::{Item, Received, Source, is_final};
use crate::error::A2aError;
use crate::grpc::pb::a2a_service_client::A2aServiceClient;
use crate::grpc::status::from_status;
use crate::grpc::{EXTENSIONS_KEY, VERSION_KEY, pb};
use crate::protocol::{A2aRequest, Operation};
use crate::types::{self, StreamResponse};

/// The typed result of a unary call.
#[derive(Debug)]
pub(crate) enum Unary {
    SendMessage(types::SendMessageResponse),
    Task(types::Task),
    ListTasks(types::ListTasksResponse),
    PushConfig(types::TaskPushNotificationConfig),
    PushConfigs(types::ListTaskPushNotificationConfigsResponse),
    Empty(types::Empty),
    AgentCard(Box<types::AgentCard>),
}

impl Unary {
    /// The result's JSON, as the server's ProtoJSON writer encodes it.
    fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        match self {
            Self::SendMessage(r) => crate::json::to_vec(r),
            Self::Task(r) => crate::json::to_vec(r),
            Self::ListTasks(r) => crate::json::to_vec(r),
            Self::PushConfig(r) => crate::json::to_vec(r),
            Self::PushConfigs(r) => crate::json::to_vec(r),
            Self::Empty(r) => crate::json::to_vec(r),
            Self::AgentCard(r) => crate::json::to_vec(r),
        }
    }
}

/// A unary result as the type the caller asked for: moved when it is the operation's own type
/// (the usual case), through its JSON otherwise (e.g. a `serde_json::Value`).
pub(crate) fn typed<T: DeserializeOwned + 'static>(
    response: Unary,
    op: Operation,
) -> Result<T, ClientError> {
    /// `u` as a `T` when it is one; given back otherwise (`None` only if `Any` misbehaved).
    fn cast<T: 'static, U: 'static>(u: U) -> Result<T, Option<U>> {
        let boxed: Box<dyn Any> = Box::new(u);
        match boxed.downcast::<T>() {
            Ok(t) => Ok(*t),
            Err(other) => Err(other.downcast::<U>().ok().map(|u| *u)),
        }
    }
    let response = match response {
        Unary::SendMessage(r) => cast(r).map_err(|r| r.map(Unary::SendMessage)),
        Unary::Task(r) => cast(r).map_err(|r| r.map(Unary::Task)),
        Unary::ListTasks(r) => cast(r).map_err(|r| r.map(Unary::ListTasks)),
        Unary::PushConfig(r) => cast(r).map_err(|r| r.map(Unary::PushConfig)),
        Unary::PushConfigs(r) => cast(r).map_err(|r| r.map(Unary::PushConfigs)),
        Unary::Empty(r) => cast(r).map_err(|r| r.map(Unary::Empty)),
        Unary::AgentCard(r) => cast(*r).map_err(|r| r.map(|c| Unary::AgentCard(Box::new(c)))),
    };
    let response = match response {
        Ok(t) => return Ok(t),
        Err(Some(r)) => r,
        Err(None) => {
            return Err(ClientError::Local(A2aError::Internal(format!(
                "the result of {op} was lost"
            ))));
        }
    };
    let fits =
        |e: String| ClientError::InvalidResponse(format!("the result of {op} does not fit: {e}"));
    let json = response.to_json().map_err(|e| fits(e.to_string()))?;
    crate::json::decode(&json, 256).map_err(|e| fits(e.to_string()))
}

/// One agent's gRPC endpoint.
#[derive(Debug)]
pub(crate) struct GrpcTransport {
    client: A2aServiceClient<Channel>,
    /// Where the channel goes (`http://host:port`), for messages.
    url: String,
}

/// The channel URL of a GRPC interface: `host:port` (the spec's form) gets `https://` when
/// the client has TLS settings, else `http://`; a URL with a scheme keeps it (`grpc://` reads
/// as `http://`, `grpcs://` as `https://`).
fn channel_url(interface_url: &str, tls: bool) -> String {
    let url = interface_url.trim_end_matches('/');
    if let Some(rest) = url.strip_prefix("grpc://") {
        format!("http://{rest}")
    } else if let Some(rest) = url.strip_prefix("grpcs://") {
        format!("https://{rest}")
    } else if url.starts_with("http://") || url.starts_with("https://") {
        url.to_owned()
    } else if tls {
        format!("https://{url}")
    } else {
        format!("http://{url}")
    }
}

/// The channel's TLS settings for an `https://` URL.
#[cfg(feature = "grpc-tls")]
fn tls_endpoint(endpoint: Endpoint, options: &ClientOptions) -> Result<Endpoint, A2aError> {
    use tonic::transport::{Certificate, ClientTlsConfig, Identity};
    let mut config = ClientTlsConfig::new();
    let tls = options.tls.clone().unwrap_or_default();
    // tonic has no switch to skip verification; refused rather than verified silently.
    if tls.insecure {
        return Err(A2aError::Internal(
            "client TLS for gRPC: certificate verification cannot be turned off over gRPC \
             (ClientTls::danger_accept_invalid_certs is for the HTTP bindings)"
                .into(),
        ));
    }
    config = match &tls.root_ca_pem {
        Some(pem) => config.ca_certificate(Certificate::from_pem(pem)),
        None => config.with_native_roots(),
    };
    if let Some((cert, key)) = &tls.identity {
        config = config.identity(Identity::from_pem(cert, key));
    }
    endpoint
        .tls_config(config)
        .map_err(|e| A2aError::Internal(format!("client TLS for gRPC: {e}")))
}

/// Without the `grpc-tls` feature an `https://` channel cannot be dialed.
#[cfg(not(feature = "grpc-tls"))]
fn tls_endpoint(_: Endpoint, _: &ClientOptions) -> Result<Endpoint, A2aError> {
    Err(A2aError::Internal(
        "gRPC over TLS needs the `grpc-tls` feature of a2a-runtime".into(),
    ))
}

impl GrpcTransport {
    /// A transport to `interface_url` (connected on first use).
    pub(crate) fn new(interface_url: &str, options: &ClientOptions) -> Result<Self, ClientError> {
        let url = channel_url(interface_url, options.tls.is_some());
        let mut endpoint = Endpoint::from_shared(url.clone())
            .map_err(|e| {
                ClientError::InvalidResponse(format!(
                    "the GRPC interface URL {interface_url:?} is not usable: {e}"
                ))
            })?
            .connect_timeout(options.timeout)
            .tcp_nodelay(true);
        if url.starts_with("https://") {
            endpoint = tls_endpoint(endpoint, options).map_err(ClientError::Local)?;
        }
        let client = A2aServiceClient::new(endpoint.connect_lazy())
            .max_decoding_message_size(options.limits.max_response_bytes)
            .max_encoding_message_size(usize::MAX);
        Ok(Self { client, url })
    }

    /// The request metadata: version, extensions, configured headers, authentication.
    fn metadata(
        &self,
        method: &'static str,
        options: &ClientOptions,
        extensions: Option<&str>,
        headers: &[(String, String)],
    ) -> Result<MetadataMap, ClientError> {
        let mut outgoing = OutgoingRequest {
            method,
            url: self.url.clone(),
            headers: Vec::new(),
        };
        outgoing.headers.extend(options.headers.iter().cloned());
        outgoing.headers.extend(headers.iter().cloned());
        match &options.auth {
            Some(Auth::Bearer(token)) => outgoing
                .headers
                .push(("authorization".into(), format!("Bearer {token}"))),
            Some(Auth::ApiKey { header, value }) => {
                outgoing.headers.push((header.clone(), value.clone()));
            }
            Some(Auth::Interceptor(i)) => i.intercept(&mut outgoing).map_err(ClientError::Local)?,
            None => {}
        }
        let mut meta = MetadataMap::with_capacity(outgoing.headers.len() + 2);
        meta.insert(
            VERSION_KEY,
            MetadataValue::from_static(crate::PROTOCOL_VERSION),
        );
        if let Some(ext) = extensions
            && let Ok(v) = MetadataValue::try_from(ext)
        {
            meta.insert(EXTENSIONS_KEY, v);
        }
        for (name, value) in &outgoing.headers {
            let key =
                MetadataKey::from_bytes(name.to_ascii_lowercase().as_bytes()).map_err(|_| {
                    ClientError::Local(A2aError::Internal(format!(
                        "{name:?} cannot be sent as gRPC metadata"
                    )))
                })?;
            let value = MetadataValue::try_from(value.as_str()).map_err(|_| {
                ClientError::Local(A2aError::Internal(format!(
                    "the value of {name:?} cannot be sent as gRPC metadata"
                )))
            })?;
            meta.append(key, value);
        }
        // The trace of the request being served, when this call is made while serving one.
        for (name, value) in crate::protocol::trace_headers() {
            if let Ok(value) = MetadataValue::try_from(value.as_str()) {
                meta.insert(name, value);
            }
        }
        Ok(meta)
    }

    fn request<T>(meta: MetadataMap, message: T, timeout: Option<Duration>) -> tonic::Request<T> {
        let mut req = tonic::Request::new(message);
        *req.metadata_mut() = meta;
        if let Some(t) = timeout {
            req.set_timeout(t);
        }
        req
    }

    /// A unary call: the result as the type of the operation's answer in [`crate::types`]
    /// (boxed), and the response metadata.
    pub(crate) async fn unary(
        &self,
        req: &A2aRequest,
        options: &ClientOptions,
        extensions: Option<&str>,
        call: &CallOptions,
    ) -> Result<(Unary, Meta), ClientError> {
        let limit = call.timeout.unwrap_or(options.timeout);
        let meta = self.metadata(req.operation().method(), options, extensions, &call.headers)?;
        let mut client = self.client.clone();
        let call = async {
            macro_rules! call {
                ($method:ident, $r:expr, $pb:ident, $wrap:expr) => {{
                    let message: pb::$pb = $r.clone().into();
                    client
                        .$method(Self::request(meta, message, Some(limit)))
                        .await
                        .map(|resp| {
                            let (m, body, _) = resp.into_parts();
                            ($wrap(body.into()), m)
                        })
                }};
            }
            match req {
                A2aRequest::SendMessage(r) => {
                    let resp = client
                        .send_message(Self::request(meta, r.clone().into(), Some(limit)))
                        .await;
                    match resp {
                        Ok(resp) => {
                            let (m, body, _) = resp.into_parts();
                            let result = types::SendMessageResponse::try_from(body)
                                .map_err(|e| ClientError::InvalidResponse(e.to_string()))?;
                            Ok(Ok((Unary::SendMessage(result), m)))
                        }
                        Err(s) => Ok(Err(s)),
                    }
                }
                A2aRequest::GetTask(r) => Ok(call!(get_task, r, GetTaskRequest, Unary::Task)),
                A2aRequest::ListTasks(r) => {
                    Ok(call!(list_tasks, r, ListTasksRequest, Unary::ListTasks))
                }
                A2aRequest::CancelTask(r) => {
                    Ok(call!(cancel_task, r, CancelTaskRequest, Unary::Task))
                }
                A2aRequest::CreateTaskPushNotificationConfig(r) => Ok(call!(
                    create_task_push_notification_config,
                    r,
                    TaskPushNotificationConfig,
                    Unary::PushConfig
                )),
                A2aRequest::GetTaskPushNotificationConfig(r) => Ok(call!(
                    get_task_push_notification_config,
                    r,
                    GetTaskPushNotificationConfigRequest,
                    Unary::PushConfig
                )),
                A2aRequest::ListTaskPushNotificationConfigs(r) => Ok(call!(
                    list_task_push_notification_configs,
                    r,
                    ListTaskPushNotificationConfigsRequest,
                    Unary::PushConfigs
                )),
                A2aRequest::DeleteTaskPushNotificationConfig(r) => {
                    let resp = client
                        .delete_task_push_notification_config(Self::request(
                            meta,
                            r.clone().into(),
                            Some(limit),
                        ))
                        .await;
                    Ok(resp.map(|resp| {
                        let m = resp.metadata().clone();
                        (Unary::Empty(types::Empty {}), m)
                    }))
                }
                A2aRequest::GetExtendedAgentCard(r) => Ok(call!(
                    get_extended_agent_card,
                    r,
                    GetExtendedAgentCardRequest,
                    |c| Unary::AgentCard(Box::new(c))
                )),
                A2aRequest::SendStreamingMessage(_) | A2aRequest::SubscribeToTask(_) => {
                    Err(ClientError::Local(A2aError::Internal(format!(
                        "{} is a streaming operation",
                        req.operation()
                    ))))
                }
            }
        };
        let outcome = match tokio::time::timeout(limit, call).await {
            Err(_) => return Err(self.timeout(limit)),
            Ok(outcome) => outcome?,
        };
        let max = options.limits.max_response_bytes;
        let (result, meta) = outcome.map_err(|s| {
            if is_too_large(&s) {
                ClientError::too_large(&self.url, "a gRPC message", max)
            } else {
                error_of(&self.url, s, limit)
            }
        })?;
        Ok((result, read_meta(&meta)))
    }

    /// A server-streaming call: the events (with their ids, when the server announced where
    /// the stream starts) and the response metadata.
    pub(crate) async fn stream(
        &self,
        req: &A2aRequest,
        options: &ClientOptions,
        extensions: Option<&str>,
        call: &CallOptions,
    ) -> Result<(Source, Meta), ClientError> {
        let limit = call.timeout.unwrap_or(options.timeout);
        // A resumed stream starts after the event it names.
        let resumed_after = call
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(LAST_EVENT_ID_KEY))
            .and_then(|(_, v)| v.trim().parse::<u64>().ok());
        let meta = self.metadata(req.operation().method(), options, extensions, &call.headers)?;
        let mut client = self.client.clone();
        let call = async {
            match req {
                A2aRequest::SendStreamingMessage(r) => {
                    client
                        .send_streaming_message(Self::request(meta, r.clone().into(), None))
                        .await
                }
                A2aRequest::SubscribeToTask(r) => {
                    client
                        .subscribe_to_task(Self::request(meta, r.clone().into(), None))
                        .await
                }
                _ => Err(tonic::Status::internal("not a streaming operation")),
            }
        };
        let response = match tokio::time::timeout(limit, call).await {
            Err(_) => return Err(self.timeout(limit)),
            Ok(r) => r.map_err(|s| error_of(&self.url, s, limit))?,
        };
        let (m, messages, _) = response.into_parts();
        let first_id = resumed_after.map(|n| n.saturating_add(1)).or_else(|| {
            m.get(FIRST_EVENT_ID_KEY)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
        });
        let state = StreamState {
            messages,
            next_id: first_id,
            done: false,
            finished: false,
            idle: options.stream_idle_timeout,
            url: self.url.clone(),
            max_message: options.limits.max_response_bytes,
        };
        let stream = futures::stream::unfold(state, |mut s| async move {
            if s.done {
                return None;
            }
            let item = match tokio::time::timeout(s.idle, s.messages.message()).await {
                Err(_) => Item::Dropped(ClientError::Timeout {
                    url: s.url.clone(),
                    timeout: s.idle,
                }),
                Ok(Ok(Some(message))) => match StreamResponse::try_from(message) {
                    Ok(event) => {
                        s.finished = is_final(&event);
                        let id = s.next_id.map(|n| n.to_string());
                        s.next_id = s.next_id.map(|n| n.saturating_add(1));
                        return Some((Item::Event(Received { id, event }), s));
                    }
                    Err(e) => Item::Failed(ClientError::InvalidResponse(e.to_string())),
                },
                Ok(Ok(None)) if s.finished => return None,
                Ok(Ok(None)) => Item::Dropped(ClientError::InvalidResponse(format!(
                    "the stream from {} ended before the task reached a final or interrupted state",
                    s.url
                ))),
                Ok(Err(status)) if is_too_large(&status) => Item::Failed(ClientError::too_large(
                    &s.url,
                    "a gRPC message",
                    s.max_message,
                )),
                Ok(Err(status)) => match error_of(&s.url, status, s.idle) {
                    e @ (ClientError::Transport { .. } | ClientError::Timeout { .. }) => {
                        Item::Dropped(e)
                    }
                    e => Item::Failed(e),
                },
            };
            s.done = true;
            Some((item, s))
        });
        Ok((Box::pin(stream), read_meta(&m)))
    }
}

/// The request metadata that resumes a task's stream after the event it names (as the SSE
/// bindings' `Last-Event-ID` header).
const LAST_EVENT_ID_KEY: &str = "last-event-id";

/// The response metadata naming the id of a stream's first message; the next ones follow
/// one by one (a task's event ids are gapless).
const FIRST_EVENT_ID_KEY: &str = "a2a-first-event-id";

/// Is this the status of a message larger than the channel accepts?
fn is_too_large(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::OutOfRange | tonic::Code::ResourceExhausted
    ) && status.details().is_empty()
        && status.message().contains("message length too large")
}

struct StreamState {
    messages: tonic::Streaming<pb::StreamResponse>,
    /// The id of the next message, when the server announced where the stream starts.
    next_id: Option<u64>,
    done: bool,
    finished: bool,
    idle: Duration,
    url: String,
    max_message: usize,
}

impl GrpcTransport {
    fn timeout(&self, limit: Duration) -> ClientError {
        ClientError::Timeout {
            url: self.url.clone(),
            timeout: limit,
        }
    }
}

/// A status as the caller's error: a deadline without A2A details is a timeout, a failure of
/// the channel (unavailable, unknown, cancelled, without details) a transport error; anything
/// else is the agent's answer.
fn error_of(url: &str, status: tonic::Status, limit: Duration) -> ClientError {
    use tonic::Code;
    let bare = status.details().is_empty();
    match status.code() {
        Code::DeadlineExceeded if bare => ClientError::Timeout {
            url: url.to_owned(),
            timeout: limit,
        },
        Code::Unavailable | Code::Unknown | Code::Cancelled if bare => ClientError::Transport {
            url: url.to_owned(),
            source: Arc::new(status),
        },
        _ => {
            let error = from_status(&status);
            let wire = AgentError::from_wire(error.code(), None, status.message(), error.details());
            ClientError::Agent(wire.with_error(error))
        }
    }
}

/// The server's version and activated extensions, from response metadata.
fn read_meta(meta: &MetadataMap) -> Meta {
    let text = |k: &str| {
        meta.get_all(k)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
    };
    let extensions = crate::extension::parse_extensions_header(text(EXTENSIONS_KEY))
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "ignoring the server's a2a-extensions metadata");
            Vec::new()
        });
    Meta {
        version: text(VERSION_KEY).first().map(|v| v.trim().to_owned()),
        extensions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_urls_become_channel_urls() {
        assert_eq!(
            channel_url("127.0.0.1:8081", false),
            "http://127.0.0.1:8081"
        );
        assert_eq!(
            channel_url("127.0.0.1:8081", true),
            "https://127.0.0.1:8081"
        );
        assert_eq!(channel_url("grpc://h:1/", true), "http://h:1");
        assert_eq!(channel_url("grpcs://h:1", false), "https://h:1");
        assert_eq!(channel_url("https://h:443", false), "https://h:443");
    }

    #[test]
    fn response_metadata_merges_repeated_and_comma_separated_extensions() {
        let mut m = MetadataMap::new();
        m.insert(VERSION_KEY, MetadataValue::from_static(" 1.0"));
        m.append(
            EXTENSIONS_KEY,
            MetadataValue::from_static("https://a/v1, https://b/v1"),
        );
        m.append(
            EXTENSIONS_KEY,
            MetadataValue::from_static("https://a/v1,https://c/v1"),
        );
        let meta = read_meta(&m);
        assert_eq!(meta.version.as_deref(), Some("1.0"));
        assert_eq!(
            meta.extensions,
            ["https://a/v1", "https://b/v1", "https://c/v1"]
        );
    }
}
