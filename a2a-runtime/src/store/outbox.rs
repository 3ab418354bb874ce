//! The push delivery outbox: [`PushOutbox`] and [`InMemoryPushOutbox`].
//!
//! Every notification to send is a [`Delivery`] row: one event of one task for one push config.
//! Senders [`claim`](PushOutbox::claim) due rows under a lease, then settle each one:
//! [`complete`](PushOutbox::complete), [`retry_at`](PushOutbox::retry_at) or
//! [`dead`](PushOutbox::dead). Rows of one (task, config) go out in the order they were
//! enqueued: only the oldest unsettled row of a pair is ever claimable, and not while it is
//! leased. A sender that dies leaves its lease to expire, and the row is claimed again.
//!
//! The SQLite and PostgreSQL stores implement the same contract in their database (features
//! `sqlite`, `postgres`; see `store/sql/outbox.rs`): a table keyed by an increasing id, claimed
//! with `UPDATE … SET lease_owner = $me, lease_until_ms = $t WHERE id IN (SELECT … the oldest
//! unsettled row per (tenant, owner, task, config) that is due and not leased … FOR UPDATE
//! SKIP LOCKED) RETURNING …`, so that deliveries survive a restart and two instances never
//! send the same row.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Mutex, PoisonError};

use super::error::StoreError;
use crate::protocol::Scope;
use crate::types::{PushConfigId, TaskId};

/// A notification to enqueue: one event of one task, for one of its push configs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewDelivery {
    /// Who owns the task.
    pub scope: Scope,
    /// The task.
    pub task_id: TaskId,
    /// The push config it goes to.
    pub config_id: PushConfigId,
    /// The event's sequence number in the task's stream.
    pub seq: u64,
    /// The request body: the event as StreamResponse JSON.
    pub payload: bytes::Bytes,
}

/// A notification in the outbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The row id, assigned by the store (increasing).
    pub id: u64,
    /// What is to be sent.
    pub new: NewDelivery,
    /// Attempts made so far.
    pub attempts: u32,
    /// When it was enqueued (milliseconds since the Unix epoch).
    pub enqueued_at_ms: i64,
    /// When it is due next (milliseconds since the Unix epoch).
    pub next_attempt_ms: i64,
    /// Why the last attempt failed (empty before the first failure).
    pub last_error: String,
}

/// Where push deliveries wait to be sent, and the ones that were given up on.
///
/// A task store writes into its outbox with each event it logs
/// ([`TaskStore::push_outbox`](super::TaskStore::push_outbox)); [`enqueue`](Self::enqueue) is
/// the same append on its own.
///
/// Implementations: [`InMemoryPushOutbox`], and the SQLite and PostgreSQL stores (durable:
/// deliveries survive a restart and, across instances, each is sent by one instance only;
/// [`Stores::outbox`](super::Stores::outbox) of a store opened by URL).
#[async_trait::async_trait]
pub trait PushOutbox: Send + Sync + fmt::Debug + 'static {
    /// Appends deliveries, due now, in the order given; returns their ids.
    async fn enqueue(
        &self,
        deliveries: Vec<NewDelivery>,
        now_ms: i64,
    ) -> Result<Vec<u64>, StoreError>;

    /// Leases up to `limit` due deliveries to `owner` until `lease_until_ms`: for each
    /// (task, config), only its oldest unsettled delivery, and only when that one is due
    /// (`next_attempt_ms <= now_ms`) and not leased by anyone (or its lease expired); the
    /// earliest due first, then the oldest. Counts the attempt.
    async fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError>;

    /// Removes a delivered (or no longer wanted) delivery.
    async fn complete(&self, id: u64) -> Result<(), StoreError>;

    /// Releases a delivery to be tried again at `at_ms`, recording why it failed.
    async fn retry_at(&self, id: u64, at_ms: i64, error: &str) -> Result<(), StoreError>;

    /// Gives up on a delivery: it leaves the queue (the next one of its pair becomes due) and
    /// is kept among the dead ones, with why.
    async fn dead(&self, id: u64, error: &str) -> Result<(), StoreError>;

    /// The most recent dead deliveries, newest first, at most `limit`.
    async fn list_dead(&self, limit: usize) -> Result<Vec<Delivery>, StoreError>;

    /// The number of deliveries waiting (leased or not).
    async fn pending(&self) -> Result<usize, StoreError>;
}

/// The key deliveries are ordered by.
type PairKey = (Scope, TaskId, PushConfigId);

#[derive(Debug, Default)]
pub(crate) struct State {
    next_id: u64,
    /// Waiting deliveries by id (ids increase, so each pair's oldest comes first).
    rows: BTreeMap<u64, Row>,
    /// Each pair's waiting ids, oldest first.
    pairs: HashMap<PairKey, std::collections::VecDeque<u64>>,
    dead: std::collections::VecDeque<Delivery>,
}

