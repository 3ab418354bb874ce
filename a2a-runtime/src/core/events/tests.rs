//! Tests of the live tasks: listeners, publishing through an immediate and an awaited store,
//! and the reply encoded once.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use super::reply::{reply_for, task_json};
use super::*;
use crate::core::lifecycle::HistoryPolicy;
use crate::error::A2aError;
use crate::extension::Negotiated;
use crate::store::{InMemoryTaskStore, Scope, TaskStore};
use crate::types::{
    Artifact, Message, Part, SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskId, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

const POLICY: HistoryPolicy = HistoryPolicy { max_messages: 100 };

fn runtime(buffer: usize) -> (Registry, Arc<TaskRuntime>, Scope) {
    let registry = Registry::new(buffer);
    let scope = Scope::new("", "me");
    let template = Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: TaskStatus::new(TaskState::Submitted),
        ..Task::default()
    };
    let (rt, _) = registry.create(
        scope.clone(),
        template,
        0,
        CancellationToken::new(),
        Listen::Nothing,
    );
    (registry, rt, scope)
}

fn chunk(i: usize) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: "t1".into(),
        context_id: "c1".into(),
        artifact: Artifact::new([Part::text(i.to_string())]).with_id("a"),
        append: i > 0,
        ..Default::default()
    })
}

fn status(state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t1".into(),
        context_id: "c1".into(),
        status: TaskStatus::new(state),
        ..Default::default()
    })
}

#[tokio::test]
async fn a_subscriber_that_falls_behind_gets_what_fit_then_lagged_and_the_agent_goes_on() {
    let (registry, rt, _) = runtime(3);
    rt.finish_execution(0, None).await;
    let store = InMemoryTaskStore::new();
    let ext = Negotiated::default();
    let (mut slow, mut fast) = {
        let mut st = rt.state.lock().await;
        (rt.subscribe(&mut st), rt.subscribe(&mut st))
    };
    let mut fast_seen = Vec::new();
    for i in 0..6 {
        let seq = rt.publish(&store, POLICY, &ext, chunk(i)).await.unwrap();
        // The fast subscriber keeps up.
        while let Ok(item) = fast.rx.try_recv() {
            if let BusItem::Event(ev) = item {
                fast_seen.push(ev.seq);
            }
        }
        assert_eq!(fast_seen.last(), Some(&seq));
    }
    // Sequence numbers: the created task (1, as it was before its first event), then one per
    // event.
    assert_eq!(fast_seen, vec![0, 1, 2, 3, 4, 5, 6]);
    let mut slow_items = Vec::new();
    while let Some(item) = slow.recv().await {
        slow_items.push(item);
    }
    assert_eq!(slow_items.len(), 4, "{slow_items:?}");
    assert!(matches!(slow_items[3], BusItem::Lagged));
    assert!(
        slow_items[..3]
            .iter()
            .all(|i| matches!(i, BusItem::Event(_)))
    );
    // The stored task has every chunk.
    let t = rt.snapshot().await.unwrap();
    assert_eq!(t.artifacts[0].parts.len(), 6);
    drop((slow, fast));
    assert_eq!(rt.listeners.load(Ordering::SeqCst), 0);
    registry.release(&rt);
    assert_eq!(registry.live_count(), 0);
}

#[tokio::test]
async fn a_waiter_gets_the_task_when_it_ends_and_refused_events_change_nothing() {
    let (_registry, rt, _) = runtime(8);
    let store = InMemoryTaskStore::new();
    let ext = Negotiated::default();
    let rx = {
        let mut st = rt.state.lock().await;
        rt.start_execution(&mut st, 7, CancellationToken::new());
        match rt.listen(
            &mut st,
            Listen::Wait {
                until_created: false,
            },
            7,
        ) {
            Listener::Wait(rx) => rx,
            other => panic!("{other:?}"),
        }
    };
    rt.publish(&store, POLICY, &ext, status(TaskState::Working))
        .await
        .unwrap();
    rt.publish(&store, POLICY, &ext, chunk(0)).await.unwrap();
    rt.publish(&store, POLICY, &ext, status(TaskState::Completed))
        .await
        .unwrap();
    // After the terminal state, nothing is accepted and the task stays as it was.
    let before = rt.snapshot().await.unwrap();
    assert!(rt.publish(&store, POLICY, &ext, chunk(1)).await.is_err());
    assert_eq!(rt.snapshot().await.unwrap(), before);
    match rx.await.unwrap() {
        WaitOutcome::Task(t, reply) => {
            assert_eq!(t.status.state, TaskState::Completed);
            assert_eq!(t.artifacts.len(), 1);
            // The result was encoded once, by the write that finished the task: exactly the
            // SendMessage result's JSON, and what the store holds.
            let expected = SendMessageResponse::Task(Task::clone(&t));
            let reply = reply.unwrap();
            assert_eq!(&reply[..], crate::json::writer::to_vec(&expected).unwrap());
            let stored = store.get(&rt.scope, &rt.id).await.unwrap().unwrap();
            assert_eq!(&stored.task, &*t);
        }
        other => panic!("{other:?}"),
    }
    rt.finish_execution(7, None).await;
}

