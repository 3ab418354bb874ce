//! The SQLite store: tasks, event logs and push configs in one database file (WAL,
//! `synchronous=NORMAL`, incremental auto-vacuum), created with its schema when missing.

use std::str::FromStr as _;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use futures::stream::BoxStream;
use sqlx::sqlite::{
    SqliteAutoVacuum, SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions,
    SqliteQueryResult, SqliteSynchronous,
};

use super::sql::{
    Configs, Dialect, Leases, Migrations, Outbox, Retained, Tasks, backend, claim_statement,
    writer_for,
};
use super::{
    Cluster, Delivery, Lease, NewDelivery, PushConfigStore, PushOutbox, Scope, SeqEvent,
    StoreError, StoredTask, TaskChange, TaskPage, TaskQuery, TaskRef, TaskStore,
};
use crate::types::{
    MessageId, PushConfigId, StreamResponse, Task, TaskId, TaskPushNotificationConfig, TaskState,
    Timestamp,
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
    /// The key push credentials are sealed with at rest, if any.
    secret_key: Option<super::sql::Key>,
}

impl SqliteStore {
    /// Opens (creating when missing, with its parent directory) the database at `url`
    /// (`sqlite://path` or `sqlite:path`) and brings its schema up to date. A database it
    /// creates, with its WAL and shared-memory files, is readable by its owner alone (0600),
    /// in a directory of mode 0700 when it creates that too.
    ///
    /// [`SqliteStore::builder`] opens it without migrating, or on a pool of the application.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::builder().open(url).await
    }

    /// The store on the application's `pool`, its schema brought up to date (see
    /// [`SqliteStoreBuilder::with_pool`]).
    pub async fn with_pool(pool: sqlx::SqlitePool) -> Result<Self, StoreError> {
        Self::builder().with_pool(pool).await
    }

    /// How to open a store: on a URL or a pool, migrating or not.
    ///
    /// ```no_run
    /// # async fn f(pool: sqlx::SqlitePool) -> Result<(), a2a_runtime::store::StoreError> {
    /// use a2a_runtime::store::{Migrations, SqliteStore};
    /// // At deployment: the schema, once.
    /// SqliteStore::migrate(&pool).await?;
    /// // In each instance: fails unless the schema is there.
    /// let store = SqliteStore::builder()
    ///     .migrations(Migrations::Verify)
    ///     .with_pool(pool)
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn builder() -> SqliteStoreBuilder {
        SqliteStoreBuilder::default()
    }

    /// Brings the store's schema in `pool` up to date (see [`Migrations`]): for deployments
    /// that migrate before they roll out, and open the store with [`Migrations::Verify`].
    pub async fn migrate(pool: &sqlx::SqlitePool) -> Result<(), StoreError> {
        super::sql::migrate::<Self>(pool, &MIGRATOR).await
    }

    /// The store on `pool`, whose schema `migrations` says what to do with; writes go through
    /// `writes` (one connection).
    async fn on(
        pool: sqlx::SqlitePool,
        writes: sqlx::SqlitePool,
        migrations: Migrations,
    ) -> Result<Self, StoreError> {
        match migrations {
            Migrations::Apply => super::sql::migrate::<Self>(&pool, &MIGRATOR).await?,
            Migrations::Verify => super::sql::verify::<Self>(&pool, &MIGRATOR).await?,
        }
        let checkpoints = Checkpoints::new(pool.clone());
        Ok(Self {
            writer: writer_for::<Self>(&writes, 1, move || checkpoints.committed()),
            pool,
            max_dead: super::sql::DEFAULT_MAX_DEAD,
            secret_key: None,
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

    /// Gives free pages back to the file system after retention removed `purged` tasks: those
    /// beyond a quarter of the file (see [`FREE_SLACK_DIVISOR`]), at most
    /// [`GIVE_BACK_MAX_PAGES`] at a time (an incremental vacuum holds the write lock while it
    /// moves pages). The file shrinks at the next checkpoint. A failure is logged: the pages
    /// stay free for later writes.
    async fn give_back(&self, purged: usize) {
        if purged == 0 {
            return;
        }
        if let Err(e) = self.vacuum_free_pages().await {
            tracing::warn!(error = %e, "cannot give free SQLite pages back");
        }
    }

    /// [`give_back`](Self::give_back)'s work; returns how many pages it asked to free.
    async fn vacuum_free_pages(&self) -> Result<i64, sqlx::Error> {
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
            .fetch_one(&self.pool)
            .await?;
        let free: i64 = sqlx::query_scalar("PRAGMA freelist_count")
            .fetch_one(&self.pool)
            .await?;
        // Free pages kept: a quarter of the file once the others went, a third of the used.
        let excess = (free - (pages - free) / (FREE_SLACK_DIVISOR - 1)).min(GIVE_BACK_MAX_PAGES);
        if excess > 0 {
            sqlx::query(&format!("PRAGMA incremental_vacuum({excess})"))
                .execute(&self.pool)
                .await?;
        }
        Ok(excess.max(0))
    }
}

/// Opens a [`SqliteStore`]: on a URL or on the application's pool, migrating its schema or
/// checking it (see [`Migrations`]). Made by [`SqliteStore::builder`].
///
/// The store's tables are all named `a2a_…`, and its migrations are recorded in
/// `a2a_migrations`: they sit beside the application's tables and its own sqlx migrations in
/// one database file.
#[derive(Clone, Debug, Default)]
#[must_use = "a builder opens nothing until `open` or `with_pool`"]
pub struct SqliteStoreBuilder {
    migrations: Migrations,
}

impl SqliteStoreBuilder {
    /// What to do with the schema when the store opens (default [`Migrations::Apply`]).
    pub fn migrations(mut self, migrations: Migrations) -> Self {
        self.migrations = migrations;
        self
    }

    /// Opens the database at `url` as [`SqliteStore::open`] does.
    pub async fn open(self, url: &str) -> Result<SqliteStore, StoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Backend(format!("invalid SQLite URL {url:?}: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            // Pages freed by retention can be given back to the file system (see `give_back`).
            // Set on every connection: it takes effect on a file without tables (before the
            // migrations create them), or at the next VACUUM (`incremental_vacuum_on`).
            .auto_vacuum(SqliteAutoVacuum::Incremental)
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
        private_file(options.get_filename())?;
        incremental_vacuum_on(&options).await?;
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(backend)?;
        // The writer's own connection: SQLite has one writer at a time (a second writer task
        // would only wait for its lock), and a connection that wrote last keeps its page
        // cache, where one taking turns with others reads back every page they changed.
        let writes = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(pool.connect_options().as_ref().clone())
            .await
            .map_err(backend)?;
        SqliteStore::on(pool, writes, self.migrations).await
    }

    /// The store on the application's `pool`, as it is: its connections keep the
    /// application's settings (WAL and `synchronous=NORMAL` write fastest; a `busy_timeout`
    /// lets the store's writes wait for the application's), and the store's writes take one
    /// of its connections at a time.
    pub async fn with_pool(self, pool: sqlx::SqlitePool) -> Result<SqliteStore, StoreError> {
        SqliteStore::on(pool.clone(), pool, self.migrations).await
    }
}

/// Creates the database file at `path` readable by its owner alone (0600), in a directory
/// created 0700 when missing, before SQLite opens it; SQLite gives the `-wal` and `-shm`
/// files the mode of the database file. An existing file keeps its mode (the operator's to
/// choose); one that others may read is logged.
fn private_file(path: &std::path::Path) -> Result<(), StoreError> {
    if path.as_os_str().is_empty() || path.as_os_str() == ":memory:" {
        return Ok(());
    }
    let io = |what: &str, at: &std::path::Path, e: std::io::Error| {
        StoreError::Backend(format!("cannot {what} {}: {e}", at.display()))
    };
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
        && !dir.exists()
    {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(|e| io("create", dir, e))?;
    }
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    match open.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            #[cfg(unix)]
            if let Ok(meta) = std::fs::metadata(path) {
                let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
                if mode & 0o077 != 0 {
                    tracing::warn!(
                        path = %path.display(),
                        mode = format_args!("{:o}", mode & 0o777),
                        "the SQLite database can be read by other users: chmod 600 it, and its -wal and -shm files"
                    );
                }
            }
            Ok(())
        }
        Err(e) => Err(io("create", path, e)),
    }
}

/// Switches an existing file made without incremental auto-vacuum (by a release before it)
/// to it: one VACUUM at the first open, which rewrites the file (its time grows with the
/// file's size). Done on a connection of its own in rollback-journal mode, before the pool
/// opens: a VACUUM in WAL mode keeps the file's auto-vacuum mode.
async fn incremental_vacuum_on(options: &SqliteConnectOptions) -> Result<(), StoreError> {
    use sqlx::{ConnectOptions as _, Connection as _};
    if !options.get_filename().exists() {
        return Ok(());
    }
    let mut conn = options.connect().await.map_err(backend)?;
    let mode: i64 = sqlx::query_scalar("PRAGMA auto_vacuum")
        .fetch_one(&mut conn)
        .await
        .map_err(backend)?;
    conn.close().await.map_err(backend)?;
    // 0 none, 1 full, 2 incremental.
    if mode == 2 {
        return Ok(());
    }
    tracing::info!("switching the SQLite file to incremental auto-vacuum (one VACUUM)");
    let switched = async {
        let mut conn = options
            .clone()
            .journal_mode(SqliteJournalMode::Delete)
            .connect()
            .await?;
        sqlx::query("VACUUM").execute(&mut conn).await?;
        conn.close().await
    };
    // Another connection holds the file (WAL mode cannot be left then): the store works, and
    // gives pages back once a later open switches it.
    if let Err(e) = switched.await {
        tracing::warn!(error = %e, "cannot switch the SQLite file to incremental auto-vacuum now");
    }
    Ok(())
}

/// The share of the file's pages kept free for the next writes when freed pages are given
/// back: a store whose tasks are bounded by count frees about as many pages per pass as the
/// writes until the next pass take again, so its file stays flat instead of shrinking and
/// growing back.
const FREE_SLACK_DIVISOR: i64 = 4;

/// The most pages one [`SqliteStore::give_back`] returns (4 KiB each: 32 MiB).
const GIVE_BACK_MAX_PAGES: i64 = 8_192;

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

    /// Stores the webhook credentials of push configs (`token`, `authentication.credentials`)
    /// sealed with `key` (AES-256-GCM); they are opened when read back. Configs stored
    /// before read as they are, and are sealed when written again. Reading a sealed config
    /// with another key, or with none, is a [`StoreError::Secrets`].
    #[cfg(feature = "encryption")]
    pub fn with_secret_key(mut self, key: super::SecretKey) -> Self {
        self.secret_key = Some(key);
        self
    }

    /// [`Cluster::changes`](Cluster::changes): none, a SQLite file serves one instance,
    /// whose runtimes see every write.
    #[allow(clippy::unused_async)]
    async fn notifications(&self) -> Result<Option<BoxStream<'static, TaskChange>>, StoreError> {
        Ok(None)
    }

    /// The tasks (the statements of [`TaskStore`]).
    fn tasks(&self) -> Tasks<'_, Self> {
        Tasks::new(&self.pool, &self.writer)
    }

    /// Retention and message claims (the statements of [`TaskStore`]'s retention methods).
    fn retained(&self) -> Retained<'_, Self> {
        Retained::new(&self.pool)
    }

    /// The push configs (the statements of [`PushConfigStore`]).
    fn configs(&self) -> Configs<'_, Self> {
        Configs::new(&self.pool, self.secret_key.as_ref())
    }

    /// The push outbox (the statements of [`PushOutbox`]).
    fn outbox(&self) -> Outbox<'_, Self> {
        Outbox::new(&self.pool, self.max_dead)
    }

    /// The leases of running executions (the statements of [`Cluster`]).
    fn leases(&self) -> Leases<'_, Self> {
        Leases::new(&self.pool, &self.writer)
    }
}

