//! An execution that returned and left its task WORKING (its executor is gone): the task is
//! taken over once it has gone `unowned_after` without a write, by each policy, and a
//! subscriber sees the outcome.

use a2a_runtime::core::{RECOVERY_METADATA, Recovered, RecoveryPolicy};
use a2a_runtime::store;
use a2a_runtime::test::Binding;
use a2a_tests::params::{id, msg, state, task_of};
use serde_json::json;

use super::*;

/// A task whose execution left it WORKING, on a fresh SQLite file: the server, handler,
/// agent reports, task id, and the file's directory.
async fn left_working(
    text: &str,
    recovery: Recovery,
) -> (
    TestServer,
    Arc<DefaultRequestHandler>,
    mpsc::UnboundedReceiver<Seen>,
    String,
    std::path::PathBuf,
) {
    let (dir, url) = sqlite_file("policy");
    let (server, handler, mut seen) = server(store::connect(&url).await.unwrap(), recovery).await;
    let answer = server.ok(Binding::JsonRpc, "SendMessage", msg(text)).await;
    let task = task_of(&answer);
    assert_eq!(state(task), "TASK_STATE_WORKING");
    let task_id = id(task);
    assert_eq!(started(&mut seen).await, (task_id.clone(), false));
    (server, handler, seen, task_id, dir)
}

