//! The extension kinds no other SDK supports: method extensions, state-machine extensions, and
//! dependencies between extensions — end to end over real HTTP, on both bindings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::client::{A2aClient, ClientOptions, SendOptions, SendResult};
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{
    Dependencies, ExtensionHooks, ExtensionMethod, MethodEntry, RegistryError, RequestContext,
    StateMachine, SubStateExt,
};
use a2a_runtime::protocol::A2aRequest;
use a2a_runtime::server::{A2aServer, BuildError, RunningServer};
use a2a_runtime::types::{
    AgentCard, Artifact, ListTasksRequest, Part, ProtocolBinding, StreamResponse, Task, TaskState,
    TaskStatus,
};
use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const TIMESTAMP_URI: &str = "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1";

fn card() -> AgentCard {
    AgentCard {
        name: "kinds".into(),
        description: "extension kinds".into(),
        version: "1.0.0".into(),
        ..AgentCard::default()
    }
}

fn text_of(task: &Task) -> String {
    task.artifacts
        .iter()
        .flat_map(|a| {
            a.parts
                .iter()
                .filter_map(|p| p.as_text().map(str::to_owned))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Method extension: `tasks/search` from the spec's task-history example.

/// Lets clients search their task history.
#[a2a_extension(uri = "https://example.com/ext/task-history/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct TaskHistory {}

struct SearchTasks;

#[derive(Debug, Serialize, Deserialize)]
struct SearchParams {
    query: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct SearchResult {
    task_ids: Vec<String>,
}

impl ExtensionMethod for SearchTasks {
    type Extension = TaskHistory;
    const METHOD: &'static str = "tasks/search";
    const REST_PATH: &'static str = "/extensions/task-history/v1/tasks:search";
    type Params = SearchParams;
    type Result = SearchResult;
}

impl ExtensionHooks for TaskHistory {
    type Activation = ();

    fn methods(&self) -> Vec<MethodEntry> {
        vec![MethodEntry::new::<SearchTasks, _, _>(
            |ctx, params: SearchParams| async move {
                let page = ctx
                    .list_tasks(ListTasksRequest {
                        page_size: Some(100),
                        ..ListTasksRequest::default()
                    })
                    .await?;
                let task_ids = page
                    .tasks
                    .into_iter()
                    .filter(|t| t.history.iter().any(|m| m.text().contains(&params.query)))
                    .map(|t| t.id.to_string())
                    .collect();
                Ok(SearchResult { task_ids })
            },
        )]
    }
}

struct Echo;

impl AgentExecutor for Echo {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events
            .artifact(Artifact::new([Part::text(format!("echo: {}", ctx.text()))]))
            .await?;
        events.complete().await
    }
}

async fn method_server() -> RunningServer {
    let server = A2aServer::builder()
        .card(card())
        .executor(Echo)
        .linked_extensions(false)
        .extension(TaskHistory::default())
        .build()
        .unwrap();
    server.start("127.0.0.1:0").await.unwrap()
}

async fn client(url: &str, binding: ProtocolBinding, with_history: bool) -> A2aClient {
    let options = ClientOptions {
        preferred_binding: Some(binding),
        ..ClientOptions::default()
    };
    let builder = A2aClient::builder().options(options);
    let builder = if with_history {
        builder.extension(TaskHistory::default())
    } else {
        builder
    };
    builder.connect(url).await.unwrap()
}

#[tokio::test]
async fn method_extension_is_served_on_both_bindings_when_activated_and_called_typed() {
    let running = method_server().await;
    for binding in [ProtocolBinding::JsonRpc, ProtocolBinding::HttpJson] {
        let c = client(&running.url(), binding.clone(), true).await;
        let SendResult::Task(hit) = c
            .send_message(
                format!("find the needle via {binding}"),
                SendOptions::default(),
            )
            .await
            .unwrap()
            .into_inner()
        else {
            panic!("expected a task")
        };
        c.send_message("nothing to see", SendOptions::default())
            .await
            .unwrap();
        let found = c
            .call::<SearchTasks>(SearchParams {
                query: format!("needle via {binding}"),
            })
            .await
            .unwrap();
        assert_eq!(
            found.get_ref().task_ids,
            vec![hit.id.to_string()],
            "{binding}"
        );
        assert!(
            found
                .activated_extensions()
                .iter()
                .any(|u| u == TaskHistory::URI_FOR_TESTS),
            "{binding}: echoed"
        );
    }
    running.stop().await;
}

impl TaskHistory {
    const URI_FOR_TESTS: &'static str = "https://example.com/ext/task-history/v1";
}

#[tokio::test]
async fn method_extension_is_method_not_found_with_a_hint_when_not_activated() {
    let running = method_server().await;
    let http = reqwest::Client::new();
    // JSON-RPC: -32601 with an ErrorInfo naming the extension to activate.
    let body =
        json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/search", "params": {"query": "x"}});
    let resp: Value = http
        .post(format!("{}/", running.url()))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resp["error"]["code"], -32601);
    assert_eq!(
        resp["error"]["data"][0]["metadata"]["extension"],
        "https://example.com/ext/task-history/v1"
    );
    // REST: 404 with the same ErrorInfo.
    let resp = http
        .post(format!(
            "{}/extensions/task-history/v1/tasks:search",
            running.url()
        ))
        .header("content-type", "application/a2a+json")
        .header("a2a-version", "1.0")
        .body(r#"{"query":"x"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(
        v["error"]["details"][0]["metadata"]["extension"],
        "https://example.com/ext/task-history/v1"
    );
    // The typed client without the extension configured still activates it for the call.
    let c = client(&running.url(), ProtocolBinding::JsonRpc, false).await;
    assert!(
        c.call::<SearchTasks>(SearchParams { query: "x".into() })
            .await
            .is_ok()
    );
    running.stop().await;
}

#[tokio::test]
async fn method_extension_sees_only_the_callers_tasks() {
    // Same scoping rules as the core methods: a task sent under tenant `acme` is invisible to a
    // search without that tenant, and visible with it.
    let running = method_server().await;
    let http = reqwest::Client::new();
    let send = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "tenant needle"}]}});
    let resp = http
        .post(format!("{}/acme/message:send", running.url()))
        .header("content-type", "application/a2a+json")
        .header("a2a-version", "1.0")
        .body(send.to_string())
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    let search = |path: String| {
        let http = http.clone();
        async move {
            let v: Value = http
                .post(path)
                .header("content-type", "application/a2a+json")
                .header("a2a-version", "1.0")
                .header("a2a-extensions", "https://example.com/ext/task-history/v1")
                .body(r#"{"query":"tenant needle"}"#)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            v["task_ids"].as_array().map(Vec::len).unwrap_or(usize::MAX)
        }
    };
    assert_eq!(
        search(format!(
            "{}/extensions/task-history/v1/tasks:search",
            running.url()
        ))
        .await,
        0
    );
    assert_eq!(
        search(format!(
            "{}/acme/extensions/task-history/v1/tasks:search",
            running.url()
        ))
        .await,
        1
    );
    running.stop().await;
}