#[tokio::test]
async fn a_reply_is_encoded_only_for_an_event_that_answers_a_waiter() {
    let (_registry, rt, _) = runtime(8);
    let task = Task {
        id: "t\"1".into(),
        history: vec![Message::default()],
        ..Task::default()
    };
    let result = crate::json::writer::to_vec(&SendMessageResponse::Task(task.clone())).unwrap();
    let none = Negotiated::default();
    let mut guard = rt.state.lock().await;
    let st = &mut *guard;
    assert!(reply_for(&st.waiters, &none, &status(TaskState::Completed), &task).is_none());
    rt.start_execution(st, 1, CancellationToken::new());
    let _wait = rt.listen(
        st,
        Listen::Wait {
            until_created: false,
        },
        1,
    );
    // A blocking SendMessage waits for a terminal or interrupted state; a direct message
    // answers it, but not with a task.
    assert!(reply_for(&st.waiters, &none, &chunk(0), &task).is_none());
    let message = StreamResponse::Message(Message::default());
    assert!(reply_for(&st.waiters, &none, &message, &task).is_none());
    for state in [TaskState::Completed, TaskState::InputRequired] {
        let reply = reply_for(&st.waiters, &none, &status(state), &task).unwrap();
        assert_eq!(reply, result);
        let json = crate::json::writer::to_vec(&task).unwrap();
        assert_eq!(task_json(&reply), Some(&json[..]));
    }
    // `returnImmediately` on a new task: any task event answers it.
    let _created = rt.listen(
        st,
        Listen::Wait {
            until_created: true,
        },
        1,
    );
    assert_eq!(
        reply_for(&st.waiters, &none, &chunk(0), &task),
        Some(result.clone())
    );
    // Response hooks may change the result: it is encoded after them, not here.
    let hooked = Negotiated::hooking_responses();
    let done = status(TaskState::Completed);
    assert!(reply_for(&st.waiters, &hooked, &done, &task).is_none());
    // Hooks that only read it do not change it: encoded here, once.
    let observed = Negotiated::observing_responses();
    let reply = reply_for(&st.waiters, &observed, &done, &task).unwrap();
    assert_eq!(reply, result);
}

#[tokio::test]
async fn a_waiter_gets_the_agents_error_when_it_fails_before_any_event() {
    let (_registry, rt, _) = runtime(8);
    let rx = {
        let mut st = rt.state.lock().await;
        rt.start_execution(&mut st, 1, CancellationToken::new());
        match rt.listen(
            &mut st,
            Listen::Wait {
                until_created: true,
            },
            1,
        ) {
            Listener::Wait(rx) => rx,
            other => panic!("{other:?}"),
        }
    };
    rt.finish_execution(1, Some(A2aError::Internal("boom".into())))
        .await;
    assert!(matches!(rx.await.unwrap(), WaitOutcome::Failed(A2aError::Internal(m)) if m == "boom"));
}

