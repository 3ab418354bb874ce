//! Request tracing for the bindings: one span per request, an access-log line at INFO, error
//! responses at WARN with their cause, and the W3C trace context carried with the request.
//!
//! The span is named `a2a.request` with the fields `binding`, `operation`, `task_id`,
//! `context_id`, `tenant`, `principal`, `extensions` (the activated URIs), `code` (the A2A
//! error code), `status` (HTTP), `latency_ms`, `trace_id` (from `traceparent`) and
//! `correlation_id` (of an internal error, whose cause is logged under it). The access line
//! and the warnings use the target `a2a::access`.

use std::time::Instant;

use actix_web::http::header::HeaderName;
use actix_web::{HttpRequest, HttpResponse};
use futures::FutureExt as _;
use futures::future::Either;
use tracing::field::Empty;

use super::failure::Failure;

use crate::protocol::{TRACEPARENT, TRACESTATE, TraceContext};

// Names built once: a lookup by `&str` parses the name on every request (about 240
// instructions each, callgrind).
static TRACEPARENT_NAME: HeaderName = HeaderName::from_static(TRACEPARENT);
static TRACESTATE_NAME: HeaderName = HeaderName::from_static(TRACESTATE);

/// A request's span (its fields recorded later, by the core and the binding).
pub(crate) fn request_span(binding: &'static str) -> tracing::Span {
    // A span that no subscriber wants still records its fields for the `log` crate (a
    // dependency turns on tracing's `log` feature) and checks again when dropped: about 450
    // instructions per request (callgrind). `Span::none` costs nothing.
    if !tracing::span_enabled!(tracing::Level::INFO) {
        return tracing::Span::none();
    }
    tracing::info_span!(
        "a2a.request",
        binding,
        operation = Empty,
        task_id = Empty,
        context_id = Empty,
        tenant = Empty,
        principal = Empty,
        extensions = Empty,
        code = Empty,
        status = Empty,
        latency_ms = Empty,
        trace_id = Empty,
        correlation_id = Empty,
    )
}

/// Records the caller's trace on the request's `span` (and, with spans exported, makes the
/// caller its remote parent).
pub(crate) fn set_parent(span: &tracing::Span, tc: &TraceContext) {
    span.record("trace_id", tc.trace_id());
    #[cfg(feature = "otel")]
    crate::otel::set_remote_parent(span, tc);
}

/// Serves `fut` for a request of `binding` inside its span, with its trace context current,
/// and logs it.
pub(crate) fn observe<F: Future<Output = HttpResponse>>(
    binding: &'static str,
    req: &HttpRequest,
    fut: F,
) -> impl Future<Output = HttpResponse> + use<F> {
    // Combinators rather than an `async fn`: an `async fn` holds its argument beside the
    // future that awaits it, which doubled the request's future (actix boxes it: 2,928 bytes
    // for a JSON-RPC SendMessage, DHAT). Past 1,032 bytes, glibc serves an allocation outside
    // its thread cache and first consolidates its free lists: about 1,000 instructions per
    // request (callgrind).
    //
    // Boxed first: each wrapper below, and actix's box, then moves a pointer rather than the
    // request's future (about 760 bytes for JSON-RPC; four copies of it a request).
    let fut = Box::pin(fut);
    let trace = req
        .headers()
        .get(&TRACEPARENT_NAME)
        .and_then(|v| v.to_str().ok())
        .and_then(|tp| {
            let state = req
                .headers()
                .get(&TRACESTATE_NAME)
                .and_then(|v| v.to_str().ok());
            TraceContext::parse(tp, state)
        });
    let span = request_span(binding);
    #[cfg(feature = "metrics")]
    let fut = super::metrics::measure(
        binding,
        req.app_data::<super::agent_label::AgentLabel>().cloned(),
        fut,
    );
    let logging = tracing::enabled!(target: "a2a::access", tracing::Level::INFO);
    if span.is_disabled() && !logging {
        // Nobody listens: only the trace context is carried (when there is one).
        return Either::Left(TraceContext::scope_of(trace, fut));
    }
    if let Some(tc) = &trace {
        set_parent(&span, tc);
    }
    let start = Instant::now();
    let req = req.clone();
    let fut = tracing::Instrument::instrument(fut, span.clone());
    // Boxed: the quiet path, above, is the one whose size counts.
    Either::Right(Box::pin(TraceContext::scope_of(trace, fut).map(
        move |resp| {
            log(&span, &req, &resp, start);
            resp
        },
    )))
}

/// Records the answer `resp` to `req`, served since `start`, on the request's `span`, and
/// logs it.
fn log(span: &tracing::Span, req: &HttpRequest, resp: &HttpResponse, start: Instant) {
    let latency_ms = start.elapsed().as_secs_f64() * 1000.0;
    let status = resp.status().as_u16();
    span.record("status", status);
    span.record("latency_ms", latency_ms);
    if let Some(ext) = resp
        .headers()
        .get(&super::http::A2A_EXTENSIONS_NAME)
        .and_then(|v| v.to_str().ok())
    {
        span.record("extensions", ext);
    }
    let _entered = span.enter();
    let failure = resp
        .extensions()
        .get::<Failure>()
        .map(|f| (f.code, f.cause.clone().unwrap_or_default()));
    if let Some((code, cause)) = failure {
        span.record("code", code);
        tracing::warn!(target: "a2a::access", code, status, %cause, "a2a request failed");
    }
    tracing::info!(
        target: "a2a::access",
        method = %req.method(),
        path = req.path(),
        status,
        latency_ms,
        "a2a request"
    );
}
