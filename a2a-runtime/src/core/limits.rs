//! [`Limits`]: the bounds the server enforces on requests and on what it keeps.

use std::time::Duration;

/// Request and retention limits. Every limit is enforced with a clear, spec-shaped error.
///
/// ```
/// use a2a_runtime::core::Limits;
/// let limits = Limits { max_parts_per_message: 10, ..Limits::default() };
/// assert_eq!(limits.max_body_bytes, 4 * 1024 * 1024);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body accepted (bytes). Default 4 MiB.
    pub max_body_bytes: usize,
    /// Deepest JSON nesting accepted. Default 64.
    pub max_json_depth: usize,
    /// Most parts in one message. Default 100.
    pub max_parts_per_message: usize,
    /// Most history messages kept per task; the oldest are trimmed. Default 1,000.
    pub max_history_messages: usize,
    /// Most push notification configs per task. Default 10.
    pub max_push_configs_per_task: usize,
    /// Events buffered per stream subscriber before it is disconnected as too slow. Default 1,024.
    pub subscriber_buffer: usize,
    /// How long CancelTask waits for the agent's cancel hook. Default 5 s.
    pub cancel_grace: Duration,
    /// Longest wait for the first byte of a request body, and between two reads of it, before
    /// the request is answered 408 Request Timeout and its connection closed. Default 10 s.
    pub body_idle_timeout: Duration,
    /// Longest time a whole request body may take to arrive (a body trickled slowly is cut
    /// after it, answered 408). Default 30 s.
    pub body_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 4 * 1024 * 1024,
            max_json_depth: crate::json::DEFAULT_MAX_DEPTH,
            max_parts_per_message: 100,
            max_history_messages: 1_000,
            max_push_configs_per_task: 10,
            subscriber_buffer: 1_024,
            cancel_grace: Duration::from_secs(5),
            body_idle_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
        }
    }
}
