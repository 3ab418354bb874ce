//! The gRPC floor: a bare tonic server (a single-threaded tokio runtime, as the official SDK's
//! gRPC binding runs here) that decodes the request and answers canned messages of the same
//! shape as ours: what any tonic A2A server costs before it does any A2A work.

use a2a_runtime::grpc::pb;
use pb::a2a_service_server::{A2aService, A2aServiceServer};
use tonic::{Request, Response, Status};

use crate::wire::STREAM_CHUNKS;

const TASK_ID: &str = "019a0000-0000-7000-8000-000000000001";
const CONTEXT_ID: &str = "019a0000-0000-7000-8000-000000000002";
const ARTIFACT_ID: &str = "019a0000-0000-7000-8000-000000000003";

/// The canned server.
struct Floor;

/// A status of `state`, stamped with a fixed time.
fn status(state: pb::TaskState) -> Option<pb::TaskStatus> {
    Some(pb::TaskStatus {
        state: state as i32,
        timestamp: Some(prost_types::Timestamp {
            seconds: 1_767_225_600,
            nanos: 0,
        }),
        ..pb::TaskStatus::default()
    })
}

fn text_part(text: String) -> pb::Part {
    pb::Part {
        content: Some(pb::part::Content::Text(text)),
        ..pb::Part::default()
    }
}

/// The first text part of the request's message.
fn text_of(request: &pb::SendMessageRequest) -> Result<String, Status> {
    request
        .message
        .as_ref()
        .and_then(|m| m.parts.first())
        .and_then(|p| match &p.content {
            Some(pb::part::Content::Text(t)) => Some(t.clone()),
            _ => None,
        })
        .ok_or_else(|| Status::invalid_argument("message.parts[0]: a text part is required"))
}

/// The SendMessage result: a COMPLETED task with the echo artifact and the user message in its
/// history, as ours answers.
fn completed_task(text: String) -> pb::Task {
    pb::Task {
        id: TASK_ID.into(),
        context_id: CONTEXT_ID.into(),
        status: status(pb::TaskState::Completed),
        artifacts: vec![pb::Artifact {
            artifact_id: ARTIFACT_ID.into(),
            name: "echo".into(),
            parts: vec![text_part(format!("echo: {text}"))],
            ..pb::Artifact::default()
        }],
        history: vec![pb::Message {
            message_id: "bench-message".into(),
            context_id: CONTEXT_ID.into(),
            task_id: TASK_ID.into(),
            role: pb::Role::User as i32,
            parts: vec![text_part(text)],
            ..pb::Message::default()
        }],
        ..pb::Task::default()
    }
}

/// The events of a streamed reply: the task, the artifact chunks, COMPLETED.
fn stream_events() -> Vec<Result<pb::StreamResponse, Status>> {
    use pb::stream_response::Payload;
    let event = |payload| {
        Ok(pb::StreamResponse {
            payload: Some(payload),
        })
    };
    let mut events = Vec::with_capacity(STREAM_CHUNKS + 2);
    events.push(event(Payload::Task(pb::Task {
        id: TASK_ID.into(),
        context_id: CONTEXT_ID.into(),
        status: status(pb::TaskState::Submitted),
        ..pb::Task::default()
    })));
    for i in 0..STREAM_CHUNKS {
        events.push(event(Payload::ArtifactUpdate(
            pb::TaskArtifactUpdateEvent {
                task_id: TASK_ID.into(),
                context_id: CONTEXT_ID.into(),
                artifact: Some(pb::Artifact {
                    artifact_id: "stream".into(),
                    parts: vec![text_part(format!("chunk {i}"))],
                    ..pb::Artifact::default()
                }),
                append: i > 0,
                last_chunk: i + 1 == STREAM_CHUNKS,
                ..pb::TaskArtifactUpdateEvent::default()
            },
        )));
    }
    events.push(event(Payload::StatusUpdate(pb::TaskStatusUpdateEvent {
        task_id: TASK_ID.into(),
        context_id: CONTEXT_ID.into(),
        status: status(pb::TaskState::Completed),
        ..pb::TaskStatusUpdateEvent::default()
    })));
    events
}

type Events = futures::stream::Iter<std::vec::IntoIter<Result<pb::StreamResponse, Status>>>;

fn unimplemented<T>() -> Result<Response<T>, Status> {
    Err(Status::unimplemented(
        "the floor answers SendMessage and SendStreamingMessage",
    ))
}

#[tonic::async_trait]
impl A2aService for Floor {
    async fn send_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let text = text_of(request.get_ref())?;
        Ok(Response::new(pb::SendMessageResponse {
            payload: Some(pb::send_message_response::Payload::Task(completed_task(
                text,
            ))),
        }))
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<Events>, Status> {
        text_of(request.get_ref())?;
        Ok(Response::new(futures::stream::iter(stream_events())))
    }

    async fn get_task(&self, _: Request<pb::GetTaskRequest>) -> Result<Response<pb::Task>, Status> {
        unimplemented()
    }

    async fn list_tasks(
        &self,
        _: Request<pb::ListTasksRequest>,
    ) -> Result<Response<pb::ListTasksResponse>, Status> {
        unimplemented()
    }

    async fn cancel_task(
        &self,
        _: Request<pb::CancelTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        unimplemented()
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        _: Request<pb::SubscribeToTaskRequest>,
    ) -> Result<Response<Events>, Status> {
        unimplemented()
    }

    async fn create_task_push_notification_config(
        &self,
        _: Request<pb::TaskPushNotificationConfig>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        unimplemented()
    }

    async fn get_task_push_notification_config(
        &self,
        _: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        unimplemented()
    }

    async fn list_task_push_notification_configs(
        &self,
        _: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigsResponse>, Status> {
        unimplemented()
    }

    async fn get_extended_agent_card(
        &self,
        _: Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        unimplemented()
    }

    async fn delete_task_push_notification_config(
        &self,
        _: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<()>, Status> {
        unimplemented()
    }
}

/// Serves on 127.0.0.1:`port` until killed.
pub(crate) fn serve(port: u16) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| e.to_string())?;
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        tonic::transport::Server::builder()
            .add_service(A2aServiceServer::new(Floor))
            .serve_with_incoming(incoming)
            .await
            .map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canned_stream_ends_completed_after_the_chunks() {
        let events = stream_events();
        assert_eq!(events.len(), STREAM_CHUNKS + 2);
        let last = events.last().and_then(|e| e.as_ref().ok());
        assert!(matches!(
            last.and_then(|e| e.payload.as_ref()),
            Some(pb::stream_response::Payload::StatusUpdate(u))
                if u.status.as_ref().is_some_and(|s| s.state == pb::TaskState::Completed as i32)
        ));
    }
}
