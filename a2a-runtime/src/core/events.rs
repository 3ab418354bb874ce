//! Per-task ordered event streams.
//!
//! Each live task has one [`TaskRuntime`]: the task as it stands, its version, and the parties
//! listening to it. Every event an agent publishes is applied to the task in place, written to
//! the store, and delivered with a sequence number (the task's version after the write) while
//! the task is locked, so every subscriber sees the same events in the same order and a snapshot
//! taken with a subscription is exactly the state before the next event.
//!
//! Two kinds of listener, each paying only for what it needs:
//! - a **subscriber** (a stream: SendStreamingMessage, SubscribeToTask) gets every event through
//!   its own bounded queue of [`Limits::subscriber_buffer`](crate::core::Limits::subscriber_buffer)
//!   events, allocated when it subscribes. A subscriber that falls further behind gets an error
//!   item and its stream ends (the client resubscribes to get the task as it stands); other
//!   subscribers and the agent are unaffected.
//! - a **waiter** (a blocking SendMessage) gets one answer when its wait ends: the task as it
//!   stands when it reached a terminal or interrupted state, the agent's direct message, or the
//!   agent's error.
//!
//! A task nobody listens to costs no channel at all.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use futures::future::Either;
use smallvec::SmallVec;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::lifecycle::{self, HistoryPolicy, LifecycleError};
use super::push::PushDispatcher;
use crate::FastHash;
use crate::error::A2aError;
use crate::extension::Negotiated;
pub use crate::store::SeqEvent;
use crate::store::immediate::{Delta, Write};
use crate::store::{Scope, TaskStore};
use crate::types::{Message, StreamResponse, Task, TaskId, TaskState, TaskStatus};

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

/// A stream of task events, as returned by the streaming operations.
///
/// An event is shared with the task's other subscribers and its replay log: read it through
/// the `Arc`, or change a copy of it ([`Arc::make_mut`]).
pub type EventStream = Pin<Box<dyn Stream<Item = Result<Arc<SeqEvent>, A2aError>> + Send>>;

/// What a subscriber receives.
#[derive(Clone, Debug)]
pub(crate) enum BusItem {
    Event(Arc<SeqEvent>),
    /// An execution of the agent returned (with its error, if it failed before any event).
    ExecutionEnded {
        execution: u64,
        error: Option<A2aError>,
    },
    /// The subscriber fell more than its buffer behind; nothing follows.
    Lagged,
}

/// How a blocking SendMessage's wait ended.
#[derive(Debug)]
pub(crate) enum WaitOutcome {
    /// The agent replied with a direct message.
    Message(Message),
    /// The task as it stood when the wait ended (shared with the runtime until it changes),
    /// and the SendMessage result `{"task":…}` when the runtime encoded it (see
    /// [`reply_for`]).
    Task(Arc<Task>, Option<bytes::Bytes>),
    /// The agent failed before publishing anything.
    Failed(A2aError),
}

/// A blocking SendMessage waiting for its execution.
#[derive(Debug)]
struct Waiter {
    execution: u64,
    /// Answer as soon as the task exists (`returnImmediately` on a new task).
    until_created: bool,
    tx: oneshot::Sender<WaitOutcome>,
}

#[derive(Debug)]
pub(crate) struct RuntimeState {
    /// The task; `None` until the agent's first event creates it. Shared (copy on write) with
    /// the blocking requests it answered and with the in-memory store that holds it, so that
    /// neither costs a copy.
    pub(crate) task: Option<Arc<Task>>,
    /// The store version of `task` (also the sequence number of its last event).
    pub(crate) version: u64,
    /// A template for a task not created yet: ids and the user message that started it (in
    /// the allocation it will live in once created).
    pub(crate) pending: Option<Arc<Task>>,
    /// True once a direct Message reply was published (no task will exist).
    pub(crate) replied: bool,
    /// Executions currently running, with their cancellation tokens (the usual one inline: no
    /// allocation per task).
    pub(crate) running: SmallVec<[(u64, CancellationToken); 1]>,
    /// The queues of the streams listening to this task.
    subscribers: Vec<Queue>,
    /// Blocking requests waiting for an execution.
    waiters: SmallVec<[Waiter; 1]>,
    /// Where the task's events go for push notifications (`None` when push is off).
    push: Option<Box<PushTap>>,
}

/// A task's tap to the push dispatcher: every delivered event also goes there.
#[derive(Debug)]
struct PushTap {
    dispatcher: Arc<dyn PushDispatcher>,
    scope: Scope,
    id: TaskId,
}

impl RuntimeState {
    fn new(task: Option<Task>, version: u64, pending: Option<Task>) -> Self {
        Self {
            task: task.map(Arc::new),
            version,
            pending: pending.map(Arc::new),
            replied: false,
            running: SmallVec::new(),
            subscribers: Vec::new(),
            waiters: SmallVec::new(),
            push: None,
        }
    }

    /// True when someone will receive a delivered event (a subscriber, or push).
    fn has_subscribers(&self) -> bool {
        !self.subscribers.is_empty() || self.push.is_some()
    }

    /// Hands an event to push, when it is on.
    fn tap(&self, seq: u64, event: &StreamResponse) {
        if let Some(tap) = &self.push {
            tap.dispatcher.dispatch(&tap.scope, &tap.id, seq, event);
        }
    }

    /// Hands `item` to every subscriber; one whose queue is full gets [`BusItem::Lagged`] in its
    /// last slot and is dropped, one that went away is forgotten.
    fn deliver(&mut self, item: BusItem) {
        if let BusItem::Event(ev) = &item {
            self.tap(ev.seq, &ev.event);
        }
        self.send_to_subscribers(item);
    }

