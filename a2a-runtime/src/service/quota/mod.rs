//! Fair share: per-principal and per-tenant limits on request rate, live tasks and open
//! streams ([`Quotas`]), checked once per request by the [`Pipeline`](super::Pipeline) after
//! authentication, the tenant and authorization.
//!
//! - **Request rate**: a token bucket per caller ([`Rate`]); every request takes a token.
//! - **Live tasks**: the tasks a caller created that have not ended. A new task holds a slot
//!   from its request on; the slot is given back when the task is seen to end (a result, a
//!   stream's final event, a GetTask or CancelTask answer) or, when a caller is at its limit,
//!   when its tasks are looked up again and found ended or gone (at most once per
//!   [`Quotas::recheck_every`]). A new task whose request went away before its outcome was
//!   known (the client disconnected) holds its slot for [`Quotas::unsettled_hold`].
//! - **Open streams**: SendStreamingMessage and SubscribeToTask hold a slot until the stream
//!   ends or its client goes away.
//!
//! A request over a limit is refused before it runs with [`A2aError::QuotaExceeded`] (HTTP
//! 429 with `Retry-After`, gRPC RESOURCE_EXHAUSTED); nothing of it is counted, and no other
//! caller is affected. Unauthenticated callers are told apart by their address (the
//! anonymous principal's tasks stay one owner's).
//!
//! The tables are bounded: at most [`Quotas::max_principals`] principals and
//! [`Quotas::max_tenants`] tenants are tracked; when a table is full the idle entries (nothing
//! held, a full bucket) are forgotten, and a new caller is refused while none is idle. A
//! principal keeps the ids of its live tasks, at most its live-task limit.

mod ledger;
mod ticket;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) use ledger::{Ask, CallerKey, Ledger};
pub(crate) use ticket::{Admission, Ticket};

use crate::error::A2aError;

/// A request rate: a bucket of `burst` tokens refilled at `per_second`; each request takes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Tokens added per second (the sustained rate).
    pub per_second: u32,
    /// Most tokens held (the largest burst).
    pub burst: u32,
}

/// What one caller — a principal, or a tenant with all its principals — may hold at once and how
/// fast it may ask. `None`: no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Share {
    /// Most tasks created and not ended yet.
    pub live_tasks: Option<usize>,
    /// Most streams open at once.
    pub open_streams: Option<usize>,
    /// The request rate.
    pub rate: Option<Rate>,
}

/// Reads the time for the quotas (the token buckets and the holds).
type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// Fair-share limits, configured on the server builder with
/// [`quotas`](crate::server::A2aServerBuilder::quotas) (see the [module](self) docs).
///
/// ```
/// use a2a_runtime::service::{Quotas, Rate};
/// let mut quotas = Quotas::default();
/// quotas.principal.rate = Some(Rate { per_second: 20, burst: 40 });
/// quotas.tenant.live_tasks = Some(2_000);
/// assert_eq!(quotas.principal.live_tasks, Some(500));
/// ```
#[derive(Clone)]
pub struct Quotas {
    /// Each principal's share (in each tenant). Default: 500 live tasks, 100 open streams, 50
    /// requests a second with bursts of 100.
    pub principal: Share,
    /// Each tenant's share, over all its principals. Default: 5,000 live tasks (half of the
    /// in-memory store's default capacity), 1,000 open streams, 500 requests a second with
    /// bursts of 1,000.
    pub tenant: Share,
    /// Most principals tracked at once. Default 10,000.
    pub max_principals: usize,
    /// Most tenants tracked at once. Default 1,000.
    pub max_tenants: usize,
    /// How long a new task whose request went away before its outcome was known counts as
    /// live. Default 1 hour (as long as the in-memory store keeps an untouched interrupted task).
    pub unsettled_hold: Duration,
    /// How often at most the tasks of a principal at its live-task limit are looked up again.
    /// Default 2 s.
    pub recheck_every: Duration,
    clock: Clock,
}

