//! Streaming over real HTTP (SSE read by `a2a_runtime::test`, and once by the independent
//! `eventsource-stream` client crate) on both bindings: SendStreamingMessage (#33-#37), several subscribers (#38), SubscribeToTask (#49,
//! #50) with both REST verbs.

use a2a_runtime::server::A2aServer;
use a2a_runtime::test::*;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use futures::StreamExt as _;
use serde_json::{Value, json};

/// The ways to subscribe: JSON-RPC, REST POST, REST GET (digest A3: accept both verbs).
#[derive(Clone, Copy, Debug)]
enum Sub {
    JsonRpc,
    RestPost,
    RestGet,
}

const SUBS: [Sub; 3] = [Sub::JsonRpc, Sub::RestPost, Sub::RestGet];

async fn subscribe(
    server: &TestServer,
    how: Sub,
    task_id: &str,
) -> Result<EventStream, ErrorAnswer> {
    match how {
        Sub::JsonRpc => {
            server
                .stream(Binding::JsonRpc, "SubscribeToTask", json!({"id": task_id}))
                .await
        }
        Sub::RestPost => {
            server
                .stream(Binding::Rest, "SubscribeToTask", json!({"id": task_id}))
                .await
        }
        Sub::RestGet => {
            let req = server
                .http()
                .get(format!("{}/tasks/{task_id}:subscribe", server.url()))
                .header("A2A-Version", "1.0");
            server.open_sse(Binding::Rest, req, None).await
        }
    }
}

fn member_of(ev: &Event) -> (&str, &Value) {
    let m = ev.member();
    (m, &ev.data[m])
}

/// #35 #36 #37: the first event is the task, then status and artifact updates in order, as they
/// happen (the agent is still held at its gate when the first two arrive), and the stream closes
/// at the terminal state.
#[tokio::test]
async fn task_stream_starts_with_task_then_updates_then_closes_35_36_37() {
    let (server, mut control) = scripted().await;
    for binding in Binding::BOTH {
        let mut sse = server
            .stream(binding, "SendStreamingMessage", msg("gate 2"))
            .await
            .expect("a stream");
        let first = sse.next().await.expect("first event");
        let (kind, task) = member_of(&first);
        assert_eq!(kind, "task", "the first event is the task: {first:?}");
        let task_id = id(task);
        let ctx = task["contextId"].as_str().unwrap().to_owned();
        assert_eq!(state(task), "TASK_STATE_SUBMITTED");
        let working = sse.next().await.expect("working");
        assert_eq!(working.member(), "statusUpdate");
        assert_eq!(working.state(), Some("TASK_STATE_WORKING"));
        assert_eq!(
            text(&working.data["statusUpdate"]["status"]["message"]),
            "started"
        );
        assert_eq!(control.started().await, task_id);

        control.release(3);
        let rest = sse.collect().await;
        let kinds: Vec<&str> = rest.iter().map(Event::member).collect();
        assert_eq!(kinds, ["artifactUpdate", "artifactUpdate", "statusUpdate"]);
        let a0 = &rest[0].data["artifactUpdate"];
        let a1 = &rest[1].data["artifactUpdate"];
        assert_eq!(text(&a0["artifact"]), "chunk 0");
        assert!(a0.get("append").is_none(), "append:false is omitted: {a0}");
        assert_eq!(text(&a1["artifact"]), "chunk 1");
        assert_eq!(a1["append"], true);
        assert_eq!(a1["lastChunk"], true);
        assert_eq!(rest[2].state(), Some("TASK_STATE_COMPLETED"));
        for ev in &rest {
            let (_, body) = member_of(ev);
            assert_eq!(body["taskId"], task_id.as_str());
            assert_eq!(body["contextId"], ctx.as_str());
        }
        assert_eq!(control.finished().await, task_id);
    }
}

