//! A2A v0.3 beside v1.0 (#28), over real HTTP on loopback:
//!
//! - the card: interface URLs without a trailing slash that reach every REST route by plain
//!   concatenation; the user's interfaces kept; a server mounted without `.url()` pointing at
//!   the request's host and the mount path (and our client talking to it); v0.3's members;
//! - a repeated `messageId` refused on both bindings and in v0.3;
//! - v0.3 JSON-RPC on the wire: method names, `kind`, `final`, lowercase states, version
//!   selection, `.protocol_versions(..)`, one task read across versions;
//! - the official v0.3 clients (Python `a2a-sdk` 0.3, `@a2a-js/sdk` 0.3), installed by the test
//!   and pinned (tests/interop/python_v03, tests/interop/js_v03), against our server, and a
//!   task created by either version read, streamed and canceled by the other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use a2a_runtime::client::{A2aClient, ClientOptions, SendResult};
use a2a_runtime::compat::ProtocolVersion;
use a2a_runtime::test::{SseReader, TestServer, within};
use a2a_runtime::types::{AgentInterface, ProtocolBinding};
use a2a_tests::client::{builder, interop_builder};
use a2a_tests::interop;
use actix_web::{App, HttpServer, web};
use futures::StreamExt as _;
use serde_json::{Value, json};

const CARD: &str = "/.well-known/agent-card.json";

/// A client that sends the test servers' bearer token on every request.
fn http() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        reqwest::header::HeaderValue::from_str(&format!("Bearer {}", a2a_tests::client::TOKEN))
            .unwrap(),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

fn user(text: &str, id: &str) -> Value {
    json!({"kind": "message", "role": "user", "messageId": id, "parts": [{"kind": "text", "text": text}]})
}

fn user_v1(text: &str, id: &str) -> Value {
    json!({"role": "ROLE_USER", "messageId": id, "parts": [{"text": text}]})
}

/// A JSON-RPC call; `version` is the `A2A-Version` header (none for v0.3 clients).
async fn rpc(
    url: &str,
    version: Option<&str>,
    method: &str,
    params: Value,
) -> (Value, reqwest::header::HeaderMap) {
    let mut req = http()
        .post(url)
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}));
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let resp = within(method, req.send()).await.unwrap();
    let headers = resp.headers().clone();
    (resp.json().await.unwrap(), headers)
}

/// The `data:` payloads of an SSE response, to its end.
async fn sse_events(resp: reqwest::Response) -> Vec<Value> {
    let mut frames = SseReader::from_response(resp);
    let mut out = Vec::new();
    while let Some(frame) = within("sse", frames.next_frame()).await {
        out.push(frame.unwrap().json());
    }
    out
}

