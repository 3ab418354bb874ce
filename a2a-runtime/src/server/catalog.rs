//! The AI Catalog of a [`MultiAgentServer`](super::MultiAgentServer) at
//! `/.well-known/ai-catalog.json`: its agents, each by reference (its card's URL) or inline (its
//! card), listed only to the callers who may see them (see [`Listing`]).

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};

use super::agents::{Agent, CatalogEntries, Listing, MultiAgentServer, card_path};
use crate::auth::AuthRequest;
use crate::types::{AI_CATALOG_MEDIA_TYPE, AI_CATALOG_PATH, AiCatalog, CatalogEntry, CatalogHost};

/// How the catalog is written.
#[derive(Clone, Debug, Default)]
pub(super) struct CatalogSettings {
    pub(super) entries: CatalogEntries,
    pub(super) host: Option<CatalogHost>,
}

/// The catalog as `req`'s caller may see it.
pub(super) async fn respond(server: &MultiAgentServer, req: &HttpRequest) -> HttpResponse {
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
    let mut entries = Vec::with_capacity(server.agents.len());
    let mut personal = false;
    for agent in server.agents.iter() {
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
        let entry = match server.catalog.entries {
            CatalogEntries::ByReference => CatalogEntry::agent_at(
                identifier,
                format!("{scheme}://{host}{prefix}{}", card_path(&agent.name)),
            ),
            CatalogEntries::Inline => {
                let inner = &agent.server.inner;
                let card = if inner.urls.is_fixed() {
                    inner.card().card.clone()
                } else {
                    let mount = format!("{prefix}{}/{}", super::agents::AGENTS_PATH, agent.name);
                    inner.urls.derived(req, Some(&mount)).card.clone()
                };
                CatalogEntry::agent_inline(identifier, &card)
            }
        };
        entries.push(entry);
    }
    let mut catalog = AiCatalog::new(entries);
    catalog.host = server.catalog.host.clone();
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
async fn may_see(agent: &Agent, req: &HttpRequest) -> bool {
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