/// An extension whose method shadows a core method.
#[a2a_extension(uri = "https://example.com/ext/shadow/v1")]
#[derive(Default, Serialize, Deserialize)]
struct Shadow {}

struct FakeSend;

impl ExtensionMethod for FakeSend {
    type Extension = Shadow;
    const METHOD: &'static str = "SendMessage";
    const REST_PATH: &'static str = "/extensions/shadow/v1/send";
    type Params = Value;
    type Result = Value;
}

impl ExtensionHooks for Shadow {
    type Activation = ();
    fn methods(&self) -> Vec<MethodEntry> {
        vec![MethodEntry::new::<FakeSend, _, _>(
            |_, v: Value| async move { Ok(v) },
        )]
    }
}

#[test]
fn a_method_that_shadows_a_core_method_is_a_startup_error() {
    let err = A2aServer::builder()
        .card(card())
        .executor(Echo)
        .linked_extensions(false)
        .extension(Shadow::default())
        .build();
    match err {
        Err(BuildError::Extensions(RegistryError::ShadowsCoreMethod { method, extension })) => {
            assert_eq!(method, "SendMessage");
            assert_eq!(extension, "https://example.com/ext/shadow/v1");
        }
        other => panic!("expected ShadowsCoreMethod, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// State-machine extension: sub-states of WORKING.

/// Image generation progress as sub-states of WORKING.
#[a2a_extension(uri = "https://example.com/ext/image-gen/v1", metadata = String)]
#[derive(Serialize, Deserialize)]
struct ImageGen {
    machine: StateMachine,
}

impl Default for ImageGen {
    fn default() -> Self {
        let machine = StateMachine::new()
            .sub_state("generating-image", TaskState::Working)
            .sub_state("upscaling", TaskState::Working)
            .transition("TASK_STATE_WORKING", "generating-image")
            .transition("generating-image", "upscaling")
            .transition("upscaling", "TASK_STATE_COMPLETED");
        Self { machine }
    }
}

impl ExtensionHooks for ImageGen {
    type Activation = ();
    fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
        _: &mut (),
    ) -> Result<(), A2aError> {
        self.machine.check::<Self>(from, to)
    }
}

struct Painter;

impl AgentExecutor for Painter {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.working().await?;
        match ctx.text().as_str() {
            "illegal" => {
                // WORKING -> upscaling skips generating-image: refused, task unchanged.
                let refused = events
                    .sub_state::<ImageGen>(TaskState::Working, "upscaling")
                    .await;
                let note = match refused {
                    Ok(_) => "accepted".to_owned(),
                    Err(e) => format!("refused: {e}"),
                };
                events.artifact(Artifact::new([Part::text(note)])).await?;
                events.complete().await
            }
            "pause" => {
                events
                    .sub_state::<ImageGen>(TaskState::Working, "generating-image")
                    .await?;
                Ok(())
            }
            _ => {
                events
                    .sub_state::<ImageGen>(TaskState::Working, "generating-image")
                    .await?;
                events
                    .sub_state::<ImageGen>(TaskState::Working, "upscaling")
                    .await?;
                events
                    .artifact(Artifact::new([Part::text("an image")]))
                    .await?;
                events.complete().await
            }
        }
    }
}

async fn painter_client(binding: ProtocolBinding) -> (RunningServer, A2aClient, A2aClient) {
    let server = A2aServer::builder()
        .card(card())
        .executor(Painter)
        .linked_extensions(false)
        .extension(ImageGen::default())
        .build()
        .unwrap();
    let running = server.start("127.0.0.1:0").await.unwrap();
    let options = ClientOptions {
        preferred_binding: Some(binding),
        ..ClientOptions::default()
    };
    let with = A2aClient::builder()
        .options(options.clone())
        .extension(ImageGen::default())
        .connect(running.url())
        .await
        .unwrap();
    let without = A2aClient::new(running.url(), options).await.unwrap();
    (running, with, without)
}

#[tokio::test]
async fn state_machine_legal_transitions_pass_and_sub_states_appear_in_stream_events() {
    for binding in [ProtocolBinding::JsonRpc, ProtocolBinding::HttpJson] {
        let (running, with, _) = painter_client(binding.clone()).await;
        let mut events = with
            .stream_message("paint", SendOptions::default())
            .await
            .unwrap()
            .into_inner();
        let mut seen = Vec::new();
        let mut last = TaskState::Unspecified;
        while let Some(ev) = events.next().await {
            if let StreamResponse::StatusUpdate(u) = ev.unwrap() {
                last = u.status.state;
                if let Some(s) = u.status.sub_state::<ImageGen>() {
                    seen.push(s);
                }
            }
        }
        assert_eq!(seen, ["generating-image", "upscaling"], "{binding}");
        assert_eq!(last, TaskState::Completed, "{binding}");
        running.stop().await;
    }
}

#[tokio::test]
async fn state_machine_refuses_an_illegal_transition_without_corrupting_the_task() {
    let (running, with, without) = painter_client(ProtocolBinding::JsonRpc).await;
    let SendResult::Task(task) = with
        .send_message("illegal", SendOptions::default())
        .await
        .unwrap()
        .into_inner()
    else {
        panic!("expected a task")
    };
    let note = text_of(&task);
    assert!(
        note.starts_with("refused:") && note.contains("WORKING -> upscaling"),
        "{note}"
    );
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.sub_state::<ImageGen>(), None);
    // Without the extension active, its rules do not apply.
    let SendResult::Task(task) = without
        .send_message("illegal", SendOptions::default())
        .await
        .unwrap()
        .into_inner()
    else {
        panic!("expected a task")
    };
    assert_eq!(text_of(&task), "accepted");
    running.stop().await;
}

