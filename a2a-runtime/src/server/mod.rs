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

mod card;
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
mod response_error;
mod rest;
mod shutdown;
mod sse;
#[cfg(feature = "tls")]
mod tls;
mod v0_3;
mod v0_3_rest;

use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::header::HeaderValue;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, web};

pub use card::WELL_KNOWN_PATH;
pub use http::{
    A2A_EXTENSIONS, A2A_JSON, A2A_VERSION, A2aExtensions, A2aVersion, X_A2A_EXTENSIONS,
};
#[cfg(feature = "metrics")]
pub use metrics::{Metrics, MetricsError};
#[cfg(feature = "tls")]
pub use tls::{ClientAuth, TlsConfig};

use crate::auth::{Authenticator, Authorizer, DefaultAuthorizer, Guard};
use crate::compat::ProtocolVersion;
use crate::core::{A2aService, AgentExecutor, DefaultRequestHandler, Limits, RequestHandler};
use crate::extension::registry::ExtensionConfig;
use crate::extension::{Activated, Activation, Extension, RegistryError};
use crate::protocol::{A2aRequest, Operation};
use crate::store::{InMemoryPushConfigStore, InMemoryTaskStore, PushConfigStore, TaskStore};
use crate::types::{AgentCard, Validate};
use card::CardDoc;

/// Why a server could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Neither an executor nor a request handler was given.
    #[error("no agent: call .executor(..) (or .handler(..)) on the builder")]
    NoAgent,
    /// The card is invalid.
    #[error("the agent card is invalid: {0}")]
    InvalidCard(String),
    /// The extensions cannot be used together.
    #[error(transparent)]
    Extensions(#[from] RegistryError),
    /// The security configuration does not hold together (e.g. the card declares security
    /// schemes but no authenticator enforces them).
    #[error("security: {0}")]
    Security(String),
    /// The card declares `pushNotifications` but nothing would send them.
    #[error(
        "the card declares pushNotifications but the server has no push sender: call .push(PushConfig::new()) on the builder (feature `push`), or do not declare the capability"
    )]
    PushWithoutSender,
    /// Push notifications need the default handler (`.executor(..)`), not a custom one.
    #[error("push notifications need .executor(..): a custom .handler(..) brings its own")]
    PushWithCustomHandler,
    /// The push sender could not be built.
    #[error("cannot build the push sender: {0}")]
    Push(String),
    /// Push is on but the task store writes no push deliveries
    /// ([`TaskStore::push_outbox`] is `None`).
    #[error(
        "push notifications need a task store that writes their deliveries with its events: use store::connect(..) stores, the default store, or InMemoryTaskStore::with_push_configs(..).with_push_outbox(..) with the same push config store"
    )]
    PushWithoutOutbox,
    /// The TLS settings are not usable (a certificate or key that does not parse, a key that
    /// does not match the certificate, an empty client CA bundle).
    #[error("TLS: {0}")]
    Tls(String),
    /// The OpenAPI document could not be built.
    #[cfg(feature = "openapi")]
    #[error("cannot build the OpenAPI document: {0}")]
    OpenApi(String),
}

/// The shared state of a running server's routes.
pub(crate) struct Inner {
    service: A2aService,
    card: RwLock<Arc<CardDoc>>,
    /// Where the card's interfaces point.
    urls: mount::CardUrls,
    keep_alive: Duration,
    jsonrpc_path: String,
    rest_path: String,
    echo_extensions: bool,
    guard: Option<Arc<Guard>>,
    /// Fired when a shutdown's grace period is over.
    over: tokio_util::sync::CancellationToken,
    shutdown_grace: Duration,
    cancel_on_shutdown: bool,
    handler: Arc<dyn RequestHandler>,
    /// The protocol versions answered.
    versions: v0_3::Versions,
    /// The OpenAPI document of the HTTP+JSON binding, when served.
    #[cfg(feature = "openapi")]
    openapi: Option<openapi::Document>,
}

impl Inner {
    /// Authorizes a parsed request (see [`Guard::authorize`]). Without an authenticator every
    /// caller is anonymous and the server is open (and then it has no extended card to serve:
    /// the builder refuses one without an authenticator).
    fn authorize(
        &self,
        ctx: &mut crate::extension::RequestContext,
        req: &A2aRequest,
    ) -> Result<(), crate::A2aError> {
        match &self.guard {
            Some(guard) => guard.authorize(ctx, req),
            None => Ok(()),
        }
    }

    /// The URIs to echo in `A2A-Extensions` (none when echo is switched off).
    fn echo(&self, activated: Activated) -> Activated {
        if self.echo_extensions {
            activated
        } else {
            Activated::default()
        }
    }

