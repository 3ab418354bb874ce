//! v0.3 REST on the wire: the `/v1/...` routes, their shapes and errors, and the same paths as
//! tenant `v1`'s v1.0 routes.

use a2a_runtime::compat::ProtocolVersion;
use a2a_runtime::test::TestServer;
use a2a_tests::client::builder;
use serde_json::{Value, json};

use super::*;

/// The v0.3 REST routes, reached by appending `/v1/...` to the 0.3 card's HTTP+JSON interface
/// the way v0.3 clients do: proto-JSON shapes (`content`, `TASK_STATE_CANCELLED`, `final`,
/// named push configs), `{code, message}` errors with their HTTP status, the guard, and a
/// task shared with v1.0; with `A2A-Version: 1.0` the same paths are tenant `v1`'s v1.0 routes.
#[tokio::test]
async fn v0_3_rest_routes_shapes_and_errors() {
    let srv = TestServer::start(builder("rest03").v0_3_card(true)).await;
    let card: Value = http()
        .get(format!("{}{CARD}", srv.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rest = card["additionalInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["transport"] == "HTTP+JSON")
        .expect("the 0.3 card offers HTTP+JSON")["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(rest, srv.url());
    // The card's schemes in both shapes: v1.0's wrapper and v0.3's `type`.
    let (name, scheme) = card["securitySchemes"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(scheme["type"], "http", "{scheme}");
    assert_eq!(
        scheme["scheme"].as_str().map(str::to_ascii_lowercase),
        Some("bearer".into()),
        "{scheme}"
    );
    assert!(scheme.get("httpAuthSecurityScheme").is_some(), "{scheme}");
    assert!(
        card["security"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.get(name).is_some()),
        "{card}"
    );
    let v1_card: a2a_runtime::types::AgentCard = serde_json::from_value(card.clone()).unwrap();
    assert!(v1_card.security_schemes.contains_key(name));

    let user03 = |text: &str, id: &str| json!({"messageId": id, "role": "ROLE_USER", "content": [{"text": text}]});
    let sent = http()
        .post(format!("{rest}/v1/message:send"))
        .json(&json!({"message": user03("hello", "r03-1"), "configuration": {"blocking": true}}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    assert_eq!(sent.headers()["a2a-version"], "0.3");
    let sent: Value = sent.json().await.unwrap();
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    assert_eq!(task["history"][0]["content"][0]["text"], "hello", "{sent}");
    assert!(task["history"][0].get("parts").is_none(), "{sent}");
    let id = task["id"].as_str().unwrap().to_owned();

    let got: Value = http()
        .get(format!("{rest}/v1/tasks/{id}?historyLength=1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got["id"], id.as_str(), "{got}");
    assert_eq!(got["history"].as_array().unwrap().len(), 1, "{got}");
    // The same task over v1.0.
    let (v1, _) = rpc(srv.url(), Some("1.0"), "GetTask", json!({"id": id})).await;
    assert_eq!(
        v1["result"]["history"][0]["parts"][0]["text"], "hello",
        "{v1}"
    );

    let missing = http()
        .get(format!("{rest}/v1/tasks/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["code"], -32001, "{body}");
    let terminal = http()
        .post(format!("{rest}/v1/tasks/{id}:cancel"))
        .json(&json!({"name": format!("tasks/{id}")}))
        .send()
        .await
        .unwrap();
    assert_eq!(terminal.status(), 409);
    assert_eq!(terminal.json::<Value>().await.unwrap()["code"], -32002);
    let anonymous = reqwest::Client::new()
        .get(format!("{rest}/v1/tasks/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.headers().contains_key("www-authenticate"));

    // A task made over v1.0, subscribed to and canceled over v0.3 REST.
    let (made, _) = rpc(
        srv.url(),
        Some("1.0"),
        "SendMessage",
        json!({"message": user_v1("wait", "r03-2"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let waiting = made["result"]["task"]["id"].as_str().unwrap().to_owned();
    let sub = http()
        .get(format!("{rest}/v1/tasks/{waiting}:subscribe"))
        .send()
        .await
        .unwrap();
    assert_eq!(sub.status(), 200);
    let canceled: Value = http()
        .post(format!("{rest}/v1/tasks/{waiting}:cancel"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        canceled["status"]["state"], "TASK_STATE_CANCELLED",
        "{canceled}"
    );
    let events = sse_events(sub).await;
    assert_eq!(events[0]["task"]["id"], waiting.as_str(), "{events:?}");
    let last = &events.last().unwrap()["statusUpdate"];
    assert_eq!(
        (last["status"]["state"].as_str(), last["final"].as_bool()),
        (Some("TASK_STATE_CANCELLED"), Some(true)),
        "{events:?}"
    );

    let stream = http()
        .post(format!("{rest}/v1/message:stream"))
        .json(&json!({"message": user03("hi", "r03-3")}))
        .send()
        .await
        .unwrap();
    let events = sse_events(stream).await;
    assert!(events[0].get("task").is_some(), "{events:?}");
    assert_eq!(
        events.last().unwrap()["statusUpdate"]["final"],
        true,
        "{events:?}"
    );

    // Push configs: the SDK's create body, get, list, delete.
    let configs = format!("{rest}/v1/tasks/{id}/pushNotificationConfigs");
    let made: Value = http()
        .post(&configs)
        .json(&json!({"parent": format!("tasks/{id}"), "configId": "p1",
            "config": {"pushNotificationConfig": {"url": "https://push.example.com/h", "token": "t",
                "authentication": {"schemes": ["Bearer"]}}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        made["name"],
        format!("tasks/{id}/pushNotificationConfigs/p1").as_str(),
        "{made}"
    );
    assert_eq!(
        made["pushNotificationConfig"]["authentication"]["schemes"],
        json!(["Bearer"])
    );
    let got: Value = http()
        .get(format!("{configs}/p1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got["pushNotificationConfig"]["token"], "t", "{got}");
    let listed: Value = http()
        .get(&configs)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["configs"].as_array().unwrap().len(), 1, "{listed}");
    let deleted = http().delete(format!("{configs}/p1")).send().await.unwrap();
    assert_eq!(deleted.status(), 200);
    let listed: Value = http()
        .get(&configs)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["configs"], json!([]), "{listed}");

    let extended = http().get(format!("{rest}/v1/card")).send().await.unwrap();
    assert_eq!(extended.status(), 200);
    let extended: Value = extended.json().await.unwrap();
    assert_eq!(extended["protocolVersion"], "0.3.0", "{extended}");

    // With A2A-Version: 1.0 the path is tenant `v1`'s v1.0 route (AIP-193 errors).
    let v1 = http()
        .get(format!("{rest}/v1/tasks/nope"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(v1.status(), 404);
    let body: Value = v1.json().await.unwrap();
    assert_eq!(body["error"]["status"], "NOT_FOUND", "{body}");

    // Switched off, the routes are gone with v0.3.
    let v1_only =
        TestServer::start(builder("rest03-off").protocol_versions([ProtocolVersion::V1_0])).await;
    let off = http()
        .post(format!("{}/v1/message:send", v1_only.url()))
        .json(&json!({"message": user03("hello", "r03-4")}))
        .send()
        .await
        .unwrap();
    assert_ne!(off.status(), 200);
}
