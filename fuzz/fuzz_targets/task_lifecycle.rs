//! The task lifecycle: any sequence of events applied to a task never panics and keeps the
//! invariants: a refused event leaves the task unchanged, a terminal task never changes state,
//! the history stays within its bound, artifact ids are unique.
#![no_main]

use a2a_runtime::core::lifecycle::{HistoryPolicy, apply_event};
use a2a_runtime::types::{
    Artifact, Message, Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use libfuzzer_sys::fuzz_target;

const STATES: [TaskState; 9] = [
    TaskState::Unspecified,
    TaskState::Submitted,
    TaskState::Working,
    TaskState::Completed,
    TaskState::Failed,
    TaskState::Canceled,
    TaskState::InputRequired,
    TaskState::Rejected,
    TaskState::AuthRequired,
];

fn event(op: u8, arg: u8, task: &Task) -> StreamResponse {
    match op % 4 {
        0 | 1 => {
            let mut status = TaskStatus::new(STATES[usize::from(arg) % STATES.len()]);
            if op & 0x10 != 0 {
                status.message = Some(Message::agent_text(format!("m{arg}")));
            }
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                status,
                ..Default::default()
            })
        }
        2 => {
            let mut artifact = Artifact::new([Part::text(format!("p{arg}"))]);
            artifact.artifact_id = format!("a{}", arg % 4).into();
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                artifact,
                append: op & 0x20 != 0,
                last_chunk: op & 0x40 != 0,
                ..Default::default()
            })
        }
        _ => {
            let mut t = task.clone();
            t.status = TaskStatus::new(STATES[usize::from(arg) % STATES.len()]);
            if op & 0x80 != 0 {
                t.id = "other".into();
            }
            StreamResponse::Task(t)
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let policy = HistoryPolicy { max_messages: 8 };
    let mut task = Task {
        id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus::new(TaskState::Submitted),
        ..Task::default()
    };
    for pair in data.chunks_exact(2) {
        let before = task.clone();
        let mut ev = event(pair[0], pair[1], &task);
        match apply_event(&mut task, &mut ev, policy) {
            Ok(()) => {
                if before.status.state.is_terminal() {
                    assert_eq!(task.status.state, before.status.state, "a terminal task moved");
                }
            }
            Err(_) => assert_eq!(task, before, "a refused event changed the task"),
        }
        assert!(task.history.len() <= policy.max_messages);
        let ids: Vec<_> = task.artifacts.iter().map(|a| &a.artifact_id).collect();
        for (i, id) in ids.iter().enumerate() {
            assert!(!ids[..i].contains(id), "duplicate artifact {id:?}");
        }
    }
});
