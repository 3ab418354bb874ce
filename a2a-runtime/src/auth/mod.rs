//! Authentication, authorization and tenancy, and signed agent cards.
//!
//! - An [`Authenticator`] turns a request's headers (and peer address) into a [`Principal`],
//!   or refuses it. It runs before the body is read and before extensions are negotiated, on
//!   every operation of every binding. Built in: [`StaticTokens`] (bearer tokens and API keys)
//!   and, with the `jwt` feature, [`JwtAuthenticator`](jwt::JwtAuthenticator) (JWKS over HTTPS);
//!   with the `tls` feature, `MtlsAuthenticator` (the client certificate of mutual TLS).
//! - An [`Authorizer`] decides whether a principal may run an operation in a tenant; the
//!   [`DefaultAuthorizer`] lets a principal into the tenants it belongs to. Tasks are always
//!   scoped to their owner by the store: another principal's task is not found, exactly as a
//!   task that does not exist.
//! - [`Guard`] is both, as the server runs them: bindings (and any other transport) call
//!   [`Guard::authenticate`] and [`Guard::authorize`].
//! - [`jcs`] canonicalizes JSON (RFC 8785); with the `jwt` feature, [`signing`] signs agent
//!   cards and verifies them against a trust root the verifier chooses.
//!
//! ```
//! use a2a_runtime::auth::StaticTokens;
//! # use a2a_runtime::server::A2aServer;
//! # use a2a_runtime::types::AgentCard;
//! # struct Echo;
//! # impl a2a_runtime::core::AgentExecutor for Echo {
//! #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
//! # }
//! let card = AgentCard { name: "n".into(), description: "d".into(), version: "1".into(), ..Default::default() };
//! let tokens = StaticTokens::bearer().token("alice", "s3cret-alice").token("bob", "s3cret-bob");
//! let server = A2aServer::builder().card(card).executor(Echo).authenticator(tokens).build().unwrap();
//! assert!(server.card().security_schemes.contains_key("bearer"));
//! ```

pub mod jcs;
#[cfg(feature = "jwt")]
pub mod jwt;
#[cfg(feature = "tls")]
mod mtls;
#[cfg(feature = "jwt")]
pub mod signing;
mod tokens;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

#[cfg(feature = "tls")]
pub use mtls::{CertIdentity, MtlsAuthenticator};
pub use tokens::StaticTokens;

use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::protocol::{A2aRequest, Operation, Principal, RequestHeaders};
use crate::types::{AgentCard, SecurityRequirement, SecurityScheme, StringList};

/// What an [`Authenticator`] sees of a request: what the transport knows before the body is
/// read.
#[derive(Clone, Copy, Debug)]
pub struct AuthRequest<'a> {
    /// The request headers (gRPC: the metadata).
    pub headers: &'a RequestHeaders,
    /// The peer's address, when the transport knows it.
    pub peer: Option<SocketAddr>,
    /// The certificate (DER) the client presented on a TLS connection, verified by the TLS
    /// layer against the server's client CA ([`TlsConfig::client_ca`]); `None` without TLS or
    /// without a client certificate.
    ///
    /// [`TlsConfig::client_ca`]: crate::server::TlsConfig::client_ca
    pub peer_certificate: Option<&'a [u8]>,
    /// The tenant, when the transport carries it outside the body (REST's path prefix);
    /// `None` when it is only in the body (JSON-RPC, gRPC), which is not read yet.
    pub tenant: Option<&'a str>,
    /// The operation, when the transport names it outside the body (REST's route, gRPC's
    /// method); `None` for JSON-RPC, whose method is in the body.
    pub operation: Option<AuthOperation<'a>>,
}

/// An operation as authentication and authorization see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthOperation<'a> {
    /// One of the protocol's operations.
    Core(Operation),
    /// A method added by an extension (its JSON-RPC name or REST path).
    Method(&'a str),
}

