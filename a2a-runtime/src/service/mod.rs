//! The request pipeline: what every request goes through, whatever binding carried it.
//!
//! A binding only decodes and encodes: it turns its transport into [`RequestMeta`] and a
//! [`Payload`], calls [`Pipeline::serve`] once, and encodes the [`Answer`] (or the error).
//! The pipeline runs, in order:
//!
//! 1. authentication (before anything of the payload is read),
//! 2. the target, from the metadata or the payload ([`Payload::target`]),
//! 3. the protocol version (per dialect: v1.0, or v0.3 translated into v1.0),
//! 4. extension negotiation: the requested extensions, the required ones,
//! 5. the params ([`Payload::decode`]),
//! 6. authorization of the operation (or extension method) in its tenant,
//! 7. the caller's [quotas](quota) (request rate, live tasks, open streams), when configured,
//! 8. dispatch to the core, which activates the extensions and runs their request and
//!    response hooks around the operation,
//! 9. the activated extensions to echo in the response.
//!
//! An internal error, answered or ending a stream, reaches the caller as its code, a generic
//! message and a correlation id; its cause is logged under that id (see
//! [`A2aError::for_caller`] and [`Pipeline::with_internal_error_causes`]).
//!
//! ```
//! use a2a_runtime::service::{Decoded, Payload, RequestMeta, Target};
//! use a2a_runtime::protocol::{A2aRequest, Operation};
//! # use a2a_runtime::{core::Limits, A2aError};
//!
//! /// A transport whose payload arrives already decoded.
//! struct Ready(Option<A2aRequest>);
//!
//! impl Payload for Ready {
//!     async fn target(&mut self, _: &Limits) -> Result<Target, A2aError> {
//!         let op = self.0.as_ref().map(A2aRequest::operation);
//!         op.map(Target::Operation).ok_or_else(|| A2aError::Internal("read twice".into()))
//!     }
//!     async fn decode(&mut self, _: &Target, _: &Limits) -> Result<Decoded, A2aError> {
//!         self.0.take().map(Decoded::Operation).ok_or_else(|| A2aError::Internal("read twice".into()))
//!     }
//! }
//! # async fn serve(server: &a2a_runtime::server::A2aServer, headers: a2a_runtime::protocol::RequestHeaders, req: A2aRequest) {
//! let answer = server.pipeline().serve(RequestMeta::from_headers(headers), &mut Ready(Some(req))).await;
//! # }
//! ```

pub mod quota;
mod request;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

pub use quota::{Limit, QuotaUsage, Quotas, Rate, Share};
pub(crate) use request::protocol_version;
use request::resume_after;
pub use request::{Decoded, Payload, RequestMeta, Target};

use crate::auth::{AuthRequest, Guard};
use crate::core::{A2aService, Limits, OperationResponse};
use crate::error::A2aError;
use crate::extension::{Activated, Negotiated, RequestContext};
use crate::protocol::{A2aRequest, Principal, Side};

/// The protocol versions a server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Versions {
    /// v1.0.
    pub v1_0: bool,
    /// v0.3 (its JSON-RPC method names and HTTP+JSON routes, translated).
    pub v0_3: bool,
}

impl Default for Versions {
    fn default() -> Self {
        Self {
            v1_0: true,
            v0_3: true,
        }
    }
}

/// What the pipeline answers.
// Moved once, to the binding that encodes it (as `Decoded`).
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Answer {
    /// The result of a protocol operation (its activated extensions filtered by the server's
    /// echo setting).
    Operation(OperationResponse),
    /// The result of an extension's method.
    Method {
        /// The method's result.
        result: serde_json::Value,
        /// The activated extensions to echo.
        activated: Activated,
    },
}

/// The request pipeline of a server: authentication, version, negotiation, authorization,
/// hooks and dispatch, for every binding (see the [module](self) docs).
///
/// A server's pipeline is [`A2aServer::pipeline`](crate::server::A2aServer::pipeline).
#[derive(Clone)]
pub struct Pipeline {
    service: A2aService,
    guard: Option<Arc<Guard>>,
    versions: Versions,
    echo_extensions: bool,
    /// Whether internal errors show their causes on the wire (development only).
    show_causes: bool,
    quotas: Option<Arc<quota::Ledger>>,
    /// The agent this pipeline serves, on a server of several agents.
    agent: Option<Arc<str>>,
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field("authenticated", &self.guard.is_some())
            .field("versions", &self.versions)
            .field("echo_extensions", &self.echo_extensions)
            .field("show_causes", &self.show_causes)
            .field("quotas", &self.quotas.is_some())
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    /// A pipeline over `service`: open to anonymous callers, both versions answered, activated
    /// extensions echoed.
    pub fn new(service: A2aService) -> Self {
        Self {
            service,
            guard: None,
            versions: Versions::default(),
            echo_extensions: true,
            show_causes: false,
            quotas: None,
            agent: None,
        }
    }

