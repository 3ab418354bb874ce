//! How the in-memory store holds one task: a live task as a value, shared with its runtime, a
//! finished one encoded (see `frozen.rs`), with the tail of its event log; and how a write
//! replaces it.

use std::sync::Arc;

use super::super::encoded_task::EncodedTask;
use super::super::immediate::Delta;
use super::super::replay_log::{ChunkRef, Invalidates, Log, effect, same_shape};
use super::super::{SeqEvent, StoreError, TaskQuery};
use crate::types::{StreamResponse, Task};

/// A task as the store holds it: its version, when it was last written, the task, and the
/// tail of its event log.
#[derive(Debug)]
pub(super) struct Entry {
    /// Incremented by every write.
    pub(super) version: u64,
    /// When it was last written (ms since the epoch), for retention.
    pub(super) updated_ms: i64,
    pub(super) held: MemoryTask,
    /// The tail of the task's event log.
    pub(super) log: Log,
}

/// A task as held: live tasks (and the rare finished task whose encoding would not give it back
/// exactly) as values, finished tasks encoded.
#[derive(Debug)]
pub(super) enum MemoryTask {
    /// Shared, copy on write, with the task's runtime when it wrote it through an
    /// [immediate write](crate::store::immediate): the live copy costs no copy of its own.
    Value(Arc<Task>),
    Encoded(EncodedTask),
}

impl MemoryTask {
    /// `task` as held, from its `json` when the writer has it (see
    /// [`ImmediateWrites::write_now`](crate::store::immediate::ImmediateWrites::write_now));
    /// a live one shared when the writer gives its `Arc`, copied otherwise.
    pub(super) fn of(task: TaskToWrite<'_>, json: Option<&[u8]>) -> Self {
        if task.status.state.is_terminal()
            && let Some(frozen) = json
                .and_then(|json| EncodedTask::from_json(&task, json))
                .or_else(|| EncodedTask::encode(&task))
        {
            return MemoryTask::Encoded(frozen);
        }
        MemoryTask::Value(task.to_arc())
    }

    /// The listing position's timestamp (as in [`ListCursor::of`](crate::store::ListCursor::of)).
    pub(super) fn millis(&self) -> i64 {
        match self {
            MemoryTask::Value(t) => t.status.timestamp.map_or(0, |t| t.millis()),
            MemoryTask::Encoded(f) => f.millis(),
        }
    }

    pub(super) fn is_terminal(&self) -> bool {
        match self {
            MemoryTask::Value(t) => t.status.state.is_terminal(),
            MemoryTask::Encoded(f) => f.state().is_terminal(),
        }
    }

    pub(super) fn matches(&self, query: &TaskQuery) -> bool {
        match self {
            MemoryTask::Value(t) => {
                query.context_id.as_ref().is_none_or(|c| &t.context_id == c)
                    && query.state.is_none_or(|st| t.status.state == st)
                    && query
                        .status_timestamp_after
                        .is_none_or(|ts| t.status.timestamp.is_some_and(|x| x >= ts))
            }
            MemoryTask::Encoded(f) => {
                query
                    .context_id
                    .as_ref()
                    .is_none_or(|c| f.context_id() == c.as_str().as_bytes())
                    && query.state.is_none_or(|st| f.state() == st)
                    && query
                        .status_timestamp_after
                        .is_none_or(|ts| f.timestamp().is_some_and(|x| x >= ts))
            }
        }
    }

    /// A copy to turn into a [`Task`] once the store's lock is released.
    pub(super) fn snapshot(&self) -> Snapshot {
        match self {
            MemoryTask::Value(t) => Snapshot::Value(Arc::clone(t)),
            MemoryTask::Encoded(f) => Snapshot::Encoded(f.clone()),
        }
    }
}

/// The task a write stores: the writer's `Arc` (the runtime's copy, see
/// [immediate writes](crate::store::immediate)), shared, or a borrowed task, copied.
#[derive(Clone, Copy)]
pub(super) enum TaskToWrite<'a> {
    Shared(&'a Arc<Task>),
    Borrowed(&'a Task),
}

impl TaskToWrite<'_> {
    /// The task as a live value is held: shared, or a copy.
    pub(super) fn to_arc(self) -> Arc<Task> {
        match self {
            TaskToWrite::Shared(task) => Arc::clone(task),
            TaskToWrite::Borrowed(task) => Arc::new(task.clone()),
        }
    }
}

