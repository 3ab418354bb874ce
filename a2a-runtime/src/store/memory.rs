//! In-memory stores, for tests, demos and single-process agents without durability needs.
//!
//! [`InMemoryTaskStore`] holds a live task as a [`Task`] value, since it changes on every event,
//! but a finished (terminal) one encoded, as one boxed byte string (see `frozen.rs`): the
//! lifecycle never changes a finished task again, and finished tasks are nearly all of the tasks
//! held, so each is encoded once and then costs a fraction of a value's tree of `String`s, `Vec`s
//! and maps (a finished echo task: about 650 bytes of process memory instead of about 1,550).
//! Reads decode it on the way out. Each task id is held once, shared by the map key and the
//! listing index.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use super::frozen::Frozen;
use super::{
    Delta, ListCursor, PushConfigStore, Scope, StoreError, StoredTask, TaskPage, TaskQuery,
    TaskStore, Write,
};
use crate::FastHash;
use crate::types::{PushConfigId, Task, TaskId, TaskPushNotificationConfig};

/// A task as held: live tasks (and the rare finished task whose encoding would not give it back
/// exactly) as values, finished tasks encoded.
#[derive(Debug)]
enum Held {
    Value(Box<Task>),
    Encoded(Frozen),
}

impl Held {
    /// `task` as held, from its `json` when the writer has it (see [`TaskStore::write_now`]).
    fn of(task: &Task, json: Option<&[u8]>) -> Self {
        if task.status.state.is_terminal()
            && let Some(frozen) = json
                .and_then(|json| Frozen::from_json(task, json))
                .or_else(|| Frozen::encode(task))
        {
            return Held::Encoded(frozen);
        }
        Held::Value(Box::new(task.clone()))
    }

    /// The listing position's timestamp (as in [`ListCursor::of`]).
    fn millis(&self) -> i64 {
        match self {
            Held::Value(t) => t.status.timestamp.map_or(0, |t| t.millis()),
            Held::Encoded(f) => f.millis(),
        }
    }

    fn is_terminal(&self) -> bool {
        match self {
            Held::Value(t) => t.status.state.is_terminal(),
            Held::Encoded(f) => f.state().is_terminal(),
        }
    }

    fn matches(&self, query: &TaskQuery) -> bool {
        match self {
            Held::Value(t) => {
                query.context_id.as_ref().is_none_or(|c| &t.context_id == c)
                    && query.state.is_none_or(|st| t.status.state == st)
                    && query
                        .status_timestamp_after
                        .is_none_or(|ts| t.status.timestamp.is_some_and(|x| x >= ts))
            }
            Held::Encoded(f) => {
                query
                    .context_id
                    .as_ref()
                    .is_none_or(|c| f.context_id() == c.as_str().as_bytes())
                    && query.state.is_none_or(|st| f.state() == st)
                    && query
                        .status_timestamp_after
                        .is_none_or(|ts| f.timestamp().is_some_and(|x| x >= ts))
            }
        }
    }

    /// A copy to turn into a [`Task`] once the store's lock is released.
    fn snapshot(&self) -> Snapshot {
        match self {
            Held::Value(t) => Snapshot::Value(Task::clone(t)),
            Held::Encoded(f) => Snapshot::Encoded(f.clone()),
        }
    }
}

/// A task copied out under the lock; decoding happens after it is released.
// Short-lived (one `get`, one page), so the unboxed `Task` costs nothing worth an allocation.
#[allow(clippy::large_enum_variant)]
enum Snapshot {
    Value(Task),
    Encoded(Frozen),
}

impl Snapshot {
    fn into_task(self, id: &str) -> Result<Task, StoreError> {
        match self {
            Snapshot::Value(t) => Ok(t),
            Snapshot::Encoded(f) => f.decode(id),
        }
    }
}

#[derive(Debug)]
struct Entry {
    /// Incremented by every write.
    version: u64,
    held: Held,
}

/// A listing position: status timestamp (ms), then id. Ascending; listings walk it backwards.
type Position = (i64, Arc<str>);

#[derive(Debug, Default)]
struct ScopeTasks {
    /// How many of the tasks are terminal.
    finished: usize,
    /// Keyed by task id; the key is shared with `order`.
    by_id: HashMap<Arc<str>, Entry, FastHash>,
    /// Listing order, oldest status timestamp first (listings read it newest first), with
    /// whether the task is finished (terminal), for retention.
    order: BTreeMap<Position, bool>,
}

