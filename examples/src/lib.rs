//! The example agents, shared by the example binaries and the tests that start them.
//!
//! - [`EchoAgent`]: answers with an artifact `echo: <text>` and completes.
//! - [`StreamingAgent`]: WORKING, then the reply as artifact chunks, then COMPLETED.
//! - [`MultiTurnAgent`]: asks for the user's name (INPUT_REQUIRED), then greets and completes.
//! - [`DemoAgent`]: what the README's run command serves — echo, plus `stream`, `wait` (works
//!   until canceled), and `ask` (multi-turn) by the text of the message.

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
        ..AgentCard::default()
    }
}
