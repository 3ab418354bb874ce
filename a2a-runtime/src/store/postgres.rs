//! The PostgreSQL store: tasks, event logs and push configs shared by every instance that
//! connects to the same database.

use std::str::FromStr as _;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use futures::stream::BoxStream;
use sqlx::postgres::{PgPoolOptions, PgQueryResult};

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
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

/// A [`TaskStore`], [`PushConfigStore`] and [`PushOutbox`] in a PostgreSQL database.
///
/// ```no_run
/// # async fn f() -> Result<(), a2a_runtime::store::StoreError> {
/// let store = a2a_runtime::store::PostgresStore::connect("postgres://127.0.0.1/agents").await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: sqlx::PgPool,
    /// How many dead push deliveries are kept.
    max_dead: usize,
    /// The queue of task writes (see `sql_writer`).
    writer: std::sync::Arc<super::sql_writer::Writer>,
    /// The key push credentials are sealed with at rest, if any.
    secret_key: Option<super::sql::Key>,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://…`) and brings its schema up to date
    /// (instances starting together migrate once: the migration holds a database lock).
    ///
    /// [`PostgresStore::builder`] connects without migrating, in a schema of the store's own,
    /// or on a pool of the application.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder().connect(url).await
    }

    /// The store on the application's `pool`, its schema brought up to date (see
    /// [`PostgresStoreBuilder::with_pool`]).
    pub async fn with_pool(pool: sqlx::PgPool) -> Result<Self, StoreError> {
        Self::builder().with_pool(pool).await
    }

    /// How to open a store: on a URL or a pool, in a schema, migrating or not.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), a2a_runtime::store::StoreError> {
    /// use a2a_runtime::store::{Migrations, PostgresStore};
    /// let store = PostgresStore::builder()
    ///     .schema("agents")
    ///     .migrations(Migrations::Verify)
    ///     .connect("postgres://127.0.0.1/app")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn builder() -> PostgresStoreBuilder {
        PostgresStoreBuilder::default()
    }

    /// Brings the store's schema in `pool` up to date (see [`Migrations`]), where the pool's
    /// unqualified names find tables (its `search_path`): for deployments that migrate before
    /// they roll out, and open the store with [`Migrations::Verify`].
    pub async fn migrate(pool: &sqlx::PgPool) -> Result<(), StoreError> {
        super::sql::migrate::<Self>(pool, &MIGRATOR).await
    }

    /// The store on `pool`, whose schema `migrations` says what to do with.
    async fn on(pool: sqlx::PgPool, migrations: Migrations) -> Result<Self, StoreError> {
        match migrations {
            Migrations::Apply => super::sql::migrate::<Self>(&pool, &MIGRATOR).await?,
            Migrations::Verify => super::sql::verify::<Self>(&pool, &MIGRATOR).await?,
        }
        Ok(Self {
            writer: writer_for::<Self>(&pool, WRITERS, || {}),
            pool,
            max_dead: super::sql::DEFAULT_MAX_DEAD,
            secret_key: None,
        })
    }

    /// The connection pool (for LISTEN/NOTIFY and administration).
    pub fn pool(&self) -> &sqlx::PgPool {
        &self.pool
    }
}

impl PostgresStore {
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

/// Opens a [`PostgresStore`]: on a URL or on the application's pool, in a schema of its own,
/// migrating its schema or checking it (see [`Migrations`]). Made by
/// [`PostgresStore::builder`].
///
/// The store's tables are all named `a2a_…`, and its migrations are recorded in
/// `a2a_migrations`, beside them: they sit beside the application's tables and its own sqlx
/// migrations in one database, or in a schema of their own ([`schema`](Self::schema)).
#[derive(Clone, Debug, Default)]
#[must_use = "a builder opens nothing until `connect` or `with_pool`"]
pub struct PostgresStoreBuilder {
    migrations: Migrations,
    schema: Option<String>,
}

impl PostgresStoreBuilder {
    /// What to do with the schema when the store opens (default [`Migrations::Apply`]).
    pub fn migrations(mut self, migrations: Migrations) -> Self {
        self.migrations = migrations;
        self
    }

