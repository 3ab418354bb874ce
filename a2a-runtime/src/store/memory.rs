//! In-memory stores, for tests, demos and single-process agents without durability needs.
//!
//! [`InMemoryTaskStore`] holds a live task as a [`Task`] value, since it changes on every event,
//! but a finished (terminal) one encoded, as one boxed byte string (see `frozen.rs`): the
//! lifecycle never changes a finished task again, and finished tasks are nearly all of the tasks
//! held, so each is encoded once and then costs a fraction of a value's tree of `String`s, `Vec`s
//! and maps (a finished echo task: about 650 bytes of process memory instead of about 1,550).
//! Reads decode it on the way out. Each task id is held once, shared by the map key and the
//! listing index.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use super::frozen::Frozen;
use super::immediate::{Delta, ImmediateWrites, LentChange, Write};
use super::replay_log::{ChunkRef, Invalidates, Log, Logged, effect, read_back, same_shape};
use super::{
    InMemoryPushOutbox, ListCursor, NewDelivery, PushConfigStore, Scope, SeqEvent, StoreError,
    StoredTask, TaskPage, TaskQuery, TaskRef, TaskStore, now_ms,
};
use crate::FastHash;
use crate::types::{
    PushConfigId, StreamResponse, Task, TaskId, TaskPushNotificationConfig, TaskState, Timestamp,
};

/// The most events a task's log keeps by default in memory (the oldest go first).
const DEFAULT_EVENTS_PER_TASK: usize = 1024;

/// The most events the logs of finished tasks keep in all, by default (the logs of the tasks
/// that finished first go first): as many as one task's log holds, so the task that finished
/// last can always be resumed from any event its log kept.
// Each finished log is a run of small allocations freed long after they were made: glibc
// serves the next ones off its free lists instead of its thread cache. The SSE workload
// (`drive … stream 1 2000`, five interleaved runs, medians) ran at 0.77x of 5103fb6, before
// the logs, with 16,384 events (about 13 MiB), 0.88x with 1,024 and 0.90x with none.
pub const DEFAULT_FINISHED_EVENTS: usize = DEFAULT_EVENTS_PER_TASK;
const _: () = assert!(DEFAULT_FINISHED_EVENTS >= DEFAULT_EVENTS_PER_TASK);

/// A task as held: live tasks (and the rare finished task whose encoding would not give it back
/// exactly) as values, finished tasks encoded.
#[derive(Debug)]
enum Held {
    /// Shared, copy on write, with the task's runtime when it wrote it through
    /// [`ImmediateWrites::write_now`]: the live copy costs no copy of its own.
    Value(Arc<Task>),
    Encoded(Frozen),
}

impl Held {
    /// `task` as held, from its `json` when the writer has it (see [`ImmediateWrites::write_now`]);
    /// a live one shared when the writer gives its `Arc`, copied otherwise.
    fn of(task: Written<'_>, json: Option<&[u8]>) -> Self {
        if task.status.state.is_terminal()
            && let Some(frozen) = json
                .and_then(|json| Frozen::from_json(&task, json))
                .or_else(|| Frozen::encode(&task))
        {
            return Held::Encoded(frozen);
        }
        Held::Value(task.to_arc())
    }

    /// The listing position's timestamp (as in [`ListCursor::of`]).
    fn millis(&self) -> i64 {
        match self {
            Held::Value(t) => t.status.timestamp.map_or(0, |t| t.millis()),
            Held::Encoded(f) => f.millis(),
        }
    }

    fn is_terminal(&self) -> bool {
        match self {
            Held::Value(t) => t.status.state.is_terminal(),
            Held::Encoded(f) => f.state().is_terminal(),
        }
    }

    fn matches(&self, query: &TaskQuery) -> bool {
        match self {
            Held::Value(t) => {
                query.context_id.as_ref().is_none_or(|c| &t.context_id == c)
                    && query.state.is_none_or(|st| t.status.state == st)
                    && query
                        .status_timestamp_after
                        .is_none_or(|ts| t.status.timestamp.is_some_and(|x| x >= ts))
            }
            Held::Encoded(f) => {
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
    fn snapshot(&self) -> Snapshot {
        match self {
            Held::Value(t) => Snapshot::Value(Arc::clone(t)),
            Held::Encoded(f) => Snapshot::Encoded(f.clone()),
        }
    }
}

/// The task a write stores: the writer's `Arc` (the runtime's copy, see
/// [`ImmediateWrites::write_now`]), shared, or a borrowed task, copied.
#[derive(Clone, Copy)]
enum Written<'a> {
    Shared(&'a Arc<Task>),
    Borrowed(&'a Task),
}

impl Written<'_> {
    /// The task as a live value is held: shared, or a copy.
    fn to_arc(self) -> Arc<Task> {
        match self {
            Written::Shared(task) => Arc::clone(task),
            Written::Borrowed(task) => Arc::new(task.clone()),
        }
    }
}

impl std::ops::Deref for Written<'_> {
    type Target = Task;
    fn deref(&self) -> &Task {
        match *self {
            Written::Shared(task) => task,
            Written::Borrowed(task) => task,
        }
    }
}

impl<'a> From<&'a Task> for Written<'a> {
    fn from(task: &'a Task) -> Self {
        Written::Borrowed(task)
    }
}

impl<'a> From<&'a Arc<Task>> for Written<'a> {
    fn from(task: &'a Arc<Task>) -> Self {
        Written::Shared(task)
    }
}

/// Puts `task`, written as an update (applying `delta` when the writer knows it), in `entry`;
/// returns the chunk `event` is logged as by reference, if any.
fn replace_held(
    entry: &mut Entry,
    task: Written<'_>,
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
        Held::Value(held) if !task.status.state.is_terminal() => {
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
                let keeps = matches!(held, Held::Value(t) if same_shape(t, &task))
                    && event.is_some_and(|e| matches!(e.event, StreamResponse::StatusUpdate(_)));
                debug_assert!(
                    !keeps || matches!(held, Held::Value(t) if t.artifacts == task.artifacts),
                    "a status update changed the artifacts"
                );
                if !keeps {
                    materialize_all(entry, task.id.as_str());
                }
            }
            entry.held = Held::of(task, json);
        }
    }
    chunk
}

/// Turns the chunks `entry`'s log reads from its task into events of their own.
fn materialize_all(entry: &mut Entry, id: &str) {
    if entry.log.chunks() == 0 {
        return;
    }
    let decoded;
    let before = match &entry.held {
        Held::Value(t) => Some(&**t),
        Held::Encoded(f) => {
            decoded = f.decode(id).ok();
            decoded.as_ref()
        }
    };
    entry.log.materialize(before, Invalidates::All);
}

/// A task taken out under the lock; copied or decoded once it is released.
enum Snapshot {
    Value(Arc<Task>),
    Encoded(Frozen),
}

impl Snapshot {
    fn into_task(self, id: &str) -> Result<Task, StoreError> {
        match self {
            Snapshot::Value(t) => Ok(Arc::unwrap_or_clone(t)),
            Snapshot::Encoded(f) => f.decode(id),
        }
    }
}

#[derive(Debug)]
struct Entry {
    /// Incremented by every write.
    version: u64,
    /// When it was last written (ms since the epoch), for retention.
    updated_ms: i64,
    held: Held,
    /// The tail of the task's event log.
    log: Log,
}

/// A listing position: status timestamp (ms), then id. Ascending; listings walk it backwards.
type Position = (i64, Arc<str>);

#[derive(Debug, Default)]
struct ScopeTasks {
    /// The scope (shared with the map key and the finished queue).
    key: Arc<Scope>,
    /// How many of the tasks are terminal.
    finished: usize,
    /// Keyed by task id; the key is shared with `order`.
    by_id: HashMap<Arc<str>, Entry, FastHash>,
    /// Listing order, oldest status timestamp first (listings read it newest first), with
    /// whether the task is finished (terminal), for retention.
    order: BTreeMap<Position, bool>,
}

/// A finished task in the order tasks finished, as [`Held::finished`] queues it: valid while
/// the task is still at the version it finished with (a later write queues it again).
#[derive(Debug)]
struct Finished {
    scope: Arc<Scope>,
    id: Arc<str>,
    version: u64,
}

impl Finished {
    /// Whether `entry` (the entry of this task) is still the finished task queued.
    fn names(&self, entry: &Entry) -> bool {
        entry.version == self.version && entry.held.is_terminal()
    }
}

/// Everything the store holds, under one lock.
#[derive(Debug, Default)]
struct Tasks {
    scopes: HashMap<Arc<Scope>, ScopeTasks, FastHash>,
    /// Tasks held, over all scopes.
    held: usize,
    /// Finished tasks held, over all scopes.
    finished: usize,
    /// Finished tasks, first finished first (some entries stale: skipped when met).
    queue: VecDeque<Finished>,
    /// Finished tasks with a non-empty log, first finished first, each with its log's length
    /// when queued (some entries stale: a task written again is queued again, one removed
    /// stays until its turn).
    logs: VecDeque<(Finished, usize)>,
    /// The sum of the lengths in `logs`: at least the events the logs of finished tasks hold.
    log_events: usize,
}

impl std::ops::Deref for Tasks {
    type Target = HashMap<Arc<Scope>, ScopeTasks, FastHash>;
    fn deref(&self) -> &Self::Target {
        &self.scopes
    }
}

impl std::ops::DerefMut for Tasks {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.scopes
    }
}

impl Tasks {
    /// Removes task `id` of scope `key` (its entry and its listing position), and the scope
    /// when it was its last task.
    fn remove(&mut self, key: &Scope, id: &str) -> Option<(Arc<str>, Entry)> {
        self.remove_with(key, |by_id| by_id.remove_entry(id))
    }

    /// Removes the task `f` names when it is still current (finished, at the version it was
    /// queued with), and its scope when it was the scope's last task.
    // One look-up of the scope and one of the id: checking with `current`, then removing
    // with `remove`, hashed each twice (eviction by the global cap, on every new task once
    // the store is full).
    fn remove_if_current(&mut self, f: &Finished) -> bool {
        self.remove_with(&f.scope, |by_id| match by_id.entry(f.id.clone()) {
            std::collections::hash_map::Entry::Occupied(found) if f.names(found.get()) => {
                Some(found.remove_entry())
            }
            _ => None,
        })
        .is_some()
    }