/// A [`TaskStore`] in process memory (share it behind an `Arc`).
///
/// Memory is bounded by a retention setting: [`InMemoryTaskStore::with_retention`] keeps at
/// most N finished tasks per scope (tenant and owner), dropping the ones that finished first
/// (by status timestamp). Tasks that are not terminal are never dropped.
///
/// Finished tasks are held encoded (their ProtoJSON without the ids, behind a small header), a
/// fraction of the memory of a [`Task`] value; [`get`](TaskStore::get) and
/// [`list`](TaskStore::list) decode them, and listing filters and orders without decoding. Live
/// tasks, which change on every event, are held as values; a task is encoded once, by the write
/// that finishes it.
#[derive(Debug, Default)]
pub struct InMemoryTaskStore {
    scopes: Mutex<HashMap<Scope, ScopeTasks, FastHash>>,
    /// Keep at most this many finished (terminal) tasks per scope; the oldest go first.
    max_finished_per_scope: Option<usize>,
}

impl InMemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Scope, ScopeTasks, FastHash>> {
        // A poisoned lock only means another thread panicked mid-operation; every operation here
        // leaves the maps consistent before it can panic, so the data is still usable.
        self.scopes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A store that keeps at most `max_finished` terminal tasks per scope.
    pub fn with_retention(max_finished: usize) -> Self {
        Self {
            scopes: Mutex::default(),
            max_finished_per_scope: Some(max_finished),
        }
    }

    /// Drops the oldest terminal tasks of a scope beyond the retention limit.
    fn enforce_retention(&self, s: &mut ScopeTasks) {
        let Some(max) = self.max_finished_per_scope else {
            return;
        };
        while s.finished > max {
            // Usually the task that finished first is the oldest of all: taken off the front
            // of the listing order without a search, and without reading its (long unused)
            // entry to learn that it is finished.
            let victim = match s.order.first_key_value() {
                Some((_, true)) => s.order.pop_first(),
                _ => {
                    let oldest = s.order.iter().find(|(_, finished)| **finished);
                    let oldest = oldest.map(|(position, _)| position.clone());
                    oldest.and_then(|position| s.order.remove_entry(&position))
                }
            };
            let Some(((_, id), _)) = victim else {
                break;
            };
            s.by_id.remove(&id);
            s.finished -= 1;
        }
    }

    /// The number of tasks held, over all scopes.
    pub fn len(&self) -> usize {
        self.lock().values().map(|s| s.by_id.len()).sum()
    }

    /// [`TaskStore::create`], done under the lock.
    fn create_now(
        &self,
        scope: &Scope,
        task: &Task,
        json: Option<&[u8]>,
    ) -> Result<u64, StoreError> {
        let mut scopes = self.lock();
        // Look up first: `entry` would copy the scope on every call.
        let s = match scopes.get_mut(scope) {
            Some(s) => s,
            None => scopes.entry(scope.clone()).or_default(),
        };
        // Shared with the task's own id: no copy.
        let id = task.id.shared();
        let std::collections::hash_map::Entry::Vacant(vacant) = s.by_id.entry(Arc::clone(&id))
        else {
            return Err(StoreError::Exists(task.id.clone(), "already exists"));
        };
        let held = Held::of(task, json);
        s.finished += usize::from(held.is_terminal());
        s.order.insert((held.millis(), id), held.is_terminal());
        vacant.insert(Entry { version: 1, held });
        self.enforce_retention(s);
        Ok(1)
    }

