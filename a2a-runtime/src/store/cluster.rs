//! Many instances on one store: change notifications and leases of running executions.
//!
//! Instances that share a database serve any request for any task. What they need from the
//! store beyond [`TaskStore`](super::TaskStore):
//! - **changes**: a wake-up when any instance commits a task write, so that a stream on one
//!   instance follows a task whose agent runs on another (the event log stays the truth: a
//!   lost notification costs latency, never an event);
//! - **leases**: each running execution of an agent holds a lease that its instance renews;
//!   a lease past its expiry belongs to an instance that died, and exactly one other instance
//!   claims it and ends the task.

use std::time::Duration;

use futures::stream::BoxStream;

use super::{Scope, StoreError, TaskRef};
use crate::types::TaskId;

/// A committed task write, as a notification reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskChange {
    /// Task `id` of `scope` now has version `version`.
    Task {
        /// The task's scope.
        scope: Scope,
        /// The task.
        id: TaskId,
        /// Its version after the write.
        version: u64,
    },
    /// Some tasks changed, or notifications may have been lost (a reconnection): re-read every
    /// task followed.
    Unknown,
}

/// The lease of one running execution of an agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The instance running it.
    pub instance: String,
    /// The execution's number on that instance.
    pub execution: u64,
    /// The task's scope.
    pub scope: Scope,
    /// The task.
    pub task_id: TaskId,
}

/// What instances sharing a store coordinate through. Implemented by the PostgreSQL store
/// (notifications and leases) and the SQLite store (leases only: one instance per file).
#[async_trait::async_trait]
pub trait Cluster: Send + Sync + std::fmt::Debug + 'static {
    /// The task writes committed by any instance (this one included) from now on; `None`
    /// when the store has no notifications (then followers re-read on a timer only). The
    /// stream reports [`TaskChange::Unknown`] after it lost its connection and got it back.
    async fn changes(&self) -> Result<Option<BoxStream<'static, TaskChange>>, StoreError>;

    /// Records `lease`, valid for `ttl`.
    async fn acquire(&self, lease: &Lease, ttl: Duration) -> Result<(), StoreError>;

    /// Renews every lease of `instance` for `ttl`; returns how many it holds.
    async fn renew(&self, instance: &str, ttl: Duration) -> Result<u64, StoreError>;

    /// Removes `lease` (its execution returned).
    async fn release(&self, lease: &Lease) -> Result<(), StoreError>;

    /// Up to `limit` leases past their expiry, oldest first.
    async fn expired(&self, limit: usize) -> Result<Vec<Lease>, StoreError>;

    /// Takes an expired lease so as to end its task: true for exactly one caller (the others,
    /// and a lease renewed meanwhile, get false).
    async fn claim_expired(&self, lease: &Lease) -> Result<bool, StoreError>;

    /// Up to `limit` SUBMITTED or WORKING tasks, over all scopes, last written before
    /// `before_ms` (ms since the epoch) and named by no lease: no instance runs them (one died
    /// between the task's first write and its lease's, or an execution returned and left its
    /// task active). The default finds none.
    async fn unleased(&self, before_ms: i64, limit: usize) -> Result<Vec<TaskRef>, StoreError> {
        let _ = (before_ms, limit);
        Ok(Vec::new())
    }
}
