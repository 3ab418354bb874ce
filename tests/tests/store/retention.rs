//! Retention, the same way for every store: old interrupted tasks found by state and age,
//! finished ones purged by age in bounded batches with their events and push configs.

use a2a_runtime::store::{self, Scope, Stores};
use a2a_runtime::types::{StreamResponse, TaskState, Timestamp};
use a2a_tests::pg::PgDatabase;

use super::*;

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

/// `n` finished tasks `{prefix}{i}` in `scope`, written `ms` apart in order (the oldest
/// first), each with a push config and, on a store with its own outbox, a dead delivery.
async fn finished(stores: &Stores, scope: &Scope, prefix: &str, n: usize) {
    for i in 0..n {
        let id = format!("{prefix}{i:03}");
        let t = task(&id, "c", TaskState::Completed, 1_000 + i as i64);
        stores
            .tasks
            .create(scope, &t, Some(&StreamResponse::Task(t.clone())))
            .await
            .unwrap();
        stores
            .push_configs
            .put(scope, &push_config(&id, "p", "https://example.com/hook"))
            .await
            .unwrap();
        let ids = stores
            .outbox
            .enqueue(
                vec![a2a_runtime::store::NewDelivery {
                    scope: scope.clone(),
                    task_id: id.as_str().into(),
                    config_id: "p".into(),
                    seq: 1,
                    payload: bytes_of("{}"),
                }],
                0,
            )
            .await
            .unwrap();
        stores.outbox.dead(ids[0], "gave up").await.unwrap();
        // Distinct write times: the order retention keeps.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
}

fn bytes_of(s: &'static str) -> bytes::Bytes {
    bytes::Bytes::from_static(s.as_bytes())
}

async fn held(stores: &Stores, scope: &Scope, id: &str) -> bool {
    stores.tasks.get(scope, &id.into()).await.unwrap().is_some()
}

/// Retention by count, on a SQL store: over all scopes the newest `keep` finished tasks stay,
/// in each scope likewise; live tasks never count; a purged task takes its events, push
/// configs and dead deliveries with it; each call removes at most `limit`.
async fn retention_by_count(stores: Stores) {
    let s = stores.tasks.as_ref();
    let a = Scope::new("ta", "alice");
    let b = Scope::new("tb", "bob");
    finished(&stores, &a, "a", 6).await;
    finished(&stores, &b, "b", 4).await;
    let live = task("a-live", "c", TaskState::Working, 0);
    s.create(&a, &live, Some(&StreamResponse::Task(live.clone())))
        .await
        .unwrap();
    assert_eq!(stores.outbox.list_dead(100).await.unwrap().len(), 10);
    // Over all scopes: 10 finished, keep 7, at most 2 a call.
    assert_eq!(s.purge_finished_beyond(7, false, 2).await.unwrap(), 2);
    assert_eq!(s.purge_finished_beyond(7, false, 2).await.unwrap(), 1);
    assert_eq!(s.purge_finished_beyond(7, false, 2).await.unwrap(), 0);
    // The three oldest went (a000, a001, a002 were written first).
    for id in ["a000", "a001", "a002"] {
        assert!(!held(&stores, &a, id).await, "{id}");
        assert!(
            s.events_after(&a, &id.into(), 0, 10)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(
            stores
                .push_configs
                .list(&a, &id.into())
                .await
                .unwrap()
                .is_empty()
        );
    }
    let dead = stores.outbox.list_dead(100).await.unwrap();
    assert_eq!(dead.len(), 7, "dead deliveries go with their task");
    assert!(
        dead.iter()
            .all(|d| !["a000", "a001", "a002"].contains(&d.new.task_id.as_str()))
    );
    for id in ["a003", "a004", "a005"] {
        assert!(held(&stores, &a, id).await, "{id}");
    }
    // Per scope: keep 2 in each; alice has 3 finished and a live one, bob 4.
    assert_eq!(s.purge_finished_beyond(2, true, 100).await.unwrap(), 3);
    assert!(!held(&stores, &a, "a003").await);
    assert!(held(&stores, &a, "a004").await && held(&stores, &a, "a005").await);
    assert!(!held(&stores, &b, "b000").await && !held(&stores, &b, "b001").await);
    assert!(held(&stores, &b, "b002").await && held(&stores, &b, "b003").await);
    assert!(
        held(&stores, &a, "a-live").await,
        "a live task is never purged"
    );
    assert_eq!(s.purge_finished_beyond(2, true, 100).await.unwrap(), 0);
    // Listing totals follow.
    assert_eq!(s.list(&a, &query(10)).await.unwrap().total_size, 3);
    assert_eq!(s.list(&b, &query(10)).await.unwrap().total_size, 2);
    // Keep 0: every finished task goes, the live one stays.
    assert_eq!(s.purge_finished_beyond(0, false, 100).await.unwrap(), 4);
    assert!(held(&stores, &a, "a-live").await);
    assert!(stores.outbox.list_dead(100).await.unwrap().is_empty());
}

#[tokio::test]
async fn sqlite_store_retention_by_count() {
    let file = SqliteFile::new();
    retention_by_count(store::connect(&file.url()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres_store_retention_by_count() {
    let db = PgDatabase::create().await;
    retention_by_count(store::connect(&db.url).await.unwrap()).await;
}

/// Message claims, the same on every store: the first claim of an id per scope wins, a repeat
/// within the window gets the first task, after the window a new claim wins; purged by age
/// and by count.
async fn claims(stores: Stores) {
    let s = stores.tasks.as_ref();
    let alice = Scope::new("t", "alice");
    let bob = Scope::new("t", "bob");
    let now = chrono::Utc::now().timestamp_millis();
    let ts = |ms: i64| Timestamp::from_millis(ms).unwrap();
    let m = "m-1".into();
    assert_eq!(
        s.claim_message(&alice, &m, &"task-1".into(), ts(now - 60_000))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        s.claim_message(&alice, &m, &"task-2".into(), ts(now - 60_000))
            .await
            .unwrap(),
        Some("task-1".into())
    );
    // Another principal's id is its own.
    assert_eq!(
        s.claim_message(&bob, &m, &"task-3".into(), ts(now - 60_000))
            .await
            .unwrap(),
        None
    );
    // The claim is older than the window now asked for: taken over.
    assert_eq!(
        s.claim_message(&alice, &m, &"task-4".into(), ts(now + 60_000))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        s.claim_message(&alice, &m, &"task-5".into(), ts(now - 60_000))
            .await
            .unwrap(),
        Some("task-4".into())
    );
    for i in 0..20 {
        let id = format!("bulk-{i}").into();
        assert_eq!(
            s.claim_message(&alice, &id, &"t".into(), ts(0))
                .await
                .unwrap(),
            None
        );
    }
    // 22 held: by count down to 10, at most 5 a call.
    assert_eq!(s.purge_claims(ts(0), 10, 5).await.unwrap(), 5);
    let rest = s.purge_claims(ts(0), 10, 100).await.unwrap();
    assert!((7..=17).contains(&rest), "{rest}");
    assert_eq!(s.purge_claims(ts(0), 10, 100).await.unwrap(), 0);
    // By age: all.
    let all = s.purge_claims(ts(now + 3_600_000), 100, 100).await.unwrap();
    assert!(all <= 10 && all > 0, "{all}");
    assert_eq!(
        s.claim_message(&alice, &m, &"task-6".into(), ts(now - 60_000))
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn memory_store_claims() {
    claims(store::connect("memory:").await.unwrap()).await;
}

#[tokio::test]
async fn sqlite_store_claims() {
    let file = SqliteFile::new();
    claims(store::connect(&file.url()).await.unwrap()).await;
}

#[tokio::test]
async fn postgres_store_claims() {
    let db = PgDatabase::create().await;
    claims(store::connect(&db.url).await.unwrap()).await;
}

/// Two instances (two pools on one database) claiming the same ids at once: for each id
/// exactly one wins, and the other is told the winner's task.
#[tokio::test]
async fn postgres_claims_race_between_instances() {
    let db = PgDatabase::create().await;
    let one = store::connect(&db.url).await.unwrap().tasks;
    let two = store::connect(&db.url).await.unwrap().tasks;
    let scope = Scope::new("", "anon");
    let since = Timestamp::from_millis(0).unwrap();
    let (from_one, from_two) = ("from-one".into(), "from-two".into());
    for i in 0..50 {
        let m = format!("race-{i}").into();
        let (a, b) = tokio::join!(
            one.claim_message(&scope, &m, &from_one, since),
            two.claim_message(&scope, &m, &from_two, since)
        );
        match (a.unwrap(), b.unwrap()) {
            (None, Some(won)) => assert_eq!(won.as_str(), "from-one"),
            (Some(won), None) => assert_eq!(won.as_str(), "from-two"),
            other => panic!("{m}: {other:?}"),
        }
    }
}

/// SQLite gives the pages of purged tasks back: a new file is in incremental auto-vacuum mode,
/// an old file without it is switched at open, and after a large purge the file shrinks.
#[tokio::test]
async fn sqlite_gives_purged_space_back() {
    let file = SqliteFile::new();
    let url = file.url();
    {
        // A file as a release before this one left it: no auto-vacuum, tables made.
        let path = file.dir.join("nested");
        std::fs::create_dir_all(&path).unwrap();
        let opts = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(path.join("tasks.db"))
            .create_if_missing(true);
        let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
        sqlx::query("CREATE TABLE old (x TEXT)")
            .execute(&pool)
            .await
            .unwrap();
        let mode: i64 = sqlx::query_scalar("PRAGMA auto_vacuum")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(mode, 0);
        pool.close().await;
    }
    let store = a2a_runtime::store::SqliteStore::open(&url).await.unwrap();
    let mode: i64 = sqlx::query_scalar("PRAGMA auto_vacuum")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(mode, 2, "switched to incremental");
    let scope = Scope::new("", "anon");
    let big = filler("payload", 4_000);
    for i in 0..600 {
        let mut t = task(&format!("s{i:04}"), "c", TaskState::Completed, 1_000);
        t.status.message = Some(a2a_runtime::types::Message {
            message_id: format!("m{i}").into(),
            parts: vec![a2a_runtime::types::Part::text(big.clone())],
            ..Default::default()
        });
        store
            .create(&scope, &t, Some(&StreamResponse::Task(t.clone())))
            .await
            .unwrap();
    }
    let pages = |store: &a2a_runtime::store::SqliteStore| {
        let pool = store.pool().clone();
        async move {
            let n: i64 = sqlx::query_scalar("PRAGMA page_count")
                .fetch_one(&pool)
                .await
                .unwrap();
            n
        }
    };
    let full = pages(&store).await;
    assert!(full > 1_000, "{full}");
    use a2a_runtime::store::TaskStore as _;
    assert_eq!(
        store.purge_finished_beyond(50, false, 1_000).await.unwrap(),
        550
    );
    let after = pages(&store).await;
    // The freed pages beyond a quarter of the file went back.
    assert!(after < full * 6 / 10, "{full} pages before, {after} after");
    let free: i64 = sqlx::query_scalar("PRAGMA freelist_count")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert!(free <= after / 4 + 1, "{free} free of {after}");
}
