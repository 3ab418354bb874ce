//! [`Recovery`]: a task whose executor is gone never stays live.
//!
//! An execution of the agent owns its task while it runs. What shows that an owner is gone
//! depends on the store:
//! - **one instance per store** (the in-memory store; a SQLite file, which one process serves):
//!   the owner is an execution running in this process. Every SUBMITTED or WORKING task last
//!   written before this handler started was left by a process that died, and is taken over
//!   by the first pass (at startup); later, a task that is active while no execution of this
//!   process runs it (its execution returned and left it active) is taken over once it has gone
//!   [`Recovery::unowned_after`] without a write. A handler without a cluster assumes it is
//!   the store's only user: two processes on one SQLite file (or a PostgreSQL store served
//!   without [`with_cluster`](super::DefaultRequestHandler::with_cluster)) would take over
//!   each other's tasks.
//! - **many instances** (a [`Cluster`](crate::store::Cluster): PostgreSQL): each execution holds
//!   a lease its instance renews (see [`ClusterOptions`](super::ClusterOptions)); a lease past
//!   its expiry belongs to an instance that died or lost it, and exactly one instance claims it
//!   and takes the task over. An active task that no lease names (its instance died between the
//!   task's first write and its lease's) is taken over once it has gone
//!   [`Recovery::unowned_after`] without a write.
//!
//! A task taken over is handled by the [`RecoveryPolicy`]: by default it ends FAILED with an
//! agent message saying that the agent stopped before finishing. Its live subscribers (and a
//! client that resubscribes or resumes) get that final event and their streams end.
//!
//! Apart from owners, [`Recovery::idle_working`] bounds a hung agent: a SUBMITTED or WORKING
//! task whose agent published nothing for that long ends FAILED, and its execution is
//! canceled.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use super::cluster::Member;
use super::events::{Registry, Running, TaskRuntime};
use super::executor::{AgentContext, AgentInput, DynExecutor, EventSink, ExecutionEnd};
use super::lifecycle::HistoryPolicy;
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::protocol::Principal;
use crate::store::{Scope, TaskRef, TaskStore};
use crate::types::{
    Message, Metadata, Part, Role, StreamResponse, Task, TaskId, TaskState, TaskStatus,
    TaskStatusUpdateEvent, Timestamp,
};

/// What happens to a task whose executor is gone (see [`Recovery`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecoveryPolicy {
    /// The task ends FAILED with an agent message saying the agent stopped before finishing
    /// (the default).
    Fail,
    /// The agent is run again on the task as it stands (a resumable agent): a WORKING status
    /// update says so, then `execute` runs with [`AgentInput::recovered`] set, `task` holding
    /// the task and `message` the user message its turn began with. After `max_attempts`
    /// re-runs of one task (counted in its metadata under [`RECOVERY_METADATA`]) it fails
    /// instead.
    Rerun {
        /// How many times one task is run again at most.
        max_attempts: u32,
    },
    /// The task is left as it is (the agent or an operator deals with it); only
    /// [`Recovery::idle_working`] may still end it.
    Leave,
}

/// The task metadata key under which [`RecoveryPolicy::Rerun`] counts a task's re-runs:
/// `{"attempts": n}`.
pub const RECOVERY_METADATA: &str = "https://github.com/a2a-runtime/a2a-runtime/recovery";

/// How tasks whose executor is gone, or whose agent hangs, are found and handled: a pass
/// at startup and then every [`every`](Self::every), each handling at most
/// [`batch`](Self::batch) tasks of each kind.
///
/// A task whose executor is gone is taken over within: the first pass, on a store one
/// instance serves (memory, SQLite) when its process died; the lease TTL plus one pass, on a
/// cluster when its instance died; [`unowned_after`](Self::unowned_after) plus one pass when
/// its execution returned and left it active.
///
/// ```
/// use std::time::Duration;
/// use a2a_runtime::core::{Recovery, RecoveryPolicy};
/// let resumable = Recovery {
///     policy: RecoveryPolicy::Rerun { max_attempts: 3 },
///     idle_working: Some(Duration::from_secs(300)),
///     ..Recovery::default()
/// };
/// assert_eq!(resumable.every, Duration::from_secs(5));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// What happens to a task whose executor is gone (default [`RecoveryPolicy::Fail`]).
    pub policy: RecoveryPolicy,
    /// How long an active task with no executor may go without a write before it is taken
    /// over (default 30 s). The grace covers a lease not yet written on a cluster.
    pub unowned_after: Duration,
    /// A SUBMITTED or WORKING task whose agent published nothing for this long ends FAILED
    /// and its execution is canceled (default 15 minutes; `None`: no bound). An agent that
    /// works longer in silence should publish progress (a WORKING status update) now and
    /// then.
    pub idle_working: Option<Duration>,
    /// How often a pass runs (default 5 s; on a cluster at most
    /// [`ClusterOptions::check_every`](super::ClusterOptions::check_every)).
    pub every: Duration,
    /// The most tasks a pass handles of each kind (default 100).
    pub batch: usize,
}

