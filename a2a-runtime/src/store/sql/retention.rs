//! Retention's statements of the SQL stores: finished tasks purged by age and by count (over
//! all scopes, or in each scope), in small transactions; and the bounded table of message
//! claims of idempotent sends.
//!
//! A purge first reads which tasks to remove (no lock), then deletes them [`PURGE_CHUNK`] at a
//! time, each chunk a write transaction of its own: the task writes queued meanwhile wait for
//! one chunk, never for the whole pass. A task written since it was found (its `updated_ms`
//! moved, or its state) is left.

use std::collections::BTreeMap;

use sqlx::{ColumnIndex, Database, Executor, IntoArguments, Pool, QueryBuilder, Row as _};

use super::codec::{backend, to_i64};
use super::dialect::{Column, Dialect, Param};
use super::tasks::{FINISHED, TASK_PARTS, push_age_filter};
use super::writes::adjust_counts;
use crate::store::{Scope, StoreError};
use crate::types::{MessageId, TaskId, Timestamp};

/// The most tasks one purge transaction removes.
pub(in crate::store) const PURGE_CHUNK: usize = 64;

/// The most scopes one per-scope pass looks at.
const SCOPES_PER_PASS: usize = 64;

/// A task found for removal: its key, and its last write as found.
struct Found {
    tenant: String,
    owner: String,
    id: String,
    updated_ms: i64,
}

/// Retention over the tables of a SQL store of dialect `D`.
///
/// Each method is the [`TaskStore`](crate::store::TaskStore) method of the same name.
pub(in crate::store) struct Retained<'s, D: Dialect> {
    pool: &'s Pool<D::Db>,
}

impl<'s, D: Dialect> Retained<'s, D> {
    /// Retention over `pool`.
    pub(in crate::store) fn new(pool: &'s Pool<D::Db>) -> Self {
        Self { pool }
    }
}

