//! SendMessage over real HTTP on both bindings: blocking and `returnImmediately` (#16-#19),
//! task and context ids (#23-#29), `historyLength` on SendMessage and GetTask (#39), unknown and
//! snake_case fields (#7, §1), and REST tenant routes.

use std::collections::HashSet;

use a2a_runtime::test::*;
use a2a_tests::agent::*;
use a2a_tests::params::*;
use serde_json::{Value, json};

/// #17 #18: blocking by default — the answer is the task once terminal, with all artifacts. The
/// agent is held at its gate, so an early answer would show WORKING and no artifact.
#[tokio::test]
async fn send_blocks_until_completed_and_returns_artifacts_17_18() {
    let (server, mut control) = scripted().await;
    let server = std::sync::Arc::new(server);
    for binding in Binding::BOTH {
        let s = server.clone();
        let pending = tokio::spawn(async move { s.send_task(binding, msg("gate 2")).await });
        let task_id = control.started().await;
        let working = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        assert_eq!(state(&working), "TASK_STATE_WORKING");
        control.release(3);
        let task = within("blocking send", pending).await.unwrap();
        assert_eq!(id(&task), task_id);
        assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
        assert!(task["status"]["timestamp"].as_str().unwrap().ends_with('Z'));
        let artifacts = task["artifacts"].as_array().expect("artifacts");
        assert_eq!(artifacts.len(), 1, "{task}");
        assert_eq!(artifacts[0]["artifactId"], "out");
        assert_eq!(text(&artifacts[0]), "chunk 0chunk 1", "chunks are merged");
        assert_eq!(control.finished().await, task_id);
    }
}

/// A blocking SendMessage whose client goes away while the agent works: the task is not
/// abandoned with the request (the agent runs inside the waiting request until it is answered,
/// and carries on as a task of its own when the request is dropped).
#[tokio::test]
async fn task_completes_after_the_blocking_client_went_away() {
    let (server, mut control) = scripted().await;
    let server = std::sync::Arc::new(server);
    for binding in Binding::BOTH {
        let s = server.clone();
        let pending = tokio::spawn(async move { s.send_task(binding, msg("gate 2")).await });
        let task_id = control.started().await;
        pending.abort();
        assert!(pending.await.unwrap_err().is_cancelled());
        control.release(3);
        assert_eq!(control.finished().await, task_id);
        let done = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        assert_eq!(text(&done["artifacts"][0]), "chunk 0chunk 1");
    }
}

/// #17 #18 with the plain echo: COMPLETED, the artifact, the user message in the history.
#[tokio::test]
async fn send_echo_returns_completed_task_17_18() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let params = msg("hello world");
        let sent_id = params["message"]["messageId"].clone();
        let task = server.send_task(binding, params).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED");
        assert_eq!(text(&task["artifacts"][0]), "echo: hello world");
        assert_eq!(task["artifacts"][0]["name"], "echo");
        assert_eq!(task["history"][0]["messageId"], sent_id);
        assert_eq!(task["history"][0]["role"], "ROLE_USER");
        assert_eq!(task["history"][0]["taskId"], task["id"]);
        assert_eq!(task["history"][0]["contextId"], task["contextId"]);
        // #3 #4: RFC 3339 UTC with `Z` and millisecond precision, e.g. 2026-03-20T09:12:44.120Z.
        let ts = task["status"]["timestamp"].as_str().unwrap();
        let b = ts.as_bytes();
        assert_eq!(b.len(), 24, "{ts}");
        assert!(b[10] == b'T' && b[19] == b'.' && b[23] == b'Z', "{ts}");
        assert!(b[20..23].iter().all(u8::is_ascii_digit), "{ts}");
    }
}

/// A blocking SendMessage's task is encoded once, by the write that finishes it, for the store
/// and the reply: the reply's bytes are exactly those GetTask encodes afresh from the store, on
/// both bindings.
#[tokio::test]
async fn a_finished_tasks_reply_is_the_bytes_get_task_encodes() {
    let (server, _control) = scripted().await;
    let between = |text: &str, open: &str, close: &str| -> String {
        let inner = text.strip_prefix(open).and_then(|t| t.strip_suffix(close));
        inner
            .unwrap_or_else(|| panic!("{open}…{close}: {text}"))
            .to_owned()
    };
    for n in 0..3 {
        let params = msg(&format!("bytes \"{n}\" é"));
        let sent = server
            .rpc_envelope(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}),
            )
            .await;
        let task = between(
            &sent.text,
            r#"{"jsonrpc":"2.0","id":1,"result":{"task":"#,
            "}}",
        );
        let task_id = id(&serde_json::from_str(&task).unwrap());
        let got = server
            .rpc_envelope(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}),
            )
            .await;
        assert_eq!(
            task,
            between(&got.text, r#"{"jsonrpc":"2.0","id":1,"result":"#, "}")
        );

        let sent = server
            .post_raw(
                "/message:send",
                "application/json",
                msg("rest").to_string(),
                Some("1.0"),
            )
            .await;
        let task = between(&sent.text, r#"{"task":"#, "}");
        let task_id = id(&serde_json::from_str(&task).unwrap());
        let got = server.get(&format!("/tasks/{task_id}")).await;
        assert_eq!(task, got.text);
    }
}

