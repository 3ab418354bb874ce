//! W3C Trace Context (`traceparent` / `tracestate`): read from a request, carried with it (into
//! the agent's task too), and written into the calls it makes.
//!
//! ```
//! use a2a_runtime::protocol::TraceContext;
//!
//! let tc = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Some("k=v")).unwrap();
//! assert_eq!(tc.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
//! // What an outgoing call carries: the same trace, a new parent id.
//! let child = tc.child();
//! assert_eq!(child.trace_id(), tc.trace_id());
//! assert!(child.traceparent().starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
//! ```

use std::fmt::Write as _;

/// The `traceparent` header's name.
pub const TRACEPARENT: &str = "traceparent";
/// The `tracestate` header's name.
pub const TRACESTATE: &str = "tracestate";

/// The longest `tracestate` carried on (the W3C limit is 32 members of at most 256 bytes;
/// longer values are dropped, not truncated mid-member).
const MAX_TRACESTATE: usize = 512;

/// A W3C trace context: the trace a request belongs to and the span that sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: u128,
    parent_id: u64,
    flags: u8,
    state: Option<String>,
}

tokio::task_local! {
    // Boxed: the scope of a request holds one word rather than the context (64 bytes with
    // its 16-byte alignment) in the request's future.
    static CURRENT: Box<TraceContext>;
}

impl TraceContext {
    /// Parses a `traceparent` value (version `00`, or a later version read as `00` as the
    /// specification asks) and an optional `tracestate`. `None` when `traceparent` is invalid
    /// (all-zero ids included).
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let tp = traceparent.trim();
        let mut parts = tp.split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let parent = parts.next()?;
        let flags = parts.next()?;
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !hex(version, 2) || version == "ff" || !hex(trace, 32) || !hex(parent, 16) {
            return None;
        }
        if !hex(flags, 2) || (version == "00" && parts.next().is_some()) {
            return None;
        }
        let trace_id = u128::from_str_radix(trace, 16).ok()?;
        let parent_id = u64::from_str_radix(parent, 16).ok()?;
        if trace_id == 0 || parent_id == 0 {
            return None;
        }
        let state = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE && s.is_ascii())
            .map(str::to_owned);
        Some(Self {
            trace_id,
            parent_id,
            flags: u8::from_str_radix(flags, 16).ok()?,
            state,
        })
    }

    /// The trace id, 32 lowercase hex digits.
    pub fn trace_id(&self) -> String {
        format!("{:032x}", self.trace_id)
    }

    #[cfg(all(feature = "otel", feature = "server"))]
    pub(crate) fn trace_id_u128(&self) -> u128 {
        self.trace_id
    }

    #[cfg(all(feature = "otel", feature = "server"))]
    pub(crate) fn parent_id_u64(&self) -> u64 {
        self.parent_id
    }

    /// A context from its parts (ids not zero, as an exported span's are).
    #[cfg(feature = "otel")]
    pub(crate) fn from_parts(
        trace_id: u128,
        parent_id: u64,
        flags: u8,
        state: Option<String>,
    ) -> Self {
        Self {
            trace_id,
            parent_id,
            flags,
            state: state.filter(|s| s.len() <= MAX_TRACESTATE),
        }
    }

    /// The id of the span that sent the request, 16 lowercase hex digits.
    pub fn parent_id(&self) -> String {
        format!("{:016x}", self.parent_id)
    }

    /// Whether the caller sampled the trace.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The `tracestate` value, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// The same trace with a new parent id: what a call made while serving this one carries.
    pub fn child(&self) -> Self {
        let random = uuid::Uuid::new_v4().as_u128() as u64;
        Self {
            parent_id: random.max(1),
            ..self.clone()
        }
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> String {
        let mut s = String::with_capacity(55);
        let _ = write!(
            s,
            "00-{:032x}-{:016x}-{:02x}",
            self.trace_id, self.parent_id, self.flags
        );
        s
    }

    /// The trace context of the request being served on this task (set by the server for each
    /// request that carried one, and for the agent's execution of it).
    pub fn current() -> Option<Self> {
        CURRENT.try_with(|tc| TraceContext::clone(tc)).ok()
    }

    /// The `tracestate` value, taken.
    pub(crate) fn into_tracestate(self) -> Option<String> {
        self.state
    }

    /// Runs `fut` with `self` as the [`current`](Self::current) trace context.
    pub fn scope<F: Future>(self, fut: F) -> impl Future<Output = F::Output> {
        // Not an `async fn`: that would hold `fut` twice (as its argument and inside the
        // future it awaits), and the request's future is wrapped in this one.
        CURRENT.scope(Box::new(self), fut)
    }

    /// Runs `fut` with `trace` as the [`current`](Self::current) trace context when there is
    /// one.
    #[cfg(feature = "server")]
    pub(crate) fn scope_of<F: Future>(
        trace: Option<Self>,
        fut: F,
    ) -> impl Future<Output = F::Output> {
        match trace {
            Some(tc) => futures::future::Either::Left(tc.scope(fut)),
            None => futures::future::Either::Right(fut),
        }
    }
}