impl Dialect for SqliteStore {
    type Db = sqlx::Sqlite;

    fn claim_statement() -> &'static str {
        // No row locks: the claim holds the database's write lock.
        static CLAIM: LazyLock<String> = LazyLock::new(|| claim_statement(""));
        &CLAIM
    }

    const TABLE_EXISTS: &'static str =
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1";

    // `begin_write` holds the database's write lock.
    async fn lock_migrations(
        _tx: &mut sqlx::Transaction<'static, sqlx::Sqlite>,
    ) -> Result<(), sqlx::Error> {
        Ok(())
    }

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
        let n = self.retained().purge_finished(before, limit).await?;
        self.give_back(n).await;
        Ok(n)
    }

    async fn purge_finished_beyond(
        &self,
        keep: usize,
        per_scope: bool,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let n = self
            .retained()
            .purge_finished_beyond(keep, per_scope, limit)
            .await?;
        self.give_back(n).await;
        Ok(n)
    }

    async fn claim_message(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
        since: Timestamp,
    ) -> Result<Option<TaskId>, StoreError> {
        self.retained()
            .claim_message(scope, message_id, task_id, since)
            .await
    }

    async fn release_message_claim(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
    ) -> Result<(), StoreError> {
        self.retained()
            .release_message_claim(scope, message_id, task_id)
            .await
    }

    async fn purge_claims(
        &self,
        before: Timestamp,
        keep: usize,
        limit: usize,
    ) -> Result<usize, StoreError> {
        self.retained().purge_claims(before, keep, limit).await
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

#[async_trait::async_trait]
impl PushOutbox for SqliteStore {
    async fn enqueue(
        &self,
        deliveries: Vec<NewDelivery>,
        now_ms: i64,
    ) -> Result<Vec<u64>, StoreError> {
        self.outbox().enqueue(deliveries, now_ms).await
    }

    async fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError> {
        self.outbox()
            .claim(owner, now_ms, lease_until_ms, limit)
            .await
    }

    async fn complete(&self, id: u64) -> Result<(), StoreError> {
        self.outbox().complete(id).await
    }

    async fn retry_at(&self, id: u64, at_ms: i64, error: &str) -> Result<(), StoreError> {
        self.outbox().retry_at(id, at_ms, error).await
    }

    async fn dead(&self, id: u64, error: &str) -> Result<(), StoreError> {
        self.outbox().dead(id, error).await
    }

    async fn list_dead(&self, limit: usize) -> Result<Vec<Delivery>, StoreError> {
        self.outbox().list_dead(limit).await
    }

    async fn pending(&self) -> Result<usize, StoreError> {
        self.outbox().pending().await
    }
}

#[async_trait::async_trait]
impl Cluster for SqliteStore {
    async fn changes(&self) -> Result<Option<BoxStream<'static, TaskChange>>, StoreError> {
        self.notifications().await
    }

    async fn acquire(&self, lease: &Lease, ttl: Duration) -> Result<(), StoreError> {
        self.leases().acquire(lease, ttl).await
    }

    async fn renew(&self, instance: &str, ttl: Duration) -> Result<u64, StoreError> {
        self.leases().renew(instance, ttl).await
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.leases().release(lease).await
    }

    async fn expired(&self, limit: usize) -> Result<Vec<Lease>, StoreError> {
        self.leases().expired(limit).await
    }

    async fn claim_expired(&self, lease: &Lease) -> Result<bool, StoreError> {
        self.leases().claim_expired(lease).await
    }

    async fn unleased(&self, before_ms: i64, limit: usize) -> Result<Vec<TaskRef>, StoreError> {
        self.leases().unleased(before_ms, limit).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The claim's select `due` with literals for its parameters (now, limit).
    fn claim_query(due: &str) -> String {
        due.replace("$3", "1000").replace("$4", "10")
    }

    #[tokio::test]
    async fn the_sqlite_claim_searches_the_due_index() {
        let dir = std::env::temp_dir().join(format!("a2a-claim-plan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let url = format!("sqlite://{}/plan.db", dir.display());
        let store = SqliteStore::open(&url).await.unwrap();
        let rows: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!(
            "EXPLAIN QUERY PLAN {}",
            claim_query(super::super::sql::CLAIM_DUE)
        ))
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
}