/// Why a credential was refused. Callers are told only that authentication is required: the
/// reason goes to the server's log, never to the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthError {
    /// What was wrong (for the log).
    pub reason: String,
}

impl AuthError {
    /// A refusal for `reason` (logged, never sent).
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for AuthError {}

/// Authenticates requests: the credential in the headers becomes a [`Principal`].
///
/// Configured on the server builder with
/// [`authenticator`](crate::server::A2aServerBuilder::authenticator); the schemes it returns
/// from [`security_schemes`](Self::security_schemes) are declared on the card.
#[async_trait::async_trait]
pub trait Authenticator: Send + Sync + fmt::Debug + 'static {
    /// The caller of `req`, or why its credential (or the lack of one) is refused.
    async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<Principal, AuthError>;

    /// The security schemes this authenticator verifies, by name, as the card declares them.
    fn security_schemes(&self) -> Vec<(String, SecurityScheme)>;

    /// The `WWW-Authenticate` challenge of this authenticator (e.g. `Bearer realm="a2a"`).
    fn challenge(&self) -> String;

    /// Where this authenticator's principal ids come from. On a server with several
    /// authenticators, a principal's id is `<namespace>:<id>`, so that the same name from two
    /// sources is two principals (see [`Guard`]); with one authenticator ids are kept as they
    /// are. Default: the name of its first security scheme (`bearer`, `apiKey`, `mtls`, ...).
    fn namespace(&self) -> String {
        self.security_schemes()
            .into_iter()
            .next()
            .map(|(name, _)| name)
            .unwrap_or_default()
    }
}

/// What an [`Authorizer`] decides on.
#[derive(Clone, Copy, Debug)]
pub struct AuthzRequest<'a> {
    /// The authenticated caller.
    pub principal: &'a Principal,
    /// The operation.
    pub operation: AuthOperation<'a>,
    /// The tenant (`""`: none).
    pub tenant: &'a str,
    /// The task the operation addresses, if any.
    pub task_id: Option<&'a str>,
}

/// Decides whether a principal may run an operation in a tenant.
///
/// A refusal of an operation on a task is answered exactly as a task that does not exist
/// (TaskNotFound, with the store looked up as usual); other refusals are PermissionDenied.
/// Tasks are scoped to their owner whatever the authorizer says.
pub trait Authorizer: Send + Sync + fmt::Debug + 'static {
    /// True when the request may proceed.
    fn allows(&self, req: &AuthzRequest<'_>) -> bool;
}

/// The default policy: the tenant-less interface is open to every authenticated principal; a
/// tenant only to its members — those whose credential names it ([`Principal::tenants`]) and
/// those given it here with [`member`](Self::member).
#[derive(Clone, Debug, Default)]
pub struct DefaultAuthorizer {
    members: HashMap<String, Vec<String>>,
    open_default_tenant: bool,
}

impl DefaultAuthorizer {
    /// The default policy, with no extra memberships.
    pub fn new() -> Self {
        Self {
            members: HashMap::new(),
            open_default_tenant: true,
        }
    }

    /// Makes `principal` a member of `tenant`.
    pub fn member(mut self, tenant: impl Into<String>, principal: impl Into<String>) -> Self {
        self.members
            .entry(principal.into())
            .or_default()
            .push(tenant.into());
        self
    }

    /// Whether requests without a tenant are allowed for every authenticated principal
    /// (default: true).
    pub fn open_default_tenant(mut self, open: bool) -> Self {
        self.open_default_tenant = open;
        self
    }
}

impl Authorizer for DefaultAuthorizer {
    fn allows(&self, req: &AuthzRequest<'_>) -> bool {
        if req.tenant.is_empty() {
            return self.open_default_tenant;
        }
        req.principal.belongs_to(req.tenant)
            || self
                .members
                .get(req.principal.id.as_ref())
                .is_some_and(|ts| ts.iter().any(|t| t == req.tenant))
    }
}

