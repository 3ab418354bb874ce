//! The outcome of extension negotiation for one request.

use std::sync::Arc;

use super::hooks::{ActivationValue, DynExtension, Extension, ExtensionHooks};

/// One activated extension: its URI and its activation value.
#[derive(Clone)]
pub struct Activation {
    pub(crate) ext: Arc<dyn DynExtension>,
    pub(crate) value: ActivationValue,
    pub(crate) counters: Arc<super::registry::Counters>,
}

impl Activation {
    /// The extension's URI.
    pub fn uri(&self) -> &'static str {
        self.ext.uri()
    }
}

impl std::fmt::Debug for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Activation")
            .field("uri", &self.ext.uri())
            .finish_non_exhaustive()
    }
}

/// The extensions requested by the client and those activated for a request.
#[derive(Clone, Debug, Default)]
pub struct Negotiated {
    /// The URIs the client requested (`A2A-Extensions`), deduplicated, in request order.
    pub requested: Vec<String>,
    /// The activated extensions, in declaration order.
    pub activated: Vec<Activation>,
}

impl Negotiated {
    /// True when the extension with `uri` was activated.
    pub fn is_active_uri(&self, uri: &str) -> bool {
        self.activated.iter().any(|a| a.ext.uri() == uri)
    }

    /// True when `E` was activated.
    pub fn is_active<E: Extension>(&self) -> bool {
        self.is_active_uri(E::URI)
    }

    /// `E`'s activation value, when `E` was activated.
    pub fn extension<E: ExtensionHooks>(&self) -> Option<E::Activation> {
        let a = self.activated.iter().find(|a| a.ext.uri() == E::URI)?;
        let guard = a
            .value
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        guard.downcast_ref::<E::Activation>().cloned()
    }

    /// The activated URIs, in declaration order.
    pub fn activated_uris(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.activated.iter().map(|a| a.ext.uri())
    }
}
