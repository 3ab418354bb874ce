//! [`SeqEvent`]: one event of a task's stream with its sequence number.

use crate::types::StreamResponse;

/// One event of a task's stream, with its sequence number (gapless and strictly increasing per
/// task; the SSE `id:`).
#[derive(Clone, Debug, PartialEq)]
pub struct SeqEvent {
    /// The per-task sequence number.
    pub seq: u64,
    /// The event.
    pub event: StreamResponse,
}
