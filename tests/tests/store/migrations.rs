//! The store in the application's own database: beside the application's sqlx migrations,
//! on the application's pool, in a schema of its own (PostgreSQL); migrations run explicitly;
//! and databases migrated by earlier releases (records in `_sqlx_migrations`) carried over.

use std::str::FromStr as _;
use std::sync::Arc;

use a2a_runtime::store::{Migrations, PostgresStore, Scope, SqliteStore, Stores, TaskStore as _};
use a2a_runtime::types::TaskState;
use a2a_tests::pg::PgDatabase;
use sqlx::migrate::Migrator;

use super::conformance::conformance;
use super::*;

/// The store's migrations as earlier releases ran them: sqlx's migrator, recording them in
/// `_sqlx_migrations`.
static SQLITE_BEFORE: Migrator = sqlx::migrate!("../a2a-runtime/migrations/sqlite");
static POSTGRES_BEFORE: Migrator = sqlx::migrate!("../a2a-runtime/migrations/postgres");

/// An application's own migrations, numbered 1.. as sqlx's guide numbers them (the numbers
/// the store's migrations have too), in a directory of their own.
struct AppMigrations {
    dir: std::path::PathBuf,
}

impl AppMigrations {
    /// Migrations `1..=n`, each creating a table `app_{k}`.
    fn new(tag: &str, n: usize) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "a2a-app-migrations-{tag}-{}-{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let this = Self { dir };
        for k in 1..=n {
            this.add(k);
        }
        this
    }

    fn add(&self, k: usize) {
        std::fs::write(
            self.dir.join(format!("{k:04}_app_{k}.sql")),
            format!("CREATE TABLE app_{k} (id BIGINT PRIMARY KEY, name TEXT NOT NULL);"),
        )
        .unwrap();
    }

    async fn migrator(&self) -> Migrator {
        Migrator::new(self.dir.as_path()).await.unwrap()
    }
}

