//! Finished tasks held encoded and read back exactly, and listing over every form a task is
//! held in.
#![allow(clippy::unwrap_used)]

use std::cmp::Reverse;

use super::*;
use crate::store::encoded_task::EncodedTask;

/// Tasks in every form the store holds: live values, encoded finished tasks, and finished
/// tasks kept as values (a sub-millisecond timestamp the wire form would round); equal
/// timestamps, no timestamp, three contexts (one empty), metadata, artifacts and history.
fn mixed_tasks() -> Vec<Task> {
    (0..40)
        .map(|i| {
            let state = match i % 5 {
                0 => TaskState::Working,
                1 | 2 => TaskState::Completed,
                3 => TaskState::Failed,
                _ => TaskState::InputRequired,
            };
            let mut t = task(i / 3, state);
            t.id = format!("task-{:02}", (i * 7) % 40).into();
            t.context_id = ["c1", "c2", ""][(i % 3) as usize].into();
            match i % 11 {
                0 => t.status.timestamp = None,
                1 => {
                    t.status.timestamp = t
                        .status
                        .timestamp
                        .map(|ts| Timestamp(ts.0 + chrono::Duration::microseconds(7)));
                }
                _ => {}
            }
            t.metadata.insert(
                "n".into(),
                serde_json::json!({"i": i, "f": 0.25, "u": u64::MAX}),
            );
            t.artifacts = vec![Artifact {
                artifact_id: format!("a{i}").into(),
                parts: vec![Part::text("one"), Part::text("two")],
                ..Artifact::default()
            }];
            t.history = vec![Message {
                message_id: format!("m{i}").into(),
                task_id: t.id.clone(),
                context_id: t.context_id.clone(),
                role: Role::User,
                parts: vec![Part::text("hello")],
                ..Message::default()
            }];
            t
        })
        .collect()
}

/// What a listing must return, computed naively from the tasks.
fn expected_pages(tasks: &[Task], query: &TaskQuery) -> Vec<TaskPage> {
    let mut matching: Vec<&Task> = tasks
        .iter()
        .filter(|t| {
            query.context_id.as_ref().is_none_or(|c| &t.context_id == c)
                && query.state.is_none_or(|st| t.status.state == st)
                && query
                    .status_timestamp_after
                    .is_none_or(|ts| t.status.timestamp.is_some_and(|x| x >= ts))
        })
        .collect();
    matching.sort_by_key(|t| Reverse(ListCursor::of(t)));
    let chunks: Vec<&[&Task]> = matching.chunks(query.page_size).collect();
    if chunks.is_empty() {
        return vec![TaskPage::default()];
    }
    chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| TaskPage {
            tasks: chunk.iter().map(|t| (*t).clone()).collect(),
            total_size: matching.len(),
            next_page_token: match chunk.last() {
                Some(last) if i + 1 < chunks.len() => ListCursor {
                    total: Some(matching.len() as u64),
                    ..ListCursor::of(last)
                }
                .encode(query),
                _ => String::new(),
            },
        })
        .collect()
}

async fn all_pages(store: &InMemoryTaskStore, scope: &Scope, query: &TaskQuery) -> Vec<TaskPage> {
    let mut query = query.clone();
    let mut pages = Vec::new();
    loop {
        let page = store.list(scope, &query).await.unwrap();
        let next = page.next_page_token.clone();
        pages.push(page);
        if next.is_empty() {
            return pages;
        }
        query.page_token = Some(next);
    }
}

fn queries() -> Vec<TaskQuery> {
    let mut out = Vec::new();
    for page_size in [1, 3, 7, 100] {
        let base = TaskQuery {
            page_size,
            ..TaskQuery::default()
        };
        out.push(base.clone());
        for c in ["c1", "c2", "", "nope"] {
            out.push(TaskQuery {
                context_id: Some(c.into()),
                ..base.clone()
            });
        }
        for st in [TaskState::Working, TaskState::Completed, TaskState::Failed] {
            out.push(TaskQuery {
                state: Some(st),
                context_id: (page_size == 3).then(|| "c2".into()),
                ..base.clone()
            });
        }
        for ms in [1_004, 1_007] {
            let ts = Timestamp::from_millis(ms).unwrap();
            for after in [ts, Timestamp(ts.0 + chrono::Duration::microseconds(3))] {
                out.push(TaskQuery {
                    status_timestamp_after: Some(after),
                    ..base.clone()
                });
            }
        }
    }
    out
}

