//! The official v0.3 SDKs, installed by the test and pinned: the Python and JS clients against our
//! server, and our client against the Python SDK's JSON-RPC and REST servers.

use a2a_runtime::client::{A2aClient, ClientOptions, SendResult};
use a2a_runtime::test::{TestServer, within};
use a2a_runtime::types::ProtocolBinding;
use a2a_tests::client::interop_builder;
use a2a_tests::interop;
use futures::StreamExt as _;
use serde_json::json;

use super::*;

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
    // The v0.3 SDKs discover the agent from its card: v0.3 members on.
    let srv = TestServer::start(interop_builder().v0_3_card(true)).await;
    for binding in ["jsonrpc", "rest"] {
        python_0_3_client(&python, srv.url(), binding).await;
    }
}

async fn python_0_3_client(python: &std::path::Path, url: &str, binding: &str) {
    let (made, _) = rpc(
        url,
        Some("1.0"),
        "SendMessage",
        json!({"message": user_v1("wait", &format!("py-v1-{binding}")), "configuration": {"returnImmediately": true}}),
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
    // The v0.3 SDKs discover the agent from its card: v0.3 members on.
    let srv = TestServer::start(interop_builder().v0_3_card(true)).await;
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