    /// Removes the task `take` takes out of scope `key`'s entries: its listing position too,
    /// and the scope when it was its last task.
    fn remove_with(
        &mut self,
        key: &Scope,
        take: impl FnOnce(&mut HashMap<Arc<str>, Entry, FastHash>) -> Option<(Arc<str>, Entry)>,
    ) -> Option<(Arc<str>, Entry)> {
        let s = self.scopes.get_mut(key)?;
        let (id, entry) = take(&mut s.by_id)?;
        let position = (entry.held.millis(), id.clone());
        // The oldest of its scope (an eviction, usually): off the front without a search.
        match s.order.first_entry() {
            Some(first) if *first.key() == position => {
                first.remove_entry();
            }
            _ => {
                s.order.remove(&position);
            }
        }
        let finished = usize::from(entry.held.is_terminal());
        s.finished -= finished;
        let empty = s.by_id.is_empty();
        self.finished -= finished;
        self.held -= 1;
        if empty {
            self.scopes.remove(key);
        }
        Some((id, entry))
    }

    /// Whether a queue entry still names a finished task at the version it was queued with.
    fn current(scopes: &HashMap<Arc<Scope>, ScopeTasks, FastHash>, f: &Finished) -> bool {
        scopes
            .get(&*f.scope)
            .and_then(|s| s.by_id.get(&*f.id))
            .is_some_and(|e| f.names(e))
    }

    /// Queues a task that a write left finished (at `version`, its log `events` long) for
    /// eviction, and its log for the bound on the logs of finished tasks (`budget` events).
    fn queue_finished(
        &mut self,
        scope: Arc<Scope>,
        id: Arc<str>,
        version: u64,
        (events, budget): (usize, usize),
    ) {
        if events > 0 {
            let finished = Finished {
                scope: scope.clone(),
                id: id.clone(),
                version,
            };
            self.queue_log(finished, events, budget);
        }
        self.queue.push_back(Finished { scope, id, version });
        // Stale entries (tasks deleted, or written again) go once they outnumber the rest.
        if self.queue.len() > 2 * self.finished + 1024 {
            let queue = std::mem::take(&mut self.queue);
            let scopes = &self.scopes;
            self.queue = queue
                .into_iter()
                .filter(|f| Self::current(scopes, f))
                .collect();
        }
    }

    /// Counts the log of a task that a write left finished (at `version`, its log `events`
    /// long), then empties the logs of the tasks that finished first until the logs of
    /// finished tasks hold at most `budget` events.
    fn queue_log(&mut self, finished: Finished, events: usize, budget: usize) {
        self.logs.push_back((finished, events));
        self.log_events += events;
        while self.log_events > budget {
            let Some((f, n)) = self.logs.pop_front() else {
                break;
            };
            self.log_events -= n;
            if let Some(entry) = self
                .scopes
                .get_mut(&*f.scope)
                .and_then(|s| s.by_id.get_mut(&*f.id))
                && f.names(entry)
            {
                entry.log = Log::default();
            }
        }
    }

    /// The first queued finished task that is still current, taken off the queue.
    fn first_finished(&mut self) -> Option<Finished> {
        while let Some(f) = self.queue.pop_front() {
            if Self::current(&self.scopes, &f) {
                return Some(f);
            }
        }
        None
    }

    /// Evicts the task that finished first, over all scopes.
    fn evict_first_finished(&mut self) -> Option<(Arc<Scope>, Arc<str>)> {
        while let Some(f) = self.queue.pop_front() {
            if self.remove_if_current(&f) {
                return Some((f.scope, f.id));
            }
        }
        None
    }
}

/// The most tasks an [`InMemoryTaskStore`] holds by default, over all tenants and owners.
pub const DEFAULT_MAX_TASKS: usize = 10_000;

/// A [`TaskStore`] in process memory (share it behind an `Arc`).
///
/// Memory is bounded, whatever the spread of tenants and owners:
/// - at most [`max_tasks`](Self::with_max_tasks) tasks are held in all (default
///   [`DEFAULT_MAX_TASKS`]): a new task beyond it evicts the finished task that finished
///   first, over all scopes; when every task held is still live, the new one is refused
///   ([`StoreError::Full`], answered as Unavailable) — interrupted tasks are bounded in time by
///   [`Retention`](crate::core::Retention) instead;
/// - [`InMemoryTaskStore::with_retention`] also keeps at most N finished tasks per scope
///   (tenant and owner), dropping the ones that finished first (by status timestamp);
/// - each task keeps at most [`with_events_per_task`](Self::with_events_per_task) events, and
///   the logs of finished tasks at most [`with_finished_events`](Self::with_finished_events)
///   events in all.
///
/// A task evicted or deleted takes its push configs with it when the store was given the
/// push-config store ([`with_push_configs`](Self::with_push_configs); the server's default
/// stores and [`connect("memory:")`](super::connect) are linked so).
///
/// Finished tasks are held encoded (their ProtoJSON without the ids, behind a small header), a
/// fraction of the memory of a [`Task`] value; [`get`](TaskStore::get) and
/// [`list`](TaskStore::list) decode them, and listing filters and orders without decoding. Live
/// tasks, which change on every event, are held as values; a task is encoded once, by the write
/// that finishes it.
#[derive(Debug)]
pub struct InMemoryTaskStore {
    scopes: Mutex<Tasks>,
    /// Keep at most this many finished (terminal) tasks per scope; the oldest go first.
    max_finished_per_scope: Option<usize>,
    /// Hold at most this many tasks in all.
    max_tasks: usize,
    /// Keep at most this many events per task.
    events_per_task: usize,
    /// Keep at most this many events in the logs of finished tasks, in all.
    finished_events: usize,
    /// The push configs that go with a task that goes.
    push_configs: Option<Arc<InMemoryPushConfigStore>>,
    /// Where each logged event's push deliveries are written, with the event.
    outbox: Option<Arc<InMemoryPushOutbox>>,
    /// Tasks evicted so far (global cap, per-scope retention, age).
    evicted: std::sync::atomic::AtomicU64,
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self {
            scopes: Mutex::default(),
            max_finished_per_scope: None,
            max_tasks: DEFAULT_MAX_TASKS,
            events_per_task: DEFAULT_EVENTS_PER_TASK,
            finished_events: DEFAULT_FINISHED_EVENTS,
            push_configs: None,
            outbox: None,
            evicted: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

/// Tasks taken out of the store under its lock, whose push configs go once it is released.
// Usually one (the global cap's eviction of each new task's predecessor): held without an
// allocation.
#[derive(Default)]
struct Gone {
    one: Option<(Arc<Scope>, Arc<str>)>,
    more: Vec<(Arc<Scope>, Arc<str>)>,
}

impl Gone {
    fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, task: (Arc<Scope>, Arc<str>)) {
        if self.one.is_none() {
            self.one = Some(task);
        } else {
            self.more.push(task);
        }
    }

    fn is_empty(&self) -> bool {
        self.one.is_none()
    }

    fn len(&self) -> usize {
        usize::from(self.one.is_some()) + self.more.len()
    }
}

impl IntoIterator for Gone {
    type Item = (Arc<Scope>, Arc<str>);
    type IntoIter = std::iter::Chain<
        std::option::IntoIter<(Arc<Scope>, Arc<str>)>,
        std::vec::IntoIter<(Arc<Scope>, Arc<str>)>,
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.one.into_iter().chain(self.more)
    }
}

impl InMemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Tasks> {
        // A poisoned lock only means another thread panicked mid-operation; every operation here
        // leaves the maps consistent before it can panic, so the data is still usable.
        self.scopes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A store that keeps at most `max_finished` terminal tasks per scope.
    pub fn with_retention(max_finished: usize) -> Self {
        Self {
            max_finished_per_scope: Some(max_finished),
            ..Self::default()
        }
    }