impl fmt::Debug for Quotas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Quotas")
            .field("principal", &self.principal)
            .field("tenant", &self.tenant)
            .field("max_principals", &self.max_principals)
            .field("max_tenants", &self.max_tenants)
            .field("unsettled_hold", &self.unsettled_hold)
            .field("recheck_every", &self.recheck_every)
            .finish_non_exhaustive()
    }
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            principal: Share {
                live_tasks: Some(500),
                open_streams: Some(100),
                rate: Some(Rate {
                    per_second: 50,
                    burst: 100,
                }),
            },
            tenant: Share {
                live_tasks: Some(5_000),
                open_streams: Some(1_000),
                rate: Some(Rate {
                    per_second: 500,
                    burst: 1_000,
                }),
            },
            max_principals: 10_000,
            max_tenants: 1_000,
            unsettled_hold: Duration::from_secs(3_600),
            recheck_every: Duration::from_secs(2),
            clock: Arc::new(Instant::now),
        }
    }
}

impl Quotas {
    /// No limit at all (tables still bounded); set the ones wanted.
    pub fn unlimited() -> Self {
        Self {
            principal: Share::default(),
            tenant: Share::default(),
            ..Self::default()
        }
    }

    /// Reads the time from `clock` instead of the system's monotonic clock: tests and
    /// simulations refill buckets and end holds by moving it.
    pub fn clock(mut self, clock: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    pub(crate) fn now(&self) -> Instant {
        (self.clock)()
    }
}

/// Which limit refused a request (for metrics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The request rate.
    Rate,
    /// The live tasks.
    LiveTasks,
    /// The open streams.
    OpenStreams,
    /// The table of callers was full of active callers.
    Callers,
}

impl Limit {
    /// Every limit, in the order of [`QuotaUsage::refusals`].
    pub const ALL: [Self; 4] = [
        Self::Rate,
        Self::LiveTasks,
        Self::OpenStreams,
        Self::Callers,
    ];

    /// The limit's name as metrics label it (`rate`, `live_tasks`, `open_streams`, `callers`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Rate => "rate",
            Self::LiveTasks => "live_tasks",
            Self::OpenStreams => "open_streams",
            Self::Callers => "callers",
        }
    }

    const fn index(self) -> usize {
        match self {
            Self::Rate => 0,
            Self::LiveTasks => 1,
            Self::OpenStreams => 2,
            Self::Callers => 3,
        }
    }
}

/// What the quotas hold and refused so far, as [`Pipeline::quota_usage`](super::Pipeline::quota_usage)
/// reads it (and the server's metrics export it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuotaUsage {
    /// Principals tracked now.
    pub principals: usize,
    /// Tenants tracked now.
    pub tenants: usize,
    /// Live tasks counted now, over every principal.
    pub live_tasks: usize,
    /// Streams open now, over every principal.
    pub open_streams: usize,
    /// Requests refused per principal limit, in the order of [`Limit::ALL`].
    pub principal_refusals: [u64; 4],
    /// Requests refused per tenant limit, in the order of [`Limit::ALL`].
    pub tenant_refusals: [u64; 4],
}

impl QuotaUsage {
    /// Requests refused by `limit`, of principals and of tenants.
    pub fn refusals(&self, limit: Limit) -> (u64, u64) {
        (
            self.principal_refusals[limit.index()],
            self.tenant_refusals[limit.index()],
        )
    }
}

/// The refusal of a request by `limit` of a principal (`tenant: false`) or a tenant, after
/// `wait`.
fn refused(limit: Limit, tenant: bool, wait: Duration) -> A2aError {
    let whose = if tenant { "tenant" } else { "principal" };
    let quota = match limit {
        Limit::Rate => format!("the request rate of the {whose}"),
        Limit::LiveTasks => format!("the live tasks of the {whose}"),
        Limit::OpenStreams => format!("the open streams of the {whose}"),
        Limit::Callers => format!("the {whose}s this server tracks at once"),
    };
    // Whole seconds, rounded up, at least one (Retry-After counts seconds).
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    A2aError::QuotaExceeded {
        quota,
        retry_after_secs: secs.max(1),
    }
}