#[derive(Debug)]
struct Row {
    delivery: Delivery,
    lease_until_ms: i64,
}

/// An in-memory [`PushOutbox`] (lost on restart), keeping at most `max_dead` dead deliveries.
///
/// It holds at most [`max_pending`](Self::with_max_pending) waiting deliveries (default
/// [`DEFAULT_MAX_PENDING`]): that is its bound, not a queue that drops. A write that would
/// pass it is refused whole with [`StoreError::OutboxFull`] — by
/// [`enqueue`](PushOutbox::enqueue), and by an [`InMemoryTaskStore`](super::InMemoryTaskStore)
/// linked to it ([`with_push_outbox`](super::InMemoryTaskStore::with_push_outbox)), whose
/// event is then not stored either (the agent's publish fails with Unavailable, to retry
/// later); [`refused`](Self::refused) counts them.
#[derive(Debug)]
pub struct InMemoryPushOutbox {
    state: Mutex<State>,
    max_dead: usize,
    max_pending: usize,
    refused: std::sync::atomic::AtomicU64,
}

/// Waiting deliveries an [`InMemoryPushOutbox`] holds at most by default.
pub const DEFAULT_MAX_PENDING: usize = 100_000;

impl Default for InMemoryPushOutbox {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryPushOutbox {
    /// An empty outbox keeping the last 1,000 dead deliveries.
    pub fn new() -> Self {
        Self::with_max_dead(1_000)
    }

