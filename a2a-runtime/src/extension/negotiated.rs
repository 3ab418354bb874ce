//! The outcome of extension negotiation for one request.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// One activated extension: its URI and the activation value its `activate` returned.
#[derive(Clone)]
pub struct Activation {
    /// The extension's URI.
    pub uri: String,
    /// The activation value (read it typed through the context).
    pub value: Arc<dyn Any + Send + Sync>,
}

impl fmt::Debug for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Activation")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// The extensions requested by the client and those activated for a request, in declaration order.
#[derive(Clone, Debug, Default)]
pub struct Negotiated {
    /// The URIs the client requested (`A2A-Extensions`), deduplicated, in request order.
    pub requested: Vec<String>,
    /// The activated extensions, in declaration order.
    pub activated: Vec<Activation>,
}

impl Negotiated {
    /// True when `uri` was activated.
    pub fn is_active_uri(&self, uri: &str) -> bool {
        self.activated.iter().any(|a| a.uri == uri)
    }

    /// The activated URIs, in declaration order.
    pub fn activated_uris(&self) -> impl Iterator<Item = &str> {
        self.activated.iter().map(|a| a.uri.as_str())
    }
}
