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
mod http;
mod jsonrpc;
mod rest;
mod sse;

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

use crate::core::{
    A2aService, AgentExecutor, DefaultRequestHandler, Limits, Operation, RequestHandler,
};
use crate::extension::registry::ExtensionConfig;
use crate::extension::{Activated, Activation, Extension, RegistryError};
use crate::store::{InMemoryPushConfigStore, InMemoryTaskStore, PushConfigStore, TaskStore};
use crate::types::{AgentCard, AgentInterface, ProtocolBinding, Validate};
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
}

/// The shared state of a running server's routes.
pub(crate) struct Inner {
    service: A2aService,
    card: RwLock<Arc<CardDoc>>,
    keep_alive: Duration,
    jsonrpc_path: String,
    rest_path: String,
    echo_extensions: bool,
}

impl Inner {
    /// The URIs to echo in `A2A-Extensions` (none when echo is switched off).
    fn echo(&self, activated: Activated) -> Activated {
        if self.echo_extensions {
            activated
        } else {
            Activated::default()
        }
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
    base_url_explicit: bool,
    workers: Option<usize>,
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
        }
    }

    /// The card as served (with `supportedInterfaces` listing the served URLs).
    pub fn card(&self) -> AgentCard {
        self.inner.card().card.clone()
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
    /// The card is served at `/.well-known/agent-card.json` relative to where this is mounted;
    /// when you mount under a scope, also mount [`A2aServer::well_known`] at the root.
    pub fn config(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        let inner = self.inner.clone();
        move |cfg: &mut web::ServiceConfig| {
            register_card(cfg, inner.clone());
            let rpc = inner.clone();
            let rpc_handler = move |req: HttpRequest, payload: web::Payload| {
                let inner = rpc.clone();
                async move {
                    if req.method() != actix_web::http::Method::POST {
                        return method_not_allowed("POST");
                    }
                    jsonrpc::handle(inner, req, payload).await
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
                        async move { rest::handle_method(inner, req, payload).await }
                    };
                    let base = inner.rest_path.trim_end_matches('/');
                    cfg.route(
                        &format!("{base}{prefix}/extensions/{{tail:.*}}"),
                        web::post().to(handler),
                    );
                }
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

    /// Registers only the agent card at `/.well-known/agent-card.json` (for mounting at the root
    /// when the bindings live under a scope).
    pub fn well_known(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        let inner = self.inner.clone();
        move |cfg: &mut web::ServiceConfig| register_card(cfg, inner.clone())
    }

    /// Binds `addr` and starts serving in the background; returns the bound address and a
    /// handle to stop it. When the builder had no explicit URL, the card's interfaces use the
    /// bound address.
    pub async fn start(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<RunningServer> {
        let listener = std::net::TcpListener::bind(addr)?;
        let local = listener.local_addr()?;
        if !self.base_url_explicit {
            self.set_base_url(&format!("http://{local}"));
        }
        let config = self.config();
        let mut server =
            actix_web::HttpServer::new(move || actix_web::App::new().configure(config.clone()))
                .on_connect(set_nodelay)
                .listen(listener)?;
        if let Some(n) = self.workers {
            server = server.workers(n);
        }
        let server = server.run();
        let handle = server.handle();
        let join = tokio::spawn(server);
        Ok(RunningServer {
            addr: local,
            handle,
            join,
        })
    }

    /// Serves on `addr` until Ctrl-C or SIGTERM, then shuts down gracefully.
    pub async fn serve(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<()> {
        self.start(addr).await?.wait().await
    }

    fn set_base_url(&self, base: &str) {
        let doc = self.inner.card();
        let card = with_interfaces(
            doc.card.clone(),
            base,
            &self.inner.jsonrpc_path,
            &self.inner.rest_path,
        );
        let max_age = doc.max_age();
        if let Ok(mut slot) = self.inner.card.write() {
            *slot = Arc::new(CardDoc::new(card, max_age));
        }
    }
}

/// A server started with [`A2aServer::start`].
#[derive(Debug)]
pub struct RunningServer {
    /// The bound address.
    pub addr: SocketAddr,
    handle: ServerHandle,
    join: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// `http://<addr>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Waits until the server stops (Ctrl-C, SIGTERM, or [`RunningServer::stop`] elsewhere).
    pub async fn wait(self) -> std::io::Result<()> {
        self.join.await.map_err(std::io::Error::other)?
    }

    /// A handle that can stop the server from elsewhere.
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Stops the server gracefully and waits for it.
    pub async fn stop(self) {
        self.handle.stop(true).await;
        let _ = self.join.await;
    }
}

/// Sets TCP_NODELAY on each accepted connection: SSE events (and the headers sent before the
/// first one) are small writes that would otherwise wait for the client's delayed ACK (Nagle),
/// up to 40 ms each.
fn set_nodelay(conn: &dyn std::any::Any, _: &mut actix_web::dev::Extensions) {
    if let Some(tcp) = conn.downcast_ref::<actix_web::rt::net::TcpStream>() {
        let _ = tcp.set_nodelay(true);
    }
}

fn register_card(cfg: &mut web::ServiceConfig, inner: web::Data<Inner>) {
    cfg.route(
        WELL_KNOWN_PATH,
        web::get().to(move |req: HttpRequest| {
            let inner = inner.clone();
            async move { inner.card().respond(&req) }
        }),
    );
}

fn register_rest(cfg: &mut web::ServiceConfig, inner: &web::Data<Inner>, base: &str) {
    // Group routes by path so one resource answers every method of a path (405 otherwise).
    let mut seen: Vec<&str> = Vec::new();
    for (_, path, _) in rest::ROUTES {
        if seen.contains(path) {
            continue;
        }
        seen.push(path);
        let mut resource = web::resource(format!("{base}{path}"));
        for (method, p, op) in rest::ROUTES {
            if p != path {
                continue;
            }
            let inner = inner.clone();
            let op: Operation = *op;
            let handler = move |req: HttpRequest, payload: web::Payload| {
                let inner = inner.clone();
                async move { rest::handle(inner, req, payload, op).await }
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

/// The card with `supportedInterfaces` set to the URLs this server serves.
fn with_interfaces(
    mut card: AgentCard,
    base: &str,
    jsonrpc_path: &str,
    rest_path: &str,
) -> AgentCard {
    let base = base.trim_end_matches('/');
    let join = |p: &str| {
        let p = p.trim_end_matches('/');
        if p.is_empty() {
            format!("{base}/")
        } else {
            format!("{base}{p}")
        }
    };
    let ours = [
        AgentInterface::new(join(jsonrpc_path), ProtocolBinding::JsonRpc),
        AgentInterface::new(join(rest_path), ProtocolBinding::HttpJson),
    ];
    card.supported_interfaces.retain(|i| {
        !matches!(
            i.protocol_binding,
            ProtocolBinding::JsonRpc | ProtocolBinding::HttpJson
        )
    });
    card.supported_interfaces.splice(0..0, ours);
    card
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

    /// The push-config store (default: in memory).
    pub fn push_config_store(mut self, store: Arc<dyn PushConfigStore>) -> Self {
        self.push_store = Some(store);
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
    /// e.g. `https://agents.example.com/a2a`. Default: `http://127.0.0.1:8080`, or the bound
    /// address with [`A2aServer::start`].
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
    /// Extensions are negotiated in the order they are added; linked `#[a2a_extension]` types
    /// not added explicitly come after, sorted by URI.
    ///
    /// ```
    /// use a2a_runtime::extension::Timestamp;
    /// # use a2a_runtime::server::A2aServer;
    /// # use a2a_runtime::types::AgentCard;
    /// # struct Echo;
    /// # impl a2a_runtime::core::AgentExecutor for Echo {
    /// #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
    /// # }
    /// let card = AgentCard { name: "n".into(), description: "d".into(), version: "1".into(), ..Default::default() };
    /// let server = A2aServer::builder().card(card).executor(Echo).linked_extensions(false).extension(Timestamp::default()).build().unwrap();
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

    /// Whether `#[a2a_extension]` types linked into the binary are enabled without being added
    /// explicitly (default: true; extensions shipped inside a2a-runtime never are).
    pub fn linked_extensions(mut self, enabled: bool) -> Self {
        self.extensions.linked = enabled;
        self
    }

    /// Whether responses echo the activated extensions in `A2A-Extensions` (default: true).
    pub fn echo_extensions(mut self, enabled: bool) -> Self {
        self.echo_extensions = enabled;
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
        if card.default_input_modes.is_empty() {
            card.default_input_modes = vec!["text/plain".into()];
        }
        if card.default_output_modes.is_empty() {
            card.default_output_modes = vec!["text/plain".into()];
        }
        let explicit = self.base_url.is_some();
        let base = self
            .base_url
            .unwrap_or_else(|| "http://127.0.0.1:8080".into());
        let card = with_interfaces(card, &base, &self.jsonrpc_path, &self.rest_path);
        card.validate()
            .map_err(|e| BuildError::InvalidCard(e.to_string()))?;
        let shared = Arc::new(card.clone());
        let handler: Arc<dyn RequestHandler> = match (self.handler, self.executor) {
            (Some(h), _) => h,
            (None, Some(make)) => {
                let store = self.task_store.unwrap_or_else(|| {
                    Arc::new(InMemoryTaskStore::with_retention(self.retain_finished))
                });
                let push = self
                    .push_store
                    .unwrap_or_else(|| Arc::new(InMemoryPushConfigStore::new()));
                let mut handler = make(store, push, shared, self.limits.clone());
                if let Some(ext) = self.extended_card {
                    handler = handler.with_extended_card(Arc::new(ext));
                }
                Arc::new(handler)
            }
            (None, None) => return Err(BuildError::NoAgent),
        };
        let inner = Inner {
            service: A2aService::new(handler, self.limits).with_extensions(extensions),
            card: RwLock::new(Arc::new(CardDoc::new(card, self.card_max_age))),
            keep_alive: self.keep_alive,
            jsonrpc_path: self.jsonrpc_path,
            rest_path: self.rest_path,
            echo_extensions: self.echo_extensions,
        };
        Ok(A2aServer {
            inner: web::Data::new(inner),
            base_url_explicit: explicit,
            workers: self.workers,
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
        let value = HeaderValue::from_str(&uris.join(", ")).ok()?;
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
            self.insert_header((
                actix_web::http::header::HeaderName::from_static(A2A_EXTENSIONS),
                v,
            ));
        }
        self
    }

    fn a2a_headers_builder(mut self, activated: &Activated) -> Self {
        self.a2a_headers(activated);
        self
    }
}
