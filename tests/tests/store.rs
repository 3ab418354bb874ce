//! The store conformance suite, run against every store: memory, SQLite (a real file) and
//! PostgreSQL (the machine's server; each test creates its own database and drops it). A
//! missing PostgreSQL fails these tests, it never skips them.
//!
//! Also: ListTasks keyset paging is served from an index (EXPLAIN on 100,000 tasks of one
//! owner shows an index scan and no sort), with its p99 latency.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use a2a_runtime::store::{
    self, Delivery, InMemoryPushOutbox, ListCursor, NewDelivery, PostgresStore, PushOutbox, Scope,
    SqliteStore, StoreError, Stores, TaskQuery, TaskStore,
};
use a2a_runtime::types::{
    Artifact, Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig,
    TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};

use a2a_runtime::test::agent_card;
use a2a_tests::pg::PgDatabase;
use serde_json::{Value, json};

static NEXT_DB: AtomicU64 = AtomicU64::new(0);

/// A SQLite file in a directory of its own (removed when the test ends).
struct SqliteFile {
    dir: std::path::PathBuf,
}

impl SqliteFile {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "a2a-store-{}-{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Self { dir }
    }

    /// The URL of a database file in a directory that does not exist yet.
    fn url(&self) -> String {
        format!("sqlite://{}/nested/tasks.db", self.dir.display())
    }
}

impl Drop for SqliteFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn task(id: &str, context: &str, state: TaskState, millis: i64) -> Task {
    Task {
        id: id.into(),
        context_id: context.into(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Timestamp::from_millis(millis),
        },
        ..Task::default()
    }
}

fn status_event(t: &Task, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone(),
        status: TaskStatus::new(state),
        ..Default::default()
    })
}

fn chunk_event(t: &Task, n: usize) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone(),
        artifact: Artifact::new([Part::text(format!("chunk {n}"))]).with_id("a"),
        append: n > 0,
        ..Default::default()
    })
}

fn push_config(task_id: &str, id: &str, url: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        id: id.into(),
        task_id: task_id.into(),
        url: url.into(),
        ..Default::default()
    }
}