/// #19: `returnImmediately` answers right after the task exists, while the agent is provably
/// still held at its gate; the task finishes later.
#[tokio::test]
async fn return_immediately_returns_non_terminal_task_19() {
    let (server, mut control) = scripted().await;
    for binding in Binding::BOTH {
        let params = with_config(msg("gate"), json!({"returnImmediately": true}));
        let task = within("returnImmediately", server.send_task(binding, params)).await;
        assert!(
            matches!(state(&task), "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"),
            "{task}"
        );
        let task_id = id(&task);
        assert_eq!(control.started().await, task_id);
        let still = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        assert_eq!(state(&still), "TASK_STATE_WORKING");
        control.release(1);
        assert_eq!(control.finished().await, task_id);
        let done = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED");
    }
}

/// #16 #20 #26: a direct Message reply is returned as `{"message": …}`, with the generated contextId,
/// and creates no task.
#[tokio::test]
async fn direct_message_reply_16_26() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let result = server.ok(binding, "SendMessage", msg("reply hi")).await;
        assert_eq!(one_member(&result), "message", "{result}");
        let m = &result["message"];
        assert_eq!(m["role"], "ROLE_AGENT");
        assert_eq!(text(m), "reply: reply hi");
        assert!(!m["messageId"].as_str().unwrap().is_empty());
        assert!(
            !m["contextId"].as_str().unwrap_or_default().is_empty(),
            "a generated contextId appears in the Message (#26): {m}"
        );
        assert!(m.get("taskId").is_none(), "no task: {m}");
        // #20: returnImmediately has no effect on a Message reply.
        let params = with_config(msg("reply again"), json!({"returnImmediately": true}));
        let result = server.ok(binding, "SendMessage", params).await;
        assert_eq!(text(&result["message"]), "reply: reply again", "{result}");
    }
    let list = server.ok(Binding::JsonRpc, "ListTasks", json!({})).await;
    assert_eq!(list["totalSize"], 0, "replies create no task: {list}");
}

/// #25 #26 #27: task ids are generated by the server and unique; a contextId is generated when
/// absent and appears in the task; a client contextId is kept, never replaced.
#[tokio::test]
async fn task_ids_generated_unique_and_context_ids_25_26_27() {
    let (server, _control) = scripted().await;
    let mut ids = HashSet::new();
    let mut contexts = HashSet::new();
    for i in 0..12 {
        let binding = Binding::BOTH[i % 2];
        let task = server.send_task(binding, msg("hi")).await;
        assert!(ids.insert(id(&task)), "task ids are unique");
        let ctx = task["contextId"].as_str().expect("generated contextId");
        assert!(!ctx.is_empty());
        assert!(
            contexts.insert(ctx.to_owned()),
            "a new context per new task"
        );
    }
    for binding in Binding::BOTH {
        let mut params = msg("hi");
        params["message"]["contextId"] = json!(format!("client-ctx-{binding:?}"));
        let task = server.send_task(binding, params).await;
        assert_eq!(task["contextId"], format!("client-ctx-{binding:?}"));
        assert!(!ids.contains(&id(&task)));
    }
}

