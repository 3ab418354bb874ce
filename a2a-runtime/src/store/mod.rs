//! Persistence: the [`TaskStore`], [`PushConfigStore`] and [`PushOutbox`] traits, and their
//! implementations.
//!
//! Every record is scoped by [`Scope`] (tenant and owner principal): a task is only ever found,
//! listed or changed through the scope that created it. Writes are versioned (optimistic
//! concurrency): [`TaskStore::update`] names the version it read and fails with
//! [`StoreError::Conflict`] when another writer got there first. Listing is keyset-based, newest
//! status timestamp first, so pages stay stable while tasks are inserted; a SQL store serves it
//! from an index on `(tenant, owner, status_ts DESC, id DESC)`.

mod cluster;
mod encoded_task;
mod error;
#[doc(hidden)]
pub mod immediate;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod layout;
mod memory;
mod outbox;
#[cfg(feature = "postgres")]
mod postgres;
mod replay_log;
#[cfg(feature = "encryption")]
mod secrets;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql_writer;
#[cfg(feature = "sqlite")]
mod sqlite;
mod url;

use std::fmt;

pub use cluster::{Cluster, Lease, TaskChange};
pub use error::StoreError;
pub use memory::{
    DEFAULT_FINISHED_EVENTS, DEFAULT_MAX_CLAIMS, DEFAULT_MAX_TASKS, InMemoryPushConfigStore,
    InMemoryTaskStore,
};
pub use outbox::{DEFAULT_MAX_PENDING, Delivery, InMemoryPushOutbox, NewDelivery, PushOutbox};
#[cfg(feature = "postgres")]
pub use postgres::{PostgresStore, PostgresStoreBuilder};
#[cfg(feature = "encryption")]
pub use secrets::SecretKey;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::Migrations;
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteStore, SqliteStoreBuilder};
#[cfg(feature = "encryption")]
pub use url::connect_with_secret_key;
pub use url::{Stores, connect};

pub use crate::protocol::{Scope, SeqEvent};

use crate::types::{
    ContextId, MessageId, PushConfigId, StreamResponse, Task, TaskId, TaskPushNotificationConfig,
    TaskState, Timestamp,
};

/// A task as stored, with the version of the write that produced it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTask {
    /// The task.
    pub task: Task,
    /// Incremented by every write; `update` must name the version it read.
    pub version: u64,
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
    /// The number of matching tasks before pagination (see [`TaskStore::list`]).
    pub total_size: usize,
    /// The opaque token of the next page; empty on the last page.
    pub next_page_token: String,
}

/// A position in the listing order (status timestamp in ms, then id, both descending), and the
/// listing's total once its first page has counted it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListCursor {
    /// Status timestamp in milliseconds since the epoch.
    pub millis: i64,
    /// The task id (tie breaker).
    pub id: TaskId,
    /// The number of matching tasks as counted for the listing's first page, which later pages
    /// report again instead of counting; `None` when not known.
    pub total: Option<u64>,
}

impl ListCursor {
    /// The cursor of `task` (no total).
    pub fn of(task: &Task) -> Self {
        Self {
            millis: task.status.timestamp.map_or(0, |t| t.millis()),
            id: task.id.clone(),
            total: None,
        }
    }

