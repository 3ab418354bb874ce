//! [`DefaultRequestHandler`]: what it holds and how it is configured.

use std::sync::Arc;

use super::super::cluster::{ClusterOptions, Member};
use super::super::events::Registry;
use super::super::executor::{AgentExecutor, DynExecutor};
use super::super::idempotency::Idempotency;
use super::super::lifecycle::HistoryPolicy;
use super::super::limits::Limits;
use super::super::push::PushDispatcher;
use super::super::recovery::{Recovered, Recoverer, Recovery, RecoveryMetrics};
use super::super::retention::{Retention, RetentionMetrics, Sweeper, Swept};
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::store::{Cluster, PushConfigStore, TaskStore};
use crate::types::{AgentCard, Task, TaskId};

/// The standard [`RequestHandler`](super::RequestHandler): runs an [`AgentExecutor`] and keeps
/// tasks in a [`TaskStore`].
pub struct DefaultRequestHandler {
    pub(super) executor: Arc<dyn DynExecutor>,
    pub(super) store: Arc<dyn TaskStore>,
    pub(super) push_store: Arc<dyn PushConfigStore>,
    pub(super) registry: Arc<Registry>,
    pub(super) card: Arc<AgentCard>,
    pub(super) extended_card: Option<Arc<AgentCard>>,
    pub(super) limits: Limits,
    /// Push notifications (`None`: off, and every push operation is refused).
    pub(super) push: Option<Arc<dyn PushDispatcher>>,
    /// Membership in a cluster of instances sharing the store (`None`: this instance alone).
    pub(super) cluster: Option<Arc<Member>>,
    /// Retention's passes.
    pub(super) sweeper: Arc<Sweeper>,
    /// How tasks whose executor is gone or hung are handled.
    pub(super) recovery: Recovery,
    /// Recovery's passes, made when they start (once every part they use is configured).
    pub(super) recoverer: std::sync::OnceLock<Arc<Recoverer>>,
}

