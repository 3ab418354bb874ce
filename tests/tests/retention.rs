//! Retention through the runtime, over real HTTP on both bindings: an interrupted task left
//! untouched past the bound is ended (FAILED, with a message saying why; a message sent to it
//! then is UnsupportedOperationError), and finished tasks past their age are purged (GetTask:
//! TaskNotFound) from a real SQLite file. Each pass is run with an explicit `now` (the injected
//! clock): no test waits for time to pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use a2a_runtime::A2aError;
use a2a_runtime::core::{
    AgentContext, AgentExecutor, DefaultRequestHandler, EventSink, Limits, Retention, Swept,
};
use a2a_runtime::server::A2aServer;
use a2a_runtime::store::{self, Stores};
use a2a_runtime::test::*;
use a2a_tests::params::*;
use serde_json::json;

/// Asks for input, unless the message says "done".
struct Asker;

impl AgentExecutor for Asker {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if ctx.text() == "done" {
            events.complete().await
        } else {
            events.input_required("which one?").await
        }
    }
}

/// A server whose handler the test holds (to run retention passes).
async fn server(
    stores: Stores,
    retention: Option<Retention>,
) -> (TestServer, Arc<DefaultRequestHandler>) {
    let mut served = agent_card("asker");
    served.capabilities.streaming = Some(true);
    let mut handler = DefaultRequestHandler::new(
        Asker,
        stores.tasks,
        stores.push_configs,
        Arc::new(served),
        Limits::default(),
    );
    if let Some(r) = retention {
        handler = handler.with_retention(r);
    }
    let handler = Arc::new(handler);
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("asker"))
            .handler(handler.clone()),
    )
    .await;
    (server, handler)
}

/// A fresh SQLite file's directory and URL.
fn sqlite_file(name: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!(
        "{name}{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_micros()
    ));
    let url = format!("sqlite://{}", dir.join("tasks.db").display());
    (dir, url)
}

fn later(by: Duration) -> SystemTime {
    SystemTime::now() + by
}

#[tokio::test]
async fn an_untouched_interrupted_task_is_ended_failed_with_a_reason() {
    let (server, handler) = server(store::connect("memory:").await.unwrap(), None).await;
    // The in-memory default: interrupted tasks wait at most an hour.
    assert_eq!(
        handler.retention().interrupted_ttl,
        Some(Duration::from_secs(3_600))
    );
    for binding in Binding::BOTH {
        let waiting = server.ok(binding, "SendMessage", msg("hello")).await;
        let task_id = id(task_of(&waiting));
        assert_eq!(state(task_of(&waiting)), "TASK_STATE_INPUT_REQUIRED");
        // Within the bound: nothing happens.
        let swept = handler.sweep(later(Duration::from_secs(60))).await.unwrap();
        assert_eq!(swept, Swept::default());
        let swept = handler
            .sweep(later(Duration::from_secs(3_601)))
            .await
            .unwrap();
        assert_eq!(
            swept,
            Swept {
                purged: 0,
                ended: 1
            }
        );
        let task = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        assert_eq!(state(&task), "TASK_STATE_FAILED");
        let why = text(&task["status"]["message"]);
        assert!(why.contains("no message arrived within 3600 s"), "{why}");
        assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
        // A message to it now: the task is terminal.
        let err = server
            .call(binding, "SendMessage", msg_to(&task_id, "here it is"))
            .await
            .unwrap_err();
        err.assert_unsupported();
        // Ended once.
        let swept = handler
            .sweep(later(Duration::from_secs(7_200)))
            .await
            .unwrap();
        assert_eq!(swept.ended, 0);
    }
    let m = handler.retention_metrics();
    assert_eq!((m.ended, m.purged, m.errors), (2, 0, 0));
    assert_eq!(m.passes, 6);
    // Nothing is left live.
    assert_eq!(handler.live_tasks(), 0);
}

#[tokio::test]
async fn a_task_touched_since_it_was_found_is_not_ended() {
    let (server, handler) = server(store::connect("memory:").await.unwrap(), None).await;
    let waiting = server
        .ok(Binding::JsonRpc, "SendMessage", msg("hello"))
        .await;
    let task_id = id(task_of(&waiting));
    // The client answers: the next turn asks again, and the task was written now.
    let again = server
        .ok(Binding::JsonRpc, "SendMessage", msg_to(&task_id, "more"))
        .await;
    assert_eq!(state(task_of(&again)), "TASK_STATE_INPUT_REQUIRED");
    let swept = handler
        .sweep(later(Duration::from_secs(3_000)))
        .await
        .unwrap();
    assert_eq!(swept.ended, 0);
    let task = server
        .ok(Binding::Rest, "GetTask", json!({"id": task_id}))
        .await;
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED");
}

