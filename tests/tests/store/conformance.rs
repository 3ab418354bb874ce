//! Everything a store must do, the same way for every store: versioned writes and reads, listing
//! with its totals, large tasks read back exactly; and clear errors for unknown store URLs.

use a2a_runtime::store::{self, ListCursor, Scope, StoreError, Stores, TaskQuery, TaskStore};
use a2a_runtime::types::{Artifact, Part, StreamResponse, Task, TaskState, Timestamp};
use a2a_tests::pg::PgDatabase;

use super::*;

/// Everything a store must do, the same way for every store.
pub(super) async fn conformance(stores: Stores) {
    let s = &*stores.tasks;
    let scope = Scope::new("tenant-a", "alice");
    let other = Scope::new("tenant-a", "bob");

    // Create, read back, and refuse a second create of the same id.
    let mut t1 = task("t1", "c1", TaskState::Submitted, 1_000);
    t1.artifacts
        .push(Artifact::new([Part::text("hello")]).with_id("a0"));
    let created = StreamResponse::Task(t1.clone());
    assert_eq!(s.create(&scope, &t1, Some(&created)).await.unwrap(), 1);
    let got = s.get(&scope, &t1.id).await.unwrap().unwrap();
    assert_eq!((got.task.clone(), got.version), (t1.clone(), 1));
    assert!(matches!(
        s.create(&scope, &t1, None).await,
        Err(StoreError::Exists(..))
    ));
    // Scoped: another owner sees nothing, and may use the same id.
    assert!(s.get(&other, &t1.id).await.unwrap().is_none());
    assert_eq!(s.list(&other, &query(10)).await.unwrap().total_size, 0);
    assert_eq!(s.create(&other, &t1, None).await.unwrap(), 1);
    assert!(s.delete(&other, &t1.id).await.unwrap());

    // Versioned updates with their events, logged with gapless sequence numbers.
    let mut expected = vec![(1, created)];
    let mut version = 1;
    for n in 0..5 {
        let ev = chunk_event(&t1, n);
        t1.status.timestamp = Timestamp::from_millis(1_000 + n as i64);
        version = s.update(&scope, &t1, version, Some(&ev)).await.unwrap();
        expected.push((version, ev));
    }
    assert_eq!(version, 6);
    let log = s.events_after(&scope, &t1.id, 0, 100).await.unwrap();
    let seqs: Vec<(u64, StreamResponse)> = log.into_iter().map(|e| (e.seq, e.event)).collect();
    assert_eq!(seqs, expected);
    // From the middle, with a limit.
    let tail = s.events_after(&scope, &t1.id, 3, 2).await.unwrap();
    assert_eq!(tail.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
    // Nothing after the last one; nothing for an unknown task.
    assert!(
        s.events_after(&scope, &t1.id, 6, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        s.events_after(&scope, &"nope".into(), 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        s.events_after(&other, &t1.id, 0, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // A stale writer fails and learns the version it lost against.
    match s.update(&scope, &t1, 2, None).await {
        Err(StoreError::Conflict {
            expected, found, ..
        }) => assert_eq!((expected, found), (2, 6)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.update(&scope, &task("ghost", "c", TaskState::Working, 1), 1, None)
            .await,
        Err(StoreError::Exists(..))
    ));
    // A write without an event leaves a hole: reading across it fails, never skips.
    t1.status.state = TaskState::Working;
    version = s.update(&scope, &t1, version, None).await.unwrap();
    let ev = status_event(&t1, TaskState::Working);
    version = s.update(&scope, &t1, version, Some(&ev)).await.unwrap();
    assert_eq!(version, 8);
    assert_eq!(
        s.events_after(&scope, &t1.id, 5, 10).await.unwrap().len(),
        1,
        "up to the hole"
    );
    assert!(matches!(
        s.events_after(&scope, &t1.id, 6, 10).await,
        Err(StoreError::EventsGone { after: 6, .. })
    ));

    // A cancel racing a completion: both read version 8; exactly one terminal state wins.
    let mut cancel = t1.clone();
    cancel.status.state = TaskState::Canceled;
    let mut done = t1.clone();
    done.status.state = TaskState::Completed;
    let (cancel_ev, done_ev) = (
        status_event(&cancel, TaskState::Canceled),
        status_event(&done, TaskState::Completed),
    );
    let (a, b) = tokio::join!(
        s.update(&scope, &cancel, 8, Some(&cancel_ev)),
        s.update(&scope, &done, 8, Some(&done_ev)),
    );
    assert!(
        a.is_ok() != b.is_ok(),
        "exactly one writer wins: {a:?} {b:?}"
    );
    let winner = if a.is_ok() {
        TaskState::Canceled
    } else {
        TaskState::Completed
    };
    let stored = s.get(&scope, &t1.id).await.unwrap().unwrap();
    assert_eq!((stored.task.status.state, stored.version), (winner, 9));
    let last = s.events_after(&scope, &t1.id, 8, 10).await.unwrap();
    assert_eq!(last.len(), 1);
    let winner_event = if a.is_ok() { &cancel_ev } else { &done_ev };
    assert_eq!(&last[0].event, winner_event);

    // Many writers on one version: one wins, the rest conflict.
    let racer = task("race", "c1", TaskState::Working, 500);
    s.create(&scope, &racer, None).await.unwrap();
    let wins = futures::future::join_all((0..8).map(|i| {
        let mut t = racer.clone();
        t.artifacts
            .push(Artifact::new([Part::text(format!("writer {i}"))]));
        let scope = scope.clone();
        let store = stores.tasks.clone();
        async move { store.update(&scope, &t, 1, None).await.is_ok() }
    }))
    .await;
    assert_eq!(wins.iter().filter(|w| **w).count(), 1);

    // Many creators of one id (their writes may share a transaction): one wins, the others
    // are told it exists, and the id is counted once.
    let twin = task("twin", "c1", TaskState::Submitted, 600);
    let made = futures::future::join_all((0..8).map(|_| {
        let (scope, store, twin) = (scope.clone(), stores.tasks.clone(), twin.clone());
        async move { store.create(&scope, &twin, None).await }
    }))
    .await;
    assert_eq!(made.iter().filter(|m| m.is_ok()).count(), 1, "{made:?}");
    assert!(
        made.iter()
            .all(|m| matches!(m, Ok(1) | Err(StoreError::Exists(..)))),
        "{made:?}"
    );
    assert!(s.delete(&scope, &twin.id).await.unwrap());

    // Listing: newest status timestamp first, keyset pages, filters, totals.
    for i in 0..25 {
        let state = if i % 3 == 0 {
            TaskState::Completed
        } else {
            TaskState::Working
        };
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        // Pairs share a timestamp: the id breaks the tie.
        s.create(
            &scope,
            &task(&format!("l{i:02}"), ctx, state, 10_000 + i / 2),
            None,
        )
        .await
        .unwrap();
    }
    let all = collect_pages(s, &scope, TaskQuery::default(), 4).await;
    assert_eq!(all.len(), 27);
    let positions: Vec<ListCursor> = all.iter().map(ListCursor::of).collect();
    let mut sorted = positions.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(positions, sorted, "newest first, id descending on ties");
    let first = s.list(&scope, &query(4)).await.unwrap();
    assert_eq!((first.tasks.len(), first.total_size), (4, 27));
    assert!(!first.next_page_token.is_empty());
    // Inserting a newer task does not disturb the next page.
    s.create(
        &scope,
        &task("newest", "odd", TaskState::Working, 99_999),
        None,
    )
    .await
    .unwrap();
    let second = s
        .list(
            &scope,
            &TaskQuery {
                page_token: Some(first.next_page_token.clone()),
                ..query(4)
            },
        )
        .await
        .unwrap();
    assert_eq!(second.tasks[0].id, all[4].id);
    // Filters.
    let odd = collect_pages(
        s,
        &scope,
        TaskQuery {
            context_id: Some("odd".into()),
            ..TaskQuery::default()
        },
        5,
    )
    .await;
    assert_eq!(odd.len(), 13);
    assert!(odd.iter().all(|t| t.context_id.as_str() == "odd"));
    let completed = s
        .list(
            &scope,
            &TaskQuery {
                state: Some(TaskState::Completed),
                ..query(100)
            },
        )
        .await
        .unwrap();
    let t1_completed = usize::from(winner == TaskState::Completed);
    assert_eq!(completed.total_size, 9 + t1_completed);
    let recent = s
        .list(
            &scope,
            &TaskQuery {
                status_timestamp_after: Timestamp::from_millis(10_010),
                ..query(100)
            },
        )
        .await
        .unwrap();
    assert_eq!(recent.total_size, 6);
    assert!(matches!(
        s.list(
            &scope,
            &TaskQuery {
                page_token: Some("not a token".into()),
                ..query(4)
            }
        )
        .await,
        Err(StoreError::InvalidPageToken)
    ));

    // Push configs: insert or replace, oldest first, scoped, and gone with their task.
    let p = &*stores.push_configs;
    p.put(&scope, &push_config("t1", "p1", "https://a.example/1"))
        .await
        .unwrap();
    p.put(&scope, &push_config("t1", "p2", "https://a.example/2"))
        .await
        .unwrap();
    p.put(&scope, &push_config("t1", "p1", "https://a.example/1b"))
        .await
        .unwrap();
    let configs = p.list(&scope, &"t1".into()).await.unwrap();
    let urls: Vec<&str> = configs.iter().map(|c| c.url.as_str()).collect();
    assert_eq!(urls, ["https://a.example/1b", "https://a.example/2"]);
    assert_eq!(
        p.get(&scope, &"t1".into(), &"p2".into())
            .await
            .unwrap()
            .unwrap()
            .url,
        "https://a.example/2"
    );
    assert!(
        p.get(&other, &"t1".into(), &"p2".into())
            .await
            .unwrap()
            .is_none()
    );
    assert!(p.delete(&scope, &"t1".into(), &"p2".into()).await.unwrap());
    assert!(!p.delete(&scope, &"t1".into(), &"p2".into()).await.unwrap());
    p.put(&scope, &push_config("race", "p", "https://a.example/r"))
        .await
        .unwrap();
    p.delete_all(&scope, &"race".into()).await.unwrap();
    assert!(p.list(&scope, &"race".into()).await.unwrap().is_empty());

    large_tasks(s, &scope).await;
    list_totals(s).await;

    // Delete: the task and its log are gone.
    assert!(s.delete(&scope, &t1.id).await.unwrap());
    assert!(!s.delete(&scope, &t1.id).await.unwrap());
    assert!(s.get(&scope, &t1.id).await.unwrap().is_none());
    assert!(
        s.events_after(&scope, &t1.id, 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// `totalSize` on every page of a listing: the kept count when it has no filter (so it follows
/// creations and deletions), else the count of its first page, carried by the page token and
/// reused only by a listing with the same filters.
async fn list_totals(s: &dyn TaskStore) {
    let scope = Scope::new("totals", "owner");
    for i in 0..10 {
        let (ctx, state) = match i {
            0..4 => ("a", TaskState::Completed),
            4..6 => ("a", TaskState::Working),
            _ => ("b", TaskState::Completed),
        };
        s.create(&scope, &task(&format!("n{i}"), ctx, state, 5_000 + i), None)
            .await
            .unwrap();
    }
    let in_a = TaskQuery {
        context_id: Some("a".into()),
        ..query(2)
    };
    let first = s.list(&scope, &in_a).await.unwrap();
    assert_eq!(first.total_size, 6);
    let unfiltered = s.list(&scope, &query(3)).await.unwrap();
    assert_eq!(unfiltered.total_size, 10);
    // A task created meanwhile: the unfiltered listing counts it at once, the filtered one's
    // later pages report the count of its first page, a new listing counts it.
    s.create(&scope, &task("n10", "a", TaskState::Working, 4_000), None)
        .await
        .unwrap();
    let next = |q: &TaskQuery, token: &str| TaskQuery {
        page_token: Some(token.to_owned()),
        ..q.clone()
    };
    let second = s
        .list(&scope, &next(&in_a, &first.next_page_token))
        .await
        .unwrap();
    assert_eq!((second.tasks.len(), second.total_size), (2, 6));
    assert_eq!(s.list(&scope, &in_a).await.unwrap().total_size, 7);
    let page = s
        .list(&scope, &next(&query(3), &unfiltered.next_page_token))
        .await
        .unwrap();
    assert_eq!(page.total_size, 11);
    assert!(s.delete(&scope, &"n10".into()).await.unwrap());
    let page = s
        .list(&scope, &next(&query(3), &unfiltered.next_page_token))
        .await
        .unwrap();
    assert_eq!(page.total_size, 10);
    // The token of context a's listing, given with other filters: counted afresh.
    let in_b = TaskQuery {
        context_id: Some("b".into()),
        ..query(2)
    };
    let b = s
        .list(&scope, &next(&in_b, &first.next_page_token))
        .await
        .unwrap();
    assert_eq!(b.total_size, 4);
    let working = TaskQuery {
        state: Some(TaskState::Working),
        ..query(1)
    };
    let w = s
        .list(&scope, &next(&working, &first.next_page_token))
        .await
        .unwrap();
    assert_eq!(w.total_size, 2);
    // Every page of a whole chain reports the same total, and the chain holds that many.
    for q in [in_a.clone(), in_b, working, query(4)] {
        let mut token = None;
        let mut seen = 0;
        loop {
            let page = s
                .list(
                    &scope,
                    &TaskQuery {
                        page_token: token.take(),
                        ..q.clone()
                    },
                )
                .await
                .unwrap();
            seen += page.tasks.len();
            let expected = if q.context_id.is_none() && q.state.is_none() {
                10
            } else {
                0
            };
            if expected != 0 {
                assert_eq!(page.total_size, expected, "{q:?}");
            }
            if page.next_page_token.is_empty() {
                assert_eq!(page.total_size, seen, "{q:?}");
                break;
            }
            token = Some(page.next_page_token);
        }
    }
    for i in 0..10 {
        assert!(s.delete(&scope, &format!("n{i}").into()).await.unwrap());
    }
    assert_eq!(s.list(&scope, &query(3)).await.unwrap().total_size, 0);
}

/// Stores `t` as its next version and checks that it reads back equal, alone and listed.
async fn write_and_check(s: &dyn TaskStore, scope: &Scope, t: &Task, version: &mut u64) {
    *version = s
        .update(scope, t, *version, Some(&status_event(t, t.status.state)))
        .await
        .unwrap();
    let got = s.get(scope, &t.id).await.unwrap().unwrap();
    assert_eq!(got.version, *version);
    assert!(got.task == *t, "read back differs at version {version}");
    let listed = s
        .list(
            scope,
            &TaskQuery {
                context_id: Some(t.context_id.clone()),
                ..query(10)
            },
        )
        .await
        .unwrap();
    assert_eq!(listed.tasks.len(), 1);
    assert!(listed.tasks[0] == *t, "listed differs at version {version}");
}

/// Large tasks (long histories, many artifact chunks, megabytes in all) read back exactly as
/// written through every kind of change: appended chunks, a replaced artifact, a trimmed,
/// replaced and emptied history, a shrunken task; a stale write still fails; a deleted large
/// task leaves nothing behind for a new task of the same id.
async fn large_tasks(s: &dyn TaskStore, scope: &Scope) {
    use a2a_runtime::types::{Message, Role};
    let message = |n: usize| Message {
        message_id: format!("m{n}").into(),
        ..Message::new(
            Role::User,
            [Part::text(filler(&format!("message {n}"), 1000))],
        )
    };
    let mut t = task("big", "c-big", TaskState::Working, 50_000);
    t.history = (0..40).map(message).collect();
    t.artifacts = vec![
        Artifact::new([Part::text(filler("a chunk 0", 1000))]).with_id("a"),
        Artifact::new([Part::text("b")]).with_id("b"),
    ];
    s.create(scope, &t, Some(&StreamResponse::Task(t.clone())))
        .await
        .unwrap();
    let got = s.get(scope, &t.id).await.unwrap().unwrap();
    assert!(got.task == t && got.version == 1);
    let mut version = 1;
    // Chunks appended one by one: the task grows to about a quarter of a megabyte.
    for n in 1..=200 {
        t.artifacts[0]
            .parts
            .push(Part::text(filler(&format!("a chunk {n}"), 1000)));
        if n % 50 == 0 {
            write_and_check(s, scope, &t, &mut version).await;
        } else {
            version = s
                .update(scope, &t, version, Some(&chunk_event(&t, n)))
                .await
                .unwrap();
        }
    }
    // One event adds a new artifact and changes the metadata of another.
    t.artifacts
        .push(Artifact::new([Part::text("c")]).with_id("c"));
    t.artifacts[1].name = "renamed".into();
    write_and_check(s, scope, &t, &mut version).await;
    // The long artifact replaced by a short one, in place.
    t.artifacts[0] = Artifact::new([Part::text("replaced")]).with_id("a");
    write_and_check(s, scope, &t, &mut version).await;
    // History: the 10 oldest trimmed and 3 appended; then one message changed in the middle.
    t.history.drain(..10);
    t.history.extend((40..43).map(message));
    write_and_check(s, scope, &t, &mut version).await;
    t.history[5].parts = vec![Part::text("edited")];
    write_and_check(s, scope, &t, &mut version).await;
    // History replaced by other messages, then by fewer, then emptied with the artifacts.
    t.history = (100..130).map(message).collect();
    write_and_check(s, scope, &t, &mut version).await;
    t.history.truncate(3);
    write_and_check(s, scope, &t, &mut version).await;
    t.history.clear();
    t.artifacts.clear();
    t.status.state = TaskState::Completed;
    write_and_check(s, scope, &t, &mut version).await;
    // And large again.
    t.history = (200..240).map(message).collect();
    write_and_check(s, scope, &t, &mut version).await;
    // A stale writer still fails.
    assert!(matches!(
        s.update(scope, &t, version - 1, None).await,
        Err(StoreError::Conflict { .. })
    ));
    assert_eq!(
        s.events_after(scope, &t.id, 0, 1000).await.unwrap().len() as u64,
        version
    );
    // Deleted, then created again small under the same id: nothing of the old one is left.
    assert!(s.delete(scope, &t.id).await.unwrap());
    let small = task("big", "c-big", TaskState::Submitted, 60_000);
    s.create(scope, &small, None).await.unwrap();
    assert_eq!(s.get(scope, &small.id).await.unwrap().unwrap().task, small);
    let mut v = 1;
    let mut grown = small.clone();
    grown.history = (300..330).map(message).collect();
    write_and_check(s, scope, &grown, &mut v).await;
    assert!(s.delete(scope, &small.id).await.unwrap());
}

async fn collect_pages(
    s: &dyn TaskStore,
    scope: &Scope,
    base: TaskQuery,
    size: usize,
) -> Vec<Task> {
    let mut out = Vec::new();
    let mut token = None;
    loop {
        let page = s
            .list(
                scope,
                &TaskQuery {
                    page_size: size,
                    page_token: token.take(),
                    ..base.clone()
                },
            )
            .await
            .unwrap();
        out.extend(page.tasks);
        if page.next_page_token.is_empty() {
            return out;
        }
        token = Some(page.next_page_token);
    }
}

#[tokio::test]
async fn memory_store_conforms() {
    conformance(store::connect("memory:").await.unwrap()).await;
}

#[tokio::test]
async fn sqlite_store_conforms() {
    let file = SqliteFile::new();
    let stores = store::connect(&file.url()).await.unwrap();
    assert!(
        stores.location.ends_with("nested/tasks.db"),
        "{}",
        stores.location
    );
    conformance(stores).await;
    // Reopened: the data and the schema are there (migrations run once).
    let again = store::connect(&file.url()).await.unwrap();
    let t = again
        .tasks
        .get(&Scope::new("tenant-a", "alice"), &"race".into())
        .await
        .unwrap();
    assert!(t.is_some());
}

#[tokio::test]
async fn postgres_store_conforms() {
    let db = PgDatabase::create().await;
    let stores = store::connect(&db.url).await.unwrap();
    conformance(stores).await;
}

#[tokio::test]
async fn unknown_and_bad_urls_are_clear_errors() {
    for url in ["mysql://x", "", "sqlite"] {
        let err = store::connect(url).await.unwrap_err().to_string();
        assert!(err.contains("store"), "{url}: {err}");
    }
    let err = store::connect("postgres://u:secret@127.0.0.1:1/none")
        .await
        .unwrap_err()
        .to_string();
    assert!(!err.contains("secret"), "{err}");
}
