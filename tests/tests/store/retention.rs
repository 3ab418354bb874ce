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
