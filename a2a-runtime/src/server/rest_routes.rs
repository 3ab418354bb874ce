//! The routes of the HTTP+JSON binding, as the specification lists them.

use crate::protocol::Operation;

/// The REST routes: method, path below the binding's base, operation.
pub(crate) const ROUTES: &[(&str, &str, Operation)] = &[
    ("POST", "/message:send", Operation::SendMessage),
    ("POST", "/message:stream", Operation::SendStreamingMessage),
    ("GET", "/tasks", Operation::ListTasks),
    ("GET", "/tasks/{id}:subscribe", Operation::SubscribeToTask),
    ("POST", "/tasks/{id}:subscribe", Operation::SubscribeToTask),
    ("POST", "/tasks/{id}:cancel", Operation::CancelTask),
    ("GET", "/tasks/{id}", Operation::GetTask),
    (
        "POST",
        "/tasks/{taskId}/pushNotificationConfigs",
        Operation::CreateTaskPushNotificationConfig,
    ),
    (
        "GET",
        "/tasks/{taskId}/pushNotificationConfigs",
        Operation::ListTaskPushNotificationConfigs,
    ),
    (
        "GET",
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
        Operation::GetTaskPushNotificationConfig,
    ),
    (
        "DELETE",
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
        Operation::DeleteTaskPushNotificationConfig,
    ),
    ("GET", "/extendedAgentCard", Operation::GetExtendedAgentCard),
];
