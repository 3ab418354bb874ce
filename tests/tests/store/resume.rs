//! Streams resumed from the event log: `Last-Event-ID` over both bindings, a resume from before
//! a continued turn, and a slow subscriber that resumes instead of being cut off.

use std::time::Duration;

use a2a_runtime::store;
use a2a_runtime::test::agent_card;

use super::*;

/// Last-Event-ID over both bindings: a client that saw events up to `n` resubscribes with
/// `Last-Event-ID: n` and receives exactly the events it missed, in order, then the stream ends
/// (the task is finished); an id beyond the last event and a non-number are clear errors.
#[tokio::test]
async fn last_event_id_replays_exactly_the_missed_events() {
    use a2a_runtime::test::{Binding, TestServer};
    use a2a_tests::params::msg;
    let file = SqliteFile::new();
    let stores = store::connect(&file.url()).await.unwrap();
    let agent = a2a_examples::StreamingAgent {
        delay: Duration::ZERO,
    };
    let server = TestServer::start(
        a2a_runtime::server::A2aServer::builder()
            .card(agent_card("resume"))
            .stores(stores)
            .executor(agent),
    )
    .await;
    for binding in Binding::BOTH {
        let all = server
            .stream(
                binding,
                "SendStreamingMessage",
                msg("one two three four five"),
            )
            .await
            .unwrap()
            .collect()
            .await;
        let ids: Vec<u64> = all.iter().map(|e| e.id).collect();
        assert!(
            ids.windows(2).all(|w| w[1] == w[0] + 1),
            "gapless ids: {ids:?}"
        );
        let task_id = all[0].data["task"]["id"].as_str().unwrap().to_owned();
        for seen in [2usize, 4] {
            let resumed = resubscribe(&server, binding, &task_id, &all[seen].id.to_string())
                .await
                .unwrap()
                .collect()
                .await;
            let got: Vec<(u64, &serde_json::Value)> =
                resumed.iter().map(|e| (e.id, &e.data)).collect();
            let want: Vec<(u64, &serde_json::Value)> =
                all[seen + 1..].iter().map(|e| (e.id, &e.data)).collect();
            assert_eq!(got, want, "{binding:?} after {seen}");
        }
        let last = all.last().unwrap().id;
        let beyond = resubscribe(&server, binding, &task_id, &(last + 5).to_string())
            .await
            .map(|_| ())
            .unwrap_err();
        beyond.assert_invalid("Last-Event-ID");
        let bad = resubscribe(&server, binding, &task_id, "yesterday")
            .await
            .map(|_| ())
            .unwrap_err();
        bad.assert_invalid("Last-Event-ID");
        // A huge value is refused without being echoed whole.
        let huge = "9".repeat(4_000);
        let huge = resubscribe(&server, binding, &task_id, &huge)
            .await
            .map(|_| ())
            .unwrap_err();
        huge.assert_invalid("Last-Event-ID");
        assert!(huge.body.to_string().len() < 1_000, "{}", huge.body);
    }
}

