//! Recovery: a task whose executor is gone never stays live, and a hung agent's task ends.
//!
//! One behaviour per module, in one test binary: `policy` (an execution that returned and
//! left its task WORKING is taken over by each policy: FAILED, run again, left), `hung` (the
//! inactivity bound ends a silent agent's task, its stream and its blocking request), `crash`
//! (a server in a child process killed with SIGKILL with streams and blocking sends open, on
//! SQLite and PostgreSQL, restarted on the same store: every task ends, or is resumed, within
//! the bound, every resubscriber gets the final event, nothing acknowledged is lost).
//!
//! In-process passes run with an explicit `now` (the injected clock): no test waits for time
//! to pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use a2a_runtime::A2aError;
use a2a_runtime::core::{
    AgentContext, AgentExecutor, DefaultRequestHandler, EventSink, Limits, Recovery,
};
use a2a_runtime::server::A2aServer;
use a2a_runtime::store::Stores;
use a2a_runtime::test::{TestServer, agent_card};
use a2a_runtime::types::Part;
use tokio::sync::mpsc;

mod crash;
mod hung;
mod policy;

/// What the test agent reports: the executions it started and the cancellations it saw.
#[derive(Debug)]
enum Seen {
    /// An execution started on this task (true: a re-run of recovery).
    Started(String, bool),
    /// An execution saw its task canceled.
    Cancelled(String),
}

/// The test agent, by the text of the message:
/// - `hang`: WORKING, then waits until canceled (a hung agent);
/// - `leave`: WORKING, then returns (its execution ends, the task stays WORKING);
/// - `work N`: WORKING, then N chunks 10 ms apart, then COMPLETED;
/// - run again by recovery: a chunk `resumed`, then COMPLETED, unless the text is
///   `leave always` (then it leaves the task again).
struct Agent {
    seen: mpsc::UnboundedSender<Seen>,
}

impl AgentExecutor for Agent {
    async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
        let id = ctx.task_id().to_string();
        let text = ctx.text();
        if ctx.recovered && text != "leave always" {
            let _ = self.seen.send(Seen::Started(id, true));
            events
                .artifact_chunk("reply", [Part::text("resumed")], true, true)
                .await?;
            return events.complete().await;
        }
        events.progress("on it").await?;
        let _ = self.seen.send(Seen::Started(id.clone(), ctx.recovered));
        if text == "hang" {
            ctx.cancelled().await;
            let _ = self.seen.send(Seen::Cancelled(id));
            return Ok(());
        }
        if text.starts_with("leave") {
            return Ok(());
        }
        let n: usize = text
            .strip_prefix("work ")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        for i in 0..n {
            if ctx.is_cancelled() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            events
                .artifact_chunk("reply", [Part::text(format!("c{i} "))], i > 0, false)
                .await?;
        }
        events.complete().await
    }
}

/// A server with the test agent on `stores` and `recovery`; the handler (to run passes) and
/// what the agent reports.
async fn server(
    stores: Stores,
    recovery: Recovery,
) -> (
    TestServer,
    Arc<DefaultRequestHandler>,
    mpsc::UnboundedReceiver<Seen>,
) {
    let (seen, rx) = mpsc::unbounded_channel();
    let mut card = agent_card("recovery");
    card.capabilities.streaming = Some(true);
    let handler = DefaultRequestHandler::new(
        Agent { seen },
        stores.tasks,
        stores.push_configs,
        Arc::new(card),
        Limits::default(),
    )
    .with_recovery(recovery);
    let handler = Arc::new(handler);
    let server = TestServer::start(
        A2aServer::builder()
            .card(agent_card("recovery"))
            .handler(handler.clone()),
    )
    .await;
    (server, handler, rx)
}

/// The next execution the agent started: its task id, and whether recovery ran it.
async fn started(seen: &mut mpsc::UnboundedReceiver<Seen>) -> (String, bool) {
    match a2a_runtime::test::within("the agent to start", seen.recv()).await {
        Some(Seen::Started(id, recovered)) => (id, recovered),
        other => panic!("expected a start, got {other:?}"),
    }
}

/// A fresh SQLite file's directory and URL.
fn sqlite_file(name: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!(
        "a2a-recovery-{name}-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_micros()
    ));
    let url = format!("sqlite://{}", dir.join("tasks.db").display());
    (dir, url)
}

fn later(by: Duration) -> SystemTime {
    SystemTime::now() + by
}

/// The text of a status update event's message.
fn status_text(ev: &a2a_runtime::test::Event) -> String {
    ev.data["statusUpdate"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