impl std::ops::Deref for TaskToWrite<'_> {
    type Target = Task;
    fn deref(&self) -> &Task {
        match *self {
            TaskToWrite::Shared(task) => task,
            TaskToWrite::Borrowed(task) => task,
        }
    }
}

impl<'a> From<&'a Task> for TaskToWrite<'a> {
    fn from(task: &'a Task) -> Self {
        TaskToWrite::Borrowed(task)
    }
}

impl<'a> From<&'a Arc<Task>> for TaskToWrite<'a> {
    fn from(task: &'a Arc<Task>) -> Self {
        TaskToWrite::Shared(task)
    }
}

/// A task taken out under the lock; copied or decoded once it is released.
pub(super) enum Snapshot {
    Value(Arc<Task>),
    Encoded(EncodedTask),
}

impl Snapshot {
    pub(super) fn into_task(self, id: &str) -> Result<Task, StoreError> {
        match self {
            Snapshot::Value(t) => Ok(Arc::unwrap_or_clone(t)),
            Snapshot::Encoded(f) => f.decode(id),
        }
    }
}

/// Puts `task`, written as an update (applying `delta` when the writer knows it), in `entry`;
/// returns the chunk `event` is logged as by reference, if any.
pub(super) fn replace_held(
    entry: &mut Entry,
    task: TaskToWrite<'_>,
    json: Option<&[u8]>,
    delta: Option<Delta<'_>>,
    event: Option<&Arc<SeqEvent>>,
) -> Option<ChunkRef> {
    let mut chunk = None;
    match &mut entry.held {
        // A live task stays live: apply the event to its copy when the writer says what it was
        // (a streamed chunk costs its own size, not the task's). Otherwise the writer's task:
        // shared, or a plain copy (`clone_from`, which compares part by part to copy only what
        // changed, walks both copies and costs more: a 100-chunk stream ran at 79k events/s
        // against 154k).
        MemoryTask::Value(held) if !task.status.state.is_terminal() => {
            // The logged chunks keep their parts in this copy: the event may take some away.
            let (invalidates, planned) = match (&delta, event) {
                (Some(_), Some(e)) => effect(held, &e.event),
                _ => (Invalidates::All, None),
            };
            entry.log.materialize(Some(held), invalidates);
            if delta.is_some_and(|d| d.apply_to(Arc::make_mut(held))) {
                // Logged by reference when the parts are where the plan put them.
                chunk = planned.filter(|c| c.fits(held));
            } else {
                entry.log.materialize(Some(held), Invalidates::All);
                *held = task.to_arc();
            }
            debug_assert!(**held == *task, "the delta gave another task");
            debug_assert!(
                chunk.is_none_or(|c| event.map(|e| &e.event) == c.event(held).as_ref()),
                "a chunk logged by reference reads back as another event"
            );
        }
        held => {
            // Finishing (or a finished task written again): a status update leaves a live
            // copy's artifacts as they were, and the writer's task is that copy with the event
            // applied, so the logged chunks keep their parts (the shapes are checked; comparing
            // the parts themselves, cold by now, cost 12% of the SSE workload). Anything else
            // turns them into events first.
            if entry.log.chunks() > 0 {
                let keeps = matches!(held, MemoryTask::Value(t) if same_shape(t, &task))
                    && event.is_some_and(|e| matches!(e.event, StreamResponse::StatusUpdate(_)));
                debug_assert!(
                    !keeps || matches!(held, MemoryTask::Value(t) if t.artifacts == task.artifacts),
                    "a status update changed the artifacts"
                );
                if !keeps {
                    materialize_all(entry, task.id.as_str());
                }
            }
            entry.held = MemoryTask::of(task, json);
        }
    }
    chunk
}

/// Turns the chunks `entry`'s log reads from its task into events of their own.
pub(super) fn materialize_all(entry: &mut Entry, id: &str) {
    if entry.log.chunks() == 0 {
        return;
    }
    let decoded;
    let before = match &entry.held {
        MemoryTask::Value(t) => Some(&**t),
        MemoryTask::Encoded(f) => {
            decoded = f.decode(id).ok();
            decoded.as_ref()
        }
    };
    entry.log.materialize(before, Invalidates::All);
}