    /// The card as served: signed when a signer is configured.
    #[cfg(feature = "grpc")]
    pub(crate) fn sign(&self, card: AgentCard) -> AgentCard {
        self.urls.sign(card)
    }

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
    #[cfg(feature = "grpc")]
    grpc: Option<grpc::GrpcConfig>,
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

/// Builds the default handler once the stores and the card are known.
type MakeHandler = Box<
    dyn FnOnce(
        Arc<dyn TaskStore>,
        Arc<dyn PushConfigStore>,
        Arc<AgentCard>,
        Limits,
    ) -> DefaultRequestHandler,
>;

/// Builds an [`A2aServer`].
pub struct A2aServerBuilder {
    card: AgentCard,
    executor: Option<MakeHandler>,
    handler: Option<Arc<dyn RequestHandler>>,
    task_store: Option<Arc<dyn TaskStore>>,
    push_store: Option<Arc<dyn PushConfigStore>>,
    cluster: Option<Arc<dyn crate::store::Cluster>>,
    cluster_options: crate::core::ClusterOptions,
    extended_card: Option<AgentCard>,
    limits: Limits,
    base_url: Option<String>,
    jsonrpc_path: String,
    rest_path: String,
    keep_alive: Duration,
    card_max_age: Duration,
    workers: Option<usize>,
    extensions: ExtensionConfig,
    echo_extensions: bool,
    retain_finished: usize,
    max_tasks: usize,
    retention: Option<crate::core::Retention>,
    authenticators: Vec<Arc<dyn Authenticator>>,
    authorizer: Option<Arc<dyn Authorizer>>,
    #[cfg(feature = "jwt")]
    card_signer: Option<crate::auth::signing::CardSigner>,
    versions: v0_3::Versions,
    #[cfg(feature = "push")]
    push: Option<crate::push::PushConfig>,
    #[cfg(feature = "grpc")]
    grpc: Option<grpc::GrpcConfig>,
    #[cfg(feature = "tls")]
    tls: Option<TlsConfig>,
    shutdown_grace: Duration,
    cancel_on_shutdown: bool,
    #[cfg(feature = "openapi")]
    openapi: Option<String>,
}

impl std::fmt::Debug for A2aServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServerBuilder")
            .field("card", &self.card.name)
            .finish_non_exhaustive()
    }
}

