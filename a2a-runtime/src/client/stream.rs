//! What a streaming call gives: a stream of events, and when it may end.

use std::pin::Pin;

use futures::Stream;

use super::error::ClientError;
use crate::types::{StreamResponse, TaskState};

/// A stream of events from SendStreamingMessage or SubscribeToTask.
pub type ClientStream = Pin<Box<dyn Stream<Item = Result<StreamResponse, ClientError>> + Send>>;

/// Is this event one after which a server may close the stream?
pub(crate) fn is_final(e: &StreamResponse) -> bool {
    let final_state = |s: TaskState| s.is_terminal() || s.is_interrupted();
    match e {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => final_state(t.status.state),
        StreamResponse::StatusUpdate(u) => final_state(u.status.state),
        StreamResponse::ArtifactUpdate(_) => false,
    }
}