async fn rpc_stream(url: &str, version: Option<&str>, method: &str, params: Value) -> Vec<Value> {
    let mut req = http()
        .post(url)
        .json(&json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": params}));
    if let Some(v) = version {
        req = req.header("A2A-Version", v);
    }
    let resp = within(method, req.send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    sse_events(resp).await
}

// ---- the card -------------------------------------------------------------------------------

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
/// there beside v1.0's, and gone with `.protocol_versions([V1_0])`.
#[tokio::test]
async fn the_users_interfaces_are_kept_and_v0_3_members_added() {
    let mut card = a2a_tests::client::card("merged");
    card.supported_interfaces = vec![AgentInterface::new(
        "grpc.example.com:443",
        ProtocolBinding::Grpc,
    )];
    let srv = TestServer::start(builder("merged").card(card.clone())).await;
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

// ---- duplicate message ids ------------------------------------------------------------------

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

// ---- v0.3 on the wire -----------------------------------------------------------------------

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

// ---- the official v0.3 clients --------------------------------------------------------------

const PY_REQUIRED: &[&str] = &[
    "card",
    "send_blocking",
    "stream",
    "get_task",
    "get_task_not_found",
    "cancel",
    "resubscribe",
    "input_required",
    "duplicate_message_id",
    "push_config_crud",
    "extensions",
    "extensions_stream",
    "task_for_v1",
    "read_v1_task",
];

/// The Python SDK 0.3 client against our server, over JSON-RPC and over HTTP+JSON (its
/// `RestTransport`, on the interface its client factory picks); the task it leaves working is
/// read, streamed and canceled over v1.0, and a task made over v1.0 is read, streamed and
/// canceled by it.
#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_python_sdk_0_3_client() {
    let python = interop::setup(interop::python_v03).await;
    let srv = TestServer::start(interop_builder()).await;
    for binding in ["jsonrpc", "rest"] {
        python_0_3_client(&python, srv.url(), binding).await;
    }
}

async fn python_0_3_client(python: &std::path::Path, url: &str, binding: &str) {
    let (made, _) = rpc(
        url,
        Some("1.0"),
        "SendMessage",
        json!({"message": user_v1("wait", "py-v1"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let from_v1 = made["result"]["task"]["id"].as_str().unwrap().to_owned();
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(
        interop::interop_dir()
            .join("python_v03")
            .join("client_check.py"),
    )
    .arg(url)
    .args(["--binding", binding])
    .args(["--task-from-v1", &from_v1, "--timeout", "20"])
    .env("PYTHONUNBUFFERED", "1");
    let run = interop::run_script(cmd, "python_v03/client_check.py").await;
    println!("{binding}:\n{}", run.stdout);
    run.assert_all_passed(
        &format!("the Python SDK 0.3 client against our server over {binding}"),
        PY_REQUIRED,
    );
    let task = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("TASK "))
        .expect("the script names its task")
        .trim()
        .to_owned();
    let (got, _) = rpc(url, Some("1.0"), "GetTask", json!({"id": task})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_WORKING",
        "{got}"
    );
    let sub = http()
        .post(url)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task}}))
        .send()
        .await
        .unwrap();
    let (canceled, _) = rpc(url, Some("1.0"), "CancelTask", json!({"id": task})).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    let events = sse_events(sub).await;
    assert_eq!(
        events.last().unwrap()["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
}

const JS_REQUIRED: &[&str] = &[
    "card",
    "send_blocking",
    "stream",
    "get_task",
    "get_task_not_found",
    "cancel",
    "resubscribe",
    "push_config_crud",
    "extensions",
];

/// The JS SDK 0.3 clients against our server: `A2AClient` over JSON-RPC, and `Client` over its
/// `RestTransport` (HTTP+JSON) on the interface its `ClientFactory` picks.
#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn the_js_sdk_0_3_client() {
    let dir = interop::setup(interop::js_v03_dir).await;
    let srv = TestServer::start(interop_builder()).await;
    for binding in ["jsonrpc", "rest"] {
        let mut cmd = tokio::process::Command::new("node");
        cmd.current_dir(&dir)
            .arg("client_check.mjs")
            .arg(srv.url())
            .args(["--binding", binding]);
        let run = interop::run_script(cmd, "js_v03/client_check.mjs").await;
        println!("{binding}:\n{}", run.stdout);
        run.assert_all_passed(
            &format!("the JS SDK 0.3 client against our server over {binding}"),
            JS_REQUIRED,
        );
    }
}

/// Our client against the Python SDK 0.3 server (a v0.3-only agent, detected from its card):
/// send, stream, get, cancel, resubscribe, push-config CRUD; ListTasks, which v0.3 lacks, is
/// UnsupportedOperation without a request.
#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn our_client_against_the_python_sdk_0_3_server() {
    use a2a_runtime::client::SendOptions;
    use a2a_runtime::types::{
        SendMessageConfiguration, StreamResponse, TaskPushNotificationConfig, TaskState,
    };
    let python = interop::setup(interop::python_v03).await;
    let (_peer, url) = interop::start_python_server_from(&python, "python_v03").await;
    let client = within(
        "discover",
        A2aClient::discover(&url, ClientOptions::default()),
    )
    .await
    .unwrap();
    assert_eq!(client.interface().protocol_version, "0.3");
    assert_eq!(
        client.interface().protocol_binding,
        ProtocolBinding::JsonRpc
    );

    let sent = within("send", client.send_message("hello", SendOptions::default()))
        .await
        .unwrap();
    let SendResult::Task(task) = sent.into_inner() else {
        panic!("expected a task")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].parts[0].as_text(), Some("echo: hello"));

    let got = within("get", client.get_task(task.id.as_str(), Some(1)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.id, task.id);
    assert_eq!(got.history.len(), 1);

    let mut stream = within(
        "stream",
        client.stream_message("stream", SendOptions::default()),
    )
    .await
    .unwrap()
    .into_inner();
    let mut events = Vec::new();
    while let Some(ev) = within("event", stream.next()).await {
        events.push(ev.unwrap());
    }
    assert!(
        matches!(events.first(), Some(StreamResponse::Task(_))),
        "{events:?}"
    );
    let chunks = events
        .iter()
        .filter(|e| matches!(e, StreamResponse::ArtifactUpdate(_)))
        .count();
    assert_eq!(chunks, 3, "{events:?}");
    assert!(
        matches!(events.last(), Some(StreamResponse::StatusUpdate(u)) if u.status.state == TaskState::Completed),
        "{events:?}"
    );

    let later = SendOptions {
        configuration: Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        }),
        ..SendOptions::default()
    };
    let SendResult::Task(waiting) = within("wait", client.send_message("wait", later))
        .await
        .unwrap()
        .into_inner()
    else {
        panic!("expected a task")
    };
    assert!(!waiting.status.state.is_terminal(), "{:?}", waiting.status);
    let mut resub = within("resubscribe", client.resubscribe(waiting.id.as_str()))
        .await
        .unwrap()
        .into_inner();
    let first = within("first", resub.next()).await.unwrap().unwrap();
    // The v0.3 server sends what happens next (no snapshot first): the agent's next update.
    assert_eq!(first.task_id(), Some(&waiting.id), "{first:?}");
    let canceled = within("cancel", client.cancel_task(waiting.id.as_str()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    // The stream ends: with the cancellation, or (the SDK's 0.3 server closes a task's
    // subscriptions when it is canceled) cut short, which the client reports.
    let mut last = None;
    while let Some(ev) = within("resubscribed", resub.next()).await {
        match ev {
            Ok(ev) => {
                assert_eq!(ev.task_id(), Some(&waiting.id), "{ev:?}");
                last = Some(ev);
            }
            Err(e) => {
                assert!(e.to_string().contains("ended before"), "{e}");
                break;
            }
        }
    }
    if let Some(StreamResponse::StatusUpdate(u)) = &last {
        assert!(
            matches!(u.status.state, TaskState::Working | TaskState::Canceled),
            "{u:?}"
        );
    }
    let after = within("get", client.get_task(waiting.id.as_str(), None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(after.status.state, TaskState::Canceled);

    let config = TaskPushNotificationConfig {
        task_id: task.id.clone(),
        id: "p1".into(),
        url: "https://push.example.com/hook".into(),
        token: "tok".into(),
        ..Default::default()
    };
    let made = within("set", client.set_push_config(config))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (made.task_id.as_str(), made.id.as_str()),
        (task.id.as_str(), "p1")
    );
    let got = within("get push", client.get_push_config(task.id.as_str(), "p1"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.token, "tok");
    let listed = within("list push", client.list_push_configs(task.id.as_str()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.configs.len(), 1);
    within(
        "delete push",
        client.delete_push_config(task.id.as_str(), "p1"),
    )
    .await
    .unwrap();
    let listed = within("list push", client.list_push_configs(task.id.as_str()))
        .await
        .unwrap()
        .into_inner();
    assert!(listed.configs.is_empty());

    let err = client.list_tasks(Default::default()).await.unwrap_err();
    assert!(
        matches!(
            err,
            a2a_runtime::client::ClientError::Local(a2a_runtime::A2aError::UnsupportedOperation(_))
        ),
        "{err}"
    );
}

/// Our client against the Python SDK 0.3 REST server (its card prefers `HTTP+JSON`, its
/// `/v1/...` routes only): send, stream, get, cancel, resubscribe, push-config set and get; the
/// list and delete that server does not implement come back as errors, not as made-up results.
#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: installs the official SDKs (python3, npm); runs with CI=true (.ci/run) or --ignored"
)]
async fn our_client_against_the_python_sdk_0_3_rest_server() {
    use a2a_runtime::client::SendOptions;
    use a2a_runtime::types::{
        SendMessageConfiguration, StreamResponse, TaskPushNotificationConfig, TaskState,
    };
    let python = interop::setup(interop::python_v03).await;
    let (_peer, url) = interop::start_python_server_with(&python, "python_v03", &["--rest"]).await;
    let client = within(
        "discover",
        A2aClient::discover(&url, ClientOptions::default()),
    )
    .await
    .unwrap();
    assert_eq!(client.interface().protocol_version, "0.3");
    assert_eq!(
        client.interface().protocol_binding,
        ProtocolBinding::HttpJson
    );

    let sent = within("send", client.send_message("hello", SendOptions::default()))
        .await
        .unwrap();
    let SendResult::Task(task) = sent.into_inner() else {
        panic!("expected a task")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts[0].parts[0].as_text(), Some("echo: hello"));
    let got = within("get", client.get_task(task.id.as_str(), Some(1)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((got.id.as_str(), got.history.len()), (task.id.as_str(), 1));

    let mut stream = within(
        "stream",
        client.stream_message("stream", SendOptions::default()),
    )
    .await
    .unwrap()
    .into_inner();
    let mut events = Vec::new();
    while let Some(ev) = within("event", stream.next()).await {
        events.push(ev.unwrap());
    }
    let chunks: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(a) => a.artifact.parts[0].as_text().map(str::to_owned),
            _ => None,
        })
        .collect();
    assert_eq!(chunks, ["chunk 1", "chunk 2", "chunk 3"], "{events:?}");
    assert!(
        matches!(events.last(), Some(StreamResponse::StatusUpdate(u)) if u.status.state == TaskState::Completed),
        "{events:?}"
    );

    let later = SendOptions {
        configuration: Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        }),
        ..SendOptions::default()
    };
    let SendResult::Task(waiting) = within("wait", client.send_message("wait", later))
        .await
        .unwrap()
        .into_inner()
    else {
        panic!("expected a task")
    };
    assert!(!waiting.status.state.is_terminal(), "{:?}", waiting.status);
    let mut resub = within("resubscribe", client.resubscribe(waiting.id.as_str()))
        .await
        .unwrap()
        .into_inner();
    let first = within("first", resub.next()).await.unwrap().unwrap();
    assert_eq!(first.task_id(), Some(&waiting.id), "{first:?}");
    let canceled = within("cancel", client.cancel_task(waiting.id.as_str()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    drop(resub);
    let after = within("get", client.get_task(waiting.id.as_str(), None))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(after.status.state, TaskState::Canceled);

    let config = TaskPushNotificationConfig {
        task_id: task.id.clone(),
        id: "p1".into(),
        url: "https://push.example.com/hook".into(),
        token: "tok".into(),
        ..Default::default()
    };
    let made = within("set", client.set_push_config(config))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (made.task_id.as_str(), made.id.as_str()),
        (task.id.as_str(), "p1")
    );
    let got = within("get push", client.get_push_config(task.id.as_str(), "p1"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (got.token.as_str(), got.url.as_str()),
        ("tok", "https://push.example.com/hook")
    );
    assert!(client.list_push_configs(task.id.as_str()).await.is_err());
    assert!(
        client
            .delete_push_config(task.id.as_str(), "p1")
            .await
            .is_err()
    );
    let missing = client.get_task("no-such-task", None).await.unwrap_err();
    assert!(
        matches!(
            missing.agent_error().map(|e| e.error()),
            Some(a2a_runtime::A2aError::TaskNotFound { .. })
        ),
        "{missing}"
    );
}

// ---- v0.3 REST on the wire -------------------------------------------------------------------

/// The v0.3 REST routes, reached by appending `/v1/...` to the 0.3 card's HTTP+JSON interface
/// the way v0.3 clients do: proto-JSON shapes (`content`, `TASK_STATE_CANCELLED`, `final`,
/// named push configs), `{code, message}` errors with their HTTP status, the guard, and a
/// task shared with v1.0; with `A2A-Version: 1.0` the same paths are tenant `v1`'s v1.0 routes.
#[tokio::test]
async fn v0_3_rest_routes_shapes_and_errors() {
    let srv = TestServer::start(builder("rest03")).await;
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
