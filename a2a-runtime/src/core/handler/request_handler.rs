//! [`RequestHandler`]: one async method per A2A operation.

use super::super::events::EventStream;
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::types::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, Empty,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageRequest, SendMessageResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
};

/// The eleven A2A operations, transport-independent.
///
/// Bindings (JSON-RPC, HTTP+JSON, and later gRPC) decode a request, call one method, and encode
/// the result; they never implement protocol rules themselves. Requests arrive validated (see
/// [`crate::types::Validate`]), with the tenant resolved into the context.
#[async_trait::async_trait]
pub trait RequestHandler: Send + Sync + 'static {
    /// SendMessage: a Task (after it is terminal or interrupted, unless `returnImmediately`) or a
    /// direct Message.
    async fn send_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aError>;
    /// SendStreamingMessage: the task's events as they happen.
    async fn send_streaming_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, A2aError>;
    /// GetTask.
    async fn get_task(&self, ctx: RequestContext, req: GetTaskRequest) -> Result<Task, A2aError>;
    /// ListTasks.
    async fn list_tasks(
        &self,
        ctx: RequestContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError>;
    /// CancelTask.
    async fn cancel_task(
        &self,
        ctx: RequestContext,
        req: CancelTaskRequest,
    ) -> Result<Task, A2aError>;
    /// SubscribeToTask: the task as it stands, then its live events until it is terminal.
    async fn subscribe_to_task(
        &self,
        ctx: RequestContext,
        req: SubscribeToTaskRequest,
    ) -> Result<EventStream, A2aError>;
    /// CreateTaskPushNotificationConfig.
    async fn create_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError>;
    /// GetTaskPushNotificationConfig.
    async fn get_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2aError>;
    /// ListTaskPushNotificationConfigs.
    async fn list_task_push_notification_configs(
        &self,
        ctx: RequestContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError>;
    /// DeleteTaskPushNotificationConfig (idempotent).
    async fn delete_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, A2aError>;
    /// GetExtendedAgentCard.
    async fn get_extended_agent_card(
        &self,
        ctx: RequestContext,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2aError>;
    /// The server is shutting down and its grace period is over: with `cancel_running`, cancel
    /// the tasks still running (as CancelTask would); otherwise leave them to finish or to be
    /// resumed from a durable store. The default does nothing.
    async fn shutdown(&self, cancel_running: bool) {
        let _ = cancel_running;
    }
}
