//! The trace context of the calls made while serving a request: with spans exported (feature
//! `otel`), the current span's; else a child of the served request's
//! [`TraceContext`](crate::protocol::TraceContext).

use crate::protocol::{TRACEPARENT, TRACESTATE, TraceContext};

impl TraceContext {
    /// What a call made here carries: with spans exported (feature `otel`), the current
    /// span's trace with its id as the parent; else the served request's trace as a
    /// [`child`](Self::child).
    pub(crate) fn outgoing() -> Option<Self> {
        #[cfg(feature = "otel")]
        if let Some(tc) = crate::otel::current() {
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
/// assert!(a2a_runtime::core::trace_headers().is_empty());
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
