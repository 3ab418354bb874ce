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

    /// Told of each event of a task once the store has logged it as `seq` (called in order,
    /// with the task locked: it must not block). The store wrote the event's deliveries in
    /// the same write ([`TaskStore::push_outbox`](crate::store::TaskStore::push_outbox)), so
    /// this is a wake-up, not a hand-over: a dispatcher that never runs loses nothing.
    fn dispatch(&self, scope: &Scope, task_id: &TaskId, seq: u64, event: &StreamResponse);
}
