//! [`A2aServerBuilder`]: what a server is made of, checked and put together by
//! [`A2aServerBuilder::build`].

mod extensions;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix_web::web;

#[cfg(feature = "tls")]
use super::TlsConfig;
use super::card::{self, CardDoc};
#[cfg(feature = "grpc")]
use super::grpc;
#[cfg(feature = "openapi")]
use super::openapi;
use super::{A2aServer, Inner, mount};
use crate::auth::{Authenticator, Authorizer, DefaultAuthorizer, Guard};
use crate::compat::ProtocolVersion;
use crate::core::{A2aService, AgentExecutor, DefaultRequestHandler, Limits, RequestHandler};
use crate::extension::RegistryError;
use crate::extension::registry::ExtensionConfig;
use crate::service::{Pipeline, Versions};
use crate::store::{InMemoryPushConfigStore, InMemoryTaskStore, PushConfigStore, TaskStore};
use crate::types::{AgentCard, Validate};

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
    /// The agents of a [`MultiAgentServer`](super::MultiAgentServer) do not hold together (a
    /// name that is not one, two agents of one name).
    #[error("agents: {0}")]
    Agents(String),
    /// The OpenAPI document could not be built.
    #[cfg(feature = "openapi")]
    #[error("cannot build the OpenAPI document: {0}")]
    OpenApi(String),
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
    metadata_hygiene: crate::extension::MetadataHygiene,
    internal_error_causes: bool,
    retain_finished: usize,
    max_tasks: usize,
    retention: Option<crate::core::Retention>,
    recovery: crate::core::Recovery,
    authenticators: Vec<Arc<dyn Authenticator>>,
    authorizer: Option<Arc<dyn Authorizer>>,
    principal_aliases: Vec<(String, String)>,
    quotas: Option<crate::service::Quotas>,
    #[cfg(feature = "jwt")]
    card_signer: Option<crate::auth::signing::CardSigner>,
    versions: Versions,
    v0_3_card: bool,
    #[cfg(feature = "push")]
    push: Option<crate::push::PushConfig>,
    /// Where the gRPC listener is served, when there is one.
    #[cfg(feature = "grpc")]
    grpc: Option<String>,
    #[cfg(feature = "tls")]
    tls: Option<TlsConfig>,
    shutdown_grace: Duration,
    cancel_on_shutdown: bool,
    #[cfg(feature = "openapi")]
    openapi: Option<String>,
    /// The agent's name, on a server of several agents.
    agent: Option<Arc<str>>,
}

impl std::fmt::Debug for A2aServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServerBuilder")
            .field("card", &self.card.name)
            .finish_non_exhaustive()
    }
}

impl A2aServerBuilder {
    /// A builder with an in-memory store, JSON-RPC at `/` and REST at `/`.
    pub(super) fn new() -> Self {
        Self {
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
            metadata_hygiene: crate::extension::MetadataHygiene::Off,
            internal_error_causes: false,
            retain_finished: 10_000,
            max_tasks: crate::store::DEFAULT_MAX_TASKS,
            retention: None,
            recovery: crate::core::Recovery::default(),
            authenticators: Vec::new(),
            authorizer: None,
            principal_aliases: Vec::new(),
            quotas: None,
            #[cfg(feature = "jwt")]
            card_signer: None,
            versions: Versions::default(),
            v0_3_card: false,
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
            agent: None,
        }
    }

    /// Makes this the agent `name` of a server of several agents, over the server's `store`
    /// and `push` configs (unless it was given stores of its own).
    pub(super) fn into_agent(
        mut self,
        name: Arc<str>,
        store: &Arc<dyn TaskStore>,
        push: &Arc<dyn PushConfigStore>,
    ) -> Self {
        self.agent = Some(name);
        if self.task_store.is_none() {
            self.task_store = Some(store.clone());
            if self.push_store.is_none() {
                self.push_store = Some(push.clone());
            }
        }
        self
    }

    /// Whether the agent would run its executor again on tasks found without one (which, over
    /// a store shared with other agents, could be theirs).
    pub(super) fn reruns(&self) -> bool {
        matches!(
            self.recovery.policy,
            crate::core::RecoveryPolicy::Rerun { .. }
        )
    }

    /// Whether the agent sends push notifications.
    pub(super) fn pushes(&self) -> bool {
        #[cfg(feature = "push")]
        return self.push.is_some();
        #[cfg(not(feature = "push"))]
        false
    }

