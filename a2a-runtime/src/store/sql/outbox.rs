//! The durable [`PushOutbox`](crate::store::PushOutbox) of the SQLite and PostgreSQL stores, in
//! the same database as the tasks (see `migrations/*/0003_push_outbox.sql`).
//!
//! - `a2a_push_outbox` holds the waiting deliveries, keyed by an increasing id. They are written
//!   by the store's own create/update, in the transaction that logs their event (see
//!   `enqueue_deliveries` in [`writes`](super::writes)), so a delivery exists exactly when its
//!   event does. A claim is one statement: `UPDATE … SET lease_owner, lease_until_ms, attempts
//!   = attempts + 1 WHERE id IN (the oldest due rows that are not leased, or whose lease
//!   expired, and that have no older row of their (tenant, owner, task, config)) RETURNING …`.
//!   On PostgreSQL the inner select locks its rows `FOR UPDATE SKIP LOCKED`, so that concurrent
//!   instances never lease the same row; on SQLite the statement holds the database's write
//!   lock (WAL, busy timeout).
//! - `a2a_push_dead` keeps the deliveries given up on, at most the store's
//!   `max_dead_deliveries`, the oldest removed first.
//!
//! Attempts are counted when a row is claimed, so an instance that dies mid-attempt leaves the
//! attempt counted and the lease to expire; the row is then claimed again (by another instance,
//! or the restarted one).

use std::sync::LazyLock;

use sqlx::{ColumnIndex, Database, Executor, IntoArguments, Pool, QueryBuilder, Row as _};

use super::codec::{backend, to_i64, to_u64};
use super::dialect::{Column, Dialect, Param};
use crate::store::{Delivery, NewDelivery, Scope, StoreError};
use crate::types::{PushConfigId, TaskId};

/// The claim's inner select: the ids of the due rows whose lease is free and that have no older
/// row of their (tenant, owner, task, config), earliest due first, then oldest; `$3` is now,
/// `$4` the limit. The range on `next_ms`, in that order, is served by the index
/// `a2a_push_outbox_due` on `(next_ms, id)` (`migrations/*/0005_push_outbox_due.sql`), the
/// older-row check by `a2a_push_outbox_pair`.
pub(in crate::store) const CLAIM_DUE: &str = "SELECT o.id FROM a2a_push_outbox o \
     WHERE o.next_ms <= $3 AND o.lease_until_ms <= $3 \
     AND NOT EXISTS (SELECT 1 FROM a2a_push_outbox p \
       WHERE p.tenant = o.tenant AND p.owner = o.owner \
       AND p.task_id = o.task_id AND p.config_id = o.config_id \
       AND p.id < o.id) \
     ORDER BY o.next_ms, o.id LIMIT $4";

/// The columns a [`Delivery`] is read from, in [`delivery`]'s order.
const COLUMNS: &str = "id, tenant, owner, task_id, config_id, seq, payload, attempts, \
     enqueued_ms, next_ms, last_error";

/// The most rows one `INSERT` of [`PushOutbox::enqueue`](crate::store::PushOutbox::enqueue)
/// writes (8 parameters each).
const ENQUEUE_CHUNK: usize = 100;

/// Dead deliveries a SQL store keeps by default.
pub(in crate::store) const DEFAULT_MAX_DEAD: usize = 1_000;

/// The statement that claims due deliveries (`$1` owner, `$2` lease end, `$3` now, `$4` limit),
/// with `lock` ending its inner select (see [`Dialect::claim_statement`]).
pub(in crate::store) fn claim_statement(lock: &str) -> String {
    format!(
        "UPDATE a2a_push_outbox \
         SET lease_owner = $1, lease_until_ms = $2, attempts = attempts + 1 \
         WHERE id IN ({CLAIM_DUE}{lock}) RETURNING {COLUMNS}"
    )
}