/// #35 (A2 resolution): a stream also closes when the task turns INPUT_REQUIRED; a stream on the
/// continued task starts with the task (holding the new user message) and closes at COMPLETED.
#[tokio::test]
async fn stream_closes_at_input_required_and_continues_on_the_task() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let events = server
            .stream(binding, "SendStreamingMessage", msg("ask"))
            .await
            .unwrap()
            .collect()
            .await;
        let kinds: Vec<&str> = events.iter().map(Event::member).collect();
        assert_eq!(kinds, ["task", "statusUpdate"]);
        assert_eq!(events[1].state(), Some("TASK_STATE_INPUT_REQUIRED"));
        let task_id = id(&events[0].data["task"]);

        let params = msg_to(&task_id, "Ada");
        let sent_id = params["message"]["messageId"].clone();
        let events = server
            .stream(binding, "SendStreamingMessage", params)
            .await
            .unwrap()
            .collect()
            .await;
        let first = &events[0].data["task"];
        assert_eq!(id(first), task_id);
        assert_eq!(state(first), "TASK_STATE_INPUT_REQUIRED");
        let last_msg = first["history"].as_array().unwrap().last().unwrap();
        assert_eq!(
            last_msg["messageId"], sent_id,
            "the new turn is in the snapshot"
        );
        let kinds: Vec<&str> = events.iter().map(Event::member).collect();
        assert_eq!(kinds, ["task", "artifactUpdate", "statusUpdate"]);
        assert_eq!(events[2].state(), Some("TASK_STATE_COMPLETED"));
    }
}

/// #34: a message-only stream holds exactly one `message` event, then closes.
#[tokio::test]
async fn message_only_stream_has_exactly_one_message_34() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let events = server
            .stream(binding, "SendStreamingMessage", msg("reply now"))
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].member(), "message");
        assert_eq!(text(&events[0].data["message"]), "reply: reply now");
        assert_eq!(events[0].data["message"]["role"], "ROLE_AGENT");
    }
}

/// §5.2/§5.3: the raw SSE text — `text/event-stream`, one `id:` and one single-line `data:` per
/// event, blank-line separated — and the same events parsed by the SSE client crate.
#[tokio::test]
async fn sse_wire_format_parses_with_a_real_sse_client() {
    let (server, _control) = scripted().await;
    let reply = server
        .post_raw(
            "/message:stream",
            "application/a2a+json",
            msg("chatty").to_string(),
            Some("1.0"),
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.media_type(), "text/event-stream");
    assert_eq!(reply.header("cache-control"), Some("no-cache"));
    let blocks: Vec<&str> = reply
        .text
        .split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .collect();
    let mut ids = Vec::new();
    for block in &blocks {
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines.len(), 2, "id + data: {block:?}");
        let id: u64 = lines[0].strip_prefix("id: ").unwrap().parse().unwrap();
        ids.push(id);
        let data: Value = serde_json::from_str(lines[1].strip_prefix("data: ").unwrap()).unwrap();
        one_member(&data);
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase: {ids:?}");
    // task, WORKING step 1, WORKING step 2, COMPLETED finished
    assert_eq!(blocks.len(), 4, "{}", reply.text);

    for binding in Binding::BOTH {
        let events = server
            .stream(binding, "SendStreamingMessage", msg("chatty"))
            .await
            .unwrap()
            .collect()
            .await;
        let steps: Vec<String> = events[1..]
            .iter()
            .map(|e| text(&e.data["statusUpdate"]["status"]["message"]))
            .collect();
        assert_eq!(steps, ["step 1", "step 2", "finished"]);
        assert!(events.iter().all(|e| e.kind == "message"), "no event: line");
    }
}

/// #33 and §3.6: with `capabilities.streaming = false`, SendStreamingMessage and SubscribeToTask
/// are UnsupportedOperation and no stream is opened.
#[tokio::test]
async fn streaming_capability_off_is_unsupported_33() {
    let (agent, _control) = script_agent();
    let mut c = agent_card("no-streaming");
    c.capabilities.streaming = Some(false);
    let server = TestServer::start(A2aServer::builder().card(c).executor(agent)).await;
    let card: Value = server.get("/.well-known/agent-card.json").await.json();
    assert_eq!(card["capabilities"]["streaming"], false);
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("ask")).await;
        let err = server
            .stream(binding, "SendStreamingMessage", msg("hi"))
            .await
            .expect_err("no stream");
        err.assert_unsupported();
        let err = server
            .stream(binding, "SubscribeToTask", json!({"id": id(&task)}))
            .await
            .expect_err("no stream");
        err.assert_unsupported();
    }
}

