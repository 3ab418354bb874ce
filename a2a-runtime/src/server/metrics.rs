//! Prometheus metrics of the server (feature `metrics`), recorded through the `metrics` facade.
//!
//! | name | kind | labels |
//! |---|---|---|
//! | `a2a_requests_total` | counter | `binding`, `operation`, `code` (`0` for success, else the A2A error code) |
//! | `a2a_request_duration_seconds` | histogram | `binding`, `operation` (until the response head; a stream's first byte) |
//! | `a2a_active_streams` | gauge | `binding`, `operation` (`SubscribeToTask` streams are the subscribers) |
//! | `a2a_extension_activations_total`, `_skips_total`, `_refusals_total`, `_hook_errors_total` | counter | `uri` |
//! | `a2a_quota_refusals_total` | counter | `scope` (`principal`, `tenant`), `limit` (`rate`, `live_tasks`, `open_streams`, `callers`) |
//! | `a2a_quota_principals`, `a2a_quota_tenants`, `a2a_quota_live_tasks`, `a2a_quota_open_streams` | gauge | (with [quotas](crate::service::Quotas)) |
//! | `a2a_push_sent_total` | counter | push deliveries acknowledged by their receiver (2xx) |
//! | `a2a_push_failed_total` | counter | push attempts that failed (then retried or given up) |
//! | `a2a_push_retried_total`, `a2a_push_dead_total` | counter | failed attempts retried later; deliveries given up on |
//! | `a2a_push_delivery_duration_seconds` | histogram | `result` (`ok`, `error`): one attempt's call of the webhook |
//! | `a2a_push_outbox_refused_total` | counter | deliveries the full in-memory outbox refused |
//! | `a2a_retention_purged_total`, `a2a_retention_ended_total` | counter | finished tasks purged; idle interrupted tasks ended |
//! | `a2a_recovery_failed_total`, `a2a_recovery_rerun_total`, `a2a_recovery_hung_total` | counter | tasks whose executor was gone, by the action taken |
//!
//! The `operation` label is the A2A method (`SendMessage`, …) or the extension method's name as
//! soon as the request's method is read, errors included; `unknown` for a request refused
//! before that (a JSON-RPC body that is not a request, or a caller refused by authentication
//! before its body is read).
//!
//! The durations are Prometheus histograms (`_bucket`, `_sum`, `_count`), which aggregate
//! across instances; their buckets are set with [`MetricsBuilder`].
//!
//! On a [`MultiAgentServer`](super::MultiAgentServer), the request metrics of the HTTP
//! bindings (the first three) also carry `agent`, the agent's name.
//!
//! ```no_run
//! # use a2a_runtime::server::{A2aServer, Metrics};
//! # fn demo(server: A2aServer) -> Result<(), Box<dyn std::error::Error>> {
//! let metrics = Metrics::install()?;
//! let app = actix_web::App::new()
//!     .configure(server.config())
//!     .configure(server.metrics_route(metrics)); // GET /metrics
//! # Ok(()) }
//! ```
//!
//! An application that installs its own Prometheus recorder configures it with this crate's
//! buckets and mounts (or merges) its handle instead:
//!
//! ```no_run
//! # use a2a_runtime::server::{A2aServer, Metrics};
//! # fn demo(server: A2aServer) -> Result<(), Box<dyn std::error::Error>> {
//! use metrics_exporter_prometheus::PrometheusBuilder;
//! let builder = Metrics::builder().configure(PrometheusBuilder::new())?;
//! let handle = builder.install_recorder()?; // the application's recorder, for every metric
//! let metrics = Metrics::from_handle(handle);
//! let app = actix_web::App::new()
//!     .configure(server.config())
//!     .configure(server.metrics_route(metrics));
//! # Ok(()) }
//! ```

use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Instant;