impl Default for Recovery {
    fn default() -> Self {
        Self {
            policy: RecoveryPolicy::Fail,
            unowned_after: Duration::from_secs(30),
            idle_working: Some(Duration::from_secs(15 * 60)),
            every: Duration::from_secs(5),
            batch: 100,
        }
    }
}

impl Recovery {
    /// Nothing is taken over: tasks whose executor is gone are left, and no inactivity bound.
    pub fn off() -> Self {
        Self {
            policy: RecoveryPolicy::Leave,
            idle_working: None,
            ..Self::default()
        }
    }
}

/// What one recovery pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Tasks whose executor was gone, ended FAILED.
    pub failed: usize,
    /// Tasks whose executor was gone, run again ([`RecoveryPolicy::Rerun`]).
    pub rerun: usize,
    /// Tasks whose executor was gone, left ([`RecoveryPolicy::Leave`]).
    pub left: usize,
    /// Tasks of hung agents, ended FAILED ([`Recovery::idle_working`]).
    pub hung: usize,
}

/// What recovery did since the handler was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryMetrics {
    /// Passes run.
    pub passes: u64,
    /// Tasks ended FAILED because their executor was gone.
    pub failed: u64,
    /// Tasks run again.
    pub rerun: u64,
    /// Tasks of hung agents ended FAILED.
    pub hung: u64,
    /// Passes that failed (the store's error is logged).
    pub errors: u64,
}

/// Why a task is taken over.
#[derive(Clone, Copy, Debug)]
enum Cause {
    /// Its instance's lease expired.
    LeaseExpired,
    /// No execution runs it.
    Unowned,
}

/// The pass of one handler, and what it needs to run an agent again.
pub(crate) struct Recoverer {
    pub(crate) recovery: Recovery,
    pub(crate) executor: Arc<dyn DynExecutor>,
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) registry: Arc<Registry>,
    pub(crate) policy: HistoryPolicy,
    pub(crate) member: Option<Arc<Member>>,
    /// When this handler started serving: on a store one instance serves, an active task
    /// written before it was left by a process that died.
    pub(crate) boot: SystemTime,
    pub(crate) started: AtomicBool,
    pub(crate) counters: Counters,
}

/// [`RecoveryMetrics`] as they grow.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    passes: AtomicU64,
    failed: AtomicU64,
    rerun: AtomicU64,
    hung: AtomicU64,
    errors: AtomicU64,
}

impl std::fmt::Debug for Recoverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recoverer")
            .field("recovery", &self.recovery)
            .finish_non_exhaustive()
    }
}

/// `now - d` in ms since the epoch (0 when `d` reaches back further).
fn millis_before(now: SystemTime, d: Duration) -> i64 {
    let at = now.checked_sub(d).unwrap_or(SystemTime::UNIX_EPOCH);
    let ms = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The states a task with an executor is in.
const ACTIVE: [TaskState; 2] = [TaskState::Submitted, TaskState::Working];

/// A status update of `task` to `state` with an agent message, and `metadata`.
fn status_event(task: &Task, state: TaskState, text: String, metadata: Metadata) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: TaskStatus {
            state,
            message: Some(Message {
                role: Role::Agent,
                parts: vec![Part::text(text)],
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                ..Message::agent_text("")
            }),
            timestamp: None,
        },
        metadata,
    })
}

