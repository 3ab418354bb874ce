//! The SQLite store: tasks, event logs and push configs in one database file (WAL,
//! `synchronous=NORMAL`), created with its schema when missing.

use std::str::FromStr as _;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteQueryResult,
    SqliteSynchronous,
};

use super::sql::{Configs, Dialect, Tasks, backend, writer_for};
use super::{
    PushConfigStore, PushOutbox, Scope, SeqEvent, StoreError, StoredTask, TaskPage, TaskQuery,
    TaskRef, TaskStore,
};
use crate::types::{
    PushConfigId, StreamResponse, Task, TaskId, TaskPushNotificationConfig, TaskState, Timestamp,
};

/// The embedded schema.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");

/// A [`TaskStore`], [`PushConfigStore`] and [`PushOutbox`] in a SQLite database file.
///
/// ```no_run
/// # async fn f() -> Result<(), a2a_runtime::store::StoreError> {
/// let store = a2a_runtime::store::SqliteStore::open("sqlite://data/agent.db").await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: sqlx::SqlitePool,
    /// How many dead push deliveries are kept.
    max_dead: usize,
    /// The queue of task writes (see `sql_writer`).
    writer: std::sync::Arc<super::sql_writer::Writer>,
}

impl SqliteStore {
    /// Opens (creating when missing, with its parent directory) the database at `url`
    /// (`sqlite://path` or `sqlite:path`) and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Backend(format!("invalid SQLite URL {url:?}: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            // Checkpoints run off the writer (see `Checkpoints`). SQLite's own, in the
            // connection that commits past 16,000 WAL pages (64 MiB), bounds the WAL: under
            // steady writes a checkpoint on another connection never finds the WAL free to
            // start over, so the writer's finds most pages copied and synced and restarts it.
            // (At 4,000 pages its stalls cost about a tenth of SQLite's SendMessage/s.)
            .pragma("wal_autocheckpoint", "16000")
            .pragma("journal_size_limit", "67108864")
            // Pages read through a shared mapping rather than copied into each connection.
            .pragma("mmap_size", "268435456");
        if let Some(dir) = options.get_filename().parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Backend(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(backend)?;
        MIGRATOR
            .run(&pool)
            .await
            .map_err(|e| StoreError::Backend(format!("migrating the SQLite schema: {e}")))?;
        // The writer's own connection: SQLite has one writer at a time (a second writer task
        // would only wait for its lock), and a connection that wrote last keeps its page
        // cache, where one taking turns with others reads back every page they changed.
        let writes = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(pool.connect_options().as_ref().clone())
            .await
            .map_err(backend)?;
        let checkpoints = Checkpoints::new(pool.clone());
        Ok(Self {
            writer: writer_for::<Self>(&writes, 1, move || checkpoints.committed()),
            pool,
            max_dead: super::sql_outbox::DEFAULT_MAX_DEAD,
        })
    }

    /// The connection pool (for administration).
    pub fn pool(&self) -> &sqlx::SqlitePool {
        &self.pool
    }

    /// The path of the database file.
    pub fn path(&self) -> std::path::PathBuf {
        self.pool.connect_options().get_filename().to_path_buf()
    }
}

/// Write transactions committed between two checkpoints of the WAL.
const CHECKPOINT_EVERY: usize = 32;

/// Checkpoints of the WAL (its pages copied back into the database file, then synced), run by
/// a connection of their own after every [`CHECKPOINT_EVERY`] commits, at most one at a time.
///
/// SQLite's automatic checkpoint runs in the connection whose commit crossed its threshold:
/// the store's one writer, which then waits for the copy and the syncs while every write
/// queues behind it. A passive checkpoint on another connection does that work while the
/// writer goes on appending to the WAL, and leaves the writer's own checkpoint (see `open`)
/// little to do.
#[derive(Debug)]
struct Checkpoints {
    pool: sqlx::SqlitePool,
    commits: std::sync::atomic::AtomicUsize,
    running: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Checkpoints {
    fn new(pool: sqlx::SqlitePool) -> Self {
        Self {
            pool,
            commits: std::sync::atomic::AtomicUsize::new(0),
            running: std::sync::Arc::default(),
        }
    }

    /// Counts a commit, and starts a checkpoint when one is due and none is running.
    fn committed(&self) {
        use std::sync::atomic::Ordering;
        if self.commits.fetch_add(1, Ordering::Relaxed) + 1 < CHECKPOINT_EVERY
            || self.running.swap(true, Ordering::AcqRel)
        {
            return;
        }
        self.commits.store(0, Ordering::Relaxed);
        let (pool, running) = (self.pool.clone(), Running(self.running.clone()));
        // The writer calls this on its runtime. A checkpoint dropped unfinished (its runtime
        // ended) clears the flag too, through `Running`.
        tokio::spawn(async move {
            let _running = running;
            if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&pool)
                .await
            {
                tracing::warn!(error = %e, "cannot checkpoint the SQLite WAL");
            }
        });
    }
}