impl A2aServer {
    /// A builder with an in-memory store, JSON-RPC at `/` and REST at `/`.
    pub fn builder() -> A2aServerBuilder {
        A2aServerBuilder {
            card: AgentCard::default(),
            executor: None,
            handler: None,
            task_store: None,
            push_store: None,
            cluster: None,
            cluster_options: crate::core::ClusterOptions::default(),
            extended_card: None,
            limits: Limits::default(),
            base_url: None,
            jsonrpc_path: "/".into(),
            rest_path: String::new(),
            keep_alive: Duration::from_secs(15),
            card_max_age: Duration::from_secs(300),
            workers: None,
            extensions: ExtensionConfig::new(),
            echo_extensions: true,
            retain_finished: 10_000,
            max_tasks: crate::store::DEFAULT_MAX_TASKS,
            retention: None,
            authenticators: Vec::new(),
            authorizer: None,
            #[cfg(feature = "jwt")]
            card_signer: None,
            versions: v0_3::Versions::default(),
            #[cfg(feature = "push")]
            push: None,
            #[cfg(feature = "grpc")]
            grpc: None,
            #[cfg(feature = "tls")]
            tls: None,
            shutdown_grace: Duration::from_secs(30),
            cancel_on_shutdown: true,
            #[cfg(feature = "openapi")]
            openapi: None,
        }
    }

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
        self.inner.guard.as_ref()
    }

    /// Per-extension counters: activations, skips, refusals, hook errors.
    pub fn extension_metrics(&self) -> Vec<crate::extension::ExtensionMetrics> {
        self.inner.service.extensions().metrics()
    }

    /// The transport-independent service behind the bindings, with this server's handler,
    /// limits and extensions: for driving requests in process (tests, benchmarks, another
    /// transport) exactly as the bindings do — [`A2aService::begin`], then
    /// [`A2aService::call`].
    pub fn service(&self) -> &A2aService {
        &self.inner.service
    }

    /// Registers the routes (both bindings and the agent card) on an actix-web `App` or scope.
    ///
    /// The card is served at `/.well-known/agent-card.json` relative to where this is mounted.
    /// Without [`url`](A2aServerBuilder::url), its interfaces point at the request's host and
    /// the path the card was requested under. To mount under a scope with the card also at the
    /// root, use [`A2aServer::mount`].
    pub fn config(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        let inner = self.inner.clone();
        move |cfg: &mut web::ServiceConfig| {
            register_card(cfg, inner.clone(), false);
            #[cfg(feature = "openapi")]
            register_openapi(cfg, &inner);
            let rpc = inner.clone();
            let rpc_handler = move |req: HttpRequest, payload: web::Payload| {
                let inner = rpc.clone();
                async move {
                    if req.method() != actix_web::http::Method::POST {
                        return method_not_allowed("POST");
                    }
                    let r = req.clone();
                    observe::observe("JSONRPC", &r, jsonrpc::handle(inner, req, payload)).await
                }
            };
            // Two plain resources rather than one with two patterns: actix matches a
            // multi-pattern resource with a regex on every request. No method guard either: a
            // guard records the methods it checked in a per-request map (three allocations on
            // every request); the handler answers other methods with 405 itself. With a slash
            // first: at the root the other path is empty, and matching an empty pattern
            // compares zero bytes at a dangling pointer, which the CPU may make slow (see
            // `Scope`'s `PartialEq`); a request reaches it only through a mounting scope.
            let path = inner.jsonrpc_path.trim_end_matches('/').to_owned();
            cfg.service(
                web::resource(format!("{path}/")).route(web::route().to(rpc_handler.clone())),
            );
            cfg.service(web::resource(path).route(web::route().to(rpc_handler)));
            if inner.service.extensions().has_methods() {
                for prefix in ["", "/{tenant}"] {
                    let methods = inner.clone();
                    let handler = move |req: HttpRequest, payload: web::Payload| {
                        let inner = methods.clone();
                        async move {
                            let r = req.clone();
                            observe::observe(
                                "HTTP+JSON",
                                &r,
                                rest::handle_method(inner, req, payload),
                            )
                            .await
                        }
                    };
                    let base = inner.rest_path.trim_end_matches('/');
                    cfg.route(
                        &format!("{base}{prefix}/extensions/{{tail:.*}}"),
                        web::post().to(handler),
                    );
                }
            }
            // Before the tenant routes: `/v1/...` is also a path of tenant `v1`.
            if inner.versions.v0_3 {
                register_v0_3_rest(cfg, &inner, inner.rest_path.trim_end_matches('/'));
            }
            for prefix in [String::new(), "/{tenant}".to_owned()] {
                register_rest(
                    cfg,
                    &inner,
                    &format!("{}{}", inner.rest_path.trim_end_matches('/'), prefix),
                );
            }
        }
    }

    /// Registers the bindings under the scope `path` and the agent card both at the root's
    /// `/.well-known/agent-card.json` and under `path`; without
    /// [`url`](A2aServerBuilder::url), the card's interfaces point at the request's host and
    /// `path`.
    ///
    /// # Panics
    /// When the server was mounted at another path already (its card can point at one place
    /// only): a startup error.
    pub fn mount(&self, path: &str) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        assert!(
            self.inner.urls.set_mount(path),
            "A2aServer::mount({path:?}): this server is mounted at {:?} already",
            self.inner.urls.mount().unwrap_or_default()
        );
        let inner = self.inner.clone();
        let scope = self.inner.urls.mount().unwrap_or_default().to_owned();
        let config = self.config();
        move |cfg: &mut web::ServiceConfig| {
            if scope.is_empty() {
                config(cfg);
            } else {
                register_card(cfg, inner.clone(), true);
                cfg.service(web::scope(&scope).configure(config.clone()));
            }
        }
    }

    /// Registers only the agent card at `/.well-known/agent-card.json` (for mounting at the root
    /// when the bindings live under a scope given to [`url`](A2aServerBuilder::url); see
    /// [`A2aServer::mount`] to have both registered together).
    ///
    /// # Panics
    /// When the builder had no [`url`](A2aServerBuilder::url) and the server was not
    /// [`mount`](A2aServer::mount)ed: the card could not tell where the bindings are (a
    /// startup error, rather than a card pointing at the wrong place).
    pub fn well_known(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        assert!(
            self.inner.urls.is_fixed() || self.inner.urls.mount().is_some(),
            "A2aServer::well_known(): the card cannot tell where the bindings are mounted; \
             give the builder .url(\"https://host/path\") or use A2aServer::mount(\"/path\")"
        );
        let inner = self.inner.clone();
        move |cfg: &mut web::ServiceConfig| register_card(cfg, inner.clone(), true)
    }

    /// Binds `addr` and starts serving in the background; returns the bound address and a
    /// handle to stop it. When the builder had no explicit URL, the card's interfaces use the
    /// bound address.
    pub async fn start(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<RunningServer> {
        let listener = std::net::TcpListener::bind(addr)?;
        let local = listener.local_addr()?;
        let scheme = self.scheme();
        if !self.inner.urls.is_fixed() {
            self.set_base_url(&format!("{scheme}://{local}"));
        }
        let config = self.config();
        // The grace period is run by `RunningServer` (streams get a final event when it is
        // over); actix's own timeout only bounds the flush of those last events. Signals are
        // handled by `RunningServer::wait`. A client's FIN ends its connection at once: no
        // A2A client half-closes, and a stream's subscriber is released without waiting for a
        // write to fail.
        let flush = self.inner.shutdown_grace.as_secs() + 5;
        let server =
            actix_web::HttpServer::new(move || actix_web::App::new().configure(config.clone()))
                .on_connect(on_connect)
                .h1_allow_half_closed(false)
                .disable_signals()
                .shutdown_timeout(flush);
        #[cfg(feature = "tls")]
        let mut server = match &self.tls {
            Some((_, rustls)) => server.listen_rustls_0_23(listener, (**rustls).clone())?,
            None => server.listen(listener)?,
        };
        #[cfg(not(feature = "tls"))]
        let mut server = server.listen(listener)?;
        if let Some(n) = self.workers {
            server = server.workers(n);
        }
        #[cfg(feature = "grpc")]
        let grpc = match &self.grpc {
            Some(config) => Some(grpc::start(self.inner.clone(), config, self.grpc_tls()).await?),
            None => None,
        };
        let server = server.run();
        let handle = server.handle();
        let join = tokio::spawn(server);
        Ok(RunningServer {
            addr: local,
            scheme,
            handle,
            join,
            #[cfg(feature = "grpc")]
            grpc,
            inner: self.inner.clone(),
        })
    }

    /// Serves on `addr` until Ctrl-C or SIGTERM, then shuts down gracefully (see
    /// [`A2aServerBuilder::shutdown_grace`]).
    pub async fn serve(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<()> {
        self.start(addr).await?.wait().await
    }

    /// `https` when the listeners speak TLS, else `http`.
    fn scheme(&self) -> &'static str {
        #[cfg(feature = "tls")]
        if self.tls.is_some() {
            return "https";
        }
        "http"
    }

    /// The TLS settings of the gRPC listener.
    #[cfg(feature = "grpc")]
    fn grpc_tls(&self) -> Option<&grpc::TlsSettings> {
        #[cfg(feature = "tls")]
        return self.tls.as_ref().map(|(settings, _)| settings);
        #[cfg(not(feature = "tls"))]
        None
    }

    fn set_base_url(&self, base: &str) {
        let doc = self.inner.urls.doc_at(base);
        if let Ok(mut slot) = self.inner.card.write() {
            *slot = Arc::new(doc);
        }
        self.inner.urls.fix();
    }
}

