//! Serving one store from many instances: following tasks written elsewhere, and leases.
//!
//! With a [`Cluster`] (see [`DefaultRequestHandler::with_cluster`](super::DefaultRequestHandler::with_cluster)):
//! - every live task on this instance (one with a stream, a waiting request or a running
//!   agent) follows the store: a change notification, or the poll every
//!   [`ClusterOptions::poll_every`] when notifications are lost, delivers the events another
//!   instance logged, in order and without gaps, and a task another instance ended (a
//!   CancelTask served there) cancels its agent here;
//! - every execution of the agent holds a lease renewed every third of
//!   [`ClusterOptions::lease_ttl`]; every [`ClusterOptions::check_every`] each instance's
//!   recovery pass looks for leases past their expiry (their instance died) and one of them
//!   takes such a task over by the [`Recovery`](super::Recovery) policy (by default it ends
//!   FAILED, saying why).

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::StreamExt as _;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::events::{Registry, TaskRuntime};
use crate::store::{Cluster, Lease, TaskChange, TaskStore};

/// How instances sharing a store coordinate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterOptions {
    /// How long a running execution's lease lasts without renewal (default 20 s); renewed
    /// every third of it. A task whose instance died is ended within this plus
    /// [`check_every`](Self::check_every).
    pub lease_ttl: Duration,
    /// How often each instance looks for expired leases (default 10 s): its recovery pass
    /// runs at the shorter of this and [`Recovery::every`](super::Recovery::every).
    pub check_every: Duration,
    /// How often live tasks re-read the store in case a notification was lost (default 2 s;
    /// the bound on the extra latency a lost notification costs).
    pub poll_every: Duration,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        Self {
            lease_ttl: Duration::from_secs(20),
            check_every: Duration::from_secs(10),
            poll_every: Duration::from_secs(2),
        }
    }
}

/// This instance's membership in a cluster.
pub(crate) struct Member {
    pub(crate) cluster: Arc<dyn Cluster>,
    /// This instance's id (random per handler).
    pub(crate) instance: String,
    pub(crate) options: ClusterOptions,
    /// Stops the background loops when the handler goes.
    _stop: tokio_util::sync::DropGuard,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member")
            .field("instance", &self.instance)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Member {
    /// Joins `cluster`: starts following the store and renewing leases (on the current tokio
    /// runtime; without one, nothing runs in the background and a warning
    /// says so).
    pub(crate) fn join(
        cluster: Arc<dyn Cluster>,
        options: ClusterOptions,
        registry: &Arc<Registry>,
        store: Arc<dyn TaskStore>,
    ) -> Self {
        let instance = uuid::Uuid::new_v4().to_string();
        registry.follow_store();
        let stop = CancellationToken::new();
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let ctx = Background {
                    cluster: cluster.clone(),
                    registry: Arc::downgrade(registry),
                    store,
                    instance: instance.clone(),
                    options: options.clone(),
                };
                handle.spawn(stop.clone().run_until_cancelled_owned(ctx.clone().follow()));
                handle.spawn(stop.clone().run_until_cancelled_owned(ctx.clone().poll()));
                handle.spawn(stop.clone().run_until_cancelled_owned(ctx.renew()));
            }
            Err(_) => tracing::warn!(
                "the cluster was joined outside a tokio runtime: tasks do not follow other instances"
            ),
        }
        Self {
            cluster,
            instance,
            options,
            _stop: stop.drop_guard(),
        }
    }

    /// `run` holding the lease of its execution while it runs.
    pub(crate) fn hold(
        &self,
        rt: &TaskRuntime,
        execution: u64,
        run: BoxFuture<'static, ()>,
    ) -> BoxFuture<'static, ()> {
        let lease = Lease {
            instance: self.instance.clone(),
            execution,
            scope: rt.scope.clone(),
            task_id: rt.id.clone(),
        };
        let cluster = self.cluster.clone();
        let ttl = self.options.lease_ttl;
        Box::pin(async move {
            // The lease is written while the execution starts rather than before: its write
            // joins the batch of the execution's first writes instead of costing a commit of
            // its own ahead of the agent. It is released only once written.
            let (acquired, ()) = tokio::join!(cluster.acquire(&lease, ttl), run);
            if let Err(e) = acquired {
                tracing::warn!(task_id = %lease.task_id, error = %e, "cannot record the lease of a running task");
            }
            if let Err(e) = cluster.release(&lease).await {
                tracing::warn!(task_id = %lease.task_id, error = %e, "cannot release the lease of a finished task");
            }
        })
    }
}

/// What the background loops share.
#[derive(Clone)]
struct Background {
    cluster: Arc<dyn Cluster>,
    registry: Weak<Registry>,
    store: Arc<dyn TaskStore>,
    instance: String,
    options: ClusterOptions,
}

impl Background {
    /// Catches every live task up with the store.
    async fn catch_up_all(&self) {
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        for rt in registry.live_runtimes() {
            catch_up(&rt, self.store.as_ref(), None).await;
        }
    }

    /// Follows the change notifications.
    async fn follow(self) {
        let mut changes = loop {
            match self.cluster.changes().await {
                Ok(Some(changes)) => break changes,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen to task changes; retrying");
                    tokio::time::sleep(self.options.poll_every).await;
                }
            }
        };
        while let Some(change) = changes.next().await {
            let Some(registry) = self.registry.upgrade() else {
                return;
            };
            match change {
                TaskChange::Task { scope, id, version } => {
                    if let Some(rt) = registry.live(&scope, &id) {
                        let store = self.store.clone();
                        // Off this loop: a slow read must not hold up other tasks' wake-ups.
                        tokio::spawn(async move {
                            catch_up(&rt, store.as_ref(), Some(version)).await;
                        });
                    }
                }
                TaskChange::Unknown => {
                    let this = self.clone();
                    tokio::spawn(async move { this.catch_up_all().await });
                }
            }
        }
    }

    /// Re-reads every live task now and then (lost notifications).
    async fn poll(self) {
        let mut tick = tokio::time::interval(self.options.poll_every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if self.registry.strong_count() == 0 {
                return;
            }
            self.catch_up_all().await;
        }
    }

    /// Renews this instance's leases.
    async fn renew(self) {
        let mut tick = tokio::time::interval(self.options.lease_ttl / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if self.registry.strong_count() == 0 {
                return;
            }
            if let Err(e) = self
                .cluster
                .renew(&self.instance, self.options.lease_ttl)
                .await
            {
                tracing::warn!(error = %e, "cannot renew the leases of running tasks");
            }
        }
    }
}

/// [`TaskRuntime::catch_up`], logging a failure.
async fn catch_up(rt: &TaskRuntime, store: &dyn TaskStore, version: Option<u64>) {
    if let Err(e) = rt.catch_up(store, version).await {
        tracing::warn!(task_id = %rt.id, error = %e, "cannot follow a task written by another instance");
    }
}
