//! The built-in Timestamp extension over HTTP: when activated, agent messages and artifacts get
//! an RFC 3339 UTC timestamp under the sample's key and the URI in `extensions`, existing
//! timestamps are kept, nothing is added when it is not activated, and the stamps are stored;
//! the task's metadata records `received_at` and `completed_at` under the extension's URI.

use a2a_runtime::A2aError;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{Extension, TimestampExtension};
use a2a_runtime::server::A2aServer;
use a2a_runtime::test::*;
use a2a_runtime::types::{Artifact, Message, Part};

use super::support::*;
use serde_json::{Value, json};

const URI: &str = "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1";
const KEY: &str = "github.com/a2aproject/a2a-samples/extensions/timestamp/v1/timestamp";
const PRESET: &str = "2001-02-03T04:05:06Z";

/// Progress, an artifact (already stamped when the text is `preset`), COMPLETED with a
/// message; or, for `reply`, a direct message.
struct Agent;

impl AgentExecutor for Agent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if ctx.text() == "reply" {
            return events.reply(Message::agent_text("direct")).await;
        }
        if ctx.text() == "ask" {
            return events.input_required("which one?").await;
        }
        events.progress("working").await?;
        let mut artifact = Artifact::new([Part::text("result")]);
        if ctx.text() == "preset" {
            artifact.metadata.insert(KEY.into(), json!(PRESET));
        }
        events.artifact(artifact).await?;
        events.complete_with("done").await
    }
}

async fn server() -> TestServer {
    start(
        A2aServer::builder()
            .card(agent_card("timestamps"))
            .executor(Agent)
            .linked_extensions(false)
            .extension(TimestampExtension::default()),
    )
    .await
}

const ON: [(&str, &str); 1] = [("A2A-Extensions", URI)];

#[track_caller]
fn assert_stamped(object: &Value, what: &str) -> String {
    let ts = object["metadata"][KEY]
        .as_str()
        .unwrap_or_else(|| panic!("{what} has no timestamp: {object}"));
    assert!(ts.ends_with('Z'), "{what}: {ts} is not UTC with Z");
    let parsed = chrono::DateTime::parse_from_rfc3339(ts).expect("RFC 3339");
    assert_eq!(parsed.offset().local_minus_utc(), 0);
    let age = chrono::Utc::now().signed_duration_since(parsed);
    assert!(
        age >= chrono::Duration::zero() - chrono::Duration::seconds(1),
        "{ts} is in the future"
    );
    assert!(age < chrono::Duration::minutes(5), "{ts} is not recent");
    assert!(
        object["extensions"]
            .as_array()
            .is_some_and(|l| l.contains(&json!(URI))),
        "{what} does not list the extension: {object}"
    );
    ts.to_owned()
}

#[track_caller]
fn assert_unstamped(object: &Value, what: &str) {
    assert!(object["metadata"].get(KEY).is_none(), "{what}: {object}");
    assert!(
        !object["extensions"]
            .as_array()
            .is_some_and(|l| l.contains(&json!(URI))),
        "{what}: {object}"
    );
}

#[test]
fn the_declaration_is_the_samples() {
    assert_eq!(TimestampExtension::URI, URI);
    assert_eq!(TimestampExtension::METADATA_KEY, KEY);
    const { assert!(!TimestampExtension::REQUIRED) };
}

#[tokio::test]
async fn activated_stamps_agent_messages_and_artifacts_and_the_stamps_are_stored() {
    let srv = server().await;
    for binding in Binding::BOTH {
        let r = srv
            .request(binding, "SendMessage", send_params("hello"))
            .headers(&ON)
            .send()
            .await;
        assert_eq!(r.header_list("a2a-extensions").as_deref(), Some(URI));
        let task = if binding == Binding::Rest {
            &r.body()["task"]
        } else {
            &r.result()["task"]
        };
        let artifact_ts = assert_stamped(&task["artifacts"][0], "artifact");
        let status_ts = assert_stamped(&task["status"]["message"], "status message");
        let history = task["history"].as_array().unwrap();
        for m in history {
            if m["role"] == "ROLE_AGENT" {
                assert_stamped(m, "agent history message");
            } else {
                assert_unstamped(m, "user message");
            }
        }
        assert!(history.iter().any(|m| m["role"] == "ROLE_AGENT"));

        // Persisted: GetTask (without the extension) shows the same values.
        let id = task["id"].as_str().unwrap();
        let got = srv
            .request(Binding::JsonRpc, "GetTask", json!({"id": id}))
            .send()
            .await;
        let stored = got.result();
        assert_eq!(stored["artifacts"][0]["metadata"][KEY], json!(artifact_ts));
        assert_eq!(
            stored["status"]["message"]["metadata"][KEY],
            json!(status_ts)
        );
        assert_eq!(got.header_list("a2a-extensions"), None);
    }
}

#[tokio::test]
async fn activated_stamps_streamed_events_and_direct_replies() {
    let srv = server().await;
    for binding in Binding::BOTH {
        let sse = srv
            .request(binding, "SendStreamingMessage", send_params("hello"))
            .headers(&ON)
            .stream()
            .await
            .expect("a stream");
        assert_eq!(sse.header_list("a2a-extensions").as_deref(), Some(URI));
        let events = events(sse).await;
        let mut stamped = 0;
        for e in &events {
            match kind(e) {
                "statusUpdate" if e["statusUpdate"]["status"]["message"].is_object() => {
                    assert_stamped(&e["statusUpdate"]["status"]["message"], "status message");
                    stamped += 1;
                }
                "artifactUpdate" => {
                    assert_stamped(&e["artifactUpdate"]["artifact"], "artifact update");
                    stamped += 1;
                }
                _ => {}
            }
        }
        assert_eq!(stamped, 3, "{events:?}");
    }
    let r = srv
        .request(Binding::JsonRpc, "SendMessage", send_params("reply"))
        .headers(&ON)
        .send()
        .await;
    assert_stamped(&r.result()["message"], "direct reply");
}

