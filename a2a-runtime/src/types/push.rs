//! Push notification configuration: [`TaskPushNotificationConfig`] and [`AuthenticationInfo`].

use serde::{Deserialize, Serialize};

use super::common::{PushConfigId, TaskId, Validate, Violations};
use crate::json::null_default;

/// Credentials the server sends when it calls a webhook (`Authorization: <scheme> <credentials>`).
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// REQUIRED. An HTTP authentication scheme such as `Bearer` or `Basic` (case-insensitive).
    #[serde(default, deserialize_with = "null_default")]
    pub scheme: String,
    /// The credentials.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub credentials: String,
}

impl std::fmt::Debug for AuthenticationInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthenticationInfo")
            .field("scheme", &self.scheme)
            .field("credentials", &"<redacted>")
            .finish()
    }
}

impl Validate for AuthenticationInfo {
    fn check(&self, v: &mut Violations) {
        v.require_str("scheme", &self.scheme);
    }
}

/// A webhook registered for a task's updates. Used as input and output in every binding.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// The tenant (must equal the interface's tenant when one is set).
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// The config id; the server assigns one when the client leaves it empty.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "PushConfigId::is_empty"
    )]
    pub id: PushConfigId,
    /// The task (empty inside `SendMessageConfiguration`).
    #[serde(
        default,
        alias = "task_id",
        deserialize_with = "null_default",
        skip_serializing_if = "TaskId::is_empty"
    )]
    pub task_id: TaskId,
    /// REQUIRED. The webhook URL.
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
    /// A token unique to this task or session, for the receiver to check.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub token: String,
    /// Credentials for calling the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

impl std::fmt::Debug for TaskPushNotificationConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskPushNotificationConfig")
            .field("tenant", &self.tenant)
            .field("id", &self.id)
            .field("task_id", &self.task_id)
            .field("url", &self.url)
            .field(
                "token",
                &if self.token.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .field("authentication", &self.authentication)
            .finish()
    }
}

impl Validate for TaskPushNotificationConfig {
    fn check(&self, v: &mut Violations) {
        v.require_str("url", &self.url);
        if let Some(a) = &self.authentication {
            v.field("authentication", |v| a.check(v));
        }
    }
}

/// The result of ListTaskPushNotificationConfigs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(default, deserialize_with = "null_default")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// The token of the next page; empty on the last page.
    #[serde(
        default,
        alias = "next_page_token",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub next_page_token: String,
}