/// A server started with [`A2aServer::start`].
pub struct RunningServer {
    /// The bound address.
    pub addr: SocketAddr,
    scheme: &'static str,
    handle: ServerHandle,
    join: tokio::task::JoinHandle<std::io::Result<()>>,
    #[cfg(feature = "grpc")]
    grpc: Option<grpc::RunningGrpc>,
    inner: web::Data<Inner>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// `http://<addr>`, or `https://<addr>` with TLS.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// The bound address of the gRPC listener, when one was configured
    /// (`A2aServerBuilder::grpc_addr`).
    #[cfg(feature = "grpc")]
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.grpc.as_ref().map(|g| g.addr)
    }

    /// Waits until the server stops: on Ctrl-C or SIGTERM it shuts down gracefully (as
    /// [`RunningServer::stop`]); a stop through [`RunningServer::handle`] ends it at once. The
    /// gRPC listener stops with it.
    pub async fn wait(mut self) -> std::io::Result<()> {
        tokio::select! {
            joined = &mut self.join => {
                let http = joined.map_err(std::io::Error::other);
                self.stop_grpc().await?;
                return http?;
            }
            () = shutdown::signal() => {}
        }
        tracing::info!(grace = ?self.inner.shutdown_grace, "shutting down");
        self.shut_down().await
    }

    /// A handle that can stop the server from elsewhere.
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Stops the server gracefully and waits for it: no new connections; open requests have
    /// the grace period ([`A2aServerBuilder::shutdown_grace`]) to finish, then open streams get
    /// a final `event: error` (Unavailable), waiting requests an Unavailable error, and the
    /// running tasks are canceled unless configured otherwise.
    pub async fn stop(self) {
        let _ = self.shut_down().await;
    }

    async fn shut_down(mut self) -> std::io::Result<()> {
        // Sends the command now; the future only waits for the workers to end.
        let stopped = self.handle.stop(true);
        tokio::select! {
            joined = &mut self.join => {
                let http = joined.map_err(std::io::Error::other);
                self.stop_grpc().await?;
                return http?;
            }
            () = tokio::time::sleep(self.inner.shutdown_grace) => {}
        }
        self.inner.over.cancel();
        self.inner
            .handler
            .shutdown(self.inner.cancel_on_shutdown)
            .await;
        stopped.await;
        let http = (&mut self.join).await.map_err(std::io::Error::other);
        self.stop_grpc().await?;
        http?
    }

    /// Stops the gRPC listener, when there is one.
    async fn stop_grpc(&mut self) -> std::io::Result<()> {
        #[cfg(feature = "grpc")]
        if let Some(grpc) = self.grpc.take() {
            grpc.stop().await?;
        }
        Ok(())
    }
}

/// Sets TCP_NODELAY on each accepted connection: SSE events (and the headers sent before the
/// first one) are small writes that would otherwise wait for the client's delayed ACK (Nagle),
/// up to 40 ms each. On a TLS connection, also records the client's certificate.
fn on_connect(conn: &dyn std::any::Any, _ext: &mut actix_web::dev::Extensions) {
    if let Some(tcp) = conn.downcast_ref::<actix_web::rt::net::TcpStream>() {
        let _ = tcp.set_nodelay(true);
    }
    #[cfg(feature = "tls")]
    tls::on_tls_connect(conn, _ext);
}

/// The card route; `at_root`: registered at the root for bindings mounted elsewhere.
fn register_card(cfg: &mut web::ServiceConfig, inner: web::Data<Inner>, at_root: bool) {
    cfg.route(
        WELL_KNOWN_PATH,
        web::get().to(move |req: HttpRequest| {
            let inner = inner.clone();
            async move {
                if inner.urls.is_fixed() {
                    inner.card().respond(&req)
                } else {
                    let mount = if at_root { inner.urls.mount() } else { None };
                    inner.urls.derived(&req, mount).respond(&req)
                }
            }
        }),
    );
}

/// The OpenAPI document's route, when it is served.
#[cfg(feature = "openapi")]
fn register_openapi(cfg: &mut web::ServiceConfig, inner: &web::Data<Inner>) {
    if let Some(doc) = &inner.openapi {
        let inner = inner.clone();
        cfg.route(
            &doc.path,
            web::get().to(move |req: HttpRequest| {
                let inner = inner.clone();
                async move {
                    match &inner.openapi {
                        Some(doc) => doc.respond(&req),
                        None => HttpResponse::NotFound().finish(),
                    }
                }
            }),
        );
    }
}

fn register_rest(cfg: &mut web::ServiceConfig, inner: &web::Data<Inner>, base: &str) {
    register_routes(cfg, inner, base, rest::ROUTES, rest::handle);
}

fn register_v0_3_rest(cfg: &mut web::ServiceConfig, inner: &web::Data<Inner>, base: &str) {
    let routes = crate::compat::v0_3::rest::ROUTES;
    register_routes(cfg, inner, base, routes, v0_3_rest::handle);
}

/// Registers `routes` below `base`, each served by `serve`.
fn register_routes<F, Fut>(
    cfg: &mut web::ServiceConfig,
    inner: &web::Data<Inner>,
    base: &str,
    routes: &'static [(&'static str, &'static str, Operation)],
    serve: F,
) where
    F: Fn(web::Data<Inner>, HttpRequest, web::Payload, Operation) -> Fut + Copy + 'static,
    Fut: std::future::Future<Output = HttpResponse> + 'static,
{
    // Group routes by path so one resource answers every method of a path (405 otherwise).
    let mut seen: Vec<&str> = Vec::new();
    for (_, path, _) in routes {
        if seen.contains(path) {
            continue;
        }
        seen.push(path);
        let mut resource = web::resource(format!("{base}{path}"));
        for (method, p, op) in routes {
            if p != path {
                continue;
            }
            let inner = inner.clone();
            let op: Operation = *op;
            let handler = move |req: HttpRequest, payload: web::Payload| {
                let inner = inner.clone();
                async move {
                    let r = req.clone();
                    observe::observe("HTTP+JSON", &r, serve(inner, req, payload, op)).await
                }
            };
            let route = match *method {
                "GET" => web::get(),
                "POST" => web::post(),
                _ => web::delete(),
            };
            resource = resource.route(route.to(handler));
        }
        cfg.service(resource);
    }
}

