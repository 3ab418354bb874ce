//! [`InMemoryPushConfigStore`]: push notification configs in process memory.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::super::{PushConfigStore, Scope, StoreError};
use crate::types::{PushConfigId, TaskId, TaskPushNotificationConfig};

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

    pub(super) fn lock(
        &self,
    ) -> MutexGuard<'_, HashMap<(Scope, TaskId), Vec<TaskPushNotificationConfig>>> {
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