impl std::fmt::Debug for DefaultRequestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DefaultRequestHandler")
            .field("store", &self.store)
            .field("push_store", &self.push_store)
            .field("card", &self.card.name)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl DefaultRequestHandler {
    /// A handler running `executor`, storing tasks in `store` and push configs in `push_store`,
    /// with the capabilities declared by `card`.
    pub fn new(
        executor: impl AgentExecutor,
        store: Arc<dyn TaskStore>,
        push_store: Arc<dyn PushConfigStore>,
        card: Arc<AgentCard>,
        limits: Limits,
    ) -> Self {
        let registry = Arc::new(Registry::new(limits.subscriber_buffer));
        let policy = HistoryPolicy {
            max_messages: limits.max_history_messages,
        };
        let retention = if store.is_durable() {
            Retention::durable()
        } else {
            Retention::in_memory()
        };
        let sweeper = Arc::new(Sweeper::new(
            retention,
            Some(Idempotency::default()),
            store.clone(),
            registry.clone(),
            policy,
        ));
        Self {
            executor: Arc::new(executor),
            store,
            push_store,
            registry,
            card,
            extended_card: None,
            limits,
            push: None,
            cluster: None,
            sweeper,
            recovery: Recovery::default(),
            recoverer: std::sync::OnceLock::new(),
        }
    }

    /// Serves the store together with other instances (see [`ClusterOptions`]): live tasks
    /// follow the writes of other instances (a stream here sees the events of an agent running
    /// there; a CancelTask served there reaches the agent running here), and every running
    /// execution holds a lease through `cluster`, so that the tasks of an instance that died
    /// are ended as FAILED by another. `cluster` is the store the tasks live in (the
    /// PostgreSQL store for many instances). Call inside a tokio runtime: it starts the
    /// background work, which stops when the handler is dropped.
    pub fn with_cluster(mut self, cluster: Arc<dyn Cluster>, options: ClusterOptions) -> Self {
        self.cluster = Some(Arc::new(Member::join(
            cluster,
            options,
            &self.registry,
            self.store.clone(),
        )));
        self.recoverer = std::sync::OnceLock::new();
        self
    }

    /// How tasks whose executor is gone (a process that died, an instance that lost its
    /// lease, an execution that returned and left its task active) and tasks of hung agents
    /// are found and handled (default [`Recovery::default`]: they end FAILED, saying why). The
    /// passes start with the first request served inside a tokio runtime (or with
    /// [`start_recovery`](Self::start_recovery)); the first one at once.
    pub fn with_recovery(mut self, recovery: Recovery) -> Self {
        self.recovery = recovery;
        self.recoverer = std::sync::OnceLock::new();
        self
    }

    /// The recovery in force.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// Starts recovery's passes now, when called inside a tokio runtime: the first at once
    /// (on a store one instance serves, it takes over every task a process that died left
    /// active), then one every [`Recovery::every`]. They stop when the handler is dropped.
    pub fn start_recovery(&self) {
        self.recoverer().ensure_started();
    }

    /// Runs one recovery pass as of `now` (the periodic passes call it with the current time).
    pub async fn recover(&self, now: std::time::SystemTime) -> Result<Recovered, A2aError> {
        self.recoverer().pass(now).await
    }

    /// What recovery did so far.
    pub fn recovery_metrics(&self) -> RecoveryMetrics {
        self.recoverer().metrics()
    }

    pub(super) fn recoverer(&self) -> &Arc<Recoverer> {
        self.recoverer.get_or_init(|| {
            Arc::new(Recoverer {
                recovery: self.recovery.clone(),
                executor: self.executor.clone(),
                store: self.store.clone(),
                registry: self.registry.clone(),
                policy: self.policy(),
                member: self.cluster.clone(),
                boot: std::time::SystemTime::now(),
                started: std::sync::atomic::AtomicBool::new(false),
                counters: Default::default(),
            })
        })
    }

    /// How long tasks are kept (default: [`Retention::durable`] with a durable store, see
    /// [`TaskStore::is_durable`], else [`Retention::in_memory`]). The passes start with the
    /// first request served inside a tokio runtime (or with
    /// [`start_retention`](Self::start_retention)).
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.sweeper = Arc::new(Sweeper::new(
            retention,
            self.sweeper.idempotency.clone(),
            self.store.clone(),
            self.registry.clone(),
            self.policy(),
        ));
        self
    }

    /// How repeated SendMessage requests (the same `messageId` from the same principal) are
    /// answered with the task the first one started, the agent running once (default:
    /// [`Idempotency::default`]); `None` turns it off. See [`Idempotency`].
    pub fn with_idempotency(mut self, idempotency: Option<Idempotency>) -> Self {
        self.sweeper = Arc::new(Sweeper::new(
            self.sweeper.retention.clone(),
            idempotency,
            self.store.clone(),
            self.registry.clone(),
            self.policy(),
        ));
        self
    }

    /// The idempotency in force (`None`: off).
    pub fn idempotency(&self) -> Option<&Idempotency> {
        self.sweeper.idempotency.as_ref()
    }

    /// The retention in force.
    pub fn retention(&self) -> &Retention {
        &self.sweeper.retention
    }

    /// Starts retention's periodic passes now, when called inside a tokio runtime (they also
    /// start with the first SendMessage). They stop when the handler is dropped.
    pub fn start_retention(&self) {
        self.sweeper.ensure_started();
    }

    /// Runs one retention pass as of `now` (the periodic passes call it with the current
    /// time): purges finished tasks older than the retention's `finished_ttl`, ends interrupted
    /// tasks untouched for longer than its `interrupted_ttl`; each at most `batch`.
    pub async fn sweep(&self, now: std::time::SystemTime) -> Result<Swept, A2aError> {
        self.sweeper.sweep(now).await
    }

    /// What retention did so far.
    pub fn retention_metrics(&self) -> RetentionMetrics {
        self.sweeper.metrics()
    }

    /// Enables push notifications: configs are checked by `push` and every task's events are
    /// handed to it. Without this, every push operation answers PushNotificationNotSupported.
    pub fn with_push(mut self, push: Arc<dyn PushDispatcher>) -> Self {
        self.registry =
            Arc::new(Registry::new(self.limits.subscriber_buffer).with_push(push.clone()));
        self.push = Some(push);
        self.recoverer = std::sync::OnceLock::new();
        let retention = self.sweeper.retention.clone();
        self.with_retention(retention)
    }

    /// Serves `card` as the extended agent card.
    pub fn with_extended_card(mut self, card: Arc<AgentCard>) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// The number of tasks with live state in memory (running, or with subscribers).
    pub fn live_tasks(&self) -> usize {
        self.registry.live_count()
    }

    /// The number of open stream subscriptions (SendStreamingMessage and SubscribeToTask
    /// streams whose client is still connected).
    pub fn subscribers(&self) -> usize {
        self.registry.queue_count()
    }

    pub(super) fn policy(&self) -> HistoryPolicy {
        HistoryPolicy {
            max_messages: self.limits.max_history_messages,
        }
    }

    pub(super) fn streaming(&self) -> bool {
        self.card.capabilities.streaming == Some(true)
    }

    pub(super) fn push_supported(&self) -> Result<&dyn PushDispatcher, A2aError> {
        match &self.push {
            Some(push) if self.card.capabilities.push_notifications == Some(true) => {
                Ok(push.as_ref())
            }
            _ => Err(A2aError::PushNotificationNotSupported),
        }
    }

    pub(super) async fn task_or_not_found(
        &self,
        ctx: &RequestContext,
        id: &TaskId,
    ) -> Result<Task, A2aError> {
        match self.store.get(&ctx.scope(), id).await? {
            Some(stored) => Ok(stored.task),
            None => Err(A2aError::TaskNotFound {
                task_id: id.to_string(),
            }),
        }
    }
}

/// Keeps the last `history_length` messages of the history; true when some were dropped.
pub(super) fn trim_history(task: &mut Task, history_length: Option<i32>) -> bool {
    let before = task.history.len();
    if let Some(n) = history_length {
        task.trim_history(usize::try_from(n).unwrap_or(0));
    }
    task.history.len() != before
}
