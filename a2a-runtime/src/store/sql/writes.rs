//! The batched task and lease writes of the SQL stores: what a writer task of
//! [`sql_writer`](crate::store::sql_writer) commits, each kind of write one statement for the
//! whole batch (see [`Batch::write`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use sqlx::{
    ColumnIndex, Database, Executor, IntoArguments, Pool, QueryBuilder, Row as _, Transaction,
};

use super::codec::{backend, driver, to_u64};
use super::dialect::{Column, Dialect, Param};
use crate::store::layout::{self, ITEMS_PER_STATEMENT, Split, Stored};
use crate::store::sql_writer::{
    Done, Failure, Job, MAX_BATCH, Op, QUEUE, Row, RowKey, RunBatch, Stop, Writer,
};
use crate::store::{Lease, Scope, StoreError, now_ms};
use crate::types::TaskId;

/// The write queue of a store of dialect `D` on `pool`, with `writers` transactions at once;
/// `committed` runs after each commit.
pub(in crate::store) fn writer_for<D: Dialect>(
    pool: &Pool<D::Db>,
    writers: usize,
    committed: impl Fn() + Send + Sync + 'static,
) -> Arc<Writer>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> &'q [u8]: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    for<'q> i16: Param<'q, D::Db>,
    for<'q> bool: Param<'q, D::Db>,
    i64: Column<D::Db>,
    i16: Column<D::Db>,
    String: Column<D::Db>,
    Vec<u8>: Column<D::Db>,
{
    let pool = pool.clone();
    let committed: Arc<dyn Fn() + Send + Sync> = Arc::new(committed);
    let run: RunBatch = Arc::new(move |jobs| {
        futures::FutureExt::boxed(Batch::<D>::run(pool.clone(), jobs, committed.clone()))
    });
    Arc::new(Writer::new(run, writers, QUEUE))
}

/// Adds `delta` to the task count of each scope (the unfiltered listing's total), in key order
/// (concurrent transactions lock the rows in one order).
pub(in crate::store) async fn adjust_counts<D: Dialect>(
    tx: &mut Transaction<'static, D::Db>,
    deltas: &BTreeMap<(String, String), i64>,
) -> Result<(), StoreError>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
{
    let deltas: Vec<_> = deltas.iter().filter(|(_, d)| **d != 0).collect();
    for chunk in deltas.chunks(ITEMS_PER_STATEMENT) {
        let mut q = QueryBuilder::<D::Db>::new("INSERT INTO a2a_task_counts (tenant, owner, n) ");
        q.push_values(chunk, |mut b, ((tenant, owner), delta)| {
            b.push_bind(tenant.as_str())
                .push_bind(owner.as_str())
                .push_bind(**delta);
        });
        q.push(" ON CONFLICT (tenant, owner) DO UPDATE SET n = a2a_task_counts.n + excluded.n");
        D::build(&mut q).execute(&mut **tx).await.map_err(backend)?;
    }
    Ok(())
}

/// A lease's execution number as a column (saturating: the counter of one process never gets
/// there).
fn execution(lease: &Lease) -> i64 {
    i64::try_from(lease.execution).unwrap_or(i64::MAX)
}

/// The transaction of one batch of writes, and the time its rows are stamped with.
struct Batch<D: Dialect> {
    tx: Transaction<'static, D::Db>,
    now: i64,
}

