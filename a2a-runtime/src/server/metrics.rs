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

use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Instant;

use actix_web::body::{BodySize, MessageBody};
use actix_web::http::header::CONTENT_TYPE;
use actix_web::{HttpResponse, web};
use bytes::Bytes;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use super::A2aServer;
use super::failure::Failure;
use crate::protocol::Operation;

/// The process's Prometheus recorder: renders every metric recorded through the `metrics`
/// facade (this crate's and the application's) in the Prometheus text format.
#[derive(Clone, Debug)]
pub struct Metrics {
    handle: PrometheusHandle,
}

/// The Prometheus recorder could not be installed.
#[derive(Debug, thiserror::Error)]
#[error("could not install the Prometheus recorder: {0}")]
pub struct MetricsError(String);

impl Metrics {
    /// Installs the Prometheus recorder as the process's `metrics` recorder, once; later calls
    /// return the same. Fails when another recorder was installed first.
    pub fn install() -> Result<Self, MetricsError> {
        static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
        if let Some(handle) = HANDLE.get() {
            return Ok(Self {
                handle: handle.clone(),
            });
        }
        let handle = PrometheusBuilder::new()
            .install_recorder()
            .map_err(|e| MetricsError(e.to_string()))?;
        Ok(Self {
            handle: HANDLE.get_or_init(|| handle).clone(),
        })
    }

    /// Every metric, in the Prometheus text format.
    pub fn render(&self) -> String {
        self.handle.render()
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
    fut: F,
) -> HttpResponse {
    let start = Instant::now();
    let (resp, op) = crate::core::noting_operation(fut).await;
    let operation = op.map_or("unknown", Operation::method);
    let code = resp.extensions().get::<Failure>().map_or(0, |f| f.code);
    metrics::counter!("a2a_requests_total", "binding" => binding, "operation" => operation, "code" => code.to_string())
        .increment(1);
    metrics::histogram!("a2a_request_duration_seconds", "binding" => binding, "operation" => operation)
        .record(start.elapsed().as_secs_f64());
    let streaming = resp
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !streaming {
        return resp;
    }
    let gauge =
        metrics::gauge!("a2a_active_streams", "binding" => binding, "operation" => operation);
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
