//! `task get|cancel|list|subscribe|push-config|download` (SPEC.md §8.3, §8.4, Appendix A).

use std::path::{Path, PathBuf};

use a2a_runtime::client::CallOptions;
use a2a_runtime::types::{
    Artifact, ListTasksRequest, PartContent, PushConfigId, StreamResponse, Task,
    TaskPushNotificationConfig,
};
use futures::StreamExt as _;

use crate::agent::{self, Capability};
use crate::args::{Global, ListArgs, PushConfigCommand, TaskCommand};
use crate::failure::Failure;
use crate::render::Renderer;
use crate::send;
use crate::wait::{self, Known, Waiter};

/// Runs a `task` command.
pub(crate) async fn run(g: &Global, cmd: TaskCommand, out: &mut Renderer) -> Result<(), Failure> {
    let (client, card) = agent::open(g).await?;
    let waiter = Waiter::new(g.timeout);
    let fail = agent::fail(g);
    match cmd {
        TaskCommand::Get { task_id, history } => {
            let poll = g.wait;
            let task = if poll {
                wait::poll(g, &client, &waiter, &task_id, history, None).await?
            } else {
                client
                    .get_task(&task_id, history)
                    .await
                    .map_err(&fail)?
                    .into_inner()
            };
            agent::debug_json(g, "answer", &task);
            out.task(&task)?;
            if poll {
                wait::warn_outcome(task.status.state);
            }
        }
        TaskCommand::Cancel { task_id } => {
            let task = client
                .cancel_task(&task_id)
                .await
                .map_err(&fail)?
                .into_inner();
            agent::debug_json(g, "answer", &task);
            out.task(&task)?;
        }
        TaskCommand::List(args) => list(g, &client, args, out).await?,
        TaskCommand::Subscribe {
            task_id,
            last_event_id,
        } => {
            let stream = g.stream;
            agent::require(&card, Capability::Streaming)?;
            let headers = last_event_id
                .map(|id| vec![("last-event-id".to_owned(), id)])
                .unwrap_or_default();
            let mut events = waiter
                .run(client.resubscribe_with(
                    &task_id,
                    CallOptions {
                        headers,
                        ..CallOptions::default()
                    },
                ))
                .await
                .map_err(|s| wait::stopped(s, None))?
                .map_err(&fail)?
                .into_inner();
            if stream {
                send::follow(g, &mut events, &waiter, out).await?;
            } else {
                // One document: the task once it is final or paused (the stream's first event
                // is the full task; the end state is read back whole).
                let mut known: Option<Known> = None;
                while let Some(event) = waiter
                    .run(events.next())
                    .await
                    .map_err(|s| wait::stopped(s, known.as_ref()))?
                {
                    let event = event.map_err(&fail)?;
                    agent::debug_json(g, "event", &event);
                    match &event {
                        StreamResponse::Task(t) => known = Some(Known::of(t)),
                        StreamResponse::StatusUpdate(u) => {
                            known = Some(Known {
                                task_id: u.task_id.to_string(),
                                context_id: u.context_id.to_string(),
                                state: u.status.state,
                            });
                        }
                        _ => {}
                    }
                    if known.as_ref().is_some_and(|k| wait::is_settled(k.state)) {
                        break;
                    }
                }
                let task = wait::poll(g, &client, &waiter, &task_id, None, known).await?;
                out.task(&task)?;
                wait::warn_outcome(task.status.state);
            }
        }
        TaskCommand::PushConfig(cmd) => {
            agent::require(&card, Capability::Push)?;
            push_config(&client, cmd, out, &fail).await?;
        }
        TaskCommand::Download {
            task_id,
            dir,
            artifact,
        } => {
            let task = client
                .get_task(&task_id, Some(0))
                .await
                .map_err(&fail)?
                .into_inner();
            download(&task, &dir, artifact.as_deref(), out).await?;
        }
    }
    Ok(())
}

async fn list(
    g: &Global,
    client: &a2a_runtime::client::A2aClient,
    args: ListArgs,
    out: &mut Renderer,
) -> Result<(), Failure> {
    let req = ListTasksRequest {
        context_id: args.context_id.as_deref().unwrap_or_default().into(),
        status: args.status.unwrap_or_default(),
        page_size: args.page_size,
        page_token: args.page_token.clone().unwrap_or_default(),
        history_length: args.history,
        status_timestamp_after: args.updated_after,
        include_artifacts: args.include_artifacts.then_some(true),
        ..ListTasksRequest::default()
    };
    if args.all {
        let mut tasks = std::pin::pin!(client.list_all_tasks(req));
        while let Some(task) = tasks.next().await {
            out.task_row(&task.map_err(agent::fail(g))?)?;
        }
    } else {
        let page = client.list_tasks(req).await.map_err(agent::fail(g))?;
        out.page(page.get_ref())?;
    }
    Ok(())
}

