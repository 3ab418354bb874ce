//! Many instances on one store: change notifications and leases of running executions.
//!
//! Instances that share a database serve any request for any task. What they need from the
//! store beyond [`TaskStore`](super::TaskStore):
//! - **changes**: a wake-up when any instance commits a task write, so that a stream on one
//!   instance follows a task whose agent runs on another (the event log stays the truth: a
//!   lost notification costs latency, never an event);
//! - **leases**: each running execution of an agent holds a lease that its instance renews;
//!   a lease past its expiry belongs to an instance that died, and exactly one other instance
//!   claims it and ends the task.

use std::time::Duration;

use futures::stream::BoxStream;

use super::{Scope, StoreError, TaskRef};
use crate::types::TaskId;

/// A committed task write, as a notification reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskChange {
    /// Task `id` of `scope` now has version `version`.
    Task {
        /// The task's scope.
        scope: Scope,
        /// The task.
        id: TaskId,
        /// Its version after the write.
        version: u64,
    },
    /// Some tasks changed, or notifications may have been lost (a reconnection): re-read every
    /// task followed.
    Unknown,
}

/// The lease of one running execution of an agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The instance running it.
    pub instance: String,
    /// The execution's number on that instance.
    pub execution: u64,
    /// The task's scope.
    pub scope: Scope,
    /// The task.
    pub task_id: TaskId,
}

/// What instances sharing a store coordinate through. Implemented by the PostgreSQL store
/// (notifications and leases) and the SQLite store (leases only: one instance per file).
#[async_trait::async_trait]
pub trait Cluster: Send + Sync + std::fmt::Debug + 'static {
    /// The task writes committed by any instance (this one included) from now on; `None`
    /// when the store has no notifications (then followers re-read on a timer only). The
    /// stream reports [`TaskChange::Unknown`] after it lost its connection and got it back.
    async fn changes(&self) -> Result<Option<BoxStream<'static, TaskChange>>, StoreError>;

    /// Records `lease`, valid for `ttl`.
    async fn acquire(&self, lease: &Lease, ttl: Duration) -> Result<(), StoreError>;

    /// Renews every lease of `instance` for `ttl`; returns how many it holds.
    async fn renew(&self, instance: &str, ttl: Duration) -> Result<u64, StoreError>;

    /// Removes `lease` (its execution returned).
    async fn release(&self, lease: &Lease) -> Result<(), StoreError>;

    /// Up to `limit` leases past their expiry, oldest first.
    async fn expired(&self, limit: usize) -> Result<Vec<Lease>, StoreError>;

    /// Takes an expired lease so as to end its task: true for exactly one caller (the others,
    /// and a lease renewed meanwhile, get false).
    async fn claim_expired(&self, lease: &Lease) -> Result<bool, StoreError>;

    /// Up to `limit` SUBMITTED or WORKING tasks, over all scopes, last written before
    /// `before_ms` (ms since the epoch) and named by no lease: no instance runs them (one died
    /// between the task's first write and its lease's, or an execution returned and left its
    /// task active). The default finds none.
    async fn unleased(&self, before_ms: i64, limit: usize) -> Result<Vec<TaskRef>, StoreError> {
        let _ = (before_ms, limit);
        Ok(Vec::new())
    }
}