use actix_web::body::{BodySize, MessageBody};
use actix_web::http::header::CONTENT_TYPE;
use actix_web::{HttpResponse, web};
use bytes::Bytes;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use super::A2aServer;
use super::failure::Failure;

/// The name of the request duration histogram.
const REQUEST_DURATION: &str = "a2a_request_duration_seconds";

/// The name of the push attempt duration histogram.
const PUSH_DURATION: &str = "a2a_push_delivery_duration_seconds";

/// A Prometheus registry to serve at `/metrics`: renders every metric recorded through the
/// `metrics` facade (this crate's and the application's) in the Prometheus text format.
///
/// Made by [`Metrics::install`] (this crate's recorder, once per process), or from the handle
/// of the application's own Prometheus recorder ([`Metrics::from_handle`]).
#[derive(Clone, Debug)]
pub struct Metrics {
    handle: PrometheusHandle,
}

/// The Prometheus recorder could not be installed or configured.
#[derive(Debug, thiserror::Error)]
#[error("could not install the Prometheus recorder: {0}")]
pub struct MetricsError(String);

impl Metrics {
    /// Installs the Prometheus recorder, with the default buckets, as the process's `metrics`
    /// recorder, once; later calls return the same (see [`MetricsBuilder::install`]).
    pub fn install() -> Result<Self, MetricsError> {
        Self::builder().install()
    }

    /// The buckets of this crate's histograms, for [`install`](MetricsBuilder::install) or
    /// for the application's own recorder ([`configure`](MetricsBuilder::configure)).
    pub fn builder() -> MetricsBuilder {
        MetricsBuilder::default()
    }

    /// The registry of the application's own Prometheus recorder: this crate records through
    /// the `metrics` facade, so its metrics are there too, beside the application's. Configure
    /// its builder with [`MetricsBuilder::configure`] for histograms with this crate's buckets.
    pub fn from_handle(handle: PrometheusHandle) -> Self {
        Self { handle }
    }

    /// Every metric, in the Prometheus text format.
    pub fn render(&self) -> String {
        self.handle.render()
    }
}

/// The buckets of this crate's histograms (in seconds), and where they apply: the recorder
/// [`install`](Self::install) sets up, or the application's own
/// ([`configure`](Self::configure)).
///
/// ```no_run
/// # fn f() -> Result<(), a2a_runtime::server::MetricsError> {
/// let metrics = a2a_runtime::server::Metrics::builder()
///     .request_duration_buckets([0.01, 0.1, 1.0, 10.0])
///     .install()?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder installs nothing until `install` or `configure`"]
pub struct MetricsBuilder {
    request: Vec<f64>,
    push: Vec<f64>,
}

impl Default for MetricsBuilder {
    fn default() -> Self {
        Self {
            request: DEFAULT_REQUEST_BUCKETS.to_vec(),
            push: DEFAULT_PUSH_BUCKETS.to_vec(),
        }
    }
}

