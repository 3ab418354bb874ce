//! Publishing an agent's event: applied to the live task under its lock, checked by the
//! lifecycle and the active extensions, written to the store (at once when it offers
//! [immediate writes](crate::store::immediate), else awaited), then delivered.

use std::sync::Arc;

use futures::future::Either;

use super::listeners::BusItem;
use super::reply::{reply_for, task_json};
use super::runtime::TaskRuntime;
use super::state::{RuntimeState, live_task_gone};
use crate::core::lifecycle::{self, HistoryPolicy, LifecycleError};
use crate::error::A2aError;
use crate::extension::Negotiated;
use crate::store::SeqEvent;
use crate::store::TaskStore;
use crate::store::immediate::{Delta, Write};
use crate::types::{StreamResponse, Task, TaskState, TaskStatus};

/// The event as the log keeps it: a `Task` event is logged as the task it created or replaced
/// (with the history the runtime keeps), as subscribers get it.
fn logged(event: &StreamResponse, task: &Task) -> StreamResponse {
    match event {
        StreamResponse::Task(_) => StreamResponse::Task(task.clone()),
        other => other.clone(),
    }
}

/// [`logged`], for an event that is not needed after: only a `Task` event is copied.
fn into_logged(event: StreamResponse, task: &Task) -> StreamResponse {
    match event {
        StreamResponse::Task(_) => StreamResponse::Task(task.clone()),
        other => other,
    }
}

/// The future of [`TaskRuntime::publish`]: a ready value when everything happened at once.
pub(crate) type Publish<'a> = Either<
    std::future::Ready<Result<u64, A2aError>>,
    futures::future::BoxFuture<'a, Result<u64, A2aError>>,
>;

/// What [`TaskRuntime::apply`] left to do.
// Returned once per event and only kept by the (boxed) deferred write: a box for the large
// variant would be one more allocation on that path, and save nothing on the other.
#[allow(clippy::large_enum_variant)]
pub(super) enum Step {
    /// TaskToWrite and delivered: the event's sequence number.
    Done(u64),
    /// Applied; the store's write is to be awaited, then the event delivered.
    Write(Applied),
    /// The store refused the write: reload the live copy from it, then fail with this error.
    Reload(crate::store::StoreError),
}

/// An applied event waiting for its store write.
pub(super) enum Applied {
    /// The event creates the task (with the task as it was before it, for subscribers).
    Create {
        event: StreamResponse,
        task: Arc<Task>,
        before: Option<Box<Task>>,
    },
    /// The event changed the live task, read at `version`.
    Update { event: StreamResponse, version: u64 },
}

impl TaskRuntime {
    /// Delivers an event that was applied and stored as `seq`.
    fn emit(st: &mut RuntimeState, seq: u64, event: StreamResponse, reply: Option<Vec<u8>>) {
        st.resolve_waiters(&event, reply);
        if st.has_subscribers() {
            st.deliver(BusItem::Event(Arc::new(SeqEvent { seq, event })));
        }
    }

    /// Delivers an event that was applied and stored (shared with the store's log).
    fn emit_shared(st: &mut RuntimeState, event: Arc<SeqEvent>, reply: Option<Vec<u8>>) {
        st.resolve_waiters(&event.event, reply);
        if st.has_subscribers() {
            st.deliver(BusItem::Event(event));
        }
    }