/// A checkpoint in flight: clears [`Checkpoints`]' flag when it ends, however it ends.
struct Running(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::Release);
    }
}

impl SqliteStore {
    /// Keeps at most `n` dead push deliveries (default 1,000), the newest.
    pub fn with_max_dead_deliveries(mut self, n: usize) -> Self {
        self.max_dead = n;
        self
    }

    /// [`Cluster::changes`](super::Cluster::changes): none, a SQLite file serves one instance,
    /// whose runtimes see every write.
    #[allow(clippy::unused_async)]
    async fn notifications(
        &self,
    ) -> Result<Option<futures::stream::BoxStream<'static, super::TaskChange>>, StoreError> {
        Ok(None)
    }

    /// The tasks (the statements of [`TaskStore`]).
    fn tasks(&self) -> Tasks<'_, Self> {
        Tasks::new(&self.pool, &self.writer)
    }

    /// The push configs (the statements of [`PushConfigStore`]).
    fn configs(&self) -> Configs<'_, Self> {
        Configs::new(&self.pool)
    }
}

impl Dialect for SqliteStore {
    type Db = sqlx::Sqlite;

    fn rows_affected(done: &SqliteQueryResult) -> u64 {
        done.rows_affected()
    }

    fn build<'q, 'args: 'q>(
        query: &'q mut sqlx::QueryBuilder<'args, sqlx::Sqlite>,
    ) -> sqlx::query::Query<'q, sqlx::Sqlite, <sqlx::Sqlite as sqlx::Database>::Arguments<'q>> {
        query.build()
    }

    // The database's write lock is held from the start: a deferred transaction could find it
    // taken at its first write and fail instead of waiting.
    async fn begin_write(
        pool: &sqlx::SqlitePool,
    ) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error> {
        pool.begin_with("BEGIN IMMEDIATE").await
    }

    // Nothing to tell: one instance serves a SQLite file, and its runtimes see its writes.
    async fn notify_written(
        _tx: &mut sqlx::Transaction<'static, sqlx::Sqlite>,
        _changes: &[(&Scope, &TaskId, u64)],
    ) -> Result<(), sqlx::Error> {
        Ok(())
    }
}

#[async_trait::async_trait]
impl TaskStore for SqliteStore {
    /// This store's own outbox: every logged event gets its deliveries in its transaction.
    fn push_outbox(&self) -> Option<Arc<dyn PushOutbox>> {
        Some(Arc::new(self.clone()))
    }

    async fn get(&self, scope: &Scope, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        self.tasks().get(scope, id).await
    }

    async fn create(
        &self,
        scope: &Scope,
        task: &Task,
        event: Option<&StreamResponse>,
    ) -> Result<u64, StoreError> {
        self.tasks().create(scope, task, event).await
    }

    async fn update(
        &self,
        scope: &Scope,
        task: &Task,
        expected_version: u64,
        event: Option<&StreamResponse>,
    ) -> Result<u64, StoreError> {
        self.tasks()
            .update(scope, task, expected_version, event)
            .await
    }

    async fn events_after(
        &self,
        scope: &Scope,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<SeqEvent>, StoreError> {
        self.tasks().events_after(scope, id, after, limit).await
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        self.tasks().list(scope, query).await
    }

    async fn delete(&self, scope: &Scope, id: &TaskId) -> Result<bool, StoreError> {
        self.tasks().delete(scope, id).await
    }

    async fn untouched(
        &self,
        states: &[TaskState],
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskRef>, StoreError> {
        self.tasks().untouched(states, before, limit).await
    }

    async fn purge_finished(&self, before: Timestamp, limit: usize) -> Result<usize, StoreError> {
        self.tasks().purge_finished(before, limit).await
    }
}

#[async_trait::async_trait]
impl PushConfigStore for SqliteStore {
    async fn put(
        &self,
        scope: &Scope,
        config: &TaskPushNotificationConfig,
    ) -> Result<(), StoreError> {
        self.configs().put(scope, config).await
    }

    async fn get(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        self.configs().get(scope, task_id, id).await
    }

    async fn list(
        &self,
        scope: &Scope,
        task_id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        self.configs().list(scope, task_id).await
    }

    async fn delete(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<bool, StoreError> {
        self.configs().delete(scope, task_id, id).await
    }

    async fn delete_all(&self, scope: &Scope, task_id: &TaskId) -> Result<(), StoreError> {
        self.configs().delete_all(scope, task_id).await
    }
}

super::sql_outbox::sql_outbox!(SqliteStore, sqlx::Sqlite, "");

super::cluster::sql_cluster!(SqliteStore);