/// The extended card with what the server adds to the public one: the extension
/// declarations, the security schemes and requirements, and the interfaces (when it lists none
/// of its own).
fn extended(mut ext: AgentCard, public: &AgentCard) -> AgentCard {
    for decl in &public.capabilities.extensions {
        if !ext
            .capabilities
            .extensions
            .iter()
            .any(|e| e.uri == decl.uri)
        {
            ext.capabilities.extensions.push(decl.clone());
        }
    }
    for (name, scheme) in &public.security_schemes {
        ext.security_schemes
            .entry(name.clone())
            .or_insert_with(|| scheme.clone());
    }
    for req in &public.security_requirements {
        if !ext.security_requirements.contains(req) {
            ext.security_requirements.push(req.clone());
        }
    }
    if ext.supported_interfaces.is_empty() {
        ext.supported_interfaces = public.supported_interfaces.clone();
    }
    if ext.capabilities.streaming.is_none() {
        ext.capabilities.streaming = public.capabilities.streaming;
    }
    ext.capabilities.extended_agent_card = Some(true);
    ext
}

impl A2aServerBuilder {
    /// The agent card. `supportedInterfaces` is filled in with the URLs actually served; the
    /// `streaming` capability defaults to true.
    pub fn card(mut self, card: AgentCard) -> Self {
        self.card = card;
        self
    }

    /// The agent.
    pub fn executor(mut self, executor: impl AgentExecutor) -> Self {
        self.executor = Some(Box::new(move |store, push, card, limits| {
            DefaultRequestHandler::new(executor, store, push, card, limits)
        }));
        self
    }

    /// A custom request handler instead of an executor (for wrapping or replacing the default).
    pub fn handler(mut self, handler: Arc<dyn RequestHandler>) -> Self {
        self.handler = Some(handler);
        self
    }

    /// The task store (default: in memory).
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// How many finished tasks the default in-memory store keeps per tenant and owner
    /// (default 10,000; the oldest finished tasks are dropped first). Ignored with a custom
    /// [`task_store`](Self::task_store).
    pub fn retain_finished_tasks(mut self, n: usize) -> Self {
        self.retain_finished = n;
        self
    }

