//! Persistence: the [`TaskStore`] and [`PushConfigStore`] traits, and their implementations.
//!
//! Every record is scoped by [`Scope`] (tenant and owner principal): a task is only ever found,
//! listed or changed through the scope that created it. Writes are versioned (optimistic
//! concurrency): [`TaskStore::update`] names the version it read and fails with
//! [`StoreError::Conflict`] when another writer got there first. Listing is keyset-based, newest
//! status timestamp first, so pages stay stable while tasks are inserted; a SQL store serves it
//! from an index on `(tenant, owner, status_ts DESC, id DESC)`.

mod frozen;
mod memory;

use std::fmt;

pub use memory::{InMemoryPushConfigStore, InMemoryTaskStore};

use crate::error::A2aError;
use crate::types::{
    ContextId, PushConfigId, StreamResponse, Task, TaskId, TaskPushNotificationConfig, TaskState,
    Timestamp,
};

/// Who owns a record: the tenant of the request and the authenticated principal.
#[derive(Clone, Debug, Default, Eq, PartialOrd, Ord)]
pub struct Scope {
    /// The tenant (empty when the interface has none).
    pub tenant: String,
    /// The owner principal's id (borrowed for the anonymous principal: see
    /// [`Principal::id`](crate::core::Principal::id)).
    pub owner: std::borrow::Cow<'static, str>,
}

impl PartialEq for Scope {
    /// Field by field, as derived, except that an empty field is compared by its length alone:
    /// comparing two empty strings calls `memcmp` on their dangling pointers, and where that
    /// `memcmp` reads through a mask (AVX-512 builds of glibc) the CPU may take a slow assist
    /// to suppress the fault of the masked-off read; every store and live-task lookup compares
    /// a scope, whose tenant is usually empty.
    fn eq(&self, other: &Self) -> bool {
        fn same(a: &str, b: &str) -> bool {
            a.len() == b.len() && (a.is_empty() || a == b)
        }
        same(&self.tenant, &other.tenant) && same(&self.owner, &other.owner)
    }
}

impl std::hash::Hash for Scope {
    /// As derived (field by field), consistent with the equality above.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.tenant.hash(state);
        self.owner.hash(state);
    }
}

impl Scope {
    /// A scope for `tenant` and `owner`.
    pub fn new(tenant: impl Into<String>, owner: impl Into<String>) -> Self {
        Self {
            tenant: tenant.into(),
            owner: std::borrow::Cow::Owned(owner.into()),
        }
    }
}

/// A task as stored, with the version of the write that produced it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTask {
    /// The task.
    pub task: Task,
    /// Incremented by every write; `update` must name the version it read.
    pub version: u64,
}

/// A store failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A versioned write lost against a concurrent writer.
    #[error("task {task_id} was changed concurrently (expected version {expected}, found {found})")]
    Conflict {
        /// The task.
        task_id: TaskId,
        /// The version the writer read.
        expected: u64,
        /// The version in the store.
        found: u64,
    },
    /// `create` for an id that exists, or `update` for one that does not.
    #[error("task {0} {1}")]
    Exists(TaskId, &'static str),
    /// A page token that this store did not issue.
    #[error("invalid page token")]
    InvalidPageToken,
    /// The backend failed.
    #[error("store backend error: {0}")]
    Backend(String),
}

impl From<StoreError> for A2aError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::InvalidPageToken => {
                A2aError::invalid_field("pageToken", "is not a token this server issued")
            }
            other => A2aError::Internal(other.to_string()),
        }
    }
}

/// The filters and page of a task listing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskQuery {
    /// Only tasks of this context.
    pub context_id: Option<ContextId>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status timestamp is at or after this time.
    pub status_timestamp_after: Option<Timestamp>,
    /// At most this many tasks (1..=100).
    pub page_size: usize,
    /// Continue after this cursor (from a previous page's `next_page_token`).
    pub page_token: Option<String>,
}

/// One page of a task listing, newest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskPage {
    /// The tasks.
    pub tasks: Vec<Task>,
    /// The number of matching tasks before pagination.
    pub total_size: usize,
    /// The opaque token of the next page; empty on the last page.
    pub next_page_token: String,
}

/// The position of a task in the listing order: status timestamp (ms), then id, both descending.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListCursor {
    /// Status timestamp in milliseconds since the epoch.
    pub millis: i64,
    /// The task id (tie breaker).
    pub id: TaskId,
}

impl ListCursor {
    /// The cursor of `task`.
    pub fn of(task: &Task) -> Self {
        Self {
            millis: task.status.timestamp.map_or(0, |t| t.millis()),
            id: task.id.clone(),
        }
    }

    /// The opaque token form.
    pub fn encode(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(format!("{}:{}", self.millis, self.id))
    }

    /// Parses a token made by [`ListCursor::encode`].
    pub fn decode(token: &str) -> Result<Self, StoreError> {
        let bytes =
            crate::json::Base64Bytes::decode(token).map_err(|_| StoreError::InvalidPageToken)?;
        let text = String::from_utf8(bytes.0).map_err(|_| StoreError::InvalidPageToken)?;
        let (millis, id) = text.split_once(':').ok_or(StoreError::InvalidPageToken)?;
        let millis = millis.parse().map_err(|_| StoreError::InvalidPageToken)?;
        if id.is_empty() {
            return Err(StoreError::InvalidPageToken);
        }
        Ok(Self {
            millis,
            id: TaskId::from(id),
        })
    }
}

