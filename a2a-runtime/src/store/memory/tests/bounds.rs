//! What bounds the store: the global cap, retention per scope and by age, and the bound on
//! the logs of finished tasks.
#![allow(clippy::unwrap_used)]

use super::*;

#[tokio::test]
async fn retention_keeps_the_newest_finished_tasks_and_every_live_one() {
    let store = InMemoryTaskStore::with_retention(3);
    let scope = Scope::new("", "me");
    store
        .create(&scope, &task(0, TaskState::Working), None)
        .await
        .unwrap();
    for i in 1..=6 {
        store
            .create(&scope, &task(i, TaskState::Completed), None)
            .await
            .unwrap();
    }
    // Six finished, three kept (the newest), the working one untouched.
    assert_eq!(store.len(), 4);
    for i in 1..=3 {
        assert!(
            store
                .get(&scope, &format!("t{i:03}").into())
                .await
                .unwrap()
                .is_none()
        );
    }
    assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
    // Finishing the live task (newest timestamp) evicts the oldest finished one.
    let mut done = task(7, TaskState::Completed);
    done.id = "t000".into();
    store.update(&scope, &done, 1, None).await.unwrap();
    assert_eq!(store.len(), 3);
    assert!(store.get(&scope, &"t004".into()).await.unwrap().is_none());
    assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
}

#[tokio::test]
async fn a_task_finishing_without_a_new_timestamp_still_counts_for_retention() {
    let store = InMemoryTaskStore::with_retention(1);
    let scope = Scope::new("", "me");
    // The oldest task, live, then finished with its status timestamp unchanged (or none).
    for timestamp in [Timestamp::from_millis(1_000), None] {
        let mut old = task(0, TaskState::Working);
        old.status.timestamp = timestamp;
        store.create(&scope, &old, None).await.unwrap();
        old.status.state = TaskState::Completed;
        store.update(&scope, &old, 1, None).await.unwrap();
        store
            .create(&scope, &task(1, TaskState::Completed), None)
            .await
            .unwrap();
        // Two finished, one kept: the one that finished first goes.
        assert_eq!(store.len(), 1, "{timestamp:?}");
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_none());
        store.delete(&scope, &"t001".into()).await.unwrap();
    }
    // A live task older than every finished one is kept, and the finished ones still go.
    store
        .create(&scope, &task(0, TaskState::Working), None)
        .await
        .unwrap();
    for i in 1..=3 {
        store
            .create(&scope, &task(i, TaskState::Completed), None)
            .await
            .unwrap();
    }
    assert_eq!(store.len(), 2);
    assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
    assert!(store.get(&scope, &"t003".into()).await.unwrap().is_some());
}

/// A push config for task `id`.
fn config(id: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        task_id: id.into(),
        id: "p".into(),
        url: "https://example.com/hook".into(),
        ..TaskPushNotificationConfig::default()
    }
}

#[tokio::test]
async fn the_global_cap_bounds_tasks_over_every_tenant_and_takes_push_configs_along() {
    let configs = Arc::new(InMemoryPushConfigStore::new());
    let store = InMemoryTaskStore::new()
        .with_max_tasks(100)
        .with_push_configs(configs.clone());
    // 1,000 finished tasks, each in a tenant of its own: no per-scope bound would bite.
    for i in 0..1_000 {
        let scope = Scope::new(format!("tenant-{i}"), "me");
        let t = task(i, TaskState::Completed);
        store.create(&scope, &t, None).await.unwrap();
        configs.put(&scope, &config(t.id.as_str())).await.unwrap();
    }
    assert_eq!(store.len(), 100);
    assert_eq!(store.evicted(), 900);
    {
        let tasks = store.lock();
        // Empty scopes do not linger.
        assert_eq!(tasks.scopes.len(), 100);
        assert_eq!(tasks.finished, 100);
        assert!(tasks.queue.len() <= 2 * 100 + 1024);
    }
    // The 100 that finished last are held, the others are gone with their push configs.
    for i in [0, 500, 899] {
        let scope = Scope::new(format!("tenant-{i}"), "me");
        let id = TaskId::from(format!("t{i:03}"));
        assert!(store.get(&scope, &id).await.unwrap().is_none());
        assert!(configs.list(&scope, &id).await.unwrap().is_empty(), "{i}");
    }
    for i in [900, 999] {
        let scope = Scope::new(format!("tenant-{i}"), "me");
        let id = TaskId::from(format!("t{i:03}"));
        assert!(store.get(&scope, &id).await.unwrap().is_some());
        assert_eq!(configs.list(&scope, &id).await.unwrap().len(), 1);
    }
    assert_eq!(configs.lock().len(), 100);
}