#[tokio::test]
async fn finished_tasks_are_held_encoded_and_read_back_exactly() {
    let store = InMemoryTaskStore::new();
    let scope = Scope::new("", "me");
    let tasks = mixed_tasks();
    for t in &tasks {
        store.create(&scope, t, None).await.unwrap();
    }
    {
        let scopes = store.lock();
        let s = &scopes[&scope];
        for t in &tasks {
            let held = &s.by_id[t.id.as_str()].held;
            let exact = t
                .status
                .timestamp
                .is_none_or(|ts| Timestamp::from_millis(ts.millis()) == Some(ts));
            let encoded = matches!(held, MemoryTask::Encoded(_));
            assert_eq!(encoded, t.status.state.is_terminal() && exact, "{t:?}");
        }
        assert_eq!(
            s.finished,
            tasks
                .iter()
                .filter(|t| t.status.state.is_terminal())
                .count()
        );
    }
    for t in &tasks {
        let stored = store.get(&scope, &t.id).await.unwrap().unwrap();
        assert_eq!(
            stored,
            StoredTask {
                task: t.clone(),
                version: 1
            }
        );
    }
    assert!(
        store
            .get(&Scope::new("", "other"), &tasks[1].id)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn listing_gives_the_same_pages_whatever_the_form_of_the_tasks() {
    let scope = Scope::new("t", "me");
    let tasks = mixed_tasks();
    // The same tasks, once created finished (encoded at once), once created live (as values)
    // then finished by an update, and once never finished (every one a value).
    let direct = InMemoryTaskStore::new();
    let finished_later = InMemoryTaskStore::new();
    let values = InMemoryTaskStore::new();
    let mut live_versions = Vec::new();
    for t in &tasks {
        direct.create(&scope, t, None).await.unwrap();
        let mut live = t.clone();
        live.status.state = TaskState::Submitted;
        finished_later.create(&scope, &live, None).await.unwrap();
        finished_later.update(&scope, t, 1, None).await.unwrap();
        let mut live = t.clone();
        if live.status.state.is_terminal() {
            live.status.state = TaskState::Working;
        }
        values.create(&scope, &live, None).await.unwrap();
        live_versions.push(live);
    }
    for query in queries() {
        let want = expected_pages(&tasks, &query);
        assert_eq!(all_pages(&direct, &scope, &query).await, want, "{query:?}");
        assert_eq!(
            all_pages(&finished_later, &scope, &query).await,
            want,
            "{query:?}"
        );
        let want = expected_pages(&live_versions, &query);
        assert_eq!(all_pages(&values, &scope, &query).await, want, "{query:?}");
    }
    assert!(matches!(
        direct
            .list(
                &scope,
                &TaskQuery {
                    page_size: 5,
                    page_token: Some("!".into()),
                    ..TaskQuery::default()
                }
            )
            .await,
        Err(StoreError::InvalidPageToken)
    ));
    let empty = direct
        .list(
            &Scope::new("t", "other"),
            &TaskQuery {
                page_size: 5,
                ..TaskQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(empty, TaskPage::default());
}

#[tokio::test]
async fn a_finished_task_can_still_be_updated_and_deleted() {
    let store = InMemoryTaskStore::new();
    let scope = Scope::new("", "me");
    let tasks = mixed_tasks();
    let mut done = tasks[1].clone();
    store.create(&scope, &done, None).await.unwrap();
    // A metadata edit (as a custom handler may make): decoded, replaced, encoded again.
    done.metadata
        .insert("edited".into(), serde_json::json!([1, 2.5, "x"]));
    assert_eq!(store.update(&scope, &done, 1, None).await.unwrap(), 2);
    assert!(matches!(
        store.update(&scope, &done, 1, None).await,
        Err(StoreError::Conflict {
            expected: 1,
            found: 2,
            ..
        })
    ));
    let stored = store.get(&scope, &done.id).await.unwrap().unwrap();
    assert_eq!(
        stored,
        StoredTask {
            task: done.clone(),
            version: 2
        }
    );
    // A new status timestamp moves it in the listing.
    let mut later = done.clone();
    later.status.timestamp = Timestamp::from_millis(5_000);
    store.create(&scope, &tasks[3], None).await.unwrap();
    assert_eq!(store.update(&scope, &later, 2, None).await.unwrap(), 3);
    let page = store
        .list(
            &scope,
            &TaskQuery {
                page_size: 10,
                ..TaskQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.tasks, vec![later.clone(), tasks[3].clone()]);
    // Even back to a live state (the store does not police the lifecycle).
    let mut again = later.clone();
    again.status.state = TaskState::Working;
    assert_eq!(store.update(&scope, &again, 3, None).await.unwrap(), 4);
    assert_eq!(
        store.get(&scope, &again.id).await.unwrap().unwrap().task,
        again
    );
    assert_eq!(store.lock()[&scope].finished, 1);
    assert!(store.delete(&scope, &again.id).await.unwrap());
    assert!(store.delete(&scope, &tasks[3].id).await.unwrap());
    assert!(!store.delete(&scope, &tasks[3].id).await.unwrap());
    assert!(store.is_empty());
    {
        // The scope went with its last task.
        let tasks = store.lock();
        assert!(tasks.scopes.is_empty() && tasks.finished == 0 && tasks.held == 0);
    }
    assert!(matches!(
        store.update(&scope, &again, 4, None).await,
        Err(StoreError::Exists(..))
    ));
}

#[tokio::test]
async fn a_corrupt_encoding_is_an_error_not_a_panic() {
    let store = InMemoryTaskStore::new();
    let scope = Scope::new("", "me");
    let done = task(1, TaskState::Completed);
    store.create(&scope, &done, None).await.unwrap();
    if let Some(s) = store.lock().get_mut(&scope) {
        for e in s.by_id.values_mut() {
            e.held =
                MemoryTask::Encoded(EncodedTask::from_raw(&[3, 0, 0, 0, 0, 0, 0, 0, 0, 0, b'{']));
        }
    }
    assert!(matches!(
        store.get(&scope, &done.id).await,
        Err(StoreError::Backend(_))
    ));
    let query = TaskQuery {
        page_size: 5,
        ..TaskQuery::default()
    };
    assert!(matches!(
        store.list(&scope, &query).await,
        Err(StoreError::Backend(_))
    ));
}
