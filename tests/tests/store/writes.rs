//! How the SQL stores write: a bounded SQLite WAL, a write the database refuses failing alone in
//! a shared transaction, a long streamed task written chunk by chunk; and the opt-in figures.

use std::time::Instant;

use a2a_runtime::store::{self, PostgresStore, Scope, SqliteStore, StoreError, TaskStore};
use a2a_runtime::types::{Artifact, Part, StreamResponse, TaskState};
use a2a_tests::pg::PgDatabase;

use super::*;

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

/// The figure of the debug-build trap (opt-in: `cargo test --test store -- --ignored
/// streamed_task --nocapture`, in the test profile): one task streamed to a SQLite file, 600
/// chunks of 1 KiB appended to one artifact, one event each (the task ends at 600 KiB).
#[tokio::test]
#[ignore = "a benchmark, not a test: run it by hand for figures"]
async fn streamed_task_figure() {
    let file = SqliteFile::new();
    let s = SqliteStore::open(&file.url()).await.unwrap();
    let scope = Scope::new("", "streamer");
    let mut t = task("long", "c", TaskState::Working, 1);
    t.artifacts = vec![Artifact::new([Part::text(filler("chunk 0", 1000))]).with_id("a")];
    s.create(&scope, &t, None).await.unwrap();
    let chunks: u32 = 600;
    let started = Instant::now();
    for n in 1..chunks {
        t.artifacts[0]
            .parts
            .push(Part::text(filler(&format!("chunk {n}"), 1000)));
        s.update(&scope, &t, u64::from(n), Some(&chunk_event(&t, n as usize)))
            .await
            .unwrap();
    }
    let took = started.elapsed();
    println!(
        "streamed task: {chunks} chunks of 1 KiB in {:.2} s ({:.0} events/s)",
        took.as_secs_f64(),
        f64::from(chunks) / took.as_secs_f64()
    );
}
