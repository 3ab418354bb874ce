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
/// not, record the status message in the history, and merge their metadata into the task's
/// (each top-level key replaced). Artifact updates add, replace, or (with
/// `append`) extend the artifact with the same id. A `Task` event replaces status, artifacts and
/// metadata wholesale (keeping the runtime's history). On error the task is unchanged.
pub fn apply_event(
    task: &mut Task,
    event: &mut StreamResponse,
    policy: HistoryPolicy,
) -> Result<(), LifecycleError> {
    apply(task, event, policy, Payload::Copy)
}

/// [`apply_event`], unless nobody else will read the event in full (`read` false): its status
/// and artifact then move into the task instead of being copied, and the event keeps only its
/// kind and state (what ends a blocking request's wait).
pub(crate) fn apply_event_if_read(
    task: &mut Task,
    event: &mut StreamResponse,
    policy: HistoryPolicy,
    read: bool,
) -> Result<(), LifecycleError> {
    let payload = if read { Payload::Copy } else { Payload::Take };
    apply(task, event, policy, payload)
}

/// Whether an applied event keeps its payload.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Payload {
    Copy,
    Take,
}

fn apply(
    task: &mut Task,
    event: &mut StreamResponse,
    policy: HistoryPolicy,
    payload: Payload,
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
            // The update's metadata is merged into the task's, key by key (as the Python SDK
            // does): how an agent or an extension records facts about the task as it moves.
            for (k, v) in e.metadata.iter() {
                task.metadata.insert(k.clone(), v.clone());
            }
            task.status = match payload {
                Payload::Copy => e.status.clone(),
                Payload::Take => {
                    let state = e.status.state;
                    let status = std::mem::take(&mut e.status);
                    e.status.state = state;
                    status
                }
            };
            Ok(())
        }
        StreamResponse::ArtifactUpdate(e) => {
            check_artifact(task, e)?;
            match payload {
                Payload::Copy => merge_artifact(task, e),
                Payload::Take => merge_artifact_taking(task, e),
            }
            Ok(())
        }
    }
}

/// Applies to another copy of the task an event [`apply_event_if_read`] applied with `read`
/// (so stamped, its ids filled): reads an artifact update in place, copying only its parts.
/// False when the event does not apply to this copy.
pub(crate) fn reapply_event(
    task: &mut Task,
    event: &StreamResponse,
    policy: HistoryPolicy,
) -> bool {
    match event {
        StreamResponse::ArtifactUpdate(e) => {
            let applies = check_artifact(task, e).is_ok();
            if applies {
                merge_artifact(task, e);
            }
            applies
        }
        other => apply(task, &mut other.clone(), policy, Payload::Take).is_ok(),
    }
}

/// Whether an artifact update may apply to the task.
fn check_artifact(task: &Task, e: &TaskArtifactUpdateEvent) -> Result<(), LifecycleError> {
    same_task(task, e.task_id.as_str(), e.context_id.as_str())?;
    if task.status.state.is_terminal() {
        return Err(LifecycleError::Terminal(task.status.state));
    }
    if e.artifact.artifact_id.is_empty() {
        return Err(LifecycleError::Invalid(
            "artifact without artifactId".into(),
        ));
    }
    Ok(())
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

/// [`merge_artifact`], moving the update's artifact (or, appended, its parts) into the task.
fn merge_artifact_taking(task: &mut Task, update: &mut TaskArtifactUpdateEvent) {
    let existing = task
        .artifacts
        .iter()
        .position(|a| a.artifact_id == update.artifact.artifact_id);
    match existing {
        // Appending merges metadata, extensions and names: the copying path does it.
        Some(_) if update.append => merge_artifact(task, update),
        Some(i) => {
            if let Some(slot) = task.artifacts.get_mut(i) {
                *slot = std::mem::take(&mut update.artifact);
            }
        }
        None => task.artifacts.push(std::mem::take(&mut update.artifact)),
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

    #[test]
    fn taking_the_payload_leaves_the_same_task_and_the_events_state() {
        let artifact = |id: &str, text: &str, append: bool| {
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: "t".into(),
                context_id: "c".into(),
                artifact: Artifact::new([Part::text(text)]).with_id(id),
                append,
                ..Default::default()
            })
        };
        let status = |state: TaskState, text: Option<&str>| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: "t".into(),
                context_id: "c".into(),
                status: TaskStatus {
                    state,
                    message: text.map(|text| Message {
                        message_id: "m1".into(),
                        ..Message::agent_text(text)
                    }),
                    timestamp: None,
                },
                ..Default::default()
            })
        };
        let events = || {
            vec![
                status(TaskState::Working, Some("on it")),
                artifact("a", "one ", false),
                artifact("a", "two", true),
                artifact("b", "old", false),
                artifact("b", "new", false),
                status(TaskState::Completed, None),
            ]
        };
        let (mut copied, mut taken) = (task(), task());
        for (mut a, mut b) in events().into_iter().zip(events()) {
            apply_event(&mut copied, &mut a, POLICY).unwrap();
            apply_event_if_read(&mut taken, &mut b, POLICY, false).unwrap();
            // What ends a wait is still there: the kind of event, and its state (below).
            assert_eq!(std::mem::discriminant(&a), std::mem::discriminant(&b));
            if let (StreamResponse::StatusUpdate(a), StreamResponse::StatusUpdate(b)) = (&a, &b) {
                assert_eq!(a.status.state, b.status.state);
            }
        }
        // Timestamps differ by when they were stamped; everything else is the same.
        taken.status.timestamp = copied.status.timestamp;
        assert_eq!(taken, copied);
        assert_eq!(copied.artifacts.len(), 2);
        assert_eq!(copied.artifacts[0].parts.len(), 2);
        assert_eq!(copied.artifacts[1].parts[0].as_text(), Some("new"));
        // A refused event takes nothing: the task is as it was.
        let before = taken.clone();
        let mut late = artifact("c", "late", false);
        assert!(apply_event_if_read(&mut taken, &mut late, POLICY, false).is_err());
        assert_eq!(taken, before);
        assert!(matches!(&late, StreamResponse::ArtifactUpdate(e) if e.artifact.parts.len() == 1));
    }
}
