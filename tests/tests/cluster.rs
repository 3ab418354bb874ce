//! Many instances on one PostgreSQL database (the machine's server; each test creates its own
//! database and drops it; a missing PostgreSQL fails these tests, it never skips them).
//!
//! Three servers in this process on 127.0.0.1:0 share the database, each with its own scripted
//! agent: a stream on one follows a task whose agent runs on another, in order, without gaps,
//! resumable with Last-Event-ID on a third; a cancel served by any instance reaches the agent;
//! a cancel racing a completion ends in exactly one terminal state; the task of an instance
//! that stopped (its lease expired) ends FAILED; a PostgreSQL server restarted under load (one
//! of its own) costs errors while it is down, never a panic, and service is back soon after.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_runtime::core::ClusterOptions;
use a2a_runtime::server::A2aServer;
use a2a_runtime::store;
use a2a_runtime::test::{Binding, Event, EventStream, TestServer, agent_card};
use a2a_tests::agent::Control;
use a2a_tests::params::{msg, with_config};
use serde_json::{Value, json};

use a2a_tests::pg::{PgDatabase, PrivateCluster};

/// One instance: a server on its own port with its own scripted agent.
struct Instance {
    server: TestServer,
    agent: Control,
}

/// An instance on `db` (the cluster is set by `stores` for PostgreSQL).
async fn instance(db: &PgDatabase, options: ClusterOptions) -> Instance {
    instance_at(&db.url, options).await
}

/// An instance on the database at `url`.
async fn instance_at(url: &str, options: ClusterOptions) -> Instance {
    let stores = store::connect(url).await.unwrap();
    assert!(stores.cluster.is_some(), "PostgreSQL stores form a cluster");
    let (agent, control) = a2a_tests::agent::script_agent();
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("cluster"))
            .stores(stores)
            .cluster_options(options)
            .executor(agent),
    )
    .await;
    Instance {
        server,
        agent: control,
    }
}

/// Three instances on one new database. Polling is slow (60 s), so what the tests see within
/// their time comes through notifications.
async fn three() -> (PgDatabase, [Instance; 3]) {
    let db = PgDatabase::create_named("a2a_cluster").await;
    let options = ClusterOptions {
        poll_every: Duration::from_secs(60),
        ..ClusterOptions::default()
    };
    let a = instance(&db, options.clone()).await;
    let b = instance(&db, options.clone()).await;
    let c = instance(&db, options).await;
    (db, [a, b, c])
}

/// A SubscribeToTask, with `Last-Event-ID` when given.
async fn subscribe(
    server: &TestServer,
    binding: Binding,
    task_id: &str,
    last_event_id: Option<u64>,
) -> EventStream {
    let req = match binding {
        Binding::JsonRpc => server
            .http()
            .post(format!("{}/", server.url()))
            .header("content-type", "application/json")
            .body(
                json!({"jsonrpc": "2.0", "id": "s", "method": "SubscribeToTask",
                    "params": {"id": task_id}})
                .to_string(),
            ),
        Binding::Rest => server
            .http()
            .get(format!("{}/tasks/{task_id}:subscribe", server.url())),
    };
    let mut req = req.header("A2A-Version", "1.0");
    if let Some(id) = last_event_id {
        req = req.header("Last-Event-ID", id.to_string());
    }
    let rpc_id = matches!(binding, Binding::JsonRpc).then(|| json!("s"));
    server
        .open_sse(binding, req, rpc_id)
        .await
        .unwrap_or_else(|e| panic!("subscribe: {e:?}"))
}

/// Starts `text` on `on` without waiting for it (returnImmediately): the task id.
async fn start(on: &TestServer, binding: Binding, text: &str) -> String {
    let task = on
        .send_task(
            binding,
            with_config(msg(text), json!({"returnImmediately": true})),
        )
        .await;
    a2a_tests::params::id(&task)
}