/// Implements [`Cluster`] for `$store`, a struct with `pool: sqlx::Pool<_>` and
/// `writer: Arc<Writer>` fields and an
/// inherent `async fn notifications(&self)` that answers [`Cluster::changes`].
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! sql_cluster {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl $crate::store::Cluster for $store {
            async fn changes(
                &self,
            ) -> Result<
                Option<futures::stream::BoxStream<'static, $crate::store::TaskChange>>,
                $crate::store::StoreError,
            > {
                self.notifications().await
            }

            async fn acquire(
                &self,
                lease: &$crate::store::Lease,
                ttl: std::time::Duration,
            ) -> Result<(), $crate::store::StoreError> {
                // Through the write queue: it commits with the task writes waiting beside it.
                let expires_ms =
                    $crate::store::now_ms().saturating_add($crate::store::cluster::millis(ttl));
                self.writer
                    .submit($crate::store::sql_writer::Op::Acquire {
                        lease: lease.clone(),
                        expires_ms,
                    })
                    .await?;
                Ok(())
            }

            async fn renew(
                &self,
                instance: &str,
                ttl: std::time::Duration,
            ) -> Result<u64, $crate::store::StoreError> {
                use $crate::store::now_ms;
                use $crate::store::sql::backend;
                let done = sqlx::query("UPDATE a2a_leases SET expires_ms = $1 WHERE instance = $2")
                    .bind(now_ms().saturating_add($crate::store::cluster::millis(ttl)))
                    .bind(instance)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                Ok(done.rows_affected())
            }

            async fn release(
                &self,
                lease: &$crate::store::Lease,
            ) -> Result<(), $crate::store::StoreError> {
                self.writer
                    .submit($crate::store::sql_writer::Op::Release(lease.clone()))
                    .await?;
                Ok(())
            }

            async fn expired(
                &self,
                limit: usize,
            ) -> Result<Vec<$crate::store::Lease>, $crate::store::StoreError> {
                use sqlx::Row as _;
                use $crate::store::now_ms;
                use $crate::store::sql::{backend, to_i64, to_u64};
                let rows = sqlx::query(
                    "SELECT instance, execution, tenant, owner, task_id FROM a2a_leases \
                 WHERE expires_ms < $1 ORDER BY expires_ms LIMIT $2",
                )
                .bind(now_ms())
                .bind(to_i64(limit as u64)?)
                .fetch_all(&self.pool)
                .await
                .map_err(backend)?;
                let mut leases = Vec::with_capacity(rows.len());
                for row in rows {
                    let tenant: String = row.try_get(2).map_err(backend)?;
                    let owner: String = row.try_get(3).map_err(backend)?;
                    let task_id: String = row.try_get(4).map_err(backend)?;
                    leases.push($crate::store::Lease {
                        instance: row.try_get(0).map_err(backend)?,
                        execution: to_u64(row.try_get(1).map_err(backend)?)?,
                        scope: $crate::store::Scope::new(tenant, owner),
                        task_id: $crate::types::TaskId::from(task_id),
                    });
                }
                Ok(leases)
            }

            async fn claim_expired(
                &self,
                lease: &$crate::store::Lease,
            ) -> Result<bool, $crate::store::StoreError> {
                use $crate::store::now_ms;
                use $crate::store::sql::{backend, to_i64};
                // One statement: of the instances racing for it, one deletes the row.
                let done = sqlx::query(
                    "DELETE FROM a2a_leases \
                 WHERE instance = $1 AND execution = $2 AND expires_ms < $3",
                )
                .bind(lease.instance.as_str())
                .bind(to_i64(lease.execution)?)
                .bind(now_ms())
                .execute(&self.pool)
                .await
                .map_err(backend)?;
                Ok(done.rows_affected() == 1)
            }

            async fn unleased(
                &self,
                before_ms: i64,
                limit: usize,
            ) -> Result<Vec<$crate::store::TaskRef>, $crate::store::StoreError> {
                use sqlx::Row as _;
                use $crate::store::sql::{backend, to_i64, to_u64};
                // The state and age from `a2a_tasks_state_age`, each lease looked up by
                // `a2a_leases_task` (migration 0008).
                let rows = sqlx::query(
                    "SELECT t.tenant, t.owner, t.id, t.version FROM a2a_tasks t \
                 WHERE t.state IN ($1, $2) AND t.updated_ms < $3 AND NOT EXISTS \
                 (SELECT 1 FROM a2a_leases l WHERE l.tenant = t.tenant AND l.owner = t.owner \
                 AND l.task_id = t.id) LIMIT $4",
                )
                .bind($crate::types::TaskState::Submitted.as_str())
                .bind($crate::types::TaskState::Working.as_str())
                .bind(before_ms)
                .bind(to_i64(limit as u64)?)
                .fetch_all(&self.pool)
                .await
                .map_err(backend)?;
                let mut tasks = Vec::with_capacity(rows.len());
                for row in rows {
                    let tenant: String = row.try_get(0).map_err(backend)?;
                    let owner: String = row.try_get(1).map_err(backend)?;
                    let id: String = row.try_get(2).map_err(backend)?;
                    tasks.push($crate::store::TaskRef {
                        scope: $crate::store::Scope::new(tenant, owner),
                        id: $crate::types::TaskId::from(id),
                        version: to_u64(row.try_get(3).map_err(backend)?)?,
                    });
                }
                Ok(tasks)
            }
        }
    };
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) use sql_cluster;

/// `d` in milliseconds, saturating.
#[allow(dead_code)]
pub(super) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
