//! [`Traceability`]: the extension's declaration, its params and reading its traces.

use serde::{Deserialize, Serialize};

use super::trace::{AgentInvocation, ResponseTrace};
use crate::a2a_extension;
use crate::extension::{MetadataError, MetadataExt};
use crate::types::{SendMessageResponse, Task};

/// Traceability: the agent returns the trace of its steps in its messages' metadata.
///
/// No params. Off unless added with `.extension(..)` to a server builder. See the
/// [module documentation](super) for the wire format and behaviour.
#[a2a_extension(
    uri = "https://github.com/a2aproject/a2a-samples/extensions/traceability/v1",
    metadata_key = "github.com/a2aproject/a2a-samples/extensions/traceability/v1/traceability",
    metadata = ResponseTrace,
    description = "Adds traceability information to messages and artifacts."
)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Traceability {
    /// The agent's own name and URL, for the root step.
    #[serde(skip)]
    pub(super) agent: Option<AgentInvocation>,
}

impl Traceability {
    /// The extension.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names this agent in the root step of its traces (`agent_invocation` with `agent_name`
    /// and `agent_url`).
    pub fn agent(mut self, name: impl Into<String>, url: impl Into<String>) -> Self {
        self.agent = Some(AgentInvocation {
            agent_name: name.into(),
            agent_url: url.into(),
            ..AgentInvocation::default()
        });
        self
    }

    /// The trace in a SendMessage result: on the direct reply, or the latest one on the task
    /// (status message, then history from the newest, then artifacts from the newest).
    pub fn trace_of(
        response: &SendMessageResponse,
    ) -> Result<Option<ResponseTrace>, MetadataError> {
        match response {
            SendMessageResponse::Message(m) => m.metadata_of::<Self>(),
            SendMessageResponse::Task(t) => Self::trace_of_task(t),
        }
    }

    /// The latest trace on a task (status message, then history from the newest, then
    /// artifacts from the newest).
    pub fn trace_of_task(task: &Task) -> Result<Option<ResponseTrace>, MetadataError> {
        if let Some(m) = &task.status.message
            && let Some(t) = m.metadata_of::<Self>()?
        {
            return Ok(Some(t));
        }
        for m in task.history.iter().rev() {
            if let Some(t) = m.metadata_of::<Self>()? {
                return Ok(Some(t));
            }
        }
        for a in task.artifacts.iter().rev() {
            if let Some(t) = a.metadata_of::<Self>()? {
                return Ok(Some(t));
            }
        }
        Ok(None)
    }
}
