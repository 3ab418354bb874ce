//! Tasks: continuing, polling, cancelling, listing, subscribing, push configs, downloads.

use super::*;

pub(crate) fn cases() -> Vec<Case> {
    vec![
        case!(
            cancel_reports_the_resulting_state,
            ["A2ACLI_TASK_CANCEL_001"]
        ),
        case!(
            context_id_groups_a_new_task,
            ["A2ACLI_INTERACT_001", "A2ACLI_INTERACT_003"]
        ),
        case!(
            task_id_continues_or_fails_without_a_new_task,
            ["A2ACLI_INTERACT_002", "A2ACLI_INTERACT_004"]
        ),
        case!(
            nothing_is_remembered_between_runs,
            ["A2ACLI_INTERACT_005", "A2ACLI_CONFIG_001"]
        ),
        case!(
            task_get_waits_by_polling,
            ["A2ACLI_TASK_POLL_001", "A2ACLI_TASK_POLL_002"]
        ),
        case!(
            timeout_and_ctrl_c_name_the_task,
            ["A2ACLI_TASK_POLL_002", "A2ACLI_EXIT_001"]
        ),
        case!(
            a_failed_stream_falls_back_to_polling,
            ["A2ACLI_TASK_POLL_004", "A2ACLI_OUT_003"]
        ),
        case!(list_pages_and_filters, ["A2ACLI_TASK_LIST_001"]),
        case!(
            subscribe_follows_and_resumes,
            ["A2ACLI_TASK_SUBSCRIBE_001", "A2ACLI_TASK_SUBSCRIBE_002"]
        ),
        case!(push_configs_round_trip, ["A2ACLI_PUSH_001"]),
        case!(capabilities_are_checked_first, ["A2ACLI_VER_003"]),
        case!(download_saves_the_artifacts, ["A2ACLI_DOWNLOAD_001"]),
    ]
}

async fn cancel_reports_the_resulting_state(env: Arc<Env>) {
    for binding in BINDINGS {
        let id = waiting_task(&env.url, binding).await;
        let out = jrun(&env.url, binding, &["task", "cancel", &id]).await;
        assert_eq!(
            out.doc()["status"]["state"],
            "TASK_STATE_CANCELED",
            "{binding}"
        );
        let out = a2a(&env.url, &["--transport", binding, "task", "cancel", &id]).await;
        // Again: the task stays canceled (or the agent says it cannot be canceled any more).
        assert!(
            out.field("State").as_deref() == Some("TASK_STATE_CANCELED")
                || out.code == 1 && out.stderr.contains("Error: TaskNotCancelableError"),
            "{out:?}"
        );
        let out = a2a(&env.url, &["--transport", binding, "task", "get", &id])
            .await
            .ok();
        assert_eq!(out.field("State").as_deref(), Some("TASK_STATE_CANCELED"));
    }
}

async fn context_id_groups_a_new_task(env: Arc<Env>) {
    for binding in BINDINGS {
        let first = jrun(&env.url, binding, &["send", "hello"]).await.doc();
        let ctx = first["task"]["contextId"].as_str().unwrap().to_owned();
        let second = jrun(&env.url, binding, &["send", "--context-id", &ctx, "again"])
            .await
            .doc();
        assert_eq!(second["task"]["contextId"], ctx.as_str(), "{binding}");
        assert_ne!(
            second["task"]["id"], first["task"]["id"],
            "a new task in that context"
        );
    }
    // The CLI sends no task or context id of its own: the debug log of the message sent.
    let out = a2a(&env.url, &["--debug", "send", "hello"]).await.ok();
    let sent = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("a2a: debug: send message "))
        .unwrap();
    let sent: Value = serde_json::from_str(sent).unwrap();
    assert!(
        sent.get("taskId").is_none() && sent.get("contextId").is_none(),
        "{sent}"
    );
    assert!(sent["messageId"].is_string());
}

