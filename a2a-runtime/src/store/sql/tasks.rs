//! The task statements of the SQL stores: [`TaskStore`](crate::store::TaskStore) on a pool, its
//! writes handed to the store's write queue (see [`writes`](super::writes)).

use sqlx::{ColumnIndex, Database, Executor, IntoArguments, Pool, QueryBuilder, Row as _};

use super::codec::{backend, decode_event, decode_task, encode_event, encode_task, status_ms};
use super::codec::{to_i64, to_u64};
use super::dialect::{Column, Dialect, Param};
use super::writes::adjust_counts;
use crate::store::layout::{self, SPLIT_ABOVE, Split};
use crate::store::sql_writer::{Done, Op, Row, Writer};
use crate::store::{
    ListCursor, Scope, SeqEvent, StoreError, StoredTask, TaskPage, TaskQuery, TaskRef,
};
use crate::types::{StreamResponse, Task, TaskId, TaskState, Timestamp};

/// The terminal states, whose tasks retention purges (see [`retention`](super::retention)).
pub(super) const FINISHED: [TaskState; 4] = [
    TaskState::Completed,
    TaskState::Failed,
    TaskState::Canceled,
    TaskState::Rejected,
];

/// The tables besides `a2a_tasks` that hold rows of a task, with their task id column: all
/// removed with the task (the dead push deliveries too; a delivery still pending is left to be
/// sent).
pub(super) const TASK_PARTS: [(&str, &str); 4] = [
    ("a2a_events", "task_id"),
    ("a2a_push_configs", "task_id"),
    ("a2a_task_items", "task_id"),
    ("a2a_push_dead", "task_id"),
];

/// The most events one `events_after` call returns.
const MAX_EVENTS_PER_READ: usize = 1000;

/// The tasks of a SQL store of dialect `D`: its pool, and the queue its writes go through.
///
/// Each method is the [`TaskStore`](crate::store::TaskStore) method of the same name.
pub(in crate::store) struct Tasks<'s, D: Dialect> {
    pool: &'s Pool<D::Db>,
    writer: &'s Writer,
}

impl<'s, D: Dialect> Tasks<'s, D> {
    /// The tasks in `pool`, written through `writer`.
    pub(in crate::store) fn new(pool: &'s Pool<D::Db>, writer: &'s Writer) -> Self {
        Self { pool, writer }
    }