/// The push outbox of a SQL store of dialect `D`.
///
/// Each method is the [`PushOutbox`](crate::store::PushOutbox) method of the same name.
pub(in crate::store) struct Outbox<'s, D: Dialect> {
    pool: &'s Pool<D::Db>,
    /// How many dead deliveries are kept.
    max_dead: usize,
}

impl<'s, D: Dialect> Outbox<'s, D> {
    /// The outbox in `pool`, keeping at most `max_dead` dead deliveries.
    pub(in crate::store) fn new(pool: &'s Pool<D::Db>, max_dead: usize) -> Self {
        Self { pool, max_dead }
    }
}

impl<D: Dialect> Outbox<'_, D>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> &'q [u8]: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    i64: Column<D::Db>,
    String: Column<D::Db>,
    Vec<u8>: Column<D::Db>,
{
    /// Appends `deliveries`, due now; returns their ids.
    pub(in crate::store) async fn enqueue(
        &self,
        deliveries: Vec<NewDelivery>,
        now_ms: i64,
    ) -> Result<Vec<u64>, StoreError> {
        if deliveries.is_empty() {
            return Ok(Vec::new());
        }
        let seqs = deliveries
            .iter()
            .map(|d| to_i64(d.seq))
            .collect::<Result<Vec<_>, _>>()?;
        let mut ids = Vec::with_capacity(deliveries.len());
        let mut tx = self.pool.begin().await.map_err(backend)?;
        for (chunk, seqs) in deliveries
            .chunks(ENQUEUE_CHUNK)
            .zip(seqs.chunks(ENQUEUE_CHUNK))
        {
            let mut q = QueryBuilder::<D::Db>::new(
                "INSERT INTO a2a_push_outbox \
                 (tenant, owner, task_id, config_id, seq, payload, enqueued_ms, \
                  next_ms) ",
            );
            q.push_values(chunk.iter().zip(seqs), |mut row, (d, seq)| {
                row.push_bind(d.scope.tenant.as_str())
                    .push_bind(&*d.scope.owner)
                    .push_bind(d.task_id.as_str())
                    .push_bind(d.config_id.as_str())
                    .push_bind(*seq)
                    .push_bind(d.payload.as_ref())
                    .push_bind(now_ms)
                    .push_bind(now_ms);
            });
            q.push(" RETURNING id");
            let rows = D::build(&mut q)
                .fetch_all(&mut *tx)
                .await
                .map_err(backend)?;
            let mut chunk_ids = rows
                .iter()
                .map(|r| to_u64(r.try_get(0).map_err(backend)?))
                .collect::<Result<Vec<_>, _>>()?;
            // The ids were assigned in the order of the rows.
            chunk_ids.sort_unstable();
            ids.extend(chunk_ids);
        }
        tx.commit().await.map_err(backend)?;
        Ok(ids)
    }

    /// Leases up to `limit` due deliveries to `owner` until `lease_until_ms`.
    pub(in crate::store) async fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(D::claim_statement())
            .bind(owner)
            .bind(lease_until_ms)
            .bind(now_ms)
            .bind(to_i64(limit as u64)?)
            .fetch_all(self.pool)
            .await
            .map_err(backend)?;
        let mut claimed = rows
            .iter()
            .map(delivery::<D>)
            .collect::<Result<Vec<_>, _>>()?;
        // Earliest due, then oldest, first, as the in-memory outbox hands them out.
        claimed.sort_unstable_by_key(|d| (d.next_attempt_ms, d.id));
        Ok(claimed)
    }

    /// Removes a delivered delivery.
    pub(in crate::store) async fn complete(&self, id: u64) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM a2a_push_outbox WHERE id = $1")
            .bind(to_i64(id)?)
            .execute(self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }

    /// Frees a delivery's lease and makes it due again at `at_ms`.
    pub(in crate::store) async fn retry_at(
        &self,
        id: u64,
        at_ms: i64,
        error: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE a2a_push_outbox \
             SET next_ms = $2, last_error = $3, lease_owner = '', lease_until_ms = 0 \
             WHERE id = $1",
        )
        .bind(to_i64(id)?)
        .bind(at_ms)
        .bind(error)
        .execute(self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    /// Moves a delivery to the dead ones, keeping the newest [`Self::new`]'s `max_dead`.
    pub(in crate::store) async fn dead(&self, id: u64, error: &str) -> Result<(), StoreError> {
        let id = to_i64(id)?;
        let keep = to_i64(self.max_dead as u64)?;
        let mut tx = self.pool.begin().await.map_err(backend)?;
        sqlx::query(
            "INSERT INTO a2a_push_dead \
             (id, tenant, owner, task_id, config_id, seq, payload, attempts, \
              enqueued_ms, next_ms, last_error, dead_ms) \
             SELECT id, tenant, owner, task_id, config_id, seq, payload, attempts, \
              enqueued_ms, next_ms, $2, $3 \
             FROM a2a_push_outbox WHERE id = $1",
        )
        .bind(id)
        .bind(error)
        .bind(crate::store::now_ms())
        .execute(&mut *tx)
        .await
        .map_err(backend)?;
        sqlx::query("DELETE FROM a2a_push_outbox WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        // Bounded: everything older than the newest `keep` goes.
        sqlx::query(
            "DELETE FROM a2a_push_dead WHERE ord <= \
             (SELECT ord FROM a2a_push_dead ORDER BY ord DESC LIMIT 1 OFFSET $1)",
        )
        .bind(keep)
        .execute(&mut *tx)
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(())
    }

    /// The newest dead deliveries, at most `limit`.
    pub(in crate::store) async fn list_dead(
        &self,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError> {
        // Made once: the same text each call, so that the prepared statement is reused.
        static LIST_DEAD: LazyLock<String> = LazyLock::new(|| {
            format!("SELECT {COLUMNS} FROM a2a_push_dead ORDER BY ord DESC LIMIT $1")
        });
        let limit = limit.min(self.max_dead);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(&LIST_DEAD)
            .bind(to_i64(limit as u64)?)
            .fetch_all(self.pool)
            .await
            .map_err(backend)?;
        rows.iter().map(delivery::<D>).collect()
    }

    /// The number of waiting deliveries.
    pub(in crate::store) async fn pending(&self) -> Result<usize, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM a2a_push_outbox")
            .fetch_one(self.pool)
            .await
            .map_err(backend)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }
}

/// A delivery from a row of [`COLUMNS`].
fn delivery<D: Dialect>(row: &<D::Db as Database>::Row) -> Result<Delivery, StoreError>
where
    usize: ColumnIndex<<D::Db as Database>::Row>,
    i64: Column<D::Db>,
    String: Column<D::Db>,
    Vec<u8>: Column<D::Db>,
{
    let tenant: String = row.try_get(1).map_err(backend)?;
    let owner: String = row.try_get(2).map_err(backend)?;
    let task_id: String = row.try_get(3).map_err(backend)?;
    let config_id: String = row.try_get(4).map_err(backend)?;
    let payload: Vec<u8> = row.try_get(6).map_err(backend)?;
    let attempts = to_u64(row.try_get(7).map_err(backend)?)?;
    Ok(Delivery {
        id: to_u64(row.try_get(0).map_err(backend)?)?,
        new: NewDelivery {
            scope: Scope::new(tenant, owner),
            task_id: TaskId::from(task_id),
            config_id: PushConfigId::from(config_id),
            seq: to_u64(row.try_get(5).map_err(backend)?)?,
            payload: bytes::Bytes::from(payload),
        },
        attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        enqueued_at_ms: row.try_get(8).map_err(backend)?,
        next_attempt_ms: row.try_get(9).map_err(backend)?,
        last_error: row.try_get(10).map_err(backend)?,
    })
}