    /// The opaque token form, for a listing with the filters of `query`.
    pub fn encode(&self, query: &TaskQuery) -> String {
        use base64::Engine as _;
        let total = self.total.map_or_else(|| "-".to_owned(), |t| t.to_string());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!(
            "v2:{}:{total}:{:016x}:{}",
            self.millis,
            filters_fingerprint(query),
            self.id
        ))
    }

    /// Parses a token made by [`ListCursor::encode`] (or by a release before totals were
    /// carried). The total is kept only when `query` has the filters the token was made for.
    pub fn decode(token: &str, query: &TaskQuery) -> Result<Self, StoreError> {
        let bytes =
            crate::json::Base64Bytes::decode(token).map_err(|_| StoreError::InvalidPageToken)?;
        let text = String::from_utf8(bytes.0).map_err(|_| StoreError::InvalidPageToken)?;
        let (millis, total, id) = match text.strip_prefix("v2:") {
            Some(rest) => {
                let mut fields = rest.splitn(4, ':');
                let (Some(millis), Some(total), Some(fingerprint), Some(id)) =
                    (fields.next(), fields.next(), fields.next(), fields.next())
                else {
                    return Err(StoreError::InvalidPageToken);
                };
                let total = match total {
                    "-" => None,
                    t => Some(t.parse::<u64>().map_err(|_| StoreError::InvalidPageToken)?),
                };
                let fingerprint = u64::from_str_radix(fingerprint, 16)
                    .map_err(|_| StoreError::InvalidPageToken)?;
                let total = total.filter(|_| fingerprint == filters_fingerprint(query));
                (millis, total, id)
            }
            // The first form: `millis:id`.
            None => {
                let (millis, id) = text.split_once(':').ok_or(StoreError::InvalidPageToken)?;
                (millis, None, id)
            }
        };
        let millis = millis.parse().map_err(|_| StoreError::InvalidPageToken)?;
        if id.is_empty() {
            return Err(StoreError::InvalidPageToken);
        }
        Ok(Self {
            millis,
            id: TaskId::from(id),
            total,
        })
    }
}

/// A fingerprint of `query`'s filters (FNV-1a, 64 bits), so that a total carried in a page
/// token is reused only by the listing it was counted for. Stable across processes and
/// releases: any instance may serve the next page.
fn filters_fingerprint(query: &TaskQuery) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash = (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    match &query.context_id {
        Some(c) => {
            feed(b"c");
            feed(&(c.as_str().len() as u64).to_le_bytes());
            feed(c.as_str().as_bytes());
        }
        None => feed(b"-"),
    }
    match query.state {
        Some(s) => {
            feed(b"s");
            feed(s.as_str().as_bytes());
        }
        None => feed(b"-"),
    }
    match query.status_timestamp_after {
        Some(ts) => {
            feed(b"t");
            feed(&ts.millis().to_le_bytes());
        }
        None => feed(b"-"),
    }
    hash
}

