//! The request and response messages of the eleven operations.

use serde::{Deserialize, Serialize};

use super::common::{ContextId, Metadata, PushConfigId, TaskId, Timestamp, Validate, Violations};
use super::message::Message;
use super::push::TaskPushNotificationConfig;
use super::task::{Task, TaskState};
use crate::json::{int32, is_false, lenient_bool, lenient_opt_bool, null_default, opt_int32};

/// `google.protobuf.Empty`: `{}` (and `null` or an empty body are accepted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// How SendMessage should run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts in the output.
    #[serde(
        default,
        alias = "accepted_output_modes",
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub accepted_output_modes: Vec<String>,
    /// A webhook to register for the new task in the same call (leave its `taskId` empty).
    #[serde(
        default,
        alias = "task_push_notification_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// How many recent history messages the returned task carries (`0`: none).
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Return right after the task is created instead of waiting (default: wait).
    #[serde(
        default,
        alias = "return_immediately",
        deserialize_with = "lenient_bool",
        skip_serializing_if = "is_false"
    )]
    pub return_immediately: bool,
}

impl Validate for SendMessageConfiguration {
    fn check(&self, v: &mut Violations) {
        check_history_length(v, self.history_length);
        if let Some(p) = &self.task_push_notification_config {
            v.field("taskPushNotificationConfig", |v| p.check(v));
        }
    }
}

fn check_history_length(v: &mut Violations, history_length: Option<i32>) {
    if let Some(n) = history_length
        && n < 0
    {
        v.add("historyLength", format!("must not be negative, got {n}"));
    }
}

/// SendMessage / SendStreamingMessage input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// The tenant, copied from the interface.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// REQUIRED. The message.
    #[serde(default, deserialize_with = "null_default")]
    pub message: Message,
    /// How to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Request metadata (extension data keyed by URI).
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub metadata: Metadata,
}

impl SendMessageRequest {
    /// A request sending `message` with default configuration.
    pub fn new(message: Message) -> Self {
        Self {
            message,
            ..Self::default()
        }
    }
}

impl Validate for SendMessageRequest {
    fn check(&self, v: &mut Violations) {
        v.field("message", |v| self.message.check(v));
        if let Some(c) = &self.configuration {
            v.field("configuration", |v| c.check(v));
        }
    }
}

/// GetTask input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// The tenant.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// REQUIRED. The task.
    #[serde(default, deserialize_with = "null_default")]
    pub id: TaskId,
    /// How many recent history messages to return (`0`: none).
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
}

impl Validate for GetTaskRequest {
    fn check(&self, v: &mut Violations) {
        v.require_str("id", self.id.as_str());
        check_history_length(v, self.history_length);
    }
}

/// ListTasks input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// The tenant.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// Only tasks of this context.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "null_default",
        skip_serializing_if = "ContextId::is_empty"
    )]
    pub context_id: ContextId,
    /// Only tasks in this state (`TASK_STATE_UNSPECIFIED`: any).
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "TaskState::is_unspecified"
    )]
    pub status: TaskState,
    /// Page size, 1..=100 (default 50).
    #[serde(
        default,
        alias = "page_size",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub page_size: Option<i32>,
    /// The `nextPageToken` of the previous page.
    #[serde(
        default,
        alias = "page_token",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub page_token: String,
    /// How many recent history messages each task carries (`0`: none).
    #[serde(
        default,
        alias = "history_length",
        deserialize_with = "opt_int32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this time.
    #[serde(
        default,
        alias = "status_timestamp_after",
        skip_serializing_if = "Option::is_none"
    )]
    pub status_timestamp_after: Option<Timestamp>,
    /// Include artifacts (default: the `artifacts` member is absent).
    #[serde(
        default,
        alias = "include_artifacts",
        deserialize_with = "lenient_opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub include_artifacts: Option<bool>,
}

impl TaskState {
    /// True for `TASK_STATE_UNSPECIFIED` (the proto default, omitted on output).
    pub fn is_unspecified(&self) -> bool {
        *self == TaskState::Unspecified
    }
}

