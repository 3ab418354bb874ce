//! The task lifecycle rules: legal state transitions, and how each event changes a task.
//!
//! Pure functions over the wire types, so the rules can be read and tested in one place.

use crate::error::A2aError;
use crate::types::{
    Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, Timestamp,
};

/// Why an agent's event was refused. The task is left unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LifecycleError {
    /// The task is terminal: it can never change again.
    #[error("task is {0} (terminal) and can no longer change")]
    Terminal(TaskState),
    /// The transition is not part of the lifecycle.
    #[error("illegal transition {from} -> {to}")]
    IllegalTransition {
        /// The current state.
        from: TaskState,
        /// The refused state.
        to: TaskState,
    },
    /// The event names another task or context.
    #[error("event for task {event_task}/{event_context} published on task {task}/{context}")]
    WrongTask {
        /// The task's id.
        task: String,
        /// The task's context.
        context: String,
        /// The event's task id.
        event_task: String,
        /// The event's context id.
        event_context: String,
    },
    /// A direct message cannot be published once a task exists.
    #[error(
        "a direct Message reply is only allowed as the first and only event, before any task exists"
    )]
    MessageAfterTask,
    /// The event is malformed.
    #[error("invalid event: {0}")]
    Invalid(String),
}

impl From<LifecycleError> for A2aError {
    fn from(e: LifecycleError) -> Self {
        A2aError::Internal(format!("agent event refused: {e}"))
    }
}

/// Checks that a task may move from `from` to `to`.
///
/// SUBMITTED → WORKING → (INPUT_REQUIRED | AUTH_REQUIRED ⇄ WORKING)* → COMPLETED | FAILED |
/// CANCELED | REJECTED; any non-terminal state may end directly; a state may repeat (a new status
/// message); nothing leaves a terminal state, and nothing returns to SUBMITTED.
pub fn check_transition(from: TaskState, to: TaskState) -> Result<(), LifecycleError> {
    if from.is_terminal() {
        return Err(LifecycleError::Terminal(from));
    }
    let legal = match to {
        TaskState::Unspecified => false,
        TaskState::Submitted => from == TaskState::Submitted,
        _ => true,
    };
    if legal {
        Ok(())
    } else {
        Err(LifecycleError::IllegalTransition { from, to })
    }
}

/// How much history a task keeps.
#[derive(Clone, Copy, Debug)]
pub struct HistoryPolicy {
    /// Oldest messages beyond this count are trimmed.
    pub max_messages: usize,
}

/// Appends a message to the history (once per message id), trimming the oldest beyond the limit.
pub fn push_history(task: &mut Task, message: Message, policy: HistoryPolicy) {
    if task
        .history
        .iter()
        .rev()
        .take(8)
        .any(|m| m.message_id == message.message_id)
    {
        return;
    }
    task.history.push(message);
    if task.history.len() > policy.max_messages {
        let excess = task.history.len() - policy.max_messages;
        task.history.drain(..excess);
    }
}

/// Applies an agent's event to its task.
///
/// Status updates move the state (after [`check_transition`]), stamp the status if the agent did
/// not, and record the status message in the history. Artifact updates add, replace, or (with
/// `append`) extend the artifact with the same id. A `Task` event replaces status, artifacts and
/// metadata wholesale (keeping the runtime's history). On error the task is unchanged.
pub fn apply_event(
    task: &mut Task,
    event: &mut StreamResponse,
    policy: HistoryPolicy,
) -> Result<(), LifecycleError> {
    match event {
        StreamResponse::Message(_) => Err(LifecycleError::MessageAfterTask),
        StreamResponse::Task(t) => {
            same_task(task, t.id.as_str(), t.context_id.as_str())?;
            check_transition(task.status.state, t.status.state)?;
            stamp(&mut t.status);
            task.status = t.status.clone();
            task.artifacts = t.artifacts.clone();
            task.metadata = t.metadata.clone();
            for m in &t.history {
                push_history(task, m.clone(), policy);
            }
            Ok(())
        }
        StreamResponse::StatusUpdate(e) => {
            same_task(task, e.task_id.as_str(), e.context_id.as_str())?;
            check_transition(task.status.state, e.status.state)?;
            stamp(&mut e.status);
            if let Some(m) = &mut e.status.message {
                fill_ids(m, task);
                push_history(task, m.clone(), policy);
            }
            task.status = e.status.clone();
            Ok(())
        }
        StreamResponse::ArtifactUpdate(e) => {
            same_task(task, e.task_id.as_str(), e.context_id.as_str())?;
            if task.status.state.is_terminal() {
                return Err(LifecycleError::Terminal(task.status.state));
            }
            if e.artifact.artifact_id.is_empty() {
                return Err(LifecycleError::Invalid(
                    "artifact without artifactId".into(),
                ));
            }
            merge_artifact(task, e);
            Ok(())
        }
    }
}

