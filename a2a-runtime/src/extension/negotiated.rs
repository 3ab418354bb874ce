//! [`Negotiated`]: the outcome of extension negotiation for one request, and running the
//! activated extensions' hooks on it.
// The server negotiates and serves what a client only declares: without the `server` feature
// the serving half is unused.
#![cfg_attr(not(feature = "server"), allow(dead_code))]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::RequestContext;
use super::activation_value::ActivationValue;
use super::entry::Entry;
use super::implemented::{
    HOOK_EVENT, HOOK_OBSERVE, HOOK_REQUEST, HOOK_RESPONSE, HOOK_TRANSITION, HookOutcome,
};
use super::traits::{DynExtension, Extension, ExtensionHooks, Reply, Responding};
use crate::error::A2aError;
use crate::protocol::A2aRequest;
use crate::types::{StreamResponse, TaskStatus};

/// One activated extension of a request.
// Holds the extension's entry in its set, which the hooks are called through; its activation
// value is in the negotiation's value table, at the same position.
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
    // Shared by every request that sends the same header value (see `negotiation`).
    pub requested: Arc<[String]>,
    /// The activated extensions, in declaration order.
    // Shared by every request that activates all it asked for from the same cached plan (the
    // server's echo of `A2A-Extensions` compares the lists by address).
    pub activated: Arc<[Activation]>,
    /// The activation values, one per activated extension, in the same order: one lock for all
    /// of them, taken once per hook phase (not once per extension).
    pub(crate) values: Mutex<Vec<ActivationValue>>,
    /// The `handle_request` hooks are running (holding the value table): see
    /// [`extension`](Self::extension).
    pub(crate) requesting: AtomicBool,
    /// The hooks (`HOOK_*` bits) some activated extension may implement: a phase no extension
    /// hooks is skipped without looking at each.
    pub(crate) hooks: u8,
    /// A tracing subscriber wanted the hooks' debug spans when the extensions were activated.
    pub(crate) spans: bool,
    /// What activating `requested` takes (set by `A2aService::begin`, cached per header value).
    pub(crate) plan: Option<Arc<ActivationPlan>>,
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
    /// While the `handle_request` hooks run, and in the context the response hooks get, this is
    /// `None` for every extension (the values are with the hooks then); a hook tells whether
    /// another extension is active with [`is_active`](Self::is_active).
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
    pub(crate) fn lock_values(&self) -> MutexGuard<'_, Vec<ActivationValue>> {
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

    /// The same negotiation without the activation values, for the context the response hooks
    /// get: they hold the values, and another reader (the agent, still running while a stream
    /// is answered) keeps reading the real ones.
    pub(crate) fn without_values(&self) -> Self {
        Self {
            requested: self.requested.clone(),
            activated: self.activated.clone(),
            values: Mutex::default(),
            requesting: AtomicBool::new(false),
            hooks: self.hooks,
            spans: self.spans,
            plan: None,
        }
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

/// The extensions activated for a request, as a response echoes them in `A2A-Extensions`.
// Shares the request's negotiation, so that naming them allocates nothing.
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

    /// The activated extensions (`None` when there are none).
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

/// Counts a hook's error on its extension and unboxes it (here, so that the unboxing stays
/// out of the hook loops).
#[cold]
#[inline(never)]
#[allow(clippy::boxed_local)]
fn hook_failed(e: &Entry, err: Box<A2aError>) -> A2aError {
    e.counters.hook_errors.fetch_add(1, Ordering::Relaxed);
    *err
}

/// Runs hook `name` of every extension in `activated` (in declaration order), each on its
/// value in `values` (`values[i]` belongs to `activated[i]`).
// The loop without spans is all this function holds (the one with spans, and the error path,
// are out of line): it is what every request with extensions runs, a few cache lines of code.
#[inline]
fn run_hooks_on(
    (activated, spans): (&[Activation], bool),
    values: &mut [ActivationValue],
    name: &'static str,
    mut f: impl FnMut(&dyn DynExtension, &mut ActivationValue) -> HookOutcome,
) -> Result<(), A2aError> {
    if spans {
        return run_hooks_in_spans(activated, values, name, f);
    }
    for (a, value) in activated.iter().zip(values) {
        if let Err(err) = f(a.0.ext.as_ref(), value) {
            return Err(hook_failed(&a.0, err));
        }
    }
    Ok(())
}

/// [`run_hooks_on`] with each call in a debug span ([`in_span_if`]).
#[cold]
#[inline(never)]
fn run_hooks_in_spans(
    activated: &[Activation],
    values: &mut [ActivationValue],
    name: &'static str,
    mut f: impl FnMut(&dyn DynExtension, &mut ActivationValue) -> HookOutcome,
) -> Result<(), A2aError> {
    for (a, value) in activated.iter().zip(values) {
        let e = &a.0;
        in_span_if(true, e.uri, name, || f(e.ext.as_ref(), value))
            .map_err(|err| hook_failed(e, err))?;
    }
    Ok(())
}

/// The response phases of [`Negotiated::handle_response`] on `values`: the hooks that may
/// change `reply`, then those that read it (`hooks`: the negotiation's mask).
fn respond_on(
    entries: (&[Activation], bool),
    hooks: u8,
    values: &mut [ActivationValue],
    reply: &mut Reply<'_>,
    on: Responding<'_>,
) -> Result<(), A2aError> {
    if hooks & HOOK_RESPONSE != 0 {
        run_hooks_on(entries, values, "handle_response", |ext, value| {
            ext.handle_response(reply, value, on)
        })?;
    }
    if hooks & HOOK_OBSERVE != 0 {
        run_hooks_on(entries, values, "observe_response", |ext, value| {
            ext.observe_response(reply, value, on)
        })?;
    }
    Ok(())
}

impl Negotiated {
    /// The activated extensions, when some of them may implement `hook` (so that a phase
    /// nobody hooks takes no lock).
    fn hooked(&self, hook: u8) -> Option<(&[Activation], bool)> {
        (self.hooks & hook != 0).then_some((&self.activated[..], self.spans))
    }

    /// Runs `hook` of the activated extensions with the value table locked once for all of
    /// them. Only for hooks that cannot reach this negotiation (they get no context).
    fn run_hooks(
        &self,
        (hook, name): (u8, &'static str),
        f: impl FnMut(&dyn DynExtension, &mut ActivationValue) -> HookOutcome,
    ) -> Result<(), A2aError> {
        let Some(entries) = self.hooked(hook) else {
            return Ok(());
        };
        run_hooks_on(entries, &mut self.lock_values(), name, f)
    }

    /// Runs every activated extension's `handle_request`, in declaration order, with the value
    /// table locked once for all of them. Meanwhile [`extension`](Negotiated::extension) answers
    /// `None` (a hook reading values through `ctx`, which may hold this negotiation, would
    /// otherwise wait for itself).
    pub(crate) fn handle_request(
        &self,
        req: &mut A2aRequest,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        let Some(entries) = self.hooked(HOOK_REQUEST) else {
            return Ok(());
        };
        let _requesting = self.requesting();
        run_hooks_on(
            entries,
            &mut self.lock_values(),
            "handle_request",
            |ext, value| ext.handle_request(req, value, ctx),
        )
    }

    /// True when some activated extension may change a unary result (`handle_response`).
    pub(crate) fn hooks_responses(&self) -> bool {
        self.hooks & HOOK_RESPONSE != 0
    }

    /// A negotiation as if an activated extension hooked responses (tests).
    #[cfg(test)]
    pub(crate) fn hooking_responses() -> Self {
        Self {
            hooks: HOOK_RESPONSE,
            ..Self::default()
        }
    }

    /// True when some activated extension may read or change results (`handle_response`,
    /// `observe_response`).
    pub(crate) fn sees_responses(&self) -> bool {
        self.hooks & (HOOK_RESPONSE | HOOK_OBSERVE) != 0
    }

    /// A negotiation as if an activated extension only observed responses (tests).
    #[cfg(test)]
    pub(crate) fn observing_responses() -> Self {
        Self {
            hooks: HOOK_OBSERVE,
            ..Self::default()
        }
    }

    /// Runs every activated extension's `handle_response`, then every one's
    /// `observe_response` (each phase in declaration order), with the value table locked once
    /// for both. `ctx` must not hold this negotiation (a hook reading a value through it would
    /// wait for itself): give the hooks a context with [`without_values`](Self::without_values).
    pub(crate) fn handle_response(
        &self,
        reply: &mut Reply<'_>,
        request: &A2aRequest,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        if !self.sees_responses() {
            return Ok(());
        }
        let entries = (&self.activated[..], self.spans);
        let on = Responding { request, ctx };
        respond_on(entries, self.hooks, &mut self.lock_values(), reply, on)
    }

    /// Runs every activated extension's `handle_event`, in declaration order.
    pub(crate) fn handle_event(&self, event: &mut StreamResponse) -> Result<(), A2aError> {
        self.run_hooks((HOOK_EVENT, "handle_event"), |ext, value| {
            ext.handle_event(event, value)
        })
    }

    /// Runs every activated extension's `check_transition`, in declaration order.
    pub(crate) fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
    ) -> Result<(), A2aError> {
        self.run_hooks((HOOK_TRANSITION, "check_transition"), |ext, value| {
            ext.check_transition(from, to, value)
        })
    }
}

/// What activating a requested list takes: the requested, configured extensions in
/// declaration order, each with the first required dependency that was not requested.
#[derive(Debug)]
pub(crate) struct ActivationPlan {
    pub(super) steps: Vec<(usize, Option<&'static str>)>,
    /// Every step activated: the list a request shares when none is skipped.
    pub(super) all: Arc<[Activation]>,
}

/// True when a tracing subscriber is installed and wants debug spans (asked once per series of
/// hook calls). Without a subscriber this is one load; asking one is out of line.
#[inline(always)]
pub(super) fn spans_wanted() -> bool {
    tracing::dispatcher::has_been_set() && debug_enabled()
}

/// Whether the installed subscriber wants debug spans.
#[cold]
#[inline(never)]
fn debug_enabled() -> bool {
    tracing::enabled!(tracing::Level::DEBUG)
}

/// Runs `f` in an `a2a_extension` debug span naming the extension and the hook when `wanted`
/// ([`spans_wanted`]); otherwise the span is not built at all.
// With ten extensions, four hooks each per request, even disabled spans (and `tracing`'s `log`
// fallback, when some dependency enables it) were a measurable share of a request (51112c0).
#[inline]
pub(super) fn in_span_if<R>(
    wanted: bool,
    uri: &'static str,
    hook: &'static str,
    f: impl FnOnce() -> R,
) -> R {
    if wanted {
        tracing::debug_span!("a2a_extension", uri, hook).in_scope(f)
    } else {
        f()
    }
}
