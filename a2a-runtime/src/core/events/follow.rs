//! A live task following its store: after a write of this runtime was refused, or another
//! instance wrote the task, the live copy becomes the stored task again and the logged events
//! the runtime had not seen go to its listeners.

use std::sync::Arc;

use super::listeners::BusItem;
use super::runtime::TaskRuntime;
use super::state::RuntimeState;
use crate::store::{StoreError, TaskStore};

impl TaskRuntime {
    /// Replaces the live copy with the stored task after a failed write (another writer, on
    /// this instance or another, got there first), delivering what that writer logged.
    pub(super) async fn reload(&self, st: &mut RuntimeState, store: &dyn TaskStore) {
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
    ) -> Result<bool, StoreError> {
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
    ) -> Result<bool, StoreError> {
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
}
