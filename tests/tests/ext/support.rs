//! What the extension tests share: the server they start (authenticating with [`TOKEN`]),
//! three recording extensions whose hooks write into one shared log, and a test agent. Nothing
//! here sleeps: every wait is on the server's answer, bounded by a timeout that only turns a
//! hang into a failure.

use std::sync::{Arc, Mutex};

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::{Activate, ExtensionHooks, Reply, RequestContext};
use a2a_runtime::protocol::A2aRequest;
use a2a_runtime::server::{A2aServer, A2aServerBuilder};
use a2a_runtime::test::{EventStream, TestServer, agent_card};
use a2a_runtime::types::{Artifact, Message, Part, SendMessageResponse, StreamResponse};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Builds `builder` and starts it; every request of the returned server carries
/// `Authorization: Bearer` [`TOKEN`] (servers that authenticate accept it with
/// [`authenticated`]; the others ignore it).
pub(crate) async fn start(builder: A2aServerBuilder) -> TestServer {
    let mut headers = HeaderMap::new();
    let bearer = HeaderValue::from_str(&format!("Bearer {TOKEN}")).unwrap();
    headers.insert(AUTHORIZATION, bearer);
    let http = reqwest::Client::builder()
        .no_proxy()
        .default_headers(headers)
        .build()
        .unwrap();
    TestServer::start(builder).await.with_http(http)
}

/// Every remaining event of `stream`, as its JSON (none may be an error event).
pub(crate) async fn events(stream: EventStream) -> Vec<Value> {
    let events = stream.collect().await;
    events.into_iter().map(data).collect()
}

/// The next event of `stream`, as its JSON (it may not be an error event).
pub(crate) async fn next_event(stream: &mut EventStream) -> Option<Value> {
    stream.next().await.map(data)
}

fn data(event: a2a_runtime::test::Event) -> Value {
    assert_ne!(event.kind, "error", "error event: {}", event.data);
    event.data
}

/// The bearer token every request of [`start`]'s server carries.
pub(crate) const TOKEN: &str = "ext-tests-token";

/// Authenticates callers with [`TOKEN`].
pub(crate) fn authenticated(builder: A2aServerBuilder) -> A2aServerBuilder {
    builder.authenticator(a2a_runtime::auth::StaticTokens::bearer().token("ext-tests", TOKEN))
}

/// A user message as JSON (a fresh message id).
pub(crate) fn user_message(text: &str) -> Value {
    json!({
        "messageId": format!("m-{}", uuid()),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    })
}

fn uuid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// SendMessage params carrying `text`.
pub(crate) fn send_params(text: &str) -> Value {
    json!({"message": user_message(text)})
}

/// The kind of a streamed event (`task`, `statusUpdate`, `artifactUpdate`, `message`).
pub(crate) fn kind(event: &Value) -> &'static str {
    for k in ["task", "statusUpdate", "artifactUpdate", "message"] {
        if event.get(k).is_some() {
            return k;
        }
    }
    panic!("unknown event {event}")
}

// ---------------------------------------------------------------------------------------------
// The recording extensions.

/// A log shared by the extensions' hooks and the test.
#[derive(Clone, Debug, Default)]
pub(crate) struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    /// Appends an entry.
    pub(crate) fn push(&self, entry: String) {
        self.0.lock().unwrap().push(entry);
    }

    /// Every entry so far, leaving the log empty.
    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// What a recording extension's `activate` answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `Activate::Activated`.
    #[default]
    Activate,
    /// `Activate::Skip`.
    Skip,
    /// `Activate::Refuse` with InvalidParams naming the extension.
    Refuse,
}

/// The name of a reply as recorded in the log.
pub(crate) fn reply_name(reply: &Reply<'_>) -> String {
    match reply {
        Reply::SendMessage(SendMessageResponse::Task(_)) => "send:task".into(),
        Reply::SendMessage(SendMessageResponse::Message(_)) => "send:message".into(),
        Reply::Task(_) => "task".into(),
        Reply::ListTasks(_) => "list".into(),
        Reply::PushConfig(_) => "push-config".into(),
        Reply::PushConfigs(_) => "push-configs".into(),
        Reply::Empty(_) => "empty".into(),
        Reply::AgentCard(_) => "card".into(),
        Reply::Event(e) => format!("event:{}", event_name(e)),
    }
}

/// The name of a stream event as recorded in the log.
pub(crate) fn event_name(event: &StreamResponse) -> &'static str {
    match event {
        StreamResponse::Task(_) => "task",
        StreamResponse::Message(_) => "message",
        StreamResponse::StatusUpdate(_) => "status",
        StreamResponse::ArtifactUpdate(_) => "artifact",
    }
}

