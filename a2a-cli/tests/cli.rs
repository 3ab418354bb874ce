//! The built `a2a` binary against a live server on `127.0.0.1:0`, on JSON-RPC, HTTP+JSON and
//! gRPC: every subcommand, `--json` output parsed here, a stream shown while the agent is still
//! working (the agent waits for the test to read the first chunk before it sends the next), the
//! Last-Event-ID header of `subscribe`, `--header`, `--bearer` against an agent that requires
//! a token, the exit codes of each kind of failure, and the official Python SDK 0.3 server as
//! a v0.3-only agent.
//!
//! One test binary on purpose (link time dominates CI).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_examples::{DemoAgent, Locale, demo_card};
use a2a_runtime::auth::StaticTokens;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{
    Activate, Extension as _, ExtensionHooks, ExtensionMethod, MethodEntry, RequestContext,
    TimestampExtension,
};
use a2a_runtime::push::PushConfig;
use a2a_runtime::server::{A2aServer, RunningServer};
use a2a_runtime::types::Part;
use a2a_runtime::{A2aError, a2a_extension};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Notify;

/// The safety net around every wait on the binary (never used to order things).
const SAFETY: Duration = Duration::from_secs(60);
const BINDINGS: [&str; 3] = ["jsonrpc", "rest", "grpc"];
/// A request header the spy records (for `--header`).
const PROBE: &str = "x-cli-probe";

/// Echoes a method call's params (for `a2a call`).
#[a2a_extension(uri = "https://example.com/ext/echo-params/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct EchoParams {}

struct EchoMethod;

impl ExtensionMethod for EchoMethod {
    type Extension = EchoParams;
    const METHOD: &'static str = "params/echo";
    const REST_PATH: &'static str = "/extensions/echo-params/v1/params:echo";
    type Params = Value;
    type Result = Value;
}

impl ExtensionHooks for EchoParams {
    type Activation = ();
    fn methods(&self) -> Vec<MethodEntry> {
        vec![MethodEntry::new::<EchoMethod, _, _>(
            |_, params: Value| async move { Ok(json!({ "echo": params })) },
        )]
    }
}

/// Records the `Last-Event-ID` and `X-Cli-Probe` headers of every request that activates it
/// (`name=value`).
#[a2a_extension(uri = "https://example.com/ext/header-spy/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct HeaderSpy {
    #[serde(skip)]
    seen: Arc<Mutex<Vec<String>>>,
}

impl ExtensionHooks for HeaderSpy {
    type Activation = ();
    fn activate(&self, _: &[String], ctx: &RequestContext) -> Activate<()> {
        for name in ["last-event-id", PROBE] {
            if let Some(value) = ctx.headers.get(name) {
                self.seen.lock().unwrap().push(format!("{name}={value}"));
            }
        }
        Activate::Activated(())
    }
}

/// Must be activated (for the local-check exit code).
#[a2a_extension(uri = "https://example.com/ext/signed/v1", required = true)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Signed {}

/// The demo agent, plus `gated`: one artifact chunk, then (once the test opens the gate) the
/// last chunk and COMPLETED.
#[derive(Clone, Debug, Default)]
struct CliAgent {
    gate: Arc<Notify>,
}

impl AgentExecutor for CliAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        if ctx.text().starts_with("gated") {
            events.progress("thinking").await?;
            events
                .artifact_chunk("reply", [Part::text("first ")], false, false)
                .await?;
            self.gate.notified().await;
            events
                .artifact_chunk("reply", [Part::text("second")], true, true)
                .await?;
            return events.complete().await;
        }
        DemoAgent.execute(ctx, events).await
    }
}

struct Agent {
    url: String,
    gate: Arc<Notify>,
    spy: Arc<Mutex<Vec<String>>>,
    _running: RunningServer,
}

async fn agent() -> Agent {
    let gate = Arc::new(Notify::new());
    let spy = HeaderSpy::default();
    let seen = spy.seen.clone();
    let card = demo_card();
    let running = A2aServer::builder()
        .card(card)
        .executor(CliAgent { gate: gate.clone() })
        .extension(TimestampExtension::default())
        .extension(Locale::default())
        .extension(EchoParams {})
        .extension(spy)
        .linked_extensions(false)
        .push(PushConfig::new())
        .grpc_addr("127.0.0.1:0")
        .workers(1)
        .build()
        .expect("build the server")
        .start("127.0.0.1:0")
        .await
        .expect("start the server");
    Agent {
        url: running.url(),
        gate,
        spy: seen,
        _running: running,
    }
}

