//! The official Rust SDK (`a2a-server-lf`, axum): an echo agent written with its public API, in
//! its in-memory task store, on a single-threaded tokio runtime, with TCP_NODELAY set on every
//! accepted connection (its best case). The same agent and store also serve the SDK's gRPC
//! binding (`a2a-grpc`'s `GrpcHandler` under tonic's server), for `a2a-bench grpc`.

use std::sync::Arc;

use a2a::{
    A2AError, AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Artifact, Part,
    StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{
    AgentExecutor, DefaultRequestHandler, ExecutorContext, InMemoryTaskStore, StaticAgentCard,
};
use axum::serve::ListenerExt;
use futures::stream::{self, BoxStream, StreamExt};

use crate::wire::{STREAM_CHUNKS, STREAM_TEXT};

/// Echo: an artifact `echo: <text>` named `echo`, then COMPLETED; `stream100` streams
/// [`STREAM_CHUNKS`] artifact chunks, then COMPLETED.
struct Echo;

fn artifact_event(
    task_id: &str,
    context_id: &str,
    artifact: Artifact,
    append: bool,
    last: bool,
) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: task_id.to_owned(),
        context_id: context_id.to_owned(),
        artifact,
        append: Some(append),
        last_chunk: Some(last),
        metadata: None,
    })
}

fn status_event(task_id: &str, context_id: &str, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task_id.to_owned(),
        context_id: context_id.to_owned(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Some(chrono_now()),
        },
        metadata: None,
    })
}

fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

fn artifact(id: String, name: Option<&str>, text: String) -> Artifact {
    Artifact {
        artifact_id: id,
        name: name.map(str::to_owned),
        description: None,
        parts: vec![Part::text(text)],
        metadata: None,
        extensions: None,
    }
}

impl AgentExecutor for Echo {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let text = ctx
            .message
            .as_ref()
            .and_then(|m| m.text())
            .unwrap_or_default()
            .to_owned();
        let (task_id, context_id) = ctx.task_info();
        if text == STREAM_TEXT {
            let events: Vec<_> = (0..STREAM_CHUNKS)
                .map(|i| {
                    let a = artifact("stream".into(), None, format!("chunk {i}"));
                    Ok(artifact_event(
                        &task_id,
                        &context_id,
                        a,
                        i > 0,
                        i + 1 == STREAM_CHUNKS,
                    ))
                })
                .chain([Ok(status_event(
                    &task_id,
                    &context_id,
                    TaskState::Completed,
                ))])
                .collect();
            // The SDK relays events through a 32-slot broadcast channel and fails the stream
            // ("subscription fell behind") when the SSE writer lags: yield after each event so
            // the writer keeps up, as an agent producing events asynchronously would.
            return stream::iter(events)
                .then(|e| async move {
                    tokio::task::yield_now().await;
                    e
                })
                .boxed();
        }
        let a = artifact(a2a::new_task_id(), Some("echo"), format!("echo: {text}"));
        stream::iter([
            Ok(artifact_event(&task_id, &context_id, a, false, true)),
            Ok(status_event(&task_id, &context_id, TaskState::Completed)),
        ])
        .boxed()
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let (task_id, context_id) = ctx.task_info();
        stream::iter([Ok(status_event(&task_id, &context_id, TaskState::Canceled))]).boxed()
    }
}

fn card(base: &str) -> AgentCard {
    let ours = super::ours::card();
    AgentCard {
        name: ours.name,
        description: ours.description,
        version: ours.version,
        supported_interfaces: vec![AgentInterface::new(format!("{base}/"), "JSONRPC")],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            ..AgentCapabilities::default()
        },
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        skills: vec![AgentSkill {
            id: "echo".into(),
            name: "Echo".into(),
            description: "Repeats the message back as an artifact".into(),
            tags: vec!["echo".into(), "bench".into()],
            examples: Some(vec!["hello".into()]),
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        }],
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: None,
        security_requirements: None,
        signatures: None,
    }
}

/// Serves on 127.0.0.1:`port` until killed.
pub(crate) fn serve(port: u16) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let handler = Arc::new(DefaultRequestHandler::new(Echo, InMemoryTaskStore::new()));
        let card = Arc::new(StaticAgentCard::new(card(&format!(
            "http://127.0.0.1:{port}"
        ))));
        let app = a2a_server::jsonrpc::jsonrpc_router(handler)
            .merge(a2a_server::agent_card::agent_card_router(card));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| e.to_string())?
            .tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
        axum::serve(listener, app).await.map_err(|e| e.to_string())
    })
}

/// Serves the gRPC binding (`lf.a2a.v1.A2AService`, h2c) on 127.0.0.1:`port` until killed: the
/// SDK's `GrpcHandler` over the same `DefaultRequestHandler`, echo agent and in-memory store as
/// [`serve`], under tonic's server as the SDK's own tests run it, on a single-threaded tokio
/// runtime, with TCP_NODELAY on every accepted connection.
pub(crate) fn serve_grpc(port: u16) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let handler = Arc::new(DefaultRequestHandler::new(Echo, InMemoryTaskStore::new()));
        let service = a2a_pb::proto::a2a_service_server::A2aServiceServer::new(
            a2a_grpc::GrpcHandler::new(handler),
        );
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| e.to_string())?;
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(incoming)
            .await
            .map_err(|e| e.to_string())
    })
}
