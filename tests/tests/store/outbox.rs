//! The push outbox: the same contract in memory, in SQLite and in PostgreSQL, and claimers racing
//! on one outbox.

use std::sync::Arc;

use a2a_runtime::store::{
    Delivery, InMemoryPushOutbox, NewDelivery, PostgresStore, PushOutbox, Scope, SqliteStore,
};
use a2a_tests::pg::PgDatabase;

use super::*;

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