async fn task_id_continues_or_fails_without_a_new_task(env: Arc<Env>) {
    for binding in BINDINGS {
        let out = a2a(&env.url, &["--transport", binding, "send", "ask"])
            .await
            .ok();
        let id = out.field("Task ID").unwrap();
        let ctx = out.field("Context ID").unwrap();
        assert_eq!(
            out.field("State").as_deref(),
            Some("TASK_STATE_INPUT_REQUIRED")
        );
        assert_eq!(
            out.field("Next"),
            Some(format!("a2a send --task-id {id} \"<reply>\""))
        );
        let out = jrun(&env.url, binding, &["send", "--task-id", &id, "Ada"]).await;
        let task = &out.doc()["task"];
        assert_eq!(
            (task["id"].as_str(), task["contextId"].as_str()),
            (Some(id.as_str()), Some(ctx.as_str()))
        );
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
        // An unknown task: the protocol error, non-zero, and no task was created.
        let count = || async {
            jrun(
                &env.url,
                binding,
                &["task", "list", "--context-id", &ctx, "--page-size", "100"],
            )
            .await
            .doc()["tasks"]
                .as_array()
                .map_or(0, Vec::len)
        };
        let before = count().await;
        for extra in [&[][..], &["--context-id", ctx.as_str()][..]] {
            let mut args = vec![
                "--transport",
                binding,
                "-o",
                "json",
                "send",
                "--task-id",
                "no-such-task",
            ];
            args.extend_from_slice(extra);
            args.push("hi");
            let out = a2a(&env.url, &args).await;
            assert_eq!(
                (out.code, out.error_code().as_str()),
                (1, "TaskNotFoundError"),
                "{out:?}"
            );
            assert!(
                out.doc()["error"]["hint"]
                    .as_str()
                    .unwrap()
                    .contains("--debug")
            );
        }
        assert_eq!(before, count().await, "no new task in the context");
        // A context that is not the task's is refused.
        let ask = jrun(&env.url, binding, &["send", "ask"]).await.doc();
        let id = ask["task"]["id"].as_str().unwrap().to_owned();
        let out = a2a(
            &env.url,
            &[
                "--transport",
                binding,
                "-o",
                "json",
                "send",
                "--task-id",
                &id,
                "--context-id",
                "other-context",
                "Bob",
            ],
        )
        .await;
        assert_eq!(out.code, 1, "{out:?}");
        assert!(
            out.doc()["error"]["code"]
                .as_str()
                .unwrap()
                .ends_with("Error"),
            "{out:?}"
        );
    }
}

