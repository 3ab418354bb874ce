//! `conformance`: a smoke check of a live agent. It is not the A2A TCK (which grades agents
//! from its own harness); it runs a few calls every agent must answer and checks the answers'
//! shape:
//!
//! 1. the card resolves and has the A2A card's required fields;
//! 2. the card offers an A2A 1.x interface this tool speaks;
//! 3. SendMessage answers a task or a message, with the identifiers the protocol requires;
//! 4. GetTask reads that task back with the same ids;
//! 5. GetTask of an unknown id answers `TaskNotFoundError`;
//! 6. ListTasks answers a page (or `UnsupportedOperationError`);
//! 7. when the card declares streaming, SendStreamingMessage starts with a task or a message.

use a2a_runtime::A2aError;
use a2a_runtime::client::{ClientError, SendOptions};
use a2a_runtime::types::{ListTasksRequest, Message, SendMessageResponse, StreamResponse};
use futures::StreamExt as _;
use serde_json::json;

use crate::agent;
use crate::args::Global;
use crate::commands::card_problems;
use crate::failure::{EXIT_FAILURE, Failure};
use crate::render::Renderer;

struct Report {
    checks: Vec<(String, bool, String)>,
}

impl Report {
    fn check(&mut self, name: &str, ok: bool, detail: impl Into<String>) {
        self.checks.push((name.to_owned(), ok, detail.into()));
    }
}

/// Runs the checks; fails (exit 1) when one does not pass.
pub(crate) async fn run(g: &Global, out: &Renderer) -> Result<(), Failure> {
    let mut r = Report { checks: Vec::new() };
    let resolved = agent::resolve_card(g).await?;
    let problems = card_problems(&resolved.raw, &resolved.card);
    r.check("card", problems.is_empty(), problems.join("; "));
    match agent::connect(g, &resolved.card).await {
        Err(f) => r.check("interface", false, f.message),
        Ok(client) => {
            r.check(
                "interface",
                true,
                client.interface().protocol_binding.as_str().to_owned(),
            );
            let sent = client
                .send_message(
                    Message::user_text("conformance smoke check"),
                    SendOptions::default(),
                )
                .await;
            match sent.map(|s| s.into_inner()) {
                Ok(SendMessageResponse::Task(t)) => {
                    let ids = !t.id.as_str().is_empty() && !t.context_id.as_str().is_empty();
                    r.check(
                        "send",
                        ids,
                        format!("task {} {}", t.id.as_str(), t.status.state.as_str()),
                    );
                    match client.get_task(t.id.as_str(), None).await {
                        Ok(got) => {
                            let got = got.into_inner();
                            r.check(
                                "get",
                                got.id == t.id && got.context_id == t.context_id,
                                got.status.state.as_str().to_owned(),
                            );
                        }
                        Err(e) => r.check("get", false, e.to_string()),
                    }
                }
                Ok(SendMessageResponse::Message(m)) => {
                    r.check(
                        "send",
                        !m.message_id.as_str().is_empty(),
                        "a direct message",
                    );
                    r.check("get", true, "not applicable: no task was created");
                }
                Err(e) => r.check("send", false, e.to_string()),
            }
            let unknown = client.get_task("conformance-no-such-task", None).await;
            r.check(
                "task-not-found",
                matches!(&unknown, Err(ClientError::Agent(a)) if matches!(a.error(), A2aError::TaskNotFound { .. })),
                match &unknown {
                    Ok(_) => "an unknown task was found".to_owned(),
                    Err(e) => e.to_string(),
                },
            );
            match client.list_tasks(ListTasksRequest::default()).await {
                Ok(page) => r.check(
                    "list",
                    true,
                    format!("{} task(s)", page.get_ref().tasks.len()),
                ),
                Err(ClientError::Agent(a))
                    if matches!(a.error(), A2aError::UnsupportedOperation(_)) =>
                {
                    r.check("list", true, "not supported by the agent");
                }
                Err(e) => r.check("list", false, e.to_string()),
            }
            if resolved.card.capabilities.streaming == Some(true) {
                match client
                    .stream_message(
                        Message::user_text("conformance stream check"),
                        SendOptions::default(),
                    )
                    .await
                {
                    Ok(stream) => {
                        let mut events = stream.into_inner();
                        let first = events.next().await;
                        r.check(
                            "stream",
                            matches!(
                                first,
                                Some(Ok(StreamResponse::Task(_) | StreamResponse::Message(_)))
                            ),
                            match first {
                                Some(Ok(e)) => format!(
                                    "first event {}",
                                    serde_json::to_string(&e)
                                        .unwrap_or_default()
                                        .chars()
                                        .take(40)
                                        .collect::<String>()
                                ),
                                Some(Err(e)) => e.to_string(),
                                None => "the stream ended at once".into(),
                            },
                        );
                    }
                    Err(e) => r.check("stream", false, e.to_string()),
                }
            }
        }
    }
    let failed = r.checks.iter().filter(|c| !c.1).count();
    if out.is_json() {
        let checks: Vec<_> = r
            .checks
            .iter()
            .map(|(n, ok, d)| json!({"check": n, "pass": ok, "detail": d}))
            .collect();
        out.json_line(&json!({"agent": resolved.source, "checks": checks, "failed": failed}))?;
    } else {
        let mut fields: Vec<(&str, String)> = vec![("Agent", resolved.source.clone())];
        for (n, ok, d) in &r.checks {
            fields.push((
                "Check",
                format!("{n} {} {d}", if *ok { "pass" } else { "fail" }),
            ));
        }
        fields.push(("Failed", failed.to_string()));
        out.fields(&fields)?;
    }
    if failed > 0 {
        return Err(Failure::new(
            "A2ARS_CONFORMANCE_FAILED",
            EXIT_FAILURE,
            format!("{failed} check(s) failed"),
        ));
    }
    Ok(())
}
