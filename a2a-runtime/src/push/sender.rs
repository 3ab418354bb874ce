//! [`PushSender`]: from task events to webhook calls, through the outbox.
//!
//! Two stages, neither of which can hold up an agent:
//! 1. The task store writes each logged event's deliveries into its outbox, in the event's
//!    own write (one per push config of the task, see
//!    [`TaskStore::push_outbox`](crate::store::TaskStore::push_outbox)); `dispatch`, called
//!    with the task locked once the write is done, only wakes the scheduler. Nothing waits in
//!    memory between the two: a delivery exists exactly when its event does.
//! 2. A scheduler claims due deliveries (the outbox hands out only the oldest of each
//!    (task, config), and only once it is settled) and runs each attempt as its own task, at
//!    most `concurrency` at once, each bounded by the timeout: a hanging receiver holds one
//!    slot for at most the timeout and delays only its own (task, config). Deliveries written
//!    by another instance, or whose wake-up was missed (a restart), are found by the poll.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher as _;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};
use tracing::Instrument as _;

use super::guard::{self, Blocked, GuardedDns};
use super::{PushConfig, validate};
use crate::core::PushDispatcher;
use crate::error::A2aError;
use crate::protocol::TraceContext;
use crate::store::{Delivery, PushConfigStore, PushOutbox, Scope, StoreError, now_ms};
use crate::types::{StreamResponse, TaskId, TaskPushNotificationConfig};

/// How long a registration waits for a host name to resolve before it accepts the config
/// unresolved (the sender checks the addresses again when it connects).
const RESOLVE_AT_REGISTRATION: Duration = Duration::from_secs(3);

/// Counters of a [`PushSender`] since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PushMetrics {
    /// Delivery attempts made.
    pub attempted: u64,
    /// Deliveries acknowledged by their receiver (2xx).
    pub delivered: u64,
    /// Failed attempts that will be retried.
    pub retried: u64,
    /// Deliveries given up on.
    pub dead: u64,
    /// Attempts refused by the URL guard at connect time.
    pub blocked: u64,
    /// Configs refused by the URL guard at registration.
    pub refused_configs: u64,
}

#[derive(Debug, Default)]
struct Counters {
    attempted: AtomicU64,
    delivered: AtomicU64,
    retried: AtomicU64,
    dead: AtomicU64,
    blocked: AtomicU64,
    refused_configs: AtomicU64,
}

impl Counters {
    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The sender's figures in the process's `metrics` recorder (feature `metrics`; the names
/// are listed in `server::metrics`).
mod exported {
    /// Adds one to the counter `name`.
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(super) fn count(name: &'static str) {
        #[cfg(feature = "metrics")]
        metrics::counter!(name).increment(1);
    }

    /// Records how long one call of a webhook took, and whether it was acknowledged.
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub(super) fn attempt_took(took: std::time::Duration, ok: bool) {
        #[cfg(feature = "metrics")]
        metrics::histogram!(
            "a2a_push_delivery_duration_seconds",
            "result" => if ok { "ok" } else { "error" }
        )
        .record(took.as_secs_f64());
    }
}

/// How many events' trace contexts are kept for their deliveries.
const TRACES_KEPT: usize = 4096;

/// The trace contexts of recent events, for their deliveries' `traceparent`: at most `cap`,
/// the oldest forgotten first (a delivery of a forgotten event, or one resumed after a restart,
/// is sent without one).
#[derive(Debug)]
struct Traces {
    cap: usize,
    by_event: HashMap<(TaskId, u64), TraceContext>,
    order: VecDeque<(TaskId, u64)>,
}

impl Traces {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            by_event: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    fn remember(&mut self, task_id: &TaskId, seq: u64, tc: TraceContext) {
        let key = (task_id.clone(), seq);
        if self.by_event.insert(key.clone(), tc).is_none() {
            self.order.push_back(key);
        }
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.by_event.remove(&old);
            }
        }
    }

    fn get(&self, task_id: &TaskId, seq: u64) -> Option<TraceContext> {
        self.by_event.get(&(task_id.clone(), seq)).cloned()
    }
}