impl<D: Dialect> Retained<'_, D>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    i64: Column<D::Db>,
    String: Column<D::Db>,
{
    /// Removes at most `limit` finished tasks last written before `before`.
    pub(in crate::store) async fn purge_finished(
        &self,
        before: Timestamp,
        limit: usize,
    ) -> Result<usize, StoreError> {
        if limit == 0 {
            return Ok(0);
        }
        let mut q =
            QueryBuilder::<D::Db>::new("SELECT tenant, owner, id, updated_ms FROM a2a_tasks");
        push_age_filter(&mut q, &FINISHED, before.millis());
        q.push(" LIMIT ");
        q.push_bind(to_i64(limit as u64)?);
        let found = self.found(&mut q).await?;
        self.remove(found).await
    }

    /// Removes finished tasks beyond the newest `keep`, over all scopes or in each scope; at
    /// most `limit`.
    pub(in crate::store) async fn purge_finished_beyond(
        &self,
        keep: usize,
        per_scope: bool,
        limit: usize,
    ) -> Result<usize, StoreError> {
        if limit == 0 {
            return Ok(0);
        }
        let keep = to_i64(keep as u64)?;
        if !per_scope {
            let mut count = QueryBuilder::<D::Db>::new("SELECT COUNT(*) FROM a2a_tasks");
            push_states(&mut count, " WHERE ");
            let n: i64 = self.scalar(&mut count).await?;
            let excess = usize::try_from(n - keep).unwrap_or(0).min(limit);
            if excess == 0 {
                return Ok(0);
            }
            // The oldest of each finished state (each an ordered range of the index on
            // `(state, updated_ms)`), then the oldest of those.
            let mut found = Vec::new();
            for state in FINISHED {
                let mut q = QueryBuilder::<D::Db>::new(
                    "SELECT tenant, owner, id, updated_ms FROM a2a_tasks WHERE state = ",
                );
                q.push_bind(state.as_str());
                q.push(" ORDER BY updated_ms LIMIT ");
                q.push_bind(to_i64(excess as u64)?);
                found.extend(self.found(&mut q).await?);
            }
            found.sort_by_key(|f| f.updated_ms);
            found.truncate(excess);
            return self.remove(found).await;
        }
        // Scopes holding more than `keep` tasks (finished or not: the kept count), then in each
        // its oldest finished tasks beyond `keep` (by status timestamp, from the index on
        // `(tenant, owner, state, status_ms DESC, id DESC)`).
        let scopes = sqlx::query(
            "SELECT tenant, owner FROM a2a_task_counts WHERE n > $1 ORDER BY n DESC LIMIT $2",
        )
        .bind(keep)
        .bind(to_i64(SCOPES_PER_PASS as u64)?)
        .fetch_all(self.pool)
        .await
        .map_err(backend)?;
        let mut purged = 0;
        for row in scopes {
            if purged >= limit {
                break;
            }
            let tenant: String = row.try_get(0).map_err(backend)?;
            let owner: String = row.try_get(1).map_err(backend)?;
            let mut count = QueryBuilder::<D::Db>::new("SELECT COUNT(*) FROM a2a_tasks");
            push_scope(&mut count, &tenant, &owner);
            push_states(&mut count, " AND ");
            let n: i64 = self.scalar(&mut count).await?;
            let excess = usize::try_from(n - keep).unwrap_or(0).min(limit - purged);
            if excess == 0 {
                continue;
            }
            let mut found = Vec::new();
            for state in FINISHED {
                let mut q = QueryBuilder::<D::Db>::new(
                    "SELECT tenant, owner, id, updated_ms, status_ms FROM a2a_tasks",
                );
                push_scope(&mut q, &tenant, &owner);
                q.push(" AND state = ");
                q.push_bind(state.as_str());
                q.push(" ORDER BY status_ms, id LIMIT ");
                q.push_bind(to_i64(excess as u64)?);
                let rows = D::build(&mut q)
                    .fetch_all(self.pool)
                    .await
                    .map_err(backend)?;
                for row in rows {
                    let status: i64 = row.try_get(4).map_err(backend)?;
                    found.push((status, found_of(&row)?));
                }
            }
            found.sort_by_key(|(status, _)| *status);
            found.truncate(excess);
            purged += self
                .remove(found.into_iter().map(|(_, f)| f).collect())
                .await?;
        }
        Ok(purged)
    }

    /// Removes the claim of `message_id` in `scope` if it is for `task_id`.
    pub(in crate::store) async fn release_message_claim(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM a2a_message_claims \
             WHERE tenant = $1 AND owner = $2 AND message_id = $3 AND task_id = $4",
        )
        .bind(scope.tenant.as_str())
        .bind(&*scope.owner)
        .bind(message_id.as_str())
        .bind(task_id.as_str())
        .execute(self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    /// Claims `message_id` in `scope` for `task_id`, unless a claim made at or after `since`
    /// holds it: then its task id.
    pub(in crate::store) async fn claim_message(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
        since: Timestamp,
    ) -> Result<Option<TaskId>, StoreError> {
        // One statement, atomic in the database: the unique key decides between racing
        // claims of any instance; an expired claim is taken over in place.
        for _ in 0..3 {
            let mine: Option<String> = sqlx::query_scalar(
                "INSERT INTO a2a_message_claims (tenant, owner, message_id, task_id, created_ms) \
                 VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (tenant, owner, message_id) DO UPDATE \
                 SET task_id = excluded.task_id, created_ms = excluded.created_ms \
                 WHERE a2a_message_claims.created_ms < $6 \
                 RETURNING task_id",
            )
            .bind(scope.tenant.as_str())
            .bind(&*scope.owner)
            .bind(message_id.as_str())
            .bind(task_id.as_str())
            .bind(crate::store::now_ms())
            .bind(since.millis())
            .fetch_optional(self.pool)
            .await
            .map_err(backend)?;
            if mine.is_some() {
                return Ok(None);
            }
            let held: Option<String> = sqlx::query_scalar(
                "SELECT task_id FROM a2a_message_claims \
                 WHERE tenant = $1 AND owner = $2 AND message_id = $3",
            )
            .bind(scope.tenant.as_str())
            .bind(&*scope.owner)
            .bind(message_id.as_str())
            .fetch_optional(self.pool)
            .await
            .map_err(backend)?;
            // None: removed between the two statements (expired); claim again.
            if let Some(held) = held {
                return Ok(Some(TaskId::from(held)));
            }
        }
        Err(StoreError::Backend(format!(
            "the claim of message {message_id} kept changing; retry"
        )))
    }

    /// Removes claims made before `before`, then the oldest beyond `keep`; at most `limit`.
    pub(in crate::store) async fn purge_claims(
        &self,
        before: Timestamp,
        keep: usize,
        limit: usize,
    ) -> Result<usize, StoreError> {
        if limit == 0 {
            return Ok(0);
        }
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM a2a_message_claims")
            .fetch_one(self.pool)
            .await
            .map_err(backend)?;
        let excess = n - to_i64(keep as u64)?;
        // The newest claim to remove: every claim before `before`, and the oldest `excess`.
        let mut cutoff = before.millis();
        if excess > 0 {
            let nth: Option<i64> = sqlx::query_scalar(
                "SELECT created_ms FROM a2a_message_claims ORDER BY created_ms LIMIT 1 OFFSET $1",
            )
            .bind(excess - 1)
            .fetch_optional(self.pool)
            .await
            .map_err(backend)?;
            cutoff = cutoff.max(nth.map_or(cutoff, |ms| ms + 1));
        }
        let mut removed = 0;
        while removed < limit {
            let chunk = PURGE_CHUNK.min(limit - removed);
            let mut tx = D::begin_write(self.pool).await.map_err(backend)?;
            let done = sqlx::query(
                "DELETE FROM a2a_message_claims WHERE (tenant, owner, message_id) IN \
                 (SELECT tenant, owner, message_id FROM a2a_message_claims \
                  WHERE created_ms < $1 ORDER BY created_ms LIMIT $2)",
            )
            .bind(cutoff)
            .bind(to_i64(chunk as u64)?)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
            tx.commit().await.map_err(backend)?;
            let n = usize::try_from(D::rows_affected(&done)).unwrap_or(usize::MAX);
            removed += n;
            if n < chunk {
                break;
            }
        }
        Ok(removed)
    }

    /// The rows of a `SELECT tenant, owner, id, updated_ms ...`.
    async fn found(&self, q: &mut QueryBuilder<'_, D::Db>) -> Result<Vec<Found>, StoreError> {
        let rows = D::build(q).fetch_all(self.pool).await.map_err(backend)?;
        rows.iter().map(found_of).collect()
    }

    /// The one value of a `SELECT COUNT(*) ...`.
    async fn scalar(&self, q: &mut QueryBuilder<'_, D::Db>) -> Result<i64, StoreError> {
        D::build(q)
            .fetch_one(self.pool)
            .await
            .map_err(backend)?
            .try_get(0)
            .map_err(backend)
    }

    /// Removes the tasks `found`, each with every row of it, [`PURGE_CHUNK`] per transaction;
    /// a task written since it was found is left. Returns how many were removed.
    async fn remove(&self, found: Vec<Found>) -> Result<usize, StoreError> {
        let mut purged = 0;
        for chunk in found.chunks(PURGE_CHUNK) {
            let mut tx = D::begin_write(self.pool).await.map_err(backend)?;
            let mut counts = BTreeMap::new();
            for f in chunk {
                let mut del = QueryBuilder::<D::Db>::new("DELETE FROM a2a_tasks");
                push_scope(&mut del, &f.tenant, &f.owner);
                del.push(" AND id = ");
                del.push_bind(f.id.as_str());
                del.push(" AND updated_ms = ");
                del.push_bind(f.updated_ms);
                push_states(&mut del, " AND ");
                let done = D::build(&mut del)
                    .execute(&mut *tx)
                    .await
                    .map_err(backend)?;
                if D::rows_affected(&done) == 0 {
                    continue;
                }
                purged += 1;
                *counts
                    .entry((f.tenant.clone(), f.owner.clone()))
                    .or_insert(0) -= 1;
                for (table, key) in TASK_PARTS {
                    sqlx::query(&format!(
                        "DELETE FROM {table} WHERE tenant = $1 AND owner = $2 AND {key} = $3"
                    ))
                    .bind(f.tenant.as_str())
                    .bind(f.owner.as_str())
                    .bind(f.id.as_str())
                    .execute(&mut *tx)
                    .await
                    .map_err(backend)?;
                }
            }
            adjust_counts::<D>(&mut tx, &counts).await?;
            // A scope left without tasks keeps no count.
            for (tenant, owner) in counts.keys() {
                sqlx::query(
                    "DELETE FROM a2a_task_counts WHERE tenant = $1 AND owner = $2 AND n <= 0",
                )
                .bind(tenant.as_str())
                .bind(owner.as_str())
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
            }
            tx.commit().await.map_err(backend)?;
        }
        Ok(purged)
    }
}

/// A row `tenant, owner, id, updated_ms` as a [`Found`].
fn found_of<R: sqlx::Row>(row: &R) -> Result<Found, StoreError>
where
    usize: ColumnIndex<R>,
    i64: Column<R::Database>,
    String: Column<R::Database>,
{
    Ok(Found {
        tenant: row.try_get(0).map_err(backend)?,
        owner: row.try_get(1).map_err(backend)?,
        id: row.try_get(2).map_err(backend)?,
        updated_ms: row.try_get(3).map_err(backend)?,
    })
}

/// Appends `{join}state IN (the finished states)`.
fn push_states<DB: Database>(q: &mut QueryBuilder<'_, DB>, join: &str)
where
    for<'q> &'q str: Param<'q, DB>,
{
    q.push(join);
    q.push("state IN (");
    let mut list = q.separated(", ");
    for s in FINISHED {
        list.push_bind(s.as_str());
    }
    q.push(")");
}

/// Appends ` WHERE tenant = .. AND owner = ..`.
fn push_scope<'a, DB: Database>(q: &mut QueryBuilder<'a, DB>, tenant: &'a str, owner: &'a str)
where
    for<'q> &'q str: Param<'q, DB>,
{
    q.push(" WHERE tenant = ");
    q.push_bind(tenant);
    q.push(" AND owner = ");
    q.push_bind(owner);
}
