//! Everything the in-memory store holds, under its one lock: the tasks of each scope with their
//! listing order, and the queues of finished tasks that eviction and the bound on finished
//! logs take from, first finished first.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use super::super::Scope;
use super::super::replay_log::Log;
use super::memory_task::Entry;
use crate::FastHash;

/// A listing position: status timestamp (ms), then id. Ascending; listings walk it backwards.
pub(super) type Position = (i64, Arc<str>);

#[derive(Debug, Default)]
pub(super) struct ScopeTasks {
    /// The scope (shared with the map key and the finished queue).
    pub(super) key: Arc<Scope>,
    /// How many of the tasks are terminal.
    pub(super) finished: usize,
    /// Keyed by task id; the key is shared with `order`.
    pub(super) by_id: HashMap<Arc<str>, Entry, FastHash>,
    /// Listing order, oldest status timestamp first (listings read it newest first), with
    /// whether the task is finished (terminal), for retention.
    pub(super) order: BTreeMap<Position, bool>,
}

/// A finished task in the order tasks finished, as [`Tasks::queue_finished`] queues it: valid while
/// the task is still at the version it finished with (a later write queues it again).
#[derive(Debug)]
pub(super) struct Finished {
    pub(super) scope: Arc<Scope>,
    pub(super) id: Arc<str>,
    pub(super) version: u64,
}

impl Finished {
    /// Whether `entry` (the entry of this task) is still the finished task queued.
    pub(super) fn names(&self, entry: &Entry) -> bool {
        entry.version == self.version && entry.held.is_terminal()
    }
}

/// Everything the store holds, under one lock.
#[derive(Debug, Default)]
pub(super) struct Tasks {
    pub(super) scopes: HashMap<Arc<Scope>, ScopeTasks, FastHash>,
    /// Tasks held, over all scopes.
    pub(super) held: usize,
    /// Finished tasks held, over all scopes.
    pub(super) finished: usize,
    /// Finished tasks, first finished first (some entries stale: skipped when met).
    pub(super) queue: VecDeque<Finished>,
    /// Finished tasks with a non-empty log, first finished first, each with its log's length
    /// when queued (some entries stale: a task written again is queued again, one removed
    /// stays until its turn).
    pub(super) logs: VecDeque<(Finished, usize)>,
    /// The sum of the lengths in `logs`: at least the events the logs of finished tasks hold.
    pub(super) log_events: usize,
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
    pub(super) fn remove(&mut self, key: &Scope, id: &str) -> Option<(Arc<str>, Entry)> {
        self.remove_with(key, |by_id| by_id.remove_entry(id))
    }

    /// Removes the task `f` names when it is still current (finished, at the version it was
    /// queued with), and its scope when it was the scope's last task.
    // One look-up of the scope and one of the id: checking with `current`, then removing
    // with `remove`, hashed each twice (eviction by the global cap, on every new task once
    // the store is full).
    pub(super) fn remove_if_current(&mut self, f: &Finished) -> bool {
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
    pub(super) fn remove_with(
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
    pub(super) fn current(
        scopes: &HashMap<Arc<Scope>, ScopeTasks, FastHash>,
        f: &Finished,
    ) -> bool {
        scopes
            .get(&*f.scope)
            .and_then(|s| s.by_id.get(&*f.id))
            .is_some_and(|e| f.names(e))
    }

    /// Queues a task that a write left finished (at `version`, its log `events` long) for
    /// eviction, and its log for the bound on the logs of finished tasks (`budget` events).
    pub(super) fn queue_finished(
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
    pub(super) fn queue_log(&mut self, finished: Finished, events: usize, budget: usize) {
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
    pub(super) fn first_finished(&mut self) -> Option<Finished> {
        while let Some(f) = self.queue.pop_front() {
            if Self::current(&self.scopes, &f) {
                return Some(f);
            }
        }
        None
    }

    /// Evicts the task that finished first, over all scopes.
    pub(super) fn evict_first_finished(&mut self) -> Option<(Arc<Scope>, Arc<str>)> {
        while let Some(f) = self.queue.pop_front() {
            if self.remove_if_current(&f) {
                return Some((f.scope, f.id));
            }
        }
        None
    }
}

/// Tasks taken out of the store under its lock, whose push configs go once it is released.
// Usually one (the global cap's eviction of each new task's predecessor): held without an
// allocation.
#[derive(Default)]
pub(super) struct Gone {
    pub(super) one: Option<(Arc<Scope>, Arc<str>)>,
    pub(super) more: Vec<(Arc<Scope>, Arc<str>)>,
}

impl Gone {
    pub(super) fn new() -> Self {
        Self::default()
    }

    pub(super) fn push(&mut self, task: (Arc<Scope>, Arc<str>)) {
        if self.one.is_none() {
            self.one = Some(task);
        } else {
            self.more.push(task);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.one.is_none()
    }

    pub(super) fn len(&self) -> usize {
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
