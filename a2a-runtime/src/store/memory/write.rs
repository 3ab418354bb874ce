//! The in-memory store's writes: a create or an update under the store's lock, with the push
//! deliveries of the logged event and what the bounds evict; and its immediate writes (see
//! [`immediate`](super::super::immediate)).

use std::sync::Arc;

use super::super::encoded_task::EncodedTask;
use super::super::immediate::{Delta, ImmediateWrites, Lent, LentChange, Write};
use super::super::replay_log::{ChunkRef, Log};
use super::super::{InMemoryPushOutbox, NewDelivery, Scope, SeqEvent, StoreError, now_ms};
use super::InMemoryTaskStore;
use super::memory_task::{Entry, MemoryTask, TaskToWrite, materialize_all, replace_held};
use super::tasks::{Gone, ScopeTasks, Tasks};
use crate::types::{StreamResponse, Task, TaskId};

impl InMemoryTaskStore {
    /// The deliveries of the logged `event` of task `id` (none without a linked outbox, for a
    /// task without configs, or for a direct Message reply), with the outbox they go to.
    pub(super) fn deliveries(
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
    pub(super) fn with_deliveries(
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

    /// Removes the push configs of tasks that went (after the lock is released).
    pub(super) fn forget(&self, gone: Gone) {
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

    /// True when a scope holding `finished` finished tasks is past the per-scope limit (known
    /// before [`enforce_retention`](Self::enforce_retention) looks the scope up again).
    pub(super) fn past_retention(&self, finished: usize) -> bool {
        self.max_finished_per_scope
            .is_some_and(|max| finished > max)
    }

    /// Drops the oldest terminal tasks of the scope `key` beyond the per-scope limit.
    pub(super) fn enforce_retention(&self, tasks: &mut Tasks, key: &Scope, gone: &mut Gone) {
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

    /// [`TaskStore::create`], done under the lock.
    pub(super) fn create_now(
        &self,
        scope: &Scope,
        task: TaskToWrite<'_>,
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

    pub(super) fn create_locked(
        &self,
        scope: &Scope,
        task: TaskToWrite<'_>,
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
        let held = MemoryTask::of(task, json);
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
    pub(super) fn update_now(
        &self,
        scope: &Scope,
        task: TaskToWrite<'_>,
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
            let lent = matches!(&entry.held, MemoryTask::Value(t) if Arc::ptr_eq(t, task));
            if lent {
                // Never seen: the lock is held until a task is back in its place (a stand-in
                // left by a panic reads as a store error, not as a task).
                entry.held = MemoryTask::Encoded(EncodedTask::empty());
            }
            match change(Arc::make_mut(task)) {
                Ok(r) => {
                    entry.held = MemoryTask::of(TaskToWrite::Shared(task), json(&r));
                    Ok((None, r))
                }
                Err(e) => {
                    if lent {
                        entry.held = MemoryTask::Value(Arc::clone(task));
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
    pub(super) fn update_locked<R, E>(
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
    ) -> Result<Lent, StoreError> {
        // The inherent, generic form.
        InMemoryTaskStore::update_lent(self, scope, task, expected_version, change, |reply| {
            reply.as_deref().and_then(json)
        })
    }
}