    /// How many tasks the default in-memory store holds in all, over every tenant and owner
    /// (default [`DEFAULT_MAX_TASKS`](crate::store::DEFAULT_MAX_TASKS)): beyond it the task
    /// that finished first is evicted, and a new task is refused (Unavailable) while every
    /// task held is live. Ignored with a custom [`task_store`](Self::task_store).
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.max_tasks = n;
        self
    }

    /// How long tasks are kept: finished tasks purged after an age, interrupted tasks ended
    /// when untouched too long (default: [`Retention::in_memory`](crate::core::Retention::in_memory)
    /// with the in-memory store, [`Retention::durable`](crate::core::Retention::durable) with
    /// another). See [`Retention`](crate::core::Retention).
    pub fn retention(mut self, retention: crate::core::Retention) -> Self {
        self.retention = Some(retention);
        self
    }

    /// The push-config store (default: in memory). With push on, the task store must write
    /// the deliveries of these configs with its events
    /// ([`TaskStore::push_outbox`]): give a matching [`task_store`](Self::task_store) too
    /// (e.g. [`InMemoryTaskStore::with_push_configs`] and
    /// [`with_push_outbox`](InMemoryTaskStore::with_push_outbox)), or use
    /// [`stores`](Self::stores).
    pub fn push_config_store(mut self, store: Arc<dyn PushConfigStore>) -> Self {
        self.push_store = Some(store);
        self
    }

    /// Enables push notifications (and declares the capability): configs are checked by the
    /// URL guard and every event a task with configs logs is POSTed to them, from the outbox
    /// the task store writes with each event ([`TaskStore::push_outbox`]; the build fails
    /// with [`BuildError::PushWithoutOutbox`] on a store without one). See [`crate::push`].
    #[cfg(feature = "push")]
    pub fn push(mut self, config: crate::push::PushConfig) -> Self {
        self.push = Some(config);
        self
    }

    /// The task and push-config stores opened by [`store::connect`](crate::store::connect)
    /// (`memory:`, `sqlite://path`, `postgres://…`): with push on, deliveries wait in the
    /// same database as the tasks, written with their events.
    pub fn stores(self, stores: crate::store::Stores) -> Self {
        let this = self
            .task_store(stores.tasks)
            .push_config_store(stores.push_configs);
        match stores.cluster {
            Some(cluster) => this.cluster(cluster),
            None => this,
        }
    }

    /// Serves the task store together with other instances through `cluster` (the same
    /// database; see [`DefaultRequestHandler::with_cluster`]): streams follow tasks running on
    /// other instances, cancels reach them, and the tasks of an instance that died end as
    /// FAILED. [`stores`](Self::stores) sets it for a PostgreSQL store.
    pub fn cluster(mut self, cluster: Arc<dyn crate::store::Cluster>) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// Lease and polling periods of [`cluster`](Self::cluster) (default
    /// [`ClusterOptions::default`](crate::core::ClusterOptions)).
    pub fn cluster_options(mut self, options: crate::core::ClusterOptions) -> Self {
        self.cluster_options = options;
        self
    }

    /// Serves `card` from GetExtendedAgentCard (and declares the capability).
    pub fn extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// Request and retention limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The public base URL the bindings are reachable at (used in the card's interfaces),
    /// e.g. `https://agents.example.com/a2a`. Default: the bound address with
    /// [`A2aServer::start`]; mounted into an App, the request's host and the mount path
    /// ([`A2aServer::card`] then shows `http://127.0.0.1:8080`).
    pub fn url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// The JSON-RPC path below the mount point (default `/`).
    pub fn jsonrpc_path(mut self, path: impl Into<String>) -> Self {
        self.jsonrpc_path = path.into();
        self
    }

    /// The REST base path below the mount point (default: the mount point itself).
    pub fn rest_path(mut self, path: impl Into<String>) -> Self {
        self.rest_path = path.into();
        self
    }

    /// The SSE keep-alive interval (default 15 s).
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every;
        self
    }

    /// The number of actix workers for [`A2aServer::start`] (default: one per core).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// Enables an extension with this value (its fields are the params published in the card).
    /// Extensions are negotiated in the order they are added; with
    /// [`linked_extensions(true)`](Self::linked_extensions), linked `#[a2a_extension]` types not
    /// added explicitly come after, sorted by URI.
    ///
    /// ```
    /// use a2a_runtime::extension::TimestampExtension;
    /// # use a2a_runtime::server::A2aServer;
    /// # use a2a_runtime::types::AgentCard;
    /// # struct Echo;
    /// # impl a2a_runtime::core::AgentExecutor for Echo {
    /// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
    /// # }
    /// let card = AgentCard { name: "n".into(), description: "d".into(), version: "1".into(), ..Default::default() };
    /// let server = A2aServer::builder().card(card).executor(Echo).linked_extensions(false).extension(TimestampExtension::default()).build().unwrap();
    /// assert_eq!(server.card().capabilities.extensions[0].uri, "https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1");
    /// ```
    pub fn extension<E: Extension>(mut self, value: E) -> Self {
        self.extensions.add(value);
        self
    }

    /// Keeps only the extensions with these URIs.
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(mut self, uris: I) -> Self {
        self.extensions.only = Some(uris.into_iter().map(Into::into).collect());
        self
    }

    /// Leaves out the extensions with these URIs.
    pub fn exclude<I: IntoIterator<Item = S>, S: Into<String>>(mut self, uris: I) -> Self {
        self.extensions
            .exclude
            .extend(uris.into_iter().map(Into::into));
        self
    }

    /// Whether `#[a2a_extension]` types linked into the binary (with a `Default`) are enabled
    /// without being added explicitly (default: false). A linked extension declared
    /// `required = true` is never enabled this way, nor are the extensions shipped inside
    /// a2a-runtime: add those with [`extension`](Self::extension). The final list is logged at
    /// INFO when the server is built.
    pub fn linked_extensions(mut self, enabled: bool) -> Self {
        self.extensions.linked = enabled;
        self
    }

    /// Whether responses echo the activated extensions in `A2A-Extensions` (default: true).
    pub fn echo_extensions(mut self, enabled: bool) -> Self {
        self.echo_extensions = enabled;
        self
    }

    /// Authenticates every request with `authenticator` (call again to accept several kinds
    /// of credential: the first that accepts wins). Its schemes are declared on the card.
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> Self {
        self.authenticators.push(Arc::new(authenticator));
        self
    }

    /// Decides which principal may do what where (default: [`DefaultAuthorizer`]).
    pub fn authorizer(mut self, authorizer: impl Authorizer) -> Self {
        self.authorizer = Some(Arc::new(authorizer));
        self
    }

    /// Signs the served card with `signer` (re-signed whenever the card changes).
    #[cfg(feature = "jwt")]
    pub fn sign_card(mut self, signer: crate::auth::signing::CardSigner) -> Self {
        self.card_signer = Some(signer);
        self
    }

    /// Also serves the gRPC binding on `addr` (e.g. `127.0.0.1:8081`; port 0 picks one) when
    /// the server is started: [`A2aServer::start`] and [`A2aServer::serve`] run both listeners
    /// and stop them together, and the card lists a `GRPC` interface at `host:port`.
    #[cfg(feature = "grpc")]
    pub fn grpc_addr(mut self, addr: impl Into<String>) -> Self {
        self.grpc = Some(grpc::GrpcConfig::new(addr.into()));
        self
    }

    /// Serves over TLS (HTTPS, and the gRPC listener with [`grpc_addr`](Self::grpc_addr)):
    /// the card's interfaces then use `https://`. Without it the listeners speak plain HTTP
    /// (and h2c for gRPC). Unusable certificates or keys are a [`BuildError::Tls`].
    #[cfg(feature = "tls")]
    pub fn tls(mut self, config: TlsConfig) -> Self {
        self.tls = Some(config);
        self
    }

    /// How long a shutdown (SIGTERM, Ctrl-C, [`RunningServer::stop`]) lets open requests and
    /// streams finish before they are ended: streams with a final `event: error`
    /// (Unavailable), blocking calls with an Unavailable error (HTTP 503). Default 30 s.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Whether the tasks still running when the shutdown grace is over are canceled (default:
    /// true), or left as they stand (to be continued from a durable store).
    pub fn shutdown_cancels_tasks(mut self, cancel: bool) -> Self {
        self.cancel_on_shutdown = cancel;
        self
    }

    /// The protocol versions served (default: both v1.0 and v0.3). A request without
    /// `A2A-Version` (or with `0.3`) is v0.3: the v0.3 method names and shapes, served by the
    /// same tasks and extensions as v1.0; the card carries v0.3's members beside v1.0's.
    ///
    /// ```
    /// use a2a_runtime::compat::ProtocolVersion;
    /// # use a2a_runtime::server::A2aServer;
    /// # use a2a_runtime::types::AgentCard;
    /// # struct Echo;
    /// # impl a2a_runtime::core::AgentExecutor for Echo {
    /// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
    /// # }
    /// # let card = AgentCard { name: "n".into(), description: "d".into(), version: "1".into(), ..Default::default() };
    /// let v1_only = A2aServer::builder()
    ///     .card(card)
    ///     .executor(Echo)
    ///     .protocol_versions([ProtocolVersion::V1_0])
    ///     .build()
    ///     .unwrap();
    /// # let _ = v1_only;
    /// ```
    pub fn protocol_versions(
        mut self,
        versions: impl IntoIterator<Item = ProtocolVersion>,
    ) -> Self {
        let mut chosen = v0_3::Versions {
            v1_0: false,
            v0_3: false,
        };
        for v in versions {
            match v {
                ProtocolVersion::V1_0 => chosen.v1_0 = true,
                ProtocolVersion::V0_3 => chosen.v0_3 = true,
            }
        }
        self.versions = chosen;
        self
    }

    /// Serves the OpenAPI 3.1 document of the HTTP+JSON binding at `path` below where the
    /// server is mounted, e.g. `.openapi("/openapi.json")` (feature `openapi`; default: not
    /// served). It is generated from the binding's routes and the protocol's messages, served to
    /// anyone (like the agent card), and its `servers` entry is where it was fetched from.
    #[cfg(feature = "openapi")]
    pub fn openapi(mut self, path: impl Into<String>) -> Self {
        self.openapi = Some(path.into());
        self
    }

    /// Builds the server.
    pub fn build(self) -> Result<A2aServer, BuildError> {
        let extensions = self.extensions.resolve()?;
        let mut card = self.card;
        for decl in extensions.declarations() {
            card.capabilities.extensions.retain(|e| e.uri != decl.uri);
            card.capabilities.extensions.push(decl);
        }
        if card.capabilities.streaming.is_none() {
            card.capabilities.streaming = Some(true);
        }
        if self.extended_card.is_some() {
            card.capabilities.extended_agent_card = Some(true);
        }
        #[cfg(feature = "push")]
        let push_on = self.push.is_some();
        #[cfg(not(feature = "push"))]
        let push_on = false;
        if push_on {
            if self.handler.is_some() {
                return Err(BuildError::PushWithCustomHandler);
            }
            card.capabilities.push_notifications = Some(true);
        } else if card.capabilities.push_notifications == Some(true) && self.handler.is_none() {
            return Err(BuildError::PushWithoutSender);
        }
        if card.default_input_modes.is_empty() {
            card.default_input_modes = vec!["text/plain".into()];
        }
        if card.default_output_modes.is_empty() {
            card.default_output_modes = vec!["text/plain".into()];
        }
        let guard = if self.authenticators.is_empty() {
            if !card.security_schemes.is_empty() || !card.security_requirements.is_empty() {
                return Err(BuildError::Security(
                    "the card declares security schemes but no authenticator enforces them: \
                     configure one with .authenticator(..)"
                        .into(),
                ));
            }
            if self.extended_card.is_some() {
                return Err(BuildError::Security(
                    "the extended card is served to authenticated callers only: configure an \
                     authenticator with .authenticator(..)"
                        .into(),
                ));
            }
            None
        } else {
            let authorizer = self
                .authorizer
                .unwrap_or_else(|| Arc::new(DefaultAuthorizer::new()));
            let guard = Guard::new(self.authenticators, authorizer);
            guard.declare(&mut card);
            Some(Arc::new(guard))
        };
        #[cfg(feature = "tls")]
        let tls = match self.tls {
            Some(settings) => {
                let rustls = settings.server_config().map_err(BuildError::Tls)?;
                Some((settings, Arc::new(rustls)))
            }
            None => None,
        };
        #[cfg(feature = "tls")]
        let default_base = if tls.is_some() {
            "https://127.0.0.1:8443"
        } else {
            "http://127.0.0.1:8080"
        };
        #[cfg(not(feature = "tls"))]
        let default_base = "http://127.0.0.1:8080";
        let explicit = self.base_url.is_some();
        let base = self.base_url.unwrap_or_else(|| default_base.into());
        #[cfg(feature = "grpc")]
        let card = match &self.grpc {
            Some(config) => grpc::with_grpc_interface(card, &config.addr),
            None => card,
        };
        let raw = card.clone();
        let card = mount::with_interfaces(card, &base, &self.jsonrpc_path, &self.rest_path);
        card.validate()
            .map_err(|e| BuildError::InvalidCard(e.to_string()))?;
        let shared = Arc::new(card.clone());
        #[cfg(feature = "push")]
        let mut sender = None;
        let mut built = None;
        let handler: Arc<dyn RequestHandler> = match (self.handler, self.executor) {
            (Some(h), _) => h,
            (None, Some(make)) => {
                // The default stores are linked: a task evicted takes its push configs along,
                // and each logged event writes its push deliveries with it.
                let default_push = Arc::new(InMemoryPushConfigStore::new());
                let store = self.task_store.unwrap_or_else(|| {
                    let mut memory = InMemoryTaskStore::with_retention(self.retain_finished)
                        .with_max_tasks(self.max_tasks);
                    if self.push_store.is_none() {
                        memory = memory.with_push_configs(default_push.clone());
                        if push_on {
                            let outbox = Arc::new(crate::store::InMemoryPushOutbox::new());
                            memory = memory.with_push_outbox(outbox);
                        }
                    }
                    Arc::new(memory)
                });
                #[cfg(feature = "push")]
                let outbox = store.push_outbox();
                let push = self.push_store.unwrap_or(default_push);
                #[cfg(feature = "push")]
                let configs = push.clone();
                let mut handler = make(store, push, shared, self.limits.clone());
                #[cfg(feature = "push")]
                if let Some(config) = self.push {
                    let outbox = outbox.ok_or(BuildError::PushWithoutOutbox)?;
                    let s = crate::push::PushSender::new(config, configs, outbox)
                        .map_err(|e| BuildError::Push(e.to_string()))?;
                    // Resumes what a durable outbox holds, when built inside a runtime.
                    s.start();
                    handler = handler.with_push(s.clone());
                    sender = Some(s);
                }
                if let Some(ext) = self.extended_card {
                    handler = handler.with_extended_card(Arc::new(extended(ext, &card)));
                }
                if let Some(cluster) = self.cluster {
                    handler = handler.with_cluster(cluster, self.cluster_options);
                }
                if let Some(retention) = self.retention {
                    handler = handler.with_retention(retention);
                }
                handler.start_retention();
                let handler = Arc::new(handler);
                built = Some(handler.clone());
                handler
            }
            (None, None) => return Err(BuildError::NoAgent),
        };
        // One card serves both versions: v0.3's members beside v1.0's.
        let decorate: card::Decorate = if self.versions.v0_3 {
            crate::compat::v0_3::convert::card_fields
        } else {
            |_| serde_json::Map::new()
        };
        #[cfg_attr(not(feature = "jwt"), allow(unused_mut))]
        let mut urls = mount::CardUrls::new(
            raw,
            self.jsonrpc_path.clone(),
            self.rest_path.clone(),
            self.card_max_age,
            explicit,
            decorate,
        );
        #[cfg(feature = "jwt")]
        if let Some(signer) = self.card_signer {
            urls = urls.signed_by(signer);
        }
        let card = urls.sign(card);
        #[cfg(feature = "openapi")]
        let openapi = match &self.openapi {
            Some(path) => Some(
                openapi::Document::new(path, &card, &self.rest_path)
                    .map_err(BuildError::OpenApi)?,
            ),
            None => None,
        };
        let inner = Inner {
            service: match built {
                Some(default) => A2aService::of_default(default, self.limits),
                None => A2aService::new(handler.clone(), self.limits),
            }
            .with_extensions(extensions),
            card: RwLock::new(Arc::new(CardDoc::with_json(
                card,
                self.card_max_age,
                decorate,
            ))),
            urls,
            keep_alive: self.keep_alive,
            jsonrpc_path: self.jsonrpc_path,
            rest_path: self.rest_path,
            echo_extensions: self.echo_extensions,
            guard,
            over: tokio_util::sync::CancellationToken::new(),
            shutdown_grace: self.shutdown_grace,
            cancel_on_shutdown: self.cancel_on_shutdown,
            handler,
            versions: self.versions,
            #[cfg(feature = "openapi")]
            openapi,
        };
        Ok(A2aServer {
            inner: web::Data::new(inner),
            workers: self.workers,
            #[cfg(feature = "push")]
            push: sender,
            #[cfg(feature = "grpc")]
            grpc: self.grpc,
            #[cfg(feature = "tls")]
            tls,
        })
    }
}

