//! v0.3 JSON-RPC on the wire: method names and shapes (`kind`, `final`, lowercase states),
//! version selection per request, `.protocol_versions(..)`, one task read across versions.

use a2a_runtime::compat::ProtocolVersion;
use a2a_runtime::test::TestServer;
use a2a_tests::client::{builder, interop_builder};
use serde_json::{Value, json};

use super::*;

/// Without `A2A-Version`, the v0.3 methods answer in v0.3's shapes: `kind`, lowercase states,
/// `final`, nested push configs, `A2A-Version: 0.3` and `X-A2A-Extensions` in the response.
#[tokio::test]
async fn v0_3_json_rpc_methods_and_shapes() {
    let srv = TestServer::start(interop_builder()).await;
    let url = srv.url().to_owned();
    let (sent, headers) = rpc(
        &url,
        None,
        "message/send",
        json!({"message": user("hello", "v03-1")}),
    )
    .await;
    let task = &sent["result"];
    assert_eq!(task["kind"], "task", "{sent}");
    assert_eq!(task["status"]["state"], "completed", "{sent}");
    assert_eq!(task["history"][0]["role"], "user", "{sent}");
    assert_eq!(task["history"][0]["parts"][0]["kind"], "text", "{sent}");
    assert_eq!(task["artifacts"][0]["parts"][0]["kind"], "text", "{sent}");
    assert_eq!(headers.get("a2a-version").unwrap(), "0.3");
    let id = task["id"].as_str().unwrap().to_owned();

    let (got, _) = rpc(
        &url,
        Some("0.3"),
        "tasks/get",
        json!({"id": id, "historyLength": 1}),
    )
    .await;
    assert_eq!(got["result"]["id"], id.as_str(), "{got}");
    assert_eq!(got["result"]["history"].as_array().unwrap().len(), 1);

    let events = rpc_stream(
        &url,
        None,
        "message/stream",
        json!({"message": user("stream", "v03-2")}),
    )
    .await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["result"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"task"), "{events:?}");
    assert_eq!(
        kinds.iter().filter(|k| **k == "artifact-update").count(),
        3,
        "{kinds:?}"
    );
    let last = &events.last().unwrap()["result"];
    assert_eq!(
        (last["kind"].as_str(), last["final"].as_bool()),
        (Some("status-update"), Some(true))
    );
    assert_eq!(last["status"]["state"], "completed");
    assert!(events.iter().all(|e| e["id"] == "s"));

    let (set, _) = rpc(
        &url,
        None,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": id, "pushNotificationConfig": {"url": "https://push.example.com/h", "token": "t",
            "authentication": {"schemes": ["Bearer"], "credentials": "c"}}}),
    )
    .await;
    assert_eq!(set["result"]["taskId"], id.as_str(), "{set}");
    assert_eq!(
        set["result"]["pushNotificationConfig"]["id"],
        id.as_str(),
        "named after its task: {set}"
    );
    assert_eq!(
        set["result"]["pushNotificationConfig"]["authentication"]["schemes"],
        json!(["Bearer"])
    );
    let (get, _) = rpc(
        &url,
        None,
        "tasks/pushNotificationConfig/get",
        json!({"id": id}),
    )
    .await;
    assert_eq!(
        get["result"]["pushNotificationConfig"]["token"], "t",
        "{get}"
    );
    let (list, _) = rpc(
        &url,
        None,
        "tasks/pushNotificationConfig/list",
        json!({"id": id}),
    )
    .await;
    assert_eq!(list["result"].as_array().unwrap().len(), 1, "{list}");
    let (del, _) = rpc(
        &url,
        None,
        "tasks/pushNotificationConfig/delete",
        json!({"id": id, "pushNotificationConfigId": id}),
    )
    .await;
    assert_eq!(del["result"], Value::Null, "{del}");
    assert!(del.get("error").is_none(), "{del}");

    let (missing, _) = rpc(&url, None, "tasks/get", json!({"id": "nope"})).await;
    assert_eq!(missing["error"]["code"], -32001, "{missing}");

    // Extensions through v0.3's header, echoed in both names.
    let resp = http()
        .post(&url)
        .header("X-A2A-Extensions", "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": user("hi", "v03-3")}}))
        .send()
        .await
        .unwrap();
    for name in ["x-a2a-extensions", "a2a-extensions"] {
        let v = resp
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned());
        assert!(v.is_some_and(|v| v.contains("timestamp")), "{name}");
    }
}