#[tokio::test]
async fn at_the_cap_live_tasks_are_kept_and_a_new_task_is_refused() {
    let store = InMemoryTaskStore::new().with_max_tasks(3);
    let scope = Scope::new("", "me");
    for i in 0..3 {
        store
            .create(&scope, &task(i, TaskState::InputRequired), None)
            .await
            .unwrap();
    }
    let refused = store
        .create(&scope, &task(3, TaskState::Working), None)
        .await;
    assert!(matches!(refused, Err(StoreError::Full(3))), "{refused:?}");
    let err = crate::error::A2aError::from(refused.unwrap_err());
    assert!(
        matches!(err, crate::error::A2aError::Unavailable(_)),
        "{err:?}"
    );
    // A duplicate id at the cap is still answered as a duplicate.
    assert!(matches!(
        store
            .create(&scope, &task(0, TaskState::Working), None)
            .await,
        Err(StoreError::Exists(..))
    ));
    // One finishes: the next new task evicts it, not a live one.
    let mut done = task(1, TaskState::Completed);
    done.status.timestamp = Timestamp::from_millis(9_000);
    store.update(&scope, &done, 1, None).await.unwrap();
    store
        .create(&scope, &task(4, TaskState::Working), None)
        .await
        .unwrap();
    assert_eq!(store.len(), 3);
    assert!(store.get(&scope, &done.id).await.unwrap().is_none());
    for i in [0, 2, 4] {
        let id = TaskId::from(format!("t{i:03}"));
        assert!(store.get(&scope, &id).await.unwrap().is_some(), "{i}");
    }
}

#[tokio::test]
async fn a_finished_task_written_again_is_evicted_by_its_last_write() {
    let store = InMemoryTaskStore::new().with_max_tasks(2);
    let scope = Scope::new("", "me");
    let mut first = task(0, TaskState::Completed);
    store.create(&scope, &first, None).await.unwrap();
    store
        .create(&scope, &task(1, TaskState::Completed), None)
        .await
        .unwrap();
    // t000 is written again (a metadata edit): it now counts as finished after t001.
    first.metadata.insert("k".into(), serde_json::json!(1));
    store.update(&scope, &first, 1, None).await.unwrap();
    store
        .create(&scope, &task(2, TaskState::Completed), None)
        .await
        .unwrap();
    assert!(store.get(&scope, &"t001".into()).await.unwrap().is_none());
    assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
}

