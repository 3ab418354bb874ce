//! [`TaskStore`] for [`InMemoryTaskStore`]: reads (a task, a listing page, logged events),
//! writes through the store's own, deletion and retention's queries.

use std::sync::Arc;

use super::super::immediate::ImmediateWrites;
use super::super::replay_log::{Logged, read_back};
use super::super::{
    ListCursor, PushOutbox, Scope, SeqEvent, StoreError, StoredTask, TaskPage, TaskQuery, TaskRef,
    TaskStore,
};
use super::InMemoryTaskStore;
use super::memory_task::{MemoryTask, Snapshot};
use super::tasks::{Gone, Position};
use crate::types::{MessageId, StreamResponse, Task, TaskId, TaskState, Timestamp};

#[async_trait::async_trait]
impl TaskStore for InMemoryTaskStore {
    fn is_durable(&self) -> bool {
        false
    }

    fn immediate(&self) -> Option<&dyn ImmediateWrites> {
        Some(self)
    }

    fn push_outbox(&self) -> Option<Arc<dyn PushOutbox>> {
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
                MemoryTask::Value(task) => return read_back(id, logged, Some(task)),
                MemoryTask::Encoded(f) => {
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
                        MemoryTask::Value(t) => t.status.state,
                        MemoryTask::Encoded(f) => f.state(),
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

    async fn claim_message(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
        since: Timestamp,
    ) -> Result<Option<TaskId>, StoreError> {
        Ok(self
            .claims
            .claim(scope, message_id, task_id, since, crate::store::now_ms()))
    }

    async fn release_message_claim(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
    ) -> Result<(), StoreError> {
        self.claims.release(scope, message_id, task_id);
        Ok(())
    }

    async fn purge_claims(
        &self,
        before: Timestamp,
        keep: usize,
        limit: usize,
    ) -> Result<usize, StoreError> {
        Ok(self.claims.purge(before, keep, limit))
    }
}