#[derive(Debug)]
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    /// The stdout, one JSON document per line.
    fn json(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("not one JSON per line ({e}): {l}\n{self:?}"))
            })
            .collect()
    }

    fn ok(self) -> Self {
        assert_eq!(self.code, 0, "{self:?}");
        self
    }
}

fn command(url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_a2a"));
    c.arg("--url")
        .arg(url)
        .args(args)
        .env("RUST_LOG", "warn")
        .env_remove("A2A_URL")
        .env_remove("A2A_BEARER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    c
}

/// Runs `a2a --url URL ARGS…` to its end.
async fn a2a(url: &str, args: &[&str]) -> Out {
    let child = command(url, args).spawn().expect("run a2a");
    finish(child).await
}

async fn finish(child: Child) -> Out {
    let out = tokio::time::timeout(SAFETY, child.wait_with_output())
        .await
        .expect("a2a ends")
        .expect("a2a ran");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `a2a --url URL --binding BINDING --json ARGS…`, which must succeed.
async fn jrun(url: &str, binding: &str, args: &[&str]) -> Out {
    let all: Vec<&str> = ["--binding", binding, "--json"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    a2a(url, &all).await.ok()
}

/// Starts a task that works until canceled; returns its id.
async fn waiting_task(url: &str, binding: &str) -> String {
    let out = a2a(
        url,
        &[
            "--binding",
            binding,
            "--json",
            "send",
            "wait",
            "--return-immediately",
        ],
    )
    .await
    .ok();
    let task = &out.json()[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{out:?}");
    task["id"].as_str().unwrap().to_owned()
}

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

#[tokio::test]
async fn call_and_extensions_by_uri() {
    let agent = agent().await;
    for binding in BINDINGS {
        let call = [
            "--binding",
            binding,
            "--json",
            "call",
            EchoMethod::METHOD,
            r#"{"q":1}"#,
            "--uri",
            EchoParams::URI,
            "--path",
            EchoMethod::REST_PATH,
        ];
        if binding == "grpc" {
            let out = a2a(&agent.url, &call).await;
            assert_eq!(out.code, 8, "no extension methods on gRPC: {out:?}");
            assert!(out.stderr.contains("no gRPC form"), "{out:?}");
        } else {
            assert_eq!(
                a2a(&agent.url, &call).await.ok().json(),
                [json!({"echo": {"q": 1}})],
                "{binding}"
            );
        }

        // An extension activated by URI: the agent stamps its artifacts.
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "--extension",
                TimestampExtension::URI,
                "send",
                "hi",
            ],
        )
        .await
        .ok();
        let artifact = &out.json()[0]["task"]["artifacts"][0];
        assert!(
            artifact["metadata"][TimestampExtension::METADATA_KEY].is_string(),
            "{artifact}"
        );
        // Locale validates on the server only: the client sends what it is given.
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--extension",
                Locale::URI,
                "send",
                "hi",
                "--metadata",
                &json!({ Locale::URI: "xx" }).to_string(),
            ],
        )
        .await;
        assert_eq!(out.code, 7, "the agent refused it: {out:?}");
        assert!(
            out.stderr.contains("-32602") && out.stderr.contains("not supported"),
            "{out:?}"
        );
    }
    let out = a2a(
        &agent.url,
        &[
            "--binding",
            "rest",
            "call",
            EchoMethod::METHOD,
            "--uri",
            EchoParams::URI,
        ],
    )
    .await;
    assert_eq!(out.code, 2, "REST needs --path: {out:?}");
}

/// A raw server answering every connection with `response`.
async fn raw_server(response: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    url
}