/// Where the trace context of the current span comes from when spans are exported: set by the
/// OpenTelemetry layer (feature `otel`), which sits above this module.
static EXPORTED_SPAN: std::sync::OnceLock<fn() -> Option<TraceContext>> =
    std::sync::OnceLock::new();

/// Makes `current` the source of the outgoing calls' trace context (the current span's, when
/// spans are exported).
#[cfg(feature = "otel")]
pub(crate) fn export_spans(current: fn() -> Option<TraceContext>) {
    let _ = EXPORTED_SPAN.set(current);
}

impl TraceContext {
    /// What a call made here carries: with spans exported (feature `otel`), the current
    /// span's trace with its id as the parent; else the served request's trace as a
    /// [`child`](Self::child).
    pub(crate) fn outgoing() -> Option<Self> {
        if let Some(current) = EXPORTED_SPAN.get()
            && let Some(tc) = current()
        {
            return Some(tc);
        }
        Self::current().map(|tc| tc.child())
    }
}

/// The headers an outgoing call (a client request, a push notification) made while serving a
/// request should carry: `traceparent` (same trace; as the parent, the current span when spans
/// are exported with the feature `otel`, else a new id) and `tracestate`. Empty when there is no
/// trace.
///
/// ```
/// assert!(a2a_runtime::protocol::trace_headers().is_empty());
/// ```
pub fn trace_headers() -> Vec<(&'static str, String)> {
    let Some(child) = TraceContext::outgoing() else {
        return Vec::new();
    };
    let mut headers = vec![(TRACEPARENT, child.traceparent())];
    if let Some(state) = child.into_tracestate() {
        headers.push((TRACESTATE, state));
    }
    headers
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_and_formats_the_w3c_examples() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let tc = TraceContext::parse(tp, Some(" rojo=00f067aa0ba902b7 ")).unwrap();
        assert_eq!(tc.traceparent(), tp);
        assert!(tc.sampled());
        assert_eq!(tc.parent_id(), "00f067aa0ba902b7");
        assert_eq!(tc.tracestate(), Some("rojo=00f067aa0ba902b7"));
        let child = tc.child();
        assert_ne!(child.parent_id(), tc.parent_id());
        assert_eq!(child.trace_id(), tc.trace_id());
    }

    #[test]
    fn rejects_malformed_values() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad}");
        }
        // A later version may carry more fields.
        assert!(
            TraceContext::parse(
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                None
            )
            .is_some()
        );
        // An oversized tracestate is dropped.
        let long = "k=".to_owned() + &"v".repeat(600);
        let tc = TraceContext::parse(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
            Some(&long),
        )
        .unwrap();
        assert_eq!(tc.tracestate(), None);
        assert!(!tc.sampled());
    }

    #[tokio::test]
    async fn the_scope_sets_the_current_context_and_the_headers() {
        assert!(trace_headers().is_empty());
        let tc = TraceContext::parse(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            Some("a=b"),
        )
        .unwrap();
        let headers = tc.clone().scope(async { trace_headers() }).await;
        assert_eq!(headers.len(), 2);
        assert!(
            headers[0]
                .1
                .starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-")
        );
        assert_ne!(headers[0].1, tc.traceparent());
        assert_eq!(headers[1], (TRACESTATE, "a=b".to_owned()));
    }
}
