//! [`Task`], [`TaskStatus`], [`TaskState`] and [`Artifact`].

use serde::{Deserialize, Serialize};

use super::common::{
    ArtifactId, ContextId, Metadata, TaskId, Timestamp, Validate, Violations, assign,
};
use super::message::{Message, Part};
use crate::json::null_default;

/// The lifecycle state of a [`Task`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// `TASK_STATE_UNSPECIFIED` (0): never emitted for a real task.
    #[default]
    Unspecified,
    /// Acknowledged, not started.
    Submitted,
    /// In progress.
    Working,
    /// Finished successfully (terminal).
    Completed,
    /// Finished with an error (terminal).
    Failed,
    /// Canceled (terminal).
    Canceled,
    /// Waiting for a message from the client (interrupted).
    InputRequired,
    /// Declined by the agent (terminal).
    Rejected,
    /// Waiting for authorization (interrupted).
    AuthRequired,
}

super::proto_enum!(TaskState, "task state", {
    Unspecified = 0 => "TASK_STATE_UNSPECIFIED",
    Submitted = 1 => "TASK_STATE_SUBMITTED",
    Working = 2 => "TASK_STATE_WORKING",
    Completed = 3 => "TASK_STATE_COMPLETED",
    Failed = 4 => "TASK_STATE_FAILED",
    Canceled = 5 => "TASK_STATE_CANCELED",
    InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED",
    Rejected = 7 => "TASK_STATE_REJECTED",
    AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED",
});

impl TaskState {
    /// Completed, failed, canceled or rejected: the task can never change again.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Input-required or auth-required: the task waits for the client.
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

/// The status of a [`Task`] at one point in time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// REQUIRED. The state.
    #[serde(default, deserialize_with = "null_default")]
    pub state: TaskState,
    /// A status message from the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When this status was recorded (orders and filters ListTasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in `state`, stamped now, with no message.
    pub fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(Timestamp::now()),
        }
    }

    /// Adds a status message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.message = Some(message);
        self
    }
}

impl Validate for TaskStatus {
    fn check(&self, v: &mut Violations) {
        if self.state == TaskState::Unspecified {
            v.add("state", "is required");
        }
        if let Some(m) = &self.message {
            v.field("message", |v| m.check(v));
        }
    }
}

/// The unit of work an agent performs, with its status, outputs and history.
///
/// `clone_from` copies only what differs (the runtime and the in-memory store update a stored
/// copy after every event: an appended artifact chunk costs the new part, not the whole task).
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// REQUIRED. Server-generated, unique.
    #[serde(default, deserialize_with = "null_default")]
    pub id: TaskId,
    /// The conversation this task belongs to.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "null_default",
        skip_serializing_if = "ContextId::is_empty"
    )]
    pub context_id: ContextId,
    /// REQUIRED. The current status.
    #[serde(default, deserialize_with = "null_default")]
    pub status: TaskStatus,
    /// The outputs.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub artifacts: Vec<Artifact>,
    /// Earlier turns, oldest first.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub history: Vec<Message>,
    /// Extension data, keyed by extension URI.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub metadata: Metadata,
}

impl Clone for Task {
    fn clone(&self) -> Self {
        Self {
            id: self.id.clone(),
            context_id: self.context_id.clone(),
            status: self.status.clone(),
            artifacts: self.artifacts.clone(),
            history: self.history.clone(),
            metadata: self.metadata.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        assign(&mut self.id, &source.id);
        assign(&mut self.context_id, &source.context_id);
        assign(&mut self.status, &source.status);
        self.artifacts.clone_from(&source.artifacts);
        self.history.clone_from(&source.history);
        assign(&mut self.metadata, &source.metadata);
    }
}

impl Task {
    /// Keeps at most the `n` most recent history messages (`0` drops the history).
    pub fn trim_history(&mut self, n: usize) {
        if self.history.len() > n {
            let excess = self.history.len() - n;
            self.history.drain(..excess);
        }
    }
}

impl Validate for Task {
    fn check(&self, v: &mut Violations) {
        v.require_str("id", self.id.as_str());
        v.field("status", |v| self.status.check(v));
        v.each("artifacts", &self.artifacts, |v, a| a.check(v));
        v.each("history", &self.history, |v, m| m.check(v));
    }
}

/// An output of a task.
///
/// `clone_from` copies only what differs, part by part.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// REQUIRED. Unique within its task.
    #[serde(default, alias = "artifact_id", deserialize_with = "null_default")]
    pub artifact_id: ArtifactId,
    /// A human-readable name.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// A human-readable description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// REQUIRED, at least one. The content.
    #[serde(default, deserialize_with = "null_default")]
    pub parts: Vec<Part>,
    /// Extension data, keyed by extension URI.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub metadata: Metadata,
    /// URIs of the extensions that contributed to this artifact.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<String>,
}

impl Clone for Artifact {
    fn clone(&self) -> Self {
        Self {
            artifact_id: self.artifact_id.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            parts: self.parts.clone(),
            metadata: self.metadata.clone(),
            extensions: self.extensions.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        assign(&mut self.artifact_id, &source.artifact_id);
        assign(&mut self.name, &source.name);
        assign(&mut self.description, &source.description);
        self.parts.clone_from(&source.parts);
        assign(&mut self.metadata, &source.metadata);
        assign(&mut self.extensions, &source.extensions);
    }
}

impl Artifact {
    /// An artifact with a fresh random id and the given parts.
    pub fn new(parts: impl IntoIterator<Item = Part>) -> Self {
        Self {
            artifact_id: ArtifactId::random(),
            parts: parts.into_iter().collect(),
            ..Self::default()
        }
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sets the id.
    pub fn with_id(mut self, id: impl Into<ArtifactId>) -> Self {
        self.artifact_id = id.into();
        self
    }
}

impl Validate for Artifact {
    fn check(&self, v: &mut Violations) {
        v.require_str("artifactId", self.artifact_id.as_str());
        v.require_non_empty("parts", &self.parts);
        v.each("parts", &self.parts, |v, p| p.check(v));
    }
}
