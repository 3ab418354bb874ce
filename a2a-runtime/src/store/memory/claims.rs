//! The message claims of idempotent sends, in memory: which message id (per scope) started
//! which task, bounded by count (the oldest claim goes first) and by age (the window the
//! runtime asks for).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use crate::store::Scope;
use crate::types::{MessageId, TaskId, Timestamp};

/// The most message claims an [`InMemoryTaskStore`](super::InMemoryTaskStore) holds by
/// default.
pub const DEFAULT_MAX_CLAIMS: usize = 10_000;

type Key = (Scope, String);

#[derive(Debug, Default)]
struct Inner {
    /// The task of each claimed message id, and when it was claimed (ms).
    held: HashMap<Key, (TaskId, i64)>,
    /// Claims in the order they were made (an entry whose time differs from `held`'s was
    /// replaced since, and is skipped).
    order: VecDeque<(Key, i64)>,
}

/// Bounded claims, behind one lock.
#[derive(Debug)]
pub(super) struct Claims {
    inner: Mutex<Inner>,
    pub(super) max: usize,
}

impl Default for Claims {
    fn default() -> Self {
        Self {
            inner: Mutex::default(),
            max: DEFAULT_MAX_CLAIMS,
        }
    }
}

impl Claims {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every operation leaves the maps consistent before it could panic.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// See [`TaskStore::claim_message`](crate::store::TaskStore::claim_message); `now` is the
    /// claim's time (ms).
    pub(super) fn claim(
        &self,
        scope: &Scope,
        message_id: &MessageId,
        task_id: &TaskId,
        since: Timestamp,
        now: i64,
    ) -> Option<TaskId> {
        let mut inner = self.lock();
        let key = (scope.clone(), message_id.as_str().to_owned());
        if let Some((held, at)) = inner.held.get(&key)
            && *at >= since.millis()
        {
            return Some(held.clone());
        }
        inner.held.insert(key.clone(), (task_id.clone(), now));
        inner.order.push_back((key, now));
        while inner.held.len() > self.max.max(1) {
            if !pop_oldest(&mut inner) {
                break;
            }
        }
        // Stale entries of replaced claims: dropped when the queue reaches twice the bound.
        if inner.order.len() > 2 * self.max.max(1) {
            let Inner { held, order } = &mut *inner;
            order.retain(|(key, at)| held.get(key).is_some_and(|(_, held)| held == at));
        }
        None
    }

    /// See [`TaskStore::release_message_claim`](crate::store::TaskStore::release_message_claim).
    pub(super) fn release(&self, scope: &Scope, message_id: &MessageId, task_id: &TaskId) {
        let mut inner = self.lock();
        let key = (scope.clone(), message_id.as_str().to_owned());
        if inner
            .held
            .get(&key)
            .is_some_and(|(held, _)| held == task_id)
        {
            // Its entry in `order` is stale now, dropped as the others are.
            inner.held.remove(&key);
        }
    }

    /// See [`TaskStore::purge_claims`](crate::store::TaskStore::purge_claims).
    pub(super) fn purge(&self, before: Timestamp, keep: usize, limit: usize) -> usize {
        let mut inner = self.lock();
        let mut removed = 0;
        while removed < limit {
            let Some((key, at)) = inner.order.front() else {
                break;
            };
            let current = inner.held.get(key).is_some_and(|(_, held)| held == at);
            if current && *at >= before.millis() && inner.held.len() <= keep {
                break;
            }
            if current {
                removed += 1;
            }
            pop_oldest(&mut inner);
        }
        removed
    }

    /// The number of claims held.
    pub(super) fn len(&self) -> usize {
        self.lock().held.len()
    }
}

/// Removes the oldest claim (or a stale entry); false when there is none.
fn pop_oldest(inner: &mut Inner) -> bool {
    let Some((key, at)) = inner.order.pop_front() else {
        return false;
    };
    if inner.held.get(&key).is_some_and(|(_, held)| *held == at) {
        inner.held.remove(&key);
    }
    true
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ts(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms).unwrap()
    }

    #[test]
    fn a_claim_holds_within_the_window_and_is_taken_over_after_it() {
        let claims = Claims::default();
        let scope = Scope::new("t", "alice");
        let m = MessageId::from("m1");
        assert_eq!(claims.claim(&scope, &m, &"a".into(), ts(0), 1_000), None);
        // Within the window: the first task.
        assert_eq!(
            claims.claim(&scope, &m, &"b".into(), ts(500), 2_000),
            Some(TaskId::from("a"))
        );
        // Another principal, another tenant: their own claims.
        assert_eq!(
            claims.claim(&Scope::new("t", "bob"), &m, &"c".into(), ts(0), 2_000),
            None
        );
        assert_eq!(
            claims.claim(&Scope::new("u", "alice"), &m, &"d".into(), ts(0), 2_000),
            None
        );
        // Past the window: a new task.
        assert_eq!(
            claims.claim(&scope, &m, &"e".into(), ts(1_500), 3_000),
            None
        );
        assert_eq!(
            claims.claim(&scope, &m, &"f".into(), ts(1_500), 3_001),
            Some(TaskId::from("e"))
        );
        assert_eq!(claims.len(), 3);
    }

    #[test]
    fn claims_are_bounded_by_count_and_purged_by_age_and_count() {
        let claims = Claims {
            max: 100,
            ..Claims::default()
        };
        let scope = Scope::new("", "anon");
        for i in 0..1_000 {
            let m = MessageId::from(format!("m{i}"));
            assert_eq!(claims.claim(&scope, &m, &"t".into(), ts(0), i), None);
            assert!(claims.len() <= 100);
        }
        assert_eq!(claims.len(), 100);
        // The newest are held, the oldest went.
        let newest = MessageId::from("m999");
        assert!(
            claims
                .claim(&scope, &newest, &"x".into(), ts(0), 2_000)
                .is_some()
        );
        assert!(
            claims
                .claim(&scope, &"m0".into(), &"x".into(), ts(0), 2_000)
                .is_none()
        );
        // Replacing one claim over and over keeps the queue bounded too.
        for i in 0..1_000 {
            claims.claim(&scope, &newest, &"y".into(), ts(3_000 + i), 3_000 + i);
            assert!(claims.lock().order.len() <= 200);
        }
        // By count: down to 10, at most 50 a call.
        assert_eq!(claims.purge(ts(0), 10, 50), 50);
        assert_eq!(claims.purge(ts(0), 10, 1_000), 40);
        assert_eq!(claims.len(), 10);
        // By age: everything claimed before 3,999 ms.
        claims.purge(ts(3_999), 1_000, 1_000);
        assert_eq!(claims.len(), 1);
    }
}
