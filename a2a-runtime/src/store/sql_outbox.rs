//! The durable [`PushOutbox`](super::PushOutbox) of the SQLite and PostgreSQL stores, in the
//! same database as the tasks (see `migrations/*/0003_push_outbox.sql`).
//!
//! - `a2a_push_outbox` holds the waiting deliveries, keyed by an increasing id. They are written
//!   by the store's own create/update, in the transaction that logs their event (see
//!   `enqueue_deliveries` in `store/sql/writes.rs`), so a delivery exists exactly when its event does.
//!   A claim is one
//!   statement: `UPDATE … SET lease_owner, lease_until_ms, attempts = attempts + 1 WHERE id IN
//!   (the oldest due rows that are not leased, or whose lease expired, and that have no older
//!   row of their (tenant, owner, task, config)) RETURNING …`. On PostgreSQL the inner select
//!   locks its rows `FOR UPDATE SKIP LOCKED`, so that concurrent instances never lease the
//!   same row; on SQLite the statement holds the database's write lock (WAL, busy timeout).
//! - `a2a_push_dead` keeps the deliveries given up on, at most the store's
//!   `max_dead_deliveries`, the oldest removed first.
//!
//! Attempts are counted when a row is claimed, so an instance that dies mid-attempt leaves the
//! attempt counted and the lease to expire; the row is then claimed again (by another instance,
//! or the restarted one).

/// The claim's inner select: the ids of the due rows whose lease is free and that have no
/// older row of their (tenant, owner, task, config), earliest due first, then oldest; `$3` is
/// now, `$4` the limit. The range on `next_ms`, in that order, is served by the index
/// `a2a_push_outbox_due` on `(next_ms, id)` (`migrations/*/0005_push_outbox_due.sql`), the
/// older-row check by `a2a_push_outbox_pair`.
macro_rules! claim_due {
    () => {
        "SELECT o.id FROM a2a_push_outbox o \
         WHERE o.next_ms <= $3 AND o.lease_until_ms <= $3 \
         AND NOT EXISTS (SELECT 1 FROM a2a_push_outbox p \
           WHERE p.tenant = o.tenant AND p.owner = o.owner \
           AND p.task_id = o.task_id AND p.config_id = o.config_id \
           AND p.id < o.id) \
         ORDER BY o.next_ms, o.id LIMIT $4"
    };
}
pub(super) use claim_due;

/// The most rows one `INSERT` of [`PushOutbox::enqueue`](super::PushOutbox::enqueue) writes (8
/// parameters each).
pub(super) const ENQUEUE_CHUNK: usize = 100;

/// Dead deliveries a SQL store keeps by default.
pub(super) const DEFAULT_MAX_DEAD: usize = 1_000;

