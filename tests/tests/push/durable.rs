//! The durable outbox: restarts and instances sharing a database. A restart in the middle of a
//! retry, two instances on one PostgreSQL database, and events written before a crash are each
//! delivered once.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use a2a_runtime::protocol::Principal;
use a2a_runtime::push::{PushConfig, RetryPolicy};
use a2a_runtime::server::A2aServer;
use a2a_runtime::store::{PushOutbox, Scope};
use a2a_runtime::test::*;
use a2a_runtime::types::TaskPushNotificationConfig;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde_json::{Value, json};

use super::*;

/// Push for the durable-outbox tests: short retries, and a short lease, so that a delivery an
/// instance held when it stopped is taken over within the test's time.
fn durable_push() -> PushConfig {
    dev_push()
        .retry(RetryPolicy {
            base: Duration::from_millis(100),
            cap: Duration::from_millis(300),
            ..RetryPolicy::default()
        })
        .timeout(Duration::from_secs(2))
        .lease(Duration::from_secs(3))
}

/// A server on the stores of `store_url`, in a runtime (and thread) of its own: stopping it
/// ends every task it started — the push sender's included, mid-attempt or waiting for a retry
/// — as the end of its process would.
struct Process {
    url: String,
    handle: actix_web::dev::ServerHandle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Process {
    async fn start(store_url: &str) -> Self {
        let store_url = store_url.to_owned();
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let stores = a2a_runtime::store::connect(&store_url).await.unwrap();
                let (agent, _control) = script_agent();
                let server = A2aServer::builder()
                    .card(agent_card("durable"))
                    .stores(stores)
                    .executor(agent)
                    .push(durable_push())
                    .shutdown_grace(Duration::from_millis(100))
                    .workers(1)
                    .build()
                    .unwrap();
                let running = server.start("127.0.0.1:0").await.unwrap();
                let _ = url_tx.send((running.url(), running.handle()));
                let _ = stopped.await;
                running.stop().await;
            });
            // The runtime goes here, and every task of the sender with it.
            rt.shutdown_background();
        });
        let (url, handle) = within("the instance starts", url_rx).await.unwrap();
        Self {
            url,
            handle,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn client(&self) -> TestServer {
        TestServer::attached(self.url.clone(), self.handle.clone())
    }

    /// Stops the server and ends its runtime; returns once it is gone.
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let thread = self.thread.take().unwrap();
        within(
            "the instance stops",
            tokio::task::spawn_blocking(move || thread.join()),
        )
        .await
        .unwrap()
        .unwrap();
    }
}

