//! `a2a` against the official Python SDK 0.3 server, an agent that speaks only A2A v0.3.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};

use super::*;

/// `a2a` against the official Python SDK 0.3 server, an agent that speaks only A2A v0.3
/// (JSON-RPC, v0.3 method names and shapes; detected from its card).
#[tokio::test]
#[cfg_attr(
    not(interop),
    ignore = "interop: needs python3 and the a2a-sdk 0.3; runs with CI=true (.ci/run) or --ignored"
)]
async fn every_v0_3_operation_against_the_python_sdk_0_3_server() {
    let python = interop_support::setup(interop_support::python_v03).await;
    let (_peer, url) = interop_support::start_python_server_from(&python, "python_v03").await;

    let out = a2a(&url, &["discover"]).await.ok();
    assert!(out.stdout.contains("* JSONRPC"), "{out:?}");
    assert!(out.stdout.contains("A2A 0.3"), "{out:?}");

    let out = a2a(&url, &["--json", "send", "hello"]).await.ok();
    let task = &out.json()[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{out:?}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "echo: hello");
    let id = task["id"].as_str().unwrap().to_owned();

    let out = a2a(&url, &["--json", "get", &id, "--history-length", "1"])
        .await
        .ok();
    let got = &out.json()[0];
    assert_eq!(got["id"], id.as_str());
    assert_eq!(got["history"].as_array().map(Vec::len), Some(1), "{got}");

    // A stream of three chunks of one artifact: one JSON per event, then assembled.
    let out = a2a(&url, &["--json", "stream", "stream"]).await.ok();
    let events = out.json();
    let chunks = events.iter().filter(|e| e.get("artifactUpdate").is_some());
    assert_eq!(chunks.count(), 3, "{events:?}");
    assert_eq!(
        events.last().unwrap()["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{events:?}"
    );
    let out = a2a(&url, &["stream", "stream"]).await.ok();
    assert!(out.stdout.contains("chunk 1chunk 2chunk 3"), "{out:?}");

    // A working task: subscribe, push configs, cancel.
    let out = a2a(&url, &["--json", "send", "wait", "--return-immediately"])
        .await
        .ok();
    let waiting = out.json()[0]["task"]["id"].as_str().unwrap().to_owned();
    let mut child = command(&url, &["--json", "subscribe", &waiting])
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(SAFETY, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .expect("an event while the task works");
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["statusUpdate"]["taskId"], waiting.as_str(), "{first}");

    let set = a2a(
        &url,
        &[
            "--json",
            "push",
            "set",
            &waiting,
            "https://push.example.com/hook",
            "--id",
            "p1",
            "--token",
            "tok",
        ],
    )
    .await
    .ok();
    assert_eq!(set.json()[0]["id"], "p1", "{set:?}");
    let got = a2a(&url, &["--json", "push", "get", &waiting, "p1"])
        .await
        .ok();
    assert_eq!(got.json()[0]["url"], "https://push.example.com/hook");
    let listed = a2a(&url, &["--json", "push", "list", &waiting]).await.ok();
    assert_eq!(listed.json()[0][0]["id"], "p1", "{listed:?}");
    a2a(&url, &["push", "delete", &waiting, "p1"]).await.ok();
    let listed = a2a(&url, &["--json", "push", "list", &waiting]).await.ok();
    assert_eq!(listed.json(), [json!([])]);

    let out = a2a(&url, &["cancel", &waiting]).await.ok();
    assert!(out.stdout.contains("canceled"), "{out:?}");
    // The subscription ends (with the cancellation, or cut short by the SDK's server).
    while let Ok(Some(_)) = tokio::time::timeout(SAFETY, lines.next_line())
        .await
        .unwrap()
    {}
    let sub = finish(child).await;
    assert!(matches!(sub.code, 0 | 6), "{sub:?}");

    // ListTasks does not exist in v0.3: refused locally, nothing sent.
    let out = a2a(&url, &["list"]).await;
    assert_eq!(out.code, 8, "{out:?}");
    assert!(out.stderr.contains("v0.3"), "{out:?}");
}
