//! [`Pipelines`]: which pipeline serves a gRPC call — the server's only one, or, on a server of
//! several agents, the agent named by the request's `tenant` field.

use std::collections::HashMap;
use std::sync::Arc;

use tonic::Status;

use crate::protocol::A2aRequest;
use crate::service::Pipeline;

/// The pipelines a gRPC listener serves.
#[derive(Clone, Debug)]
pub(crate) enum Pipelines {
    /// A one-agent server: every call, whatever its tenant.
    One(Arc<Pipeline>),
    /// A server of several agents, by name: a call's `tenant` names its agent.
    ByAgent(Arc<HashMap<Arc<str>, Arc<Pipeline>>>),
}

impl Pipelines {
    /// The pipeline for `req`; on a server of several agents, its tenant is taken out (the
    /// agent serves it as it serves a request on its own HTTP path, without a tenant).
    pub(crate) fn pick(&self, req: &mut A2aRequest) -> Result<&Pipeline, Status> {
        match self {
            Self::One(pipeline) => Ok(pipeline),
            Self::ByAgent(agents) => {
                let name = req.tenant().to_owned();
                let pipeline = Self::named(agents, &name)?;
                req.set_tenant("");
                Ok(pipeline)
            }
        }
    }

    /// [`pick`](Self::pick) by a tenant field of the call's message (emptied on a server of
    /// several agents).
    pub(crate) fn pick_by(&self, tenant: &mut String) -> Result<&Pipeline, Status> {
        match self {
            Self::One(pipeline) => Ok(pipeline),
            Self::ByAgent(agents) => Self::named(agents, &std::mem::take(tenant)),
        }
    }

    fn named<'a>(
        agents: &'a HashMap<Arc<str>, Arc<Pipeline>>,
        name: &str,
    ) -> Result<&'a Pipeline, Status> {
        agents.get(name).map(|p| &**p).ok_or_else(|| {
            let mut known: Vec<&str> = agents.keys().map(|k| &**k).collect();
            known.sort_unstable();
            let why = format!(
                "no agent {} on this server: set the request's tenant to one of {} (see the \
                 agent's card: its GRPC interface names the tenant)",
                crate::error::quoted(name),
                known.join(", ")
            );
            crate::grpc::status::to_status(&crate::A2aError::invalid_field("tenant", why))
        })
    }

    /// The largest message any of the pipelines accepts.
    pub(crate) fn max_body_bytes(&self) -> usize {
        match self {
            Self::One(p) => p.limits().max_body_bytes,
            Self::ByAgent(agents) => agents
                .values()
                .map(|p| p.limits().max_body_bytes)
                .max()
                .unwrap_or_default(),
        }
    }

    /// Whether any pipeline serves extension methods.
    pub(crate) fn have_methods(&self) -> bool {
        match self {
            Self::One(p) => p.service().extensions().has_methods(),
            Self::ByAgent(agents) => agents
                .values()
                .any(|p| p.service().extensions().has_methods()),
        }
    }
}
