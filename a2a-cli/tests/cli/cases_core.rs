//! Cards, sending, output modes, errors, exit statuses, transports and versions.

use super::*;

pub(crate) fn cases() -> Vec<Case> {
    vec![
        case!(
            card_references_resolve_and_select_a_transport,
            ["A2ACLI_CARD_GET_001", "A2ACLI_CARD_GET_004"]
        ),
        case!(card_validation_names_the_problems, ["A2ACLI_CARD_GET_002"]),
        case!(
            catalog_entries_resolve_to_their_cards,
            ["A2ACLI_CARD_GET_005"]
        ),
        case!(
            signed_cards_are_verified_or_refused,
            ["A2ACLI_CARD_GET_004"]
        ),
        case!(
            send_starts_an_interaction_on_every_transport,
            [
                "A2ACLI_SEND_001",
                "A2ACLI_TX_004",
                "A2ACLI_TX_005",
                "A2ACLI_OUT_001"
            ]
        ),
        case!(
            send_blocks_by_default_and_async_returns_ids,
            ["A2ACLI_SEND_002", "A2ACLI_OUT_006", "A2ACLI_INTERACT_004"]
        ),
        case!(
            stream_is_jsonl_and_never_hangs,
            ["A2ACLI_SEND_003", "A2ACLI_OUT_003", "A2ACLI_TX_005"]
        ),
        case!(
            artifacts_render_every_part,
            ["A2ACLI_SEND_004", "A2ACLI_TASK_GET_001"]
        ),
        case!(
            parts_keep_their_order_and_media_types,
            ["A2ACLI_SEND_005", "A2ACLI_SEND_006"]
        ),
        case!(
            json_is_one_terminal_document,
            ["A2ACLI_OUT_002", "A2ACLI_OUT_001"]
        ),
        case!(
            errors_are_named_the_same_on_every_transport,
            ["A2ACLI_OUT_004", "A2ACLI_EXIT_001"]
        ),
        case!(
            text_output_is_the_label_value_floor,
            ["A2ACLI_OUT_005", "A2ACLI_OUT_001"]
        ),
        case!(verbose_shows_every_part, ["A2ACLI_OUT_005"]),
        case!(
            outcomes_exit_zero_with_a_warning,
            ["A2ACLI_EXIT_002", "A2ACLI_TASK_POLL_003", "A2ACLI_AUTH_011"]
        ),
        case!(
            transports_follow_the_card_then_the_caller,
            ["A2ACLI_TX_001", "A2ACLI_TX_002", "A2ACLI_TX_004"]
        ),
        case!(version_is_signaled_and_never_downgraded, ["A2ACLI_VER_001"]),
        case!(tenant_of_the_interface_is_sent, ["A2ACLI_TX_003"]),
    ]
}

