//! The built `a2a` binary against live agents on `127.0.0.1:0`, on JSON-RPC, HTTP+JSON and gRPC,
//! case by case; each case names the A2A CLI specification requirements it exercises, and the
//! run ends by producing the compliance report from the outcomes (`report.rs`), failing when a
//! requirement that passed in the checked-in report no longer does.
//!
//! A harness of its own (`harness = false`): the report is a final step over every case's
//! outcome, which libtest has no place for. Filter with `cargo test -p a2a-cli --test cli --
//! NAME`; a filtered run checks its cases but writes no report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::print_stdout,
    missing_debug_implementations
)]

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_examples::{DemoAgent, demo_card};
use a2a_runtime::auth::StaticTokens;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{Activate, Extension as _, ExtensionHooks, RequestContext};
use a2a_runtime::push::PushConfig;
use a2a_runtime::server::{A2aServer, RunningServer};
use a2a_runtime::types::{Artifact, Message, Part, Role};
use a2a_runtime::{A2aError, a2a_extension};
use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Notify;

mod cases_core;
mod cases_more;
mod cases_tasks;
mod registry;
mod report;

/// The safety net around every wait on the binary (never used to order things).
const SAFETY: Duration = Duration::from_secs(90);
const BINDINGS: [&str; 3] = ["jsonrpc", "http+json", "grpc"];
/// An empty configuration file: no local `.env` of the machine leaks into a run.
const EMPTY_CONFIG: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/a2a-cli-empty.env");
/// A service parameter the spy records.
const PROBE: &str = "x-cli-probe";

/// Records the headers of every request that activates it (`name=value`).
#[a2a_extension(uri = "https://example.com/ext/header-spy/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct HeaderSpy {
    #[serde(skip)]
    seen: Arc<Mutex<Vec<String>>>,
}

impl ExtensionHooks for HeaderSpy {
    type Activation = ();
    fn activate(&self, _: &[String], ctx: &RequestContext) -> Activate<()> {
        for name in ["last-event-id", PROBE, "a2a-version", "authorization"] {
            if let Some(value) = ctx.headers.get(name) {
                self.seen.lock().unwrap().push(format!("{name}={value}"));
            }
        }
        Activate::Activated(())
    }
}

/// Must be activated (for declared required extensions).
#[a2a_extension(
    uri = "https://example.com/ext/signed/v1",
    required = true,
    allow_required_data_only = true
)]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Signed {}

/// The demo agent, plus test behaviours picked by the message's first word.
#[derive(Clone, Debug, Default)]
struct CliAgent {
    /// Opened by the test to let `gated KEY` finish, one gate per key.
    gates: Gates,
}

type Gates = Arc<Mutex<std::collections::HashMap<String, Arc<Notify>>>>;

fn gate(gates: &Gates, key: &str) -> Arc<Notify> {
    gates
        .lock()
        .unwrap()
        .entry(key.to_owned())
        .or_default()
        .clone()
}

impl AgentExecutor for CliAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let text = ctx
            .message
            .parts
            .iter()
            .find_map(Part::as_text)
            .unwrap_or_default()
            .to_owned();
        let word = text.split_whitespace().next().unwrap_or_default();
        match word {
            "gated" => {
                events.progress("thinking").await?;
                events
                    .artifact_chunk("reply", [Part::text("first ")], false, false)
                    .await?;
                let key = text.split_whitespace().nth(1).unwrap_or_default();
                gate(&self.gates, key).notified().await;
                events
                    .artifact_chunk("reply", [Part::text("second")], true, true)
                    .await?;
                events.complete().await
            }
            "fail" => events.fail("it went wrong").await,
            "reject" => events.reject("not today").await,
            "login" => events.auth_required("sign in first").await,
            "direct" => {
                events
                    .reply(Message::new(Role::Agent, [Part::text("a direct reply")]))
                    .await
            }
            "files" => {
                events
                    .artifact(
                        Artifact::new([
                            Part::text("plain \x1b[31mtext\x1b[0m"),
                            Part::data(serde_json::json!({"answer": 42})),
                            Part::raw(b"%PDF-1.4 tiny".to_vec())
                                .with_filename("report.pdf")
                                .with_media_type("application/pdf"),
                        ])
                        .with_name("bundle"),
                    )
                    .await?;
                events.complete().await
            }
            "parts" => {
                // Echoes the received parts, as they came.
                events
                    .artifact(Artifact::new(ctx.message.parts.clone()).with_name("parts"))
                    .await?;
                events.complete().await
            }
            _ => DemoAgent.execute(ctx, events).await,
        }
    }
}

