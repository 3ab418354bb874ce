//! [`StoreError`]: what a store answers when it cannot do what was asked.

use crate::error::A2aError;
use crate::types::TaskId;

/// A store failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A versioned write lost against a concurrent writer.
    #[error("task {task_id} was changed concurrently (expected version {expected}, found {found})")]
    Conflict {
        /// The task.
        task_id: TaskId,
        /// The version the writer read.
        expected: u64,
        /// The version in the store.
        found: u64,
    },
    /// `create` for an id that exists, or `update` for one that does not.
    #[error("task {0} {1}")]
    Exists(TaskId, &'static str),
    /// A page token that this store did not issue.
    #[error("invalid page token")]
    InvalidPageToken,
    /// Events a reader asked for are no longer held (purged by retention).
    #[error(
        "events of task {task_id} after {after} are no longer held (the oldest held is {oldest})"
    )]
    EventsGone {
        /// The task.
        task_id: TaskId,
        /// The sequence number the reader asked to continue after.
        after: u64,
        /// The oldest sequence number still held (0 when none is).
        oldest: u64,
    },
    /// The store holds as many tasks as it may, and all of them are live (none may be evicted
    /// to make room).
    #[error("the task store holds its maximum of {0} tasks, all of them live; retry later")]
    Full(usize),
    /// The push outbox holds as many waiting deliveries as it may (its documented bound):
    /// the write that would pass it is refused whole, its event included.
    #[error("the push outbox holds its maximum of {0} waiting deliveries; retry later")]
    OutboxFull(usize),
    /// The backend failed.
    #[error("store backend error: {0}")]
    Backend(String),
    /// A secret stored encrypted could not be sealed or opened (no key, or another key than
    /// the one it was sealed with), or the key itself is not valid.
    #[error("store secrets: {0}")]
    Secrets(String),
}

impl From<StoreError> for A2aError {
    fn from(e: StoreError) -> Self {
        match &e {
            StoreError::InvalidPageToken => {
                A2aError::invalid_field("pageToken", "is not a token this server issued")
            }
            StoreError::EventsGone { .. } => {
                A2aError::invalid_field("Last-Event-ID", e.to_string())
            }
            StoreError::Full(_) | StoreError::OutboxFull(_) => A2aError::Unavailable(e.to_string()),
            other => A2aError::Internal(other.to_string()),
        }
    }
}
