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
    by_id: HashMap<TaskId, StoredTask>,
    /// Listing order: newest status timestamp first, then id descending.
    order: BTreeSet<Reverse<ListCursor>>,
}

/// A [`TaskStore`] in process memory. Cheap to clone? No: share it behind an `Arc`.
#[derive(Debug, Default)]
pub struct InMemoryTaskStore {
    scopes: Mutex<HashMap<Scope, ScopeTasks>>,
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
        s.by_id.insert(
            task.id.clone(),
            StoredTask {
                task: task.clone(),
                version: 1,
            },
        );
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
        stored.task = task.clone();
        stored.version += 1;
        let version = stored.version;
        if old != new {
            s.order.remove(&Reverse(old));
            s.order.insert(Reverse(new));
        }
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