fn chunk_text(ev: &Event) -> String {
    ev.data["artifactUpdate"]["artifact"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Stream on B, agent on A, resume on C with Last-Event-ID, cancel from C: B and C see A's
/// events in order and without gaps, the cancel reaches A's agent, and every instance
/// answers GetTask and ListTasks alike — over both bindings.
#[tokio::test]
async fn stream_on_one_run_on_another_cancel_from_the_third() {
    let (_db, [mut a, b, c]) = three().await;
    for binding in Binding::BOTH {
        let task_id = start(&a.server, binding, "gate 5").await;
        assert_eq!(a.agent.started().await, task_id);
        let mut on_b = subscribe(&b.server, binding, &task_id, None).await;
        let first = on_b.next().await.unwrap();
        assert_eq!(first.member(), "task");
        assert_eq!(first.state(), Some("TASK_STATE_WORKING"));
        a.agent.release(2);
        let e1 = on_b.next().await.unwrap();
        let e2 = on_b.next().await.unwrap();
        assert_eq!(
            (chunk_text(&e1), chunk_text(&e2)),
            ("chunk 0".to_owned(), "chunk 1".to_owned())
        );
        assert_eq!((e1.id, e2.id), (first.id + 1, first.id + 2), "no gap");
        // B's client goes away; the agent goes on; C resumes after what B saw.
        drop(on_b);
        a.agent.release(1);
        let mut on_c = subscribe(&c.server, binding, &task_id, Some(e2.id)).await;
        let e3 = on_c.next().await.unwrap();
        assert_eq!((e3.id, chunk_text(&e3)), (e2.id + 1, "chunk 2".to_owned()));
        // Cancel from C: the agent on A observes it, and C's stream ends CANCELED.
        let canceled = c
            .server
            .ok(binding, "CancelTask", json!({"id": task_id}))
            .await;
        assert_eq!(a2a_tests::params::state(&canceled), "TASK_STATE_CANCELED");
        assert_eq!(a.agent.cancelled().await, task_id);
        let rest = on_c.collect().await;
        let last = rest.last().expect("the final event");
        assert_eq!(last.state(), Some("TASK_STATE_CANCELED"), "{rest:?}");
        assert_eq!(last.id, e3.id + rest.len() as u64, "no gap: {rest:?}");
        for i in [&a, &b, &c] {
            let t = i
                .server
                .ok(binding, "GetTask", json!({"id": task_id}))
                .await;
            assert_eq!(a2a_tests::params::state(&t), "TASK_STATE_CANCELED");
            let list = i.server.ok(binding, "ListTasks", json!({})).await;
            assert!(
                list["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t["id"] == task_id.as_str()),
                "{list}"
            );
        }
    }
}

/// A stream opened with SendStreamingMessage's task on another instance sees every event:
/// 200 chunks produced on A arrive on B in order, without gaps or duplicates.
#[tokio::test]
async fn a_long_task_streams_to_another_instance_without_gaps() {
    let (_db, [mut a, b, _c]) = three().await;
    let task_id = start(&a.server, Binding::Rest, "gate 200").await;
    assert_eq!(a.agent.started().await, task_id);
    let mut on_b = subscribe(&b.server, Binding::Rest, &task_id, None).await;
    let first = on_b.next().await.unwrap();
    a.agent.release(201);
    let rest = on_b.collect().await;
    let chunks: Vec<String> = rest
        .iter()
        .filter(|e| e.member() == "artifactUpdate")
        .map(chunk_text)
        .collect();
    let want: Vec<String> = (0..200).map(|i| format!("chunk {i}")).collect();
    assert_eq!(chunks, want);
    let ids: Vec<u64> = rest.iter().map(|e| e.id).collect();
    let gapless: Vec<u64> = (first.id + 1..=first.id + rest.len() as u64).collect();
    assert_eq!(ids, gapless);
    assert_eq!(rest.last().unwrap().state(), Some("TASK_STATE_COMPLETED"));
}

/// The states a task's log records, from its start.
async fn logged_states(on: &TestServer, task_id: &str) -> Vec<String> {
    subscribe(on, Binding::Rest, task_id, Some(0))
        .await
        .collect()
        .await
        .iter()
        .filter_map(|e| e.state().map(str::to_owned))
        .collect()
}

/// A cancel on B racing the agent's completion on A, 10 times: each task ends in exactly one
/// terminal state, which every instance reports and the log records once.
#[tokio::test]
async fn a_cancel_racing_a_completion_across_instances_ends_once() {
    let (_db, [mut a, b, c]) = three().await;
    let mut outcomes = Vec::new();
    for _ in 0..10 {
        let task_id = start(&a.server, Binding::JsonRpc, "gate 1").await;
        assert_eq!(a.agent.started().await, task_id);
        a.agent.release(1);
        // The chunk is written; the next permit completes the task while B cancels it.
        let (_, cancel) = tokio::join!(
            async { a.agent.release(1) },
            b.server
                .call(Binding::JsonRpc, "CancelTask", json!({"id": task_id}))
        );
        let state = match cancel {
            Ok(t) => a2a_tests::params::state(&t).to_owned(),
            Err(e) => {
                e.assert_a2a("TASK_NOT_CANCELABLE", -32002, 409, "FAILED_PRECONDITION");
                "TASK_STATE_COMPLETED".to_owned()
            }
        };
        for i in [&a, &b, &c] {
            let t = i
                .server
                .ok(Binding::Rest, "GetTask", json!({"id": task_id}))
                .await;
            assert_eq!(a2a_tests::params::state(&t), state);
        }
        let states = logged_states(&c.server, &task_id).await;
        let terminal: Vec<&String> = states
            .iter()
            .filter(|s| *s == "TASK_STATE_COMPLETED" || *s == "TASK_STATE_CANCELED")
            .collect();
        assert_eq!(terminal, vec![&state], "{states:?}");
        outcomes.push(state);
    }
    eprintln!("race outcomes: {outcomes:?}");
}

/// The tasks of an instance that stopped without finishing them (its leases were not renewed)
/// are ended FAILED by another instance, with the reason, within the lease TTL and one check.
#[tokio::test]
async fn a_task_of_a_stopped_instance_ends_failed() {
    let db = PgDatabase::create_named("a2a_cluster").await;
    let fast = ClusterOptions {
        lease_ttl: Duration::from_millis(900),
        check_every: Duration::from_millis(200),
        poll_every: Duration::from_secs(60),
    };
    let mut a = instance(&db, fast.clone()).await;
    let b = instance(&db, fast).await;
    let task_id = start(&a.server, Binding::JsonRpc, "gate 3").await;
    assert_eq!(a.agent.started().await, task_id);
    // Still renewed: a live instance's task is left alone past several TTLs.
    let mut on_b = subscribe(&b.server, Binding::Rest, &task_id, None).await;
    assert_eq!(
        on_b.next().await.unwrap().state(),
        Some("TASK_STATE_WORKING")
    );
    a.agent.release(1);
    assert_eq!(chunk_text(&on_b.next().await.unwrap()), "chunk 0");
    // A stops: its server goes and its leases are no longer renewed (its agent stays blocked).
    let stopped = std::time::Instant::now();
    drop(a.server);
    let end = on_b.next().await.unwrap();
    assert_eq!(end.state(), Some("TASK_STATE_FAILED"), "{end:?}");
    let why = end.data["statusUpdate"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(why.contains("stopped"), "{why}");
    eprintln!(
        "orphan ended {:?} after its instance stopped",
        stopped.elapsed()
    );
    let t = b
        .server
        .ok(Binding::Rest, "GetTask", json!({"id": task_id}))
        .await;
    assert_eq!(a2a_tests::params::state(&t), "TASK_STATE_FAILED");
    let _ = &mut a.agent;
    let _ = Value::Null;
}

/// What the load loop saw: when the request started, when its answer came, and the answer.
type Outcome = (
    Instant,
    Instant,
    Result<Value, a2a_runtime::test::ErrorAnswer>,
);

/// The change stream reports "changes unknown" only while it listens: after losing its
/// connection it stays silent while it cannot listen (here the database refuses connections
/// and every open one is ended),
/// and reports once it listens again, so the re-read it causes sees every write made while it
/// was away. (It used to report when the connection failed and then listen again silently:
/// writes committed in between went unheard until the next poll.)
#[tokio::test]
async fn changes_unknown_is_reported_once_listening_again() {
    use futures::StreamExt as _;
    use sqlx::Connection as _;
    let db = PgDatabase::create_named("a2a_relisten").await;
    let stores = store::connect(&db.url).await.unwrap();
    let mut changes = stores.cluster.unwrap().changes().await.unwrap().unwrap();
    let mut admin = sqlx::PgConnection::connect(&a2a_tests::pg::pg_admin_url())
        .await
        .unwrap();
    let listeners = async |admin: &mut sqlx::PgConnection| -> i64 {
        sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'",
        )
        .bind(&db.name)
        .fetch_one(admin)
        .await
        .unwrap()
    };
    assert_eq!(listeners(&mut admin).await, 1);
    for statement in [
        format!("ALTER DATABASE {} ALLOW_CONNECTIONS false", db.name),
        format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'",
            db.name
        ),
    ] {
        sqlx::query(&statement).execute(&mut admin).await.unwrap();
    }
    // Its reconnections fail (every 0.5 s) for 3 s: it reports nothing meanwhile.
    let early = tokio::time::timeout(Duration::from_secs(3), changes.next()).await;
    assert!(
        early.is_err(),
        "reported {early:?} while unable to listen ({} listening)",
        listeners(&mut admin).await
    );
    sqlx::query(&format!(
        "ALTER DATABASE {} ALLOW_CONNECTIONS true",
        db.name
    ))
    .execute(&mut admin)
    .await
    .unwrap();
    let change = a2a_runtime::test::within("the report after listening again", changes.next())
        .await
        .unwrap();
    assert_eq!(change, store::TaskChange::Unknown);
    assert_eq!(listeners(&mut admin).await, 1, "listening when it reports");
}

/// PostgreSQL stopped at once (`pg_ctl stop -m immediate`) while a client sends to instance A
/// without pause: requests fail with a clear error while it is down (the server answers, it
/// neither panics nor hangs), and within 10 s of PostgreSQL accepting connections again
/// requests succeed; the tasks acknowledged before are all there, and instance B hears A's
/// writes through notifications again (its poll is 60 s).
#[tokio::test]
async fn postgres_restarted_under_load() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let pg = PrivateCluster::start();
    let url = pg.url("postgres");
    let options = ClusterOptions {
        poll_every: Duration::from_secs(60),
        ..ClusterOptions::default()
    };
    let mut a = instance_at(&url, options.clone()).await;
    let b = instance_at(&url, options).await;
    let a_server = Arc::new(a.server);
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Outcome>(64);
    let load = tokio::spawn({
        let server = a_server.clone();
        let stop = stop.clone();
        async move {
            for _ in 0..1_000_000 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let started = Instant::now();
                let r = server
                    .call(Binding::JsonRpc, "SendMessage", msg("hello"))
                    .await;
                if tx.send((started, Instant::now(), r)).await.is_err() {
                    break;
                }
            }
        }
    });
    let mut next = async || {
        a2a_runtime::test::within("the next answer", rx.recv())
            .await
            .expect("the load loop runs")
    };
    // Up: every request succeeds.
    let mut acked = Vec::new();
    while acked.len() < 20 {
        let (_, _, r) = next().await;
        let r = r.unwrap_or_else(|e| panic!("before the stop: {}", e.body));
        assert_eq!(
            a2a_tests::params::state(a2a_tests::params::task_of(&r)),
            "TASK_STATE_COMPLETED"
        );
        acked.push(a2a_tests::params::id(a2a_tests::params::task_of(&r)));
    }
    // Down: a request sent after the stop fails with a JSON-RPC error.
    pg.stop_immediate();
    let down = Instant::now();
    let error = loop {
        let (started, _, r) = next().await;
        if let Err(e) = r
            && started >= down
        {
            break e;
        }
    };
    assert_eq!(error.http, 200, "{error:?}");
    assert!(
        [-32603, -32004].contains(&error.code) || error.code <= -32000,
        "{error:?}"
    );
    eprintln!("while down: {} {}", error.code, error.message);
    // Up again: service is back within 10 s of PostgreSQL accepting connections.
    pg.start_again();
    let up = Instant::now();
    let back = loop {
        let (started, answered, r) = next().await;
        if started >= up && r.is_ok() {
            break answered.duration_since(up);
        }
        assert!(
            up.elapsed() < Duration::from_secs(25),
            "not back after 25 s"
        );
    };
    eprintln!("back {back:?} after PostgreSQL accepted connections");
    assert!(back <= Duration::from_secs(10), "back after {back:?}");
    stop.store(true, Ordering::Relaxed);
    while rx.recv().await.is_some() {}
    load.await.unwrap();
    for id in &acked {
        let t = b
            .server
            .ok(Binding::Rest, "GetTask", json!({"id": id}))
            .await;
        assert_eq!(a2a_tests::params::state(&t), "TASK_STATE_COMPLETED");
    }
    // Notifications again: a task run on A streams to B without B's (60 s) poll.
    let task_id = start(&a_server, Binding::Rest, "gate 2").await;
    assert_eq!(a.agent.started().await, task_id);
    let mut on_b = subscribe(&b.server, Binding::Rest, &task_id, None).await;
    assert_eq!(on_b.next().await.unwrap().member(), "task");
    a.agent.release(3);
    let rest = on_b.collect().await;
    assert_eq!(
        rest.last().and_then(|e| e.state()),
        Some("TASK_STATE_COMPLETED"),
        "{rest:?}"
    );
}
