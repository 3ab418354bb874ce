//! Every operation on every binding: `discover`, `send`, `get`, `list`, `cancel`, `stream` shown
//! while the agent is still working, `subscribe` with `Last-Event-ID`, and push configs.

use a2a_examples::Locale;
use a2a_runtime::extension::{Extension as _, TimestampExtension};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

use super::*;

#[tokio::test]
async fn discover_prints_the_card_interfaces_and_extension_params() {
    let agent = agent().await;
    for binding in BINDINGS {
        let out = a2a(&agent.url, &["--binding", binding, "discover"])
            .await
            .ok();
        let text = &out.stdout;
        assert!(text.starts_with("a2a-runtime demo agent "), "{text}");
        assert!(
            text.contains("Interfaces:") && text.contains(&agent.url),
            "{text}"
        );
        let in_use = match binding {
            "rest" => "* HTTP+JSON",
            "grpc" => "* GRPC",
            _ => "* JSONRPC",
        };
        assert!(
            text.contains(in_use),
            "{binding}: the interface in use is marked: {text}"
        );
        assert!(
            text.contains(Locale::URI) && text.contains(TimestampExtension::URI),
            "{text}"
        );
        assert!(
            text.contains("params: {") && text.contains("\"nb\""),
            "{text}"
        );
        assert!(text.contains("Echo (echo)"), "skills: {text}");

        let out = a2a(&agent.url, &["--binding", binding, "--json", "discover"])
            .await
            .ok();
        let card = &out.json()[0];
        assert_eq!(card["name"], "a2a-runtime demo agent");
        let locale = card["capabilities"]["extensions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["uri"] == Locale::URI)
            .expect("Locale declared");
        assert_eq!(locale["params"]["supported"], json!(["en", "fr", "nb"]));
    }
}

#[tokio::test]
async fn send_get_list_and_cancel_on_both_bindings() {
    let agent = agent().await;
    for binding in BINDINGS {
        let out = a2a(
            &agent.url,
            &["--binding", binding, "--json", "send", "hello"],
        )
        .await
        .ok();
        let sent = out.json();
        assert_eq!(sent.len(), 1, "{out:?}");
        let task = &sent[0]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(task["artifacts"][0]["parts"][0]["text"], "echo: hello");
        let id = task["id"].as_str().unwrap();
        let context = task["contextId"].as_str().unwrap();

        let out = a2a(&agent.url, &["--binding", binding, "send", "hello again"])
            .await
            .ok();
        assert!(out.stdout.contains("  completed"), "{out:?}");
        assert!(
            out.stdout.contains("artifact echo: echo: hello again"),
            "{out:?}"
        );

        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "get",
                id,
                "--history-length",
                "0",
            ],
        )
        .await
        .ok();
        let got = &out.json()[0];
        assert_eq!(got["id"], id);
        assert!(got.get("history").is_none_or(|h| h == &json!([])), "{got}");

        // A second task in the same context, then the context's page.
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "send",
                "more",
                "--context-id",
                context,
            ],
        )
        .await
        .ok();
        let second = out.json()[0]["task"]["id"].as_str().unwrap().to_owned();
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "list",
                "--context-id",
                context,
                "--page-size",
                "1",
            ],
        )
        .await
        .ok();
        let page = &out.json()[0];
        assert_eq!(page["tasks"].as_array().unwrap().len(), 1, "{page}");
        assert_eq!(page["tasks"][0]["id"], second.as_str(), "newest first");
        assert_eq!(page["totalSize"], 2);
        let token = page["nextPageToken"].as_str().unwrap();
        assert!(!token.is_empty());
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "list",
                "--context-id",
                context,
                "--page-size",
                "1",
                "--page-token",
                token,
            ],
        )
        .await
        .ok();
        assert!(out.stdout.starts_with(id), "the second page: {out:?}");
        assert!(out.stdout.contains("1 of 2 task(s)"), "{out:?}");
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "list",
                "--context-id",
                context,
                "--page-size",
                "1",
                "--all",
            ],
        )
        .await
        .ok();
        let ids: Vec<Value> = out.json().iter().map(|t| t["id"].clone()).collect();
        assert_eq!(
            ids,
            [json!(second), json!(id)],
            "every page, one task per line"
        );
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "list",
                "--status",
                "completed",
                "--context-id",
                context,
            ],
        )
        .await
        .ok();
        assert_eq!(
            out.stdout
                .lines()
                .filter(|l| l.contains("completed"))
                .count(),
            2,
            "{out:?}"
        );

        let waiting = waiting_task(&agent.url, binding).await;
        let out = a2a(&agent.url, &["--binding", binding, "cancel", &waiting])
            .await
            .ok();
        assert!(
            out.stdout.starts_with(&format!("task {waiting}  canceled")),
            "{out:?}"
        );
    }
}

