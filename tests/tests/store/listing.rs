//! ListTasks keyset paging is served from an index: EXPLAIN on 100,000 tasks of one owner shows
//! an index scan and no sort, with its p99 latency; the purge's query uses an index too.

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_runtime::store::{self, Scope, TaskQuery, TaskStore};
use a2a_runtime::types::Timestamp;
use a2a_tests::pg::PgDatabase;

use super::*;

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
