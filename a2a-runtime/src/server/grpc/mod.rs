//! The gRPC binding (feature `grpc`): `lf.a2a.v1.A2AService` on its own tonic listener beside
//! actix, served by the same [`Pipeline`] as the HTTP bindings.
//!
//! Extension methods are served by a second service beside it,
//! `a2a_runtime.extensions.v1.ExtensionMethods` (see [`crate::grpc::extension_methods`]).
//!
//! Service parameters come from metadata (`a2a-version`, `a2a-extensions`: comma lists and
//! repeated values), the tenant from the request's `tenant` field; the response's initial
//! metadata carries `a2a-version` and the activated extensions, so a stream has them before its
//! first message. Errors are statuses with `google.rpc` details (see [`crate::grpc::status`]).
//!
//! On a server of several agents, the request's `tenant` field names the agent (each agent's
//! card lists its GRPC interface with that `tenant`); the agent serves the request as if it
//! had no tenant, as over its own HTTP path.

mod call;
mod extension_methods;
mod guard;
mod pipelines;
mod routes;

use std::net::SocketAddr;
use std::pin::Pin;

use futures::{Stream, StreamExt as _};
use tonic::{Request, Response, Status};

use crate::core::{A2aResponse, Limits};
use crate::error::A2aError;
use crate::extension::Activated;
use crate::grpc::pb;
use crate::grpc::pb::a2a_service_server::{A2aService as GrpcApi, A2aServiceServer};
use crate::grpc::status::to_status;
use crate::protocol::{A2aRequest, TRACEPARENT, TRACESTATE, TraceContext};
use crate::service::{Answer, Decoded, Payload, Target};
use crate::types::{AgentCard, AgentInterface, ProtocolBinding};
use call::{Call, mismatch, parts, request_meta, response_metadata};
pub(crate) use pipelines::Pipelines;

/// The TLS settings of the listener (the server's, shared with the HTTP listener).
#[cfg(feature = "tls")]
pub(crate) type TlsSettings = super::TlsConfig;
/// Without the `tls` feature there are none.
#[cfg(not(feature = "tls"))]
pub(crate) type TlsSettings = std::convert::Infallible;

/// A streamed response: `StreamResponse` messages, then the end (or an error status).
type EventStream = Pin<Box<dyn Stream<Item = Result<pb::StreamResponse, Status>> + Send>>;

/// The service implementation: metadata and messages in, pipeline calls, messages and
/// metadata out.
struct Binding {
    pipelines: Pipelines,
}

/// A message tonic decoded already.
struct Message(Option<A2aRequest>);

impl Payload for Message {
    async fn target(&mut self, _: &Limits) -> Result<Target, A2aError> {
        // Every gRPC method names its operation.
        Err(A2aError::Internal("a gRPC call names its operation".into()))
    }

    async fn decode(&mut self, _: &Target, _: &Limits) -> Result<Decoded, A2aError> {
        self.0
            .take()
            .map(Decoded::Operation)
            .ok_or_else(|| A2aError::Internal("the message was decoded twice".into()))
    }
}

impl Binding {
    /// Runs `req` through the core inside the request's span, with the caller's trace context
    /// (`traceparent` / `tracestate` metadata) current.
    async fn call(&self, call: &Call, req: A2aRequest) -> Result<(A2aResponse, Activated), Status> {
        use tracing::Instrument as _;
        let meta = &call.meta;
        let text = |key: &str| meta.get(key).and_then(|v| v.to_str().ok());
        let trace = text(TRACEPARENT).and_then(|tp| TraceContext::parse(tp, text(TRACESTATE)));
        let span = super::observe::request_span("GRPC");
        if let Some(tc) = &trace {
            super::observe::set_parent(&span, tc);
        }
        let served = self.serve(call, req).instrument(span.clone());
        let result = TraceContext::scope_of(trace, served).await;
        if let Err(status) = &result {
            let _entered = span.enter();
            tracing::warn!(target: "a2a::access", code = ?status.code(), cause = status.message(), "a2a request failed");
        }
        result
    }

    /// Runs `req` through the pipeline.
    async fn serve(
        &self,
        call: &Call,
        mut req: A2aRequest,
    ) -> Result<(A2aResponse, Activated), Status> {
        let pipeline = self.pipelines.pick(&mut req)?;
        let meta = request_meta(call, Target::Operation(req.operation()));
        let answer = pipeline.serve(meta, &mut Message(Some(req))).await;
        match answer.map_err(|e| to_status(&e))? {
            Answer::Operation(served) => Ok(served.into_parts()),
            Answer::Method { .. } => Err(mismatch()),
        }
    }