/// The agents a run talks to.
pub(crate) struct Env {
    /// The agent with every test behaviour, push, the spy and a required-extension-free card.
    url: String,
    gates: Gates,
    spy: Arc<Mutex<Vec<String>>>,
    /// An agent that requires `Authorization: Bearer tok-cli`.
    guarded: String,
    /// An agent that requires the API key `key-cli` in `X-API-Key`.
    keyed: String,
    /// An agent with a required extension and an extended card (bearer `tok-cli`).
    strict: String,
    /// An agent over TLS that requires a client certificate (files in `tmp/mtls`).
    mtls: String,
    /// Scratch space for card files, config files and downloads.
    tmp: std::path::PathBuf,
    _servers: Vec<RunningServer>,
}

impl Env {
    /// Lets the `gated KEY` task finish.
    fn open(&self, key: &str) {
        gate(&self.gates, key).notify_one();
    }

    /// A card file: the main agent's card changed by `edit`.
    async fn card_file(&self, name: &str, edit: impl FnOnce(&mut Value)) -> String {
        let mut card: Value = reqwest_card(&self.url).await;
        edit(&mut card);
        let path = self.tmp.join(name);
        std::fs::write(&path, serde_json::to_vec(&card).unwrap()).unwrap();
        path.display().to_string()
    }
}

async fn reqwest_card(url: &str) -> Value {
    let out = a2a(url, &["-o", "json", "card", "get"]).await.ok();
    out.json().remove(0)
}

async fn server(
    executor: CliAgent,
    configure: impl FnOnce(
        a2a_runtime::server::A2aServerBuilder,
    ) -> a2a_runtime::server::A2aServerBuilder,
) -> RunningServer {
    let builder = A2aServer::builder()
        .card(demo_card())
        .executor(executor)
        .linked_extensions(false)
        .grpc_addr("127.0.0.1:0")
        .workers(1);
    configure(builder)
        .build()
        .expect("build the server")
        .start("127.0.0.1:0")
        .await
        .expect("start the server")
}

async fn env() -> Env {
    std::fs::write(EMPTY_CONFIG, b"").unwrap();
    let gates = Gates::default();
    let spy = HeaderSpy::default();
    let seen = spy.seen.clone();
    let main = server(
        CliAgent {
            gates: gates.clone(),
        },
        |b| {
            b.extension(spy)
                .push(PushConfig::new().allow_private_networks(true))
        },
    )
    .await;
    let guarded = server(CliAgent::default(), |b| {
        b.authenticator(StaticTokens::bearer().token("cli", "tok-cli"))
    })
    .await;
    let keyed = server(CliAgent::default(), |b| {
        b.authenticator(StaticTokens::api_key("X-API-Key").token("cli", "key-cli"))
    })
    .await;
    let mut extended = demo_card();
    extended.name = "the extended card".into();
    let strict = server(CliAgent::default(), |b| {
        b.extension(Signed {})
            .authenticator(StaticTokens::bearer().token("cli", "tok-cli"))
            .extended_card(extended)
    })
    .await;
    let tmp = {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("a2a-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };
    let mtls = cases_more::mtls_agent(&tmp.join("mtls")).await;
    Env {
        url: main.url(),
        mtls: mtls.url(),
        gates,
        spy: seen,
        guarded: guarded.url(),
        keyed: keyed.url(),
        strict: strict.url(),
        tmp,
        _servers: vec![main, guarded, keyed, strict, mtls],
    }
}

/// The error codes seen in error envelopes during the run (for the report).
static CODES: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

#[derive(Debug)]
pub(crate) struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn new(code: i32, stdout: String, stderr: String) -> Self {
        for line in stdout.lines().chain(stderr.lines()) {
            let code = serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
                .or_else(|| line.strip_prefix("Error: ").map(str::to_owned));
            if let Some(code) = code {
                CODES.lock().unwrap().insert(code);
            }
        }
        Self {
            code,
            stdout,
            stderr,
        }
    }

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

    /// The one JSON document of stdout.
    fn doc(&self) -> Value {
        let mut docs = self.json();
        assert_eq!(docs.len(), 1, "exactly one document: {self:?}");
        docs.remove(0)
    }

    /// The error envelope's code (stdout under -o json).
    fn error_code(&self) -> String {
        self.doc()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The value of the first `Label: value` line with this label.
    fn field(&self, label: &str) -> Option<String> {
        let prefix = format!("{label}: ");
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&prefix).map(str::to_owned))
    }

    fn ok(self) -> Self {
        assert_eq!(self.code, 0, "{self:?}");
        self
    }
}

fn command(url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_a2a"));
    c.arg("--agent-card")
        .arg(url)
        .args(args)
        .env("RUST_LOG", "warn")
        // No configuration of the machine running the tests leaks in.
        .env("XDG_CONFIG_HOME", "/nonexistent-a2a-cli-config")
        .env("A2ACLI_CONFIG", EMPTY_CONFIG)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, _) in std::env::vars() {
        if k.starts_with("A2ACLI_") && k != "A2ACLI_CONFIG" {
            c.env_remove(k);
        }
    }
    c
}

/// Runs `a2a --agent-card URL ARGS…` to its end.
async fn a2a(url: &str, args: &[&str]) -> Out {
    finish(command(url, args).spawn().expect("run a2a")).await
}