/// Implements [`PushOutbox`](super::PushOutbox) for `$store`, a struct with a
/// `pool: sqlx::Pool<$db>` field and a `max_dead: usize` field; `$lock` ends the claim's inner
/// select (`FOR UPDATE SKIP LOCKED` on PostgreSQL, empty on SQLite).
macro_rules! sql_outbox {
    ($store:ty, $db:ty, $lock:literal) => {
        const _: () = {
            use sqlx::Row as _;
            use $crate::store::sql::{backend, to_i64, to_u64};
            use $crate::store::sql_outbox::ENQUEUE_CHUNK;
            use $crate::store::{Delivery, NewDelivery, PushOutbox, Scope, StoreError};
            use $crate::types::{PushConfigId, TaskId};

            /// The columns a [`Delivery`] is read from, in [`delivery`]'s order.
            macro_rules! columns {
                () => {
                    "id, tenant, owner, task_id, config_id, seq, payload, attempts, \
                     enqueued_ms, next_ms, last_error"
                };
            }

            fn delivery(row: &<$db as sqlx::Database>::Row) -> Result<Delivery, StoreError> {
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

            #[async_trait::async_trait]
            impl PushOutbox for $store {
                async fn enqueue(
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
                        let mut q = sqlx::QueryBuilder::<$db>::new(
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
                        let rows = q.build().fetch_all(&mut *tx).await.map_err(backend)?;
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

                async fn claim(
                    &self,
                    owner: &str,
                    now_ms: i64,
                    lease_until_ms: i64,
                    limit: usize,
                ) -> Result<Vec<Delivery>, StoreError> {
                    if limit == 0 {
                        return Ok(Vec::new());
                    }
                    let rows = sqlx::query(concat!(
                        "UPDATE a2a_push_outbox \
                         SET lease_owner = $1, lease_until_ms = $2, attempts = attempts + 1 \
                         WHERE id IN (",
                        $crate::store::sql_outbox::claim_due!(),
                        $lock,
                        ") RETURNING ",
                        columns!()
                    ))
                    .bind(owner)
                    .bind(lease_until_ms)
                    .bind(now_ms)
                    .bind(to_i64(limit as u64)?)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                    let mut claimed = rows.iter().map(delivery).collect::<Result<Vec<_>, _>>()?;
                    // Earliest due, then oldest, first, as the in-memory outbox hands them out.
                    claimed.sort_unstable_by_key(|d| (d.next_attempt_ms, d.id));
                    Ok(claimed)
                }

                async fn complete(&self, id: u64) -> Result<(), StoreError> {
                    sqlx::query("DELETE FROM a2a_push_outbox WHERE id = $1")
                        .bind(to_i64(id)?)
                        .execute(&self.pool)
                        .await
                        .map_err(backend)?;
                    Ok(())
                }

                async fn retry_at(&self, id: u64, at_ms: i64, error: &str) -> Result<(), StoreError> {
                    sqlx::query(
                        "UPDATE a2a_push_outbox \
                         SET next_ms = $2, last_error = $3, lease_owner = '', lease_until_ms = 0 \
                         WHERE id = $1",
                    )
                    .bind(to_i64(id)?)
                    .bind(at_ms)
                    .bind(error)
                    .execute(&self.pool)
                    .await
                    .map_err(backend)?;
                    Ok(())
                }

                async fn dead(&self, id: u64, error: &str) -> Result<(), StoreError> {
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
                    .bind($crate::store::now_ms())
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

                async fn list_dead(&self, limit: usize) -> Result<Vec<Delivery>, StoreError> {
                    let limit = limit.min(self.max_dead);
                    if limit == 0 {
                        return Ok(Vec::new());
                    }
                    let rows = sqlx::query(concat!(
                        "SELECT ",
                        columns!(),
                        " FROM a2a_push_dead ORDER BY ord DESC LIMIT $1"
                    ))
                    .bind(to_i64(limit as u64)?)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                    rows.iter().map(delivery).collect()
                }

                async fn pending(&self) -> Result<usize, StoreError> {
                    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM a2a_push_outbox")
                        .fetch_one(&self.pool)
                        .await
                        .map_err(backend)?;
                    Ok(usize::try_from(n).unwrap_or(0))
                }
            }
        };
    };
}

pub(super) use sql_outbox;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// The claim's select with literals for its parameters (now, limit).
    fn claim_query() -> String {
        claim_due!().replace("$3", "1000").replace("$4", "10")
    }

    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn the_sqlite_claim_searches_the_due_index() {
        let dir = std::env::temp_dir().join(format!("a2a-claim-plan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let url = format!("sqlite://{}/plan.db", dir.display());
        let store = super::super::SqliteStore::open(&url).await.unwrap();
        let rows: Vec<(i64, i64, i64, String)> =
            sqlx::query_as(&format!("EXPLAIN QUERY PLAN {}", claim_query()))
                .fetch_all(store.pool())
                .await
                .unwrap();
        let plan: Vec<&str> = rows.iter().map(|r| r.3.as_str()).collect();
        store.pool().close().await;
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            plan.iter()
                .any(|d| d.starts_with("SEARCH o USING INDEX a2a_push_outbox_due (next_ms<?)")),
            "{plan:?}"
        );
        assert!(
            !plan.iter().any(|d| d.contains("TEMP B-TREE")),
            "the index gives the order: {plan:?}"
        );
    }

    #[cfg(feature = "postgres")]
    #[tokio::test]
    async fn the_postgres_claim_scans_the_due_index() {
        use sqlx::Connection as _;
        let admin = std::env::var("A2A_TEST_POSTGRES")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
        let name = format!(
            "a2a_claim_plan_{}_{}",
            std::process::id(),
            chrono::Utc::now().timestamp_micros()
        );
        let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .unwrap();
        let root = admin.rsplit_once('/').unwrap().0;
        let url = format!("{root}/{name}");
        let store = super::super::PostgresStore::connect(&url).await.unwrap();
        let plan = async {
            let mut c = store.pool().acquire().await.unwrap();
            // An empty table is scanned whatever its indexes: ask whether the index serves
            // the claim at all, as it does once the table is large.
            sqlx::query("SET enable_seqscan = off")
                .execute(&mut *c)
                .await
                .unwrap();
            let lines: Vec<String> = sqlx::query_scalar(&format!("EXPLAIN {}", claim_query()))
                .fetch_all(&mut *c)
                .await
                .unwrap();
            lines
        }
        .await;
        store.pool().close().await;
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .execute(&mut conn)
            .await
            .unwrap();
        let outer = plan
            .iter()
            .find(|l| l.contains(" on a2a_push_outbox o"))
            .unwrap();
        assert!(outer.contains("a2a_push_outbox_due"), "{plan:#?}");
    }
}