/// `REFERENCE#NAME` names agent NAME of the AI Catalog at REFERENCE (a file here, as a URL
/// would be read the same way): by reference (its card fetched) and inline; an unknown name is
/// refused, listing the entries.
async fn catalog_entries_resolve_to_their_cards(env: Arc<Env>) {
    let card_url = format!("{}/.well-known/agent-card.json", env.url);
    let inline: Value = reqwest_card(&env.url).await;
    let catalog = serde_json::json!({
        "specVersion": "1.0",
        "entries": [
            {"identifier": "urn:a2a:agent:echo", "type": "application/a2a-agent-card+json",
             "url": card_url},
            {"identifier": "urn:a2a:agent:inline", "type": "application/a2a-agent-card+json",
             "data": inline},
        ],
    });
    let path = env.tmp.join("ai-catalog.json");
    std::fs::write(&path, serde_json::to_vec(&catalog).unwrap()).unwrap();
    let path = path.display().to_string();
    for name in ["echo", "inline"] {
        let reference = format!("file://{path}#{name}");
        let out = a2a(&reference, &["card", "get"]).await.ok();
        assert_eq!(
            out.field("Name").as_deref(),
            Some("a2a-runtime demo agent"),
            "{reference}: {out:?}"
        );
        let out = a2a(&reference, &["-o", "json", "send", "hello"]).await.ok();
        assert_eq!(out.doc()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
    let out = a2a(&format!("{path}#nobody"), &["-o", "json", "card", "get"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (3, "A2ACLI_ERR_CARD_NOT_FOUND"),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("urn:a2a:agent:echo") || out.stderr.contains("urn:a2a:agent:echo"),
        "{out:?}"
    );
}

async fn card_references_resolve_and_select_a_transport(env: Arc<Env>) {
    let host = env.url.trim_start_matches("http://").to_owned();
    let card_url = format!("{}/.well-known/agent-card.json", env.url);
    let file = env.card_file("card.json", |_| {}).await;
    let file_url = format!("file://{file}");
    for reference in [
        env.url.as_str(),
        host.as_str(),
        card_url.as_str(),
        file.as_str(),
        file_url.as_str(),
    ] {
        let out = a2a(reference, &["card", "get"]).await.ok();
        assert_eq!(
            out.field("Name").as_deref(),
            Some("a2a-runtime demo agent"),
            "{reference}: {out:?}"
        );
        assert!(
            out.field("Transport").unwrap().starts_with("JSONRPC "),
            "{out:?}"
        );
        assert_eq!(out.field("Signature").as_deref(), Some("absent"), "{out:?}");
        // And the card drives the calls that follow.
        let out = a2a(reference, &["-o", "json", "send", "hello"]).await.ok();
        assert_eq!(out.doc()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
    let out = a2a(
        &format!("{}/nowhere.json", env.url),
        &["-o", "json", "card", "get"],
    )
    .await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (3, "A2ACLI_ERR_CARD_NOT_FOUND"),
        "{out:?}"
    );
    let out = a2a("/no/such/card.json", &["-o", "json", "card", "get"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (3, "A2ACLI_ERR_CARD_NOT_FOUND"),
        "{out:?}"
    );
    // A signed card is reported unverifiable, never verified.
    let signed = env
        .card_file("signed.json", |c| {
            c["signatures"] =
                serde_json::json!([{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln"}]);
        })
        .await;
    let out = a2a(&signed, &["card", "get"]).await.ok();
    assert!(
        out.field("Signature").unwrap().starts_with("unverifiable"),
        "{out:?}"
    );
}

async fn card_validation_names_the_problems(env: Arc<Env>) {
    let out = a2a(&env.url, &["card", "get", "--validate"]).await.ok();
    assert_eq!(out.field("Valid").as_deref(), Some("yes"), "{out:?}");
    let bad = env
        .card_file("bad.json", |c| {
            c.as_object_mut().unwrap().remove("skills");
            c["supportedInterfaces"][0]["url"] = Value::String(String::new());
        })
        .await;
    let out = a2a(&bad, &["-o", "json", "card", "get", "--validate"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (1, "A2ACLI_ERR_CARD_INVALID"),
        "{out:?}"
    );
    let message = out.doc()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("`skills`") && message.contains("supportedInterfaces[0].url"),
        "{message}"
    );
    std::fs::write(env.tmp.join("junk.json"), b"{\"name\":").unwrap();
    let junk = env.tmp.join("junk.json").display().to_string();
    let out = a2a(&junk, &["-o", "json", "card", "get"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (1, "A2ACLI_ERR_CARD_INVALID"),
        "{out:?}"
    );
}

async fn send_starts_an_interaction_on_every_transport(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = jrun(&env.url, binding, &["send", "hello"]).await;
        let task = &out.doc()["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{binding}");
        assert_eq!(
            task["artifacts"][0]["parts"][0]["text"], "echo: hello",
            "{binding}"
        );
        assert!(task["id"].is_string() && task["contextId"].is_string());
        // Diagnostics never reach stdout.
        assert!(!out.stdout.contains("a2a:"), "{out:?}");
    }
}

async fn send_blocks_by_default_and_async_returns_ids(env: Arc<Env>) {
    // Blocking: the CLI is still waiting on a task the agent holds open; it ends when the
    // agent finishes.
    let mut child = command(
        &env.url,
        &[
            "-o",
            "json",
            "--transport",
            "http+json",
            "send",
            "gated blocking",
        ],
    )
    .spawn()
    .unwrap();
    let line = stderr_line(&mut child, "waiting on task").await;
    assert!(line.contains("a2a task get --wait"), "{line}");
    env.open("blocking");
    let out = finish(child).await.ok();
    let task = &out.doc()["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(task["artifacts"][0]["parts"][1]["text"], "second");
    for flag in ["--async", "--return-immediately", "--no-wait"] {
        let out = a2a(&env.url, &["-o", "json", "send", flag, "wait"])
            .await
            .ok();
        let task = &out.doc()["task"];
        assert!(
            task["id"].is_string() && task["contextId"].is_string(),
            "{out:?}"
        );
        assert_ne!(task["status"]["state"], "TASK_STATE_COMPLETED");
        let id = task["id"].as_str().unwrap().to_owned();
        a2a(&env.url, &["task", "cancel", &id]).await.ok();
    }
    // Text: the ids and how to follow up.
    let out = a2a(&env.url, &["send", "--async", "wait"]).await.ok();
    let id = out.field("Task ID").unwrap();
    assert!(
        out.field("Context ID").is_some() && out.field("State").is_some(),
        "{out:?}"
    );
    assert_eq!(out.field("Next"), Some(format!("a2a task get --wait {id}")));
    a2a(&env.url, &["task", "cancel", &id]).await.ok();
}

async fn stream_is_jsonl_and_never_hangs(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = jrun(&env.url, binding, &["--stream", "send", "stream one two"]).await;
        let lines = out.json();
        assert!(
            lines[0]["task"].is_object(),
            "first event is the task: {out:?}"
        );
        assert!(lines.len() >= 4, "{out:?}");
        let last = lines.last().unwrap();
        assert_eq!(
            last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}"
        );
        assert!(
            last["statusUpdate"]["taskId"].is_string()
                && last["statusUpdate"]["contextId"].is_string()
        );
        // A direct message: that one object, then a clean exit.
        let out = jrun(&env.url, binding, &["--stream", "send", "direct"]).await;
        assert_eq!(
            out.doc()["message"]["parts"][0]["text"],
            "a direct reply",
            "{binding}"
        );
    }
    // An agent whose card does not declare streaming: the CLI waits by polling, and still
    // answers JSON Lines (one line).
    let no_stream = env
        .card_file("no-stream.json", |c| {
            c["capabilities"]["streaming"] = false.into()
        })
        .await;
    let out = a2a(&no_stream, &["-o", "json", "--stream", "send", "hello"])
        .await
        .ok();
    assert_eq!(out.doc()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(out.stderr.contains("does not declare streaming"), "{out:?}");
    // Text under --stream: every event restates the ids and the state; the last one is final.
    let out = a2a(&env.url, &["--stream", "send", "stream a b"])
        .await
        .ok();
    let states: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("State: "))
        .collect();
    assert_eq!(states.last(), Some(&"TASK_STATE_COMPLETED"), "{out:?}");
    assert!(out.stdout.matches("Task ID: ").count() >= 3, "{out:?}");
}

async fn artifacts_render_every_part(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = a2a(&env.url, &["--transport", binding, "send", "files"])
            .await
            .ok();
        let text = &out.stdout;
        assert!(text.contains("Artifact: bundle"), "{text}");
        assert!(
            text.contains("plain [31mtext[0m"),
            "the text, control characters dropped: {text}"
        );
        assert!(text.contains("\"answer\": 42"), "formatted data: {text}");
        assert!(
            text.contains("[file report.pdf, application/pdf, 13 bytes]"),
            "{text}"
        );
        let id = out.field("Task ID").unwrap();
        let out = a2a(
            &env.url,
            &["--transport", binding, "task", "get", &id, "--history", "5"],
        )
        .await
        .ok();
        assert!(
            out.stdout
                .contains("[file report.pdf, application/pdf, 13 bytes]"),
            "{out:?}"
        );
        assert!(out.stdout.contains("\"answer\": 42"), "{out:?}");
        let out = jrun(&env.url, binding, &["task", "get", &id, "--history", "1"]).await;
        let task = out.doc();
        assert_eq!(task["artifacts"][0]["parts"].as_array().unwrap().len(), 3);
        assert_eq!(
            task["history"].as_array().map(Vec::len),
            Some(1),
            "{binding}: {task}"
        );
    }
}

async fn parts_keep_their_order_and_media_types(env: Arc<Env>) {
    let pdf = env.tmp.join("notes.pdf");
    std::fs::write(&pdf, b"%PDF").unwrap();
    let blob = env.tmp.join("blob");
    std::fs::write(&blob, b"\x00\x01").unwrap();
    let json = env.tmp.join("d.json");
    std::fs::write(&json, br#"{"k": [1, 2]}"#).unwrap();
    let (pdf, blob, json) = (
        pdf.display().to_string(),
        blob.display().to_string(),
        json.display().to_string(),
    );
    let mut child = command(
        &env.url,
        &[
            "-o",
            "json",
            "send",
            "parts",
            "--file",
            &blob,
            "--media-type",
            "application/x-custom",
            "--data",
            "-",
            "--text",
            "middle",
            "--file",
            &pdf,
            "--data",
            &json,
            "--file",
            "https://example.com/a.png",
        ],
    )
    .stdin(Stdio::piped())
    .spawn()
    .unwrap();
    {
        use tokio::io::AsyncWriteExt as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"{\"from\": \"stdin\"}").await.unwrap();
    }
    let out = finish(child).await.ok();
    let parts = out.doc()["task"]["artifacts"][0]["parts"].clone();
    let parts = parts.as_array().unwrap();
    assert_eq!(parts.len(), 7, "{parts:?}");
    assert_eq!(parts[0]["text"], "parts");
    assert_eq!(
        (
            parts[1]["filename"].as_str(),
            parts[1]["mediaType"].as_str()
        ),
        (Some("blob"), Some("application/x-custom"))
    );
    assert_eq!(parts[1]["raw"], "AAE=");
    assert_eq!(parts[2]["data"]["from"], "stdin");
    assert_eq!(parts[3]["text"], "middle");
    assert_eq!(
        parts[4]["mediaType"], "application/pdf",
        "inferred when not given"
    );
    assert_eq!(parts[5]["data"]["k"][1], 2);
    assert_eq!(parts[6]["url"], "https://example.com/a.png");
    // A media type with no part before it is a usage error.
    let out = a2a(
        &env.url,
        &[
            "-o",
            "json",
            "send",
            "--media-type",
            "text/plain",
            "--text",
            "x",
        ],
    )
    .await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (2, "A2ACLI_ERR_USAGE"),
        "{out:?}"
    );
}

async fn json_is_one_terminal_document(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = jrun(&env.url, binding, &["send", "stream one two three"]).await;
        let doc = out.doc();
        assert_eq!(
            doc["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}"
        );
        let text: String = doc["task"]["artifacts"][0]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect();
        assert_eq!(
            text, "stream one two three ",
            "the whole artifact, not events"
        );
        let id = doc["task"]["id"].as_str().unwrap().to_owned();
        for cmd in [["task", "get"], ["task", "cancel"]] {
            let out = a2a(
                &env.url,
                &["--transport", binding, "-o", "json", cmd[0], cmd[1], &id],
            )
            .await;
            let doc = out.doc();
            // A bare Task, or (cancel of a finished task) one error object.
            assert!(
                doc["id"] == id.as_str() || doc["error"]["code"] == "TaskNotCancelableError",
                "{out:?}"
            );
        }
        let out = jrun(&env.url, binding, &["card", "get"]).await;
        assert!(out.doc()["supportedInterfaces"].is_array());
    }
}

async fn errors_are_named_the_same_on_every_transport(env: Arc<Env>) {
    let mut seen = Vec::new();
    for binding in BINDINGS {
        let out = a2a(
            &env.url,
            &[
                "--transport",
                binding,
                "-o",
                "json",
                "task",
                "get",
                "no-such-task",
            ],
        )
        .await;
        assert_eq!(out.code, 1, "{out:?}");
        let e = out.doc()["error"].clone();
        assert_eq!(e["code"], "TaskNotFoundError", "{binding}");
        assert!(e["hint"].as_str().unwrap().contains("--debug"));
        seen.push((e["code"].clone(), e["a2aCode"].clone()));
        assert!(out.stderr.contains("Error: TaskNotFoundError"), "{out:?}");
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    // CLI-local failures and their statuses.
    let out = a2a(&env.url, &["-o", "json", "send", "--no-such-flag"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (2, "A2ACLI_ERR_USAGE"),
        "{out:?}"
    );
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let out = a2a(&closed, &["-o", "json", "card", "get"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (3, "A2ACLI_ERR_UNREACHABLE"),
        "{out:?}"
    );
    assert!(
        out.doc()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("refused"),
        "the cause: {out:?}"
    );
    let out = a2a(&env.guarded, &["-o", "json", "send", "hello"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (4, "A2ACLI_ERR_CREDENTIALS_MISSING"),
        "{out:?}"
    );
    let out = a2a(
        &env.guarded,
        &["-o", "json", "--bearer", "wrong", "send", "hello"],
    )
    .await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (4, "A2ACLI_ERR_AUTH_FAILED"),
        "{out:?}"
    );
    let id = waiting_task(&env.url, "jsonrpc").await;
    let out = a2a(
        &env.url,
        &[
            "-o",
            "json",
            "--timeout",
            "300ms",
            "task",
            "get",
            "--wait",
            &id,
        ],
    )
    .await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (5, "A2ACLI_ERR_TIMEOUT"),
        "{out:?}"
    );
    a2a(&env.url, &["task", "cancel", &id]).await.ok();
}

/// Every stdout line of a text run is a field, or inside a block opened by a label line and
/// closed by a blank line, after the fields; no control sequences.
fn assert_text_floor(stdout: &str) {
    assert!(!stdout.contains('\x1b'), "{stdout:?}");
    let label = |l: &str| {
        l.split_once(": ")
            .or_else(|| l.strip_suffix(':').map(|x| (x, "")))
            .is_some_and(|(k, _)| {
                !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '_')
            })
    };
    let mut in_block = false;
    let mut blocks_started = false;
    for line in stdout.lines() {
        if in_block {
            if line.is_empty() {
                in_block = false;
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        assert!(
            label(line),
            "not a `Label: value` line: {line:?} in\n{stdout}"
        );
        if line.starts_with("Artifact: ") || line.starts_with("Message: ") {
            in_block = true;
            blocks_started = true;
        } else if line.starts_with("Event: ") || line.starts_with("Task ID: ") {
            // The next record (a stream's next event, a list's next task).
            blocks_started = false;
        } else {
            assert!(!blocks_started, "a field after a block: {line:?}\n{stdout}");
        }
    }
}

async fn text_output_is_the_label_value_floor(env: Arc<Env>) {
    for args in [
        vec!["send", "files"],
        vec!["send", "stream one two"],
        vec!["--stream", "send", "stream one two"],
        vec!["send", "ask"],
        vec!["card", "get"],
        vec!["send", "direct"],
    ] {
        let out = a2a(&env.url, &args).await.ok();
        assert_text_floor(&out.stdout);
        if args[..] != ["card", "get"] && args[..] != ["send", "direct"] {
            assert!(
                out.field("Task ID").is_some()
                    && out.field("Context ID").is_some()
                    && out.field("State").is_some(),
                "{out:?}"
            );
        }
    }
    let out = a2a(&env.url, &["task", "list", "--page-size", "3"])
        .await
        .ok();
    assert_text_floor(&out.stdout);
}

async fn verbose_shows_every_part(env: Arc<Env>) {
    let out = a2a(&env.url, &["send", "files"]).await.ok();
    assert!(
        !out.stdout.contains("[data part"),
        "concise by default: {out:?}"
    );
    let out = a2a(&env.url, &["--verbose", "send", "files"]).await.ok();
    assert!(out.stdout.contains("[data part, unknown type]"), "{out:?}");
    assert!(
        out.stdout.contains("[file part, application/pdf]"),
        "{out:?}"
    );
}

async fn outcomes_exit_zero_with_a_warning(env: Arc<Env>) {
    for binding in BINDINGS {
        for (word, state) in [
            ("fail", "TASK_STATE_FAILED"),
            ("reject", "TASK_STATE_REJECTED"),
            ("ask", "TASK_STATE_INPUT_REQUIRED"),
            ("login", "TASK_STATE_AUTH_REQUIRED"),
        ] {
            let out = jrun(&env.url, binding, &["send", word]).await;
            assert_eq!(
                out.doc()["task"]["status"]["state"],
                state,
                "{binding} {word}"
            );
            assert!(
                out.stderr.contains("warning: the task") && out.stderr.contains(state),
                "{out:?}"
            );
        }
    }
    let out = a2a(&env.url, &["send", "login"]).await.ok();
    let id = out.field("Task ID").unwrap();
    assert_eq!(
        out.field("Next"),
        Some(format!(
            "a2a send --task-id {id} --bearer TOKEN \"<reply>\""
        ))
    );
}

async fn transports_follow_the_card_then_the_caller(env: Arc<Env>) {
    let chosen = |out: &Out| {
        out.stderr
            .lines()
            .find_map(|l| l.strip_prefix("a2a: debug: transport "))
            .map(|l| l.split_whitespace().next().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    let out = a2a(&env.url, &["--debug", "send", "hello"]).await.ok();
    assert_eq!(
        chosen(&out),
        "JSONRPC",
        "the card's first interface: {out:?}"
    );
    let out = a2a(
        &env.url,
        &[
            "--debug",
            "--transport",
            "grpc",
            "--transport",
            "jsonrpc",
            "send",
            "hello",
        ],
    )
    .await
    .ok();
    assert_eq!(chosen(&out), "GRPC", "{out:?}");
    // A card listing gRPC first, without HTTP+JSON: its order, then the caller's first offered.
    let grpc_first = env
        .card_file("grpc-first.json", |c| {
            let list = c["supportedInterfaces"].as_array_mut().unwrap();
            list.retain(|i| i["protocolBinding"] != "HTTP+JSON");
            list.reverse();
        })
        .await;
    let out = a2a(&grpc_first, &["--debug", "send", "hello"]).await.ok();
    assert_eq!(chosen(&out), "GRPC", "{out:?}");
    let out = a2a(
        &grpc_first,
        &[
            "--debug",
            "--transport",
            "http+json",
            "--transport",
            "jsonrpc",
            "send",
            "hello",
        ],
    )
    .await
    .ok();
    assert_eq!(chosen(&out), "JSONRPC", "HTTP+JSON is skipped: {out:?}");
    let out = a2a(
        &grpc_first,
        &["--debug", "--transport", "http+json", "send", "hello"],
    )
    .await
    .ok();
    assert_eq!(
        chosen(&out),
        "GRPC",
        "none offered: the card's order: {out:?}"
    );
}

async fn version_is_signaled_and_never_downgraded(env: Arc<Env>) {
    for binding in BINDINGS {
        env.spy.lock().unwrap().clear();
        jrun(
            &env.url,
            binding,
            &["--extension", HeaderSpy::URI, "send", "hello"],
        )
        .await;
        let seen = env.spy.lock().unwrap().clone();
        assert!(
            seen.contains(&"a2a-version=1.0".to_owned()),
            "{binding}: {seen:?}"
        );
    }
    // A card that offers only v0.3: refused before any call, with the opt-in named.
    let legacy = env
        .card_file("legacy.json", |c| {
            for i in c["supportedInterfaces"].as_array_mut().unwrap() {
                i["protocolVersion"] = "0.3.0".into();
            }
        })
        .await;
    let out = a2a(&legacy, &["-o", "json", "send", "hello"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (1, "VersionNotSupportedError"),
        "{out:?}"
    );
    assert!(
        out.doc()["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--a2a-version 0.3")
    );
    let out = a2a(
        &env.url,
        &["-o", "json", "--a2a-version", "0.2", "send", "hello"],
    )
    .await;
    assert_eq!(out.code, 2, "{out:?}");
}

async fn tenant_of_the_interface_is_sent(env: Arc<Env>) {
    let tenant = env
        .card_file("tenant.json", |c| {
            for i in c["supportedInterfaces"].as_array_mut().unwrap() {
                i["tenant"] = "acme".into();
            }
        })
        .await;
    for binding in BINDINGS {
        let out = jrun(&tenant, binding, &["send", "hello"]).await;
        let id = out.doc()["task"]["id"].as_str().unwrap().to_owned();
        // The task lives in tenant acme: found through the tenant's card, not without it.
        jrun(&tenant, binding, &["task", "get", &id]).await;
        let out = a2a(
            &env.url,
            &["--transport", binding, "-o", "json", "task", "get", &id],
        )
        .await;
        assert_eq!(out.error_code(), "TaskNotFoundError", "{binding}: {out:?}");
    }
}

async fn signed_cards_are_verified_or_refused(env: Arc<Env>) {
    use a2a_runtime::auth::jwt::Algorithm;
    use a2a_runtime::auth::signing::CardSigner;
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let other = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let dir = env.tmp.join("signing");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("public.pem"), key.public_key_pem()).unwrap();
    std::fs::write(dir.join("other.pem"), other.public_key_pem()).unwrap();
    let signer =
        CardSigner::from_pem(Algorithm::Es256, key.serialize_pem().as_bytes(), "k1").unwrap();
    let card: a2a_runtime::types::AgentCard =
        serde_json::from_value(reqwest_card(&env.url).await).unwrap();
    let signed = serde_json::to_value(signer.sign(card).unwrap()).unwrap();
    std::fs::write(dir.join("signed.json"), signed.to_string()).unwrap();
    let mut tampered = signed.clone();
    tampered["description"] = "tampered".into();
    std::fs::write(dir.join("tampered.json"), tampered.to_string()).unwrap();
    let path = |n: &str| dir.join(n).display().to_string();
    let public = path("public.pem");
    let out = a2a(
        &path("signed.json"),
        &["--card-key", &public, "card", "get"],
    )
    .await
    .ok();
    assert_eq!(
        out.field("Signature").as_deref(),
        Some("verified (kid k1)"),
        "{out:?}"
    );
    // Calls through a verified card work; through a tampered one, or with the wrong key, no
    // call is made.
    let out = a2a(
        &path("signed.json"),
        &["--card-key", &public, "-o", "json", "send", "hello"],
    )
    .await
    .ok();
    assert_eq!(out.doc()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    for (card, key) in [
        ("tampered.json", public.clone()),
        ("signed.json", path("other.pem")),
    ] {
        let out = a2a(
            &path(card),
            &["--card-key", &key, "-o", "json", "card", "get"],
        )
        .await;
        assert_eq!(
            (out.code, out.error_code().as_str()),
            (1, "A2ACLI_ERR_CARD_INVALID"),
            "{card}: {out:?}"
        );
    }
    // Without a key: unverifiable, never verified; an unsigned card: absent, not a failure.
    let out = a2a(&path("signed.json"), &["card", "get"]).await.ok();
    assert!(
        out.field("Signature").unwrap().starts_with("unverifiable"),
        "{out:?}"
    );
    let out = a2a(&env.url, &["--card-key", &public, "card", "get"])
        .await
        .ok();
    assert_eq!(out.field("Signature").as_deref(), Some("absent"));
}
