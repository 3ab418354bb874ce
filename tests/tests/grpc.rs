//! The gRPC binding against the HTTP bindings, and on its own.
//!
//! - Binding equivalence: one scenario table (every operation, success and each error,
//!   streaming, subscribe to an interrupted task, cancel, list paging, push configs) run by our
//!   client over JSON-RPC, REST and gRPC against one server (both listeners of one
//!   `A2aServer`), with identical normalised outcomes (ids and timestamps blanked).
//! - Negotiation, raw on each binding: `A2A-Version` missing or unsupported, a required
//!   extension missing, extensions activated from comma lists and repeated values and echoed
//!   (on gRPC in the initial metadata, before a stream's first message).
//! - Bad input on the gRPC port: wrong content type (415), unknown method (UNIMPLEMENTED),
//!   truncated and undecodable messages, oversized messages (RESOURCE_EXHAUSTED); the server
//!   keeps serving. Malformed protobuf (a table, on every method) is INVALID_ARGUMENT with the
//!   field path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use a2a_runtime::client::{
    A2aClient, ClientError, ClientOptions, Response, SendOptions, SendResult,
};
use a2a_runtime::core::Limits;
use a2a_runtime::grpc::pb;
use a2a_runtime::grpc::pb::a2a_service_client::A2aServiceClient;
use a2a_runtime::push::PushConfig;
use a2a_runtime::server::{A2aServer, RunningServer};
use a2a_runtime::test::{agent_card, within};
use a2a_runtime::types::{
    ListTasksRequest, Part, ProtocolBinding, SendMessageConfiguration, TaskPushNotificationConfig,
};
use a2a_tests::agent::{Control, script_agent};
use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tonic::metadata::MetadataValue;

const BINDINGS: [ProtocolBinding; 3] = [
    ProtocolBinding::JsonRpc,
    ProtocolBinding::HttpJson,
    ProtocolBinding::Grpc,
];

/// An extension that clients must activate.
#[a2a_runtime::a2a_extension(
    uri = "https://test.example/grpc/required/v1",
    required = true,
    allow_required_data_only = true
)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Needed {}

/// An optional extension.
#[a2a_runtime::a2a_extension(uri = "https://test.example/grpc/optional/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Extra {}

const NEEDED: &str = "https://test.example/grpc/required/v1";
const EXTRA: &str = "https://test.example/grpc/optional/v1";