/// The number of times `task` was run again already.
fn attempts(task: &Task) -> u32 {
    task.metadata
        .get(RECOVERY_METADATA)
        .and_then(|v| v.get("attempts"))
        .and_then(serde_json::Value::as_u64)
        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

impl Recoverer {
    pub(crate) fn metrics(&self) -> RecoveryMetrics {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let c = &self.counters;
        RecoveryMetrics {
            passes: get(&c.passes),
            failed: get(&c.failed),
            rerun: get(&c.rerun),
            hung: get(&c.hung),
            errors: get(&c.errors),
        }
    }

    /// Starts the passes on the current tokio runtime, once: the first at once (startup), then
    /// one every [`Recovery::every`]. They stop when the recoverer is dropped.
    pub(crate) fn ensure_started(self: &Arc<Self>) {
        if self.started.load(Ordering::Relaxed) {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut every = self.recovery.every;
        if let Some(member) = &self.member {
            every = every.min(member.options.check_every);
        }
        let every = every.max(Duration::from_millis(10));
        let weak: Weak<Self> = Arc::downgrade(self);
        handle.spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(me) = weak.upgrade() else {
                    return;
                };
                let _ = me.pass(SystemTime::now()).await;
            }
        });
    }

    /// One pass, as of `now`.
    pub(crate) async fn pass(&self, now: SystemTime) -> Result<Recovered, A2aError> {
        let c = &self.counters;
        c.passes.fetch_add(1, Ordering::Relaxed);
        let result = self.run_pass(now).await;
        match &result {
            Ok(done) => {
                c.failed.fetch_add(done.failed as u64, Ordering::Relaxed);
                c.rerun.fetch_add(done.rerun as u64, Ordering::Relaxed);
                c.hung.fetch_add(done.hung as u64, Ordering::Relaxed);
                #[cfg(feature = "metrics")]
                {
                    metrics::counter!("a2a_recovery_failed_total").increment(done.failed as u64);
                    metrics::counter!("a2a_recovery_rerun_total").increment(done.rerun as u64);
                    metrics::counter!("a2a_recovery_hung_total").increment(done.hung as u64);
                }
                if done.failed + done.rerun + done.hung > 0 {
                    tracing::warn!(
                        failed = done.failed,
                        rerun = done.rerun,
                        hung = done.hung,
                        "recovery: took over tasks whose executor was gone or hung"
                    );
                }
            }
            Err(e) => {
                c.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %e, "recovery pass failed");
            }
        }
        result
    }

    async fn run_pass(&self, now: SystemTime) -> Result<Recovered, A2aError> {
        let r = &self.recovery;
        let mut done = Recovered::default();
        if let Some(member) = &self.member {
            for lease in member.cluster.expired(r.batch).await? {
                if !member.cluster.claim_expired(&lease).await? {
                    continue;
                }
                tracing::warn!(task_id = %lease.task_id, instance = %lease.instance, "the instance running this task stopped");
                self.take_over(
                    &lease.scope,
                    &lease.task_id,
                    None,
                    Cause::LeaseExpired,
                    &mut done,
                )
                .await;
            }
        }
        if r.policy != RecoveryPolicy::Leave {
            let grace = millis_before(now, r.unowned_after);
            let unowned = match &self.member {
                Some(member) => member.cluster.unleased(grace, r.batch).await?,
                None => {
                    // One instance serves the store: what was written before it started has
                    // no executor.
                    let boot = millis_before(self.boot, Duration::ZERO);
                    let before =
                        Timestamp::from_millis(grace.max(boot)).unwrap_or_else(Timestamp::now);
                    self.store.untouched(&ACTIVE, before, r.batch).await?
                }
            };
            for task in unowned {
                self.take_over(
                    &task.scope,
                    &task.id,
                    Some(task.version),
                    Cause::Unowned,
                    &mut done,
                )
                .await;
            }
        }
        if let Some(idle) = r.idle_working {
            let before =
                Timestamp::from_millis(millis_before(now, idle)).unwrap_or_else(Timestamp::now);
            for task in self.store.untouched(&ACTIVE, before, r.batch).await? {
                match self.end_hung(&task, idle).await {
                    Ok(true) => done.hung += 1,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::debug!(task_id = %task.id, error = %e, "hung task not ended")
                    }
                }
            }
        }
        Ok(done)
    }

    /// Takes over a task whose executor is gone (found at `version`, when known), by the
    /// policy.
    async fn take_over(
        &self,
        scope: &Scope,
        id: &TaskId,
        version: Option<u64>,
        cause: Cause,
        done: &mut Recovered,
    ) {
        let rt = match self.registry.load(self.store.as_ref(), scope, id).await {
            Ok(Some(rt)) => rt,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(task_id = %id, error = %e, "cannot load a task to recover");
                return;
            }
        };
        match self.handle(&rt, version, cause).await {
            Ok(Some(RecoveryPolicy::Fail)) => done.failed += 1,
            Ok(Some(RecoveryPolicy::Rerun { .. })) => done.rerun += 1,
            Ok(Some(RecoveryPolicy::Leave)) => done.left += 1,
            Ok(None) => {}
            Err(e) => tracing::debug!(task_id = %id, error = %e, "recovering a task raced"),
        }
        self.registry.release(&rt);
    }

    /// Applies the policy to `rt`; what was done, or `None` when the task moved on.
    async fn handle(
        &self,
        rt: &Arc<TaskRuntime>,
        version: Option<u64>,
        cause: Cause,
    ) -> Result<Option<RecoveryPolicy>, A2aError> {
        let Some((task, at)) = rt.versioned().await else {
            return Ok(None);
        };
        if version.is_some_and(|v| v != at) {
            return Ok(None);
        }
        let why = match cause {
            Cause::LeaseExpired => "the server instance running it stopped (its lease expired)",
            Cause::Unowned => {
                "no server process runs it any more (the server restarted, or its execution \
                 ended without a final state)"
            }
        };
        let fail = |extra: &str| {
            status_event(
                &task,
                TaskState::Failed,
                format!("The agent stopped before finishing: {why}{extra}."),
                Metadata::default(),
            )
        };
        let (policy, event, rerun) = match self.recovery.policy {
            RecoveryPolicy::Leave => return Ok(Some(RecoveryPolicy::Leave)),
            RecoveryPolicy::Fail => (RecoveryPolicy::Fail, fail(""), None),
            RecoveryPolicy::Rerun { max_attempts } => {
                let n = attempts(&task);
                let message = task
                    .history
                    .iter()
                    .rev()
                    .find(|m| m.role == Role::User)
                    .cloned();
                match message {
                    Some(message) if n < max_attempts => {
                        let mut metadata = Metadata::default();
                        metadata.insert(
                            RECOVERY_METADATA.to_owned(),
                            serde_json::json!({ "attempts": n + 1 }),
                        );
                        let event = status_event(
                            &task,
                            TaskState::Working,
                            format!(
                                "The agent stopped before finishing: {why}; the server runs it \
                                 again on the task as it stands (attempt {} of {max_attempts}).",
                                n + 1
                            ),
                            metadata,
                        );
                        let execution = self.registry.next_execution_id();
                        let token = CancellationToken::new();
                        (
                            RecoveryPolicy::Rerun { max_attempts },
                            event,
                            Some((execution, token, message)),
                        )
                    }
                    Some(_) => {
                        let extra = format!("; it was run again {n} times already");
                        (RecoveryPolicy::Fail, fail(&extra), None)
                    }
                    None => (
                        RecoveryPolicy::Fail,
                        fail("; no user message is left to run it again on"),
                        None,
                    ),
                }
            }
        };
        let registered = rerun.as_ref().map(|(x, t, _)| (*x, t.clone()));
        let taken = rt
            .take_over(
                self.store.as_ref(),
                self.policy,
                at,
                Running::Nothing,
                event,
                registered,
            )
            .await?;
        if !taken {
            return Ok(None);
        }
        if let Some((execution, token, message)) = rerun {
            let task = rt.snapshot().await.unwrap_or(task);
            self.run_again(rt, task, message, execution, token);
        }
        Ok(Some(policy))
    }

    /// Runs the agent again on `task` (its execution registered already).
    fn run_again(
        &self,
        rt: &Arc<TaskRuntime>,
        task: Task,
        message: Message,
        execution: u64,
        token: CancellationToken,
    ) {
        let owner = rt.scope.owner.as_ref();
        let principal = if owner == Principal::ANONYMOUS_ID {
            Principal::anonymous()
        } else {
            Principal::authenticated(owner)
        };
        let request = RequestContext {
            tenant: rt.scope.tenant.clone(),
            principal,
            ..RequestContext::v1()
        };
        let sink = EventSink {
            rt: rt.clone(),
            store: self.store.clone(),
            policy: self.policy,
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            extensions: Arc::default(),
        };
        let finish = ExecutionEnd {
            rt: rt.clone(),
            registry: self.registry.clone(),
            execution,
            store: self.store.clone(),
            policy: self.policy,
            extensions: Arc::default(),
        };
        let input = AgentInput {
            request: Arc::new(request),
            message,
            task: Some(task),
            configuration: None,
            metadata: Metadata::default(),
            recovered: true,
            cancel: token,
        };
        let mut run = self
            .executor
            .clone()
            .run_boxed(AgentContext::new(input), sink, finish);
        if let Some(member) = &self.member {
            run = member.hold(rt, execution, run);
        }
        tokio::spawn(run);
    }

    /// Ends the task of a hung agent (found at `task.version`), canceling its execution.
    async fn end_hung(&self, found: &TaskRef, idle: Duration) -> Result<bool, A2aError> {
        let Some(rt) = self
            .registry
            .load(self.store.as_ref(), &found.scope, &found.id)
            .await?
        else {
            return Ok(false);
        };
        let ended = match rt.versioned().await {
            Some((task, at)) if at == found.version => {
                let event = status_event(
                    &task,
                    TaskState::Failed,
                    format!(
                        "The agent stopped before finishing: it published nothing for {} s (the \
                         server's inactivity bound), so the server ended the task.",
                        idle.as_secs()
                    ),
                    Metadata::default(),
                );
                rt.take_over(
                    self.store.as_ref(),
                    self.policy,
                    at,
                    Running::Any,
                    event,
                    None,
                )
                .await
            }
            _ => Ok(false),
        };
        self.registry.release(&rt);
        ended
    }
}