/// The id of the principal a refused task operation runs as: it owns nothing, so the store
/// answers TaskNotFound after the same lookup a missing task gets. (Not NUL: PostgreSQL text
/// cannot hold it.) No authenticated principal has an id starting with a control character.
const NOBODY: &str = "\u{1}nobody";

/// Authentication and authorization as the server runs them, for every binding.
///
/// Principal ids are namespaced by where they come from once several authenticators are
/// configured: the principal `alice` of a static bearer token is `bearer:alice`, the `sub`
/// `alice` of a JWT is `jwt:alice` (`jwt:<issuer>:alice` when the authenticator requires an
/// issuer), so one cannot read the other's tasks. With a single authenticator ids are kept as
/// they are (existing deployments keep their tasks). [`alias`](Self::alias) maps one id onto
/// another explicitly, making two credentials one principal.
///
/// ```
/// use std::sync::Arc;
/// use a2a_runtime::auth::{DefaultAuthorizer, Guard, StaticTokens};
/// let guard = Guard::new(
///     vec![
///         Arc::new(StaticTokens::bearer().token("alice", "t1")),
///         Arc::new(StaticTokens::api_key("X-API-Key").token("alice", "k1")),
///     ],
///     Arc::new(DefaultAuthorizer::new()),
/// )
/// // The API key of alice is the bearer token's alice.
/// .alias("apiKey:alice", "bearer:alice");
/// # let _ = guard;
/// ```
#[derive(Clone, Debug)]
pub struct Guard {
    authenticators: Vec<Arc<dyn Authenticator>>,
    authorizer: Arc<dyn Authorizer>,
    challenge: String,
    /// Each authenticator's namespace, when there are several (else ids are kept).
    namespaces: Option<Vec<String>>,
    /// Ids mapped onto other ids by the operator.
    aliases: HashMap<String, String>,
}

