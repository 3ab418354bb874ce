//! [`MultiAgentServer`]: several agents in one server — each its own pipeline configuration
//! (card, executor, extensions, authentication, limits, push), all over one set of bindings,
//! one store, one listener and one shutdown, listed in an AI Catalog.

use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpRequest, web};

use super::A2aServer;
use super::agent_label::AgentLabel;
use super::builder::{A2aServerBuilder, BuildError};
use super::catalog::{CatalogEntries, Listed, Listing};
use super::running::RunningServer;
use crate::store::{InMemoryPushConfigStore, InMemoryTaskStore, PushConfigStore, TaskStore};
use crate::types::{AgentCard, CatalogHost};

/// The path below which the agents are served: `/agents/{name}`.
pub const AGENTS_PATH: &str = "/agents";

/// The longest agent name.
const MAX_NAME: usize = 64;

/// One agent of a [`MultiAgentServer`].
pub(super) struct Agent {
    pub(super) name: Arc<str>,
    pub(super) server: A2aServer,
    pub(super) listing: Listing,
}

/// Several agents in one server: build it with [`MultiAgentServer::builder`], give each agent
/// a name and an [`A2aServerBuilder`], then [`start`](Self::start) it or mount it with
/// [`config`](Self::config).
///
/// Where an agent is served:
///
/// | binding | address |
/// |---|---|
/// | JSON-RPC | `POST /agents/{name}` |
/// | HTTP+JSON | `/agents/{name}/message:send`, … (and `/agents/{name}/{tenant}/…`) |
/// | agent card | `GET /agents/{name}/.well-known/agent-card.json` |
/// | gRPC | the server's gRPC listener, the request's `tenant` field set to `{name}` |
/// | AI Catalog | `GET /.well-known/ai-catalog.json` lists the agents |
/// | a tenant's agent ([`tenant`](MultiAgentServerBuilder::tenant)) | `/{tenant}/message:send`, …, `POST /{tenant}`, gRPC `tenant: "{tenant}"` |
///
/// Each card's `supportedInterfaces` point at the agent's own addresses (its GRPC interface
/// carries `tenant: "{name}"`, which clients copy into every request). Over gRPC the agent
/// serves the request as it serves one on its HTTP path, without a tenant: a task is the same
/// task on every binding.
///
/// The agents share the task store and push config store given to
/// [`MultiAgentServerBuilder::task_store`] (default: in memory) unless an agent's builder was
/// given its own. Tasks are partitioned by agent: the id of one agent's task is TaskNotFound
/// through another, and each lists only its own.
///
/// ```no_run
/// use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
/// use a2a_runtime::server::{A2aServer, MultiAgentServer};
/// use a2a_runtime::types::AgentCard;
/// use a2a_runtime::A2aError;
///
/// struct Echo;
/// impl AgentExecutor for Echo {
///     async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
///         events.complete().await
///     }
/// }
/// fn card(name: &str) -> AgentCard {
///     AgentCard { name: name.into(), description: "an agent".into(), version: "1.0.0".into(), ..Default::default() }
/// }
///
/// # async fn run() -> std::io::Result<()> {
/// let server = MultiAgentServer::builder()
///     .agent("echo", A2aServer::builder().card(card("Echo")).executor(Echo))
///     .agent("shout", A2aServer::builder().card(card("Shout")).executor(Echo))
///     .build()
///     .map_err(std::io::Error::other)?;
/// let running = server.start("127.0.0.1:0").await?;
/// // http://127.0.0.1:port/agents/echo, …/agents/shout, and /.well-known/ai-catalog.json
/// running.stop().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MultiAgentServer {
    pub(super) agents: Arc<Vec<Agent>>,
    /// The tenants served by an agent: the tenant, the index of its agent.
    tenants: Arc<Vec<(Arc<str>, usize)>>,
    pub(super) catalog: super::catalog::CatalogSettings,
    workers: Option<usize>,
    #[cfg(feature = "grpc")]
    grpc: Option<String>,
}

impl std::fmt::Debug for MultiAgentServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiAgentServer")
            .field("agents", &self.names())
            .finish_non_exhaustive()
    }
}

/// Builds a [`MultiAgentServer`].
pub struct MultiAgentServerBuilder {
    agents: Vec<(String, A2aServerBuilder, Listing)>,
    tenants: Vec<(String, String)>,
    task_store: Option<Arc<dyn TaskStore>>,
    push_store: Option<Arc<dyn PushConfigStore>>,
    catalog: super::catalog::CatalogSettings,
    workers: Option<usize>,
    #[cfg(feature = "grpc")]
    grpc: Option<String>,
}