    /// Creates a task (version 1), through the write queue.
    pub(in crate::store) async fn create(
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

    /// Replaces a task stored at `expected_version`, through the write queue.
    pub(in crate::store) async fn update(
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
}

impl<D: Dialect> Tasks<'_, D>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    i64: Column<D::Db>,
    i16: Column<D::Db>,
    bool: Column<D::Db>,
    String: Column<D::Db>,
{
    /// The task `id` of `scope`.
    pub(in crate::store) async fn get(
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
        .fetch_optional(self.pool)
        .await
        .map_err(backend)?;
        let Some(row) = row else {
            return Ok(None);
        };
        if row.try_get::<bool, _>(2).map_err(backend)? {
            return self.read_split(scope, id.as_str()).await;
        }
        let body: String = row.try_get(0).map_err(backend)?;
        let version: i64 = row.try_get(1).map_err(backend)?;
        Ok(Some(StoredTask {
            task: decode_task(&body)?,
            version: to_u64(version)?,
        }))
    }

    /// The logged events of a task after `after`, at most `limit` (and
    /// [`MAX_EVENTS_PER_READ`]).
    pub(in crate::store) async fn events_after(
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
        .fetch_optional(self.pool)
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
        .fetch_all(self.pool)
        .await
        .map_err(backend)?;
        let mut events = Vec::with_capacity(rows.len());
        for (next, row) in (after + 1..).zip(rows) {
            let seq = to_u64(row.try_get::<i64, _>(0).map_err(backend)?)?;
            if seq != next {
                // A hole (a write without an event, or purged events): what precedes it is
                // returned, and the next read from there fails.
                break;
            }
            let body: String = row.try_get(1).map_err(backend)?;
            events.push(SeqEvent {
                seq,
                event: decode_event(&body)?,
            });
        }
        if events.is_empty() {
            let oldest: Option<i64> = sqlx::query_scalar(
                "SELECT MIN(seq) FROM a2a_events \
                 WHERE tenant = $1 AND owner = $2 AND task_id = $3",
            )
            .bind(scope.tenant.as_str())
            .bind(&*scope.owner)
            .bind(id.as_str())
            .fetch_one(self.pool)
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

    /// One page of the tasks of `scope` matching `query`, newest first.
    pub(in crate::store) async fn list(
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
        let mut page =
            QueryBuilder::<D::Db>::new("SELECT id, status_ms, body, split FROM a2a_tasks");
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
        let rows = D::build(&mut page)
            .fetch_all(self.pool)
            .await
            .map_err(backend)?;
        let more = rows.len() > size;
        let total = match after.as_ref().and_then(|a| a.total) {
            // Counting is the expensive part: a later page reports the first page's count,
            // unless the listing has no filter (a kept count answers that); a first page that
            // is also the last counts itself.
            Some(total) if !unfiltered => total,
            None if after.is_none() && !more => rows.len() as u64,
            _ => self.count_matching(scope, query, unfiltered).await?,
        };
        let mut tasks = Vec::with_capacity(size);
        let mut last = None;
        for row in rows.into_iter().take(size) {
            let id: String = row.try_get(0).map_err(backend)?;
            let millis: i64 = row.try_get(1).map_err(backend)?;
            if row.try_get::<bool, _>(3).map_err(backend)? {
                // None: deleted since the page was read; it is left out.
                if let Some(t) = self.read_split(scope, &id).await? {
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

    /// Removes a task and every row of it; returns whether it existed.
    pub(in crate::store) async fn delete(
        &self,
        scope: &Scope,
        id: &TaskId,
    ) -> Result<bool, StoreError> {
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
                existed = D::rows_affected(&done) > 0;
            }
        }
        if existed {
            let key = (scope.tenant.clone(), scope.owner.to_string());
            adjust_counts::<D>(&mut tx, &std::iter::once((key, -1)).collect()).await?;
        }
        tx.commit().await.map_err(backend)?;
        Ok(existed)
    }

    /// At most `limit` tasks in one of `states` last written before `before`.
    pub(in crate::store) async fn untouched(
        &self,
        states: &[TaskState],
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskRef>, StoreError> {
        if states.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut q = QueryBuilder::<D::Db>::new("SELECT tenant, owner, id, version FROM a2a_tasks");
        push_age_filter(&mut q, states, before.millis());
        q.push(" LIMIT ");
        q.push_bind(to_i64(limit as u64)?);
        let rows = D::build(&mut q)
            .fetch_all(self.pool)
            .await
            .map_err(backend)?;
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

    /// The number of tasks in `scope` matching `query`'s filters: the kept count of the scope
    /// when there are none (`unfiltered`), else a count the indexes answer.
    async fn count_matching(
        &self,
        scope: &Scope,
        query: &TaskQuery,
        unfiltered: bool,
    ) -> Result<u64, StoreError> {
        let n: i64 = if unfiltered {
            sqlx::query_scalar("SELECT n FROM a2a_task_counts WHERE tenant = $1 AND owner = $2")
                .bind(scope.tenant.as_str())
                .bind(&*scope.owner)
                .fetch_optional(self.pool)
                .await
                .map_err(backend)?
                .unwrap_or(0)
        } else {
            let mut count = QueryBuilder::<D::Db>::new("SELECT COUNT(*) FROM a2a_tasks");
            push_filters(&mut count, scope, query);
            D::build(&mut count)
                .fetch_one(self.pool)
                .await
                .map_err(backend)?
                .try_get(0)
                .map_err(backend)?
        };
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// A split task, its row and items read in one statement (one snapshot).
    async fn read_split(&self, scope: &Scope, id: &str) -> Result<Option<StoredTask>, StoreError> {
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
        .fetch_all(self.pool)
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
}

/// Appends `WHERE state IN (states) AND updated_ms < before` to a statement on `a2a_tasks`
/// (served by the index on `(state, updated_ms)`).
pub(super) fn push_age_filter<DB: Database>(
    q: &mut QueryBuilder<'_, DB>,
    states: &[TaskState],
    before: i64,
) where
    for<'q> &'q str: Param<'q, DB>,
    for<'q> i64: Param<'q, DB>,
{
    q.push(" WHERE state IN (");
    let mut list = q.separated(", ");
    for s in states {
        list.push_bind(s.as_str());
    }
    q.push(") AND updated_ms < ");
    q.push_bind(before);
}

/// Appends the filters of `query` (all but the cursor) to a statement on `a2a_tasks`.
fn push_filters<'a, DB: Database>(
    q: &mut QueryBuilder<'a, DB>,
    scope: &'a Scope,
    query: &'a TaskQuery,
) where
    for<'q> &'q str: Param<'q, DB>,
    for<'q> i64: Param<'q, DB>,
{
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

/// The task's encoded form for its row: whole, or split when large (see [`layout`]).
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
