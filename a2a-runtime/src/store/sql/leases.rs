//! The lease statements of the SQL stores: the leases half of
//! [`Cluster`](crate::store::Cluster) on a pool.

use std::time::Duration;

use sqlx::{ColumnIndex, Database, Executor, IntoArguments, Pool, Row as _};

use super::codec::{backend, to_i64, to_u64};
use super::dialect::{Column, Dialect, Param};
use crate::store::sql_writer::{Op, Writer};
use crate::store::{Lease, Scope, StoreError, TaskRef, now_ms};
use crate::types::{TaskId, TaskState};

/// The leases of running executions in a SQL store of dialect `D`.
///
/// Each method is the [`Cluster`](crate::store::Cluster) method of the same name.
pub(in crate::store) struct Leases<'s, D: Dialect> {
    pool: &'s Pool<D::Db>,
    writer: &'s Writer,
}

impl<'s, D: Dialect> Leases<'s, D> {
    /// The leases in `pool`, taken and released through `writer`.
    pub(in crate::store) fn new(pool: &'s Pool<D::Db>, writer: &'s Writer) -> Self {
        Self { pool, writer }
    }
}

impl<D: Dialect> Leases<'_, D>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    String: Column<D::Db>,
    i64: Column<D::Db>,
{
    /// Records `lease`, valid for `ttl`.
    pub(in crate::store) async fn acquire(
        &self,
        lease: &Lease,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        // Through the write queue: it commits with the task writes waiting beside it.
        let expires_ms = now_ms().saturating_add(millis(ttl));
        self.writer
            .submit(Op::Acquire {
                lease: lease.clone(),
                expires_ms,
            })
            .await?;
        Ok(())
    }

    /// Renews every lease of `instance` for `ttl`; returns how many it holds.
    pub(in crate::store) async fn renew(
        &self,
        instance: &str,
        ttl: Duration,
    ) -> Result<u64, StoreError> {
        let done = sqlx::query("UPDATE a2a_leases SET expires_ms = $1 WHERE instance = $2")
            .bind(now_ms().saturating_add(millis(ttl)))
            .bind(instance)
            .execute(self.pool)
            .await
            .map_err(backend)?;
        Ok(D::rows_affected(&done))
    }

    /// Removes `lease` (its execution returned).
    pub(in crate::store) async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.writer.submit(Op::Release(lease.clone())).await?;
        Ok(())
    }

    /// Up to `limit` leases past their expiry, oldest first.
    pub(in crate::store) async fn expired(&self, limit: usize) -> Result<Vec<Lease>, StoreError> {
        let rows = sqlx::query(
            "SELECT instance, execution, tenant, owner, task_id FROM a2a_leases \
             WHERE expires_ms < $1 ORDER BY expires_ms LIMIT $2",
        )
        .bind(now_ms())
        .bind(to_i64(limit as u64)?)
        .fetch_all(self.pool)
        .await
        .map_err(backend)?;
        let mut leases = Vec::with_capacity(rows.len());
        for row in rows {
            let tenant: String = row.try_get(2).map_err(backend)?;
            let owner: String = row.try_get(3).map_err(backend)?;
            let task_id: String = row.try_get(4).map_err(backend)?;
            leases.push(Lease {
                instance: row.try_get(0).map_err(backend)?,
                execution: to_u64(row.try_get(1).map_err(backend)?)?,
                scope: Scope::new(tenant, owner),
                task_id: TaskId::from(task_id),
            });
        }
        Ok(leases)
    }

    /// Takes an expired lease so as to end its task: true for exactly one caller.
    pub(in crate::store) async fn claim_expired(&self, lease: &Lease) -> Result<bool, StoreError> {
        // One statement: of the instances racing for it, one deletes the row.
        let done = sqlx::query(
            "DELETE FROM a2a_leases \
             WHERE instance = $1 AND execution = $2 AND expires_ms < $3",
        )
        .bind(lease.instance.as_str())
        .bind(to_i64(lease.execution)?)
        .bind(now_ms())
        .execute(self.pool)
        .await
        .map_err(backend)?;
        Ok(D::rows_affected(&done) == 1)
    }

    /// Up to `limit` active tasks last written before `before_ms` that no lease names.
    pub(in crate::store) async fn unleased(
        &self,
        before_ms: i64,
        limit: usize,
    ) -> Result<Vec<TaskRef>, StoreError> {
        // The state and age from `a2a_tasks_state_age`, each lease looked up by
        // `a2a_leases_task` (migration 0008).
        let rows = sqlx::query(
            "SELECT t.tenant, t.owner, t.id, t.version FROM a2a_tasks t \
             WHERE t.state IN ($1, $2) AND t.updated_ms < $3 AND NOT EXISTS \
             (SELECT 1 FROM a2a_leases l WHERE l.tenant = t.tenant AND l.owner = t.owner \
             AND l.task_id = t.id) LIMIT $4",
        )
        .bind(TaskState::Submitted.as_str())
        .bind(TaskState::Working.as_str())
        .bind(before_ms)
        .bind(to_i64(limit as u64)?)
        .fetch_all(self.pool)
        .await
        .map_err(backend)?;
        let mut tasks = Vec::with_capacity(rows.len());
        for row in rows {
            let tenant: String = row.try_get(0).map_err(backend)?;
            let owner: String = row.try_get(1).map_err(backend)?;
            let id: String = row.try_get(2).map_err(backend)?;
            tasks.push(TaskRef {
                scope: Scope::new(tenant, owner),
                id: TaskId::from(id),
                version: to_u64(row.try_get(3).map_err(backend)?)?,
            });
        }
        Ok(tasks)
    }
}

/// `d` in milliseconds, saturating.
fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
