//! Request and retention limits over real HTTP on both bindings (#119, `core::Limits`), each at
//! its boundary: body size, JSON depth, parts per message, history kept, push configs per task.

use a2a_runtime::core::Limits;
use a2a_runtime::server::A2aServer;
use a2a_runtime::test::*;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde_json::{Value, json};

async fn limited(limits: Limits) -> (TestServer, Control) {
    let (agent, control) = script_agent();
    let mut c = agent_card("limited");
    c.capabilities.push_notifications = Some(true);
    let server = TestServer::start(
        A2aServer::builder()
            .card(c)
            .executor(agent)
            .limits(limits)
            .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true)),
    )
    .await;
    (server, control)
}

/// SendMessage params whose text part makes the JSON about `size` bytes.
fn sized(size: usize) -> Value {
    msg(&"x".repeat(size))
}

/// POSTs `body` with chunked transfer encoding (no Content-Length), `chunk` bytes at a time.
async fn post_chunked(
    server: &TestServer,
    path: &str,
    ct: &str,
    body: String,
    chunk: usize,
) -> Answer {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = body
        .into_bytes()
        .chunks(chunk)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let req = server
        .http()
        .post(format!("{}{path}", server.url()))
        .header("content-type", ct)
        .header("A2A-Version", "1.0")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)));
    server.send(req).await
}

/// `max_body_bytes`: a larger body is refused — 413 with JSON-RPC -32600 / REST 413 — whether
/// its length is declared or it arrives chunked; a body within the limit is served.
#[tokio::test]
async fn body_over_max_body_bytes_is_refused() {
    let limits = Limits {
        max_body_bytes: 2048,
        ..Limits::default()
    };
    let (server, _control) = limited(limits).await;
    let rpc = |params: Value| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}).to_string()
    };

    let ok = server
        .post_raw("/", "application/json", rpc(sized(1500)), Some("1.0"))
        .await;
    assert!(ok.json().get("result").is_some(), "{}", ok.text);
    let ok = server
        .post_raw(
            "/message:send",
            "application/a2a+json",
            sized(1500).to_string(),
            Some("1.0"),
        )
        .await;
    assert_eq!(ok.status, 200);

    let big = rpc(sized(4096));
    let reply = server
        .post_raw("/", "application/json", big.clone(), Some("1.0"))
        .await;
    assert_eq!(reply.status, 413);
    let err = ErrorAnswer::parse(Binding::JsonRpc, 200, reply.json());
    assert_eq!(err.code, -32600, "{}", err.body);
    let reply = server
        .post_raw(
            "/message:send",
            "application/a2a+json",
            sized(4096).to_string(),
            Some("1.0"),
        )
        .await;
    assert_eq!(reply.status, 413);
    ErrorAnswer::parse(Binding::Rest, 413, reply.json());

    // Chunked: no Content-Length, so the limit applies while reading.
    for (path, ct, body) in [
        ("/", "application/json", big),
        (
            "/message:send",
            "application/a2a+json",
            sized(4096).to_string(),
        ),
    ] {
        let reply = post_chunked(&server, path, ct, body, 512).await;
        assert_eq!(reply.status, 413, "{path}: {reply:?}");
    }
    // Chunked within the limit: the chunks are joined in order and the message runs.
    for (path, ct, body) in [
        ("/", "application/json", rpc(sized(1500))),
        (
            "/message:send",
            "application/a2a+json",
            sized(1500).to_string(),
        ),
    ] {
        let reply = post_chunked(&server, path, ct, body, 100).await;
        assert_eq!(reply.status, 200, "{path}: {reply:?}");
        let task = reply.json();
        let task = task.get("result").unwrap_or(&task);
        let echoed = task.to_string();
        assert!(echoed.contains(&"x".repeat(1400)), "{path}: {echoed}");
    }
    let list = server.ok(Binding::Rest, "ListTasks", json!({})).await;
    assert_eq!(list["totalSize"], 4, "only the four small messages ran");
}

/// Nested arrays `levels` deep inside `message.metadata`.
fn deep(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = json!([v]);
    }
    let mut p = msg("hi");
    p["message"]["metadata"] = json!({ "deep": v });
    p
}

