//! Tests of the in-memory task store, by concept: `encoded` (finished tasks held encoded, and
//! listing), `log` (updates with their delta, and events read back from the log), `bounds`
//! (caps, retention and the bound on finished logs), `shared` (the live task shared with its
//! runtime and lent to it).
#![allow(clippy::unwrap_used)]

mod bounds;
mod encoded;
mod log;
mod shared;

use std::sync::Arc;

use super::memory_task::MemoryTask;
use super::*;
use crate::store::immediate::{Delta, ImmediateWrites as _, Write};
use crate::store::{
    InMemoryPushConfigStore, ListCursor, PushConfigStore, Scope, SeqEvent, StoreError, StoredTask,
    TaskPage, TaskQuery, TaskStore, now_ms,
};
use crate::types::{
    Artifact, Message, Part, Role, StreamResponse, Task, TaskArtifactUpdateEvent, TaskId,
    TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};

fn task(i: i64, state: TaskState) -> Task {
    Task {
        id: format!("t{i:03}").into(),
        context_id: "c".into(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Timestamp::from_millis(1_000 + i),
        },
        ..Task::default()
    }
}

/// `f` of the in-memory store's own copy of the live task `id` (tests look at where its
/// parts live).
fn with_held<R>(
    store: &InMemoryTaskStore,
    scope: &Scope,
    id: &str,
    f: impl FnOnce(&Task) -> R,
) -> R {
    let scopes = store.lock();
    match &scopes.get(scope).unwrap().by_id.get(id).unwrap().held {
        MemoryTask::Value(t) => f(t),
        MemoryTask::Encoded(_) => panic!("{id} is held encoded"),
    }
}

/// A copy of the store's own copy of the live task `id`.
fn held_value(store: &InMemoryTaskStore, scope: &Scope, id: &str) -> Task {
    with_held(store, scope, id, Task::clone)
}

/// The address of the text of the store's first part of the first artifact of `id`.
fn first_text_at(store: &InMemoryTaskStore, scope: &Scope, id: &str) -> *const u8 {
    with_held(store, scope, id, |t| {
        t.artifacts[0].parts[0].as_text().unwrap().as_ptr()
    })
}