/// Sends push notifications: the [`PushDispatcher`] of a server built with
/// [`A2aServerBuilder::push`](crate::server::A2aServerBuilder::push).
pub struct PushSender {
    config: PushConfig,
    client: reqwest::Client,
    configs: Arc<dyn PushConfigStore>,
    outbox: Arc<dyn PushOutbox>,
    started: AtomicBool,
    wake: Notify,
    /// The earliest retry this instance scheduled (ms since the epoch; `i64::MAX`: none).
    next_retry_ms: AtomicI64,
    owner: String,
    counters: Counters,
    traces: Mutex<Traces>,
    me: std::sync::Weak<PushSender>,
}

impl std::fmt::Debug for PushSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushSender")
            .field("config", &self.config)
            .field("metrics", &self.metrics())
            .finish_non_exhaustive()
    }
}

/// Why an attempt failed.
enum Failure {
    /// Try again later.
    Retry(String),
    /// Give up now.
    Permanent(String),
    /// The URL guard refused the destination.
    Blocked(Blocked),
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl PushSender {
    /// A sender for the configs in `configs`, as `config` says, sending the deliveries that
    /// the task store writes into `outbox` (its
    /// [`push_outbox`](crate::store::TaskStore::push_outbox)). Fails when the HTTP client
    /// cannot be built (no TLS roots).
    pub fn new(
        config: PushConfig,
        configs: Arc<dyn PushConfigStore>,
        outbox: Arc<dyn PushOutbox>,
    ) -> Result<Arc<Self>, reqwest::Error> {
        let dns = GuardedDns {
            resolver: config.resolver.clone(),
            allow_private: config.allow_private_networks,
        };
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .dns_resolver(Arc::new(dns))
            .user_agent(concat!("a2a-runtime/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Arc::new_cyclic(|me| Self {
            config,
            client,
            configs,
            outbox,
            started: AtomicBool::new(false),
            wake: Notify::new(),
            next_retry_ms: AtomicI64::new(i64::MAX),
            owner: uuid::Uuid::new_v4().to_string(),
            counters: Counters::default(),
            traces: Mutex::new(Traces::new(TRACES_KEPT)),
            me: me.clone(),
        }))
    }