/// Durable storage of tasks and of each task's event log.
///
/// A task is a row (scope, id, context, state, status timestamp, version) and an append-only
/// log of the events that changed it, numbered by a gapless per-task sequence: the event that
/// produced version `n` has sequence number `n`. A write stores the task and its event together
/// (one transaction), or neither.
///
/// Implementations: [`InMemoryTaskStore`], and behind cargo features the SQLite and PostgreSQL
/// stores (see [`connect`]). All pass the same conformance suite.
#[async_trait::async_trait]
pub trait TaskStore: Send + Sync + fmt::Debug + 'static {
    /// The task `id` in `scope`, if it exists there.
    async fn get(&self, scope: &Scope, id: &TaskId) -> Result<Option<StoredTask>, StoreError>;

    /// Stores a new task and the event that created it (logged as sequence number 1); returns
    /// its version (1). Fails with [`StoreError::Exists`] if the id exists in `scope`.
    async fn create(
        &self,
        scope: &Scope,
        task: &Task,
        event: Option<&StreamResponse>,
    ) -> Result<u64, StoreError>;

    /// Replaces a task whose stored version is `expected_version`, and logs `event` (the change
    /// that produced `task`) as the new version's sequence number; returns the new version.
    /// Fails with [`StoreError::Conflict`] when the stored version differs (the writer reloads
    /// and retries).
    async fn update(
        &self,
        scope: &Scope,
        task: &Task,
        expected_version: u64,
        event: Option<&StreamResponse>,
    ) -> Result<u64, StoreError>;

    /// The logged events of a task after sequence number `after`, oldest first, at most
    /// `limit`. Fails with [`StoreError::EventsGone`] when some event after `after` is no
    /// longer held (retention), so that a reader never skips an event silently. Empty for a
    /// task that does not exist.
    async fn events_after(
        &self,
        scope: &Scope,
        id: &TaskId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<SeqEvent>, StoreError>;

    /// One page of the tasks of `scope` matching `query`, newest status timestamp first.
    ///
    /// `total_size` is the number of matching tasks: counted now when the listing has no
    /// filter, else counted for the listing's first page and carried by its page tokens
    /// ([`ListCursor::total`]) to the later pages, which report it again.
    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage, StoreError>;

    /// Removes a task and its event log (retention). Returns whether it existed.
    async fn delete(&self, scope: &Scope, id: &TaskId) -> Result<bool, StoreError>;

    /// The outbox this store appends push deliveries to, in the same write (transaction) as
    /// each event it logs: one [`Delivery`] per push config the task holds in the store, in
    /// config order, carrying the logged event's JSON. A server with push on sends from this
    /// outbox, so that a delivery exists exactly when its event does — a crash between the
    /// two cannot lose it, and no queue in between can drop it.
    ///
    /// The SQLite and PostgreSQL stores return their own outbox (their push configs are in
    /// the same database); [`InMemoryTaskStore`] returns the one it was linked with
    /// ([`InMemoryTaskStore::with_push_outbox`]). `None` (the default): the store writes no
    /// deliveries, and the server hands its events to the outbox after each write instead.
    fn push_outbox(&self) -> Option<std::sync::Arc<dyn PushOutbox>> {
        None
    }

    /// Whether the tasks it holds outlive the process. The runtime's default
    /// [`Retention`](crate::core::Retention) depends on it: a durable store keeps finished
    /// tasks for a time, one in memory is bounded by its own cap. True unless overridden
    /// ([`InMemoryTaskStore`]: false).
    fn is_durable(&self) -> bool {
        true
    }

    /// The store's [immediate writes](immediate), when it offers them (the default declines).
    /// Not a public API.
    #[doc(hidden)]
    fn immediate(&self) -> Option<&dyn immediate::ImmediateWrites> {
        None
    }

    /// Retention: at most `limit` tasks, over all scopes, in one of `states` and last written
    /// before `before`, in no promised order (the runtime ends interrupted tasks left untouched
    /// too long, see [`Retention`](crate::core::Retention)). The default finds none.
    async fn untouched(
        &self,
        states: &[TaskState],
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskRef>, StoreError> {
        let _ = (states, before, limit);
        Ok(Vec::new())
    }

    /// Retention: removes at most `limit` finished (terminal) tasks last written before
    /// `before`, over all scopes, with their event logs and push configs; returns how many.
    /// The default removes none.
    async fn purge_finished(&self, before: Timestamp, limit: usize) -> Result<usize, StoreError> {
        let _ = (before, limit);
        Ok(0)
    }

    /// Retention by count: removes the oldest finished (terminal) tasks beyond the newest
    /// `keep`, counted over all scopes, or in each scope (tenant and owner) with `per_scope`;
    /// at most `limit` in one call, each with its event log, push configs and dead deliveries;
    /// returns how many. The default removes none ([`InMemoryTaskStore`] has bounds of its
    /// own).
    async fn purge_finished_beyond(
        &self,
        keep: usize,
        per_scope: bool,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let _ = (keep, per_scope, limit);
        Ok(0)
    }

    /// Idempotent sends: claims `message_id`, sent in `scope`, for the new task `task_id`.
    /// `None`: the claim is this call's (no claim made at or after `since` held the id; an
    /// older one is replaced). `Some(task)`: a claim holds it, for `task`. Atomic in the
    /// store: of claims racing for one id (from any instance sharing the store) exactly one
    /// gets `None`. The default claims every id (no deduplication).
    async fn claim_message(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
        since: Timestamp,
    ) -> Result<Option<TaskId>, StoreError> {
        let _ = (scope, message_id, task_id, since);
        Ok(None)
    }

    /// Idempotent sends: removes the claim of `message_id` in `scope` if it is still for
    /// `task_id` (a send that failed before its task existed: a retry is a first send again).
    /// The default does nothing.
    async fn release_message_claim(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
    ) -> Result<(), StoreError> {
        let _ = (scope, message_id, task_id);
        Ok(())
    }

    /// Idempotent sends: removes the claims made before `before`, then the oldest beyond
    /// `keep`; at most `limit` in one call; returns how many. The default removes none.
    async fn purge_claims(
        &self,
        before: Timestamp,
        keep: usize,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let _ = (before, keep, limit);
        Ok(0)
    }
}

/// A task found by [`TaskStore::untouched`]: where it is, and the version it was found at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRef {
    /// Its scope.
    pub scope: Scope,
    /// Its id.
    pub id: TaskId,
    /// Its version when it was found (a write since makes it stale).
    pub version: u64,
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

/// Now, in milliseconds since the epoch (the stores' timestamps: writes, leases, retention).
pub(crate) fn now_ms() -> i64 {
    i64::try_from(crate::types::unix_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn scopes_made_either_way_are_equal_and_hash_alike() {
        use std::hash::BuildHasher as _;
        let hasher = crate::FastHash::default();
        let borrowed = Scope::of(String::new(), std::borrow::Cow::Borrowed("me"));
        let owned = Scope::new("", "me");
        assert_eq!(borrowed, owned);
        assert_eq!(hasher.hash_one(&borrowed), hasher.hash_one(&owned));
        assert_eq!(Scope::default(), Scope::new("", ""));
        // The fields are compared, not only the hash; the order is the fields' order.
        assert_ne!(Scope::new("a", "me"), owned);
        assert_ne!(Scope::new("me", ""), owned);
        assert!(Scope::new("a", "z") < Scope::new("b", "a"));
        assert!(Scope::new("a", "a") < Scope::new("a", "b"));
        let mut seen = std::collections::HashSet::new();
        assert!(seen.insert(Scope::new("t", "me")));
        assert!(!seen.insert(Scope::new("t", "me")));
        assert!(seen.insert(Scope::new("t", "you")));
    }

    #[test]
    fn page_tokens_carry_the_total_for_their_own_filters_only() {
        let in_a = TaskQuery {
            context_id: Some("a".into()),
            ..TaskQuery::default()
        };
        let cursor = ListCursor {
            millis: 1_700_000_000_123,
            id: TaskId::from("task:with:colons"),
            total: Some(42),
        };
        let token = cursor.encode(&in_a);
        assert_eq!(ListCursor::decode(&token, &in_a).unwrap(), cursor);
        // Page size and token are not filters.
        let next_page = TaskQuery {
            page_size: 7,
            page_token: Some(token.clone()),
            ..in_a.clone()
        };
        assert_eq!(
            ListCursor::decode(&token, &next_page).unwrap().total,
            Some(42)
        );
        for other in [
            TaskQuery::default(),
            TaskQuery {
                context_id: Some("b".into()),
                ..TaskQuery::default()
            },
            TaskQuery {
                state: Some(TaskState::Completed),
                ..in_a.clone()
            },
            TaskQuery {
                status_timestamp_after: Timestamp::from_millis(1),
                ..in_a.clone()
            },
        ] {
            let decoded = ListCursor::decode(&token, &other).unwrap();
            assert_eq!((decoded.millis, decoded.total), (cursor.millis, None));
            assert_eq!(decoded.id, cursor.id);
        }
        // No total known.
        let unknown = ListCursor {
            total: None,
            ..cursor.clone()
        };
        assert_eq!(
            ListCursor::decode(&unknown.encode(&in_a), &in_a).unwrap(),
            unknown
        );
        // The first form (`millis:id`), from before totals were carried.
        use base64::Engine as _;
        let old = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("5:t:1");
        assert_eq!(
            ListCursor::decode(&old, &in_a).unwrap(),
            ListCursor {
                millis: 5,
                id: TaskId::from("t:1"),
                total: None
            }
        );
        for bad in [
            "v2:5:x:0:t",
            "v2:5:1:zz:t",
            "v2:5:1:0:",
            "v2:5:1",
            "x:t",
            "5:",
        ] {
            let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bad);
            assert!(
                matches!(
                    ListCursor::decode(&token, &in_a),
                    Err(StoreError::InvalidPageToken)
                ),
                "{bad}"
            );
        }
    }
}