/// Ids, timestamps and page tokens blanked (they differ from run to run, not by binding).
fn scrub(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match k.as_str() {
                    "id" | "taskId" | "contextId" | "messageId" | "artifactId" | "timestamp"
                    | "referenceTaskIds" => *x = json!("*"),
                    "nextPageToken" => *x = json!(!x.as_str().unwrap_or_default().is_empty()),
                    _ => scrub(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(scrub),
        _ => {}
    }
}

fn error_outcome(e: &ClientError) -> Value {
    let e = match e {
        ClientError::Agent(e) => e.error().clone(),
        other => panic!("expected the agent's error, got {other:?}"),
    };
    let mut meta = Value::Object(e.info_metadata());
    scrub(&mut meta);
    json!({"error": {"code": e.code(), "reason": e.reason(), "metadata": meta}})
}

fn outcome<T: Serialize>(r: &Result<Response<T>, ClientError>) -> Value {
    match r {
        Ok(resp) => {
            let mut v = serde_json::to_value(resp.get_ref()).unwrap();
            scrub(&mut v);
            v
        }
        Err(e) => error_outcome(e),
    }
}

async fn stream_outcome(
    r: Result<Response<a2a_runtime::client::ClientStream>, ClientError>,
) -> Value {
    match r {
        Err(e) => error_outcome(&e),
        Ok(resp) => {
            let events: Vec<_> = within("stream", resp.into_inner().collect()).await;
            let mut v = Value::Array(
                events
                    .iter()
                    .map(|e| match e {
                        Ok(ev) => serde_json::to_value(ev).unwrap(),
                        Err(e) => error_outcome(e),
                    })
                    .collect(),
            );
            scrub(&mut v);
            v
        }
    }
}

fn task_id(r: &Result<Response<SendResult>, ClientError>) -> String {
    match r.as_ref().map(|r| r.get_ref()) {
        Ok(SendResult::Task(t)) => t.id.to_string(),
        other => panic!("expected a task: {other:?}"),
    }
}

fn immediately() -> SendOptions {
    SendOptions {
        configuration: Some(SendMessageConfiguration {
            return_immediately: true,
            ..SendMessageConfiguration::default()
        }),
        ..SendOptions::default()
    }
}

/// Starts the scripted agent with push configs on, both listeners.
async fn start(limits: Option<Limits>) -> (RunningServer, Control) {
    let (agent, control) = script_agent();
    let mut c = agent_card("grpc equivalence");
    c.capabilities.push_notifications = Some(true);
    let mut builder = A2aServer::builder()
        .card(c)
        .executor(agent)
        .workers(1)
        .linked_extensions(false)
        .push(PushConfig::new().allow_private_networks(true))
        .grpc_addr("127.0.0.1:0");
    if let Some(l) = limits {
        builder = builder.limits(l);
    }
    let running = builder.build().unwrap().start("127.0.0.1:0").await.unwrap();
    (running, control)
}

async fn client(url: &str, binding: &ProtocolBinding) -> A2aClient {
    let options = ClientOptions {
        preferred_binding: Some(binding.clone()),
        ..ClientOptions::default()
    };
    let c = within("connect", A2aClient::new(url, options))
        .await
        .unwrap();
    assert_eq!(&c.interface().protocol_binding, binding);
    c
}

/// The scenario table: (name, normalised outcome), in order.
async fn scenarios(c: &A2aClient, control: &mut Control, tag: &str) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    let sent = c.send_message("hello", SendOptions::default()).await;
    out.push(("send: completed with an artifact", outcome(&sent)));
    let done = task_id(&sent);
    out.push((
        "send: a direct message reply",
        outcome(&c.send_message("reply hi", SendOptions::default()).await),
    ));
    out.push((
        "send: failed task",
        outcome(&c.send_message("fail", SendOptions::default()).await),
    ));
    out.push((
        "send: invalid params (no parts)",
        outcome(
            &c.send_message(Vec::<Part>::new(), SendOptions::default())
                .await,
        ),
    ));
    out.push((
        "send: unknown task",
        outcome(
            &c.send_message(
                "hello",
                SendOptions {
                    task_id: Some("no-such-task".into()),
                    ..SendOptions::default()
                },
            )
            .await,
        ),
    ));
    out.push(("get", outcome(&c.get_task(&done, None).await)));
    out.push((
        "get: historyLength 1",
        outcome(&c.get_task(&done, Some(1)).await),
    ));
    out.push((
        "get: not found",
        outcome(&c.get_task("no-such-task", None).await),
    ));

    // List paging within a context of this run.
    let context = format!("ctx-grpc-{tag}-{}", std::process::id());
    for text in ["one", "two", "three"] {
        let opts = SendOptions {
            context_id: Some(context.clone()),
            ..SendOptions::default()
        };
        c.send_message(text, opts).await.unwrap();
        // The listing orders by status timestamp (ms), then by the random id: let the clock
        // pass the finished task's millisecond so every binding sees the same order.
        let done_by = chrono::Utc::now().timestamp_millis();
        while chrono::Utc::now().timestamp_millis() <= done_by {
            std::hint::spin_loop();
        }
    }
    let page = |token: String| ListTasksRequest {
        context_id: context.as_str().into(),
        page_size: Some(2),
        page_token: token,
        ..ListTasksRequest::default()
    };
    let first = c.list_tasks(page(String::new())).await;
    out.push(("list: page 1 of 2", outcome(&first)));
    let token = first.unwrap().into_inner().next_page_token;
    assert!(!token.is_empty(), "{tag}: a second page");
    out.push((
        "list: page 2 of 2",
        outcome(&c.list_tasks(page(token)).await),
    ));
    out.push((
        "list: bad page size",
        outcome(
            &c.list_tasks(ListTasksRequest {
                page_size: Some(1000),
                ..ListTasksRequest::default()
            })
            .await,
        ),
    ));

    // Cancel a working task, then again once it is terminal.
    let working = c.send_message("gate 1", immediately()).await;
    out.push(("send: returnImmediately", outcome(&working)));
    let working = task_id(&working);
    assert_eq!(control.started().await, working);
    out.push((
        "cancel: working task",
        outcome(&c.cancel_task(&working).await),
    ));
    assert_eq!(control.cancelled().await, working);
    out.push((
        "cancel: canceled task again",
        outcome(&c.cancel_task(&working).await),
    ));
    out.push((
        "cancel: completed task",
        outcome(&c.cancel_task(&done).await),
    ));
    out.push((
        "cancel: not found",
        outcome(&c.cancel_task("no-such-task").await),
    ));

    // Streams.
    out.push((
        "stream: chatty",
        stream_outcome(c.stream_message("chatty", SendOptions::default()).await).await,
    ));
    out.push((
        "stream: artifact chunks",
        stream_outcome(c.stream_message("hello", SendOptions::default()).await).await,
    ));
    // Subscribe to an interrupted task (AUTH_REQUIRED, still executing), then let it finish.
    let interrupted = c.send_message("auth", SendOptions::default()).await;
    out.push(("send: interrupted (auth required)", outcome(&interrupted)));
    let interrupted = task_id(&interrupted);
    assert_eq!(control.started().await, interrupted);
    let subscription = c.resubscribe(&interrupted).await;
    control.release(1);
    out.push((
        "subscribe: interrupted task until it completes",
        stream_outcome(subscription).await,
    ));
    assert_eq!(control.finished().await, interrupted);
    out.push((
        "subscribe: terminal task",
        stream_outcome(c.resubscribe(&done).await).await,
    ));
    out.push((
        "subscribe: not found",
        stream_outcome(c.resubscribe("no-such-task").await).await,
    ));

    // Push configs.
    let config = TaskPushNotificationConfig {
        task_id: done.as_str().into(),
        id: "cfg-1".into(),
        url: "https://hooks.example.com/a2a".into(),
        token: "secret".into(),
        ..TaskPushNotificationConfig::default()
    };
    out.push(("push: create", outcome(&c.set_push_config(config).await)));
    out.push((
        "push: get",
        outcome(&c.get_push_config(&done, "cfg-1").await),
    ));
    out.push(("push: list", outcome(&c.list_push_configs(&done).await)));
    out.push((
        "push: get missing",
        outcome(&c.get_push_config(&done, "nope").await),
    ));
    out.push((
        "push: delete",
        outcome(&c.delete_push_config(&done, "cfg-1").await),
    ));
    out.push((
        "push: list after delete",
        outcome(&c.list_push_configs(&done).await),
    ));
    out.push((
        "push: unknown task",
        outcome(&c.list_push_configs("no-such-task").await),
    ));
    out.push((
        "extended card: not configured",
        outcome(&c.extended_card().await),
    ));
    out
}

