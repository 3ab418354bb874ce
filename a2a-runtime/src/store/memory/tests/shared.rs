//! The live task shared with the runtime that writes it, and lent to it for a change.
#![allow(clippy::unwrap_used)]

use super::log::Streamed;
use super::*;

/// The store's own `Arc` of the live task `id`, as the runtime that wrote it holds it.
fn shared_held(store: &InMemoryTaskStore, scope: &Scope, id: &str) -> Arc<Task> {
    match &store.lock()[scope].by_id[id].held {
        MemoryTask::Value(t) => Arc::clone(t),
        MemoryTask::Encoded(_) => panic!("{id} is held encoded"),
    }
}

async fn stored(store: &InMemoryTaskStore, scope: &Scope, id: &str) -> StoredTask {
    store.get(scope, &id.into()).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_live_task_its_runtime_writes_is_held_shared_and_changed_in_place_when_lent() {
    let store = InMemoryTaskStore::new();
    let scope = Scope::default();
    let mut live = Arc::new(task(1, TaskState::Working));
    let v = store
        .write_now(&scope, &live, None, Write::Create, None)
        .unwrap();
    assert!(Arc::ptr_eq(&shared_held(&store, &scope, "t001"), &live));
    let at = Arc::as_ptr(&live);
    let ask = |t: &mut Task| {
        t.status.state = TaskState::InputRequired;
        Ok::<_, ()>(7)
    };
    let lent = store.update_lent(&scope, &mut live, v, ask, |_| None);
    assert_eq!(lent.unwrap(), Ok((2, 7)));
    assert_eq!(Arc::as_ptr(&live), at, "changed in place, not on a copy");
    assert!(Arc::ptr_eq(&shared_held(&store, &scope, "t001"), &live));
    let got = stored(&store, &scope, "t001").await;
    assert_eq!(
        (got.task.status.state, got.version),
        (TaskState::InputRequired, 2)
    );

    // A reader holding the task keeps it as it was: the change is made on a copy.
    let reader = Arc::clone(&live);
    let work = |t: &mut Task| {
        t.status.state = TaskState::Working;
        Ok::<_, ()>(())
    };
    let lent = store.update_lent(&scope, &mut live, 2, work, |_| None);
    assert_eq!(lent.unwrap(), Ok((3, ())));
    assert_eq!(reader.status.state, TaskState::InputRequired);
    assert_eq!(live.status.state, TaskState::Working);
    assert_eq!(stored(&store, &scope, "t001").await.task, *live);

    // A refused change leaves the task held, as it was; a stale version is refused before
    // the change runs.
    let refused = store.update_lent(&scope, &mut live, 3, |_| Err::<(), _>("no"), |_| None);
    assert_eq!(refused.unwrap(), Err("no"));
    assert!(Arc::ptr_eq(&shared_held(&store, &scope, "t001"), &live));
    let got = stored(&store, &scope, "t001").await;
    assert_eq!((got.task, got.version), (Task::clone(&live), 3));
    let mut ran = false;
    let stale = store.update_lent(
        &scope,
        &mut live,
        2,
        |_| {
            ran = true;
            Ok::<_, ()>(())
        },
        |_| None,
    );
    assert!(
        matches!(
            stale,
            Err(StoreError::Conflict {
                expected: 2,
                found: 3,
                ..
            })
        ),
        "{stale:?}"
    );
    assert!(!ran);

    // Finished: held encoded, and the runtime's copy is its own again.
    let done = |t: &mut Task| {
        t.status.state = TaskState::Completed;
        Ok::<_, ()>(())
    };
    let lent = store.update_lent(&scope, &mut live, 3, done, |_| None);
    assert_eq!(lent.unwrap(), Ok((4, ())));
    assert!(matches!(
        store.lock()[&scope].by_id["t001"].held,
        MemoryTask::Encoded(_)
    ));
    assert_eq!(Arc::strong_count(&live), 1);
    let got = stored(&store, &scope, "t001").await;
    assert_eq!((got.task, got.version), (Task::clone(&live), 4));
}

#[tokio::test]
async fn a_lent_change_first_turns_the_chunks_the_log_reads_from_the_task_into_events() {
    let mut s = Streamed::new(5, true).await;
    s.send([s.chunk("a", "a0", false), s.chunk("a", "a1", true)]);
    s.assert_log(2, 0).await;
    // From here on the store shares its copy, as with the runtime that wrote it.
    let mut live = shared_held(&s.store, &s.scope, "t005");
    let replace = |t: &mut Task| {
        t.artifacts[0].parts = vec![Part::text("replaced")];
        Ok::<_, ()>(())
    };
    let lent = s
        .store
        .update_lent(&s.scope, &mut live, s.version, replace, |_| None);
    s.version = lent.unwrap().unwrap().0;
    s.live = Task::clone(&live);
    // The chunks were read from the task before it changed: the log holds them as events,
    // as they were delivered.
    s.assert_log(0, 0).await;
    assert_eq!(
        stored(&s.store, &s.scope, "t005").await.task.artifacts[0].parts,
        [Part::text("replaced")]
    );
}
