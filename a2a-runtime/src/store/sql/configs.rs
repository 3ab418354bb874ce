//! The push config statements of the SQL stores: [`PushConfigStore`](crate::store::PushConfigStore)
//! on a pool.

use sqlx::{ColumnIndex, Database, Executor, IntoArguments, Pool};

use super::codec::{backend, decode_config, encode_config};
use super::dialect::{Column, Dialect, Param};
use super::secrets::{Key, open, seal};
use crate::store::{Scope, StoreError, now_ms};
use crate::types::{PushConfigId, TaskId, TaskPushNotificationConfig};

/// The push configs of a SQL store of dialect `D`.
///
/// Each method is the [`PushConfigStore`](crate::store::PushConfigStore) method of the same
/// name.
pub(in crate::store) struct Configs<'s, D: Dialect> {
    pool: &'s Pool<D::Db>,
    /// The key webhook credentials are sealed with, if any.
    key: Option<&'s Key>,
}

impl<'s, D: Dialect> Configs<'s, D> {
    /// The push configs in `pool`, their credentials sealed with `key` when there is one.
    pub(in crate::store) fn new(pool: &'s Pool<D::Db>, key: Option<&'s Key>) -> Self {
        Self { pool, key }
    }
}

impl<D: Dialect> Configs<'_, D>
where
    for<'c> &'c mut <D::Db as Database>::Connection: Executor<'c, Database = D::Db>,
    for<'q> <D::Db as Database>::Arguments<'q>: IntoArguments<'q, D::Db>,
    usize: ColumnIndex<<D::Db as Database>::Row>,
    for<'q> &'q str: Param<'q, D::Db>,
    for<'q> String: Param<'q, D::Db>,
    for<'q> i64: Param<'q, D::Db>,
    String: Column<D::Db>,
{
    /// Inserts or replaces `config`.
    pub(in crate::store) async fn put(
        &self,
        scope: &Scope,
        config: &TaskPushNotificationConfig,
    ) -> Result<(), StoreError> {
        let body = match seal(self.key, scope, config)? {
            Some(sealed) => encode_config(&sealed)?,
            None => encode_config(config)?,
        };
        sqlx::query(
            "INSERT INTO a2a_push_configs (tenant, owner, task_id, id, created_ms, body) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (tenant, owner, task_id, id) DO UPDATE SET body = excluded.body",
        )
        .bind(scope.tenant.as_str())
        .bind(&*scope.owner)
        .bind(config.task_id.as_str())
        .bind(config.id.as_str())
        .bind(now_ms())
        .bind(body)
        .execute(self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    /// The config `id` of `task_id`.
    pub(in crate::store) async fn get(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        let body: Option<String> = sqlx::query_scalar(
            "SELECT body FROM a2a_push_configs \
             WHERE tenant = $1 AND owner = $2 AND task_id = $3 AND id = $4",
        )
        .bind(scope.tenant.as_str())
        .bind(&*scope.owner)
        .bind(task_id.as_str())
        .bind(id.as_str())
        .fetch_optional(self.pool)
        .await
        .map_err(backend)?;
        body.as_deref()
            .map(|b| open(self.key, scope, decode_config(b)?))
            .transpose()
    }

    /// The configs of `task_id`, oldest first.
    pub(in crate::store) async fn list(
        &self,
        scope: &Scope,
        task_id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        let bodies: Vec<String> = sqlx::query_scalar(
            "SELECT body FROM a2a_push_configs \
             WHERE tenant = $1 AND owner = $2 AND task_id = $3 ORDER BY ord",
        )
        .bind(scope.tenant.as_str())
        .bind(&*scope.owner)
        .bind(task_id.as_str())
        .fetch_all(self.pool)
        .await
        .map_err(backend)?;
        bodies
            .iter()
            .map(|b| open(self.key, scope, decode_config(b)?))
            .collect()
    }

    /// Removes the config `id` of `task_id`; returns whether it existed.
    pub(in crate::store) async fn delete(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "DELETE FROM a2a_push_configs \
             WHERE tenant = $1 AND owner = $2 AND task_id = $3 AND id = $4",
        )
        .bind(scope.tenant.as_str())
        .bind(&*scope.owner)
        .bind(task_id.as_str())
        .bind(id.as_str())
        .execute(self.pool)
        .await
        .map_err(backend)?;
        Ok(D::rows_affected(&done) > 0)
    }

    /// Removes every config of `task_id`.
    pub(in crate::store) async fn delete_all(
        &self,
        scope: &Scope,
        task_id: &TaskId,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM a2a_push_configs WHERE tenant = $1 AND owner = $2 AND task_id = $3",
        )
        .bind(scope.tenant.as_str())
        .bind(&*scope.owner)
        .bind(task_id.as_str())
        .execute(self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }
}