    /// Keeps the store's tables and its migration records in the schema `name` (created
    /// when [`connect`](Self::connect) migrates and it is missing), instead of the first
    /// schema of the database's `search_path` (usually `public`). The store's connections
    /// then look up names in that schema alone.
    ///
    /// With [`with_pool`](Self::with_pool), the pool's own `search_path` decides
    /// (`PgConnectOptions::options([("search_path", name)])`); the store checks that it
    /// leads to `name`.
    pub fn schema(mut self, name: impl Into<String>) -> Self {
        self.schema = Some(name.into());
        self
    }

    /// Connects to the database at `url` (`postgres://…`): a pool of its own (16
    /// connections, each waiting at most 4 s for the database), in the schema if one was set.
    pub async fn connect(self, url: &str) -> Result<PostgresStore, StoreError> {
        let mut options = sqlx::postgres::PgConnectOptions::from_str(url).map_err(backend)?;
        if let Some(schema) = &self.schema {
            options = options.options([("search_path", quoted(schema))]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(16)
            // While the database is unreachable a write fails after this long; the instance's
            // one writer takes batches in turn, so a request whose writes queue behind others
            // hears back within a few of these.
            .acquire_timeout(Duration::from_secs(4))
            .connect_with(options)
            .await
            .map_err(backend)?;
        if let (Some(schema), Migrations::Apply) = (&self.schema, self.migrations) {
            sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {}", quoted(schema)))
                .execute(&pool)
                .await
                .map_err(|e| StoreError::Backend(format!("creating the schema {schema:?}: {e}")))?;
        }
        PostgresStore::on(pool, self.migrations).await
    }

    /// The store on the application's `pool`, as it is: the store's tables are found through
    /// the pool's `search_path`, and its writes take connections of the pool (a few at a
    /// time: size the pool for both).
    pub async fn with_pool(self, pool: sqlx::PgPool) -> Result<PostgresStore, StoreError> {
        if let Some(schema) = &self.schema {
            let current: Option<String> = sqlx::query_scalar("SELECT current_schema()")
                .fetch_one(&pool)
                .await
                .map_err(backend)?;
            if current.as_deref() != Some(schema.as_str()) {
                return Err(StoreError::Backend(format!(
                    "the pool's search_path leads to the schema {current:?}, not {schema:?}: \
                     create the schema and connect the pool with \
                     PgConnectOptions::options([(\"search_path\", {schema:?})])"
                )));
            }
        }
        PostgresStore::on(pool, self.migrations).await
    }
}

/// `name` as a quoted SQL identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Write transactions in flight at once, per instance (each commits every write that waited
/// for it).
// One: batches grow to about 5 writes instead of 3.5 with two. a2a-bench store send, the two
// interleaved on one host: 1.27-1.63k SendMessage/s at 3 instances against 1.11-1.25k with
// two, 1.99-2.13k against 1.68-1.74k at one instance. One writer was reverted once (735bb39)
// for postgres_restarted_under_load failures; those came from the change stream, which
// listened again without reporting it (fixed since, bf869ca).
const WRITERS: usize = 1;

/// The advisory lock key migrations hold (the bytes of "a2a_migr").
const MIGRATION_LOCK: i64 = 0x6132_615f_6d69_6772;

/// The notification channel of task writes: each committed batch of writes sends the list of
/// `[tenant, owner, id, version]` it wrote, in payloads of at most [`MAX_PAYLOAD`] bytes.
const CHANNEL: &str = "a2a_tasks";

/// PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more.
const MAX_PAYLOAD: usize = 7_900;

/// The payloads that announce `changes`: JSON arrays of `[tenant, owner, id, version]`, each
/// under [`MAX_PAYLOAD`] bytes; a change too long to fit alone is announced as an empty
/// payload (listeners then re-read every task they follow).
fn payloads(changes: &[(&super::Scope, &crate::types::TaskId, u64)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for (scope, id, version) in changes {
        let one =
            serde_json::json!([scope.tenant(), scope.owner(), id.as_str(), version]).to_string();
        if one.len() + 2 > MAX_PAYLOAD {
            out.push(String::new());
            continue;
        }
        if current.len() + one.len() + 2 > MAX_PAYLOAD {
            current.push(']');
            out.push(std::mem::take(&mut current));
        }
        current.push(if current.is_empty() { '[' } else { ',' });
        current.push_str(&one);
    }
    if !current.is_empty() {
        current.push(']');
        out.push(current);
    }
    out
}

/// How long the change stream waits before trying to listen again after a failure.
const RELISTEN_DELAY: Duration = Duration::from_millis(500);

/// A notification's payload as changes: a list of `[tenant, owner, id, version]` (one
/// `[tenant, owner, id, version]` alone from the trigger of schema versions before 7); anything
/// else says that some tasks changed.
fn changes_of(payload: &str) -> Vec<super::TaskChange> {
    type Change = (String, String, String, u64);
    let change = |(tenant, owner, id, version): Change| TaskChange::Task {
        scope: super::Scope::new(tenant, owner),
        id: crate::types::TaskId::from(id),
        version,
    };
    if let Ok(list) = serde_json::from_str::<Vec<Change>>(payload) {
        return list.into_iter().map(change).collect();
    }
    match serde_json::from_str::<Change>(payload) {
        Ok(one) => vec![change(one)],
        Err(_) => vec![TaskChange::Unknown],
    }
}

impl PostgresStore {
    /// [`Cluster::changes`](Cluster::changes): LISTEN on the channel of task writes.
    async fn notifications(&self) -> Result<Option<BoxStream<'static, TaskChange>>, StoreError> {
        use futures::StreamExt as _;
        let listener = listen(&self.pool).await.map_err(backend)?;
        let pool = self.pool.clone();
        let stream = futures::stream::unfold(Some(listener), move |mut listening| {
            let pool = pool.clone();
            async move {
                loop {
                    let Some(listener) = listening.as_mut() else {
                        // Listening again: what was notified while away is unknown, so the
                        // followers re-read now, after LISTEN, and miss nothing written
                        // since. (Reporting it before LISTEN, when the connection was lost,
                        // left the writes committed in between unheard until the next poll.)
                        match listen(&pool).await {
                            Ok(listener) => {
                                return Some((vec![TaskChange::Unknown], Some(listener)));
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "PostgreSQL notifications unavailable; retrying");
                                tokio::time::sleep(RELISTEN_DELAY).await;
                                continue;
                            }
                        }
                    };
                    let lost = match listener.try_recv().await {
                        Ok(Some(n)) => return Some((changes_of(n.payload()), listening)),
                        Ok(None) => "connection closed".to_owned(),
                        Err(e) => e.to_string(),
                    };
                    tracing::warn!(error = %lost, "lost the PostgreSQL notification connection; reconnecting");
                    listening = None;
                }
            }
        });
        Ok(Some(stream.flat_map(futures::stream::iter).boxed()))
    }
}

/// A connection listening on [`CHANNEL`], within [`LISTEN_TIMEOUT`].
async fn listen(pool: &sqlx::PgPool) -> Result<sqlx::postgres::PgListener, sqlx::Error> {
    let connect = async {
        let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
        // Reconnections are made here, where they are reported (see `notifications`).
        listener.eager_reconnect(false);
        listener.listen(CHANNEL).await?;
        Ok(listener)
    };
    tokio::time::timeout(LISTEN_TIMEOUT, connect)
        .await
        .unwrap_or(Err(sqlx::Error::PoolTimedOut))
}

/// How long connecting and listening may take before it is tried again.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(10);

impl Dialect for PostgresStore {
    type Db = sqlx::Postgres;