impl std::fmt::Debug for MultiAgentServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.agents.iter().map(|(n, ..)| n.as_str()).collect();
        f.debug_struct("MultiAgentServerBuilder")
            .field("agents", &names)
            .finish_non_exhaustive()
    }
}

impl MultiAgentServer {
    /// A builder with no agents and an in-memory store.
    pub fn builder() -> MultiAgentServerBuilder {
        MultiAgentServerBuilder {
            agents: Vec::new(),
            tenants: Vec::new(),
            task_store: None,
            push_store: None,
            catalog: super::catalog::CatalogSettings::default(),
            workers: None,
            #[cfg(feature = "grpc")]
            grpc: None,
        }
    }

    /// The agents' names, in the order they were added.
    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| &*a.name).collect()
    }

    /// The agent `name`: its card, guard, pipeline and push sender.
    pub fn agent(&self, name: &str) -> Option<&A2aServer> {
        self.agents
            .iter()
            .find(|a| &*a.name == name)
            .map(|a| &a.server)
    }

    /// The card of the agent `name`, as served.
    pub fn card(&self, name: &str) -> Option<AgentCard> {
        self.agent(name).map(A2aServer::card)
    }

    /// Registers the routes of every agent below `/agents/{name}` and the AI Catalog at
    /// `/.well-known/ai-catalog.json`, on an actix-web `App` or scope.
    pub fn config(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        let agents: Vec<_> = self
            .agents
            .iter()
            .map(|a| {
                let label = AgentLabel::new(a.name.clone());
                (
                    format!("{AGENTS_PATH}/{}", a.name),
                    label,
                    a.server.config(),
                )
            })
            .collect();
        let tenants: Vec<_> = self
            .tenants
            .iter()
            .map(|(tenant, i)| (tenant.clone(), *i))
            .collect();
        let server = self.clone();
        move |cfg: &mut web::ServiceConfig| {
            cfg.route(
                crate::types::AI_CATALOG_PATH,
                web::get().to(catalog_of(server.clone(), None)),
            );
            for (path, label, config) in &agents {
                cfg.service(
                    web::scope(path)
                        .app_data(label.clone())
                        .configure(config.clone()),
                );
            }
            // A tenant's routes are its agent's, below the tenant: `/{tenant}/message:send`.
            for (tenant, i) in &tenants {
                let (_, label, config) = &agents[*i];
                let catalog = catalog_of(server.clone(), Some(*i));
                cfg.service(
                    web::scope(&format!("/{tenant}"))
                        .app_data(label.clone())
                        .route(crate::types::AI_CATALOG_PATH, web::get().to(catalog))
                        .configure(config.clone()),
                );
            }
        }
    }

    /// Binds `addr` and serves every agent on it (and on the gRPC listener, when configured)
    /// in the background; the cards' interfaces use the bound address. One
    /// [`RunningServer::stop`] stops them all: each agent's open requests get its own shutdown
    /// grace, and the server waits for the longest.
    pub async fn start(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<RunningServer> {
        let listener = std::net::TcpListener::bind(addr)?;
        let local = listener.local_addr()?;
        let scheme = "http";
        for a in self.agents.iter() {
            if !a.server.inner.urls.is_fixed() {
                a.server
                    .set_base_url(&format!("{scheme}://{local}{AGENTS_PATH}/{}", a.name));
            }
        }
        #[cfg(feature = "grpc")]
        let grpc = match &self.grpc {
            Some(addr) => {
                let mut pipelines = std::collections::HashMap::new();
                for a in self.agents.iter() {
                    pipelines.insert(a.name.clone(), a.server.inner.pipeline.clone());
                }
                for (tenant, i) in self.tenants.iter() {
                    let pipeline = self.agents[*i].server.inner.pipeline.clone();
                    pipelines.insert(tenant.clone(), pipeline);
                }
                let pipelines = super::grpc::Pipelines::ByAgent(Arc::new(pipelines));
                let running = super::grpc::start(pipelines, addr, None).await?;
                for a in self.agents.iter() {
                    super::running::add_grpc_interface(&a.server.inner, running.addr, &a.name);
                }
                Some(running)
            }
            None => None,
        };
        let flush = self
            .agents
            .iter()
            .map(|a| a.server.inner.shutdown_grace)
            .max()
            .unwrap_or(Duration::ZERO)
            .as_secs()
            + 5;
        let server = super::running::run_http(
            self.config(),
            flush,
            listener,
            self.workers,
            #[cfg(feature = "tls")]
            None,
        );
        let server = match server {
            Ok(server) => server,
            Err(e) => {
                #[cfg(feature = "grpc")]
                if let Some(grpc) = grpc {
                    let _ = grpc.stop().await;
                }
                return Err(e);
            }
        };
        let handle = server.handle();
        let join = tokio::spawn(server);
        Ok(RunningServer {
            addr: local,
            scheme,
            handle,
            join,
            #[cfg(feature = "grpc")]
            grpc,
            inners: self.agents.iter().map(|a| a.server.inner.clone()).collect(),
        })
    }

    /// Serves on `addr` until Ctrl-C or SIGTERM, then shuts every agent down gracefully.
    pub async fn serve(self, addr: impl std::net::ToSocketAddrs) -> std::io::Result<()> {
        self.start(addr).await?.wait().await
    }
}