/// The `A2A-Extensions` value for `activated` (`None` when it is not a valid header value).
fn echo_header(activated: &Activated) -> Option<HeaderValue> {
    /// The last value built on this thread, for reuse (clients of one agent tend to
    /// activate the same set on every request): the list it was built for (held weakly,
    /// so its address is not reused meanwhile), its URIs, the value.
    type Last = Option<(Weak<[Activation]>, Box<[&'static str]>, HeaderValue)>;
    thread_local! {
        static LAST: RefCell<Last> = const { RefCell::new(None) };
    }
    let list = activated.list()?;
    LAST.with_borrow_mut(|last| {
        // Requests that activate all they asked for share their plan's list: one
        // comparison.
        if let Some((of, uris, value)) = last.as_ref()
            && (std::ptr::addr_eq(of.as_ptr(), Arc::as_ptr(list))
                || uris.iter().copied().eq(activated.uris()))
        {
            return Some(value.clone());
        }
        let uris: Box<[&'static str]> = activated.uris().collect();
        let value =
            HeaderValue::from_str(&crate::extension::format_extensions_header(uris.iter())).ok()?;
        *last = Some((Arc::downgrade(list), uris, value.clone()));
        Some(value)
    })
}

/// Adds the A2A response headers: `A2A-Version`, and `A2A-Extensions` with the activated URIs.
pub(crate) trait ResponseExt {
    fn a2a_headers(&mut self, activated: &Activated) -> &mut Self;
    fn a2a_headers_builder(self, activated: &Activated) -> Self;
}

/// 405 Method Not Allowed, naming the allowed method.
fn method_not_allowed(allowed: &'static str) -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header((actix_web::http::header::ALLOW, allowed))
        .finish()
}

impl ResponseExt for HttpResponseBuilder {
    fn a2a_headers(&mut self, activated: &Activated) -> &mut Self {
        // Static names: a name parsed from a `&str` is allocated on every response.
        self.insert_header(http::version_header());
        if !activated.is_empty()
            && let Some(v) = echo_header(activated)
        {
            self.insert_header((http::A2A_EXTENSIONS_NAME.clone(), v));
        }
        self
    }

    fn a2a_headers_builder(mut self, activated: &Activated) -> Self {
        self.a2a_headers(activated);
        self
    }
}
