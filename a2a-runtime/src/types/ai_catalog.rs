//! [`AiCatalog`]: the AI Catalog document (`application/ai-catalog+json`, specification
//! `Agent-Card/ai-catalog`), which lists the agents of a host by reference (the URL of each
//! card) or inline (the card itself).

use serde::{Deserialize, Serialize};

use super::AgentCard;

/// Where a host serves its AI Catalog, below its origin.
pub const AI_CATALOG_PATH: &str = "/.well-known/ai-catalog.json";

/// The media type of an AI Catalog document.
pub const AI_CATALOG_MEDIA_TYPE: &str = "application/ai-catalog+json";

/// The entry type of an A2A agent card.
pub const A2A_AGENT_CARD_TYPE: &str = "application/a2a-agent-card+json";

/// The version of the catalog format this crate writes and reads (a document of another major
/// version is refused by [`AiCatalog::check`]).
pub const AI_CATALOG_SPEC_VERSION: &str = "1.0";

/// An AI Catalog: the artifacts of a host, each an entry naming its media type and either
/// where to fetch it (`url`) or the artifact itself (`data`).
///
/// ```
/// use a2a_runtime::types::AiCatalog;
///
/// let json = r#"{"specVersion":"1.0","entries":[{"identifier":"urn:air:example.com:a2a:echo",
///     "type":"application/a2a-agent-card+json",
///     "url":"https://example.com/agents/echo/.well-known/agent-card.json"}]}"#;
/// let catalog: AiCatalog = serde_json::from_str(json).unwrap();
/// catalog.check().unwrap();
/// let entry = catalog.agent("echo").unwrap();
/// assert!(entry.url.as_deref().unwrap().ends_with("agent-card.json"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AiCatalog {
    /// REQUIRED. The version of the catalog format, `Major.Minor`.
    #[serde(default)]
    pub spec_version: String,
    /// REQUIRED. The entries (possibly none).
    #[serde(default)]
    pub entries: Vec<CatalogEntry>,
    /// Who operates the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<CatalogHost>,
}

/// One artifact of an [`AiCatalog`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogEntry {
    /// REQUIRED. What identifies the artifact (a URI or URN, e.g.
    /// `urn:air:example.com:a2a:echo`).
    #[serde(default)]
    pub identifier: String,
    /// REQUIRED. The artifact's media type ([`A2A_AGENT_CARD_TYPE`] for an agent card).
    #[serde(default, rename = "type")]
    pub media_type: String,
    /// Where the artifact is fetched (exactly one of `url` and `data` is present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The artifact itself (exactly one of `url` and `data` is present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
    /// A name for display, when the artifact does not carry one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// A short description, when the artifact does not carry one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Keywords.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The artifact's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Who operates an [`AiCatalog`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogHost {
    /// REQUIRED. The operator's name.
    #[serde(default)]
    pub display_name: String,
    /// A verifiable identifier of the operator (a DID or a domain name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
}

impl AiCatalog {
    /// A catalog of `entries`, in the format version this crate writes.
    pub fn new(entries: Vec<CatalogEntry>) -> Self {
        Self {
            spec_version: AI_CATALOG_SPEC_VERSION.into(),
            entries,
            host: None,
        }
    }

    /// Checks what the format requires: a `specVersion` of major version 1, and on every entry
    /// an `identifier`, a `type` and exactly one of `url` and `data`; the message names the
    /// first offending member.
    pub fn check(&self) -> Result<(), String> {
        let major = self.spec_version.split('.').next().unwrap_or_default();
        if major != "1" || !self.spec_version.contains('.') {
            return Err(format!(
                "specVersion {:?} is not a version 1.x of the AI Catalog format",
                self.spec_version
            ));
        }
        if let Some(host) = &self.host
            && host.display_name.is_empty()
        {
            return Err("host.displayName is required".into());
        }
        for (i, e) in self.entries.iter().enumerate() {
            if e.identifier.is_empty() {
                return Err(format!("entries[{i}].identifier is required"));
            }
            if e.media_type.is_empty() {
                return Err(format!("entries[{i}].type is required"));
            }
            if e.url.is_some() == e.data.is_some() {
                return Err(format!(
                    "entries[{i}] must have exactly one of url and data"
                ));
            }
        }
        Ok(())
    }

    /// The A2A agent entry named `name`: by its identifier's last segment (after the last `:`
    /// or `/`), its identifier, its display name, or the name of its inline card.
    pub fn agent(&self, name: &str) -> Option<&CatalogEntry> {
        self.entries
            .iter()
            .filter(|e| e.media_type == A2A_AGENT_CARD_TYPE)
            .find(|e| {
                let last = e.identifier.rsplit([':', '/']).next().unwrap_or_default();
                last == name
                    || e.identifier == name
                    || e.display_name.as_deref() == Some(name)
                    || e.card().is_some_and(|card| card.name == name)
            })
    }
}

impl CatalogEntry {
    /// An entry for an A2A agent card fetched from `url`.
    pub fn agent_at(identifier: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            identifier: identifier.into(),
            media_type: A2A_AGENT_CARD_TYPE.into(),
            url: Some(url.into()),
            ..Self::default()
        }
    }

    /// An entry holding an A2A agent card inline.
    pub fn agent_inline(identifier: impl Into<String>, card: &AgentCard) -> Self {
        Self {
            identifier: identifier.into(),
            media_type: A2A_AGENT_CARD_TYPE.into(),
            data: serde_json::to_value(card).ok(),
            ..Self::default()
        }
    }

    /// The inline agent card, when the entry holds one that parses.
    pub fn card(&self) -> Option<AgentCard> {
        if self.media_type != A2A_AGENT_CARD_TYPE {
            return None;
        }
        self.data
            .as_ref()
            .and_then(|d| AgentCard::deserialize(d).ok())
    }
}
