//! The AI Catalog of a [`MultiAgentServer`](super::MultiAgentServer) at
//! `/.well-known/ai-catalog.json`: its agents, each by reference (its card's URL) or inline (its
//! card), listed only to the callers who may see them (see [`Listing`]).

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};

use super::{A2aServer, WELL_KNOWN_PATH};
use crate::auth::AuthRequest;
use crate::types::{AI_CATALOG_MEDIA_TYPE, AI_CATALOG_PATH, AiCatalog, CatalogEntry, CatalogHost};

/// Who sees an agent in the AI Catalog (its card and its bindings stay where they are).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Listing {
    /// Listed to everyone (the default).
    #[default]
    Public,
    /// Listed only to callers that the agent's own authenticator accepts (an agent without
    /// one is listed to everyone).
    Authenticated,
    /// Never listed: reached only by those who know its address.
    Unlisted,
}

/// How the catalog gives each agent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogEntries {
    /// By reference: the URL of the agent's card (the default).
    #[default]
    ByReference,
    /// Inline: the agent's card itself.
    Inline,
}

/// An agent as the catalog sees it.
pub(super) struct Listed<'a> {
    pub(super) name: &'a str,
    /// Where its bindings are, below where the catalog is (e.g. `/agents/echo`).
    pub(super) path: String,
    pub(super) server: &'a A2aServer,
    pub(super) listing: Listing,
}

/// How the catalog is written.
#[derive(Clone, Debug, Default)]
pub(super) struct CatalogSettings {
    pub(super) entries: CatalogEntries,
    pub(super) host: Option<CatalogHost>,
}

/// The catalog as `req`'s caller may see it.
pub(super) async fn respond(
    settings: &CatalogSettings,
    agents: &[Listed<'_>],
    req: &HttpRequest,
) -> HttpResponse {
    let (scheme, host) = {
        let info = req.connection_info();
        let scheme = match info.scheme() {
            "https" => "https",
            _ => "http",
        };
        // A `Host` that is not an authority (a hostile or broken client) gets the default.
        let host = Some(info.host())
            .filter(|h| super::mount::is_authority(h))
            .unwrap_or("127.0.0.1:8080")
            .to_owned();
        (scheme, host)
    };
    // Below where the catalog is mounted (empty at the root).
    let prefix = req
        .path()
        .strip_suffix(AI_CATALOG_PATH)
        .unwrap_or_default()
        .trim_end_matches('/')
        .to_owned();
    let publisher = host
        .rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host.as_str(), |(name, _)| name)
        .trim_matches(['[', ']']);
    let publisher = publisher.replace(':', ".");
    let mut entries = Vec::with_capacity(agents.len());
    let mut personal = false;
    for agent in agents {
        match agent.listing {
            Listing::Unlisted => continue,
            Listing::Public => {}
            Listing::Authenticated => {
                personal = true;
                if !may_see(agent, req).await {
                    continue;
                }
            }
        }
        let identifier = format!("urn:air:{publisher}:a2a:{}", agent.name);
        let entry = match settings.entries {
            CatalogEntries::ByReference => CatalogEntry::agent_at(
                identifier,
                format!("{scheme}://{host}{prefix}{}{WELL_KNOWN_PATH}", agent.path),
            ),
            CatalogEntries::Inline => {
                let inner = &agent.server.inner;
                let card = if inner.urls.is_fixed() {
                    inner.card().card.clone()
                } else {
                    let mount = format!("{prefix}{}", agent.path);
                    inner.urls.derived(req, Some(&mount)).card.clone()
                };
                CatalogEntry::agent_inline(identifier, &card)
            }
        };
        entries.push(entry);
    }
    let mut catalog = AiCatalog::new(entries);
    catalog.host = settings.host.clone();
    let body = match serde_json::to_vec(&catalog) {
        Ok(body) => body,
        Err(e) => {
            tracing::error!(error = %e, "could not write the AI Catalog");
            return HttpResponse::InternalServerError().finish();
        }
    };
    let cache = if personal {
        // What is listed depends on the caller's credentials.
        "private, no-cache"
    } else {
        "public, max-age=300"
    };
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, AI_CATALOG_MEDIA_TYPE))
        .insert_header((header::CACHE_CONTROL, cache))
        .insert_header((header::VARY, "Authorization"))
        .body(body)
}

/// Whether the caller of `req` may see `agent`: its authenticator accepts the caller's
/// credentials (an agent without one is seen by everyone).
async fn may_see(agent: &Listed<'_>, req: &HttpRequest) -> bool {
    let Some(guard) = agent.server.guard() else {
        return true;
    };
    let meta = super::http::request_meta(req, None, None);
    let auth = AuthRequest {
        headers: &meta.headers,
        peer: meta.peer,
        peer_certificate: meta.peer_certificate,
        tenant: None,
        operation: None,
    };
    guard
        .authenticate(&auth)
        .await
        .is_ok_and(|principal| principal.authenticated)
}
