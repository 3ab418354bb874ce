//! Streaming events: [`StreamResponse`], the two update events, and [`SendMessageResponse`].

use serde::{Deserialize, Serialize};

use super::common::{ContextId, Metadata, TaskId, Validate, Violations};
use super::message::Message;
use super::task::{Artifact, Task, TaskStatus};
use crate::json::{is_false, lenient_bool, null_default};

/// A change of a task's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// REQUIRED. The task.
    #[serde(default, alias = "task_id", deserialize_with = "null_default")]
    pub task_id: TaskId,
    /// REQUIRED. The task's context.
    #[serde(default, alias = "context_id", deserialize_with = "null_default")]
    pub context_id: ContextId,
    /// REQUIRED. The new status.
    #[serde(default, deserialize_with = "null_default")]
    pub status: TaskStatus,
    /// Extension data, keyed by extension URI.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub metadata: Metadata,
}

impl Validate for TaskStatusUpdateEvent {
    fn check(&self, v: &mut Violations) {
        v.require_str("taskId", self.task_id.as_str());
        v.require_str("contextId", self.context_id.as_str());
        v.field("status", |v| self.status.check(v));
    }
}

/// A new artifact, or a chunk of one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// REQUIRED. The task.
    #[serde(default, alias = "task_id", deserialize_with = "null_default")]
    pub task_id: TaskId,
    /// REQUIRED. The task's context.
    #[serde(default, alias = "context_id", deserialize_with = "null_default")]
    pub context_id: ContextId,
    /// REQUIRED. The artifact (or the chunk's parts).
    #[serde(default, deserialize_with = "null_default")]
    pub artifact: Artifact,
    /// Add these parts to the artifact with the same id sent before.
    #[serde(
        default,
        deserialize_with = "lenient_bool",
        skip_serializing_if = "is_false"
    )]
    pub append: bool,
    /// This is the artifact's final chunk.
    #[serde(
        default,
        alias = "last_chunk",
        deserialize_with = "lenient_bool",
        skip_serializing_if = "is_false"
    )]
    pub last_chunk: bool,
    /// Extension data, keyed by extension URI.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub metadata: Metadata,
}

impl Validate for TaskArtifactUpdateEvent {
    fn check(&self, v: &mut Violations) {
        v.require_str("taskId", self.task_id.as_str());
        v.require_str("contextId", self.context_id.as_str());
        v.field("artifact", |v| self.artifact.check(v));
    }
}

/// One event of a stream (and the body of a push notification): exactly one member.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// `{"task": …}`: a task snapshot (always the first event of a task stream).
    Task(Task),
    /// `{"message": …}`: a direct message (the only event of a message stream).
    Message(Message),
    /// `{"statusUpdate": …}`.
    StatusUpdate(TaskStatusUpdateEvent),
    /// `{"artifactUpdate": …}`.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

super::oneof_wrapper!(StreamResponse, "StreamResponse", {
    "task" => Task(Task),
    "message" => Message(Message),
    "statusUpdate" | "status_update" => StatusUpdate(TaskStatusUpdateEvent),
    "artifactUpdate" | "artifact_update" => ArtifactUpdate(TaskArtifactUpdateEvent),
});

impl StreamResponse {
    /// The id of the task the event belongs to, if any.
    pub fn task_id(&self) -> Option<&TaskId> {
        match self {
            Self::Task(t) => Some(&t.id),
            Self::Message(m) if !m.task_id.is_empty() => Some(&m.task_id),
            Self::Message(_) => None,
            Self::StatusUpdate(e) => Some(&e.task_id),
            Self::ArtifactUpdate(e) => Some(&e.task_id),
        }
    }
}

impl Validate for StreamResponse {
    fn check(&self, v: &mut Violations) {
        match self {
            Self::Task(t) => v.field("task", |v| t.check(v)),
            Self::Message(m) => v.field("message", |v| m.check(v)),
            Self::StatusUpdate(e) => v.field("statusUpdate", |v| e.check(v)),
            Self::ArtifactUpdate(e) => v.field("artifactUpdate", |v| e.check(v)),
        }
    }
}

/// The result of SendMessage in every binding: `{"task": …}` or `{"message": …}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// The agent created or continued a task.
    Task(Task),
    /// The agent replied directly.
    Message(Message),
}

super::oneof_wrapper!(SendMessageResponse, "SendMessageResponse", {
    "task" => Task(Task),
    "message" => Message(Message),
});

impl Validate for SendMessageResponse {
    fn check(&self, v: &mut Violations) {
        match self {
            Self::Task(t) => v.field("task", |v| t.check(v)),
            Self::Message(m) => v.field("message", |v| m.check(v)),
        }
    }
}