    /// Whether the agent was given a task store of its own.
    pub(super) fn has_store(&self) -> bool {
        self.task_store.is_some()
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

    /// How tasks whose executor is gone (the process died, the instance lost its lease, the
    /// execution returned and left its task active) and tasks of hung agents are handled
    /// (default [`Recovery::default`](crate::core::Recovery): taken over within 30 s, at once
    /// at startup on a store one process serves, and ended FAILED, saying the agent stopped
    /// before finishing; a task silent for 15 minutes ends FAILED too). See
    /// [`Recovery`](crate::core::Recovery). Ignored with a custom [`handler`](Self::handler).
    pub fn recovery(mut self, recovery: crate::core::Recovery) -> Self {
        self.recovery = recovery;
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

    /// Whether internal errors show their causes to callers (default: false). By default a
    /// caller gets the error code, a generic message and a correlation id, and the cause with
    /// its whole chain is logged at ERROR (target `a2a::error`) under that id. For
    /// development only: a cause can hold SQL, file paths and host names.
    ///
    /// ```
    /// let builder = a2a_runtime::server::A2aServer::builder().internal_error_causes(true);
    /// ```
    pub fn internal_error_causes(mut self, show: bool) -> Self {
        self.internal_error_causes = show;
        self
    }

    /// Authenticates every request with `authenticator` (call again to accept several kinds
    /// of credential: the first that accepts wins). Its schemes are declared on the card.
    pub fn authenticator(mut self, authenticator: impl Authenticator) -> Self {
        self.authenticators.push(Arc::new(authenticator));
        self
    }

    /// Makes the principal `from` the principal `to` (see [`Guard::alias`]). With several
    /// authenticators, ids are namespaced by where they come from (`bearer:alice`,
    /// `jwt:alice`): the same name from two sources is two principals unless mapped here.
    pub fn principal_alias(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.principal_aliases.push((from.into(), to.into()));
        self
    }

    /// Fair-share limits per principal and per tenant: request rate, live tasks and open
    /// streams (default: none). A request over one of them is answered 429 with `Retry-After`
    /// (gRPC RESOURCE_EXHAUSTED), and only its caller is refused. See
    /// [`Quotas`](crate::service::Quotas).
    pub fn quotas(mut self, quotas: crate::service::Quotas) -> Self {
        self.quotas = Some(quotas);
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
        self.grpc = Some(addr.into());
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

    /// How long a shutdown (SIGTERM, Ctrl-C, [`RunningServer::stop`](super::RunningServer::stop)) lets open requests and
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
    /// same tasks and extensions as v1.0. The card stays a v1.0 card; see
    /// [`v0_3_card`](Self::v0_3_card) for v0.3 clients that discover agents from it.
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
        let mut chosen = Versions {
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

    /// Whether the agent card also carries v0.3's members (`url`, `preferredTransport`,
    /// `additionalInterfaces`, `protocolVersion: "0.3.0"`, ...) beside v1.0's, for v0.3
    /// clients that discover the agent from its card (default: false, a strict v1.0 card).
    /// Only while v0.3 is served ([`protocol_versions`](Self::protocol_versions)).
    pub fn v0_3_card(mut self, on: bool) -> Self {
        self.v0_3_card = on;
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
        let mut extended_only = Vec::new();
        for decl in extensions.declarations() {
            if extensions.is_extended_card_only(&decl.uri) {
                extended_only.push(decl);
                continue;
            }
            card.capabilities.extensions.retain(|e| e.uri != decl.uri);
            card.capabilities.extensions.push(decl);
        }
        if card.capabilities.streaming.is_none() {
            card.capabilities.streaming = Some(true);
        }
        if let Some(decl) = extended_only.first()
            && (self.extended_card.is_none() || self.handler.is_some())
        {
            return Err(BuildError::InvalidCard(format!(
                "extension {} is declared on the extended card only, but the server serves no extended card: set .extended_card(..) with .executor(..)",
                decl.uri
            )));
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
            let mut guard = Guard::new(self.authenticators, authorizer);
            for (from, to) in self.principal_aliases {
                guard = guard.alias(from, to);
            }
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
            Some(addr) => grpc::with_grpc_interface(card, addr),
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
                if let Some(mut ext) = self.extended_card {
                    for decl in extended_only {
                        ext.capabilities.extensions.retain(|e| e.uri != decl.uri);
                        ext.capabilities.extensions.push(decl);
                    }
                    handler = handler.with_extended_card(Arc::new(extended(ext, &card)));
                }
                if let Some(cluster) = self.cluster {
                    handler = handler.with_cluster(cluster, self.cluster_options);
                }
                if let Some(retention) = self.retention {
                    handler = handler.with_retention(retention);
                }
                handler = handler.with_recovery(self.recovery);
                handler.start_retention();
                handler.start_recovery();
                let handler = Arc::new(handler);
                built = Some(handler.clone());
                handler
            }
            (None, None) => return Err(BuildError::NoAgent),
        };
        // A strict v1.0 card unless asked otherwise: v0.3's top-level members make the card
        // fail v1.0 schema validation (the conformance suite's CARD-STRUCT-001), and v1.0
        // clients, the ones a v1.0 card is for, ignore them. v0.3 requests are served either way.
        let decorate: card::Decorate = if self.versions.v0_3 && self.v0_3_card {
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
        let service = match built {
            Some(default) => A2aService::of_default(default, self.limits),
            None => A2aService::new(handler.clone(), self.limits),
        }
        .with_extensions(extensions)
        .with_metadata_hygiene(self.metadata_hygiene);
        let mut pipeline = Pipeline::new(service)
            .with_versions(self.versions)
            .with_echo(self.echo_extensions)
            .with_internal_error_causes(self.internal_error_causes);
        if let Some(guard) = guard {
            pipeline = pipeline.with_guard(guard);
        }
        if let Some(quotas) = self.quotas {
            pipeline = pipeline.with_quotas(quotas);
        }
        if let Some(agent) = self.agent {
            pipeline = pipeline.with_agent(agent);
        }
        let inner = Inner {
            pipeline: Arc::new(pipeline),
            card: RwLock::new(Arc::new(CardDoc::with_json(
                card,
                self.card_max_age,
                decorate,
            ))),
            urls,
            keep_alive: self.keep_alive,
            jsonrpc_path: self.jsonrpc_path,
            rest_path: self.rest_path,
            over: tokio_util::sync::CancellationToken::new(),
            shutdown_grace: self.shutdown_grace,
            cancel_on_shutdown: self.cancel_on_shutdown,
            handler,
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

impl A2aServer {
    /// A builder with an in-memory store, JSON-RPC at `/` and REST at `/`.
    pub fn builder() -> A2aServerBuilder {
        A2aServerBuilder::new()
    }
}
