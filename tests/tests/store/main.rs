//! The store conformance suite, run against every store: memory, SQLite (a real file) and
//! PostgreSQL (the machine's server; each test creates its own database and drops it). A
//! missing PostgreSQL fails these tests, it never skips them.
//!
//! One behaviour per module (one test binary: the link time of a binary per file dominates a
//! test run): the contract every store keeps, how the SQL stores write, retention, listing from
//! an index, streams resumed from the event log, the push outbox, and the crash loop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};

use a2a_runtime::store::TaskQuery;
use a2a_runtime::types::{
    Artifact, Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig,
    TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};

mod conformance;
mod crash;
mod listing;
mod migrations;
mod outbox;
mod resume;
mod retention;
mod secrets;
mod writes;

static NEXT_DB: AtomicU64 = AtomicU64::new(0);

/// A SQLite file in a directory of its own (removed when the test ends).
struct SqliteFile {
    dir: std::path::PathBuf,
}

impl SqliteFile {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "a2a-store-{}-{}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Self { dir }
    }

    /// The URL of a database file in a directory that does not exist yet.
    fn url(&self) -> String {
        format!("sqlite://{}/nested/tasks.db", self.dir.display())
    }
}

impl Drop for SqliteFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn task(id: &str, context: &str, state: TaskState, millis: i64) -> Task {
    Task {
        id: id.into(),
        context_id: context.into(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Timestamp::from_millis(millis),
        },
        ..Task::default()
    }
}

fn status_event(t: &Task, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone(),
        status: TaskStatus::new(state),
        ..Default::default()
    })
}

fn chunk_event(t: &Task, n: usize) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: t.id.clone(),
        context_id: t.context_id.clone(),
        artifact: Artifact::new([Part::text(format!("chunk {n}"))]).with_id("a"),
        append: n > 0,
        ..Default::default()
    })
}

fn push_config(task_id: &str, id: &str, url: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        id: id.into(),
        task_id: task_id.into(),
        url: url.into(),
        ..Default::default()
    }
}

/// A text of about `n` bytes, distinct per `tag`.
fn filler(tag: &str, n: usize) -> String {
    format!("{tag} {}", "x".repeat(n))
}

fn query(page_size: usize) -> TaskQuery {
    TaskQuery {
        page_size,
        ..TaskQuery::default()
    }
}
