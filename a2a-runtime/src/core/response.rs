//! [`A2aResponse`]: the typed result of one operation (its request is an
//! [`A2aRequest`](crate::protocol::A2aRequest)).

use std::fmt;

use super::events::EventStream;
use crate::extension::Reply;
use crate::types::{
    AgentCard, Empty, ListTaskPushNotificationConfigsResponse, ListTasksResponse,
    SendMessageResponse, Task, TaskPushNotificationConfig,
};

/// The typed result of one operation.
pub enum A2aResponse {
    /// SendMessage.
    SendMessage(SendMessageResponse),
    /// GetTask, CancelTask.
    Task(Task),
    /// ListTasks.
    ListTasks(ListTasksResponse),
    /// Create/Get push config.
    PushConfig(TaskPushNotificationConfig),
    /// List push configs.
    PushConfigs(ListTaskPushNotificationConfigsResponse),
    /// Delete push config.
    Empty(Empty),
    /// GetExtendedAgentCard.
    AgentCard(Box<AgentCard>),
    /// SendStreamingMessage, SubscribeToTask.
    Stream(EventStream),
}

impl fmt::Debug for A2aResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SendMessage(r) => f.debug_tuple("SendMessage").field(r).finish(),
            Self::Task(r) => f.debug_tuple("Task").field(r).finish(),
            Self::ListTasks(r) => f.debug_tuple("ListTasks").field(r).finish(),
            Self::PushConfig(r) => f.debug_tuple("PushConfig").field(r).finish(),
            Self::PushConfigs(r) => f.debug_tuple("PushConfigs").field(r).finish(),
            Self::Empty(r) => f.debug_tuple("Empty").field(r).finish(),
            Self::AgentCard(r) => f.debug_tuple("AgentCard").field(&r.name).finish(),
            Self::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

impl A2aResponse {
    /// A mutable view of a unary result for extension hooks (`None` for streams).
    pub fn reply(&mut self) -> Option<Reply<'_>> {
        Some(match self {
            Self::SendMessage(r) => Reply::SendMessage(r),
            Self::Task(r) => Reply::Task(r),
            Self::ListTasks(r) => Reply::ListTasks(r),
            Self::PushConfig(r) => Reply::PushConfig(r),
            Self::PushConfigs(r) => Reply::PushConfigs(r),
            Self::Empty(r) => Reply::Empty(r),
            Self::AgentCard(r) => Reply::AgentCard(r),
            Self::Stream(_) => return None,
        })
    }

    /// The JSON of a unary result (`None` for streams).
    pub fn to_json(&self) -> Option<Result<Vec<u8>, serde_json::Error>> {
        let mut out = Vec::with_capacity(512);
        self.write_json(&mut out).map(|r| r.map(|()| out))
    }

    /// Appends the JSON of a unary result to `out` (`None` for streams, and `out` is unchanged).
    pub fn write_json(&self, out: &mut Vec<u8>) -> Option<Result<(), serde_json::Error>> {
        Some(match self {
            Self::SendMessage(r) => crate::json::writer::to_writer(out, r),
            Self::Task(r) => crate::json::writer::to_writer(out, r),
            Self::ListTasks(r) => crate::json::writer::to_writer(out, r),
            Self::PushConfig(r) => crate::json::writer::to_writer(out, r),
            Self::PushConfigs(r) => crate::json::writer::to_writer(out, r),
            Self::Empty(r) => crate::json::writer::to_writer(out, r),
            Self::AgentCard(r) => crate::json::writer::to_writer(out, r),
            Self::Stream(_) => return None,
        })
    }
}
