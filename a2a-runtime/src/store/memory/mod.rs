//! In-memory stores, for tests, demos and single-process agents without durability needs.
//!
//! [`InMemoryTaskStore`] holds a live task as a [`Task`] value, since it changes on every event,
//! but a finished (terminal) one encoded, as one boxed byte string (see `frozen.rs`): the
//! lifecycle never changes a finished task again, and finished tasks are nearly all of the tasks
//! held, so each is encoded once and then costs a fraction of a value's tree of `String`s, `Vec`s
//! and maps (a finished echo task: about 650 bytes of process memory instead of about 1,550).
//! Reads decode it on the way out. Each task id is held once, shared by the map key and the
//! listing index.
//!
//! [`Task`]: crate::types::Task
mod claims;
mod memory_task;
mod push_configs;
mod task_store;
mod tasks;
#[cfg(test)]
mod tests;
mod write;

use std::sync::{Arc, Mutex, MutexGuard};

pub use claims::DEFAULT_MAX_CLAIMS;
pub use push_configs::InMemoryPushConfigStore;

use super::InMemoryPushOutbox;
use tasks::Tasks;

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
/// fraction of the memory of a [`Task`] value; [`get`](super::TaskStore::get) and
/// [`list`](super::TaskStore::list) decode them, and listing filters and orders without
/// decoding. Live tasks, which change on every event, are held as values; a task is encoded
/// once, by the write that finishes it.
///
/// [`Task`]: crate::types::Task
/// [`TaskStore`]: super::TaskStore
/// [`StoreError::Full`]: super::StoreError::Full
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
    /// The message claims of idempotent sends.
    claims: claims::Claims,
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
            claims: claims::Claims::default(),
        }
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
    /// write is refused whole with [`StoreError::OutboxFull`](super::StoreError::OutboxFull):
    /// nothing is stored and nothing is lost. See
    /// [`TaskStore::push_outbox`](super::TaskStore::push_outbox).
    pub fn with_push_outbox(mut self, outbox: Arc<InMemoryPushOutbox>) -> Self {
        self.outbox = Some(outbox);
        self
    }

    /// How many tasks retention has evicted so far (the global cap, the per-scope bound and
    /// the age purge; not [`delete`](super::TaskStore::delete)).
    pub fn evicted(&self) -> u64 {
        self.evicted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Keeps at most `events` events per task for replay (default 1,024); a reader asking for
    /// older ones gets [`StoreError::EventsGone`](super::StoreError::EventsGone).
    pub fn with_events_per_task(mut self, events: usize) -> Self {
        self.events_per_task = events;
        self
    }

    /// Keeps at most `events` events in the logs of finished tasks, over all tasks (default
    /// [`DEFAULT_FINISHED_EVENTS`]): past it, the logs of the tasks that finished first are
    /// emptied (the tasks stay), and a reader asking for their events gets
    /// [`StoreError::EventsGone`](super::StoreError::EventsGone).
    pub fn with_finished_events(mut self, events: usize) -> Self {
        self.finished_events = events;
        self
    }

    /// Holds at most `max` message claims of idempotent sends (default
    /// [`DEFAULT_MAX_CLAIMS`]; at least 1): past it, the oldest claim goes, and a SendMessage
    /// repeating its message id starts a new task. See
    /// [`TaskStore::claim_message`](super::TaskStore::claim_message).
    pub fn with_max_claims(mut self, max: usize) -> Self {
        self.claims.max = max.max(1);
        self
    }

    /// The number of message claims held.
    pub fn claims(&self) -> usize {
        self.claims.len()
    }

    /// The number of tasks held, over all scopes.
    pub fn len(&self) -> usize {
        self.lock().held
    }

    /// True when no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
