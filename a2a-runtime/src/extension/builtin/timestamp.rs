//! The Timestamp extension of the A2A samples (`extensions/timestamp/v1`), wire-compatible with
//! its Python implementation.

use serde::{Deserialize, Serialize};

use crate::a2a_extension;
use crate::error::A2aError;
use crate::extension::{ExtensionHooks, MetadataExt};
use crate::types::{Artifact, Message, Role, StreamResponse, Timestamp as WireTimestamp};

/// Adds timestamps to messages and artifacts.
///
/// When a client activates it, every agent message (status messages, direct replies) and every
/// artifact the agent publishes gets an RFC 3339 UTC timestamp in its metadata under
/// `github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp`, and the extension's
/// URI in its `extensions` list. Existing timestamps are never overwritten. Enable it with
/// `.extension(Timestamp::default())` on the server builder.
#[a2a_extension(
    uri = "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1",
    metadata_key = "github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp",
    metadata = String,
    description = "Adds timestamps to messages and artifacts."
)]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timestamp {}

impl Timestamp {
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
        let now = WireTimestamp::now().to_rfc3339();
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

impl ExtensionHooks for Timestamp {
    type Activation = ();

    fn handle_event(&self, event: &mut StreamResponse, _: &mut ()) -> Result<(), A2aError> {
        Self::stamp(event);
        Ok(())
    }
}
