//! The scripted test agent: behaviour chosen by the message text, progress gated by a semaphore
//! the test opens, and what it did reported over channels (so tests never sleep).

use std::sync::Arc;

use a2a_runtime::A2aError;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::server::A2aServer;
use a2a_runtime::test::{TestServer, agent_card, within};
use a2a_runtime::types::{Artifact, Message, Part, TaskState};
use tokio::sync::{Semaphore, mpsc};

/// What the scripted agent reports to the test.
#[derive(Clone, Debug)]
struct Reports {
    gate: Arc<Semaphore>,
    started: mpsc::UnboundedSender<String>,
    cancelled: mpsc::UnboundedSender<String>,
    finished: mpsc::UnboundedSender<String>,
}

/// The test's side of the scripted agent: opens its gate and hears what it did.
#[derive(Debug)]
pub struct Control {
    gate: Arc<Semaphore>,
    started: mpsc::UnboundedReceiver<String>,
    cancelled: mpsc::UnboundedReceiver<String>,
    finished: mpsc::UnboundedReceiver<String>,
}

impl Control {
    /// Lets gated agents take `n` more steps.
    pub fn release(&self, n: usize) {
        self.gate.add_permits(n);
    }

    /// The task id of the next gated execution that started (its task exists and is WORKING).
    pub async fn started(&mut self) -> String {
        within("agent start", self.started.recv())
            .await
            .expect("agent alive")
    }

    /// The task id of the next gated execution that observed cancellation.
    pub async fn cancelled(&mut self) -> String {
        within("agent cancel", self.cancelled.recv())
            .await
            .expect("agent alive")
    }

    /// The task id of the next gated execution that completed its task.
    pub async fn finished(&mut self) -> String {
        within("agent finish", self.finished.recv())
            .await
            .expect("agent alive")
    }
}

/// A test agent whose behaviour is chosen by the first word of the message:
///
/// - `reply …`: a direct Message reply `reply: …` (no task);
/// - `chatty`: WORKING "step 1", WORKING "step 2", COMPLETED "finished" (4 history messages);
/// - `fail`: FAILED;
/// - `auth`: AUTH_REQUIRED "sign in, please" (reported as started), then after one permit
///   COMPLETED "authorized" in the same execution (credentials arrive out of band);
/// - `ask`: INPUT_REQUIRED `"ctx=<contextId> name?"`; on the next turn `more` asks again,
///   `gate N` runs gated, anything else completes with an artifact and `"ctx=<contextId>"`;
/// - `gate N`: WORKING "started" (reported), then N artifact chunks and COMPLETED, each step
///   waiting for one permit from [`Control::release`]; a cancel while waiting is reported;
/// - anything else: an artifact `echo: <text>` and COMPLETED.
#[derive(Clone, Debug)]
pub struct ScriptAgent(Reports);

/// A scripted agent and its control.
pub fn script_agent() -> (ScriptAgent, Control) {
    let gate = Arc::new(Semaphore::new(0));
    let (started_tx, started) = mpsc::unbounded_channel();
    let (cancelled_tx, cancelled) = mpsc::unbounded_channel();
    let (finished_tx, finished) = mpsc::unbounded_channel();
    (
        ScriptAgent(Reports {
            gate: gate.clone(),
            started: started_tx,
            cancelled: cancelled_tx,
            finished: finished_tx,
        }),
        Control {
            gate,
            started,
            cancelled,
            finished,
        },
    )
}

/// The scripted agent on a fresh server (streaming on, push off), with its control.
pub async fn scripted() -> (TestServer, Control) {
    let (agent, control) = script_agent();
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("scripted"))
            .executor(agent),
    )
    .await;
    (server, control)
}

impl ScriptAgent {
    /// Waits for one permit; false when the task was canceled first (reported).
    async fn step(&self, ctx: &AgentContext) -> bool {
        tokio::select! {
            permit = self.0.gate.acquire() => {
                permit.expect("gate open").forget();
                true
            }
            () = ctx.cancelled() => {
                let _ = self.0.cancelled.send(ctx.task_id().to_string());
                false
            }
        }
    }

    async fn gated(
        &self,
        ctx: &AgentContext,
        events: &EventSink,
        n: usize,
    ) -> Result<(), A2aError> {
        events.progress("started").await?;
        let _ = self.0.started.send(ctx.task_id().to_string());
        for i in 0..n {
            if !self.step(ctx).await {
                return Ok(());
            }
            events
                .artifact_chunk("out", [Part::text(format!("chunk {i}"))], i > 0, i + 1 == n)
                .await?;
        }
        if !self.step(ctx).await {
            return Ok(());
        }
        events.complete_with("gate done").await?;
        let _ = self.0.finished.send(ctx.task_id().to_string());
        Ok(())
    }
}

impl AgentExecutor for ScriptAgent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let text = ctx.text();
        let mut words = text.split_whitespace();
        let first = words.next().unwrap_or_default();
        let n: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        let ctx_id = ctx.context_id().to_string();
        if ctx
            .task
            .as_ref()
            .is_some_and(|t| t.status.state == TaskState::InputRequired)
        {
            return match first {
                "more" => events.input_required(format!("ctx={ctx_id} more?")).await,
                "gate" => self.gated(&ctx, &events, n).await,
                _ => {
                    events
                        .artifact(Artifact::new([Part::text(format!("hello, {text}"))]))
                        .await?;
                    events.complete_with(format!("ctx={ctx_id}")).await
                }
            };
        }
        match first {
            "reply" => {
                events
                    .reply(Message::agent_text(format!("reply: {text}")))
                    .await
            }
            "chatty" => {
                events.progress("step 1").await?;
                events.progress("step 2").await?;
                events.complete_with("finished").await
            }
            "fail" => events.fail("failed on purpose").await,
            "auth" => {
                events.auth_required("sign in, please").await?;
                let _ = self.0.started.send(ctx.task_id().to_string());
                if self.step(&ctx).await {
                    events.complete_with("authorized").await?;
                    let _ = self.0.finished.send(ctx.task_id().to_string());
                }
                Ok(())
            }
            "ask" => events.input_required(format!("ctx={ctx_id} name?")).await,
            "gate" => self.gated(&ctx, &events, n).await,
            _ => {
                events
                    .artifact(
                        Artifact::new([Part::text(format!("echo: {text}"))]).with_name("echo"),
                    )
                    .await?;
                events.complete().await
            }
        }
    }
}
