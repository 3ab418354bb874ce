//! [`Message`], [`Role`] and [`Part`]: one turn of communication and its content.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{ContextId, MessageId, Metadata, TaskId, Validate, Violations, assign};
use crate::json::{Base64Bytes, KeyIn, null_default};

/// Who sent a [`Message`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Role {
    /// `ROLE_UNSPECIFIED` (0): never valid on a real message.
    #[default]
    Unspecified,
    /// `ROLE_USER`: client to server.
    User,
    /// `ROLE_AGENT`: server to client.
    Agent,
}

super::proto_enum!(Role, "role", {
    Unspecified = 0 => "ROLE_UNSPECIFIED",
    User = 1 => "ROLE_USER",
    Agent = 2 => "ROLE_AGENT",
});

/// One turn of communication between a client and an agent.
///
/// `clone_from` leaves an equal message untouched (no copy).
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// REQUIRED. Set by whoever creates the message.
    #[serde(default, alias = "message_id", deserialize_with = "null_default")]
    pub message_id: MessageId,
    /// The conversation this message belongs to.
    #[serde(
        default,
        alias = "context_id",
        deserialize_with = "null_default",
        skip_serializing_if = "ContextId::is_empty"
    )]
    pub context_id: ContextId,
    /// The task this message belongs to; when sent by a client it must name an existing task.
    #[serde(
        default,
        alias = "task_id",
        deserialize_with = "null_default",
        skip_serializing_if = "TaskId::is_empty"
    )]
    pub task_id: TaskId,
    /// REQUIRED. The sender.
    #[serde(default, deserialize_with = "null_default")]
    pub role: Role,
    /// REQUIRED, at least one. The content.
    #[serde(default, deserialize_with = "null_default")]
    pub parts: Vec<Part>,
    /// Extension data, keyed by extension URI.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Metadata::is_empty"
    )]
    pub metadata: Metadata,
    /// URIs of the extensions present in, or contributing to, this message.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub extensions: Vec<String>,
    /// Related tasks, given as context.
    #[serde(
        default,
        alias = "reference_task_ids",
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<TaskId>,
}

impl Clone for Message {
    fn clone(&self) -> Self {
        Self {
            message_id: self.message_id.clone(),
            context_id: self.context_id.clone(),
            task_id: self.task_id.clone(),
            role: self.role,
            parts: self.parts.clone(),
            metadata: self.metadata.clone(),
            extensions: self.extensions.clone(),
            reference_task_ids: self.reference_task_ids.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        assign(self, source);
    }
}

impl Message {
    /// A message with a fresh random id, the given role and parts.
    pub fn new(role: Role, parts: impl IntoIterator<Item = Part>) -> Self {
        Self {
            message_id: MessageId::random(),
            role,
            parts: parts.into_iter().collect(),
            ..Self::default()
        }
    }

    /// A user message holding one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, [Part::text(text)])
    }

    /// An agent message holding one text part.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Self::new(Role::Agent, [Part::text(text)])
    }

    /// The concatenation of the message's text parts.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            if let PartContent::Text(t) = &part.content {
                out.push_str(t);
            }
        }
        out
    }
}

impl Validate for Message {
    fn check(&self, v: &mut Violations) {
        v.require_str("messageId", self.message_id.as_str());
        if self.role == Role::Unspecified {
            v.add("role", "is required (ROLE_USER or ROLE_AGENT)");
        }
        v.require_non_empty("parts", &self.parts);
        v.each("parts", &self.parts, |v, p| p.check(v));
    }
}