async fn nothing_is_remembered_between_runs(env: Arc<Env>) {
    let home = env.tmp.join("home-stateless");
    std::fs::create_dir_all(&home).unwrap();
    let run = |args: &'static [&'static str]| {
        let mut c = command(&env.url, args);
        c.env("HOME", &home)
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(&home);
        async move { finish(c.spawn().unwrap()).await.ok() }
    };
    let first = run(&["-o", "json", "send", "hello"]).await.doc();
    let second = run(&["-o", "json", "send", "hello"]).await.doc();
    assert_ne!(
        first["task"]["contextId"], second["task"]["contextId"],
        "no implicit continuation"
    );
    assert_eq!(
        std::fs::read_dir(&home).unwrap().count(),
        0,
        "nothing written"
    );
    // Configuration is read from the conventional place; a file holding a secret must be 0600.
    let global = home.join(".config/a2a-cli");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(
        global.join(".env"),
        format!("A2ACLI_BEARER=tok-cli\nA2ACLI_AGENT_CARD={}\n", env.guarded),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(global.join(".env"), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        let out = run_raw(&home, &["-o", "json", "send", "hello"]).await;
        assert_eq!(
            (out.code, out.error_code().as_str()),
            (2, "A2ACLI_ERR_USAGE"),
            "{out:?}"
        );
        assert!(
            out.doc()["error"]["hint"]
                .as_str()
                .unwrap()
                .starts_with("chmod 600")
        );
        std::fs::set_permissions(global.join(".env"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
    }
    let out = run_raw(&home, &["-o", "json", "send", "hello"]).await.ok();
    assert_eq!(out.doc()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let out = run_raw(&home, &["config", "show"]).await.ok();
    assert!(
        out.stdout.contains("A2ACLI_BEARER: <redacted> [file "),
        "{out:?}"
    );
    assert!(!out.stdout.contains("tok-cli"), "{out:?}");
}

/// Runs `a2a ARGS` with HOME (and so the global config) at `home`, no `--agent-card`.
async fn run_raw(home: &std::path::Path, args: &[&str]) -> Out {
    let mut c = Command::new(env!("CARGO_BIN_EXE_a2a"));
    c.args(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("A2ACLI_CONFIG")
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, _) in std::env::vars() {
        if k.starts_with("A2ACLI_") {
            c.env_remove(k);
        }
    }
    finish(c.spawn().unwrap()).await
}

async fn task_get_waits_by_polling(env: Arc<Env>) {
    for binding in BINDINGS {
        let key = format!("poll-{binding}");
        let id = a2a(
            &env.url,
            &[
                "--transport",
                binding,
                "-o",
                "json",
                "send",
                "--async",
                &format!("gated {key}"),
            ],
        )
        .await
        .ok()
        .doc()["task"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let out = jrun(&env.url, binding, &["task", "get", &id]).await;
        assert_ne!(
            out.doc()["status"]["state"],
            "TASK_STATE_COMPLETED",
            "one-shot"
        );
        let mut child = command(
            &env.url,
            &[
                "--transport",
                binding,
                "--debug",
                "--poll-interval",
                "50ms",
                "task",
                "get",
                "--wait",
                &id,
            ],
        )
        .spawn()
        .unwrap();
        // It polled at least twice while the task was working, then the gate opens.
        stderr_line(
            &mut child,
            &format!("poll: task {id} is TASK_STATE_WORKING"),
        )
        .await;
        stderr_line(
            &mut child,
            &format!("poll: task {id} is TASK_STATE_WORKING"),
        )
        .await;
        env.open(&key);
        let out = finish(child).await.ok();
        assert_eq!(
            out.field("State").as_deref(),
            Some("TASK_STATE_COMPLETED"),
            "{binding}: {out:?}"
        );
    }
}

async fn timeout_and_ctrl_c_name_the_task(env: Arc<Env>) {
    let id = waiting_task(&env.url, "jsonrpc").await;
    let out = a2a(
        &env.url,
        &[
            "--timeout",
            "300ms",
            "--poll-interval",
            "100ms",
            "task",
            "get",
            "--wait",
            &id,
        ],
    )
    .await;
    assert_eq!(out.code, 5, "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("Hint: a2a task get --wait {id}")),
        "{out:?}"
    );
    a2a(&env.url, &["task", "cancel", &id]).await.ok();
    // A blocking send, interrupted: the id was printed as soon as it was known, and again.
    let mut child = command(&env.url, &["send", "wait"]).spawn().unwrap();
    let line = stderr_line(&mut child, "waiting on task").await;
    let pid = child.id().unwrap().to_string();
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let out = finish(child).await;
    assert_eq!(out.code, 130, "{out:?}");
    let id = line.split_whitespace().nth(4).unwrap().to_owned();
    assert!(
        out.stderr.contains(&format!("a2a task get --wait {id}")),
        "{out:?}"
    );
    a2a(&env.url, &["task", "cancel", &id]).await.ok();
}

async fn a_failed_stream_falls_back_to_polling(env: Arc<Env>) {
    // The stream goes silent past --request-timeout while the agent holds the task: the wait
    // polls instead, and ends when the task does.
    let mut child = command(
        &env.url,
        &[
            "-o",
            "json",
            "--request-timeout",
            "1500ms",
            "--poll-interval",
            "50ms",
            "send",
            "gated fallback",
        ],
    )
    .spawn()
    .unwrap();
    stderr_line(&mut child, "polling the task instead").await;
    env.open("fallback");
    let out = finish(child).await.ok();
    assert_eq!(
        out.doc()["task"]["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{out:?}"
    );
    // Under --stream, the stream's failure is the last line: one error object.
    let out = a2a(
        &env.url,
        &[
            "-o",
            "json",
            "--stream",
            "--request-timeout",
            "1500ms",
            "send",
            "gated cut",
        ],
    )
    .await;
    env.open("cut");
    assert_ne!(out.code, 0, "{out:?}");
    let lines = out.json();
    assert!(lines[0]["task"].is_object(), "{out:?}");
    assert!(
        lines.last().unwrap()["error"]["code"].is_string(),
        "{out:?}"
    );
}

async fn list_pages_and_filters(env: Arc<Env>) {
    for binding in BINDINGS {
        let ctx = jrun(&env.url, binding, &["send", "hello"]).await.doc()["task"]["contextId"]
            .as_str()
            .unwrap()
            .to_owned();
        for _ in 0..2 {
            jrun(&env.url, binding, &["send", "--context-id", &ctx, "more"]).await;
        }
        let page = jrun(
            &env.url,
            binding,
            &["task", "list", "--context-id", &ctx, "--page-size", "2"],
        )
        .await
        .doc();
        assert_eq!(
            page["tasks"].as_array().unwrap().len(),
            2,
            "{binding}: {page}"
        );
        let token = page["nextPageToken"].as_str().unwrap().to_owned();
        let rest = jrun(
            &env.url,
            binding,
            &[
                "task",
                "list",
                "--context-id",
                &ctx,
                "--page-size",
                "2",
                "--page-token",
                &token,
            ],
        )
        .await
        .doc();
        assert_eq!(
            rest["tasks"].as_array().unwrap().len(),
            1,
            "{binding}: {rest}"
        );
        let all = jrun(
            &env.url,
            binding,
            &["task", "list", "--context-id", &ctx, "--all"],
        )
        .await;
        assert_eq!(all.json().len(), 3);
        let failed = jrun(
            &env.url,
            binding,
            &["task", "list", "--context-id", &ctx, "--status", "failed"],
        )
        .await
        .doc();
        assert_eq!(failed["tasks"].as_array().map_or(0, Vec::len), 0);
        let done = jrun(
            &env.url,
            binding,
            &[
                "task",
                "list",
                "--context-id",
                &ctx,
                "--status",
                "completed",
            ],
        )
        .await
        .doc();
        assert_eq!(done["tasks"].as_array().unwrap().len(), 3);
    }
}

async fn subscribe_follows_and_resumes(env: Arc<Env>) {
    for binding in BINDINGS {
        let key = format!("subscribe-{binding}");
        let id = jrun(
            &env.url,
            binding,
            &["send", "--async", &format!("gated {key}")],
        )
        .await
        .doc()["task"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut child = command(
            &env.url,
            &[
                "--transport",
                binding,
                "-o",
                "json",
                "--stream",
                "task",
                "subscribe",
                &id,
            ],
        )
        .spawn()
        .unwrap();
        // The first line is the full task, printed while the task still works.
        let first = {
            let stdout = child.stdout.as_mut().unwrap();
            let mut lines = BufReader::new(stdout).lines();
            tokio::time::timeout(SAFETY, lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap()
        };
        let first: Value = serde_json::from_str(&first).unwrap();
        assert_eq!(first["task"]["id"], id.as_str(), "{binding}: {first}");
        env.open(&key);
        let out = finish(child).await.ok();
        let last = out.json().pop().unwrap();
        assert_eq!(
            last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {out:?}"
        );
        // Resuming after an event id: the header reaches the agent, which replays what followed
        // that event (here: from the first artifact chunk on) and carries on live.
        env.spy.lock().unwrap().clear();
        let key = format!("resume-{binding}");
        let id = jrun(
            &env.url,
            binding,
            &["send", "--async", &format!("gated {key}")],
        )
        .await
        .doc()["task"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut child = command(
            &env.url,
            &[
                "--transport",
                binding,
                "-o",
                "json",
                "--stream",
                "--extension",
                HeaderSpy::URI,
                "task",
                "subscribe",
                &id,
                "--last-event-id",
                "1",
            ],
        )
        .spawn()
        .unwrap();
        {
            let stdout = child.stdout.as_mut().unwrap();
            let mut lines = BufReader::new(stdout).lines();
            let first = tokio::time::timeout(SAFETY, lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            assert!(first.contains(&id), "{first}");
        }
        assert!(
            env.spy
                .lock()
                .unwrap()
                .contains(&"last-event-id=1".to_owned()),
            "{binding}"
        );
        env.open(&key);
        let out = finish(child).await.ok();
        let last = out.json().pop();
        assert!(
            last.is_none_or(|l| l["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"),
            "{out:?}"
        );
    }
}

async fn push_configs_round_trip(env: Arc<Env>) {
    for binding in BINDINGS {
        let id = waiting_task(&env.url, binding).await;
        let set = jrun(
            &env.url,
            binding,
            &[
                "task",
                "push-config",
                "set",
                &id,
                "https://example.com/hook",
                "--id",
                "c1",
                "--token",
                "secret",
            ],
        )
        .await
        .doc();
        assert_eq!(set["url"], "https://example.com/hook", "{binding}");
        let got = jrun(
            &env.url,
            binding,
            &["task", "push-config", "get", &id, "c1"],
        )
        .await
        .doc();
        assert_eq!(got["id"], "c1");
        let list = jrun(&env.url, binding, &["task", "push-config", "list", &id])
            .await
            .doc();
        assert_eq!(list["configs"].as_array().unwrap().len(), 1);
        jrun(
            &env.url,
            binding,
            &["task", "push-config", "delete", &id, "c1"],
        )
        .await;
        let list = jrun(&env.url, binding, &["task", "push-config", "list", &id])
            .await
            .doc();
        assert_eq!(list["configs"].as_array().map_or(0, Vec::len), 0);
        let out = a2a(
            &env.url,
            &["--transport", binding, "task", "push-config", "list", &id],
        )
        .await
        .ok();
        assert_eq!(out.field("Configs").as_deref(), Some("0"));
        jrun(&env.url, binding, &["task", "cancel", &id]).await;
    }
}

async fn capabilities_are_checked_first(env: Arc<Env>) {
    let bare = env
        .card_file("bare.json", |c| {
            c["capabilities"]["streaming"] = false.into();
            c["capabilities"]["pushNotifications"] = false.into();
        })
        .await;
    let out = a2a(&bare, &["-o", "json", "task", "subscribe", "some-task"]).await;
    assert_eq!(
        (out.code, out.error_code().as_str()),
        (1, "UnsupportedOperationError"),
        "{out:?}"
    );
    assert!(
        out.doc()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("checked before calling")
    );
    let out = a2a(
        &bare,
        &["-o", "json", "task", "push-config", "list", "some-task"],
    )
    .await;
    assert_eq!(
        out.error_code(),
        "PushNotificationNotSupportedError",
        "{out:?}"
    );
    let out = a2a(&env.url, &["-o", "json", "card", "get", "--extended"]).await;
    assert_eq!(
        out.error_code(),
        "ExtendedAgentCardNotConfiguredError",
        "{out:?}"
    );
}

async fn download_saves_the_artifacts(env: Arc<Env>) {
    for binding in BINDINGS {
        let id = jrun(&env.url, binding, &["send", "files"]).await.doc()["task"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let dir = env
            .tmp
            .join(format!("download-{}", binding.replace('+', "-")));
        let out = a2a(
            &env.url,
            &[
                "--transport",
                binding,
                "task",
                "download",
                &id,
                "--dir",
                dir.to_str().unwrap(),
            ],
        )
        .await
        .ok();
        assert_eq!(out.field("Task ID"), Some(id.clone()));
        assert_eq!(
            std::fs::read(dir.join("report.pdf")).unwrap(),
            b"%PDF-1.4 tiny"
        );
        let data: Value =
            serde_json::from_slice(&std::fs::read(dir.join("bundle-1.json")).unwrap()).unwrap();
        assert_eq!(data["answer"], 42);
        assert!(
            std::fs::read_to_string(dir.join("bundle-0.txt"))
                .unwrap()
                .starts_with("plain")
        );
    }
}
