//! What the SQLite and PostgreSQL stores share: the row encoding and the statements.
//!
//! Both keep the same three tables (see `migrations/`):
//! - `a2a_tasks`: one row per task (tenant, owner, id, context, state, status timestamp,
//!   version, created and updated times) with the task's ProtoJSON, keyed by
//!   `(tenant, owner, id)`; listings are served by the index on
//!   `(tenant, owner, status_ms DESC, id DESC)`;
//! - `a2a_events`: the append-only event log, keyed by `(tenant, owner, task_id, seq)`;
//! - `a2a_push_configs`: push notification configs, keyed by `(tenant, owner, task_id, id)`;
//! - `a2a_task_items`: the messages, artifacts and parts of large tasks, one row each (see
//!   [`layout`](super::layout)), so that a long streamed task does not rewrite itself whole at
//!   every event.
//!
//! The statements are written once (numbered `$n` parameters, which both drivers accept) and
//! the trait implementations are stamped out per driver by [`sql_store!`].

use super::StoreError;
use crate::types::{StreamResponse, Task, TaskPushNotificationConfig, TaskState};

/// The status timestamp column of `task` (milliseconds since the epoch, 0 when unset, as in
/// [`ListCursor::of`](super::ListCursor::of)).
pub(super) fn status_ms(task: &Task) -> i64 {
    task.status.timestamp.map_or(0, |t| t.millis())
}

/// A version or sequence number as a column (`BIGINT`).
pub(super) fn to_i64(n: u64) -> Result<i64, StoreError> {
    i64::try_from(n).map_err(|_| StoreError::Backend(format!("{n} exceeds the column range")))
}

/// A column back as a version or sequence number.
pub(super) fn to_u64(n: i64) -> Result<u64, StoreError> {
    u64::try_from(n).map_err(|_| StoreError::Backend(format!("negative counter {n} in the store")))
}

pub(super) fn encode_task(task: &Task) -> Result<String, StoreError> {
    serde_json::to_string(task).map_err(|e| StoreError::Backend(format!("encode task: {e}")))
}

pub(super) fn decode_task(json: &str) -> Result<Task, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Backend(format!("decode task: {e}")))
}

pub(super) fn encode_event(event: &StreamResponse) -> Result<String, StoreError> {
    serde_json::to_string(event).map_err(|e| StoreError::Backend(format!("encode event: {e}")))
}

pub(super) fn decode_event(json: &str) -> Result<StreamResponse, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Backend(format!("decode event: {e}")))
}

pub(super) fn encode_config(config: &TaskPushNotificationConfig) -> Result<String, StoreError> {
    serde_json::to_string(config)
        .map_err(|e| StoreError::Backend(format!("encode push config: {e}")))
}

pub(super) fn decode_config(json: &str) -> Result<TaskPushNotificationConfig, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Backend(format!("decode push config: {e}")))
}