#[tokio::test]
async fn state_machine_sub_state_survives_get_task() {
    let (running, with, _) = painter_client(ProtocolBinding::HttpJson).await;
    let SendResult::Task(task) = with
        .send_message("pause", SendOptions::default())
        .await
        .unwrap()
        .into_inner()
    else {
        panic!("expected a task")
    };
    let got = with
        .get_task(task.id.as_str(), None)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.status.state, TaskState::Working);
    assert_eq!(
        got.sub_state::<ImageGen>().as_deref(),
        Some("generating-image")
    );
    // The card documents the sub-states in the extension's params.
    let decl = with
        .card()
        .capabilities
        .extensions
        .into_iter()
        .find(|e| e.uri == "https://example.com/ext/image-gen/v1")
        .unwrap();
    let params: ImageGen = serde_json::from_value(Value::Object(decl.params.0)).unwrap();
    assert_eq!(params.machine, ImageGen::default().machine);
    running.stop().await;
}

// ---------------------------------------------------------------------------------------------
// Dependencies: Notary requires Signing and uses Timestamp when present.

/// Signs messages.
#[a2a_extension(uri = "https://example.com/ext/signing/v1")]
#[derive(Clone, Default, Serialize, Deserialize)]
struct Signing {}

/// Notarizes signed messages.
#[a2a_extension(uri = "https://example.com/ext/notary/v1")]
#[derive(Clone, Default, Serialize, Deserialize)]
struct Notary {}

