//! A hung agent: a WORKING task whose agent publishes nothing past the inactivity bound ends
//! FAILED; its stream gets the final event and ends, its blocking SendMessage is answered,
//! and its execution is canceled.

use a2a_runtime::core::Recovered;
use a2a_runtime::store;
use a2a_runtime::test::Binding;
use a2a_tests::params::{msg, state};
use serde_json::json;

use super::*;

#[tokio::test]
async fn a_silent_agent_past_the_inactivity_bound_ends_failed_with_its_listeners() {
    let (dir, url) = sqlite_file("hung");
    let recovery = Recovery {
        idle_working: Some(Duration::from_secs(120)),
        ..Recovery::default()
    };
    let (server, handler, mut seen) = server(store::connect(&url).await.unwrap(), recovery).await;
    assert_eq!(
        Recovery::default().idle_working,
        Some(Duration::from_secs(900))
    );
    // A stream on one hung task, a blocking SendMessage on another.
    let mut stream = server
        .stream(Binding::Rest, "SendStreamingMessage", msg("hang"))
        .await
        .unwrap();
    let (streamed, _) = started(&mut seen).await;
    let url = server.url().to_owned();
    let blocking = tokio::spawn(async move {
        TestServer::remote(url)
            .send_task(Binding::JsonRpc, msg("hang"))
            .await
    });
    let (waited, _) = started(&mut seen).await;
    loop {
        let ev = stream.next().await.unwrap();
        if ev.state() == Some("TASK_STATE_WORKING") {
            break;
        }
    }
    // Within the bound: nothing.
    let done = handler
        .recover(later(Duration::from_secs(100)))
        .await
        .unwrap();
    assert_eq!(done, Recovered::default());
    let done = handler
        .recover(later(Duration::from_secs(121)))
        .await
        .unwrap();
    assert_eq!(
        done,
        Recovered {
            hung: 2,
            ..Recovered::default()
        }
    );
    let end = stream.next().await.unwrap();
    assert_eq!(end.state(), Some("TASK_STATE_FAILED"));
    let why = status_text(&end);
    assert!(why.contains("published nothing for 120 s"), "{why}");
    assert!(stream.next().await.is_none(), "the stream ends");
    let answered = a2a_runtime::test::within("the blocking SendMessage", blocking)
        .await
        .unwrap();
    assert_eq!(state(&answered), "TASK_STATE_FAILED");
    // Both executions were canceled.
    let mut cancelled = Vec::new();
    while cancelled.len() < 2 {
        match a2a_runtime::test::within("a cancellation", seen.recv()).await {
            Some(Seen::Cancelled(id)) => cancelled.push(id),
            other => panic!("{other:?}"),
        }
    }
    cancelled.sort();
    let mut expected = vec![streamed.clone(), waited];
    expected.sort();
    assert_eq!(cancelled, expected);
    let task = server
        .ok(Binding::JsonRpc, "GetTask", json!({"id": streamed}))
        .await;
    assert_eq!(state(&task), "TASK_STATE_FAILED");
    // Once.
    let done = handler
        .recover(later(Duration::from_secs(600)))
        .await
        .unwrap();
    assert_eq!(done, Recovered::default());
    assert_eq!(handler.recovery_metrics().hung, 2);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
