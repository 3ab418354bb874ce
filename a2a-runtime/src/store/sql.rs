//! What the SQLite and PostgreSQL stores share: the row encoding and the statements.
//!
//! Both keep the same tables (see `migrations/`):
//! - `a2a_tasks`: one row per task (tenant, owner, id, context, state, status timestamp,
//!   version, created and updated times) with the task's ProtoJSON, keyed by
//!   `(tenant, owner, id)`; listings are served by the index on
//!   `(tenant, owner, status_ms DESC, id DESC)`;
//! - `a2a_events`: the append-only event log, keyed by `(tenant, owner, task_id, seq)`;
//! - `a2a_push_configs`: push notification configs, keyed by `(tenant, owner, task_id, id)`;
//! - `a2a_task_items`: the messages, artifacts and parts of large tasks, one row each (see
//!   [`layout`](super::layout)), so that a long streamed task does not rewrite itself whole at
//!   every event;
//! - `a2a_push_outbox` and `a2a_push_dead`: the push outbox (see [`outbox`]);
//! - `a2a_message_claims`: which message started which task, for idempotent sends (see
//!   [`retention`]).
//!
//! Each statement is written once (numbered `$n` parameters, which both drivers accept), in
//! code generic over a [`Dialect`]: the store type, which says what differs by database. A
//! store implements the traits by handing each method to the view of the same name
//! ([`Tasks`], [`Configs`], [`Outbox`], [`Leases`]) over its pool.
//!
//! The files, each using only those above it: `codec` (values as columns), `dialect`,
//! `writes` (the batched writes of the write queue), `tasks`, `secrets` (push credentials
//! sealed at rest), `retention` (purges and the message claims of idempotent sends), `configs`,
//! `outbox`, `leases`; and `migrations` (the schema, recorded in `a2a_migrations`).

mod codec;
mod configs;
mod dialect;
mod leases;
mod migrations;
mod outbox;
mod retention;
mod secrets;
mod tasks;
mod writes;

pub(super) use codec::backend;
pub(super) use configs::Configs;
pub(super) use dialect::Dialect;
pub(super) use leases::Leases;
pub(super) use migrations::{migrate, verify};
#[cfg(test)]
pub(super) use outbox::CLAIM_DUE;
pub(super) use outbox::{DEFAULT_MAX_DEAD, Outbox, claim_statement};
pub(super) use retention::Retained;
pub(super) use secrets::Key;
pub(super) use tasks::Tasks;
pub(super) use writes::writer_for;

/// How a SQL store treats the database's schema when it opens.
///
/// The store's tables (all named `a2a_…`) and the record of its migrations (`a2a_migrations`)
/// live beside the application's own tables and its own sqlx migrations (`_sqlx_migrations`,
/// which the store never touches, except to carry over the rows earlier releases wrote
/// there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Migrations {
    /// Applies the migrations the database lacks, in one transaction (the default).
    /// Instances starting together migrate once.
    #[default]
    Apply,
    /// Applies none, and fails to open unless the database holds every migration of this
    /// release: for deployments that migrate before they roll out (the stores' `migrate`).
    /// A database migrated by a later release is accepted.
    Verify,
}