async fn push_config(
    client: &a2a_runtime::client::A2aClient,
    cmd: PushConfigCommand,
    out: &mut Renderer,
    fail: &impl Fn(a2a_runtime::client::ClientError) -> Failure,
) -> Result<(), Failure> {
    match cmd {
        PushConfigCommand::Set {
            task_id,
            webhook,
            id,
            token,
        } => {
            let config = TaskPushNotificationConfig {
                task_id: task_id.as_str().into(),
                id: PushConfigId::from(id.as_deref().unwrap_or_default()),
                url: webhook,
                token: token.unwrap_or_default(),
                ..TaskPushNotificationConfig::default()
            };
            out.push_config(
                client
                    .set_push_config(config)
                    .await
                    .map_err(fail)?
                    .get_ref(),
            )?;
        }
        PushConfigCommand::Get { task_id, id } => {
            out.push_config(
                client
                    .get_push_config(&task_id, &id)
                    .await
                    .map_err(fail)?
                    .get_ref(),
            )?;
        }
        PushConfigCommand::List { task_id } => {
            let list = client
                .list_push_configs(&task_id)
                .await
                .map_err(fail)?
                .into_inner();
            if out.is_json() {
                out.json_line(&list)?;
            } else {
                for c in &list.configs {
                    out.push_config(c)?;
                }
                out.fields(&[("Configs", list.configs.len().to_string())])?;
            }
        }
        PushConfigCommand::Delete { task_id, id } => {
            client
                .delete_push_config(&task_id, &id)
                .await
                .map_err(fail)?;
            out.deleted(&task_id, &id)?;
        }
    }
    Ok(())
}

/// A file name that stays inside the target directory.
fn safe_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = base
        .chars()
        .map(|c| if c.is_control() || c == ':' { '_' } else { c })
        .collect();
    match cleaned.as_str() {
        "" | "." | ".." => "artifact".into(),
        _ => cleaned,
    }
}

/// Writes each part of each artifact to a file: file parts by their name (inline bytes written,
/// URLs listed, never fetched), text as `.txt`, data as `.json`.
async fn download(
    task: &Task,
    dir: &Path,
    only: Option<&str>,
    out: &Renderer,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::internal(format!("could not create {}: {e}", dir.display())))?;
    let chosen: Vec<&Artifact> = task
        .artifacts
        .iter()
        .filter(|a| only.is_none_or(|o| a.artifact_id.as_str() == o || a.name == o))
        .collect();
    if chosen.is_empty() {
        return Err(Failure::internal(format!(
            "task {} has no artifact{}",
            task.id.as_str(),
            only.map(|o| format!(" {o}")).unwrap_or_default()
        ))
        .hint(format!("a2a task get {}", task.id.as_str())));
    }
    let mut written: Vec<(PathBuf, usize)> = Vec::new();
    let mut referenced: Vec<String> = Vec::new();
    for a in chosen {
        let stem = safe_name(if a.name.is_empty() {
            a.artifact_id.as_str()
        } else {
            &a.name
        });
        for (n, p) in a.parts.iter().enumerate() {
            let suffix = if a.parts.len() > 1 {
                format!("-{n}")
            } else {
                String::new()
            };
            let (name, bytes) = match &p.content {
                PartContent::Raw(b) => (
                    if p.filename.is_empty() {
                        format!("{stem}{suffix}.bin")
                    } else {
                        safe_name(&p.filename)
                    },
                    b.0.clone(),
                ),
                PartContent::Text(t) => (format!("{stem}{suffix}.txt"), t.clone().into_bytes()),
                PartContent::Data(v) => (
                    format!("{stem}{suffix}.json"),
                    serde_json::to_vec_pretty(v).unwrap_or_default(),
                ),
                PartContent::Url(u) => {
                    referenced.push(u.clone());
                    continue;
                }
                PartContent::Missing | PartContent::Conflicting(_) => continue,
            };
            let path = dir.join(name);
            std::fs::write(&path, &bytes).map_err(|e| {
                Failure::internal(format!("could not write {}: {e}", path.display()))
            })?;
            written.push((path, bytes.len()));
        }
    }
    if out.is_json() {
        let files: Vec<_> = written
            .iter()
            .map(|(p, n)| serde_json::json!({"path": p.display().to_string(), "bytes": n}))
            .collect();
        out.json_line(&serde_json::json!({
            "taskId": task.id.as_str(),
            "contextId": task.context_id.as_str(),
            "state": task.status.state.as_str(),
            "files": files,
            "references": referenced,
        }))?;
    } else {
        let mut fields = vec![
            ("Task ID", task.id.to_string()),
            ("Context ID", task.context_id.to_string()),
            ("State", task.status.state.as_str().to_owned()),
        ];
        for (p, n) in &written {
            fields.push(("Saved", format!("{} ({n} bytes)", p.display())));
        }
        for u in &referenced {
            fields.push(("Reference", u.clone()));
        }
        out.fields(&fields)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downloaded_names_stay_in_the_directory() {
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name(".."), "artifact");
        assert_eq!(safe_name("a\\b.txt"), "b.txt");
        assert_eq!(safe_name("report.pdf"), "report.pdf");
    }
}