#[tokio::test]
async fn retention_queries_find_old_tasks_by_state_and_purge_only_finished_ones() {
    let configs = Arc::new(InMemoryPushConfigStore::new());
    let store = InMemoryTaskStore::new().with_push_configs(configs.clone());
    let scope = Scope::new("t", "me");
    for (i, state) in [
        TaskState::Completed,
        TaskState::InputRequired,
        TaskState::AuthRequired,
        TaskState::Working,
        TaskState::Failed,
    ]
    .into_iter()
    .enumerate()
    {
        let t = task(i as i64, state);
        store.create(&scope, &t, None).await.unwrap();
        configs.put(&scope, &config(t.id.as_str())).await.unwrap();
    }
    let past = Timestamp::from_millis(now_ms() - 60_000).unwrap();
    let future = Timestamp::from_millis(now_ms() + 60_000).unwrap();
    let interrupted = [TaskState::InputRequired, TaskState::AuthRequired];
    assert!(
        store
            .untouched(&interrupted, past, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let found = store.untouched(&interrupted, future, 10).await.unwrap();
    let mut ids: Vec<_> = found.iter().map(|t| t.id.to_string()).collect();
    ids.sort();
    assert_eq!(ids, ["t001", "t002"]);
    assert!(found.iter().all(|t| t.version == 1 && t.scope == scope));
    assert_eq!(
        store
            .untouched(&interrupted, future, 1)
            .await
            .unwrap()
            .len(),
        1
    );

    assert_eq!(store.purge_finished(past, 10).await.unwrap(), 0);
    assert_eq!(store.purge_finished(future, 1).await.unwrap(), 1);
    assert_eq!(store.purge_finished(future, 10).await.unwrap(), 1);
    assert_eq!(store.purge_finished(future, 10).await.unwrap(), 0);
    assert_eq!(store.len(), 3);
    for id in ["t000", "t004"] {
        assert!(store.get(&scope, &id.into()).await.unwrap().is_none());
        assert!(configs.list(&scope, &id.into()).await.unwrap().is_empty());
    }
    assert_eq!(configs.lock().len(), 3);
    // Deleting a task takes its configs too.
    assert!(store.delete(&scope, &"t003".into()).await.unwrap());
    assert!(
        configs
            .list(&scope, &"t003".into())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.evicted(), 2);
}

/// Creates `t` in `store` and writes it `n` times in all, each write with its status as the
/// event, the last one leaving it `last`.
async fn written(
    store: &InMemoryTaskStore,
    scope: &Scope,
    t: &mut Task,
    n: usize,
    last: TaskState,
) {
    let status = |t: &Task| {
        StreamResponse::StatusUpdate(crate::types::TaskStatusUpdateEvent {
            task_id: t.id.clone(),
            context_id: t.context_id.clone(),
            status: t.status.clone(),
            metadata: Default::default(),
        })
    };
    let mut version = store.create(scope, t, Some(&status(t))).await.unwrap();
    for k in 1..n {
        if k + 1 == n {
            t.status.state = last;
        }
        version = store
            .update(scope, t, version, Some(&status(t)))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn the_logs_of_finished_tasks_hold_a_bounded_number_of_events() {
    let store = InMemoryTaskStore::new().with_finished_events(250);
    let scope = Scope::new("t", "me");
    let written = async |t: &mut Task, n: usize, last: TaskState| {
        written(&store, &scope, t, n, last).await;
    };
    // Five tasks of 100 events each, finished one after the other.
    for i in 0..5 {
        written(&mut task(i, TaskState::Working), 100, TaskState::Completed).await;
    }
    {
        let tasks = store.lock();
        assert!(tasks.log_events <= 250, "{}", tasks.log_events);
    }
    // The last two finished keep their logs; the first three lost theirs, not themselves.
    for i in 0..5 {
        let id = TaskId::from(format!("t{i:03}"));
        let events = store.events_after(&scope, &id, 0, 1_000).await;
        if i < 3 {
            assert!(
                matches!(events, Err(StoreError::EventsGone { .. })),
                "{i}: {events:?}"
            );
        } else {
            assert_eq!(events.unwrap().len(), 100, "{i}");
        }
        assert!(store.get(&scope, &id).await.unwrap().is_some());
    }
    // A live task's log is not bounded by it.
    let mut live = task(9, TaskState::Working);
    written(&mut live, 300, TaskState::Working).await;
    let events = store.events_after(&scope, &live.id, 0, 1_000).await;
    assert_eq!(events.unwrap().len(), 300);
}

#[tokio::test]
async fn by_default_the_task_that_finished_last_keeps_its_whole_log() {
    let store = InMemoryTaskStore::new();
    let scope = Scope::new("t", "me");
    // Two tasks finish, one after the other: the first with a full log.
    for (i, n) in [(0, DEFAULT_EVENTS_PER_TASK), (1, 10)] {
        let mut t = task(i, TaskState::Working);
        written(&store, &scope, &mut t, n, TaskState::Completed).await;
        let events = store.events_after(&scope, &t.id, 0, 2 * n).await.unwrap();
        assert_eq!(events.len(), n, "{i}");
        assert_eq!(events.last().map(|e| e.seq), Some(n as u64), "{i}");
    }
    // The second took the first one's place.
    let first = store.events_after(&scope, &"t000".into(), 0, 10).await;
    assert!(
        matches!(first, Err(StoreError::EventsGone { .. })),
        "{first:?}"
    );
}