#[tokio::test]
async fn every_scenario_has_the_same_outcome_on_all_three_bindings() {
    let (running, mut control) = start(None).await;
    let card = running_card(&running.url()).await;
    let grpc = card
        .iter()
        .find(|i| i["protocolBinding"] == "GRPC")
        .expect("a GRPC interface in the card");
    assert_eq!(grpc["protocolVersion"], "1.0");
    assert_eq!(
        grpc["url"].as_str().unwrap(),
        running.grpc_addr().unwrap().to_string(),
        "host:port without a scheme"
    );
    let mut runs = Vec::new();
    for binding in &BINDINGS {
        let c = client(&running.url(), binding).await;
        runs.push((
            binding.clone(),
            scenarios(&c, &mut control, binding.as_str()).await,
        ));
    }
    let (_, reference) = &runs[0];
    assert_eq!(reference.len(), 30);
    for (binding, table) in &runs[1..] {
        for ((name, want), (_, got)) in reference.iter().zip(table) {
            assert_eq!(got, want, "{name}: {binding} differs from JSONRPC");
        }
    }
    // The table is not vacuous: errors are the expected ones.
    let reason = |name: &str| {
        reference.iter().find(|(n, _)| *n == name).unwrap().1["error"]["reason"].clone()
    };
    assert_eq!(reason("get: not found"), "TASK_NOT_FOUND");
    assert_eq!(reason("cancel: completed task"), "TASK_NOT_CANCELABLE");
    assert_eq!(reason("subscribe: terminal task"), "UNSUPPORTED_OPERATION");
    assert_eq!(
        reason("extended card: not configured"),
        "UNSUPPORTED_OPERATION"
    );
    assert_eq!(
        reference
            .iter()
            .find(|(n, _)| *n == "send: invalid params (no parts)")
            .unwrap()
            .1["error"]["code"],
        -32602
    );
    running.stop().await;
}