/// `max_json_depth` (64): JSON nested 64 levels is accepted, 65 is a parse error (-32700 /
/// 400) — counted over the whole body, envelope included.
#[tokio::test]
async fn json_depth_over_64_is_a_parse_error() {
    let (server, _control) = scripted().await;
    // JSON-RPC: envelope, params, message, metadata = 4 levels before the arrays.
    let rpc = |levels: usize| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": deep(levels)})
            .to_string()
    };
    let ok = server
        .post_raw("/", "application/json", rpc(60), Some("1.0"))
        .await;
    assert!(ok.json().get("result").is_some(), "64 levels: {}", ok.text);
    let reply = server
        .post_raw("/", "application/json", rpc(61), Some("1.0"))
        .await;
    let err = ErrorAnswer::parse(Binding::JsonRpc, reply.status, reply.json());
    assert_eq!(err.code, -32700, "65 levels: {}", err.body);
    assert_eq!(err.body["id"], Value::Null);

    // REST: params, message, metadata = 3 levels before the arrays.
    let post = |levels: usize| {
        server.post_raw(
            "/message:send",
            "application/a2a+json",
            deep(levels).to_string(),
            Some("1.0"),
        )
    };
    assert_eq!(post(61).await.status, 200, "64 levels");
    let reply = post(62).await;
    let err = ErrorAnswer::parse(Binding::Rest, reply.status, reply.json());
    assert_eq!(err.http, 400, "65 levels: {}", err.body);
    assert_eq!(err.status.as_deref(), Some("INVALID_ARGUMENT"));
    assert!(err.message.contains("64"), "{}", err.message);
}

fn with_parts(n: usize) -> Value {
    let parts: Vec<Value> = (0..n).map(|i| json!({"text": format!("p{i} ")})).collect();
    json!({"message": {"messageId": mid(), "role": "ROLE_USER", "parts": parts}})
}

/// `max_parts_per_message` (100): 100 parts are served, 101 are -32602 / 400 naming
/// `message.parts`, on SendMessage and SendStreamingMessage; a configured limit applies too.
#[tokio::test]
async fn more_than_100_parts_is_invalid() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let task = server.send_task(binding, with_parts(100)).await;
        assert!(text(&task["artifacts"][0]).ends_with("p99 "));
        server
            .err(binding, "SendMessage", with_parts(101))
            .await
            .assert_invalid("message.parts");
        server
            .stream(binding, "SendStreamingMessage", with_parts(101))
            .await
            .expect_err("refused before the stream")
            .assert_invalid("message.parts");
    }
    let (small, _control) = limited(Limits {
        max_parts_per_message: 2,
        ..Limits::default()
    })
    .await;
    for binding in Binding::BOTH {
        small.send_task(binding, with_parts(2)).await;
        small
            .err(binding, "SendMessage", with_parts(3))
            .await
            .assert_invalid("message.parts");
    }
}

/// `max_history_messages`: the history keeps the newest messages; the oldest are trimmed, across
/// turns too.
#[tokio::test]
async fn history_trimmed_to_max_history_messages() {
    let (server, _control) = limited(Limits {
        max_history_messages: 3,
        ..Limits::default()
    })
    .await;
    let texts =
        |t: &Value| -> Vec<String> { t["history"].as_array().unwrap().iter().map(text).collect() };
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("chatty")).await;
        assert_eq!(
            texts(&task),
            ["step 1", "step 2", "finished"],
            "oldest trimmed"
        );
        let got = server
            .ok(binding, "GetTask", json!({"id": id(&task)}))
            .await;
        assert_eq!(texts(&got), ["step 1", "step 2", "finished"]);

        let asked = server.send_task(binding, msg("ask")).await;
        let task_id = id(&asked);
        let ctx = asked["contextId"].as_str().unwrap().to_owned();
        server.send_task(binding, msg_to(&task_id, "more")).await;
        let done = server.send_task(binding, msg_to(&task_id, "Ada")).await;
        assert_eq!(
            texts(&done),
            [
                format!("ctx={ctx} more?"),
                "Ada".into(),
                format!("ctx={ctx}")
            ]
        );
    }
}

/// `max_push_configs_per_task` (configured 2): the third config of a task is refused; another
/// task has its own allowance.
#[tokio::test]
async fn push_configs_per_task_limit() {
    let (server, _control) = limited(Limits {
        max_push_configs_per_task: 2,
        ..Limits::default()
    })
    .await;
    for binding in Binding::BOTH {
        let a = id(&server.send_task(binding, msg("ask")).await);
        let b = id(&server.send_task(binding, msg("ask")).await);
        let create = |task: &str| {
            server.call(
                binding,
                "CreateTaskPushNotificationConfig",
                json!({"taskId": task, "url": "http://127.0.0.1:9/hook"}),
            )
        };
        create(&a).await.unwrap();
        create(&a).await.unwrap();
        let err = create(&a).await.unwrap_err();
        match binding {
            Binding::JsonRpc => assert_eq!(err.code, -32602, "{}", err.body),
            Binding::Rest => assert_eq!(err.http, 400, "{}", err.body),
        }
        create(&b).await.unwrap();
    }
}