impl Drop for AppMigrations {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The stores of one SQL store value, as `store::connect` returns them.
fn stores_of<S>(store: S, location: &str, cluster: bool) -> Stores
where
    S: a2a_runtime::store::TaskStore
        + a2a_runtime::store::PushConfigStore
        + a2a_runtime::store::PushOutbox
        + a2a_runtime::store::Cluster
        + Clone
        + 'static,
{
    Stores {
        tasks: Arc::new(store.clone()),
        push_configs: Arc::new(store.clone()),
        outbox: Arc::new(store.clone()),
        location: location.to_owned(),
        cluster: cluster.then(|| Arc::new(store) as Arc<dyn a2a_runtime::store::Cluster>),
    }
}

/// A task written and read back through `store`.
async fn round_trip(store: &dyn a2a_runtime::store::TaskStore, id: &str) {
    let scope = Scope::new("t", "o");
    let t = task(id, "c", TaskState::Working, 1_000);
    store.create(&scope, &t, None).await.unwrap();
    let got = store.get(&scope, &t.id).await.unwrap().unwrap();
    assert_eq!(got.task, t);
}

/// The versions recorded in `table` of a SQLite database, in order.
async fn sqlite_versions(pool: &sqlx::SqlitePool, table: &str) -> Vec<i64> {
    sqlx::query_scalar(&format!("SELECT version FROM {table} ORDER BY version"))
        .fetch_all(pool)
        .await
        .unwrap()
}

/// The versions recorded in `table` of a PostgreSQL database, in order.
async fn pg_versions(pool: &sqlx::PgPool, table: &str) -> Vec<i64> {
    sqlx::query_scalar(&format!("SELECT version FROM {table} ORDER BY version"))
        .fetch_all(pool)
        .await
        .unwrap()
}

fn ours(m: &Migrator) -> Vec<i64> {
    m.iter().map(|m| m.version).collect()
}

#[tokio::test]
async fn sqlite_store_sits_beside_the_applications_migrations_on_its_pool() {
    let file = SqliteFile::new();
    std::fs::create_dir_all(file.dir.join("nested")).unwrap();
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(&file.url())
        .unwrap()
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    let app = AppMigrations::new("sqlite", 2);
    app.migrator().await.run(&pool).await.unwrap();

    let store = SqliteStore::with_pool(pool.clone()).await.unwrap();
    round_trip(&store, "beside").await;
    // The application's migrator still finds only its own records, and goes on migrating.
    app.add(3);
    app.migrator().await.run(&pool).await.unwrap();
    assert_eq!(
        sqlite_versions(&pool, "_sqlx_migrations").await,
        vec![1, 2, 3]
    );
    assert_eq!(
        sqlite_versions(&pool, "a2a_migrations").await,
        ours(&SQLITE_BEFORE)
    );
    // Opening again migrates nothing, and the store's data is there.
    let again = SqliteStore::with_pool(pool.clone()).await.unwrap();
    assert!(
        again
            .get(&Scope::new("t", "o"), &"beside".into())
            .await
            .unwrap()
            .is_some()
    );
    // The whole contract holds on the application's pool.
    conformance(stores_of(again, "pool", false)).await;
    pool.close().await;
}

#[tokio::test]
async fn sqlite_migrations_can_run_before_the_store_opens() {
    let file = SqliteFile::new();
    let err = SqliteStore::builder()
        .migrations(Migrations::Verify)
        .open(&file.url())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("migrate"), "{err}");
    let pool = SqliteStore::open(&file.url()).await.unwrap().pool().clone();
    // A deployment step migrates; instances then open without migrating.
    SqliteStore::migrate(&pool).await.unwrap();
    let store = SqliteStore::builder()
        .migrations(Migrations::Verify)
        .with_pool(pool.clone())
        .await
        .unwrap();
    round_trip(&store, "verified").await;
    // A database migrated by a later release (one more version) still opens.
    sqlx::query(
        "INSERT INTO a2a_migrations (version, description, checksum, installed_ms) \
         VALUES (9999, 'later', '00', 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    SqliteStore::with_pool(pool.clone()).await.unwrap();
    pool.close().await;
}

#[tokio::test]
async fn sqlite_records_of_earlier_releases_are_carried_over() {
    let file = SqliteFile::new();
    std::fs::create_dir_all(file.dir.join("nested")).unwrap();
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(&file.url())
        .unwrap()
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    SQLITE_BEFORE.run(&pool).await.unwrap();
    let before = SqliteStore::builder()
        .migrations(Migrations::Verify)
        .with_pool(pool.clone())
        .await;
    assert!(before.is_err(), "records still in _sqlx_migrations");
    let store = SqliteStore::with_pool(pool.clone()).await.unwrap();
    round_trip(&store, "carried").await;
    assert_eq!(
        sqlite_versions(&pool, "a2a_migrations").await,
        ours(&SQLITE_BEFORE)
    );
    let left: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = '_sqlx_migrations'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(left, 0, "the table held only the store's records");
    pool.close().await;
}

#[tokio::test]
async fn postgres_store_sits_beside_the_applications_migrations_on_its_pool() {
    let db = PgDatabase::create().await;
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    let app = AppMigrations::new("postgres", 2);
    app.migrator().await.run(&pool).await.unwrap();

    let store = PostgresStore::with_pool(pool.clone()).await.unwrap();
    round_trip(&store, "beside").await;
    app.add(3);
    app.migrator().await.run(&pool).await.unwrap();
    assert_eq!(pg_versions(&pool, "_sqlx_migrations").await, vec![1, 2, 3]);
    assert_eq!(
        pg_versions(&pool, "a2a_migrations").await,
        ours(&POSTGRES_BEFORE)
    );
    conformance(stores_of(store, "pool", true)).await;
    pool.close().await;
}

#[tokio::test]
async fn postgres_store_keeps_to_its_schema() {
    let db = PgDatabase::create().await;
    let store = PostgresStore::builder()
        .schema("agents")
        .connect(&db.url)
        .await
        .unwrap();
    let admin = sqlx::PgPool::connect(&db.url).await.unwrap();
    let tables = |schema: &'static str| {
        let admin = admin.clone();
        async move {
            let names: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = $1 ORDER BY 1",
            )
            .bind(schema)
            .fetch_all(&admin)
            .await
            .unwrap();
            names
        }
    };
    let in_schema = tables("agents").await;
    assert!(in_schema.contains(&"a2a_tasks".to_owned()), "{in_schema:?}");
    assert!(in_schema.contains(&"a2a_migrations".to_owned()));
    assert!(tables("public").await.is_empty());
    round_trip(&store, "kept").await;
    conformance(stores_of(store, "schema", true)).await;

    // On the application's pool, its search_path decides: a pool elsewhere is refused.
    let err = PostgresStore::builder()
        .schema("agents")
        .with_pool(admin.clone())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("search_path"), "{err}");
    let options = sqlx::postgres::PgConnectOptions::from_str(&db.url)
        .unwrap()
        .options([("search_path", "agents")]);
    let pool = sqlx::PgPool::connect_with(options).await.unwrap();
    let store = PostgresStore::builder()
        .schema("agents")
        .migrations(Migrations::Verify)
        .with_pool(pool.clone())
        .await
        .unwrap();
    // The same tables: the task written before is there.
    assert!(
        store
            .get(&Scope::new("t", "o"), &"kept".into())
            .await
            .unwrap()
            .is_some()
    );
    pool.close().await;
    admin.close().await;
}

#[tokio::test]
async fn postgres_records_of_earlier_releases_are_carried_over() {
    let db = PgDatabase::create().await;
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    POSTGRES_BEFORE.run(&pool).await.unwrap();
    // The application's own migration, numbered apart, in the same table (sqlx told to ignore
    // the store's records).
    let app = AppMigrations::new("pg-carry", 0);
    std::fs::write(
        app.dir.join("20260101000000_app.sql"),
        "CREATE TABLE app_users (id BIGINT PRIMARY KEY);",
    )
    .unwrap();
    let mut migrator = app.migrator().await;
    migrator.set_ignore_missing(true);
    migrator.run(&pool).await.unwrap();

    let err = PostgresStore::builder()
        .migrations(Migrations::Verify)
        .with_pool(pool.clone())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("migrate"), "{err}");
    let store = PostgresStore::with_pool(pool.clone()).await.unwrap();
    round_trip(&store, "carried").await;
    assert_eq!(
        pg_versions(&pool, "a2a_migrations").await,
        ours(&POSTGRES_BEFORE)
    );
    assert_eq!(
        pg_versions(&pool, "_sqlx_migrations").await,
        vec![20_260_101_000_000]
    );
    // The application's migrator no longer needs to ignore anything.
    app.migrator().await.run(&pool).await.unwrap();
    pool.close().await;
}
