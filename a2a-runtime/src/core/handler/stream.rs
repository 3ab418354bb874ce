//! The event stream of SendStreamingMessage and SubscribeToTask: a task's events from its
//! subscriber queue, with what it missed read back from the store's log when it resumes or falls
//! behind its queue.

use std::sync::Arc;

use futures::StreamExt as _;

use super::super::events::{BusItem, EventStream, Registry, SeqEvent, Subscription, TaskRuntime};
use crate::error::A2aError;
use crate::store::TaskStore;
use crate::types::{Role, StreamResponse, TaskState};

/// What [`task_stream`] gives for a task already finished (and not resumed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OnFinished {
    /// UnsupportedOperationError (SubscribeToTask: there is nothing to subscribe to).
    Refuse,
    /// The task's snapshot alone (a repeated SendStreamingMessage: the first one's stream), also
    /// for a task waiting for the client's input.
    Snapshot,
}

/// The stream of a task subscribed to as SubscribeToTask opens it: the snapshot `first`
/// (of state `state`) and the events that follow from `sub`; with `resume_after` (a
/// `Last-Event-ID`), the logged events after it instead of the snapshot. Releases `rt` when the
/// stream ends (or at once when there is none).
pub(super) fn task_stream(
    registry: Arc<Registry>,
    store: Arc<dyn TaskStore>,
    (first, state, sub): (SeqEvent, TaskState, Subscription),
    resume_after: Option<u64>,
    on_finished: OnFinished,
) -> Result<EventStream, A2aError> {
    let rt = sub.runtime().clone();
    let release = |sub: Subscription| {
        drop(sub);
        registry.release(&rt);
    };
    if let Some(after) = resume_after {
        // Resuming: what followed `after` from the log, then the live events.
        if after > first.seq {
            release(sub);
            return Err(A2aError::invalid_field(
                "Last-Event-ID",
                format!(
                    "task {} has no event {after} yet (its last is {})",
                    rt.id, first.seq
                ),
            ));
        }
        if state.is_terminal() && after == first.seq {
            release(sub);
            return Ok(Box::pin(futures::stream::empty()));
        }
        return Ok(bus_stream(
            registry.clone(),
            store,
            sub,
            None,
            None,
            Some((after, first.seq)),
        ));
    }
    // A repeated SendStreamingMessage answers as the first one's stream did: it ended at
    // INPUT_REQUIRED (the client's turn) as well as at a terminal state.
    let repeat_ends = matches!(on_finished, OnFinished::Snapshot) && ends_stream(&first.event);
    if state.is_terminal() || repeat_ends {
        release(sub);
        return match on_finished {
            OnFinished::Refuse => Err(A2aError::UnsupportedOperation(format!(
                "task {} is {state} (terminal); there is nothing to subscribe to — use GetTask",
                rt.id
            ))),
            OnFinished::Snapshot => Ok(Box::pin(futures::stream::once(async move {
                Ok(Arc::new(first))
            }))),
        };
    }
    // The opening snapshot of an interrupted task does not end the stream: it waits for the
    // next turn.
    let rest = bus_stream(registry.clone(), store, sub, None, None, None);
    Ok(Box::pin(
        futures::stream::once(async move { Ok(Arc::new(first)) }).chain(rest),
    ))
}

/// Does this event end a stream? Terminal states do, and INPUT_REQUIRED (the client must send a
/// message); AUTH_REQUIRED keeps the stream open while credentials arrive out of band. A task
/// snapshot still INPUT_REQUIRED whose newest message is the user's is the start of the turn
/// that answers it (as a continued task's turn is logged): the turn's events follow.
pub(super) fn ends_stream(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => {
            let answered = t.history.last().is_some_and(|m| m.role == Role::User);
            t.status.state.is_terminal()
                || (t.status.state == TaskState::InputRequired && !answered)
        }
        StreamResponse::StatusUpdate(e) => {
            e.status.state.is_terminal() || e.status.state == TaskState::InputRequired
        }
        StreamResponse::ArtifactUpdate(_) => false,
    }
}