    /// Serves the agent `name` of a server of several agents: its requests carry the name
    /// ([`RequestContext::agent`]) and its tasks are stored apart from other agents'.
    pub fn with_agent(mut self, name: impl Into<Arc<str>>) -> Self {
        self.agent = Some(name.into());
        self
    }

    /// The agent this pipeline serves, on a server of several agents.
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// Holds every caller to `quotas` (see [`quota`]).
    pub fn with_quotas(mut self, quotas: Quotas) -> Self {
        self.quotas = Some(Arc::new(quota::Ledger::new(quotas)));
        self
    }

    /// What the quotas hold now and refused so far (`None` without quotas).
    pub fn quota_usage(&self) -> Option<QuotaUsage> {
        self.quotas.as_ref().map(|q| q.usage())
    }

    /// Authenticates and authorizes every request with `guard`.
    pub fn with_guard(mut self, guard: Arc<Guard>) -> Self {
        self.guard = Some(guard);
        self
    }

    /// Answers only `versions`.
    pub fn with_versions(mut self, versions: Versions) -> Self {
        self.versions = versions;
        self
    }

    /// Whether the activated extensions are echoed in answers (default: true).
    pub fn with_echo(mut self, echo: bool) -> Self {
        self.echo_extensions = echo;
        self
    }

    /// Whether internal errors show their causes to callers (default: false, they get a
    /// correlation id and the cause goes to the log). For development: a cause can hold SQL,
    /// paths and host names.
    pub fn with_internal_error_causes(mut self, show: bool) -> Self {
        self.show_causes = show;
        self
    }

    /// The core service the pipeline dispatches to (not public: it authenticates nobody).
    pub(crate) fn service(&self) -> &A2aService {
        &self.service
    }

    /// The authentication and authorization in force, if any.
    pub fn guard(&self) -> Option<&Arc<Guard>> {
        self.guard.as_ref()
    }

    /// The protocol versions answered.
    pub fn versions(&self) -> Versions {
        self.versions
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        self.service.limits()
    }

    /// Runs one request through the pipeline. An internal error, answered or in a stream, is
    /// the caller's view of it ([`A2aError::for_caller`]).
    pub async fn serve<P: Payload>(
        &self,
        meta: RequestMeta<'_>,
        payload: &mut P,
    ) -> Result<Answer, A2aError> {
        let show = self.show_causes;
        match self.answer(meta, payload).await {
            Ok(Answer::Operation(served)) => Ok(Answer::Operation(
                served.map_stream_errors(move |e| e.for_caller(show)),
            )),
            Ok(method) => Ok(method),
            Err(e) => Err(e.for_caller(show)),
        }
    }