/// The content of a [`Part`]: exactly one of text, raw bytes, a URL, or structured data.
#[derive(Clone, Debug, PartialEq)]
pub enum PartContent {
    /// `text`: plain text.
    Text(String),
    /// `raw`: inline file bytes (base64 on the wire).
    Raw(Base64Bytes),
    /// `url`: a reference to a file.
    Url(String),
    /// `data`: any JSON value.
    Data(Value),
    /// No content member was present. Never emitted; rejected by validation.
    Missing,
    /// More than one content member was present. Never emitted; rejected by validation.
    Conflicting(Vec<&'static str>),
}

impl Default for PartContent {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

/// A piece of content in a [`Message`] or [`Artifact`](crate::types::Artifact).
///
/// `clone_from` leaves an equal part untouched (no copy).
#[derive(Debug, Default, PartialEq)]
pub struct Part {
    /// The content; its JSON member name (`text`/`raw`/`url`/`data`) is the discriminator.
    pub content: PartContent,
    /// Extension data for this part.
    pub metadata: Metadata,
    /// An optional file name (allowed on any kind of part).
    pub filename: String,
    /// The MIME type of the content (allowed on any kind of part).
    pub media_type: String,
}

impl Clone for Part {
    fn clone(&self) -> Self {
        Self {
            content: self.content.clone(),
            metadata: self.metadata.clone(),
            filename: self.filename.clone(),
            media_type: self.media_type.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        if self != source {
            *self = source.clone();
        }
    }
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: PartContent::Text(text.into()),
            ..Self::default()
        }
    }
    /// An inline-bytes part.
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            content: PartContent::Raw(Base64Bytes(bytes.into())),
            ..Self::default()
        }
    }
    /// A file-reference part.
    pub fn url(url: impl Into<String>) -> Self {
        Self {
            content: PartContent::Url(url.into()),
            ..Self::default()
        }
    }
    /// A structured-data part.
    pub fn data(value: Value) -> Self {
        Self {
            content: PartContent::Data(value),
            ..Self::default()
        }
    }
    /// Sets the media type.
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = media_type.into();
        self
    }
    /// Sets the file name.
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = filename.into();
        self
    }
    /// The text, when this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Validate for Part {
    fn check(&self, v: &mut Violations) {
        match &self.content {
            PartContent::Missing => {
                v.add("", "a part must have exactly one of text, raw, url or data")
            }
            PartContent::Conflicting(names) => v.add(
                "",
                format!(
                    "a part must have exactly one of text, raw, url or data, found {}",
                    names.join(", ")
                ),
            ),
            _ => {}
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(b) => m.serialize_entry("raw", b)?,
            PartContent::Url(u) => m.serialize_entry("url", u)?,
            PartContent::Data(d) => m.serialize_entry("data", d)?,
            PartContent::Missing | PartContent::Conflicting(_) => {}
        }
        if !self.metadata.is_empty() {
            m.serialize_entry("metadata", &self.metadata)?;
        }
        if !self.filename.is_empty() {
            m.serialize_entry("filename", &self.filename)?;
        }
        if !self.media_type.is_empty() {
            m.serialize_entry("mediaType", &self.media_type)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PartVisitor;
        impl<'de> Visitor<'de> for PartVisitor {
            type Value = Part;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Part object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
                let mut part = Part {
                    content: PartContent::Missing,
                    ..Part::default()
                };
                // The content members seen; a list (an allocation) only once there are two.
                let mut first: Option<&'static str> = None;
                let mut found: Vec<&'static str> = Vec::new();
                let mut set = |part: &mut Part, name: &'static str, content: PartContent| {
                    part.content = match first {
                        None => {
                            first = Some(name);
                            content
                        }
                        Some(f) => {
                            if found.is_empty() {
                                found.push(f);
                            }
                            found.push(name);
                            PartContent::Conflicting(found.clone())
                        }
                    };
                };
                const FIELDS: &[&str] = &[
                    "text",
                    "raw",
                    "url",
                    "data",
                    "metadata",
                    "filename",
                    "mediaType",
                    "media_type",
                ];
                while let Some(key) = map.next_key_seed(KeyIn(FIELDS))? {
                    match key.unwrap_or_default() {
                        "text" => {
                            if let Some(t) = map.next_value::<Option<String>>()? {
                                set(&mut part, "text", PartContent::Text(t));
                            }
                        }
                        "raw" => {
                            if let Some(b) = map.next_value::<Option<Base64Bytes>>()? {
                                set(&mut part, "raw", PartContent::Raw(b));
                            }
                        }
                        "url" => {
                            if let Some(u) = map.next_value::<Option<String>>()? {
                                set(&mut part, "url", PartContent::Url(u));
                            }
                        }
                        // `data` is a google.protobuf.Value: JSON null is a real value here.
                        "data" => {
                            let value = map.next_value::<Value>()?;
                            set(&mut part, "data", PartContent::Data(value));
                        }
                        "metadata" => {
                            part.metadata =
                                map.next_value::<Option<Metadata>>()?.unwrap_or_default();
                        }
                        "filename" => {
                            part.filename = map.next_value::<Option<String>>()?.unwrap_or_default();
                        }
                        "mediaType" | "media_type" => {
                            part.media_type =
                                map.next_value::<Option<String>>()?.unwrap_or_default();
                        }
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(part)
            }
        }
        d.deserialize_map(PartVisitor)
    }
}
