//! Taking over a task whose executor is gone or hung (see
//! [`Recovery`](crate::core::Recovery)): one event published under the task's lock, only if
//! the task is still where the recovery pass found it.

use tokio_util::sync::CancellationToken;

use super::runtime::TaskRuntime;
use crate::core::lifecycle::HistoryPolicy;
use crate::error::A2aError;
use crate::extension::Negotiated;
use crate::store::TaskStore;
use crate::types::{StreamResponse, Task, TaskState};

/// Which executions a take-over may find running on this instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Running {
    /// None (the executor is gone): a task that runs here after all is left alone.
    Nothing,
    /// Any (a hung agent): they are canceled once the event is published.
    Any,
}

/// Whether a task in `state` has (or should have) an executor: SUBMITTED and WORKING.
fn is_active(state: TaskState) -> bool {
    matches!(state, TaskState::Submitted | TaskState::Working)
}

impl TaskRuntime {
    /// The task as it stands and its version (`None` before the first event).
    pub(crate) async fn versioned(&self) -> Option<(Task, u64)> {
        let st = self.state.lock().await;
        st.task.as_deref().map(|t| (t.clone(), st.version))
    }

    /// Publishes `event` when the task is still active at `version` (and runs nothing here,
    /// with [`Running::Nothing`]); false when it moved on. With `rerun`, that execution is
    /// registered under the same lock before the event is applied (its run is the caller's to
    /// start on `true`); on `false` or an error it is not registered. With [`Running::Any`],
    /// the executions found running are canceled after the event.
    pub(crate) async fn take_over(
        &self,
        store: &dyn TaskStore,
        policy: HistoryPolicy,
        version: u64,
        running: Running,
        event: StreamResponse,
        rerun: Option<(u64, CancellationToken)>,
    ) -> Result<bool, A2aError> {
        let mut guard = self.state.lock().await;
        let found = guard.version == version
            && guard
                .task
                .as_ref()
                .is_some_and(|t| is_active(t.status.state))
            && (running == Running::Any || guard.running.is_empty());
        if !found {
            return Ok(false);
        }
        let stop: Vec<CancellationToken> = guard.running.iter().map(|(_, t)| t.clone()).collect();
        let execution = rerun.as_ref().map(|(x, _)| *x);
        if let Some((x, token)) = rerun {
            self.start_execution(&mut guard, x, token);
        }
        let extensions = Negotiated::default();
        let published = match self.apply(&mut guard, store, policy, &extensions, event) {
            Ok(step) => self.complete(guard, store, step).await,
            Err(e) => {
                drop(guard);
                Err(e)
            }
        };
        if let Err(e) = published {
            if let Some(x) = execution {
                let mut st = self.state.lock().await;
                st.running.retain(|(y, _)| *y != x);
                self.executions
                    .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
            return Err(e);
        }
        for token in stop {
            token.cancel();
        }
        Ok(true)
    }
}