impl MultiAgentServerBuilder {
    /// Adds the agent `name` (letters, digits, `-`, `_`, `.`; at most 64 bytes), built from
    /// `agent` as a one-agent server would be: its card, executor, extensions, authenticator,
    /// authorizer, limits, quotas and push settings are its own. Its card is served at
    /// `/agents/{name}/.well-known/agent-card.json`. The settings of the listener given to
    /// `agent` (`url`, `grpc_addr`, `tls`, `workers`) are not used: the server has one
    /// listener.
    pub fn agent(self, name: impl Into<String>, agent: A2aServerBuilder) -> Self {
        self.agent_listed(name, agent, Listing::Public)
    }

    /// [`agent`](Self::agent), listed in the AI Catalog as `listing` says.
    pub fn agent_listed(
        mut self,
        name: impl Into<String>,
        agent: A2aServerBuilder,
        listing: Listing,
    ) -> Self {
        self.agents.push((name.into(), agent, listing));
        self
    }

    /// Serves the requests of `tenant` by the agent `agent` (added with
    /// [`agent`](Self::agent)): on HTTP+JSON at the spec's tenant routes
    /// (`/{tenant}/message:send`, …), on JSON-RPC at `POST /{tenant}`, on gRPC with the
    /// request's `tenant` field set to `tenant`; `/{tenant}/.well-known/ai-catalog.json` lists
    /// that agent alone. So tenants on the same routes get different agents. A tenant is named as
    /// an agent is, does not start with `.`, and is neither `agents` nor another agent's name.
    pub fn tenant(mut self, tenant: impl Into<String>, agent: impl Into<String>) -> Self {
        self.tenants.push((tenant.into(), agent.into()));
        self
    }

    /// The task store the agents share (default: in memory), and the push config store (with
    /// [`push_store`](Self::push_store); default: in memory).
    ///
    /// Each agent's recovery and retention passes run over the whole store, with that agent's
    /// settings: agents sharing a store should share those settings (or have a store each,
    /// given to their own builders). An agent that runs its executor again on recovered tasks
    /// ([`RecoveryPolicy::Rerun`](crate::core::RecoveryPolicy::Rerun)) needs a store of its own.
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// The push config store the agents share.
    pub fn push_store(mut self, store: Arc<dyn PushConfigStore>) -> Self {
        self.push_store = Some(store);
        self
    }

    /// Whether the AI Catalog gives each agent by reference (its card's URL, the default) or
    /// inline (its card).
    pub fn catalog_entries(mut self, entries: CatalogEntries) -> Self {
        self.catalog.entries = entries;
        self
    }

    /// Who operates the catalog (its `host` member): a name for display, and an identifier
    /// (a DID or a domain name).
    pub fn catalog_host(mut self, host: CatalogHost) -> Self {
        self.catalog.host = Some(host);
        self
    }

    /// How many actix workers serve HTTP (default: one per core).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }

    /// Also serves every agent over gRPC on `addr` (port 0 picks one): a request names its
    /// agent in its `tenant` field, as the agent's card says.
    #[cfg(feature = "grpc")]
    pub fn grpc_addr(mut self, addr: impl Into<String>) -> Self {
        self.grpc = Some(addr.into());
        self
    }