/// The smallest and largest `pageSize` of ListTasks.
pub const PAGE_SIZE_RANGE: std::ops::RangeInclusive<i32> = 1..=100;

impl Validate for ListTasksRequest {
    fn check(&self, v: &mut Violations) {
        if let Some(n) = self.page_size
            && !PAGE_SIZE_RANGE.contains(&n)
        {
            v.add("pageSize", format!("must be between 1 and 100, got {n}"));
        }
        check_history_length(v, self.history_length);
    }
}

/// The result of ListTasks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// The page, newest first (always present, possibly empty).
    #[serde(default, deserialize_with = "null_default")]
    pub tasks: Vec<Task>,
    /// The token of the next page; always present, `""` on the last page.
    #[serde(default, alias = "next_page_token", deserialize_with = "null_default")]
    pub next_page_token: String,
    /// The page size used for this response.
    #[serde(default, alias = "page_size", deserialize_with = "int32")]
    pub page_size: i32,
    /// The number of matching tasks before pagination.
    #[serde(default, alias = "total_size", deserialize_with = "int32")]
    pub total_size: i32,
}

/// CancelTask input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// The tenant.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// REQUIRED. The task.
    #[serde(default, deserialize_with = "null_default")]
    pub id: TaskId,
    /// Request metadata.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub metadata: Metadata,
}

impl Validate for CancelTaskRequest {
    fn check(&self, v: &mut Violations) {
        v.require_str("id", self.id.as_str());
    }
}

/// SubscribeToTask input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// The tenant.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// REQUIRED. The task.
    #[serde(default, deserialize_with = "null_default")]
    pub id: TaskId,
}

impl Validate for SubscribeToTaskRequest {
    fn check(&self, v: &mut Violations) {
        v.require_str("id", self.id.as_str());
    }
}

/// GetTaskPushNotificationConfig input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigRequest {
    /// The tenant.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// REQUIRED. The task.
    #[serde(default, alias = "task_id", deserialize_with = "null_default")]
    pub task_id: TaskId,
    /// REQUIRED. The config.
    #[serde(default, deserialize_with = "null_default")]
    pub id: PushConfigId,
}

impl Validate for GetTaskPushNotificationConfigRequest {
    fn check(&self, v: &mut Violations) {
        v.require_str("taskId", self.task_id.as_str());
        v.require_str("id", self.id.as_str());
    }
}

/// DeleteTaskPushNotificationConfig input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigRequest {
    /// The tenant.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// REQUIRED. The task.
    #[serde(default, alias = "task_id", deserialize_with = "null_default")]
    pub task_id: TaskId,
    /// REQUIRED. The config.
    #[serde(default, deserialize_with = "null_default")]
    pub id: PushConfigId,
}

impl Validate for DeleteTaskPushNotificationConfigRequest {
    fn check(&self, v: &mut Violations) {
        v.require_str("taskId", self.task_id.as_str());
        v.require_str("id", self.id.as_str());
    }
}

/// ListTaskPushNotificationConfigs input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// The tenant.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// REQUIRED. The task.
    #[serde(default, alias = "task_id", deserialize_with = "null_default")]
    pub task_id: TaskId,
    /// Page size (0: the server's default).
    #[serde(
        default,
        alias = "page_size",
        deserialize_with = "int32",
        skip_serializing_if = "is_zero"
    )]
    pub page_size: i32,
    /// The `nextPageToken` of the previous page.
    #[serde(
        default,
        alias = "page_token",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub page_token: String,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl Validate for ListTaskPushNotificationConfigsRequest {
    fn check(&self, v: &mut Violations) {
        v.require_str("taskId", self.task_id.as_str());
        if self.page_size < 0 {
            v.add(
                "pageSize",
                format!("must not be negative, got {}", self.page_size),
            );
        }
    }
}

/// GetExtendedAgentCard input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetExtendedAgentCardRequest {
    /// The tenant.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
}

impl Validate for GetExtendedAgentCardRequest {
    fn check(&self, _v: &mut Violations) {}
}
