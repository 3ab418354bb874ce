//! [`Registry`]: the live tasks of a handler, keyed by scope and task id.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use super::listeners::Listen;
use super::runtime::{Listener, TaskRuntime};
use super::state::{PushTap, RuntimeState};
use crate::FastHash;
use crate::core::push::PushDispatcher;
use crate::error::A2aError;
use crate::store::{Scope, TaskStore};
use crate::types::{Task, TaskId};

/// The live runtimes: a set keyed by each runtime's own scope and task id, so that the key is
/// not a second copy of them.
type LiveMap = HashSet<Live, FastHash>;

/// A live runtime, hashed and compared by its scope and task id.
#[derive(Debug)]
struct Live(Arc<TaskRuntime>);

impl PartialEq for Live {
    fn eq(&self, other: &Self) -> bool {
        (self as &dyn KeyRef) == (other as &dyn KeyRef)
    }
}

impl Eq for Live {}

impl std::hash::Hash for Live {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self as &dyn KeyRef).hash(state);
    }
}

/// A task of a scope, as a live map key (a runtime, or a borrowed pair for lookups).
trait KeyRef {
    fn scope(&self) -> &Scope;
    fn id(&self) -> &TaskId;
}

impl KeyRef for Live {
    fn scope(&self) -> &Scope {
        &self.0.scope
    }
    fn id(&self) -> &TaskId {
        &self.0.id
    }
}

impl KeyRef for (&Scope, &TaskId) {
    fn scope(&self) -> &Scope {
        self.0
    }
    fn id(&self) -> &TaskId {
        self.1
    }
}

impl<'a> std::borrow::Borrow<dyn KeyRef + 'a> for Live {
    fn borrow(&self) -> &(dyn KeyRef + 'a) {
        self
    }
}

impl PartialEq for dyn KeyRef + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.scope() == other.scope() && self.id() == other.id()
    }
}

impl Eq for dyn KeyRef + '_ {}

impl std::hash::Hash for dyn KeyRef + '_ {
    /// The id only: a live task's id is a UUID the server made, unique across scopes, so
    /// hashing the scope too would only cost time (equality still compares both; the hasher is
    /// randomly seeded, so ids a client sends cannot be chosen to collide).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id().hash(state);
    }
}

/// The live runtimes, keyed by scope and task id.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    live: Mutex<LiveMap>,
    next_execution: AtomicU64,
    buffer: usize,
    push: Option<Arc<dyn PushDispatcher>>,
    /// Subscriber queues held by live tasks.
    queues: Arc<AtomicUsize>,
    /// Other instances write the store too (see [`Registry::follow_store`]).
    follows: AtomicBool,
}

impl Registry {
    pub(crate) fn new(buffer: usize) -> Self {
        Self {
            live: Mutex::default(),
            next_execution: AtomicU64::new(1),
            buffer,
            push: None,
            queues: Arc::default(),
            follows: AtomicBool::new(false),
        }
    }

    /// Other instances write the store too: a runtime loaded from the store re-reads it once
    /// it is live, so that a write committed between the read and the moment notifications
    /// reach it is not missed.
    pub(crate) fn follow_store(&self) {
        self.follows.store(true, Ordering::Relaxed);
    }

    /// Every task's events also go to `push`.
    pub(crate) fn with_push(mut self, push: Arc<dyn PushDispatcher>) -> Self {
        self.push = Some(push);
        self
    }

    /// The push tap of task `id` of `scope`, when push is on.
    fn tap(&self, scope: &Scope, id: &TaskId) -> Option<Box<PushTap>> {
        self.push.as_ref().map(|dispatcher| {
            Box::new(PushTap {
                dispatcher: dispatcher.clone(),
                scope: scope.clone(),
                id: id.clone(),
            })
        })
    }

    /// The number of subscriber queues held (for tests and metrics).
    pub(crate) fn queue_count(&self) -> usize {
        self.queues.load(Ordering::Relaxed)
    }

    /// Every live runtime.
    pub(crate) fn live_runtimes(&self) -> Vec<Arc<TaskRuntime>> {
        self.lock().iter().map(|l| l.0.clone()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LiveMap> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn next_execution_id(&self) -> u64 {
        self.next_execution.fetch_add(1, Ordering::Relaxed)
    }

    /// A runtime for a task that does not exist yet (created by the agent's first event), with
    /// `execution` running and its listener registered before anyone else can see it.
    pub(crate) fn create(
        &self,
        scope: Scope,
        template: Task,
        execution: u64,
        token: CancellationToken,
        listen: Listen,
    ) -> (Arc<TaskRuntime>, Listener) {
        let id = template.id.clone();
        let mut state = RuntimeState::new(None, 0, Some(template));
        state.push = self.tap(&scope, &id);
        state.running.push((execution, token));
        let receiving = state.register(listen, execution, self.buffer.max(1), &self.queues);
        let rt = Arc::new(TaskRuntime::new(
            scope,
            id,
            state,
            self.buffer,
            self.queues.clone(),
        ));
        rt.executions.store(1, Ordering::SeqCst);
        let listener = rt.attach(receiving);
        self.lock().replace(Live(rt.clone()));
        (rt, listener)
    }

    /// The runtime of an existing task, loading it from the store when it is not live.
    /// `None` when the task does not exist in `scope`.
    pub(crate) async fn load(
        &self,
        store: &dyn TaskStore,
        scope: &Scope,
        id: &TaskId,
    ) -> Result<Option<Arc<TaskRuntime>>, A2aError> {
        if let Some(live) = self.lock().get(&(scope, id) as &dyn KeyRef) {
            return Ok(Some(live.0.clone()));
        }
        let Some(stored) = store.get(scope, id).await? else {
            return Ok(None);
        };
        let mut state = RuntimeState::new(Some(stored.task), stored.version, None);
        state.push = self.tap(scope, id);
        let rt = Arc::new(TaskRuntime::new(
            scope.clone(),
            id.clone(),
            state,
            self.buffer,
            self.queues.clone(),
        ));
        {
            let mut live = self.lock();
            // Someone may have loaded it meanwhile: theirs wins.
            if let Some(existing) = live.get(&(scope, id) as &dyn KeyRef) {
                return Ok(Some(existing.0.clone()));
            }
            live.insert(Live(rt.clone()));
        }
        if self.follows.load(Ordering::Relaxed) {
            rt.catch_up(store, None).await?;
        }
        Ok(Some(rt))
    }

    /// Forgets a runtime that nobody uses any more (no execution, no subscriber): the store
    /// holds the task, and the runtime is rebuilt from it when needed.
    pub(crate) fn release(&self, rt: &Arc<TaskRuntime>) {
        if rt.executions.load(Ordering::SeqCst) == 0 && rt.listeners.load(Ordering::SeqCst) == 0 {
            let mut live = self.lock();
            let key = (&rt.scope, &rt.id);
            let key = &key as &dyn KeyRef;
            if live.get(key).is_some_and(|x| Arc::ptr_eq(&x.0, rt)) {
                live.remove(key);
            }
        }
    }

    /// The live runtime of task `id` of `scope`, if there is one.
    pub(crate) fn live(&self, scope: &Scope, id: &TaskId) -> Option<Arc<TaskRuntime>> {
        self.lock()
            .get(&(scope, id) as &dyn KeyRef)
            .map(|l| l.0.clone())
    }

    /// The number of live runtimes (for tests and metrics).
    pub(crate) fn live_count(&self) -> usize {
        self.lock().len()
    }
}