    /// An empty outbox keeping the last `max_dead` dead deliveries.
    pub fn with_max_dead(max_dead: usize) -> Self {
        Self {
            state: Mutex::new(State {
                next_id: 1,
                ..State::default()
            }),
            max_dead,
            max_pending: DEFAULT_MAX_PENDING,
            refused: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Holds at most `max` waiting deliveries (default [`DEFAULT_MAX_PENDING`]; at least 1):
    /// beyond, writes are refused with [`StoreError::OutboxFull`].
    pub fn with_max_pending(mut self, max: usize) -> Self {
        self.max_pending = max.max(1);
        self
    }

    /// How many writes were refused because the outbox was full.
    pub fn refused(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Refuses (and counts) a write of `n` deliveries that would pass the bound.
    pub(crate) fn check_room(&self, st: &State, n: usize) -> Result<(), StoreError> {
        if st.rows.len().saturating_add(n) > self.max_pending {
            self.refused
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            #[cfg(feature = "metrics")]
            metrics::counter!("a2a_push_outbox_refused_total").increment(1);
            tracing::warn!(
                max_pending = self.max_pending,
                "push outbox full; the write is refused"
            );
            return Err(StoreError::OutboxFull(self.max_pending));
        }
        Ok(())
    }

    /// Appends `deliveries` (room checked), due at `now_ms`; returns their ids.
    pub(crate) fn append(
        st: &mut State,
        deliveries: impl IntoIterator<Item = NewDelivery>,
        now_ms: i64,
    ) -> Vec<u64> {
        let mut ids = Vec::new();
        for new in deliveries {
            let id = st.next_id;
            st.next_id += 1;
            let key = (
                new.scope.clone(),
                new.task_id.clone(),
                new.config_id.clone(),
            );
            st.pairs.entry(key).or_default().push_back(id);
            st.rows.insert(
                id,
                Row {
                    delivery: Delivery {
                        id,
                        new,
                        attempts: 0,
                        enqueued_at_ms: now_ms,
                        next_attempt_ms: now_ms,
                        last_error: String::new(),
                    },
                    lease_until_ms: i64::MIN,
                },
            );
            ids.push(id);
        }
        ids
    }

    /// Takes row `id` out of the queue.
    fn remove(st: &mut State, id: u64) -> Option<Delivery> {
        let row = st.rows.remove(&id)?;
        let d = &row.delivery.new;
        let key = (d.scope.clone(), d.task_id.clone(), d.config_id.clone());
        if let Some(q) = st.pairs.get_mut(&key) {
            q.retain(|x| *x != id);
            if q.is_empty() {
                st.pairs.remove(&key);
            }
        }
        Some(row.delivery)
    }
}

#[async_trait::async_trait]
impl PushOutbox for InMemoryPushOutbox {
    async fn enqueue(
        &self,
        deliveries: Vec<NewDelivery>,
        now_ms: i64,
    ) -> Result<Vec<u64>, StoreError> {
        let mut st = self.lock();
        self.check_room(&st, deliveries.len())?;
        Ok(Self::append(&mut st, deliveries, now_ms))
    }

    async fn claim(
        &self,
        _owner: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError> {
        let mut st = self.lock();
        let heads: Vec<u64> = st
            .pairs
            .values()
            .filter_map(|q| q.front().copied())
            .collect();
        let mut claimed = Vec::new();
        let mut heads = heads;
        // Earliest due first, then oldest (as the SQL outboxes claim), so that a backlog
        // drains fairly.
        heads.sort_unstable_by_key(|id| {
            st.rows
                .get(id)
                .map_or((i64::MAX, *id), |r| (r.delivery.next_attempt_ms, *id))
        });
        for id in heads {
            if claimed.len() >= limit {
                break;
            }
            let Some(row) = st.rows.get_mut(&id) else {
                continue;
            };
            if row.delivery.next_attempt_ms > now_ms || row.lease_until_ms > now_ms {
                continue;
            }
            row.lease_until_ms = lease_until_ms;
            row.delivery.attempts += 1;
            claimed.push(row.delivery.clone());
        }
        Ok(claimed)
    }

    async fn complete(&self, id: u64) -> Result<(), StoreError> {
        Self::remove(&mut self.lock(), id);
        Ok(())
    }

    async fn retry_at(&self, id: u64, at_ms: i64, error: &str) -> Result<(), StoreError> {
        let mut st = self.lock();
        if let Some(row) = st.rows.get_mut(&id) {
            row.delivery.next_attempt_ms = at_ms;
            row.delivery.last_error = error.to_owned();
            row.lease_until_ms = i64::MIN;
        }
        Ok(())
    }

    async fn dead(&self, id: u64, error: &str) -> Result<(), StoreError> {
        let mut st = self.lock();
        if let Some(mut d) = Self::remove(&mut st, id) {
            d.last_error = error.to_owned();
            st.dead.push_front(d);
            st.dead.truncate(self.max_dead);
        }
        Ok(())
    }

    async fn list_dead(&self, limit: usize) -> Result<Vec<Delivery>, StoreError> {
        Ok(self.lock().dead.iter().take(limit).cloned().collect())
    }

    async fn pending(&self) -> Result<usize, StoreError> {
        Ok(self.lock().rows.len())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn new(task: &str, config: &str, seq: u64) -> NewDelivery {
        NewDelivery {
            scope: Scope::new("", "me"),
            task_id: task.into(),
            config_id: config.into(),
            seq,
            payload: bytes::Bytes::from_static(b"{}"),
        }
    }

    #[tokio::test]
    async fn one_pair_goes_out_in_order_one_at_a_time_and_pairs_do_not_wait_for_each_other() {
        let o = InMemoryPushOutbox::new();
        o.enqueue(
            vec![new("t", "a", 1), new("t", "a", 2), new("t", "b", 1)],
            0,
        )
        .await
        .unwrap();
        let first = o.claim("me", 0, 100, 10).await.unwrap();
        let seqs: Vec<_> = first
            .iter()
            .map(|d| (d.new.config_id.to_string(), d.new.seq))
            .collect();
        assert_eq!(seqs, [("a".to_owned(), 1), ("b".to_owned(), 1)]);
        assert!(
            o.claim("other", 50, 150, 10).await.unwrap().is_empty(),
            "leased heads are nobody else's"
        );
        o.retry_at(first[0].id, 200, "500").await.unwrap();
        o.complete(first[1].id).await.unwrap();
        assert!(
            o.claim("me", 150, 250, 10).await.unwrap().is_empty(),
            "a retried head holds its pair back until due"
        );
        let again = o.claim("me", 200, 300, 10).await.unwrap();
        assert_eq!((again[0].new.seq, again[0].attempts), (1, 2));
        assert_eq!(again[0].last_error, "500");
        o.dead(again[0].id, "gave up").await.unwrap();
        let next = o.claim("me", 200, 300, 10).await.unwrap();
        assert_eq!(next[0].new.seq, 2);
        assert_eq!(o.list_dead(10).await.unwrap()[0].last_error, "gave up");
        assert_eq!(o.pending().await.unwrap(), 1);
    }

    #[tokio::test]
    async fn an_expired_lease_is_claimed_again_and_dead_ones_are_bounded() {
        let o = InMemoryPushOutbox::with_max_dead(2);
        let ids = o
            .enqueue(
                vec![new("t", "a", 1), new("u", "a", 1), new("v", "a", 1)],
                0,
            )
            .await
            .unwrap();
        assert_eq!(o.claim("crashed", 0, 10, 1).await.unwrap().len(), 1);
        let after = o.claim("me", 10, 20, 10).await.unwrap();
        assert_eq!(after.len(), 3, "the expired lease is free again");
        for id in ids {
            o.dead(id, "x").await.unwrap();
        }
        assert_eq!(o.list_dead(10).await.unwrap().len(), 2);
    }
}