#[tokio::test]
async fn durable_stores_end_interrupted_tasks_after_a_week_and_purge_old_finished_ones() {
    let (dir, url) = sqlite_file("a2a-retention-");
    let (server, handler) = server(store::connect(&url).await.unwrap(), None).await;
    // The durable default: finished tasks kept 30 days, interrupted ones 7 days untouched.
    assert_eq!(*handler.retention(), Retention::durable());
    assert_eq!(
        handler.retention().interrupted_ttl,
        Some(Duration::from_secs(7 * 86_400))
    );
    let done = server
        .ok(Binding::JsonRpc, "SendMessage", msg("done"))
        .await;
    let done_id = id(task_of(&done));
    let waiting = server.ok(Binding::Rest, "SendMessage", msg("hello")).await;
    let waiting_id = id(task_of(&waiting));
    let swept = handler
        .sweep(later(Duration::from_secs(6 * 86_400)))
        .await
        .unwrap();
    assert_eq!(swept, Swept::default());
    let swept = handler
        .sweep(later(Duration::from_secs(8 * 86_400)))
        .await
        .unwrap();
    assert_eq!(
        swept,
        Swept {
            purged: 0,
            ended: 1
        }
    );
    for binding in Binding::BOTH {
        let task = server
            .ok(binding, "GetTask", json!({"id": waiting_id}))
            .await;
        assert_eq!(state(&task), "TASK_STATE_FAILED");
        let task = server.ok(binding, "GetTask", json!({"id": done_id})).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    }
    // Both finished tasks were last written now: past 30 days, both go.
    let swept = handler
        .sweep(later(Duration::from_secs(31 * 86_400)))
        .await
        .unwrap();
    assert_eq!(
        swept,
        Swept {
            purged: 2,
            ended: 0
        }
    );
    for binding in Binding::BOTH {
        for task_id in [&done_id, &waiting_id] {
            server
                .call(binding, "GetTask", json!({"id": task_id}))
                .await
                .unwrap_err()
                .assert_task_not_found();
        }
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_bound_on_interrupted_tasks_applies_to_a_durable_store_when_set() {
    let (dir, url) = sqlite_file("a2a-retention-idle-");
    let retention = Retention {
        interrupted_ttl: Some(Duration::from_secs(600)),
        batch: 2,
        ..Retention::durable()
    };
    let (server, handler) = server(store::connect(&url).await.unwrap(), Some(retention)).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let waiting = server.ok(Binding::JsonRpc, "SendMessage", msg("hi")).await;
        ids.push(id(task_of(&waiting)));
    }
    // Bounded work per pass: two, then the last one.
    let now = later(Duration::from_secs(601));
    assert_eq!(handler.sweep(now).await.unwrap().ended, 2);
    assert_eq!(handler.sweep(now).await.unwrap().ended, 1);
    for task_id in &ids {
        let task = server
            .ok(Binding::Rest, "GetTask", json!({"id": task_id}))
            .await;
        assert_eq!(state(&task), "TASK_STATE_FAILED");
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_default_in_memory_store_is_capped_over_every_tenant() {
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("echo"))
            .executor(Asker)
            .max_tasks(50),
    )
    .await;
    // Each task in a tenant of its own (REST `/{tenant}/...` paths).
    let mut first = None;
    for i in 0..200 {
        let resp = server
            .http()
            .post(format!("{}/tenant-{i}/message:send", server.url()))
            .header("A2A-Version", "1.0")
            .json(&msg("done"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let body: serde_json::Value = resp.json().await.unwrap();
        if i == 0 {
            first = Some(id(&body["task"]));
        }
    }
    // The first task (finished first) was evicted.
    let resp = server
        .http()
        .get(format!(
            "{}/tenant-0/tasks/{}",
            server.url(),
            first.unwrap()
        ))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn finished_tasks_beyond_the_count_bound_are_purged_oldest_first() {
    let (dir, url) = sqlite_file("a2a-retention-count-");
    let retention = Retention {
        max_finished: Some(2),
        batch: 2,
        ..Retention::durable()
    };
    let (server, handler) = server(store::connect(&url).await.unwrap(), Some(retention)).await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        let done = server.ok(Binding::Rest, "SendMessage", msg("done")).await;
        ids.push(id(task_of(&done)));
    }
    let waiting = server.ok(Binding::Rest, "SendMessage", msg("hi")).await;
    // Now: within every age bound; over the count by 3, in batches of 2.
    let swept = handler.sweep(SystemTime::now()).await.unwrap();
    assert_eq!(swept.purged, 3);
    let mut held = Vec::new();
    for task_id in &ids {
        let found = server
            .call(Binding::JsonRpc, "GetTask", json!({"id": task_id}))
            .await;
        held.push(found.is_ok());
    }
    // The newest two stay (two finishing in the same millisecond may trade places).
    assert_eq!(held.iter().filter(|h| **h).count(), 2, "{held:?}");
    assert!(!held[0] && !held[1], "the oldest went: {held:?}");
    let live = server
        .ok(
            Binding::JsonRpc,
            "GetTask",
            json!({"id": id(task_of(&waiting))}),
        )
        .await;
    assert_eq!(state(&live), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(handler.sweep(SystemTime::now()).await.unwrap().purged, 0);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn message_claims_past_the_idempotency_window_are_purged() {
    let (server, handler) = server(store::connect("memory:").await.unwrap(), None).await;
    let window = handler.idempotency().unwrap().window;
    for _ in 0..3 {
        server.ok(Binding::Rest, "SendMessage", msg("done")).await;
    }
    handler.sweep(SystemTime::now()).await.unwrap();
    assert_eq!(handler.retention_metrics().claims_purged, 0);
    handler
        .sweep(later(window + Duration::from_secs(1)))
        .await
        .unwrap();
    assert_eq!(handler.retention_metrics().claims_purged, 3);
}
