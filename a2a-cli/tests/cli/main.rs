//! The built `a2a` binary against a live server on `127.0.0.1:0`, on JSON-RPC, HTTP+JSON and
//! gRPC: every subcommand, `--json` output parsed here, a stream shown while the agent is still
//! working (the agent waits for the test to read the first chunk before it sends the next), the
//! Last-Event-ID header of `subscribe`, `--header`, `--bearer` against an agent that requires
//! a token, the exit codes of each kind of failure, and the official Python SDK 0.3 server as
//! a v0.3-only agent.
//!
//! One test binary on purpose (link time dominates CI), one concern per module; the agents,
//! the servers and the helpers that run the binary are here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_examples::{DemoAgent, Locale, demo_card};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{
    Activate, ExtensionHooks, ExtensionMethod, MethodEntry, RequestContext, TimestampExtension,
};
use a2a_runtime::push::PushConfig;
use a2a_runtime::server::{A2aServer, RunningServer};
use a2a_runtime::types::Part;
use a2a_runtime::{A2aError, a2a_extension};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::process::{Child, Command};
use tokio::sync::Notify;

mod exits;
mod headers;
mod ops;
mod v0_3;

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
#[a2a_extension(
    uri = "https://example.com/ext/signed/v1",
    required = true,
    allow_required_data_only = true
)]
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

// The installer of the official SDK peers (`v0_3` uses one of them).
#[allow(dead_code, unreachable_pub)]
#[path = "../../../tests/src/interop.rs"]
mod interop_support;