impl<D: Dialect> Batch<D>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> &'q [u8]: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    for<'q> i16: Param<'q, D::Db>,
    for<'q> bool: Param<'q, D::Db>,
    i64: Column<D::Db>,
    i16: Column<D::Db>,
    String: Column<D::Db>,
    Vec<u8>: Column<D::Db>,
{
    /// Commits `jobs` (see [`sql_writer`](crate::store::sql_writer)) and answers each: in one
    /// transaction, or, when a driver error aborted it, again without the write that failed
    /// (first with one statement per job when the failed statement served several).
    async fn run(pool: Pool<D::Db>, mut jobs: Vec<Job>, committed: Arc<dyn Fn() + Send + Sync>) {
        jobs.sort_by(|a, b| a.op.key().cmp(&b.op.key()));
        let mut shared = true;
        while !jobs.is_empty() {
            match Self::write(&pool, &mut jobs, shared).await {
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

    /// Applies `jobs` (in key order: creates, updates, leases) in one transaction and returns
    /// each job's outcome; a refused write changes nothing and the others go on. With
    /// `shared`, the new tasks, the events and the look-up of push configs are one statement
    /// each for the whole batch; without, one per job, so that a failing statement names its
    /// job.
    async fn write(
        pool: &Pool<D::Db>,
        jobs: &mut [Job],
        shared: bool,
    ) -> Result<Vec<Result<Done, StoreError>>, Stop> {
        let tx = D::begin_write(pool)
            .await
            .map_err(|e| Stop::Whole(backend(e)))?;
        let mut batch = Self { tx, now: now_ms() };
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
            let mut inserted = batch
                .insert_tasks(jobs, ks)
                .await
                .map_err(|e| stop(ks, e))?;
            for &k in ks {
                let Op::Create(row) = &mut jobs[k].op else {
                    continue;
                };
                if !inserted.remove(&row.key()) {
                    outcomes[k] = Some(Err(StoreError::Exists(row.id.clone(), "already exists")));
                    continue;
                }
                if let Some(split) = &mut row.split {
                    batch
                        .write_items(&row.scope, &row.id, split)
                        .await
                        .map_err(|e| Stop::Job(k, e))?;
                }
                outcomes[k] = Some(Ok(Done::Version(1)));
            }
        }
        // Updates, in rounds that hold each task once (a second write of a task in the batch
        // is checked against the first's outcome).
        let mut rounds: Vec<Vec<usize>> = Vec::new();
        let mut seen = HashMap::new();
        for (k, job) in jobs.iter().enumerate() {
            let Op::Update { row, .. } = &job.op else {
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
                let mut updated = batch
                    .update_tasks(jobs, ks)
                    .await
                    .map_err(|e| stop(ks, e))?;
                for &k in ks {
                    let Op::Update { row, expected } = &mut jobs[k].op else {
                        continue;
                    };
                    let outcome = if updated.remove(&row.key()) {
                        if let Some(split) = &mut row.split {
                            batch
                                .write_items(&row.scope, &row.id, split)
                                .await
                                .map_err(|e| Stop::Job(k, e))?;
                        }
                        to_u64(expected.saturating_add(1)).map(Done::Version)
                    } else {
                        match batch.refusal(row, *expected).await {
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
            batch
                .upsert_leases(jobs, ks)
                .await
                .map_err(|e| stop(ks, e))?;
            for &k in ks {
                outcomes[k] = Some(Ok(Done::Lease));
            }
        }
        let releases: Vec<usize> = (0..jobs.len())
            .filter(|&k| matches!(jobs[k].op, Op::Release(_)))
            .collect();
        for ks in releases.chunks(group) {
            batch
                .delete_leases(jobs, ks)
                .await
                .map_err(|e| stop(ks, e))?;
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
                (Op::Create(row) | Op::Update { row, .. }, Some(Ok(Done::Version(v))))
                    if row.event.is_some() =>
                {
                    i64::try_from(*v).ok().map(|seq| (k, seq))
                }
                _ => None,
            })
            .collect();
        for chunk in events.chunks(group) {
            let ks: Vec<usize> = chunk.iter().map(|(k, _)| *k).collect();
            batch
                .insert_events(jobs, chunk)
                .await
                .map_err(|e| stop(&ks, e))?;
            batch
                .enqueue_deliveries(jobs, chunk)
                .await
                .map_err(|e| stop(&ks, e))?;
        }

        let mut counts = BTreeMap::new();
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
        adjust_counts::<D>(&mut batch.tx, &counts)
            .await
            .map_err(Stop::Whole)?;
        D::notify_written(&mut batch.tx, &changes)
            .await
            .map_err(|e| Stop::Whole(backend(e)))?;
        batch
            .tx
            .commit()
            .await
            .map_err(|e| Stop::Whole(backend(e)))?;
        Ok(outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| Err(StoreError::Backend("the write was not applied".into())))
            })
            .collect())
    }

    /// Inserts the new tasks of jobs `ks` (all creates) in one statement; returns the keys of
    /// the rows it inserted (an id that exists already, or twice in `ks`, is inserted once at
    /// most).
    async fn insert_tasks(
        &mut self,
        jobs: &[Job],
        ks: &[usize],
    ) -> Result<HashSet<RowKey>, StoreError> {
        let rows = ks.iter().filter_map(|&k| match &jobs[k].op {
            Op::Create(row) => Some(row),
            _ => None,
        });
        let mut q = QueryBuilder::<D::Db>::new(
            "INSERT INTO a2a_tasks \
             (tenant, owner, id, context_id, state, status_ms, version, created_ms, \
              updated_ms, body, split) ",
        );
        let now = self.now;
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
        let inserted = D::build(&mut q)
            .fetch_all(&mut *self.tx)
            .await
            .map_err(backend)?;
        returned_keys::<D>(&inserted)
    }

    /// Replaces the tasks of jobs `ks` (all updates, each task at most once), each only where
    /// it is stored at the version its job expects, in one statement; returns the keys of the
    /// rows it replaced.
    ///
    /// The version check and the write are one statement: of two writers that read the same
    /// version, exactly one matches it. A split task is only replaced by a split write (a task
    /// once split stays split).
    async fn update_tasks(
        &mut self,
        jobs: &[Job],
        ks: &[usize],
    ) -> Result<HashSet<RowKey>, StoreError> {
        let rows = ks.iter().filter_map(|&k| match &jobs[k].op {
            Op::Update { row, expected } => Some((row, *expected)),
            _ => None,
        });
        let mut q = QueryBuilder::<D::Db>::new(
            "UPDATE a2a_tasks SET context_id = v.column4, state = v.column5, \
             status_ms = v.column6, version = v.column7, updated_ms = v.column8, \
             body = v.column9, split = v.column11 FROM (",
        );
        let now = self.now;
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
        let updated = D::build(&mut q)
            .fetch_all(&mut *self.tx)
            .await
            .map_err(backend)?;
        returned_keys::<D>(&updated)
    }

    /// Why the update of `row` at version `expected` replaced nothing: the task is gone,
    /// another writer got there first, or it is stored split and the write was not.
    async fn refusal(&mut self, row: &Row, expected: i64) -> Result<Done, Failure> {
        let found = sqlx::query(
            "SELECT version FROM a2a_tasks WHERE tenant = $1 AND owner = $2 AND id = $3",
        )
        .bind(row.scope.tenant.as_str())
        .bind(&*row.scope.owner)
        .bind(row.id.as_str())
        .fetch_optional(&mut *self.tx)
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

    /// Brings the stored items of task `id` in line with `split`, in the transaction that
    /// writes its row: only the items that changed are written.
    async fn write_items(
        &mut self,
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
        .fetch_all(&mut *self.tx)
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
            let mut q = QueryBuilder::<D::Db>::new("DELETE FROM a2a_task_items WHERE tenant = ");
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
            D::build(&mut q)
                .execute(&mut *self.tx)
                .await
                .map_err(backend)?;
        }
        for chunk in plan.upserts.chunks(ITEMS_PER_STATEMENT) {
            let mut q = QueryBuilder::<D::Db>::new(
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
            D::build(&mut q)
                .execute(&mut *self.tx)
                .await
                .map_err(backend)?;
        }
        Ok(())
    }

    /// Logs the events `(job, seq)` of written tasks in one statement.
    async fn insert_events(
        &mut self,
        jobs: &[Job],
        events: &[(usize, i64)],
    ) -> Result<(), StoreError> {
        let rows = events.iter().filter_map(|&(k, seq)| match &jobs[k].op {
            Op::Create(row) | Op::Update { row, .. } => {
                row.event.as_deref().map(|event| (row, seq, event))
            }
            _ => None,
        });
        let mut q = QueryBuilder::<D::Db>::new(
            "INSERT INTO a2a_events (tenant, owner, task_id, seq, created_ms, body) ",
        );
        let now = self.now;
        q.push_values(rows, |mut b, (row, seq, event)| {
            b.push_bind(row.scope.tenant.as_str())
                .push_bind(&*row.scope.owner)
                .push_bind(row.id.as_str())
                .push_bind(seq)
                .push_bind(now)
                .push_bind(event);
        });
        D::build(&mut q)
            .execute(&mut *self.tx)
            .await
            .map_err(backend)?;
        Ok(())
    }

    /// Appends one push delivery per config of each event's task (none for a task without
    /// configs), events in the given order and each task's configs in config order, in one
    /// statement: a delivery is durable exactly when its event is. A direct Message reply is
    /// never logged, so it is never delivered either.
    async fn enqueue_deliveries(
        &mut self,
        jobs: &[Job],
        events: &[(usize, i64)],
    ) -> Result<(), StoreError> {
        let rows = events
            .iter()
            .enumerate()
            .filter_map(|(n, &(k, seq))| match &jobs[k].op {
                Op::Create(row) | Op::Update { row, .. } => row
                    .event
                    .as_deref()
                    .map(|event| (row, seq, event, i64::try_from(n).unwrap_or(i64::MAX))),
                _ => None,
            });
        let mut q = QueryBuilder::<D::Db>::new(
            "INSERT INTO a2a_push_outbox \
             (tenant, owner, task_id, config_id, seq, payload, enqueued_ms, next_ms) \
             SELECT c.tenant, c.owner, c.task_id, c.id, v.column4, v.column5, ",
        );
        q.push_bind(self.now);
        q.push(", ");
        q.push_bind(self.now);
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
        D::build(&mut q)
            .execute(&mut *self.tx)
            .await
            .map_err(backend)?;
        Ok(())
    }

    /// Records (or extends) the leases of jobs `ks` (all acquires) in one statement.
    async fn upsert_leases(&mut self, jobs: &[Job], ks: &[usize]) -> Result<(), StoreError> {
        let leases = ks.iter().filter_map(|&k| match &jobs[k].op {
            Op::Acquire { lease, expires_ms } => Some((lease, *expires_ms)),
            _ => None,
        });
        let mut q = QueryBuilder::<D::Db>::new(
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
        q.push(" ON CONFLICT (instance, execution) DO UPDATE SET expires_ms = excluded.expires_ms");
        D::build(&mut q)
            .execute(&mut *self.tx)
            .await
            .map_err(backend)?;
        Ok(())
    }

    /// Removes the leases of jobs `ks` (all releases: executions that returned) in one
    /// statement.
    async fn delete_leases(&mut self, jobs: &[Job], ks: &[usize]) -> Result<(), StoreError> {
        let mut q = QueryBuilder::<D::Db>::new(
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
        D::build(&mut q)
            .execute(&mut *self.tx)
            .await
            .map_err(backend)?;
        Ok(())
    }
}

/// The `(tenant, owner, id)` of the rows a statement's `RETURNING tenant, owner, id` gave back.
fn returned_keys<D: Dialect>(
    rows: &[<D::Db as Database>::Row],
) -> Result<HashSet<RowKey>, StoreError>
where
    usize: ColumnIndex<<D::Db as Database>::Row>,
    String: Column<D::Db>,
{
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