/// #28: three turns on one task, each sending only the taskId — the contextId is inferred on
/// every turn (the agent sees it, the task and every history message carry it).
#[tokio::test]
async fn third_turn_context_inference_28() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let first = server.send_task(binding, msg("ask")).await;
        assert_eq!(state(&first), "TASK_STATE_INPUT_REQUIRED");
        let task_id = id(&first);
        let ctx = first["contextId"].as_str().unwrap().to_owned();
        assert_eq!(
            text(&first["status"]["message"]),
            format!("ctx={ctx} name?")
        );

        let second = server.send_task(binding, msg_to(&task_id, "more")).await;
        assert_eq!(id(&second), task_id);
        assert_eq!(second["contextId"], ctx.as_str());
        assert_eq!(state(&second), "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(
            text(&second["status"]["message"]),
            format!("ctx={ctx} more?")
        );

        let third = server.send_task(binding, msg_to(&task_id, "Ada")).await;
        assert_eq!(id(&third), task_id);
        assert_eq!(third["contextId"], ctx.as_str());
        assert_eq!(state(&third), "TASK_STATE_COMPLETED");
        assert_eq!(text(&third["status"]["message"]), format!("ctx={ctx}"));
        assert_eq!(text(&third["artifacts"][0]), "hello, Ada");

        let got = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        let history = got["history"].as_array().unwrap();
        let roles: Vec<&str> = history
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            [
                "ROLE_USER",
                "ROLE_AGENT",
                "ROLE_USER",
                "ROLE_AGENT",
                "ROLE_USER",
                "ROLE_AGENT"
            ]
        );
        for m in history {
            assert_eq!(m["contextId"], ctx.as_str(), "{m}");
            assert_eq!(m["taskId"], task_id.as_str(), "{m}");
        }
    }
}

/// #29: a contextId that differs from the task's is rejected naming `message.contextId`, and
/// the task is left unchanged.
#[tokio::test]
async fn context_mismatch_rejected_29() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("ask")).await;
        let task_id = id(&task);
        let mut params = msg_to(&task_id, "Ada");
        params["message"]["contextId"] = json!("some-other-context");
        let err = server.err(binding, "SendMessage", params).await;
        err.assert_invalid("message.contextId");
        let after = server.ok(binding, "GetTask", json!({"id": task_id})).await;
        assert_eq!(state(&after), "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(after["history"], task["history"], "history unchanged");
        // The right contextId is accepted.
        let mut params = msg_to(&task_id, "Ada");
        params["message"]["contextId"] = task["contextId"].clone();
        let done = server.send_task(binding, params).await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED");
    }
}

/// #24 #25: a taskId that names no task is TaskNotFound (a client cannot create a task by id).
#[tokio::test]
async fn unknown_task_id_is_task_not_found_24() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let err = server
            .err(binding, "SendMessage", msg_to("no-such-task", "hi"))
            .await;
        err.assert_task_not_found();
        assert_eq!(err.meta("taskId"), Some("no-such-task"));
        let err = server
            .err(binding, "GetTask", json!({"id": "no-such-task"}))
            .await;
        err.assert_task_not_found();
    }
    let list = server.ok(Binding::Rest, "ListTasks", json!({})).await;
    assert_eq!(list["totalSize"], 0);
}

/// #23: a message to a terminal task is UnsupportedOperation (-32004 / 400).
#[tokio::test]
async fn send_to_terminal_task_is_unsupported_23() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        for command in ["hi", "fail"] {
            let task = server.send_task(binding, msg(command)).await;
            assert!(
                matches!(state(&task), "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED"),
                "{task}"
            );
            let err = server
                .err(binding, "SendMessage", msg_to(&id(&task), "again"))
                .await;
            err.assert_unsupported();
        }
    }
}

/// #39: `historyLength` 0 omits `history`; n returns exactly the n most recent messages — on
/// SendMessage and GetTask; a negative value is a validation error.
#[tokio::test]
async fn history_length_on_send_and_get_39() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let full = server.send_task(binding, msg("chatty")).await;
        let texts: Vec<String> = full["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(text)
            .collect();
        assert_eq!(texts, ["chatty", "step 1", "step 2", "finished"]);

        let none = server
            .send_task(
                binding,
                with_config(msg("chatty"), json!({"historyLength": 0})),
            )
            .await;
        assert!(none.get("history").is_none(), "historyLength 0: {none}");
        let one = server
            .send_task(
                binding,
                with_config(msg("chatty"), json!({"historyLength": 1})),
            )
            .await;
        let h = one["history"].as_array().unwrap();
        assert_eq!(h.len(), 1, "{one}");
        assert_eq!(text(&h[0]), "finished");

        let task_id = id(&full);
        let get = |n: Option<i64>| {
            let mut p = json!({"id": task_id});
            if let Some(n) = n {
                p["historyLength"] = json!(n);
            }
            server.ok(binding, "GetTask", p)
        };
        assert!(get(Some(0)).await.get("history").is_none());
        let one = get(Some(1)).await;
        assert_eq!(one["history"].as_array().unwrap().len(), 1);
        assert_eq!(text(&one["history"][0]), "finished");
        let two = get(Some(2)).await;
        let h: Vec<String> = two["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(text)
            .collect();
        assert_eq!(h, ["step 2", "finished"]);
        assert_eq!(get(None).await["history"].as_array().unwrap().len(), 4);
        assert_eq!(get(Some(50)).await["history"].as_array().unwrap().len(), 4);

        let err = server
            .err(
                binding,
                "GetTask",
                json!({"id": task_id, "historyLength": -1}),
            )
            .await;
        err.assert_invalid("historyLength");
        let err = server
            .err(
                binding,
                "SendMessage",
                with_config(msg("hi"), json!({"historyLength": -1})),
            )
            .await;
        err.assert_invalid("configuration.historyLength");
    }
}