impl Guard {
    /// A guard trying `authenticators` in order (the first that accepts wins), then asking
    /// `authorizer`.
    pub fn new(
        authenticators: Vec<Arc<dyn Authenticator>>,
        authorizer: Arc<dyn Authorizer>,
    ) -> Self {
        let mut challenges: Vec<String> = Vec::new();
        for c in authenticators.iter().map(|a| a.challenge()) {
            if !challenges.contains(&c) {
                challenges.push(c);
            }
        }
        let challenge = challenges.join(", ");
        // Several sources of ids: each its own namespace (an unnamed one by its position).
        let namespaces = (authenticators.len() > 1).then(|| {
            authenticators
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let ns = a.namespace();
                    if ns.is_empty() {
                        format!("auth{i}")
                    } else {
                        ns
                    }
                })
                .collect()
        });
        Self {
            authenticators,
            authorizer,
            challenge,
            namespaces,
            aliases: HashMap::new(),
        }
    }

    /// Makes the principal `from` (an id as this guard produces it, namespaced when several
    /// authenticators are configured, e.g. `jwt:alice`) the principal `to` (e.g.
    /// `bearer:alice`): it then owns and sees `to`'s tasks.
    pub fn alias(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.aliases.insert(from.into(), to.into());
        self
    }

    /// The id `principal` has here: namespaced by authenticator `index` when several are
    /// configured, then mapped by the aliases.
    fn named(&self, index: usize, mut principal: Principal) -> Principal {
        if let Some(ns) = self.namespaces.as_ref().and_then(|n| n.get(index)) {
            principal.id = std::borrow::Cow::Owned(format!("{ns}:{}", principal.id));
        }
        if let Some(to) = self.aliases.get(principal.id.as_ref()) {
            principal.id = std::borrow::Cow::Owned(to.clone());
        }
        principal
    }

    /// The `WWW-Authenticate` value of every configured scheme.
    pub fn challenge(&self) -> &str {
        &self.challenge
    }

    /// The caller of `req`, or Unauthenticated (the same error for a missing and a wrong
    /// credential).
    pub async fn authenticate(&self, req: &AuthRequest<'_>) -> Result<Principal, A2aError> {
        let mut reasons = Vec::new();
        for (i, a) in self.authenticators.iter().enumerate() {
            match a.authenticate(req).await {
                Ok(p) if p.id.starts_with(char::is_control) => {
                    reasons.push(format!(
                        "principal id {:?} starts with a control character",
                        p.id
                    ));
                }
                Ok(p) => return Ok(self.named(i, p)),
                Err(e) => reasons.push(e.reason),
            }
        }
        tracing::debug!(reasons = ?reasons, "a2a request refused: not authenticated");
        Err(self.unauthenticated())
    }

    /// The error of a refused credential.
    pub fn unauthenticated(&self) -> A2aError {
        A2aError::Unauthenticated {
            challenge: self.challenge.clone(),
        }
    }

    /// Authorizes `req` for the caller in `ctx` (its tenant is the request's when `ctx` has
    /// none). A refused operation on a task is made to run as a principal that owns nothing,
    /// so that it is answered TaskNotFound exactly as a missing task; any other refusal is
    /// PermissionDenied.
    pub fn authorize(&self, ctx: &mut RequestContext, req: &A2aRequest) -> Result<(), A2aError> {
        let tenant = if ctx.tenant.is_empty() {
            req.tenant()
        } else {
            &ctx.tenant
        };
        if matches!(req, A2aRequest::GetExtendedAgentCard(_)) && !ctx.principal.authenticated {
            return Err(self.unauthenticated());
        }
        let task_id = task_of(req);
        let allowed = self.authorizer.allows(&AuthzRequest {
            principal: &ctx.principal,
            operation: AuthOperation::Core(req.operation()),
            tenant,
            task_id,
        });
        if allowed {
            return Ok(());
        }
        if task_id.is_some() {
            ctx.principal = Principal {
                id: std::borrow::Cow::Borrowed(NOBODY),
                authenticated: false,
                ..Principal::anonymous()
            };
            return Ok(());
        }
        Err(A2aError::PermissionDenied(format!(
            "{} is not allowed here",
            req.operation()
        )))
    }

    /// Authorizes an extension method for the caller in `ctx` in `tenant`.
    pub fn authorize_method(
        &self,
        ctx: &RequestContext,
        method: &str,
        tenant: &str,
    ) -> Result<(), A2aError> {
        let allowed = self.authorizer.allows(&AuthzRequest {
            principal: &ctx.principal,
            operation: AuthOperation::Method(method),
            tenant,
            task_id: None,
        });
        if allowed {
            Ok(())
        } else {
            Err(A2aError::PermissionDenied(format!(
                "{method} is not allowed here"
            )))
        }
    }

    /// Declares the authenticators' schemes on `card`, each one an alternative requirement.
    pub fn declare(&self, card: &mut AgentCard) {
        for a in &self.authenticators {
            for (name, scheme) in a.security_schemes() {
                let requirement = SecurityRequirement {
                    schemes: BTreeMap::from([(name.clone(), StringList::default())]),
                };
                if !card.security_requirements.contains(&requirement) {
                    card.security_requirements.push(requirement);
                }
                card.security_schemes.insert(name, scheme);
            }
        }
    }
}