    /// A unary call: `pick` takes the operation's result out of the response.
    async fn unary<T>(
        &self,
        meta: Call,
        req: A2aRequest,
        pick: impl FnOnce(A2aResponse) -> Option<T>,
    ) -> Result<Response<T>, Status> {
        let (response, activated) = self.call(&meta, req).await?;
        let mut out = Response::new(pick(response).ok_or_else(mismatch)?);
        response_metadata(out.metadata_mut(), &activated);
        Ok(out)
    }

    /// A server-streaming call: the core's events as `StreamResponse` messages; an error ends
    /// the stream with its status.
    async fn stream(&self, meta: Call, req: A2aRequest) -> Result<Response<EventStream>, Status> {
        let (response, activated) = self.call(&meta, req).await?;
        let A2aResponse::Stream(mut events) = response else {
            return Err(mismatch());
        };
        // gRPC messages carry no id: the initial metadata names the id of the first event (the
        // task's sequence number) and the next ones follow one by one, so a client can resume
        // after any of them (`last-event-id`). A new task's first event comes from its agent:
        // it is awaited briefly, and the stream opens without the id when it is late.
        let first = tokio::time::timeout(FIRST_EVENT_WAIT, events.next())
            .await
            .ok()
            .flatten();
        let first_id = match &first {
            Some(Ok(event)) => Some(event.seq),
            _ => None,
        };
        let events = futures::stream::iter(first).chain(events);
        let messages = events
            .scan(false, |failed, item| {
                if *failed {
                    return futures::future::ready(None);
                }
                futures::future::ready(Some(match item {
                    Ok(event) => Ok(pb::StreamResponse::from(
                        std::sync::Arc::unwrap_or_clone(event).event,
                    )),
                    Err(e) => {
                        *failed = true;
                        Err(to_status(&e))
                    }
                }))
            })
            .boxed();
        let mut out = Response::new(messages as EventStream);
        response_metadata(out.metadata_mut(), &activated);
        if let Some(id) = first_id {
            out.metadata_mut()
                .insert(FIRST_EVENT_ID_KEY, tonic::metadata::MetadataValue::from(id));
        }
        Ok(out)
    }
}

/// The response metadata naming the id of a stream's first message (see [`Binding::stream`]).
const FIRST_EVENT_ID_KEY: &str = "a2a-first-event-id";

/// How long a stream's opening waits for its first event, to name its id.
const FIRST_EVENT_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