    fn claim_statement() -> &'static str {
        // The rows the inner select finds are locked, and rows another instance is claiming
        // are skipped: concurrent instances never lease the same row.
        static CLAIM: LazyLock<String> =
            LazyLock::new(|| claim_statement(" FOR UPDATE SKIP LOCKED"));
        &CLAIM
    }

    const TABLE_EXISTS: &'static str = "SELECT COUNT(*) FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_name = $1";

    // One key for every store: migrations of stores in different schemas of one database
    // take turns too, which costs nothing.
    async fn lock_migrations(
        tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    fn rows_affected(done: &PgQueryResult) -> u64 {
        done.rows_affected()
    }

    fn build<'q, 'args: 'q>(
        query: &'q mut sqlx::QueryBuilder<'args, sqlx::Postgres>,
    ) -> sqlx::query::Query<'q, sqlx::Postgres, <sqlx::Postgres as sqlx::Database>::Arguments<'q>>
    {
        query.build()
    }

    async fn begin_write(
        pool: &sqlx::PgPool,
    ) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error> {
        pool.begin().await
    }

    // Wakes the other instances for the writes of this transaction (delivered if it commits):
    // one statement, whatever the number of writes.
    async fn notify_written(
        tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
        changes: &[(&Scope, &TaskId, u64)],
    ) -> Result<(), sqlx::Error> {
        if changes.is_empty() {
            return Ok(());
        }
        sqlx::query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p")
            .bind(CHANNEL)
            .bind(payloads(changes))
            .execute(&mut **tx)
            .await?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl TaskStore for PostgresStore {
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
        self.retained().purge_finished(before, limit).await
    }

    async fn purge_finished_beyond(
        &self,
        keep: usize,
        per_scope: bool,
        limit: usize,
    ) -> Result<usize, StoreError> {
        self.retained()
            .purge_finished_beyond(keep, per_scope, limit)
            .await
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
impl PushConfigStore for PostgresStore {
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
impl PushOutbox for PostgresStore {
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
impl Cluster for PostgresStore {
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
    use crate::store::{Scope, TaskChange};
    use crate::types::TaskId;

    #[test]
    fn notifications_are_cut_under_the_payload_limit_and_read_back_whole() {
        let scope = Scope::new("t", "o");
        let ids: Vec<TaskId> = (0..500)
            .map(|n| TaskId::from(format!("task-{n:04}")))
            .collect();
        let changes: Vec<_> = ids
            .iter()
            .enumerate()
            .map(|(n, id)| (&scope, id, n as u64 + 1))
            .collect();
        let sent = payloads(&changes);
        assert!(sent.len() > 1);
        assert!(sent.iter().all(|p| p.len() < 8_000 && !p.is_empty()));
        let back: Vec<TaskChange> = sent.iter().flat_map(|p| changes_of(p)).collect();
        assert_eq!(back.len(), 500);
        assert_eq!(
            back[499],
            TaskChange::Task {
                scope: scope.clone(),
                id: ids[499].clone(),
                version: 500
            }
        );
        // The trigger's form (schema before version 7), and what nobody wrote.
        assert_eq!(
            changes_of(r#"["t","o","x",3]"#),
            vec![TaskChange::Task {
                scope: scope.clone(),
                id: TaskId::from("x"),
                version: 3
            }]
        );
        assert_eq!(changes_of(""), vec![TaskChange::Unknown]);
        // One change too long for any payload is announced empty.
        let long = TaskId::from("x".repeat(9_000));
        assert_eq!(payloads(&[(&scope, &long, 1)]), vec![String::new()]);
    }

    /// The claim's select `due` with literals for its parameters (now, limit).
    fn claim_query(due: &str) -> String {
        due.replace("$3", "1000").replace("$4", "10")
    }

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
        let store = PostgresStore::connect(&url).await.unwrap();
        let plan = async {
            let mut c = store.pool().acquire().await.unwrap();
            // An empty table is scanned whatever its indexes: ask whether the index serves
            // the claim at all, as it does once the table is large.
            sqlx::query("SET enable_seqscan = off")
                .execute(&mut *c)
                .await
                .unwrap();
            let lines: Vec<String> = sqlx::query_scalar(&format!(
                "EXPLAIN {}",
                claim_query(super::super::sql::CLAIM_DUE)
            ))
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