/// #38 #95: three concurrent subscribers (JSON-RPC, REST POST, REST GET) on a running task receive
/// identical event sequences, ids included; dropping one mid-stream does not disturb the others
/// or the task.
#[tokio::test]
async fn three_subscribers_receive_identical_sequences_38() {
    let (server, mut control) = scripted().await;
    let task = server
        .send_task(
            Binding::JsonRpc,
            with_config(msg("gate 3"), json!({"returnImmediately": true})),
        )
        .await;
    let task_id = id(&task);
    assert_eq!(control.started().await, task_id);

    let mut subs = Vec::new();
    for how in SUBS {
        subs.push(subscribe(&server, how, &task_id).await.expect("subscribed"));
    }
    let mut seen: Vec<Vec<Event>> = vec![Vec::new(), Vec::new(), Vec::new()];
    for (i, sub) in subs.iter_mut().enumerate() {
        let first = sub.next().await.unwrap();
        assert_eq!(first.member(), "task", "the first event is the task (#50)");
        assert_eq!(first.state(), Some("TASK_STATE_WORKING"));
        seen[i].push(first);
    }
    control.release(1);
    for (i, sub) in subs.iter_mut().enumerate() {
        let ev = sub.next().await.unwrap();
        assert_eq!(text(&ev.data["artifactUpdate"]["artifact"]), "chunk 0");
        seen[i].push(ev);
    }
    // Drop the third subscriber (REST GET) mid-stream.
    let dropped = subs.pop().unwrap();
    drop(dropped);
    control.release(3);
    let mut rest = Vec::new();
    for sub in subs {
        rest.push(sub.collect().await);
    }
    for (i, events) in rest.into_iter().enumerate() {
        seen[i].extend(events);
    }
    assert_eq!(seen[0], seen[1], "identical sequences on JSON-RPC and REST");
    assert_eq!(
        seen[0][..2],
        seen[2][..],
        "the dropped one saw the same prefix"
    );
    let kinds: Vec<&str> = seen[0].iter().map(Event::member).collect();
    assert_eq!(
        kinds,
        [
            "task",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate"
        ]
    );
    assert_eq!(
        seen[0].last().unwrap().state(),
        Some("TASK_STATE_COMPLETED")
    );
    assert_eq!(control.finished().await, task_id);
    let done = server
        .ok(Binding::Rest, "GetTask", json!({"id": task_id}))
        .await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");
    assert_eq!(text(&done["artifacts"][0]), "chunk 0chunk 1chunk 2");
}

/// #50: subscribing to an INPUT_REQUIRED task yields the task first, stays open, then carries
/// the next turn's events and closes at the terminal state — over JSON-RPC, REST POST and GET.
#[tokio::test]
async fn subscribe_input_required_task_yields_task_then_next_turn_50() {
    let (server, _control) = scripted().await;
    for how in SUBS {
        let task = server.send_task(Binding::JsonRpc, msg("ask")).await;
        let task_id = id(&task);
        let mut sub = subscribe(&server, how, &task_id).await.expect("subscribed");
        let first = sub.next().await.unwrap();
        assert_eq!(first.member(), "task", "{how:?}");
        assert_eq!(first.state(), Some("TASK_STATE_INPUT_REQUIRED"));
        assert_eq!(first.data["task"]["history"], task["history"]);

        let done = server
            .send_task(Binding::Rest, msg_to(&task_id, "Ada"))
            .await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED");
        let rest = sub.collect().await;
        let kinds: Vec<&str> = rest.iter().map(Event::member).collect();
        assert_eq!(kinds, ["artifactUpdate", "statusUpdate"], "{how:?}");
        assert_eq!(
            text(&rest[0].data["artifactUpdate"]["artifact"]),
            "hello, Ada"
        );
        assert_eq!(rest[1].state(), Some("TASK_STATE_COMPLETED"));
        assert!(rest[0].id > first.id);
    }
}

