//! The card: interface URLs that reach every REST route by plain concatenation, the user's
//! interfaces kept and v0.3's members added, a server mounted without `.url()`; and a repeated
//! `messageId` refused on every binding and in v0.3.

use a2a_runtime::client::{A2aClient, SendResult};
use a2a_runtime::compat::ProtocolVersion;
use a2a_runtime::test::{TestServer, within};
use a2a_runtime::types::{AgentInterface, ProtocolBinding};
use a2a_tests::client::builder;
use actix_web::{App, HttpServer, web};
use serde_json::{Value, json};

use super::*;

/// A root-mounted server: every interface URL joined with every REST path by concatenation, the
/// way clients join them, reaches the route (never a bare 404 from the router).
#[tokio::test]
async fn every_rest_route_is_reached_by_concatenating_the_card_url() {
    let srv = TestServer::start(builder("root")).await;
    let card: Value = http()
        .get(format!("{}{CARD}", srv.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    for i in interfaces {
        let url = i["url"].as_str().unwrap();
        assert!(!url.ends_with('/'), "{url}");
        assert_eq!(url, srv.url(), "{i}");
    }
    let rest = interfaces
        .iter()
        .find(|i| i["protocolBinding"] == "HTTP+JSON")
        .unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let v1 = |r: reqwest::RequestBuilder| r.header("A2A-Version", "1.0");
    let sent: Value = v1(http().post(format!("{rest}/message:send")))
        .json(&json!({"message": user_v1("hello", "m-root-1")}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = sent["task"]["id"].as_str().unwrap().to_owned();
    let made = v1(http().post(format!("{rest}/tasks/{task}/pushNotificationConfigs")))
        .json(&json!({"url": "https://push.example.com/h", "id": "p1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 200);
    let routes: Vec<(&str, String, Option<Value>)> = vec![
        (
            "POST",
            "/message:send".into(),
            Some(json!({"message": user_v1("hi", "m-root-2")})),
        ),
        (
            "POST",
            "/message:stream".into(),
            Some(json!({"message": user_v1("hi", "m-root-3")})),
        ),
        ("GET", "/tasks".into(), None),
        ("GET", format!("/tasks/{task}"), None),
        ("GET", format!("/tasks/{task}:subscribe"), None),
        ("POST", format!("/tasks/{task}:subscribe"), Some(json!({}))),
        ("POST", format!("/tasks/{task}:cancel"), Some(json!({}))),
        (
            "POST",
            format!("/tasks/{task}/pushNotificationConfigs"),
            Some(json!({"url": "https://push.example.com/h"})),
        ),
        (
            "GET",
            format!("/tasks/{task}/pushNotificationConfigs"),
            None,
        ),
        (
            "GET",
            format!("/tasks/{task}/pushNotificationConfigs/p1"),
            None,
        ),
        (
            "DELETE",
            format!("/tasks/{task}/pushNotificationConfigs/p1"),
            None,
        ),
        ("GET", "/extendedAgentCard".into(), None),
    ];
    for (method, path, body) in routes {
        let url = format!("{rest}{path}");
        let mut req = v1(http().request(method.parse().unwrap(), &url));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = within(&url, req.send()).await.unwrap();
        let status = resp.status().as_u16();
        let media = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        // Reached: a result, a stream, or an A2A error (JSON); the router's 404 has no body.
        assert!(
            media.contains("json") || media.contains("event-stream"),
            "{method} {url}: {status} {media:?}"
        );
        if path.ends_with("/p1") || path == "/tasks" || path == format!("/tasks/{task}") {
            assert_eq!(status, 200, "{method} {url}");
        }
    }
    // JSON-RPC at the same URL.
    let jsonrpc = interfaces
        .iter()
        .find(|i| i["protocolBinding"] == "JSONRPC")
        .unwrap();
    let (got, _) = rpc(
        jsonrpc["url"].as_str().unwrap(),
        Some("1.0"),
        "GetTask",
        json!({"id": task}),
    )
    .await;
    assert_eq!(got["result"]["id"], task.as_str(), "{got}");
}

/// The interfaces the user put on the card are kept after the served ones; v0.3's members are
/// there beside v1.0's with `.v0_3_card(true)`, and gone by default (a strict v1.0 card) and
/// with `.protocol_versions([V1_0])`.
#[tokio::test]
async fn the_users_interfaces_are_kept_and_v0_3_members_added() {
    let mut card = a2a_tests::client::card("merged");
    card.supported_interfaces = vec![AgentInterface::new(
        "grpc.example.com:443",
        ProtocolBinding::Grpc,
    )];
    let strict = TestServer::start(builder("strict").card(card.clone())).await;
    let got: Value = http()
        .get(format!("{}{CARD}", strict.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for member in [
        "url",
        "protocolVersion",
        "preferredTransport",
        "additionalInterfaces",
    ] {
        assert!(got.get(member).is_none(), "{member}: {got}");
    }
    assert_eq!(
        got["supportedInterfaces"].as_array().unwrap().len(),
        3,
        "{got}"
    );

    let srv = TestServer::start(builder("merged").card(card.clone()).v0_3_card(true)).await;
    let got: Value = http()
        .get(format!("{}{CARD}", srv.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let bindings: Vec<&str> = got["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON", "GRPC"], "{got}");
    assert_eq!(got["protocolVersion"], "0.3.0");
    assert_eq!(got["url"], srv.url());
    assert_eq!(got["preferredTransport"], "JSONRPC");
    assert_eq!(got["additionalInterfaces"][0]["transport"], "JSONRPC");
    assert_eq!(got["skills"], json!([]));
    // v1.0 clients still read it.
    let parsed: a2a_runtime::types::AgentCard = serde_json::from_value(got).unwrap();
    assert_eq!(parsed.supported_interfaces.len(), 3);

    let only_v1 = TestServer::start(
        builder("v1")
            .card(card)
            .v0_3_card(true)
            .protocol_versions([ProtocolVersion::V1_0]),
    )
    .await;
    let got: Value = http()
        .get(format!("{}{CARD}", only_v1.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        got.get("url").is_none() && got.get("protocolVersion").is_none(),
        "{got}"
    );
}

/// The README mount (`server.mount("/a2a")`, no `.url()`): the card at the root and under
/// `/a2a` points at the request's host and `/a2a`, and our client, discovering from the card,
/// gets its answer. `well_known()` without a URL or a mount is a startup error.
#[tokio::test]
async fn a_mounted_server_without_url_points_at_the_mount() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let a2a = builder("mounted").build().unwrap();
    let bare = builder("bare").build().unwrap();
    let panicked =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(bare.well_known())));
    assert!(
        panicked.is_err(),
        "well_known() without .url() must refuse to start"
    );
    let running = HttpServer::new(move || {
        App::new()
            .configure(a2a.mount("/a2a"))
            .route("/health", web::get().to(|| async { "ok" }))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = running.handle();
    tokio::spawn(running);
    let base = format!("http://{addr}");
    for at in [CARD.to_owned(), format!("/a2a{CARD}")] {
        let card: Value = http()
            .get(format!("{base}{at}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for i in card["supportedInterfaces"].as_array().unwrap() {
            assert_eq!(i["url"], format!("{base}/a2a").as_str(), "{at}: {i}");
        }
    }
    // A client reaching the server by another name sees that name.
    let card: Value = http()
        .get(format!("{base}{CARD}"))
        .header("Host", format!("localhost:{}", addr.port()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("http://localhost:{}/a2a", addr.port()).as_str()
    );
    for binding in [ProtocolBinding::JsonRpc, ProtocolBinding::HttpJson] {
        let options = a2a_tests::client::options(&binding);
        let client = within("discover", A2aClient::discover(&base, options))
            .await
            .unwrap();
        let sent = within("send", client.send_message("hello", Default::default()))
            .await
            .unwrap();
        let SendResult::Task(task) = sent.into_inner() else {
            panic!("expected a task")
        };
        assert_eq!(
            task.status.state,
            a2a_runtime::types::TaskState::Completed,
            "{binding}"
        );
    }
    handle.stop(false).await;
}

/// A follow-up whose `messageId` the task already holds is InvalidParams on JSON-RPC, REST and
/// v0.3, and does not run: the task stays as it was.
#[tokio::test]
async fn a_repeated_message_id_is_refused_on_every_binding() {
    let srv = TestServer::start(builder("dup")).await;
    let (asked, _) = rpc(
        srv.url(),
        Some("1.0"),
        "SendMessage",
        json!({"message": user_v1("ask", "dup-1")}),
    )
    .await;
    let task = asked["result"]["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        asked["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let mut again = user_v1("Ada", "dup-1");
    again["taskId"] = json!(task);
    let (err, _) = rpc(
        srv.url(),
        Some("1.0"),
        "SendMessage",
        json!({"message": again}),
    )
    .await;
    assert_eq!(err["error"]["code"], -32602, "{err}");
    assert!(
        err["error"]["message"].as_str().unwrap().contains("dup-1")
            || err.to_string().contains("dup-1"),
        "{err}"
    );
    let resp = http()
        .post(format!("{}/message:send", srv.url()))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": again}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT", "{body}");
    let mut v03 = user("Ada", "dup-1");
    v03["taskId"] = json!(task);
    let (err, _) = rpc(srv.url(), None, "message/send", json!({"message": v03})).await;
    assert_eq!(err["error"]["code"], -32602, "{err}");
    let (got, _) = rpc(srv.url(), Some("1.0"), "GetTask", json!({"id": task})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{got}"
    );
    assert_eq!(
        got["result"]["history"].as_array().unwrap().len(),
        2,
        "{got}"
    );
}
