//! [`Ledger`]: what each caller holds and may still take, in two bounded tables (principals
//! and tenants) under one lock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Limit, QuotaUsage, Quotas, Rate, Share, refused};
use crate::error::A2aError;
use crate::types::TaskId;

/// A principal in a tenant, as the quotas tell callers apart.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CallerKey {
    pub(crate) tenant: String,
    /// The principal's id; for an unauthenticated caller, its address (see
    /// [`Pipeline`](crate::service::Pipeline)).
    pub(crate) principal: String,
}

/// What a request asks of the quotas besides its token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ask {
    /// It may create a task (a message without a task id).
    pub(crate) new_task: bool,
    /// It opens a stream.
    pub(crate) stream: bool,
    /// Its tenant admitted its principal (a caller refused by the authorizer runs as nobody:
    /// it does not take from the tenant's share).
    pub(crate) tenant: bool,
}

/// What [`Ledger::admit`] decided.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Taken: the request may run.
    Admitted,
    /// The principal is at its live-task limit: these tasks are to be looked up, the ended
    /// ones [forgotten](Ledger::ended), and the request admitted again (without a recheck).
    Recheck(Vec<TaskId>),
}

/// A token bucket.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(rate: Rate, now: Instant) -> Self {
        Self {
            tokens: f64::from(rate.burst),
            at: now,
        }
    }

    /// The tokens at `now` (without changing the bucket).
    fn tokens_at(&self, rate: Rate, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        (self.tokens + elapsed * f64::from(rate.per_second)).min(f64::from(rate.burst))
    }

    fn refill(&mut self, rate: Rate, now: Instant) {
        self.tokens = self.tokens_at(rate, now);
        self.at = self.at.max(now);
    }

    /// How long until the next token.
    fn wait(&self, rate: Rate) -> Duration {
        if rate.per_second == 0 {
            // Never refilled: a long wait, as Retry-After says it.
            return Duration::from_secs(3_600);
        }
        Duration::from_secs_f64(((1.0 - self.tokens).max(0.0)) / f64::from(rate.per_second))
    }
}

/// What one caller (a principal, or a tenant) holds.
#[derive(Debug, Default)]
struct Account {
    bucket: Option<Bucket>,
    streams: usize,
    /// New tasks whose outcome is not known yet (principals).
    pending: usize,
    /// The live tasks it created, by id (principals).
    live: Vec<TaskId>,
    /// Until when each new task whose request went away counts (principals).
    unsettled: Vec<Instant>,
    /// The tasks its principals hold, in every form (tenants).
    tasks: usize,
    /// No recheck of `live` before this.
    recheck_after: Option<Instant>,
}

impl Account {
    fn held_tasks(&self) -> usize {
        self.pending + self.live.len() + self.unsettled.len() + self.tasks
    }

    /// Nothing held and a full bucket: forgetting it changes nothing.
    fn idle(&self, share: &Share, now: Instant) -> bool {
        self.held_tasks() == 0
            && self.streams == 0
            && match (&self.bucket, share.rate) {
                (Some(b), Some(rate)) => b.tokens_at(rate, now) >= f64::from(rate.burst),
                _ => true,
            }
    }

    /// Takes the rate's token, or tells how long to wait for it.
    fn check_rate(&mut self, share: &Share, now: Instant) -> Result<(), Duration> {
        let Some(rate) = share.rate else {
            return Ok(());
        };
        let bucket = self.bucket.get_or_insert_with(|| Bucket::full(rate, now));
        bucket.refill(rate, now);
        if bucket.tokens >= 1.0 {
            Ok(())
        } else {
            Err(bucket.wait(rate))
        }
    }

    fn take_token(&mut self) {
        if let Some(b) = &mut self.bucket {
            b.tokens -= 1.0;
        }
    }
}

/// The two tables.
#[derive(Debug, Default)]
struct Tables {
    principals: HashMap<CallerKey, Account>,
    tenants: HashMap<String, Account>,
}

/// What the callers hold, and what was refused.
#[derive(Debug)]
pub(crate) struct Ledger {
    quotas: Quotas,
    tables: Mutex<Tables>,
    principal_refusals: [AtomicU64; 4],
    tenant_refusals: [AtomicU64; 4],
}