/// The task a request addresses.
fn task_of(req: &A2aRequest) -> Option<&str> {
    let id = match req {
        A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => {
            r.message.task_id.as_str()
        }
        A2aRequest::GetTask(r) => r.id.as_str(),
        A2aRequest::CancelTask(r) => r.id.as_str(),
        A2aRequest::SubscribeToTask(r) => r.id.as_str(),
        A2aRequest::CreateTaskPushNotificationConfig(r) => r.task_id.as_str(),
        A2aRequest::GetTaskPushNotificationConfig(r) => r.task_id.as_str(),
        A2aRequest::ListTaskPushNotificationConfigs(r) => r.task_id.as_str(),
        A2aRequest::DeleteTaskPushNotificationConfig(r) => r.task_id.as_str(),
        A2aRequest::ListTasks(_) | A2aRequest::GetExtendedAgentCard(_) => "",
    };
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::{GetTaskRequest, ListTasksRequest};

    #[tokio::test]
    async fn ids_are_namespaced_by_their_authenticator_when_there_are_several() {
        let headers = |v: &str| -> RequestHeaders { [("authorization", v)].into_iter().collect() };
        let id_of = |guard: Guard, v: &'static str| async move {
            let h = headers(v);
            let req = AuthRequest {
                headers: &h,
                peer: None,
                peer_certificate: None,
                tenant: None,
                operation: None,
            };
            guard.authenticate(&req).await.map(|p| p.id().to_owned())
        };
        let authz: Arc<dyn Authorizer> = Arc::new(DefaultAuthorizer::new());
        let bearer = || Arc::new(StaticTokens::bearer().token("alice", "t1"));
        let other = || {
            Arc::new(
                StaticTokens::bearer()
                    .scheme_name("partner")
                    .token("alice", "t2"),
            )
        };
        // One authenticator: ids as they were.
        let single = Guard::new(vec![bearer()], authz.clone());
        assert_eq!(id_of(single, "Bearer t1").await.unwrap(), "alice");
        // Two: each its namespace, so the two alices are two principals.
        let both = || Guard::new(vec![bearer(), other()], authz.clone());
        assert_eq!(id_of(both(), "Bearer t1").await.unwrap(), "bearer:alice");
        assert_eq!(id_of(both(), "Bearer t2").await.unwrap(), "partner:alice");
        // Mapped explicitly: one.
        let mapped = both().alias("partner:alice", "bearer:alice");
        assert_eq!(id_of(mapped, "Bearer t2").await.unwrap(), "bearer:alice");
        assert!(id_of(both(), "Bearer t3").await.is_err());
    }

    #[test]
    fn the_default_policy_admits_members_only() {
        let authz = DefaultAuthorizer::new().member("acme", "bob");
        let alice = Principal::authenticated("alice").with_tenants(["globex"]);
        let bob = Principal::authenticated("bob");
        let op = AuthOperation::Core(Operation::ListTasks);
        let ask = |p: &Principal, tenant: &str| {
            authz.allows(&AuthzRequest {
                principal: p,
                operation: op,
                tenant,
                task_id: None,
            })
        };
        assert!(ask(&alice, ""));
        assert!(ask(&alice, "globex"));
        assert!(!ask(&alice, "acme"));
        assert!(ask(&bob, "acme"));
        assert!(!ask(&bob, "globex"));
        let closed = DefaultAuthorizer::new().open_default_tenant(false);
        assert!(!closed.allows(&AuthzRequest {
            principal: &alice,
            operation: op,
            tenant: "",
            task_id: None
        }));
    }

    #[test]
    fn a_refused_task_operation_runs_as_nobody_and_others_are_denied() {
        let guard = Guard::new(
            vec![Arc::new(StaticTokens::bearer().token("alice", "t"))],
            Arc::new(DefaultAuthorizer::new()),
        );
        let mut ctx = RequestContext::v1();
        ctx.principal = Principal::authenticated("alice");
        ctx.tenant = "acme".into();
        let get = A2aRequest::GetTask(GetTaskRequest {
            id: "t1".into(),
            ..Default::default()
        });
        guard.authorize(&mut ctx, &get).unwrap();
        assert_eq!(ctx.principal.id, NOBODY);
        assert_eq!(ctx.scope().owner, NOBODY);
        let mut ctx = RequestContext::v1();
        ctx.principal = Principal::authenticated("alice");
        let list = A2aRequest::ListTasks(ListTasksRequest {
            tenant: "acme".into(),
            ..Default::default()
        });
        let err = guard.authorize(&mut ctx, &list).unwrap_err();
        assert!(matches!(err, A2aError::PermissionDenied(_)), "{err:?}");
        assert_eq!(err.http_status(), 403);
        assert_eq!(guard.challenge(), "Bearer realm=\"a2a\"");
    }
}
