//! The actix-web server: JSON-RPC and HTTP+JSON bindings, SSE streaming, the agent card.
//!
//! ```no_run
//! use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
//! use a2a_runtime::server::A2aServer;
//! use a2a_runtime::types::{AgentCard, Artifact, Part};
//! use a2a_runtime::A2aError;
//!
//! struct Echo;
//! impl AgentExecutor for Echo {
//!     async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
//!         events.artifact(Artifact::new([Part::text(ctx.text())])).await?;
//!         events.complete().await
//!     }
//! }
//!
//! # async fn run() -> std::io::Result<()> {
//! let card = AgentCard { name: "Echo".into(), description: "Echoes".into(), version: "1.0.0".into(), ..Default::default() };
//! let server = A2aServer::builder().card(card).executor(Echo).build().map_err(std::io::Error::other)?;
//!
//! // Either serve it alone...
//! // server.serve("127.0.0.1:8080").await
//! // ...or mount it into your own App, beside your routes:
//! let app = actix_web::App::new()
//!     .service(actix_web::web::scope("/a2a").configure(server.config()))
//!     .route("/health", actix_web::web::get().to(|| async { "ok" }));
//! # Ok(()) }
//! ```

mod agent_label;
mod agents;
mod builder;
mod card;
mod catalog;
mod failure;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
mod jsonrpc;
#[cfg(feature = "metrics")]
mod metrics;
mod mount;
mod observe;
#[cfg(feature = "openapi")]
mod openapi;
mod peer;
mod response_error;
mod rest;
mod rest_routes;
mod routes;
mod running;
mod shutdown;
mod sse;
#[cfg(feature = "tls")]
mod tls;
mod v0_3;
mod v0_3_rest;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix_web::web;

pub use agents::{AGENTS_PATH, MultiAgentServer, MultiAgentServerBuilder};
pub use builder::{A2aServerBuilder, BuildError};
pub use card::WELL_KNOWN_PATH;
pub use catalog::{CatalogEntries, Listing};
pub use http::{A2A_EXTENSIONS, A2A_JSON, A2A_VERSION, X_A2A_EXTENSIONS};
#[cfg(feature = "metrics")]
pub use metrics::{
    DEFAULT_PUSH_BUCKETS, DEFAULT_REQUEST_BUCKETS, Metrics, MetricsBuilder, MetricsError,
};
pub use running::RunningServer;
#[cfg(feature = "tls")]
pub use tls::{ClientAuth, TlsConfig};

use crate::auth::Guard;
use crate::core::RequestHandler;
use crate::service::Pipeline;
use crate::types::AgentCard;
use card::CardDoc;

/// The shared state of a running server's routes.
pub(crate) struct Inner {
    /// What every binding runs a request through.
    pipeline: Arc<Pipeline>,
    card: RwLock<Arc<CardDoc>>,
    /// Where the card's interfaces point.
    urls: mount::CardUrls,
    keep_alive: Duration,
    jsonrpc_path: String,
    rest_path: String,
    /// Fired when a shutdown's grace period is over.
    over: tokio_util::sync::CancellationToken,
    shutdown_grace: Duration,
    cancel_on_shutdown: bool,
    handler: Arc<dyn RequestHandler>,
    /// The OpenAPI document of the HTTP+JSON binding, when served.
    #[cfg(feature = "openapi")]
    openapi: Option<openapi::Document>,
}

impl Inner {
    /// The card document as served now.
    fn card(&self) -> Arc<CardDoc> {
        self.card
            .read()
            .map(|c| c.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }
}

/// An A2A server: mount it into an actix-web `App` with [`A2aServer::config`], or run it alone
/// with [`A2aServer::serve`].
#[derive(Clone)]
pub struct A2aServer {
    inner: web::Data<Inner>,
    workers: Option<usize>,
    #[cfg(feature = "push")]
    push: Option<Arc<crate::push::PushSender>>,
    /// Where the gRPC listener is served, when there is one.
    #[cfg(feature = "grpc")]
    grpc: Option<String>,
    /// The TLS settings and their rustls configuration, when the listeners speak TLS.
    #[cfg(feature = "tls")]
    tls: Option<(TlsConfig, Arc<rustls::ServerConfig>)>,
}

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("card", &self.inner.card().card.name)
            .finish_non_exhaustive()
    }
}

impl A2aServer {
    /// The push notification sender, when push is enabled: its counters
    /// ([`PushSender::metrics`](crate::push::PushSender::metrics)) and the deliveries it gave
    /// up on ([`PushSender::dead_deliveries`](crate::push::PushSender::dead_deliveries)).
    #[cfg(feature = "push")]
    pub fn push(&self) -> Option<&Arc<crate::push::PushSender>> {
        self.push.as_ref()
    }

    /// The card as served (with `supportedInterfaces` listing the served URLs).
    pub fn card(&self) -> AgentCard {
        self.inner.card().card.clone()
    }

    /// The authentication and authorization this server runs on every request (`None`: no
    /// authenticator is configured, every caller is anonymous). Other transports call it as
    /// the HTTP bindings do.
    pub fn guard(&self) -> Option<&Arc<Guard>> {
        self.inner.pipeline.guard()
    }

    /// Per-extension counters: activations, skips, refusals, hook errors.
    pub fn extension_metrics(&self) -> Vec<crate::extension::ExtensionMetrics> {
        self.inner.pipeline.service().extensions().metrics()
    }

    /// The request pipeline behind every binding, with this server's authentication,
    /// versions, extensions and agent: for serving requests over another transport (or in
    /// process) exactly as the bindings do.
    pub fn pipeline(&self) -> &Pipeline {
        &self.inner.pipeline
    }
}