    /// [`serve`](Self::serve), its errors as they are.
    async fn answer<P: Payload>(
        &self,
        meta: RequestMeta<'_>,
        payload: &mut P,
    ) -> Result<Answer, A2aError> {
        let peer = meta.peer;
        if let Some(target) = &meta.target {
            note_target(target, &self.service);
        }
        let principal = match &self.guard {
            None => Principal::anonymous(),
            Some(guard) => {
                let auth = AuthRequest {
                    headers: &meta.headers,
                    peer: meta.peer,
                    peer_certificate: meta.peer_certificate,
                    tenant: meta.tenant.as_deref(),
                    operation: meta.target.as_ref().map(Target::auth_operation),
                };
                guard.authenticate(&auth).await?
            }
        };
        let target = match meta.target {
            Some(target) => target,
            None => {
                let target = payload.target(self.limits()).await?;
                note_target(&target, &self.service);
                target
            }
        };
        let path_tenant = meta.tenant.is_some();
        let resume_after = resume_after(&target, meta.last_event_id.as_deref())?;
        let mut ctx = RequestContext {
            protocol_version: meta.protocol_version,
            tenant: meta.tenant.unwrap_or_default(),
            principal,
            headers: meta.headers,
            extensions: Negotiated::none(),
            side: Side::Server,
            resume_after,
            agent: self.agent.clone(),
        };
        self.check_version(&mut ctx, &target)?;
        self.service.begin(&mut ctx)?;
        let method = match &target {
            Target::Operation(_) | Target::V0_3 { .. } => None,
            Target::Method(name) => Some(
                self.service
                    .method_named(name)
                    .ok_or_else(|| method_not_found(name))?,
            ),
            Target::MethodAt(path) => Some(
                self.service
                    .method_at(path)
                    .ok_or_else(|| method_not_found(path))?,
            ),
        };
        match (payload.decode(&target, self.limits()).await?, method) {
            (Decoded::Operation(request), None) => self.operation(ctx, request, peer).await,
            (Decoded::Method(params), Some(method)) => {
                let tenant = if path_tenant {
                    ctx.tenant.as_str()
                } else {
                    params
                        .get("tenant")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                };
                if let Some(guard) = &self.guard {
                    guard.authorize_method(&ctx, method, tenant)?;
                }
                // A method takes a token of the rate; it holds nothing after.
                let _ticket = match &self.quotas {
                    Some(ledger) => {
                        let admission = quota::Admission {
                            key: quota_key(tenant, &ctx.principal, peer),
                            ask: quota::Ask {
                                tenant: true,
                                ..quota::Ask::default()
                            },
                        };
                        self.admit(ledger, admission, &ctx).await?
                    }
                    None => None,
                };
                // Boxed: its state would otherwise enlarge every request's future.
                let (result, activated) =
                    Box::pin(self.service.call_method(ctx, method, params)).await?;
                Ok(Answer::Method {
                    result,
                    activated: self.echo(activated),
                })
            }
            _ => Err(A2aError::Internal(
                "the payload was decoded as another kind of request than its target".into(),
            )),
        }
    }