/// #49: SubscribeToTask on a terminal task is UnsupportedOperation, on an unknown task
/// TaskNotFound; no stream is opened in either case.
#[tokio::test]
async fn subscribe_terminal_unsupported_unknown_not_found_49() {
    let (server, _control) = scripted().await;
    let done = server.send_task(Binding::JsonRpc, msg("hi")).await;
    let failed = server.send_task(Binding::JsonRpc, msg("fail")).await;
    for how in SUBS {
        for task in [&done, &failed] {
            subscribe(&server, how, &id(task))
                .await
                .expect_err("no stream on a terminal task")
                .assert_unsupported();
        }
        subscribe(&server, how, "no-such-task")
            .await
            .expect_err("no stream on an unknown task")
            .assert_task_not_found();
    }
    for binding in Binding::BOTH {
        server
            .stream(binding, "SendStreamingMessage", msg_to(&id(&done), "again"))
            .await
            .expect_err("no stream to a terminal task")
            .assert_unsupported();
        server
            .stream(binding, "SendStreamingMessage", msg_to("no-such-task", "x"))
            .await
            .expect_err("no stream to an unknown task")
            .assert_task_not_found();
    }
}

/// §5.2 (sse.rs): while a task is quiet, the stream sends `: keep-alive` comments, which SSE
/// clients ignore; the events that follow are unaffected.
#[tokio::test]
async fn keep_alive_comments_while_quiet() {
    let (agent, mut control) = script_agent();
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("keep-alive"))
            .executor(agent)
            .keep_alive(std::time::Duration::from_millis(20)),
    )
    .await;
    let task = server
        .send_task(
            Binding::Rest,
            with_config(msg("gate 1"), json!({"returnImmediately": true})),
        )
        .await;
    let task_id = id(&task);
    control.started().await;
    let mut resp = server
        .http()
        .get(format!("{}/tasks/{task_id}:subscribe", server.url()))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    // Read raw bytes until a keep-alive comment shows up (the agent is held at its gate).
    let mut raw = String::new();
    while !raw.contains(": keep-alive\n\n") {
        let chunk = within("raw SSE bytes", resp.chunk())
            .await
            .unwrap()
            .expect("the stream stays open");
        raw.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    assert!(
        raw.starts_with("id: "),
        "the task snapshot came first: {raw:?}"
    );
    control.release(2);
    while let Some(chunk) = within("raw SSE bytes", resp.chunk()).await.unwrap() {
        raw.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    // Parse everything, comments included, with the SSE client crate.
    let stream = futures::stream::iter([Ok::<_, std::io::Error>(raw.into_bytes())]);
    let events: Vec<_> = eventsource_stream::Eventsource::eventsource(stream)
        .collect::<Vec<_>>()
        .await;
    let kinds: Vec<String> = events
        .into_iter()
        .map(|e| {
            let data: Value = serde_json::from_str(&e.unwrap().data).unwrap();
            one_member(&data).to_owned()
        })
        .collect();
    assert_eq!(kinds, ["task", "artifactUpdate", "statusUpdate"]);
}

/// #17 #121 #124 (A2): a blocking send returns at AUTH_REQUIRED (interrupted), while a stream
/// stays open through AUTH_REQUIRED until the task completes.
#[tokio::test]
async fn auth_required_interrupts_a_blocking_send_but_keeps_streams_open() {
    let (server, mut control) = scripted().await;
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("auth")).await;
        assert_eq!(state(&task), "TASK_STATE_AUTH_REQUIRED");
        assert_eq!(text(&task["status"]["message"]), "sign in, please");
        assert_eq!(control.started().await, id(&task));
        control.release(1);
        assert_eq!(control.finished().await, id(&task));

        let mut sse = server
            .stream(binding, "SendStreamingMessage", msg("auth"))
            .await
            .unwrap();
        assert_eq!(sse.next().await.unwrap().member(), "task");
        let auth = sse.next().await.unwrap();
        assert_eq!(auth.state(), Some("TASK_STATE_AUTH_REQUIRED"));
        control.started().await;
        control.release(1);
        let rest = sse.collect().await;
        assert_eq!(rest.len(), 1, "{rest:?}");
        assert_eq!(rest[0].state(), Some("TASK_STATE_COMPLETED"));
        control.finished().await;
    }
}