    /// Holds at most `max` tasks in all, over every tenant and owner (default
    /// [`DEFAULT_MAX_TASKS`]; at least 1).
    pub fn with_max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max.max(1);
        self
    }

    /// Deletes a task's push configs from `configs` when the task is evicted or deleted.
    pub fn with_push_configs(mut self, configs: Arc<InMemoryPushConfigStore>) -> Self {
        self.push_configs = Some(configs);
        self
    }

    /// Writes push deliveries into `outbox`: with each event it logs, in the same write, one
    /// per config the task has in the store given to
    /// [`with_push_configs`](Self::with_push_configs) (without one, none is written), in
    /// config order. When the outbox is full ([`InMemoryPushOutbox::with_max_pending`]) the
    /// write is refused whole with [`StoreError::OutboxFull`]: nothing is stored and nothing
    /// is lost. See [`TaskStore::push_outbox`].
    pub fn with_push_outbox(mut self, outbox: Arc<InMemoryPushOutbox>) -> Self {
        self.outbox = Some(outbox);
        self
    }

    /// The deliveries of the logged `event` of task `id` (none without a linked outbox, for a
    /// task without configs, or for a direct Message reply), with the outbox they go to.
    fn deliveries(
        &self,
        scope: &Scope,
        id: &TaskId,
        event: Option<&Arc<SeqEvent>>,
    ) -> Result<Option<(&InMemoryPushOutbox, Vec<NewDelivery>)>, StoreError> {
        let (Some(outbox), Some(configs), Some(ev)) = (&self.outbox, &self.push_configs, event)
        else {
            return Ok(None);
        };
        if matches!(ev.event, StreamResponse::Message(_)) {
            return Ok(None);
        }
        let ids = configs.ids_of(scope, id);
        if ids.is_empty() {
            return Ok(None);
        }
        let payload = crate::json::writer::to_vec(&ev.event)
            .map_err(|e| StoreError::Backend(format!("encode push notification: {e}")))?;
        let payload = bytes::Bytes::from(payload);
        let list = ids
            .into_iter()
            .map(|config_id| NewDelivery {
                scope: scope.clone(),
                task_id: id.clone(),
                config_id,
                seq: ev.seq,
                payload: payload.clone(),
            })
            .collect();
        Ok(Some((outbox, list)))
    }

    /// Runs `write` and, when it succeeds, appends `deliveries` to their outbox, holding the
    /// outbox's lock throughout: both happen, or neither (a full outbox refuses the write).
    fn with_deliveries(
        deliveries: Option<(&InMemoryPushOutbox, Vec<NewDelivery>)>,
        write: impl FnOnce() -> Result<u64, StoreError>,
    ) -> Result<u64, StoreError> {
        let Some((outbox, list)) = deliveries else {
            return write();
        };
        let mut st = outbox.lock();
        outbox.check_room(&st, list.len())?;
        let version = write()?;
        InMemoryPushOutbox::append(&mut st, list, now_ms());
        Ok(version)
    }

    /// How many tasks retention has evicted so far (the global cap, the per-scope bound and
    /// the age purge; not [`delete`](TaskStore::delete)).
    pub fn evicted(&self) -> u64 {
        self.evicted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Removes the push configs of tasks that went (after the lock is released).
    fn forget(&self, gone: Gone) {
        if gone.is_empty() {
            return;
        }
        let n = gone.len() as u64;
        self.evicted
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        #[cfg(feature = "metrics")]
        metrics::counter!("a2a_tasks_evicted_total", "store" => "memory").increment(n);
        tracing::debug!(evicted = n, "in-memory store evicted finished tasks");
        if let Some(configs) = &self.push_configs {
            for (scope, id) in gone {
                configs.remove_task(&scope, &id);
            }
        }
    }

    /// Keeps at most `events` events per task for replay (default 1,024); a reader asking for
    /// older ones gets [`StoreError::EventsGone`].
    pub fn with_events_per_task(mut self, events: usize) -> Self {
        self.events_per_task = events;
        self
    }

    /// Keeps at most `events` events in the logs of finished tasks, over all tasks (default
    /// [`DEFAULT_FINISHED_EVENTS`]): past it, the logs of the tasks that finished first are
    /// emptied (the tasks stay), and a reader asking for their events gets
    /// [`StoreError::EventsGone`].
    pub fn with_finished_events(mut self, events: usize) -> Self {
        self.finished_events = events;
        self
    }

    /// True when a scope holding `finished` finished tasks is past the per-scope limit (known
    /// before [`enforce_retention`](Self::enforce_retention) looks the scope up again).
    fn past_retention(&self, finished: usize) -> bool {
        self.max_finished_per_scope
            .is_some_and(|max| finished > max)
    }

    /// Drops the oldest terminal tasks of the scope `key` beyond the per-scope limit.
    fn enforce_retention(&self, tasks: &mut Tasks, key: &Scope, gone: &mut Gone) {
        let Some(max) = self.max_finished_per_scope else {
            return;
        };
        loop {
            let Some(s) = tasks.scopes.get(key) else {
                return;
            };
            if s.finished <= max {
                return;
            }
            // Usually the task that finished first is the oldest of all: the front of the
            // listing order, found without reading its (long unused) entry.
            let victim = match s.order.first_key_value() {
                Some(((_, id), true)) => Some(id.clone()),
                _ => s
                    .order
                    .iter()
                    .find(|(_, finished)| **finished)
                    .map(|((_, id), _)| id.clone()),
            };
            let Some(id) = victim else {
                return;
            };
            let scope = s.key.clone();
            if tasks.remove(key, &id).is_none() {
                return;
            }
            gone.push((scope, id));
        }
    }

    /// The number of tasks held, over all scopes.
    pub fn len(&self) -> usize {
        self.lock().held
    }

    /// [`TaskStore::create`], done under the lock.
    fn create_now(
        &self,
        scope: &Scope,
        task: Written<'_>,
        json: Option<&[u8]>,
        event: Option<Arc<SeqEvent>>,
    ) -> Result<u64, StoreError> {
        let deliveries = self.deliveries(scope, &task.id, event.as_ref())?;
        let mut gone = Gone::new();
        let created = Self::with_deliveries(deliveries, || {
            self.create_locked(scope, task, json, event, &mut gone)
        });
        self.forget(gone);
        created
    }

    fn create_locked(
        &self,
        scope: &Scope,
        task: Written<'_>,
        json: Option<&[u8]>,
        event: Option<Arc<SeqEvent>>,
        gone: &mut Gone,
    ) -> Result<u64, StoreError> {
        let mut guard = self.lock();
        let tasks = &mut *guard;
        if tasks.held >= self.max_tasks {
            // Full: room is made by evicting the task that finished first (over all scopes),
            // or the new task is refused when every task held is live.
            if tasks
                .scopes
                .get(scope)
                .is_some_and(|s| s.by_id.contains_key(task.id.as_str()))
            {
                return Err(StoreError::Exists(task.id.clone(), "already exists"));
            }
            match tasks.evict_first_finished() {
                Some(victim) => gone.push(victim),
                None => return Err(StoreError::Full(self.max_tasks)),
            }
        }
        // Look up first: `entry` would copy the scope on every call.
        let s = match tasks.scopes.get_mut(scope) {
            Some(s) => s,
            None => {
                let key = Arc::new(scope.clone());
                tasks
                    .scopes
                    .entry(key.clone())
                    .or_insert_with(|| ScopeTasks {
                        key,
                        ..ScopeTasks::default()
                    })
            }
        };
        // Shared with the task's own id: no copy.
        let id = task.id.shared();
        let std::collections::hash_map::Entry::Vacant(vacant) = s.by_id.entry(Arc::clone(&id))
        else {
            return Err(StoreError::Exists(task.id.clone(), "already exists"));
        };
        let held = Held::of(task, json);
        let finished = held.is_terminal();
        s.finished += usize::from(finished);
        s.order.insert((held.millis(), id.clone()), finished);
        let mut log = Log::default();
        log.record(1, event, None, self.events_per_task);
        let events = log.len();
        vacant.insert(Entry {
            version: 1,
            updated_ms: now_ms(),
            held,
            log,
        });
        let over = self.past_retention(s.finished);
        tasks.held += 1;
        if finished {
            let key = s.key.clone();
            tasks.finished += 1;
            tasks.queue_finished(key, id, 1, (events, self.finished_events));
        }
        if over {
            self.enforce_retention(tasks, scope, gone);
        }
        Ok(1)
    }

    /// [`TaskStore::update`], done under the lock.
    fn update_now(
        &self,
        scope: &Scope,
        task: Written<'_>,
        json: Option<&[u8]>,
        (expected_version, delta): (u64, Option<Delta<'_>>),
        event: Option<Arc<SeqEvent>>,
    ) -> Result<u64, StoreError> {
        let deliveries = self.deliveries(scope, &task.id, event.as_ref())?;
        let mut gone = Gone::new();
        let updated = Self::with_deliveries(deliveries, || {
            let held = |entry: &mut Entry, event: Option<&Arc<SeqEvent>>| {
                Ok::<_, std::convert::Infallible>((
                    replace_held(entry, task, json, delta, event),
                    (),
                ))
            };
            match self.update_locked(scope, &task.id, expected_version, event, &mut gone, held)? {
                Ok((version, ())) => Ok(version),
                Err(never) => match never {},
            }
        });
        self.forget(gone);
        updated
    }

    /// Changes the live task `task` (the runtime's copy) with `change` and stores it, as an
    /// update at `expected_version` logging no event (for a task nobody subscribes to), all
    /// under the store's lock. The store usually shares `task` since the runtime's last write:
    /// it lets go of it first, so `change` changes it in place instead of a copy, and no reader
    /// sees it half changed. `json` reads the task's encoding (as for
    /// [`write_now`](ImmediateWrites::write_now)) from what `change` returned.
    ///
    /// The store's error leaves everything as it was; so does `change`'s, which must fail
    /// before it changes the task.
    pub(crate) fn update_lent<R, E>(
        &self,
        scope: &Scope,
        task: &mut Arc<Task>,
        expected_version: u64,
        change: impl FnOnce(&mut Task) -> Result<R, E>,
        json: impl FnOnce(&R) -> Option<&[u8]>,
    ) -> Result<Result<(u64, R), E>, StoreError> {
        let id = task.id.clone();
        let mut gone = Gone::new();
        let held = |entry: &mut Entry, _: Option<&Arc<SeqEvent>>| {
            // The logged chunks read their parts from the task held, about to change.
            materialize_all(entry, id.as_str());
            let lent = matches!(&entry.held, Held::Value(t) if Arc::ptr_eq(t, task));
            if lent {
                // Never seen: the lock is held until a task is back in its place (a stand-in
                // left by a panic reads as a store error, not as a task).
                entry.held = Held::Encoded(Frozen::empty());
            }
            match change(Arc::make_mut(task)) {
                Ok(r) => {
                    entry.held = Held::of(Written::Shared(task), json(&r));
                    Ok((None, r))
                }
                Err(e) => {
                    if lent {
                        entry.held = Held::Value(Arc::clone(task));
                    }
                    Err(e)
                }
            }
        };
        let updated = self.update_locked(scope, &id, expected_version, None, &mut gone, held);
        self.forget(gone);
        updated
    }

    /// An update of task `id` at `expected_version`, under the lock: `held` puts the new task
    /// in the entry (returning the chunk `event` logs by reference, if any), then the entry's
    /// version, log, listing position and retention follow.
    fn update_locked<R, E>(
        &self,
        scope: &Scope,
        id: &TaskId,
        expected_version: u64,
        event: Option<Arc<SeqEvent>>,
        gone: &mut Gone,
        held: impl FnOnce(&mut Entry, Option<&Arc<SeqEvent>>) -> Result<(Option<ChunkRef>, R), E>,
    ) -> Result<Result<(u64, R), E>, StoreError> {
        let mut guard = self.lock();
        let tasks = &mut *guard;
        let s = tasks
            .scopes
            .get_mut(scope)
            .ok_or_else(|| StoreError::Exists(id.clone(), "does not exist"))?;
        let entry = s
            .by_id
            .get_mut(id.as_str())
            .ok_or_else(|| StoreError::Exists(id.clone(), "does not exist"))?;
        if entry.version != expected_version {
            return Err(StoreError::Conflict {
                task_id: id.clone(),
                expected: expected_version,
                found: entry.version,
            });
        }
        let old_millis = entry.held.millis();
        let was_finished = entry.held.is_terminal();
        let (chunk, r) = match held(entry, event.as_ref()) {
            Ok(done) => done,
            Err(e) => return Ok(Err(e)),
        };
        let new_millis = entry.held.millis();
        let is_finished = entry.held.is_terminal();
        entry.version += 1;
        entry.updated_ms = now_ms();
        let version = entry.version;
        entry
            .log
            .record(version, event, chunk, self.events_per_task);
        if (old_millis, was_finished) != (new_millis, is_finished) {
            let position = (old_millis, id.shared());
            if old_millis == new_millis {
                // Finished within the millisecond it was last written in (an agent that answers
                // at once): the position stays, only its flag changes.
                if let Some(finished) = s.order.get_mut(&position) {
                    *finished = is_finished;
                }
            } else if let Some(((_, id), _)) = s.order.remove_entry(&position) {
                // The id as the order held it (the map key's).
                s.order.insert((new_millis, id), is_finished);
            }
        }
        s.finished = s.finished + usize::from(is_finished) - usize::from(was_finished);
        let over = self.past_retention(s.finished);
        tasks.finished = tasks.finished + usize::from(is_finished) - usize::from(was_finished);
        if is_finished {
            // Queued again at this version: an older queue entry is now stale.
            let key = s.key.clone();
            if let Some((id, entry)) = s.by_id.get_key_value(id.as_str()) {
                let (id, events) = (id.clone(), entry.log.len());
                tasks.queue_finished(key, id, version, (events, self.finished_events));
            }
        }
        if over && is_finished && !was_finished {
            // Only a task that finishes can take its scope past the bound (not every
            // streamed event: that look-up showed in the SSE profile).
            self.enforce_retention(tasks, scope, gone);
        }
        Ok(Ok((version, r)))
    }

    /// True when no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ImmediateWrites for InMemoryTaskStore {
    fn write_now(
        &self,
        scope: &Scope,
        task: &Arc<Task>,
        json: Option<&[u8]>,
        write: Write<'_>,
        event: Option<Arc<SeqEvent>>,
    ) -> Result<u64, StoreError> {
        match write {
            Write::Create => self.create_now(scope, task.into(), json, event),
            Write::Update {
                expected_version,
                delta,
            } => self.update_now(scope, task.into(), json, (expected_version, delta), event),
        }
    }

    fn update_lent(
        &self,
        scope: &Scope,
        task: &mut Arc<Task>,
        expected_version: u64,
        change: LentChange<'_>,
        json: fn(&[u8]) -> Option<&[u8]>,
    ) -> Result<Result<(u64, Option<Vec<u8>>), crate::error::A2aError>, StoreError> {
        // The inherent, generic form.
        InMemoryTaskStore::update_lent(self, scope, task, expected_version, change, |reply| {
            reply.as_deref().and_then(json)
        })
    }
}

#[async_trait::async_trait]
impl TaskStore for InMemoryTaskStore {
    fn is_durable(&self) -> bool {
        false
    }

    fn immediate(&self) -> Option<&dyn ImmediateWrites> {
        Some(self)
    }

    fn push_outbox(&self) -> Option<Arc<dyn super::PushOutbox>> {
        match (&self.outbox, &self.push_configs) {
            (Some(outbox), Some(_)) => Some(outbox.clone()),
            _ => None,
        }
    }

    async fn get(&self, scope: &Scope, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        let found = self
            .lock()
            .get(scope)
            .and_then(|s| s.by_id.get(id.as_str()))
            .map(|e| (e.held.snapshot(), e.version));
        found
            .map(|(snapshot, version)| {
                Ok(StoredTask {
                    task: snapshot.into_task(id.as_str())?,
                    version,
                })
            })
            .transpose()
    }

    async fn create(
        &self,
        scope: &Scope,
        task: &Task,
        event: Option<&StreamResponse>,
    ) -> Result<u64, StoreError> {
        let event = event.map(|e| {
            Arc::new(SeqEvent {
                seq: 1,
                event: e.clone(),
            })
        });
        self.create_now(scope, task.into(), None, event)
    }

    async fn update(
        &self,
        scope: &Scope,
        task: &Task,
        expected_version: u64,
        event: Option<&StreamResponse>,
    ) -> Result<u64, StoreError> {
        let event = event.map(|e| {
            Arc::new(SeqEvent {
                seq: expected_version + 1,
                event: e.clone(),
            })
        });
        self.update_now(scope, task.into(), None, (expected_version, None), event)
    }

    async fn events_after(
        &self,
        scope: &Scope,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<SeqEvent>, StoreError> {
        let (logged, held) = {
            let scopes = self.lock();
            let Some(entry) = scopes.get(scope).and_then(|s| s.by_id.get(id.as_str())) else {
                return Ok(Vec::new());
            };
            if after >= entry.version {
                return Ok(Vec::new());
            }
            if limit == 0 {
                return Ok(Vec::new());
            }
            let logged = entry
                .log
                .after(after, limit)
                .ok_or_else(|| StoreError::EventsGone {
                    task_id: id.clone(),
                    after,
                    oldest: entry.log.oldest(),
                })?;
            // Chunks are read from the task: a live one here, a finished one (encoded) once
            // decoded, after the lock.
            match &entry.held {
                Held::Value(task) => return read_back(id, logged, Some(task)),
                Held::Encoded(f) => {
                    let chunks = logged.iter().any(|e| matches!(e, Logged::Chunk(..)));
                    (logged, chunks.then(|| f.clone()))
                }
            }
        };
        let task = held.map(|f| f.decode(id.as_str())).transpose()?;
        read_back(id, logged, task.as_ref())
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let after = query
            .page_token
            .as_deref()
            .map(|token| ListCursor::decode(token, query))
            .transpose()?;
        let size = query.page_size.clamp(1, 100);
        let mut page: Vec<(Arc<str>, Snapshot)> = Vec::with_capacity(size);
        let mut last = None;
        let mut more = false;
        let total;
        {
            let scopes = self.lock();
            let Some(s) = scopes.get(scope) else {
                return Ok(TaskPage::default());
            };
            // Only the status timestamp filters the listing: its order alone answers (a task
            // in the cut's own millisecond is checked, its timestamp may be finer).
            let by_time_only = query.context_id.is_none() && query.state.is_none();
            let cut = query.status_timestamp_after.map(|ts| ts.millis());
            let matches = |millis: i64, id: &Arc<str>| {
                if by_time_only && cut.is_none_or(|cut| millis > cut) {
                    return true;
                }
                s.by_id
                    .get(id)
                    .is_some_and(|entry| entry.held.matches(query))
            };
            // Newest first, down to the cut.
            let from = |upper: Option<&ListCursor>| {
                let upper = upper.map(|a| (a.millis, Arc::<str>::from(a.id.as_str())));
                let walk: Box<dyn Iterator<Item = (&Position, &bool)>> = match upper {
                    Some(upper) => Box::new(s.order.range(..upper).rev()),
                    None => Box::new(s.order.iter().rev()),
                };
                walk.take_while(move |((millis, _), _)| cut.is_none_or(|cut| *millis >= cut))
                    .map(|((millis, id), _)| (*millis, id))
            };
            for (millis, id) in from(after.as_ref()) {
                if !matches(millis, id) {
                    continue;
                }
                if page.len() == size {
                    more = true;
                    break;
                }
                let Some(entry) = s.by_id.get(id) else {
                    continue;
                };
                page.push((Arc::clone(id), entry.held.snapshot()));
                last = Some(millis);
            }
            let unfiltered = by_time_only && cut.is_none();
            total = match after.as_ref().and_then(|a| a.total) {
                // Counting is the expensive part: a later page reports the first page's count,
                // unless the listing has no filter (then it is the scope's size); a first page
                // that is also the last counts itself.
                Some(total) if !unfiltered => total,
                _ if unfiltered => s.order.len() as u64,
                None if after.is_none() && !more => page.len() as u64,
                _ => from(None)
                    .filter(|(millis, id)| matches(*millis, id))
                    .count() as u64,
            };
        }
        let next_page_token = match (page.last(), last) {
            (Some((id, _)), Some(millis)) if more => ListCursor {
                millis,
                id: TaskId::from(&**id),
                total: Some(total),
            }
            .encode(query),
            _ => String::new(),
        };
        let tasks = page
            .into_iter()
            .map(|(id, snapshot)| snapshot.into_task(&id))
            .collect::<Result<_, _>>()?;
        Ok(TaskPage {
            tasks,
            total_size: usize::try_from(total).unwrap_or(usize::MAX),
            next_page_token,
        })
    }

    async fn delete(&self, scope: &Scope, id: &TaskId) -> Result<bool, StoreError> {
        let removed = self.lock().remove(scope, id.as_str()).is_some();
        if removed && let Some(configs) = &self.push_configs {
            configs.remove_task(scope, id.as_str());
        }
        Ok(removed)
    }

    async fn untouched(
        &self,
        states: &[TaskState],
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskRef>, StoreError> {
        let before = before.millis();
        // The states asked for are live ones (held as values) in practice; a scan of what is
        // held, which the global cap bounds.
        let mut found: Vec<(i64, TaskRef)> = Vec::new();
        {
            let tasks = self.lock();
            for s in tasks.scopes.values() {
                for (id, e) in &s.by_id {
                    let state = match &e.held {
                        Held::Value(t) => t.status.state,
                        Held::Encoded(f) => f.state(),
                    };
                    if e.updated_ms < before && states.contains(&state) {
                        found.push((
                            e.updated_ms,
                            TaskRef {
                                scope: Scope::clone(&s.key),
                                id: TaskId::from(&**id),
                                version: e.version,
                            },
                        ));
                    }
                }
            }
        }
        found.sort_by(|a, b| (a.0, &a.1.id).cmp(&(b.0, &b.1.id)));
        Ok(found.into_iter().take(limit).map(|(_, t)| t).collect())
    }

    async fn purge_finished(&self, before: Timestamp, limit: usize) -> Result<usize, StoreError> {
        let before = before.millis();
        let mut gone = Gone::new();
        {
            let mut guard = self.lock();
            let tasks = &mut *guard;
            // The queue is in the order tasks finished: the first one written since `before`
            // ends the pass (a finished task written again is queued again, at the back).
            while gone.len() < limit {
                let Some(f) = tasks.first_finished() else {
                    break;
                };
                let updated = tasks
                    .scopes
                    .get(&*f.scope)
                    .and_then(|s| s.by_id.get(&*f.id))
                    .map_or(i64::MAX, |e| e.updated_ms);
                if updated >= before {
                    tasks.queue.push_front(f);
                    break;
                }
                if tasks.remove(&f.scope, &f.id).is_some() {
                    gone.push((f.scope, f.id));
                }
            }
        }
        let n = gone.len();
        self.forget(gone);
        Ok(n)
    }
}

/// A [`PushConfigStore`] in process memory.
#[derive(Debug, Default)]
pub struct InMemoryPushConfigStore {
    configs: Mutex<HashMap<(Scope, TaskId), Vec<TaskPushNotificationConfig>>>,
}

impl InMemoryPushConfigStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(Scope, TaskId), Vec<TaskPushNotificationConfig>>> {
        self.configs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The ids of the configs of task `id` of `scope`, oldest first.
    pub(crate) fn ids_of(&self, scope: &Scope, id: &TaskId) -> Vec<PushConfigId> {
        let map = self.lock();
        if map.is_empty() {
            return Vec::new();
        }
        map.get(&(scope.clone(), id.clone()))
            .map(|l| l.iter().map(|c| c.id.clone()).collect())
            .unwrap_or_default()
    }

    /// Removes every config of task `id` of `scope` (the task went).
    pub(crate) fn remove_task(&self, scope: &Scope, id: &str) {
        let mut map = self.lock();
        if !map.is_empty() {
            map.remove(&(scope.clone(), TaskId::from(id)));
        }
    }
}

#[async_trait::async_trait]
impl PushConfigStore for InMemoryPushConfigStore {
    async fn put(
        &self,
        scope: &Scope,
        config: &TaskPushNotificationConfig,
    ) -> Result<(), StoreError> {
        let mut map = self.lock();
        let list = map
            .entry((scope.clone(), config.task_id.clone()))
            .or_default();
        match list.iter_mut().find(|c| c.id == config.id) {
            Some(existing) => *existing = config.clone(),
            None => list.push(config.clone()),
        }
        Ok(())
    }

    async fn get(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        Ok(self
            .lock()
            .get(&(scope.clone(), task_id.clone()))
            .and_then(|l| l.iter().find(|c| &c.id == id).cloned()))
    }

    async fn list(
        &self,
        scope: &Scope,
        task_id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        Ok(self
            .lock()
            .get(&(scope.clone(), task_id.clone()))
            .cloned()
            .unwrap_or_default())
    }

    async fn delete(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<bool, StoreError> {
        let mut map = self.lock();
        let Some(list) = map.get_mut(&(scope.clone(), task_id.clone())) else {
            return Ok(false);
        };
        let before = list.len();
        list.retain(|c| &c.id != id);
        Ok(list.len() != before)
    }

    async fn delete_all(&self, scope: &Scope, task_id: &TaskId) -> Result<(), StoreError> {
        self.lock().remove(&(scope.clone(), task_id.clone()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::cmp::Reverse;

    use super::*;
    use crate::types::{
        Artifact, Message, Part, Role, TaskArtifactUpdateEvent, TaskState, TaskStatus, Timestamp,
    };

    fn task(i: i64, state: TaskState) -> Task {
        Task {
            id: format!("t{i:03}").into(),
            context_id: "c".into(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: Timestamp::from_millis(1_000 + i),
            },
            ..Task::default()
        }
    }

    /// Tasks in every form the store holds: live values, encoded finished tasks, and finished
    /// tasks kept as values (a sub-millisecond timestamp the wire form would round); equal
    /// timestamps, no timestamp, three contexts (one empty), metadata, artifacts and history.
    fn mixed_tasks() -> Vec<Task> {
        (0..40)
            .map(|i| {
                let state = match i % 5 {
                    0 => TaskState::Working,
                    1 | 2 => TaskState::Completed,
                    3 => TaskState::Failed,
                    _ => TaskState::InputRequired,
                };
                let mut t = task(i / 3, state);
                t.id = format!("task-{:02}", (i * 7) % 40).into();
                t.context_id = ["c1", "c2", ""][(i % 3) as usize].into();
                match i % 11 {
                    0 => t.status.timestamp = None,
                    1 => {
                        t.status.timestamp = t
                            .status
                            .timestamp
                            .map(|ts| Timestamp(ts.0 + chrono::Duration::microseconds(7)));
                    }
                    _ => {}
                }
                t.metadata.insert(
                    "n".into(),
                    serde_json::json!({"i": i, "f": 0.25, "u": u64::MAX}),
                );
                t.artifacts = vec![Artifact {
                    artifact_id: format!("a{i}").into(),
                    parts: vec![Part::text("one"), Part::text("two")],
                    ..Artifact::default()
                }];
                t.history = vec![Message {
                    message_id: format!("m{i}").into(),
                    task_id: t.id.clone(),
                    context_id: t.context_id.clone(),
                    role: Role::User,
                    parts: vec![Part::text("hello")],
                    ..Message::default()
                }];
                t
            })
            .collect()
    }

    /// What a listing must return, computed naively from the tasks.
    fn expected_pages(tasks: &[Task], query: &TaskQuery) -> Vec<TaskPage> {
        let mut matching: Vec<&Task> = tasks
            .iter()
            .filter(|t| {
                query.context_id.as_ref().is_none_or(|c| &t.context_id == c)
                    && query.state.is_none_or(|st| t.status.state == st)
                    && query
                        .status_timestamp_after
                        .is_none_or(|ts| t.status.timestamp.is_some_and(|x| x >= ts))
            })
            .collect();
        matching.sort_by_key(|t| Reverse(ListCursor::of(t)));
        let chunks: Vec<&[&Task]> = matching.chunks(query.page_size).collect();
        if chunks.is_empty() {
            return vec![TaskPage::default()];
        }
        chunks
            .iter()
            .enumerate()
            .map(|(i, chunk)| TaskPage {
                tasks: chunk.iter().map(|t| (*t).clone()).collect(),
                total_size: matching.len(),
                next_page_token: match chunk.last() {
                    Some(last) if i + 1 < chunks.len() => ListCursor {
                        total: Some(matching.len() as u64),
                        ..ListCursor::of(last)
                    }
                    .encode(query),
                    _ => String::new(),
                },
            })
            .collect()
    }

    async fn all_pages(
        store: &InMemoryTaskStore,
        scope: &Scope,
        query: &TaskQuery,
    ) -> Vec<TaskPage> {
        let mut query = query.clone();
        let mut pages = Vec::new();
        loop {
            let page = store.list(scope, &query).await.unwrap();
            let next = page.next_page_token.clone();
            pages.push(page);
            if next.is_empty() {
                return pages;
            }
            query.page_token = Some(next);
        }
    }

    fn queries() -> Vec<TaskQuery> {
        let mut out = Vec::new();
        for page_size in [1, 3, 7, 100] {
            let base = TaskQuery {
                page_size,
                ..TaskQuery::default()
            };
            out.push(base.clone());
            for c in ["c1", "c2", "", "nope"] {
                out.push(TaskQuery {
                    context_id: Some(c.into()),
                    ..base.clone()
                });
            }
            for st in [TaskState::Working, TaskState::Completed, TaskState::Failed] {
                out.push(TaskQuery {
                    state: Some(st),
                    context_id: (page_size == 3).then(|| "c2".into()),
                    ..base.clone()
                });
            }
            for ms in [1_004, 1_007] {
                let ts = Timestamp::from_millis(ms).unwrap();
                for after in [ts, Timestamp(ts.0 + chrono::Duration::microseconds(3))] {
                    out.push(TaskQuery {
                        status_timestamp_after: Some(after),
                        ..base.clone()
                    });
                }
            }
        }
        out
    }

    #[tokio::test]
    async fn finished_tasks_are_held_encoded_and_read_back_exactly() {
        let store = InMemoryTaskStore::new();
        let scope = Scope::new("", "me");
        let tasks = mixed_tasks();
        for t in &tasks {
            store.create(&scope, t, None).await.unwrap();
        }
        {
            let scopes = store.lock();
            let s = &scopes[&scope];
            for t in &tasks {
                let held = &s.by_id[t.id.as_str()].held;
                let exact = t
                    .status
                    .timestamp
                    .is_none_or(|ts| Timestamp::from_millis(ts.millis()) == Some(ts));
                let encoded = matches!(held, Held::Encoded(_));
                assert_eq!(encoded, t.status.state.is_terminal() && exact, "{t:?}");
            }
            assert_eq!(
                s.finished,
                tasks
                    .iter()
                    .filter(|t| t.status.state.is_terminal())
                    .count()
            );
        }
        for t in &tasks {
            let stored = store.get(&scope, &t.id).await.unwrap().unwrap();
            assert_eq!(
                stored,
                StoredTask {
                    task: t.clone(),
                    version: 1
                }
            );
        }
        assert!(
            store
                .get(&Scope::new("", "other"), &tasks[1].id)
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn listing_gives_the_same_pages_whatever_the_form_of_the_tasks() {
        let scope = Scope::new("t", "me");
        let tasks = mixed_tasks();
        // The same tasks, once created finished (encoded at once), once created live (as values)
        // then finished by an update, and once never finished (every one a value).
        let direct = InMemoryTaskStore::new();
        let finished_later = InMemoryTaskStore::new();
        let values = InMemoryTaskStore::new();
        let mut live_versions = Vec::new();
        for t in &tasks {
            direct.create(&scope, t, None).await.unwrap();
            let mut live = t.clone();
            live.status.state = TaskState::Submitted;
            finished_later.create(&scope, &live, None).await.unwrap();
            finished_later.update(&scope, t, 1, None).await.unwrap();
            let mut live = t.clone();
            if live.status.state.is_terminal() {
                live.status.state = TaskState::Working;
            }
            values.create(&scope, &live, None).await.unwrap();
            live_versions.push(live);
        }
        for query in queries() {
            let want = expected_pages(&tasks, &query);
            assert_eq!(all_pages(&direct, &scope, &query).await, want, "{query:?}");
            assert_eq!(
                all_pages(&finished_later, &scope, &query).await,
                want,
                "{query:?}"
            );
            let want = expected_pages(&live_versions, &query);
            assert_eq!(all_pages(&values, &scope, &query).await, want, "{query:?}");
        }
        assert!(matches!(
            direct
                .list(
                    &scope,
                    &TaskQuery {
                        page_size: 5,
                        page_token: Some("!".into()),
                        ..TaskQuery::default()
                    }
                )
                .await,
            Err(StoreError::InvalidPageToken)
        ));
        let empty = direct
            .list(
                &Scope::new("t", "other"),
                &TaskQuery {
                    page_size: 5,
                    ..TaskQuery::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(empty, TaskPage::default());
    }

    #[tokio::test]
    async fn a_finished_task_can_still_be_updated_and_deleted() {
        let store = InMemoryTaskStore::new();
        let scope = Scope::new("", "me");
        let tasks = mixed_tasks();
        let mut done = tasks[1].clone();
        store.create(&scope, &done, None).await.unwrap();
        // A metadata edit (as a custom handler may make): decoded, replaced, encoded again.
        done.metadata
            .insert("edited".into(), serde_json::json!([1, 2.5, "x"]));
        assert_eq!(store.update(&scope, &done, 1, None).await.unwrap(), 2);
        assert!(matches!(
            store.update(&scope, &done, 1, None).await,
            Err(StoreError::Conflict {
                expected: 1,
                found: 2,
                ..
            })
        ));
        let stored = store.get(&scope, &done.id).await.unwrap().unwrap();
        assert_eq!(
            stored,
            StoredTask {
                task: done.clone(),
                version: 2
            }
        );
        // A new status timestamp moves it in the listing.
        let mut later = done.clone();
        later.status.timestamp = Timestamp::from_millis(5_000);
        store.create(&scope, &tasks[3], None).await.unwrap();
        assert_eq!(store.update(&scope, &later, 2, None).await.unwrap(), 3);
        let page = store
            .list(
                &scope,
                &TaskQuery {
                    page_size: 10,
                    ..TaskQuery::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(page.tasks, vec![later.clone(), tasks[3].clone()]);
        // Even back to a live state (the store does not police the lifecycle).
        let mut again = later.clone();
        again.status.state = TaskState::Working;
        assert_eq!(store.update(&scope, &again, 3, None).await.unwrap(), 4);
        assert_eq!(
            store.get(&scope, &again.id).await.unwrap().unwrap().task,
            again
        );
        assert_eq!(store.lock()[&scope].finished, 1);
        assert!(store.delete(&scope, &again.id).await.unwrap());
        assert!(store.delete(&scope, &tasks[3].id).await.unwrap());
        assert!(!store.delete(&scope, &tasks[3].id).await.unwrap());
        assert!(store.is_empty());
        {
            // The scope went with its last task.
            let tasks = store.lock();
            assert!(tasks.scopes.is_empty() && tasks.finished == 0 && tasks.held == 0);
        }
        assert!(matches!(
            store.update(&scope, &again, 4, None).await,
            Err(StoreError::Exists(..))
        ));
    }

    #[tokio::test]
    async fn a_corrupt_encoding_is_an_error_not_a_panic() {
        let store = InMemoryTaskStore::new();
        let scope = Scope::new("", "me");
        let done = task(1, TaskState::Completed);
        store.create(&scope, &done, None).await.unwrap();
        if let Some(s) = store.lock().get_mut(&scope) {
            for e in s.by_id.values_mut() {
                e.held = Held::Encoded(Frozen::from_raw(&[3, 0, 0, 0, 0, 0, 0, 0, 0, 0, b'{']));
            }
        }
        assert!(matches!(
            store.get(&scope, &done.id).await,
            Err(StoreError::Backend(_))
        ));
        let query = TaskQuery {
            page_size: 5,
            ..TaskQuery::default()
        };
        assert!(matches!(
            store.list(&scope, &query).await,
            Err(StoreError::Backend(_))
        ));
    }

    #[tokio::test]
    async fn retention_keeps_the_newest_finished_tasks_and_every_live_one() {
        let store = InMemoryTaskStore::with_retention(3);
        let scope = Scope::new("", "me");
        store
            .create(&scope, &task(0, TaskState::Working), None)
            .await
            .unwrap();
        for i in 1..=6 {
            store
                .create(&scope, &task(i, TaskState::Completed), None)
                .await
                .unwrap();
        }
        // Six finished, three kept (the newest), the working one untouched.
        assert_eq!(store.len(), 4);
        for i in 1..=3 {
            assert!(
                store
                    .get(&scope, &format!("t{i:03}").into())
                    .await
                    .unwrap()
                    .is_none()
            );
        }
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
        // Finishing the live task (newest timestamp) evicts the oldest finished one.
        let mut done = task(7, TaskState::Completed);
        done.id = "t000".into();
        store.update(&scope, &done, 1, None).await.unwrap();
        assert_eq!(store.len(), 3);
        assert!(store.get(&scope, &"t004".into()).await.unwrap().is_none());
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_task_finishing_without_a_new_timestamp_still_counts_for_retention() {
        let store = InMemoryTaskStore::with_retention(1);
        let scope = Scope::new("", "me");
        // The oldest task, live, then finished with its status timestamp unchanged (or none).
        for timestamp in [Timestamp::from_millis(1_000), None] {
            let mut old = task(0, TaskState::Working);
            old.status.timestamp = timestamp;
            store.create(&scope, &old, None).await.unwrap();
            old.status.state = TaskState::Completed;
            store.update(&scope, &old, 1, None).await.unwrap();
            store
                .create(&scope, &task(1, TaskState::Completed), None)
                .await
                .unwrap();
            // Two finished, one kept: the one that finished first goes.
            assert_eq!(store.len(), 1, "{timestamp:?}");
            assert!(store.get(&scope, &"t000".into()).await.unwrap().is_none());
            store.delete(&scope, &"t001".into()).await.unwrap();
        }
        // A live task older than every finished one is kept, and the finished ones still go.
        store
            .create(&scope, &task(0, TaskState::Working), None)
            .await
            .unwrap();
        for i in 1..=3 {
            store
                .create(&scope, &task(i, TaskState::Completed), None)
                .await
                .unwrap();
        }
        assert_eq!(store.len(), 2);
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
        assert!(store.get(&scope, &"t003".into()).await.unwrap().is_some());
    }

    /// `f` of the in-memory store's own copy of the live task `id` (tests look at where its
    /// parts live).
    fn with_held<R>(
        store: &InMemoryTaskStore,
        scope: &Scope,
        id: &str,
        f: impl FnOnce(&Task) -> R,
    ) -> R {
        let scopes = store.lock();
        match &scopes.get(scope).unwrap().by_id.get(id).unwrap().held {
            Held::Value(t) => f(t),
            Held::Encoded(_) => panic!("{id} is held encoded"),
        }
    }

    /// A copy of the store's own copy of the live task `id`.
    fn held_value(store: &InMemoryTaskStore, scope: &Scope, id: &str) -> Task {
        with_held(store, scope, id, Task::clone)
    }

    /// The address of the text of the store's first part of the first artifact of `id`.
    fn first_text_at(store: &InMemoryTaskStore, scope: &Scope, id: &str) -> *const u8 {
        with_held(store, scope, id, |t| {
            t.artifacts[0].parts[0].as_text().unwrap().as_ptr()
        })
    }

    #[tokio::test]
    async fn an_update_with_its_delta_appends_the_chunk_to_the_held_task_instead_of_copying_it() {
        let store = InMemoryTaskStore::new();
        let scope = Scope::default();
        let mut live = task(1, TaskState::Working);
        live.artifacts = vec![Artifact {
            artifact_id: "a".into(),
            ..Artifact::new([Part::text("chunk 0")])
        }];
        let mut version = store.create(&scope, &live, None).await.unwrap();
        let first = first_text_at(&store, &scope, "t001");
        for n in 1..=20 {
            let event = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: live.id.clone(),
                context_id: live.context_id.clone(),
                artifact: Artifact {
                    artifact_id: "a".into(),
                    ..Artifact::new([Part::text(format!("chunk {n}"))])
                },
                append: true,
                ..Default::default()
            });
            assert!(apply(&mut live, &event));
            let replay = |task: &mut Task| apply(task, &event);
            let write = Write::Update {
                expected_version: version,
                delta: Some(Delta::new(&replay)),
            };
            version = store
                .write_now(&scope, &Arc::new(live.clone()), None, write, None)
                .unwrap();
            assert_eq!(held_value(&store, &scope, "t001"), live, "chunk {n}");
            // The chunks held before are where they were: appended to, not copied.
            assert_eq!(first_text_at(&store, &scope, "t001"), first, "chunk {n}");
        }
        assert_eq!(live.artifacts[0].parts.len(), 21);
        assert_eq!(
            store.get(&scope, &live.id).await.unwrap().unwrap().task,
            live
        );

        // A delta the held task refuses (here: an event for another task) is not applied: the
        // written task is copied as it is.
        let other = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "elsewhere".into(),
            context_id: live.context_id.clone(),
            artifact: Artifact {
                artifact_id: "a".into(),
                ..Artifact::new([Part::text("stray")])
            },
            append: true,
            ..Default::default()
        });
        live.status.message = Some(Message::default());
        let replay = |task: &mut Task| apply(task, &other);
        let write = Write::Update {
            expected_version: version,
            delta: Some(Delta::new(&replay)),
        };
        store
            .write_now(&scope, &Arc::new(live.clone()), None, write, None)
            .unwrap();
        assert_eq!(held_value(&store, &scope, "t001"), live);
        assert!(!apply(&mut live.clone(), &other));
    }

    /// Applies `event` to `task` as the task lifecycle does, for the events these tests send
    /// (the delta replayed on the held task); false for an artifact of another task.
    fn apply(task: &mut Task, event: &StreamResponse) -> bool {
        match event {
            StreamResponse::ArtifactUpdate(e) if e.task_id != task.id => return false,
            StreamResponse::ArtifactUpdate(e) => {
                let id = &e.artifact.artifact_id;
                match task.artifacts.iter_mut().find(|a| &a.artifact_id == id) {
                    Some(a) if e.append => a.parts.extend(e.artifact.parts.iter().cloned()),
                    Some(a) => *a = e.artifact.clone(),
                    None => task.artifacts.push(e.artifact.clone()),
                }
            }
            StreamResponse::StatusUpdate(e) => task.status = e.status.clone(),
            StreamResponse::Task(t) => {
                task.status = t.status.clone();
                task.artifacts = t.artifacts.clone();
            }
            StreamResponse::Message(_) => return false,
        }
        true
    }

    /// A live task written event by event as the runtime writes it (each event applied to the
    /// held copy, and logged), with the events delivered so far.
    struct Streamed {
        store: InMemoryTaskStore,
        scope: Scope,
        live: Task,
        version: u64,
        delivered: Vec<SeqEvent>,
    }

    impl Streamed {
        /// The live task `t{n}`, created with a status update as its first event, or without
        /// an event (its log then starts at 2).
        async fn new(n: i64, with_event: bool) -> Self {
            let mut s = Self {
                store: InMemoryTaskStore::new(),
                scope: Scope::new("t", "me"),
                live: task(n, TaskState::Working),
                version: 0,
                delivered: Vec::new(),
            };
            let first = with_event.then(|| s.status(TaskState::Working));
            s.version = s
                .store
                .create(&s.scope, &s.live, first.as_ref())
                .await
                .unwrap();
            s.delivered
                .extend(first.map(|event| SeqEvent { seq: 1, event }));
            s
        }

        fn send(&mut self, events: impl IntoIterator<Item = StreamResponse>) {
            for event in events {
                assert!(apply(&mut self.live, &event), "{event:?}");
                let shared = Arc::new(SeqEvent {
                    seq: self.version + 1,
                    event,
                });
                let replay = |task: &mut Task| apply(task, &shared.event);
                let write = Write::Update {
                    expected_version: self.version,
                    delta: Some(Delta::new(&replay)),
                };
                self.version = self
                    .store
                    .write_now(
                        &self.scope,
                        &Arc::new(self.live.clone()),
                        None,
                        write,
                        Some(shared.clone()),
                    )
                    .unwrap();
                self.delivered.push(SeqEvent::clone(&shared));
            }
        }

        fn chunk(&self, artifact: &str, text: &str, append: bool) -> StreamResponse {
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: self.live.id.clone(),
                context_id: self.live.context_id.clone(),
                artifact: Artifact {
                    artifact_id: artifact.into(),
                    ..Artifact::new([Part::text(text)])
                },
                append,
                ..Default::default()
            })
        }

        fn status(&self, state: TaskState) -> StreamResponse {
            StreamResponse::StatusUpdate(crate::types::TaskStatusUpdateEvent {
                task_id: self.live.id.clone(),
                context_id: self.live.context_id.clone(),
                status: TaskStatus {
                    state,
                    message: None,
                    timestamp: Timestamp::from_millis(5_000),
                },
                metadata: Default::default(),
            })
        }

        /// Asserts that the log holds `chunks` chunks by reference, and that its events after
        /// `after` read back as they were delivered.
        async fn assert_log(&self, chunks: usize, after: u64) {
            let logged = self.store.lock()[&self.scope].by_id[self.live.id.as_str()]
                .log
                .chunks();
            assert_eq!(logged, chunks);
            let read = self
                .store
                .events_after(&self.scope, &self.live.id, after, 100);
            let read = read.await.unwrap();
            let from = self.delivered.partition_point(|e| e.seq <= after);
            assert_eq!(read, self.delivered[from..]);
        }
    }

    #[tokio::test]
    async fn streamed_chunks_read_back_from_the_log_exactly_as_delivered() {
        let mut s = Streamed::new(1, true).await;
        // A new artifact, chunks appended to it, another artifact with a name (logged as the
        // event), and one more chunk.
        let mut named = s.chunk("b", "b0", false);
        if let StreamResponse::ArtifactUpdate(e) = &mut named {
            e.artifact.name = "named".into();
            e.last_chunk = true;
        }
        s.send([
            s.chunk("a", "a0", false),
            s.chunk("a", "a1", true),
            s.chunk("a", "a2", true),
            named,
            s.chunk("a", "a3", true),
        ]);
        s.assert_log(4, 0).await;
        // From the middle, and a page of two.
        let read = s.store.events_after(&s.scope, &s.live.id, 3, 2).await;
        assert_eq!(read.unwrap(), s.delivered[3..5]);

        // Replacing artifact `a` first turns its logged chunks into the events they were.
        s.send([s.chunk("a", "replaced", false)]);
        s.assert_log(1, 0).await;
        s.send([
            s.status(TaskState::InputRequired),
            s.status(TaskState::Working),
            s.chunk("a", "r1", true),
        ]);
        s.assert_log(2, 0).await;

        // Finished (and held encoded): the chunks are read from the decoded task.
        s.send([s.status(TaskState::Completed)]);
        assert!(matches!(
            s.store.lock()[&s.scope].by_id["t001"].held,
            Held::Encoded(_)
        ));
        s.assert_log(2, 0).await;
    }

    #[tokio::test]
    async fn a_task_event_replacing_the_artifacts_keeps_the_logged_chunks_readable() {
        let mut s = Streamed::new(3, false).await;
        let mut replacement = s.live.clone();
        replacement.artifacts = vec![Artifact {
            artifact_id: "y".into(),
            ..Artifact::new([Part::text("whole")])
        }];
        s.send([
            s.chunk("y", "y0", false),
            s.chunk("y", "y1", true),
            StreamResponse::Task(replacement),
            s.chunk("y", "y2", true),
        ]);
        // The two chunks before the task event were turned into events; the one after it is
        // read from the replacement's artifact.
        assert_eq!(s.live.artifacts[0].parts.len(), 2);
        s.assert_log(1, 1).await;

        // Finished by a task event that drops the artifacts: the last chunk is turned into
        // its event first.
        let mut done = s.live.clone();
        done.status.state = TaskState::Completed;
        done.artifacts.clear();
        s.send([StreamResponse::Task(done)]);
        s.assert_log(0, 1).await;
    }

    #[tokio::test]
    async fn a_write_without_its_event_applied_keeps_the_logged_chunks_readable() {
        let mut s = Streamed::new(2, false).await;
        s.send([
            s.chunk("x", "x0", false),
            s.chunk("x", "x1", true),
            s.chunk("x", "x2", true),
        ]);
        s.assert_log(3, 1).await;
        // A plain write (no subscriber, or through the trait) replaces the held copy: here one
        // that replaces the artifact the chunks were read from.
        s.live.artifacts[0] = Artifact {
            artifact_id: "x".into(),
            ..Artifact::new([Part::text("other")])
        };
        s.store
            .update(&s.scope, &s.live, s.version, None)
            .await
            .unwrap();
        s.assert_log(0, 1).await;
    }

    /// A push config for task `id`.
    fn config(id: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            task_id: id.into(),
            id: "p".into(),
            url: "https://example.com/hook".into(),
            ..TaskPushNotificationConfig::default()
        }
    }

    #[tokio::test]
    async fn the_global_cap_bounds_tasks_over_every_tenant_and_takes_push_configs_along() {
        let configs = Arc::new(InMemoryPushConfigStore::new());
        let store = InMemoryTaskStore::new()
            .with_max_tasks(100)
            .with_push_configs(configs.clone());
        // 1,000 finished tasks, each in a tenant of its own: no per-scope bound would bite.
        for i in 0..1_000 {
            let scope = Scope::new(format!("tenant-{i}"), "me");
            let t = task(i, TaskState::Completed);
            store.create(&scope, &t, None).await.unwrap();
            configs.put(&scope, &config(t.id.as_str())).await.unwrap();
        }
        assert_eq!(store.len(), 100);
        assert_eq!(store.evicted(), 900);
        {
            let tasks = store.lock();
            // Empty scopes do not linger.
            assert_eq!(tasks.scopes.len(), 100);
            assert_eq!(tasks.finished, 100);
            assert!(tasks.queue.len() <= 2 * 100 + 1024);
        }
        // The 100 that finished last are held, the others are gone with their push configs.
        for i in [0, 500, 899] {
            let scope = Scope::new(format!("tenant-{i}"), "me");
            let id = TaskId::from(format!("t{i:03}"));
            assert!(store.get(&scope, &id).await.unwrap().is_none());
            assert!(configs.list(&scope, &id).await.unwrap().is_empty(), "{i}");
        }
        for i in [900, 999] {
            let scope = Scope::new(format!("tenant-{i}"), "me");
            let id = TaskId::from(format!("t{i:03}"));
            assert!(store.get(&scope, &id).await.unwrap().is_some());
            assert_eq!(configs.list(&scope, &id).await.unwrap().len(), 1);
        }
        assert_eq!(configs.lock().len(), 100);
    }

    #[tokio::test]
    async fn at_the_cap_live_tasks_are_kept_and_a_new_task_is_refused() {
        let store = InMemoryTaskStore::new().with_max_tasks(3);
        let scope = Scope::new("", "me");
        for i in 0..3 {
            store
                .create(&scope, &task(i, TaskState::InputRequired), None)
                .await
                .unwrap();
        }
        let refused = store
            .create(&scope, &task(3, TaskState::Working), None)
            .await;
        assert!(matches!(refused, Err(StoreError::Full(3))), "{refused:?}");
        let err = crate::error::A2aError::from(refused.unwrap_err());
        assert!(
            matches!(err, crate::error::A2aError::Unavailable(_)),
            "{err:?}"
        );
        // A duplicate id at the cap is still answered as a duplicate.
        assert!(matches!(
            store
                .create(&scope, &task(0, TaskState::Working), None)
                .await,
            Err(StoreError::Exists(..))
        ));
        // One finishes: the next new task evicts it, not a live one.
        let mut done = task(1, TaskState::Completed);
        done.status.timestamp = Timestamp::from_millis(9_000);
        store.update(&scope, &done, 1, None).await.unwrap();
        store
            .create(&scope, &task(4, TaskState::Working), None)
            .await
            .unwrap();
        assert_eq!(store.len(), 3);
        assert!(store.get(&scope, &done.id).await.unwrap().is_none());
        for i in [0, 2, 4] {
            let id = TaskId::from(format!("t{i:03}"));
            assert!(store.get(&scope, &id).await.unwrap().is_some(), "{i}");
        }
    }

    #[tokio::test]
    async fn a_finished_task_written_again_is_evicted_by_its_last_write() {
        let store = InMemoryTaskStore::new().with_max_tasks(2);
        let scope = Scope::new("", "me");
        let mut first = task(0, TaskState::Completed);
        store.create(&scope, &first, None).await.unwrap();
        store
            .create(&scope, &task(1, TaskState::Completed), None)
            .await
            .unwrap();
        // t000 is written again (a metadata edit): it now counts as finished after t001.
        first.metadata.insert("k".into(), serde_json::json!(1));
        store.update(&scope, &first, 1, None).await.unwrap();
        store
            .create(&scope, &task(2, TaskState::Completed), None)
            .await
            .unwrap();
        assert!(store.get(&scope, &"t001".into()).await.unwrap().is_none());
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn retention_queries_find_old_tasks_by_state_and_purge_only_finished_ones() {
        let configs = Arc::new(InMemoryPushConfigStore::new());
        let store = InMemoryTaskStore::new().with_push_configs(configs.clone());
        let scope = Scope::new("t", "me");
        for (i, state) in [
            TaskState::Completed,
            TaskState::InputRequired,
            TaskState::AuthRequired,
            TaskState::Working,
            TaskState::Failed,
        ]
        .into_iter()
        .enumerate()
        {
            let t = task(i as i64, state);
            store.create(&scope, &t, None).await.unwrap();
            configs.put(&scope, &config(t.id.as_str())).await.unwrap();
        }
        let past = Timestamp::from_millis(now_ms() - 60_000).unwrap();
        let future = Timestamp::from_millis(now_ms() + 60_000).unwrap();
        let interrupted = [TaskState::InputRequired, TaskState::AuthRequired];
        assert!(
            store
                .untouched(&interrupted, past, 10)
                .await
                .unwrap()
                .is_empty()
        );
        let found = store.untouched(&interrupted, future, 10).await.unwrap();
        let mut ids: Vec<_> = found.iter().map(|t| t.id.to_string()).collect();
        ids.sort();
        assert_eq!(ids, ["t001", "t002"]);
        assert!(found.iter().all(|t| t.version == 1 && t.scope == scope));
        assert_eq!(
            store
                .untouched(&interrupted, future, 1)
                .await
                .unwrap()
                .len(),
            1
        );

        assert_eq!(store.purge_finished(past, 10).await.unwrap(), 0);
        assert_eq!(store.purge_finished(future, 1).await.unwrap(), 1);
        assert_eq!(store.purge_finished(future, 10).await.unwrap(), 1);
        assert_eq!(store.purge_finished(future, 10).await.unwrap(), 0);
        assert_eq!(store.len(), 3);
        for id in ["t000", "t004"] {
            assert!(store.get(&scope, &id.into()).await.unwrap().is_none());
            assert!(configs.list(&scope, &id.into()).await.unwrap().is_empty());
        }
        assert_eq!(configs.lock().len(), 3);
        // Deleting a task takes its configs too.
        assert!(store.delete(&scope, &"t003".into()).await.unwrap());
        assert!(
            configs
                .list(&scope, &"t003".into())
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(store.evicted(), 2);
    }

    /// Creates `t` in `store` and writes it `n` times in all, each write with its status as the
    /// event, the last one leaving it `last`.
    async fn written(
        store: &InMemoryTaskStore,
        scope: &Scope,
        t: &mut Task,
        n: usize,
        last: TaskState,
    ) {
        let status = |t: &Task| {
            StreamResponse::StatusUpdate(crate::types::TaskStatusUpdateEvent {
                task_id: t.id.clone(),
                context_id: t.context_id.clone(),
                status: t.status.clone(),
                metadata: Default::default(),
            })
        };
        let mut version = store.create(scope, t, Some(&status(t))).await.unwrap();
        for k in 1..n {
            if k + 1 == n {
                t.status.state = last;
            }
            version = store
                .update(scope, t, version, Some(&status(t)))
                .await
                .unwrap();
        }
    }

    #[tokio::test]
    async fn the_logs_of_finished_tasks_hold_a_bounded_number_of_events() {
        let store = InMemoryTaskStore::new().with_finished_events(250);
        let scope = Scope::new("t", "me");
        let written = async |t: &mut Task, n: usize, last: TaskState| {
            written(&store, &scope, t, n, last).await;
        };
        // Five tasks of 100 events each, finished one after the other.
        for i in 0..5 {
            written(&mut task(i, TaskState::Working), 100, TaskState::Completed).await;
        }
        {
            let tasks = store.lock();
            assert!(tasks.log_events <= 250, "{}", tasks.log_events);
        }
        // The last two finished keep their logs; the first three lost theirs, not themselves.
        for i in 0..5 {
            let id = TaskId::from(format!("t{i:03}"));
            let events = store.events_after(&scope, &id, 0, 1_000).await;
            if i < 3 {
                assert!(
                    matches!(events, Err(StoreError::EventsGone { .. })),
                    "{i}: {events:?}"
                );
            } else {
                assert_eq!(events.unwrap().len(), 100, "{i}");
            }
            assert!(store.get(&scope, &id).await.unwrap().is_some());
        }
        // A live task's log is not bounded by it.
        let mut live = task(9, TaskState::Working);
        written(&mut live, 300, TaskState::Working).await;
        let events = store.events_after(&scope, &live.id, 0, 1_000).await;
        assert_eq!(events.unwrap().len(), 300);
    }

    #[tokio::test]
    async fn by_default_the_task_that_finished_last_keeps_its_whole_log() {
        let store = InMemoryTaskStore::new();
        let scope = Scope::new("t", "me");
        // Two tasks finish, one after the other: the first with a full log.
        for (i, n) in [(0, DEFAULT_EVENTS_PER_TASK), (1, 10)] {
            let mut t = task(i, TaskState::Working);
            written(&store, &scope, &mut t, n, TaskState::Completed).await;
            let events = store.events_after(&scope, &t.id, 0, 2 * n).await.unwrap();
            assert_eq!(events.len(), n, "{i}");
            assert_eq!(events.last().map(|e| e.seq), Some(n as u64), "{i}");
        }
        // The second took the first one's place.
        let first = store.events_after(&scope, &"t000".into(), 0, 10).await;
        assert!(
            matches!(first, Err(StoreError::EventsGone { .. })),
            "{first:?}"
        );
    }

    /// The store's own `Arc` of the live task `id`, as the runtime that wrote it holds it.
    fn shared_held(store: &InMemoryTaskStore, scope: &Scope, id: &str) -> Arc<Task> {
        match &store.lock()[scope].by_id[id].held {
            Held::Value(t) => Arc::clone(t),
            Held::Encoded(_) => panic!("{id} is held encoded"),
        }
    }

    async fn stored(store: &InMemoryTaskStore, scope: &Scope, id: &str) -> StoredTask {
        store.get(scope, &id.into()).await.unwrap().unwrap()
    }

    #[tokio::test]
    async fn a_live_task_its_runtime_writes_is_held_shared_and_changed_in_place_when_lent() {
        let store = InMemoryTaskStore::new();
        let scope = Scope::default();
        let mut live = Arc::new(task(1, TaskState::Working));
        let v = store
            .write_now(&scope, &live, None, Write::Create, None)
            .unwrap();
        assert!(Arc::ptr_eq(&shared_held(&store, &scope, "t001"), &live));
        let at = Arc::as_ptr(&live);
        let ask = |t: &mut Task| {
            t.status.state = TaskState::InputRequired;
            Ok::<_, ()>(7)
        };
        let lent = store.update_lent(&scope, &mut live, v, ask, |_| None);
        assert_eq!(lent.unwrap(), Ok((2, 7)));
        assert_eq!(Arc::as_ptr(&live), at, "changed in place, not on a copy");
        assert!(Arc::ptr_eq(&shared_held(&store, &scope, "t001"), &live));
        let got = stored(&store, &scope, "t001").await;
        assert_eq!(
            (got.task.status.state, got.version),
            (TaskState::InputRequired, 2)
        );

        // A reader holding the task keeps it as it was: the change is made on a copy.
        let reader = Arc::clone(&live);
        let work = |t: &mut Task| {
            t.status.state = TaskState::Working;
            Ok::<_, ()>(())
        };
        let lent = store.update_lent(&scope, &mut live, 2, work, |_| None);
        assert_eq!(lent.unwrap(), Ok((3, ())));
        assert_eq!(reader.status.state, TaskState::InputRequired);
        assert_eq!(live.status.state, TaskState::Working);
        assert_eq!(stored(&store, &scope, "t001").await.task, *live);

        // A refused change leaves the task held, as it was; a stale version is refused before
        // the change runs.
        let refused = store.update_lent(&scope, &mut live, 3, |_| Err::<(), _>("no"), |_| None);
        assert_eq!(refused.unwrap(), Err("no"));
        assert!(Arc::ptr_eq(&shared_held(&store, &scope, "t001"), &live));
        let got = stored(&store, &scope, "t001").await;
        assert_eq!((got.task, got.version), (Task::clone(&live), 3));
        let mut ran = false;
        let stale = store.update_lent(
            &scope,
            &mut live,
            2,
            |_| {
                ran = true;
                Ok::<_, ()>(())
            },
            |_| None,
        );
        assert!(
            matches!(
                stale,
                Err(StoreError::Conflict {
                    expected: 2,
                    found: 3,
                    ..
                })
            ),
            "{stale:?}"
        );
        assert!(!ran);

        // Finished: held encoded, and the runtime's copy is its own again.
        let done = |t: &mut Task| {
            t.status.state = TaskState::Completed;
            Ok::<_, ()>(())
        };
        let lent = store.update_lent(&scope, &mut live, 3, done, |_| None);
        assert_eq!(lent.unwrap(), Ok((4, ())));
        assert!(matches!(
            store.lock()[&scope].by_id["t001"].held,
            Held::Encoded(_)
        ));
        assert_eq!(Arc::strong_count(&live), 1);
        let got = stored(&store, &scope, "t001").await;
        assert_eq!((got.task, got.version), (Task::clone(&live), 4));
    }

    #[tokio::test]
    async fn a_lent_change_first_turns_the_chunks_the_log_reads_from_the_task_into_events() {
        let mut s = Streamed::new(5, true).await;
        s.send([s.chunk("a", "a0", false), s.chunk("a", "a1", true)]);
        s.assert_log(2, 0).await;
        // From here on the store shares its copy, as with the runtime that wrote it.
        let mut live = shared_held(&s.store, &s.scope, "t005");
        let replace = |t: &mut Task| {
            t.artifacts[0].parts = vec![Part::text("replaced")];
            Ok::<_, ()>(())
        };
        let lent = s
            .store
            .update_lent(&s.scope, &mut live, s.version, replace, |_| None);
        s.version = lent.unwrap().unwrap().0;
        s.live = Task::clone(&live);
        // The chunks were read from the task before it changed: the log holds them as events,
        // as they were delivered.
        s.assert_log(0, 0).await;
        assert_eq!(
            stored(&s.store, &s.scope, "t005").await.task.artifacts[0].parts,
            [Part::text("replaced")]
        );
    }
}