    /// Builds every agent over the shared stores.
    pub fn build(self) -> Result<MultiAgentServer, BuildError> {
        if self.agents.is_empty() {
            return Err(BuildError::NoAgent);
        }
        let push_on = self.agents.iter().any(|(_, b, _)| b.pushes());
        let memory_push = Arc::new(InMemoryPushConfigStore::new());
        let push: Arc<dyn PushConfigStore> = match self.push_store {
            Some(p) => p,
            None => memory_push.clone(),
        };
        let store: Arc<dyn TaskStore> = match self.task_store {
            Some(s) => s,
            None => {
                // Linked as a one-agent server's default stores are: a task evicted takes its
                // push configs along, and its events write their push deliveries.
                let mut memory = InMemoryTaskStore::new().with_push_configs(memory_push);
                if push_on {
                    let outbox = Arc::new(crate::store::InMemoryPushOutbox::new());
                    memory = memory.with_push_outbox(outbox);
                }
                Arc::new(memory)
            }
        };
        let mut agents = Vec::with_capacity(self.agents.len());
        for (name, builder, listing) in self.agents {
            check_name(&name)?;
            if agents.iter().any(|a: &Agent| *a.name == *name) {
                return Err(BuildError::Agents(format!(
                    "two agents are named {name:?}: each needs a name of its own"
                )));
            }
            if builder.reruns() && !builder.has_store() {
                return Err(BuildError::Agents(format!(
                    "agent {name:?} runs its executor again on recovered tasks, but the store is \
                     shared with the other agents (whose tasks it could find): give it a \
                     .task_store(..) of its own, or another recovery policy"
                )));
            }
            let name: Arc<str> = name.into();
            let server = builder.into_agent(name.clone(), &store, &push).build()?;
            agents.push(Agent {
                name,
                server,
                listing,
            });
        }
        let mut tenants: Vec<(Arc<str>, usize)> = Vec::with_capacity(self.tenants.len());
        for (tenant, agent) in self.tenants {
            check_name(&tenant)?;
            let Some(i) = agents.iter().position(|a| *a.name == *agent) else {
                return Err(BuildError::Agents(format!(
                    "tenant {tenant:?} is served by agent {agent:?}, which was not added"
                )));
            };
            // `/agents` and `/.well-known` are the server's own paths.
            let taken = tenant == AGENTS_PATH.trim_start_matches('/')
                || tenant.starts_with('.')
                || tenants.iter().any(|(t, _)| **t == *tenant)
                || agents
                    .iter()
                    .any(|a| *a.name == *tenant && *a.name != *agent);
            if taken {
                return Err(BuildError::Agents(format!(
                    "tenant {tenant:?} is taken (by another tenant, another agent's name, or a path of \
                     the server's own)"
                )));
            }
            tenants.push((tenant.into(), i));
        }
        Ok(MultiAgentServer {
            agents: Arc::new(agents),
            tenants: Arc::new(tenants),
            catalog: self.catalog,
            workers: self.workers,
            #[cfg(feature = "grpc")]
            grpc: self.grpc,
        })
    }
}

/// The AI Catalog route: of every agent, or (`only`) of the agent of that index alone, at the
/// path it is reached by below the catalog (its tenant's scope).
fn catalog_of(
    server: MultiAgentServer,
    only: Option<usize>,
) -> impl Fn(
    HttpRequest,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = actix_web::HttpResponse>>>
+ Clone
+ 'static {
    move |req: HttpRequest| {
        let server = server.clone();
        Box::pin(async move {
            let listed: Vec<Listed<'_>> = server
                .agents
                .iter()
                .enumerate()
                .filter(|(i, _)| only.is_none_or(|o| o == *i))
                .map(|(_, a)| Listed {
                    name: &a.name,
                    path: if only.is_some() {
                        String::new()
                    } else {
                        format!("{AGENTS_PATH}/{}", a.name)
                    },
                    server: &a.server,
                    listing: a.listing,
                })
                .collect();
            super::catalog::respond(&server.catalog, &listed, &req).await
        })
    }
}

/// Checks an agent's name: a path segment and a tenant, with no `/`.
fn check_name(name: &str) -> Result<(), BuildError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name != "."
        && name != "..";
    if ok {
        Ok(())
    } else {
        Err(BuildError::Agents(format!(
            "{name:?} is not an agent name: use 1 to {MAX_NAME} letters, digits, '-', '_' or '.'"
        )))
    }
}
