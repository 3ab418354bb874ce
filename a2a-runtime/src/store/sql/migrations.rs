//! The SQL stores' schema migrations, recorded in a table of their own: `a2a_migrations`
//! (version, description, checksum, time applied), beside the store's tables.
//!
//! The application's own sqlx migrations keep `_sqlx_migrations` to themselves: sqlx's
//! migrator refuses a database that records versions it does not know, so two migrators
//! sharing that table fail each other. Releases before this one recorded the store's
//! migrations there; the first run of [`migrate`] carries those rows over (each row whose
//! version and checksum are one of ours), and drops `_sqlx_migrations` when nothing else is
//! left in it. An earlier release started on the database after that would migrate again from
//! the start and fail on the existing tables: upgrade every instance.
//!
//! A run is one transaction, under the database's write lock (SQLite) or an advisory lock
//! (PostgreSQL): instances starting together migrate once, and a migration that fails leaves
//! the database as it was. Versions recorded by a later release are left alone, so instances of
//! this release keep working on a database migrated ahead of a rollout.

use std::collections::HashMap;
use std::fmt::Write as _;

use sqlx::migrate::Migrator;
use sqlx::{ColumnIndex, Database, Executor, IntoArguments, Pool, Row as _};

use super::dialect::{Column, Dialect, Param};
use crate::store::{StoreError, now_ms};

/// The table of the store's applied migrations.
const TABLE: &str = "a2a_migrations";

/// The table of sqlx's migrator, where releases before this one recorded the store's.
const SQLX_TABLE: &str = "_sqlx_migrations";

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS a2a_migrations (\
     version BIGINT PRIMARY KEY, \
     description TEXT NOT NULL, \
     checksum TEXT NOT NULL, \
     installed_ms BIGINT NOT NULL)";

/// A migration's checksum as a column: lowercase hex (one type for both databases).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Brings the store's schema in `pool` up to date with `migrator` (see the module docs).
pub(in crate::store) async fn migrate<D: Dialect>(
    pool: &Pool<D::Db>,
    migrator: &Migrator,
) -> Result<(), StoreError>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> String: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    i64: Column<D::Db>,
    String: Column<D::Db>,
    Vec<u8>: Column<D::Db>,
{
    let failed = |e: sqlx::Error| StoreError::Backend(format!("migrating the store's schema: {e}"));
    let mut tx = D::begin_write(pool).await.map_err(failed)?;
    D::lock_migrations(&mut tx).await.map_err(failed)?;
    sqlx::query(CREATE_TABLE)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    let mut applied = recorded::<D>(&mut *tx).await.map_err(failed)?;
    if applied.is_empty()
        && table_exists::<D>(&mut *tx, SQLX_TABLE)
            .await
            .map_err(failed)?
    {
        carry_over::<D>(&mut *tx, migrator).await.map_err(failed)?;
        applied = recorded::<D>(&mut *tx).await.map_err(failed)?;
    }
    for m in migrator
        .iter()
        .filter(|m| m.migration_type.is_up_migration())
    {
        let checksum = hex(&m.checksum);
        match applied.get(&m.version) {
            Some(recorded) if *recorded == checksum => continue,
            Some(_) => {
                return Err(StoreError::Backend(format!(
                    "the store's migration {} ({}) was changed after it was applied to this database",
                    m.version, m.description
                )));
            }
            None => {}
        }
        tracing::info!(version = m.version, description = %m.description, "applying a store migration");
        sqlx::raw_sql(&m.sql).execute(&mut *tx).await.map_err(|e| {
            StoreError::Backend(format!(
                "applying the store's migration {} ({}): {e}",
                m.version, m.description
            ))
        })?;
        record::<D>(&mut *tx, m.version, &m.description, &checksum)
            .await
            .map_err(failed)?;
    }
    tx.commit().await.map_err(failed)
}

