//! The agent card endpoint (`/.well-known/agent-card.json`) with HTTP caching: `Cache-Control`
//! max-age, a strong `ETag` (304 on `If-None-Match`) and `Last-Modified` (304 on
//! `If-Modified-Since`).

use std::hash::{Hash as _, Hasher as _};
use std::time::{Duration, SystemTime};

use actix_web::http::header::{self, HttpDate};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};

use super::http::content_type;
use crate::types::AgentCard;

/// The well-known path of the public agent card.
pub const WELL_KNOWN_PATH: &str = "/.well-known/agent-card.json";

/// The members to add to a card's JSON for other protocol versions.
pub(crate) type Decorate = fn(&AgentCard) -> serde_json::Map<String, serde_json::Value>;

/// A card ready to serve: its JSON and validators.
#[derive(Clone, Debug)]
pub(crate) struct CardDoc {
    pub(crate) card: AgentCard,
    json: Bytes,
    etag: String,
    last_modified: SystemTime,
    max_age: Duration,
    // Read again when the card is replaced (the gRPC interface is added once bound).
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    decorate: Decorate,
}

impl CardDoc {
    /// The card, its JSON holding also the members `decorate` gives (those of other protocol
    /// versions; a member the card has already is kept as it is).
    pub(crate) fn with_json(card: AgentCard, max_age: Duration, decorate: Decorate) -> Self {
        let extra = decorate(&card);
        let json = if extra.is_empty() {
            serde_json::to_vec(&card).unwrap_or_default()
        } else {
            let mut value = serde_json::to_value(&card).unwrap_or_default();
            if let Some(object) = value.as_object_mut() {
                crate::compat::v0_3::convert::add_missing(object, extra);
            }
            serde_json::to_vec(&value).unwrap_or_default()
        };
        let json = Bytes::from(json);
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        json.hash(&mut hasher);
        let etag = format!("\"{:016x}-{:x}\"", hasher.finish(), json.len());
        // HTTP dates have one-second resolution: truncate so If-Modified-Since compares exactly.
        let now = SystemTime::now();
        let secs = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let last_modified = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        Self {
            card,
            json,
            etag,
            last_modified,
            max_age,
            decorate,
        }
    }

    /// The same document for another card (same caching and version members).
    #[cfg(feature = "grpc")]
    pub(crate) fn replaced(&self, card: AgentCard) -> Self {
        Self::with_json(card, self.max_age, self.decorate)
    }

    /// Serves the card, or 304 when the client's copy is current.
    pub(crate) fn respond(&self, req: &HttpRequest) -> HttpResponse {
        let headers = req.headers();
        let not_modified = match headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
        {
            Some(tags) => tags
                .split(',')
                .map(str::trim)
                .any(|t| t == "*" || t.trim_start_matches("W/") == self.etag),
            None => headers
                .get(header::IF_MODIFIED_SINCE)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<HttpDate>().ok())
                .is_some_and(|since| SystemTime::from(since) >= self.last_modified),
        };
        let mut builder = if not_modified {
            HttpResponse::NotModified()
        } else {
            HttpResponse::Ok()
        };
        builder
            .insert_header((
                header::CACHE_CONTROL,
                format!("public, max-age={}", self.max_age.as_secs()),
            ))
            .insert_header((header::ETAG, self.etag.clone()))
            .insert_header((header::LAST_MODIFIED, HttpDate::from(self.last_modified)));
        if not_modified {
            builder.finish()
        } else {
            builder
                .insert_header(content_type("application/json"))
                .body(self.json.clone())
        }
    }
}
