//! The example agents, shared by the example binaries and the tests that start them.
//!
//! - [`EchoAgent`]: answers with an artifact `echo: <text>` and completes.
//! - [`StreamingAgent`]: WORKING, then the reply as artifact chunks, then COMPLETED.
//! - [`MultiTurnAgent`]: asks for the user's name (INPUT_REQUIRED), then greets and completes.
//! - [`DemoAgent`]: what the README's run command serves — echo, plus `stream`, `wait` (works
//!   until canceled), and `ask` (multi-turn) by the text of the message.
//! - [`answer_help_or_version`]: what every example binary does first with `--help` and
//!   `--version`.
//! - [`agents`]: two of them in one server (`demo-agent --two-agents`).

pub mod agents;

use std::time::Duration;

use a2a_runtime::A2aError;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::types::{AgentCard, AgentSkill, Artifact, Part, TaskState};

/// Answers every message with an artifact `echo: <text>`.
#[derive(Clone, Copy, Debug, Default)]
pub struct EchoAgent;

impl AgentExecutor for EchoAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events
            .artifact(
                Artifact::new([Part::text(format!("echo: {}", ctx.text()))]).with_name("echo"),
            )
            .await?;
        events.complete().await
    }
}

/// Streams its reply: WORKING, the words of the message as chunks of one artifact, COMPLETED.
#[derive(Clone, Copy, Debug, Default)]
pub struct StreamingAgent {
    /// Pause between chunks.
    pub delay: Duration,
}

impl AgentExecutor for StreamingAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.progress("streaming the reply").await?;
        let text = ctx.text();
        let words: Vec<&str> = text.split_whitespace().collect();
        let words = if words.is_empty() {
            vec!["(empty)"]
        } else {
            words
        };
        for (i, word) in words.iter().enumerate() {
            if ctx.is_cancelled() {
                return Ok(());
            }
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            let last = i + 1 == words.len();
            events
                .artifact_chunk("reply", [Part::text(format!("{word} "))], i > 0, last)
                .await?;
        }
        events.complete().await
    }
}

/// Asks for the user's name, then greets them.
#[derive(Clone, Copy, Debug, Default)]
pub struct MultiTurnAgent;

impl AgentExecutor for MultiTurnAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        match &ctx.task {
            Some(task) if task.status.state == TaskState::InputRequired => {
                let name = ctx.text();
                events
                    .artifact(
                        Artifact::new([Part::text(format!("Hello, {name}!"))])
                            .with_name("greeting"),
                    )
                    .await?;
                events.complete().await
            }
            _ => events.input_required("What is your name?").await,
        }
    }
}

/// The agent the README's run command serves.
///
/// By message text: `stream …` streams the words back; `wait` works until canceled; `ask` asks a
/// follow-up question (answer on the same task); anything else is echoed.
#[derive(Clone, Copy, Debug, Default)]
pub struct DemoAgent;

impl AgentExecutor for DemoAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let text = ctx.text();
        if ctx
            .task
            .as_ref()
            .is_some_and(|t| t.status.state == TaskState::InputRequired)
        {
            return MultiTurnAgent.execute(ctx, events).await;
        }
        match text.split_whitespace().next() {
            Some("stream") => {
                StreamingAgent {
                    delay: Duration::from_millis(20),
                }
                .execute(ctx, events)
                .await
            }
            Some("wait") => {
                events.progress("waiting until canceled").await?;
                ctx.cancelled().await;
                Ok(())
            }
            Some("ask") => MultiTurnAgent.execute(ctx, events).await,
            _ => EchoAgent.execute(ctx, events).await,
        }
    }
}

/// The fair-share limits the README's agent runs with: [`Quotas::default`] — each caller
/// (each address, without authentication) at most 500 live tasks, 100 open streams and 50
/// requests a second (bursts of 100); each tenant 5,000 live tasks (half of the in-memory
/// store's 10,000 slots), 1,000 streams, 500 requests a second. One caller flooding it is
/// answered 429 and leaves everyone else served.
///
/// [`Quotas::default`]: a2a_runtime::service::Quotas::default
pub fn demo_quotas() -> a2a_runtime::service::Quotas {
    a2a_runtime::service::Quotas::default()
}

