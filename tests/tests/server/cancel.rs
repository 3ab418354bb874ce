//! CancelTask over real HTTP on both bindings (#47, #48, digest A6).

use a2a_runtime::test::*;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde_json::json;

/// #47: canceling a running task returns it CANCELED, the executor observes the cancellation,
/// and an open subscription ends with the CANCELED update.
#[tokio::test]
async fn cancel_running_task_47() {
    let (server, mut control) = scripted().await;
    for binding in Binding::BOTH {
        let task = server
            .send_task(
                binding,
                with_config(msg("gate 1"), json!({"returnImmediately": true})),
            )
            .await;
        let task_id = id(&task);
        assert_eq!(control.started().await, task_id);
        let mut sub = server
            .stream(binding, "SubscribeToTask", json!({"id": task_id}))
            .await
            .unwrap();
        assert_eq!(
            sub.next().await.unwrap().state(),
            Some("TASK_STATE_WORKING")
        );

        let canceled = server
            .ok(binding, "CancelTask", json!({"id": task_id}))
            .await;
        assert_eq!(id(&canceled), task_id);
        assert_eq!(state(&canceled), "TASK_STATE_CANCELED", "{canceled}");
        assert_eq!(control.cancelled().await, task_id, "the executor saw it");

        let rest = sub.collect().await;
        let last = rest.last().expect("a final event");
        assert_eq!(last.state(), Some("TASK_STATE_CANCELED"), "{rest:?}");
        let got = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        assert_eq!(state(&got), "TASK_STATE_CANCELED");
        assert!(
            got.get("artifacts").is_none(),
            "the agent never got past its gate"
        );
    }
}

/// #47: an interrupted task (no execution running) can be canceled too.
#[tokio::test]
async fn cancel_input_required_task_47() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("ask")).await;
        let canceled = server
            .ok(binding, "CancelTask", json!({"id": id(&task)}))
            .await;
        assert_eq!(state(&canceled), "TASK_STATE_CANCELED");
        server
            .err(binding, "SendMessage", msg_to(&id(&task), "Ada"))
            .await
            .assert_unsupported();
    }
}

/// #47 (A6): canceling a COMPLETED or FAILED task is TaskNotCancelable (-32002 / 400
/// FAILED_PRECONDITION), and the task is unchanged.
#[tokio::test]
async fn cancel_terminal_task_is_not_cancelable_47() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        for (command, final_state) in [
            ("hi", "TASK_STATE_COMPLETED"),
            ("fail", "TASK_STATE_FAILED"),
        ] {
            let task = server.send_task(binding, msg(command)).await;
            assert_eq!(state(&task), final_state);
            let err = server
                .err(binding, "CancelTask", json!({"id": id(&task)}))
                .await;
            err.assert_a2a("TASK_NOT_CANCELABLE", -32002, 400, "FAILED_PRECONDITION");
            assert_eq!(err.meta("taskId"), Some(id(&task).as_str()));
            let got = server
                .ok(binding, "GetTask", json!({"id": id(&task)}))
                .await;
            assert_eq!(state(&got), final_state);
        }
    }
}

/// #48 (A6): a repeated cancel of a CANCELED task returns the task; an unknown task is
/// TaskNotFound.
#[tokio::test]
async fn recancel_returns_task_and_unknown_is_not_found_48() {
    let (server, mut control) = scripted().await;
    for binding in Binding::BOTH {
        let task = server
            .send_task(
                binding,
                with_config(msg("gate"), json!({"returnImmediately": true})),
            )
            .await;
        control.started().await;
        let first = server
            .ok(binding, "CancelTask", json!({"id": id(&task)}))
            .await;
        control.cancelled().await;
        let again = server
            .ok(binding, "CancelTask", json!({"id": id(&task)}))
            .await;
        assert_eq!(state(&again), "TASK_STATE_CANCELED");
        assert_eq!(again["status"], first["status"], "nothing changed");
        server
            .err(binding, "CancelTask", json!({"id": "no-such-task"}))
            .await
            .assert_task_not_found();
    }
}

/// §5.3: REST cancel takes `{}`, `{"metadata": …}` or no body at all.
#[tokio::test]
async fn rest_cancel_bodies() {
    let (server, _control) = scripted().await;
    let bodies: [Option<&str>; 3] = [Some("{}"), Some(r#"{"metadata":{"why":"test"}}"#), None];
    for body in bodies {
        let task = server.send_task(Binding::Rest, msg("ask")).await;
        let url = format!("{}/tasks/{}:cancel", server.url(), id(&task));
        let mut req = server.http().post(url).header("A2A-Version", "1.0");
        if let Some(b) = body {
            req = req.header("content-type", "application/a2a+json").body(b);
        }
        let reply = server.send(req).await;
        assert_eq!(reply.status, 200, "{body:?}: {reply:?}");
        assert_eq!(state(&reply.json()), "TASK_STATE_CANCELED");
    }
}