/// The receiver fails; the server is stopped while a delivery waits for its retry (or is in
/// flight); a new server on the same store delivers every event of the task once, in order.
async fn restart_mid_retry(store_url: &str, outbox: Arc<dyn PushOutbox>) {
    let pending = || {
        let outbox = outbox.clone();
        async move { outbox.pending().await.unwrap() }
    };
    let rx = Receiver::start().await;
    rx.state.failing.store(true, Ordering::SeqCst);
    let first = Process::start(store_url).await;
    let params = inline(msg("hello"), json!({"url": format!("{}/switch/r", rx.url)}));
    // (A client's drop stops the server: it lives until the stop.)
    let client = first.client();
    let stream = client
        .stream(Binding::JsonRpc, "SendStreamingMessage", params)
        .await
        .unwrap();
    let mut events: Vec<Value> = stream.collect().await.into_iter().map(|e| e.data).collect();
    events.remove(0); // The stream's own opening snapshot.
    assert!(events.len() >= 2, "{events:?}");
    // Every event is in the outbox, and the first has failed at least once.
    let n = events.len();
    within("the deliveries are in the outbox", async {
        while pending().await < n {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    eventually("a failed attempt", || rx.hits("/switch/r").len() >= 2).await;
    drop(client);
    first.stop().await;
    let failed = rx.hits("/switch/r").len();
    assert!(delivered(&rx, "/switch/r").is_empty());
    assert_eq!(pending().await, n, "the deliveries survived the stop");

    // The receiver is back; a new server on the same store resumes the deliveries.
    rx.state.failing.store(false, Ordering::SeqCst);
    let second = Process::start(store_url).await;
    eventually("delivered after the restart", || {
        delivered(&rx, "/switch/r").len() >= n
    })
    .await;
    within("the outbox drains", async {
        while pending().await > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    second.stop().await;
    assert_eq!(
        delivered(&rx, "/switch/r"),
        events,
        "every event delivered exactly once, in order ({failed} failed attempts before the stop)"
    );
}

#[tokio::test]
async fn sqlite_restart_mid_retry_resumes_from_the_outbox_and_delivers_once() {
    let (dir, url) = sqlite_file("a2a-push-restart");
    let probe = Arc::new(a2a_runtime::store::SqliteStore::open(&url).await.unwrap());
    restart_mid_retry(&url, probe.clone()).await;
    probe.pool().close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn postgres_restart_mid_retry_resumes_from_the_outbox_and_delivers_once() {
    let db = a2a_tests::pg::PgDatabase::create_named("a2a_push").await;
    let probe = Arc::new(
        a2a_runtime::store::PostgresStore::connect(&db.url)
            .await
            .unwrap(),
    );
    restart_mid_retry(&db.url, probe.clone()).await;
    probe.pool().close().await;
}

/// Two instances on one PostgreSQL database, each running a workload of tasks with push: every
/// event reaches its webhook exactly once (never once per instance), in order per
/// (task, config), whichever instance sent it.
#[tokio::test]
async fn two_instances_on_postgres_deliver_each_event_once_in_order() {
    let db = a2a_tests::pg::PgDatabase::create_named("a2a_push").await;
    let rx = Receiver::start().await;
    let mut instances = Vec::new();
    for _ in 0..2 {
        instances.push(server_on(&db.url, "cluster-push", durable_push()).await);
    }
    let per_instance = 15;
    let mut expected: Vec<(String, Vec<Value>)> = Vec::new();
    for i in 0..per_instance {
        for (k, (server, _, _)) in instances.iter().enumerate() {
            let path = format!("/ok/two/{k}/{i}/");
            let params = inline(msg("hello"), json!({"url": format!("{}{path}", rx.url)}));
            let stream = server
                .stream(Binding::JsonRpc, "SendStreamingMessage", params)
                .await
                .unwrap();
            let mut events: Vec<Value> =
                stream.collect().await.into_iter().map(|e| e.data).collect();
            events.remove(0); // The stream's own opening snapshot.
            expected.push((path, events));
        }
    }
    let total: usize = expected.iter().map(|(_, e)| e.len()).sum();
    eventually("every delivery", || rx.hits("/ok/two/").len() >= total).await;
    within("the senders count what the receiver saw", async {
        loop {
            let n: u64 = instances.iter().map(|(_, s, _)| m(s).delivered).sum();
            if n >= total as u64 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    for (path, events) in &expected {
        let got: Vec<Value> = rx.hits(path).into_iter().map(|h| h.body).collect();
        assert_eq!(&got, events, "{path}: each event once, in order");
    }
    assert_eq!(rx.hits("/ok/two/").len(), total, "no event delivered twice");
    let attempted: u64 = instances.iter().map(|(_, s, _)| m(s).attempted).sum();
    assert_eq!(
        attempted, total as u64,
        "one attempt per delivery over both instances"
    );
    // Counted as delivered before it is removed: the outbox empties just after.
    within("the outbox drains", async {
        while instances[0].1.pending().await.unwrap() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

/// The crash window is closed: what the handler writes for a task with a webhook — the
/// config, then the task's events — written through the stores while no sender exists (as
/// by a process killed right after its writes, before any delivery was attempted), is
/// delivered by the next server on the same database: each event once, in order.
async fn events_written_without_a_sender_are_delivered_by_the_next_server(store_url: &str) {
    use a2a_runtime::types::{StreamResponse, Task, TaskState, TaskStatus};
    let rx = Receiver::start().await;
    let path = "/ok/crash/t";
    {
        let stores = a2a_runtime::store::connect(store_url).await.unwrap();
        let scope = Scope::new("", Principal::ANONYMOUS_ID);
        let config = TaskPushNotificationConfig {
            id: "hook".into(),
            task_id: "t".into(),
            url: format!("{}{path}", rx.url),
            ..TaskPushNotificationConfig::default()
        };
        stores.push_configs.put(&scope, &config).await.unwrap();
        let mut task = Task {
            id: "t".into(),
            context_id: "c".into(),
            ..Task::default()
        };
        let mut version = 0;
        for state in [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed,
        ] {
            task.status = TaskStatus {
                state,
                ..TaskStatus::default()
            };
            let event = StreamResponse::Task(task.clone());
            version = if version == 0 {
                stores
                    .tasks
                    .create(&scope, &task, Some(&event))
                    .await
                    .unwrap()
            } else {
                stores
                    .tasks
                    .update(&scope, &task, version, Some(&event))
                    .await
                    .unwrap()
            };
        }
        assert_eq!(
            stores.outbox.pending().await.unwrap(),
            3,
            "written with the events"
        );
    }
    let (_server, sender, _control) = server_on(store_url, "crash", dev_push()).await;
    eventually("the deliveries", || m(&sender).delivered >= 3).await;
    within("the outbox drains", async {
        while sender.pending().await.unwrap() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let states: Vec<Value> = rx
        .hits(path)
        .iter()
        .map(|h| h.body["task"]["status"]["state"].clone())
        .collect();
    assert_eq!(
        states,
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ],
        "each event once, in order"
    );
    let metrics = m(&sender);
    assert_eq!(
        (metrics.attempted, metrics.delivered),
        (3, 3),
        "{metrics:?}"
    );
}

#[tokio::test]
async fn sqlite_events_written_before_a_crash_are_delivered_once_after_it() {
    let (dir, url) = sqlite_file("a2a-push-crash");
    events_written_without_a_sender_are_delivered_by_the_next_server(&url).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn postgres_events_written_before_a_crash_are_delivered_once_after_it() {
    let db = a2a_tests::pg::PgDatabase::create_named("a2a_push").await;
    events_written_without_a_sender_are_delivered_by_the_next_server(&db.url).await;
}