/// The card of the demo agent.
pub fn demo_card() -> AgentCard {
    AgentCard {
        name: "a2a-runtime demo agent".into(),
        description: "Echoes messages; 'stream …' streams them back word by word; 'wait' works until canceled; 'ask' asks for your name.".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        skills: vec![AgentSkill {
            id: "echo".into(),
            name: "Echo".into(),
            description: "Repeats the message back as an artifact".into(),
            tags: vec!["echo".into(), "demo".into()],
            examples: vec!["hello".into(), "stream one two three".into(), "ask".into()],
            ..AgentSkill::default()
        }],
        capabilities: a2a_runtime::types::AgentCapabilities {
            extensions: vec![a2a_runtime::types::AgentExtension {
                uri: a2a_runtime::core::RESUME_EXTENSION.into(),
                description: "SSE ids are per-task sequence numbers; SubscribeToTask with Last-Event-ID replays what followed".into(),
                ..Default::default()
            }],
            ..Default::default()
        },
        ..AgentCard::default()
    }
}

/// A profile extension: clients state the reply language in message metadata; the agent
/// validates it against the languages it publishes in its card and tags its results with it.
///
/// Validates incoming message metadata and adds data to responses.
#[a2a_runtime::a2a_extension(uri = "https://example.com/ext/locale/v1", metadata = String)]
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Locale {
    /// The languages the agent answers in (BCP 47 tags).
    pub supported: Vec<String>,
}

impl Default for Locale {
    fn default() -> Self {
        Self {
            supported: vec!["en".into(), "fr".into(), "nb".into()],
        }
    }
}

impl a2a_runtime::extension::ExtensionHooks for Locale {
    /// The locale of this request, once read from the message.
    type Activation = Option<String>;

    fn handle_request(
        &self,
        request: &mut a2a_runtime::protocol::A2aRequest,
        locale: &mut Option<String>,
        _ctx: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), A2aError> {
        use a2a_runtime::extension::MetadataExt as _;
        let Some(message) = request.message() else {
            return Ok(());
        };
        let key = format!(
            "message.metadata[{}]",
            <Self as a2a_runtime::extension::Extension>::METADATA_KEY
        );
        match message.metadata_of::<Self>() {
            Err(e) => Err(A2aError::invalid_field(key, e.to_string())),
            Ok(None) => Ok(()),
            Ok(Some(tag)) if self.supported.contains(&tag) => {
                *locale = Some(tag);
                Ok(())
            }
            Ok(Some(tag)) => Err(A2aError::invalid_field(
                key,
                format!(
                    "locale {tag:?} is not supported; use one of {}",
                    self.supported.join(", ")
                ),
            )),
        }
    }

    fn handle_response(
        &self,
        reply: &mut a2a_runtime::extension::Reply<'_>,
        locale: &mut Option<String>,
        _: &a2a_runtime::protocol::A2aRequest,
        _: &a2a_runtime::extension::RequestContext,
    ) -> Result<(), A2aError> {
        use a2a_runtime::extension::{MetadataExt as _, Reply};
        use a2a_runtime::types::{SendMessageResponse, StreamResponse};
        let Some(tag) = locale.as_ref() else {
            return Ok(());
        };
        match reply {
            Reply::SendMessage(SendMessageResponse::Task(t))
            | Reply::Event(StreamResponse::Task(t)) => {
                t.set_metadata_of::<Self>(tag);
            }
            Reply::Task(t) => t.set_metadata_of::<Self>(tag),
            Reply::SendMessage(SendMessageResponse::Message(m))
            | Reply::Event(StreamResponse::Message(m)) => {
                m.set_metadata_of::<Self>(tag);
            }
            Reply::Event(StreamResponse::StatusUpdate(e)) => e.set_metadata_of::<Self>(tag),
            _ => {}
        }
        Ok(())
    }
}

/// Answers `--help` (`-h`) with `usage` and `--version` (`-V`) with the binary's name and
/// version, then exits with status 0; otherwise returns. Every example binary calls it first,
/// before it opens a store or a port.
pub fn answer_help_or_version(name: &str, usage: &str) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", usage.trim_end());
        std::process::exit(0);
    }
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!("{name} {}", env!("CARGO_PKG_VERSION"));
        std::process::exit(0);
    }
}
