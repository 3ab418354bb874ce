//! How the SQL stores' values become columns and back, and how driver errors become store
//! errors.

use crate::store::StoreError;
use crate::store::sql_writer::Failure;
use crate::types::{StreamResponse, Task, TaskPushNotificationConfig};

/// The status timestamp column of `task` (milliseconds since the epoch, 0 when unset, as in
/// [`ListCursor::of`](crate::store::ListCursor::of)).
pub(in crate::store) fn status_ms(task: &Task) -> i64 {
    task.status.timestamp.map_or(0, |t| t.millis())
}

/// A version or sequence number as a column (`BIGINT`).
pub(in crate::store) fn to_i64(n: u64) -> Result<i64, StoreError> {
    i64::try_from(n).map_err(|_| StoreError::Backend(format!("{n} exceeds the column range")))
}

/// A column back as a version or sequence number.
pub(in crate::store) fn to_u64(n: i64) -> Result<u64, StoreError> {
    u64::try_from(n).map_err(|_| StoreError::Backend(format!("negative counter {n} in the store")))
}

/// A task as its `body` column (ProtoJSON).
pub(in crate::store) fn encode_task(task: &Task) -> Result<String, StoreError> {
    serde_json::to_string(task).map_err(|e| StoreError::Backend(format!("encode task: {e}")))
}

/// A task's `body` column back as the task.
pub(in crate::store) fn decode_task(json: &str) -> Result<Task, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Backend(format!("decode task: {e}")))
}

/// An event as its `body` column in the event log (ProtoJSON).
pub(in crate::store) fn encode_event(event: &StreamResponse) -> Result<String, StoreError> {
    serde_json::to_string(event).map_err(|e| StoreError::Backend(format!("encode event: {e}")))
}

/// An event log's `body` column back as the event.
pub(in crate::store) fn decode_event(json: &str) -> Result<StreamResponse, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Backend(format!("decode event: {e}")))
}

/// A push config as its `body` column (ProtoJSON).
pub(in crate::store) fn encode_config(
    config: &TaskPushNotificationConfig,
) -> Result<String, StoreError> {
    serde_json::to_string(config)
        .map_err(|e| StoreError::Backend(format!("encode push config: {e}")))
}

/// A push config's `body` column back as the config.
pub(in crate::store) fn decode_config(
    json: &str,
) -> Result<TaskPushNotificationConfig, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Backend(format!("decode push config: {e}")))
}

/// A driver error as a store error.
pub(in crate::store) fn backend(e: sqlx::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// A driver error within a batched write (it aborts the transaction).
pub(in crate::store) fn driver(e: sqlx::Error) -> Failure {
    Failure::Driver(backend(e))
}