/// Reads `out` until `needle` has appeared; returns what was read.
async fn read_until(out: &mut (impl tokio::io::AsyncRead + Unpin), needle: &str) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let n = tokio::time::timeout(SAFETY, out.read(&mut buf))
            .await
            .expect("output within the safety net")
            .unwrap();
        assert!(
            n > 0,
            "the output ended before {needle:?}: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test]
async fn stream_renders_events_as_they_arrive_and_assembles_chunks() {
    let agent = agent().await;
    for binding in BINDINGS {
        // Human output: the first chunk is on screen while the agent still waits.
        let mut child = command(&agent.url, &["--binding", binding, "stream", "gated"])
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let early = read_until(&mut stdout, "first ").await;
        assert!(child.try_wait().unwrap().is_none(), "still streaming");
        assert!(early.contains("[working]: thinking"), "{early}");
        assert!(early.contains("artifact reply: first "), "{early}");
        assert!(!early.contains("second"));
        agent.gate.notify_one();
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).await.unwrap();
        let out = finish(child).await.ok();
        let all = format!("{early}{rest}");
        assert!(
            all.contains("artifact reply: first second\n"),
            "chunks on one line: {all}"
        );
        assert!(all.trim_end().ends_with("[completed]"), "{all}");
        assert!(
            !out.stderr.contains("waiting for the agent"),
            "no progress line off a TTY"
        );

        // --json: one event per line, each line printed as its event arrives.
        let mut child = command(
            &agent.url,
            &["--binding", binding, "--json", "stream", "gated"],
        )
        .spawn()
        .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut events = Vec::new();
        while events.len() < 3 {
            let line = tokio::time::timeout(SAFETY, lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .expect("an event line");
            events.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        assert!(events[0].get("task").is_some(), "{events:?}");
        assert_eq!(
            events[1]["statusUpdate"]["status"]["state"],
            "TASK_STATE_WORKING"
        );
        assert_eq!(
            events[2]["artifactUpdate"]["artifact"]["parts"][0]["text"],
            "first "
        );
        assert!(child.try_wait().unwrap().is_none(), "still streaming");
        agent.gate.notify_one();
        while let Some(line) = tokio::time::timeout(SAFETY, lines.next_line())
            .await
            .unwrap()
            .unwrap()
        {
            events.push(serde_json::from_str(&line).unwrap());
        }
        finish(child).await.ok();
        assert_eq!(events[3]["artifactUpdate"]["append"], true);
        assert_eq!(events[3]["artifactUpdate"]["lastChunk"], true);
        assert_eq!(
            events.last().unwrap()["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );

        // The demo agent's word-by-word stream, assembled.
        let out = a2a(
            &agent.url,
            &["--binding", binding, "stream", "stream one two"],
        )
        .await
        .ok();
        assert!(
            out.stdout.contains("artifact reply: stream one two \n"),
            "{out:?}"
        );
    }
}

#[tokio::test]
async fn subscribe_follows_a_task_and_sends_last_event_id() {
    let agent = agent().await;
    for binding in BINDINGS {
        let id = waiting_task(&agent.url, binding).await;
        let mut child = command(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "--extension",
                HeaderSpy::URI,
                "subscribe",
                &id,
                // Resume from the start of the task's log (the stream-resume extension): the
                // logged events, then the live ones.
                "--last-event-id",
                "0",
            ],
        )
        .spawn()
        .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = tokio::time::timeout(SAFETY, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let first: Value = serde_json::from_str(&first).unwrap();
        let task_id = first["task"]["id"]
            .as_str()
            .or(first["statusUpdate"]["taskId"].as_str());
        assert_eq!(task_id, Some(id.as_str()), "an event of the task: {first}");
        assert_eq!(
            agent.spy.lock().unwrap().pop().as_deref(),
            Some("last-event-id=0"),
            "{binding}"
        );

        a2a(&agent.url, &["--binding", binding, "cancel", &id])
            .await
            .ok();
        let mut last = first;
        while let Some(line) = tokio::time::timeout(SAFETY, lines.next_line())
            .await
            .unwrap()
            .unwrap()
        {
            last = serde_json::from_str(&line).unwrap();
        }
        finish(child).await.ok();
        assert_eq!(
            last["statusUpdate"]["status"]["state"], "TASK_STATE_CANCELED",
            "{last}"
        );
    }
}

#[tokio::test]
async fn push_configs_set_get_list_delete() {
    let agent = agent().await;
    for binding in BINDINGS {
        let id = waiting_task(&agent.url, binding).await;
        let set = jrun(
            &agent.url,
            binding,
            &[
                "push",
                "set",
                &id,
                "https://push.example.com/a",
                "--token",
                "t1",
            ],
        )
        .await
        .json();
        let config_id = set[0]["id"].as_str().unwrap().to_owned();
        assert!(!config_id.is_empty());
        assert_eq!(set[0]["url"], "https://push.example.com/a");
        jrun(
            &agent.url,
            binding,
            &[
                "push",
                "set",
                &id,
                "https://push.example.com/b",
                "--id",
                "mine",
            ],
        )
        .await;
        let got = jrun(&agent.url, binding, &["push", "get", &id, &config_id])
            .await
            .json();
        assert_eq!(got[0]["taskId"], id.as_str());
        let listed = jrun(&agent.url, binding, &["push", "list", &id])
            .await
            .json();
        let mut ids: Vec<&str> = listed[0]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        ids.sort_unstable();
        let mut expected = vec![config_id.as_str(), "mine"];
        expected.sort_unstable();
        assert_eq!(ids, expected);
        let deleted = jrun(&agent.url, binding, &["push", "delete", &id, &config_id])
            .await
            .json();
        assert_eq!(deleted[0]["deleted"]["id"], config_id.as_str());
        let out = a2a(&agent.url, &["--binding", binding, "push", "list", &id])
            .await
            .ok();
        assert_eq!(
            out.stdout.trim(),
            format!("push config mine of task {id}: https://push.example.com/b")
        );
        a2a(&agent.url, &["--binding", binding, "cancel", &id])
            .await
            .ok();
    }
}
