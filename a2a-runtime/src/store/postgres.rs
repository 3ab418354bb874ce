//! The PostgreSQL store: tasks, event logs and push configs shared by every instance that
//! connects to the same database.

use std::time::Duration;

use sqlx::postgres::PgPoolOptions;

use super::sql::sql_store;

/// The embedded schema.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

/// A [`TaskStore`], [`PushConfigStore`] and [`PushOutbox`](super::PushOutbox) in a PostgreSQL database.
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
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://…`) and brings its schema up to date
    /// (instances starting together migrate once: the migrator holds a database lock).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await
            .map_err(backend)?;
        MIGRATOR
            .run(&pool)
            .await
            .map_err(|e| StoreError::Backend(format!("migrating the PostgreSQL schema: {e}")))?;
        Ok(Self {
            pool,
            max_dead: super::sql_outbox::DEFAULT_MAX_DEAD,
        })
    }

    /// The connection pool (for LISTEN/NOTIFY and administration).
    pub fn pool(&self) -> &sqlx::PgPool {
        &self.pool
    }
}

sql_store!(PostgresStore, sqlx::Postgres);
super::sql_outbox::sql_outbox!(PostgresStore, sqlx::Postgres, " FOR UPDATE SKIP LOCKED");

impl PostgresStore {
    /// Keeps at most `n` dead push deliveries (default 1,000), the newest.
    pub fn with_max_dead_deliveries(mut self, n: usize) -> Self {
        self.max_dead = n;
        self
    }
}

/// The notification channel of task writes (see `migrations/postgres/0002_multi_instance.sql`).
const CHANNEL: &str = "a2a_tasks";

/// How long the change stream waits before listening again after losing its connection.
const RELISTEN_DELAY: Duration = Duration::from_millis(500);

/// A notification's payload, `[tenant, owner, id, version]`, as a change.
fn change_of(payload: &str) -> super::TaskChange {
    match serde_json::from_str::<(String, String, String, u64)>(payload) {
        Ok((tenant, owner, id, version)) => super::TaskChange::Task {
            scope: super::Scope::new(tenant, owner),
            id: crate::types::TaskId::from(id),
            version,
        },
        Err(_) => super::TaskChange::Unknown,
    }
}

impl PostgresStore {
    /// [`Cluster::changes`](super::Cluster::changes): LISTEN on the channel of task writes.
    async fn notifications(
        &self,
    ) -> Result<Option<futures::stream::BoxStream<'static, super::TaskChange>>, StoreError> {
        use futures::StreamExt as _;
        let mut listener = sqlx::postgres::PgListener::connect_with(&self.pool)
            .await
            .map_err(backend)?;
        listener.listen(CHANNEL).await.map_err(backend)?;
        let stream = futures::stream::unfold(listener, |mut listener| async move {
            match listener.try_recv().await {
                Ok(Some(n)) => Some((change_of(n.payload()), listener)),
                Ok(None) => {
                    // The connection was lost and is re-established by the next call: what
                    // was notified meanwhile is unknown.
                    tracing::warn!("lost the PostgreSQL notification connection; reconnecting");
                    Some((super::TaskChange::Unknown, listener))
                }
                Err(e) => {
                    tracing::warn!(error = %e, "PostgreSQL notifications unavailable; retrying");
                    tokio::time::sleep(RELISTEN_DELAY).await;
                    Some((super::TaskChange::Unknown, listener))
                }
            }
        });
        Ok(Some(stream.boxed()))
    }
}

super::cluster::sql_cluster!(PostgresStore);