/// The default buckets of `a2a_request_duration_seconds`: 0.5 ms to 10 s.
pub const DEFAULT_REQUEST_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The default buckets of `a2a_push_delivery_duration_seconds`: 5 ms to 30 s (the attempt's
/// timeout bounds it).
pub const DEFAULT_PUSH_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

impl MetricsBuilder {
    /// The upper bounds of `a2a_request_duration_seconds`' buckets (default
    /// [`DEFAULT_REQUEST_BUCKETS`]); `+Inf` is implied.
    pub fn request_duration_buckets(mut self, bounds: impl Into<Vec<f64>>) -> Self {
        self.request = bounds.into();
        self
    }

    /// The upper bounds of `a2a_push_delivery_duration_seconds`' buckets (default
    /// [`DEFAULT_PUSH_BUCKETS`]).
    pub fn push_duration_buckets(mut self, bounds: impl Into<Vec<f64>>) -> Self {
        self.push = bounds.into();
        self
    }

    /// `builder` (the application's Prometheus exporter) with this crate's histograms as
    /// histograms with these buckets. Fails on an empty list of bounds.
    pub fn configure(&self, builder: PrometheusBuilder) -> Result<PrometheusBuilder, MetricsError> {
        let error = |e: metrics_exporter_prometheus::BuildError| MetricsError(e.to_string());
        builder
            .set_buckets_for_metric(Matcher::Full(REQUEST_DURATION.into()), &self.request)
            .map_err(error)?
            .set_buckets_for_metric(Matcher::Full(PUSH_DURATION.into()), &self.push)
            .map_err(error)
    }

    /// Installs the Prometheus recorder, with these buckets, as the process's `metrics`
    /// recorder, once; later calls return the same registry (their buckets are not applied).
    ///
    /// Fails when the application installed a recorder first: that recorder receives this
    /// crate's metrics already; serve it, or pass a Prometheus one's handle to
    /// [`Metrics::from_handle`].
    pub fn install(self) -> Result<Metrics, MetricsError> {
        static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
        if let Some(handle) = HANDLE.get() {
            return Ok(Metrics::from_handle(handle.clone()));
        }
        let handle = self
            .configure(PrometheusBuilder::new())?
            .install_recorder()
            .map_err(|e| {
                MetricsError(format!(
                    "{e}: the recorder installed first receives this crate's metrics; with a \
                     Prometheus recorder, serve its handle (Metrics::from_handle)"
                ))
            })?;
        Ok(Metrics::from_handle(HANDLE.get_or_init(|| handle).clone()))
    }
}

impl A2aServer {
    /// Registers `GET /metrics` (Prometheus text format) with this server's metrics and
    /// everything else recorded in the process.
    pub fn metrics_route(
        &self,
        metrics: Metrics,
    ) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        let server = self.clone();
        move |cfg: &mut web::ServiceConfig| {
            let server = server.clone();
            let metrics = metrics.clone();
            cfg.route(
                "/metrics",
                web::get().to(move || {
                    let (server, metrics) = (server.clone(), metrics.clone());
                    async move {
                        server.export_extension_metrics();
                        server.export_quota_metrics();
                        HttpResponse::Ok()
                            .insert_header((CONTENT_TYPE, "text/plain; version=0.0.4"))
                            .body(metrics.render())
                    }
                }),
            );
        }
    }

    /// Copies the quotas' refusals and what they hold into the recorder.
    fn export_quota_metrics(&self) {
        let Some(usage) = self.pipeline().quota_usage() else {
            return;
        };
        for limit in crate::service::Limit::ALL {
            let (principal, tenant) = usage.refusals(limit);
            let name = limit.name();
            metrics::counter!("a2a_quota_refusals_total", "scope" => "principal", "limit" => name)
                .absolute(principal);
            metrics::counter!("a2a_quota_refusals_total", "scope" => "tenant", "limit" => name)
                .absolute(tenant);
        }
        // Gauges of counts far below 2^52: exact as f64.
        #[allow(clippy::cast_precision_loss)]
        {
            metrics::gauge!("a2a_quota_principals").set(usage.principals as f64);
            metrics::gauge!("a2a_quota_tenants").set(usage.tenants as f64);
            metrics::gauge!("a2a_quota_live_tasks").set(usage.live_tasks as f64);
            metrics::gauge!("a2a_quota_open_streams").set(usage.open_streams as f64);
        }
    }

    /// Copies the extensions' counters into the recorder.
    fn export_extension_metrics(&self) {
        for m in self.extension_metrics() {
            let uri = m.uri;
            metrics::counter!("a2a_extension_activations_total", "uri" => uri)
                .absolute(m.activations);
            metrics::counter!("a2a_extension_skips_total", "uri" => uri).absolute(m.skips);
            metrics::counter!("a2a_extension_refusals_total", "uri" => uri).absolute(m.refusals);
            metrics::counter!("a2a_extension_hook_errors_total", "uri" => uri)
                .absolute(m.hook_errors);
            metrics::counter!("a2a_extension_denials_total", "uri" => uri).absolute(m.denials);
        }
    }
}