    /// Authorizes, admits (quotas) and dispatches a protocol operation.
    async fn operation(
        &self,
        mut ctx: RequestContext,
        request: A2aRequest,
        peer: Option<SocketAddr>,
    ) -> Result<Answer, A2aError> {
        let Some(ledger) = &self.quotas else {
            if let Some(guard) = &self.guard {
                guard.authorize(&mut ctx, &request)?;
            }
            let mut served = self.service.call(ctx, request).await?;
            served.activated = self.echo(std::mem::take(&mut served.activated));
            return Ok(Answer::Operation(served));
        };
        let tenant = if ctx.tenant.is_empty() {
            request.tenant()
        } else {
            ctx.tenant.as_str()
        };
        let key = quota_key(tenant, &ctx.principal, peer);
        let caller = ctx.principal.id.clone();
        if let Some(guard) = &self.guard {
            guard.authorize(&mut ctx, &request)?;
        }
        let new_task = ledger.tracks_tasks()
            && matches!(
                &request,
                A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r)
                    if r.message.task_id.is_empty()
            );
        let admission = quota::Admission {
            key,
            ask: quota::Ask {
                new_task,
                stream: matches!(
                    request,
                    A2aRequest::SendStreamingMessage(_) | A2aRequest::SubscribeToTask(_)
                ),
                // Refused by the authorizer (it runs as nobody): not on the tenant's share.
                tenant: ctx.principal.id == caller,
            },
        };
        let ticket = self.admit(ledger, admission, &ctx).await?;
        let outcome = self.service.call(ctx, request).await;
        let mut served = match ticket {
            Some(ticket) => ticket.settle(outcome)?,
            None => outcome?,
        };
        served.activated = self.echo(std::mem::take(&mut served.activated));
        Ok(Answer::Operation(served))
    }

    /// Admits a request under the quotas of `ledger`, after looking up the tasks of a caller
    /// at its live-task limit once (the ended ones free their slots).
    async fn admit(
        &self,
        ledger: &Arc<quota::Ledger>,
        admission: quota::Admission,
        ctx: &RequestContext,
    ) -> Result<Option<quota::Ticket>, A2aError> {
        if let Some(ids) = admission.ask(ledger, true)? {
            let mut ended = Vec::new();
            for id in ids {
                let owner = RequestContext {
                    tenant: admission.key.tenant.clone(),
                    principal: ctx.principal.clone(),
                    agent: ctx.agent.clone(),
                    ..RequestContext::v1()
                };
                match self.service.task_state(owner, id.clone()).await {
                    Ok(None) => ended.push(id),
                    Ok(Some(state)) if state.is_terminal() => ended.push(id),
                    // Live, or not known now: it keeps its slot.
                    _ => {}
                }
            }
            ledger.ended(&admission.key, &ended);
            admission.ask(ledger, false)?;
        }
        Ok(Some(quota::Ticket::new(ledger.clone(), admission)))
    }

    /// The version check of `target`'s dialect; a v0.3 request enters the core as v1.0.
    fn check_version(&self, ctx: &mut RequestContext, target: &Target) -> Result<(), A2aError> {
        match target {
            Target::V0_3 { method, .. } => {
                if !crate::compat::v0_3::is_requested(ctx.protocol_version.as_deref()) {
                    // A v0.3 method asked for as another version is no method of that version.
                    return Err(method_not_found(method));
                }
                ctx.protocol_version = Some(std::borrow::Cow::Borrowed(crate::PROTOCOL_VERSION));
            }
            Target::Operation(_) if !self.versions.v1_0 => {
                return Err(A2aError::VersionNotSupported {
                    requested: ctx.protocol_version.as_deref().unwrap_or("0.3").to_owned(),
                    supported: vec!["0.3".to_owned()],
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// The activated extensions to echo (none when echo is switched off).
    fn echo(&self, activated: Activated) -> Activated {
        if self.echo_extensions {
            activated
        } else {
            Activated::default()
        }
    }
}

/// Who a request is, to the quotas: its principal in its tenant; an unauthenticated caller by
/// its address (the anonymous principal is everyone without a credential) — an IPv6 one by its
/// /64 network, which one host usually holds whole.
fn quota_key(tenant: &str, principal: &Principal, peer: Option<SocketAddr>) -> quota::CallerKey {
    let principal = match (principal.authenticated, peer) {
        // Starts with a control character: no authenticated principal's id does.
        (false, Some(peer)) => match peer.ip() {
            std::net::IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
                let s = v6.segments();
                let id = principal.id();
                format!("\u{1}{id}@{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
            std::net::IpAddr::V6(v6) => {
                let v4 = v6
                    .to_ipv4_mapped()
                    .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED);
                format!("\u{1}{}@{v4}", principal.id())
            }
            ip => format!("\u{1}{}@{ip}", principal.id()),
        },
        _ => principal.id().to_owned(),
    };
    quota::CallerKey {
        tenant: tenant.to_owned(),
        principal,
    }
}

fn method_not_found(method: &str) -> A2aError {
    A2aError::MethodNotFound {
        method: method.to_owned(),
        hint: Vec::new(),
    }
}

/// Notes the method of `target` for the request's metrics (an extension method only when
/// `service` serves it: an unknown name is not a label).
fn note_target(target: &Target, service: &A2aService) {
    let method = match target {
        Target::Operation(op) | Target::V0_3 { operation: op, .. } => Some(op.method()),
        Target::Method(name) => service.method_named(name),
        Target::MethodAt(path) => service.method_at(path),
    };
    if let Some(method) = method {
        crate::core::note_operation(method);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn anonymous_callers_are_told_apart_by_address_and_ipv6_by_network() {
        let anonymous = Principal::anonymous();
        let key = |addr: &str| quota_key("", &anonymous, Some(addr.parse().unwrap())).principal;
        assert_ne!(key("127.0.0.2:1"), key("127.0.0.3:1"));
        assert_eq!(key("127.0.0.2:1"), key("127.0.0.2:2"));
        assert_eq!(key("[2001:db8:1:2::1]:1"), key("[2001:db8:1:2:ffff::9]:1"));
        assert_ne!(key("[2001:db8:1:2::1]:1"), key("[2001:db8:1:3::1]:1"));
        assert_eq!(key("[::ffff:10.0.0.1]:1"), key("10.0.0.1:1"));
        // An authenticated principal is its id, wherever it calls from.
        let alice = Principal::authenticated("alice");
        let a = quota_key("t", &alice, Some("127.0.0.2:1".parse().unwrap()));
        assert_eq!((a.tenant.as_str(), a.principal.as_str()), ("t", "alice"));
        assert_eq!(quota_key("", &anonymous, None).principal, "anonymous");
    }
}