/// A client resuming a task's stream from before a continued turn (Last-Event-ID), in memory and
/// in SQLite: the log also holds the turn's start (a snapshot of the task, still
/// INPUT_REQUIRED, with the user's new message), and the stream does not end there but goes on
/// to the turn's events, as a subscriber saw them live.
#[tokio::test]
async fn a_resume_from_before_a_continued_turn_goes_on_past_the_turns_start() {
    use a2a_runtime::test::{Binding, TestServer};
    use a2a_tests::params::{msg, msg_to};
    let file = SqliteFile::new();
    for url in ["memory:".to_owned(), file.url()] {
        let stores = store::connect(&url).await.unwrap();
        let server = TestServer::start(
            a2a_runtime::server::A2aServer::builder()
                .card(agent_card("turns"))
                .stores(stores)
                .executor(a2a_examples::DemoAgent),
        )
        .await;
        for binding in Binding::BOTH {
            let asked = server.send_task(binding, msg("ask")).await;
            assert_eq!(asked["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
            let task_id = asked["id"].as_str().unwrap().to_owned();
            let mut sse = server
                .stream(
                    binding,
                    "SubscribeToTask",
                    serde_json::json!({"id": task_id}),
                )
                .await
                .unwrap();
            // The opening snapshot: subscribed before the next turn starts.
            let first = sse.next().await.unwrap();
            let done = server.send_task(binding, msg_to(&task_id, "Ada")).await;
            assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
            let live = sse.collect().await;
            let replayed = resubscribe(&server, binding, &task_id, &first.id.to_string())
                .await
                .unwrap()
                .collect()
                .await;
            let turn = &replayed[0];
            assert_eq!(turn.state(), Some("TASK_STATE_INPUT_REQUIRED"), "{url}");
            let history = turn.data["task"]["history"].as_array().unwrap();
            assert_eq!(a2a_tests::params::text(history.last().unwrap()), "Ada");
            let got: Vec<(u64, &serde_json::Value)> =
                replayed[1..].iter().map(|e| (e.id, &e.data)).collect();
            let want: Vec<(u64, &serde_json::Value)> =
                live.iter().map(|e| (e.id, &e.data)).collect();
            assert_eq!(got, want, "{url} {binding:?}");
            assert_eq!(live.last().unwrap().state(), Some("TASK_STATE_COMPLETED"));
        }
    }
}

async fn resubscribe(
    server: &a2a_runtime::test::TestServer,
    binding: a2a_runtime::test::Binding,
    task_id: &str,
    last_event_id: &str,
) -> Result<a2a_runtime::test::EventStream, a2a_runtime::test::ErrorAnswer> {
    let req = match binding {
        a2a_runtime::test::Binding::JsonRpc => server
            .http()
            .post(format!("{}/", server.url()))
            .header("content-type", "application/json")
            .body(
                serde_json::json!({"jsonrpc": "2.0", "id": "r", "method": "SubscribeToTask",
                    "params": {"id": task_id}})
                .to_string(),
            ),
        a2a_runtime::test::Binding::Rest => server
            .http()
            .get(format!("{}/tasks/{task_id}:subscribe", server.url())),
    };
    let req = req
        .header("A2A-Version", "1.0")
        .header("Last-Event-ID", last_event_id);
    let rpc_id =
        matches!(binding, a2a_runtime::test::Binding::JsonRpc).then(|| serde_json::json!("r"));
    server.open_sse(binding, req, rpc_id).await
}

/// A subscriber far slower than the agent (a queue of 4 events, 1,500 events published before
/// it reads on) is not cut off: it resumes from the log and receives every event, in order.
#[tokio::test]
async fn a_slow_subscriber_resumes_from_the_log_instead_of_being_cut() {
    use a2a_runtime::test::{Binding, TestServer};
    use a2a_tests::params::msg;
    let file = SqliteFile::new();
    let stores = store::connect(&file.url()).await.unwrap();
    let limits = a2a_runtime::core::Limits {
        subscriber_buffer: 4,
        ..a2a_runtime::core::Limits::default()
    };
    let server = TestServer::start(
        a2a_runtime::server::A2aServer::builder()
            .card(agent_card("slow"))
            .stores(stores)
            .limits(limits)
            .executor(a2a_examples::StreamingAgent {
                delay: Duration::ZERO,
            }),
    )
    .await;
    let words: Vec<String> = (0..1_500).map(|i| format!("w{i}")).collect();
    let mut sse = server
        .stream(
            Binding::Rest,
            "SendStreamingMessage",
            msg(&format!("stream {}", words.join(" "))),
        )
        .await
        .unwrap();
    let first = sse.next().await.unwrap();
    let task_id = first.data["task"]["id"].as_str().unwrap().to_owned();
    // Read nothing more until the agent is done.
    a2a_runtime::test::within("the task to finish", async {
        loop {
            let t = server
                .http()
                .get(format!("{}/tasks/{task_id}", server.url()))
                .header("A2A-Version", "1.0")
                .send()
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap();
            if t["status"]["state"] == "TASK_STATE_COMPLETED" {
                break;
            }
            assert_ne!(t["status"]["state"], "TASK_STATE_FAILED", "{t}");
            tokio::task::yield_now().await;
        }
    })
    .await;
    let rest = sse.collect().await;
    assert!(rest.iter().all(|e| e.kind != "error"), "no error item");
    let chunks: Vec<String> = rest
        .iter()
        .filter_map(|e| e.data.get("artifactUpdate"))
        .map(|a| a2a_tests::params::text(&a["artifact"]))
        .collect();
    let want: Vec<String> = std::iter::once("stream ".to_owned())
        .chain(words.iter().map(|w| format!("{w} ")))
        .collect();
    assert_eq!(chunks, want);
    assert_eq!(rest.last().unwrap().state(), Some("TASK_STATE_COMPLETED"));
}
