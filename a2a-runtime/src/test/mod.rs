//! Helpers to test an agent the way a client sees it: over real HTTP, on both bindings
//! (feature `test-util`, meant for `[dev-dependencies]`).
//!
//! - [`TestServer`] starts an [`A2aServer`](crate::server::A2aServer) on `127.0.0.1` at a free
//!   port and stops it when dropped. It sends an operation over JSON-RPC or HTTP+JSON
//!   ([`Binding`]) and answers the parsed JSON, or the error with its code and details
//!   ([`ErrorAnswer`]); [`TestServer::request`] sends it with chosen headers and answers the raw
//!   HTTP status, headers and body ([`Answer`]).
//! - [`EventStream`] reads a streaming answer, checking what every A2A stream must hold (event
//!   ids that increase, JSON-RPC envelopes echoing the request id); [`SseReader`] is the plain
//!   Server-Sent Events reader under it, for any byte stream (reqwest, actix).
//!
//! ```
//! use a2a_runtime::A2aError;
//! use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
//! use a2a_runtime::test::{Binding, TestServer};
//! use a2a_runtime::types::{Artifact, Part};
//! use serde_json::json;
//!
//! struct Echo;
//!
//! impl AgentExecutor for Echo {
//!     async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
//!         events.artifact(Artifact::new([Part::text(format!("echo: {}", ctx.text()))])).await?;
//!         events.complete().await
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), a2a_runtime::test::ErrorAnswer> {
//! let server = TestServer::for_agent(Echo).await;
//! let params = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
//! for binding in Binding::BOTH {
//!     let task = server.send_task(binding, params.clone()).await;
//!     assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
//!     assert_eq!(task["artifacts"][0]["parts"][0]["text"], "echo: hi");
//!
//!     let events = server.stream(binding, "SendStreamingMessage", params.clone()).await?;
//!     let events = events.collect().await;
//!     assert_eq!(events.last().and_then(|e| e.state()), Some("TASK_STATE_COMPLETED"));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! These are test helpers: where a test can only fail, they panic with a message saying what
//! was wrong (a server that does not start, an answer that is not JSON, a wait longer than
//! [`TIMEOUT`]), as `assert!` does. Each function says when in its `# Panics` section. Only
//! [`SseReader`] returns errors, for tests about malformed streams.

mod answer;
mod rest;
mod server;
mod sse;

use std::future::Future;
use std::time::Duration;

pub use answer::{Answer, ErrorAnswer};
pub use server::Request;
pub use server::{TestServer, agent_card};
pub use sse::{Event, EventStream, SseError, SseFrame, SseReader};

/// How long a helper waits for the server (an answer, the next event) before it fails the test.
/// Only a safety net that turns a hang into a failure: tests never wait on it to order things.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Awaits `f`, failing the test if it takes longer than [`TIMEOUT`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let n = a2a_runtime::test::within("a ready future", async { 7 }).await;
/// assert_eq!(n, 7);
/// # }
/// ```
///
/// # Panics
/// When `f` is not ready within [`TIMEOUT`]: "timed out after 30s: {what}".
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(TIMEOUT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {TIMEOUT:?}: {what}"),
    }
}

/// One of the two HTTP bindings of a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// JSON-RPC 2.0, POSTed to the interface URL.
    JsonRpc,
    /// HTTP+JSON (REST): one route per operation.
    Rest,
}

impl Binding {
    /// Both bindings, for a test that runs the same scenario on each.
    pub const BOTH: [Binding; 2] = [Binding::JsonRpc, Binding::Rest];
}

/// The name of the only member of a oneof wrapper (`task`, `message`, `statusUpdate`, ...).
///
/// # Panics
/// When `v` is not an object with exactly one member.
fn one_member(v: &serde_json::Value) -> &str {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    assert_eq!(obj.len(), 1, "a oneof wrapper has exactly one member: {v}");
    obj.keys().next().map(String::as_str).unwrap_or_default()
}