/// The in-memory store behind the async trait methods only (as a database store would be):
/// every write suspends once and the runtime awaits it. `fail_next_update` makes the next
/// update lose against a concurrent writer.
#[derive(Debug, Default)]
struct AwaitedStore {
    inner: InMemoryTaskStore,
    fail_next_update: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl TaskStore for AwaitedStore {
    async fn get(
        &self,
        scope: &Scope,
        id: &TaskId,
    ) -> Result<Option<crate::store::StoredTask>, crate::store::StoreError> {
        self.inner.get(scope, id).await
    }
    async fn create(
        &self,
        scope: &Scope,
        task: &Task,
        event: Option<&StreamResponse>,
    ) -> Result<u64, crate::store::StoreError> {
        tokio::task::yield_now().await;
        self.inner.create(scope, task, event).await
    }
    async fn update(
        &self,
        scope: &Scope,
        task: &Task,
        expected_version: u64,
        event: Option<&StreamResponse>,
    ) -> Result<u64, crate::store::StoreError> {
        tokio::task::yield_now().await;
        if self.fail_next_update.swap(false, Ordering::SeqCst) {
            return Err(crate::store::StoreError::Conflict {
                task_id: task.id.clone(),
                expected: expected_version,
                found: expected_version + 1,
            });
        }
        self.inner
            .update(scope, task, expected_version, event)
            .await
    }
    async fn events_after(
        &self,
        scope: &Scope,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<SeqEvent>, crate::store::StoreError> {
        self.inner.events_after(scope, id, after, limit).await
    }
    async fn list(
        &self,
        scope: &Scope,
        query: &crate::store::TaskQuery,
    ) -> Result<crate::store::TaskPage, crate::store::StoreError> {
        self.inner.list(scope, query).await
    }
    async fn delete(&self, scope: &Scope, id: &TaskId) -> Result<bool, crate::store::StoreError> {
        self.inner.delete(scope, id).await
    }
}

/// The sequence numbers a subscription has received so far.
fn received(sub: &mut Subscription) -> Vec<u64> {
    let mut seqs = Vec::new();
    while let Ok(item) = sub.rx.try_recv() {
        if let BusItem::Event(ev) = item {
            seqs.push(ev.seq);
        }
    }
    seqs
}

#[tokio::test]
async fn an_awaited_store_gets_the_same_events_and_a_refused_write_reloads_the_task() {
    let (_registry, rt, scope) = runtime(16);
    let store = AwaitedStore::default();
    let ext = Negotiated::default();
    let mut sub = {
        let mut st = rt.state.lock().await;
        rt.subscribe(&mut st)
    };
    assert_eq!(rt.publish(&store, POLICY, &ext, chunk(0)).await.unwrap(), 1);
    assert_eq!(rt.publish(&store, POLICY, &ext, chunk(1)).await.unwrap(), 2);
    assert_eq!(received(&mut sub), vec![0, 1, 2]);
    let stored = store.get(&scope, &"t1".into()).await.unwrap().unwrap();
    assert_eq!(
        (stored.version, stored.task.artifacts[0].parts.len()),
        (2, 2)
    );
    // A write that loses: the event is refused, the live task is the stored one again, and
    // nobody hears of the event.
    store.fail_next_update.store(true, Ordering::SeqCst);
    let refused = rt.publish(&store, POLICY, &ext, status(TaskState::Completed));
    assert!(refused.await.is_err());
    assert_eq!(rt.snapshot().await.unwrap(), stored.task);
    assert_eq!(received(&mut sub), Vec::<u64>::new());
    // The next event goes through.
    let seq = rt.publish(&store, POLICY, &ext, status(TaskState::Completed));
    assert_eq!(seq.await.unwrap(), 3);
    assert_eq!(received(&mut sub), vec![3]);
    let stored = store.get(&scope, &"t1".into()).await.unwrap().unwrap();
    assert_eq!(stored.task.status.state, TaskState::Completed);
}

#[tokio::test]
async fn an_event_published_while_the_task_is_locked_waits_for_the_lock() {
    let (_registry, rt, _) = runtime(8);
    let store = InMemoryTaskStore::new();
    let ext = Negotiated::default();
    let guard = rt.state.lock().await;
    let mut publish = std::pin::pin!(rt.publish(&store, POLICY, &ext, chunk(0)));
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    assert!(publish.as_mut().poll(&mut cx).is_pending());
    assert!(guard.task.is_none(), "nothing applied while locked");
    drop(guard);
    assert_eq!(publish.await.unwrap(), 1);
    assert_eq!(rt.snapshot().await.unwrap().artifacts.len(), 1);
}

#[tokio::test]
async fn a_write_the_in_memory_store_refuses_reloads_the_task_from_it() {
    let (_registry, rt, scope) = runtime(8);
    let store = InMemoryTaskStore::new();
    let ext = Negotiated::default();
    rt.publish(&store, POLICY, &ext, chunk(0)).await.unwrap();
    // Another writer changes the stored task behind the runtime's back.
    let mut theirs = store.get(&scope, &"t1".into()).await.unwrap().unwrap().task;
    theirs.status = TaskStatus::new(TaskState::Working);
    assert_eq!(store.update(&scope, &theirs, 1, None).await.unwrap(), 2);
    let refused = rt.publish(&store, POLICY, &ext, chunk(1)).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(rt.snapshot().await.unwrap(), theirs);
    assert_eq!(rt.publish(&store, POLICY, &ext, chunk(1)).await.unwrap(), 3);
}
