//! Tests of the default handler: an agent's run outlives a dropped request, and an agent's
//! failure ends its task or is the request's error.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};

use super::*;
use crate::core::{AgentContext, AgentExecutor, EventSink, Limits};
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::store::{InMemoryPushConfigStore, InMemoryTaskStore};
use crate::types::{
    AgentCard, Artifact, GetTaskRequest, Message, Part, SendMessageRequest, SendMessageResponse,
    TaskId, TaskState,
};

/// Reports its task id, waits for one permit, then completes with an artifact.
struct Gated {
    gate: Arc<Semaphore>,
    started: mpsc::UnboundedSender<TaskId>,
}

impl AgentExecutor for Gated {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.working().await?;
        let _ = self.started.send(ctx.task_id().clone());
        let _permit = self.gate.acquire().await;
        events.artifact(Artifact::new([Part::text("done")])).await?;
        events.complete().await
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_dropped_blocking_request_leaves_its_agent_running_to_the_end() {
    let gate = Arc::new(Semaphore::new(0));
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let handler = Arc::new(DefaultRequestHandler::new(
        Gated {
            gate: gate.clone(),
            started: started_tx,
        },
        Arc::new(InMemoryTaskStore::new()),
        Arc::new(InMemoryPushConfigStore::new()),
        Arc::new(AgentCard::default()),
        Limits::default(),
    ));
    let req = SendMessageRequest {
        message: Message::user_text("hi"),
        ..SendMessageRequest::default()
    };
    // The request drives the agent until it waits at its gate; then the request is dropped.
    let mut request = handler.send_message(RequestContext::v1(), req);
    let task_id = tokio::select! {
        _ = &mut request => panic!("answered before the agent finished"),
        id = started.recv() => id.unwrap(),
    };
    drop(request);
    gate.add_permits(1);
    // The run continues as its own task and completes the task.
    let mut state = TaskState::Working;
    for _ in 0..100 {
        tokio::task::yield_now().await;
        let task = handler
            .get_task(
                RequestContext::v1(),
                GetTaskRequest {
                    id: task_id.clone(),
                    ..GetTaskRequest::default()
                },
            )
            .await
            .unwrap();
        state = task.status.state;
        if state == TaskState::Completed {
            assert_eq!(task.artifacts.len(), 1);
            break;
        }
    }
    assert_eq!(state, TaskState::Completed);
    assert_eq!(handler.live_tasks(), 0, "the runtime is released");
}

/// Publishes WORKING, then fails as told: with an error, or with a panic; or fails before
/// publishing anything.
#[derive(Clone, Copy)]
enum Failing {
    ErrorAfterWorking,
    PanicAfterWorking,
    ErrorFirst,
}

impl AgentExecutor for Failing {
    async fn execute(&self, _: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if let Failing::ErrorFirst = self {
            return Err(A2aError::Internal("no model".into()));
        }
        events.working().await?;
        match self {
            Failing::PanicAfterWorking => panic!("agent bug"),
            _ => Err(A2aError::Internal("the model went away".into())),
        }
    }
}

fn handler_with(agent: impl AgentExecutor) -> DefaultRequestHandler {
    DefaultRequestHandler::new(
        agent,
        Arc::new(InMemoryTaskStore::new()),
        Arc::new(InMemoryPushConfigStore::new()),
        Arc::new(AgentCard::default()),
        Limits::default(),
    )
}

fn send_hi() -> SendMessageRequest {
    SendMessageRequest {
        message: Message::user_text("hi"),
        ..SendMessageRequest::default()
    }
}

#[tokio::test(flavor = "current_thread")]
async fn an_agent_failing_after_its_first_event_leaves_a_failed_task_without_the_cause() {
    for (agent, reason) in [
        (Failing::ErrorAfterWorking, "the model went away"),
        (Failing::PanicAfterWorking, "panicked"),
    ] {
        let handler = handler_with(agent);
        let reply = handler
            .send_message(RequestContext::v1(), send_hi())
            .await
            .unwrap();
        let SendMessageResponse::Task(task) = reply else {
            panic!("{reply:?}");
        };
        assert_eq!(task.status.state, TaskState::Failed);
        // The status message is stored and sent to every reader: the cause is logged under
        // the correlation id it gives.
        let text = task.status.message.as_ref().map(Message::text).unwrap();
        assert!(!text.contains(reason), "{text}");
        assert!(text.contains("correlation id"), "{text}");
        let stored = handler
            .get_task(
                RequestContext::v1(),
                GetTaskRequest {
                    id: task.id.clone(),
                    ..GetTaskRequest::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(stored.status.state, TaskState::Failed);
        assert_eq!(handler.live_tasks(), 0);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn an_agent_failing_before_any_event_is_the_requests_error() {
    let handler = handler_with(Failing::ErrorFirst);
    let err = handler
        .send_message(RequestContext::v1(), send_hi())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no model"), "{err}");
    assert_eq!(handler.live_tasks(), 0);
}