#[tokio::test]
async fn existing_timestamps_are_kept() {
    let srv = server().await;
    let r = srv
        .request(Binding::JsonRpc, "SendMessage", send_params("preset"))
        .headers(&ON)
        .send()
        .await;
    let task = &r.result()["task"];
    assert_eq!(task["artifacts"][0]["metadata"][KEY], PRESET);
    assert_stamped(&task["status"]["message"], "status message");
}

#[tokio::test]
async fn nothing_is_added_when_not_activated() {
    let srv = server().await;
    let r = srv
        .request(Binding::JsonRpc, "SendMessage", send_params("hello"))
        .send()
        .await;
    assert_eq!(r.header_list("a2a-extensions"), None);
    let task = &r.result()["task"];
    assert_unstamped(&task["artifacts"][0], "artifact");
    assert_unstamped(&task["status"]["message"], "status message");
    for m in task["history"].as_array().unwrap() {
        assert_unstamped(m, "history message");
    }
    let sse = srv
        .request(
            Binding::JsonRpc,
            "SendStreamingMessage",
            send_params("hello"),
        )
        .stream()
        .await
        .expect("a stream");
    for e in events(sse).await {
        assert!(!e.to_string().contains(KEY), "{e}");
    }
    // Requested with another extension only: still nothing.
    let r = srv
        .request(Binding::JsonRpc, "SendMessage", send_params("reply"))
        .headers(&[("A2A-Extensions", "https://example.com/other/v1")])
        .send()
        .await;
    assert_unstamped(&r.result()["message"], "direct reply");
}

/// The task's `received_at` / `completed_at` under the URI: RFC 3339 UTC, in order.
#[track_caller]
fn task_times(task: &Value, completed: bool) -> (String, Option<String>) {
    let times = &task["metadata"][URI];
    let parse = |v: &Value| {
        let s = v.as_str().unwrap_or_else(|| panic!("not a string: {task}"));
        assert!(s.ends_with('Z'), "{s} is not UTC with Z");
        chrono::DateTime::parse_from_rfc3339(s).expect("RFC 3339");
        s.to_owned()
    };
    let received = parse(&times["received_at"]);
    let done = if completed {
        let done = parse(&times["completed_at"]);
        assert!(
            chrono::DateTime::parse_from_rfc3339(&done).unwrap()
                >= chrono::DateTime::parse_from_rfc3339(&received).unwrap(),
            "{task}"
        );
        Some(done)
    } else {
        assert!(times.get("completed_at").is_none(), "{task}");
        None
    };
    (received, done)
}

#[tokio::test]
async fn the_task_records_received_at_and_completed_at() {
    let srv = server().await;
    for binding in Binding::BOTH {
        let before = chrono::Utc::now() - chrono::Duration::milliseconds(1);
        let r = srv
            .request(binding, "SendMessage", send_params("hello"))
            .headers(&ON)
            .send()
            .await;
        let task = if binding == Binding::Rest {
            r.body()["task"].clone()
        } else {
            r.result()["task"].clone()
        };
        let (received, completed) = task_times(&task, true);
        let received_at = chrono::DateTime::parse_from_rfc3339(&received).unwrap();
        assert!(received_at >= before, "{received} is before the request");
        // Stored: GetTask without the extension returns the same times.
        let got = srv
            .request(Binding::JsonRpc, "GetTask", json!({"id": task["id"]}))
            .send()
            .await;
        assert_eq!(
            task_times(got.result(), true),
            (received.clone(), completed.clone())
        );

        // An interrupted task is complete for now: input-required records completed_at too.
        let r = srv
            .request(binding, "SendMessage", send_params("ask"))
            .headers(&ON)
            .send()
            .await;
        let task = if binding == Binding::Rest {
            r.body()["task"].clone()
        } else {
            r.result()["task"].clone()
        };
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        task_times(&task, true);
    }
    // Streamed: the status updates carry the object; the final one has completed_at.
    let sse = srv
        .request(
            Binding::JsonRpc,
            "SendStreamingMessage",
            send_params("hello"),
        )
        .headers(&ON)
        .stream()
        .await
        .expect("a stream");
    let events = events(sse).await;
    let updates: Vec<&Value> = events
        .iter()
        .filter(|e| kind(e) == "statusUpdate")
        .map(|e| &e["statusUpdate"])
        .collect();
    assert!(updates.len() >= 2, "{events:?}");
    let (first_received, _) = task_times(updates[0], false);
    let (last_received, _) = task_times(updates[updates.len() - 1], true);
    assert_eq!(first_received, last_received);
}

#[tokio::test]
async fn the_task_records_no_times_when_not_activated() {
    let srv = server().await;
    let r = srv
        .request(Binding::JsonRpc, "SendMessage", send_params("hello"))
        .send()
        .await;
    let task = &r.result()["task"];
    assert!(task["metadata"].get(URI).is_none(), "{task}");
    let got = srv
        .request(Binding::JsonRpc, "GetTask", json!({"id": task["id"]}))
        .send()
        .await;
    assert!(got.result()["metadata"].get(URI).is_none(), "{got:?}");
}