macro_rules! recorder {
    ($name:ident, $uri:literal, $label:literal) => {
        /// A recording extension: every hook call is appended to its log as
        /// `<label>.<hook>[:<what>]`.
        #[a2a_extension(uri = $uri)]
        #[derive(Clone, Debug, Serialize, Deserialize)]
        pub(crate) struct $name {
            #[serde(skip)]
            pub(crate) log: Log,
            #[serde(skip)]
            pub(crate) mode: Mode,
        }

        impl $name {
            /// A recorder writing into `log`.
            pub(crate) fn new(log: &Log, mode: Mode) -> Self {
                Self {
                    log: log.clone(),
                    mode,
                }
            }
        }

        impl ExtensionHooks for $name {
            /// The label and every operation seen for this request.
            type Activation = Vec<String>;

            fn activate(&self, requested: &[String], _: &RequestContext) -> Activate<Vec<String>> {
                self.log.push(format!("{}.activate", $label));
                assert!(requested.iter().any(|u| u == $uri));
                match self.mode {
                    Mode::Activate => Activate::Activated(vec![$label.to_owned()]),
                    Mode::Skip => Activate::Skip,
                    Mode::Refuse => Activate::Refuse(A2aError::invalid_field(
                        "A2A-Extensions",
                        format!("{} refuses this request", $label),
                    )),
                }
            }

            fn handle_request(
                &self,
                request: &mut A2aRequest,
                act: &mut Vec<String>,
                _: &RequestContext,
            ) -> Result<(), A2aError> {
                self.log
                    .push(format!("{}.request:{}", $label, request.operation()));
                act.push(request.operation().to_string());
                Ok(())
            }

            fn handle_response(
                &self,
                reply: &mut Reply<'_>,
                act: &mut Vec<String>,
                _: &a2a_runtime::protocol::A2aRequest,
                _: &a2a_runtime::extension::RequestContext,
            ) -> Result<(), A2aError> {
                assert_eq!(act.first().map(String::as_str), Some($label));
                self.log
                    .push(format!("{}.response:{}", $label, reply_name(reply)));
                Ok(())
            }

            fn handle_event(
                &self,
                event: &mut StreamResponse,
                _: &mut Vec<String>,
            ) -> Result<(), A2aError> {
                self.log
                    .push(format!("{}.event:{}", $label, event_name(event)));
                Ok(())
            }
        }
    };
}

recorder!(RecA, "https://test.example/ext/a/v1", "A");
recorder!(RecB, "https://test.example/ext/b/v1", "B");
recorder!(RecC, "https://test.example/ext/c/v1", "C");

/// The URI of [`RecA`].
pub(crate) const A: &str = "https://test.example/ext/a/v1";
/// The URI of [`RecB`].
pub(crate) const B: &str = "https://test.example/ext/b/v1";
/// The URI of [`RecC`].
pub(crate) const C: &str = "https://test.example/ext/c/v1";

/// A data-only extension that clients must activate.
#[a2a_extension(
    uri = "https://test.example/ext/required/v1",
    required = true,
    allow_required_data_only = true
)]
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Contract {
    /// The terms' version.
    pub(crate) terms: String,
}

/// The URI of [`Contract`].
pub(crate) const REQUIRED: &str = "https://test.example/ext/required/v1";

// ---------------------------------------------------------------------------------------------
// The agent.

/// By message text: `wait` works until canceled; `reply` answers with a direct message;
/// anything else: a progress status, an artifact, and COMPLETED with a message. Its artifact's
/// metadata lists what the agent saw of the negotiation (`active`, `a`: `RecA`'s activation).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TestAgent;

impl AgentExecutor for TestAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        match ctx.text().as_str() {
            "wait" => {
                events.progress("waiting until canceled").await?;
                ctx.cancelled().await;
                Ok(())
            }
            "reply" => events.reply(Message::agent_text("direct")).await,
            _ => {
                events.progress("working").await?;
                let mut artifact = Artifact::new([Part::text("result")]).with_name("out");
                let active: Vec<&str> = ctx.request.extensions.activated_uris().collect();
                artifact.metadata.insert("active".into(), json!(active));
                artifact
                    .metadata
                    .insert("a".into(), json!(ctx.extension::<RecA>()));
                artifact
                    .metadata
                    .insert("aActive".into(), json!(ctx.is_active::<RecA>()));
                events.artifact(artifact).await?;
                events.complete_with("done").await
            }
        }
    }
}

/// A builder with [`TestAgent`], no linked extensions, and `agent_card("ext")`.
pub(crate) fn builder() -> A2aServerBuilder {
    A2aServer::builder()
        .card(agent_card("ext"))
        .executor(TestAgent)
        .linked_extensions(false)
}