#[tokio::test]
async fn a_task_left_working_ends_failed_saying_the_agent_stopped() {
    let (server, handler, _seen, task_id, dir) = left_working("leave", Recovery::default()).await;
    assert_eq!(handler.recovery().unowned_after, Duration::from_secs(30));
    let mut sub = server
        .stream(Binding::Rest, "SubscribeToTask", json!({"id": task_id}))
        .await
        .unwrap();
    assert_eq!(
        sub.next().await.unwrap().state(),
        Some("TASK_STATE_WORKING")
    );
    // Within the bound: left alone.
    let done = handler
        .recover(later(Duration::from_secs(20)))
        .await
        .unwrap();
    assert_eq!(done, Recovered::default());
    let done = handler
        .recover(later(Duration::from_secs(31)))
        .await
        .unwrap();
    assert_eq!(
        done,
        Recovered {
            failed: 1,
            ..Recovered::default()
        }
    );
    let end = sub.next().await.unwrap();
    assert_eq!(end.state(), Some("TASK_STATE_FAILED"));
    let why = status_text(&end);
    assert!(
        why.starts_with("The agent stopped before finishing"),
        "{why}"
    );
    assert!(why.contains("no server process runs it"), "{why}");
    assert!(
        sub.next().await.is_none(),
        "the stream ends after the final event"
    );
    for binding in Binding::BOTH {
        let task = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        assert_eq!(state(&task), "TASK_STATE_FAILED");
    }
    // Once.
    let done = handler
        .recover(later(Duration::from_secs(60)))
        .await
        .unwrap();
    assert_eq!(done, Recovered::default());
    assert_eq!(handler.recovery_metrics().failed, 1);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_resumable_agent_is_run_again_on_the_task_as_it_stands() {
    let recovery = Recovery {
        policy: RecoveryPolicy::Rerun { max_attempts: 1 },
        ..Recovery::default()
    };
    let (server, handler, mut seen, task_id, dir) = left_working("leave", recovery).await;
    let mut sub = server
        .stream(Binding::JsonRpc, "SubscribeToTask", json!({"id": task_id}))
        .await
        .unwrap();
    assert_eq!(
        sub.next().await.unwrap().state(),
        Some("TASK_STATE_WORKING")
    );
    let done = handler
        .recover(later(Duration::from_secs(31)))
        .await
        .unwrap();
    assert_eq!(
        done,
        Recovered {
            rerun: 1,
            ..Recovered::default()
        }
    );
    assert_eq!(started(&mut seen).await, (task_id.clone(), true));
    let events = sub.collect().await;
    let states: Vec<Option<&str>> = events.iter().map(|e| e.state()).collect();
    assert_eq!(
        states,
        [
            Some("TASK_STATE_WORKING"),
            None,
            Some("TASK_STATE_COMPLETED")
        ],
        "{events:?}"
    );
    let why = status_text(&events[0]);
    assert!(
        why.contains("runs it again") && why.contains("attempt 1 of 1"),
        "{why}"
    );
    let task = server
        .ok(Binding::Rest, "GetTask", json!({"id": task_id}))
        .await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    assert_eq!(task["metadata"][RECOVERY_METADATA]["attempts"], 1);
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "resumed");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_task_run_again_too_often_fails() {
    let recovery = Recovery {
        policy: RecoveryPolicy::Rerun { max_attempts: 1 },
        ..Recovery::default()
    };
    let (server, handler, mut seen, task_id, dir) = left_working("leave always", recovery).await;
    let done = handler
        .recover(later(Duration::from_secs(31)))
        .await
        .unwrap();
    assert_eq!(done.rerun, 1);
    assert_eq!(started(&mut seen).await, (task_id.clone(), true));
    // The re-run left it WORKING again: the second time it fails.
    let mut done = Recovered::default();
    for _ in 0..1_000 {
        // The re-run's execution may still be finishing: the task is taken over only once it
        // has none, and a pass later than the first sees its later write.
        done = handler
            .recover(later(Duration::from_secs(120)))
            .await
            .unwrap();
        if done.failed == 1 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(
        done,
        Recovered {
            failed: 1,
            ..Recovered::default()
        }
    );
    let task = server
        .ok(Binding::Rest, "GetTask", json!({"id": task_id}))
        .await;
    assert_eq!(state(&task), "TASK_STATE_FAILED");
    let why = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(why.contains("run again 1 times already"), "{why}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_leave_policy_leaves_the_task_as_it_is() {
    let recovery = Recovery {
        policy: RecoveryPolicy::Leave,
        idle_working: None,
        ..Recovery::default()
    };
    let (server, handler, _seen, task_id, dir) = left_working("leave", recovery).await;
    let done = handler
        .recover(later(Duration::from_secs(86_400)))
        .await
        .unwrap();
    assert_eq!(done, Recovered::default());
    let task = server
        .ok(Binding::Rest, "GetTask", json!({"id": task_id}))
        .await;
    assert_eq!(state(&task), "TASK_STATE_WORKING");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_pass_takes_over_at_most_its_batch() {
    let (dir, url) = sqlite_file("batch");
    let recovery = Recovery {
        batch: 2,
        ..Recovery::default()
    };
    let (server, handler, mut seen) = server(store::connect(&url).await.unwrap(), recovery).await;
    for _ in 0..3 {
        let answer = server.ok(Binding::Rest, "SendMessage", msg("leave")).await;
        assert_eq!(state(task_of(&answer)), "TASK_STATE_WORKING");
        started(&mut seen).await;
    }
    let now = later(Duration::from_secs(31));
    // Bounded work per pass: two, then the last one (their executions have all returned: each
    // blocking SendMessage was answered when its execution ended).
    let mut counts = Vec::new();
    for _ in 0..3 {
        counts.push(handler.recover(now).await.unwrap().failed);
    }
    assert_eq!(counts, [2, 1, 0]);
    let working = server
        .ok(
            Binding::Rest,
            "ListTasks",
            json!({"status": "TASK_STATE_WORKING"}),
        )
        .await;
    assert_eq!(
        working["tasks"].as_array().map_or(0, Vec::len),
        0,
        "{working}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn on_the_in_memory_store_a_task_left_working_ends_failed_too() {
    let (server, handler, mut seen) = server(
        store::connect("memory:").await.unwrap(),
        Recovery::default(),
    )
    .await;
    let answer = server.ok(Binding::Rest, "SendMessage", msg("leave")).await;
    let task_id = id(task_of(&answer));
    started(&mut seen).await;
    let done = handler
        .recover(later(Duration::from_secs(20)))
        .await
        .unwrap();
    assert_eq!(done, Recovered::default());
    let done = handler
        .recover(later(Duration::from_secs(31)))
        .await
        .unwrap();
    assert_eq!(done.failed, 1);
    let task = server
        .ok(Binding::JsonRpc, "GetTask", json!({"id": task_id}))
        .await;
    assert_eq!(state(&task), "TASK_STATE_FAILED");
}
