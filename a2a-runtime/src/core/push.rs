//! [`PushDispatcher`]: what the core calls when push notifications are enabled.

use crate::error::A2aError;
use crate::store::Scope;
use crate::types::{StreamResponse, TaskId, TaskPushNotificationConfig};

/// The push notification side of a server, as the request handler sees it: it checks configs
/// as they are registered and is handed every event of every task.
///
/// [`crate::push::PushSender`] is the implementation; a handler without one answers every push
/// operation with PushNotificationNotSupported.
#[async_trait::async_trait]
pub trait PushDispatcher: Send + Sync + std::fmt::Debug + 'static {
    /// Checks a config about to be stored; errors name the field under `prefix` (`""`, or
    /// `configuration.taskPushNotificationConfig.` inside SendMessage).
    async fn check(
        &self,
        config: &TaskPushNotificationConfig,
        prefix: &str,
    ) -> Result<(), A2aError>;

    /// Takes an event of a task, as it was stored as `seq` (called in order, with the task
    /// locked: it must not block).
    fn dispatch(&self, scope: &Scope, task_id: &TaskId, seq: u64, event: &StreamResponse);
}
