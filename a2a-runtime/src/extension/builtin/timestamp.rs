//! The Timestamp extension of the A2A samples (`extensions/timestamp/v1`), wire-compatible with
//! its Python implementation.

use serde::{Deserialize, Serialize};

use crate::a2a_extension;
use crate::error::A2aError;
use crate::extension::{Activate, Extension, ExtensionHooks, MetadataExt, RequestContext};
use crate::types::{Artifact, Message, Metadata, Role, StreamResponse, TaskState, Timestamp};

/// Adds timestamps to messages and artifacts, and records when a task's request was received
/// and when the task completed.
///
/// When a client activates it, every agent message (status messages, direct replies) and every
/// artifact the agent publishes gets an RFC 3339 UTC timestamp in its metadata under
/// `github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp`, and the extension's
/// URI in its `extensions` list. Existing timestamps are never overwritten. The task's own
/// metadata gets, under the extension's URI, `received_at` (when the request that moved it was
/// received) and, once the task is terminal or interrupted (input or auth required),
/// `completed_at`; the status updates carry the same object:
///
/// ```json
/// {"metadata": {"https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1":
///   {"received_at": "2026-12-03T00:10:00.120Z", "completed_at": "2026-12-03T00:10:00.480Z"}}}
/// ```
///
/// Enable it with `.extension(TimestampExtension::default())` on the server builder; an agent
/// reads the request's `received_at` with `ctx.extension::<TimestampExtension>()`.
#[a2a_extension(
    uri = "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1",
    metadata_key = "github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp",
    metadata = String,
    description = "Adds timestamps to messages and artifacts."
)]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimestampExtension {}

impl TimestampExtension {
    fn stamp_message(m: &mut Message, now: &str) {
        if m.role == Role::Agent && !m.has_metadata_of::<Self>() {
            m.set_metadata_of::<Self>(&now.to_owned());
        }
    }

    fn stamp_artifact(a: &mut Artifact, now: &str) {
        if !a.has_metadata_of::<Self>() {
            a.set_metadata_of::<Self>(&now.to_owned());
        }
    }

    /// Stamps every agent message and artifact in `event` that has no timestamp yet.
    pub fn stamp(event: &mut StreamResponse) {
        let now = Timestamp::now().to_rfc3339();
        match event {
            StreamResponse::Message(m) => Self::stamp_message(m, &now),
            StreamResponse::StatusUpdate(e) => {
                if let Some(m) = &mut e.status.message {
                    Self::stamp_message(m, &now);
                }
            }
            StreamResponse::ArtifactUpdate(e) => Self::stamp_artifact(&mut e.artifact, &now),
            StreamResponse::Task(t) => {
                t.artifacts
                    .iter_mut()
                    .for_each(|a| Self::stamp_artifact(a, &now));
                t.history
                    .iter_mut()
                    .for_each(|m| Self::stamp_message(m, &now));
                if let Some(m) = &mut t.status.message {
                    Self::stamp_message(m, &now);
                }
            }
        }
    }
}

impl TimestampExtension {
    /// Records `received_at` (and `completed_at` when `state` ends or interrupts the task)
    /// under the extension's URI in `metadata`.
    fn record_task(metadata: &mut Metadata, state: TaskState, received_at: &str, now: &str) {
        let mut times = serde_json::Map::with_capacity(2);
        let received = if received_at.is_empty() {
            now
        } else {
            received_at
        };
        times.insert("received_at".into(), received.into());
        if state.is_terminal() || state.is_interrupted() {
            times.insert("completed_at".into(), now.into());
        }
        metadata.insert(Self::URI.to_owned(), serde_json::Value::Object(times));
    }
}

impl ExtensionHooks for TimestampExtension {
    /// When the request was received (RFC 3339 UTC).
    type Activation = String;

    fn activate(&self, _: &[String], _: &RequestContext) -> Activate<String> {
        Activate::Activated(Timestamp::now().to_rfc3339())
    }

    fn handle_event(
        &self,
        event: &mut StreamResponse,
        received_at: &mut String,
    ) -> Result<(), A2aError> {
        Self::stamp(event);
        match event {
            StreamResponse::StatusUpdate(e) => {
                let now = Timestamp::now().to_rfc3339();
                Self::record_task(&mut e.metadata, e.status.state, received_at, &now);
            }
            StreamResponse::Task(t) => {
                let now = Timestamp::now().to_rfc3339();
                Self::record_task(&mut t.metadata, t.status.state, received_at, &now);
            }
            StreamResponse::Message(_) | StreamResponse::ArtifactUpdate(_) => {}
        }
        Ok(())
    }
}