/// Version selection: a v0.3 method asked for as 1.0 is no method (-32601); a v1.0 method
/// without `A2A-Version` is VersionNotSupported; `.protocol_versions` switches either off.
#[tokio::test]
async fn versions_are_selected_per_request_and_configurable() {
    let srv = TestServer::start(builder("versions")).await;
    let (e, _) = rpc(
        srv.url(),
        Some("1.0"),
        "message/send",
        json!({"message": user("x", "sel-1")}),
    )
    .await;
    assert_eq!(e["error"]["code"], -32601, "{e}");
    let (e, _) = rpc(
        srv.url(),
        None,
        "SendMessage",
        json!({"message": user_v1("x", "sel-2")}),
    )
    .await;
    assert_eq!(e["error"]["code"], -32009, "{e}");
    let (e, _) = rpc(
        srv.url(),
        Some("2.0"),
        "message/send",
        json!({"message": user("x", "sel-3")}),
    )
    .await;
    assert_eq!(e["error"]["code"], -32601, "{e}");

    let v1 = TestServer::start(builder("v1").protocol_versions([ProtocolVersion::V1_0])).await;
    let (e, _) = rpc(
        v1.url(),
        None,
        "message/send",
        json!({"message": user("x", "sel-4")}),
    )
    .await;
    assert_eq!(e["error"]["code"], -32009, "{e}");
    let (ok, _) = rpc(
        v1.url(),
        Some("1.0"),
        "SendMessage",
        json!({"message": user_v1("x", "sel-5")}),
    )
    .await;
    assert!(ok.get("result").is_some(), "{ok}");

    let v03 = TestServer::start(builder("v03").protocol_versions([ProtocolVersion::V0_3])).await;
    let (e, _) = rpc(
        v03.url(),
        Some("1.0"),
        "SendMessage",
        json!({"message": user_v1("x", "sel-6")}),
    )
    .await;
    assert_eq!(e["error"]["code"], -32009, "{e}");
    let (ok, _) = rpc(
        v03.url(),
        None,
        "message/send",
        json!({"message": user("x", "sel-7")}),
    )
    .await;
    assert_eq!(ok["result"]["kind"], "task", "{ok}");
}

/// One task, both versions: created over v0.3, read, streamed and canceled over v1.0; created
/// over v1.0, read, streamed and canceled over v0.3.
#[tokio::test]
async fn one_task_is_served_in_both_versions() {
    let srv = TestServer::start(builder("both")).await;
    let url = srv.url().to_owned();
    let config03 = json!({"blocking": false});
    let (made, _) = rpc(
        &url,
        None,
        "message/send",
        json!({"message": user("wait", "both-1"), "configuration": config03}),
    )
    .await;
    let id = made["result"]["id"].as_str().unwrap().to_owned();
    let (got, _) = rpc(&url, Some("1.0"), "GetTask", json!({"id": id})).await;
    assert_eq!(got["result"]["history"][0]["role"], "ROLE_USER", "{got}");
    let sub = http()
        .post(&url)
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": id}}),
        )
        .send()
        .await
        .unwrap();
    let (canceled, _) = rpc(&url, Some("1.0"), "CancelTask", json!({"id": id})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    let events = sse_events(sub).await;
    assert!(
        events[0]["result"]["task"]["id"] == id.as_str(),
        "{events:?}"
    );
    assert_eq!(
        events.last().unwrap()["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );

    let (made, _) = rpc(
        &url,
        Some("1.0"),
        "SendMessage",
        json!({"message": user_v1("wait", "both-2"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = made["result"]["task"]["id"].as_str().unwrap().to_owned();
    let (got, _) = rpc(&url, None, "tasks/get", json!({"id": id})).await;
    assert_eq!(got["result"]["kind"], "task", "{got}");
    assert_eq!(got["result"]["history"][0]["role"], "user", "{got}");
    let sub = http()
        .post(&url)
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": id}}))
        .send()
        .await
        .unwrap();
    let (canceled, _) = rpc(&url, None, "tasks/cancel", json!({"id": id})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "canceled",
        "{canceled}"
    );
    let events = sse_events(sub).await;
    assert_eq!(events[0]["result"]["kind"], "task", "{events:?}");
    let last = &events.last().unwrap()["result"];
    assert_eq!(
        (last["status"]["state"].as_str(), last["final"].as_bool()),
        (Some("canceled"), Some(true))
    );
}