/// Checks that the database in `pool` holds every migration of `migrator` (a store opened
/// without migrating); the error says what to run otherwise.
pub(in crate::store) async fn verify<D: Dialect>(
    pool: &Pool<D::Db>,
    migrator: &Migrator,
) -> Result<(), StoreError>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    i64: Column<D::Db>,
    String: Column<D::Db>,
{
    let failed = |e: sqlx::Error| StoreError::Backend(format!("checking the store's schema: {e}"));
    let mut conn = pool.acquire().await.map_err(failed)?;
    let applied = if table_exists::<D>(&mut conn, TABLE).await.map_err(failed)? {
        recorded::<D>(&mut conn).await.map_err(failed)?
    } else {
        HashMap::new()
    };
    let missing: Vec<String> = migrator
        .iter()
        .filter(|m| m.migration_type.is_up_migration() && !applied.contains_key(&m.version))
        .map(|m| format!("{} ({})", m.version, m.description))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(StoreError::Backend(format!(
        "the database lacks the store's migrations {}: run the store's `migrate` (or open it \
         with migrations applied) first",
        missing.join(", ")
    )))
}

/// The recorded migrations: version → checksum.
async fn recorded<D: Dialect>(
    conn: &mut <D::Db as Database>::Connection,
) -> Result<HashMap<i64, String>, sqlx::Error>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    i64: Column<D::Db>,
    String: Column<D::Db>,
{
    let rows = sqlx::query("SELECT version, checksum FROM a2a_migrations")
        .fetch_all(&mut *conn)
        .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}

/// Whether the table `name` is where the connection's unqualified names find tables.
async fn table_exists<D: Dialect>(
    conn: &mut <D::Db as Database>::Connection,
    name: &str,
) -> Result<bool, sqlx::Error>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    i64: Column<D::Db>,
{
    let n: i64 = sqlx::query_scalar(D::TABLE_EXISTS)
        .bind(name)
        .fetch_one(&mut *conn)
        .await?;
    Ok(n > 0)
}

/// Records the migration `version` as applied.
async fn record<D: Dialect>(
    conn: &mut <D::Db as Database>::Connection,
    version: i64,
    description: &str,
    checksum: &str,
) -> Result<(), sqlx::Error>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    for<'q> String: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
{
    sqlx::query(
        "INSERT INTO a2a_migrations (version, description, checksum, installed_ms) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(version)
    .bind(description.to_owned())
    .bind(checksum.to_owned())
    .bind(now_ms())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Moves the store's rows of `_sqlx_migrations` (written by releases before this one) into
/// `a2a_migrations`; drops `_sqlx_migrations` when that leaves it empty.
async fn carry_over<D: Dialect>(
    conn: &mut <D::Db as Database>::Connection,
    migrator: &Migrator,
) -> Result<(), sqlx::Error>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> String: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    i64: Column<D::Db>,
    Vec<u8>: Column<D::Db>,
{
    let ours: HashMap<i64, &sqlx::migrate::Migration> = migrator
        .iter()
        .filter(|m| m.migration_type.is_up_migration())
        .map(|m| (m.version, m))
        .collect();
    let rows = sqlx::query("SELECT version, checksum FROM _sqlx_migrations WHERE success")
        .fetch_all(&mut *conn)
        .await?;
    let mut moved = 0_usize;
    for row in rows {
        let (version, checksum): (i64, Vec<u8>) = (row.try_get(0)?, row.try_get(1)?);
        let Some(m) = ours.get(&version).filter(|m| *m.checksum == *checksum) else {
            continue;
        };
        record::<D>(&mut *conn, version, &m.description, &hex(&checksum)).await?;
        sqlx::query("DELETE FROM _sqlx_migrations WHERE version = $1")
            .bind(version)
            .execute(&mut *conn)
            .await?;
        moved += 1;
    }
    if moved == 0 {
        return Ok(());
    }
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .fetch_one(&mut *conn)
        .await?;
    tracing::info!(
        moved,
        left,
        "moved the store's migration records from _sqlx_migrations to a2a_migrations"
    );
    if left == 0 {
        sqlx::query("DROP TABLE _sqlx_migrations")
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn checksums_are_lowercase_hex() {
        assert_eq!(super::hex(&[0x00, 0xab, 0x7f]), "00ab7f");
    }
}