/// A driver error as a store error.
pub(super) fn backend(e: sqlx::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// A driver error within a batched write (it aborts the transaction).
pub(super) fn driver(e: sqlx::Error) -> super::sql_writer::Failure {
    super::sql_writer::Failure::Driver(backend(e))
}

/// The terminal states, whose tasks retention purges by age.
pub(super) const FINISHED: [TaskState; 4] = [
    TaskState::Completed,
    TaskState::Failed,
    TaskState::Canceled,
    TaskState::Rejected,
];

/// The tables besides `a2a_tasks` that hold rows of a task, with their task id column.
pub(super) const TASK_PARTS: [(&str, &str); 3] = [
    ("a2a_events", "task_id"),
    ("a2a_push_configs", "task_id"),
    ("a2a_task_items", "task_id"),
];

/// The most events one `events_after` call returns.
pub(super) const MAX_EVENTS_PER_READ: usize = 1000;

/// Implements [`TaskStore`](super::TaskStore) and [`PushConfigStore`](super::PushConfigStore)
/// for `$store`, a struct with a `pool: sqlx::Pool<$db>` field.
macro_rules! sql_store {
    ($store:ty, $db:ty) => {
        use $crate::store::sql::{
            MAX_EVENTS_PER_READ, backend, decode_config, decode_event, decode_task,
            encode_config, encode_event, encode_task, status_ms, to_i64, to_u64,
        };
        use $crate::store::{
            now_ms,
            ListCursor, PushConfigStore, Scope, SeqEvent, StoreError, StoredTask, TaskPage,
            TaskQuery, TaskStore,
        };
        use $crate::store::TaskRef;
        use $crate::store::sql::{FINISHED, TASK_PARTS};
        use $crate::store::layout::{self, ITEMS_PER_STATEMENT, SPLIT_ABOVE, Split, Stored};
        use $crate::types::{
            PushConfigId, StreamResponse, Task, TaskId, TaskPushNotificationConfig, TaskState,
            Timestamp,
        };
        use sqlx::Row as _;
        use $crate::store::sql_writer::{
            Done, Failure, Job, MAX_BATCH, Op, QUEUE, Row, RowKey, RunBatch, Stop, Writer,
        };
        use $crate::store::sql::driver;

        /// Appends `WHERE state IN (states) AND updated_ms < before` to a statement on
        /// `a2a_tasks` (served by the index on `(state, updated_ms)`).
        fn push_age_filter(q: &mut sqlx::QueryBuilder<'_, $db>, states: &[TaskState], before: i64) {
            q.push(" WHERE state IN (");
            let mut list = q.separated(", ");
            for s in states {
                list.push_bind(s.as_str());
            }
            q.push(") AND updated_ms < ");
            q.push_bind(before);
        }

        /// Appends the filters of `query` (all but the cursor) to a statement on `a2a_tasks`.
        fn push_filters<'a>(
            q: &mut sqlx::QueryBuilder<'a, $db>,
            scope: &'a Scope,
            query: &'a TaskQuery,
        ) {
            q.push(" WHERE tenant = ");
            q.push_bind(scope.tenant.as_str());
            q.push(" AND owner = ");
            q.push_bind(&*scope.owner);
            if let Some(c) = &query.context_id {
                q.push(" AND context_id = ");
                q.push_bind(c.as_str());
            }
            if let Some(s) = query.state {
                q.push(" AND state = ");
                q.push_bind(s.as_str());
            }
            if let Some(ts) = query.status_timestamp_after {
                q.push(" AND status_ms >= ");
                q.push_bind(ts.millis());
            }
        }

        /// The number of tasks in `scope` matching `query`'s filters: the kept count of the
        /// scope when there are none (`unfiltered`), else a count the indexes answer.
        async fn count_matching(
            pool: &sqlx::Pool<$db>,
            scope: &Scope,
            query: &TaskQuery,
            unfiltered: bool,
        ) -> Result<u64, StoreError> {
            let n: i64 = if unfiltered {
                sqlx::query_scalar("SELECT n FROM a2a_task_counts WHERE tenant = $1 AND owner = $2")
                    .bind(scope.tenant.as_str())
                    .bind(&*scope.owner)
                    .fetch_optional(pool)
                    .await
                    .map_err(backend)?
                    .unwrap_or(0)
            } else {
                let mut count = sqlx::QueryBuilder::<$db>::new("SELECT COUNT(*) FROM a2a_tasks");
                push_filters(&mut count, scope, query);
                count
                    .build_query_scalar::<i64>()
                    .fetch_one(pool)
                    .await
                    .map_err(backend)?
            };
            Ok(u64::try_from(n).unwrap_or(0))
        }

        /// The task's encoded form for its row: whole, or split when large (see
        /// [`layout`](crate::store::layout)).
        fn encode_row(task: &Task) -> Result<(String, Option<Split>), StoreError> {
            if layout::size_at_least(task) > SPLIT_ABOVE {
                let split = layout::split(task)?;
                return Ok((split.head.clone(), Some(split)));
            }
            let whole = encode_task(task)?;
            if whole.len() <= SPLIT_ABOVE {
                return Ok((whole, None));
            }
            let split = layout::split(task)?;
            Ok((split.head.clone(), Some(split)))
        }

        /// Brings the stored items of task `id` in line with `split`, in the transaction that
        /// writes its row: only the items that changed are written.
        async fn write_items(
            tx: &mut sqlx::Transaction<'_, $db>,
            scope: &Scope,
            id: &TaskId,
            split: &mut Split,
        ) -> Result<(), StoreError> {
            let rows = sqlx::query(
                "SELECT kind, a, p, digest FROM a2a_task_items \
                 WHERE tenant = $1 AND owner = $2 AND task_id = $3",
            )
            .bind(scope.tenant.as_str())
            .bind(&*scope.owner)
            .bind(id.as_str())
            .fetch_all(&mut **tx)
            .await
            .map_err(backend)?;
            let stored = rows
                .iter()
                .map(|row| {
                    Ok(Stored {
                        slot: (
                            row.try_get::<i16, _>(0).map_err(backend)?,
                            row.try_get::<i64, _>(1).map_err(backend)?,
                            row.try_get::<i64, _>(2).map_err(backend)?,
                        ),
                        digest: row.try_get::<Vec<u8>, _>(3).map_err(backend)?,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let plan = layout::plan(split, &stored);
            for chunk in plan.deletes.chunks(ITEMS_PER_STATEMENT) {
                let mut q = sqlx::QueryBuilder::<$db>::new(
                    "DELETE FROM a2a_task_items WHERE tenant = ",
                );
                q.push_bind(scope.tenant.as_str());
                q.push(" AND owner = ");
                q.push_bind(&*scope.owner);
                q.push(" AND task_id = ");
                q.push_bind(id.as_str());
                q.push(" AND (kind, a, p) IN (");
                for (n, (kind, a, p)) in chunk.iter().enumerate() {
                    q.push(if n == 0 { "(" } else { ", (" });
                    q.push_bind(*kind);
                    q.push(", ");
                    q.push_bind(*a);
                    q.push(", ");
                    q.push_bind(*p);
                    q.push(")");
                }
                q.push(")");
                q.build().execute(&mut **tx).await.map_err(backend)?;
            }
            for chunk in plan.upserts.chunks(ITEMS_PER_STATEMENT) {
                let mut q = sqlx::QueryBuilder::<$db>::new(
                    "INSERT INTO a2a_task_items (tenant, owner, task_id, kind, a, p, digest, body) ",
                );
                q.push_values(chunk, |mut b, item| {
                    b.push_bind(scope.tenant.as_str())
                        .push_bind(&*scope.owner)
                        .push_bind(id.as_str())
                        .push_bind(item.slot.0)
                        .push_bind(item.slot.1)
                        .push_bind(item.slot.2)
                        .push_bind(&item.digest[..])
                        .push_bind(item.body.as_str());
                });
                q.push(
                    " ON CONFLICT (tenant, owner, task_id, kind, a, p) \
                     DO UPDATE SET digest = excluded.digest, body = excluded.body",
                );
                q.build().execute(&mut **tx).await.map_err(backend)?;
            }
            Ok(())
        }

        /// A split task, its row and items read in one statement (one snapshot).
        async fn read_split<'e, E>(
            executor: E,
            scope: &Scope,
            id: &str,
        ) -> Result<Option<StoredTask>, StoreError>
        where
            E: sqlx::Executor<'e, Database = $db>,
        {
            let rows = sqlx::query(
                "SELECT t.version, t.body, i.kind, i.a, i.p, i.body FROM a2a_tasks t \
                 LEFT JOIN a2a_task_items i \
                 ON i.tenant = t.tenant AND i.owner = t.owner AND i.task_id = t.id \
                 WHERE t.tenant = $1 AND t.owner = $2 AND t.id = $3 \
                 ORDER BY i.kind, i.a, i.p",
            )
            .bind(scope.tenant.as_str())
            .bind(&*scope.owner)
            .bind(id)
            .fetch_all(executor)
            .await
            .map_err(backend)?;
            let Some(first) = rows.first() else {
                return Ok(None);
            };
            let version: i64 = first.try_get(0).map_err(backend)?;
            let head: String = first.try_get(1).map_err(backend)?;
            let mut items = Vec::with_capacity(rows.len());
            for row in &rows {
                let Some(kind) = row.try_get::<Option<i16>, _>(2).map_err(backend)? else {
                    continue;
                };
                let a: i64 = row.try_get(3).map_err(backend)?;
                let p: i64 = row.try_get(4).map_err(backend)?;
                let body: String = row.try_get(5).map_err(backend)?;
                items.push(((kind, a, p), body));
            }
            Ok(Some(StoredTask {
                task: layout::assemble(&head, items)?,
                version: to_u64(version)?,
            }))
        }

        /// A create or update as the writer takes it, encoded here (on the caller's task).
        fn encode_write(
            scope: &Scope,
            task: &Task,
            event: Option<&StreamResponse>,
        ) -> Result<Row, StoreError> {
            let (body, split) = encode_row(task)?;
            Ok(Row {
                scope: scope.clone(),
                id: task.id.clone(),
                context_id: task.context_id.as_str().to_owned(),
                state: task.status.state.as_str(),
                status_ms: status_ms(task),
                body,
                split,
                event: event.map(encode_event).transpose()?,
            })
        }

        /// The `(tenant, owner, id)` of the rows a statement's `RETURNING tenant, owner, id`
        /// gave back.
        fn returned_keys(
            rows: &[<$db as sqlx::Database>::Row],
        ) -> Result<std::collections::HashSet<RowKey>, StoreError> {
            rows.iter()
                .map(|r| {
                    Ok((
                        r.try_get(0).map_err(backend)?,
                        r.try_get(1).map_err(backend)?,
                        r.try_get(2).map_err(backend)?,
                    ))
                })
                .collect()
        }

        /// Inserts the new tasks of jobs `ks` (all creates) in one statement; returns the keys
        /// of the rows it inserted (an id that exists already, or twice in `ks`, is inserted
        /// once at most).
        async fn insert_tasks(
            tx: &mut sqlx::Transaction<'static, $db>,
            jobs: &[Job],
            ks: &[usize],
            now: i64,
        ) -> Result<std::collections::HashSet<RowKey>, StoreError> {
            let rows = ks.iter().filter_map(|&k| match &jobs[k].op {
                Op::Create(row) => Some(row),
                _ => None,
            });
            let mut q = sqlx::QueryBuilder::<$db>::new(
                "INSERT INTO a2a_tasks \
                 (tenant, owner, id, context_id, state, status_ms, version, created_ms, \
                  updated_ms, body, split) ",
            );
            q.push_values(rows, |mut b, row| {
                b.push_bind(row.scope.tenant.as_str())
                    .push_bind(&*row.scope.owner)
                    .push_bind(row.id.as_str())
                    .push_bind(row.context_id.as_str())
                    .push_bind(row.state)
                    .push_bind(row.status_ms)
                    .push_bind(1_i64)
                    .push_bind(now)
                    .push_bind(now)
                    .push_bind(row.body.as_str())
                    .push_bind(row.split.is_some());
            });
            q.push(" ON CONFLICT DO NOTHING RETURNING tenant, owner, id");
            let inserted = q.build().fetch_all(&mut **tx).await.map_err(backend)?;
            returned_keys(&inserted)
        }

        /// Logs the events `(job, seq)` of written tasks in one statement.
        async fn insert_events(
            tx: &mut sqlx::Transaction<'static, $db>,
            jobs: &[Job],
            events: &[(usize, i64)],
            now: i64,
        ) -> Result<(), StoreError> {
            let rows = events.iter().filter_map(|&(k, seq)| match &jobs[k].op {
                Op::Create(row) | Op::Update { row, .. } => {
                    row.event.as_deref().map(|event| (row, seq, event))
                }
                _ => None,
            });
            let mut q = sqlx::QueryBuilder::<$db>::new(
                "INSERT INTO a2a_events (tenant, owner, task_id, seq, created_ms, body) ",
            );
            q.push_values(rows, |mut b, (row, seq, event)| {
                b.push_bind(row.scope.tenant.as_str())
                    .push_bind(&*row.scope.owner)
                    .push_bind(row.id.as_str())
                    .push_bind(seq)
                    .push_bind(now)
                    .push_bind(event);
            });
            q.build().execute(&mut **tx).await.map_err(backend)?;
            Ok(())
        }

        /// Appends one push delivery per config of each event's task (none for a task without
        /// configs), events in the given order and each task's configs in config order, in one
        /// statement: a delivery is durable exactly when its event is. A direct Message reply
        /// is never logged, so it is never delivered either.
        async fn enqueue_deliveries(
            tx: &mut sqlx::Transaction<'static, $db>,
            jobs: &[Job],
            events: &[(usize, i64)],
            now: i64,
        ) -> Result<(), StoreError> {
            let rows = events.iter().enumerate().filter_map(|(n, &(k, seq))| match &jobs[k].op {
                Op::Create(row) | Op::Update { row, .. } => row
                    .event
                    .as_deref()
                    .map(|event| (row, seq, event, i64::try_from(n).unwrap_or(i64::MAX))),
                _ => None,
            });
            let mut q = sqlx::QueryBuilder::<$db>::new(
                "INSERT INTO a2a_push_outbox \
                 (tenant, owner, task_id, config_id, seq, payload, enqueued_ms, next_ms) \
                 SELECT c.tenant, c.owner, c.task_id, c.id, v.column4, v.column5, ",
            );
            q.push_bind(now);
            q.push(", ");
            q.push_bind(now);
            q.push(" FROM (");
            q.push_values(rows, |mut b, (row, seq, event, n)| {
                b.push_bind(row.scope.tenant.as_str())
                    .push_bind(&*row.scope.owner)
                    .push_bind(row.id.as_str())
                    .push_bind(seq)
                    .push_bind(event.as_bytes())
                    .push_bind(n);
            });
            q.push(
                ") AS v JOIN a2a_push_configs c ON c.tenant = v.column1 AND c.owner = v.column2 \
                 AND c.task_id = v.column3 ORDER BY v.column6, c.ord",
            );
            q.build().execute(&mut **tx).await.map_err(backend)?;
            Ok(())
        }

        /// Replaces the tasks of jobs `ks` (all updates, each task at most once), each only
        /// where it is stored at the version its job expects, in one statement; returns the
        /// keys of the rows it replaced.
        ///
        /// The version check and the write are one statement: of two writers that read the
        /// same version, exactly one matches it. A split task is only replaced by a split
        /// write (a task once split stays split).
        async fn update_tasks(
            tx: &mut sqlx::Transaction<'static, $db>,
            jobs: &[Job],
            ks: &[usize],
            now: i64,
        ) -> Result<std::collections::HashSet<RowKey>, StoreError> {
            let rows = ks.iter().filter_map(|&k| match &jobs[k].op {
                Op::Update { row, expected } => Some((row, *expected)),
                _ => None,
            });
            let mut q = sqlx::QueryBuilder::<$db>::new(
                "UPDATE a2a_tasks SET context_id = v.column4, state = v.column5, \
                 status_ms = v.column6, version = v.column7, updated_ms = v.column8, \
                 body = v.column9, split = v.column11 FROM (",
            );
            q.push_values(rows, |mut b, (row, expected)| {
                b.push_bind(row.scope.tenant.as_str())
                    .push_bind(&*row.scope.owner)
                    .push_bind(row.id.as_str())
                    .push_bind(row.context_id.as_str())
                    .push_bind(row.state)
                    .push_bind(row.status_ms)
                    .push_bind(expected.saturating_add(1))
                    .push_bind(now)
                    .push_bind(row.body.as_str())
                    .push_bind(expected)
                    .push_bind(row.split.is_some());
            });
            q.push(
                ") AS v WHERE a2a_tasks.tenant = v.column1 AND a2a_tasks.owner = v.column2 \
                 AND a2a_tasks.id = v.column3 AND a2a_tasks.version = v.column10 \
                 AND (NOT a2a_tasks.split OR v.column11) \
                 RETURNING a2a_tasks.tenant, a2a_tasks.owner, a2a_tasks.id",
            );
            let updated = q.build().fetch_all(&mut **tx).await.map_err(backend)?;
            returned_keys(&updated)
        }

        /// Why the update of `row` at version `expected` replaced nothing: the task is gone,
        /// another writer got there first, or it is stored split and the write was not.
        async fn refusal(
            tx: &mut sqlx::Transaction<'static, $db>,
            row: &Row,
            expected: i64,
        ) -> Result<Done, Failure> {
            let found = sqlx::query(
                "SELECT version FROM a2a_tasks WHERE tenant = $1 AND owner = $2 AND id = $3",
            )
            .bind(row.scope.tenant.as_str())
            .bind(&*row.scope.owner)
            .bind(row.id.as_str())
            .fetch_optional(&mut **tx)
            .await
            .map_err(driver)?;
            let Some(found) = found else {
                return Err(Failure::Refused(StoreError::Exists(
                    row.id.clone(),
                    "does not exist",
                )));
            };
            let found_version: i64 = found.try_get(0).map_err(driver)?;
            if found_version == expected {
                return Ok(Done::NeedsSplit);
            }
            Err(Failure::Refused(StoreError::Conflict {
                task_id: row.id.clone(),
                expected: to_u64(expected).map_err(Failure::Refused)?,
                found: to_u64(found_version).map_err(Failure::Refused)?,
            }))
        }

        /// A lease's execution number as a column (saturating: the counter of one process
        /// never gets there).
        fn execution(lease: &$crate::store::Lease) -> i64 {
            i64::try_from(lease.execution).unwrap_or(i64::MAX)
        }

        /// Records (or extends) the leases of jobs `ks` (all acquires) in one statement.
        async fn upsert_leases(
            tx: &mut sqlx::Transaction<'static, $db>,
            jobs: &[Job],
            ks: &[usize],
        ) -> Result<(), StoreError> {
            let leases = ks.iter().filter_map(|&k| match &jobs[k].op {
                Op::Acquire { lease, expires_ms } => Some((lease, *expires_ms)),
                _ => None,
            });
            let mut q = sqlx::QueryBuilder::<$db>::new(
                "INSERT INTO a2a_leases (instance, execution, tenant, owner, task_id, expires_ms) ",
            );
            q.push_values(leases, |mut b, (lease, expires_ms)| {
                b.push_bind(lease.instance.as_str())
                    .push_bind(execution(lease))
                    .push_bind(lease.scope.tenant.as_str())
                    .push_bind(&*lease.scope.owner)
                    .push_bind(lease.task_id.as_str())
                    .push_bind(expires_ms);
            });
            q.push(
                " ON CONFLICT (instance, execution) DO UPDATE SET expires_ms = excluded.expires_ms",
            );
            q.build().execute(&mut **tx).await.map_err(backend)?;
            Ok(())
        }

        /// Removes the leases of jobs `ks` (all releases: executions that returned) in one
        /// statement.
        async fn delete_leases(
            tx: &mut sqlx::Transaction<'static, $db>,
            jobs: &[Job],
            ks: &[usize],
        ) -> Result<(), StoreError> {
            let mut q = sqlx::QueryBuilder::<$db>::new(
                "DELETE FROM a2a_leases WHERE (instance, execution) IN (VALUES ",
            );
            let mut first = true;
            for &k in ks {
                let Op::Release(lease) = &jobs[k].op else {
                    continue;
                };
                q.push(if first { "(" } else { ", (" });
                first = false;
                q.push_bind(lease.instance.as_str());
                q.push(", ");
                q.push_bind(execution(lease));
                q.push(")");
            }
            q.push(")");
            q.build().execute(&mut **tx).await.map_err(backend)?;
            Ok(())
        }

        /// Adds `delta` to the task count of each scope (the unfiltered listing's total), in
        /// key order (concurrent transactions lock the rows in one order).
        async fn adjust_counts(
            tx: &mut sqlx::Transaction<'static, $db>,
            deltas: &std::collections::BTreeMap<(String, String), i64>,
        ) -> Result<(), StoreError> {
            let deltas: Vec<_> = deltas.iter().filter(|(_, d)| **d != 0).collect();
            for chunk in deltas.chunks(ITEMS_PER_STATEMENT) {
                let mut q = sqlx::QueryBuilder::<$db>::new(
                    "INSERT INTO a2a_task_counts (tenant, owner, n) ",
                );
                q.push_values(chunk, |mut b, ((tenant, owner), delta)| {
                    b.push_bind(tenant.as_str())
                        .push_bind(owner.as_str())
                        .push_bind(**delta);
                });
                q.push(
                    " ON CONFLICT (tenant, owner) DO UPDATE SET n = a2a_task_counts.n + excluded.n",
                );
                q.build().execute(&mut **tx).await.map_err(backend)?;
            }
            Ok(())
        }

        /// Applies `jobs` (in key order: creates, updates, leases) in one transaction and
        /// returns each job's outcome; a refused write changes nothing and the others go on.
        /// With `shared`, the new tasks, the events and the look-up of push configs are one
        /// statement each for the whole batch; without, one per job, so that a failing
        /// statement names its job.
        async fn write_batch(
            pool: &sqlx::Pool<$db>,
            jobs: &mut [Job],
            shared: bool,
        ) -> Result<Vec<Result<Done, StoreError>>, Stop> {
            let mut tx = <$store>::begin_write(pool)
                .await
                .map_err(|e| Stop::Whole(backend(e)))?;
            let now = now_ms();
            let group = if shared { MAX_BATCH } else { 1 };
            // A failed statement of several jobs, or of job `k` alone.
            let stop = |ks: &[usize], e: StoreError| match ks {
                [k] => Stop::Job(*k, e),
                _ => Stop::Shared(e),
            };
            let mut outcomes: Vec<Option<Result<Done, StoreError>>> =
                jobs.iter().map(|_| None).collect();

            let creates: Vec<usize> = (0..jobs.len())
                .filter(|&k| matches!(jobs[k].op, Op::Create(_)))
                .collect();
            for ks in creates.chunks(group) {
                let mut inserted = insert_tasks(&mut tx, jobs, ks, now)
                    .await
                    .map_err(|e| stop(ks, e))?;
                for &k in ks {
                    let Op::Create(row) = &mut jobs[k].op else {
                        continue;
                    };
                    if !inserted.remove(&row.key()) {
                        outcomes[k] = Some(Err(StoreError::Exists(
                            row.id.clone(),
                            "already exists",
                        )));
                        continue;
                    }
                    if let Some(split) = &mut row.split {
                        write_items(&mut tx, &row.scope, &row.id, split)
                            .await
                            .map_err(|e| Stop::Job(k, e))?;
                    }
                    outcomes[k] = Some(Ok(Done::Version(1)));
                }
            }
            // Updates, in rounds that hold each task once (a second write of a task in the
            // batch is checked against the first's outcome).
            let mut rounds: Vec<Vec<usize>> = Vec::new();
            let mut seen = std::collections::HashMap::new();
            for k in 0..jobs.len() {
                let Op::Update { row, .. } = &jobs[k].op else {
                    continue;
                };
                let round = seen
                    .entry((&row.scope, row.id.as_str()))
                    .and_modify(|r| *r += 1)
                    .or_insert(0_usize);
                if rounds.len() <= *round {
                    rounds.push(Vec::new());
                }
                rounds[*round].push(k);
            }
            drop(seen);
            for round in &rounds {
                for ks in round.chunks(group) {
                    let mut updated = update_tasks(&mut tx, jobs, ks, now)
                        .await
                        .map_err(|e| stop(ks, e))?;
                    for &k in ks {
                        let Op::Update { row, expected } = &mut jobs[k].op else {
                            continue;
                        };
                        let outcome = if updated.remove(&row.key()) {
                            if let Some(split) = &mut row.split {
                                write_items(&mut tx, &row.scope, &row.id, split)
                                    .await
                                    .map_err(|e| Stop::Job(k, e))?;
                            }
                            to_u64(expected.saturating_add(1)).map(Done::Version)
                        } else {
                            match refusal(&mut tx, row, *expected).await {
                                Ok(done) => Ok(done),
                                Err(Failure::Refused(e)) => Err(e),
                                Err(Failure::Driver(e)) => return Err(Stop::Job(k, e)),
                            }
                        };
                        outcomes[k] = Some(outcome);
                    }
                }
            }
            // Leases: every acquire, then every release.
            let acquires: Vec<usize> = (0..jobs.len())
                .filter(|&k| matches!(jobs[k].op, Op::Acquire { .. }))
                .collect();
            for ks in acquires.chunks(group) {
                upsert_leases(&mut tx, jobs, ks).await.map_err(|e| stop(ks, e))?;
                for &k in ks {
                    outcomes[k] = Some(Ok(Done::Lease));
                }
            }
            let releases: Vec<usize> = (0..jobs.len())
                .filter(|&k| matches!(jobs[k].op, Op::Release(_)))
                .collect();
            for ks in releases.chunks(group) {
                delete_leases(&mut tx, jobs, ks).await.map_err(|e| stop(ks, e))?;
                for &k in ks {
                    outcomes[k] = Some(Ok(Done::Lease));
                }
            }

            // The events of the tasks written, then their push deliveries.
            let events: Vec<(usize, i64)> = jobs
                .iter()
                .zip(&outcomes)
                .enumerate()
                .filter_map(|(k, (job, outcome))| match (&job.op, outcome) {
                    (
                        Op::Create(row) | Op::Update { row, .. },
                        Some(Ok(Done::Version(v))),
                    ) if row.event.is_some() => i64::try_from(*v).ok().map(|seq| (k, seq)),
                    _ => None,
                })
                .collect();
            for chunk in events.chunks(group) {
                let ks: Vec<usize> = chunk.iter().map(|(k, _)| *k).collect();
                insert_events(&mut tx, jobs, chunk, now)
                    .await
                    .map_err(|e| stop(&ks, e))?;
                enqueue_deliveries(&mut tx, jobs, chunk, now)
                    .await
                    .map_err(|e| stop(&ks, e))?;
            }

            let mut counts = std::collections::BTreeMap::new();
            let mut changes = Vec::new();
            for (job, outcome) in jobs.iter().zip(&outcomes) {
                let (Op::Create(row) | Op::Update { row, .. }) = &job.op else {
                    continue;
                };
                let Some(Ok(Done::Version(version))) = outcome else {
                    continue;
                };
                if matches!(job.op, Op::Create(_)) {
                    *counts
                        .entry((row.scope.tenant.clone(), row.scope.owner.to_string()))
                        .or_insert(0) += 1;
                }
                changes.push((&row.scope, &row.id, *version));
            }
            adjust_counts(&mut tx, &counts).await.map_err(Stop::Whole)?;
            <$store>::notify_written(&mut tx, &changes)
                .await
                .map_err(|e| Stop::Whole(backend(e)))?;
            tx.commit().await.map_err(|e| Stop::Whole(backend(e)))?;
            Ok(outcomes
                .into_iter()
                .map(|o| {
                    o.unwrap_or_else(|| Err(StoreError::Backend("the write was not applied".into())))
                })
                .collect())
        }

        /// Commits `jobs` (see [`sql_writer`](crate::store::sql_writer)) and answers each:
        /// in one transaction, or, when a driver error aborted it, again without the write
        /// that failed (first with one statement per job when the failed statement served
        /// several).
        async fn run_batch(
            pool: sqlx::Pool<$db>,
            mut jobs: Vec<Job>,
            committed: std::sync::Arc<dyn Fn() + Send + Sync>,
        ) {
            jobs.sort_by(|a, b| a.op.key().cmp(&b.op.key()));
            let mut shared = true;
            while !jobs.is_empty() {
                match write_batch(&pool, &mut jobs, shared).await {
                    Ok(outcomes) => {
                        committed();
                        for (job, outcome) in jobs.drain(..).zip(outcomes) {
                            job.answer(outcome);
                        }
                    }
                    Err(Stop::Job(k, e)) => jobs.remove(k).answer(Err(e)),
                    Err(Stop::Shared(e)) => {
                        tracing::debug!(error = %e, "a statement of several writes failed; redoing them one by one");
                        shared = false;
                    }
                    Err(Stop::Whole(e)) => {
                        let message = e.to_string();
                        for job in jobs.drain(..) {
                            job.answer(Err(StoreError::Backend(message.clone())));
                        }
                    }
                }
            }
        }

        impl $store {
            /// The write queue of a store on `pool`, with `writers` transactions at once;
            /// `committed` runs after each commit.
            fn writer_for(
                pool: &sqlx::Pool<$db>,
                writers: usize,
                committed: impl Fn() + Send + Sync + 'static,
            ) -> std::sync::Arc<Writer> {
                let pool = pool.clone();
                let committed: std::sync::Arc<dyn Fn() + Send + Sync> =
                    std::sync::Arc::new(committed);
                let run: RunBatch = std::sync::Arc::new(move |jobs| {
                    futures::FutureExt::boxed(run_batch(pool.clone(), jobs, committed.clone()))
                });
                std::sync::Arc::new(Writer::new(run, writers, QUEUE))
            }
        }

        #[async_trait::async_trait]
        impl TaskStore for $store {
            /// This store's own outbox: every logged event gets its deliveries in its
            /// transaction (see `enqueue_deliveries`).
            fn push_outbox(&self) -> Option<std::sync::Arc<dyn $crate::store::PushOutbox>> {
                Some(std::sync::Arc::new(self.clone()))
            }

            async fn get(
                &self,
                scope: &Scope,
                id: &TaskId,
            ) -> Result<Option<StoredTask>, StoreError> {
                let row = sqlx::query(
                    "SELECT body, version, split FROM a2a_tasks \
                     WHERE tenant = $1 AND owner = $2 AND id = $3",
                )
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(backend)?;
                let Some(row) = row else {
                    return Ok(None);
                };
                if row.try_get::<bool, _>(2).map_err(backend)? {
                    return read_split(&self.pool, scope, id.as_str()).await;
                }
                let body: String = row.try_get(0).map_err(backend)?;
                let version: i64 = row.try_get(1).map_err(backend)?;
                Ok(Some(StoredTask {
                    task: decode_task(&body)?,
                    version: to_u64(version)?,
                }))
            }

            async fn create(
                &self,
                scope: &Scope,
                task: &Task,
                event: Option<&StreamResponse>,
            ) -> Result<u64, StoreError> {
                let row = encode_write(scope, task, event)?;
                match self.writer.submit(Op::Create(row)).await? {
                    Done::Version(v) => Ok(v),
                    other => Err(StoreError::Backend(format!("create answered {other:?}"))),
                }
            }

            async fn update(
                &self,
                scope: &Scope,
                task: &Task,
                expected_version: u64,
                event: Option<&StreamResponse>,
            ) -> Result<u64, StoreError> {
                let expected = to_i64(expected_version)?;
                let mut row = encode_write(scope, task, event)?;
                let mut resplit = false;
                loop {
                    match self.writer.submit(Op::Update { row, expected }).await? {
                        Done::Version(v) => return Ok(v),
                        // A task once split stays split: the write is redone in that form.
                        Done::NeedsSplit if !resplit => {
                            resplit = true;
                            row = encode_write(scope, task, event)?;
                            let split = layout::split(task)?;
                            row.body = split.head.clone();
                            row.split = Some(split);
                        }
                        other => {
                            return Err(StoreError::Backend(format!("update answered {other:?}")));
                        }
                    }
                }
            }

            async fn events_after(
                &self,
                scope: &Scope,
                id: &TaskId,
                after: u64,
                limit: usize,
            ) -> Result<Vec<SeqEvent>, StoreError> {
                let version: Option<i64> = sqlx::query_scalar(
                    "SELECT version FROM a2a_tasks WHERE tenant = $1 AND owner = $2 AND id = $3",
                )
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(backend)?;
                let Some(version) = version else {
                    return Ok(Vec::new());
                };
                if after >= to_u64(version)? || limit == 0 {
                    return Ok(Vec::new());
                }
                let limit = limit.min(MAX_EVENTS_PER_READ);
                let rows = sqlx::query(
                    "SELECT seq, body FROM a2a_events \
                     WHERE tenant = $1 AND owner = $2 AND task_id = $3 AND seq > $4 \
                     ORDER BY seq LIMIT $5",
                )
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .bind(id.as_str())
                .bind(to_i64(after)?)
                .bind(to_i64(limit as u64)?)
                .fetch_all(&self.pool)
                .await
                .map_err(backend)?;
                let mut events = Vec::with_capacity(rows.len());
                let mut next = after + 1;
                for row in rows {
                    let seq = to_u64(row.try_get::<i64, _>(0).map_err(backend)?)?;
                    if seq != next {
                        // A hole (a write without an event, or purged events): what precedes
                        // it is returned, and the next read from there fails.
                        break;
                    }
                    let body: String = row.try_get(1).map_err(backend)?;
                    events.push(SeqEvent {
                        seq,
                        event: decode_event(&body)?,
                    });
                    next += 1;
                }
                if events.is_empty() {
                    let oldest: Option<i64> = sqlx::query_scalar(
                        "SELECT MIN(seq) FROM a2a_events \
                         WHERE tenant = $1 AND owner = $2 AND task_id = $3",
                    )
                    .bind(scope.tenant.as_str())
                    .bind(&*scope.owner)
                    .bind(id.as_str())
                    .fetch_one(&self.pool)
                    .await
                    .map_err(backend)?;
                    return Err(StoreError::EventsGone {
                        task_id: id.clone(),
                        after,
                        oldest: oldest.map(to_u64).transpose()?.unwrap_or(0),
                    });
                }
                Ok(events)
            }

            async fn list(
                &self,
                scope: &Scope,
                query: &TaskQuery,
            ) -> Result<TaskPage, StoreError> {
                let after = query
                    .page_token
                    .as_deref()
                    .map(|token| ListCursor::decode(token, query))
                    .transpose()?;
                let size = query.page_size.clamp(1, 100);
                let unfiltered = query.context_id.is_none()
                    && query.state.is_none()
                    && query.status_timestamp_after.is_none();
                let mut page = sqlx::QueryBuilder::<$db>::new(
                    "SELECT id, status_ms, body, split FROM a2a_tasks",
                );
                push_filters(&mut page, scope, query);
                if let Some(after) = &after {
                    page.push(" AND (status_ms, id) < (");
                    page.push_bind(after.millis);
                    page.push(", ");
                    page.push_bind(after.id.as_str());
                    page.push(")");
                }
                page.push(" ORDER BY status_ms DESC, id DESC LIMIT ");
                page.push_bind(to_i64(size as u64 + 1)?);
                let rows = page
                    .build()
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                let more = rows.len() > size;
                let total = match after.as_ref().and_then(|a| a.total) {
                    // Counting is the expensive part: a later page reports the first page's
                    // count, unless the listing has no filter (a kept count answers that); a
                    // first page that is also the last counts itself.
                    Some(total) if !unfiltered => total,
                    None if after.is_none() && !more => rows.len() as u64,
                    _ => count_matching(&self.pool, scope, query, unfiltered).await?,
                };
                let mut tasks = Vec::with_capacity(size);
                let mut last = None;
                for row in rows.into_iter().take(size) {
                    let id: String = row.try_get(0).map_err(backend)?;
                    let millis: i64 = row.try_get(1).map_err(backend)?;
                    if row.try_get::<bool, _>(3).map_err(backend)? {
                        // None: deleted since the page was read; it is left out.
                        if let Some(t) = read_split(&self.pool, scope, &id).await? {
                            tasks.push(t.task);
                        }
                    } else {
                        let body: String = row.try_get(2).map_err(backend)?;
                        tasks.push(decode_task(&body)?);
                    }
                    last = Some(ListCursor {
                        millis,
                        id: TaskId::from(id),
                        total: Some(total),
                    });
                }
                let next_page_token = match last {
                    Some(cursor) if more => cursor.encode(query),
                    _ => String::new(),
                };
                Ok(TaskPage {
                    tasks,
                    total_size: usize::try_from(total).unwrap_or(usize::MAX),
                    next_page_token,
                })
            }

            async fn delete(&self, scope: &Scope, id: &TaskId) -> Result<bool, StoreError> {
                let mut tx = self.pool.begin().await.map_err(backend)?;
                let mut existed = false;
                for (table, key) in std::iter::once(("a2a_tasks", "id")).chain(TASK_PARTS) {
                    let done = sqlx::query(&format!(
                        "DELETE FROM {table} WHERE tenant = $1 AND owner = $2 AND {key} = $3"
                    ))
                    .bind(scope.tenant.as_str())
                    .bind(&*scope.owner)
                    .bind(id.as_str())
                    .execute(&mut *tx)
                    .await
                    .map_err(backend)?;
                    if table == "a2a_tasks" {
                        existed = done.rows_affected() > 0;
                    }
                }
                if existed {
                    let key = (scope.tenant.clone(), scope.owner.to_string());
                    adjust_counts(&mut tx, &std::iter::once((key, -1)).collect()).await?;
                }
                tx.commit().await.map_err(backend)?;
                Ok(existed)
            }

            async fn untouched(
                &self,
                states: &[TaskState],
                before: Timestamp,
                limit: usize,
            ) -> Result<Vec<TaskRef>, StoreError> {
                if states.is_empty() || limit == 0 {
                    return Ok(Vec::new());
                }
                let mut q = sqlx::QueryBuilder::<$db>::new(
                    "SELECT tenant, owner, id, version FROM a2a_tasks",
                );
                push_age_filter(&mut q, states, before.millis());
                q.push(" LIMIT ");
                q.push_bind(to_i64(limit as u64)?);
                let rows = q.build().fetch_all(&self.pool).await.map_err(backend)?;
                rows.iter()
                    .map(|row| {
                        let tenant: String = row.try_get(0).map_err(backend)?;
                        let owner: String = row.try_get(1).map_err(backend)?;
                        let id: String = row.try_get(2).map_err(backend)?;
                        let version: i64 = row.try_get(3).map_err(backend)?;
                        Ok(TaskRef {
                            scope: Scope::new(tenant, owner),
                            id: TaskId::from(id),
                            version: to_u64(version)?,
                        })
                    })
                    .collect()
            }

            async fn purge_finished(
                &self,
                before: Timestamp,
                limit: usize,
            ) -> Result<usize, StoreError> {
                if limit == 0 {
                    return Ok(0);
                }
                let before = before.millis();
                let mut tx = self.pool.begin().await.map_err(backend)?;
                let mut q = sqlx::QueryBuilder::<$db>::new("SELECT tenant, owner, id FROM a2a_tasks");
                push_age_filter(&mut q, &FINISHED, before);
                q.push(" LIMIT ");
                q.push_bind(to_i64(limit as u64)?);
                let rows = q.build().fetch_all(&mut *tx).await.map_err(backend)?;
                let mut purged = 0;
                let mut counts = std::collections::BTreeMap::new();
                for row in rows {
                    let tenant: String = row.try_get(0).map_err(backend)?;
                    let owner: String = row.try_get(1).map_err(backend)?;
                    let id: String = row.try_get(2).map_err(backend)?;
                    // Still finished and old (not written since it was found).
                    let mut del = sqlx::QueryBuilder::<$db>::new("DELETE FROM a2a_tasks");
                    push_age_filter(&mut del, &FINISHED, before);
                    del.push(" AND tenant = ");
                    del.push_bind(tenant.as_str());
                    del.push(" AND owner = ");
                    del.push_bind(owner.as_str());
                    del.push(" AND id = ");
                    del.push_bind(id.as_str());
                    let done = del.build().execute(&mut *tx).await.map_err(backend)?;
                    if done.rows_affected() == 0 {
                        continue;
                    }
                    purged += 1;
                    *counts.entry((tenant.clone(), owner.clone())).or_insert(0) -= 1;
                    for (table, key) in TASK_PARTS {
                        sqlx::query(&format!(
                            "DELETE FROM {table} WHERE tenant = $1 AND owner = $2 AND {key} = $3"
                        ))
                        .bind(tenant.as_str())
                        .bind(owner.as_str())
                        .bind(id.as_str())
                        .execute(&mut *tx)
                        .await
                        .map_err(backend)?;
                    }
                }
                adjust_counts(&mut tx, &counts).await?;
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
                Ok(purged)
            }
        }

        #[async_trait::async_trait]
        impl PushConfigStore for $store {
            async fn put(
                &self,
                scope: &Scope,
                config: &TaskPushNotificationConfig,
            ) -> Result<(), StoreError> {
                let body = encode_config(config)?;
                sqlx::query(
                    "INSERT INTO a2a_push_configs (tenant, owner, task_id, id, created_ms, body) \
                     VALUES ($1, $2, $3, $4, $5, $6) \
                     ON CONFLICT (tenant, owner, task_id, id) DO UPDATE SET body = excluded.body",
                )
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .bind(config.task_id.as_str())
                .bind(config.id.as_str())
                .bind(now_ms())
                .bind(body)
                .execute(&self.pool)
                .await
                .map_err(backend)?;
                Ok(())
            }

            async fn get(
                &self,
                scope: &Scope,
                task_id: &TaskId,
                id: &PushConfigId,
            ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
                let body: Option<String> = sqlx::query_scalar(
                    "SELECT body FROM a2a_push_configs \
                     WHERE tenant = $1 AND owner = $2 AND task_id = $3 AND id = $4",
                )
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .bind(task_id.as_str())
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(backend)?;
                body.as_deref().map(decode_config).transpose()
            }

            async fn list(
                &self,
                scope: &Scope,
                task_id: &TaskId,
            ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
                let bodies: Vec<String> = sqlx::query_scalar(
                    "SELECT body FROM a2a_push_configs \
                     WHERE tenant = $1 AND owner = $2 AND task_id = $3 ORDER BY ord",
                )
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .bind(task_id.as_str())
                .fetch_all(&self.pool)
                .await
                .map_err(backend)?;
                bodies.iter().map(|b| decode_config(b)).collect()
            }

            async fn delete(
                &self,
                scope: &Scope,
                task_id: &TaskId,
                id: &PushConfigId,
            ) -> Result<bool, StoreError> {
                let done = sqlx::query(
                    "DELETE FROM a2a_push_configs \
                     WHERE tenant = $1 AND owner = $2 AND task_id = $3 AND id = $4",
                )
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .bind(task_id.as_str())
                .bind(id.as_str())
                .execute(&self.pool)
                .await
                .map_err(backend)?;
                Ok(done.rows_affected() > 0)
            }

            async fn delete_all(&self, scope: &Scope, task_id: &TaskId) -> Result<(), StoreError> {
                sqlx::query(
                    "DELETE FROM a2a_push_configs WHERE tenant = $1 AND owner = $2 AND task_id = $3",
                )
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .bind(task_id.as_str())
                .execute(&self.pool)
                .await
                .map_err(backend)?;
                Ok(())
            }
        }
    };
}

pub(super) use sql_store;