    /// Hands `item` to every subscriber, as [`deliver`](Self::deliver) does, without push.
    fn send_to_subscribers(&mut self, item: BusItem) {
        self.subscribers.retain(|Queue { tx, .. }| {
            if tx.capacity() <= 1 {
                let _ = tx.try_send(BusItem::Lagged);
                return false;
            }
            tx.try_send(item.clone()).is_ok()
        });
    }

    /// Answers the waiters whose wait this event ends (the first gets `reply`, the event's
    /// encoded result from [`reply_for`]).
    fn resolve_waiters(&mut self, event: &StreamResponse, reply: Option<Vec<u8>>) {
        if self.waiters.is_empty() {
            return;
        }
        let mut reply = reply.map(bytes::Bytes::from);
        let ends = ends_wait(event);
        let mut i = 0;
        while i < self.waiters.len() {
            if ends || self.waiters[i].until_created {
                let w = self.waiters.swap_remove(i);
                let outcome = match (event, &self.task) {
                    (StreamResponse::Message(m), _) => WaitOutcome::Message(m.clone()),
                    (_, Some(task)) => WaitOutcome::Task(task.clone(), reply.take()),
                    (_, None) => {
                        WaitOutcome::Failed(A2aError::Internal("the task was not created".into()))
                    }
                };
                let _ = w.tx.send(outcome);
            } else {
                i += 1;
            }
        }
    }
}

/// The member of a SendMessage result that holds a task (see [`reply_for`]).
const REPLY_MEMBER: &str = "task";

/// The room a reply is encoded in at first (an echo task's takes about 450 bytes).
const REPLY_CAPACITY: usize = 1024;

/// The result of the blocking SendMessage among `waiters` that `event` answers, `{"task":…}`
/// with `task` as the event leaves it, encoded before the store's write so that the store can
/// keep the same bytes (see [`ImmediateWrites::write_now`](crate::store::immediate::ImmediateWrites::write_now)) and the reply is not encoded again;
/// `None` when the event answers no waiter, or when the running request's response hooks may
/// change the result (it is encoded after them, and the store encodes the task itself).
fn reply_for(
    waiters: &[Waiter],
    extensions: &Negotiated,
    event: &StreamResponse,
    task: &Task,
) -> Option<Vec<u8>> {
    if waiters.is_empty()
        || matches!(event, StreamResponse::Message(_))
        || extensions.hooks_responses()
    {
        return None;
    }
    let ends = ends_wait(event);
    if !waiters.iter().any(|w| ends || w.until_created) {
        return None;
    }
    let mut reply = Vec::with_capacity(REPLY_CAPACITY);
    crate::json::splice::member(&mut reply, true, REPLY_MEMBER);
    crate::json::writer::to_writer(&mut reply, task).ok()?;
    reply.push(b'}');
    Some(reply)
}

/// The task's JSON in a reply from [`reply_for`].
fn task_json(reply: &[u8]) -> Option<&[u8]> {
    crate::json::splice::only_member(reply, REPLY_MEMBER)
}

/// The error of a write whose live task is not there (it is once the task exists).
fn live_task_gone() -> A2aError {
    A2aError::Internal("the live task went away".into())
}

/// Does this event end a blocking SendMessage wait? Terminal and interrupted states, and messages.
pub(crate) fn ends_wait(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::Message(_) => true,
        StreamResponse::Task(t) => t.status.state.is_terminal() || t.status.state.is_interrupted(),
        StreamResponse::StatusUpdate(e) => {
            e.status.state.is_terminal() || e.status.state.is_interrupted()
        }
        StreamResponse::ArtifactUpdate(_) => false,
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
enum Step {
    /// Written and delivered: the event's sequence number.
    Done(u64),
    /// Applied; the store's write is to be awaited, then the event delivered.
    Write(Applied),
    /// The store refused the write: reload the live copy from it, then fail with this error.
    Reload(crate::store::StoreError),
}

/// An applied event waiting for its store write.
enum Applied {
    /// The event creates the task (with the task as it was before it, for subscribers).
    Create {
        event: StreamResponse,
        task: Arc<Task>,
        before: Option<Box<Task>>,
    },
    /// The event changed the live task, read at `version`.
    Update { event: StreamResponse, version: u64 },
}

/// What a request listens to while the agent runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listen {
    /// Every event (a stream).
    Stream,
    /// The end of the execution (a blocking SendMessage); with `until_created`, the task's
    /// creation is enough.
    Wait { until_created: bool },
    /// Nothing (`returnImmediately` on an existing task).
    Nothing,
}

/// The receiving end of a listener, before it is tied to its runtime.
enum Receiving {
    Stream(mpsc::Receiver<BusItem>),
    Wait(oneshot::Receiver<WaitOutcome>),
    Nothing,
}

/// A subscriber's sending end, counted in its registry while it exists.
#[derive(Debug)]
struct Queue {
    tx: mpsc::Sender<BusItem>,
    count: Arc<AtomicUsize>,
}

