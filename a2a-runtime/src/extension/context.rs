//! [`RequestContext`]: what is known about one request (its metadata and the extensions
//! negotiated for it), whatever binding carried it.

use std::borrow::Cow;
use std::sync::Arc;

use super::Negotiated;
use crate::protocol::Scope;
use crate::protocol::{Principal, RequestHeaders, Side};

/// Everything the core needs to know about a request besides its payload.
///
/// The [`Pipeline`](crate::service::Pipeline) builds one per request; the extension negotiation
/// fills [`RequestContext::extensions`] before the operation runs, and the agent sees it through its
/// [`AgentContext`](crate::core::AgentContext).
#[derive(Clone, Debug, Default)]
pub struct RequestContext {
    /// The `A2A-Version` the client sent (`None` when absent or empty, which means 0.3).
    // Borrowed when it is the version this crate speaks: no allocation for the usual request.
    pub protocol_version: Option<Cow<'static, str>>,
    /// The tenant: REST path prefix, or the `tenant` field of the request.
    pub tenant: String,
    /// The authenticated caller (anonymous until an authenticator is configured).
    pub principal: Principal,
    /// The request's headers.
    pub headers: RequestHeaders,
    /// The extensions requested and activated for this request.
    pub extensions: Arc<Negotiated>,
    /// Where the request is being handled: received by a server, or sent by a client.
    pub side: Side,
    /// For a SubscribeToTask that resumes a stream: the id of the last event the client
    /// received; the stream answers the events after it.
    pub resume_after: Option<u64>,
    /// The agent the request addresses, on a server of several agents
    /// ([`MultiAgentServer`](crate::server::MultiAgentServer)); `None` on a one-agent server.
    /// Its tasks are its own: the store [`scope`](Self::scope) is partitioned by it.
    pub agent: Option<Arc<str>>,
}

impl RequestContext {
    /// A context for protocol version 1.0, anonymous, no tenant.
    pub fn v1() -> Self {
        Self {
            protocol_version: Some(Cow::Borrowed(crate::PROTOCOL_VERSION)),
            ..Self::default()
        }
    }

    /// A context for a request a client sends (protocol version 1.0, [`Side::Client`]).
    pub fn client() -> Self {
        Self {
            side: Side::Client,
            ..Self::v1()
        }
    }

    /// The store scope of this request: its tenant and principal (and, on a server of several
    /// agents, its agent: the tenant is then stored as `{agent}/{tenant}`).
    pub fn scope(&self) -> Scope {
        // Unambiguous: agent names hold no `/`, and on a server of several agents every
        // request has an agent.
        let tenant = match &self.agent {
            None => self.tenant.clone(),
            Some(agent) => format!("{agent}/{}", self.tenant),
        };
        Scope::of(tenant, self.principal.id.clone())
    }

    /// True when the extension with `uri` was activated for this request.
    pub fn is_active_uri(&self, uri: &str) -> bool {
        self.extensions.is_active_uri(uri)
    }

    /// True when `E` was activated for this request.
    pub fn is_active<E: super::Extension>(&self) -> bool {
        self.extensions.is_active::<E>()
    }

    /// `E`'s activation value, when `E` was activated for this request.
    pub fn extension<E: super::ExtensionHooks>(&self) -> Option<E::Activation> {
        self.extensions.extension::<E>()
    }
}