    /// Starts the background tasks on the current Tokio runtime, once (later calls do nothing).
    /// The server calls this when it is built inside a runtime and on the first event, so that
    /// deliveries left in a durable outbox resume.
    pub fn start(&self) {
        if self.started.load(Ordering::Acquire) {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        handle.spawn(schedule(self.me.clone()));
    }

    /// The counters so far.
    pub fn metrics(&self) -> PushMetrics {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PushMetrics {
            attempted: get(&c.attempted),
            delivered: get(&c.delivered),
            retried: get(&c.retried),
            dead: get(&c.dead),
            blocked: get(&c.blocked),
            refused_configs: get(&c.refused_configs),
        }
    }

    /// The most recent deliveries given up on, newest first (each with its last error).
    pub async fn dead_deliveries(&self, limit: usize) -> Result<Vec<Delivery>, StoreError> {
        self.outbox.list_dead(limit).await
    }

    /// The number of deliveries waiting in the outbox.
    pub async fn pending(&self) -> Result<usize, StoreError> {
        self.outbox.pending().await
    }

    /// Checks where `url` points (after [`validate::parse_url`]), without resolving it.
    fn check_destination(&self, url: &url::Url) -> Result<(), Blocked> {
        if self.config.allow_private_networks {
            return Ok(());
        }
        guard::check_port(url.port_or_known_default().unwrap_or(0))?;
        match url.host() {
            Some(url::Host::Ipv4(ip)) => guard::check_ip(ip.into()),
            Some(url::Host::Ipv6(ip)) => guard::check_ip(ip.into()),
            Some(url::Host::Domain(name)) => guard::check_host_name(name),
            None => Err(Blocked::Host {
                host: String::new(),
            }),
        }
    }

    /// Full jitter: a random wait up to the policy's ceiling for retry number `retry`.
    fn backoff(&self, retry: u32) -> Duration {
        let ceiling = self.config.retry.ceiling(retry);
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        if nanos == 0 {
            return Duration::ZERO;
        }
        let random = foldhash::fast::RandomState::default().hash_one(retry);
        Duration::from_nanos(random % (nanos + 1))
    }

    /// One attempt of `delivery`, settled in the outbox.
    async fn attempt(self: Arc<Self>, delivery: Delivery) {
        Counters::bump(&self.counters.attempted);
        let d = &delivery.new;
        let outcome = match self.configs.get(&d.scope, &d.task_id, &d.config_id).await {
            // The config was deleted: nothing is sent after a deletion.
            Ok(None) => {
                tracing::debug!("push config deleted; delivery dropped");
                self.settle(self.outbox.complete(delivery.id).await);
                return;
            }
            Ok(Some(config)) => {
                let started = std::time::Instant::now();
                let sent = self.send(&config, d.payload.clone()).await;
                exported::attempt_took(started.elapsed(), sent.is_ok());
                sent
            }
            Err(e) => Err(Failure::Retry(format!("push config store: {e}"))),
        };
        let outbox = &self.outbox;
        match outcome {
            Ok(()) => {
                Counters::bump(&self.counters.delivered);
                exported::count("a2a_push_sent_total");
                tracing::debug!("push notification delivered");
                self.settle(outbox.complete(delivery.id).await);
            }
            Err(Failure::Blocked(b)) => {
                Counters::bump(&self.counters.blocked);
                self.give_up(&delivery, &format!("blocked by the URL guard: {b}"))
                    .await;
            }
            Err(Failure::Permanent(e)) => self.give_up(&delivery, &e).await,
            Err(Failure::Retry(e)) => {
                let now = now_ms();
                let policy = &self.config.retry;
                let too_old = now.saturating_sub(delivery.enqueued_at_ms) >= millis(policy.max_age);
                if delivery.attempts >= policy.max_attempts || too_old {
                    let why = format!("gave up after {} attempts: {e}", delivery.attempts);
                    self.give_up(&delivery, &why).await;
                } else {
                    Counters::bump(&self.counters.retried);
                    exported::count("a2a_push_failed_total");
                    exported::count("a2a_push_retried_total");
                    let at = now.saturating_add(millis(self.backoff(delivery.attempts)));
                    tracing::info!(error = %e, retry_in_ms = at - now, "push notification failed; will retry");
                    self.next_retry_ms.fetch_min(at, Ordering::AcqRel);
                    self.settle(outbox.retry_at(delivery.id, at, &e).await);
                }
            }
        }
    }

    async fn give_up(&self, delivery: &Delivery, why: &str) {
        Counters::bump(&self.counters.dead);
        exported::count("a2a_push_failed_total");
        exported::count("a2a_push_dead_total");
        tracing::warn!(error = %why, attempts = delivery.attempts, "push notification dead");
        self.settle(self.outbox.dead(delivery.id, why).await);
    }

    /// Logs an outbox failure (the lease then expires and the delivery is tried again).
    fn settle(&self, result: Result<(), StoreError>) {
        if let Err(e) = result {
            tracing::error!(error = %e, "push outbox write failed");
        }
    }

    /// POSTs `payload` to `config`'s webhook.
    async fn send(
        &self,
        config: &TaskPushNotificationConfig,
        payload: bytes::Bytes,
    ) -> Result<(), Failure> {
        let url = validate::parse_url(&config.url).map_err(Failure::Permanent)?;
        self.check_destination(&url).map_err(Failure::Blocked)?;
        let mut request = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/a2a+json")
            .body(payload);
        if !config.token.is_empty() {
            request = request
                .header("A2A-Notification-Token", &config.token)
                .header("X-A2A-Notification-Token", &config.token);
        }
        if let Some(auth) = &config.authentication {
            let value = if auth.credentials.is_empty() {
                auth.scheme.clone()
            } else {
                format!("{} {}", auth.scheme, auth.credentials)
            };
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        // The trace of the request that produced the event.
        for (name, value) in crate::protocol::trace_headers() {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(|e| {
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
            while let Some(s) = source {
                if let Some(b) = s.downcast_ref::<Blocked>() {
                    return Failure::Blocked(b.clone());
                }
                source = s.source();
            }
            Failure::Retry(error_chain(&e))
        })?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else if status.is_redirection() {
            Err(Failure::Permanent(format!(
                "the receiver answered {status}; redirects are not followed"
            )))
        } else {
            Err(Failure::Retry(format!("the receiver answered {status}")))
        }
    }
}

/// An error with its causes, `: `-separated.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[async_trait::async_trait]
impl PushDispatcher for PushSender {
    async fn check(
        &self,
        config: &TaskPushNotificationConfig,
        prefix: &str,
    ) -> Result<(), A2aError> {
        self.start();
        let url = validate::validate(config, prefix)?;
        let refuse = |b: Blocked| {
            Counters::bump(&self.counters.refused_configs);
            A2aError::invalid_field(format!("{prefix}url"), b.to_string())
        };
        self.check_destination(&url).map_err(refuse)?;
        if self.config.allow_private_networks {
            return Ok(());
        }
        if let Some(url::Host::Domain(name)) = url.host() {
            let lookup = self.config.resolver.resolve(name);
            match tokio::time::timeout(RESOLVE_AT_REGISTRATION, lookup).await {
                Ok(Ok(ips)) => guard::check_resolved(name, &ips).map_err(refuse)?,
                // Not resolvable now: accepted; the sender checks what it resolves to later.
                Ok(Err(e)) => {
                    tracing::debug!(host = name, error = %e, "webhook host does not resolve yet")
                }
                Err(_) => tracing::debug!(host = name, "webhook host did not resolve in time"),
            }
        }
        Ok(())
    }

    fn dispatch(&self, _scope: &Scope, task_id: &TaskId, seq: u64, event: &StreamResponse) {
        // A direct message reply has no task to notify about (and is never logged).
        if matches!(event, StreamResponse::Message(_)) {
            return;
        }
        self.start();
        if let Some(tc) = TraceContext::outgoing() {
            self.traces
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remember(task_id, seq, tc);
        }
        // The store wrote the event's deliveries with it: they only need claiming.
        self.wake.notify_one();
    }
}

/// Stage 2: claims due deliveries and runs their attempts.
async fn schedule(sender: std::sync::Weak<PushSender>) {
    let slots = match sender.upgrade() {
        Some(s) => Arc::new(Semaphore::new(s.config.concurrency)),
        None => return,
    };
    loop {
        let Some(s) = sender.upgrade() else {
            return;
        };
        let free = slots.available_permits();
        let mut claimed = 0;
        if free > 0 {
            let now = now_ms();
            // The lease outlives the attempt (its timeout), with room for settling it.
            let lease = now.saturating_add(millis(s.config.lease_for()));
            // A retry time that has come is claimed now: forget it (a later one stays).
            let next = s.next_retry_ms.load(Ordering::Acquire);
            if next <= now {
                let _ = s.next_retry_ms.compare_exchange(
                    next,
                    i64::MAX,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
            }
            match s.outbox.claim(&s.owner, now, lease, free).await {
                Ok(batch) => {
                    claimed = batch.len();
                    for d in batch {
                        let Ok(permit) = slots.clone().acquire_owned().await else {
                            return;
                        };
                        let span = tracing::info_span!(
                            "push.attempt",
                            task_id = %d.new.task_id,
                            config_id = %d.new.config_id,
                            seq = d.new.seq,
                            attempt = d.attempts,
                        );
                        let trace = s
                            .traces
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get(&d.new.task_id, d.new.seq);
                        #[cfg(feature = "otel")]
                        if let Some(tc) = &trace {
                            crate::otel::set_remote_parent(&span, tc);
                        }
                        let s2 = s.clone();
                        let run = async move {
                            s2.clone().attempt(d).await;
                            drop(permit);
                            s2.wake.notify_one();
                        }
                        .instrument(span);
                        tokio::spawn(TraceContext::scope_of(trace, run));
                    }
                }
                Err(e) => tracing::error!(error = %e, "cannot claim push deliveries"),
            }
        }
        if claimed > 0 && claimed == free {
            continue;
        }
        let now = now_ms();
        let next = s.next_retry_ms.load(Ordering::Acquire);
        let poll = millis(s.config.poll_interval);
        let wait = next.saturating_sub(now).clamp(0, poll);
        let wait = Duration::from_millis(u64::try_from(wait).unwrap_or(0));
        let woken = async {
            s.wake.notified().await;
        };
        tokio::select! {
            () = woken => {}
            () = tokio::time::sleep(wait) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_trace_memo_keeps_the_newest_events_only() {
        let tc = TraceContext::parse(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            None,
        )
        .unwrap();
        let mut traces = Traces::new(3);
        let task = TaskId::from("t");
        for seq in 0..10 {
            traces.remember(&task, seq, tc.clone());
        }
        // The same event again does not take a second place.
        traces.remember(&task, 9, tc.clone());
        assert_eq!(traces.by_event.len(), 3);
        assert_eq!(traces.order.len(), 3);
        assert!(traces.get(&task, 6).is_none());
        for seq in 7..10 {
            assert_eq!(traces.get(&task, seq), Some(tc.clone()));
        }
    }
}