#[tokio::test]
async fn exit_codes_tell_failures_apart() {
    let agent = agent().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let out = a2a(&closed, &["discover"]).await;
    assert_eq!(out.code, 3, "connection refused: {out:?}");

    let out = a2a(&agent.url, &["--timeout", "300ms", "send", "wait"]).await;
    assert_eq!(out.code, 4, "timeout: {out:?}");
    assert!(out.stderr.contains("within 300ms"), "{out:?}");

    let out = a2a(&format!("{}/nowhere", agent.url), &["discover"]).await;
    assert_eq!(out.code, 5, "HTTP 404 without an A2A error: {out:?}");

    let junk = raw_server(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 8\r\nconnection: close\r\n\r\n{\"name\":",
    )
    .await;
    let out = a2a(&junk, &["discover"]).await;
    assert_eq!(out.code, 6, "invalid response: {out:?}");

    for binding in BINDINGS {
        let out = a2a(&agent.url, &["--binding", binding, "get", "no-such-task"]).await;
        assert_eq!(out.code, 7, "the agent's error: {out:?}");
        assert!(out.stderr.contains("-32001 TASK_NOT_FOUND"), "{out:?}");
        assert!(
            out.stderr.contains(r#""taskId":"no-such-task""#),
            "metadata: {out:?}"
        );
    }

    let signed = A2aServer::builder()
        .card(demo_card())
        .executor(DemoAgent)
        .extension(Signed {})
        .linked_extensions(false)
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    let out = a2a(&signed.url(), &["discover"]).await.ok();
    assert!(
        out.stdout
            .contains("https://example.com/ext/signed/v1 (required)"),
        "{out:?}"
    );
    let out = a2a(&signed.url(), &["send", "hi"]).await;
    assert_eq!(out.code, 8, "refused locally: {out:?}");
    assert!(out.stderr.contains("local check"), "{out:?}");
    a2a(&signed.url(), &["--extension", Signed::URI, "send", "hi"])
        .await
        .ok();

    let out = a2a(&agent.url, &["--timeout", "soon", "discover"]).await;
    assert_eq!(out.code, 2, "usage: {out:?}");
    let out = a2a(&agent.url, &["--header", "no colon", "discover"]).await;
    assert_eq!(out.code, 2, "usage: {out:?}");
}

#[tokio::test]
async fn help_documents_exit_codes_and_examples_and_completions_generate() {
    let out = a2a("http://127.0.0.1:9", &["--help"]).await.ok();
    assert!(
        out.stdout.contains("Exit codes:") && out.stdout.contains("Examples:"),
        "{out:?}"
    );
    for command in [
        "discover",
        "send",
        "stream",
        "get",
        "list",
        "cancel",
        "subscribe",
        "push",
        "call",
    ] {
        assert!(
            out.stdout.contains(&format!("  {command} ")),
            "{command}: {}",
            out.stdout
        );
    }
    let out = a2a("http://127.0.0.1:9", &["completions", "bash"])
        .await
        .ok();
    assert!(
        out.stdout.contains("_a2a()"),
        "{}",
        &out.stdout[..out.stdout.len().min(200)]
    );
    let out = a2a("http://127.0.0.1:9", &["completions", "zsh"])
        .await
        .ok();
    assert!(
        out.stdout.starts_with("#compdef a2a"),
        "{}",
        &out.stdout[..out.stdout.len().min(200)]
    );
}

#[tokio::test]
async fn headers_and_bearer_tokens_reach_the_agent_on_every_binding() {
    let agent = agent().await;
    let guarded = A2aServer::builder()
        .card(demo_card())
        .executor(DemoAgent)
        .authenticator(StaticTokens::bearer().token("cli", "tok-cli"))
        .linked_extensions(false)
        .grpc_addr("127.0.0.1:0")
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap();
    for binding in BINDINGS {
        // --header (twice, one of them the probe), with --extension so the spy runs.
        let out = a2a(
            &agent.url,
            &[
                "--binding",
                binding,
                "--json",
                "-H",
                "X-Other: 1",
                "--header",
                &format!("{PROBE}: {binding} probe"),
                "--extension",
                HeaderSpy::URI,
                "send",
                "hello",
            ],
        )
        .await
        .ok();
        assert_eq!(
            out.json()[0]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
        assert_eq!(
            agent.spy.lock().unwrap().pop(),
            Some(format!("{PROBE}={binding} probe")),
            "{binding}"
        );

        // An agent that requires a bearer token: refused without one or with a wrong one.
        let send = |extra: &'static [&'static str]| {
            let mut args = vec!["--binding", binding, "--json"];
            args.extend_from_slice(extra);
            args.extend_from_slice(&["send", "hello"]);
            let url = guarded.url();
            async move { a2a(&url, &args).await }
        };
        let out = send(&[]).await;
        assert_eq!(out.code, 9, "{binding}: no credential: {out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        let out = send(&["--bearer", "wrong"]).await;
        assert_eq!(out.code, 9, "{binding}: a wrong credential: {out:?}");
        let out = send(&["--bearer", "tok-cli"]).await.ok();
        assert_eq!(
            out.json()[0]["task"]["artifacts"][0]["parts"][0]["text"],
            "echo: hello",
            "{binding}"
        );
        // The token also comes from the environment.
        let mut c = command(
            &guarded.url(),
            &["--binding", binding, "get", "no-such-task"],
        );
        c.env("A2A_BEARER", "tok-cli");
        let out = finish(c.spawn().unwrap()).await;
        assert_eq!(out.code, 7, "authenticated, then TaskNotFound: {out:?}");
    }
}

// The installer of the official SDK peers (this file uses one of them).
#[allow(dead_code, unreachable_pub)]
#[path = "../../tests/src/interop.rs"]
mod interop_support;

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
