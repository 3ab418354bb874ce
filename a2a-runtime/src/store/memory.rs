//! In-memory stores, for tests, demos and single-process agents without durability needs.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard};

use super::{
    ListCursor, PushConfigStore, Scope, StoreError, StoredTask, TaskPage, TaskQuery, TaskStore,
};
use crate::types::{PushConfigId, Task, TaskId, TaskPushNotificationConfig};

#[derive(Debug, Default)]
struct ScopeTasks {
    /// How many of the tasks are terminal.
    finished: usize,
    by_id: HashMap<TaskId, StoredTask>,
    /// Listing order: newest status timestamp first, then id descending.
    order: BTreeSet<Reverse<ListCursor>>,
}

/// A [`TaskStore`] in process memory (share it behind an `Arc`).
///
/// Memory is bounded by a retention setting: [`InMemoryTaskStore::with_retention`] keeps at
/// most N finished tasks per scope (tenant and owner), dropping the ones that finished first
/// (by status timestamp). Tasks that are not terminal are never dropped.
#[derive(Debug, Default)]
pub struct InMemoryTaskStore {
    scopes: Mutex<HashMap<Scope, ScopeTasks>>,
    /// Keep at most this many finished (terminal) tasks per scope; the oldest go first.
    max_finished_per_scope: Option<usize>,
}

impl InMemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Scope, ScopeTasks>> {
        // A poisoned lock only means another thread panicked mid-operation; every operation here
        // leaves the maps consistent before it can panic, so the data is still usable.
        self.scopes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A store that keeps at most `max_finished` terminal tasks per scope.
    pub fn with_retention(max_finished: usize) -> Self {
        Self {
            scopes: Mutex::default(),
            max_finished_per_scope: Some(max_finished),
        }
    }

    /// Drops the oldest terminal tasks of a scope beyond the retention limit.
    fn enforce_retention(&self, s: &mut ScopeTasks) {
        let Some(max) = self.max_finished_per_scope else {
            return;
        };
        if s.finished <= max {
            return;
        }
        let mut excess = s.finished - max;
        let mut victims: Vec<ListCursor> = Vec::with_capacity(excess);
        for Reverse(c) in s.order.iter().rev() {
            if excess == 0 {
                break;
            }
            if s.by_id
                .get(&c.id)
                .is_some_and(|t| t.task.status.state.is_terminal())
            {
                victims.push(c.clone());
                excess -= 1;
            }
        }
        for c in victims {
            s.order.remove(&Reverse(c.clone()));
            s.by_id.remove(&c.id);
            s.finished -= 1;
        }
    }

    /// The number of tasks held, over all scopes.
    pub fn len(&self) -> usize {
        self.lock().values().map(|s| s.by_id.len()).sum()
    }

    /// True when no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait::async_trait]
impl TaskStore for InMemoryTaskStore {
    async fn get(&self, scope: &Scope, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        Ok(self
            .lock()
            .get(scope)
            .and_then(|s| s.by_id.get(id))
            .cloned())
    }

    async fn create(&self, scope: &Scope, task: &Task) -> Result<u64, StoreError> {
        let mut scopes = self.lock();
        let s = scopes.entry(scope.clone()).or_default();
        if s.by_id.contains_key(&task.id) {
            return Err(StoreError::Exists(task.id.clone(), "already exists"));
        }
        s.order.insert(Reverse(ListCursor::of(task)));
        s.finished += usize::from(task.status.state.is_terminal());
        s.by_id.insert(
            task.id.clone(),
            StoredTask {
                task: task.clone(),
                version: 1,
            },
        );
        self.enforce_retention(s);
        Ok(1)
    }

    async fn update(
        &self,
        scope: &Scope,
        task: &Task,
        expected_version: u64,
    ) -> Result<u64, StoreError> {
        let mut scopes = self.lock();
        let s = scopes
            .get_mut(scope)
            .ok_or_else(|| StoreError::Exists(task.id.clone(), "does not exist"))?;
        let stored = s
            .by_id
            .get_mut(&task.id)
            .ok_or_else(|| StoreError::Exists(task.id.clone(), "does not exist"))?;
        if stored.version != expected_version {
            return Err(StoreError::Conflict {
                task_id: task.id.clone(),
                expected: expected_version,
                found: stored.version,
            });
        }
        let old = ListCursor::of(&stored.task);
        let new = ListCursor::of(task);
        let was_finished = stored.task.status.state.is_terminal();
        let is_finished = task.status.state.is_terminal();
        stored.task = task.clone();
        stored.version += 1;
        let version = stored.version;
        if old != new {
            s.order.remove(&Reverse(old));
            s.order.insert(Reverse(new));
        }
        s.finished = s.finished + usize::from(is_finished) - usize::from(was_finished);
        self.enforce_retention(s);
        Ok(version)
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let after = query
            .page_token
            .as_deref()
            .map(ListCursor::decode)
            .transpose()?;
        let scopes = self.lock();
        let Some(s) = scopes.get(scope) else {
            return Ok(TaskPage::default());
        };
        let matches = |t: &Task| {
            query.context_id.as_ref().is_none_or(|c| &t.context_id == c)
                && query.state.is_none_or(|st| t.status.state == st)
                && query
                    .status_timestamp_after
                    .is_none_or(|ts| t.status.timestamp.is_some_and(|x| x >= ts))
        };
        let mut total = 0usize;
        let mut tasks = Vec::with_capacity(query.page_size.min(100));
        let mut more = false;
        for Reverse(cursor) in &s.order {
            let Some(stored) = s.by_id.get(&cursor.id) else {
                continue;
            };
            if !matches(&stored.task) {
                continue;
            }
            total += 1;
            if after.as_ref().is_some_and(|a| cursor >= a) {
                continue;
            }
            if tasks.len() < query.page_size {
                tasks.push(stored.task.clone());
            } else {
                more = true;
            }
        }
        let next_page_token = match tasks.last() {
            Some(last) if more => ListCursor::of(last).encode(),
            _ => String::new(),
        };
        Ok(TaskPage {
            tasks,
            total_size: total,
            next_page_token,
        })
    }

    async fn delete(&self, scope: &Scope, id: &TaskId) -> Result<bool, StoreError> {
        let mut scopes = self.lock();
        let Some(s) = scopes.get_mut(scope) else {
            return Ok(false);
        };
        match s.by_id.remove(id) {
            Some(stored) => {
                s.order.remove(&Reverse(ListCursor::of(&stored.task)));
                s.finished -= usize::from(stored.task.status.state.is_terminal());
                Ok(true)
            }
            None => Ok(false),
        }
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
    use super::*;
    use crate::types::{TaskState, TaskStatus, Timestamp};

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

    #[tokio::test]
    async fn retention_keeps_the_newest_finished_tasks_and_every_live_one() {
        let store = InMemoryTaskStore::with_retention(3);
        let scope = Scope::new("", "me");
        store
            .create(&scope, &task(0, TaskState::Working))
            .await
            .unwrap();
        for i in 1..=6 {
            store
                .create(&scope, &task(i, TaskState::Completed))
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
        store.update(&scope, &done, 1).await.unwrap();
        assert_eq!(store.len(), 3);
        assert!(store.get(&scope, &"t004".into()).await.unwrap().is_none());
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
    }
}