async fn running_card(url: &str) -> Vec<Value> {
    let card: Value = reqwest::get(format!("{url}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    card["supportedInterfaces"].as_array().unwrap().clone()
}

fn grpc_client(running: &RunningServer) -> A2aServiceClient<tonic::transport::Channel> {
    let url = format!("http://{}", running.grpc_addr().unwrap());
    let channel = tonic::transport::Endpoint::from_shared(url)
        .unwrap()
        .connect_lazy();
    A2aServiceClient::new(channel)
}

fn pb_send(text: &str) -> pb::SendMessageRequest {
    pb::SendMessageRequest::from(a2a_runtime::types::SendMessageRequest {
        message: a2a_runtime::types::Message::user_text(text),
        ..Default::default()
    })
}

/// A gRPC request with these metadata entries (repeated keys kept).
fn with_meta<T>(message: T, meta: &[(&'static str, &str)]) -> tonic::Request<T> {
    let mut req = tonic::Request::new(message);
    for (k, v) in meta {
        req.metadata_mut()
            .append(*k, MetadataValue::try_from(*v).unwrap());
    }
    req
}

/// (reason, ErrorInfo metadata) of an error on each binding, raw.
async fn raw_errors(
    running: &RunningServer,
    headers: &[(&'static str, &str)],
) -> Vec<(String, Value)> {
    let http = reqwest::Client::new();
    let url = running.url();
    let info = |details: &Value| {
        let info = details
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
            .unwrap()
            .clone();
        assert_eq!(info["domain"], "a2a-protocol.org");
        (
            info["reason"].as_str().unwrap().to_owned(),
            info["metadata"].clone(),
        )
    };
    let mut rpc = http.post(format!("{url}/")).json(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    }));
    let mut rest = http.post(format!("{url}/message:send")).json(
        &json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    );
    for (k, v) in headers {
        rpc = rpc.header(*k, *v);
        rest = rest.header(*k, *v);
    }
    let rpc: Value = rpc.send().await.unwrap().json().await.unwrap();
    let rest = rest.send().await.unwrap();
    assert_eq!(rest.status(), 400);
    let rest: Value = rest.json().await.unwrap();
    let status = grpc_client(running)
        .send_message(with_meta(pb_send("hi"), headers))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition);
    let grpc = a2a_runtime::grpc::status::from_status(&status);
    let grpc_meta = Value::Object(grpc.info_metadata());
    vec![
        info(&rpc["error"]["data"]),
        info(&rest["error"]["details"]),
        (grpc.reason().unwrap().to_owned(), grpc_meta),
    ]
}

#[tokio::test]
async fn version_missing_or_unsupported_is_the_same_error_on_every_binding() {
    let (running, _control) = start(None).await;
    for (headers, requested) in [
        (&[][..], "0.3"),
        (&[("a2a-version", "0.3")][..], "0.3"),
        (&[("a2a-version", "2.0")][..], "2.0"),
    ] {
        let all = raw_errors(&running, headers).await;
        for (reason, meta) in &all {
            assert_eq!(reason, "VERSION_NOT_SUPPORTED", "{headers:?}");
            assert_eq!(meta["requestedVersion"], requested, "{headers:?}");
            assert_eq!(meta["supportedVersions"], "1.0");
        }
    }
    // A patch number is fine on gRPC too.
    let ok = grpc_client(&running)
        .send_message(with_meta(pb_send("hi"), &[("a2a-version", "1.0.3")]))
        .await
        .unwrap();
    assert_eq!(ok.metadata().get("a2a-version").unwrap(), "1.0");
    running.stop().await;
}

async fn start_with_extensions() -> RunningServer {
    let (agent, _control) = script_agent();
    A2aServer::builder()
        .card(agent_card("grpc extensions"))
        .executor(agent)
        .workers(1)
        .linked_extensions(false)
        .extension(Needed {})
        .extension(Extra {})
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

#[tokio::test]
async fn extensions_are_required_activated_and_echoed_alike() {
    let running = start_with_extensions().await;
    // Required and not requested: the same error everywhere.
    for (reason, meta) in raw_errors(&running, &[("a2a-version", "1.0")]).await {
        assert_eq!(reason, "EXTENSION_SUPPORT_REQUIRED");
        assert_eq!(meta["extensions"], NEEDED);
    }
    // Our client on each binding: activated and echoed.
    for binding in &BINDINGS {
        let options = ClientOptions {
            preferred_binding: Some(binding.clone()),
            ..ClientOptions::default()
        };
        let c = A2aClient::builder()
            .options(options)
            .extension(Needed {})
            .extension(Extra {})
            .connect(running.url().as_str())
            .await
            .unwrap();
        let resp = c
            .send_message("hello", SendOptions::default())
            .await
            .unwrap();
        assert_eq!(resp.activated_extensions(), [NEEDED, EXTRA], "{binding}");
        let stream = c
            .stream_message("hello", SendOptions::default())
            .await
            .unwrap();
        assert_eq!(
            stream.activated_extensions(),
            [NEEDED, EXTRA],
            "{binding} stream"
        );
    }
    // Raw gRPC: a comma list, and repeated values; echoed in the initial metadata.
    let mut grpc = grpc_client(&running);
    for meta in [
        &[
            ("a2a-version", "1.0"),
            (
                "a2a-extensions",
                "https://test.example/grpc/required/v1, https://test.example/grpc/optional/v1",
            ),
        ][..],
        &[
            ("a2a-version", "1.0"),
            ("a2a-extensions", NEEDED),
            ("a2a-extensions", EXTRA),
        ][..],
    ] {
        let resp = grpc
            .send_message(with_meta(pb_send("hello"), meta))
            .await
            .unwrap();
        assert_eq!(
            resp.metadata().get("a2a-extensions").unwrap(),
            &format!("{NEEDED}, {EXTRA}")
        );
        // Stream: the metadata is there before any message is read.
        let resp = grpc
            .send_streaming_message(with_meta(pb_send("chatty"), meta))
            .await
            .unwrap();
        assert_eq!(
            resp.metadata().get("a2a-extensions").unwrap(),
            &format!("{NEEDED}, {EXTRA}")
        );
        let mut messages = resp.into_inner();
        let mut kinds = 0;
        while let Some(m) = within("stream", messages.message()).await.unwrap() {
            assert!(m.payload.is_some());
            kinds += 1;
        }
        assert!(kinds >= 3);
    }
    // Only the required one: only it is echoed.
    let resp = grpc
        .send_message(with_meta(
            pb_send("hello"),
            &[("a2a-version", "1.0"), ("a2a-extensions", NEEDED)],
        ))
        .await
        .unwrap();
    assert_eq!(resp.metadata().get("a2a-extensions").unwrap(), NEEDED);
    running.stop().await;
}

/// A raw HTTP/2 (h2c) POST to the gRPC port: status, `grpc-status`.
async fn raw_post(
    running: &RunningServer,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, Option<String>) {
    let http = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let resp = http
        .post(format!("http://{}{path}", running.grpc_addr().unwrap()))
        .header("content-type", content_type)
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let grpc = resp
        .headers()
        .get("grpc-status")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, grpc)
}

fn framed(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    out.extend_from_slice(message);
    out
}

#[tokio::test]
async fn bad_input_on_the_grpc_port_gets_the_right_status_and_no_panic() {
    let limits = Limits {
        max_body_bytes: 64 * 1024,
        ..Limits::default()
    };
    let (running, _control) = start(Some(limits)).await;
    let send = "/lf.a2a.v1.A2AService/SendMessage";
    let good = {
        use prost::Message as _;
        pb_send("hello").encode_to_vec()
    };
    // Wrong content type: HTTP 415.
    let (status, _) = raw_post(&running, send, "application/json", b"{}".to_vec()).await;
    assert_eq!(status, 415);
    // Unknown methods: UNIMPLEMENTED (12).
    for path in [
        "/lf.a2a.v1.A2AService/Nope",
        "/other.Service/SendMessage",
        "/",
    ] {
        let (status, grpc) = raw_post(&running, path, "application/grpc", framed(&good)).await;
        assert_eq!((status, grpc.as_deref()), (200, Some("12")), "{path}");
    }
    // The v0.3 service name is not ours either.
    let (_, grpc) = raw_post(
        &running,
        "/a2a.v1.A2AService/SendMessage",
        "application/grpc",
        framed(&good),
    )
    .await;
    assert_eq!(grpc.as_deref(), Some("12"));
    // Truncated frames: the prefix promises more than the body holds.
    let mut truncated = framed(&good);
    truncated.truncate(truncated.len() - 3);
    let (status, grpc) = raw_post(&running, send, "application/grpc", truncated).await;
    assert_eq!(status, 200);
    assert!(
        grpc.is_some_and(|g| g != "0"),
        "a truncated message is an error"
    );
    let (_, grpc) = raw_post(&running, send, "application/grpc", vec![0, 0, 0]).await;
    assert!(
        grpc.is_some_and(|g| g != "0"),
        "a truncated prefix is an error"
    );
    // Not protobuf: INVALID_ARGUMENT (3), the caller's error (see the table below).
    let (_, grpc) = raw_post(&running, send, "application/grpc", framed(&[0xff; 16])).await;
    assert_eq!(grpc.as_deref(), Some("3"));
    // Valid protobuf, invalid request (no parts): INVALID_ARGUMENT (3).
    let (_, grpc) = raw_post(&running, send, "application/grpc", framed(&[])).await;
    assert_eq!(grpc.as_deref(), Some("3"));
    // Oversized: RESOURCE_EXHAUSTED (8), from the declared length, before it is buffered.
    let mut grpc = grpc_client(&running).max_encoding_message_size(usize::MAX);
    let big = "x".repeat(100 * 1024);
    let status = grpc
        .send_message(with_meta(pb_send(&big), &[("a2a-version", "1.0")]))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted);
    // Still serving.
    let ok = grpc
        .send_message(with_meta(pb_send("hello"), &[("a2a-version", "1.0")]))
        .await
        .unwrap();
    assert!(matches!(
        ok.into_inner().payload,
        Some(pb::send_message_response::Payload::Task(_))
    ));
    running.stop().await;
}

#[tokio::test]
async fn stopping_the_server_stops_both_listeners() {
    let (running, _control) = start(None).await;
    let grpc_addr = running.grpc_addr().unwrap();
    let http_addr = running.addr;
    let mut grpc = grpc_client(&running);
    grpc.send_message(with_meta(pb_send("hello"), &[("a2a-version", "1.0")]))
        .await
        .unwrap();
    within("stop", running.stop()).await;
    for addr in [grpc_addr, http_addr] {
        assert!(
            tokio::net::TcpStream::connect(addr).await.is_err(),
            "{addr} still accepts"
        );
    }
}

/// SubscribeToTask resumes after the event the `last-event-id` metadata names, as the SSE
/// bindings do with the `Last-Event-ID` header: exactly the later events of a finished task,
/// then the end of the stream; a value that is not an event id is INVALID_ARGUMENT naming it.
#[tokio::test]
async fn last_event_id_metadata_resumes_a_task_stream() {
    let mut card = agent_card("grpc resume");
    card.capabilities.streaming = Some(true);
    let running = A2aServer::builder()
        .card(card)
        .executor(a2a_examples::StreamingAgent {
            delay: std::time::Duration::ZERO,
        })
        .grpc_addr("127.0.0.1:0")
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let v1 = [("a2a-version", "1.0")];
    let mut grpc = grpc_client(&running);
    let mut stream = grpc
        .send_streaming_message(with_meta(pb_send("one two three four five"), &v1))
        .await
        .unwrap()
        .into_inner();
    let mut all = Vec::new();
    while let Some(event) = within("stream", stream.message()).await.unwrap() {
        all.push(event);
    }
    assert!(all.len() > 4, "{} events", all.len());
    let Some(pb::stream_response::Payload::Task(task)) = &all[0].payload else {
        panic!("the stream starts with the task: {:?}", all[0]);
    };
    let subscribe = pb::SubscribeToTaskRequest {
        id: task.id.clone(),
        ..Default::default()
    };
    // gRPC messages carry no event id (SSE events do): what a resume answers is checked as the
    // tail of the whole stream, two events shorter for an id two further on.
    let mut tails = Vec::new();
    for after in ["2", "4"] {
        let meta = [("a2a-version", "1.0"), ("last-event-id", after)];
        let mut resumed = grpc
            .subscribe_to_task(with_meta(subscribe.clone(), &meta))
            .await
            .unwrap()
            .into_inner();
        let mut got = Vec::new();
        while let Some(event) = within("resumed", resumed.message()).await.unwrap() {
            got.push(event);
        }
        assert!(
            !got.is_empty() && got.len() < all.len(),
            "after {after}: {got:?}"
        );
        assert_eq!(got, all[all.len() - got.len()..].to_vec(), "after {after}");
        tails.push(got.len());
    }
    assert_eq!(tails[0], tails[1] + 2, "{tails:?}");
    let bad = [("a2a-version", "1.0"), ("last-event-id", "x")];
    let status = grpc
        .subscribe_to_task(with_meta(subscribe, &bad))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(
        status.message().contains("Last-Event-ID"),
        "{}",
        status.message()
    );
    running.stop().await;
}

/// A raw h2c gRPC call: `grpc-status` and `grpc-message` (percent-decoded), from the headers of a
/// trailers-only answer or from the trailers.
async fn raw_status(running: &RunningServer, path: &str, message: &[u8]) -> (String, String) {
    let http = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let resp = http
        .post(format!("http://{}{path}", running.grpc_addr().unwrap()))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(framed(message))
        .send()
        .await
        .unwrap();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let status = header("grpc-status").unwrap_or_else(|| panic!("{path}: no grpc-status header"));
    let encoded = header("grpc-message").unwrap_or_default();
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = encoded
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            decoded.push(b);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    (status, String::from_utf8(decoded).unwrap())
}

/// Malformed protobuf on every method of the service: INVALID_ARGUMENT (3), never INTERNAL,
/// with the field path in the message where the fault is in a field; the server keeps
/// serving.
#[tokio::test]
async fn malformed_protobuf_is_invalid_argument_with_the_field_path_on_every_method() {
    let (running, _control) = start(None).await;
    let methods = [
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "GetExtendedAgentCard",
        "DeleteTaskPushNotificationConfig",
    ];
    // (case, message, what the status message must contain)
    let cases: [(&str, &[u8], &str); 7] = [
        ("truncated varint", &[0x80], "invalid varint"),
        ("wire type 7", &[0x0f], "invalid wire type value: 7"),
        ("field 0", &[0x02, 0x00], "invalid tag value: 0"),
        ("start group, no end", &[0x0b], "Invalid parameters"),
        ("end group alone", &[0x0c], "Invalid parameters"),
        ("random bytes", &[0xff; 16], "Invalid parameters"),
        // Field 1 of every request is a string (the tenant, or the task's id): invalid UTF-8.
        (
            "invalid UTF-8",
            &[0x0a, 0x02, 0xc3, 0x28],
            "invalid string value",
        ),
    ];
    for method in methods {
        let path = format!("/lf.a2a.v1.A2AService/{method}");
        for (case, message, expected) in cases {
            let (status, text) = raw_status(&running, &path, message).await;
            assert_eq!(status, "3", "{method}, {case}: {text}");
            assert!(text.contains(expected), "{method}, {case}: {text}");
            assert!(
                text.starts_with("Invalid parameters: "),
                "{method}, {case}: {text}"
            );
            if case == "invalid UTF-8" {
                // The field is named: `Invalid parameters: <field>: invalid string value …`.
                let field = text["Invalid parameters: ".len()..]
                    .split(": ")
                    .next()
                    .unwrap();
                assert!(
                    !field.is_empty() && field.chars().all(char::is_alphanumeric),
                    "{method}: {text}"
                );
            }
        }
    }
    // The path from the root, in wire names: SendMessageRequest.message.contextId.
    let nested = [0x12, 0x04, 0x12, 0x02, 0xc3, 0x28];
    let (status, text) = raw_status(&running, "/lf.a2a.v1.A2AService/SendMessage", &nested).await;
    assert_eq!(status, "3", "{text}");
    assert!(
        text.contains("message.contextId: invalid string value"),
        "{text}"
    );
    // Still serving.
    let mut grpc = grpc_client(&running);
    let ok = grpc
        .send_message(with_meta(
            pb_send("still serving"),
            &[("a2a-version", "1.0")],
        ))
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    running.stop().await;
}
