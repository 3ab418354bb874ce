//! Stream resume: replaying a task's events from the store's log.
//!
//! Our protocol extension [`RESUME_EXTENSION`]: every SSE event's `id:` is the task's sequence
//! number; a SubscribeToTask resuming after `n` (read by the binding from the SSE
//! `Last-Event-ID` header, see [`RequestContext::resume_after`]) gets every event after `n`
//! from the log, then the live ones. A subscriber that falls behind its queue resumes the same
//! way instead of being cut off.
//!
//! [`RequestContext::resume_after`]: crate::extension::RequestContext::resume_after

use std::sync::Arc;

use futures::Stream;

use crate::error::A2aError;
use crate::store::{Scope, SeqEvent, TaskStore};
use crate::types::TaskId;

/// The URI of the stream-resume extension, our protocol extension ahead of the spec (A2A issue
/// #1986); declare it in the card's `capabilities.extensions`.
///
/// - Every SSE event of a task stream carries `id: n`, the task's sequence number: gapless and
///   increasing per task; the event that produced the task's version `n` has id `n`.
/// - gRPC messages carry no id: the initial metadata `a2a-first-event-id: n` of a stream
///   names the id of its first message (when it comes within 250 ms of the stream's opening),
///   and each next message has the next id.
/// - `SubscribeToTask` with the header `Last-Event-ID: n` (gRPC: the metadata `last-event-id`)
///   answers every event after `n`, in order, from the store's log, then the live events (no
///   snapshot first). For a terminal task the stream ends after the logged events.
/// - An `n` beyond the task's last event, or one whose successors the store no longer holds
///   (retention), is answered with an invalid-params error naming `Last-Event-ID`, never with a
///   silent gap.
/// - A subscriber that falls more than its queue behind resumes from the log the same way.
pub const RESUME_EXTENSION: &str =
    "https://github.com/a2a-runtime/a2a-runtime/extensions/stream-resume/v1";

/// How many events one read of the log returns.
const PAGE: usize = 256;

/// The logged events of a task after `after` up to and including `upto`, in order, read in
/// pages; an event no longer held ends it with [`StoreError::EventsGone`](crate::store::StoreError)
/// as an error, never a gap.
pub(crate) fn replay(
    store: Arc<dyn TaskStore>,
    scope: Scope,
    id: TaskId,
    after: u64,
    upto: u64,
) -> impl Stream<Item = Result<SeqEvent, A2aError>> + Send + 'static {
    let state = (
        store,
        scope,
        id,
        after,
        Vec::<SeqEvent>::new().into_iter(),
        false,
    );
    futures::stream::unfold(
        state,
        move |(store, scope, id, mut next, mut buf, failed)| async move {
            if failed {
                return None;
            }
            loop {
                if let Some(ev) = buf.next() {
                    next = ev.seq;
                    return Some((Ok(ev), (store, scope, id, next, buf, false)));
                }
                if next >= upto {
                    return None;
                }
                let want = usize::try_from(upto - next).unwrap_or(usize::MAX).min(PAGE);
                match store.events_after(&scope, &id, next, want).await {
                    Ok(page) if page.is_empty() => {
                        let e = A2aError::invalid_field(
                            "Last-Event-ID",
                            format!("events of task {id} after {next} are no longer held"),
                        );
                        return Some((Err(e), (store, scope, id, next, buf, true)));
                    }
                    Ok(page) => {
                        let page: Vec<SeqEvent> =
                            page.into_iter().filter(|e| e.seq <= upto).collect();
                        buf = page.into_iter();
                    }
                    Err(e) => return Some((Err(e.into()), (store, scope, id, next, buf, true))),
                }
            }
        },
    )
}