    /// [`TaskStore::update`], done under the lock.
    fn update_now(
        &self,
        scope: &Scope,
        task: &Task,
        json: Option<&[u8]>,
        (expected_version, delta): (u64, Option<Delta<'_>>),
    ) -> Result<u64, StoreError> {
        let mut scopes = self.lock();
        let s = scopes
            .get_mut(scope)
            .ok_or_else(|| StoreError::Exists(task.id.clone(), "does not exist"))?;
        let entry = s
            .by_id
            .get_mut(task.id.as_str())
            .ok_or_else(|| StoreError::Exists(task.id.clone(), "does not exist"))?;
        if entry.version != expected_version {
            return Err(StoreError::Conflict {
                task_id: task.id.clone(),
                expected: expected_version,
                found: entry.version,
            });
        }
        let old_millis = entry.held.millis();
        let was_finished = entry.held.is_terminal();
        match &mut entry.held {
            // A live task stays live: reuse its box, and apply the event to it when the writer
            // says what it was (a streamed chunk costs its own size, not the task's). Otherwise a
            // plain copy: `clone_from`, which compares part by part to copy only what changed,
            // walks both copies and costs more (a 100-chunk stream: 79k events/s against 154k).
            Held::Value(boxed) if !task.status.state.is_terminal() => {
                if !delta.is_some_and(|d| d.apply_to(boxed)) {
                    **boxed = task.clone();
                }
                debug_assert!(**boxed == *task, "the delta gave another task");
            }
            held => *held = Held::of(task, json),
        }
        let new_millis = entry.held.millis();
        let is_finished = entry.held.is_terminal();
        entry.version += 1;
        let version = entry.version;
        if (old_millis, was_finished) != (new_millis, is_finished) {
            let position = (old_millis, task.id.shared());
            if old_millis == new_millis {
                // Finished within the millisecond it was last written in (an agent that answers
                // at once): the position stays, only its flag changes.
                if let Some(finished) = s.order.get_mut(&position) {
                    *finished = is_finished;
                }
            } else if let Some(((_, id), _)) = s.order.remove_entry(&position) {
                // The id as the order held it (the map key's).
                s.order.insert((new_millis, id), is_finished);
            }
        }
        s.finished = s.finished + usize::from(is_finished) - usize::from(was_finished);
        self.enforce_retention(s);
        Ok(version)
    }

    /// True when no task is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait::async_trait]
impl TaskStore for InMemoryTaskStore {
    async fn get(&self, scope: &Scope, id: &TaskId) -> Result<Option<StoredTask>, StoreError> {
        let found = self
            .lock()
            .get(scope)
            .and_then(|s| s.by_id.get(id.as_str()))
            .map(|e| (e.held.snapshot(), e.version));
        found
            .map(|(snapshot, version)| {
                Ok(StoredTask {
                    task: snapshot.into_task(id.as_str())?,
                    version,
                })
            })
            .transpose()
    }

    async fn create(&self, scope: &Scope, task: &Task) -> Result<u64, StoreError> {
        self.create_now(scope, task, None)
    }

    async fn update(
        &self,
        scope: &Scope,
        task: &Task,
        expected_version: u64,
    ) -> Result<u64, StoreError> {
        self.update_now(scope, task, None, (expected_version, None))
    }

    fn write_now(
        &self,
        scope: &Scope,
        task: &Task,
        json: Option<&[u8]>,
        write: Write<'_>,
    ) -> Option<Result<u64, StoreError>> {
        Some(match write {
            Write::Create => self.create_now(scope, task, json),
            Write::Update {
                expected_version,
                delta,
            } => self.update_now(scope, task, json, (expected_version, delta)),
        })
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage, StoreError> {
        let after = query
            .page_token
            .as_deref()
            .map(ListCursor::decode)
            .transpose()?;
        let mut total = 0usize;
        let mut page: Vec<(Arc<str>, Snapshot)> = Vec::with_capacity(query.page_size.min(100));
        let mut last = None;
        let mut more = false;
        {
            let scopes = self.lock();
            let Some(s) = scopes.get(scope) else {
                return Ok(TaskPage::default());
            };
            for ((millis, id), _) in s.order.iter().rev() {
                let Some(entry) = s.by_id.get(id) else {
                    continue;
                };
                if !entry.held.matches(query) {
                    continue;
                }
                total += 1;
                if after
                    .as_ref()
                    .is_some_and(|a| (*millis, &**id) >= (a.millis, a.id.as_str()))
                {
                    continue;
                }
                if page.len() < query.page_size {
                    page.push((Arc::clone(id), entry.held.snapshot()));
                    last = Some(*millis);
                } else {
                    more = true;
                }
            }
        }
        let next_page_token = match (page.last(), last) {
            (Some((id, _)), Some(millis)) if more => ListCursor {
                millis,
                id: TaskId::from(&**id),
            }
            .encode(),
            _ => String::new(),
        };
        let tasks = page
            .into_iter()
            .map(|(id, snapshot)| snapshot.into_task(&id))
            .collect::<Result<_, _>>()?;
        Ok(TaskPage {
            tasks,
            total_size: total,
            next_page_token,
        })
    }

    async fn delete(&self, scope: &Scope, id: &TaskId) -> Result<bool, StoreError> {
        let mut scopes = self.lock();
        let Some(s) = scopes.get_mut(scope) else {
            return Ok(false);
        };
        match s.by_id.remove_entry(id.as_str()) {
            Some((id, entry)) => {
                s.finished -= usize::from(entry.held.is_terminal());
                s.order.remove(&(entry.held.millis(), id));
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// A [`PushConfigStore`] in process memory.
#[derive(Debug, Default)]
pub struct InMemoryPushConfigStore {
    configs: Mutex<HashMap<(Scope, TaskId), Vec<TaskPushNotificationConfig>>>,
}

impl InMemoryPushConfigStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(Scope, TaskId), Vec<TaskPushNotificationConfig>>> {
        self.configs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait::async_trait]
impl PushConfigStore for InMemoryPushConfigStore {
    async fn put(
        &self,
        scope: &Scope,
        config: &TaskPushNotificationConfig,
    ) -> Result<(), StoreError> {
        let mut map = self.lock();
        let list = map
            .entry((scope.clone(), config.task_id.clone()))
            .or_default();
        match list.iter_mut().find(|c| c.id == config.id) {
            Some(existing) => *existing = config.clone(),
            None => list.push(config.clone()),
        }
        Ok(())
    }

    async fn get(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError> {
        Ok(self
            .lock()
            .get(&(scope.clone(), task_id.clone()))
            .and_then(|l| l.iter().find(|c| &c.id == id).cloned()))
    }

    async fn list(
        &self,
        scope: &Scope,
        task_id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        Ok(self
            .lock()
            .get(&(scope.clone(), task_id.clone()))
            .cloned()
            .unwrap_or_default())
    }

    async fn delete(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<bool, StoreError> {
        let mut map = self.lock();
        let Some(list) = map.get_mut(&(scope.clone(), task_id.clone())) else {
            return Ok(false);
        };
        let before = list.len();
        list.retain(|c| &c.id != id);
        Ok(list.len() != before)
    }

    async fn delete_all(&self, scope: &Scope, task_id: &TaskId) -> Result<(), StoreError> {
        self.lock().remove(&(scope.clone(), task_id.clone()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::cmp::Reverse;

    use super::*;
    use crate::types::{Artifact, Message, Part, Role, TaskState, TaskStatus, Timestamp};

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
                    Some(last) if i + 1 < chunks.len() => ListCursor::of(last).encode(),
                    _ => String::new(),
                },
            })
            .collect()
    }

    async fn all_pages(
        store: &InMemoryTaskStore,
        scope: &Scope,
        query: &TaskQuery,
    ) -> Vec<TaskPage> {
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
            store.create(&scope, t).await.unwrap();
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
                let encoded = matches!(held, Held::Encoded(_));
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
            direct.create(&scope, t).await.unwrap();
            let mut live = t.clone();
            live.status.state = TaskState::Submitted;
            finished_later.create(&scope, &live).await.unwrap();
            finished_later.update(&scope, t, 1).await.unwrap();
            let mut live = t.clone();
            if live.status.state.is_terminal() {
                live.status.state = TaskState::Working;
            }
            values.create(&scope, &live).await.unwrap();
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
        store.create(&scope, &done).await.unwrap();
        // A metadata edit (as a custom handler may make): decoded, replaced, encoded again.
        done.metadata
            .insert("edited".into(), serde_json::json!([1, 2.5, "x"]));
        assert_eq!(store.update(&scope, &done, 1).await.unwrap(), 2);
        assert!(matches!(
            store.update(&scope, &done, 1).await,
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
        store.create(&scope, &tasks[3]).await.unwrap();
        assert_eq!(store.update(&scope, &later, 2).await.unwrap(), 3);
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
        assert_eq!(store.update(&scope, &again, 3).await.unwrap(), 4);
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
            let scopes = store.lock();
            let s = &scopes[&scope];
            assert!(s.order.is_empty() && s.finished == 0);
        }
        assert!(matches!(
            store.update(&scope, &again, 4).await,
            Err(StoreError::Exists(..))
        ));
    }

    #[tokio::test]
    async fn a_corrupt_encoding_is_an_error_not_a_panic() {
        let store = InMemoryTaskStore::new();
        let scope = Scope::new("", "me");
        let done = task(1, TaskState::Completed);
        store.create(&scope, &done).await.unwrap();
        if let Some(s) = store.lock().get_mut(&scope) {
            for e in s.by_id.values_mut() {
                e.held = Held::Encoded(Frozen::from_raw(&[3, 0, 0, 0, 0, 0, 0, 0, 0, 0, b'{']));
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

    #[tokio::test]
    async fn retention_keeps_the_newest_finished_tasks_and_every_live_one() {
        let store = InMemoryTaskStore::with_retention(3);
        let scope = Scope::new("", "me");
        store
            .create(&scope, &task(0, TaskState::Working))
            .await
            .unwrap();
        for i in 1..=6 {
            store
                .create(&scope, &task(i, TaskState::Completed))
                .await
                .unwrap();
        }
        // Six finished, three kept (the newest), the working one untouched.
        assert_eq!(store.len(), 4);
        for i in 1..=3 {
            assert!(
                store
                    .get(&scope, &format!("t{i:03}").into())
                    .await
                    .unwrap()
                    .is_none()
            );
        }
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
        // Finishing the live task (newest timestamp) evicts the oldest finished one.
        let mut done = task(7, TaskState::Completed);
        done.id = "t000".into();
        store.update(&scope, &done, 1).await.unwrap();
        assert_eq!(store.len(), 3);
        assert!(store.get(&scope, &"t004".into()).await.unwrap().is_none());
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_task_finishing_without_a_new_timestamp_still_counts_for_retention() {
        let store = InMemoryTaskStore::with_retention(1);
        let scope = Scope::new("", "me");
        // The oldest task, live, then finished with its status timestamp unchanged (or none).
        for timestamp in [Timestamp::from_millis(1_000), None] {
            let mut old = task(0, TaskState::Working);
            old.status.timestamp = timestamp;
            store.create(&scope, &old).await.unwrap();
            old.status.state = TaskState::Completed;
            store.update(&scope, &old, 1).await.unwrap();
            store
                .create(&scope, &task(1, TaskState::Completed))
                .await
                .unwrap();
            // Two finished, one kept: the one that finished first goes.
            assert_eq!(store.len(), 1, "{timestamp:?}");
            assert!(store.get(&scope, &"t000".into()).await.unwrap().is_none());
            store.delete(&scope, &"t001".into()).await.unwrap();
        }
        // A live task older than every finished one is kept, and the finished ones still go.
        store
            .create(&scope, &task(0, TaskState::Working))
            .await
            .unwrap();
        for i in 1..=3 {
            store
                .create(&scope, &task(i, TaskState::Completed))
                .await
                .unwrap();
        }
        assert_eq!(store.len(), 2);
        assert!(store.get(&scope, &"t000".into()).await.unwrap().is_some());
        assert!(store.get(&scope, &"t003".into()).await.unwrap().is_some());
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
            Held::Value(t) => f(t),
            Held::Encoded(_) => panic!("{id} is held encoded"),
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

    #[tokio::test]
    async fn an_update_with_its_delta_appends_the_chunk_to_the_held_task_instead_of_copying_it() {
        use crate::core::lifecycle::{self, HistoryPolicy};
        use crate::types::{StreamResponse, TaskArtifactUpdateEvent};
        let store = InMemoryTaskStore::new();
        let scope = Scope::default();
        let policy = HistoryPolicy { max_messages: 100 };
        let mut live = task(1, TaskState::Working);
        live.artifacts = vec![Artifact {
            artifact_id: "a".into(),
            ..Artifact::new([Part::text("chunk 0")])
        }];
        let mut version = store.create(&scope, &live).await.unwrap();
        let first = first_text_at(&store, &scope, "t001");
        for n in 1..=20 {
            let mut event = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: live.id.clone(),
                context_id: live.context_id.clone(),
                artifact: Artifact {
                    artifact_id: "a".into(),
                    ..Artifact::new([Part::text(format!("chunk {n}"))])
                },
                append: true,
                ..Default::default()
            });
            lifecycle::apply_event(&mut live, &mut event, policy).unwrap();
            let replay =
                |task: &mut Task| lifecycle::apply_event(task, &mut event.clone(), policy).is_ok();
            let write = Write::Update {
                expected_version: version,
                delta: Some(Delta::new(&event, &replay)),
            };
            version = store
                .write_now(&scope, &live, None, write)
                .unwrap()
                .unwrap();
            assert_eq!(held_value(&store, &scope, "t001"), live, "chunk {n}");
            // The chunks held before are where they were: appended to, not copied.
            assert_eq!(first_text_at(&store, &scope, "t001"), first, "chunk {n}");
        }
        assert_eq!(live.artifacts[0].parts.len(), 21);
        assert_eq!(
            store.get(&scope, &live.id).await.unwrap().unwrap().task,
            live
        );

        // A delta the held task refuses (here: an event for another task) is not applied: the
        // written task is copied as it is.
        let mut other = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "elsewhere".into(),
            context_id: live.context_id.clone(),
            artifact: Artifact {
                artifact_id: "a".into(),
                ..Artifact::new([Part::text("stray")])
            },
            append: true,
            ..Default::default()
        });
        live.status.message = Some(Message::default());
        let replay =
            |task: &mut Task| lifecycle::apply_event(task, &mut other.clone(), policy).is_ok();
        let write = Write::Update {
            expected_version: version,
            delta: Some(Delta::new(&other, &replay)),
        };
        store
            .write_now(&scope, &live, None, write)
            .unwrap()
            .unwrap();
        assert_eq!(held_value(&store, &scope, "t001"), live);
        assert!(lifecycle::apply_event(&mut live.clone(), &mut other, policy).is_err());
    }
}
