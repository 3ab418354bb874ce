//! [`Retention`]: how long finished tasks are kept, and how long an interrupted task may wait
//! untouched, enforced by a background pass over any [`TaskStore`].
//!
//! Each pass purges at most [`Retention::batch`] finished tasks older than
//! [`Retention::finished_ttl`] (with their event logs, push configs and dead deliveries, in the
//! store); then, while more finished tasks are held than [`Retention::max_finished`] (over all
//! scopes) or [`Retention::max_finished_per_scope`] (in one tenant and owner), the oldest of
//! them, a batch at a time (at most [`MAX_BATCHES`] batches a pass); and ends at most a batch of
//! INPUT_REQUIRED or AUTH_REQUIRED tasks left untouched longer than
//! [`Retention::interrupted_ttl`]. A SQL store removes tasks in small transactions of their own,
//! so the writes of running tasks go on between them. An ended task moves to FAILED with an agent message saying
//! why, through the task lifecycle: its subscribers and push configs get the final status
//! update, GetTask returns it FAILED, and a message sent to it afterwards is answered
//! UnsupportedOperationError (a terminal task accepts no more messages; a follow-up starts a
//! new task in the same context).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use super::events::Registry;
use super::idempotency::Idempotency;
use super::lifecycle::HistoryPolicy;
use crate::error::A2aError;
use crate::store::{TaskRef, TaskStore};
use crate::types::{
    Message, Part, Role, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};

/// How long tasks are kept: finished ones by age and by count, interrupted ones untouched.
///
/// ```
/// use std::time::Duration;
/// use a2a_runtime::core::Retention;
/// let r = Retention { finished_ttl: Some(Duration::from_secs(7 * 86_400)), ..Retention::durable() };
/// assert_eq!(r.interrupted_ttl, Some(Duration::from_secs(7 * 86_400)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Finished (terminal) tasks are purged this long after their last write, with their event
    /// logs and push configs; `None` keeps them.
    pub finished_ttl: Option<Duration>,
    /// An INPUT_REQUIRED or AUTH_REQUIRED task untouched this long is ended (FAILED); `None`
    /// lets it wait for ever.
    pub interrupted_ttl: Option<Duration>,
    /// At most this many finished tasks are kept over all scopes, the newest (by last write);
    /// `None`: no bound. A durable store applies it; the in-memory store has its own cap.
    pub max_finished: Option<usize>,
    /// At most this many finished tasks are kept in each scope (tenant and owner), the newest
    /// (by status timestamp); `None`: no bound.
    pub max_finished_per_scope: Option<usize>,
    /// How often a pass runs.
    pub every: Duration,
    /// The most tasks one pass purges by age, the most it ends, and the size of each batch
    /// purged by count.
    pub batch: usize,
}

/// The most batches of finished tasks one pass purges by count.
pub const MAX_BATCHES: usize = 100;

impl Retention {
    /// The default with the in-memory store: interrupted tasks wait at most an hour; finished
    /// ones are bounded by the store's cap, not by age.
    pub fn in_memory() -> Self {
        Self {
            finished_ttl: None,
            interrupted_ttl: Some(Duration::from_secs(3_600)),
            max_finished: None,
            max_finished_per_scope: None,
            every: Duration::from_secs(60),
            batch: 1_000,
        }
    }

    /// The default with a durable store (SQLite, PostgreSQL): finished tasks are kept 30 days,
    /// and at most [`DURABLE_MAX_FINISHED`] of them (the newest); a pass every 5 s;
    /// interrupted tasks wait 7 days untouched (a client may come back after a restart), then
    /// end FAILED.
    pub fn durable() -> Self {
        Self {
            finished_ttl: Some(Duration::from_secs(30 * 86_400)),
            interrupted_ttl: Some(Duration::from_secs(7 * 86_400)),
            max_finished: Some(DURABLE_MAX_FINISHED),
            every: Duration::from_secs(5),
            ..Self::in_memory()
        }
    }

    /// Nothing is purged or ended.
    pub fn off() -> Self {
        Self {
            finished_ttl: None,
            interrupted_ttl: None,
            ..Self::in_memory()
        }
    }

    /// Whether a pass has anything to do.
    fn enforces(&self) -> bool {
        self.finished_ttl.is_some()
            || self.interrupted_ttl.is_some()
            || self.max_finished.is_some()
            || self.max_finished_per_scope.is_some()
    }
}

/// How many finished tasks [`Retention::durable`] keeps over all scopes: at the 3.4 KB a task
/// of the demo agent, about 340 MB of SQLite file.
pub const DURABLE_MAX_FINISHED: usize = 100_000;

/// What one retention pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Finished tasks purged.
    pub purged: usize,
    /// Interrupted tasks ended (FAILED) for being untouched too long.
    pub ended: usize,
}

/// What retention did since the handler was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetentionMetrics {
    /// Passes run.
    pub passes: u64,
    /// Finished tasks purged.
    pub purged: u64,
    /// Interrupted tasks ended.
    pub ended: u64,
    /// Passes that failed (the store's error is logged).
    pub errors: u64,
    /// Message claims of idempotent sends removed (past their window, or beyond the bound).
    pub claims_purged: u64,
}

/// Runs the passes of one handler.
#[derive(Debug)]
pub(crate) struct Sweeper {
    pub(crate) retention: Retention,
    /// Repeated sends recognised (`None`: off); its claims are purged by the passes.
    pub(crate) idempotency: Option<Idempotency>,
    store: Arc<dyn TaskStore>,
    registry: Arc<Registry>,
    policy: HistoryPolicy,
    started: AtomicBool,
    passes: AtomicU64,
    purged: AtomicU64,
    ended: AtomicU64,
    errors: AtomicU64,
    claims_purged: AtomicU64,
}

