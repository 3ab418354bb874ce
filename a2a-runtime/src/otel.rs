//! OpenTelemetry export (feature `otel`): the runtime's `tracing` spans (`a2a.request`,
//! `a2a.agent`, `push.attempt`, and your own) sent over OTLP (HTTP/protobuf) to a collector.
//!
//! The exporter is configured by the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (default
//! `http://localhost:4318`; `/v1/traces` is appended) or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//! (used as is), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`,
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` (default: the caller's
//! decision, else always on), `OTEL_BSP_*` (batching), and `OTEL_SDK_DISABLED`. Only the
//! `http/protobuf` protocol is built in.
//!
//! A request's span has the caller's `traceparent` as its remote parent; the calls made while
//! serving it (the client, on every binding, and push notifications) carry the trace on with
//! the id of the span that makes them.
//!
//! The shortest setup, which also prints a readable log filtered by `RUST_LOG` (default
//! `info`) and exports the spans at INFO and above:
//!
//! ```no_run
//! # fn main() -> Result<(), a2a_runtime::otel::OtelError> {
//! let otel = a2a_runtime::otel::init()?;
//! // ... serve ...
//! otel.shutdown()?; // exports what is still buffered
//! # Ok(())
//! # }
//! ```
//!
//! With a subscriber of your own, add [`Otel::layer`]:
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let otel = a2a_runtime::otel::Otel::from_env()?;
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::fmt::layer())
//!     .with(otel.layer())
//!     .try_init()?;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "server")]
use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

use crate::protocol::TraceContext;

/// Why the OpenTelemetry pipeline could not be set up, flushed or shut down.
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry: {0}")]
pub struct OtelError(String);

/// An OTLP trace pipeline: spans are batched and exported in the background until
/// [`shutdown`](Self::shutdown).
#[derive(Clone, Debug)]
pub struct Otel {
    provider: SdkTracerProvider,
}

impl Otel {
    /// The pipeline the `OTEL_*` variables describe. With `OTEL_SDK_DISABLED=true`, one that
    /// exports nothing.
    pub fn from_env() -> Result<Self, OtelError> {
        Self::build(None)
    }

    /// The pipeline the `OTEL_*` variables describe, exporting to the collector at `endpoint`
    /// (a base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`: `/v1/traces` is appended) whatever they
    /// say.
    pub fn with_endpoint(endpoint: &str) -> Result<Self, OtelError> {
        let url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
        Self::build(Some(url))
    }

    fn build(url: Option<String>) -> Result<Self, OtelError> {
        let resource = Resource::builder().build();
        let disabled =
            std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if disabled && url.is_none() {
            let provider = SdkTracerProvider::builder().with_resource(resource).build();
            return Ok(Self { provider });
        }
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
        if let Some(url) = url {
            exporter = exporter.with_endpoint(url);
        }
        let exporter = exporter
            .build()
            .map_err(|e| OtelError(format!("the OTLP exporter: {e}")))?;
        let provider = SdkTracerProvider::builder()
            .with_resource(resource)
            .with_batch_exporter(exporter)
            .build();
        Ok(Self { provider })
    }

    /// The `tracing` layer that turns spans into OpenTelemetry spans of this pipeline.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        let tracer = self.provider.tracer("a2a-runtime");
        // From now on, outgoing calls carry the current span as their parent.
        crate::protocol::export_spans(current);
        tracing_opentelemetry::layer().with_tracer(tracer)
    }

    /// Exports every span ended so far, waiting for the collector's answer (blocking).
    pub fn force_flush(&self) -> Result<(), OtelError> {
        self.provider
            .force_flush()
            .map_err(|e| OtelError(format!("flush: {e}")))
    }

    /// Exports what is buffered and stops the pipeline (blocking). Call it before the process
    /// exits.
    pub fn shutdown(&self) -> Result<(), OtelError> {
        self.provider
            .shutdown()
            .map_err(|e| OtelError(format!("shutdown: {e}")))
    }
}

/// Sets up the global `tracing` subscriber: a readable log on stderr filtered by `RUST_LOG`
/// (default `info`), and the OTLP pipeline of [`Otel::from_env`] for the spans at INFO and above
/// (whatever `RUST_LOG` says). Also sets the pipeline as
/// OpenTelemetry's global tracer provider. Fails when a global subscriber is already set.
pub fn init() -> Result<Otel, OtelError> {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let otel = Otel::from_env()?;
    let filter = crate::log::filter();
    // `RUST_LOG` chooses what is printed, not what is exported.
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(filter);
    let export = otel
        .layer()
        .with_filter(tracing_subscriber::filter::LevelFilter::INFO);
    tracing_subscriber::registry()
        .with(log)
        .with(export)
        .try_init()
        .map_err(|e| OtelError(format!("the tracing subscriber: {e}")))?;
    opentelemetry::global::set_tracer_provider(otel.provider.clone());
    Ok(otel)
}

/// Makes `tc` (a caller's trace context) the remote parent of `span`, when spans are exported.
#[cfg(feature = "server")]
pub(crate) fn set_remote_parent(span: &tracing::Span, tc: &TraceContext) {
    let state = tc
        .tracestate()
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    let flags = if tc.sampled() {
        TraceFlags::SAMPLED
    } else {
        TraceFlags::default()
    };
    let parent = SpanContext::new(
        TraceId::from(tc.trace_id_u128()),
        SpanId::from(tc.parent_id_u64()),
        flags,
        true,
        state,
    );
    // Not exported (no layer), or already started: the span keeps its own parent.
    let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(parent));
}

/// The trace context of the current span (its trace, its id as the parent), when it is
/// exported.
fn current() -> Option<TraceContext> {
    let cx = tracing::Span::current().context();
    let span = cx.span();
    let sc = span.span_context();
    if !sc.is_valid() {
        return None;
    }
    let state = sc.trace_state().header();
    Some(TraceContext::from_parts(
        u128::from_be_bytes(sc.trace_id().to_bytes()),
        u64::from_be_bytes(sc.span_id().to_bytes()),
        sc.trace_flags().to_u8(),
        (!state.is_empty()).then_some(state),
    ))
}