/// Everything a store must do, the same way for every store.
async fn conformance(stores: Stores) {
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

/// A text of about `n` bytes, distinct per `tag`.
fn filler(tag: &str, n: usize) -> String {
    format!("{tag} {}", "x".repeat(n))
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

fn query(page_size: usize) -> TaskQuery {
    TaskQuery {
        page_size,
        ..TaskQuery::default()
    }
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

/// The SQLite store's WAL is bounded (64 MiB, then it starts over): 20,000 task writes of
/// about 2 KiB, each committed alone, write several times that.
#[tokio::test]
async fn sqlite_checkpoints_keep_the_wal_small() {
    let file = SqliteFile::new();
    let store = store::SqliteStore::open(&file.url()).await.unwrap();
    let scope = Scope::new("wal", "owner");
    for i in 0..20_000 {
        let mut t = task(&format!("w{i}"), "c", TaskState::Completed, i);
        t.artifacts
            .push(Artifact::new([Part::text(filler("w", 2_000))]).with_id("a"));
        store.create(&scope, &t, None).await.unwrap();
    }
    let wal = std::fs::metadata(format!("{}-wal", store.path().display()))
        .map(|m| m.len())
        .unwrap_or(0);
    // Written: over 160 MiB of WAL frames (two or more pages a commit) in 20,000 commits.
    assert!(wal <= 65 << 20, "WAL of {wal} bytes");
}

/// Writes that share a transaction: one the database refuses (PostgreSQL takes no NUL in a
/// text column) fails alone; the others are written with their events, and counted.
#[tokio::test]
async fn postgres_a_write_the_database_refuses_fails_alone() {
    let db = PgDatabase::create().await;
    let stores = store::connect(&db.url).await.unwrap();
    let scope = Scope::new("batch", "owner");
    let existing = task("e0", "c", TaskState::Working, 100);
    stores.tasks.create(&scope, &existing, None).await.unwrap();
    for _round in 0..3 {
        let creates = (0..12).map(|i| {
            let ctx = if i == 5 { "bad\0context" } else { "c" };
            let mut t = task(&format!("b{i}"), ctx, TaskState::Submitted, 200 + i);
            t.id = format!("b{i}-{_round}").into();
            (i, t)
        });
        let results = futures::future::join_all(creates.map(|(i, t)| {
            let (scope, store) = (scope.clone(), stores.tasks.clone());
            async move {
                let event = StreamResponse::Task(t.clone());
                (
                    i,
                    t.id.clone(),
                    store.create(&scope, &t, Some(&event)).await,
                )
            }
        }))
        .await;
        for (i, id, result) in results {
            if i == 5 {
                assert!(matches!(result, Err(StoreError::Backend(_))), "{result:?}");
                assert!(stores.tasks.get(&scope, &id).await.unwrap().is_none());
            } else {
                assert_eq!(result.unwrap(), 1);
                let events = stores.tasks.events_after(&scope, &id, 0, 10).await.unwrap();
                assert_eq!(events.len(), 1, "{id}");
            }
        }
    }
    // An update refused the same way leaves the task as it was.
    let mut bad = existing.clone();
    bad.context_id = "bad\0context".into();
    assert!(matches!(
        stores.tasks.update(&scope, &bad, 1, None).await,
        Err(StoreError::Backend(_))
    ));
    assert_eq!(
        stores
            .tasks
            .get(&scope, &existing.id)
            .await
            .unwrap()
            .unwrap()
            .version,
        1
    );
    let listed = stores.tasks.list(&scope, &query(5)).await.unwrap();
    assert_eq!(listed.total_size, 1 + 3 * 11);
}

/// Appends `chunks` chunks of about 1 KiB to one artifact of task `id`, one event each, and
/// returns what the store wrote (task row bodies plus item bodies, counted by triggers in the
/// database) for each of the last `last` events.
async fn bytes_per_chunk(
    s: &dyn TaskStore,
    written: impl AsyncFn() -> i64,
    chunks: usize,
    last: usize,
) -> Vec<i64> {
    let scope = Scope::new("", "streamer");
    let mut t = task("long", "c", TaskState::Working, 1);
    t.artifacts = vec![Artifact::new([Part::text(filler("chunk 0", 1000))]).with_id("a")];
    s.create(&scope, &t, None).await.unwrap();
    let mut out = Vec::new();
    for n in 1..chunks {
        t.artifacts[0]
            .parts
            .push(Part::text(filler(&format!("chunk {n}"), 1000)));
        let before = written().await;
        s.update(&scope, &t, n as u64, Some(&chunk_event(&t, n)))
            .await
            .unwrap();
        if n >= chunks - last {
            out.push(written().await - before);
        }
    }
    let got = s.get(&scope, &t.id).await.unwrap().unwrap().task;
    assert!(got == t, "the long task reads back whole");
    assert_eq!(got.artifacts[0].parts.len(), chunks);
    out
}

/// A long streamed task does not rewrite itself at every event: with 300 chunks of 1 KiB
/// (300 KiB in the task), each of the last events writes the new chunk, the last group of
/// parts (under 4 KiB) and the task's head, not the whole task — in a SQLite file and on
/// PostgreSQL, where triggers count the bytes written.
#[tokio::test]
async fn a_long_task_is_written_chunk_by_chunk() {
    const SQLITE: [&str; 5] = [
        "CREATE TABLE written (bytes INTEGER NOT NULL)",
        "INSERT INTO written VALUES (0)",
        "CREATE TRIGGER w1 AFTER UPDATE ON a2a_tasks BEGIN \
         UPDATE written SET bytes = bytes + length(NEW.body); END",
        "CREATE TRIGGER w2 AFTER INSERT ON a2a_task_items BEGIN \
         UPDATE written SET bytes = bytes + length(NEW.body); END",
        "CREATE TRIGGER w3 AFTER UPDATE ON a2a_task_items BEGIN \
         UPDATE written SET bytes = bytes + length(NEW.body); END",
    ];
    const POSTGRES: [&str; 5] = [
        "CREATE TABLE written (bytes BIGINT NOT NULL)",
        "INSERT INTO written VALUES (0)",
        "CREATE FUNCTION count_written() RETURNS trigger AS $$ BEGIN \
         UPDATE written SET bytes = bytes + length(NEW.body); RETURN NEW; END $$ \
         LANGUAGE plpgsql",
        "CREATE TRIGGER w1 AFTER UPDATE ON a2a_tasks \
         FOR EACH ROW EXECUTE FUNCTION count_written()",
        "CREATE TRIGGER w2 AFTER INSERT OR UPDATE ON a2a_task_items \
         FOR EACH ROW EXECUTE FUNCTION count_written()",
    ];
    const WRITTEN: &str = "SELECT bytes FROM written";
    let file = SqliteFile::new();
    let sqlite = SqliteStore::open(&file.url()).await.unwrap();
    let db = PgDatabase::create().await;
    let postgres = PostgresStore::connect(&db.url).await.unwrap();
    for stmt in SQLITE {
        sqlx::query(stmt).execute(sqlite.pool()).await.unwrap();
    }
    for stmt in POSTGRES {
        sqlx::query(stmt).execute(postgres.pool()).await.unwrap();
    }
    let on_sqlite = async || {
        let q = sqlx::query_scalar::<_, i64>(WRITTEN);
        q.fetch_one(sqlite.pool()).await.unwrap()
    };
    let on_postgres = async || {
        let q = sqlx::query_scalar::<_, i64>(WRITTEN);
        q.fetch_one(postgres.pool()).await.unwrap()
    };
    let per_event = [
        ("sqlite", bytes_per_chunk(&sqlite, on_sqlite, 300, 8).await),
        (
            "postgres",
            bytes_per_chunk(&postgres, on_postgres, 300, 8).await,
        ),
    ];
    for (store, bytes) in per_event {
        assert!(
            bytes.iter().all(|b| (1000..8000).contains(b)),
            "{store}: {bytes:?} bytes for one chunk each"
        );
    }
}

/// Retention, the same way for every store: old interrupted tasks are found by state and age;
/// finished ones are purged by age, in bounded batches, with their events and push configs.
async fn retention(stores: Stores) {
    let s = stores.tasks.as_ref();
    let scope = Scope::new("ret", "owner");
    let states = [
        ("r-done", TaskState::Completed),
        ("r-failed", TaskState::Failed),
        ("r-input", TaskState::InputRequired),
        ("r-auth", TaskState::AuthRequired),
        ("r-working", TaskState::Working),
    ];
    for (id, state) in states {
        let t = task(id, "c", state, 1_000);
        s.create(&scope, &t, Some(&StreamResponse::Task(t.clone())))
            .await
            .unwrap();
        stores
            .push_configs
            .put(&scope, &push_config(id, "p", "https://example.com/hook"))
            .await
            .unwrap();
    }
    let now = chrono::Utc::now().timestamp_millis();
    let past = Timestamp::from_millis(now - 60_000).unwrap();
    let future = Timestamp::from_millis(now + 60_000).unwrap();
    let interrupted = [TaskState::InputRequired, TaskState::AuthRequired];
    assert!(
        s.untouched(&interrupted, past, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let mut found = s.untouched(&interrupted, future, 10).await.unwrap();
    found.sort_by(|a, b| a.id.cmp(&b.id));
    let ids: Vec<_> = found.iter().map(|t| t.id.to_string()).collect();
    assert_eq!(ids, ["r-auth", "r-input"]);
    assert!(found.iter().all(|t| t.scope == scope && t.version == 1));
    assert_eq!(s.untouched(&interrupted, future, 1).await.unwrap().len(), 1);

    assert_eq!(s.purge_finished(past, 10).await.unwrap(), 0);
    // Bounded: one per pass here.
    assert_eq!(s.purge_finished(future, 1).await.unwrap(), 1);
    assert_eq!(s.purge_finished(future, 10).await.unwrap(), 1);
    assert_eq!(s.purge_finished(future, 10).await.unwrap(), 0);
    for id in ["r-done", "r-failed"] {
        let id = id.into();
        assert!(s.get(&scope, &id).await.unwrap().is_none());
        assert!(s.events_after(&scope, &id, 0, 10).await.unwrap().is_empty());
        assert!(
            stores
                .push_configs
                .list(&scope, &id)
                .await
                .unwrap()
                .is_empty()
        );
    }
    for id in ["r-input", "r-auth", "r-working"] {
        let id = id.into();
        assert!(s.get(&scope, &id).await.unwrap().is_some());
        assert_eq!(s.events_after(&scope, &id, 0, 10).await.unwrap().len(), 1);
        assert_eq!(
            stores.push_configs.list(&scope, &id).await.unwrap().len(),
            1
        );
    }
}

#[tokio::test]
async fn memory_store_retention() {
    retention(store::connect("memory:").await.unwrap()).await;
}

#[tokio::test]
async fn sqlite_store_retention() {
    let file = SqliteFile::new();
    retention(store::connect(&file.url()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres_store_retention() {
    let db = PgDatabase::create().await;
    retention(store::connect(&db.url).await.unwrap()).await;
}

/// The purge's query, as the stores run it (states bound as parameters).
const PURGE_QUERY: &str = "SELECT tenant, owner, id FROM a2a_tasks \
     WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', \
     'TASK_STATE_REJECTED') AND updated_ms < 5000 LIMIT 1000";

/// A page of the tasks in one state, as the stores list it.
const STATE_PAGE_QUERY: &str = "SELECT id, status_ms, body FROM a2a_tasks \
     WHERE tenant = '' AND owner = 'owner' AND state = 'TASK_STATE_FAILED' \
     AND (status_ms, id) < (50000, 't50000') ORDER BY status_ms DESC, id DESC LIMIT 51";

/// One purge pass of 1,000 among `MANY` finished tasks: bounded, and timed.
async fn timed_purge(s: &dyn TaskStore, store: &str) {
    let started = Instant::now();
    let purged = s
        .purge_finished(Timestamp::from_millis(5_000).unwrap(), 1_000)
        .await
        .unwrap();
    assert_eq!(purged, 1_000);
    println!(
        "{store}: one purge pass of 1,000 among {MANY} finished tasks: {:?}",
        started.elapsed()
    );
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

/// 100,000 tasks of one owner, inserted directly (what the store would write).
const MANY: i64 = 100_000;

fn many_tasks_sql(generator: &str) -> String {
    format!(
        "INSERT INTO a2a_tasks (tenant, owner, id, context_id, state, status_ms, version, \
         created_ms, updated_ms, body) \
         SELECT '', 'owner', 't' || g, 'c' || (g % 10), 'TASK_STATE_COMPLETED', g, 1, g, g, \
         '{{\"id\":\"t' || g || '\",\"contextId\":\"c' || (g % 10) || \
         '\",\"status\":{{\"state\":\"TASK_STATE_COMPLETED\"}}}}' FROM {generator}"
    )
}

/// The kept count of `many_tasks_sql`'s tasks (the stores keep it as they write).
fn many_tasks_count_sql() -> String {
    format!("INSERT INTO a2a_task_counts (tenant, owner, n) VALUES ('', 'owner', {MANY})")
}

/// The p99 of ListTasks pages of 50 (walking the first pages, then deep ones by cursor).
async fn list_p99(s: &dyn TaskStore) -> Duration {
    let scope = Scope::new("", "owner");
    let mut times = Vec::new();
    let mut token = None;
    for _ in 0..200 {
        let started = Instant::now();
        let page = s
            .list(
                &scope,
                &TaskQuery {
                    page_size: 50,
                    page_token: token.take(),
                    ..TaskQuery::default()
                },
            )
            .await
            .unwrap();
        times.push(started.elapsed());
        assert_eq!((page.tasks.len(), page.total_size), (50, MANY as usize));
        token = Some(page.next_page_token);
    }
    times.sort();
    times[times.len() * 99 / 100]
}

/// SQLite's query plan of `query`, one step a line.
async fn sqlite_plan(pool: &sqlx::SqlitePool, query: &str) -> String {
    // EXPLAIN QUERY PLAN rows: (id, parent, notused, detail).
    let rows = sqlx::query(&format!("EXPLAIN QUERY PLAN {query}"))
        .fetch_all(pool)
        .await
        .unwrap();
    let plan: Vec<String> = rows
        .iter()
        .map(|r| sqlx::Row::try_get::<String, _>(r, 3).unwrap())
        .collect();
    plan.join("\n")
}

#[tokio::test]
async fn sqlite_lists_from_the_index_without_sorting() {
    let file = SqliteFile::new();
    let store = Arc::new(store::SqliteStore::open(&file.url()).await.unwrap());
    let pool = store.pool();
    sqlx::query(&many_tasks_sql(&format!(
        "(WITH RECURSIVE n(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM n WHERE g < {MANY}) \
         SELECT g FROM n)"
    )))
    .execute(pool)
    .await
    .unwrap();
    sqlx::query(&many_tasks_count_sql())
        .execute(pool)
        .await
        .unwrap();
    sqlx::query("ANALYZE").execute(pool).await.unwrap();
    let plan = sqlite_plan(
        pool,
        "SELECT id, status_ms, body FROM a2a_tasks \
         WHERE tenant = '' AND owner = 'owner' AND (status_ms, id) < (50000, 't50000') \
         ORDER BY status_ms DESC, id DESC LIMIT 51",
    )
    .await;
    assert!(plan.contains("USING INDEX a2a_tasks_listing"), "{plan}");
    assert!(!plan.contains("TEMP B-TREE"), "no sort: {plan}");
    let plan = sqlite_plan(pool, STATE_PAGE_QUERY).await;
    assert!(plan.contains("USING INDEX a2a_tasks_state"), "{plan}");
    assert!(!plan.contains("TEMP B-TREE"), "no sort: {plan}");
    let p99 = list_p99(&*store).await;
    println!("sqlite: ListTasks page of 50 among {MANY}: p99 {p99:?}");
    // Retention's purge searches an index: no scan of the tasks.
    let plan = sqlite_plan(pool, PURGE_QUERY).await;
    assert!(plan.contains("SEARCH a2a_tasks USING"), "{plan}");
    assert!(!plan.contains("SCAN"), "no scan: {plan}");
    timed_purge(&*store, "sqlite").await;
}

#[tokio::test]
async fn postgres_lists_from_the_index_without_sorting() {
    let db = PgDatabase::create().await;
    let store = Arc::new(store::PostgresStore::connect(&db.url).await.unwrap());
    let pool = store.pool();
    sqlx::query(&many_tasks_sql(&format!("generate_series(1, {MANY}) g")))
        .execute(pool)
        .await
        .unwrap();
    sqlx::query(&many_tasks_count_sql())
        .execute(pool)
        .await
        .unwrap();
    sqlx::query("ANALYZE a2a_tasks")
        .execute(pool)
        .await
        .unwrap();
    for cursor in ["", " AND (status_ms, id) < (50000, 't50000')"] {
        let plan: Vec<String> = sqlx::query_scalar(&format!(
            "EXPLAIN SELECT id, status_ms, body FROM a2a_tasks \
             WHERE tenant = '' AND owner = 'owner'{cursor} \
             ORDER BY status_ms DESC, id DESC LIMIT 51"
        ))
        .fetch_all(pool)
        .await
        .unwrap();
        let plan = plan.join("\n");
        assert!(
            plan.contains("Index Scan using a2a_tasks_listing"),
            "{plan}"
        );
        assert!(!plan.contains("Sort"), "no sort: {plan}");
    }
    let plan: Vec<String> = sqlx::query_scalar(&format!("EXPLAIN {STATE_PAGE_QUERY}"))
        .fetch_all(pool)
        .await
        .unwrap();
    let plan = plan.join("\n");
    assert!(plan.contains("a2a_tasks_state"), "{plan}");
    assert!(!plan.contains("Sort"), "no sort: {plan}");
    let p99 = list_p99(&*store).await;
    println!("postgres: ListTasks page of 50 among {MANY}: p99 {p99:?}");
    let plan: Vec<String> = sqlx::query_scalar(&format!("EXPLAIN {PURGE_QUERY}"))
        .fetch_all(pool)
        .await
        .unwrap();
    let plan = plan.join("\n");
    assert!(plan.contains("Index"), "{plan}");
    assert!(!plan.contains("Seq Scan"), "no scan: {plan}");
    timed_purge(&*store, "postgres").await;
}

/// Figures for the closing note (opt-in: `cargo test --test store -- --ignored figures
/// --nocapture`): task creations/s and events/s per store, a short bounded run.
#[tokio::test]
#[ignore = "a benchmark, not a test: run it by hand for figures"]
async fn figures() {
    let file = SqliteFile::new();
    let db = PgDatabase::create().await;
    for (name, stores) in [
        ("memory", store::connect("memory:").await.unwrap()),
        ("sqlite", store::connect(&file.url()).await.unwrap()),
        ("postgres", store::connect(&db.url).await.unwrap()),
    ] {
        let n: i32 = 2_000;
        let scope = Scope::new("", "bench");
        let started = Instant::now();
        // Eight concurrent writers, as concurrent requests would be.
        futures::future::join_all((0..8).map(|w| {
            let s = stores.tasks.clone();
            let scope = scope.clone();
            async move {
                for i in 0..n / 8 {
                    let mut t = task(
                        &format!("c{w}-{i}"),
                        "c",
                        TaskState::Submitted,
                        i64::from(i),
                    );
                    s.create(&scope, &t, Some(&StreamResponse::Task(t.clone())))
                        .await
                        .unwrap();
                    t.status.state = TaskState::Completed;
                    s.update(&scope, &t, 1, Some(&status_event(&t, TaskState::Completed)))
                        .await
                        .unwrap();
                }
            }
        }))
        .await;
        let creations = f64::from(n) / started.elapsed().as_secs_f64();
        let t = task("stream", "c", TaskState::Working, 1);
        stores.tasks.create(&scope, &t, None).await.unwrap();
        let events = 2_000u32;
        let started = Instant::now();
        for v in 1..=u64::from(events) {
            let ev = chunk_event(&t, v as usize);
            stores.tasks.update(&scope, &t, v, Some(&ev)).await.unwrap();
        }
        let per_s = f64::from(events) / started.elapsed().as_secs_f64();
        println!(
            "{name}: {creations:.0} task creations/s (create + complete, 8 writers), \
             {per_s:.0} events/s (one task, sequential)"
        );
    }
}

/// Last-Event-ID over both bindings: a client that saw events up to `n` resubscribes with
/// `Last-Event-ID: n` and receives exactly the events it missed, in order, then the stream ends
/// (the task is finished); an id beyond the last event and a non-number are clear errors.
#[tokio::test]
async fn last_event_id_replays_exactly_the_missed_events() {
    use a2a_runtime::test::{Binding, TestServer};
    use a2a_tests::params::msg;
    let file = SqliteFile::new();
    let stores = store::connect(&file.url()).await.unwrap();
    let agent = a2a_examples::StreamingAgent {
        delay: Duration::ZERO,
    };
    let server = TestServer::start(
        a2a_runtime::server::A2aServer::builder()
            .card(agent_card("resume"))
            .stores(stores)
            .executor(agent),
    )
    .await;
    for binding in Binding::BOTH {
        let all = server
            .stream(
                binding,
                "SendStreamingMessage",
                msg("one two three four five"),
            )
            .await
            .unwrap()
            .collect()
            .await;
        let ids: Vec<u64> = all.iter().map(|e| e.id).collect();
        assert!(
            ids.windows(2).all(|w| w[1] == w[0] + 1),
            "gapless ids: {ids:?}"
        );
        let task_id = all[0].data["task"]["id"].as_str().unwrap().to_owned();
        for seen in [2usize, 4] {
            let resumed = resubscribe(&server, binding, &task_id, &all[seen].id.to_string())
                .await
                .unwrap()
                .collect()
                .await;
            let got: Vec<(u64, &serde_json::Value)> =
                resumed.iter().map(|e| (e.id, &e.data)).collect();
            let want: Vec<(u64, &serde_json::Value)> =
                all[seen + 1..].iter().map(|e| (e.id, &e.data)).collect();
            assert_eq!(got, want, "{binding:?} after {seen}");
        }
        let last = all.last().unwrap().id;
        let beyond = resubscribe(&server, binding, &task_id, &(last + 5).to_string())
            .await
            .map(|_| ())
            .unwrap_err();
        beyond.assert_invalid("Last-Event-ID");
        let bad = resubscribe(&server, binding, &task_id, "yesterday")
            .await
            .map(|_| ())
            .unwrap_err();
        bad.assert_invalid("Last-Event-ID");
        // A huge value is refused without being echoed whole.
        let huge = "9".repeat(4_000);
        let huge = resubscribe(&server, binding, &task_id, &huge)
            .await
            .map(|_| ())
            .unwrap_err();
        huge.assert_invalid("Last-Event-ID");
        assert!(huge.body.to_string().len() < 1_000, "{}", huge.body);
    }
}

/// A client resuming a task's stream from before a continued turn (Last-Event-ID), in memory and
/// in SQLite: the log also holds the turn's start (a snapshot of the task, still
/// INPUT_REQUIRED, with the user's new message), and the stream does not end there but goes on
/// to the turn's events, as a subscriber saw them live.
#[tokio::test]
async fn a_resume_from_before_a_continued_turn_goes_on_past_the_turns_start() {
    use a2a_runtime::test::{Binding, TestServer};
    use a2a_tests::params::{msg, msg_to};
    let file = SqliteFile::new();
    for url in ["memory:".to_owned(), file.url()] {
        let stores = store::connect(&url).await.unwrap();
        let server = TestServer::start(
            a2a_runtime::server::A2aServer::builder()
                .card(agent_card("turns"))
                .stores(stores)
                .executor(a2a_examples::DemoAgent),
        )
        .await;
        for binding in Binding::BOTH {
            let asked = server.send_task(binding, msg("ask")).await;
            assert_eq!(asked["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
            let task_id = asked["id"].as_str().unwrap().to_owned();
            let mut sse = server
                .stream(
                    binding,
                    "SubscribeToTask",
                    serde_json::json!({"id": task_id}),
                )
                .await
                .unwrap();
            // The opening snapshot: subscribed before the next turn starts.
            let first = sse.next().await.unwrap();
            let done = server.send_task(binding, msg_to(&task_id, "Ada")).await;
            assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
            let live = sse.collect().await;
            let replayed = resubscribe(&server, binding, &task_id, &first.id.to_string())
                .await
                .unwrap()
                .collect()
                .await;
            let turn = &replayed[0];
            assert_eq!(turn.state(), Some("TASK_STATE_INPUT_REQUIRED"), "{url}");
            let history = turn.data["task"]["history"].as_array().unwrap();
            assert_eq!(a2a_tests::params::text(history.last().unwrap()), "Ada");
            let got: Vec<(u64, &serde_json::Value)> =
                replayed[1..].iter().map(|e| (e.id, &e.data)).collect();
            let want: Vec<(u64, &serde_json::Value)> =
                live.iter().map(|e| (e.id, &e.data)).collect();
            assert_eq!(got, want, "{url} {binding:?}");
            assert_eq!(live.last().unwrap().state(), Some("TASK_STATE_COMPLETED"));
        }
    }
}

async fn resubscribe(
    server: &a2a_runtime::test::TestServer,
    binding: a2a_runtime::test::Binding,
    task_id: &str,
    last_event_id: &str,
) -> Result<a2a_runtime::test::EventStream, a2a_runtime::test::ErrorAnswer> {
    let req = match binding {
        a2a_runtime::test::Binding::JsonRpc => server
            .http()
            .post(format!("{}/", server.url()))
            .header("content-type", "application/json")
            .body(
                serde_json::json!({"jsonrpc": "2.0", "id": "r", "method": "SubscribeToTask",
                    "params": {"id": task_id}})
                .to_string(),
            ),
        a2a_runtime::test::Binding::Rest => server
            .http()
            .get(format!("{}/tasks/{task_id}:subscribe", server.url())),
    };
    let req = req
        .header("A2A-Version", "1.0")
        .header("Last-Event-ID", last_event_id);
    let rpc_id =
        matches!(binding, a2a_runtime::test::Binding::JsonRpc).then(|| serde_json::json!("r"));
    server.open_sse(binding, req, rpc_id).await
}

/// A subscriber far slower than the agent (a queue of 4 events, 1,500 events published before
/// it reads on) is not cut off: it resumes from the log and receives every event, in order.
#[tokio::test]
async fn a_slow_subscriber_resumes_from_the_log_instead_of_being_cut() {
    use a2a_runtime::test::{Binding, TestServer};
    use a2a_tests::params::msg;
    let file = SqliteFile::new();
    let stores = store::connect(&file.url()).await.unwrap();
    let limits = a2a_runtime::core::Limits {
        subscriber_buffer: 4,
        ..a2a_runtime::core::Limits::default()
    };
    let server = TestServer::start(
        a2a_runtime::server::A2aServer::builder()
            .card(agent_card("slow"))
            .stores(stores)
            .limits(limits)
            .executor(a2a_examples::StreamingAgent {
                delay: Duration::ZERO,
            }),
    )
    .await;
    let words: Vec<String> = (0..1_500).map(|i| format!("w{i}")).collect();
    let mut sse = server
        .stream(
            Binding::Rest,
            "SendStreamingMessage",
            msg(&format!("stream {}", words.join(" "))),
        )
        .await
        .unwrap();
    let first = sse.next().await.unwrap();
    let task_id = first.data["task"]["id"].as_str().unwrap().to_owned();
    // Read nothing more until the agent is done.
    a2a_runtime::test::within("the task to finish", async {
        loop {
            let t = server
                .http()
                .get(format!("{}/tasks/{task_id}", server.url()))
                .header("A2A-Version", "1.0")
                .send()
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap();
            if t["status"]["state"] == "TASK_STATE_COMPLETED" {
                break;
            }
            assert_ne!(t["status"]["state"], "TASK_STATE_FAILED", "{t}");
            tokio::task::yield_now().await;
        }
    })
    .await;
    let rest = sse.collect().await;
    assert!(rest.iter().all(|e| e.kind != "error"), "no error item");
    let chunks: Vec<String> = rest
        .iter()
        .filter_map(|e| e.data.get("artifactUpdate"))
        .map(|a| a2a_tests::params::text(&a["artifact"]))
        .collect();
    let want: Vec<String> = std::iter::once("stream ".to_owned())
        .chain(words.iter().map(|w| format!("{w} ")))
        .collect();
    assert_eq!(chunks, want);
    assert_eq!(rest.last().unwrap().state(), Some("TASK_STATE_COMPLETED"));
}

// ---------------------------------------------------------------------------------------------
// The push outbox: the same contract in memory, in SQLite and in PostgreSQL
// ---------------------------------------------------------------------------------------------

fn delivery(task: &str, config: &str, seq: u64) -> NewDelivery {
    NewDelivery {
        scope: Scope::new("tenant-o", "owner"),
        task_id: task.into(),
        config_id: config.into(),
        seq,
        payload: bytes::Bytes::from(format!("{{\"seq\":{seq}}}")),
    }
}

fn pairs(batch: &[Delivery]) -> Vec<(String, String, u64)> {
    batch
        .iter()
        .map(|d| {
            (
                d.new.task_id.to_string(),
                d.new.config_id.to_string(),
                d.new.seq,
            )
        })
        .collect()
}

/// The outbox contract, for an outbox keeping at most 2 dead deliveries: per (task, config)
/// only the oldest unsettled delivery is claimable, one lease at a time; a retry holds its pair
/// back until due; attempts and errors are kept; an expired lease is claimed again; the dead
/// list is bounded, newest first.
async fn outbox_conformance(o: &dyn PushOutbox) {
    assert_eq!(o.pending().await.unwrap(), 0);
    let ids = o
        .enqueue(
            vec![
                delivery("t", "a", 1),
                delivery("t", "a", 2),
                delivery("t", "b", 1),
                delivery("u", "a", 1),
            ],
            1_000,
        )
        .await
        .unwrap();
    assert_eq!(ids.len(), 4);
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "increasing ids {ids:?}"
    );
    assert_eq!(o.pending().await.unwrap(), 4);
    assert!(
        o.claim("me", 999, 2_000, 10).await.unwrap().is_empty(),
        "not due yet"
    );

    // Heads only, oldest first; the payload comes back as it went in.
    let first = o.claim("me", 1_000, 2_000, 10).await.unwrap();
    assert_eq!(
        pairs(&first),
        [
            ("t".into(), "a".into(), 1),
            ("t".into(), "b".into(), 1),
            ("u".into(), "a".into(), 1)
        ]
    );
    assert_eq!(first[0].new.payload.as_ref(), b"{\"seq\":1}");
    assert_eq!(first[0].new.scope, Scope::new("tenant-o", "owner"));
    assert!(first.iter().all(|d| d.attempts == 1));
    assert_eq!(first[0].enqueued_at_ms, 1_000);
    assert!(
        o.claim("other", 1_500, 2_500, 10).await.unwrap().is_empty(),
        "leased heads are nobody else's, and seq 2 waits for seq 1"
    );

    // Settled: t/a retried later, t/b delivered, u/a given up.
    o.retry_at(first[0].id, 3_000, "the receiver answered 500")
        .await
        .unwrap();
    o.complete(first[1].id).await.unwrap();
    o.dead(first[2].id, "gave up").await.unwrap();
    assert!(
        o.claim("me", 2_999, 4_000, 10).await.unwrap().is_empty(),
        "a retried head holds its pair back until due"
    );
    let again = o.claim("me", 3_000, 4_000, 10).await.unwrap();
    assert_eq!(pairs(&again), [("t".into(), "a".into(), 1)]);
    assert_eq!(again[0].attempts, 2, "attempts are counted");
    assert_eq!(again[0].last_error, "the receiver answered 500");
    assert_eq!(again[0].next_attempt_ms, 3_000);

    // The lease expires (its holder died): someone else takes it, attempt 3.
    assert!(o.claim("other", 3_999, 5_000, 10).await.unwrap().is_empty());
    let taken = o.claim("other", 4_000, 5_000, 10).await.unwrap();
    assert_eq!((taken[0].id, taken[0].attempts), (again[0].id, 3));
    o.complete(taken[0].id).await.unwrap();
    let next = o.claim("other", 4_000, 5_000, 10).await.unwrap();
    assert_eq!(
        pairs(&next),
        [("t".into(), "a".into(), 2)],
        "then the next of the pair"
    );
    assert_eq!(o.pending().await.unwrap(), 1);

    // The dead list: newest first, at most 2.
    o.dead(next[0].id, "gave up on seq 2").await.unwrap();
    let more = o.enqueue(vec![delivery("v", "a", 7)], 5_000).await.unwrap();
    o.dead(more[0], "gave up on v").await.unwrap();
    let dead = o.list_dead(10).await.unwrap();
    assert_eq!(
        dead.iter()
            .map(|d| d.last_error.as_str())
            .collect::<Vec<_>>(),
        ["gave up on v", "gave up on seq 2"]
    );
    assert_eq!(pairs(&dead[..1]), [("v".into(), "a".into(), 7)]);
    assert_eq!(o.list_dead(1).await.unwrap().len(), 1);
    assert_eq!(o.pending().await.unwrap(), 0);
    assert!(
        o.claim("me", i64::MAX, i64::MAX, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn memory_outbox_conforms() {
    outbox_conformance(&InMemoryPushOutbox::with_max_dead(2)).await;
}

#[tokio::test]
async fn sqlite_outbox_conforms_and_keeps_deliveries_across_a_reopen() {
    let file = SqliteFile::new();
    let o = SqliteStore::open(&file.url())
        .await
        .unwrap()
        .with_max_dead_deliveries(2);
    outbox_conformance(&o).await;
    // A delivery leased, then the process is gone: the reopened file has it, attempt counted.
    let ids = o.enqueue(vec![delivery("w", "a", 1)], 0).await.unwrap();
    assert_eq!(o.claim("crashed", 0, 100, 10).await.unwrap().len(), 1);
    o.pool().close().await;
    let reopened = SqliteStore::open(&file.url()).await.unwrap();
    assert_eq!(reopened.pending().await.unwrap(), 1);
    assert!(reopened.claim("me", 99, 200, 10).await.unwrap().is_empty());
    let resumed = reopened.claim("me", 100, 200, 10).await.unwrap();
    assert_eq!((resumed[0].id, resumed[0].attempts), (ids[0], 2));
    assert_eq!(reopened.list_dead(10).await.unwrap().len(), 2);
}

#[tokio::test]
async fn postgres_outbox_conforms() {
    let db = PgDatabase::create().await;
    let o = PostgresStore::connect(&db.url)
        .await
        .unwrap()
        .with_max_dead_deliveries(2);
    outbox_conformance(&o).await;
}

/// Claimers racing on one outbox (separate pools, as separate instances): every delivery is
/// leased exactly once, and a pair's second delivery only after its first was settled.
async fn racing_claimers(outboxes: Vec<Arc<dyn PushOutbox>>) {
    let tasks = 40;
    let mut batch = Vec::new();
    for t in 0..tasks {
        for seq in 1..=3 {
            batch.push(delivery(&format!("race-{t}"), "a", seq));
        }
    }
    outboxes[0].enqueue(batch, 0).await.unwrap();
    let claimed = Arc::new(std::sync::Mutex::new(Vec::<(String, u64, u64)>::new()));
    let mut handles = Vec::new();
    for (i, o) in outboxes.iter().cycle().take(8).enumerate() {
        let o = o.clone();
        let claimed = claimed.clone();
        handles.push(tokio::spawn(async move {
            let me = format!("claimer-{i}");
            let mut idle = 0;
            while idle < 3 {
                let got = o.claim(&me, 0, i64::MAX, 4).await.unwrap();
                if got.is_empty() {
                    idle += 1;
                    tokio::task::yield_now().await;
                    continue;
                }
                idle = 0;
                for d in got {
                    claimed
                        .lock()
                        .unwrap()
                        .push((d.new.task_id.to_string(), d.new.seq, d.id));
                    o.complete(d.id).await.unwrap();
                }
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    // Claimers may all go idle while the last completions land: drain what is left.
    loop {
        let got = outboxes[0].claim("drain", 0, i64::MAX, 100).await.unwrap();
        if got.is_empty() {
            break;
        }
        for d in got {
            claimed
                .lock()
                .unwrap()
                .push((d.new.task_id.to_string(), d.new.seq, d.id));
            outboxes[0].complete(d.id).await.unwrap();
        }
    }
    let claimed = claimed.lock().unwrap().clone();
    let mut ids: Vec<u64> = claimed.iter().map(|c| c.2).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), claimed.len(), "no delivery leased twice");
    assert_eq!(claimed.len(), tasks * 3, "every delivery leased");
    for t in 0..tasks {
        let task = format!("race-{t}");
        let seqs: Vec<u64> = claimed
            .iter()
            .filter(|c| c.0 == task)
            .map(|c| c.1)
            .collect();
        assert_eq!(seqs, [1, 2, 3], "{task} in order");
    }
    assert_eq!(outboxes[0].pending().await.unwrap(), 0);
}

#[tokio::test]
async fn postgres_outbox_claims_are_exclusive_across_instances() {
    let db = PgDatabase::create().await;
    let a: Arc<dyn PushOutbox> = Arc::new(PostgresStore::connect(&db.url).await.unwrap());
    let b: Arc<dyn PushOutbox> = Arc::new(PostgresStore::connect(&db.url).await.unwrap());
    racing_claimers(vec![a, b]).await;
}

#[tokio::test]
async fn sqlite_outbox_claims_are_exclusive_across_connections() {
    let file = SqliteFile::new();
    let a: Arc<dyn PushOutbox> = Arc::new(SqliteStore::open(&file.url()).await.unwrap());
    let b: Arc<dyn PushOutbox> = Arc::new(SqliteStore::open(&file.url()).await.unwrap());
    racing_claimers(vec![a, b]).await;
}

/// The server of [`crash_loop`], in a child process (this binary, running only this test):
/// the streaming agent (1 ms between chunks) on the store at `A2A_CRASH_STORE`; prints its URL
/// and serves until it is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by the crash loop in a child process"]
async fn crash_child() {
    let Ok(url) = std::env::var("A2A_CRASH_STORE") else {
        return;
    };
    let stores = store::connect(&url).await.unwrap();
    let server = a2a_runtime::server::A2aServer::builder()
        .card(agent_card("crash"))
        .stores(stores)
        .executor(a2a_examples::StreamingAgent {
            delay: Duration::from_millis(1),
        })
        .workers(1)
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    eprintln!("A2A_CRASH_URL {}", running.url());
    running.wait().await.unwrap();
}

/// A child server on `store`, and its URL once it serves.
async fn crash_child_on(store: &str) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--ignored", "--nocapture"])
        .env("A2A_CRASH_STORE", store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = a2a_runtime::test::within("the child server to start", async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the child's URL");
            if let Some(url) = line.strip_prefix("A2A_CRASH_URL ") {
                break url.to_owned();
            }
        }
    })
    .await;
    // The child's later output is drained so that it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// What a client was sent of a task's stream before the server died: the events, by id.
type Acked = (String, Vec<a2a_runtime::test::Event>);

/// Checks on `server` that every acknowledged event of every task is in its log: replayed from
/// `Last-Event-ID: 0`, the log's ids run 1, 2, … without gaps, duplicates or reordering, and
/// the event with each acknowledged id is the one the client was sent (ids strictly increase
/// on the client's stream too: the reader checks it).
async fn check_logged(server: &a2a_runtime::test::TestServer, acked: &[Acked]) {
    for (task_id, events) in acked {
        // Id 0 is a stream's opening snapshot, not a logged event.
        let last = events.last().map_or(0, |e| e.id);
        if last == 0 {
            continue;
        }
        let req = server
            .http()
            .get(format!("{}/tasks/{task_id}:subscribe", server.url()))
            .header("A2A-Version", "1.0")
            .header("Last-Event-ID", "0");
        let mut replay = server
            .open_sse(a2a_runtime::test::Binding::Rest, req, None)
            .await
            .unwrap_or_else(|e| panic!("replay of {task_id}: {e:?}"));
        let mut logged = Vec::new();
        while logged
            .last()
            .is_none_or(|e: &a2a_runtime::test::Event| e.id < last)
        {
            let ev = replay
                .next()
                .await
                .unwrap_or_else(|| panic!("{task_id}: the log ends at {logged:?}, acked {last}"));
            assert_eq!(ev.id, logged.len() as u64 + 1, "{task_id}: gapless ids");
            logged.push(ev);
        }
        for ev in events.iter().filter(|e| e.id > 0) {
            let at = &logged[(ev.id - 1) as usize];
            assert_eq!(
                at.data, ev.data,
                "{task_id}: event {} as acknowledged",
                ev.id
            );
        }
        // The stored task holds at least every acknowledged chunk, in order.
        let chunks: Vec<&Value> = events
            .iter()
            .filter_map(|e| e.data["artifactUpdate"]["artifact"]["parts"].get(0))
            .collect();
        let task = server
            .ok(
                a2a_runtime::test::Binding::Rest,
                "GetTask",
                json!({"id": task_id}),
            )
            .await;
        let parts = task["artifacts"][0]["parts"].as_array();
        let stored: Vec<&Value> = parts.map(|p| p.iter().collect()).unwrap_or_default();
        assert!(
            stored.len() >= chunks.len() && stored[..chunks.len()] == chunks[..],
            "{task_id}: stored parts {} < acknowledged {}",
            stored.len(),
            chunks.len()
        );
    }
}

/// The crash loop: a child server streaming a task is killed with SIGKILL at random points
/// (after a random number of events read by the client, while the agent runs ahead), restarted
/// on the same store, and a checker proves that no acknowledged event was lost, duplicated or
/// reordered, for the task of that round and every earlier one. 50 points by default;
/// `A2A_CRASH_POINTS` sets another count (e.g. 500 for the long mode). The seed is printed.
async fn crash_loop(store: &str) {
    let points: usize = std::env::var("A2A_CRASH_POINTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let mut seed = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap_or(1) | 1;
    eprintln!("crash loop on {store}: {points} points, seed {seed}");
    let mut random = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    // 120 chunks of about 200 bytes: the task outgrows a row (see the SQL stores' layout).
    let words: Vec<String> = (0..120)
        .map(|i| format!("w{i}-{}", "x".repeat(200)))
        .collect();
    let text = format!("stream {}", words.join(" "));
    let mut acked: Vec<Acked> = Vec::new();
    let (mut child, mut url) = crash_child_on(store).await;
    for _ in 0..points {
        let server = a2a_runtime::test::TestServer::remote(url.clone());
        let read = random(60);
        let mut sse = server
            .stream(
                a2a_runtime::test::Binding::Rest,
                "SendStreamingMessage",
                a2a_tests::params::msg(&text),
            )
            .await
            .unwrap();
        let mut events = Vec::new();
        while (events.len() as u64) <= read {
            match sse.next().await {
                Some(ev) => events.push(ev),
                None => break,
            }
        }
        // SIGKILL while the agent goes on writing.
        child.start_kill().unwrap();
        child.wait().await.unwrap();
        drop(sse);
        let task_id = events[0].data["task"]["id"].as_str().unwrap().to_owned();
        acked.push((task_id, events));
        (child, url) = crash_child_on(store).await;
        let server = a2a_runtime::test::TestServer::remote(url.clone());
        check_logged(&server, &acked[acked.len() - 1..]).await;
    }
    // After the last restart, every task of every round once more.
    check_logged(&a2a_runtime::test::TestServer::remote(url), &acked).await;
    let events: usize = acked.iter().map(|(_, e)| e.len()).sum();
    eprintln!("crash loop on {store}: {points} kills, {events} acknowledged events, all logged");
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

#[tokio::test]
async fn sqlite_crash_loop_loses_no_acknowledged_event() {
    let file = SqliteFile::new();
    crash_loop(&file.url()).await;
}

#[tokio::test]
async fn postgres_crash_loop_loses_no_acknowledged_event() {
    let db = PgDatabase::create().await;
    crash_loop(&db.url).await;
}
