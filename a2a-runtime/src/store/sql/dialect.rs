//! What the SQL stores leave to each database ([`Dialect`]), and names for the driver
//! capabilities their statements need.

use std::future::Future;

use sqlx::query::Query;
use sqlx::{Database, Decode, Encode, Pool, QueryBuilder, Transaction, Type};

use crate::store::Scope;
use crate::types::TaskId;

/// A database the SQL stores run on: its sqlx driver, and what its statements do differently.
///
/// Implemented by each store type (`SqliteStore`, `PostgresStore`). Every statement text is
/// shared (numbered `$n` parameters, which both drivers accept); what differs is here: how a
/// batch of writes begins, how other instances hear of it, and how the outbox claim locks the
/// rows it takes; and two driver details that generic code cannot reach (a statement's count of
/// changed rows, the lifetime of a built statement's arguments).
pub(in crate::store) trait Dialect: Send + Sync + 'static {
    /// The sqlx driver.
    type Db: Database;

    /// The statement of [`PushOutbox::claim`](crate::store::PushOutbox::claim): the shared text
    /// (`outbox::claim_statement`) with this database's row locking, made once.
    fn claim_statement() -> &'static str;

    /// The number of rows a statement changed (each driver reports it its own way).
    fn rows_affected(done: &<Self::Db as Database>::QueryResult) -> u64;

    /// `query`'s statement ([`QueryBuilder::build`]), its arguments typed for the borrow `'q`.
    ///
    /// `build` types them for the values' lifetime `'args`, which generic code can only run by
    /// borrowing the builder for all of `'args` (then the builder cannot be dropped); each
    /// driver's arguments shorten to `'q`, which only their concrete type shows.
    fn build<'q, 'args: 'q>(
        query: &'q mut QueryBuilder<'args, Self::Db>,
    ) -> Query<'q, Self::Db, <Self::Db as Database>::Arguments<'q>>;

    /// A statement counting the tables named `$1` where the connection's unqualified names
    /// find tables (`BIGINT`).
    const TABLE_EXISTS: &'static str;

    /// Holds, until `tx` ends, the lock that keeps two instances from migrating at once (none
    /// where [`begin_write`](Self::begin_write) already takes the database's write lock).
    fn lock_migrations(
        tx: &mut Transaction<'static, Self::Db>,
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send;

    /// Begins a transaction of batched writes.
    fn begin_write(
        pool: &Pool<Self::Db>,
    ) -> impl Future<Output = Result<Transaction<'static, Self::Db>, sqlx::Error>> + Send;

    /// Tells the other instances of the writes `changes` (scope, task id, new version) of `tx`,
    /// delivered if it commits.
    fn notify_written(
        tx: &mut Transaction<'static, Self::Db>,
        changes: &[(&Scope, &TaskId, u64)],
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send;
}

/// A value that the driver `DB` binds as a parameter of a statement borrowing it for `'q`.
pub(in crate::store) trait Param<'q, DB: Database>:
    'q + Encode<'q, DB> + Type<DB>
{
}

impl<'q, DB: Database, T: 'q + Encode<'q, DB> + Type<DB>> Param<'q, DB> for T {}

/// A column type that the driver `DB` reads back as this Rust type.
pub(in crate::store) trait Column<DB: Database>:
    for<'r> Decode<'r, DB> + Type<DB>
{
}

impl<DB: Database, T: for<'r> Decode<'r, DB> + Type<DB>> Column<DB> for T {}
