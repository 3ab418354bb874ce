//! The [`AgentCard`] and the objects it holds.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use super::common::{Metadata, Validate, Violations};
use super::security::{SecurityRequirement, SecurityScheme};
use crate::json::{is_false, lenient_bool, lenient_opt_bool, null_default};

/// The self-description an agent publishes at `/.well-known/agent-card.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// REQUIRED. The agent's name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// REQUIRED. What the agent does.
    #[serde(default, deserialize_with = "null_default")]
    pub description: String,
    /// REQUIRED. The interfaces it serves, in order of preference.
    #[serde(
        default,
        alias = "supported_interfaces",
        deserialize_with = "null_default"
    )]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who provides the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// REQUIRED. The agent's own version (not the protocol's).
    #[serde(default, deserialize_with = "null_default")]
    pub version: String,
    /// Documentation URL.
    #[serde(
        default,
        alias = "documentation_url",
        skip_serializing_if = "Option::is_none"
    )]
    pub documentation_url: Option<String>,
    /// REQUIRED. Optional features the agent supports.
    #[serde(default, deserialize_with = "null_default")]
    pub capabilities: AgentCapabilities,
    /// Scheme name to definition.
    #[serde(
        default,
        alias = "security_schemes",
        deserialize_with = "null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Alternatives (OR) of scheme sets (AND).
    #[serde(
        default,
        alias = "security_requirements",
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// REQUIRED. Accepted input media types.
    #[serde(
        default,
        alias = "default_input_modes",
        deserialize_with = "null_default"
    )]
    pub default_input_modes: Vec<String>,
    /// REQUIRED. Produced output media types.
    #[serde(
        default,
        alias = "default_output_modes",
        deserialize_with = "null_default"
    )]
    pub default_output_modes: Vec<String>,
    /// REQUIRED. What the agent can do.
    #[serde(default, deserialize_with = "null_default")]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the canonical card.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub signatures: Vec<AgentCardSignature>,
    /// Icon URL.
    #[serde(default, alias = "icon_url", skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

impl Validate for AgentCard {
    fn check(&self, v: &mut Violations) {
        v.require_str("name", &self.name);
        v.require_str("description", &self.description);
        v.require_str("version", &self.version);
        v.require_non_empty("supportedInterfaces", &self.supported_interfaces);
        v.each("supportedInterfaces", &self.supported_interfaces, |v, i| {
            i.check(v)
        });
        v.each("skills", &self.skills, |v, s| s.check(v));
    }
}

/// One URL and binding at which the agent is served.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// REQUIRED. The URL (HTTP bindings) or `host:port` (gRPC).
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
    /// REQUIRED. `JSONRPC`, `GRPC`, `HTTP+JSON`, or a URI for a custom binding.
    #[serde(default, alias = "protocol_binding", deserialize_with = "null_default")]
    pub protocol_binding: ProtocolBinding,
    /// An opaque routing value the client copies into every request.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub tenant: String,
    /// REQUIRED. `Major.Minor`, e.g. `1.0`.
    #[serde(default, alias = "protocol_version", deserialize_with = "null_default")]
    pub protocol_version: String,
}

impl AgentInterface {
    /// An interface of `binding` at `url`, protocol version 1.0.
    pub fn new(url: impl Into<String>, binding: ProtocolBinding) -> Self {
        Self {
            url: url.into(),
            protocol_binding: binding,
            tenant: String::new(),
            protocol_version: crate::PROTOCOL_VERSION.to_owned(),
        }
    }
}

impl Validate for AgentInterface {
    fn check(&self, v: &mut Violations) {
        v.require_str("url", &self.url);
        v.require_str("protocolBinding", self.protocol_binding.as_str());
        v.require_str("protocolVersion", &self.protocol_version);
    }
}

/// A protocol binding name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum ProtocolBinding {
    /// `JSONRPC`.
    #[default]
    JsonRpc,
    /// `HTTP+JSON`.
    HttpJson,
    /// `GRPC`.
    Grpc,
    /// A custom binding, identified by a URI.
    Other(String),
}

impl ProtocolBinding {
    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            Self::JsonRpc => "JSONRPC",
            Self::HttpJson => "HTTP+JSON",
            Self::Grpc => "GRPC",
            Self::Other(s) => s,
        }
    }
}

impl From<&str> for ProtocolBinding {
    fn from(s: &str) -> Self {
        match s {
            "JSONRPC" => Self::JsonRpc,
            "HTTP+JSON" => Self::HttpJson,
            "GRPC" => Self::Grpc,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ProtocolBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ProtocolBinding {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolBinding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = ProtocolBinding;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a protocol binding name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ProtocolBinding, E> {
                Ok(ProtocolBinding::from(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// The organization providing an agent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProvider {
    /// REQUIRED. The provider's URL.
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
    /// REQUIRED. The provider's name.
    #[serde(default, deserialize_with = "null_default")]
    pub organization: String,
}

/// Optional features an agent supports; an absent capability counts as false.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// SendStreamingMessage and SubscribeToTask are served.
    #[serde(
        default,
        deserialize_with = "lenient_opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub streaming: Option<bool>,
    /// The push-config operations are served.
    #[serde(
        default,
        alias = "push_notifications",
        deserialize_with = "lenient_opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub push_notifications: Option<bool>,
    /// The extensions the agent supports.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<AgentExtension>,
    /// GetExtendedAgentCard is served.
    #[serde(
        default,
        alias = "extended_agent_card",
        deserialize_with = "lenient_opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub extended_agent_card: Option<bool>,
}

/// The declaration of an extension in a card.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentExtension {
    /// The extension's URI.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub uri: String,
    /// How this agent uses the extension.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// Clients must activate it.
    #[serde(
        default,
        deserialize_with = "lenient_bool",
        skip_serializing_if = "is_false"
    )]
    pub required: bool,
    /// Extension-defined configuration.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub params: Metadata,
}

/// A capability of the agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// REQUIRED.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// REQUIRED.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// REQUIRED.
    #[serde(default, deserialize_with = "null_default")]
    pub description: String,
    /// REQUIRED. Keywords.
    #[serde(default, deserialize_with = "null_default")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub examples: Vec<String>,
    /// Input media types (override the card's defaults).
    #[serde(
        default,
        alias = "input_modes",
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub input_modes: Vec<String>,
    /// Output media types (override the card's defaults).
    #[serde(
        default,
        alias = "output_modes",
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub output_modes: Vec<String>,
    /// Security needed for this skill.
    #[serde(
        default,
        alias = "security_requirements",
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
}

impl Validate for AgentSkill {
    fn check(&self, v: &mut Violations) {
        v.require_str("id", &self.id);
        v.require_str("name", &self.name);
        v.require_str("description", &self.description);
    }
}

/// A JWS signature of the card.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentCardSignature {
    /// REQUIRED. The base64url protected header.
    #[serde(default, deserialize_with = "null_default")]
    pub protected: String,
    /// REQUIRED. The base64url signature.
    #[serde(default, deserialize_with = "null_default")]
    pub signature: String,
    /// The unprotected header.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub header: Metadata,
}