struct StreamState {
    sub: Subscription,
    first: Option<SeqEvent>,
    /// Where a subscriber that fell behind catches up from (the store's log).
    store: Arc<dyn TaskStore>,
    /// Events from the log, delivered before the queue's.
    replay: Option<futures::stream::BoxStream<'static, Result<SeqEvent, A2aError>>>,
    /// The sequence number of the last event delivered.
    last: u64,
    /// End when this execution ends (streams opened by SendStreamingMessage).
    execution: Option<u64>,
    done: bool,
    guard: ReleaseGuard,
}

/// Releases the runtime when the stream is dropped (client gone or stream finished), after the
/// subscription (declared before it in [`StreamState`]) was dropped.
struct ReleaseGuard {
    rt: Arc<TaskRuntime>,
    registry: Arc<Registry>,
}

impl Drop for ReleaseGuard {
    fn drop(&mut self) {
        self.registry.release(&self.rt);
    }
}

/// A stream of a task's events from its queue `sub`, opening with `first` and, with `resume`
/// `(after, upto)`, the logged events after `after` up to `upto` (where `sub` starts).
pub(super) fn bus_stream(
    registry: Arc<Registry>,
    store: Arc<dyn TaskStore>,
    sub: Subscription,
    first: Option<SeqEvent>,
    execution: Option<u64>,
    resume: Option<(u64, u64)>,
) -> EventStream {
    let rt = sub.runtime().clone();
    let replay = resume.map(|(after, upto)| {
        super::super::resume::replay(store.clone(), rt.scope.clone(), rt.id.clone(), after, upto)
            .boxed()
    });
    let state = StreamState {
        sub,
        first,
        store,
        replay,
        last: resume.map_or(0, |(after, _)| after),
        execution,
        done: false,
        guard: ReleaseGuard { rt, registry },
    };
    Box::pin(futures::stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        if let Some(first) = s.first.take() {
            // The opening snapshot of a continued task is INPUT_REQUIRED or AUTH_REQUIRED: the
            // turn that follows is still to come, so only a terminal snapshot ends the stream.
            s.done =
                matches!(&first.event, StreamResponse::Task(t) if t.status.state.is_terminal());
            s.last = first.seq;
            return Some((Ok(Arc::new(first)), s));
        }
        loop {
            if let Some(replay) = s.replay.as_mut() {
                match replay.next().await {
                    Some(Ok(ev)) => {
                        s.done = ends_stream(&ev.event);
                        s.last = ev.seq;
                        return Some((Ok(Arc::new(ev)), s));
                    }
                    Some(Err(e)) => {
                        s.done = true;
                        return Some((Err(e), s));
                    }
                    None => s.replay = None,
                }
            }
            match s.sub.recv().await {
                Some(BusItem::Event(ev)) => {
                    if ev.seq <= s.last && s.last > 0 {
                        // Already delivered from the log.
                        continue;
                    }
                    s.done = ends_stream(&ev.event);
                    s.last = ev.seq;
                    // Shared with the log and the other subscribers: no copy.
                    return Some((Ok(ev), s));
                }
                Some(BusItem::ExecutionEnded { execution, error }) => {
                    if s.execution == Some(execution) {
                        s.done = true;
                        return error.map(|e| (Err(e), s));
                    }
                }
                Some(BusItem::Lagged) => {
                    // Fell behind its queue: a new queue from now on, and what it missed from
                    // the log (an error only if the log no longer holds it).
                    let rt = s.guard.rt.clone();
                    if let Some((upto, sub)) = rt.resubscribe().await {
                        s.sub = sub;
                        let replay = super::super::resume::replay(
                            s.store.clone(),
                            rt.scope.clone(),
                            rt.id.clone(),
                            s.last,
                            upto,
                        );
                        s.replay = Some(replay.boxed());
                        continue;
                    }
                    s.done = true;
                    let msg = format!(
                        "this subscriber fell more than {} events behind task {} and was disconnected; resubscribe to get the task as it stands",
                        s.sub.buffer(),
                        s.guard.rt.id
                    );
                    return Some((Err(A2aError::Internal(msg)), s));
                }
                None => return None,
            }
        }
    }))
}
