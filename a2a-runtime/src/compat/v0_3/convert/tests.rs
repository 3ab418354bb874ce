//! v0.3 JSON-RPC bodies both ways: sends, events, push configs and refused parts.

#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

#[test]
fn a_v0_3_send_becomes_a_v1_0_send_request() {
    let p = params_in(
        Operation::SendMessage,
        json!({
            "message": {"kind": "message", "messageId": "m", "role": "user", "parts": [
                {"kind": "text", "text": "hi"},
                {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}},
                {"kind": "file", "file": {"uri": "https://x/y"}},
                {"kind": "data", "data": {"a": 1}}
            ]},
            "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"],
                "pushNotificationConfig": {"url": "https://h/p", "authentication": {"schemes": ["Bearer"]}}},
            "metadata": {"k": "v"}
        }),
    )
    .unwrap();
    let req: crate::types::SendMessageRequest = serde_json::from_value(p).unwrap();
    assert_eq!(req.message.role, crate::types::Role::User);
    assert_eq!(req.message.parts.len(), 4);
    let config = req.configuration.unwrap();
    assert!(config.return_immediately);
    let push = config.task_push_notification_config.unwrap();
    assert_eq!(push.url, "https://h/p");
    assert_eq!(push.authentication.unwrap().scheme, "Bearer");
    let back = params_out(
        Operation::SendMessage,
        serde_json::to_value(crate::types::SendMessageRequest {
            message: req.message,
            ..Default::default()
        })
        .unwrap(),
    );
    assert_eq!(back["message"]["role"], "user");
    assert_eq!(back["message"]["kind"], "message");
    assert_eq!(
        back["message"]["parts"][1]["file"]["mimeType"],
        "text/plain"
    );
    assert_eq!(back["message"]["parts"][1]["file"]["name"], "a.txt");
    assert_eq!(back["message"]["parts"][2]["file"]["uri"], "https://x/y");
    assert_eq!(back["message"]["parts"][3]["data"]["a"], 1);
}

#[test]
fn v1_0_events_become_v0_3_events_and_back() {
    let status = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}});
    let out = event_out(status.clone());
    assert_eq!(out["kind"], "status-update");
    assert_eq!(out["status"]["state"], "input-required");
    assert_eq!(out["final"], true);
    assert_eq!(event_in(out).unwrap(), status);
    let working = event_out(json!({"statusUpdate": {"taskId": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_WORKING"}}}));
    assert_eq!(working["final"], false);
    let task = json!({"task": {"id": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}],
        "history": [{"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "y"}]}]}});
    let out = event_out(task.clone());
    assert_eq!(out["kind"], "task");
    assert_eq!(out["status"]["state"], "completed");
    assert_eq!(out["artifacts"][0]["parts"][0]["kind"], "text");
    assert_eq!(out["history"][0]["role"], "agent");
    assert_eq!(out["history"][0]["kind"], "message");
    assert_eq!(event_in(out).unwrap(), task);
}

#[test]
fn push_configs_nest_in_v0_3() {
    let set = params_in(
        Operation::CreateTaskPushNotificationConfig,
        json!({"taskId": "t", "pushNotificationConfig": {"url": "https://h/p", "token": "k"}}),
    )
    .unwrap();
    assert_eq!(
        set,
        json!({"taskId": "t", "url": "https://h/p", "token": "k", "id": "t"})
    );
    let get = params_in(Operation::GetTaskPushNotificationConfig, json!({"id": "t"})).unwrap();
    assert_eq!(get, json!({"taskId": "t", "id": "t"}));
    let list = result_out(
        Operation::ListTaskPushNotificationConfigs,
        json!({"configs": [{"taskId": "t", "id": "p", "url": "https://h"}]}),
    );
    assert_eq!(
        list,
        json!([{"taskId": "t", "pushNotificationConfig": {"id": "p", "url": "https://h"}}])
    );
    assert_eq!(
        result_in(Operation::ListTaskPushNotificationConfigs, list).unwrap(),
        json!({"configs": [{"taskId": "t", "id": "p", "url": "https://h"}]})
    );
}

#[test]
fn a_part_without_a_kind_is_refused_with_its_path() {
    let err = params_in(
        Operation::SendMessage,
        json!({"message": {"messageId": "m", "role": "user", "parts": [{"kind": "video"}]}}),
    )
    .unwrap_err();
    assert!(err.to_string().contains("message.parts[0]"), "{err}");
}
