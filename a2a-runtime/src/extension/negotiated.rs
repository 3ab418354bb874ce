//! The outcome of extension negotiation for one request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::hooks::{Extension, ExtensionHooks, Slot};
use super::registry::{Entry, Plan};

/// One activated extension: its URI (its activation value is in the negotiation's value table,
/// at the same position). Holds the extension's entry in its set, which the hooks are called
/// through.
#[derive(Clone)]
pub struct Activation(pub(crate) Arc<Entry>);

impl Activation {
    /// The extension's URI.
    pub fn uri(&self) -> &'static str {
        self.0.uri
    }

    /// True when both name the same extension.
    pub fn same_uri(&self, other: &Activation) -> bool {
        same_uri(self.uri(), other.uri())
    }
}

impl std::fmt::Debug for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Activation")
            .field("uri", &self.uri())
            .finish_non_exhaustive()
    }
}

/// The extensions requested by the client and those activated for a request.
#[derive(Default)]
pub struct Negotiated {
    /// The URIs the client requested (`A2A-Extensions`), deduplicated, in request order.
    /// Shared: every request that sends the same header value shares one list.
    pub requested: Arc<[String]>,
    /// The activated extensions, in declaration order. Shared: every request that activates
    /// all it asked for shares its plan's list.
    pub activated: Arc<[Activation]>,
    /// The activation values, one per activated extension, in the same order: one lock for all
    /// of them, taken once per hook phase (not once per extension).
    pub(crate) values: Mutex<Vec<Slot>>,
    /// The `handle_request` hooks are running (holding the value table): see
    /// [`extension`](Self::extension).
    pub(crate) requesting: AtomicBool,
    /// The hooks (`HOOK_*` bits) some activated extension may implement: a phase no extension
    /// hooks is skipped without looking at each.
    pub(crate) hooks: u8,
    /// A tracing subscriber wanted the hooks' debug spans when the extensions were activated.
    pub(crate) spans: bool,
    /// What activating `requested` takes (set by `A2aService::begin`, cached per header value).
    pub(crate) plan: Option<Arc<Plan>>,
}

impl std::fmt::Debug for Negotiated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Negotiated")
            .field("requested", &self.requested)
            .field("activated", &self.activated)
            .finish_non_exhaustive()
    }
}

/// `a == b`, deciding at once when both are the same `&'static str` (URIs are constants).
pub(crate) fn same_uri(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b) || a == b
}

impl Negotiated {
    /// Nothing requested, nothing activated: one shared value, so that a request without
    /// extensions allocates none.
    #[cfg(any(feature = "server", test))]
    pub(crate) fn none() -> Arc<Self> {
        static NONE: std::sync::LazyLock<Arc<Negotiated>> =
            std::sync::LazyLock::new(|| Arc::new(Negotiated::default()));
        Arc::clone(&NONE)
    }

    /// True when the extension with `uri` was activated.
    pub fn is_active_uri(&self, uri: &str) -> bool {
        self.activated.iter().any(|a| same_uri(a.uri(), uri))
    }

    /// True when `E` was activated.
    pub fn is_active<E: Extension>(&self) -> bool {
        self.is_active_uri(E::URI)
    }

    /// `E`'s activation value, when `E` was activated.
    ///
    /// While the `handle_request` hooks run this is `None` for every extension (the values are
    /// with the hooks then); a request hook tells whether another extension is active with
    /// [`is_active`](Self::is_active).
    pub fn extension<E: ExtensionHooks>(&self) -> Option<E::Activation> {
        if self.requesting.load(Ordering::Acquire) {
            return None;
        }
        let i = self
            .activated
            .iter()
            .position(|a| same_uri(a.uri(), E::URI))?;
        self.lock_values()
            .get(i)?
            .as_any()
            .downcast_ref::<E::Activation>()
            .cloned()
    }

    /// The value table, locked (a poisoned lock is taken as is: a hook that panicked left its
    /// value as it was).
    pub(crate) fn lock_values(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.values
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks the `handle_request` hooks as running until the guard goes (also when a hook
    /// panics).
    pub(crate) fn requesting(&self) -> Requesting<'_> {
        self.requesting.store(true, Ordering::Release);
        Requesting(&self.requesting)
    }

    /// The activated URIs, in declaration order.
    pub fn activated_uris(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.activated.iter().map(Activation::uri)
    }
}

/// While it lives, the `handle_request` hooks of a negotiation are running.
pub(crate) struct Requesting<'a>(&'a AtomicBool);

impl Drop for Requesting<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The extensions activated for a request, as a response echoes them in `A2A-Extensions`:
/// shared with the request's negotiation, so that naming them allocates nothing.
#[derive(Clone, Default)]
pub struct Activated(Option<Arc<Negotiated>>);

impl Activated {
    /// The activated extensions of `negotiated`.
    pub fn of(negotiated: Arc<Negotiated>) -> Self {
        Self((!negotiated.activated.is_empty()).then_some(negotiated))
    }

    /// True when no extension was activated.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The activated extensions (`None` when there are none): requests that activate all
    /// they asked for share one list.
    pub fn list(&self) -> Option<&Arc<[Activation]>> {
        self.0.as_deref().map(|n| &n.activated)
    }

    /// The activated URIs, in declaration order.
    pub fn uris(&self) -> impl ExactSizeIterator<Item = &'static str> + '_ {
        self.list()
            .map_or(&[][..], |list| &list[..])
            .iter()
            .map(Activation::uri)
    }
}

impl std::fmt::Debug for Activated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.uris()).finish()
    }
}