#[tonic::async_trait]
impl GrpcApi for Binding {
    async fn send_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let (meta, msg) = parts(request);
        self.unary(meta, A2aRequest::SendMessage(msg.into()), |r| match r {
            A2aResponse::SendMessage(m) => Some(m.into()),
            _ => None,
        })
        .await
    }

    type SendStreamingMessageStream = EventStream;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let (meta, msg) = parts(request);
        self.stream(meta, A2aRequest::SendStreamingMessage(msg.into()))
            .await
    }

    async fn get_task(
        &self,
        request: Request<pb::GetTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let (meta, msg) = parts(request);
        self.unary(meta, A2aRequest::GetTask(msg.into()), |r| match r {
            A2aResponse::Task(t) => Some(t.into()),
            _ => None,
        })
        .await
    }

    async fn list_tasks(
        &self,
        request: Request<pb::ListTasksRequest>,
    ) -> Result<Response<pb::ListTasksResponse>, Status> {
        let (meta, msg) = parts(request);
        self.unary(meta, A2aRequest::ListTasks(msg.into()), |r| match r {
            A2aResponse::ListTasks(l) => Some(l.into()),
            _ => None,
        })
        .await
    }

    async fn cancel_task(
        &self,
        request: Request<pb::CancelTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let (meta, msg) = parts(request);
        self.unary(meta, A2aRequest::CancelTask(msg.into()), |r| match r {
            A2aResponse::Task(t) => Some(t.into()),
            _ => None,
        })
        .await
    }

    type SubscribeToTaskStream = EventStream;

    async fn subscribe_to_task(
        &self,
        request: Request<pb::SubscribeToTaskRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let (meta, msg) = parts(request);
        self.stream(meta, A2aRequest::SubscribeToTask(msg.into()))
            .await
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<pb::TaskPushNotificationConfig>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (meta, msg) = parts(request);
        let req = A2aRequest::CreateTaskPushNotificationConfig(msg.into());
        self.unary(meta, req, |r| match r {
            A2aResponse::PushConfig(c) => Some(c.into()),
            _ => None,
        })
        .await
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (meta, msg) = parts(request);
        let req = A2aRequest::GetTaskPushNotificationConfig(msg.into());
        self.unary(meta, req, |r| match r {
            A2aResponse::PushConfig(c) => Some(c.into()),
            _ => None,
        })
        .await
    }

    async fn list_task_push_notification_configs(
        &self,
        request: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigsResponse>, Status> {
        let (meta, msg) = parts(request);
        let req = A2aRequest::ListTaskPushNotificationConfigs(msg.into());
        self.unary(meta, req, |r| match r {
            A2aResponse::PushConfigs(c) => Some(c.into()),
            _ => None,
        })
        .await
    }

    async fn get_extended_agent_card(
        &self,
        request: Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        let (meta, msg) = parts(request);
        self.unary(
            meta,
            A2aRequest::GetExtendedAgentCard(msg.into()),
            |r| match r {
                A2aResponse::AgentCard(c) => Some((*c).into()),
                _ => None,
            },
        )
        .await
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<()>, Status> {
        let (meta, msg) = parts(request);
        let req = A2aRequest::DeleteTaskPushNotificationConfig(msg.into());
        self.unary(meta, req, |r| match r {
            A2aResponse::Empty(_) => Some(()),
            _ => None,
        })
        .await
    }
}

/// The card with its GRPC interface at `host_port` (replacing any other GRPC entry), after the
/// HTTP bindings.
pub(crate) fn with_grpc_interface(card: AgentCard, host_port: &str) -> AgentCard {
    with_grpc_interface_for(card, host_port, "")
}

/// [`with_grpc_interface`] for the agent addressed by `tenant` (empty: the only agent).
pub(crate) fn with_grpc_interface_for(
    mut card: AgentCard,
    host_port: &str,
    tenant: &str,
) -> AgentCard {
    card.supported_interfaces
        .retain(|i| i.protocol_binding != ProtocolBinding::Grpc);
    let mut grpc = AgentInterface::new(host_port, ProtocolBinding::Grpc);
    grpc.tenant = tenant.to_owned();
    card.supported_interfaces.push(grpc);
    card
}

/// A gRPC listener started by `A2aServer::start`.
#[derive(Debug)]
pub(crate) struct RunningGrpc {
    pub(crate) addr: SocketAddr,
    stop: tokio_util::sync::CancellationToken,
    join: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
}

impl RunningGrpc {
    /// Stops accepting, lets calls under way finish, and waits.
    pub(crate) async fn stop(self) -> std::io::Result<()> {
        self.stop.cancel();
        match self.join.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(std::io::Error::other(e)),
            Err(e) => Err(std::io::Error::other(e)),
        }
    }
}

/// Binds `addr` and serves `pipelines` on it in the background (the caller adds the
/// bound address to the cards).
pub(crate) async fn start(
    pipelines: Pipelines,
    addr: &str,
    tls: Option<&TlsSettings>,
) -> std::io::Result<RunningGrpc> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    tracing::info!(target: "a2a::server", "gRPC listening on {addr}");
    let limit = pipelines.max_body_bytes();
    #[cfg_attr(not(feature = "tls"), allow(unused_mut))]
    let mut builder = tonic::transport::Server::builder();
    #[cfg(feature = "tls")]
    if let Some(tls) = tls {
        builder = builder
            .tls_config(tls.grpc_config())
            .map_err(std::io::Error::other)?;
    }
    #[cfg(not(feature = "tls"))]
    if let Some(never) = tls {
        match *never {}
    }
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let stop = tokio_util::sync::CancellationToken::new();
    let signal = stop.clone().cancelled_owned();
    // The extension methods' service only when an extension adds methods; any other path is
    // answered UNIMPLEMENTED.
    let methods = pipelines.have_methods().then(|| {
        extension_methods::ExtensionMethodsServer::new(extension_methods::Binding {
            pipelines: pipelines.clone(),
        })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(usize::MAX)
    });
    let api = A2aServiceServer::new(Binding { pipelines })
        .max_decoding_message_size(limit)
        .max_encoding_message_size(usize::MAX);
    let routes = routes::Routes { api, methods };
    let server = builder.layer(guard::ContentTypeLayer);
    let join = tokio::spawn(server.serve_with_incoming_shutdown(routes, incoming, signal));
    Ok(RunningGrpc { addr, stop, join })
}
