//! Typed access to extension data in `metadata`: [`MetadataExt::metadata_of`] and
//! [`MetadataExt::set_metadata_of`] on every object that carries metadata.

use super::traits::Extension;
use crate::error::A2aError;
use crate::types::{
    Artifact, CancelTaskRequest, Message, Metadata, Part, SendMessageRequest, Task,
    TaskArtifactUpdateEvent, TaskStatusUpdateEvent,
};

/// An object with a `metadata` map (and, for Message and Artifact, an `extensions` list).
pub trait HasMetadata {
    /// The metadata.
    fn metadata(&self) -> &Metadata;
    /// The metadata, mutably.
    fn metadata_mut(&mut self) -> &mut Metadata;
    /// The `extensions` list, where the object has one.
    fn extensions_mut(&mut self) -> Option<&mut Vec<String>> {
        None
    }
}

macro_rules! has_metadata {
    ($($ty:ty),* ; with_extensions: $($ext:ty),*) => {
        $(impl HasMetadata for $ty {
            fn metadata(&self) -> &Metadata { &self.metadata }
            fn metadata_mut(&mut self) -> &mut Metadata { &mut self.metadata }
        })*
        $(impl HasMetadata for $ext {
            fn metadata(&self) -> &Metadata { &self.metadata }
            fn metadata_mut(&mut self) -> &mut Metadata { &mut self.metadata }
            fn extensions_mut(&mut self) -> Option<&mut Vec<String>> { Some(&mut self.extensions) }
        })*
    };
}

has_metadata!(Task, Part, TaskStatusUpdateEvent, TaskArtifactUpdateEvent, SendMessageRequest, CancelTaskRequest; with_extensions: Message, Artifact);

/// Extension data that is present but does not have the extension's metadata type.
#[derive(Debug, thiserror::Error)]
#[error("metadata[{key:?}] does not match the data of extension {uri}: {source}")]
pub struct MetadataError {
    /// The extension's URI.
    pub uri: &'static str,
    /// The metadata key.
    pub key: &'static str,
    /// The decoding error.
    #[source]
    pub source: serde_json::Error,
}

/// Extension data of the wrong shape came with the request: InvalidParams on
/// `metadata["<key>"]`.
impl From<MetadataError> for A2aError {
    fn from(e: MetadataError) -> Self {
        Self::invalid_field(
            format!("metadata[{:?}]", e.key),
            format!("not the data of extension {}: {}", e.uri, e.source),
        )
    }
}

/// Typed reading and writing of an extension's data, keyed as the extension says.
///
/// ```
/// use a2a_runtime::a2a_extension;
/// use a2a_runtime::extension::MetadataExt;
/// use a2a_runtime::types::Message;
/// use serde::{Deserialize, Serialize};
///
/// #[a2a_extension(uri = "https://example.com/ext/priority/v1", metadata = u8)]
/// #[derive(Default, Serialize, Deserialize)]
/// struct Priority {}
///
/// let mut msg = Message::user_text("hi");
/// msg.set_metadata_of::<Priority>(&3);
/// assert_eq!(msg.metadata_of::<Priority>().unwrap(), Some(3));
/// assert_eq!(msg.extensions, ["https://example.com/ext/priority/v1"]);
/// ```
pub trait MetadataExt: HasMetadata {
    /// `E`'s data: `Ok(None)` when absent, an error when present with the wrong shape.
    fn metadata_of<E: Extension>(&self) -> Result<Option<E::Metadata>, MetadataError> {
        match self.metadata().get(E::METADATA_KEY) {
            None => Ok(None),
            Some(v) => serde_json::from_value(v.clone())
                .map(Some)
                .map_err(|source| MetadataError {
                    uri: E::URI,
                    key: E::METADATA_KEY,
                    source,
                }),
        }
    }

    /// Writes `E`'s data, and lists `E`'s URI in the object's `extensions` where it has one.
    fn set_metadata_of<E: Extension>(&mut self, value: &E::Metadata) {
        if let Ok(v) = serde_json::to_value(value) {
            self.metadata_mut().insert(E::METADATA_KEY.to_owned(), v);
        }
        if let Some(list) = self.extensions_mut()
            && !list.iter().any(|u| u == E::URI)
        {
            list.push(E::URI.to_owned());
        }
    }

    /// True when `E`'s data is present.
    fn has_metadata_of<E: Extension>(&self) -> bool {
        self.metadata().contains_key(E::METADATA_KEY)
    }
}

impl<T: HasMetadata + ?Sized> MetadataExt for T {}

/// Typed access to extension declarations in an agent card.
///
/// ```
/// use a2a_runtime::a2a_extension;
/// use a2a_runtime::extension::AgentCardExt;
/// use a2a_runtime::types::{AgentCard, AgentExtension};
/// use serde::{Deserialize, Serialize};
///
/// #[a2a_extension(uri = "https://example.com/ext/geo-params/v1")]
/// #[derive(Debug, PartialEq, Serialize, Deserialize)]
/// struct Geo { precision_m: u32 }
///
/// let mut card = AgentCard::default();
/// card.capabilities.extensions.push(AgentExtension {
///     uri: "https://example.com/ext/geo-params/v1".into(),
///     params: serde_json::from_value(serde_json::json!({"precision_m": 5})).unwrap(),
///     ..Default::default()
/// });
/// assert_eq!(card.extension_params::<Geo>().unwrap(), Some(Geo { precision_m: 5 }));
/// assert!(card.declares::<Geo>());
/// ```
pub trait AgentCardExt {
    /// `E`'s params as the card declares them: `Ok(None)` when the card does not declare `E`.
    fn extension_params<E: Extension>(&self) -> Result<Option<E>, MetadataError>;
    /// True when the card declares `E`.
    fn declares<E: Extension>(&self) -> bool;
}

impl AgentCardExt for crate::types::AgentCard {
    fn extension_params<E: Extension>(&self) -> Result<Option<E>, MetadataError> {
        let Some(decl) = self
            .capabilities
            .extensions
            .iter()
            .find(|d| d.uri == E::URI)
        else {
            return Ok(None);
        };
        serde_json::from_value(serde_json::Value::Object(decl.params.0.clone()))
            .map(Some)
            .map_err(|source| MetadataError {
                uri: E::URI,
                key: "params",
                source,
            })
    }

    fn declares<E: Extension>(&self) -> bool {
        self.capabilities.extensions.iter().any(|d| d.uri == E::URI)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn data_of_the_wrong_shape_is_invalid_params_on_its_key() {
        let err = MetadataError {
            uri: "https://example.com/ext/x/v1",
            key: "k",
            source: serde_json::from_str::<u8>("\"x\"").unwrap_err(),
        };
        let e = A2aError::from(err);
        assert_eq!(e.code(), -32602);
        assert!(e.to_string().contains("metadata[\"k\"]"), "{e}");
    }
}