/// Serves `fut` and records its request's metrics.
pub(crate) async fn measure<F: Future<Output = HttpResponse>>(
    binding: &'static str,
    agent: Option<super::agent_label::AgentLabel>,
    fut: F,
) -> HttpResponse {
    let start = Instant::now();
    let (resp, op) = crate::core::noting_operation(fut).await;
    let operation = op.unwrap_or("unknown");
    let code = resp.extensions().get::<Failure>().map_or(0, |f| f.code);
    // An agent of a server of several agents: the same metrics, labelled with its name.
    if let Some(agent) = agent {
        let name = agent.name();
        metrics::counter!("a2a_requests_total", "binding" => binding, "operation" => operation, "code" => code.to_string(), "agent" => name.clone())
            .increment(1);
        metrics::histogram!("a2a_request_duration_seconds", "binding" => binding, "operation" => operation, "agent" => name.clone())
            .record(start.elapsed().as_secs_f64());
        return gauged(
            resp,
            move || metrics::gauge!("a2a_active_streams", "binding" => binding, "operation" => operation, "agent" => name),
        );
    }
    metrics::counter!("a2a_requests_total", "binding" => binding, "operation" => operation, "code" => code.to_string())
        .increment(1);
    metrics::histogram!(REQUEST_DURATION, "binding" => binding, "operation" => operation)
        .record(start.elapsed().as_secs_f64());
    gauged(
        resp,
        || metrics::gauge!("a2a_active_streams", "binding" => binding, "operation" => operation),
    )
}

/// `resp`, counted in the gauge `gauge` makes while it streams (as it is, and no gauge made,
/// when it is no stream).
fn gauged(resp: HttpResponse, gauge: impl FnOnce() -> metrics::Gauge) -> HttpResponse {
    let streaming = resp
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !streaming {
        return resp;
    }
    let gauge = gauge();
    gauge.increment(1.0);
    resp.map_body(|_, body| Gauged {
        body,
        gauge: Some(gauge),
    })
    .map_into_boxed_body()
}

/// A stream's body, counted in `a2a_active_streams` until it ends or is dropped.
struct Gauged<B> {
    body: B,
    gauge: Option<metrics::Gauge>,
}

impl<B> Gauged<B> {
    fn end(&mut self) {
        if let Some(g) = self.gauge.take() {
            g.decrement(1.0);
        }
    }
}

impl<B> Drop for Gauged<B> {
    fn drop(&mut self) {
        self.end();
    }
}

impl<B: MessageBody + Unpin> MessageBody for Gauged<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.get_mut();
        let next = Pin::new(&mut this.body).poll_next(cx);
        if matches!(next, Poll::Ready(None)) {
            this.end();
        }
        next
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn configured_buckets_render_a_histogram() {
        let recorder = Metrics::builder()
            .request_duration_buckets([0.1, 1.0])
            .configure(PrometheusBuilder::new())
            .unwrap()
            .build_recorder();
        metrics::with_local_recorder(&recorder, || {
            metrics::histogram!(REQUEST_DURATION, "operation" => "GetTask").record(0.5);
        });
        let page = recorder.handle().render();
        assert!(
            page.contains("# TYPE a2a_request_duration_seconds histogram"),
            "{page}"
        );
        for (le, n) in [("0.1", 0), ("1", 1), ("+Inf", 1)] {
            let line = format!(
                "a2a_request_duration_seconds_bucket{{operation=\"GetTask\",le=\"{le}\"}} {n}"
            );
            assert!(page.contains(&line), "{line} in {page}");
        }
        assert!(
            Metrics::builder()
                .push_duration_buckets([])
                .configure(PrometheusBuilder::new())
                .is_err()
        );
    }
}