/// The account of `key` in `table`, made when there is room (after forgetting the idle ones
/// when the table is full); `None` when the table is full of active callers.
fn account<'a, K: Clone + Eq + std::hash::Hash>(
    table: &'a mut HashMap<K, Account>,
    key: &K,
    max: usize,
    share: &Share,
    now: Instant,
) -> Option<&'a mut Account> {
    if !table.contains_key(key) {
        if table.len() >= max {
            table.retain(|_, a| !a.idle(share, now));
        }
        if table.len() >= max {
            return None;
        }
        table.insert(key.clone(), Account::default());
    }
    table.get_mut(key)
}

impl Ledger {
    pub(crate) fn new(quotas: Quotas) -> Self {
        Self {
            quotas,
            tables: Mutex::default(),
            principal_refusals: Default::default(),
            tenant_refusals: Default::default(),
        }
    }

    /// Whether new tasks are counted: only under a live-task limit (without one, nothing
    /// would bound the ids kept).
    pub(crate) fn tracks_tasks(&self) -> bool {
        self.quotas.principal.live_tasks.is_some() || self.quotas.tenant.live_tasks.is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The refusal of a request by `limit`, counted.
    fn refuse(&self, limit: Limit, tenant: bool, wait: Duration) -> A2aError {
        let counters = if tenant {
            &self.tenant_refusals
        } else {
            &self.principal_refusals
        };
        counters[limit.index()].fetch_add(1, Ordering::Relaxed);
        refused(limit, tenant, wait)
    }

    /// Admits a request of `key` asking for `ask`, taking what it needs; or refuses it, taking
    /// nothing. With `may_recheck`, a principal at its live-task limit first gets its tasks
    /// to look up ([`Verdict::Recheck`]), at most once per [`Quotas::recheck_every`].
    pub(crate) fn admit(
        &self,
        key: &CallerKey,
        ask: Ask,
        may_recheck: bool,
    ) -> Result<Verdict, A2aError> {
        let q = &self.quotas;
        let now = q.now();
        let mut guard = self.lock();
        let Tables {
            principals,
            tenants,
        } = &mut *guard;
        let Some(p) = account(principals, key, q.max_principals, &q.principal, now) else {
            return Err(self.refuse(Limit::Callers, false, q.recheck_every));
        };
        let released = expire(p, now);
        let mut t = if ask.tenant {
            let Some(t) = account(tenants, &key.tenant, q.max_tenants, &q.tenant, now) else {
                return Err(self.refuse(Limit::Callers, true, q.recheck_every));
            };
            t.tasks = t.tasks.saturating_sub(released);
            Some(t)
        } else {
            None
        };
        if let Err(wait) = p.check_rate(&q.principal, now) {
            return Err(self.refuse(Limit::Rate, false, wait));
        }
        if let Some(t) = t.as_deref_mut()
            && let Err(wait) = t.check_rate(&q.tenant, now)
        {
            return Err(self.refuse(Limit::Rate, true, wait));
        }
        if ask.stream {
            if q.principal.open_streams.is_some_and(|max| p.streams >= max) {
                return Err(self.refuse(Limit::OpenStreams, false, q.recheck_every));
            }
            if let Some(t) = t.as_deref()
                && q.tenant.open_streams.is_some_and(|max| t.streams >= max)
            {
                return Err(self.refuse(Limit::OpenStreams, true, q.recheck_every));
            }
        }
        if ask.new_task {
            let principal_full = q
                .principal
                .live_tasks
                .is_some_and(|max| p.held_tasks() >= max);
            let tenant_full = t
                .as_deref()
                .is_some_and(|t| q.tenant.live_tasks.is_some_and(|max| t.held_tasks() >= max));
            if principal_full || tenant_full {
                // Its own tasks may have ended unseen: looked up first (a tenant full of
                // others' tasks frees what this principal's held).
                let due = p.recheck_after.is_none_or(|after| now >= after);
                if may_recheck && due && !p.live.is_empty() {
                    p.recheck_after = Some(now + q.recheck_every);
                    return Ok(Verdict::Recheck(p.live.clone()));
                }
                let wait = p.recheck_after.map_or(q.recheck_every, |after| {
                    after.saturating_duration_since(now)
                });
                return Err(self.refuse(Limit::LiveTasks, !principal_full, wait));
            }
        }
        // Admitted: take what it asked for.
        p.take_token();
        if ask.stream {
            p.streams += 1;
        }
        if ask.new_task {
            p.pending += 1;
        }
        if let Some(t) = t {
            t.take_token();
            if ask.stream {
                t.streams += 1;
            }
            if ask.new_task {
                t.tasks += 1;
            }
        }
        Ok(Verdict::Admitted)
    }

    /// The new task of a request of `key` is known: live as `id`, or never created or already
    /// ended (`None`).
    pub(crate) fn settle(&self, key: &CallerKey, id: Option<TaskId>) {
        let mut guard = self.lock();
        let Tables {
            principals,
            tenants,
        } = &mut *guard;
        let Some(p) = principals.get_mut(key) else {
            return;
        };
        p.pending = p.pending.saturating_sub(1);
        match id {
            Some(id) if !p.live.contains(&id) => p.live.push(id),
            _ => {
                if let Some(t) = tenants.get_mut(&key.tenant) {
                    t.tasks = t.tasks.saturating_sub(1);
                }
            }
        }
    }

    /// The request of `key` for a new task went away before its outcome was known: the task
    /// counts for [`Quotas::unsettled_hold`].
    pub(crate) fn unsettle(&self, key: &CallerKey) {
        let until = self.quotas.now() + self.quotas.unsettled_hold;
        let mut guard = self.lock();
        if let Some(p) = guard.principals.get_mut(key) {
            p.pending = p.pending.saturating_sub(1);
            p.unsettled.push(until);
        }
    }

    /// These tasks of `key` ended (or are gone): their slots are free.
    pub(crate) fn ended(&self, key: &CallerKey, ids: &[TaskId]) {
        let mut guard = self.lock();
        let Tables {
            principals,
            tenants,
        } = &mut *guard;
        let Some(p) = principals.get_mut(key) else {
            return;
        };
        let before = p.live.len();
        p.live.retain(|id| !ids.contains(id));
        let freed = before - p.live.len();
        if freed > 0 {
            p.recheck_after = None;
            if let Some(t) = tenants.get_mut(&key.tenant) {
                t.tasks = t.tasks.saturating_sub(freed);
            }
        }
    }

    /// A stream of `key` closed (`tenant`: it took from the tenant's share).
    pub(crate) fn close_stream(&self, key: &CallerKey, tenant: bool) {
        let mut guard = self.lock();
        let Tables {
            principals,
            tenants,
        } = &mut *guard;
        if let Some(p) = principals.get_mut(key) {
            p.streams = p.streams.saturating_sub(1);
        }
        if tenant && let Some(t) = tenants.get_mut(&key.tenant) {
            t.streams = t.streams.saturating_sub(1);
        }
    }

    /// What the quotas hold now and refused so far.
    pub(crate) fn usage(&self) -> QuotaUsage {
        let guard = self.lock();
        let load = |c: &[AtomicU64; 4]| std::array::from_fn(|i| c[i].load(Ordering::Relaxed));
        QuotaUsage {
            principals: guard.principals.len(),
            tenants: guard.tenants.len(),
            live_tasks: guard.principals.values().map(Account::held_tasks).sum(),
            open_streams: guard.principals.values().map(|a| a.streams).sum(),
            principal_refusals: load(&self.principal_refusals),
            tenant_refusals: load(&self.tenant_refusals),
        }
    }
}

/// Drops the holds of `p` that are over at `now`; how many.
fn expire(p: &mut Account, now: Instant) -> usize {
    let before = p.unsettled.len();
    p.unsettled.retain(|until| *until > now);
    before - p.unsettled.len()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;

    /// A clock the test moves.
    fn clock() -> (
        Arc<Mutex<Instant>>,
        impl Fn() -> Instant + Send + Sync + 'static,
    ) {
        let now = Arc::new(Mutex::new(Instant::now()));
        let read = now.clone();
        (now, move || *read.lock().unwrap())
    }

    fn key(tenant: &str, principal: &str) -> CallerKey {
        CallerKey {
            tenant: tenant.into(),
            principal: principal.into(),
        }
    }

    const PLAIN: Ask = Ask {
        new_task: false,
        stream: false,
        tenant: true,
    };

    #[test]
    fn a_bucket_refuses_past_its_burst_and_refills_with_the_clock() {
        let (now, read) = clock();
        let mut q = Quotas::unlimited().clock(read);
        q.principal.rate = Some(Rate {
            per_second: 2,
            burst: 3,
        });
        let ledger = Ledger::new(q);
        let alice = key("", "alice");
        for _ in 0..3 {
            assert_eq!(ledger.admit(&alice, PLAIN, true), Ok(Verdict::Admitted));
        }
        let err = ledger.admit(&alice, PLAIN, true).unwrap_err();
        assert!(
            matches!(&err, A2aError::QuotaExceeded { retry_after_secs: 1, quota } if quota.contains("rate of the principal")),
            "{err:?}"
        );
        // Another principal is not affected.
        assert_eq!(
            ledger.admit(&key("", "bob"), PLAIN, true),
            Ok(Verdict::Admitted)
        );
        // Half a second: one token.
        *now.lock().unwrap() += Duration::from_millis(500);
        assert_eq!(ledger.admit(&alice, PLAIN, true), Ok(Verdict::Admitted));
        assert!(ledger.admit(&alice, PLAIN, true).is_err());
        assert_eq!(ledger.usage().refusals(Limit::Rate), (2, 0));
    }

    #[test]
    fn live_tasks_are_held_until_they_end_and_rechecked_at_the_limit() {
        let (now, read) = clock();
        let mut q = Quotas::unlimited().clock(read);
        q.principal.live_tasks = Some(2);
        q.tenant.live_tasks = Some(3);
        let ledger = Ledger::new(q);
        let new = Ask {
            new_task: true,
            ..PLAIN
        };
        let alice = key("acme", "alice");
        for id in ["t1", "t2"] {
            assert_eq!(ledger.admit(&alice, new, true), Ok(Verdict::Admitted));
            ledger.settle(&alice, Some(TaskId::from(id)));
        }
        // At the limit: first the tasks to look up, then (nothing ended) a refusal.
        assert_eq!(
            ledger.admit(&alice, new, true),
            Ok(Verdict::Recheck(vec![
                TaskId::from("t1"),
                TaskId::from("t2")
            ]))
        );
        assert!(ledger.admit(&alice, new, false).is_err());
        // Not again before recheck_every.
        assert!(ledger.admit(&alice, new, true).is_err());
        // A second principal of the tenant: one slot left in the tenant.
        let bob = key("acme", "bob");
        assert_eq!(ledger.admit(&bob, new, true), Ok(Verdict::Admitted));
        let err = ledger.admit(&bob, new, true).unwrap_err();
        assert!(
            err.to_string().contains("live tasks of the tenant"),
            "{err}"
        );
        // The request went away: its task holds a slot until the hold is over.
        ledger.unsettle(&bob);
        assert!(ledger.admit(&bob, new, true).is_err());
        *now.lock().unwrap() += Duration::from_secs(3_601);
        assert_eq!(ledger.admit(&bob, new, true), Ok(Verdict::Admitted));
        ledger.settle(&bob, None);
        // Another tenant is not affected.
        assert_eq!(
            ledger.admit(&key("globex", "carol"), new, true),
            Ok(Verdict::Admitted)
        );
        // A task of alice ends: its slot is free.
        ledger.ended(&alice, &[TaskId::from("t1")]);
        assert_eq!(ledger.admit(&alice, new, true), Ok(Verdict::Admitted));
        assert_eq!(ledger.usage().live_tasks, 3, "{:?}", ledger.usage());
    }

    #[test]
    fn a_full_tenant_has_the_asking_principals_tasks_looked_up() {
        let (_, read) = clock();
        let mut q = Quotas::unlimited().clock(read);
        q.principal.live_tasks = Some(5);
        q.tenant.live_tasks = Some(2);
        let ledger = Ledger::new(q);
        let new = Ask {
            new_task: true,
            ..PLAIN
        };
        let (alice, bob) = (key("acme", "alice"), key("acme", "bob"));
        for id in ["a1", "a2"] {
            assert_eq!(ledger.admit(&alice, new, true), Ok(Verdict::Admitted));
            ledger.settle(&alice, Some(TaskId::from(id)));
        }
        // Bob holds nothing to look up: refused by the tenant's share.
        let err = ledger.admit(&bob, new, true).unwrap_err();
        assert!(
            err.to_string().contains("live tasks of the tenant"),
            "{err}"
        );
        // Alice's own tasks are looked up; one ended: admitted.
        assert_eq!(
            ledger.admit(&alice, new, true),
            Ok(Verdict::Recheck(vec![
                TaskId::from("a1"),
                TaskId::from("a2")
            ]))
        );
        ledger.ended(&alice, &[TaskId::from("a1")]);
        assert_eq!(ledger.admit(&alice, new, false), Ok(Verdict::Admitted));
    }

    #[test]
    fn without_a_live_task_limit_no_task_is_kept() {
        let mut q = Quotas::unlimited();
        q.principal.rate = Some(Rate {
            per_second: 1,
            burst: 1,
        });
        assert!(!Ledger::new(q.clone()).tracks_tasks());
        q.tenant.live_tasks = Some(1);
        assert!(Ledger::new(q).tracks_tasks());
    }

    #[test]
    fn streams_are_counted_until_closed() {
        let (_, read) = clock();
        let mut q = Quotas::unlimited().clock(read);
        q.principal.open_streams = Some(1);
        let ledger = Ledger::new(q);
        let stream = Ask {
            stream: true,
            ..PLAIN
        };
        let alice = key("", "alice");
        assert_eq!(ledger.admit(&alice, stream, true), Ok(Verdict::Admitted));
        assert!(ledger.admit(&alice, stream, true).is_err());
        assert_eq!(ledger.admit(&alice, PLAIN, true), Ok(Verdict::Admitted));
        ledger.close_stream(&alice, true);
        assert_eq!(ledger.admit(&alice, stream, true), Ok(Verdict::Admitted));
        assert_eq!(ledger.usage().open_streams, 1);
    }

    #[test]
    fn the_tables_are_bounded_and_forget_idle_callers() {
        let (now, read) = clock();
        let mut q = Quotas::unlimited().clock(read);
        q.max_principals = 100;
        q.max_tenants = 10;
        q.principal.open_streams = Some(5);
        q.principal.rate = Some(Rate {
            per_second: 1,
            burst: 1,
        });
        let ledger = Ledger::new(q);
        let stream = Ask {
            stream: true,
            ..PLAIN
        };
        // 100 principals each holding a stream fill the table: the 101st is refused.
        for i in 0..100 {
            let k = key("", &format!("p{i}"));
            assert_eq!(ledger.admit(&k, stream, true), Ok(Verdict::Admitted));
        }
        let err = ledger.admit(&key("", "late"), PLAIN, true).unwrap_err();
        assert!(
            err.to_string().contains("principals this server tracks"),
            "{err}"
        );
        // Their streams close and their buckets refill: they are forgotten for newcomers.
        for i in 0..100 {
            ledger.close_stream(&key("", &format!("p{i}")), true);
        }
        *now.lock().unwrap() += Duration::from_secs(2);
        for i in 0..10_000 {
            let k = key("", &format!("n{i}"));
            assert_eq!(ledger.admit(&k, PLAIN, true), Ok(Verdict::Admitted));
            *now.lock().unwrap() += Duration::from_secs(1);
        }
        let usage = ledger.usage();
        assert!(usage.principals <= 100, "{usage:?}");
        // Tenants too: ten of them, then refusals while all are busy.
        for i in 0..10 {
            let k = key(&format!("t{i}"), "p");
            assert_eq!(ledger.admit(&k, stream, true), Ok(Verdict::Admitted));
        }
        let err = ledger.admit(&key("t10", "p"), PLAIN, true).unwrap_err();
        assert!(
            err.to_string().contains("tenants this server tracks"),
            "{err}"
        );
        assert_eq!(ledger.usage().refusals(Limit::Callers), (1, 1));
    }
}
