//! v0.3's REST bodies both ways: requests in, results and events out, and back on the client.

#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

#[test]
fn a_v0_3_rest_send_becomes_a_v1_0_request_and_back() {
    let body = json!({
        "message": {"messageId": "m", "role": "ROLE_USER", "content": [
            {"text": "hi"},
            {"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}},
            {"file": {"fileWithUri": "https://x/y"}},
            {"data": {"data": {"a": 1}}}
        ]},
        "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"],
            "pushNotification": {"url": "https://h/p", "authentication": {"schemes": ["Bearer"]}}}
    });
    let input = Input {
        body: body.as_object().unwrap().clone(),
        ..Input::default()
    };
    let p = request_in(Operation::SendMessage, input).unwrap();
    let req: crate::types::SendMessageRequest = serde_json::from_value(p.clone()).unwrap();
    assert_eq!(req.message.parts.len(), 4);
    assert_eq!(req.message.parts[1].filename, "a.txt");
    let config = req.configuration.unwrap();
    assert!(config.return_immediately);
    assert_eq!(
        config
            .task_push_notification_config
            .unwrap()
            .authentication
            .unwrap()
            .scheme,
        "Bearer"
    );
    let out = request_out(Operation::SendMessage, p).unwrap();
    assert_eq!(out.path, "/v1/message:send");
    let b = out.body.unwrap();
    assert_eq!(b["message"]["content"][1]["file"]["name"], "a.txt");
    assert_eq!(b["message"]["content"][3]["data"]["data"]["a"], 1);
    assert_eq!(b["configuration"]["blocking"], false);
    assert_eq!(
        b["configuration"]["pushNotification"]["authentication"]["schemes"],
        json!(["Bearer"])
    );
}

#[test]
fn events_and_tasks_take_the_v0_3_proto_shape_and_back() {
    let ev = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_CANCELED"}}});
    let out = event_out(ev.clone());
    assert_eq!(
        out["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELLED"
    );
    assert_eq!(out["statusUpdate"]["final"], true);
    assert_eq!(event_in(out).unwrap(), ev);
    let task = json!({"task": {"id": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_WORKING", "message":
            {"messageId": "s", "role": "ROLE_AGENT", "parts": [{"text": "w"}]}},
        "artifacts": [{"artifactId": "a", "parts": [{"data": [1, 2]}]}],
        "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "y"}]}]}});
    let out = event_out(task);
    assert_eq!(out["task"]["history"][0]["content"][0]["text"], "y");
    assert_eq!(out["task"]["status"]["message"]["content"][0]["text"], "w");
    assert_eq!(
        out["task"]["artifacts"][0]["parts"][0]["data"]["data"]["value"],
        json!([1, 2])
    );
    let back = event_in(out).unwrap();
    assert_eq!(back["task"]["history"][0]["parts"][0]["text"], "y");
}

#[test]
fn push_configs_are_named_resources() {
    for body in [
        json!({"parent": "tasks/t", "configId": "p",
            "config": {"name": "tasks/t/pushNotificationConfigs/p",
                "pushNotificationConfig": {"url": "https://h", "token": "k"}}}),
        json!({"name": "tasks/t/pushNotificationConfigs/p",
            "pushNotificationConfig": {"id": "p", "url": "https://h", "token": "k"}}),
    ] {
        let input = Input {
            task_id: Some("t".into()),
            body: body.as_object().unwrap().clone(),
            ..Input::default()
        };
        let v1 = request_in(Operation::CreateTaskPushNotificationConfig, input).unwrap();
        assert_eq!(
            v1,
            json!({"taskId": "t", "id": "p", "url": "https://h", "token": "k"})
        );
        let out = result_out(Operation::CreateTaskPushNotificationConfig, v1.clone());
        assert_eq!(out["name"], "tasks/t/pushNotificationConfigs/p");
        assert_eq!(out["pushNotificationConfig"]["token"], "k");
        assert_eq!(
            result_in(Operation::GetTaskPushNotificationConfig, out).unwrap(),
            v1
        );
        let req = request_out(Operation::CreateTaskPushNotificationConfig, v1).unwrap();
        assert_eq!(req.path, "/v1/tasks/t/pushNotificationConfigs");
        assert_eq!(req.body.unwrap()["configId"], "p");
    }
    let anonymous = Input {
        task_id: Some("t".into()),
        body: json!({"pushNotificationConfig": {"url": "https://h"}})
            .as_object()
            .unwrap()
            .clone(),
        ..Input::default()
    };
    let v1 = request_in(Operation::CreateTaskPushNotificationConfig, anonymous).unwrap();
    assert_eq!(v1["id"], "t");
    let list = result_out(
        Operation::ListTaskPushNotificationConfigs,
        json!({"configs": [{"taskId": "t", "id": "p", "url": "https://h"}]}),
    );
    assert_eq!(
        list["configs"][0]["name"],
        "tasks/t/pushNotificationConfigs/p"
    );
    assert_eq!(
        result_in(Operation::ListTaskPushNotificationConfigs, list).unwrap(),
        json!({"configs": [{"taskId": "t", "id": "p", "url": "https://h"}]})
    );
}

#[test]
fn errors_carry_their_code_and_a_status() {
    let e = A2aError::TaskNotFound {
        task_id: "x".into(),
    };
    assert_eq!(http_status(&e), 404);
    let body = error_body(&e);
    assert_eq!(body["code"], -32001);
    assert!(matches!(
        error_in(404, &body),
        A2aError::TaskNotFound { .. }
    ));
    assert!(matches!(
        error_in(409, &json!({"message": "no"})),
        A2aError::TaskNotCancelable { .. }
    ));
    assert_eq!(
        http_status(&A2aError::TaskNotCancelable {
            task_id: "x".into(),
            state: "completed".into()
        }),
        409
    );
}

#[test]
fn a_part_of_no_kind_is_refused_with_its_path() {
    let input = Input {
        body:
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"video": 1}]}})
                .as_object()
                .unwrap()
                .clone(),
        ..Input::default()
    };
    let err = request_in(Operation::SendMessage, input).unwrap_err();
    assert!(err.to_string().contains("message.content[0]"), "{err}");
}