fn stamp(status: &mut TaskStatus) {
    if status.timestamp.is_none() {
        status.timestamp = Some(Timestamp::now());
    }
}

fn fill_ids(m: &mut Message, task: &Task) {
    if m.task_id.is_empty() {
        m.task_id = task.id.clone();
    }
    if m.context_id.is_empty() {
        m.context_id = task.context_id.clone();
    }
}

fn same_task(task: &Task, id: &str, context: &str) -> Result<(), LifecycleError> {
    if (id.is_empty() || task.id == id) && (context.is_empty() || task.context_id == context) {
        Ok(())
    } else {
        Err(LifecycleError::WrongTask {
            task: task.id.to_string(),
            context: task.context_id.to_string(),
            event_task: id.to_owned(),
            event_context: context.to_owned(),
        })
    }
}

/// Adds the artifact of an update to the task: a new id is appended; `append` extends the parts
/// (and merges metadata and extensions) of the artifact with the same id; otherwise it replaces it.
pub fn merge_artifact(task: &mut Task, update: &TaskArtifactUpdateEvent) {
    let incoming = &update.artifact;
    match task
        .artifacts
        .iter_mut()
        .find(|a| a.artifact_id == incoming.artifact_id)
    {
        Some(existing) if update.append => {
            existing.parts.extend(incoming.parts.iter().cloned());
            for (k, v) in incoming.metadata.iter() {
                existing.metadata.insert(k.clone(), v.clone());
            }
            for uri in &incoming.extensions {
                if !existing.extensions.contains(uri) {
                    existing.extensions.push(uri.clone());
                }
            }
            if !incoming.name.is_empty() {
                existing.name.clone_from(&incoming.name);
            }
            if !incoming.description.is_empty() {
                existing.description.clone_from(&incoming.description);
            }
        }
        Some(existing) => *existing = incoming.clone(),
        None => task.artifacts.push(incoming.clone()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::{Artifact, Part, TaskStatusUpdateEvent};

    const POLICY: HistoryPolicy = HistoryPolicy { max_messages: 3 };

    fn task() -> Task {
        Task {
            id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Submitted),
            ..Task::default()
        }
    }

    #[test]
    fn terminal_states_are_final_and_submitted_cannot_return() {
        for s in [
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Canceled,
            TaskState::Rejected,
        ] {
            assert_eq!(
                check_transition(s, TaskState::Working),
                Err(LifecycleError::Terminal(s))
            );
        }
        assert!(check_transition(TaskState::Working, TaskState::Submitted).is_err());
        assert!(check_transition(TaskState::Working, TaskState::Unspecified).is_err());
        assert!(check_transition(TaskState::InputRequired, TaskState::Working).is_ok());
        assert!(check_transition(TaskState::Working, TaskState::Working).is_ok());
        assert!(check_transition(TaskState::Submitted, TaskState::Completed).is_ok());
    }

    #[test]
    fn status_message_goes_to_history_with_ids_and_history_is_trimmed() {
        let mut t = task();
        for i in 0..5 {
            let mut ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: "t".into(),
                context_id: "c".into(),
                status: TaskStatus {
                    state: TaskState::Working,
                    message: Some(Message::agent_text(format!("m{i}"))),
                    timestamp: None,
                },
                ..Default::default()
            });
            apply_event(&mut t, &mut ev, POLICY).unwrap();
        }
        assert_eq!(t.history.len(), 3);
        assert_eq!(t.history[0].text(), "m2");
        assert_eq!(t.history[2].task_id, "t");
        assert!(t.status.timestamp.is_some());
    }

    #[test]
    fn artifact_chunks_append_and_replace() {
        let mut t = task();
        let chunk = |text: &str, append: bool| TaskArtifactUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            artifact: Artifact::new([Part::text(text)]).with_id("a"),
            append,
            last_chunk: false,
            ..Default::default()
        };
        merge_artifact(&mut t, &chunk("one ", false));
        merge_artifact(&mut t, &chunk("two", true));
        assert_eq!(t.artifacts.len(), 1);
        assert_eq!(t.artifacts[0].parts.len(), 2);
        merge_artifact(&mut t, &chunk("fresh", false));
        assert_eq!(t.artifacts[0].parts.len(), 1);
    }

    #[test]
    fn events_for_another_task_are_refused_and_leave_the_task_unchanged() {
        let mut t = task();
        let before = t.clone();
        let mut ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "other".into(),
            context_id: "c".into(),
            status: TaskStatus::new(TaskState::Working),
            ..Default::default()
        });
        assert!(matches!(
            apply_event(&mut t, &mut ev, POLICY),
            Err(LifecycleError::WrongTask { .. })
        ));
        assert_eq!(t, before);
    }
}