impl Queue {
    /// A new queue of `buffer` events for `st` (the receiving end is returned).
    fn open(
        st: &mut RuntimeState,
        buffer: usize,
        count: &Arc<AtomicUsize>,
    ) -> mpsc::Receiver<BusItem> {
        // The queues of subscribers that went away without an event since (their connection
        // closed while the task was quiet) go now: a quiet task does not collect them.
        st.subscribers.retain(|q| !q.tx.is_closed());
        // One slot more than the buffer: the last one carries `Lagged`.
        let (tx, rx) = mpsc::channel(buffer + 1);
        count.fetch_add(1, Ordering::Relaxed);
        st.subscribers.push(Queue {
            tx,
            count: count.clone(),
        });
        rx
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Registers a listener of `kind` for `execution` in a task's state.
fn register(
    st: &mut RuntimeState,
    kind: Listen,
    execution: u64,
    buffer: usize,
    queues: &Arc<AtomicUsize>,
) -> Receiving {
    match kind {
        Listen::Stream => Receiving::Stream(Queue::open(st, buffer, queues)),
        Listen::Wait { until_created } => {
            let (tx, rx) = oneshot::channel();
            st.waiters.push(Waiter {
                execution,
                until_created,
                tx,
            });
            Receiving::Wait(rx)
        }
        Listen::Nothing => Receiving::Nothing,
    }
}

/// The listening end a request got.
#[derive(Debug)]
pub(crate) enum Listener {
    Stream(Subscription),
    Wait(oneshot::Receiver<WaitOutcome>),
    Nothing,
}

/// A stream's queue of a task's events. Dropping it stops the delivery.
#[derive(Debug)]
pub(crate) struct Subscription {
    rx: mpsc::Receiver<BusItem>,
    rt: Arc<TaskRuntime>,
}

impl Subscription {
    /// The next item; `None` once the runtime stopped delivering (after [`BusItem::Lagged`]).
    pub(crate) async fn recv(&mut self) -> Option<BusItem> {
        self.rx.recv().await
    }

    /// The runtime this subscription listens to.
    pub(crate) fn runtime(&self) -> &Arc<TaskRuntime> {
        &self.rt
    }

    /// How many events the queue holds before the subscriber counts as lagging.
    pub(crate) fn buffer(&self) -> usize {
        self.rt.buffer
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // The stream went away (its client disconnected, or it ended): its queue leaves the
        // task now when the task is not busy (else at the next event or subscription), so
        // that a quiet task does not keep the queues of departed subscribers.
        self.rx.close();
        if let Ok(mut st) = self.rt.state.try_lock() {
            st.subscribers.retain(|q| !q.tx.is_closed());
        }
        self.rt.listeners.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The live state of one task.
#[derive(Debug)]
pub(crate) struct TaskRuntime {
    pub(crate) scope: Scope,
    pub(crate) id: TaskId,
    pub(crate) state: tokio::sync::Mutex<RuntimeState>,
    /// Executions running now (mirrors `RuntimeState::running`, readable without the lock).
    executions: AtomicUsize,
    /// Subscriptions alive now.
    listeners: AtomicUsize,
    /// Each subscriber's queue length.
    buffer: usize,
    /// The registry's count of subscriber queues.
    queues: Arc<AtomicUsize>,
}

impl TaskRuntime {
    fn new(
        scope: Scope,
        id: TaskId,
        state: RuntimeState,
        buffer: usize,
        queues: Arc<AtomicUsize>,
    ) -> Self {
        Self {
            scope,
            id,
            state: tokio::sync::Mutex::new(state),
            executions: AtomicUsize::new(0),
            listeners: AtomicUsize::new(0),
            buffer: buffer.max(1),
            queues,
        }
    }

    /// Registers a running execution (call with the state locked).
    pub(crate) fn start_execution(
        &self,
        st: &mut RuntimeState,
        execution: u64,
        token: CancellationToken,
    ) {
        st.running.push((execution, token));
        self.executions.fetch_add(1, Ordering::SeqCst);
    }

    /// Registers a listener of `kind` for `execution` (call with the state locked, so it misses
    /// nothing published after).
    pub(crate) fn listen(
        self: &Arc<Self>,
        st: &mut RuntimeState,
        kind: Listen,
        execution: u64,
    ) -> Listener {
        self.attach(register(st, kind, execution, self.buffer, &self.queues))
    }

    /// The listener for what [`register`] set up.
    fn attach(self: &Arc<Self>, receiving: Receiving) -> Listener {
        match receiving {
            Receiving::Stream(rx) => {
                self.listeners.fetch_add(1, Ordering::SeqCst);
                Listener::Stream(Subscription {
                    rx,
                    rt: self.clone(),
                })
            }
            Receiving::Wait(rx) => Listener::Wait(rx),
            Receiving::Nothing => Listener::Nothing,
        }
    }

    /// A new subscriber's queue (call with the state locked).
    fn subscribe(self: &Arc<Self>, st: &mut RuntimeState) -> Subscription {
        let rx = Queue::open(st, self.buffer, &self.queues);
        self.listeners.fetch_add(1, Ordering::SeqCst);
        Subscription {
            rx,
            rt: self.clone(),
        }
    }

    /// Unregisters a finished execution and tells its listeners.
    pub(crate) async fn finish_execution(&self, execution: u64, error: Option<A2aError>) {
        {
            let mut st = self.state.lock().await;
            // An execution that returned because its task is being canceled: the canceling
            // request publishes the final state next, and that answers the wait (a blocking
            // SendMessage must not report the task as still working).
            let canceling = error.is_none()
                && st.task.as_ref().is_some_and(|t| {
                    !t.status.state.is_terminal() && !t.status.state.is_interrupted()
                })
                && st
                    .running
                    .iter()
                    .any(|(x, token)| *x == execution && token.is_cancelled());
            st.running.retain(|(x, _)| *x != execution);
            if !st.waiters.is_empty() {
                let mut i = 0;
                while i < st.waiters.len() {
                    if st.waiters[i].execution != execution || canceling {
                        i += 1;
                        continue;
                    }
                    let w = st.waiters.swap_remove(i);
                    let outcome = match (&error, &st.task) {
                        (Some(e), _) => WaitOutcome::Failed(e.clone()),
                        (None, Some(task)) => WaitOutcome::Task(task.clone(), None),
                        (None, None) => WaitOutcome::Failed(A2aError::Internal(
                            "the agent ended without publishing anything".into(),
                        )),
                    };
                    let _ = w.tx.send(outcome);
                }
            }
            if st.has_subscribers() {
                st.deliver(BusItem::ExecutionEnded { execution, error });
            }
        }
        self.executions.fetch_sub(1, Ordering::SeqCst);
    }

    /// Answers, with the task as it stands, the waiters whose execution is no longer running
    /// (left by [`finish_execution`](Self::finish_execution) for a cancel that has now applied
    /// the final state, or failed to).
    pub(crate) async fn answer_finished_waiters(&self) {
        let mut guard = self.state.lock().await;
        let st = &mut *guard;
        let mut i = 0;
        while i < st.waiters.len() {
            let execution = st.waiters[i].execution;
            if st.running.iter().any(|(x, _)| *x == execution) {
                i += 1;
                continue;
            }
            let w = st.waiters.swap_remove(i);
            let outcome = match &st.task {
                Some(task) => WaitOutcome::Task(task.clone(), None),
                None => WaitOutcome::Failed(A2aError::Internal(
                    "the task was canceled before it was created".into(),
                )),
            };
            let _ = w.tx.send(outcome);
        }
    }

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
    /// When the task's lock is free and the store writes at once (the in-memory store), all of
    /// it happens here and the future is a ready value;
    /// otherwise the rest is one boxed future.
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
    fn apply(
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
    async fn complete(
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

    /// Replaces the live copy with the stored task after a failed write (another writer, on
    /// this instance or another, got there first), delivering what that writer logged.
    async fn reload(&self, st: &mut RuntimeState, store: &dyn TaskStore) {
        if let Err(e) = self.catch_up_locked(st, store, true).await {
            tracing::error!(task_id = %self.id, error = %e, "cannot reload the task after a failed write");
        }
    }

    /// Brings the live copy up to the store's after another instance wrote the task (known
    /// to be at `version` at least, when a notification said so): the logged events this
    /// runtime has not seen go, in order, to its waiters and subscribers (not to push: the
    /// writer's instance delivers those), and the stored task becomes the live one. A task
    /// that another instance ended has its executions here canceled, so that a CancelTask
    /// served elsewhere reaches the agent. Returns whether anything changed.
    pub(crate) async fn catch_up(
        &self,
        store: &dyn TaskStore,
        version: Option<u64>,
    ) -> Result<bool, crate::store::StoreError> {
        let mut guard = self.state.lock().await;
        if version.is_some_and(|v| v <= guard.version) {
            return Ok(false);
        }
        self.catch_up_locked(&mut guard, store, false).await
    }

    /// [`catch_up`](Self::catch_up) with the state locked. With `refused` (a write of this
    /// runtime failed), the live copy holds the refused change: it goes back to the stored
    /// task even when no other writer moved the version on.
    async fn catch_up_locked(
        &self,
        st: &mut RuntimeState,
        store: &dyn TaskStore,
        refused: bool,
    ) -> Result<bool, crate::store::StoreError> {
        if st.task.is_none() {
            // Not created yet: this instance creates it, nobody else can have written it.
            return Ok(false);
        }
        let Some(stored) = store.get(&self.scope, &self.id).await? else {
            tracing::error!(task_id = %self.id, "task vanished from the store");
            return Ok(false);
        };
        if stored.version <= st.version {
            if refused {
                st.task = Some(Arc::new(stored.task));
                st.version = stored.version;
            }
            return Ok(refused);
        }
        let mut missed = Vec::new();
        if !st.subscribers.is_empty() || !st.waiters.is_empty() {
            let mut next = st.version;
            while next < stored.version {
                let want = usize::try_from(stored.version - next).unwrap_or(usize::MAX);
                let page = store
                    .events_after(&self.scope, &self.id, next, want.min(256))
                    .await?;
                let Some(last) = page.last().map(|e| e.seq) else {
                    break;
                };
                missed.extend(page.into_iter().filter(|e| e.seq <= stored.version));
                next = last;
            }
        }
        let terminal = stored.task.status.state.is_terminal();
        st.task = Some(Arc::new(stored.task));
        st.version = stored.version;
        for ev in missed {
            st.resolve_waiters(&ev.event, None);
            if !st.subscribers.is_empty() {
                // Not through `deliver`: push is the writer's instance's to send.
                st.send_to_subscribers(BusItem::Event(Arc::new(ev)));
            }
        }
        if terminal {
            for (_, token) in &st.running {
                token.cancel();
            }
        }
        Ok(true)
    }

    /// Starts a new turn on an existing task: checks it can take a message, appends the user
    /// message to the history, registers the execution and the listener — all under the lock,
    /// so a stream's opening snapshot (returned for [`Listen::Stream`]) is exactly the state
    /// before the turn's first event.
    pub(crate) async fn begin_turn(
        self: &Arc<Self>,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        message: &mut Message,
        execution: u64,
        token: CancellationToken,
        listen: Listen,
    ) -> Result<(Option<SeqEvent>, Listener), A2aError> {
        let mut guard = self.state.lock().await;
        let st = &mut *guard;
        let version = st.version;
        let Some(current) = st.task.as_mut() else {
            return Err(A2aError::TaskNotFound {
                task_id: self.id.to_string(),
            });
        };
        let current = Arc::make_mut(current);
        if current.status.state.is_terminal() {
            return Err(A2aError::UnsupportedOperation(format!(
                "task {} is {} (terminal) and accepts no more messages; start a new task in context {}",
                current.id, current.status.state, current.context_id
            )));
        }
        if !message.context_id.is_empty() && message.context_id != current.context_id {
            return Err(A2aError::invalid_field(
                "message.contextId",
                format!(
                    "{} does not match the context {} of task {}",
                    message.context_id, current.context_id, current.id
                ),
            ));
        }
        // A turn whose message id the task already holds would run but vanish from the
        // history (which keeps one entry per id): refuse it, as the spec allows.
        if current
            .history
            .iter()
            .any(|m| m.message_id == message.message_id)
        {
            return Err(A2aError::invalid_field(
                "message.messageId",
                format!(
                    "{} was already sent to task {}; give each message a new id",
                    message.message_id, current.id
                ),
            ));
        }
        message.context_id = current.context_id.clone();
        lifecycle::push_history(current, message.clone(), policy);
        // The turn's start is logged as the task it leaves, as a stream's opening snapshot.
        let turn = Arc::new(SeqEvent {
            seq: version + 1,
            event: StreamResponse::Task(current.clone()),
        });
        let Some(task) = st.task.as_ref() else {
            return Err(live_task_gone());
        };
        let written = match store.immediate() {
            // Held shared with the runtime, as every write of this store's runtimes.
            Some(memory) => {
                let write = Write::Update {
                    expected_version: version,
                    delta: None,
                };
                memory.write_now(&self.scope, task, None, write, Some(turn.clone()))
            }
            None => {
                store
                    .update(&self.scope, task, version, Some(&turn.event))
                    .await
            }
        };
        let version = match written {
            Ok(v) => v,
            Err(e) => {
                self.reload(st, store).await;
                return Err(e.into());
            }
        };
        st.version = version;
        // The turn's start is a logged event: push is told of it (its deliveries were written
        // with it), as of every other.
        st.tap(version, &turn.event);
        let first = match (&st.task, listen) {
            (Some(task), Listen::Stream) => Some(SeqEvent {
                seq: version,
                event: StreamResponse::Task(Task::clone(task)),
            }),
            _ => None,
        };
        self.start_execution(st, execution, token);
        let listener = self.listen(st, listen, execution);
        Ok((first, listener))
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

    /// Subscribes to an existing task: the current snapshot and a queue for what follows.
    pub(crate) async fn snapshot_and_subscribe(
        self: &Arc<Self>,
    ) -> Option<(SeqEvent, TaskState, Subscription)> {
        let mut guard = self.state.lock().await;
        let st = &mut *guard;
        let task = st.task.as_ref()?;
        let state = task.status.state;
        let snapshot = SeqEvent {
            seq: st.version,
            event: StreamResponse::Task(Task::clone(task)),
        };
        let sub = self.subscribe(st);
        Some((snapshot, state, sub))
    }

    /// A new queue for a subscriber that fell behind, with the sequence number it starts
    /// after (`None` before the task exists).
    pub(crate) async fn resubscribe(self: &Arc<Self>) -> Option<(u64, Subscription)> {
        let mut guard = self.state.lock().await;
        let st = &mut *guard;
        st.task.as_ref()?;
        let version = st.version;
        Some((version, self.subscribe(st)))
    }

    /// The task as it stands (`None` before the first event).
    pub(crate) async fn snapshot(&self) -> Option<Task> {
        self.state.lock().await.task.as_deref().cloned()
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

/// The live runtimes: a set keyed by each runtime's own scope and task id, so that the key is
/// not a second copy of them.
type LiveMap = HashSet<Live, FastHash>;

/// A live runtime, hashed and compared by its scope and task id.
#[derive(Debug)]
struct Live(Arc<TaskRuntime>);

impl PartialEq for Live {
    fn eq(&self, other: &Self) -> bool {
        (self as &dyn KeyRef) == (other as &dyn KeyRef)
    }
}

impl Eq for Live {}

impl std::hash::Hash for Live {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self as &dyn KeyRef).hash(state);
    }
}

/// A task of a scope, as a live map key (a runtime, or a borrowed pair for lookups).
trait KeyRef {
    fn scope(&self) -> &Scope;
    fn id(&self) -> &TaskId;
}

impl KeyRef for Live {
    fn scope(&self) -> &Scope {
        &self.0.scope
    }
    fn id(&self) -> &TaskId {
        &self.0.id
    }
}

impl KeyRef for (&Scope, &TaskId) {
    fn scope(&self) -> &Scope {
        self.0
    }
    fn id(&self) -> &TaskId {
        self.1
    }
}

impl<'a> std::borrow::Borrow<dyn KeyRef + 'a> for Live {
    fn borrow(&self) -> &(dyn KeyRef + 'a) {
        self
    }
}

impl PartialEq for dyn KeyRef + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.scope() == other.scope() && self.id() == other.id()
    }
}

impl Eq for dyn KeyRef + '_ {}

impl std::hash::Hash for dyn KeyRef + '_ {
    /// The id only: a live task's id is a UUID the server made, unique across scopes, so
    /// hashing the scope too would only cost time (equality still compares both; the hasher is
    /// randomly seeded, so ids a client sends cannot be chosen to collide).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

/// The live runtimes, keyed by scope and task id.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    live: Mutex<LiveMap>,
    next_execution: AtomicU64,
    buffer: usize,
    push: Option<Arc<dyn PushDispatcher>>,
    /// Subscriber queues held by live tasks.
    queues: Arc<AtomicUsize>,
    /// Other instances write the store too (see [`Registry::follow_store`]).
    follows: std::sync::atomic::AtomicBool,
}

impl Registry {
    pub(crate) fn new(buffer: usize) -> Self {
        Self {
            live: Mutex::default(),
            next_execution: AtomicU64::new(1),
            buffer,
            push: None,
            queues: Arc::default(),
            follows: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Other instances write the store too: a runtime loaded from the store re-reads it once
    /// it is live, so that a write committed between the read and the moment notifications
    /// reach it is not missed.
    pub(crate) fn follow_store(&self) {
        self.follows.store(true, Ordering::Relaxed);
    }

    /// Every task's events also go to `push`.
    pub(crate) fn with_push(mut self, push: Arc<dyn PushDispatcher>) -> Self {
        self.push = Some(push);
        self
    }

    /// The push tap of task `id` of `scope`, when push is on.
    fn tap(&self, scope: &Scope, id: &TaskId) -> Option<Box<PushTap>> {
        self.push.as_ref().map(|dispatcher| {
            Box::new(PushTap {
                dispatcher: dispatcher.clone(),
                scope: scope.clone(),
                id: id.clone(),
            })
        })
    }

    /// The number of subscriber queues held (for tests and metrics).
    pub(crate) fn queue_count(&self) -> usize {
        self.queues.load(Ordering::Relaxed)
    }

    /// Every live runtime.
    pub(crate) fn live_runtimes(&self) -> Vec<Arc<TaskRuntime>> {
        self.lock().iter().map(|l| l.0.clone()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LiveMap> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn next_execution_id(&self) -> u64 {
        self.next_execution.fetch_add(1, Ordering::Relaxed)
    }

    /// A runtime for a task that does not exist yet (created by the agent's first event), with
    /// `execution` running and its listener registered before anyone else can see it.
    pub(crate) fn create(
        &self,
        scope: Scope,
        template: Task,
        execution: u64,
        token: CancellationToken,
        listen: Listen,
    ) -> (Arc<TaskRuntime>, Listener) {
        let id = template.id.clone();
        let mut state = RuntimeState::new(None, 0, Some(template));
        state.push = self.tap(&scope, &id);
        state.running.push((execution, token));
        let receiving = register(
            &mut state,
            listen,
            execution,
            self.buffer.max(1),
            &self.queues,
        );
        let rt = Arc::new(TaskRuntime::new(
            scope,
            id,
            state,
            self.buffer,
            self.queues.clone(),
        ));
        rt.executions.store(1, Ordering::SeqCst);
        let listener = rt.attach(receiving);
        self.lock().replace(Live(rt.clone()));
        (rt, listener)
    }

    /// The runtime of an existing task, loading it from the store when it is not live.
    /// `None` when the task does not exist in `scope`.
    pub(crate) async fn load(
        &self,
        store: &dyn TaskStore,
        scope: &Scope,
        id: &TaskId,
    ) -> Result<Option<Arc<TaskRuntime>>, A2aError> {
        if let Some(live) = self.lock().get(&(scope, id) as &dyn KeyRef) {
            return Ok(Some(live.0.clone()));
        }
        let Some(stored) = store.get(scope, id).await? else {
            return Ok(None);
        };
        let mut state = RuntimeState::new(Some(stored.task), stored.version, None);
        state.push = self.tap(scope, id);
        let rt = Arc::new(TaskRuntime::new(
            scope.clone(),
            id.clone(),
            state,
            self.buffer,
            self.queues.clone(),
        ));
        {
            let mut live = self.lock();
            // Someone may have loaded it meanwhile: theirs wins.
            if let Some(existing) = live.get(&(scope, id) as &dyn KeyRef) {
                return Ok(Some(existing.0.clone()));
            }
            live.insert(Live(rt.clone()));
        }
        if self.follows.load(Ordering::Relaxed) {
            rt.catch_up(store, None).await?;
        }
        Ok(Some(rt))
    }

    /// Forgets a runtime that nobody uses any more (no execution, no subscriber): the store
    /// holds the task, and the runtime is rebuilt from it when needed.
    pub(crate) fn release(&self, rt: &Arc<TaskRuntime>) {
        if rt.executions.load(Ordering::SeqCst) == 0 && rt.listeners.load(Ordering::SeqCst) == 0 {
            let mut live = self.lock();
            let key = (&rt.scope, &rt.id);
            let key = &key as &dyn KeyRef;
            if live.get(key).is_some_and(|x| Arc::ptr_eq(&x.0, rt)) {
                live.remove(key);
            }
        }
    }

    /// The live runtime of task `id` of `scope`, if there is one.
    pub(crate) fn live(&self, scope: &Scope, id: &TaskId) -> Option<Arc<TaskRuntime>> {
        self.lock()
            .get(&(scope, id) as &dyn KeyRef)
            .map(|l| l.0.clone())
    }

    /// The number of live runtimes (for tests and metrics).
    pub(crate) fn live_count(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::InMemoryTaskStore;
    use crate::types::{
        Artifact, Part, SendMessageResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent,
    };

    const POLICY: HistoryPolicy = HistoryPolicy { max_messages: 100 };

    fn runtime(buffer: usize) -> (Registry, Arc<TaskRuntime>, Scope) {
        let registry = Registry::new(buffer);
        let scope = Scope::new("", "me");
        let template = Task {
            id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus::new(TaskState::Submitted),
            ..Task::default()
        };
        let (rt, _) = registry.create(
            scope.clone(),
            template,
            0,
            CancellationToken::new(),
            Listen::Nothing,
        );
        (registry, rt, scope)
    }

    fn chunk(i: usize) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t1".into(),
            context_id: "c1".into(),
            artifact: Artifact::new([Part::text(i.to_string())]).with_id("a"),
            append: i > 0,
            ..Default::default()
        })
    }

    fn status(state: TaskState) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus::new(state),
            ..Default::default()
        })
    }

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_gets_what_fit_then_lagged_and_the_agent_goes_on() {
        let (registry, rt, _) = runtime(3);
        rt.finish_execution(0, None).await;
        let store = InMemoryTaskStore::new();
        let ext = Negotiated::default();
        let (mut slow, mut fast) = {
            let mut st = rt.state.lock().await;
            (rt.subscribe(&mut st), rt.subscribe(&mut st))
        };
        let mut fast_seen = Vec::new();
        for i in 0..6 {
            let seq = rt.publish(&store, POLICY, &ext, chunk(i)).await.unwrap();
            // The fast subscriber keeps up.
            while let Ok(item) = fast.rx.try_recv() {
                if let BusItem::Event(ev) = item {
                    fast_seen.push(ev.seq);
                }
            }
            assert_eq!(fast_seen.last(), Some(&seq));
        }
        // Sequence numbers: the created task (1, as it was before its first event), then one per
        // event.
        assert_eq!(fast_seen, vec![0, 1, 2, 3, 4, 5, 6]);
        let mut slow_items = Vec::new();
        while let Some(item) = slow.recv().await {
            slow_items.push(item);
        }
        assert_eq!(slow_items.len(), 4, "{slow_items:?}");
        assert!(matches!(slow_items[3], BusItem::Lagged));
        assert!(
            slow_items[..3]
                .iter()
                .all(|i| matches!(i, BusItem::Event(_)))
        );
        // The stored task has every chunk.
        let t = rt.snapshot().await.unwrap();
        assert_eq!(t.artifacts[0].parts.len(), 6);
        drop((slow, fast));
        assert_eq!(rt.listeners.load(Ordering::SeqCst), 0);
        registry.release(&rt);
        assert_eq!(registry.live_count(), 0);
    }

    #[tokio::test]
    async fn a_waiter_gets_the_task_when_it_ends_and_refused_events_change_nothing() {
        let (_registry, rt, _) = runtime(8);
        let store = InMemoryTaskStore::new();
        let ext = Negotiated::default();
        let rx = {
            let mut st = rt.state.lock().await;
            rt.start_execution(&mut st, 7, CancellationToken::new());
            match rt.listen(
                &mut st,
                Listen::Wait {
                    until_created: false,
                },
                7,
            ) {
                Listener::Wait(rx) => rx,
                other => panic!("{other:?}"),
            }
        };
        rt.publish(&store, POLICY, &ext, status(TaskState::Working))
            .await
            .unwrap();
        rt.publish(&store, POLICY, &ext, chunk(0)).await.unwrap();
        rt.publish(&store, POLICY, &ext, status(TaskState::Completed))
            .await
            .unwrap();
        // After the terminal state, nothing is accepted and the task stays as it was.
        let before = rt.snapshot().await.unwrap();
        assert!(rt.publish(&store, POLICY, &ext, chunk(1)).await.is_err());
        assert_eq!(rt.snapshot().await.unwrap(), before);
        match rx.await.unwrap() {
            WaitOutcome::Task(t, reply) => {
                assert_eq!(t.status.state, TaskState::Completed);
                assert_eq!(t.artifacts.len(), 1);
                // The result was encoded once, by the write that finished the task: exactly the
                // SendMessage result's JSON, and what the store holds.
                let expected = SendMessageResponse::Task(Task::clone(&t));
                let reply = reply.unwrap();
                assert_eq!(&reply[..], crate::json::writer::to_vec(&expected).unwrap());
                let stored = store.get(&rt.scope, &rt.id).await.unwrap().unwrap();
                assert_eq!(&stored.task, &*t);
            }
            other => panic!("{other:?}"),
        }
        rt.finish_execution(7, None).await;
    }

    #[tokio::test]
    async fn a_reply_is_encoded_only_for_an_event_that_answers_a_waiter() {
        let (_registry, rt, _) = runtime(8);
        let task = Task {
            id: "t\"1".into(),
            history: vec![Message::default()],
            ..Task::default()
        };
        let result = crate::json::writer::to_vec(&SendMessageResponse::Task(task.clone())).unwrap();
        let none = Negotiated::default();
        let mut guard = rt.state.lock().await;
        let st = &mut *guard;
        assert!(reply_for(&st.waiters, &none, &status(TaskState::Completed), &task).is_none());
        rt.start_execution(st, 1, CancellationToken::new());
        let _wait = rt.listen(
            st,
            Listen::Wait {
                until_created: false,
            },
            1,
        );
        // A blocking SendMessage waits for a terminal or interrupted state; a direct message
        // answers it, but not with a task.
        assert!(reply_for(&st.waiters, &none, &chunk(0), &task).is_none());
        let message = StreamResponse::Message(Message::default());
        assert!(reply_for(&st.waiters, &none, &message, &task).is_none());
        for state in [TaskState::Completed, TaskState::InputRequired] {
            let reply = reply_for(&st.waiters, &none, &status(state), &task).unwrap();
            assert_eq!(reply, result);
            let json = crate::json::writer::to_vec(&task).unwrap();
            assert_eq!(task_json(&reply), Some(&json[..]));
        }
        // `returnImmediately` on a new task: any task event answers it.
        let _created = rt.listen(
            st,
            Listen::Wait {
                until_created: true,
            },
            1,
        );
        assert_eq!(
            reply_for(&st.waiters, &none, &chunk(0), &task),
            Some(result.clone())
        );
        // Response hooks may change the result: it is encoded after them, not here.
        let hooked = Negotiated::hooking_responses();
        let done = status(TaskState::Completed);
        assert!(reply_for(&st.waiters, &hooked, &done, &task).is_none());
        // Hooks that only read it do not change it: encoded here, once.
        let observed = Negotiated::observing_responses();
        let reply = reply_for(&st.waiters, &observed, &done, &task).unwrap();
        assert_eq!(reply, result);
    }

    #[tokio::test]
    async fn a_waiter_gets_the_agents_error_when_it_fails_before_any_event() {
        let (_registry, rt, _) = runtime(8);
        let rx = {
            let mut st = rt.state.lock().await;
            rt.start_execution(&mut st, 1, CancellationToken::new());
            match rt.listen(
                &mut st,
                Listen::Wait {
                    until_created: true,
                },
                1,
            ) {
                Listener::Wait(rx) => rx,
                other => panic!("{other:?}"),
            }
        };
        rt.finish_execution(1, Some(A2aError::Internal("boom".into())))
            .await;
        assert!(
            matches!(rx.await.unwrap(), WaitOutcome::Failed(A2aError::Internal(m)) if m == "boom")
        );
    }

    /// The in-memory store behind the async trait methods only (as a database store would be):
    /// every write suspends once and the runtime awaits it. `fail_next_update` makes the next
    /// update lose against a concurrent writer.
    #[derive(Debug, Default)]
    struct AwaitedStore {
        inner: InMemoryTaskStore,
        fail_next_update: std::sync::atomic::AtomicBool,
    }

    #[async_trait::async_trait]
    impl TaskStore for AwaitedStore {
        async fn get(
            &self,
            scope: &Scope,
            id: &TaskId,
        ) -> Result<Option<crate::store::StoredTask>, crate::store::StoreError> {
            self.inner.get(scope, id).await
        }
        async fn create(
            &self,
            scope: &Scope,
            task: &Task,
            event: Option<&StreamResponse>,
        ) -> Result<u64, crate::store::StoreError> {
            tokio::task::yield_now().await;
            self.inner.create(scope, task, event).await
        }
        async fn update(
            &self,
            scope: &Scope,
            task: &Task,
            expected_version: u64,
            event: Option<&StreamResponse>,
        ) -> Result<u64, crate::store::StoreError> {
            tokio::task::yield_now().await;
            if self.fail_next_update.swap(false, Ordering::SeqCst) {
                return Err(crate::store::StoreError::Conflict {
                    task_id: task.id.clone(),
                    expected: expected_version,
                    found: expected_version + 1,
                });
            }
            self.inner
                .update(scope, task, expected_version, event)
                .await
        }
        async fn events_after(
            &self,
            scope: &Scope,
            id: &TaskId,
            after: u64,
            limit: usize,
        ) -> Result<Vec<SeqEvent>, crate::store::StoreError> {
            self.inner.events_after(scope, id, after, limit).await
        }
        async fn list(
            &self,
            scope: &Scope,
            query: &crate::store::TaskQuery,
        ) -> Result<crate::store::TaskPage, crate::store::StoreError> {
            self.inner.list(scope, query).await
        }
        async fn delete(
            &self,
            scope: &Scope,
            id: &TaskId,
        ) -> Result<bool, crate::store::StoreError> {
            self.inner.delete(scope, id).await
        }
    }

    /// The sequence numbers a subscription has received so far.
    fn received(sub: &mut Subscription) -> Vec<u64> {
        let mut seqs = Vec::new();
        while let Ok(item) = sub.rx.try_recv() {
            if let BusItem::Event(ev) = item {
                seqs.push(ev.seq);
            }
        }
        seqs
    }

    #[tokio::test]
    async fn an_awaited_store_gets_the_same_events_and_a_refused_write_reloads_the_task() {
        let (_registry, rt, scope) = runtime(16);
        let store = AwaitedStore::default();
        let ext = Negotiated::default();
        let mut sub = {
            let mut st = rt.state.lock().await;
            rt.subscribe(&mut st)
        };
        assert_eq!(rt.publish(&store, POLICY, &ext, chunk(0)).await.unwrap(), 1);
        assert_eq!(rt.publish(&store, POLICY, &ext, chunk(1)).await.unwrap(), 2);
        assert_eq!(received(&mut sub), vec![0, 1, 2]);
        let stored = store.get(&scope, &"t1".into()).await.unwrap().unwrap();
        assert_eq!(
            (stored.version, stored.task.artifacts[0].parts.len()),
            (2, 2)
        );
        // A write that loses: the event is refused, the live task is the stored one again, and
        // nobody hears of the event.
        store.fail_next_update.store(true, Ordering::SeqCst);
        let refused = rt.publish(&store, POLICY, &ext, status(TaskState::Completed));
        assert!(refused.await.is_err());
        assert_eq!(rt.snapshot().await.unwrap(), stored.task);
        assert_eq!(received(&mut sub), Vec::<u64>::new());
        // The next event goes through.
        let seq = rt.publish(&store, POLICY, &ext, status(TaskState::Completed));
        assert_eq!(seq.await.unwrap(), 3);
        assert_eq!(received(&mut sub), vec![3]);
        let stored = store.get(&scope, &"t1".into()).await.unwrap().unwrap();
        assert_eq!(stored.task.status.state, TaskState::Completed);
    }

    #[tokio::test]
    async fn an_event_published_while_the_task_is_locked_waits_for_the_lock() {
        let (_registry, rt, _) = runtime(8);
        let store = InMemoryTaskStore::new();
        let ext = Negotiated::default();
        let guard = rt.state.lock().await;
        let mut publish = std::pin::pin!(rt.publish(&store, POLICY, &ext, chunk(0)));
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(publish.as_mut().poll(&mut cx).is_pending());
        assert!(guard.task.is_none(), "nothing applied while locked");
        drop(guard);
        assert_eq!(publish.await.unwrap(), 1);
        assert_eq!(rt.snapshot().await.unwrap().artifacts.len(), 1);
    }

    #[tokio::test]
    async fn a_write_the_in_memory_store_refuses_reloads_the_task_from_it() {
        let (_registry, rt, scope) = runtime(8);
        let store = InMemoryTaskStore::new();
        let ext = Negotiated::default();
        rt.publish(&store, POLICY, &ext, chunk(0)).await.unwrap();
        // Another writer changes the stored task behind the runtime's back.
        let mut theirs = store.get(&scope, &"t1".into()).await.unwrap().unwrap().task;
        theirs.status = TaskStatus::new(TaskState::Working);
        assert_eq!(store.update(&scope, &theirs, 1, None).await.unwrap(), 2);
        let refused = rt.publish(&store, POLICY, &ext, chunk(1)).await;
        assert!(refused.is_err(), "{refused:?}");
        assert_eq!(rt.snapshot().await.unwrap(), theirs);
        assert_eq!(rt.publish(&store, POLICY, &ext, chunk(1)).await.unwrap(), 3);
    }
}