/// #7: unknown members are ignored at every level (envelope, params, message, part,
/// configuration; REST body and query).
#[tokio::test]
async fn unknown_fields_ignored_at_every_level_7() {
    let (server, _control) = scripted().await;
    let params = json!({
        "futureTopLevel": {"x": 1},
        "message": {
            "messageId": mid(), "role": "ROLE_USER", "futureMessageField": [1, 2],
            "parts": [{"text": "hi", "futurePartField": true}]
        },
        "configuration": {"historyLength": 1, "futureConfigField": "x"}
    });
    let reply = server
        .rpc_envelope(&json!({"jsonrpc": "2.0", "id": 5, "method": "SendMessage",
                              "params": params, "futureEnvelopeField": null}))
        .await;
    let body = reply.json();
    let task = task_of(&body["result"]);
    assert_eq!(text(&task["artifacts"][0]), "echo: hi", "{body}");
    assert_eq!(task["history"].as_array().unwrap().len(), 1);

    let mut params = params.clone();
    params["message"]["messageId"] = json!(mid());
    let task = server.send_task(Binding::Rest, params).await;
    assert_eq!(text(&task["artifacts"][0]), "echo: hi");
    let got = server
        .get(&format!(
            "/tasks/{}?historyLength=0&futureQueryParam=1",
            id(&task)
        ))
        .await;
    assert_eq!(got.status, 200, "{got:?}");
    assert!(got.json().get("history").is_none());
}

/// §1 rule 1: the proto snake_case names are accepted over HTTP, in requests and nested objects.
#[tokio::test]
async fn snake_case_request_fields_accepted() {
    let (server, _control) = scripted().await;
    for binding in Binding::BOTH {
        let task = server.send_task(binding, msg("ask")).await;
        let params = json!({
            "message": {"message_id": mid(), "role": "ROLE_USER", "task_id": id(&task),
                        "context_id": task["contextId"], "parts": [{"text": "Ada"}]},
            "configuration": {"history_length": 1, "return_immediately": false,
                              "accepted_output_modes": ["text/plain"]}
        });
        let done = server.send_task(binding, params).await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
        assert_eq!(done["history"].as_array().unwrap().len(), 1);
        let got = server
            .ok(
                binding,
                "GetTask",
                json!({"id": id(&task), "history_length": 0}),
            )
            .await;
        assert!(
            got.get("history").is_none(),
            "history_length honoured: {got}"
        );
    }
    let list = server
        .ok(
            Binding::JsonRpc,
            "ListTasks",
            json!({"page_size": 1, "include_artifacts": true}),
        )
        .await;
    assert_eq!(list["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(list["pageSize"], 1);
    assert!(list["tasks"][0].get("artifacts").is_some(), "{list}");
}

/// §8.1: REST routes under `/{tenant}` scope the task to the tenant; JSON-RPC reaches it with the
/// `tenant` field; the plain routes do not see it.
#[tokio::test]
async fn tenant_routes_scope_tasks() {
    let (server, _control) = scripted().await;
    let reply = server
        .post_raw(
            "/acme/message:send",
            "application/a2a+json",
            msg("hi").to_string(),
            Some("1.0"),
        )
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let task = task_of(&reply.json()).clone();
    let task_id = id(&task);
    let got = server.get(&format!("/acme/tasks/{task_id}")).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json()["id"], task_id.as_str());
    let rpc = server
        .ok(
            Binding::JsonRpc,
            "GetTask",
            json!({"id": task_id, "tenant": "acme"}),
        )
        .await;
    assert_eq!(rpc["id"], task_id.as_str());
    for binding in Binding::BOTH {
        server
            .err(binding, "GetTask", json!({"id": task_id}))
            .await
            .assert_task_not_found();
    }
    let other = server.get(&format!("/globex/tasks/{task_id}")).await;
    assert_eq!(other.status, 404);
    let list: Value = server.get("/acme/tasks").await.json();
    assert_eq!(list["totalSize"], 1);
}
