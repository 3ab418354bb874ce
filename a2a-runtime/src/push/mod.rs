//! Push notifications: the webhook [`PushSender`], its retries through a
//! [`PushOutbox`](crate::store::PushOutbox), and the URL guard.
//!
//! Enable push on a server with [`A2aServerBuilder::push`](crate::server::A2aServerBuilder::push):
//!
//! ```
//! use a2a_runtime::push::PushConfig;
//! # use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
//! # struct Echo;
//! # impl AgentExecutor for Echo {
//! #     async fn execute(&self, _: AgentContext, e: EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
//! # }
//! let card = a2a_runtime::types::AgentCard { name: "Echo".into(), description: "Echoes".into(), version: "1.0.0".into(), ..Default::default() };
//! let server = a2a_runtime::server::A2aServer::builder()
//!     .card(card)
//!     .executor(Echo)
//!     .push(PushConfig::new())
//!     .build()
//!     .unwrap();
//! assert_eq!(server.card().capabilities.push_notifications, Some(true));
//! ```
//!
//! What is sent: every event of a task with push configs, as a subscriber to the task's stream
//! sees it (the task snapshot, status updates, artifact updates), to each config of the task, in
//! order per (task, config). Each notification is a `POST` of the event's StreamResponse JSON
//! (as the HTTP+JSON binding writes it) with `Content-Type: application/a2a+json`,
//! `Authorization: <scheme> <credentials>` when the config has `authentication`, and the
//! config's `token` in `A2A-Notification-Token` (and `X-A2A-Notification-Token`, the header
//! receivers written for the official SDKs read). A 2xx answer delivers it; redirects are not
//! followed (a 3xx gives up at once); anything else is retried with exponential backoff and
//! full jitter until [`RetryPolicy`] gives up, and the delivery is then dead: logged, counted,
//! and listed by [`PushSender::dead_deliveries`].
//!
//! What is sent is the task's event log: each event the task store logs (not the synthetic
//! snapshot that opens a new task's stream, which is no event of the log) goes to each config
//! the task has when it is logged.
//!
//! Deliveries wait in the task store's [`PushOutbox`](crate::store::PushOutbox)
//! ([`TaskStore::push_outbox`](crate::store::TaskStore::push_outbox)), written in the same
//! write (transaction) as their event, one per config of the task: a delivery exists exactly
//! when its event does, so a crash between the two cannot lose it and no queue between them
//! can drop it. The sender is only woken once the write is done (and polls, for deliveries
//! another instance wrote or a restart left). In memory by default (bounded: a full outbox
//! refuses the event's write, see [`InMemoryPushOutbox`](crate::store::InMemoryPushOutbox)),
//! or in the SQLite or PostgreSQL database of the server's
//! [`stores`](crate::server::A2aServerBuilder::stores), where a delivery waiting for its retry
//! survives a restart and continues, and where instances sharing the database each take a
//! delivery under a lease ([`PushConfig::lease`]), so that it is sent by one of them, in order
//! per (task, config).
//!
//! The URL guard is on by default: webhooks must be global unicast addresses on ports 80, 443
//! or 1024-65535, checked at registration and again on the addresses the sender connects to.
//! [`PushConfig::allow_private_networks`] turns it off, for development and tests only.

mod guard;
mod sender;
mod validate;

use std::sync::Arc;
use std::time::Duration;

pub use guard::{Blocked, HostResolver, SystemResolver};
pub use sender::{PushMetrics, PushSender};
pub use validate::{MAX_CREDENTIALS_LEN, MAX_ID_LEN, MAX_SCHEME_LEN, MAX_TOKEN_LEN, MAX_URL_LEN};

/// When a failed delivery is tried again, and when it is given up.
///
/// The n-th retry waits a random time between zero and `min(cap, base × 2ⁿ⁻¹)` (full jitter).
/// A delivery is dead after `max_attempts` attempts, or once it is older than `max_age`.
///
/// ```
/// use std::time::Duration;
/// use a2a_runtime::push::RetryPolicy;
/// let quick = RetryPolicy { base: Duration::from_millis(10), cap: Duration::from_millis(50), ..RetryPolicy::default() };
/// assert_eq!(quick.max_attempts, 12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first retry's longest wait. Default 1 s.
    pub base: Duration,
    /// The longest wait. Default 5 min.
    pub cap: Duration,
    /// Attempts before giving up. Default 12.
    pub max_attempts: u32,
    /// Age (since the event) after which a delivery is given up. Default 24 h.
    pub max_age: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            base: Duration::from_secs(1),
            cap: Duration::from_secs(300),
            max_attempts: 12,
            max_age: Duration::from_secs(24 * 3600),
        }
    }
}

impl RetryPolicy {
    /// The longest wait before retry number `retry` (1 for the first retry).
    pub fn ceiling(&self, retry: u32) -> Duration {
        let factor = 1u32
            .checked_shl(retry.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.cap)
    }
}

/// How a server sends push notifications. [`PushConfig::new`] gives the defaults: guard on,
/// 10 s timeout, [`RetryPolicy::default`]. Deliveries wait in the outbox of the server's task
/// store ([`TaskStore::push_outbox`](crate::store::TaskStore::push_outbox)).
#[derive(Clone, Debug)]
pub struct PushConfig {
    pub(crate) allow_private_networks: bool,
    pub(crate) timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) concurrency: usize,
    pub(crate) poll_interval: Duration,
    pub(crate) lease: Option<Duration>,
    pub(crate) resolver: Arc<dyn HostResolver>,
}

impl Default for PushConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl PushConfig {
    /// The defaults.
    pub fn new() -> Self {
        Self {
            allow_private_networks: false,
            timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            concurrency: 64,
            poll_interval: Duration::from_secs(1),
            lease: None,
            resolver: Arc::new(SystemResolver),
        }
    }

    /// Turns the URL guard off: webhooks may then target loopback, private and other
    /// non-global addresses and any port. For development and tests only.
    pub fn allow_private_networks(mut self, allow: bool) -> Self {
        self.allow_private_networks = allow;
        self
    }

    /// How long one delivery attempt may take, connecting included. Default 10 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// When failed deliveries are retried and given up.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// How many deliveries may be in flight at once (each to a different (task, config)).
    /// Default 64.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// How often the outbox is polled for deliveries that no wake-up announced (another
    /// instance's, or leases that expired). Default 1 s.
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll_interval = every;
        self
    }

    /// How long a delivery claimed by this instance stays reserved to it (at least the
    /// [`timeout`](Self::timeout); default the timeout plus 30 s). An instance that dies
    /// mid-attempt holds its deliveries this long; then another instance, or the restarted
    /// one, takes them over from a durable outbox.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// The lease of a claimed delivery.
    pub(crate) fn lease_for(&self) -> Duration {
        match self.lease {
            Some(lease) => lease.max(self.timeout),
            None => self.timeout.saturating_add(Duration::from_secs(30)),
        }
    }

    /// Resolves webhook host names (default: the system's resolver).
    pub fn resolver(mut self, resolver: Arc<dyn HostResolver>) -> Self {
        self.resolver = resolver;
        self
    }
}