async fn finish(child: Child) -> Out {
    let out = tokio::time::timeout(SAFETY, child.wait_with_output())
        .await
        .expect("a2a ends")
        .expect("a2a ran");
    Out::new(
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `a2a -a URL --transport BINDING -o json ARGS…`, which must succeed.
async fn jrun(url: &str, binding: &str, args: &[&str]) -> Out {
    let all: Vec<&str> = ["--transport", binding, "-o", "json"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    a2a(url, &all).await.ok()
}

/// Starts a task that works until canceled; returns its id.
async fn waiting_task(url: &str, binding: &str) -> String {
    let out = jrun(url, binding, &["send", "--async", "wait"]).await;
    let task = &out.doc()["task"];
    assert!(
        matches!(
            task["status"]["state"].as_str(),
            Some("TASK_STATE_WORKING" | "TASK_STATE_SUBMITTED")
        ),
        "{out:?}"
    );
    task["id"].as_str().unwrap().to_owned()
}

/// Reads a running child's stderr until a line contains `needle`; returns that line.
async fn stderr_line(child: &mut Child, needle: &str) -> String {
    let stderr = child.stderr.as_mut().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    tokio::time::timeout(SAFETY, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains(needle) {
                return line;
            }
        }
        panic!("stderr ended without {needle:?}");
    })
    .await
    .expect("the line comes")
}

type CaseFn = fn(Arc<Env>) -> BoxFuture<'static, ()>;

/// A case: its name, the requirements it exercises, its body (which panics on failure).
pub(crate) struct Case {
    name: &'static str,
    ids: &'static [&'static str],
    run: CaseFn,
}

macro_rules! case {
    ($f:path, [$($id:literal),* $(,)?]) => {
        $crate::Case {
            name: stringify!($f),
            ids: &[$($id),*],
            run: |env| Box::pin($f(env)),
        }
    };
}
pub(crate) use case;

fn short(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name).trim()
}

fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or_default() as i64;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for c in cases() {
            println!("{}: test", short(c.name));
        }
        return;
    }
    let mut filters = Vec::new();
    let mut skips = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--skip" => skips.extend(it.next().cloned()),
            a if a.starts_with('-') => {}
            a => filters.push(a.to_owned()),
        }
    }
    let started = std::time::Instant::now();
    let all = cases();
    let chosen: Vec<&Case> = all
        .iter()
        .filter(|c| {
            filters.is_empty() || filters.iter().any(|f| short(c.name).contains(f.as_str()))
        })
        .filter(|c| !skips.iter().any(|s| short(c.name).contains(s.as_str())))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let results: Vec<(&'static str, &'static [&'static str], bool)> = runtime.block_on(async {
        let env = Arc::new(env().await);
        futures::stream::iter(chosen.iter().map(|c| {
            let env = env.clone();
            async move {
                let outcome = tokio::time::timeout(
                    SAFETY * 2,
                    AssertUnwindSafe(tokio::spawn((c.run)(env))).catch_unwind(),
                )
                .await;
                let ok = matches!(outcome, Ok(Ok(Ok(()))));
                println!(
                    "case {} ... {}",
                    short(c.name),
                    if ok { "ok" } else { "FAILED" }
                );
                (short(c.name), c.ids, ok)
            }
        }))
        .buffer_unordered(4)
        .collect()
        .await
    });
    let failed: Vec<_> = results.iter().filter(|r| !r.2).map(|r| r.0).collect();
    // The summary line libtest prints, which CI counts.
    println!(
        "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; {} filtered out; finished in {:.2}s",
        if failed.is_empty() { "ok" } else { "FAILED" },
        results.len() - failed.len(),
        failed.len(),
        all.len() - results.len(),
        started.elapsed().as_secs_f64()
    );
    let mut code = i32::from(!failed.is_empty());
    if filters.is_empty() && skips.is_empty() {
        let outcomes = report::outcomes(&results);
        let passed = |name: &str| results.iter().any(|r| r.0 == name && r.2);
        let codes = CODES.lock().unwrap().clone();
        let (yaml, md) = report::render(&outcomes, &codes, &today(), passed);
        match report::write(&yaml, &md) {
            Ok(regressed) if regressed.is_empty() => {}
            Ok(regressed) => {
                eprintln!(
                    "requirements that passed in compliance-report.yaml and no longer do: {regressed:?}"
                );
                code = 1;
            }
            Err(e) => {
                eprintln!("compliance report: {e} (run with A2A_CLI_BLESS=1 to write it)");
                code = 1;
            }
        }
    }
    if !failed.is_empty() {
        eprintln!("failed cases: {failed:?}");
    }
    std::process::exit(code);
}

fn cases() -> Vec<Case> {
    let mut all = cases_core::cases();
    all.extend(cases_tasks::cases());
    all.extend(cases_more::cases());
    all
}
