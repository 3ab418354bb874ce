//! Exactly-once SendMessage under client retries, over real HTTP: a SendMessage repeated with
//! the same `messageId` by the same principal answers with the task the first one started, and
//! the agent runs once — after a connection dropped mid-request (memory store), across a
//! restart (a real SQLite file), across two instances racing on one PostgreSQL database, for a
//! continued task, and on the streaming method.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use a2a_runtime::A2aError;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::server::{A2aServer, A2aServerBuilder};
use a2a_runtime::store;
use a2a_runtime::test::*;
use a2a_tests::params::*;
use a2a_tests::pg::PgDatabase;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::sync::Notify;

/// Counts its runs. `slow`: works, says it started, then waits for the gate before it
/// completes; `ask`: asks for input; anything else completes.
#[derive(Clone, Default)]
struct Counted {
    runs: Arc<AtomicUsize>,
    started: Arc<Notify>,
    gate: Arc<Notify>,
}

impl AgentExecutor for Counted {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        match ctx.text().as_str() {
            "slow" => {
                events.working().await?;
                self.started.notify_one();
                self.gate.notified().await;
                events.complete().await
            }
            "ask" => events.input_required("which one?").await,
            _ => events.complete().await,
        }
    }
}

impl Counted {
    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

fn builder(agent: &Counted) -> A2aServerBuilder {
    let mut card = agent_card("counted");
    card.capabilities.streaming = Some(true);
    A2aServer::builder().card(card).executor(agent.clone())
}

/// SendMessage params with this message id.
fn send_with(message_id: &str, text: &str) -> Value {
    json!({"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// The ids of every task the anonymous caller holds.
async fn task_ids(server: &TestServer) -> Vec<String> {
    let page = server
        .ok(Binding::JsonRpc, "ListTasks", json!({"pageSize": 100}))
        .await;
    page["tasks"].as_array().unwrap().iter().map(id).collect()
}

#[tokio::test]
async fn a_send_retried_after_a_dropped_connection_returns_the_first_task() {
    let agent = Counted::default();
    let server = TestServer::start(builder(&agent)).await;
    let params = send_with(&mid(), "slow");
    // The first request, on a raw connection dropped once the server read it (the agent has
    // started) and before it answered.
    let addr = server.url().trim_start_matches("http://").to_owned();
    let body = params.to_string();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "POST /message:send HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/a2a+json\r\n\
         A2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    within("the agent's start", agent.started.notified()).await;
    drop(conn);
    // The retry, on both bindings: waits for the first task's answer.
    let retry = {
        let server = &server;
        let params = params.clone();
        async move { server.ok(Binding::Rest, "SendMessage", params).await }
    };
    // The agent may finish before or after the retry arrives: either way the retry answers
    // with the first task, once it is COMPLETED.
    let release = async {
        agent.gate.notify_one();
    };
    let (answer, ()) = tokio::join!(retry, release);
    let task = task_of(&answer);
    assert_eq!(state(task), "TASK_STATE_COMPLETED");
    assert_eq!(agent.runs(), 1, "the agent ran once");
    assert_eq!(task_ids(&server).await, [id(task)], "one task was started");
    // Again, over JSON-RPC: the same task.
    let again = server.ok(Binding::JsonRpc, "SendMessage", params).await;
    assert_eq!(id(task_of(&again)), id(task));
    assert_eq!(agent.runs(), 1);
    // Another message id: a new task.
    let other = server
        .ok(Binding::JsonRpc, "SendMessage", send_with(&mid(), "hi"))
        .await;
    assert_ne!(id(task_of(&other)), id(task));
    assert_eq!(agent.runs(), 2);
}

#[tokio::test]
async fn a_repeat_is_per_principal_and_can_be_turned_off() {
    let agent = Counted::default();
    let server = TestServer::start(builder(&agent)).await;
    let params = send_with(&mid(), "hi");
    let first = server
        .ok(Binding::Rest, "SendMessage", params.clone())
        .await;
    // The same message id in another tenant is another principal's message.
    let elsewhere = server
        .request(Binding::Rest, "SendMessage", params.clone())
        .tenant("other")
        .result()
        .await
        .unwrap();
    assert_ne!(id(task_of(&elsewhere)), id(task_of(&first)));
    assert_eq!(agent.runs(), 2);

    // Off: each send runs the agent.
    let off = Counted::default();
    let handler = std::sync::Arc::new(
        a2a_runtime::core::DefaultRequestHandler::new(
            off.clone(),
            std::sync::Arc::new(a2a_runtime::store::InMemoryTaskStore::new()),
            std::sync::Arc::new(a2a_runtime::store::InMemoryPushConfigStore::new()),
            std::sync::Arc::new(agent_card("counted")),
            a2a_runtime::core::Limits::default(),
        )
        .with_idempotency(None),
    );
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("counted"))
            .handler(handler),
    )
    .await;
    let a = server
        .ok(Binding::Rest, "SendMessage", params.clone())
        .await;
    let b = server.ok(Binding::Rest, "SendMessage", params).await;
    assert_ne!(id(task_of(&a)), id(task_of(&b)));
    assert_eq!(off.runs(), 2);
}

#[tokio::test]
async fn a_repeat_after_a_restart_returns_the_first_task_from_the_sqlite_file() {
    let dir = std::env::temp_dir().join(format!(
        "a2a-idem-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_micros()
    ));
    let url = format!("sqlite://{}", dir.join("tasks.db").display());
    let agent = Counted::default();
    let params = send_with(&mid(), "hi");
    let first = {
        let server =
            TestServer::start(builder(&agent).stores(store::connect(&url).await.unwrap())).await;
        let first = server
            .ok(Binding::JsonRpc, "SendMessage", params.clone())
            .await;
        server.stop().await;
        id(task_of(&first))
    };
    assert_eq!(agent.runs(), 1);
    let server =
        TestServer::start(builder(&agent).stores(store::connect(&url).await.unwrap())).await;
    for binding in Binding::BOTH {
        let again = server.ok(binding, "SendMessage", params.clone()).await;
        assert_eq!(id(task_of(&again)), first);
        assert_eq!(state(task_of(&again)), "TASK_STATE_COMPLETED");
        // Streaming: the first task's stream (a finished task: its snapshot).
        let events = server
            .stream(binding, "SendStreamingMessage", params.clone())
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].member(), "task");
        assert_eq!(id(&events[0].data["task"]), first);
        assert_eq!(events[0].state(), Some("TASK_STATE_COMPLETED"));
    }
    assert_eq!(agent.runs(), 1, "the agent ran once, before the restart");
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn two_instances_racing_on_postgres_run_the_agent_once() {
    let db = PgDatabase::create().await;
    let agent = Counted::default();
    let one =
        TestServer::start(builder(&agent).stores(store::connect(&db.url).await.unwrap())).await;
    let two =
        TestServer::start(builder(&agent).stores(store::connect(&db.url).await.unwrap())).await;
    for round in 0..10 {
        let params = send_with(&mid(), "hi");
        let (a, b) = tokio::join!(
            one.ok(Binding::Rest, "SendMessage", params.clone()),
            two.ok(Binding::JsonRpc, "SendMessage", params)
        );
        assert_eq!(id(task_of(&a)), id(task_of(&b)), "round {round}");
        assert_eq!(state(task_of(&a)), "TASK_STATE_COMPLETED");
        assert_eq!(state(task_of(&b)), "TASK_STATE_COMPLETED");
        assert_eq!(agent.runs(), round + 1, "round {round}: the agent ran once");
    }
    one.stop().await;
    two.stop().await;
}

#[tokio::test]
async fn a_repeated_message_to_a_continued_task_returns_the_task() {
    let agent = Counted::default();
    let server = TestServer::start(builder(&agent)).await;
    let waiting = server
        .ok(Binding::JsonRpc, "SendMessage", send_with(&mid(), "ask"))
        .await;
    let task_id = id(task_of(&waiting));
    let mut answer = msg_to(&task_id, "done");
    let again = answer.clone();
    let first = server
        .ok(Binding::Rest, "SendMessage", answer.clone())
        .await;
    assert_eq!(state(task_of(&first)), "TASK_STATE_COMPLETED");
    assert_eq!(agent.runs(), 2);
    // The same message again (the task is finished now): the task, not an error; no run.
    for binding in Binding::BOTH {
        let repeat = server.ok(binding, "SendMessage", again.clone()).await;
        assert_eq!(id(task_of(&repeat)), task_id);
        assert_eq!(state(task_of(&repeat)), "TASK_STATE_COMPLETED");
    }
    assert_eq!(agent.runs(), 2);
    // The same id for another message: a client's mistake, not a retry; refused, no run.
    let mut reused = again.clone();
    reused["message"]["parts"] = json!([{"text": "something else"}]);
    for binding in Binding::BOTH {
        server
            .call(binding, "SendMessage", reused.clone())
            .await
            .unwrap_err()
            .assert_invalid("message.messageId");
    }
    assert_eq!(agent.runs(), 2);
    // A new message id to the finished task: refused as before.
    answer["message"]["messageId"] = json!(mid());
    server
        .call(Binding::Rest, "SendMessage", answer)
        .await
        .unwrap_err()
        .assert_unsupported();
}

#[tokio::test]
async fn a_repeated_stream_follows_the_first_task_live() {
    let agent = Counted::default();
    let server = TestServer::start(builder(&agent)).await;
    let params = send_with(&mid(), "slow");
    let mut first = server
        .stream(Binding::Rest, "SendStreamingMessage", params.clone())
        .await
        .unwrap();
    within("the agent's start", agent.started.notified()).await;
    let task_id = id(&first.next().await.unwrap().data["task"]);
    drop(first);
    let mut repeat = server
        .stream(Binding::JsonRpc, "SendStreamingMessage", params)
        .await
        .unwrap();
    let opening = repeat.next().await.unwrap();
    assert_eq!(id(&opening.data["task"]), task_id);
    assert_eq!(opening.state(), Some("TASK_STATE_WORKING"));
    agent.gate.notify_one();
    let rest = repeat.collect().await;
    assert_eq!(
        rest.last().and_then(|e| e.state()),
        Some("TASK_STATE_COMPLETED")
    );
    assert_eq!(agent.runs(), 1);
}

/// A repeated SendStreamingMessage whose task waits for the client's input answers as the first
/// stream did: the task, then the end of the stream (not a subscription waiting for the next
/// turn), on both bindings; the agent ran once.
#[tokio::test]
async fn a_repeated_stream_of_a_task_asking_for_input_ends_like_the_first() {
    let agent = Counted::default();
    let server = TestServer::start(builder(&agent)).await;
    let params = send_with(&mid(), "ask");
    let first = server
        .stream(Binding::Rest, "SendStreamingMessage", params.clone())
        .await
        .unwrap()
        .collect()
        .await;
    let task_id = id(&first[0].data["task"]);
    for binding in Binding::BOTH {
        let repeat = within(
            "the repeated stream's end",
            server
                .stream(binding, "SendStreamingMessage", params.clone())
                .await
                .unwrap()
                .collect(),
        )
        .await;
        assert_eq!(repeat.len(), 1, "{binding:?}: {repeat:?}");
        assert_eq!(id(&repeat[0].data["task"]), task_id);
        assert_eq!(repeat[0].state(), Some("TASK_STATE_INPUT_REQUIRED"));
    }
    assert_eq!(agent.runs(), 1);
}

/// A send refused after its message id was claimed (a push config the URL guard refuses) gives
/// the claim back: the same message id sent again is a first send (a task, the agent runs),
/// not a repeat waiting for a task that was never made.
#[tokio::test]
async fn a_send_refused_after_its_claim_leaves_the_id_free() {
    let agent = Counted::default();
    let mut card = agent_card("counted");
    card.capabilities.streaming = Some(true);
    card.capabilities.push_notifications = Some(true);
    let server = TestServer::start(
        A2aServer::builder()
            .card(card)
            .executor(agent.clone())
            .push(a2a_runtime::push::PushConfig::new()),
    )
    .await;
    let message_id = mid();
    for (n, binding) in Binding::BOTH.into_iter().enumerate() {
        let message_id = format!("{message_id}-{n}");
        let mut refused = send_with(&message_id, "hi");
        refused["configuration"] =
            json!({"taskPushNotificationConfig": {"url": "http://127.0.0.1:1/hook"}});
        server
            .call(binding, "SendMessage", refused)
            .await
            .unwrap_err()
            .assert_invalid("configuration.taskPushNotificationConfig.url");
        let sent = within(
            "the second send",
            server.ok(binding, "SendMessage", send_with(&message_id, "hi")),
        )
        .await;
        assert_eq!(state(task_of(&sent)), "TASK_STATE_COMPLETED");
    }
    assert_eq!(agent.runs(), 2);
}