    /// Applies an agent's event: creates the task on its first event, checks the lifecycle,
    /// writes the store, then delivers. Resolves to the event's sequence number.
    ///
    /// When the task's lock is free and the store offers immediate writes (the in-memory store
    /// does), all of it happens here and the future is a ready value; otherwise the rest is one
    /// boxed future.
    pub(crate) fn publish<'a>(
        &'a self,
        store: &'a dyn TaskStore,
        policy: HistoryPolicy,
        extensions: &'a Negotiated,
        event: StreamResponse,
    ) -> Publish<'a> {
        let Ok(mut guard) = self.state.try_lock() else {
            return Either::Right(Box::pin(async move {
                let mut guard = self.state.lock().await;
                let step = self.apply(&mut guard, store, policy, extensions, event)?;
                self.complete(guard, store, step).await
            }));
        };
        match self.apply(&mut guard, store, policy, extensions, event) {
            Ok(Step::Done(seq)) => Either::Left(std::future::ready(Ok(seq))),
            Err(e) => Either::Left(std::future::ready(Err(e))),
            Ok(step) => Either::Right(Box::pin(self.complete(guard, store, step))),
        }
    }

    /// Applies an event under the lock and writes it when the store can do so at once. The
    /// lifecycle checks everything before it changes anything: on error the task is as it was.
    pub(super) fn apply(
        &self,
        st: &mut RuntimeState,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        extensions: &Negotiated,
        mut event: StreamResponse,
    ) -> Result<Step, A2aError> {
        if st.replied {
            return Err(LifecycleError::MessageAfterTask.into());
        }
        let version = st.version;
        let listened = st.has_subscribers();
        let Some(live) = st.task.as_mut() else {
            return self.apply_first(st, store, policy, extensions, event);
        };
        if let StreamResponse::Message(_) = event {
            return Err(LifecycleError::MessageAfterTask.into());
        }
        check_extensions(extensions, &live.status, &event)?;
        let Some(memory) = store.immediate() else {
            // The store logs the event: it keeps its payload.
            lifecycle::apply_event_if_read(Arc::make_mut(live), &mut event, policy, true)?;
            return Ok(Step::Write(Applied::Update { event, version }));
        };
        if !listened {
            // The event's payload is read by nobody: it moves into the task, which the store
            // shares and lends for the change (no copy of the task).
            let waiters = &st.waiters;
            let mut change = |task: &mut Task| {
                lifecycle::apply_event_if_read(task, &mut event, policy, false)?;
                Ok(reply_for(waiters, extensions, &event, task))
            };
            return match memory.update_lent(&self.scope, live, version, &mut change, task_json) {
                Ok(Ok((v, reply))) => {
                    st.version = v;
                    Self::emit(st, v, event, reply);
                    Ok(Step::Done(v))
                }
                Ok(Err(e)) => Err(e),
                Err(e) => Ok(Step::Reload(e)),
            };
        }
        let task = Arc::make_mut(live);
        lifecycle::apply_event_if_read(task, &mut event, policy, true)?;
        let reply = reply_for(&st.waiters, extensions, &event, task);
        let json = reply.as_deref().and_then(task_json);
        // The event still carries its payload (for subscribers): the store applies it to its
        // copy of the task rather than copy the task, and logs the event delivered.
        let shared = Arc::new(SeqEvent {
            seq: version + 1,
            event: into_logged(event, task),
        });
        let replay = |task: &mut Task| lifecycle::reapply_event(task, &shared.event, policy);
        let write = Write::Update {
            expected_version: version,
            delta: Some(Delta::new(&replay)),
        };
        let Some(live) = st.task.as_ref() else {
            return Err(live_task_gone());
        };
        match memory.write_now(&self.scope, live, json, write, Some(shared.clone())) {
            Ok(v) => {
                st.version = v;
                Self::emit_shared(st, shared, reply);
                Ok(Step::Done(v))
            }
            Err(e) => Ok(Step::Reload(e)),
        }
    }

    /// The first event: a direct message reply, or the one that creates the task (from the
    /// template; it goes back if the event is refused, while a failed store write leaves the
    /// event applied to it — the agent got the error either way).
    fn apply_first(
        &self,
        st: &mut RuntimeState,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        extensions: &Negotiated,
        mut event: StreamResponse,
    ) -> Result<Step, A2aError> {
        if let StreamResponse::Message(m) = &mut event {
            if m.context_id.is_empty()
                && let Some(p) = &st.pending
            {
                m.context_id = p.context_id.clone();
            }
            st.replied = true;
            Self::emit(st, 1, event, None);
            return Ok(Step::Done(1));
        }
        let mut task = st.pending.take().unwrap_or_else(|| {
            Arc::new(Task {
                id: self.id.clone(),
                ..Task::default()
            })
        });
        // Subscribers see the created task first (as it was before this event), then the event;
        // a `Task` event is itself the created task.
        let memory = store.immediate();
        let listened = st.has_subscribers();
        let before = (!matches!(event, StreamResponse::Task(_)) && listened)
            .then(|| Box::new(Task::clone(&task)));
        // The template is nobody else's: no copy.
        // A store without immediate writes logs every event: it keeps its payload.
        let applied = Self::apply_to_new(
            Arc::make_mut(&mut task),
            &mut event,
            policy,
            extensions,
            listened || memory.is_none(),
        );
        if let Err(e) = applied {
            st.pending = Some(task);
            return Err(e);
        }
        let Some(memory) = memory else {
            return Ok(Step::Write(Applied::Create {
                event,
                task,
                before,
            }));
        };
        let reply = reply_for(&st.waiters, extensions, &event, &task);
        let json = reply.as_deref().and_then(task_json);
        let log = listened.then(|| {
            Arc::new(SeqEvent {
                seq: 1,
                event: logged(&event, &task),
            })
        });
        match memory.write_now(&self.scope, &task, json, Write::Create, log) {
            Ok(v) => {
                Self::created(st, task, before, event, v, reply);
                Ok(Step::Done(v))
            }
            Err(e) => {
                st.pending = Some(task);
                Err(e.into())
            }
        }
    }

    /// Checks the first event and applies it to the task it creates (moving its payload when
    /// nobody but a waiter listens).
    fn apply_to_new(
        task: &mut Task,
        event: &mut StreamResponse,
        policy: HistoryPolicy,
        extensions: &Negotiated,
        listened: bool,
    ) -> Result<(), A2aError> {
        if let StreamResponse::Task(t) = event {
            if !t.id.is_empty() && t.id != task.id {
                return Err(LifecycleError::WrongTask {
                    task: task.id.to_string(),
                    context: task.context_id.to_string(),
                    event_task: t.id.to_string(),
                    event_context: t.context_id.to_string(),
                }
                .into());
            }
            t.id = task.id.clone();
            t.context_id = task.context_id.clone();
            if t.status.state == TaskState::Unspecified {
                t.status.state = TaskState::Submitted;
            }
        }
        check_extensions(extensions, &task.status, event)?;
        lifecycle::apply_event_if_read(task, event, policy, listened)?;
        Ok(())
    }

    /// The task exists (stored as `version`): it becomes the live copy, and the event goes out.
    fn created(
        st: &mut RuntimeState,
        task: Arc<Task>,
        before: Option<Box<Task>>,
        mut event: StreamResponse,
        version: u64,
        reply: Option<Vec<u8>>,
    ) {
        st.version = version;
        if let Some(before) = before {
            // The stream's own opening snapshot: no event of the log, so not one for push.
            st.send_to_subscribers(BusItem::Event(Arc::new(SeqEvent {
                seq: version.saturating_sub(1),
                event: StreamResponse::Task(*before),
            })));
        }
        if matches!(event, StreamResponse::Task(_)) && st.has_subscribers() {
            // Subscribers get the task as created (with the history the runtime keeps).
            event = StreamResponse::Task(Task::clone(&task));
        }
        st.task = Some(task);
        Self::emit(st, version, event, reply);
    }

    /// Finishes, still under the lock, what [`apply`](Self::apply) left: the awaited store
    /// write and the delivery, or the reload after a refused write.
    pub(super) async fn complete(
        &self,
        mut guard: tokio::sync::MutexGuard<'_, RuntimeState>,
        store: &dyn TaskStore,
        step: Step,
    ) -> Result<u64, A2aError> {
        let st = &mut *guard;
        match step {
            Step::Done(seq) => Ok(seq),
            Step::Reload(e) => {
                self.reload(st, store).await;
                Err(e.into())
            }
            Step::Write(Applied::Create {
                event,
                task,
                before,
            }) => match store
                .create(&self.scope, &task, Some(&logged(&event, &task)))
                .await
            {
                Ok(v) => {
                    Self::created(st, task, before, event, v, None);
                    Ok(v)
                }
                Err(e) => {
                    st.pending = Some(task);
                    Err(e.into())
                }
            },
            Step::Write(Applied::Update { event, version }) => {
                let written = match st.task.as_deref() {
                    Some(task) => store.update(&self.scope, task, version, Some(&event)).await,
                    None => return Err(live_task_gone()),
                };
                match written {
                    Ok(v) => {
                        st.version = v;
                        Self::emit(st, v, event, None);
                        Ok(v)
                    }
                    Err(e) => {
                        self.reload(st, store).await;
                        Err(e.into())
                    }
                }
            }
        }
    }

    /// Publishes `event` (retention ending an untouched task) only if the task is still
    /// interrupted at `version` with no execution running; false when it moved on.
    pub(crate) async fn publish_if_untouched(
        &self,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        version: u64,
        event: StreamResponse,
    ) -> Result<bool, A2aError> {
        let mut guard = self.state.lock().await;
        let untouched = guard.version == version
            && guard.running.is_empty()
            && guard
                .task
                .as_ref()
                .is_some_and(|t| t.status.state.is_interrupted());
        if !untouched {
            return Ok(false);
        }
        let extensions = Negotiated::default();
        let step = self.apply(&mut guard, store, policy, &extensions, event)?;
        self.complete(guard, store, step).await?;
        Ok(true)
    }
}

/// Lets the active extensions check a status change (state-machine extensions).
fn check_extensions(
    extensions: &Negotiated,
    from: &TaskStatus,
    event: &StreamResponse,
) -> Result<(), A2aError> {
    if extensions.activated.is_empty() {
        return Ok(());
    }
    let to = match event {
        StreamResponse::StatusUpdate(e) => &e.status,
        StreamResponse::Task(t) => &t.status,
        _ => return Ok(()),
    };
    extensions.check_transition(from, to)
}