impl fmt::Display for ListCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encode())
    }
}

/// A task write, as [`TaskStore::write_now`] is asked to do it.
#[derive(Clone, Copy, Debug)]
pub enum Write<'a> {
    /// As [`TaskStore::create`].
    Create,
    /// As [`TaskStore::update`] with this expected version.
    Update {
        /// The version the writer read.
        expected_version: u64,
        /// What the update changes, when the writer knows it.
        delta: Option<Delta<'a>>,
    },
}

/// What an update changes, when the writer knows it: one agent event, applied by the task
/// lifecycle to the task as stored at the update's expected version.
///
/// A store that holds a live task as a value can apply the event to its copy
/// ([`apply_to`](Self::apply_to)) instead of copying the whole written task: a streamed artifact
/// grows by one chunk per event, and copying the task after every chunk makes a long stream's
/// cost grow with the square of its length. A store that writes rows could append the chunk.
#[derive(Clone, Copy)]
pub struct Delta<'a> {
    event: &'a StreamResponse,
    /// Applies `event` to a task as the writer did (the writer's lifecycle and history policy).
    apply: &'a (dyn Fn(&mut Task) -> bool + Sync),
}

impl fmt::Debug for Delta<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delta")
            .field("event", self.event)
            .finish_non_exhaustive()
    }
}

impl<'a> Delta<'a> {
    /// `event` as the writer applied it, and how it applied it (`apply` gives `false`, leaving
    /// the task unchanged, when the event cannot be applied to it).
    pub(crate) fn new(
        event: &'a StreamResponse,
        apply: &'a (dyn Fn(&mut Task) -> bool + Sync),
    ) -> Self {
        Self { event, apply }
    }

    /// The applied event.
    pub fn event(&self) -> &'a StreamResponse {
        self.event
    }

    /// Applies the event to `task`, which must be the task as stored at the update's expected
    /// version: `task` becomes the written task. Costs what the event carries, not what the
    /// task holds. `false`, with `task` unchanged, when the event cannot be applied there (the
    /// store then takes the written task as it is).
    pub fn apply_to(&self, task: &mut Task) -> bool {
        (self.apply)(task)
    }
}

/// Durable storage of tasks.
///
/// Implementations: [`InMemoryTaskStore`]; SQLite and PostgreSQL implement the same trait.
#[async_trait::async_trait]
pub trait TaskStore: Send + Sync + fmt::Debug + 'static {
    /// The task `id` in `scope`, if it exists there.
    async fn get(&self, scope: &Scope, id: &TaskId) -> Result<Option<StoredTask>, StoreError>;

    /// Stores a new task; returns its version (1). Fails if the id exists.
    async fn create(&self, scope: &Scope, task: &Task) -> Result<u64, StoreError>;

    /// Replaces a task whose stored version is `expected_version`; returns the new version.
    async fn update(
        &self,
        scope: &Scope,
        task: &Task,
        expected_version: u64,
    ) -> Result<u64, StoreError>;

    /// Does `write` of `task` at once, for a store that needs no I/O for it (the in-memory
    /// one), with the same outcome [`create`](Self::create) or [`update`](Self::update) would
    /// have. `None` (the default) tells the runtime to await those instead.
    ///
    /// The runtime writes every event of a task through here first: a store that answers saves
    /// a future and an allocation per event.
    ///
    /// `json`, when given, is `task`'s ProtoJSON exactly as
    /// [`json_out::to_writer`](crate::json_out::to_writer) writes it: the runtime has it when
    /// the task is about to be sent as a reply, so that a store keeping tasks encoded can copy
    /// it instead of encoding the task a second time. An update's [`Delta`], when given, is how
    /// `task` differs from the stored version (`task` is the whole truth either way).
    fn write_now(
        &self,
        scope: &Scope,
        task: &Task,
        json: Option<&[u8]>,
        write: Write<'_>,
    ) -> Option<Result<u64, StoreError>> {
        let _ = (scope, task, json, write);
        None
    }

    /// One page of the tasks of `scope` matching `query`, newest status timestamp first.
    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage, StoreError>;

    /// Removes a task (retention). Returns whether it existed.
    async fn delete(&self, scope: &Scope, id: &TaskId) -> Result<bool, StoreError>;
}

/// Storage of push notification configs, per task.
#[async_trait::async_trait]
pub trait PushConfigStore: Send + Sync + fmt::Debug + 'static {
    /// Inserts or replaces the config (its `task_id` and `id` must be set).
    async fn put(
        &self,
        scope: &Scope,
        config: &TaskPushNotificationConfig,
    ) -> Result<(), StoreError>;

    /// The config `id` of `task_id`.
    async fn get(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<Option<TaskPushNotificationConfig>, StoreError>;

    /// All configs of `task_id`, oldest first.
    async fn list(
        &self,
        scope: &Scope,
        task_id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError>;

    /// Removes a config; returns whether it existed.
    async fn delete(
        &self,
        scope: &Scope,
        task_id: &TaskId,
        id: &PushConfigId,
    ) -> Result<bool, StoreError>;

    /// Removes every config of `task_id` (the task was deleted).
    async fn delete_all(&self, scope: &Scope, task_id: &TaskId) -> Result<(), StoreError>;
}