impl ExtensionHooks for Notary {
    /// Whether the optional Timestamp dependency is active for this request.
    type Activation = bool;

    fn dependencies(&self) -> Dependencies {
        Dependencies::new()
            .requires::<Signing>()
            .optional_uri(TIMESTAMP_URI)
    }

    fn handle_request(
        &self,
        _: &mut A2aRequest,
        timestamped: &mut bool,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        *timestamped = ctx.is_active_uri(TIMESTAMP_URI);
        Ok(())
    }
}

struct Notarizer;

impl AgentExecutor for Notarizer {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let note = format!("notary={:?}", ctx.extension::<Notary>());
        events.artifact(Artifact::new([Part::text(note)])).await?;
        events.complete().await
    }
}

#[test]
fn a_missing_required_dependency_is_a_startup_error_naming_both() {
    let err = A2aServer::builder()
        .card(card())
        .executor(Notarizer)
        .linked_extensions(false)
        .extension(Notary::default())
        .build();
    match err {
        Err(e @ BuildError::Extensions(RegistryError::MissingDependency { .. })) => {
            let text = e.to_string();
            assert!(
                text.contains("https://example.com/ext/notary/v1")
                    && text.contains("https://example.com/ext/signing/v1"),
                "{text}"
            );
        }
        other => panic!("expected MissingDependency, got {other:?}"),
    }
}

async fn notary_server() -> (A2aServer, RunningServer) {
    let server = A2aServer::builder()
        .card(card())
        .executor(Notarizer)
        .linked_extensions(false)
        .extension(Signing::default())
        .extension(Notary::default())
        .extension(a2a_runtime::extension::TimestampExtension::default())
        .build()
        .unwrap();
    let running = server.clone().start("127.0.0.1:0").await.unwrap();
    (server, running)
}

async fn send_with(url: &str, extensions: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": a2a_tests::params::mid(), "role": "ROLE_USER", "parts": [{"text": "sign this"}]}}});
    reqwest::Client::new()
        .post(format!("{url}/"))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .header("a2a-extensions", extensions)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn dependencies_are_checked_per_request_and_optional_ones_are_visible() {
    let (server, running) = notary_server().await;
    let url = running.url();
    // Notary without Signing: refused, naming both.
    let refused = send_with(&url, "https://example.com/ext/notary/v1").await;
    assert_eq!(refused["error"]["code"], -32008);
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("notary") && message.contains("signing"),
        "{message}"
    );
    assert_eq!(
        refused["error"]["data"][0]["metadata"]["requiredBy"],
        "https://example.com/ext/notary/v1"
    );
    // With Signing: accepted; the optional Timestamp dependency is seen only when active.
    let ok = send_with(
        &url,
        "https://example.com/ext/notary/v1, https://example.com/ext/signing/v1",
    )
    .await;
    assert_eq!(
        ok["result"]["task"]["artifacts"][0]["parts"][0]["text"],
        "notary=Some(false)"
    );
    let ok = send_with(
        &url,
        &format!(
            "https://example.com/ext/notary/v1, https://example.com/ext/signing/v1, {TIMESTAMP_URI}"
        ),
    )
    .await;
    assert_eq!(
        ok["result"]["task"]["artifacts"][0]["parts"][0]["text"],
        "notary=Some(true)"
    );
    // Per-extension counters saw all of it.
    let metrics = server.extension_metrics();
    let notary = metrics
        .iter()
        .find(|m| m.uri == "https://example.com/ext/notary/v1")
        .unwrap();
    assert_eq!((notary.activations, notary.refusals), (2, 1));
    running.stop().await;
}

#[tokio::test]
async fn the_client_activates_required_dependencies_with_the_extension() {
    let (_server, running) = notary_server().await;
    let c = A2aClient::builder()
        .extension(Notary::default())
        .connect(running.url())
        .await
        .unwrap();
    let sent = c
        .send_message("sign", SendOptions::default())
        .await
        .unwrap();
    assert!(
        sent.activated_extensions()
            .iter()
            .any(|u| u == "https://example.com/ext/signing/v1"),
        "{:?}",
        sent.activated_extensions()
    );
    let SendResult::Task(task) = sent.into_inner() else {
        panic!("expected a task")
    };
    assert_eq!(text_of(&task), "notary=Some(false)");
    running.stop().await;
}