/// The states an untouched task is ended from.
const INTERRUPTED: [TaskState; 2] = [TaskState::InputRequired, TaskState::AuthRequired];

/// `now - ttl` as a timestamp (the epoch when `ttl` reaches back further).
fn before(now: SystemTime, ttl: Duration) -> Timestamp {
    let at = now.checked_sub(ttl).unwrap_or(SystemTime::UNIX_EPOCH);
    Timestamp(chrono::DateTime::<chrono::Utc>::from(at))
}

impl Sweeper {
    pub(crate) fn new(
        retention: Retention,
        idempotency: Option<Idempotency>,
        store: Arc<dyn TaskStore>,
        registry: Arc<Registry>,
        policy: HistoryPolicy,
    ) -> Self {
        Self {
            retention,
            idempotency,
            store,
            registry,
            policy,
            started: AtomicBool::new(false),
            passes: AtomicU64::new(0),
            purged: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            claims_purged: AtomicU64::new(0),
        }
    }

    pub(crate) fn metrics(&self) -> RetentionMetrics {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        RetentionMetrics {
            passes: get(&self.passes),
            purged: get(&self.purged),
            ended: get(&self.ended),
            errors: get(&self.errors),
            claims_purged: get(&self.claims_purged),
        }
    }

    /// Starts the periodic passes on the current tokio runtime, once (nothing outside one, or
    /// with nothing to enforce). They stop when the sweeper is dropped.
    pub(crate) fn ensure_started(self: &Arc<Self>) {
        if self.started.load(Ordering::Relaxed) {
            return;
        }
        let r = &self.retention;
        if !r.enforces() && self.idempotency.is_none() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let weak: Weak<Self> = Arc::downgrade(self);
        let every = r.every.max(Duration::from_millis(10));
        handle.spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(me) = weak.upgrade() else {
                    return;
                };
                let _ = me.sweep(SystemTime::now()).await;
            }
        });
    }

    /// One pass, as of `now`.
    pub(crate) async fn sweep(&self, now: SystemTime) -> Result<Swept, A2aError> {
        self.passes.fetch_add(1, Ordering::Relaxed);
        let result = self.pass(now).await;
        match &result {
            Ok(swept) => {
                self.purged
                    .fetch_add(swept.purged as u64, Ordering::Relaxed);
                self.ended.fetch_add(swept.ended as u64, Ordering::Relaxed);
                #[cfg(feature = "metrics")]
                {
                    metrics::counter!("a2a_retention_purged_total").increment(swept.purged as u64);
                    metrics::counter!("a2a_retention_ended_total").increment(swept.ended as u64);
                }
                if swept.purged > 0 || swept.ended > 0 {
                    tracing::info!(
                        purged = swept.purged,
                        ended = swept.ended,
                        "retention: purged finished tasks, ended untouched interrupted tasks"
                    );
                }
            }
            Err(e) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, "retention pass failed");
            }
        }
        result
    }

    async fn pass(&self, now: SystemTime) -> Result<Swept, A2aError> {
        let r = &self.retention;
        let mut swept = Swept::default();
        if let Some(ttl) = r.finished_ttl {
            swept.purged = self.store.purge_finished(before(now, ttl), r.batch).await?;
        }
        let bounds = [(r.max_finished, false), (r.max_finished_per_scope, true)];
        for (keep, per_scope) in bounds {
            let Some(keep) = keep else { continue };
            for _ in 0..MAX_BATCHES {
                let n = self
                    .store
                    .purge_finished_beyond(keep, per_scope, r.batch)
                    .await?;
                swept.purged += n;
                if n < r.batch {
                    break;
                }
                tokio::task::yield_now().await;
            }
        }
        if let Some(idem) = &self.idempotency {
            let n = self
                .store
                .purge_claims(before(now, idem.window), idem.max_claims, r.batch)
                .await?;
            self.claims_purged.fetch_add(n as u64, Ordering::Relaxed);
        }
        if let Some(ttl) = r.interrupted_ttl {
            let found = self
                .store
                .untouched(&INTERRUPTED, before(now, ttl), r.batch)
                .await?;
            for task in found {
                match self.end(&task, ttl).await {
                    Ok(true) => swept.ended += 1,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::debug!(task_id = %task.id, error = %e, "untouched task not ended")
                    }
                }
            }
        }
        Ok(swept)
    }

    /// Ends an untouched interrupted task, unless it moved since it was found.
    async fn end(&self, task: &TaskRef, ttl: Duration) -> Result<bool, A2aError> {
        let Some(rt) = self
            .registry
            .load(self.store.as_ref(), &task.scope, &task.id)
            .await?
        else {
            return Ok(false);
        };
        let text = format!(
            "no message arrived within {} s of the task's last change; the server ended it \
             (send a new message to start a new task in the same context)",
            ttl.as_secs()
        );
        let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.id.clone(),
            status: TaskStatus {
                state: TaskState::Failed,
                message: Some(Message {
                    message_id: crate::types::MessageId::random(),
                    role: Role::Agent,
                    parts: vec![Part::text(text)],
                    ..Message::default()
                }),
                timestamp: None,
            },
            ..TaskStatusUpdateEvent::default()
        });
        let ended = rt
            .publish_if_untouched(self.store.as_ref(), self.policy, task.version, event)
            .await;
        self.registry.release(&rt);
        ended
    }
}
