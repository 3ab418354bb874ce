//! A PostgreSQL database of its own for one test, on the machine's server (trust auth), dropped
//! when the test ends. A missing PostgreSQL fails the test, it never skips it.

use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::Connection as _;

/// The PostgreSQL server every engineer's tests share (trust auth).
pub fn pg_admin_url() -> String {
    std::env::var("A2A_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// A database of its own for one test, dropped when the test ends.
pub struct PgDatabase {
    pub name: String,
    pub url: String,
}

static NEXT_DB: AtomicU64 = AtomicU64::new(0);

impl PgDatabase {
    /// A new database named `{prefix}_{pid}_{n}_{µs}`.
    pub async fn create_named(prefix: &str) -> Self {
        let name = format!(
            "{prefix}_{}_{}_{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::SeqCst),
            chrono::Utc::now().timestamp_micros()
        );
        let mut admin = sqlx::PgConnection::connect(&pg_admin_url())
            .await
            .expect("PostgreSQL must be reachable at 127.0.0.1:5432 (set A2A_TEST_POSTGRES)");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .unwrap();
        let root = pg_admin_url().rsplit_once('/').unwrap().0.to_owned();
        Self {
            url: format!("{root}/{name}"),
            name,
        }
    }

    /// A new database for a test of the store suite.
    pub async fn create() -> Self {
        Self::create_named("a2a_store").await
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Dropped from a thread of its own: the test's runtime may be shutting down.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                if let Ok(mut admin) = sqlx::PgConnection::connect(&pg_admin_url()).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut admin)
                        .await;
                }
            });
        })
        .join();
    }
}
